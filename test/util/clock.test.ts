import { describe, expect, it } from 'vitest';
import { FakeClock, sleep } from '../../src/util/clock.js';
import { formatGoDuration } from '../../src/util/duration.js';

describe('FakeClock', () => {
  it('fires due timers in due order and leaves now() at start + ms', async () => {
    const clock = new FakeClock(1000);
    const fired: string[] = [];
    clock.setTimeout(() => fired.push(`b@${clock.now()}`), 200);
    clock.setTimeout(() => fired.push(`a@${clock.now()}`), 100);
    clock.setTimeout(() => fired.push('late'), 500);
    await clock.advance(300);
    expect(fired).toEqual(['a@1100', 'b@1200']);
    expect(clock.now()).toBe(1300);
    expect(clock.pendingTimers()).toBe(1);
  });

  it('fires timers scheduled by firing timers inside the same window, and settles promises between', async () => {
    const clock = new FakeClock();
    const seen: number[] = [];
    const loop = async (): Promise<void> => {
      for (let i = 0; i < 3; i++) {
        await sleep(clock, 10);
        await Promise.resolve();
        seen.push(clock.now());
      }
    };
    const done = loop();
    await clock.advance(30);
    await done;
    expect(seen).toEqual([10, 20, 30]);
  });

  it('clearTimeout cancels a timer', async () => {
    const clock = new FakeClock();
    let fired = false;
    const h = clock.setTimeout(() => (fired = true), 5);
    clock.clearTimeout(h);
    await clock.advance(10);
    expect(fired).toBe(false);
    expect(clock.pendingTimers()).toBe(0);
  });

  it('keeps (due, scheduling) order across thousands of timers, many cleared, from its heap', async () => {
    const clock = new FakeClock(0, { settleTurns: 1 });
    const fired: number[] = [];
    const expected: { due: number; n: number }[] = [];
    let n = 0;
    for (let i = 0; i < 5000; i++) {
      const due = (i * 7919) % 1000;
      const id = n++;
      const handle = clock.setTimeout(() => fired.push(id), due);
      if (i % 3 === 0) clock.clearTimeout(handle);
      else expected.push({ due, n: id });
    }
    expect(clock.pendingTimers()).toBe(expected.length);
    expect(clock.nextDue()).toBe(Math.min(...expected.map((e) => e.due)));
    await clock.advance(1000);
    expected.sort((a, b) => a.due - b.due || a.n - b.n);
    expect(fired).toEqual(expected.map((e) => e.n));
    expect(clock.pendingTimers()).toBe(0);
    expect(clock.nextDue()).toBeUndefined();
  });

  it('with settleTurns 1 still lets a fired timer\'s promise chain finish before the next timer', async () => {
    const clock = new FakeClock(0, { settleTurns: 1 });
    const seen: string[] = [];
    clock.setTimeout(() => {
      void (async () => {
        for (let i = 0; i < 50; i++) await Promise.resolve();
        seen.push('chain done');
      })();
    }, 10);
    clock.setTimeout(() => seen.push('next timer'), 10);
    await clock.advance(10);
    expect(seen).toEqual(['chain done', 'next timer']);
  });
});

describe('formatGoDuration', () => {
  it.each([
    [0, '0s'],
    [500, '500ms'],
    [1000, '1s'],
    [1500, '1.5s'],
    [80_000, '1m20s'],
    [300_000, '5m0s'],
    [3_600_000, '1h0m0s'],
  ])('%d ms → %s', (ms, want) => {
    expect(formatGoDuration(ms)).toBe(want);
  });
});
