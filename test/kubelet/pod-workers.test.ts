/**
 * The pod worker never loses a sync request (upstream pod_workers.go: `UpdatePod` stores the
 * pod's `pendingUpdate` and signals the worker's channel without blocking; the worker's loop
 * takes it after the sync under way). A request made while a sync ends — after the loop's last
 * look at `dirty`, before the worker counts as idle — must start another sync, not wait for
 * the next resync (a minute later).
 */
import { describe, expect, it } from 'vitest';
import type { PodRecord } from '../../src/kubelet/context.js';
import { requestSync, SYNC_FREQUENCY_MS } from '../../src/kubelet/pod-workers.js';
import { FakeClock } from '../../src/util/clock.js';

/** A pod record with what the pod worker reads. */
function record(): PodRecord {
  return { uid: 'u', pod: { metadata: { name: 'p' } }, dirty: false, syncing: undefined, lifecycle: 'sync', timer: undefined, timerDue: Infinity, lastSyncEndMs: undefined } as unknown as PodRecord;
}

/**
 * A pod worker on a FakeClock whose first sync, `depth` microtask turns after it returned,
 * asks for another (what a sync sets off that comes back a few turns later: a probe result,
 * a runtime event); `syncs` is when each sync began.
 */
function worker(depth: number, relistPhaseMs: number | undefined): { clock: FakeClock; syncs: number[]; start(): void } {
  const clock = new FakeClock(0, { settle: 'microtasks' });
  const rec = record();
  const syncs: number[] = [];
  const ctx = {
    clock,
    random: () => 0,
    syncBatching: 'microtask' as const,
    relistPhaseMs,
    closed: false,
    warn: () => undefined,
    syncTerminatingPod: () => Promise.resolve(),
    syncPod: (): Promise<void> => {
      syncs.push(clock.now());
      if (syncs.length === 1) afterMicrotasks(depth, () => requestSync(ctx, rec));
      return Promise.resolve();
    },
  };
  return { clock, syncs, start: () => requestSync(ctx, rec) };
}

/** `fn` after `depth` microtask turns. */
function afterMicrotasks(depth: number, fn: () => void): void {
  let p = Promise.resolve();
  for (let i = 0; i < depth; i++) p = p.then(() => undefined);
  void p.then(fn);
}

describe('requestSync (the pod worker)', () => {
  it('a request made as the sync ends, at any microtask turn, gets a sync of its own at once', async () => {
    // The next sync must come well before the resync would have taken the request up.
    expect(SYNC_FREQUENCY_MS).toBeGreaterThan(1_000);
    for (let depth = 0; depth <= 12; depth++) {
      const { clock, syncs, start } = worker(depth, undefined);
      start();
      // Well short of the resync: only an immediate sync counts.
      await clock.advance(1_000);
      expect(syncs, `a request ${depth} microtask turns after the sync returned`).toEqual([0, 0]);
    }
  });

  it('a request while the pod waits for the relist is left to the relist sync (one sync, not a busy loop)', async () => {
    const { clock, syncs, start } = worker(3, 300);
    start();
    await clock.advance(2_000);
    // The first sync at 0; the request after it waits for the first relist after that sync ended (300 ms).
    expect(syncs).toEqual([0, 300]);
  });
});
