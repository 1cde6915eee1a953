/**
 * More pods than one node holds: a simulated node (kubelet) per 110 pods, stepped in turn,
 * on worker threads or not — and the output the same either way.
 */
import { readdirSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { availableParallelism } from 'node:os';
import { beforeAll, describe, expect, it } from 'vitest';
import type { Event, Pod } from '../../src/api/types.js';
import { MAX_PODS_PER_NODE, simulationPlan } from '../../src/simulate/nodes.js';
import { admitForSimulation } from '../../src/simulate/pods.js';
import { simulate, type SimulationResult } from '../../src/simulate/simulation.js';
import { eventually } from '../helpers/processes.js';
import { behaviours, podWith } from './harness.js';

/** `n` pods of one container, each probed for liveness and readiness over HTTP. */
function manyPods(n: number): Pod[] {
  const pod = podWith({
    ports: [{ containerPort: 8080 }],
    readinessProbe: { httpGet: { path: '/ready', port: 8080 }, periodSeconds: 5 },
    livenessProbe: { httpGet: { path: '/healthz', port: 8080 }, periodSeconds: 10, failureThreshold: 2 },
  });
  const many = Array.from({ length: n }, (_, i) => ({ ...pod, metadata: { ...pod.metadata, name: `web-${i}` } }));
  const admitted = admitForSimulation(many);
  expect(admitted.errors).toEqual([]);
  return admitted.pods;
}

/**
 * Down for 15 s, healthy for a minute, then failing: Ready, then killed, then restarted.
 * (Not 20 s: liveness 2 × 10s kills at 20 s − δ after the start, the worker's ticker running δ ahead.)
 */
const SCRIPT = { c: 'down:15s,up:1m,fail' };

/** Ready at the first readiness probe (5 s period) after the app is up: δ and a relist after 15 s, within a period. */
function readyInTime(readyAtMs: number | null): boolean {
  return readyAtMs !== null && readyAtMs > 15_000 && readyAtMs <= 21_500;
}

interface Run {
  result: SimulationResult;
  /** Every status and event handed on, in the order it was. */
  reported: { t: number; pod?: Pod; event?: Event }[];
}

async function run(pods: Pod[], threads: number, forMs = 4 * 60_000, record = false): Promise<Run> {
  const reported: Run['reported'] = [];
  const result = await simulate({
    pods,
    behaviours: behaviours(SCRIPT),
    forMs,
    seed: 5,
    threads,
    record,
    onPod: (pod, t) => reported.push({ t, pod }),
    onEvent: (event, t) => reported.push({ t, event }),
  });
  return { result, reported };
}

/** The OS threads of this process (worker threads are among them). */
function osThreads(): number {
  return readdirSync('/proc/self/task').length;
}

describe('simulate: more pods than one node holds', () => {
  const pods = manyPods(2 * MAX_PODS_PER_NODE + 10);
  // libuv starts its thread pool at first use: started now, it cannot be taken for a thread left behind.
  beforeAll(async () => {
    await readFile(new URL(import.meta.url));
  });

  it('runs them on a node (kubelet) per 110 pods, as a cluster would, and hands on what they did in time order', async () => {
    const { result, reported } = await run(pods, 1);
    expect(result.pods.map((p) => p.pod.metadata?.name)).toEqual(pods.map((p) => p.metadata?.name));
    // Every pod played its script: Ready after 15 s, killed once its liveness failed twice.
    for (const p of result.pods) {
      expect(readyInTime(p.readyAtMs)).toBe(true);
      expect(p.containers[0]?.kills.length).toBeGreaterThanOrEqual(1);
    }
    const times = reported.map((r) => r.t);
    expect(times).toEqual([...times].sort((a, b) => a - b));
    // The node of each pod names its events: 110 on the first node, 110 on the second, the rest on a third.
    const hostOf = new Map<string, string>();
    for (const { event } of reported) if (event) hostOf.set(event.involvedObject.name ?? '', event.source?.host ?? '');
    expect(hostOf.get('web-0')).toBe('probelet-simulate');
    expect(hostOf.get('web-109')).toBe('probelet-simulate');
    expect(hostOf.get('web-110')).toBe('probelet-simulate-2');
    expect(hostOf.get('web-229')).toBe('probelet-simulate-3');
    // Container IDs stay unique across the nodes.
    const ids = new Set<string>();
    let statuses = 0;
    for (const { pod } of reported) {
      for (const s of pod?.status?.containerStatuses ?? []) {
        if (!s.containerID) continue;
        ids.add(`${s.containerID} ${pod?.metadata?.name ?? ''}`);
        statuses++;
      }
    }
    const byID = new Map<string, Set<string>>();
    for (const key of ids) {
      const [id = '', name = ''] = key.split(' ');
      byID.set(id, (byID.get(id) ?? new Set()).add(name));
    }
    expect(statuses).toBeGreaterThan(0);
    for (const names of byID.values()) expect(names.size).toBe(1);
  });

  it('gives the first node the very run its pods would have alone (the same seed), so 110 pods or fewer run as before', async () => {
    const first = pods.slice(0, MAX_PODS_PER_NODE);
    const alone = await run(first, 1);
    const together = await run(pods, 1);
    expect(JSON.stringify(together.result.pods.slice(0, MAX_PODS_PER_NODE))).toBe(JSON.stringify(alone.result.pods));
    const ofFirst = (r: Run): string =>
      JSON.stringify(r.reported.filter((x) => first.some((p) => p.metadata?.name === (x.pod?.metadata?.name ?? x.event?.involvedObject.name))));
    expect(ofFirst(together)).toBe(ofFirst(alone));
  });

  it('prints the same on worker threads as in one thread, and leaves no thread behind', async () => {
    const before = osThreads();
    // Two threads for three nodes: an uneven share. (Each thread of a source checkout loads
    // TypeScript to run the .ts: a few seconds of CPU that the other test files share.)
    const threaded = await run(pods, 2, 4 * 60_000, true);
    // A terminated thread may take a moment to be joined: waited for, up to 5 s.
    expect(await eventually(() => osThreads() <= before)).toBe(true);
    const single = await run(pods, 1, 4 * 60_000, true);
    expect(threaded.result.probes).toBe(single.result.probes);
    // The whole result, the dashboard's timeline (every pod, event and probe history) included.
    expect(single.result.timeline?.probes).toHaveLength(2 * pods.length);
    expect(JSON.stringify(threaded.result)).toBe(JSON.stringify(single.result));
    expect(JSON.stringify(threaded.reported)).toBe(JSON.stringify(single.reported));
  });

  it('starts the nodes even for a span of 0, as one node does', async () => {
    const first = pods.slice(0, MAX_PODS_PER_NODE);
    const alone = await run(first, 1, 0);
    const together = await run(pods, 1, 0);
    expect(alone.reported.length).toBeGreaterThan(0);
    const ofFirst = together.reported.filter((x) => first.some((p) => p.metadata?.name === (x.pod?.metadata?.name ?? x.event?.involvedObject.name)));
    expect(JSON.stringify(ofFirst)).toBe(JSON.stringify(alone.reported));
  });

  it('lets a throwing callback stop nothing, as on one node (events ignored, pod statuses a warning)', async () => {
    const warnings: string[] = [];
    const onWarning = (w: Error): void => void warnings.push(w.message);
    process.on('warning', onWarning);
    // Once each (a warning per status would flood the test's output), at the first call.
    let eventThrown = false;
    let podThrown = false;
    try {
      const result = await simulate({
        pods,
        behaviours: behaviours(SCRIPT),
        forMs: 2 * 60_000,
        seed: 5,
        // The callbacks are called in this thread whatever the threads: none needed here.
        threads: 1,
        onEvent: () => {
          if (eventThrown) return;
          eventThrown = true;
          throw new Error('viewer broke');
        },
        onPod: () => {
          if (podThrown) return;
          podThrown = true;
          throw new Error('table broke');
        },
      });
      expect(eventThrown && podThrown).toBe(true);
      expect(result.pods.every((p) => readyInTime(p.readyAtMs))).toBe(true);
      await new Promise((resolve) => setImmediate(resolve));
      expect(warnings.some((w) => w.startsWith('pod status listener failed: Error: table broke'))).toBe(true);
      expect(warnings.some((w) => w.includes('viewer broke'))).toBe(false);
    } finally {
      process.off('warning', onWarning);
    }
  });

  it('ends the threads it started when it cannot start them all, and fails with the reason', async () => {
    const before = osThreads();
    // A pod that cannot be copied to a thread (a function in it), on the second thread's nodes.
    const broken = pods.map((p, i) => (i === pods.length - 1 ? { ...p, metadata: { ...p.metadata, annotations: { x: (() => 'no') as unknown as string } } } : p));
    await expect(simulate({ pods: broken, behaviours: behaviours(SCRIPT), forMs: 60_000, seed: 5, threads: 2 })).rejects.toThrow(/could not be cloned/);
    expect(await eventually(() => osThreads() <= before)).toBe(true);
  });

  it('plans threads only for work that pays for them, never more than nodes, and refuses a bad count', () => {
    const plan = (n: number, forMs: number, threads?: number): number =>
      simulationPlan({ pods: manyPods(n), behaviours: new Map(), forMs, seed: 1, ...(threads === undefined ? {} : { threads }) }).threads;
    // 230 pods of two probes (0.3 ticks a second each) for an hour: 248,400 ticks, one thread.
    expect(plan(230, 3_600_000)).toBe(1);
    expect(plan(230, 3_600_000, 8)).toBe(3);
    expect(plan(100, 3_600_000, 8)).toBe(1);
    // 1,000 such pods for 10 h: 10.8 M ticks, a thread per core (at most 4).
    expect(plan(1000, 10 * 3_600_000)).toBe(Math.min(availableParallelism(), 4));
    for (const bad of [0, -1, 2.5, Number.NaN]) expect(() => plan(230, 60_000, bad)).toThrow(/threads: expected a whole number of at least 1/);
  });
});
