/**
 * What the commands need from the process they run in besides text output: for `probelet
 * run`, whether stdout is a terminal (to redraw in place) and its size, and the stop
 * signals — behind an interface so the command can be driven in-process by tests, and so
 * it touches the process's signal handlers only while it runs; for `simulate`, what to do
 * when stdout goes away.
 */
export interface Terminal {
  /** stdout is a terminal: redraw a compact screen in place instead of streaming lines. */
  readonly isTTY: boolean;
  columns(): number;
  rows(): number;
}

/** `SIGPIPE` stands for "stdout is gone" (`probelet run | head`), reported once. */
export type StopSignal = (typeof STOP_SIGNALS)[number] | 'SIGPIPE';

/**
 * The signals that ask a long-running command to stop cleanly. SIGHUP (the terminal closed,
 * SSH dropped) and SIGQUIT (Ctrl-\\) end Node at once by default, which would leave every
 * container (a process group of its own) and the run directory behind: they stop the run
 * as SIGINT and SIGTERM do. docs/reliability-signals.md says what each one does.
 */
export const STOP_SIGNALS = ['SIGINT', 'SIGTERM', 'SIGHUP', 'SIGQUIT'] as const;

export interface SignalSource {
  /** Calls `handler` on every stop signal (STOP_SIGNALS, and a lost stdout) until the returned function is called. */
  listen(handler: (signal: StopSignal) => void): () => void;
}

export const processTerminal: Terminal = {
  isTTY: process.stdout.isTTY === true,
  columns: () => process.stdout.columns || 80,
  rows: () => process.stdout.rows || 24,
};

/**
 * While a handler is installed Node no longer exits on these signals: the run command
 * shuts its pods down first. Removing the handlers restores the default behaviour.
 * A write error on stdout (the reader went away) would otherwise be an uncaught error that
 * ends Node at once, leaving the containers (process groups of their own) running.
 */
export const processSignals: SignalSource = {
  listen(handler) {
    const listeners = STOP_SIGNALS.map((signal) => [signal, (): void => handler(signal)] as const);
    let outputLost = false;
    const onOutputError = (): void => {
      if (outputLost) return;
      outputLost = true;
      handler('SIGPIPE');
    };
    for (const [signal, listener] of listeners) process.on(signal, listener);
    process.stdout.on('error', onOutputError);
    return () => {
      for (const [signal, listener] of listeners) process.off(signal, listener);
      // A broken stdout keeps its listener: a late write error must not crash the exit.
      if (!outputLost) process.stdout.off('error', onOutputError);
    };
  },
};

/**
 * For a command with nothing to undo (`simulate`: no process, file or thread outlives it):
 * once stdout's reader is gone (`probelet simulate … | head`, EPIPE), end the process at
 * once with status 0 — what a writer killed by SIGPIPE does, without Node's stack trace.
 * Any other write error (a full disk) is said in one line, status 1. Until the returned
 * function is called.
 */
export function exitWhenOutputCloses(): () => void {
  const onOutputError = (error: NodeJS.ErrnoException): void => {
    if (error.code === 'EPIPE') process.exit(0);
    process.stderr.write(`probelet: writing the output failed: ${error.message}\n`);
    process.exit(1);
  };
  process.stdout.on('error', onOutputError);
  return () => void process.stdout.off('error', onOutputError);
}
