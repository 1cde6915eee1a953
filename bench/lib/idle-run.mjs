/**
 * `--idle`: what a worker costs while it waits. Workers are added whose containers never
 * start (readiness waits for `started`) and whose period is an hour, so no probe runs; the
 * heap and RSS growth from adding them (after a full GC) is divided by their number.
 * Also times adding all pods and removing all of them (until no worker is left), and
 * reports the heap still held after removal (a leak shows there).
 */
import { performance } from 'node:perf_hooks';
import { LatenessRecorder, round } from './lateness.mjs';
import { Window, maxRssMB, monotonicUs, sleep } from './measure.mjs';

/** @typedef {import('./options.mjs').BenchOptions} BenchOptions */
/** @typedef {import('./options.mjs').Target} Target */
/** @typedef {import('./busy-run.mjs').LoadFactory} LoadFactory */

/** A full, repeated GC (needs --expose-gc; the orchestrator passes it) for stable readings. */
function collect() {
  const gc = /** @type {(() => void) | undefined} */ (globalThis.gc);
  if (gc === undefined) throw new Error('--idle needs node --expose-gc');
  for (let i = 0; i < 3; i++) gc();
  return process.memoryUsage();
}

/**
 * @param {'probelet' | 'baseline'} impl
 * @param {BenchOptions} o
 * @param {Target} target
 * @param {LoadFactory} factory
 * @returns {Promise<{ result: Record<string, unknown>, windowUs: number[] }>} as busyRun; the
 *   window spans adding, holding and removing
 */
export async function idleRun(impl, o, target, factory) {
  const recorder = new LatenessRecorder(o.periodS * 1000, 'interval');
  recorder.open(); // any probe at all is counted: there should be none
  const load = await factory(o, target, recorder);
  const before = collect();

  const windowUs = [monotonicUs(), 0];
  let t = performance.now();
  load.add();
  // Workers start asynchronously; one turn of the loop lets each settle on its timer.
  await new Promise((resolve) => setImmediate(resolve));
  const addAllMs = performance.now() - t;
  const added = collect();

  const window = new Window();
  window.start();
  await sleep(o.durationS * 1000);
  const w = window.stop();
  const rss = maxRssMB();

  t = performance.now();
  await load.remove();
  const removeAllMs = performance.now() - t;
  windowUs[1] = monotonicUs();
  const after = collect();

  const result = {
    impl,
    handler: o.handler,
    workers: o.workers,
    periodS: o.periodS,
    elapsedS: w.elapsedS,
    probes: recorder.probes + recorder.inFlight,
    ok: recorder.ok,
    failed: recorder.failed,
    probesPerS: null,
    cpuS: w.cpuS,
    cpuMsPerProbe: null,
    maxRssMB: rss,
    heapMB: round(added.heapUsed / 2 ** 20, 1),
    latenessP50Ms: null,
    latenessP99Ms: null,
    latenessMaxMs: null,
    timeWaitSockets: null,
    eventLoopDelayP99Ms: w.eventLoopDelayP99Ms,
    mode: 'idle',
    heapBytesPerWorker: Math.round((added.heapUsed - before.heapUsed) / o.workers),
    rssBytesPerWorker: Math.round((added.rss - before.rss) / o.workers),
    addAllMs: round(addAllMs, 1),
    removeAllMs: round(removeAllMs, 1),
    heapRetainedAfterRemoveKiB: round((after.heapUsed - before.heapUsed) / 1024, 1),
  };
  return { result, windowUs };
}
