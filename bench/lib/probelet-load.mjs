/**
 * probelet under load: the real ProbeManager, real clock, real Prober and handlers, real
 * prom-client metrics, reading a real StatusManager — only the prober is wrapped, to see
 * when each probe starts (the manager's `prober` seam; nothing in src is changed).
 */
import { buildPods, handlerSpec } from './pods.mjs';
import { waitUntil } from './wait.mjs';

/** @typedef {import('./options.mjs').BenchOptions} BenchOptions */
/** @typedef {import('./options.mjs').Target} Target */
/** @typedef {import('./lateness.mjs').LatenessRecorder} LatenessRecorder */
/** @typedef {import('./wait.mjs').Load} Load */

/**
 * @param {BenchOptions} o
 * @param {Target} target
 * @param {LatenessRecorder} recorder
 * @returns {Promise<Load>}
 */
export async function probeletLoad(o, target, recorder) {
  const lib = await import('../../dist/index.js');
  const statusManager = new lib.StatusManager();
  const uids = [];
  for (const { pod, status } of buildPods({
    workers: o.workers,
    containersPerPod: o.containersPerPod,
    handler: handlerSpec(o.handler, target),
    periodS: o.periodS,
    timeoutS: o.timeoutS,
    podIP: target.host,
    // Idle: readiness workers wait for a container that never starts, so no probe runs.
    started: !o.idle,
  })) {
    statusManager.setPodStatus(pod, status);
    uids.push(pod.metadata?.uid ?? '');
  }

  const runner = new lib.LocalCommandRunner();
  const real = new lib.Prober({ runner });
  /** @type {Map<string, import('./lateness.mjs').Slot>} */
  const slots = new Map();
  /** @type {import('../../dist/prober/context.js').ProbeFunction} */
  const prober = {
    async probe(probeType, pod, status, container, containerID, note) {
      let slot = slots.get(containerID);
      if (slot === undefined) slots.set(containerID, (slot = recorder.slot()));
      const counted = recorder.begin(slot);
      let ok = false;
      try {
        // `note`: the flight recorder's slot, passed on so the recorder sees what it would without this wrapper.
        const verdict = await real.probe(probeType, pod, status, container, containerID, note);
        ok = verdict.result === 'success' && verdict.error === undefined;
        return verdict;
      } finally {
        recorder.end(counted, ok);
      }
    },
  };
  const manager = new lib.ProbeManager({
    statusProvider: statusManager,
    livenessResults: new lib.ResultsManager(),
    readinessResults: new lib.ResultsManager(),
    startupResults: new lib.ResultsManager(),
    runner,
    prober,
    // Busy: a kubelet that just started, so start-up jitter spreads the workers over a
    // period. Idle: one that started long ago, so workers settle on their tickers at once.
    startTime: o.idle ? 0 : Date.now(),
    random: Math.random,
    // `npm run bench -- --recorder-cost` runs once without the flight recorder.
    ...(/** @type {{ flightRecorder?: boolean }} */ (o).flightRecorder === false ? { flightRecorder: false } : {}),
  });
  // The pod objects the status manager keeps (frozen copies), as a kubelet would pass them.
  const pods = uids.map((uid) => statusManager.getPod(uid)).filter((pod) => pod !== undefined);

  return {
    add() {
      for (const pod of pods) manager.addPod(pod);
    },
    async remove() {
      for (const pod of pods) manager.removePod(pod);
      await waitUntil(() => manager.workerCount() === 0 && recorder.inFlight === 0, 30_000);
    },
    workerCount: () => manager.workerCount(),
  };
}
