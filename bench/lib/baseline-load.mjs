/**
 * The baseline under the same load: one setInterval per worker, started after the same
 * uniform start-up jitter probelet applies, no manager, no status, no metrics.
 */
import { baselineProbe } from './baseline-probes.mjs';
import { waitUntil } from './wait.mjs';

/** @typedef {import('./options.mjs').BenchOptions} BenchOptions */
/** @typedef {import('./options.mjs').Target} Target */
/** @typedef {import('./lateness.mjs').LatenessRecorder} LatenessRecorder */
/** @typedef {import('./wait.mjs').Load} Load */

/**
 * @typedef {object} BaselineWorker
 * @property {ReturnType<typeof setTimeout> | undefined} timer  The jitter timeout, then the interval.
 * @property {boolean} stopped
 */

/**
 * @param {BenchOptions} o
 * @param {Target} target
 * @param {LatenessRecorder} recorder
 * @returns {Load}
 */
export function baselineLoad(o, target, recorder) {
  const probe = baselineProbe(o.handler, target, o.timeoutS * 1000);
  const periodMs = o.periodS * 1000;
  /** @type {BaselineWorker[]} */
  const workers = [];

  /** @param {BaselineWorker} worker */
  const startWorker = (worker) => {
    const slot = recorder.slot();
    const tick = () => {
      if (worker.stopped) return;
      const counted = recorder.begin(slot);
      void probe().then((ok) => recorder.end(counted, ok));
    };
    if (o.idle) {
      worker.timer = setInterval(tick, periodMs);
      return;
    }
    worker.timer = setTimeout(() => {
      tick();
      worker.timer = setInterval(tick, periodMs);
    }, Math.random() * periodMs);
  };

  return {
    add() {
      for (let i = 0; i < o.workers; i++) {
        /** @type {BaselineWorker} */
        const worker = { timer: undefined, stopped: false };
        startWorker(worker);
        workers.push(worker);
      }
    },
    async remove() {
      for (const worker of workers) {
        worker.stopped = true;
        clearTimeout(worker.timer); // clears an interval too: same Timeout object
      }
      workers.length = 0;
      await waitUntil(() => recorder.inFlight === 0, 30_000);
    },
    workerCount: () => workers.length,
  };
}
