#!/usr/bin/env node
/**
 * `npm run bench -- --scenario fleet [--nodes N] [--pods-per-node M] [--limit S] [--hold S]` (default 50 ×
 * 100 = 5,000 pods, limit 600 s): `probelet node --runtime simulated --nodes N` under the real
 * API server of `npm run cluster:up` (KUBECONFIG from `eval "$(npm run -s cluster:env)"`, an
 * admin identity: a fleet writes every one of its nodes). One Deployment of M replicas per node,
 * pinned to it, each pod with an HTTP readiness and liveness probe (period 10 s) on the
 * simulated handlers. Measures: time from applying the Deployments to the last pod Ready, the
 * longest time from a pod's scheduling to its Ready, the fleet process's CPU and peak RSS, the
 * longest gap between two renewals of any of its Leases, and its API writes (pod status,
 * events: its own count, printed when it stops) beside what a kubelet would make for the same
 * pods. Stops by itself (all Ready and `--hold` seconds more, default 30, or the limit), removes
 * what it created. The fleet's writes include those of its stop (each pod's final status).
 */
import { execFileSync, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { cpus, loadavg, totalmem } from 'node:os';
import { fileURLToPath } from 'node:url';
import { CoreV1Api, KubeConfig, Watch } from '@kubernetes/client-node';

const root = fileURLToPath(new URL('..', import.meta.url));
const args = process.argv.slice(2);
/** @param {string} name @param {number} fallback */
const flag = (name, fallback) => {
  const at = args.indexOf(name);
  if (at < 0) return fallback;
  const v = Number(args[at + 1]);
  if (!Number.isInteger(v) || v <= 0) throw new Error(`${name}: expected a positive integer, got ${args[at + 1]}`);
  return v;
};
const NODES = flag('--nodes', 50);
const PER_NODE = flag('--pods-per-node', 100);
const LIMIT_S = flag('--limit', 600);
/** Seconds to keep watching the Leases once every pod is Ready (a steady fleet). */
const HOLD_S = flag('--hold', 30);
/** `--prefix NAME`: the nodes' and namespace's prefix, so that runs by several people on one cluster stay apart. */
const prefixAt = args.indexOf('--prefix');
const OWNER = prefixAt >= 0 ? args[prefixAt + 1] ?? '' : `fleet${process.pid % 10000}`;
if (!/^[a-z0-9]([-a-z0-9]{0,30}[a-z0-9])?$/.test(OWNER)) throw new Error(`--prefix ${JSON.stringify(OWNER)}: lower-case letters, digits and '-', at most 32`);
const PREFIX = OWNER;
const NS = `probelet-${OWNER}`;
if (!process.env.KUBECONFIG) {
  process.stderr.write('bench fleet: no KUBECONFIG: run `npm run cluster:up`, then eval "$(npm run -s cluster:env)"\n');
  process.exit(2);
}

/** @param {string[]} a */
const kubectl = (a, input) => execFileSync('kubectl', a, { encoding: 'utf8', maxBuffer: 256 * 1024 * 1024, ...(input ? { input } : {}) });
const kubeconfig = new KubeConfig();
kubeconfig.loadFromFile(process.env.KUBECONFIG.split(':')[0]);

/**
 * Follows a collection with a watch (client-node's; no list of 5,000 pods every 2 s, which
 * loaded the machine it measures): `onEvent` gets each object as the API serializes it; a watch
 * the server ends resumes from the last version seen. Returns the stop.
 * @param {string} path
 * @param {(type: string, object: any) => void} onEvent
 */
function follow(path, onEvent) {
  let stopped = false;
  /** @type {AbortController | undefined} */ let current;
  /** @type {string | undefined} */ let resourceVersion;
  const start = () => {
    if (stopped) return;
    new Watch(kubeconfig)
      .watch(path, { allowWatchBookmarks: true, ...(resourceVersion ? { resourceVersion } : {}) }, (type, object) => {
        if (object?.metadata?.resourceVersion) resourceVersion = object.metadata.resourceVersion;
        if (type === 'ERROR') resourceVersion = undefined;
        else if (type !== 'BOOKMARK') onEvent(type, object);
      }, () => setTimeout(start, 500))
      .then((c) => (stopped ? c.abort() : (current = c)), () => setTimeout(start, 500));
  };
  start();
  return () => {
    stopped = true;
    current?.abort();
  };
}

const TICKS = 100;
/** @param {number} pid */
function procSample(pid) {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const cpu = (Number(f[11]) + Number(f[12])) / TICKS;
    const hwm = /VmHWM:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return { cpuS: cpu, peakRssMB: hwm ? Number(hwm[1]) / 1024 : 0 };
  } catch {
    return undefined;
  }
}

