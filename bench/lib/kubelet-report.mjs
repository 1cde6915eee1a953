/**
 * The pure parts of `npm run bench -- --scenario kubelet` (bench/kubelet.mjs): its options,
 * the figures of one agent's run, and the side-by-side report. Kept apart from the run so the
 * argument handling and the output format are tested without a cluster (test/bench).
 */

/**
 * @typedef {object} KubeletBenchOptions
 * @property {number} pods        pods probed from the host, half HTTP, half TCP (one readiness probe each)
 * @property {number} execPods    pods with an exec readiness probe (through the CRI's ExecSync)
 * @property {number} periodS     period of the HTTP and TCP probes
 * @property {number} execPeriodS period of the exec probes
 * @property {number} windowS     measured window, the same for idle and loaded
 * @property {boolean} cpuProf    probelet's loaded run under node --cpu-prof (bench/profiles/)
 */

export const KUBELET_USAGE = `usage: npm run bench -- --scenario kubelet [--pods N] [--exec-pods M] [--period S]
       [--exec-period S] [--window S] [--cpu-prof]
  N pods (half HTTP, half TCP readiness probes every --period S, default 100 × 1 s) and M exec
  pods (default 4 × 2 s) under the real kubelet of \`npm run cluster:up\` and, at once, under
  \`probelet run --runtime cri\` on a containerd instance of its own (cri-up --name bench):
  both measured over the same windows, so a changing machine load weighs on both alike;
  each agent's CPU (utime+stime, idle subtracted) per probe, RSS, probe lateness and each
  window's load average.`;

/** @type {KubeletBenchOptions} */
export const KUBELET_DEFAULTS = { pods: 100, execPods: 4, periodS: 1, execPeriodS: 2, windowS: 60, cpuProf: false };

/** Bounds that keep a run within what 2 shared cores and one node carry (the kubelet's maxPods is 110). */
const LIMITS = { pods: [2, 200], execPods: [0, 20], periodS: [1, 60], execPeriodS: [1, 60], windowS: [5, 600] };

/**
 * @param {readonly string[]} argv  arguments after `--scenario kubelet` was taken out
 * @returns {KubeletBenchOptions}
 */
export function parseKubeletOptions(argv) {
  /** @type {Record<string, keyof typeof LIMITS>} */
  const flags = { '--pods': 'pods', '--exec-pods': 'execPods', '--period': 'periodS', '--exec-period': 'execPeriodS', '--window': 'windowS' };
  const o = { ...KUBELET_DEFAULTS };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] ?? '';
    if (arg === '--cpu-prof') {
      o.cpuProf = true;
      continue;
    }
    const [name, inline] = arg.includes('=') ? [arg.slice(0, arg.indexOf('=')), arg.slice(arg.indexOf('=') + 1)] : [arg, undefined];
    const key = flags[name];
    if (key === undefined) throw new Error(`unknown argument ${arg} (flags: ${[...Object.keys(flags), '--cpu-prof'].join(', ')})`);
    const text = inline ?? argv[++i];
    const value = Number(text);
    const [min, max] = LIMITS[key];
    if (text === undefined || !Number.isInteger(value) || value < min || value > max) {
      throw new Error(`${name} wants a whole number from ${min} to ${max}, got ${text === undefined ? 'nothing' : JSON.stringify(text)}`);
    }
    o[key] = value;
  }
  return o;
}

/**
 * Intervals between consecutive arrivals of each pod's probe minus the period, in ms, over
 * all pods: the probe's lateness as the probed server sees it (dialling and the request's
 * transit included, the same for both agents).
 * @param {Iterable<number[]>} arrivalsByPod  arrival times in ms, each pod's in order
 * @param {number} periodMs
 * @returns {{ samples: number, p50: number, p99: number, max: number }}
 */
export function latenessOf(arrivalsByPod, periodMs) {
  /** @type {number[]} */
  const d = [];
  for (const arrivals of arrivalsByPod) for (let i = 1; i < arrivals.length; i++) d.push((arrivals[i] ?? 0) - (arrivals[i - 1] ?? 0) - periodMs);
  d.sort((a, b) => a - b);
  const at = (/** @type {number} */ q) => (d.length === 0 ? NaN : round(d[Math.min(d.length - 1, Math.floor(q * d.length))] ?? NaN, 1));
  return { samples: d.length, p50: at(0.5), p99: at(0.99), max: d.length === 0 ? NaN : round(d[d.length - 1] ?? NaN, 1) };
}

