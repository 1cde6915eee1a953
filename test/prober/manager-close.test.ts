/** close(): resolves once every worker the manager started has exited, however they exit. */
import { describe, expect, it } from 'vitest';
import {
  TEST_POD_UID,
  fixturePod,
  makeEngine,
  runningStatus,
  settle,
  testProbe,
} from '../helpers/engine.js';

describe('ProbeManager.close', () => {
  it('with no worker resolves at once; twice in a row too', async () => {
    const e = makeEngine();
    await e.manager.close();
    await e.manager.close();
    expect(e.manager.workerCount()).toBe(0);
  });

  it('waits for an in-flight probe; concurrent calls all resolve; workers that exited on their own count as exited', async () => {
    const e = makeEngine();
    e.prober.durationMs = 500;
    e.statuses.set(TEST_POD_UID, runningStatus(e.clock, { started: true }));
    e.manager.addPod(fixturePod('readiness', testProbe({ periodSeconds: 1 })));
    const other = { ...fixturePod('liveness'), metadata: { name: 'other', namespace: '', uid: 'other-uid' } };
    e.statuses.set('other-uid', { ...runningStatus(e.clock, { started: true }), phase: 'Succeeded' });
    e.manager.addPod(other);
    await e.clock.advance(100); // the other worker saw Succeeded and exited; readiness is mid-probe
    expect(e.manager.workerCount()).toBe(1);
    let closed = 0;
    const a = e.manager.close().then(() => closed++);
    const b = e.manager.close().then(() => closed++);
    await settle(e.clock);
    expect(closed).toBe(0);
    await e.clock.advance(400);
    await Promise.all([a, b]);
    expect(closed).toBe(2);
    expect(e.manager.workerCount()).toBe(0);
    expect(e.clock.pendingTimers()).toBe(0);
    e.manager.addPod(fixturePod('readiness')); // closed: nothing starts
    expect(e.manager.workerCount()).toBe(0);
  });
});
