/**
 * The human-readable part of the output: a table of the runs and the probelet ÷ baseline
 * ratios. (The JSON lines are the machine-readable part.)
 */

/** @typedef {Record<string, unknown>} RunResult */

/** Columns: [heading, key]. */
const BUSY_COLUMNS = [
  ['impl', 'impl'],
  ['handler', 'handler'],
  ['workers', 'workers'],
  ['probes/s', 'probesPerS'],
  ['failed', 'failed'],
  ['cpu ms/probe', 'cpuMsPerProbe'],
  ['late p50 ms', 'latenessP50Ms'],
  ['late p99 ms', 'latenessP99Ms'],
  ['late max ms', 'latenessMaxMs'],
  ['maxRSS MB', 'maxRssMB'],
  ['heap MB', 'heapMB'],
  ['TIME_WAIT', 'timeWaitSockets'],
  ['loop p99 ms', 'eventLoopDelayP99Ms'],
];

const IDLE_COLUMNS = [
  ['impl', 'impl'],
  ['workers', 'workers'],
  ['heap B/worker', 'heapBytesPerWorker'],
  ['RSS B/worker', 'rssBytesPerWorker'],
  ['add all ms', 'addAllMs'],
  ['remove all ms', 'removeAllMs'],
  ['heap kept KiB', 'heapRetainedAfterRemoveKiB'],
  ['idle cpu s', 'cpuS'],
  ['probes', 'probes'],
];

/** @param {RunResult[]} runs */
export function table(runs) {
  const columns = runs.some((r) => r['mode'] === 'idle') ? IDLE_COLUMNS : BUSY_COLUMNS;
  const rows = [columns.map(([heading]) => heading ?? ''), ...runs.map((r) => columns.map(([, key]) => String(r[key ?? ''] ?? '-')))];
  const widths = columns.map((_, i) => Math.max(...rows.map((row) => (row[i] ?? '').length)));
  return rows.map((row) => row.map((cell, i) => cell.padStart(widths[i] ?? 0)).join('  ')).join('\n');
}

/**
 * `ratio probelet÷baseline: cpuMsPerProbe=… latenessP99Ms=… maxRssMB=…` (or, idle, the
 * per-worker memory); undefined unless both runs are there.
 * @param {RunResult[]} runs
 */
export function ratioLine(runs) {
  const probelet = runs.find((r) => r['impl'] === 'probelet');
  const baseline = runs.find((r) => r['impl'] === 'baseline');
  if (!probelet || !baseline) return undefined;
  const keys =
    probelet['mode'] === 'idle'
      ? ['heapBytesPerWorker', 'rssBytesPerWorker', 'removeAllMs']
      : ['cpuMsPerProbe', 'latenessP99Ms', 'maxRssMB'];
  const parts = keys.map((key) => {
    const a = probelet[key];
    const b = baseline[key];
    const ratio = typeof a === 'number' && typeof b === 'number' && b !== 0 ? (a / b).toFixed(2) : 'n/a';
    return `${key}=${ratio}`;
  });
  return `ratio probelet÷baseline: ${parts.join(' ')}`;
}
