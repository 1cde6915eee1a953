#!/usr/bin/env node
/**
 * `npm run bench -- --scenario check-cluster [--objects N] [--runs R]` (issue 28): `probelet
 * check --cluster -A` over N (default 5,000) workload objects in the API server of `npm run
 * cluster:up` (KUBECONFIG from `eval "$(npm run -s cluster:env)"`). The objects — Deployments
 * (whose controller adds a ReplicaSet each), StatefulSets, DaemonSets and suspended CronJobs,
 * with the probes of a typical app — are created in a namespace of the bench's own, held still
 * (no replicas, a DaemonSet aimed at no node, suspended), then the built command runs R times
 * (default 3) as a user runs it: a new process, every namespace, JSON out. Goal: under 10 s for
 * 5,000. The namespace is deleted at the end, and on INT/TERM/HUP/QUIT. Prints one JSON line,
 * then the figure.
 */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { AppsV1Api, BatchV1Api, CoreV1Api, KubeConfig } from '@kubernetes/client-node';

const ROOT = fileURLToPath(new URL('../', import.meta.url));
const GOAL_S = 10;
const GOAL_OBJECTS = 5_000;
/** Creates in flight at once: enough to keep the API server busy, not to starve the others on the machine. */
const CONCURRENCY = 16;
const NAMESPACE = `explain-bench-${randomBytes(3).toString('hex')}`;

const argv = process.argv.slice(2);
const flag = (/** @type {string} */ name, /** @type {number} */ fallback) => {
  const at = argv.indexOf(name);
  const value = at >= 0 ? Number(argv[at + 1]) : fallback;
  if (!Number.isInteger(value) || value <= 0) throw new Error(`${name} must be a positive integer`);
  return value;
};
const N = flag('--objects', GOAL_OBJECTS);
const RUNS = flag('--runs', 3);

if (!process.env.KUBECONFIG) {
  process.stderr.write('bench check-cluster: no KUBECONFIG: run `npm run cluster:up`, then eval "$(npm run -s cluster:env)"\n');
  process.exit(2);
}
const kubeconfigPath = process.env.KUBECONFIG.split(':')[0] ?? '';
const config = new KubeConfig();
config.loadFromFile(kubeconfigPath);
const core = config.makeApiClient(CoreV1Api);
const apps = config.makeApiClient(AppsV1Api);
const batch = config.makeApiClient(BatchV1Api);

let cleaning;
/** Deletes the namespace (its objects go with it, in the background of the API server). */
function cleanUp() {
  cleaning ??= core.deleteNamespace({ name: NAMESPACE }).then(
    () => process.stderr.write(`bench check-cluster: namespace ${NAMESPACE} deleted (its objects go with it)\n`),
    (err) => process.stderr.write(`bench check-cluster: deleting namespace ${NAMESPACE}: ${String(err)}\n`),
  );
  return cleaning;
}
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP', 'SIGQUIT']) {
  process.once(signal, () => {
    process.stderr.write(`bench check-cluster: ${signal}: cleaning up\n`);
    void cleanUp().then(() => process.exit(130));
  });
}

/** The pod template of object `i`: an app with the probes most charts give it, some of the usual mistakes so findings are made too. */
function template(i) {
  const labels = { 'app.kubernetes.io/name': `app-${i}` };
  return {
    metadata: { labels },
    spec: {
      nodeSelector: { 'probelet.dev/bench': 'nowhere' },
      containers: [
        {
          name: 'app',
          image: `registry.example/app-${i}:1.${i % 20}.0`,
          ports: [{ name: 'http', containerPort: 8080 }],
          resources: { requests: { cpu: '100m', memory: '128Mi' }, limits: { memory: '256Mi' } },
          ...(i % 3 === 0 ? { startupProbe: { httpGet: { path: '/healthz', port: 'http' }, periodSeconds: 5, failureThreshold: 12 + (i % 24) } } : {}),
          readinessProbe: { httpGet: { path: '/ready', port: i % 7 === 0 ? 'metrics' : 'http' }, periodSeconds: 10 },
          livenessProbe: { httpGet: { path: '/healthz', port: 'http' }, periodSeconds: 10, timeoutSeconds: 1 + (i % 3), failureThreshold: 3 },
        },
      ],
    },
  };
}

