/** The relist loop the CRI and Docker runtimes share (src/runtime/relist.ts), on a FakeClock. */
import { describe, expect, it } from 'vitest';
import { relistLoop } from '../../src/runtime/relist.js';
import { FakeClock } from '../../src/util/clock.js';

describe('relistLoop', () => {
  it("relists at the phase's instants, never two at once, goes on after a failed relist and stops for good", async () => {
    const clock = new FakeClock(10_250);
    const at: number[] = [];
    let release: (() => void) | undefined;
    const loop = relistLoop({
      clock,
      phaseMs: 300,
      relist: async () => {
        at.push(clock.now());
        if (at.length === 2) throw new Error('the runtime did not answer');
        if (at.length === 3) await new Promise<void>((resolve) => (release = resolve));
      },
    });
    loop.start();
    await clock.advance(2_100);
    // 10 300, 11 300 (failed), 12 300 (still under way at 12 350).
    expect(at).toEqual([10_300, 11_300, 12_300]);
    await loop.relistNow();
    expect(at).toHaveLength(3);
    release?.();
    await clock.advance(1_000);
    expect(at).toEqual([10_300, 11_300, 12_300, 13_300]);
    loop.stop();
    await clock.advance(5_000);
    await loop.relistNow();
    expect(at).toHaveLength(4);
    expect(clock.pendingTimers()).toBe(0);
  });

  it('without a phase: a period after the previous relist ended', async () => {
    const clock = new FakeClock(0);
    const at: number[] = [];
    const loop = relistLoop({ clock, periodMs: 500, relist: async () => void at.push(clock.now()) });
    loop.start();
    await clock.advance(1_600);
    loop.stop();
    expect(at).toEqual([500, 1_000, 1_500]);
  });
});
