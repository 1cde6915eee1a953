import { formatGoDuration } from '../util/duration.js';

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

/** The one wording of a command timeout: `command timed out: command "<argv>" timed out after 1s`. */
export function commandTimedOut(argv: readonly string[], timeoutMs: number, output: string): ExecTimeoutError {
  const detail = `command "${argv.join(' ')}" timed out after ${formatGoDuration(timeoutMs)}`;
  return new ExecTimeoutError(new Error(`command timed out: ${detail}`), timeoutMs, output);
}
