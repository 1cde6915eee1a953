/**
 * Node e2e harness (kubelet-test-catalog.md §L/§M): the real `Kubelet` over the real process
 * runtime, real clock, real processes standing in for the agnhost/busybox images
 * (test/fixtures/e2e). Every container carries the test's marker variable, so after
 * `kubelet.close()` /proc tells whether anything of the test is still alive.
 *
 * Tests in a file run concurrently (`describe.concurrent`), so each test gets its own
 * kubelets, registered under the test's id and closed by {@link stopKubelets} in that
 * test's `afterEach`.
 */
import { mkdtempSync, realpathSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect, vi } from 'vitest';
import type { Container, ContainerStatus, Event, Pod, PodCondition, PodSpec } from '../../src/api/types.js';
import { Kubelet } from '../../src/kubelet/kubelet.js';
import { createProcessRuntime } from '../../src/runtime/process-runtime.js';
import { aliveWithMarker, eventually, killMarked, markerEnv } from '../helpers/processes.js';

const FIXTURES = join(dirname(fileURLToPath(import.meta.url)), '..', 'fixtures', 'e2e');
const MARKER_VAR = 'PROBELET_TEST_MARKER';

/** Absolute path of a fixture script (test/fixtures/e2e/<name>). */
export function fixture(name: string): string {
  return join(FIXTURES, name);
}

/** A port nobody listens on right now (bind to 0, read it, close). */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', resolve);
  });
  const address = server.address();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  if (address === null || typeof address === 'string') throw new Error('no TCP address');
  return address.port;
}

/** One pod status as seen by an `onPodStatus` listener, with the (monotonic) time it was seen. */
export interface Seen {
  atMs: number;
  pod: Pod;
}

export interface Harness {
  kubelet: Kubelet;
  /** Carried by every container (and so by every exec probe) of the test. */
  marker: string;
  /** Scratch directory of the test (files the containers and exec probes share). */
  dir: string;
  /** Every status update, per pod name, from the kubelet's creation on. */
  history: Map<string, Seen[]>;
}

const byTest = new Map<string, Harness[]>();

export interface KubeletOptions {
  /** Node config `crashLoopBackOff.maxContainerRestartPeriod`. */
  maxContainerRestartPeriodMs?: number;
}

/** A kubelet over a fresh process runtime, closed by {@link stopKubelets}(testId). */
export function startKubelet(testId: string, options: KubeletOptions = {}): Harness {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), 'probelet-e2e-')));
  const runtime = createProcessRuntime({ runDir: join(dir, 'run') });
  const kubelet = new Kubelet({ runtime, ...options });
  const history = new Map<string, Seen[]>();
  kubelet.onPodStatus((pod) => {
    const name = pod.metadata?.name ?? '';
    let seen = history.get(name);
    if (!seen) history.set(name, (seen = []));
    seen.push({ atMs: performance.now(), pod: structuredClone(pod) });
  });
  const harness: Harness = { kubelet, marker: markerEnv().marker, dir, history };
  const list = byTest.get(testId) ?? [];
  list.push(harness);
  byTest.set(testId, list);
  return harness;
}

/**
 * Upstream deletes every test pod with grace 0 afterwards; then the kubelet is closed and
 * nothing carrying the test's marker may be left alive.
 */
export async function stopKubelets(testId: string): Promise<void> {
  const list = byTest.get(testId) ?? [];
  byTest.delete(testId);
  const leaked: string[] = [];
  for (const h of list) {
    await Promise.all(h.kubelet.listPods().map((p) => h.kubelet.deletePod(p.metadata?.uid ?? '', 0)));
    await h.kubelet.close();
    // Exit of a group leader is seen before its last children are reaped: allow a moment.
    if (!(await eventually(() => aliveWithMarker(h.marker).length === 0, 2000, 50))) {
      leaked.push(...aliveWithMarker(h.marker).map((p) => `${p.pid} ${p.cmdline}`));
      killMarked(h.marker);
    }
    rmSync(h.dir, { recursive: true, force: true });
  }
  expect(leaked, 'processes left running after kubelet.close()').toEqual([]);
}

/** A container whose processes carry the harness's marker. */
export function container(h: Harness, name: string, command: string[], extra: Partial<Container> = {}): Container {
  return {
    name,
    image: 'registry.k8s.io/e2e-test-images/busybox:1.36.1-1',
    command,
    ...extra,
    env: [{ name: MARKER_VAR, value: h.marker }, ...(extra.env ?? [])],
  };
}

/** `sh -c <script>` */
export function sh(script: string): string[] {
  return ['/bin/sh', '-c', script];
}

/** A Node fixture server as a container command (`node <fixture>`), configured through env. */
export function nodeFixture(h: Harness, name: string, script: string, env: Record<string, string>, extra: Partial<Container> = {}): Container {
  return container(h, name, [process.execPath, fixture(script)], {
    ...extra,
    env: [...Object.entries(env).map(([k, v]) => ({ name: k, value: v })), ...(extra.env ?? [])],
  });
}

/** A pod of regular containers. */
export function pod(name: string, containers: Container[], spec: Partial<PodSpec> = {}): Pod {
  return { apiVersion: 'v1', kind: 'Pod', metadata: { name, namespace: 'default' }, spec: { ...spec, containers } };
}

/** §M: the probed container as a sidecar (init container, `restartPolicy: Always`) next to `main` running `sleep 600`. */
export function sidecarPod(h: Harness, name: string, sidecar: Container, spec: Partial<PodSpec> = {}): Pod {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: 'default' },
    spec: {
      ...spec,
      initContainers: [{ ...sidecar, restartPolicy: 'Always' }],
      containers: [container(h, 'main', ['sleep', '600'])],
    },
  };
}

