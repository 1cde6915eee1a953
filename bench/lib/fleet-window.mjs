/**
 * One agent's measured window of the fleet bench: one Deployment per node of the agent, pinned
 * to it (node selector `kubernetes.io/hostname`, tolerations for both agents' taints), each pod
 * with an HTTP readiness and liveness probe (period 10 s; kwok ignores probes, probelet's
 * simulated handlers pass them). From applying the Deployments to the last pod Ready: each pod's
 * times (the bench's own watch, millisecond clock), the API server's write requests
 * (`apiserver_request_total` before and after), the CPU of the agent, kube-apiserver and etcd;
 * then `holdS` seconds of a steady fleet (Lease gaps, writes per second, the agent's CPU and its
 * RSS sampled every second). Removes its namespace and pods; the caller stops the agent.
 *
 * The Deployments are applied a probe period after the agent's last node was Ready: a kubelet
 * that started less than a period ago jitters each new worker's first probe by up to a period
 * (upstream `worker.run`: "the kubelet has started recently"), which a node of a running
 * cluster does not; kwok's nodes wait the same.
 */
import { loadavg } from 'node:os';
import { CoreV1Api } from '@kubernetes/client-node';
import { controlPlanePids, follow, kubeConfig, kubectl, kubectlAsync, procSample, requestTotals } from './fleet-cluster.mjs';
import { FLEET_TOLERATIONS } from './fleet-agents.mjs';
import { PROBE_PERIOD_S, writesBetween } from './fleet-report.mjs';

const sleep = (/** @type {number} */ ms) => new Promise((r) => setTimeout(r, ms));

/**
 * @param {string} node
 * @param {string} namespace
 * @param {number} replicas
 */
export function fleetDeployment(node, namespace, replicas) {
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: node, namespace },
    spec: {
      replicas,
      selector: { matchLabels: { app: node } },
      template: {
        metadata: { labels: { app: node } },
        spec: {
          nodeSelector: { 'kubernetes.io/hostname': node },
          tolerations: FLEET_TOLERATIONS,
          automountServiceAccountToken: false,
          containers: [{
            name: 'app',
            image: 'probelet.local/busybox:test',
            readinessProbe: { httpGet: { path: '/ready', port: 8080 }, periodSeconds: PROBE_PERIOD_S },
            livenessProbe: { httpGet: { path: '/healthz', port: 8080 }, periodSeconds: PROBE_PERIOD_S },
          }],
        },
      },
    },
  };
}

/**
 * The agent's RSS once its start-up garbage is gone: V8 gives the pages of a start (modules
 * loaded, nodes registered) back only when its memory reducer runs, some 30-45 s after the
 * allocations quiet down — a 25-node fleet measured 211 MB 10 s after its start, 174 MB from
 * 50 s on. Measured too early, the idle figure held ~37 MB that the first pods then reused, and
 * 1,000 pods looked like 14 KB a pod where 5,000 took 49. So: the smallest of a sample a second
 * from {@link IDLE_SETTLE_S} after the last node was Ready, over {@link IDLE_SAMPLE_S} seconds (a lone
 * or `--scale` run; side by side with kwok the windows start without the wait).
 * @param {number} pid
 * @param {number} readyAt
 */
async function settledRssMB(pid, readyAt) {
  await sleep(Math.max(0, readyAt + IDLE_SETTLE_S * 1000 - Date.now()));
  let least = Infinity;
  for (let i = 0; i < IDLE_SAMPLE_S; i++) {
    least = Math.min(least, procSample(pid)?.rssMB ?? Infinity);
    await sleep(1000);
  }
  return Number.isFinite(least) ? least : NaN;
}

/** When the idle RSS is sampled after the agent's last node was Ready, and for how long (s). */
const IDLE_SETTLE_S = 50;
const IDLE_SAMPLE_S = 10;

/**
 * @param {import('./fleet-agents.mjs').Agent} agent
 * @param {{ perNode: number, limitS: number, holdS: number, vs?: 'kwok' | undefined }} o  with --vs kwok the idle RSS is not waited for (only the per-pod figures of a lone or --scale run use it)
 * @param {string} namespace
 * @param {(line: string) => void} log
 * @returns {Promise<import('./fleet-report.mjs').AgentWindow>}
 */
