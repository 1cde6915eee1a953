/**
 * More pods than one node holds: a simulated node (kubelet) per 110 pods, stepped in turn,
 * on worker threads or not — and the output the same either way.
 */
import { readdirSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import type { Event, Pod } from '../../src/api/types.js';
import { MAX_PODS_PER_NODE } from '../../src/simulate/nodes.js';
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

/** Down for 20 s, healthy for a minute, then failing: Ready, then killed, then restarted. */
const SCRIPT = { c: 'down:20s,up:1m,fail' };

interface Run {
  result: SimulationResult;
  /** Every status and event handed on, in the order it was. */
  reported: { t: number; pod?: Pod; event?: Event }[];
}

async function run(pods: Pod[], threads: number, forMs = 4 * 60_000): Promise<Run> {
  const reported: Run['reported'] = [];
  const result = await simulate({
    pods,
    behaviours: behaviours(SCRIPT),
    forMs,
    seed: 5,
    threads,
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

  it('runs them on a node (kubelet) per 110 pods, as a cluster would, and hands on what they did in time order', async () => {
    const { result, reported } = await run(pods, 1);
    expect(result.pods.map((p) => p.pod.metadata?.name)).toEqual(pods.map((p) => p.metadata?.name));
    // Every pod played its script: Ready at +20s, killed once its liveness failed twice.
    for (const p of result.pods) {
      expect(p.readyAtMs).toBe(20_000);
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
    const threaded = await run(pods, 3);
    // A terminated thread may take a moment to be joined: waited for, up to 5 s.
    expect(await eventually(() => osThreads() <= before)).toBe(true);
    const single = await run(pods, 1);
    expect(threaded.result.probes).toBe(single.result.probes);
    expect(JSON.stringify(threaded.result)).toBe(JSON.stringify(single.result));
    expect(JSON.stringify(threaded.reported)).toBe(JSON.stringify(single.reported));
  });

  it('ends its threads when a caller callback throws, and fails with that error', async () => {
    const before = osThreads();
    await expect(
      simulate({
        pods,
        behaviours: behaviours(SCRIPT),
        forMs: 4 * 60_000,
        seed: 5,
        threads: 2,
        onEvent: (event) => {
          if (event.reason === 'Killing') throw new Error('viewer broke');
        },
      }),
    ).rejects.toThrow('viewer broke');
    expect(await eventually(() => osThreads() <= before)).toBe(true);
  });
});
