/**
 * Crash-loop back-off: how long the kubelet waits before restarting a container that exited
 * (upstream client-go `flowcontrol.Backoff` as the kubelet configures it, driven by
 * kuberuntime's `doBackOff`). A probe-killed container goes through the same gate as a
 * crashed one, which is why a failing liveness probe ends in `CrashLoopBackOff`.
 *
 * Which exit the gate measures from is the caller's part (`doBackOff`): the latest *exited*
 * instance in the status the sync read — for a container that sync kills for a probe, the
 * instance before the killed one (see `Kubelet.restartWithBackOff`).
 *
 * Semantics kept from upstream, because they decide when users see restarts:
 * - no entry (first exit, or after a reset) → restart now, and the entry starts at `initial`;
 * - otherwise throttled while `now − finishedAt < current back-off`; once allowed, the step
 *   doubles up to the cap (no jitter);
 * - an exit whose `finishedAt` is more than 600 s after the last step (the container ran ~10
 *   minutes) starts over: the kubelet's `HasExpiredFunc`, fixed at 600 s whatever the cap;
 * - `gc()` forgets entries whose last step is more than those 600 s old.
 */
import type { Container, Pod } from '../api/types.js';
import { formatPod } from '../api/format.js';
import { CRASH_LOOP_BACK_OFF } from '../prober/kill-policy.js';
import { type Clock, realClock } from '../util/clock.js';
import { formatGoDuration } from '../util/duration.js';

// The numbers live in prober/ so that check/ predicts the back-off from the same constants.
export { CRASH_LOOP_BACK_OFF };

/**
 * `workerBackOffPeriodJitterFactor` (pod_workers.go `completeWork`): a sync that ends in
 * back-off is requeued at its `BackoffError`'s expiry (clamped to [0, the resync interval]),
 * jittered up to this much later — so a restart after a back-off comes up to half the
 * remaining step late.
 */
export const WORKER_BACK_OFF_JITTER_FACTOR = 0.5;

/** Waiting reason of a throttled container. */
export const CRASH_LOOP_BACK_OFF_REASON = 'CrashLoopBackOff';
/** Event reason (`events.BackOffStartContainer`) recorded each time a restart is throttled. */
export const BACK_OFF_EVENT_REASON = 'BackOff';

export interface CrashLoopBackOffOptions {
  clock?: Clock;
  /** `crashLoopBackOff.maxContainerRestartPeriod` (gate KubeletCrashLoopBackOffMax, on): 1–300 s. A cap below the initial delay lowers the initial delay to it. */
  maxContainerRestartPeriodMs?: number;
  /** Gate `ReduceDefaultCrashLoopBackOffDecay`: 1 s initial, 60 s cap (a configured cap still wins). */
  reduceDefaultDecay?: boolean;
}

/** What the gate says about restarting an exited container right now. */
export interface BackOffDecision {
  /** True: do not start it yet; show `CrashLoopBackOff`. */
  inBackOff: boolean;
  /** The back-off step in force (the `<dur>` of the message); 0 when there is no entry. */
  delayMs: number;
  /** How long until a restart will be allowed (0 when not in back-off): when to sync the pod again. */
  remainingMs: number;
}

interface Entry {
  backoffMs: number;
  lastUpdateMs: number;
}

/** Per-container back-off state for one kubelet. Keys come from `crashLoopBackOffKey`. */
export class CrashLoopBackOff {
  readonly initialMs: number;
  readonly maxMs: number;
  private readonly clock: Clock;
  private readonly entries = new Map<string, Entry>();

  constructor(options: CrashLoopBackOffOptions = {}) {
    this.clock = options.clock ?? realClock;
    let initial: number = options.reduceDefaultDecay ? CRASH_LOOP_BACK_OFF.reducedInitialMs : CRASH_LOOP_BACK_OFF.initialMs;
    let max: number = options.reduceDefaultDecay ? CRASH_LOOP_BACK_OFF.reducedMaxMs : CRASH_LOOP_BACK_OFF.maxMs;
    const configured = options.maxContainerRestartPeriodMs;
    if (configured !== undefined) {
      if (
        !Number.isFinite(configured) ||
        configured < CRASH_LOOP_BACK_OFF.minConfigurableMaxMs ||
        configured > CRASH_LOOP_BACK_OFF.maxConfigurableMaxMs
      ) {
        throw new RangeError(
          `crashLoopBackOff.maxContainerRestartPeriod must be between 1s and 300s, got ${formatGoDuration(configured)}`,
        );
      }
      max = configured;
      if (max < initial) initial = max;
    }
    this.initialMs = initial;
    this.maxMs = max;
  }

