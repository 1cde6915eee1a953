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
export function probeletLoad(o, target, recorder) {
  const pods = buildPods({
    workers: o.workers,
    containersPerPod: o.containersPerPod,
    handler: handlerSpec(o.handler, target),
    periodS: o.periodS,
    timeoutS: o.timeoutS,
    podIP: target.host,
    // Idle: readiness workers wait for a container that never starts, so no probe runs.
    started: !o.idle,
  });
  return managerLoad(pods, o.idle, recorder, /** @type {{ flightRecorder?: boolean }} */ (o).flightRecorder !== false, o.probeClose);
}

/**
 * The real ProbeManager over the given pods (see the file comment).
 * @param {ReturnType<typeof buildPods>} entries  pods and the status a kubelet would have for them
 * @param {boolean} idle  a kubelet that started long ago (workers settle on their tickers at once)
 * @param {LatenessRecorder} recorder
 * @param {boolean} [flightRecorder]  false: without the flight recorder (`--recorder-cost` runs both)
 * @param {'fin' | 'reset'} [probeClose]  how the probes close their connections (default: the kubelet's FIN)
 * @returns {Promise<Load>}
 */
export async function managerLoad(entries, idle, recorder, flightRecorder = true, probeClose = 'fin') {
  const lib = await import('../../dist/index.js');
  const statusManager = new lib.StatusManager();
  const uids = [];
  for (const { pod, status } of entries) {
    statusManager.setPodStatus(pod, status);
    uids.push(pod.metadata?.uid ?? '');
  }

  const runner = new lib.LocalCommandRunner();
  const real = new lib.Prober({ runner, probeClose });
  /** @type {Map<string, import('./lateness.mjs').Slot>} */
  const slots = new Map();
  /** @type {import('../../dist/prober/context.js').ProbeFunction} */
  const prober = {
    async probe(probeType, pod, status, container, containerID, note) {
      // One schedule per worker: a container may have a liveness and a readiness worker.
      const key = `${probeType}/${containerID}`;
      let slot = slots.get(key);
      if (slot === undefined) slots.set(key, (slot = recorder.slot()));
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
    startTime: idle ? 0 : Date.now(),
    random: Math.random,
    // `npm run bench -- --recorder-cost` runs once without the flight recorder.
    ...(flightRecorder ? {} : { flightRecorder: false }),
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
      await runner.close();
    },
    workerCount: () => manager.workerCount(),
  };
}
