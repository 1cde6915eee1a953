import { describe, expect, it } from 'vitest';
import { FakeClock, sleep, yieldToEventLoop } from '../../src/util/clock.js';
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
    expect(await chainThenNextTimer(new FakeClock(0, { settleTurns: 1 }))).toEqual(['chain done', 'next timer']);
  });
});

describe('FakeClock settle: microtasks', () => {
  /** Timers whose chains run microtasks, one of them yielding to the event loop twice; what ran, in order. */
  async function story(clock: FakeClock): Promise<string[]> {
    const seen: string[] = [];
    const chain = async (name: string, yields: number): Promise<void> => {
      for (let i = 0; i < 20; i++) await Promise.resolve();
      for (let i = 0; i < yields; i++) {
        seen.push(`${name} yields`);
        await yieldToEventLoop();
        seen.push(`${name} resumes`);
      }
      seen.push(`${name} done`);
    };
    clock.setTimeout(() => void chain('a', 0), 10);
    clock.setTimeout(() => void chain('b', 2), 10);
    for (const [name, ms] of [['c', 10], ['d', 20], ['e', 20], ['f', 30]] as const) {
      clock.setTimeout(() => {
        seen.push(`${name} fired`);
        void chain(name, 0);
      }, ms);
    }
    await clock.advance(40);
    return seen;
  }

  it('lets a fired timer\'s promise chain finish before the next timer, as a turn does', async () => {
    expect(await chainThenNextTimer(new FakeClock(0, { settle: 'microtasks' }))).toEqual(['chain done', 'next timer']);
  });

  it('resumes a chain that yields to the event loop after the same timers as one turn per timer does', async () => {
    const turns = await story(new FakeClock(0, { settleTurns: 1 }));
    const microtasks = await story(new FakeClock(0, { settle: 'microtasks' }));
    expect(turns.indexOf('b resumes')).toBeGreaterThan(turns.indexOf('c fired'));
    expect(microtasks).toEqual(turns);
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

/** Two timers due together, the first starting a 50-step promise chain: what ran, in order. */
async function chainThenNextTimer(clock: FakeClock): Promise<string[]> {
  const seen: string[] = [];
  clock.setTimeout(() => {
    void (async () => {
      for (let i = 0; i < 50; i++) await Promise.resolve();
      seen.push('chain done');
    })();
  }, 10);
  clock.setTimeout(() => seen.push('next timer'), 10);
  await clock.advance(10);
  return seen;
}
