/**
 * The worker's run loop on a FakeClock (§4.2): jitter window (D7), fixed-rate schedule,
 * overrun, manual trigger re-phasing, stop between probes, clean-up on exit (T19).
 */
import { describe, expect, it } from 'vitest';
import type { Pod } from '../../src/api/types.js';
import { ProbeWorker } from '../../src/prober/worker.js';
import type { ProbeType, ResultUpdate } from '../../src/prober/types.js';
import {
  ALL_KINDS,
  TEST_CONTAINER_ID,
  TEST_CONTAINER_NAME,
  TEST_POD_UID,
  containerOf,
  fixturePod,
  makeEngine,
  proberSeries,
  runningStatus,
  settle,
  testProbe,
  type Engine,
} from '../helpers/engine.js';

/** Registers the fixture pod with a readiness probe of `periodSeconds` and a started, running container. */
function startReadiness(e: Engine, periodSeconds: number): Pod {
  const pod = fixturePod('readiness', testProbe({ periodSeconds }));
  e.statuses.set(TEST_POD_UID, runningStatus(e.clock, { started: true }));
  e.manager.addPod(pod);
  return pod;
}

function callTimes(e: Engine, t0: number): number[] {
  return e.prober.calls.map((c) => c.at - t0);
}

describe('run loop timing', () => {
  it('first probe immediately, then fixed rate start-to-start', async () => {
    const e = makeEngine();
    const t0 = e.clock.now();
    e.prober.durationMs = 300;
    startReadiness(e, 1);
    await e.clock.advance(3_100);
    expect(callTimes(e, t0)).toEqual([0, 1_000, 2_000, 3_000]);
  });

  it('a probe overrunning its period is followed at once by one probe; extra ticks are dropped', async () => {
    const e = makeEngine();
    const t0 = e.clock.now();
    e.prober.durationMs = 2_500;
    startReadiness(e, 1);
    await e.clock.advance(8_000);
    expect(callTimes(e, t0)).toEqual([0, 2_500, 5_000, 7_500]);
  });

  it('a manual trigger probes now and re-phases the schedule', async () => {
    const e = makeEngine();
    const t0 = e.clock.now();
    startReadiness(e, 10);
    await e.clock.advance(3_000);
    e.manager.getWorker(TEST_POD_UID, TEST_CONTAINER_NAME, 'readiness')?.trigger();
    await e.clock.advance(21_000);
    expect(callTimes(e, t0)).toEqual([0, 3_000, 13_000, 23_000]);
  });

  it('triggers while a probe is in flight collapse into one immediate probe', async () => {
    const e = makeEngine();
    const t0 = e.clock.now();
    e.prober.durationMs = 500;
    startReadiness(e, 10);
    await e.clock.advance(100);
    const w = e.manager.getWorker(TEST_POD_UID, TEST_CONTAINER_NAME, 'readiness');
    w?.trigger();
    w?.trigger();
    await e.clock.advance(2_000);
    expect(callTimes(e, t0)).toEqual([0, 500]);
  });

  it('stop takes effect between probes: the in-flight probe completes and publishes', async () => {
    const e = makeEngine();
    e.prober.durationMs = 500;
    const updates: ResultUpdate[] = [];
    e.readiness.subscribe((u) => updates.push(u));
    startReadiness(e, 1);
    await e.clock.advance(200);
    const w = e.manager.getWorker(TEST_POD_UID, TEST_CONTAINER_NAME, 'readiness');
    w?.stop();
    expect(e.manager.workerCount()).toBe(1); // asynchronous: still there mid-probe
    await e.clock.advance(300);
    expect(updates.map((u) => u.result)).toEqual(['failure', 'success']); // seed, then the late verdict
    expect(e.manager.workerCount()).toBe(0);
    expect(e.readiness.get(TEST_CONTAINER_ID)).toBeUndefined();
    await e.clock.advance(5_000);
    expect(e.prober.calls).toHaveLength(1);
    expect(e.clock.pendingTimers()).toBe(0);
  });

  it('a prober that throws does not kill the worker', async () => {
    const e = makeEngine();
    e.prober.throws = new Error('boom');
    startReadiness(e, 1);
    await e.clock.advance(2_000);
    expect(e.prober.calls).toHaveLength(3);
    expect(e.manager.workerCount()).toBe(1);
    e.prober.throws = undefined;
    await e.clock.advance(1_000);
    expect(e.readiness.get(TEST_CONTAINER_ID)).toBe('success');
  });

  it('doProbe saying stop ends the loop and cleans up', async () => {
    const e = makeEngine();
    startReadiness(e, 1);
    await e.clock.advance(1_000);
    expect(e.readiness.get(TEST_CONTAINER_ID)).toBe('success');
    e.statuses.set(TEST_POD_UID, { ...runningStatus(e.clock, { started: true }), phase: 'Succeeded' });
    await e.clock.advance(1_000);
    expect(e.manager.workerCount()).toBe(0);
    expect(e.readiness.size).toBe(0);
    expect(e.clock.pendingTimers()).toBe(0);
  });
});

