/**
 * The incidents `explain` is held to on a live node, and how they are produced and read: one
 * pod per cause, bound to a node by `spec.nodeName` (the real kubelet's, or a `probelet node`'s:
 * the node is the seam), probes reaching the test's own servers on 127.0.0.1 through
 * `httpGet.host` (the prober dials from the host), or exec commands in the busybox test image.
 * When a pod's incident has happened, `explain` runs live (the CLI's function, through the API)
 * and offline on the same pod and events saved as JSON (`-f --events`).
 *
 * Used by real-kubelet.test.ts (every cause on the kubelet) and probelet-node.test.ts (the
 * same incidents on a probelet node and the kubelet at once, compared).
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import type { V1Pod } from '@kubernetes/client-node';
import type { Container, Pod } from '../../src/api/types.js';
import { runExplain } from '../../src/cli/explain.js';
import type { CliIO } from '../../src/cli/io.js';
import type { Diagnosis } from '../../src/explain/diagnose.js';
import type { ExplainReport } from '../../src/explain/output.js';
import { plain, type KubeClients } from '../../src/node/kube.js';
import { until } from '../node/helpers.js';

export const IMAGE = 'probelet.local/busybox:test';

/** A SIGTERM-aware shell around `body`: exits at once on TERM, so kills take no grace (only the SIGTERM case ignores it). */
export const shell = (body: string): string[] => ['sh', '-c', `trap "exit 143" TERM; (${body}) & wait`];

export function capture(): CliIO & { out: string; err: string } {
  const io = { out: '', err: '', stdout: (s: string) => void (io.out += s), stderr: (s: string) => void (io.err += s) };
  return io;
}

/** The ports of the servers the incidents' probes reach (and a registry that has nothing): test/explain/incident-servers.mjs. */
export interface IncidentPorts {
  /** Nothing listens there. */
  wrong: number;
  /** The app's declared port: 200 at /healthz, 404 elsewhere. */
  declared: number;
  /** Answers after 2.5 s. */
  slow: number;
  /** 200 for 4 s, 503 for 4 s, and so on. */
  flap: number;
  /** 200 for 8 s, then 500. */
  unhealthy: number;
  /** 503 always. */
  unready: number;
  /** 404 to everything: a registry without the image. */
  registry: number;
}

/**
 * The servers of one set of incidents, in a child process (a busy test worker must not make a
 * probe time out): the stateful ones (flap, unhealthy) count from their first request, so each
 * node gets its own. `close` ends the process.
 */
export async function startIncidentServers(): Promise<{ ports: IncidentPorts; close: () => void }> {
  const child = spawn(process.execPath, [fileURLToPath(new URL('./incident-servers.mjs', import.meta.url))], { stdio: ['pipe', 'pipe', 'inherit'] });
  const close = (): void => {
    child.stdin?.end();
    child.kill('SIGTERM');
  };
  try {
    const [line] = (await Promise.race([
      once(createInterface({ input: child.stdout as NodeJS.ReadableStream }), 'line'),
      once(child, 'exit').then(([code]) => {
        throw new Error(`incident-servers.mjs exited ${String(code)} before printing its ports`);
      }),
    ])) as [string];
    return { ports: JSON.parse(line) as IncidentPorts, close };
  } catch (err) {
    close();
    throw err;
  }
}

export interface Incident {
  name: string;
  /** The pod's one container `app`. */
  container: (ports: IncidentPorts) => Container;
  /** The pod's terminationGracePeriodSeconds (2 s: kills take no time, but a deletion's). */
  grace?: number;
  /** The pod's volumes (the container mounts them). */
  volumes?: NonNullable<Pod['spec']>['volumes'];
  /** The pod's state at which the incident is complete. */
  done: (pod: Pod) => boolean;
  /** Done only after this (e.g. the deletion of the SIGTERM case). */
  then?: (clients: KubeClients, namespace: string, pod: Pod) => Promise<void>;
}

export const status = (p: Pod, c = 'app') => p.status?.containerStatuses?.find((s) => s.name === c);
export const restarts = (p: Pod, c = 'app'): number => status(p, c)?.restartCount ?? 0;
const runningFor = (p: Pod, ms: number): boolean => {
  const since = status(p)?.state?.running?.startedAt;
  return since !== undefined && Date.now() - Date.parse(since) > ms;
};

