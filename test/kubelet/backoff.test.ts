import { describe, expect, it } from 'vitest';
import type { Pod } from '../../src/api/types.js';
import {
  BACK_OFF_EVENT_REASON,
  CRASH_LOOP_BACK_OFF_REASON,
  CrashLoopBackOff,
  backOffEventMessage,
  crashLoopBackOffKey,
  crashLoopBackOffMessage,
} from '../../src/kubelet/backoff.js';
import { FakeClock } from '../../src/util/clock.js';

const pod: Pod = { metadata: { name: 'web', namespace: 'default', uid: 'uid-1' }, spec: { containers: [] } };
const KEY = 'web_default_uid-1_app_x';

/**
 * Simulates a container that crashes `runMs` after each start, restarted by a kubelet that
 * asks the gate on every 1 s sync. Returns the wait before each restart, in seconds.
 */
async function crashLoop(backOff: CrashLoopBackOff, clock: FakeClock, restarts: number, runMs: number): Promise<number[]> {
  const waits: number[] = [];
  for (let i = 0; i < restarts; i++) {
    await clock.advance(runMs);
    const finishedAt = clock.now();
    let waited = 0;
    while (backOff.check(KEY, finishedAt).inBackOff) {
      waited += 1000;
      await clock.advance(1000);
    }
    waits.push(waited / 1000);
  }
  return waits;
}

describe('CrashLoopBackOff', () => {
  it('restarts immediately, then waits 10, 20, 40, 80, 160, 300, 300 s', async () => {
    const clock = new FakeClock(1_000_000);
    const backOff = new CrashLoopBackOff({ clock });
    expect(await crashLoop(backOff, clock, 8, 1000)).toEqual([0, 10, 20, 40, 80, 160, 300, 300]);
  });

  it('reports the step in force and the time left while throttled', async () => {
    const clock = new FakeClock(0);
    const backOff = new CrashLoopBackOff({ clock });
    expect(backOff.check(KEY, 0)).toEqual({ inBackOff: false, delayMs: 10_000, remainingMs: 0 });
    await clock.advance(3000);
    expect(backOff.check(KEY, 1000)).toEqual({ inBackOff: true, delayMs: 10_000, remainingMs: 8000 });
    expect(backOff.isInBackOff(KEY, 1000)).toBe(true);
    await clock.advance(7999);
    expect(backOff.check(KEY, 1000).inBackOff).toBe(true);
    await clock.advance(1);
    // now − finishedAt == 10 s: no longer "< back-off", so allowed, and the step doubles.
    expect(backOff.check(KEY, 1000)).toEqual({ inBackOff: false, delayMs: 20_000, remainingMs: 0 });
  });

  it('starts over when the container ran more than 600 s after the last step', async () => {
    const clock = new FakeClock(0);
    const backOff = new CrashLoopBackOff({ clock });
    expect(await crashLoop(backOff, clock, 4, 1000)).toEqual([0, 10, 20, 40]);
    expect(backOff.get(KEY)).toBe(80_000);
    // Exactly 600 s of running is not enough ("more than").
    expect(await crashLoop(backOff, clock, 1, 600_000)).toEqual([80]);
    // More than 600 s: immediate restart, next step back at 10 s.
    expect(await crashLoop(backOff, clock, 3, 600_001)).toEqual([0, 0, 0]);
    expect(backOff.get(KEY)).toBe(10_000);
    expect(await crashLoop(backOff, clock, 3, 1000)).toEqual([10, 20, 40]);
  });

  it('keys are independent', () => {
    const clock = new FakeClock(0);
    const backOff = new CrashLoopBackOff({ clock });
    backOff.check('a', 0);
    expect(backOff.check('a', 0).inBackOff).toBe(true);
    expect(backOff.check('b', 0).inBackOff).toBe(false);
    backOff.reset('a');
    expect(backOff.check('a', 0).inBackOff).toBe(false);
  });

  it('a configured cap below 10 s lowers the initial delay to it', async () => {
    const clock = new FakeClock(0);
    const five = new CrashLoopBackOff({ clock, maxContainerRestartPeriodMs: 5000 });
    expect([five.initialMs, five.maxMs]).toEqual([5000, 5000]);
    expect(await crashLoop(five, clock, 4, 1000)).toEqual([0, 5, 5, 5]);
    const sixty = new CrashLoopBackOff({ clock, maxContainerRestartPeriodMs: 60_000 });
    expect(await crashLoop(sixty, clock, 6, 1000)).toEqual([0, 10, 20, 40, 60, 60]);
  });

  it('ReduceDefaultCrashLoopBackOffDecay: 1 s initial, 60 s cap', async () => {
    const clock = new FakeClock(0);
    const backOff = new CrashLoopBackOff({ clock, reduceDefaultDecay: true });
    expect(await crashLoop(backOff, clock, 9, 1000)).toEqual([0, 1, 2, 4, 8, 16, 32, 60, 60]);
  });

  it('rejects a cap outside 1–300 s', () => {
    expect(() => new CrashLoopBackOff({ maxContainerRestartPeriodMs: 999 })).toThrow(
      'crashLoopBackOff.maxContainerRestartPeriod must be between 1s and 300s, got 999ms',
    );
    expect(() => new CrashLoopBackOff({ maxContainerRestartPeriodMs: 300_001 })).toThrow(RangeError);
    expect(new CrashLoopBackOff({ maxContainerRestartPeriodMs: 1000 }).maxMs).toBe(1000);
    expect(new CrashLoopBackOff({ maxContainerRestartPeriodMs: 300_000 }).maxMs).toBe(300_000);
  });

  it('gc() drops entries not stepped for more than 600 s', async () => {
    const clock = new FakeClock(0);
    const backOff = new CrashLoopBackOff({ clock });
    backOff.check('old', 0);
    await clock.advance(300_000);
    backOff.check('recent', clock.now());
    await clock.advance(300_000);
    backOff.gc();
    expect(backOff.size()).toBe(2);
    await clock.advance(1);
    backOff.gc();
    expect(backOff.size()).toBe(1);
    expect(backOff.get('old')).toBe(0);
    expect(backOff.get('recent')).toBe(10_000);
  });
});

