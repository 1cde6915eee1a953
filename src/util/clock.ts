/**
 * The time seam. Everything below `cli/` takes time from a `Clock` so that tests
 * (and the simulator) can drive hours of probing in milliseconds with `FakeClock`.
 * This file is the only place allowed to touch the real timers.
 */

export interface Clock {
  /** Milliseconds since the Unix epoch (or since the fake clock's origin). */
  now(): number;
  setTimeout(fn: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

export const realClock: Clock = {
  now: () => Date.now(),
  setTimeout: (fn, ms) => setTimeout(fn, Math.max(0, ms)),
  clearTimeout: (handle) => clearTimeout(handle as ReturnType<typeof setTimeout>),
};

/**
 * Runs `fn` once the I/O already waiting has been read. When the event loop was held up
 * (a long GC, a starved CPU), a due timer runs *before* the poll phase that would read a
 * reply which arrived in time, so a deadline decided right there fails a healthy target
 * because probelet itself was slow. `setImmediate` runs right after that poll phase.
 */
export function afterPendingIO(fn: () => void): void {
  setImmediate(fn);
}

interface FakeTimer {
  readonly id: number;
  readonly due: number;
  readonly fn: () => void;
}

/** Lets promise chains started by a fired timer run to completion before the next one fires. */
async function settle(): Promise<void> {
  for (let i = 0; i < 20; i++) {
    await new Promise<void>((resolve) => setImmediate(resolve));
  }
}

/**
 * A manual clock. `advance(ms)` fires every timer that falls due within the window,
 * in due order (ties in scheduling order), letting pending promises settle between
 * timers; a timer scheduled by a firing timer and due inside the window fires too.
 */
export class FakeClock implements Clock {
  private current: number;
  private nextId = 1;
  private readonly timers = new Map<number, FakeTimer>();

  constructor(startMs = 0) {
    this.current = startMs;
  }

  now(): number {
    return this.current;
  }

  setTimeout(fn: () => void, ms: number): unknown {
    const id = this.nextId++;
    this.timers.set(id, { id, due: this.current + Math.max(0, ms), fn });
    return id;
  }

  clearTimeout(handle: unknown): void {
    if (typeof handle === 'number') this.timers.delete(handle);
  }

  /** Number of timers scheduled and not yet fired or cleared (leak checks). */
  pendingTimers(): number {
    return this.timers.size;
  }

  async advance(ms: number): Promise<void> {
    const target = this.current + Math.max(0, ms);
    await settle();
    for (;;) {
      const next = this.earliestDueBy(target);
      if (!next) break;
      this.timers.delete(next.id);
      this.current = next.due;
      next.fn();
      await settle();
    }
    this.current = target;
    await settle();
  }

  private earliestDueBy(target: number): FakeTimer | undefined {
    let best: FakeTimer | undefined;
    for (const t of this.timers.values()) {
      if (t.due > target) continue;
      if (!best || t.due < best.due || (t.due === best.due && t.id < best.id)) best = t;
    }
    return best;
  }
}

/** Resolves after `ms` on `clock`. */
export function sleep(clock: Clock, ms: number): Promise<void> {
  return new Promise((resolve) => {
    clock.setTimeout(resolve, ms);
  });
}

/**
 * The chance seam's default: start-up jitter and resync jitter take a `random()` that tests
 * replace; only this file may reach for the real one.
 */
export const realRandom = (): number => Math.random();
