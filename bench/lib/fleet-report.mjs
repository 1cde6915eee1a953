/**
 * The pure parts of `npm run bench -- --scenario fleet` (bench/fleet.mjs): its options, the API
 * server's write counts, one agent's figures and the kwok-beside-probelet report. Kept apart
 * from the run so argument handling and the output are tested without a cluster (test/bench).
 */

/**
 * @typedef {object} FleetOptions
 * @property {number} nodes
 * @property {number} perNode    replicas of each node's Deployment
 * @property {number} limitS     each agent's window ends here even when not every pod is Ready
 * @property {number} holdS      seconds watched once every pod is Ready (a steady fleet)
 * @property {string} prefix     the nodes' and namespaces' names
 * @property {'kwok' | undefined} vs  kwok's nodes first, then probelet's, the same Deployments
 * @property {number[] | undefined} scale  pods of each step of the ratio check (a fresh fleet of pods ÷ perNode nodes each)
 * @property {boolean} lean      alone or --scale: probelet with --lean-writes (--vs kwok runs both)
 */

/** The default fleet: 50 nodes × 100 pods. */
export const FLEET_DEFAULTS = { nodes: 50, perNode: 100, limitS: 600, holdS: 30 };

/** Pods per node of a --scale step unless --pods-per-node says otherwise: 20,000 pods on 500 nodes. */
export const SCALE_PODS_PER_NODE = 40;

/** A --scale figure (memory per pod, per node, CPU per probe) is flat when no larger step's is more than this factor of the smallest step's. */
export const FLAT_RATIO = 1.5;

export const FLEET_USAGE = `usage: npm run bench -- --scenario fleet [--vs kwok] [--nodes N] [--pods M | --pods-per-node K]
       [--limit S] [--hold S] [--prefix NAME]
       npm run bench -- --scenario fleet --scale M1,M2,… [--pods-per-node K] [--limit S] [--hold S] [--lean]
  probelet node --runtime simulated --nodes N under the API server of KUBECONFIG (an admin
  identity), one Deployment per node (K replicas, or M in all spread evenly), HTTP readiness and
  liveness probes every 10 s. --vs kwok: the same Deployments on N nodes of kwok (cluster/build-kwok.sh)
  first, then on probelet's (the kubelet's writes), then on probelet --lean-writes', each
  agent's figures side by side (docs/node.md). --scale: a fresh fleet of Mi ÷ K nodes (K default
  ${SCALE_PODS_PER_NODE}) for each step, its memory per pod and per node and CPU per probe, and whether they stay flat.
  --lean: alone or with --scale, probelet with --lean-writes.`;

/** The probes' period (seconds): both probes of every fleet pod (lib/fleet-window.mjs). */
export const PROBE_PERIOD_S = 10;

/** Pods a node takes: the kubelet's default maxPods, which probelet's and kwok's nodes declare. */
export const MAX_PODS_PER_NODE = 110;

/**
 * @param {readonly string[]} argv  arguments after `--scenario fleet` was taken out
 * @param {number} pid  names the run when no --prefix is given
 * @returns {FleetOptions}
 */
