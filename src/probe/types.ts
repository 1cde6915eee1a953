/** What one run of a handler (HTTP, TCP, gRPC, exec) says. */
export type Outcome = 'success' | 'warning' | 'failure' | 'unknown';

/**
 * One handler run. `error` set means the probe *errored* (could not even be
 * attempted: unresolvable port, runner failure, unreadable body) rather than failed;
 * only errored attempts are retried by the prober.
 */
export interface ProbeOutcome {
  result: Outcome;
  output: string;
  error?: Error;
}

/**
 * Runs a command "inside" a container (the kubelet's CRI ExecSync seam).
 * Resolves with the combined output (stdout then stderr) and the exit code; rejects
 * with an error whose `name` is `'TimeoutError'` when the command outlives `timeoutMs`,
 * and with any other error when the command could not be run. A rejection may carry
 * the output gathered so far as an `output` string property.
 */
export interface CommandRunner {
  runInContainer(containerID: string, cmd: string[], timeoutMs: number): Promise<{ output: string; exitCode: number }>;
}

/**
 * What a handler saw on the wire, beyond its verdict: filled in by the handler when the
 * caller hands one over (the flight recorder does, with a slot it reuses for every
 * attempt), never returned. A sink rather than a field of {@link ProbeOutcome} so a probe
 * nobody records allocates nothing more, and outcomes stay the kubelet's shape. A handler
 * sets only what it saw; the caller clears the rest between attempts.
 */
export interface HandlerObservation {
  /** HTTP: the status code of the response judged. */
  statusCode?: number | undefined;
  /** HTTP: a few response headers (Content-Type, Content-Length, Location, Retry-After). */
  headers?: Record<string, string> | undefined;
  /** HTTP: the body read (at most the 10 KiB the kubelet reads). */
  body?: string | undefined;
  /** HTTP: the redirect that was not followed (another host), as its Location said. */
  redirect?: string | undefined;
  /** TCP: milliseconds until the connection was established. */
  connectMs?: number | undefined;
  /** TCP / HTTP transport: the socket error's code (`ECONNREFUSED`, …). */
  errorCode?: string | undefined;
  /** gRPC: the serving status the health service answered (`SERVING`, `NOT_SERVING`, …). */
  servingStatus?: string | undefined;
  /** gRPC: the status code of a failed call (numeric, as grpc-js reports it). */
  grpcCode?: number | undefined;
  /** exec: the command's exit code. */
  exitCode?: number | undefined;
}

/**
 * Every field of a HandlerObservation unset, assigned over one to clear it for another try.
 * Its type makes a new field of HandlerObservation a compile error here until it is listed.
 */
export const UNSEEN: Readonly<Record<keyof HandlerObservation, undefined>> = {
  statusCode: undefined,
  headers: undefined,
  body: undefined,
  redirect: undefined,
  connectMs: undefined,
  errorCode: undefined,
  servingStatus: undefined,
  grpcCode: undefined,
  exitCode: undefined,
};