/**
 * @typedef {object} AgentFigures  One agent's run, as bench/kubelet.mjs measured it.
 * @property {'kubelet' | 'probelet'} agent
 * @property {string} version
 * @property {number} windowS
 * @property {number} idleCpuS          agent CPU over the idle window (one pod without probes)
 * @property {number} loadCpuS          agent CPU over the loaded window
 * @property {number} idleRssMB
 * @property {number} loadRssMB         the highest RSS sampled in the loaded window
 * @property {number} hostProbes        HTTP and TCP probes the target server got in the window
 * @property {number} execProbes        exec probes in the window, expected from their period (not observable from outside)
 * @property {number} containerdCpuS    the agent's containerd over the loaded window minus idle (ExecSync's cost is there)
 * @property {{ samples: number, p50: number, p99: number, max: number }} lateness
 * @property {number} idleLoadAvg       the machine's 1-minute load average at the end of the idle window
 * @property {number} loadAvg           the same at the end of the loaded window (others' work shows in lateness). Both agents are measured at once: their windows are the same
 * @property {number} otherPods         the most pods of others seen on the node during the windows, sampled every 5 s (their work is in the figures)
 */

/**
 * CPU per probe in µs: loaded minus idle, over the probes of the window.
 * @param {AgentFigures} f
 */
export function cpuPerProbeUs(f) {
  const probes = f.hostProbes + f.execProbes;
  return probes === 0 ? NaN : round(((f.loadCpuS - f.idleCpuS) / probes) * 1e6, 1);
}

/**
 * The JSON line of one agent (printed first, one per agent, for scripts).
 * @param {AgentFigures} f
 */
export function jsonLine(f) {
  return JSON.stringify({ scenario: 'kubelet', ...f, cpuPerProbeUs: cpuPerProbeUs(f) });
}

/**
 * The side-by-side table, the ratio line and the version line.
 * @param {AgentFigures} kubelet
 * @param {AgentFigures} probelet
 * @param {KubeletBenchOptions} o
 * @returns {string}
 */
export function kubeletReport(kubelet, probelet, o) {
  const ku = cpuPerProbeUs(kubelet);
  const pr = cpuPerProbeUs(probelet);
  /** @type {[string, string, string][]} */
  const rows = [
    ['pods (HTTP+TCP / exec)', `${o.pods} / ${o.execPods}`, `${o.pods} / ${o.execPods}`],
    ['period (HTTP+TCP / exec)', `${o.periodS} s / ${o.execPeriodS} s`, `${o.periodS} s / ${o.execPeriodS} s`],
    ['probes in window (host + exec)', `${kubelet.hostProbes} + ${kubelet.execProbes}`, `${probelet.hostProbes} + ${probelet.execProbes}`],
    ['CPU idle / loaded (s)', `${kubelet.idleCpuS} / ${kubelet.loadCpuS}`, `${probelet.idleCpuS} / ${probelet.loadCpuS}`],
    ['CPU per probe (µs, idle subtracted)', String(ku), String(pr)],
    ['RSS idle / loaded (MB)', `${kubelet.idleRssMB} / ${kubelet.loadRssMB}`, `${probelet.idleRssMB} / ${probelet.loadRssMB}`],
    ['containerd CPU, loaded − idle (s)', String(kubelet.containerdCpuS), String(probelet.containerdCpuS)],
    ['lateness p50 / p99 / max (ms)', lateText(kubelet), lateText(probelet)],
    ['other pods on the node', String(kubelet.otherPods), String(probelet.otherPods)],
    ['load average (1 min) idle / loaded window', `${kubelet.idleLoadAvg} / ${kubelet.loadAvg}`, `${probelet.idleLoadAvg} / ${probelet.loadAvg}`],
  ];
  const w0 = Math.max(...rows.map((r) => r[0].length));
  const w1 = Math.max('kubelet'.length, ...rows.map((r) => r[1].length));
  const line = (/** @type {string[]} */ [a, b, c]) => `${(a ?? '').padEnd(w0)}  ${(b ?? '').padStart(w1)}  ${c ?? ''}`;
  const ratio = ku > 0 && pr > 0 ? round(pr / ku, 2) : NaN;
  const verdict = Number.isFinite(ratio)
    ? ratio <= 1
      ? 'goal ≤ 1 met'
      : 'goal ≤ 1 NOT met'
    : 'no ratio: an agent\'s loaded CPU is not above its idle CPU (window too short for the noise, or no probes)';
  return [
    `window ${o.windowS} s each, both agents at once; ${kubelet.version}; ${probelet.version}`,
    line(['', 'kubelet', 'probelet']),
    ...rows.map(line),
    `probelet / kubelet CPU per probe = ${ratio} (${verdict}); RSS ${probelet.loadRssMB} MB / ${kubelet.loadRssMB} MB`,
    ...(kubelet.otherPods + probelet.otherPods > 0 ? ['(other pods ran on a node during the windows: their agent work is in its figures)'] : []),
    '(measured on this machine now; compare runs from one invocation only)',
  ].join('\n');
}

/** @param {AgentFigures} f */
function lateText(f) {
  return f.lateness.samples === 0 ? 'n/a' : `${f.lateness.p50} / ${f.lateness.p99} / ${f.lateness.max}`;
}

/**
 * @param {number} x
 * @param {number} digits
 */
export function round(x, digits = 2) {
  const k = 10 ** digits;
  return Math.round(x * k) / k;
}
