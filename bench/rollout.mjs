#!/usr/bin/env node
/**
 * `npm run bench -- --scenario rollout [--nodes N] [--replicas M] [--deadline S] [--prefix P]`
 * (default the full size of examples/fleet/: 200 replicas on 50 nodes, a 120 s progress
 * deadline): the rollout of examples/fleet/ under the real Deployment controller of `npm run
 * cluster:up` (KUBECONFIG from `eval "$(npm run -s cluster:env)"`), on `probelet node
 * --runtime simulated --fleet` (the example's fleet file, its pool renamed to the prefix).
 * Version 1, then version 2 (40 s to start behind a liveness probe): the time to
 * ProgressDeadlineExceeded and its restarts; then the fixed version 2 (startupProbe): the
 * rollout's duration and its restarts. Beside them, each fixed pod's time from its start to
 * Ready and what `probelet simulate` of one pod predicts. One JSON line per version on stdout.
 * Removes what it created.
 */
import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import yaml from 'js-yaml';

const root = fileURLToPath(new URL('..', import.meta.url));
const examples = join(root, 'examples/fleet');
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
const REPLICAS = flag('--replicas', 200);
const DEADLINE_S = flag('--deadline', 120);
const prefixAt = args.indexOf('--prefix');
const POOL = prefixAt >= 0 ? (args[prefixAt + 1] ?? '') : `rollout${process.pid % 10000}`;
if (!/^[a-z0-9]([-a-z0-9]{0,30}[a-z0-9])?$/.test(POOL)) throw new Error(`--prefix ${JSON.stringify(POOL)}: lower-case letters, digits and '-', at most 32`);
const NS = `probelet-${POOL}`;
if (!process.env.KUBECONFIG) {
  process.stderr.write('bench rollout: no KUBECONFIG: run `npm run cluster:up`, then eval "$(npm run -s cluster:env)"\n');
  process.exit(2);
}
const log = (/** @type {string} */ line) => process.stderr.write(`bench rollout: ${line}\n`);
/** @param {string[]} a @param {string} [input] */
const kubectl = (a, input) => execFileSync('kubectl', a, { encoding: 'utf8', maxBuffer: 256 * 1024 * 1024, ...(input ? { input } : {}) });
const sleep = (/** @type {number} */ ms) => new Promise((r) => setTimeout(r, ms));

const dir = mkdtempSync(join(tmpdir(), 'probelet-bench-rollout-'));
const fleetDoc = /** @type {any} */ (yaml.load(readFileSync(join(examples, 'fleet.yaml'), 'utf8')));
fleetDoc.pools = [{ ...fleetDoc.pools[0], name: POOL, count: NODES, labels: { 'probelet.dev/pool': POOL } }];
writeFileSync(join(dir, 'fleet.yaml'), yaml.dump(fleetDoc));

/** The example's objects of `file`, sized and pinned to this run's pool, as YAML for kubectl. @param {string} file */
function manifest(file) {
  return yaml
    .loadAll(readFileSync(join(examples, file), 'utf8'))
    .map((/** @type {any} */ o) => {
      o.metadata.namespace = NS;
      if (o.kind === 'Deployment') {
        o.spec.replicas = REPLICAS;
        o.spec.progressDeadlineSeconds = DEADLINE_S;
        o.spec.template.spec.nodeSelector = { 'probelet.dev/pool': POOL };
      }
      return yaml.dump(o);
    })
    .join('---\n');
}

/** The Deployment's state once the controller observed its latest spec. */
function deployment() {
  const d = JSON.parse(kubectl(['-n', NS, 'get', 'deployment', 'shop', '-o', 'json']));
  if ((d.status?.observedGeneration ?? 0) < d.metadata.generation) return undefined;
  const c = (d.status?.conditions ?? []).find((/** @type {any} */ x) => x.type === 'Progressing');
  const s = d.status ?? {};
  return { reason: c?.reason, complete: c?.reason === 'NewReplicaSetAvailable' && s.updatedReplicas === REPLICAS && s.availableReplicas === REPLICAS && s.replicas === REPLICAS };
}

/** Waits until `done(state)`; returns the seconds it took. @param {string} what @param {(s: any) => boolean} done @param {number} limitS */
async function waitFor(what, done, limitS) {
  const t0 = Date.now();
  for (;;) {
    const s = deployment();
    if (s && done(s)) return (Date.now() - t0) / 1000;
    if (Date.now() - t0 > limitS * 1000) throw new Error(`${what}: not within ${limitS} s (last: ${JSON.stringify(s)})`);
    await sleep(1000);
  }
}

