/**
 * Work per pod grows linearly with its containers. A pod of 1,000 containers took 34–93 s
 * and gigabytes to stop after a 2 s run: each sync looked every container up by a scan (n²
 * per sync), each SIGKILL read all of /proc, and each exit was a sync of its own. The scans
 * are proven gone here by counting the name reads of a status generation at n and 2n (ratio
 * about 2; 4 before), never by a wall-clock limit; the stop of a real pod of n and 2n
 * containers is timed in `npm run bench` (bench/pod-scale.mjs).
 *
 * `simulate` of one pod of n containers: every readiness change of one container deep-copied,
 * compared, froze and re-serialized the statuses of all n (38 s of CPU for 2,000 containers
 * over 10 min of virtual time, 5 s for 1,000). Proved by the CPU time of a simulation at n
 * and 2n, the fastest of three rounds: 2.3–2.7 now, 4.4 before. (Not 2: a change still copies
 * the n references of the statuses list and scans the n containers for the pod's Ready
 * condition, as upstream does; docs/performance.md has the figures.)
 */
import { describe, expect, it } from 'vitest';
import type { Pod } from '../../src/api/types.js';
import { generatePodStatus } from '../../src/kubelet/pod-status.js';
import { admitForSimulation } from '../../src/simulate/pods.js';
import { startSimulation } from '../../src/simulate/simulation.js';

function bigPod(n: number, name = 'big'): Pod {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: 'default', uid: `uid-${name}-${n}` },
    spec: {
      terminationGracePeriodSeconds: 1,
      containers: Array.from({ length: n }, (_, i) => ({ name: `c${i}`, image: 'busybox', command: ['sleep', '300'] })),
    },
  };
}

describe('a pod of many containers', () => {
  it('generates a status with work linear in its containers (a lookup per container, not a scan)', () => {
    // Counted: every read of a container's or a previous status's name. A scan per container
    // read n² of them; a lookup reads each a few times.
    const nameReads = (n: number): number => {
      let reads = 0;
      const counted = <T extends object>(o: T): T =>
        new Proxy(o, {
          get(target, key, receiver) {
            if (key === 'name') reads++;
            return Reflect.get(target, key, receiver) as unknown;
          },
        });
      const pod = bigPod(n, `g${n}`);
      const records = new Map(
        (pod.spec?.containers ?? []).map((c, i) => [
          c.name,
          { spec: c, kind: 'regular' as const, restartCount: 0, current: { id: `id${i}`, podUID: 'u', name: c.name, attempt: 0, image: '', state: 'running' as const, createdAt: 0, startedAt: 0 } },
        ]),
      );
      const input = { pod, podIP: '127.0.0.1', initialized: true, records, previous: undefined, podIsTerminal: false };
      const previous = generatePodStatus(input);
      previous.containerStatuses = previous.containerStatuses?.map(counted);
      const spec = pod.spec;
      if (spec) spec.containers = spec.containers.map(counted);
      generatePodStatus({ ...input, previous });
      return reads;
    };
    expect(nameReads(1000) / nameReads(500)).toBeLessThan(2.5);
  });
});

/** One pod of `n` containers, each with a readiness and a liveness probe (long periods: the work is the pod's, not the probes'). */
function probedPod(n: number): Pod {
  const probe = (path: string) => ({ httpGet: { path, port: 8080 }, periodSeconds: 300 });
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: `p${n}`, namespace: 'default' },
    spec: { containers: Array.from({ length: n }, (_, i) => ({ name: `c${i}`, image: 'busybox', readinessProbe: probe('/ready'), livenessProbe: probe('/healthz') })) },
  };
}

/**
 * CPU ms of 6 min of virtual time of the pod, simulated as `probelet simulate` does it (pod
 * and event listeners on); all n containers must be Ready by then (they start one after
 * another, about 4 a second). A fixed span: the kubelet's own loops (relist, housekeeping)
 * cost n per second, so waiting for n containers to start would be n² by itself.
 */
async function cpuOfSixMinutes(n: number): Promise<number> {
  const [pod] = admitForSimulation([probedPod(n)]).pods;
  if (pod === undefined) throw new Error('pod rejected');
  let ready = false;
  let lines = 0;
  const before = process.cpuUsage();
  const sim = startSimulation({
    pods: [pod],
    behaviours: new Map(),
    seed: 1,
    onPod: (p) => {
      lines++;
      ready = (p.status?.conditions ?? []).some((c) => c.type === 'Ready' && c.status === 'True');
    },
    onEvent: () => void lines++,
  });
  await sim.advance(6 * 60_000);
  const used = process.cpuUsage(before);
  await sim.finish();
  expect(ready, `${n} containers Ready (${lines} changes seen)`).toBe(true);
  return (used.user + used.system) / 1000;
}

describe('simulate: one pod of many containers', () => {
  it('costs CPU linear in its containers (a readiness change shares the statuses it leaves alone)', async () => {
    const n = 600;
    // Warm the JIT up: the first rounds of a fresh process are the slowest.
    for (let i = 0; i < 2; i++) await cpuOfSixMinutes(n);
    const small: number[] = [];
    const large: number[] = [];
    for (let round = 0; round < 3; round++) {
      small.push(await cpuOfSixMinutes(n));
      large.push(await cpuOfSixMinutes(2 * n));
    }
    const ratio = Math.min(...large) / Math.min(...small);
    expect(ratio, `CPU ms at ${n}: ${small.map(Math.round).join(', ')}; at ${2 * n}: ${large.map(Math.round).join(', ')}`).toBeLessThan(3.3);
  }, 120_000);
});