export function parseFleetOptions(argv, pid) {
  /** @type {Map<string, string>} */
  const values = new Map();
  const known = ['--nodes', '--pods', '--pods-per-node', '--limit', '--hold', '--prefix', '--vs', '--scale', '--lean'];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] ?? '';
    const eq = arg.indexOf('=');
    const name = eq > 0 ? arg.slice(0, eq) : arg;
    if (!known.includes(name)) throw new Error(`unknown argument ${arg} (flags: ${known.join(', ')})`);
    if (name === '--lean') {
      values.set(name, 'true');
      continue;
    }
    const value = eq > 0 ? arg.slice(eq + 1) : argv[++i];
    if (value === undefined) throw new Error(`${name} wants a value`);
    values.set(name, value);
  }
  const whole = (/** @type {string} */ name, /** @type {number} */ fallback) => {
    const text = values.get(name);
    if (text === undefined) return fallback;
    const n = Number(text);
    if (!/^\d+$/.test(text) || n <= 0) throw new Error(`${name} wants a positive whole number, got ${JSON.stringify(text)}`);
    return n;
  };
  const scale = scaleSteps(values, whole);
  if (scale) {
    const perNode = whole('--pods-per-node', SCALE_PODS_PER_NODE);
    if (perNode > MAX_PODS_PER_NODE) throw new Error(`${perNode} pods per node is more than a node takes (${MAX_PODS_PER_NODE})`);
    const odd = scale.find((m) => m % perNode !== 0);
    if (odd !== undefined) throw new Error(`--scale ${odd} is not a multiple of --pods-per-node ${perNode}: each node gets one Deployment of the same size`);
    const common = { perNode, limitS: whole('--limit', FLEET_DEFAULTS.limitS), holdS: whole('--hold', FLEET_DEFAULTS.holdS), vs: undefined, scale, lean: values.has('--lean') };
    return { nodes: (scale[0] ?? 0) / perNode, prefix: prefixOf(values, pid), ...common };
  }
  const nodes = whole('--nodes', FLEET_DEFAULTS.nodes);
  if (values.has('--pods') && values.has('--pods-per-node')) throw new Error('--pods and --pods-per-node: give one of them');
  const pods = whole('--pods', 0);
  if (pods > 0 && pods % nodes !== 0) throw new Error(`--pods ${pods} is not a multiple of --nodes ${nodes}: each node gets one Deployment of the same size`);
  const perNode = pods > 0 ? pods / nodes : whole('--pods-per-node', FLEET_DEFAULTS.perNode);
  if (perNode > MAX_PODS_PER_NODE) throw new Error(`${perNode} pods per node is more than a node takes (${MAX_PODS_PER_NODE}): give more --nodes`);
  const prefix = prefixOf(values, pid);
  const vs = values.get('--vs');
  if (vs !== undefined && vs !== 'kwok') throw new Error(`--vs wants kwok, got ${JSON.stringify(vs)}`);
  if (vs !== undefined && values.has('--lean')) throw new Error('--lean: not with --vs kwok (which runs probelet both with and without --lean-writes)');
  return { nodes, perNode, limitS: whole('--limit', FLEET_DEFAULTS.limitS), holdS: whole('--hold', FLEET_DEFAULTS.holdS), prefix, vs, scale: undefined, lean: values.has('--lean') };
}

/**
 * @param {Map<string, string>} values
 * @param {number} pid
 */
function prefixOf(values, pid) {
  const prefix = values.get('--prefix') ?? `fleet${pid % 10000}`;
  if (!/^[a-z0-9]([-a-z0-9]{0,30}[a-z0-9])?$/.test(prefix)) throw new Error(`--prefix ${JSON.stringify(prefix)}: lower-case letters, digits and '-', at most 32`);
  return prefix;
}

/**
 * `--scale M1,M2,…`: at least two growing pod counts; not with --vs, --nodes or --pods.
 * @param {Map<string, string>} values
 * @param {(name: string, fallback: number) => number} whole
 * @returns {number[] | undefined}
 */
function scaleSteps(values, whole) {
  const text = values.get('--scale');
  if (text === undefined) return undefined;
  for (const other of ['--vs', '--nodes', '--pods']) if (values.has(other)) throw new Error(`--scale: not with ${other} (each step is a fleet of its own, pods ÷ --pods-per-node nodes)`);
  const steps = text.split(',').map((part) => {
    values.set('--scale', part);
    return whole('--scale', 0);
  });
  values.set('--scale', text);
  if (steps.length < 2 || steps.some((m, i) => i > 0 && m <= (steps[i - 1] ?? 0))) throw new Error(`--scale ${JSON.stringify(text)}: two or more growing pod counts, e.g. 1000,5000,20000`);
  return steps;
}

/** The verbs of `apiserver_request_total` that write (a watch, get or list does not). */
const WRITE_VERBS = new Set(['POST', 'PUT', 'PATCH', 'DELETE', 'DELETECOLLECTION', 'APPLY']);

/**
 * What a node agent writes: a pod's status, events, Leases, its Node. Everything else written
 * in a window (pods created by the ReplicaSet controller, bindings by the scheduler, the
 * controllers' own status updates) is the control plane's, the same for both agents. Core
 * `events` also hold the controllers' (a ReplicaSet's `SuccessfulCreate`, at most 25 a
 * ReplicaSet in a burst by client-go's spam filter): a shared offset, shown in the breakdown.
 */
