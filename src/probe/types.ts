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
