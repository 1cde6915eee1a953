/**
 * The kubelet's gRPC probe (`pkg/probe/grpc`): one `grpc.health.v1.Health/Check` call over a
 * fresh plaintext connection. Every problem is a probe *failure* with the kubelet's wording,
 * never an error, to mimic the grpc_health_probe tool the feature replaced. The call itself
 * is in grpc-call.ts (HTTP/2 directly, no channel machinery).
 */
import { formatGoDuration } from '../util/duration.js';
import { goStatusErrorText } from '../util/go-status.js';
import { GrpcCode, callHealthCheck, type CheckResult } from './grpc-call.js';
import { joinHostPort } from './net-errors.js';
import type { HandlerObservation, NetProbeOptions, ProbeOutcome } from './types.js';

export { goStatusErrorText };

/** Go's `%q` for the plain ASCII strings printed here (addresses, enum names). */
function quote(text: string): string {
  return JSON.stringify(text);
}

function failure(output: string): ProbeOutcome {
  return { result: 'failure', output };
}

/**
 * grpc-js's wording of the errors its own client raised, in grpc-go's (what the kubelet
 * prints); details that came from the server pass unchanged.
 */
function goDetails(details: string): string {
  const tooLarge = /^Received message larger than max \((\d+) vs (\d+)\)$/.exec(details);
  if (tooLarge) return `grpc: received message larger than max (${tooLarge[1]} vs. ${tooLarge[2]})`;
  return details;
}

/** Maps the Check call's result to the kubelet's outcome and wording. */
function evaluate(result: CheckResult, addr: string, timeoutMs: number, seen: HandlerObservation | undefined): ProbeOutcome {
  switch (result.kind) {
    case 'errored':
      return { result: 'unknown', output: '', error: result.error };
    case 'connect-timeout':
      return failure(
        `timeout: failed to connect service ${quote(addr)} within ${formatGoDuration(timeoutMs)}: context deadline exceeded`,
      );
    case 'status': {
      if (seen) seen.grpcCode = result.code;
      if (result.code === GrpcCode.UNIMPLEMENTED) {
        return failure(
          `error: this server does not implement the grpc health protocol (grpc.health.v1.Health): ${result.details}`,
        );
      }
      if (result.code === GrpcCode.DEADLINE_EXCEEDED) {
        return failure(`timeout: health rpc did not complete within ${formatGoDuration(timeoutMs)}`);
      }
      return failure(`error: health rpc probe failed: ${goStatusErrorText(result.code, goDetails(result.details))}`);
    }
    case 'serving':
      if (seen) seen.servingStatus = result.status;
      if (result.status !== 'SERVING') return failure(`service unhealthy (responded with ${quote(result.status)})`);
      return { result: 'success', output: 'service healthy' };
  }
}

/**
 * Asks `host:port` for the health of `service` ('' = the whole server) over plaintext gRPC.
 *
 * One deadline of `timeoutMs` covers connecting and the call, as the kubelet's blocking dial
 * does: a refused connection is retried until the deadline, so nothing listening fails only
 * after the full timeout. `host` '' dials the local host but prints as `":port"`, like Go.
 * Never rejects; the connection is gone when the promise settles, closed with a FIN unless
 * `options.close` is `'reset'`.
 */
export async function probeGrpc(
  host: string,
  port: number,
  service: string,
  timeoutMs: number,
  seen?: HandlerObservation,
  options?: NetProbeOptions,
): Promise<ProbeOutcome> {
  const result = await callHealthCheck(host, port, service, timeoutMs, options?.close);
  return evaluate(result, joinHostPort(host, port), timeoutMs, seen);
}
