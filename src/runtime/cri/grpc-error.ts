/**
 * Reading a failed CRI call's gRPC status, without loading grpc-js: the runtime's error paths
 * need only these, and grpc-js (with proto-loader, ≈ 20 MB of RSS) is loaded only when a CRI
 * runtime is actually created (client.ts, imported on demand by cri-runtime.ts).
 */

/** The gRPC status codes the CRI runtime tells apart (grpc/status.h). */
export const GrpcStatus = {
  UNKNOWN: 2,
  DEADLINE_EXCEEDED: 4,
  NOT_FOUND: 5,
  UNIMPLEMENTED: 12,
  UNAVAILABLE: 14,
} as const;

/** The gRPC status code of a failed call, if it is one. */
export function grpcCode(err: unknown): number | undefined {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'number' ? code : undefined;
}

/** The runtime's own message (`details`), without grpc-js's `<code> <NAME>: ` prefix. */
export function grpcMessage(err: unknown): string {
  const details = (err as { details?: unknown } | null)?.details;
  if (typeof details === 'string' && details !== '') return details;
  return err instanceof Error ? err.message : String(err);
}

/** A call that failed because the runtime did not answer at all (gone, or not there yet). */
export function runtimeUnreachable(err: unknown): boolean {
  const code = grpcCode(err);
  return code === GrpcStatus.UNAVAILABLE || code === GrpcStatus.DEADLINE_EXCEEDED;
}
