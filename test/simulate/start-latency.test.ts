/**
 * When the simulated kubelet's workers first see a container (prober/start-latency.ts,
 * docs/timing-model.md): the worker's ticker runs δ ahead of its container and the kubelet
 * sees a start at the next relist, so a restart that falls on a probe tick is not probed at
 * that tick; the worker ages a container from `startedAt` cut to the whole second, so the first
 * probe after an initialDelaySeconds that is a multiple of the period comes a period after it
 * on a first start (δ over a second: the sandbox) and at the delay or a period after it on a
 * restart — inside the bounds `check` reports over the δ range.
 */
import { describe, expect, it } from 'vitest';
import type { Container, Probe } from '../../src/api/types.js';
import { setPodDefaults } from '../../src/api/defaults.js';
import { startupGuard } from '../../src/check/budgets.js';
import { admitPods } from '../../src/api/admit.js';
import { createEventRecorder } from '../../src/kubelet/events.js';
import { Kubelet } from '../../src/kubelet/kubelet.js';
import { Prober } from '../../src/prober/prober.js';
import { simulatedHandlers } from '../../src/simulate/handlers.js';
import { admitForSimulation } from '../../src/simulate/pods.js';
import { SimRuntime } from '../../src/simulate/runtime.js';
import { FIRST_START_LATENCY, firstProbeAgeBoundsMs, START_LATENCY } from '../../src/prober/start-latency.js';
import { FakeClock } from '../../src/util/clock.js';
import { simulate } from '../../src/simulate/simulation.js';
import { behaviours, podWith } from './harness.js';

const http = (extra: Partial<Probe> = {}): Probe => ({ httpGet: { path: '/healthz', port: 8080 }, ...extra });

async function kills(liveness: Probe, script: string, forMs: number, seed = 1): Promise<{ tMs: number; ageMs: number }[]> {
  const admitted = admitForSimulation([podWith({ livenessProbe: liveness })]);
  expect(admitted.errors).toEqual([]);
  const result = await simulate({ pods: admitted.pods, behaviours: behaviours({ c: script }), forMs, seed, threads: 1 });
  return (result.pods[0]?.containers[0]?.kills ?? []).map((k) => ({ tMs: k.tMs, ageMs: k.tMs - k.instanceStartMs }));
}

/**
 * The simulated kubelet as `simulate` builds it, but with `random` 0: the pod worker requeues a
 * throttled pod at the back-off's expiry itself, so a back-off restart falls on a probe tick.
 */
async function onTicks(model: boolean, forMs: number): Promise<{ kills: number[]; starts: number[] }> {
  const clock = new FakeClock(0, { settle: 'microtasks' });
  const runtime = new SimRuntime({ clock, behaviours: behaviours({ c: 'down' }), ...(model ? { startLatency: () => 250 } : {}) });
  const recorder = createEventRecorder({ clock });
  const prober = new Prober({
    runner: { runInContainer: (id, cmd, ms) => runtime.execSync(id, cmd, ms) },
    recorder,
    clock,
    handlers: simulatedHandlers(runtime, clock),
    httpHandlerReadsOnly: true,
  });
  const kubelet = new Kubelet({ runtime, clock, random: () => 0, recorder, prober, admit: admitPods, flightRecorder: false, ...(model ? { relistPhaseMs: 500 } : {}) });
  const kills: number[] = [];
  const starts: number[] = [];
  recorder.subscribe((e) => {
    if (e.reason === 'Killing') kills.push(clock.now());
    if (e.reason === 'Started') starts.push(clock.now());
  });
  const admitted = admitForSimulation([podWith({ livenessProbe: http({ periodSeconds: 10, failureThreshold: 3 }) })]);
  expect(kubelet.addPods(admitted.pods).errors).toEqual([]);
  await clock.advance(forMs);
  let closed = false;
  void kubelet.close().then(() => (closed = true));
  while (!closed) await clock.advance(1000);
  return { kills, starts };
}

