/**
 * The relist loop of the runtimes that find exits by listing (the CRI and Docker runtimes):
 * the kubelet's PLEG relists every second, at fixed instants of the node's clock, and never
 * twice at once — a relist slower than the period delays the next instead of piling up.
 */
import { PLEG_RELIST_PERIOD_MS } from '../prober/start-latency.js';
import type { Clock } from '../util/clock.js';

export interface RelistOptions {
  clock: Clock;
  /** Default the kubelet's {@link PLEG_RELIST_PERIOD_MS}. */
  periodMs?: number;
  /**
   * Relist at `phaseMs + k × periodMs` of the clock (the kubelet's relist instants,
   * `KubeletOptions.relistPhaseMs`), so that an exit a relist finds is synced at once: the
   * kubelet's sync waits for a relist after its previous one, and this is that relist.
   * Default: a period after the previous relist ended.
   */
  phaseMs?: number;
  /** One relist. */
  relist: () => Promise<void>;
}

export interface RelistLoop {
  /** Schedules the next relist (and, after it, the following ones) until `stop()`. */
  start(): void;
  stop(): void;
  /** Relists now, unless a relist is under way or the loop was stopped. */
  relistNow(): Promise<void>;
}

export function relistLoop(options: RelistOptions): RelistLoop {
  const { clock, phaseMs, relist } = options;
  const period = options.periodMs ?? PLEG_RELIST_PERIOD_MS;
  let timer: unknown;
  let running = false;
  let stopped = false;
  /** A period from now, or to the next relist instant of the phase (never 0: one relist an instant). */
  const untilNext = (): number => {
    if (phaseMs === undefined) return period;
    const since = (((clock.now() - phaseMs) % period) + period) % period;
    return period - since;
  };
  const relistNow = async (): Promise<void> => {
    if (running || stopped) return;
    running = true;
    try {
      await relist();
    } finally {
      running = false;
    }
  };
  const start = (): void => {
    if (stopped) return;
    timer = clock.setTimeout(() => {
      // A failed relist is retried at the next period, as the PLEG does.
      void relistNow()
        .catch(() => undefined)
        .finally(start);
    }, untilNext());
  };
  return {
    start,
    stop() {
      stopped = true;
      clock.clearTimeout(timer);
    },
    relistNow,
  };
}