/** Admits and runs the pods; every one must be accepted. Returns them as admitted (with UIDs). */
export function run(h: Harness, ...pods: Pod[]): Pod[] {
  const result = h.kubelet.addPods(pods);
  expect(result.errors).toEqual([]);
  return result.pods;
}

export function current(h: Harness, podName: string): Pod | undefined {
  return h.kubelet.listPods().find((p) => p.metadata?.name === podName);
}

export type ContainerKind = 'regular' | 'sidecar';

export function statusOf(p: Pod | undefined, containerName: string, kind: ContainerKind = 'regular'): ContainerStatus | undefined {
  const list = kind === 'sidecar' ? p?.status?.initContainerStatuses : p?.status?.containerStatuses;
  return list?.find((s) => s.name === containerName);
}

export function condition(p: Pod | undefined, type: string): PodCondition | undefined {
  return p?.status?.conditions?.find((c) => c.type === type);
}

export function isReady(p: Pod | undefined): boolean {
  return condition(p, 'Ready')?.status === 'True';
}

export function restarts(h: Harness, podName: string, containerName: string, kind: ContainerKind = 'regular'): number {
  return statusOf(current(h, podName), containerName, kind)?.restartCount ?? 0;
}

/** Every restart count the container ever showed, in order. */
export function restartHistory(h: Harness, podName: string, containerName: string, kind: ContainerKind = 'regular'): number[] {
  return (h.history.get(podName) ?? []).map((s) => statusOf(s.pod, containerName, kind)?.restartCount ?? 0);
}

/** The upstream "liveness test" check: the count never decreases. */
export function expectMonotonic(counts: readonly number[]): void {
  for (let i = 1; i < counts.length; i++) {
    expect(counts[i], `restart count decreased at update ${i}: ${counts.join(',')}`).toBeGreaterThanOrEqual(counts[i - 1] ?? 0);
  }
}

/** Waits until the container runs (or ran) — upstream waits for running-or-terminated first. */
export async function waitRunning(h: Harness, podName: string, containerName: string, kind: ContainerKind = 'regular', timeoutMs = 10_000): Promise<ContainerStatus> {
  return vi.waitFor(
    () => {
      const s = statusOf(current(h, podName), containerName, kind);
      if (!s?.state?.running && !s?.state?.terminated) throw new Error(`${podName}/${containerName} not running yet`);
      return s;
    },
    { timeout: timeoutMs, interval: 50 },
  );
}

/** Waits until the container has restarted at least `min` times; returns the time it took from the call. */
export async function waitRestarts(
  h: Harness,
  podName: string,
  containerName: string,
  min: number,
  timeoutMs: number,
  kind: ContainerKind = 'regular',
): Promise<number> {
  const from = performance.now();
  await vi.waitFor(
    () => {
      const n = restarts(h, podName, containerName, kind);
      if (n < min) throw new Error(`${podName}/${containerName}: ${n} restarts, want ≥ ${min}`);
    },
    { timeout: timeoutMs, interval: 100 },
  );
  return performance.now() - from;
}

export async function waitReady(h: Harness, podName: string, timeoutMs: number): Promise<Pod> {
  return vi.waitFor(
    () => {
      const p = current(h, podName);
      if (!isReady(p) || !p) throw new Error(`${podName} not Ready`);
      return p;
    },
    { timeout: timeoutMs, interval: 50 },
  );
}

export function events(h: Harness, podName: string): Event[] {
  return h.kubelet.listEvents({ podName });
}

export function eventsWith(h: Harness, podName: string, reason: string, messagePart: string): Event[] {
  return events(h, podName).filter((e) => e.reason === reason && (e.message ?? '').includes(messagePart));
}

export async function waitEvent(h: Harness, podName: string, reason: string, messagePart: string, timeoutMs: number): Promise<Event> {
  return vi.waitFor(
    () => {
      const e = eventsWith(h, podName, reason, messagePart)[0];
      if (!e) throw new Error(`no ${reason} event containing ${JSON.stringify(messagePart)} for ${podName}`);
      return e;
    },
    { timeout: timeoutMs, interval: 100 },
  );
}

/** `prober_probe_total` for one container, probe type (`Liveness`…) and result (`successful`…). */
export async function probeCount(h: Harness, podName: string, containerName: string, probeType: string, result: string): Promise<number> {
  const text = await h.kubelet.probeMetrics();
  let total = 0;
  for (const line of text.split('\n')) {
    if (!line.startsWith('prober_probe_total{')) continue;
    if (
      line.includes(`probe_type="${probeType}"`) &&
      line.includes(`result="${result}"`) &&
      line.includes(`container="${containerName}"`) &&
      line.includes(`pod="${podName}"`)
    ) {
      total += Number(line.slice(line.lastIndexOf(' ') + 1));
    }
  }
  return total;
}

/** Real-time pause, for the "must not happen within the window" checks only. */
export function pause(ms: number): Promise<void> {
  return new Promise((resolve) => {
    setTimeout(resolve, ms);
  });
}

/** Milliseconds between two API timestamps. */
export function between(fromIso: string | undefined, toIso: string | undefined): number {
  if (!fromIso || !toIso) throw new Error(`missing timestamp: ${String(fromIso)} → ${String(toIso)}`);
  return Date.parse(toIso) - Date.parse(fromIso);
}

/** Polls `probe` (vi.waitFor) until it returns something other than undefined; returns that. */
export async function until<T>(probe: () => T | undefined | Promise<T | undefined>, timeoutMs: number): Promise<T> {
  return vi.waitFor(
    async () => {
      const value = await probe();
      if (value === undefined) throw new Error(`condition not met within ${timeoutMs} ms`);
      return value;
    },
    { timeout: timeoutMs, interval: 50 },
  );
}
