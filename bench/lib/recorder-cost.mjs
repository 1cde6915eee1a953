/**
 * `npm run bench -- --recorder-cost [options]`: what the flight recorder costs. The same
 * load runs twice in fresh processes, recorder off then on (ProbeManager's `flightRecorder`
 * option), and the two are printed side by side as ratios. Goals (issue #11): CPU per probe
 * with the recorder on within 5 % of off (busy runs), and heap per idle worker ≤ 2 KiB with
 * it on (`--idle`: no probe runs, so no ring exists).
 */

/** Goals, in one place. */
export const RECORDER_CPU_RATIO_GOAL = 1.05;
export const IDLE_HEAP_PER_WORKER_GOAL_BYTES = 2048;

/** Strips `--recorder-cost` from the arguments; says whether it was there. */
export function takeRecorderCostFlag(/** @type {string[]} */ argv) {
  const rest = argv.filter((a) => a !== '--recorder-cost');
  return { recorderCost: rest.length !== argv.length, rest };
}

/**
 * @param {Record<string, unknown>} off  run with `flightRecorder: false`
 * @param {Record<string, unknown>} on   run with the recorder on (the default)
 * @returns {string}
 */
export function recorderCostReport(off, on) {
  if (on.mode === 'idle') {
    const perWorker = Number(on.heapBytesPerWorker);
    const verdict = perWorker <= IDLE_HEAP_PER_WORKER_GOAL_BYTES ? 'within' : 'OVER';
    return [
      `recorder cost (idle): heap per idle worker ${perWorker} B on vs ${String(off.heapBytesPerWorker)} B off — ${verdict} the ${IDLE_HEAP_PER_WORKER_GOAL_BYTES} B goal`,
    ].join('\n');
  }
  const cpuOn = Number(on.cpuMsPerProbe);
  const cpuOff = Number(off.cpuMsPerProbe);
  const ratio = cpuOn / cpuOff;
  const verdict = ratio <= RECORDER_CPU_RATIO_GOAL ? 'within' : 'OVER';
  return [
    `recorder cost (${String(on.handler)}, ${String(on.workers)} workers): CPU per probe ${cpuOn} ms on vs ${cpuOff} ms off = ${ratio.toFixed(3)}× — ${verdict} the ${RECORDER_CPU_RATIO_GOAL}× goal`,
    `  heap ${String(on.heapMB)} MB on vs ${String(off.heapMB)} MB off; probes ${String(on.probes)} on vs ${String(off.probes)} off`,
  ].join('\n');
}
