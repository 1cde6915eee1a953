/**
 * Errors a user meets when pointing probelet at a container runtime, worded to name the
 * fix: the socket is missing, not accessible, or serves containerd without its CRI plugin
 * (Docker's containerd ships `disabled_plugins = ["cri"]`).
 */
import { accessSync, constants, statSync } from 'node:fs';
import { GrpcStatus, grpcCode, grpcMessage } from './grpc-error.js';

/** The socket path of a `unix://` endpoint, or undefined for other schemes. */
export function socketPath(endpoint: string): string | undefined {
  if (endpoint.startsWith('unix://')) return endpoint.slice('unix://'.length);
  if (endpoint.startsWith('/')) return endpoint;
  return undefined;
}

/** Checked before any gRPC call, because grpc-js only says "UNAVAILABLE" for all of these. */
export function checkSocket(endpoint: string): void {
  const path = socketPath(endpoint);
  if (path === undefined) return;
  let isSocket: boolean;
  try {
    isSocket = statSync(path).isSocket();
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EACCES') throw permissionDenied(endpoint);
    throw new Error(
      `no container runtime socket at ${endpoint}: start containerd (or CRI-O) there, ` +
        `run \`npm run cri:up\` for a private containerd, or point --cri-endpoint / CONTAINER_RUNTIME_ENDPOINT at the runtime's socket`,
    );
  }
  if (!isSocket) throw new Error(`${endpoint}: ${path} is not a unix socket; point --cri-endpoint at the runtime's socket`);
  try {
    accessSync(path, constants.R_OK | constants.W_OK);
  } catch {
    throw permissionDenied(endpoint);
  }
}

function permissionDenied(endpoint: string): Error {
  return new Error(
    `permission denied on ${endpoint}: the CRI socket belongs to root; run probelet as root (sudo) ` +
      `or give your user access to the socket`,
  );
}

/** Explains a failure of the first call (`Version`) to the runtime. */
export function explainConnectError(endpoint: string, err: unknown): Error {
  const code = grpcCode(err);
  const detail = grpcMessage(err);
  if (code === GrpcStatus.UNIMPLEMENTED) {
    return new Error(
      `the runtime at ${endpoint} does not serve the CRI (runtime.v1.RuntimeService is not implemented): ` +
        `if it is Docker's containerd, its /etc/containerd/config.toml has disabled_plugins = ["cri"]; ` +
        `remove "cri" from that list and restart containerd (${detail})`,
    );
  }
  if (/EACCES|permission denied/i.test(detail)) return permissionDenied(endpoint);
  if (code === GrpcStatus.UNAVAILABLE || code === GrpcStatus.DEADLINE_EXCEEDED) {
    // grpc-js's wording of a refused connection: "… Last error: Error: connect ECONNREFUSED
    // /path. Resolution note: " — the nested "Error: " and an empty note say nothing.
    const said = detail.replace('Last error: Error: ', 'Last error: ').replace(/\.? Resolution note: *$/, '');
    return new Error(`cannot reach the container runtime at ${endpoint}: ${said}; is containerd (or CRI-O) running?`);
  }
  return new Error(`container runtime at ${endpoint}: ${detail}`);
}