/** Pods of version 2 (with or without the startupProbe): restarts, and each one's start → Ready. @param {boolean} fixed */
function podsOfV2(fixed) {
  const pods = JSON.parse(kubectl(['-n', NS, 'get', 'pods', '-o', 'json'])).items.filter(
    (/** @type {any} */ p) => !p.metadata.deletionTimestamp && p.spec.containers[0].image === 'example/shop:2.0' && (p.spec.containers[0].startupProbe !== undefined) === fixed,
  );
  const restarts = pods.reduce((/** @type {number} */ n, /** @type {any} */ p) => n + (p.status.containerStatuses?.[0]?.restartCount ?? 0), 0);
  const toReady = pods
    .map((/** @type {any} */ p) => {
      const ready = (p.status.conditions ?? []).find((/** @type {any} */ c) => c.type === 'Ready' && c.status === 'True');
      const started = p.status.containerStatuses?.[0]?.state?.running?.startedAt;
      return ready && started ? (Date.parse(ready.lastTransitionTime) - Date.parse(started)) / 1000 : undefined;
    })
    .filter((/** @type {number | undefined} */ s) => s !== undefined)
    .sort((/** @type {number} */ a, /** @type {number} */ b) => a - b);
  const at = (/** @type {number} */ q) => toReady[Math.min(toReady.length - 1, Math.floor(q * toReady.length))] ?? null;
  return { pods: pods.length, restarts, startToReadyS: { p50: at(0.5), max: toReady.at(-1) ?? null } };
}

/** What `probelet simulate` predicts for one pod of `file` playing version 2's script for `forS`. @param {string} file @param {number} forS */
function simulated(file, forS) {
  const script = fleetDoc.behaviours[0].script;
  const out = execFileSync(process.execPath, [`${root}bin/probelet.js`, 'simulate', join(examples, file), '-b', `shop=${script}`, '--for', `${forS}s`, '-o', 'json'], { encoding: 'utf8' });
  const summary = out
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l))
    .find((l) => l.type === 'summary');
  const pod = summary?.pods?.[0];
  return { readyAtS: pod?.readyAt ?? null, restarts: pod?.containers?.[0]?.restarts ?? null };
}

const fleet = spawn(process.execPath, [`${root}bin/probelet.js`, 'node', '--kubeconfig', process.env.KUBECONFIG.split(':')[0], '--runtime', 'simulated', '--fleet', join(dir, 'fleet.yaml')], {
  stdio: ['ignore', 'ignore', 'pipe'],
});
let fleetLog = '';
fleet.stderr.on('data', (d) => (fleetLog += d.toString()));
const fleetExit = new Promise((resolve) => fleet.once('exit', resolve));
const nodes = Array.from({ length: NODES }, (_, i) => `${POOL}-${i}`);
try {
  const t0 = Date.now();
  while ((fleetLog.match(/ registered with /g) ?? []).length < NODES) {
    if (Date.now() - t0 > 300_000 || fleet.exitCode !== null) throw new Error(`the fleet did not register its ${NODES} nodes:\n${fleetLog.slice(-2000)}`);
    await sleep(500);
  }
  log(`${NODES} nodes registered in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
  kubectl(['create', 'namespace', NS]);
  kubectl(['apply', '-f', '-'], manifest('shop-v1.yaml'));
  const v1S = await waitFor('version 1 rolled out', (s) => s.complete, 600);
  log(`version 1: ${REPLICAS} replicas available in ${v1S.toFixed(1)} s`);

  kubectl(['apply', '-f', '-'], manifest('shop-v2.yaml'));
  const stuckS = await waitFor('version 2 stuck', (s) => s.reason === 'ProgressDeadlineExceeded', DEADLINE_S + 300);
  const broken = { scenario: 'rollout', version: '2 (liveness only)', nodes: NODES, replicas: REPLICAS, outcome: 'ProgressDeadlineExceeded', durationS: stuckS, ...podsOfV2(false), simulateOnePod: simulated('shop-v2.yaml', DEADLINE_S) };
  process.stdout.write(`${JSON.stringify(broken)}\n`);

  kubectl(['apply', '-f', '-'], manifest('shop-v2-fixed.yaml'));
  const doneS = await waitFor('the fixed version 2 rolled out', (s) => s.complete, 1800);
  const fixed = { scenario: 'rollout', version: '2 (startupProbe)', nodes: NODES, replicas: REPLICAS, outcome: 'NewReplicaSetAvailable', durationS: doneS, ...podsOfV2(true), simulateOnePod: simulated('shop-v2-fixed.yaml', 180) };
  process.stdout.write(`${JSON.stringify(fixed)}\n`);
  log(`version 2: stuck after ${stuckS.toFixed(1)} s with ${broken.restarts} restarts; fixed: complete in ${doneS.toFixed(1)} s with ${fixed.restarts} restarts`);
} finally {
  try {
    kubectl(['delete', 'namespace', NS, '--wait=false', '--ignore-not-found']);
  } catch {
    // Best effort.
  }
  fleet.kill('SIGTERM');
  await fleetExit;
  try {
    kubectl(['delete', 'node', ...nodes, '--ignore-not-found']);
    kubectl(['-n', 'kube-node-lease', 'delete', 'lease', ...nodes, '--ignore-not-found']);
  } catch {
    // Best effort.
  }
  rmSync(dir, { recursive: true, force: true });
}
