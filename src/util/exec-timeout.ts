import { formatGoDuration } from './duration.js';
import { goQuote } from './go-quote.js';

/**
 * An exec command that outlived its timeout (Go's `exec.TimeoutError`). Runners reject
 * with it (or any error named `TimeoutError`) so that an exec probe counts as *failed*,
 * not errored. Its text is the wrapped error's text. It lives below both `probe/` and
 * `runtime/` because both run commands with a deadline.
 */
export class ExecTimeoutError extends Error {
  override readonly name = 'TimeoutError';
  /** The timeout the command outlived, in milliseconds. */
  readonly timeoutMs: number;
  /** Output gathered before the command was killed, if any. */
  readonly output: string | undefined;

  constructor(cause: Error | undefined, timeoutMs = 0, output?: string) {
    super(cause?.message ?? '', cause === undefined ? undefined : { cause });
    this.timeoutMs = timeoutMs;
    this.output = output;
  }
}

/**
 * The one wording of a command timeout, the CRI client's (k8s.io/cri-client remote_runtime.go,
 * ExecSync: `fmt.Errorf("%w: %q timed out after %s", ErrCommandTimedOut, strings.Join(cmd, " "),
 * timeout)`): `command timed out: "<argv>" timed out after 1s`. Found by the oracle: the
 * kubelet 1.35's Unhealthy events read so (docs/differences.md).
 */
export function commandTimedOut(argv: readonly string[], timeoutMs: number, output: string): ExecTimeoutError {
  const detail = `${goQuote(argv.join(' '))} timed out after ${formatGoDuration(timeoutMs)}`;
  return new ExecTimeoutError(new Error(`command timed out: ${detail}`), timeoutMs, output);
}