/** A pod of the incidents: bound to `node`, no service account token, no cluster DNS. */
export function incidentPod(namespace: string, node: string, name: string, containers: Container[], grace = 2, volumes?: NonNullable<Pod['spec']>['volumes']): Pod {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace },
    spec: { nodeName: node, automountServiceAccountToken: false, dnsPolicy: 'Default', terminationGracePeriodSeconds: grace, containers, ...(volumes ? { volumes } : {}) },
  };
}

/** Every incident, by name. */
export const INCIDENTS: Record<string, Incident> = Object.fromEntries(
  (
    [
      {
        name: 'slow-start',
        container: () => ({ name: 'app', image: IMAGE, command: shell('sleep 40; touch /tmp/ok; sleep 3600'), livenessProbe: { exec: { command: ['test', '-f', '/tmp/ok'] }, periodSeconds: 2, failureThreshold: 2 } }),
        done: (p) => restarts(p) >= 2,
      },
      {
        name: 'startup-short',
        container: () => ({ name: 'app', image: IMAGE, command: shell('sleep 40; touch /tmp/ok; sleep 3600'), startupProbe: { exec: { command: ['test', '-f', '/tmp/ok'] }, periodSeconds: 2, failureThreshold: 2 } }),
        done: (p) => restarts(p) >= 1,
      },
      {
        name: 'wrong-port',
        container: (ports) => ({
          name: 'app',
          image: IMAGE,
          command: shell('sleep 3600'),
          ports: [{ name: 'http', containerPort: ports.declared }],
          livenessProbe: { httpGet: { host: '127.0.0.1', port: ports.wrong, path: '/healthz' }, periodSeconds: 2, failureThreshold: 2 },
        }),
        done: (p) => restarts(p) >= 1,
      },
      {
        name: 'wrong-path',
        container: (ports) => ({
          name: 'app',
          image: IMAGE,
          command: shell('sleep 3600'),
          ports: [{ name: 'http', containerPort: ports.declared }],
          livenessProbe: { httpGet: { host: '127.0.0.1', port: ports.declared, path: '/health' }, periodSeconds: 2, failureThreshold: 2 },
        }),
        done: (p) => restarts(p) >= 1,
      },
      {
        name: 'liveness-timeout',
        container: (ports) => ({ name: 'app', image: IMAGE, command: shell('sleep 3600'), livenessProbe: { httpGet: { host: '127.0.0.1', port: ports.slow, path: '/healthz' }, periodSeconds: 2, failureThreshold: 2, timeoutSeconds: 1 } }),
        done: (p) => restarts(p) >= 1,
      },
      {
        name: 'hang',
        container: () => ({
          name: 'app',
          image: IMAGE,
          command: shell('sleep 12; touch /tmp/hung; sleep 3600'),
          livenessProbe: { exec: { command: ['sh', '-c', 'if [ -f /tmp/hung ]; then sleep 5; fi'] }, periodSeconds: 2, failureThreshold: 2, timeoutSeconds: 1 },
        }),
        done: (p) => restarts(p) >= 1,
      },
      {
        name: 'unhealthy',
        container: (ports) => ({ name: 'app', image: IMAGE, command: shell('sleep 3600'), livenessProbe: { httpGet: { host: '127.0.0.1', port: ports.unhealthy, path: '/healthz' }, periodSeconds: 2, failureThreshold: 2 } }),
        done: (p) => restarts(p) >= 1,
      },
      {
        name: 'crash',
        container: () => ({ name: 'app', image: IMAGE, command: ['sh', '-c', 'echo starting; echo "fatal: no config at /etc/app.conf" >&2; sleep 2; exit 3'] }),
        done: (p) => restarts(p) >= 1 && status(p)?.lastState?.terminated?.exitCode === 3,
      },
      {
        // Exits 3 once, then runs (an emptyDir keeps the mark): its previous run's log stays
        // readable while the current one runs. The kubelet keeps one dead instance per
        // container and deletes the others at once, so a container that crashes again and again
        // has no previous log between an exit and the status that follows it.
        name: 'crashed-once',
        container: () => ({
          name: 'app',
          image: IMAGE,
          command: ['sh', '-c', 'if [ -f /data/crashed ]; then echo recovered; exec sleep 3600; fi; touch /data/crashed; echo starting; echo "fatal: no config at /etc/app.conf" >&2; exit 3'],
          volumeMounts: [{ name: 'data', mountPath: '/data' }],
        }),
        volumes: [{ name: 'data', emptyDir: {} }],
        done: (p) => restarts(p) >= 1 && status(p)?.lastState?.terminated?.exitCode === 3 && status(p)?.state?.running !== undefined,
      },
      {
        name: 'oom',
        container: () => ({ name: 'app', image: IMAGE, command: ['awk', 'BEGIN { s = "xxxxxxxxxxxxxxxx"; while (1) s = s s }'], resources: { limits: { memory: '32Mi' }, requests: { memory: '32Mi' } } }),
        done: (p) => [status(p)?.lastState?.terminated?.reason, status(p)?.state?.terminated?.reason].includes('OOMKilled'),
      },
      {
        name: 'flapping',
        container: (ports) => ({ name: 'app', image: IMAGE, command: shell('sleep 3600'), readinessProbe: { httpGet: { host: '127.0.0.1', port: ports.flap, path: '/ready' }, periodSeconds: 1, failureThreshold: 2 } }),
        // Two trips out of service and back: 4 s up, 4 s down, twice over.
        done: (p) => runningFor(p, 20_000),
      },
      {
        name: 'readiness-failing',
        container: (ports) => ({ name: 'app', image: IMAGE, command: shell('sleep 3600'), readinessProbe: { httpGet: { host: '127.0.0.1', port: ports.unready, path: '/ready' }, periodSeconds: 2, failureThreshold: 2 } }),
        done: (p) => runningFor(p, 16_000),
      },
      {
        name: 'image-pull',
        container: (ports) => ({ name: 'app', image: `127.0.0.1:${ports.registry}/explain/missing:nope`, command: ['sleep', '3600'] }),
        done: (p) => ['ImagePullBackOff', 'ErrImagePull'].includes(status(p)?.state?.waiting?.reason ?? ''),
      },
      {
        name: 'sigterm',
        // `sleep` as PID 1: no handler, so SIGTERM is ignored and only SIGKILL ends it.
        container: () => ({ name: 'app', image: IMAGE, command: ['sleep', '3600'] }),
        grace: 30,
        done: (p) => status(p)?.state?.running !== undefined,
        then: async (c, namespace) => {
          await c.core.deleteNamespacedPod({ name: 'sigterm', namespace, gracePeriodSeconds: 20 });
          await new Promise((r) => setTimeout(r, 5_000));
        },
      },
      {
        // Killed once by its liveness probe (the first run is sick, the second, finding the
        // emptyDir's marker, is not), healthy since: then its events are deleted, as the API
        // server's --event-ttl would after an hour. A generous probe timeout: under load a
        // late exec must not kill the healthy run.
        name: 'expired',
        container: () => ({
          name: 'app',
          image: IMAGE,
          command: shell('if [ ! -f /data/ran ]; then touch /data/ran /tmp/sick; fi; sleep 3600'),
          volumeMounts: [{ name: 'data', mountPath: '/data' }],
          livenessProbe: { exec: { command: ['sh', '-c', 'test ! -f /tmp/sick'] }, periodSeconds: 2, failureThreshold: 2, timeoutSeconds: 10 },
        }),
        volumes: [{ name: 'data', emptyDir: {} }],
        done: (p) => restarts(p) === 1 && runningFor(p, 5_000),
        then: async (c, namespace, p) => {
          const list = plain<{ items: { metadata?: { name?: string } }[] }>(await c.core.listNamespacedEvent({ namespace, fieldSelector: `involvedObject.uid=${p.metadata?.uid ?? ''}` }));
          await Promise.all(list.items.map((e) => c.core.deleteNamespacedEvent({ name: e.metadata?.name ?? '', namespace })));
        },
      },
    ] satisfies Incident[]
  ).map((i) => [i.name, i]),
);

