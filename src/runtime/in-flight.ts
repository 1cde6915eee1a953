/**
 * A runtime's calls in flight and its closing, shared by the CRI and Docker runtimes: a
 * sandbox being made or a container being started when `close()` is called must still be
 * removed by it, so `close()` waits for every tracked call to settle before it removes what
 * the run made; and once closing, no new call may start (it would create what nobody removes).
 */

export interface InFlight {
  /** True from the first `close()` on. */
  readonly closing: boolean;
  /** Throws `container runtime is closed` once closing: what a call would create must not outlive the runtime. */
  assertOpen(): void;
  /** The same promise, which `close()` waits for. */
  track<T>(work: Promise<T>): Promise<T>;
  /**
   * Closes once: later calls get the same promise. `shutdown` runs after every tracked call
   * settled (whether it succeeded or not).
   */
  close(shutdown: () => Promise<void>): Promise<void>;
}

export function inFlight(): InFlight {
  const calls = new Set<Promise<unknown>>();
  let closed: Promise<void> | undefined;
  return {
    get closing() {
      return closed !== undefined;
    },
    assertOpen() {
      if (closed) throw new Error('container runtime is closed');
    },
    track(work) {
      calls.add(work);
      const untrack = (): void => {
        calls.delete(work);
      };
      work.then(untrack, untrack);
      return work;
    },
    close(shutdown) {
      closed ??= Promise.allSettled([...calls]).then(shutdown);
      return closed;
    },
  };
}