const AGENT_RESOURCES = new Set(['pods/status', 'events', 'coordination.k8s.io/leases', 'nodes', 'nodes/status']);

/** Keys of `parseRequestTotals` that are not writes: the API server's time spent on them. */
const WRITE_SECONDS = '~write seconds';
const WRITE_COUNT = '~write count';

/**
 * Sums the write requests of the API server's `apiserver_request_total` (Prometheus text) by
 * `VERB [group/]resource[/subresource]` (over versions, scopes and codes): the scheduler's
 * `events.k8s.io/events` apart from the core `events` of kubelets and controllers. Also the
 * time the API server spent on all writes (`apiserver_request_duration_seconds` sum and count,
 * under two keys starting with `~`), which tells whether it is the bottleneck.
 * @param {string} text
 * @returns {Map<string, number>}
 */
export function parseRequestTotals(text) {
  /** @type {Map<string, number>} */
  const totals = new Map();
  const add = (/** @type {string} */ key, /** @type {number} */ n) => totals.set(key, (totals.get(key) ?? 0) + n);
  for (const line of text.split('\n')) {
    const metric = line.startsWith('apiserver_request_total{') ? 'total' : line.startsWith('apiserver_request_duration_seconds_sum{') ? 'sum' : line.startsWith('apiserver_request_duration_seconds_count{') ? 'count' : undefined;
    if (!metric) continue;
    const close = line.lastIndexOf('}');
    /** @type {Record<string, string>} */
    const labels = {};
    for (const m of line.slice(line.indexOf('{') + 1, close).matchAll(/([a-z_]+)="([^"]*)"/g)) labels[m[1] ?? ''] = m[2] ?? '';
    const verb = labels['verb'] ?? '';
    if (!WRITE_VERBS.has(verb)) continue;
    const n = Number(line.slice(close + 1).trim());
    if (metric === 'sum') add(WRITE_SECONDS, n);
    else if (metric === 'count') add(WRITE_COUNT, n);
    else add(`${verb} ${labels['group'] ? `${labels['group']}/` : ''}${labels['resource'] ?? ''}${labels['subresource'] ? `/${labels['subresource']}` : ''}`, n);
  }
  return totals;
}

/**
 * The writes between two `parseRequestTotals`: all of them, the agent's (AGENT_RESOURCES), each
 * key that changed, largest first, and the API server's mean time per write meanwhile (ms).
 * @param {Map<string, number>} before
 * @param {Map<string, number>} after
 */
export function writesBetween(before, after) {
  /** @type {[string, number][]} */
  const changed = [];
  let all = 0;
  let agent = 0;
  for (const [key, n] of after) {
    const d = n - (before.get(key) ?? 0);
    if (d <= 0 || key.startsWith('~')) continue;
    changed.push([key, d]);
    all += d;
    if (AGENT_RESOURCES.has(key.slice(key.indexOf(' ') + 1))) agent += d;
  }
  changed.sort((a, b) => b[1] - a[1]);
  const delta = (/** @type {string} */ key) => (after.get(key) ?? 0) - (before.get(key) ?? 0);
  const count = delta(WRITE_COUNT);
  return { all, agent, byKey: Object.fromEntries(changed), ...(count > 0 ? { meanWriteMs: (delta(WRITE_SECONDS) * 1000) / count } : {}) };
}

/**
 * @param {number[]} sorted  ascending
 * @param {number} q
 */
export function quantile(sorted, q) {
  return sorted.length === 0 ? NaN : (sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? NaN);
}

/** @param {number} x @param {number} digits */
export const round = (x, digits) => (Number.isFinite(x) ? Math.round(x * 10 ** digits) / 10 ** digits : x);

