/**
 * Error bodies shaped and worded like the apiserver's `metav1.Status`, so clients that
 * already understand Kubernetes errors (kubectl, client libraries) read ours too.
 */
import type { Status } from '../api/types.js';

function failure(code: number, reason: string, message: string): Status {
  return { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message, reason, code };
}

export function notFoundStatus(): Status {
  return failure(404, 'NotFound', 'the server could not find the requested resource');
}

export function methodNotAllowedStatus(): Status {
  return failure(405, 'MethodNotAllowed', 'the server does not allow this method on the requested resource');
}

export function internalErrorStatus(err: unknown): Status {
  const text = err instanceof Error ? err.message : String(err);
  return failure(500, 'InternalError', `Internal error occurred: ${text}`);
}

export function badRequestStatus(message: string): Status {
  return failure(400, 'BadRequest', message);
}

export function forbiddenStatus(): Status {
  return failure(403, 'Forbidden', 'only pages served by this API on a loopback address may read it (check the Host and Origin headers; browsers\' cross-site requests, Sec-Fetch-Site, are refused)');
}

export function serviceUnavailableStatus(message: string): Status {
  return failure(503, 'ServiceUnavailable', message);
}