  /**
   * `doBackOff`, to be called just before starting a container that has exited (pass the
   * exit's `finishedAt`). When allowed, the step advances as a side effect: the caller is
   * expected to start the container now.
   */
  check(key: string, finishedAtMs: number): BackOffDecision {
    if (this.isInBackOff(key, finishedAtMs)) {
      const delayMs = this.get(key);
      return { inBackOff: true, delayMs, remainingMs: Math.max(0, finishedAtMs + delayMs - this.clock.now()) };
    }
    this.next(key, finishedAtMs);
    return { inBackOff: false, delayMs: this.get(key), remainingMs: 0 };
  }

  /** `IsInBackOffSince`: the exit at `finishedAtMs` is still inside the current step. Pure. */
  isInBackOff(key: string, finishedAtMs: number): boolean {
    const entry = this.entries.get(key);
    if (entry === undefined || this.hasExpired(finishedAtMs, entry.lastUpdateMs)) return false;
    return this.clock.now() - finishedAtMs < entry.backoffMs;
  }

  /** `Next`: start the entry at the initial delay (new or expired) or double it up to the cap. */
  next(key: string, finishedAtMs: number): void {
    this.entries.set(key, { backoffMs: this.peekNext(key, finishedAtMs), lastUpdateMs: this.clock.now() });
  }

  /** The step `next(key, finishedAtMs)` would set, without setting it. Pure. */
  peekNext(key: string, finishedAtMs: number): number {
    const entry = this.entries.get(key);
    return entry === undefined || this.hasExpired(finishedAtMs, entry.lastUpdateMs) ? this.initialMs : Math.min(entry.backoffMs * 2, this.maxMs);
  }

  /** The current step for `key`, 0 without an entry. */
  get(key: string): number {
    return this.entries.get(key)?.backoffMs ?? 0;
  }

  /** Forget `key` (upstream `Reset`/`DeleteEntry`). */
  reset(key: string): void {
    this.entries.delete(key);
  }

  /** Drop entries not stepped for more than 600 s; the kubelet calls this from housekeeping. */
  gc(): void {
    const now = this.clock.now();
    for (const [key, entry] of this.entries) {
      if (this.hasExpired(now, entry.lastUpdateMs)) this.entries.delete(key);
    }
  }

  /** Number of live entries (leak checks). */
  size(): number {
    return this.entries.size;
  }

  private hasExpired(eventMs: number, lastUpdateMs: number): boolean {
    return eventMs - lastUpdateMs > CRASH_LOOP_BACK_OFF.resetAfterMs;
  }
}

/**
 * The back-off key (`getStableKey`): `<pod>_<namespace>_<uid>_<container>_<hash>`, the hash
 * covering the container's name and image, so a new image starts a fresh back-off.
 */
export function crashLoopBackOffKey(pod: Pod, container: Pick<Container, 'name' | 'image'>): string {
  const meta = pod.metadata ?? {};
  const hash = fnv1a32(JSON.stringify({ image: container.image ?? '', name: container.name })).toString(16);
  return `${meta.name ?? ''}_${meta.namespace ?? ''}_${meta.uid ?? ''}_${container.name}_${hash}`;
}

/** The `CrashLoopBackOff` waiting message: `back-off 40s restarting failed container=app pod=web_default(uid)`. */
export function crashLoopBackOffMessage(delayMs: number, containerName: string, pod: Pod): string {
  return `back-off ${formatGoDuration(delayMs)} restarting failed container=${containerName} pod=${formatPod(pod)}`;
}

/** The Warning `BackOff` event message: `Back-off restarting failed container app in pod web_default(uid)`. */
export function backOffEventMessage(containerName: string, pod: Pod): string {
  return `Back-off restarting failed container ${containerName} in pod ${formatPod(pod)}`;
}

/** FNV-1a, 32 bits, as upstream's container hash; the exact value is internal. */
function fnv1a32(s: string): number {
  let h = 0x811c9dc5;
  for (const byte of new TextEncoder().encode(s)) {
    h ^= byte;
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h;
}