/**
 * @typedef {object} AgentWindow  One agent's window, as bench/lib/fleet-window.mjs measured it.
 * @property {'kwok' | 'probelet'} agent
 * @property {string} version
 * @property {number} nodes
 * @property {number} pods
 * @property {number} ready                  pods Ready at the window's end
 * @property {number} allReadyS              applying the Deployments → the last pod Ready (the bench's clock)
 * @property {number[]} createToReadyMs      each pod: first seen by the bench's watch → first seen Ready
 * @property {number[]} boundToReadyMs       each pod: first seen bound to a node → first seen Ready (the agent's part)
 * @property {{ all: number, agent: number, byKey: Record<string, number>, meanWriteMs?: number }} writes  in the window
 * @property {number} agentCpuS              the agent process's CPU in the window
 * @property {number} agentPeakRssMB         its peak RSS (VmHWM) at the window's end
 * @property {number | undefined} apiserverCpuS  kube-apiserver's CPU in the window (undefined: not found)
 * @property {number | undefined} etcdCpuS
 * @property {number} maxLeaseGapS           longest gap between two renewals of one of its Leases (window and hold)
 * @property {number} steadyAgentWritesPerS  the agent's writes per second in the hold (every pod Ready)
 * @property {number} peakLoadAverage
 * @property {boolean} leanWrites            probelet with --lean-writes
 * @property {number} agentIdleRssMB         its RSS with its nodes up and no pod (just before applying)
 * @property {number} agentSteadyRssMB       its RSS in the hold (median of one sample a second)
 * @property {number} holdS
 * @property {number} holdAgentCpuS          its CPU in the hold (every pod Ready, probing)
 */

/**
 * The per-agent figures the report and the JSON line show.
 * @param {AgentWindow} w
 */
export function agentSummary(w) {
  const c = [...w.createToReadyMs].sort((a, b) => a - b);
  const b = [...w.boundToReadyMs].sort((a, b2) => a - b2);
  return {
    scenario: 'fleet',
    agent: w.agent,
    nodes: w.nodes,
    pods: w.pods,
    allReadyS: round(w.allReadyS, 1),
    podsReadyPerSecond: round(w.ready / w.allReadyS, 1),
    apiWritesPerPod: round(w.writes.agent / w.pods, 2),
    agentCpuS: round(w.agentCpuS, 2),
    agentPeakRssMB: round(w.agentPeakRssMB, 1),
    ...(w.agent === 'probelet' ? { leanWrites: w.leanWrites } : {}),
    ready: w.ready,
    createToReadyP50S: round(quantile(c, 0.5) / 1000, 2),
    createToReadyP99S: round(quantile(c, 0.99) / 1000, 2),
    boundToReadyP50S: round(quantile(b, 0.5) / 1000, 2),
    boundToReadyP99S: round(quantile(b, 0.99) / 1000, 2),
    allApiWritesPerPod: round(w.writes.all / w.pods, 2),
    apiserverCpuS: w.apiserverCpuS === undefined ? null : round(w.apiserverCpuS, 2),
    etcdCpuS: w.etcdCpuS === undefined ? null : round(w.etcdCpuS, 2),
    apiWriteMs: w.writes.meanWriteMs === undefined ? null : round(w.writes.meanWriteMs, 1),
    maxLeaseGapS: round(w.maxLeaseGapS, 1),
    steadyAgentWritesPerS: round(w.steadyAgentWritesPerS, 2),
    peakLoadAverage: round(w.peakLoadAverage, 1),
    version: w.version,
    writes: w.writes.byKey,
  };
}

/** @typedef {ReturnType<typeof agentSummary>} AgentSummary */

/**
 * Lays out rows as columns: the first padded to the right, the others to the left.
 * @param {string[][]} rows
 */
function table(rows) {
  const widths = (rows[0] ?? []).map((_, i) => Math.max(...rows.map((r) => (r[i] ?? '').length)));
  return rows.map((r) => r.map((cell, i) => (i === 0 ? cell.padEnd(widths[0] ?? 0) : cell.padStart(widths[i] ?? 0))).join('  '));
}

/**
 * The side-by-side table — kwok, probelet (the kubelet's writes), probelet ÷ kwok, and when
 * given probelet --lean-writes and its ratio — and the issue's two goals for each probelet.
 * @param {AgentSummary} kwok
 * @param {AgentSummary} probelet
 * @param {AgentSummary} [lean]
 * @returns {string}
 */
