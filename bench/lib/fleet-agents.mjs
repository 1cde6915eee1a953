/**
 * The two node agents of the fleet bench, started the way their users start them and stopped
 * with what they made removed:
 * - probelet: `probelet node --runtime simulated --nodes N` registers its nodes itself;
 * - kwok (cluster/build-kwok.sh): its nodes are Node objects made through the API, as kwok's
 *   documentation makes them (annotation `kwok.x-k8s.io/node: fake`, taint
 *   `kwok.x-k8s.io/node=fake:NoSchedule`), and the kwok binary run out of cluster with its
 *   default stages (`--config`), managing only the nodes of this run (its label) and renewing
 *   their Leases (`--node-lease-duration-seconds=40`, as the kubelet's).
 */
import { execFileSync, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { CoordinationV1Api, CoreV1Api } from '@kubernetes/client-node';
import { kubeConfig, kubeconfigPath, kubectl } from './fleet-cluster.mjs';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const sleep = (/** @type {number} */ ms) => new Promise((r) => setTimeout(r, ms));

/** The label that names a run's kwok nodes; kwok manages the nodes carrying it with this run's value. */
export const RUN_LABEL = 'probelet.dev/bench-run';

/**
 * Tolerations for both agents' node taints, so one Deployment template fits either fleet.
 * @type {object[]}
 */
export const FLEET_TOLERATIONS = [
  { key: 'probelet.dev/simulated', operator: 'Exists', effect: 'NoSchedule' },
  { key: 'kwok.x-k8s.io/node', operator: 'Exists', effect: 'NoSchedule' },
];

/**
 * @typedef {object} Agent
 * @property {'kwok' | 'probelet'} agent
 * @property {string} version
 * @property {number} pid         the process whose CPU and RSS are the agent's
 * @property {string[]} nodes     its nodes' names
 * @property {number} readyAt     when its last node was Ready (ms): its Kubelets' start is before
 * @property {boolean} [leanWrites]  probelet with `--lean-writes` (fewer API writes than a kubelet)
 * @property {() => string} log   what it wrote on stderr so far
 * @property {() => Promise<void>} stop  stops it (TERM) and removes its nodes and Leases
 */

/**
 * Waits for `done` (polled every 500 ms) while the process lives, up to `limitMs`.
 * @param {string} what
 * @param {() => boolean} done
 * @param {import('node:child_process').ChildProcess} child
 * @param {() => string} log
 * @param {number} limitMs
 */
async function waitFor(what, done, child, log, limitMs) {
  const deadline = Date.now() + limitMs;
  while (!done()) {
    if (child.exitCode !== null || child.signalCode !== null) throw new Error(`${what}: the agent exited (${child.exitCode ?? child.signalCode}):\n${log().slice(-2000)}`);
    if (Date.now() > deadline) throw new Error(`${what}: not within ${limitMs / 1000} s:\n${log().slice(-2000)}`);
    await sleep(500);
  }
}

/**
 * @param {string} command
 * @param {string[]} args
 */
function startProcess(command, args) {
  const child = spawn(command, args, { stdio: ['ignore', 'ignore', 'pipe'] });
  // Only the tail is kept (a 5,000-pod run logs for minutes); registrations are counted by line.
  let text = '';
  let partial = '';
  let count = 0;
  child.stderr?.on('data', (d) => {
    const chunk = d.toString();
    text = (text + chunk).slice(-200_000);
    const lines = (partial + chunk).split('\n');
    partial = lines.pop() ?? '';
    count += lines.filter((l) => l.includes(' registered with ')).length;
  });
  const exited = new Promise((resolve) => child.once('exit', resolve));
  return { child, exited, log: () => text, registered: () => count };
}

/**
 * Removes the nodes and their Leases, a few hundred names to a kubectl call (one call per node
 * took minutes for a 500-node fleet).
 * @param {string[]} nodes
 */
function removeNodes(nodes) {
  for (let i = 0; i < nodes.length; i += 200) {
    const names = nodes.slice(i, i + 200);
    try { kubectl(['delete', 'node', ...names, '--ignore-not-found', '--wait=false']); } catch { /* best effort */ }
    try { kubectl(['delete', 'lease', '-n', 'kube-node-lease', ...names, '--ignore-not-found', '--wait=false']); } catch { /* best effort */ }
  }
}

/**
 * `probelet node --runtime simulated --nodes N --name NAME [--lean-writes]`: nodes NAME-0 …
 * NAME-(N-1), once all registered.
 * @param {string} name
 * @param {number} count
 * @param {number} limitMs
 * @param {{ leanWrites?: boolean }} [options]
 * @returns {Promise<Agent & { writes: () => { statusWrites: number, eventWrites: number, leaseRenewals: number, longestLeaseGapS: number } | undefined }>}
 */
export async function startProbelet(name, count, limitMs, options = {}) {
  const lean = options.leanWrites === true;
  const p = startProcess(process.execPath, [
    `${ROOT}bin/probelet.js`, 'node', '--kubeconfig', kubeconfigPath(), '--runtime', 'simulated', '--nodes', String(count), '--name', name, '--listen', '127.0.0.1:0',
    ...(lean ? ['--lean-writes'] : []),
  ]);
  const nodes = Array.from({ length: count }, (_, i) => `${name}-${i}`);
  const stop = async () => {
    p.child.kill('SIGTERM');
    await p.exited;
    removeNodes(nodes);
  };
  try {
    await waitFor(`probelet registering ${count} nodes`, () => p.registered() >= count, p.child, p.log, limitMs);
  } catch (err) {
    await stop();
    throw err;
  }
  const pkg = JSON.parse(readFileSync(`${ROOT}package.json`, 'utf8'));
  return {
    agent: 'probelet',
    version: `probelet ${pkg.version}${lean ? ' --lean-writes' : ''}`,
    pid: p.child.pid ?? 0,
    nodes,
    readyAt: Date.now(),
    leanWrites: lean,
    log: p.log,
    stop,
    // Its own count of the whole run's writes, in its last log line (src/cli/node.ts).
    writes: () => {
      const m = /stopped: (\d+) pod status writes, (\d+) event writes, (\d+) Lease renewals \(longest gap between two of a node: ([\d.]+) s\)/.exec(p.log());
      return m ? { statusWrites: Number(m[1]), eventWrites: Number(m[2]), leaseRenewals: Number(m[3]), longestLeaseGapS: Number(m[4]) } : undefined;
    },
  };
}

/** Where cluster/build-kwok.sh put kwok and its default stages, or undefined when it is not built. */
export function kwokBuild() {
  const dir = execFileSync('bash', [`${ROOT}cluster/build-kwok.sh`, '--print-dir'], { encoding: 'utf8' }).trim();
  return dir ? { kwok: `${dir}/kwok`, stages: `${dir}/kwok-stages.yaml` } : undefined;
}

/**
 * A Node as kwok's documentation creates one ("Manage Nodes and Pods"), labelled with the run.
 * @param {string} name
 * @param {string} run
 */
function kwokNode(name, run) {
  const resources = { cpu: '32', memory: '256Gi', pods: '110' };
  return {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: {
      name,
      annotations: { 'node.alpha.kubernetes.io/ttl': '0', 'kwok.x-k8s.io/node': 'fake' },
      labels: {
        'beta.kubernetes.io/arch': 'amd64', 'beta.kubernetes.io/os': 'linux', 'kubernetes.io/arch': 'amd64',
        'kubernetes.io/hostname': name, 'kubernetes.io/os': 'linux', 'kubernetes.io/role': 'agent',
        'node-role.kubernetes.io/agent': '', type: 'kwok', [RUN_LABEL]: run,
      },
    },
    spec: { taints: [{ key: 'kwok.x-k8s.io/node', value: 'fake', effect: 'NoSchedule' }] },
    status: { allocatable: resources, capacity: resources },
  };
}

/**
 * kwok managing `count` nodes NAME-0 … it made Ready, each with its Lease held.
 * @param {string} name
 * @param {number} count
 * @param {number} limitMs
 * @returns {Promise<Agent>}
 */
export async function startKwok(name, count, limitMs) {
  const build = kwokBuild();
  if (!build) throw new Error('kwok is not built: run `bash cluster/build-kwok.sh` (or `npm run cluster:build`)');
  const nodes = Array.from({ length: count }, (_, i) => `${name}-${i}`);
  kubectl(['apply', '-f', '-'], JSON.stringify({ apiVersion: 'v1', kind: 'List', items: nodes.map((n) => kwokNode(n, name)) }));
  // As kwok's "out of cluster" page, with a pod CIDR wide enough for thousands of pods (its
  // default /24 holds 254) and addresses away from the cluster's service range (10.0.0.0/24).
  const p = startProcess(build.kwok, [
    `--kubeconfig=${kubeconfigPath()}`, `--config=${build.stages}`,
    '--manage-all-nodes=false', '--manage-nodes-with-annotation-selector=kwok.x-k8s.io/node=fake',
    `--manage-nodes-with-label-selector=${RUN_LABEL}=${name}`, '--manage-single-node=',
    '--cidr=10.200.0.0/16', '--node-ip=10.201.0.1', '--node-lease-duration-seconds=40',
  ]);
  const stop = async () => {
    p.child.kill('SIGTERM');
    await p.exited;
    removeNodes(nodes);
  };
  const core = kubeConfig().makeApiClient(CoreV1Api);
  const coordination = kubeConfig().makeApiClient(CoordinationV1Api);
  let ready = 0;
  let leases = 0;
  const poll = setInterval(() => {
    core.listNode({ labelSelector: `${RUN_LABEL}=${name}` }).then((list) => {
      ready = list.items.filter((n) => n.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True')).length;
    }, () => undefined);
    coordination.listNamespacedLease({ namespace: 'kube-node-lease' }).then((list) => {
      leases = list.items.filter((l) => nodes.includes(l.metadata?.name ?? '') && l.spec?.holderIdentity).length;
    }, () => undefined);
  }, 1000);
  try {
    await waitFor(`kwok making ${count} nodes Ready`, () => ready >= count && leases >= count, p.child, p.log, limitMs);
  } catch (err) {
    await stop();
    throw err;
  } finally {
    clearInterval(poll);
  }
  return {
    agent: 'kwok',
    version: execFileSync(build.kwok, ['--version'], { encoding: 'utf8' }).trim(),
    pid: p.child.pid ?? 0,
    nodes,
    readyAt: Date.now(),
    log: p.log,
    stop,
  };
}
