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
 */

export const FLEET_USAGE = `usage: npm run bench -- --scenario fleet [--vs kwok] [--nodes N] [--pods M | --pods-per-node K]
       [--limit S] [--hold S] [--prefix NAME]
  probelet node --runtime simulated --nodes N under the API server of KUBECONFIG (an admin
  identity), one Deployment per node (K replicas, or M in all spread evenly), HTTP readiness and
  liveness probes every 10 s. --vs kwok: the same Deployments on N nodes of kwok (cluster/build-kwok.sh)
  first, then on probelet's, each agent's figures side by side (docs/node.md).`;

/** The default fleet: 50 nodes × 100 pods. */
export const FLEET_DEFAULTS = { nodes: 50, perNode: 100, limitS: 600, holdS: 30 };

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
  const known = ['--nodes', '--pods', '--pods-per-node', '--limit', '--hold', '--prefix', '--vs'];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] ?? '';
    const eq = arg.indexOf('=');
    const name = eq > 0 ? arg.slice(0, eq) : arg;
    if (!known.includes(name)) throw new Error(`unknown argument ${arg} (flags: ${known.join(', ')})`);
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
  const nodes = whole('--nodes', FLEET_DEFAULTS.nodes);
  if (values.has('--pods') && values.has('--pods-per-node')) throw new Error('--pods and --pods-per-node: give one of them');
  const pods = whole('--pods', 0);
  if (pods > 0 && pods % nodes !== 0) throw new Error(`--pods ${pods} is not a multiple of --nodes ${nodes}: each node gets one Deployment of the same size`);
  const perNode = pods > 0 ? pods / nodes : whole('--pods-per-node', FLEET_DEFAULTS.perNode);
  if (perNode > MAX_PODS_PER_NODE) throw new Error(`${perNode} pods per node is more than a node takes (${MAX_PODS_PER_NODE}): give more --nodes`);
  const prefix = values.get('--prefix') ?? `fleet${pid % 10000}`;
  if (!/^[a-z0-9]([-a-z0-9]{0,30}[a-z0-9])?$/.test(prefix)) throw new Error(`--prefix ${JSON.stringify(prefix)}: lower-case letters, digits and '-', at most 32`);
  const vs = values.get('--vs');
  if (vs !== undefined && vs !== 'kwok') throw new Error(`--vs wants kwok, got ${JSON.stringify(vs)}`);
  return { nodes, perNode, limitS: whole('--limit', FLEET_DEFAULTS.limitS), holdS: whole('--hold', FLEET_DEFAULTS.holdS), prefix, vs };
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

/**
 * Sums the write requests of the API server's `apiserver_request_total` (Prometheus text) by
 * `VERB [group/]resource[/subresource]` (over versions, scopes and codes): the scheduler's
 * `events.k8s.io/events` apart from the core `events` of kubelets and controllers.
 * @param {string} text
 * @returns {Map<string, number>}
 */
export function parseRequestTotals(text) {
  /** @type {Map<string, number>} */
  const totals = new Map();
  for (const line of text.split('\n')) {
    if (!line.startsWith('apiserver_request_total{')) continue;
    const close = line.lastIndexOf('}');
    /** @type {Record<string, string>} */
    const labels = {};
    for (const m of line.slice('apiserver_request_total{'.length, close).matchAll(/([a-z_]+)="([^"]*)"/g)) labels[m[1] ?? ''] = m[2] ?? '';
    const verb = labels['verb'] ?? '';
    if (!WRITE_VERBS.has(verb)) continue;
    const key = `${verb} ${labels['group'] ? `${labels['group']}/` : ''}${labels['resource'] ?? ''}${labels['subresource'] ? `/${labels['subresource']}` : ''}`;
    totals.set(key, (totals.get(key) ?? 0) + Number(line.slice(close + 1).trim()));
  }
  return totals;
}