describe('a restart on a probe tick is not probed at that tick (the relist, δ)', () => {
  it('liveness 3 × 10s over an app that never answers: the back-off restart at 190 s, on a tick, lives three periods', async () => {
    // Restarts at 30, 60, 90, 120 (at once) and 190 (the 40 s back-off after the kill at 150,
    // on a tick of the worker): that instance is first probed a period later, killed at 220 s.
    const { kills, starts } = await onTicks(true, 4 * 60_000);
    expect(kills.slice(0, 6).map((t) => Math.round(t / 1000))).toEqual([30, 60, 90, 120, 150, 220]);
    expect(starts[5]).toBe(190_250);
    // Without the model (δ = 0, no relist) the tick at 190 s probed the new instance at age 0:
    // a failure counted too early, the kill a period early.
    const bare = await onTicks(false, 4 * 60_000);
    expect(bare.kills.slice(0, 6).map((t) => Math.round(t / 1000))).toEqual([30, 60, 90, 120, 150, 210]);
  });

  it('in simulate, every instance lives three periods before a back-off, and at most three after one (any phase)', async () => {
    const seen = await kills(http({ periodSeconds: 10, failureThreshold: 3 }), 'down', 6 * 60_000);
    expect(seen.slice(0, 5).map((k) => Math.round(k.tMs / 1000))).toEqual([30, 60, 90, 120, 150]);
    // The first start comes 1–2 s after its worker (the sandbox: SANDBOX_LATENCY), a restart 0.1–0.4 s.
    expect(seen[0]?.ageMs).toBeGreaterThan(28_000);
    expect(seen[0]?.ageMs).toBeLessThan(29_000);
    for (const k of seen.slice(1, 5)) {
      expect(k.ageMs).toBeGreaterThan(29_000);
      expect(k.ageMs).toBeLessThan(30_000);
    }
    // After a back-off the pod worker's jittered requeue restarts it at any phase of the ticks.
    for (const k of seen.slice(5)) {
      expect(k.ageMs).toBeGreaterThan(20_000);
      expect(k.ageMs).toBeLessThan(31_000);
    }
  });
});

describe('initialDelaySeconds that is a multiple of periodSeconds (kubernetes#130393)', () => {
  const liveness = http({ initialDelaySeconds: 10, periodSeconds: 10, failureThreshold: 3 });

  it('10/10/3: the first probe lands at 20 s − δ (δ of a first start: 1–2 s), so start-ups under 38 s live and 39 s is killed', async () => {
    expect(await kills(liveness, 'down:38s,up', 3 * 60_000)).toEqual([]);
    const killed = await kills(liveness, 'down:39s,up', 3 * 60_000);
    expect(killed.length).toBeGreaterThan(0);
    expect(killed[0]?.ageMs).toBeGreaterThan(38_000);
    expect(killed[0]?.ageMs).toBeLessThan(39_000);
  });

  it('a restart at once is first probed at the delay or a period after it, by where its start falls in its second (startedAt cut to the second)', async () => {
    // The worker ages the container from startedAt cut to the whole second: a restart δ after
    // the killing tick is probed at the delay unless a second boundary fell between the tick
    // and the start. Over seeds (each a phase of the ticks in the second) both happen.
    const ages = new Set<number>();
    for (const seed of [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12]) {
      const seen = await kills(liveness, 'down', 100_000, seed);
      // The restarts at once after the first kill (before any back-off).
      for (const k of seen.slice(1, 3)) ages.add(Math.round(k.ageMs / 10_000) * 10);
    }
    expect([...ages].sort()).toEqual([30, 40]);
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
    // A first start's δ is 1.05–1.9 s (FIRST_START_LATENCY: the sandbox, then the container);
    // the bounds are rounded outwards to a tenth of a second.
    [{ periodSeconds: 10, failureThreshold: 3 }, 28.1, 29, 20, 30],
    [{ initialDelaySeconds: 10, periodSeconds: 10, failureThreshold: 3 }, 38.1, 39, 29, 40],
    // Any phase: the first probe from a second before the delay (startedAt cut to the second).
    [{ initialDelaySeconds: 5, periodSeconds: 10, failureThreshold: 3 }, 28.1, 29, 24, 35],
    // A 1 s period: the sandbox and the relist can hide the new container from the first ticks.
    [{ periodSeconds: 1, failureThreshold: 3 }, 2.1, 4, 2, 4],
  ])('%j: killed on the first start between %s s and %s s (any phase: %s s – %s s)', (timing, earliest, latest, always, budget) => {
    const container = setPodDefaults(podWith({ livenessProbe: http(timing) })).spec?.containers[0] as Container;
    const guard = startupGuard(container);
    expect(guard?.firstStartKill.earliestSeconds).toBeCloseTo(earliest, 6);
    expect(guard?.firstStartKill.latestSeconds).toBeCloseTo(latest, 6);
    expect(guard?.alwaysSurvivesSeconds).toBe(always);
    expect(guard?.budgetSeconds).toBeCloseTo(budget, 6);
  });
});

describe('firstProbeAgeBoundsMs, computed once per timing (check asks for the same bounds from every rule)', () => {
  it('a repeated question gets the same bounds, and a different latency range its own', () => {
    const first = firstProbeAgeBoundsMs(10, 10);
    expect(firstProbeAgeBoundsMs(10, 10)).toBe(first);
    expect(Object.isFrozen(first)).toBe(true);
    // The same delay and period over a restart's latency (no sandbox) is another question.
    const restart = firstProbeAgeBoundsMs(10, 10, START_LATENCY);
    expect(restart).not.toEqual(first);
    expect(restart).toEqual(firstProbeAgeBoundsMs(10, 10, { ...START_LATENCY }));
    expect(firstProbeAgeBoundsMs(10, 10, FIRST_START_LATENCY)).toBe(first);
  });
});
