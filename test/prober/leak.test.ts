/** Nothing outlives its pod: 10,000 pods (30,000 workers) added, probed and removed. */
import { describe, expect, it } from 'vitest';
import type { Pod } from '../../src/api/types.js';
import { makeEngine, proberSeries, runningStatus, settle, testProbe } from '../helpers/engine.js';

const PODS = 10_000;

function podNumber(i: number): Pod {
  const probe = testProbe({ periodSeconds: 10 });
  return {
    metadata: { name: `pod-${i}`, namespace: 'leak', uid: `uid-${i}` },
    spec: {
      restartPolicy: 'Always',
      containers: [{ name: 'c', livenessProbe: probe, readinessProbe: probe, startupProbe: probe }],
    },
  };
}

describe('leaks', () => {
  for (const mode of ['probing', 'asleep in start-up jitter'] as const) {
    it(`add and remove ${PODS} pods (${mode}): no worker, timer, cached result or series is left`, async () => {
      const e = makeEngine(mode === 'probing' ? {} : { startTime: undefined });
      const pods = Array.from({ length: PODS }, (_, i) => podNumber(i));
      for (const pod of pods) {
        const uid = pod.metadata?.uid ?? '';
        e.statuses.set(uid, runningStatus(e.clock, { name: 'c', containerID: `test://${uid}`, started: true }));
        e.manager.addPod(pod);
      }
      expect(e.manager.workerCount()).toBe(3 * PODS);
      await settle(e.clock);
      expect(e.clock.pendingTimers()).toBe(3 * PODS);
      if (mode === 'probing') {
        // Liveness and readiness probed, startup seeded and idle (already started).
        expect(e.prober.calls).toHaveLength(2 * PODS);
        expect([e.liveness.size, e.readiness.size, e.startup.size]).toEqual([PODS, PODS, PODS]);
        expect((await proberSeries(e.registry)).length).toBeGreaterThan(0);
      }

      for (const pod of pods) e.manager.removePod(pod);
      await settle(e.clock);

      expect(e.manager.workerCount()).toBe(0);
      expect(e.clock.pendingTimers()).toBe(0);
      expect([e.liveness.size, e.readiness.size, e.startup.size]).toEqual([0, 0, 0]);
      expect(await proberSeries(e.registry)).toEqual([]);
      expect(await e.registry.metrics()).not.toMatch(/^prober_\w+\{/m);
      await e.manager.close();
    });
  }
});
