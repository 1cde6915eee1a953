/** Where a command writes; tests pass their own to capture output without spawning. */
export interface CliIO {
  stdout(text: string): void;
  stderr(text: string): void;
  /** Bytes written to stdout that its reader has not taken yet; absent where output is captured. */
  stdoutBacklog?(): number;
}

export const processIO: CliIO = {
  stdout: (text) => void process.stdout.write(text),
  stderr: (text) => void process.stderr.write(text),
  stdoutBacklog: () => process.stdout.writableLength,
};

/** Bad input on the command line or in a manifest: printed as is, exit status 2. */
export class CliUsageError extends Error {
  override name = 'CliUsageError';
}
