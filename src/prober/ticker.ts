import type { Clock } from '../util/clock.js';

/**
 * A Go `time.Ticker` on the injected clock: fixed-rate (start-to-start) ticks with a
 * one-slot buffer. Ticks that fall due while one is still unconsumed are dropped, so a
 * probe that overruns its period is followed by exactly one immediate probe and the
 * schedule keeps its phase. `reset()` re-phases the schedule from now.
 */
export class Ticker {
  private readonly periodMs: number;
  private handle: unknown;
  private nextDue: number;
  private ticked = false;
  private stopped = false;
  /**
   * The timer callback, made once: a closure per tick would live a whole period and be
   * promoted to the old generation with every tick (at 1,000 workers, 1,000 a second).
   */
  private readonly fireCallback = (): void => this.fire();

  constructor(
    private readonly clock: Clock,
    periodMs: number,
    private readonly onTick: () => void,
  ) {
    // A zero period would spin; the API defaults it to 10 s, so 1 ms is only a guard.
    this.periodMs = Math.max(1, periodMs);
    this.nextDue = clock.now() + this.periodMs;
    this.schedule();
  }

  /** Consumes the buffered tick, if any. */
  take(): boolean {
    const ticked = this.ticked;
    this.ticked = false;
    return ticked;
  }

  /** Next tick one full period from now; a buffered tick is discarded (Go ≥ 1.23 semantics). */
  reset(): void {
    if (this.stopped) return;
    this.clock.clearTimeout(this.handle);
    this.ticked = false;
    this.nextDue = this.clock.now() + this.periodMs;
    this.schedule();
  }

  stop(): void {
    this.stopped = true;
    this.clock.clearTimeout(this.handle);
    this.handle = undefined;
  }

  private schedule(): void {
    this.handle = this.clock.setTimeout(this.fireCallback, this.nextDue - this.clock.now());
  }

  private fire(): void {
    if (this.stopped) return;
    this.ticked = true;
    const now = this.clock.now();
    // A late timer (busy event loop) skips the ticks it missed instead of bursting.
    do this.nextDue += this.periodMs;
    while (this.nextDue <= now);
    this.schedule();
    this.onTick();
  }
}
