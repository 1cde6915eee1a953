/**
 * Runs scenarios on the two agents and returns their records. The kubelet's pods are created
 * through the API server, bound to its node with `spec.nodeName` (no scheduler involved), and
 * watched; probelet's run in one `probelet run --runtime cri -o json` process on a containerd
 * instance of their own — or, with {@link runOnNode}, on a `probelet node` through the API
 * exactly as the kubelet's (test/node/side-by-side.test.ts). Each record is taken when its
 * pod's first container has run for the scenario's duration, by the agent's own timeline.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { dump } from 'js-yaml';
import type { Event, Pod } from '../../src/api/types.js';
import { podLineReader } from '../../src/cli/run/json-lines.js';
import type { KubeApi } from './kube-api.js';
import type { ProbeServer } from './probe-server.js';
import { conditionRecords, containerRecords, eventRecords, firstStartMs, type OracleRecord, type PodSnapshot } from './record.js';
import { ORACLE_NAMESPACE, type ApiObject, type Scenario } from './scenarios.js';

/** A scenario with its server (if any) for one agent. */
export interface Prepared {
  scenario: Scenario;
  server?: ProbeServer;
}

/** How long a pod may take to start its first container before the scenario is given up. */
const START_LIMIT_MS = 120_000;
const PROBELET_BIN = fileURLToPath(new URL('../../bin/probelet.js', import.meta.url));

function record(agent: OracleRecord['agent'], version: string, p: Prepared, snapshots: PodSnapshot[], events: Event[], t0Ms: number): OracleRecord {
  const last = snapshots.at(-1)?.pod;
  return {
    scenario: p.scenario.name,
    agent,
    version,
    duration: p.scenario.duration,
    phase: last?.status?.phase ?? 'Unknown',
    events: eventRecords(events, t0Ms).filter((e) => e.first <= p.scenario.duration),
    containers: containerRecords(snapshots, t0Ms),
    conditions: conditionRecords(snapshots, t0Ms),
    requests: (p.server?.requests(t0Ms) ?? []).filter((r) => r.at <= p.scenario.duration),
  };
}

/**
 * Resolves with the record's time zero once the scenario's duration has passed since it: the
 * first container start, or with `from: 'created'` the pod's first appearance to the harness;
 * rejects when nothing started (or appeared) within START_LIMIT_MS.
 */
function whenDue(agent: OracleRecord['agent'], p: Prepared, snapshots: PodSnapshot[]): Promise<number> {
  const created = Date.now();
  return new Promise((resolve, reject) => {
    const timer = setInterval(() => {
      const t0 = p.scenario.from === 'created' ? snapshots[0]?.atMs : firstStartMs(snapshots);
      if (t0 === undefined) {
        // Refused at admission (e.g. OutOfpods: another user's pods fill the node's maxPods).
        const status = snapshots.at(-1)?.pod.status;
        const refused = status?.phase === 'Failed' ? `${status.reason ?? 'Failed'}: ${status.message ?? ''}` : undefined;
        if (refused !== undefined || Date.now() - created > START_LIMIT_MS) {
          clearInterval(timer);
          reject(new Error(`${agent}: ${refused ?? `no container started within ${START_LIMIT_MS / 1000} s`}`));
        }
        return;
      }
      if (Date.now() >= t0 + p.scenario.duration * 1000) {
        clearInterval(timer);
        resolve(t0);
      }
    }, 250);
  });
}

/** A scenario's objects in `namespace` (its manifests' own namespace replaced). */
function objectsIn(objects: ApiObject[], namespace: string): ApiObject[] {
  return objects.map((o) => ({ ...o, metadata: { ...o.metadata, namespace } }));
}

/** Creates or replaces namespaced objects through the API (Secrets: the only kind scenarios have). */
async function applyObjects(api: KubeApi, objects: ApiObject[]): Promise<void> {
  for (const o of objects) {
    const base = `/api/v1/namespaces/${o.metadata.namespace ?? 'default'}/${o.kind.toLowerCase()}s`;
    const made = await api.call('POST', base, o);
    if (made.status === 409) {
      const replaced = await api.call('PUT', `${base}/${o.metadata.name}`, o);
      if (replaced.status !== 200) throw new Error(`replacing ${o.kind} ${o.metadata.name}: HTTP ${replaced.status}`);
    } else if (made.status !== 201) {
      throw new Error(`creating ${o.kind} ${o.metadata.name}: HTTP ${made.status} ${JSON.stringify(made.body).slice(0, 300)}`);
    }
  }
}

/** Runs each of the scenario's updates `at` seconds from now; returns what cancels those not yet run. */
function scheduleUpdates(p: Prepared, apply: (objects: ApiObject[]) => Promise<void>, failed: (err: unknown) => void): () => void {
  const timers = (p.scenario.updates ?? []).map((u) => setTimeout(() => void apply(u.objects()).catch(failed), u.at * 1000));
  return () => timers.forEach((t) => clearTimeout(t));
}

