/**
 * More of the run loop's contract on a FakeClock: a trigger during the start-up jitter,
 * stop before the loop starts, run() after exit, a tick pending behind a long probe, and the
 * ticks of a worker on hold (taken in the timer's callback: `ProbeWorker.tick`).
 */
import { describe, expect, it } from 'vitest';
import { ProbeWorker } from '../../src/prober/worker.js';
import {
  TEST_CONTAINER_ID,
  TEST_CONTAINER_NAME,
  TEST_POD_UID,
  containerOf,
  fixturePod,
  makeEngine,
  runningContainer,
  runningStatus,
  settle,
  testProbe,
} from '../helpers/engine.js';

describe('run loop (more)', () => {
  it('a trigger during the jitter sleep: the probe after the sleep is followed at once by the triggered one', async () => {
    const e = makeEngine({ startTime: undefined, random: () => 0.5 });
    const t0 = e.clock.now();
    e.statuses.set(TEST_POD_UID, runningStatus(e.clock, { started: true }));
    e.manager.addPod(fixturePod('readiness', testProbe({ periodSeconds: 10 })));
    await e.clock.advance(1_000);
    e.manager.getWorker(TEST_POD_UID, TEST_CONTAINER_NAME, 'readiness')?.trigger();
    await e.clock.advance(4_000);
    expect(e.prober.calls.map((c) => c.at - t0)).toEqual([5_000, 5_000]);
    // Re-phased from the triggered probe.
    await e.clock.advance(10_000);
    expect(e.prober.calls.map((c) => c.at - t0)).toEqual([5_000, 5_000, 15_000]);
  });

  it('stop before the loop starts: no probe, no timer, run() resolves; run() after exit resolves too', async () => {
    const e = makeEngine();
    e.statuses.set(TEST_POD_UID, runningStatus(e.clock, { started: true }));
    const pod = fixturePod('liveness');
    const w = new ProbeWorker(e.manager, 'liveness', pod, containerOf(pod));
    w.stop();
    const done = w.run();
    await settle(e.clock);
    await done;
    expect(e.prober.calls).toHaveLength(0);
    expect(e.clock.pendingTimers()).toBe(0);
    expect(w.run()).toBe(done);
  });

  it('the manager’s workers resolve run() when asked after they started', async () => {
    const e = makeEngine();
    e.statuses.set(TEST_POD_UID, runningStatus(e.clock, { started: true }));
    const pod = fixturePod('readiness');
    e.manager.addPod(pod);
    await e.clock.advance(1_500);
    const w = e.manager.getWorker(TEST_POD_UID, TEST_CONTAINER_NAME, 'readiness');
    const done = w?.run();
    expect(w?.run()).toBe(done);
    e.manager.removePod(pod);
    await done;
    expect(e.manager.workerCount()).toBe(0);
    expect(await w?.run()).toBeUndefined();
    expect(e.clock.pendingTimers()).toBe(0);
  });

  it('a startup worker on hold probes nothing until a new instance, then probes it on the same phase; stop still ends it', async () => {
    const e = makeEngine();
    const t0 = e.clock.now();
    e.statuses.set(TEST_POD_UID, runningStatus(e.clock, { started: false }));
    const pod = fixturePod('startup', testProbe({ periodSeconds: 1 }));
    e.manager.addPod(pod);
    await e.clock.advance(100);
    expect(e.startup.get(TEST_CONTAINER_ID)).toBe('success');
    e.statuses.set(TEST_POD_UID, runningStatus(e.clock, { started: true }));
    await e.clock.advance(4_000);
    expect(e.prober.calls.map((c) => c.at - t0)).toEqual([0]);
    // The container restarted at +4.5 s: its startup probe runs at the next tick, +5 s.
    e.statuses.set(TEST_POD_UID, runningStatus(e.clock, { started: false, containerID: 'test://second' }));
    await e.clock.advance(1_000);
    expect(e.prober.calls.map((c) => [c.at - t0, c.containerID])).toEqual([
      [0, TEST_CONTAINER_ID],
      [5_000, 'test://second'],
    ]);
    expect(e.startup.get(TEST_CONTAINER_ID)).toBeUndefined();
    expect(e.startup.get('test://second')).toBe('success');
    await e.clock.advance(3_000);
    expect(e.prober.calls).toHaveLength(2);
    // A finished pod ends a held worker at its next tick, as a probe would.
    e.statuses.set(TEST_POD_UID, { ...runningStatus(e.clock, { started: true, containerID: 'test://second' }), phase: 'Succeeded' });
    await e.clock.advance(1_000);
    expect(e.manager.workerCount()).toBe(0);
    expect(e.clock.pendingTimers()).toBe(0);
    expect(e.startup.get('test://second')).toBeUndefined();
  });

  it('a status provider that throws at a held worker\'s tick neither escapes the timer nor ends the worker', async () => {
    const e = makeEngine();
    const t0 = e.clock.now();
    e.statuses.set(TEST_POD_UID, runningStatus(e.clock, { started: false }));
    e.manager.addPod(fixturePod('startup', testProbe({ periodSeconds: 1 })));
    await e.clock.advance(100);
    expect(e.startup.get(TEST_CONTAINER_ID)).toBe('success');
    const read = e.statuses.getPodStatus.bind(e.statuses);
    e.statuses.getPodStatus = () => {
      throw new Error('provider down');
    };
    await e.clock.advance(3_000); // rejected with "provider down" when the tick read the status unguarded
    expect(e.manager.workerCount()).toBe(1);
    // Back, with a new instance: probed at the next tick, on the schedule's phase.
    e.statuses.getPodStatus = read;
    e.statuses.set(TEST_POD_UID, runningStatus(e.clock, { started: false, containerID: 'test://second' }));
    await e.clock.advance(1_000);
    expect(e.prober.calls.map((c) => [c.at - t0, c.containerID])).toEqual([
      [0, TEST_CONTAINER_ID],
      [4_000, 'test://second'],
    ]);
  });

  it('null status lists (decoded JSON/YAML) are empty ones: a sidecar found among the init statuses is probed, a held worker\'s tick does not throw', async () => {
    const e = makeEngine();
    e.statuses.set(TEST_POD_UID, { phase: 'Running', containerStatuses: null, initContainerStatuses: [runningContainer(e.clock, { started: false })] } as never);
    e.manager.addPod(fixturePod('startup', testProbe({ periodSeconds: 1 })));
    await e.clock.advance(100);
    expect(e.prober.calls).toHaveLength(1);
    expect(e.startup.get(TEST_CONTAINER_ID)).toBe('success');
    // On hold; the container is being re-created (a status without an ID), no init statuses at all.
    const { containerID: _gone, ...noID } = runningContainer(e.clock, { started: false });
    e.statuses.set(TEST_POD_UID, { phase: 'Running', containerStatuses: [noID], initContainerStatuses: null } as never);
    await e.clock.advance(3_000);
    expect(e.prober.calls).toHaveLength(1);
    expect(e.manager.workerCount()).toBe(1);
  });
});