export function fleetReport(kwok, probelet, lean) {
  const ratio = (/** @type {number | null} */ p, /** @type {number | null} */ k) =>
    p === null || k === null || !Number.isFinite(p) || !Number.isFinite(k) || k === 0 ? '-' : `${round(p / k, 2)}×`;
  /** @type {[string, (s: AgentSummary) => number | null][]} */
  const figures = [
    ['pods Ready', (s) => s.ready],
    ['apply → all Ready (s)', (s) => s.allReadyS],
    ['pods Ready per second', (s) => s.podsReadyPerSecond],
    ['create → Ready p50 (s)', (s) => s.createToReadyP50S],
    ['create → Ready p99 (s)', (s) => s.createToReadyP99S],
    ['bound → Ready p50 (s)', (s) => s.boundToReadyP50S],
    ['bound → Ready p99 (s)', (s) => s.boundToReadyP99S],
    ['agent API writes per pod', (s) => s.apiWritesPerPod],
    ['all API writes per pod', (s) => s.allApiWritesPerPod],
    ['agent CPU in the window (s)', (s) => s.agentCpuS],
    ['agent peak RSS (MB)', (s) => s.agentPeakRssMB],
    ['kube-apiserver CPU (s)', (s) => s.apiserverCpuS],
    ['etcd CPU (s)', (s) => s.etcdCpuS],
    ['API server time per write (ms)', (s) => s.apiWriteMs],
    ['longest Lease gap (s)', (s) => s.maxLeaseGapS],
    ['agent writes/s, all Ready', (s) => s.steadyAgentWritesPerS],
    ['machine load average (peak)', (s) => s.peakLoadAverage],
  ];
  const probelets = lean ? [probelet, lean] : [probelet];
  const head = ['', 'kwok', ...probelets.flatMap((p) => (p.leanWrites ? ['probelet lean', 'lean ÷ kwok'] : ['probelet', 'probelet ÷ kwok']))];
  const rows = [head, ...figures.map(([label, f]) => [label, String(f(kwok) ?? '-'), ...probelets.flatMap((p) => [String(f(p) ?? '-'), ratio(f(p), f(kwok))])])];
  const keys = [...new Set([kwok, ...probelets].flatMap((a) => Object.keys(a.writes)))];
  const writeRows = [
    ['writes in the window', 'kwok', ...probelets.map((p) => (p.leanWrites ? 'probelet lean' : 'probelet'))],
    ...keys.map((k) => [k, String(kwok.writes[k] ?? 0), ...probelets.map((p) => String(p.writes[k] ?? 0))]),
  ];
  const goals = probelets.flatMap((p) => {
    const name = p.leanWrites ? 'probelet --lean-writes' : 'probelet';
    const rate = p.podsReadyPerSecond >= kwok.podsReadyPerSecond;
    const writes = p.apiWritesPerPod <= 2 * kwok.apiWritesPerPod;
    return [
      `goal: ${name}'s pods Ready per second ≥ kwok's: ${p.podsReadyPerSecond} vs ${kwok.podsReadyPerSecond} (${rate ? 'met' : 'NOT met'})`,
      `goal: ${name}'s API writes per pod ≤ 2 × kwok's: ${p.apiWritesPerPod} vs ${kwok.apiWritesPerPod} (${writes ? 'met' : 'NOT met'})`,
    ];
  });
  return [
    `fleet: ${kwok.nodes} nodes × ${kwok.pods / kwok.nodes} pods each side; ${kwok.version}; ${probelets.map((p) => p.version).join('; ')}`,
    ...table(rows),
    '',
    ...table(writeRows),
    '',
    ...goals,
    '(agent writes: pods/status, core events, Leases, nodes, nodes/status; measured on this machine now; compare runs from one invocation only)',
  ].join('\n');
}

/**
 * One step of `--scale`: a fresh fleet's memory and CPU once every pod is Ready.
 * @param {AgentWindow} w
 */
export function scaleStep(w) {
  const probes = (w.ready * 2 * w.holdS) / PROBE_PERIOD_S;
  return {
    scenario: 'fleet-scale',
    nodes: w.nodes,
    pods: w.pods,
    ready: w.ready,
    allReadyS: round(w.allReadyS, 1),
    maxLeaseGapS: round(w.maxLeaseGapS, 1),
    agentPeakRssMB: round(w.agentPeakRssMB, 1),
    agentIdleRssMB: round(w.agentIdleRssMB, 1),
    agentSteadyRssMB: round(w.agentSteadyRssMB, 1),
    /** (steady RSS − RSS with the nodes and no pod) ÷ pods */
    rssPerPodKB: round(((w.agentSteadyRssMB - w.agentIdleRssMB) * 1024) / w.pods, 1),
    /** the agent's CPU while every pod is Ready, per probe run (2 probes a pod every period) */
    cpuPerProbeMs: round((w.holdAgentCpuS * 1000) / probes, 3),
    /** the same as % of one core per 1,000 pods */
    cpuPer1000PodsPercent: round((w.holdAgentCpuS / w.holdS / w.pods) * 1000 * 100, 2),
    apiserverCpuS: w.apiserverCpuS === undefined ? null : round(w.apiserverCpuS, 1),
    etcdCpuS: w.etcdCpuS === undefined ? null : round(w.etcdCpuS, 1),
    peakLoadAverage: round(w.peakLoadAverage, 1),
  };
}

