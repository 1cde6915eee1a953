/**
 * The one timer primitive for any duration the API allows. Node's `setTimeout` takes at most
 * 2^31 − 1 ms (24.8 days); a longer delay — or a non-finite one — fires after 1 ms with a
 * `TimeoutOverflowWarning`. The apiserver accepts far longer ones (`timeoutSeconds: 2147484`,
 * `periodSeconds: 2147483647`, a grace period of years), and each collapsed to 1 ms: a probe
 * failed at once, a container was SIGKILLed at once, a worker probed in a hot loop (issue 21).
 * A longer delay here is a chain of Node timers, each at most {@link MAX_TIMER_MS}, that
 * fires when the monotonic clock says the whole delay has passed. Only util/clock.ts and the
 * CLI's real-time waits use it; everything else takes time from a `Clock`.
 */

/** The longest delay one Node timer takes. */
export const MAX_TIMER_MS = 2 ** 31 - 1;

/**
 * A delay as timers take it: a negative one or NaN is 0 (due now), +Infinity never falls due.
 * The one place that says so, for the real timers and the FakeClock alike.
 */
export function timerDelay(ms: number): number {
  return ms > 0 ? ms : 0;
}

/** A delay longer than one Node timer: the chain's current link and when the whole delay ends. */
class ChainedTimer {
  link: ReturnType<typeof setTimeout> | undefined;
  constructor(
    readonly due: number,
    readonly fn: () => void,
    readonly ref: boolean,
  ) {}
}

export interface TimerOptions {
  /** false: the timer does not keep the process alive (Node's `unref()`). Default true. */
  ref?: boolean;
}

/**
 * `setTimeout` for any delay (see the file's comment). A delay Node's timers take is a plain
 * Node timer (no cost on the hot path: a probe's timeout); a longer one is chained.
 */
export function setLongTimeout(fn: () => void, ms: number, options: TimerOptions = {}): unknown {
  const delay = timerDelay(ms);
  const ref = options.ref ?? true;
  if (delay <= MAX_TIMER_MS) {
    const timer = setTimeout(fn, delay);
    if (!ref) timer.unref();
    return timer;
  }
  const chained = new ChainedTimer(performance.now() + delay, fn, ref);
  nextLink(chained);
  return chained;
}

export function clearLongTimeout(handle: unknown): void {
  if (handle instanceof ChainedTimer) {
    clearTimeout(handle.link);
    handle.link = undefined;
  } else {
    clearTimeout(handle as ReturnType<typeof setTimeout> | undefined);
  }
}

function nextLink(chained: ChainedTimer): void {
  const left = chained.due - performance.now();
  if (left <= 0) {
    chained.link = undefined;
    chained.fn();
    return;
  }
  chained.link = setTimeout(() => nextLink(chained), Math.min(Math.ceil(left), MAX_TIMER_MS));
  if (!chained.ref) chained.link.unref();
}
