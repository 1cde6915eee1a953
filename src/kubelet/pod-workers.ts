/**
 * The pod workers (upstream pod_workers.go): one sync at a time per pod, requests coalesced
 * while one runs; each sync's `completeWork` requeue (the resync, jittered, or after a
 * back-off the back-off's expiry, jittered); and, when the PLEG's relist is modelled, a sync
 * that waits for the first relist after the pod's previous sync (`podCache.GetNewerThan`).
 */
import { PLEG_RELIST_PERIOD_MS } from '../prober/start-latency.js';
import { yieldToEventLoop } from '../util/clock.js';
import type { KubeletContext, PodRecord } from './context.js';

/** `syncFrequency`: every pod is re-synced at least this often (jittered up to +50%). */
export const SYNC_FREQUENCY_MS = 60_000;
/** `workerResyncIntervalJitterFactor` (pod_workers.go): the resync comes up to this much later. */
const WORKER_RESYNC_JITTER_FACTOR = 0.5;
/** `workerBackOffPeriodJitterFactor` (pod_workers.go): a sync that failed is requeued up to this much later. */
const WORKER_BACK_OFF_JITTER_FACTOR = 0.5;
/** `backOffPeriod` (kubelet.go): a failed sync is requeued after this, jittered (requeueAfterBackOff). */
export const BACK_OFF_PERIOD_MS = 10_000;
/** How soon a container whose spec the runtime refused is tried again (the pod worker's back-off). */
export const CONFIG_ERROR_RETRY_MS = BACK_OFF_PERIOD_MS;
/** Immediate re-syncs of one pod in a row before the loop yields to timers and I/O (a safety net). */
const MAX_IMMEDIATE_SYNCS = 10;

type WorkerContext = Pick<KubeletContext, 'clock' | 'random' | 'syncBatching' | 'relistPhaseMs' | 'closed' | 'syncPod' | 'syncTerminatingPod' | 'warn'>;

/**
 * Asks for a sync of the pod now (coalesced with any pending one). Never lost, as upstream's
 * `UpdatePod` never loses one (it stores the pod's `pendingUpdate` and signals the worker's
 * channel; the worker takes it after the sync under way): a request while a sync runs is seen
 * by the loop's next look at `dirty`, and one made after that last look, while the loop is
 * ending, by the look taken as the worker goes idle.
 */
export function requestSync(ctx: WorkerContext, rec: PodRecord): void {
  if (ctx.closed) return;
  rec.dirty = true;
  if (rec.syncing) return;
  rec.syncing = podWorkerLoop(ctx, rec).finally(() => {
    rec.syncing = undefined;
    if (rec.dirty) requestSync(ctx, rec);
  });
}

/** Asks for a sync after `delayMs` (back-off expiry, periodic resync); the earliest request wins. */
export function requestSyncAfter(ctx: WorkerContext, rec: PodRecord, delayMs: number): void {
  const due = ctx.clock.now() + delayMs;
  if (rec.timer !== undefined && rec.timerDue <= due) return;
  clearTimer(ctx, rec);
  rec.timerDue = due;
  rec.timer = ctx.clock.setTimeout(() => {
    rec.timer = undefined;
    rec.timerDue = Infinity;
    requestSync(ctx, rec);
  }, delayMs);
}

/** `completeWork`'s `workQueue.Enqueue`: this sync's requeue replaces the pod's previous one. */
function enqueue(ctx: WorkerContext, rec: PodRecord, delayMs: number): void {
  if (rec.requeue !== undefined) ctx.clock.clearTimeout(rec.requeue);
  rec.requeue = ctx.clock.setTimeout(() => {
    rec.requeue = undefined;
    requestSync(ctx, rec);
  }, delayMs);
}

/** `completeWork` after a sync that did not back off: the resync, `wait.Jitter(syncFrequency, 0.5)`. */
export function completeWork(ctx: WorkerContext, rec: PodRecord): void {
  if (!rec.backedOff) enqueue(ctx, rec, SYNC_FREQUENCY_MS * (1 + WORKER_RESYNC_JITTER_FACTOR * ctx.random()));
}

/**
 * `completeWork` (pod_workers.go) for a sync that ends in back-off: requeued at the
 * back-off's expiry (`remainingMs`), capped at the resync interval, jittered up to +50 % —
 * so a restart comes up to half the remaining step late, at any phase of the probe ticks.
 * Drawn when the back-off is met, and it stands instead of the resync.
 */
export function requeueAfterBackOff(ctx: WorkerContext, rec: PodRecord, remainingMs: number): void {
  const requeueMs = Math.min(remainingMs, SYNC_FREQUENCY_MS);
  rec.backedOff = true;
  enqueue(ctx, rec, Math.max(requeueMs * (1 + WORKER_BACK_OFF_JITTER_FACTOR * ctx.random()), 1));
}

/** Cancels the pod's pending sync requests and requeue. */
export function clearTimer(ctx: Pick<KubeletContext, 'clock'>, rec: PodRecord): void {
  if (rec.timer !== undefined) ctx.clock.clearTimeout(rec.timer);
  if (rec.requeue !== undefined) ctx.clock.clearTimeout(rec.requeue);
  rec.requeue = undefined;
  rec.timer = undefined;
  rec.timerDue = Infinity;
}

/** `podWorkerLoop`: syncs the pod while syncs are asked for, one at a time. */
async function podWorkerLoop(ctx: WorkerContext, rec: PodRecord): Promise<void> {
  await (ctx.syncBatching === 'turn' ? yieldToEventLoop() : Promise.resolve());
  let immediate = 0;
  while (rec.dirty && !ctx.closed) {
    const wait = untilRelist(ctx, rec);
    if (wait > 0) {
      // The timer's sync takes the request up (and any made until then): nothing is pending now.
      requestSyncAfter(ctx, rec, wait);
      rec.dirty = false;
      return;
    }
    rec.dirty = false;
    // A sync that keeps asking for another must never starve timers, signals and I/O.
    if (++immediate > MAX_IMMEDIATE_SYNCS) {
      immediate = 0;
      await yieldToEventLoop();
    }
    try {
      if (rec.lifecycle === 'sync') await ctx.syncPod(rec);
      else await ctx.syncTerminatingPod(rec);
    } catch (err) {
      ctx.warn(`sync of pod ${rec.pod.metadata?.name ?? rec.uid} failed`, err);
    }
    rec.lastSyncEndMs = ctx.clock.now();
  }
}

/** How long the pod's next sync must wait for a relist that began after its last sync ended (0: none). */
function untilRelist(ctx: WorkerContext, rec: PodRecord): number {
  if (ctx.relistPhaseMs === undefined || rec.lastSyncEndMs === undefined) return 0;
  const k = Math.floor((rec.lastSyncEndMs - ctx.relistPhaseMs) / PLEG_RELIST_PERIOD_MS) + 1;
  return Math.max(0, ctx.relistPhaseMs + k * PLEG_RELIST_PERIOD_MS - ctx.clock.now());
}