export async function ensureNamespace(api: KubeApi, namespace: string): Promise<void> {
  const made = await api.call('POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: namespace } });
  if (made.status !== 201 && made.status !== 409) throw new Error(`creating namespace ${namespace}: HTTP ${made.status}`);
  // ServiceAccount admission refuses pods until the controller manager has made "default".
  for (let i = 0; i < 120; i++) {
    const sa = await api.call('GET', `/api/v1/namespaces/${namespace}/serviceaccounts/default`);
    if (sa.status === 200) return;
    await new Promise((r) => setTimeout(r, 500));
  }
  throw new Error(`namespace ${namespace}: no default service account after 60 s (is kube-controller-manager running?)`);
}

/** A node whose pods are created and watched through the API: the real kubelet's, or a `probelet node`'s. */
export interface ApiNode {
  agent: OracleRecord['agent'];
  nodeName: string;
  /** Where its scenarios' pods are created (the manifests' namespace is replaced). */
  namespace: string;
}

/** The scenario on a node through the API: created, watched, recorded, deleted. */
async function runOneOnNode(api: KubeApi, node: ApiNode, version: string, p: Prepared): Promise<OracleRecord> {
  const scenarioPod = p.scenario.pod(p.server?.port ?? 0);
  const manifest = { ...scenarioPod, metadata: { ...scenarioPod.metadata, namespace: node.namespace } };
  const name = manifest.metadata.name ?? '';
  const base = `/api/v1/namespaces/${node.namespace}/pods`;
  // A pod of an earlier, interrupted run goes first.
  await api.call('DELETE', `${base}/${name}?gracePeriodSeconds=0`);
  for (let i = 0; i < 60 && (await api.call('GET', `${base}/${name}`)).status === 200; i++) await new Promise((r) => setTimeout(r, 500));
  const snapshots: PodSnapshot[] = [];
  const stop = api.watch<Pod>(`${base}?watch=1&fieldSelector=metadata.name%3D${name}`, (type, pod) => {
    if (type === 'ADDED' || type === 'MODIFIED') snapshots.push({ atMs: Date.now(), pod });
  });
  const objects = objectsIn(p.scenario.objects?.() ?? [], node.namespace);
  let cancelUpdates = (): void => undefined;
  let updateError: unknown;
  try {
    await applyObjects(api, objects);
    const created = await api.call('POST', base, { ...manifest, spec: { ...manifest.spec, nodeName: node.nodeName } });
    if (created.status !== 201) throw new Error(`creating pod ${name}: HTTP ${created.status} ${JSON.stringify(created.body).slice(0, 300)}`);
    cancelUpdates = scheduleUpdates(p, (next) => applyObjects(api, objectsIn(next, node.namespace)), (err) => (updateError = err));
    const uid = (created.body as Pod).metadata?.uid ?? '';
    const t0 = await whenDue(node.agent, p, snapshots);
    if (updateError !== undefined) throw updateError instanceof Error ? updateError : new Error(String(updateError));
    // By UID: events of an earlier pod of the same name (an earlier run) stay for an hour.
    const events = await api.call<{ items: Event[] }>('GET', `/api/v1/namespaces/${node.namespace}/events?fieldSelector=involvedObject.uid%3D${uid}`);
    return record(node.agent, version, p, snapshots, events.body.items ?? [], t0);
  } finally {
    stop();
    cancelUpdates();
    await api.call('DELETE', `${base}/${name}?gracePeriodSeconds=0`);
    for (const o of objects) await api.call('DELETE', `/api/v1/namespaces/${node.namespace}/${o.kind.toLowerCase()}s/${o.metadata.name}`);
  }
}

export function runOnKubelet(api: KubeApi, nodeName: string, prepared: Prepared[]): Promise<{ version: string; records: Map<string, OracleRecord | Error> }> {
  return runOnNode(api, { agent: 'kubelet', nodeName, namespace: ORACLE_NAMESPACE }, prepared);
}

/** Every scenario at once on `node`, through the API; its version is the Node's `kubeletVersion`. */
export async function runOnNode(api: KubeApi, target: ApiNode, prepared: Prepared[]): Promise<{ version: string; records: Map<string, OracleRecord | Error> }> {
  const nodeName = target.nodeName;
  const node = await api.call<{ status?: { nodeInfo?: { kubeletVersion?: string } } }>('GET', `/api/v1/nodes/${nodeName}`);
  if (node.status !== 200) throw new Error(`node ${nodeName}: HTTP ${node.status} (is \`npm run cluster:up\` done?)`);
  const version = `${target.agent} ${node.body.status?.nodeInfo?.kubeletVersion ?? 'unknown'}`;
  await ensureNamespace(api, target.namespace);
  const results = await Promise.allSettled(prepared.map((p) => runOneOnNode(api, target, version, p)));
  const records = new Map<string, OracleRecord | Error>();
  results.forEach((r, i) => {
    const name = prepared[i]?.scenario.name ?? '';
    records.set(name, r.status === 'fulfilled' ? r.value : r.reason instanceof Error ? r.reason : new Error(String(r.reason)));
  });
  return { version, records };
}

/** Every scenario in one `probelet run --runtime cri` process, each recorded when due. */
export async function runOnProbelet(criEndpoint: string, version: string, prepared: Prepared[]): Promise<Map<string, OracleRecord | Error>> {
  const dir = mkdtempSync(join(tmpdir(), 'probelet-oracle-'));
  const file = join(dir, 'pods.yaml');
  // The pods and their objects (pull Secrets) in one manifest; an update rewrites it (run reads
  // its Secrets from the files again when they change), by a rename so no read sees half of it.
  const objects = new Map<string, ApiObject>();
  const key = (o: ApiObject): string => `${o.kind}/${o.metadata.namespace ?? ''}/${o.metadata.name}`;
  for (const p of prepared) for (const o of p.scenario.objects?.() ?? []) objects.set(key(o), o);
  const writeManifest = (): void => {
    const docs = [...objects.values(), ...prepared.map((p) => p.scenario.pod(p.server?.port ?? 0))];
    writeFileSync(`${file}.new`, docs.map((d) => dump(d)).join('---\n'));
    renameSync(`${file}.new`, file);
  };
  writeManifest();
  // Each scenario's updates are timed from its pod's first appearance, as on the kubelet from
  // the pod's creation (the run may take seconds to start under load).
  const cancels: Array<() => void> = [];
  const updateOnAppearance = (name: string): void => {
    const p = prepared.find((x) => x.scenario.pod(0).metadata?.name === name);
    if (p?.scenario.updates === undefined) return;
    const apply = (next: ApiObject[]): Promise<void> => {
      for (const o of next) objects.set(key(o), o);
      writeManifest();
      return Promise.resolve();
    };
    cancels.push(scheduleUpdates(p, apply, () => undefined));
  };
  const longest = Math.max(...prepared.map((p) => p.scenario.duration));
  const child = spawn(
    process.execPath,
    // Its container logs under the harness's own directory (removed below): a scenario whose
    // container crashes would otherwise keep a probelet-run-* directory, as run does for users.
    // Image pulls as the cluster's kubelet makes them (cluster/up.sh: serializeImagePulls: false).
    [PROBELET_BIN, 'run', '--runtime', 'cri', '--cri-endpoint', criEndpoint, '--serialize-image-pulls', 'false', '-o', 'json', '--listen', '127.0.0.1:0', '--timeout', `${longest + START_LIMIT_MS / 1000 + 60}s`, '--log-dir', join(dir, 'logs'), file],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  const snapshots = new Map<string, PodSnapshot[]>();
  const readPod = podLineReader();
  const events = new Map<string, Map<string, Event>>();
  let stderr = '';
  let buffer = '';
  child.stderr.setEncoding('utf8').on('data', (s: string) => (stderr = (stderr + s).slice(-4000)));
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
    buffer += chunk;
    let nl: number;
    while ((nl = buffer.indexOf('\n')) >= 0) {
      const line = buffer.slice(0, nl);
      buffer = buffer.slice(nl + 1);
      if (!line.startsWith('{')) continue;
      const item = JSON.parse(line) as { type: string; pod?: Pod; event?: Event };
      // The pod at every change, `pod` and `containerStatus` lines alike (src/cli/run/json-lines.ts).
      const pod = readPod(item);
      if (pod !== undefined) {
        const name = pod.metadata?.name ?? '';
        const own = snapshots.get(name) ?? [];
        if (own.length === 0) updateOnAppearance(name);
        own.push({ atMs: Date.now(), pod });
        snapshots.set(name, own);
      } else if (item.type === 'event' && item.event !== undefined) {
        const name = item.event.involvedObject?.name ?? '';
        const byKey = events.get(name) ?? new Map<string, Event>();
        byKey.set(item.event.metadata?.name ?? '', item.event);
        events.set(name, byKey);
      }
    }
  });
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  const records = new Map<string, OracleRecord | Error>();
  try {
    await Promise.all(
      prepared.map(async (p) => {
        const name = p.scenario.pod(0).metadata?.name ?? '';
        const own = snapshots.get(name) ?? [];
        snapshots.set(name, own);
        try {
          const due = await Promise.race([
            whenDue('probelet', p, own),
            exited.then((code) => Promise.reject(new Error(`probelet run exited (${code}) early: ${stderr.slice(-600)}`))),
          ]);
          records.set(p.scenario.name, record('probelet', version, p, snapshots.get(name) ?? [], [...(events.get(name)?.values() ?? [])], due));
        } catch (err) {
          records.set(p.scenario.name, err instanceof Error ? err : new Error(String(err)));
        }
      }),
    );
  } finally {
    for (const cancel of cancels) cancel();
    child.kill('SIGTERM');
    await Promise.race([exited, new Promise((r) => setTimeout(r, 30_000))]);
    if (child.exitCode === null) child.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  }
  return records;
}