/**
 * The writes between two `parseRequestTotals`: all of them, the agent's (AGENT_RESOURCES), and
 * each key that changed, largest first.
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
    if (d <= 0) continue;
    changed.push([key, d]);
    all += d;
    if (AGENT_RESOURCES.has(key.slice(key.indexOf(' ') + 1))) agent += d;
  }
  changed.sort((a, b) => b[1] - a[1]);
  return { all, agent, byKey: Object.fromEntries(changed) };
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
 * @property {{ all: number, agent: number, byKey: Record<string, number> }} writes  in the window
 * @property {number} agentCpuS              the agent process's CPU in the window
 * @property {number} agentPeakRssMB         its peak RSS (VmHWM) at the window's end
 * @property {number | undefined} apiserverCpuS  kube-apiserver's CPU in the window (undefined: not found)
 * @property {number | undefined} etcdCpuS
 * @property {number} maxLeaseGapS           longest gap between two renewals of one of its Leases (window and hold)
 * @property {number} steadyAgentWritesPerS  the agent's writes per second in the hold (every pod Ready)
 * @property {number} peakLoadAverage
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
    ready: w.ready,
    createToReadyP50S: round(quantile(c, 0.5) / 1000, 2),
    createToReadyP99S: round(quantile(c, 0.99) / 1000, 2),
    boundToReadyP50S: round(quantile(b, 0.5) / 1000, 2),
    boundToReadyP99S: round(quantile(b, 0.99) / 1000, 2),
    allApiWritesPerPod: round(w.writes.all / w.pods, 2),
    apiserverCpuS: w.apiserverCpuS === undefined ? null : round(w.apiserverCpuS, 2),
    etcdCpuS: w.etcdCpuS === undefined ? null : round(w.etcdCpuS, 2),
    maxLeaseGapS: round(w.maxLeaseGapS, 1),
    steadyAgentWritesPerS: round(w.steadyAgentWritesPerS, 2),
    peakLoadAverage: round(w.peakLoadAverage, 1),
    version: w.version,
    writes: w.writes.byKey,
  };
}

/** @typedef {ReturnType<typeof agentSummary>} AgentSummary */

/**
 * The side-by-side table (kwok, probelet, probelet ÷ kwok) and the issue's two goals.
 * @param {AgentSummary} kwok
 * @param {AgentSummary} probelet
 * @returns {string}
 */
export function fleetReport(kwok, probelet) {
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
    ['longest Lease gap (s)', (s) => s.maxLeaseGapS],
    ['agent writes/s, all Ready', (s) => s.steadyAgentWritesPerS],
    ['machine load average (peak)', (s) => s.peakLoadAverage],
  ];
  const rows = [['', 'kwok', 'probelet', 'probelet ÷ kwok'], ...figures.map(([label, f]) => [label, String(f(kwok) ?? '-'), String(f(probelet) ?? '-'), ratio(f(probelet), f(kwok))])];
  const widths = [0, 1, 2, 3].map((i) => Math.max(...rows.map((r) => (r[i] ?? '').length)));
  const line = (/** @type {string[]} */ r) => r.map((cell, i) => (i === 0 ? cell.padEnd(widths[0] ?? 0) : cell.padStart(widths[i] ?? 0))).join('  ');
  const keys = [...new Set([...Object.keys(kwok.writes), ...Object.keys(probelet.writes)])];
  const writeRows = [['writes in the window', 'kwok', 'probelet'], ...keys.map((k) => [k, String(kwok.writes[k] ?? 0), String(probelet.writes[k] ?? 0)])];
  const ww = [0, 1, 2].map((i) => Math.max(...writeRows.map((r) => (r[i] ?? '').length)));
  const writeLine = (/** @type {string[]} */ r) => r.map((cell, i) => (i === 0 ? cell.padEnd(ww[0] ?? 0) : cell.padStart(ww[i] ?? 0))).join('  ');
  const rate = probelet.podsReadyPerSecond >= kwok.podsReadyPerSecond;
  const writes = probelet.apiWritesPerPod <= 2 * kwok.apiWritesPerPod;
  return [
    `fleet: ${kwok.nodes} nodes × ${kwok.pods / kwok.nodes} pods each side; ${kwok.version}; ${probelet.version}`,
    line(rows[0] ?? []),
    ...rows.slice(1).map(line),
    '',
    ...writeRows.map(writeLine),
    '',
    `goal: probelet's pods Ready per second ≥ kwok's: ${probelet.podsReadyPerSecond} vs ${kwok.podsReadyPerSecond} (${rate ? 'met' : 'NOT met'})`,
    `goal: probelet's API writes per pod ≤ 2 × kwok's: ${probelet.apiWritesPerPod} vs ${kwok.apiWritesPerPod} (${writes ? 'met' : 'NOT met'})`,
    '(agent writes: pods/status, core events, Leases, nodes, nodes/status; measured on this machine now; compare runs from one invocation only)',
  ].join('\n');
}
