#!/usr/bin/env node
/**
 * `node bench/fleet-kubelet-writes.mjs [--pods N] [--hold S]`: what the REAL kubelet writes
 * to the API for each pod of the fleet bench, the yardstick of probelet's default writes
 * (docs/node.md, "What a kubelet writes per pod"). On the `cluster:up` cluster of KUBECONFIG
 * (`eval "$(npm run -s cluster:env)"`), its kubelet node (PROBELET_CLUSTER_NODE, default
 * probelet-kubelet) gets the fleet bench's Deployment (lib/fleet-window.mjs: N replicas pinned by
 * `kubernetes.io/hostname`, an HTTP readiness and liveness probe every 10 s), with two changes a
 * real container needs: the busybox test image sleeping, and the probes aimed at an HTTP server
 * this script runs on the host (`host: 127.0.0.1`), answering 200.
 *
 * Counted from applying the Deployment to every pod Ready plus `--hold` seconds:
 * - status writes: the pods' watch events after binding (only the kubelet changes a bound pod
 *   here: nothing else updates these pods), i.e. the `pods/status` patches that changed the
 *   object; a patch that changes nothing makes no event, so the kubelet's own client metrics
 *   (`rest_client_requests_total` by method, through the API server's node proxy) are shown
 *   beside them — those count all the kubelet does (Leases, node status, other pods);
 * - event writes: the namespace's core Events whose source is the kubelet: a create each, and a
 *   patch for each repeat (`count` − 1), by reason.
 * One JSON line. Removes what it created.
 */
import { createServer } from 'node:http';
import { CoreV1Api } from '@kubernetes/client-node';
import { follow, kubeConfig, kubectl, kubectlAsync } from './lib/fleet-cluster.mjs';
import { fleetDeployment } from './lib/fleet-window.mjs';

const NODE = process.env.PROBELET_CLUSTER_NODE ?? 'probelet-kubelet';
const IMAGE = 'probelet.local/busybox:test';
const sleep = (/** @type {number} */ ms) => new Promise((r) => setTimeout(r, ms));
const log = (/** @type {string} */ line) => process.stderr.write(`kubelet writes: ${line}\n`);

const args = process.argv.slice(2);
const flag = (/** @type {string} */ name, /** @type {number} */ fallback) => {
  const i = args.indexOf(name);
  if (i < 0) return fallback;
  const n = Number(args[i + 1]);
  if (!Number.isInteger(n) || n <= 0) {
    process.stderr.write(`${name} wants a positive whole number, got ${JSON.stringify(args[i + 1])}\n`);
    process.exit(2);
  }
  return n;
};
const pods = flag('--pods', 5);
const holdS = flag('--hold', 30);
const namespace = `fleet-kubelet-writes-${process.pid % 100000}`;

/** The kubelet's own client requests so far, by method (client-go's rest_client_requests_total). */
async function kubeletRequests() {
  /** @type {Record<string, number>} */
  const out = {};
  const text = await kubectlAsync(['get', '--raw', `/api/v1/nodes/${NODE}/proxy/metrics`]);
  for (const line of text.split('\n')) {
    const m = /^rest_client_requests_total\{[^}]*method="([A-Z]+)"[^}]*\} (\d+)/.exec(line);
    if (m) out[m[1] ?? ''] = (out[m[1] ?? ''] ?? 0) + Number(m[2]);
  }
  return out;
}

const server = createServer((_req, res) => res.end('ok'));
await new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(undefined)));
const address = server.address();
const port = typeof address === 'object' && address ? address.port : 0;

const deployment = fleetDeployment(NODE, namespace, pods);
const spec = deployment.spec.template.spec;
Object.assign(spec, { dnsPolicy: 'Default', terminationGracePeriodSeconds: 2 });
const container = spec.containers[0];
if (!container) throw new Error('the fleet Deployment has no container');
Object.assign(container, { image: IMAGE, command: ['sh', '-c', 'trap "exit 0" TERM; sleep 3600 & wait'] });
for (const probe of [container.readinessProbe, container.livenessProbe]) Object.assign(probe.httpGet, { host: '127.0.0.1', port });

kubectl(['create', 'namespace', namespace]);
/** Per pod: whether it is bound, Ready, and the watch events after its binding. */
/** @type {Map<string, { bound: boolean, ready: boolean, afterBinding: number }>} */
const seen = new Map();
const stopPods = follow(`/api/v1/namespaces/${namespace}/pods`, (type, p) => {
  const s = seen.get(p.metadata.uid) ?? { bound: false, ready: false, afterBinding: 0 };
  seen.set(p.metadata.uid, s);
  if (type === 'MODIFIED' && s.bound) s.afterBinding++;
  if (p.spec?.nodeName) s.bound = true;
  s.ready = type !== 'DELETED' && (p.status?.conditions ?? []).some((/** @type {any} */ c) => c.type === 'Ready' && c.status === 'True');
});
try {
  await sleep(1000);
  const before = await kubeletRequests();
  const applied = Date.now();
  await kubectlAsync(['apply', '-f', '-'], JSON.stringify(deployment));
  while ([...seen.values()].filter((s) => s.ready).length < pods) {
    if (Date.now() - applied > 180_000) throw new Error(`not all ${pods} pods Ready within 180 s`);
    await sleep(200);
  }
  const readyS = (Date.now() - applied) / 1000;
  log(`${pods} pods Ready ${readyS.toFixed(1)} s after applying; holding ${holdS} s`);
  await sleep(holdS * 1000);
  const after = await kubeletRequests();
  const events = await kubeConfig().makeApiClient(CoreV1Api).listNamespacedEvent({ namespace });
  /** @type {Record<string, { creates: number, patches: number }>} */
  const byReason = {};
  let eventWrites = 0;
  for (const e of events.items) {
    if (e.source?.component !== 'kubelet' && e.reportingComponent !== 'kubelet') continue;
    const r = (byReason[e.reason ?? ''] ??= { creates: 0, patches: 0 });
    r.creates++;
    r.patches += Math.max(0, (e.count ?? 1) - 1);
    eventWrites += Math.max(1, e.count ?? 1);
  }
  const statusWrites = [...seen.values()].reduce((n, s) => n + s.afterBinding, 0);
  /** @type {Record<string, number>} */
  const clientRequests = {};
  for (const [method, n] of Object.entries(after)) if (n - (before[method] ?? 0) > 0) clientRequests[method] = n - (before[method] ?? 0);
  const windowS = (Date.now() - applied) / 1000;
  process.stdout.write(
    `${JSON.stringify({
      node: NODE,
      pods,
      readyS: Math.round(readyS * 10) / 10,
      windowS: Math.round(windowS),
      statusWritesPerPod: statusWrites / pods,
      eventWritesPerPod: eventWrites / pods,
      eventsByReason: byReason,
      kubeletClientRequestsInWindow: clientRequests,
    })}\n`,
  );
} finally {
  stopPods();
  server.close();
  kubectl(['delete', 'namespace', namespace, '--wait=false', '--ignore-not-found']);
}
