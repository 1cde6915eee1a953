/**
 * Work per pod grows linearly with its containers. A pod of 1,000 containers took 34–93 s
 * and gigabytes to stop after a 2 s run: each sync looked every container up by a scan (n²
 * per sync), each SIGKILL read all of /proc, and each exit was a sync of its own. The scans
 * are proven gone here by counting the name reads of a status generation at n and 2n (ratio
 * about 2; 4 before), never by a wall-clock limit; the stop of a real pod of n and 2n
 * containers is timed in `npm run bench` (bench/pod-scale.mjs).
 */
import { describe, expect, it } from 'vitest';
import type { Pod } from '../../src/api/types.js';
import { generatePodStatus } from '../../src/kubelet/pod-status.js';

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