export async function measureWindow(agent, o, namespace, log) {
  const pods = agent.nodes.length * o.perNode;
  kubectl(['create', 'namespace', namespace]);
  /** @type {Map<string, number>} */ const renewals = new Map();
  let maxLeaseGapS = 0;
  const stopLeases = follow('/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases', (_type, l) => {
    if (!agent.nodes.includes(l.metadata.name) || !l.spec?.renewTime) return;
    const t = Date.parse(l.spec.renewTime);
    const prev = renewals.get(l.metadata.name);
    if (prev !== undefined && t > prev) maxLeaseGapS = Math.max(maxLeaseGapS, (t - prev) / 1000);
    renewals.set(l.metadata.name, t);
  });
  /** Each pod (uid): first seen, first seen bound, first seen Ready; Ready now. */
  /** @type {Map<string, { seen: number, bound?: number, ready?: number, readyNow: boolean }>} */
  const seen = new Map();
  const stopPods = follow(`/api/v1/namespaces/${namespace}/pods`, (type, p) => {
    const now = Date.now();
    const uid = p.metadata.uid;
    const s = seen.get(uid) ?? { seen: now, readyNow: false };
    seen.set(uid, s);
    if (p.spec?.nodeName) s.bound ??= now;
    s.readyNow = type !== 'DELETED' && (p.status?.conditions ?? []).some((/** @type {any} */ c) => c.type === 'Ready' && c.status === 'True');
    if (s.readyNow) s.ready ??= now;
  });
  const readyCount = () => [...seen.values()].filter((s) => s.readyNow).length;
  const cp = controlPlanePids();
  const cpu = () => ({ agent: procSample(agent.pid)?.cpuS ?? NaN, apiserver: cp.apiserver && procSample(cp.apiserver)?.cpuS, etcd: cp.etcd && procSample(cp.etcd)?.cpuS });
  try {
    await sleep(Math.max(1000, agent.readyAt + PROBE_PERIOD_S * 1000 - Date.now())); // the watches connected; no start-up jitter
    const idleRssMB = o.vs === undefined ? await settledRssMB(agent.pid, agent.readyAt) : procSample(agent.pid)?.rssMB ?? NaN;
    // The metrics are read outside the CPU window (a scrape is API server work of its own).
    const before = await requestTotals();
    const cpuBefore = cpu();
    const applied = Date.now();
    await kubectlAsync(['apply', '-f', '-'], JSON.stringify({ apiVersion: 'v1', kind: 'List', items: agent.nodes.map((n) => fleetDeployment(n, namespace, o.perNode)) }));
    const deadline = applied + o.limitS * 1000;
    let peakLoad = 0;
    let lastLog = Date.now();
    while (readyCount() < pods && Date.now() < deadline) {
      peakLoad = Math.max(peakLoad, loadavg()[0] ?? 0);
      if (Date.now() - lastLog > 30_000) {
        log(`${agent.agent}: ${readyCount()} of ${pods} pods Ready after ${Math.round((Date.now() - applied) / 1000)} s`);
        lastLog = Date.now();
      }
      await sleep(200);
    }
    const cpuAfter = cpu();
    const after = await requestTotals();
    const ready = readyCount();
    const lastReady = Math.max(applied, ...[...seen.values()].map((s) => s.ready ?? 0));
    log(`${agent.agent}: ${ready} of ${pods} pods Ready ${((lastReady - applied) / 1000).toFixed(1)} s after applying; holding ${o.holdS} s`);
    const holdStart = Date.now();
    const holdCpuBefore = procSample(agent.pid)?.cpuS ?? NaN;
    /** @type {number[]} */ const rss = [];
    while (Date.now() - holdStart < o.holdS * 1000) {
      peakLoad = Math.max(peakLoad, loadavg()[0] ?? 0);
      await sleep(1000);
      rss.push(procSample(agent.pid)?.rssMB ?? NaN);
    }
    const holdCpuS = (procSample(agent.pid)?.cpuS ?? NaN) - holdCpuBefore;
    const held = await requestTotals();
    const holdS = (Date.now() - holdStart) / 1000;
    rss.sort((a, b) => a - b);
    const readyTimes = [...seen.values()].filter((s) => s.ready !== undefined);
    const delta = (/** @type {number | undefined} */ a, /** @type {number | undefined} */ b) => (typeof a === 'number' && typeof b === 'number' ? a - b : undefined);
    return {
      agent: agent.agent,
      version: agent.version,
      nodes: agent.nodes.length,
      pods,
      ready,
      allReadyS: (lastReady - applied) / 1000,
      createToReadyMs: readyTimes.map((s) => (s.ready ?? 0) - s.seen),
      boundToReadyMs: readyTimes.map((s) => (s.ready ?? 0) - (s.bound ?? s.seen)),
      writes: writesBetween(before, after),
      agentCpuS: cpuAfter.agent - cpuBefore.agent,
      agentPeakRssMB: procSample(agent.pid)?.peakRssMB ?? NaN,
      apiserverCpuS: delta(cpuAfter.apiserver, cpuBefore.apiserver),
      etcdCpuS: delta(cpuAfter.etcd, cpuBefore.etcd),
      maxLeaseGapS,
      steadyAgentWritesPerS: writesBetween(after, held).agent / holdS,
      peakLoadAverage: peakLoad,
      leanWrites: agent.leanWrites === true,
      agentIdleRssMB: idleRssMB,
      agentSteadyRssMB: rss[Math.floor(rss.length / 2)] ?? NaN,
      holdS,
      holdAgentCpuS: holdCpuS,
    };
  } finally {
    stopLeases();
    stopPods();
  }
}