/** What explain said about an incident, live and offline from what it read, and the pod as it was. */
export interface IncidentResult {
  live: ExplainReport;
  offline: ExplainReport;
  pod: Pod;
  code: number;
}

/** The incidents of one node, run at once in `namespace`; each result or what went wrong. */
export interface IncidentRun {
  results: Map<string, IncidentResult | Error>;
  /** The container each incident's pod was made with (the numbers are held to its budgets). */
  specs: Map<string, Container>;
  /** Removes the saved JSON. */
  close: () => void;
}

/**
 * Creates each incident's pod on `node`, waits until its incident is complete (up to 150 s),
 * then explains it live and offline. `record` is called with each live result (fixtures).
 */
export async function runIncidents(options: {
  clients: KubeClients;
  kubeconfig: string;
  namespace: string;
  node: string;
  ports: IncidentPorts;
  names: readonly string[];
  record?: (name: string, live: { report: ExplainReport; pod: Pod; events: unknown }) => void;
}): Promise<IncidentRun> {
  const { clients, namespace, kubeconfig } = options;
  const tmp = mkdtempSync(join(tmpdir(), 'explain-incidents-'));
  const results = new Map<string, IncidentResult | Error>();
  const specs = new Map<string, Container>();

  /** The pod and its events as the API serves them now, with a fingerprint that changes with either. */
  async function snapshot(name: string): Promise<{ pod: Pod; events: unknown; print: string }> {
    const p = plain<Pod>(await clients.core.readNamespacedPod({ name, namespace }));
    const list = plain<{ items: { metadata?: { resourceVersion?: string } }[] }>(await clients.core.listNamespacedEvent({ namespace, fieldSelector: `involvedObject.uid=${p.metadata?.uid ?? ''}` }));
    const print = JSON.stringify([p.metadata?.resourceVersion, list.items.map((e) => e.metadata?.resourceVersion).sort()]);
    return { pod: p, events: { apiVersion: 'v1', kind: 'EventList', items: list.items }, print };
  }

  /**
   * explain live, and the pod and events it read, for the offline run: read before and after
   * the live explain, and tried again (up to 5 times) until nothing changed in between, so both
   * runs had the same input.
   */
  async function explainLive(name: string): Promise<{ report: ExplainReport; code: number; pod: Pod; events: unknown }> {
    for (let attempt = 1; ; attempt++) {
      const before = await snapshot(name);
      const io = capture();
      const code = await runExplain(`pod/${name}`, { output: 'json', namespace, kubeconfig, events: [] }, io);
      if (code === 2) throw new Error(`explain pod/${name}: ${io.err}`);
      const after = await snapshot(name);
      if (after.print === before.print || attempt === 5) return { report: JSON.parse(io.out) as ExplainReport, code, pod: after.pod, events: after.events };
      await new Promise((r) => setTimeout(r, 300));
    }
  }

  async function explainOffline(name: string, p: Pod, events: unknown, now: string): Promise<ExplainReport> {
    const podFile = join(tmp, `${name}.pod.json`);
    const eventsFile = join(tmp, `${name}.events.json`);
    writeFileSync(podFile, JSON.stringify(p));
    writeFileSync(eventsFile, JSON.stringify(events));
    const io = capture();
    await runExplain(undefined, { output: 'json', filename: [podFile], events: [eventsFile], now }, io);
    return JSON.parse(io.out) as ExplainReport;
  }

  await Promise.all(
    options.names.map(async (name) => {
      try {
        const incident = INCIDENTS[name];
        if (incident === undefined) throw new Error(`no incident ${name}`);
        const container = incident.container(options.ports);
        specs.set(name, container);
        await clients.core.createNamespacedPod({ namespace, body: incidentPod(namespace, options.node, name, [container], incident.grace, incident.volumes) as unknown as V1Pod });
        const reached = await until(
          `${name}: the incident`,
          async () => {
            const p = plain<Pod>(await clients.core.readNamespacedPod({ name, namespace }));
            return incident.done(p) ? p : undefined;
          },
          150_000,
          500,
        );
        await incident.then?.(clients, namespace, reached);
        // The node writes the status and the events separately: give the events a moment.
        await new Promise((r) => setTimeout(r, 1_500));
        const live = await explainLive(name);
        const offline = await explainOffline(name, live.pod, live.events, live.report.pods[0]?.observedAt ?? '');
        options.record?.(name, live);
        results.set(name, { live: live.report, offline, pod: live.pod, code: live.code });
      } catch (err) {
        results.set(name, err instanceof Error ? err : new Error(String(err)));
      }
    }),
  );
  return { results, specs, close: () => rmSync(tmp, { recursive: true, force: true }) };
}

/** The diagnosis of container `app` of an incident, live and offline; throws what went wrong. */
export function appDiagnosis(run: IncidentRun, name: string): { d: Diagnosis; offline: Diagnosis; code: number; text: string } {
  const r = run.results.get(name);
  if (r === undefined) throw new Error(`${name}: no result`);
  if (r instanceof Error) throw r;
  const d = r.live.pods[0]?.diagnoses.find((x) => x.container === 'app');
  const offline = r.offline.pods[0]?.diagnoses.find((x) => x.container === 'app');
  if (!d || !offline) throw new Error(`${name}: no diagnosis for app: ${JSON.stringify(r.live)}`);
  return { d, offline, code: r.code, text: JSON.stringify(d, null, 1) };
}
