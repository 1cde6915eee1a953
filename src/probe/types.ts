/**
 * How a network probe (TCP, HTTP, gRPC) ends its connection.
 *
 * - `'fin'` (the default): an orderly close, as the kubelet's: its probes dial through
 *   `probe.ProbeDialer()` (`pkg/probe/dialer_others.go`), which sets SO_LINGER to 1 s rather
 *   than 0 precisely so that the connection is closed cleanly with a FIN and not aborted with
 *   a reset; `pkg/probe/tcp` dials and closes at once, `pkg/probe/http` uses a Go transport
 *   with `DisableKeepAlives` (one connection per probe), `pkg/probe/grpc` closes its
 *   `ClientConn` after the call. The probed server reads an end of stream. The probing side
 *   keeps each connection it closed first in TIME_WAIT (60 s on Linux; the 1 s linger does
 *   not shorten it), as the kubelet's node does.
 * - `'reset'`: an abortive close (SO_LINGER {on, 0}): no TIME_WAIT is left on the probing
 *   side, but the probed server sees `ECONNRESET` — which kills a Node `net` server that has
 *   no `error` handler on its sockets. For probing one ip:port hundreds of times a second,
 *   where TIME_WAIT sockets (one per probe for 60 s) could exhaust the ephemeral ports towards
 *   it (kubernetes#89898). See docs/probe-close.md.
 */
export type ProbeClose = 'fin' | 'reset';

/** Options of the network handlers (TCP, gRPC; HTTP's extend them). */
export interface NetProbeOptions {
  /** How the connection is closed; default `'fin'`, the kubelet's. */
  close?: ProbeClose;
}

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
