/**
 * The order in which a terminating pod's containers stop (upstream's `terminationOrdering`,
 * pkg/kubelet/kuberuntime/kuberuntime_termination_order.go). Every container is killed at
 * once — its `Killing` event and its `preStop` hook start together with the others' — but a
 * sidecar's stop waits for every regular container and for the sidecars declared after it,
 * at most its grace period. Regular and plain init containers wait for nothing.
 */
import type { Clock } from '../util/clock.js';

export interface TerminationOrdering {
  /**
   * Waits until `name` may be stopped, at most `graceSeconds` (none when 0 or less); resolves
   * with the seconds waited (a fraction; the caller takes the whole seconds off its grace).
   */
  waitForTurn(name: string, graceSeconds: number): Promise<number>;
  /** `name` has stopped: who waits for it may go on. */
  containerTerminated(name: string): void;
}

/**
 * `regular`: the pod's containers, `inits`: its init containers, in spec order, each with
 * whether it is a sidecar (restartable); `running`: the names that still run.
 */
export function newTerminationOrdering(
  regular: readonly string[],
  inits: ReadonlyArray<{ name: string; sidecar: boolean }>,
  running: ReadonlySet<string>,
  clock: Clock,
): TerminationOrdering {
  const terminated = new Map<string, { done: Promise<void>; resolve: () => void }>();
  const channel = (name: string): Promise<void> => {
    let resolve = (): void => undefined;
    const done = new Promise<void>((r) => (resolve = r));
    terminated.set(name, { done, resolve });
    if (!running.has(name)) resolve();
    return done;
  };
  const mains = regular.map(channel);
  const prereqs = new Map<string, Promise<void>[]>();
  let later: Promise<void> | undefined;
  for (const ic of [...inits].reverse()) {
    const done = channel(ic.name);
    if (!ic.sidecar) continue;
    prereqs.set(ic.name, later ? [...mains, later] : [...mains]);
    later = done;
  }
  return {
    async waitForTurn(name, graceSeconds) {
      const waits = prereqs.get(name);
      if (graceSeconds <= 0 || !waits || waits.length === 0) return 0;
      const start = clock.now();
      let timer: unknown;
      const timeout = new Promise<void>((resolve) => {
        timer = clock.setTimeout(resolve, graceSeconds * 1000);
      });
      await Promise.race([Promise.all(waits), timeout]);
      clock.clearTimeout(timer);
      return (clock.now() - start) / 1000;
    },
    containerTerminated(name) {
      terminated.get(name)?.resolve();
    },
  };
}
