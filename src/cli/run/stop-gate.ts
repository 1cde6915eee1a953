/**
 * Why and how a `probelet run` ends. Reasons to stop race (Ctrl-C, `--timeout`, every pod
 * Ready, a pod that can never be Ready): the first one decides the exit code and starts
 * the graceful shutdown; another signal while shutting down asks to kill everything now.
 */

/** What the run exits with, and the words telling the user why it stops. */
export interface Outcome {
  code: number;
  why: string;
}

/** The first reason to stop wins; a stop requested while stopping is a demand to hurry. */
export interface StopGate {
  /** False when a stop was already requested. */
  request(outcome: Outcome): boolean;
  force(): void;
  readonly requested: Promise<Outcome>;
  readonly forced: Promise<void>;
}

export function createStopGate(): StopGate {
  let resolveRequested: (o: Outcome) => void = () => undefined;
  let resolveForced: () => void = () => undefined;
  const requested = new Promise<Outcome>((resolve) => (resolveRequested = resolve));
  const forced = new Promise<void>((resolve) => (resolveForced = resolve));
  let stopping = false;
  return {
    request(outcome) {
      if (stopping) return false;
      stopping = true;
      resolveRequested(outcome);
      return true;
    },
    force: () => resolveForced(),
    requested,
    forced,
  };
}
