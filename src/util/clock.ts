/**
 * The time seam. Everything below `cli/` takes time from a `Clock` so that tests
 * (and the simulator) can drive hours of probing in milliseconds with `FakeClock`.
 * This file is the only place allowed to touch the real timers (through timer.ts, which
 * takes any delay: Node's own collapse past 2^31 − 1 ms to 1 ms).
 */
import { clearLongTimeout, setLongTimeout, timerDelay } from './timer.js';

export interface Clock {
  /** Milliseconds since the Unix epoch (or since the fake clock's origin). */
  now(): number;
  setTimeout(fn: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

export const realClock: Clock = {
  now: () => Date.now(),
  setTimeout: (fn, ms) => setLongTimeout(fn, ms),
  clearTimeout: (handle) => clearLongTimeout(handle),
};

/**
 * A clock that only says the time it was set to: for code that reads a clock to decide (the
 * crash-loop back-off's gate) driven over recorded or computed instants. Nothing is ever
 * scheduled on it.
 */
export function manualClock(startMs = 0): Clock & { set(ms: number): void } {
  let now = startMs;
  return {
    now: () => now,
    set: (ms) => void (now = ms),
    setTimeout: () => undefined,
    clearTimeout: () => undefined,
  };
}

/**
 * Runs `fn` once the I/O already waiting has been read. When the event loop was held up
 * (a long GC, a starved CPU), a due timer runs *before* the poll phase that would read a
 * reply which arrived in time, so a deadline decided right there fails a healthy target
 * because probelet itself was slow. `setImmediate` runs right after that poll phase.
 */
export function afterPendingIO(fn: () => void): void {
  setImmediate(fn);
}

/**
 * `yieldToEventLoop` calls whose turn has not come yet. A FakeClock that settles on
 * microtasks alone must know about them: while one is pending, it settles by an event-loop
 * turn as it always did, so that the yielding chain resumes exactly where it did before.
 */
let pendingYields = 0;

/**
 * Resolves on the next event-loop turn (`setImmediate`): a loop that could keep itself busy
 * lets timers, signals and I/O in. Counted, so that {@link FakeClock} keeps its place.
 */
export function yieldToEventLoop(): Promise<void> {
  pendingYields++;
  return new Promise((resolve) => {
    setImmediate(() => {
      pendingYields--;
      resolve();
    });
  });
}

/** A FakeClock timer, and its handle: cleared or fired, it is no longer `live`. */
class FakeTimer {
  live = true;
  constructor(
    readonly owner: FakeClock,
    readonly id: number,
    readonly due: number,
    readonly fn: () => void,
  ) {}
}

/** How many event-loop turns `FakeClock` waits after each timer by default. */
const DEFAULT_SETTLE_TURNS = 20;

export interface FakeClockOptions {
  /**
   * Event-loop turns (`setImmediate`) waited after each fired timer so that the promise
   * chains it started run to completion. The default (20) leaves room for chains that
   * also wait on real I/O; a world without any — the simulator, where every chain is
   * microtasks — is settled by one turn, since Node drains all microtasks before the next
   * `setImmediate` callback runs.
   */
  settleTurns?: number;
  /**
   * `'microtasks'`: after a fired timer, wait only until the microtask queue is empty — a
   * `process.nextTick`, which Node runs once V8 has drained every microtask, chains that
   * the drained ones started included — instead of an event-loop turn. The order is the
   * same as one turn's in a world whose chains are all microtasks (the simulator's: no
   * real I/O, no real timers); a turn costs more than the kubelet's work for a probe. A
   * timer fired while a {@link yieldToEventLoop} is pending is settled by a turn, as before,
   * so the yielding chain resumes after the same timer. `settleTurns` is then 1.
   */
  settle?: 'turns' | 'microtasks';
}

/** `(due, id)` order: earlier first, ties in scheduling order. */
function before(a: FakeTimer, b: FakeTimer): boolean {
  return a.due < b.due || (a.due === b.due && a.id < b.id);
}

/**
 * A manual clock. `advance(ms)` fires every timer that falls due within the window,
 * in due order (ties in scheduling order), letting pending promises settle between
 * timers; a timer scheduled by a firing timer and due inside the window fires too.
 * Timers live in a binary heap (cleared ones are dropped lazily when they reach the
 * top), so a virtual day of thousands of probe tickers costs O(log n) per timer.
 */
export class FakeClock implements Clock {
  private current: number;
  private nextId = 1;
  private readonly settleTurns: number;
  private readonly microtasks: boolean;
  /**
   * Timers not yet fired nor cleared. The handle is the timer itself (no table by id to
   * keep up: a simulated hour sets millions of timers).
   */
  private live = 0;
  /** A min-heap on (due, id); may still hold cleared timers (no longer `live`). */
  private readonly heap: FakeTimer[] = [];

  constructor(startMs = 0, options: FakeClockOptions = {}) {
    this.current = startMs;
    this.microtasks = options.settle === 'microtasks';
    this.settleTurns = this.microtasks ? 1 : Math.max(1, options.settleTurns ?? DEFAULT_SETTLE_TURNS);
  }

  now(): number {
    return this.current;
  }

  setTimeout(fn: () => void, ms: number): unknown {
    const timer = new FakeTimer(this, this.nextId++, this.current + timerDelay(ms), fn);
    this.live++;
    this.push(timer);
    return timer;
  }

  clearTimeout(handle: unknown): void {
    if (!(handle instanceof FakeTimer) || handle.owner !== this || !handle.live) return;
    handle.live = false;
    this.live--;
    if (this.live * 2 < this.heap.length - 64) this.compact();
  }

  /** Number of timers scheduled and not yet fired or cleared (leak checks). */
  pendingTimers(): number {
    return this.live;
  }

  /** When the next pending timer falls due (undefined: none). */
  nextDue(): number | undefined {
    return this.peek()?.due;
  }

  async advance(ms: number): Promise<void> {
    const target = this.current + timerDelay(ms);
    await this.settle();
    for (;;) {
      const next = this.peek();
      if (!next || next.due > target) break;
      // One timer, then its promise chains, as Node runs microtasks between timers.
      this.current = next.due;
      this.pop();
      next.live = false;
      this.live--;
      // Decided before the timer runs: a turn queued now would have come before any
      // yield its chain starts, and after any yield already waiting.
      const turn = !this.microtasks || pendingYields > 0;
      next.fn();
      if (turn) await this.settle();
      else await new Promise<void>((resolve) => process.nextTick(resolve));
    }
    this.current = target;
    await this.settle();
  }

  /** Lets promise chains started by a fired timer run to completion before the next one fires. */
  private async settle(): Promise<void> {
    for (let i = 0; i < this.settleTurns; i++) {
      await new Promise<void>((resolve) => setImmediate(resolve));
    }
  }

  /** The earliest live timer, dropping cleared ones from the top. */
  private peek(): FakeTimer | undefined {
    let top = this.heap[0];
    while (top !== undefined && !top.live) {
      this.pop();
      top = this.heap[0];
    }
    return top;
  }

  private push(timer: FakeTimer): void {
    const heap = this.heap;
    let i = heap.push(timer) - 1;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      const p = heap[parent] as FakeTimer;
      if (!before(timer, p)) break;
      heap[i] = p;
      i = parent;
    }
    heap[i] = timer;
  }

  private pop(): void {
    const heap = this.heap;
    const last = heap.pop();
    if (last === undefined || heap.length === 0) return;
    let i = 0;
    const n = heap.length;
    for (;;) {
      const left = 2 * i + 1;
      if (left >= n) break;
      const right = left + 1;
      let child = left;
      if (right < n && before(heap[right] as FakeTimer, heap[left] as FakeTimer)) child = right;
      const c = heap[child] as FakeTimer;
      if (!before(c, last)) break;
      heap[i] = c;
      i = child;
    }
    heap[i] = last;
  }

  /** Rebuilds the heap from the live timers when cleared ones outnumber them. */
  private compact(): void {
    const live = this.heap.filter((t) => t.live);
    this.heap.length = 0;
    for (const t of live) this.push(t);
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