const log = (/** @type {string} */ line) => process.stderr.write(`bench fleet: ${line}\n`);
const fleet = spawn(process.execPath, [`${root}bin/probelet.js`, 'node', '--kubeconfig', process.env.KUBECONFIG.split(':')[0], '--runtime', 'simulated', '--nodes', String(NODES), '--name', PREFIX, '--listen', '127.0.0.1:0'], { stdio: ['ignore', 'ignore', 'pipe'] });
let fleetLog = '';
fleet.stderr.on('data', (d) => (fleetLog += d.toString()));
const fleetExit = new Promise((resolve) => fleet.once('exit', resolve));
const started = Date.now();
const deadline = started + LIMIT_S * 1000;
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const names = Array.from({ length: NODES }, (_, i) => `${PREFIX}-${i}`);
let result;
try {
  while ((fleetLog.match(/ registered with /g) ?? []).length < NODES) {
    if (Date.now() > deadline || fleet.exitCode !== null) throw new Error(`the fleet did not register its ${NODES} nodes:\n${fleetLog.slice(-2000)}`);
    await sleep(500);
  }
  const registeredS = (Date.now() - started) / 1000;
  log(`${NODES} nodes registered in ${registeredS.toFixed(1)} s`);
  kubectl(['create', 'namespace', NS]);
  const docs = names.map((node) => ({
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: node, namespace: NS },
    spec: {
      replicas: PER_NODE,
      selector: { matchLabels: { app: node } },
      template: {
        metadata: { labels: { app: node } },
        spec: {
          nodeSelector: { 'kubernetes.io/hostname': node },
          tolerations: [{ key: 'probelet.dev/simulated', operator: 'Exists', effect: 'NoSchedule' }],
          automountServiceAccountToken: false,
          containers: [{
            name: 'app',
            image: 'probelet.local/busybox:test',
            readinessProbe: { httpGet: { path: '/ready', port: 8080 }, periodSeconds: 10 },
            livenessProbe: { httpGet: { path: '/healthz', port: 8080 }, periodSeconds: 10 },
          }],
        },
      },
    },
  }));
  /** @type {Map<string, number>} */ const renewals = new Map();
  let maxLeaseGapS = 0;
  const stopLeases = follow('/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases', (_type, l) => {
    if (!names.includes(l.metadata.name) || !l.spec?.renewTime) return;
    const t = Date.parse(l.spec.renewTime);
    const prev = renewals.get(l.metadata.name);
    if (prev !== undefined && t > prev) maxLeaseGapS = Math.max(maxLeaseGapS, (t - prev) / 1000);
    renewals.set(l.metadata.name, t);
  });
  /** Ready pods: uid → [Ready since, scheduled since]. */
  /** @type {Map<string, [number, number | undefined]>} */ const readyPods = new Map();
  const stopPods = follow(`/api/v1/namespaces/${NS}/pods`, (type, p) => {
    const c = p.status?.conditions ?? [];
    const r = c.find((/** @type {any} */ x) => x.type === 'Ready' && x.status === 'True');
    const s = c.find((/** @type {any} */ x) => x.type === 'PodScheduled' && x.status === 'True');
    if (type === 'DELETED' || !r) readyPods.delete(p.metadata.uid);
    else readyPods.set(p.metadata.uid, [Date.parse(r.lastTransitionTime), s ? Date.parse(s.lastTransitionTime) : undefined]);
  });
  const applied = Date.now();
  kubectl(['apply', '-f', '-'], JSON.stringify({ apiVersion: 'v1', kind: 'List', items: docs }));
  let lastReadyAt = 0;
  let maxScheduledToReadyS = 0;
  let ready = 0;
  /** The machine's 1-minute load average, highest seen while the pods started. */
  let peakLoad = 0;
  /** @type {number | undefined} */ let holdUntil;
  for (;;) {
    peakLoad = Math.max(peakLoad, loadavg()[0] ?? 0);
    ready = readyPods.size;
    if (Date.now() > deadline) break;
    if (ready === NODES * PER_NODE) {
      holdUntil ??= Date.now() + HOLD_S * 1000;
      if (Date.now() > holdUntil) break;
    }
    await sleep(1000);
  }
  stopLeases();
  stopPods();
  for (const [at, scheduled] of readyPods.values()) {
    lastReadyAt = Math.max(lastReadyAt, at);
    if (scheduled !== undefined) maxScheduledToReadyS = Math.max(maxScheduledToReadyS, (at - scheduled) / 1000);
  }
  const sample = procSample(fleet.pid ?? 0);
  const elapsedS = (Date.now() - started) / 1000;
  result = {
    date: new Date().toISOString(),
    machine: `${cpus().length} × ${cpus()[0]?.model ?? '?'}, ${(totalmem() / 2 ** 30).toFixed(1)} GiB`,
    nodes: NODES,
    pods: NODES * PER_NODE,
    ready,
    applyToLastReadyS: lastReadyAt > 0 ? (lastReadyAt - applied) / 1000 : undefined,
    maxScheduledToReadyS,
    fleetCpuS: sample?.cpuS,
    fleetCpuPct: sample ? (100 * sample.cpuS) / elapsedS : undefined,
    fleetPeakRssMB: sample?.peakRssMB,
    maxLeaseGapS,
    peakLoadAverage: peakLoad,
    elapsedS,
  };
} finally {
  kubectl(['delete', 'namespace', NS, '--wait=false', '--ignore-not-found']);
  fleet.kill('SIGTERM');
  await fleetExit;
  for (const n of names) {
    try { kubectl(['delete', 'node', n, '--ignore-not-found']); } catch { /* best effort */ }
    try { kubectl(['delete', 'lease', '-n', 'kube-node-lease', n, '--ignore-not-found']); } catch { /* best effort */ }
  }
  // The pods' nodes are gone, so nothing confirms their deletion: without this the pod GC removes
  // them at the controller manager's 20 requests/s (minutes for 5,000), the namespace Terminating meanwhile.
  await kubeconfig
    .makeApiClient(CoreV1Api)
    .deleteCollectionNamespacedPod({ namespace: NS, gracePeriodSeconds: 0 })
    .catch((err) => log(`removing the pods of ${NS} left behind: ${err instanceof Error ? err.message : String(err)} (the pod GC will)`));
}
const writes = /stopped: (\d+) pod status writes, (\d+) event writes, (\d+) Lease renewals \(longest gap between two of a node: ([\d.]+) s\)/.exec(fleetLog);
const elapsed = result.elapsedS;
const pods = result.pods;
// A kubelet for the same pods (upstream rules): status patches Pending(ContainerCreating) → Running
// not Ready → Ready = 3 per pod; events Pulled, Created, Started = 3 per pod; a Lease renewal per
// node every 10 s; a node status write every 5 min (or on change).
const kubelet = { statusWrites: 3 * pods, eventWrites: 3 * pods, leaseRenewals: Math.floor(elapsed / 10) * NODES, nodeStatusWrites: Math.floor(elapsed / 300) * NODES };
const out = {
  ...result,
  // Its final writes at the stop (every pod's last status, Killing events) are included.
  // Its own count of renewals and the longest gap between two of a node, as it saw them written.
  probelet: writes ? { statusWrites: Number(writes[1]), eventWrites: Number(writes[2]), leaseRenewals: Number(writes[3]), longestLeaseGapS: Number(writes[4]) } : undefined,
  kubeletWouldMake: kubelet,
  goals: { allReadyWithin2MinOfScheduling: result.maxScheduledToReadyS <= 120 && result.ready === pods, rssUnder500MB: (result.fleetPeakRssMB ?? 0) <= 500, noMissedLeaseRenewal: result.maxLeaseGapS <= 15 },
};
process.stdout.write(`${JSON.stringify(out)}\n`);