/** Deployments whose pods are deleted at once while the namespace goes (the API server's calls in flight). */
const REMOVAL_CONCURRENCY = 4;

/**
 * Removes a window's namespace once its agent is stopped: its pods at once (nothing confirms
 * their deletion without an agent: the pod GC would remove them at the controller manager's
 * 20 requests/s, minutes for 5,000), then the namespace, waited for up to `waitS` so the next
 * window does not carry this one's deletions. The pods go a Deployment at a time (`app=<node>`,
 * a few calls at once): one call deleting 5,000 pods outlived the API server's 60 s request
 * timeout (504), and kubectl's one by one then took minutes.
 * @param {string} namespace
 * @param {string[]} apps  the window's Deployments (its nodes' names)
 * @param {number} waitS
 * @param {(line: string) => void} log
 */
export async function removeWindow(namespace, apps, waitS, log) {
  kubectl(['delete', 'namespace', namespace, '--wait=false', '--ignore-not-found']);
  const core = kubeConfig().makeApiClient(CoreV1Api);
  const queue = [...apps];
  /** @type {string[]} */ const failed = [];
  await Promise.all(Array.from({ length: REMOVAL_CONCURRENCY }, async () => {
    for (let app = queue.shift(); app !== undefined; app = queue.shift()) {
      await core.deleteCollectionNamespacedPod({ namespace, labelSelector: `app=${app}`, gracePeriodSeconds: 0 }).catch((err) => {
        failed.push(`${app}: ${err instanceof Error ? err.message.split('\n')[0] : String(err)}`);
      });
    }
  }));
  if (failed.length > 0) {
    // A loaded API server may drop some calls: kubectl's one by one for what is left.
    log(`removing the pods of ${namespace}: ${failed.length} of ${apps.length} Deployments' calls failed (${failed[0]}); the rest one by one`);
    await kubectlAsync(['delete', 'pods', '-n', namespace, '--all', '--grace-period=0', '--force', '--wait=false']).catch((e) => log(`${e instanceof Error ? e.message : String(e)} (the pod GC will)`));
  }
  const deadline = Date.now() + waitS * 1000;
  while (Date.now() < deadline) {
    if (kubectl(['get', 'namespace', namespace, '--ignore-not-found', '-o', 'name']).trim() === '') return;
    await sleep(1000);
  }
  log(`namespace ${namespace} still there after ${waitS} s`);
}
