/**
 * One measured run: start every worker, let start-up jitter spread them over a warm-up
 * (not measured), then measure a window of `durationS`, then stop everything.
 */
import { LatenessRecorder, round } from './lateness.mjs';
import { Window, maxRssMB, monotonicUs, newTimeWaitCount, sleep, timeWaitKeys } from './measure.mjs';

/** @typedef {import('./options.mjs').BenchOptions} BenchOptions */
/** @typedef {import('./options.mjs').Target} Target */
/** @typedef {import('./wait.mjs').Load} Load */
/** @typedef {(o: BenchOptions, t: Target, r: LatenessRecorder) => Load | Promise<Load>} LoadFactory */

/** The keys of a run's JSON line, in order. */
export const RESULT_KEYS = /** @type {const} */ ([
  'impl',
  'handler',
  'workers',
  'periodS',
  'elapsedS',
  'probes',
  'ok',
  'failed',
  'probesPerS',
  'cpuS',
  'cpuMsPerProbe',
  'maxRssMB',
  'heapMB',
  'latenessP50Ms',
  'latenessP99Ms',
  'latenessMaxMs',
  'timeWaitSockets',
  'eventLoopDelayP99Ms',
]);

/**
 * @param {'probelet' | 'baseline'} impl
 * @param {BenchOptions} o
 * @param {Target} target
 * @param {LoadFactory} factory
 * @returns {Promise<{ result: Record<string, unknown>, windowUs: number[] }>} the JSON line's
 *   fields, and the measured window on the monotonic clock (for profile-summary.mjs)
 */
export async function busyRun(impl, o, target, factory) {
  const recorder = new LatenessRecorder(o.periodS * 1000, impl === 'probelet' ? 'fixed-rate' : 'interval');
  const load = await factory(o, target, recorder);
  const network = o.handler !== 'exec';
  const timeWaitBefore = network ? timeWaitKeys(target.port) : new Set();
  const window = new Window();

  load.add();
  await sleep(o.warmupS * 1000);
  const windowUs = [monotonicUs(), 0];
  recorder.open();
  window.start();
  await sleep(o.durationS * 1000);
  recorder.close();
  const w = window.stop();
  windowUs[1] = monotonicUs();
  const rss = maxRssMB();
  await load.remove();
  const lateness = recorder.percentiles();

  const { probes } = recorder;
  const result = {
    impl,
    handler: o.handler,
    workers: o.workers,
    periodS: o.periodS,
    elapsedS: w.elapsedS,
    probes,
    ok: recorder.ok,
    failed: recorder.failed,
    probesPerS: round(probes / w.elapsedS, 1),
    cpuS: w.cpuS,
    cpuMsPerProbe: probes > 0 ? round((w.cpuS * 1000) / probes, 4) : null,
    maxRssMB: rss,
    heapMB: w.heapMB,
    latenessP50Ms: lateness.p50,
    latenessP99Ms: lateness.p99,
    latenessMaxMs: lateness.max,
    timeWaitSockets: network ? newTimeWaitCount(timeWaitBefore, target.port) : null,
    eventLoopDelayP99Ms: w.eventLoopDelayP99Ms,
  };
  return { result, windowUs };
}
