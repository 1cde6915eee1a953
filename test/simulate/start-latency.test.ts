/**
 * When the simulated kubelet's workers first see a container (prober/start-latency.ts,
 * docs/timing-model.md): the worker's ticker runs δ ahead of its container and the kubelet
 * sees a start at the next relist, so a restart that falls on a probe tick is not probed at
 * that tick, and the first probe after an initialDelaySeconds that is a multiple of the
 * period comes a period after it — inside the bounds `check` reports over the δ range.
 */
import { describe, expect, it } from 'vitest';
import type { Container, Probe } from '../../src/api/types.js';
import { setPodDefaults } from '../../src/api/defaults.js';
import { startupGuard } from '../../src/check/budgets.js';
import { admitForSimulation } from '../../src/simulate/pods.js';
import { simulate } from '../../src/simulate/simulation.js';
import { behaviours, podWith } from './harness.js';

const http = (extra: Partial<Probe> = {}): Probe => ({ httpGet: { path: '/healthz', port: 8080 }, ...extra });

async function kills(liveness: Probe, script: string, forMs: number, seed = 1): Promise<{ tMs: number; ageMs: number }[]> {
  const admitted = admitForSimulation([podWith({ livenessProbe: liveness })]);
  expect(admitted.errors).toEqual([]);
  const result = await simulate({ pods: admitted.pods, behaviours: behaviours({ c: script }), forMs, seed, threads: 1 });
  return (result.pods[0]?.containers[0]?.kills ?? []).map((k) => ({ tMs: k.tMs, ageMs: k.tMs - k.instanceStartMs }));
}

describe('a restart on a probe tick is not probed at that tick (the relist, δ)', () => {
  it('liveness 3 × 10s over an app that never answers: every instance lives three periods, back-off restarts included', async () => {
    // Restarts at 30, 60, 90, 120 (at once) and 190 (the 40 s back-off after the kill at 150,
    // on a tick of the worker): that instance is first probed at 200 − δ, killed at 220 − δ... 220.
    const seen = await kills(http({ periodSeconds: 10, failureThreshold: 3 }), 'down', 4 * 60_000);
    expect(seen.map((k) => Math.round(k.tMs / 1000))).toEqual([30, 60, 90, 120, 150, 220]);
    for (const k of seen) {
      expect(k.ageMs).toBeGreaterThan(29_000);
      expect(k.ageMs).toBeLessThan(30_000);
    }
  });
});

describe('initialDelaySeconds that is a multiple of periodSeconds (kubernetes#130393)', () => {
  const liveness = http({ initialDelaySeconds: 10, periodSeconds: 10, failureThreshold: 3 });

  it('10/10/3: the first probe lands at 20 s − δ, so start-ups under 40 s live and 40 s is killed', async () => {
    expect(await kills(liveness, 'down:39s,up', 3 * 60_000)).toEqual([]);
    const killed = await kills(liveness, 'down:40s,up', 3 * 60_000);
    expect(killed.length).toBeGreaterThan(0);
    expect(killed[0]?.ageMs).toBeGreaterThan(39_000);
    expect(killed[0]?.ageMs).toBeLessThan(40_000);
  });

  it.each([
    { initialDelaySeconds: 0, periodSeconds: 10, failureThreshold: 3 },
    { initialDelaySeconds: 10, periodSeconds: 10, failureThreshold: 3 },
    { initialDelaySeconds: 5, periodSeconds: 10, failureThreshold: 2 },
    { initialDelaySeconds: 0, periodSeconds: 1, failureThreshold: 3 },
    { initialDelaySeconds: 2, periodSeconds: 1, failureThreshold: 4 },
  ])('the first start is killed inside check firstStartKill window, whatever the seed: %j', async (timing) => {
    const probe = http(timing);
    const container = setPodDefaults(podWith({ livenessProbe: probe })).spec?.containers[0] as Container;
    const guard = startupGuard(container);
    expect(guard).toBeDefined();
    const window = guard?.firstStartKill ?? { earliestSeconds: NaN, latestSeconds: NaN };
    expect(window.earliestSeconds).toBeGreaterThanOrEqual(guard?.alwaysSurvivesSeconds ?? Infinity);
    expect(window.latestSeconds).toBeLessThanOrEqual(guard?.budgetSeconds ?? -Infinity);
    for (const seed of [1, 2, 3, 4, 5, 6, 7, 8]) {
      const [first] = await kills(probe, 'down', 2 * 60_000, seed);
      expect(first).toBeDefined();
      expect((first?.ageMs ?? NaN) / 1000).toBeGreaterThanOrEqual(window.earliestSeconds);
      expect((first?.ageMs ?? NaN) / 1000).toBeLessThanOrEqual(window.latestSeconds);
    }
  });
});

describe('startupGuard.firstStartKill: the δ bounds check reports', () => {
  it.each([
    [{ periodSeconds: 10, failureThreshold: 3 }, 29.6, 29.9, 20, 30],
    [{ initialDelaySeconds: 10, periodSeconds: 10, failureThreshold: 3 }, 39.6, 39.9, 30, 40],
    [{ initialDelaySeconds: 5, periodSeconds: 10, failureThreshold: 3 }, 29.6, 29.9, 25, 35],
    // A 1 s period: the relist can hide the new container from the first tick.
    [{ periodSeconds: 1, failureThreshold: 3 }, 2.6, 3.9, 2, 3.9],
  ])('%j: killed on the first start between %s s and %s s (any phase: %s s – %s s)', (timing, earliest, latest, always, budget) => {
    const container = setPodDefaults(podWith({ livenessProbe: http(timing) })).spec?.containers[0] as Container;
    const guard = startupGuard(container);
    expect(guard?.firstStartKill.earliestSeconds).toBeCloseTo(earliest, 6);
    expect(guard?.firstStartKill.latestSeconds).toBeCloseTo(latest, 6);
    expect(guard?.alwaysSurvivesSeconds).toBe(always);
    expect(guard?.budgetSeconds).toBeCloseTo(budget, 6);
  });
});