/** Object `i`, created; held still so nothing runs. */
function create(i) {
  const metadata = { name: `app-${i}`, namespace: NAMESPACE };
  const selector = { matchLabels: { 'app.kubernetes.io/name': `app-${i}` } };
  switch (i % 5) {
    case 0:
    case 1:
      return apps.createNamespacedDeployment({ namespace: NAMESPACE, body: { metadata, spec: { replicas: 0, selector, template: template(i) } } });
    case 2:
      return apps.createNamespacedStatefulSet({ namespace: NAMESPACE, body: { metadata, spec: { replicas: 0, serviceName: `app-${i}`, selector, template: template(i) } } });
    case 3:
      return apps.createNamespacedDaemonSet({ namespace: NAMESPACE, body: { metadata, spec: { selector, template: template(i) } } });
    default:
      return batch.createNamespacedCronJob({
        namespace: NAMESPACE,
        body: { metadata, spec: { schedule: '0 3 * * *', suspend: true, jobTemplate: { spec: { template: { ...template(i), spec: { ...template(i).spec, restartPolicy: 'OnFailure' } } } } } },
      });
  }
}

/** `probelet check --cluster -A -o json` as a user runs it: wall time, and what it found. */
function checkOnce() {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const child = spawn(process.execPath, [`${ROOT}bin/probelet.js`, 'check', '--cluster', '-A', '-o', 'json', '--fail-on', 'never', '--kubeconfig', kubeconfigPath], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.setEncoding('utf8').on('data', (s) => (out += s));
    child.stderr.setEncoding('utf8').on('data', (s) => (err += s));
    child.once('error', reject);
    child.once('close', (code) => {
      const seconds = (performance.now() - started) / 1000;
      if (code !== 0) return reject(new Error(`probelet check --cluster exited ${code}: ${err.slice(0, 2000)}`));
      const result = JSON.parse(out);
      const objects = new Set(result.containers.map((c) => JSON.stringify(c.object)));
      const ours = [...objects].filter((o) => JSON.parse(o).namespace === NAMESPACE).length;
      resolve({ seconds, findings: result.findings.length, objects: objects.size, ours, live: (result.live ?? []).length });
    });
  });
}

async function main() {
  await core.createNamespace({ body: { metadata: { name: NAMESPACE } } });
  const t0 = performance.now();
  let next = 0;
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next < N) await create(next++);
    }),
  );
  const createS = (performance.now() - t0) / 1000;
  process.stderr.write(`bench check-cluster: created ${N} objects in ${NAMESPACE} in ${createS.toFixed(1)} s\n`);
  // The Deployment controller adds a ReplicaSet to each Deployment: listed (and passed over as owned) like a cluster's.
  const deployments = Array.from({ length: N }, (_, i) => i % 5).filter((k) => k < 2).length;
  const deadline = Date.now() + 180_000;
  let replicaSets = 0;
  while (Date.now() < deadline) {
    replicaSets = (await apps.listNamespacedReplicaSet({ namespace: NAMESPACE })).items.length;
    if (replicaSets >= deployments) break;
    await new Promise((r) => setTimeout(r, 2_000));
  }
  const runs = [];
  for (let r = 0; r < RUNS; r++) runs.push(await checkOnce());
  const times = runs.map((r) => r.seconds).sort((a, b) => a - b);
  const best = times[0] ?? NaN;
  const median = times[Math.floor(times.length / 2)] ?? NaN;
  const last = runs.at(-1);
  const line = {
    scenario: 'check-cluster',
    objects: N,
    replicaSets,
    objectsChecked: last?.objects,
    objectsOurs: last?.ours,
    findings: last?.findings,
    liveEvidence: last?.live,
    createS: round(createS),
    checkBestS: round(best),
    checkMedianS: round(median),
    runs: times.map(round),
    goalS: GOAL_S,
    /** The goal is for 5,000 objects; other sizes are scaled to it. */
    withinGoal: (median * GOAL_OBJECTS) / N < GOAL_S,
  };
  process.stdout.write(`${JSON.stringify(line)}\n\n`);
  process.stdout.write(
    `probelet check --cluster -A over ${N} workload objects (+${replicaSets} ReplicaSets; ${line.objectsChecked} objects checked in every namespace, ${line.findings} findings): median ${median.toFixed(2)} s, best ${best.toFixed(2)} s of ${RUNS} runs; goal ${GOAL_OBJECTS} objects < ${GOAL_S} s${N === GOAL_OBJECTS ? '' : ' (scaled)'}: ${line.withinGoal ? 'met' : 'NOT met'}\n`,
  );
  process.stdout.write('(a new process each run, as a user runs it, on this machine now — shared with other work)\n');
}

/** @param {number} x */
function round(x) {
  return Math.round(x * 1000) / 1000;
}

try {
  await main();
} catch (err) {
  process.stderr.write(`bench check-cluster: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exitCode = 1;
} finally {
  await cleanUp();
}