describe('start-up jitter (D7)', () => {
  it('a worker started within one period of the manager start sleeps random() × period first', async () => {
    const e = makeEngine({ startTime: undefined, random: () => 0.25 });
    const t0 = e.clock.now();
    startReadiness(e, 10);
    await e.clock.advance(2_499);
    expect(e.prober.calls).toHaveLength(0);
    await e.clock.advance(1);
    expect(callTimes(e, t0)).toEqual([2_500]);
    await e.clock.advance(10_000);
    expect(callTimes(e, t0)).toEqual([2_500, 12_500]);
  });

  it('a worker started one period or more after the manager start probes at once', async () => {
    const e = makeEngine({ startTime: undefined, random: () => 0.25 });
    await e.clock.advance(10_000);
    const t0 = e.clock.now();
    startReadiness(e, 10);
    await settle(e.clock);
    expect(callTimes(e, t0)).toEqual([0]);
  });

  it('the window is per worker period: a long period still jitters after a short one would not', async () => {
    const e = makeEngine({ startTime: undefined, random: () => 0.5 });
    await e.clock.advance(5_000);
    const t0 = e.clock.now();
    startReadiness(e, 10); // 10 s period > 5 s since start
    await settle(e.clock);
    expect(e.prober.calls).toHaveLength(0);
    await e.clock.advance(5_000);
    expect(callTimes(e, t0)).toEqual([5_000]);
  });

  it('stop during the jitter sleep exits without probing and leaves no timer', async () => {
    const e = makeEngine({ startTime: undefined, random: () => 0.9 });
    const pod = startReadiness(e, 10);
    await e.clock.advance(1_000);
    e.manager.removePod(pod);
    await settle(e.clock);
    expect(e.manager.workerCount()).toBe(0);
    expect(e.clock.pendingTimers()).toBe(0);
    expect(e.prober.calls).toHaveLength(0);
  });
});

describe('T19 clean-up on exit', () => {
  for (const kind of ALL_KINDS) {
    it(`${kind}: stop ×10, then the cached result, the registration and the series are gone`, async () => {
      const e = makeEngine();
      const pod = fixturePod(kind);
      e.statuses.set(TEST_POD_UID, runningStatus(e.clock, { started: kind !== 'startup' }));
      e.manager.addPod(pod);
      await settle(e.clock);
      expect(e.resultsFor(kind).get(TEST_CONTAINER_ID)).toBe('success');
      expect((await proberSeries(e.registry)).length).toBeGreaterThan(0);
      const w = e.manager.getWorker(TEST_POD_UID, TEST_CONTAINER_NAME, kind);
      expect(w).toBeDefined();
      for (let i = 0; i < 10; i++) w?.stop();
      await w?.run();
      expect(e.resultsFor(kind).get(TEST_CONTAINER_ID)).toBeUndefined();
      expect(e.manager.getWorker(TEST_POD_UID, TEST_CONTAINER_NAME, kind)).toBeUndefined();
      expect(await proberSeries(e.registry)).toEqual([]);
      expect(e.clock.pendingTimers()).toBe(0);
    });
  }
});

describe('unregistered workers', () => {
  function unregistered(e: Engine, kind: ProbeType): ProbeWorker {
    const pod = fixturePod(kind);
    return new ProbeWorker(e.manager, kind, pod, containerOf(pod));
  }

  it('run() works on a worker built with new, and its exit leaves a registered twin alone', async () => {
    const e = makeEngine();
    e.statuses.set(TEST_POD_UID, runningStatus(e.clock, { started: true }));
    e.manager.addPod(fixturePod('liveness'));
    const registered = e.manager.getWorker(TEST_POD_UID, TEST_CONTAINER_NAME, 'liveness');
    const loose = unregistered(e, 'liveness');
    const done = loose.run();
    expect(loose.run()).toBe(done);
    await e.clock.advance(2_000);
    expect(e.prober.calls.length).toBeGreaterThanOrEqual(4);
    loose.stop();
    await done;
    expect(e.manager.getWorker(TEST_POD_UID, TEST_CONTAINER_NAME, 'liveness')).toBe(registered);
    expect(e.manager.workerCount()).toBe(1);
    await e.manager.close();
    expect(e.manager.workerCount()).toBe(0);
    expect(e.clock.pendingTimers()).toBe(0);
  });
});