describe('crashLoopBackOffKey', () => {
  it('identifies pod and container, and changes with the image', () => {
    const key = crashLoopBackOffKey(pod, { name: 'app', image: 'nginx:1' });
    expect(key).toMatch(/^web_default_uid-1_app_[0-9a-f]+$/);
    expect(crashLoopBackOffKey(pod, { name: 'app', image: 'nginx:1' })).toBe(key);
    expect(crashLoopBackOffKey(pod, { name: 'app', image: 'nginx:2' })).not.toBe(key);
    expect(crashLoopBackOffKey(pod, { name: 'other', image: 'nginx:1' })).not.toBe(key);
  });
});

describe('messages', () => {
  it('are worded like the kubelet', () => {
    expect(CRASH_LOOP_BACK_OFF_REASON).toBe('CrashLoopBackOff');
    expect(BACK_OFF_EVENT_REASON).toBe('BackOff');
    expect(crashLoopBackOffMessage(40_000, 'app', pod)).toBe(
      'back-off 40s restarting failed container=app pod=web_default(uid-1)',
    );
    expect(crashLoopBackOffMessage(300_000, 'app', pod)).toBe(
      'back-off 5m0s restarting failed container=app pod=web_default(uid-1)',
    );
    expect(crashLoopBackOffMessage(160_000, 'app', pod)).toBe(
      'back-off 2m40s restarting failed container=app pod=web_default(uid-1)',
    );
    expect(backOffEventMessage('app', pod)).toBe('Back-off restarting failed container app in pod web_default(uid-1)');
  });
});