/** @typedef {ReturnType<typeof scaleStep>} ScaleStep */

/**
 * The ratio check of `--scale`: memory per pod, memory per node (the idle RSS's growth from one
 * step to the next ÷ the nodes added) and CPU per probe at each step, and whether each stays
 * within {@link FLAT_RATIO} of the smallest step's at every larger step. A cost a unit that
 * falls as the fleet grows (fixed costs shared by more pods) is flat: the check is for growth.
 * @param {ScaleStep[]} steps
 */
export function scaleReport(steps) {
  const perNode = steps.slice(1).map((s, i) => {
    const prev = steps[i];
    return prev ? round(((s.agentIdleRssMB - prev.agentIdleRssMB) * 1024) / (s.nodes - prev.nodes), 1) : NaN;
  });
  /** @param {number[]} xs */
  const spread = (xs) => (xs.length < 2 || xs.some((x) => !Number.isFinite(x) || x <= 0) ? NaN : round(Math.max(...xs.slice(1)) / (xs[0] ?? NaN), 2));
  const checks = [
    ['memory per pod (KB)', steps.map((s) => s.rssPerPodKB)],
    ['memory per node (KB, from the step before)', perNode],
    ['CPU per probe (ms)', steps.map((s) => s.cpuPerProbeMs)],
  ].map(([label, xs]) => ({ label: /** @type {string} */ (label), values: /** @type {number[]} */ (xs), ratio: spread(/** @type {number[]} */ (xs)) }));
  const rows = [
    ['', ...steps.map((s) => `${s.pods} pods / ${s.nodes} nodes`)],
    ['all Ready after (s)', ...steps.map((s) => `${s.ready === s.pods ? '' : `${s.ready} Ready, `}${s.allReadyS}`)],
    ['longest Lease gap (s)', ...steps.map((s) => String(s.maxLeaseGapS))],
    ['peak RSS (MB)', ...steps.map((s) => String(s.agentPeakRssMB))],
    ['RSS idle / all Ready (MB)', ...steps.map((s) => `${s.agentIdleRssMB} / ${s.agentSteadyRssMB}`)],
    ['memory per pod (KB)', ...steps.map((s) => String(s.rssPerPodKB))],
    ['memory per node (KB)', '-', ...perNode.map(String)],
    ['CPU per probe (ms)', ...steps.map((s) => String(s.cpuPerProbeMs))],
    ['CPU, % of a core per 1,000 pods', ...steps.map((s) => String(s.cpuPer1000PodsPercent))],
    ['kube-apiserver / etcd CPU to all Ready (s)', ...steps.map((s) => `${s.apiserverCpuS ?? '-'} / ${s.etcdCpuS ?? '-'}`)],
    ['machine load average (peak)', ...steps.map((s) => String(s.peakLoadAverage))],
  ];
  return {
    text: [
      ...table(rows),
      '',
      ...checks.map((c) => `flat: ${c.label}: the larger steps' most ÷ the smallest step's ${c.ratio} (${Number.isFinite(c.ratio) && c.ratio <= FLAT_RATIO ? 'met' : 'NOT met'}, ≤ ${FLAT_RATIO})`),
      `all Ready with every Lease renewed within its 40 s: ${steps.every((s) => s.ready === s.pods && s.maxLeaseGapS <= 40) ? 'yes' : 'NO'}`,
    ].join('\n'),
    flat: checks.every((c) => Number.isFinite(c.ratio) && c.ratio <= FLAT_RATIO),
    ratios: Object.fromEntries(checks.map((c) => [c.label, c.ratio])),
  };
}
