/**
 * Counts probes and measures their lateness: when a probe actually started minus when its
 * scheduler meant to start it. Each implementation is judged against its own scheduler's
 * promise, because that is what its users get:
 *
 * - `fixed-rate` (probelet's Ticker, like Go's time.Ticker): the worker's ticker is created
 *   with `nextDue = Date.now() + period` right before its first probe, so the schedule's
 *   phase is the first probe's start floored to the wall-clock millisecond (the ticker reads
 *   Date.now(), an integer; the wrapper runs microseconds later). Probe k is due at
 *   phase + k·period; after a probe that started at s the next slot is the first one after s,
 *   as the ticker skips ticks it missed. If a millisecond boundary falls between the
 *   ticker's Date.now() and our reading, that worker's lateness reads up to 1 ms low.
 * - `interval` (the baseline's setInterval): Node re-arms an interval from when it fired, so
 *   a probe is due one period after the previous one started.
 *
 * Node fires timers against the event loop's cached time, so a timer may fire slightly
 * before its wall-clock due time: such probes count as negative lateness (not clamped, so
 * the percentiles stay unbiased). Only probes that start inside the measured window count;
 * the first probe of each worker has no due time and gives no lateness sample.
 */
import { performance } from 'node:perf_hooks';

/**
 * @typedef {object} Slot  One worker's schedule as observed.
 * @property {number} prevStart  performance.now() of the previous probe; NaN before the first.
 * @property {number} phase      fixed-rate only: when slot 0 was due.
 * @property {number} index      fixed-rate only: the slot of the previous probe.
 */

export class LatenessRecorder {
  /**
   * @param {number} periodMs
   * @param {'fixed-rate' | 'interval'} model
   */
  constructor(periodMs, model) {
    this.periodMs = periodMs;
    this.model = model;
    this.windowStart = Infinity;
    this.windowEnd = Infinity;
    /** @type {number[]} */
    this.samples = [];
    this.probes = 0;
    this.ok = 0;
    this.failed = 0;
    this.inFlight = 0;
    /** Probes started before or after the window (warm-up, wind-down): not counted. */
    this.uncounted = 0;
  }

  /** @returns {Slot} */
  slot() {
    return { prevStart: Number.NaN, phase: Number.NaN, index: 0 };
  }

  /** Opens the measured window now. */
  open() {
    this.windowStart = performance.now();
  }

  /** Closes the measured window now; probes already started still complete and count. */
  close() {
    this.windowEnd = performance.now();
  }

  /**
   * Call as the probe starts; pass the result to {@link end}.
   * @param {Slot} slot
   * @returns {boolean} whether this probe is counted
   */
  begin(slot) {
    const now = performance.now();
    const due = this.dueTime(slot, now);
    slot.prevStart = now;
    this.inFlight++;
    const counted = now >= this.windowStart && now < this.windowEnd;
    if (!counted) {
      this.uncounted++;
      return false;
    }
    if (!Number.isNaN(due)) this.samples.push(now - due);
    return true;
  }

  /**
   * @param {boolean} counted  What {@link begin} returned.
   * @param {boolean} ok
   */
  end(counted, ok) {
    this.inFlight--;
    if (!counted) return;
    this.probes++;
    if (ok) this.ok++;
    else this.failed++;
  }

  /**
   * @param {Slot} slot
   * @param {number} now
   */
  dueTime(slot, now) {
    const period = this.periodMs;
    if (Number.isNaN(slot.prevStart)) {
      if (this.model === 'fixed-rate') {
        const origin = performance.timeOrigin;
        slot.phase = Math.floor(origin + now) - origin;
        slot.index = 0;
      }
      return Number.NaN;
    }
    if (this.model === 'interval') return slot.prevStart + period;
    const index = Math.max(slot.index + 1, Math.floor((slot.prevStart - slot.phase) / period) + 1);
    slot.index = index;
    return slot.phase + index * period;
  }

  /** Lateness percentiles in ms (null without samples). */
  percentiles() {
    const sorted = Float64Array.from(this.samples).sort();
    /** @param {number} p */
    const at = (p) => {
      if (sorted.length === 0) return null;
      const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
      return round(sorted[rank] ?? 0, 3);
    };
    return { p50: at(50), p99: at(99), max: at(100) };
  }
}

/**
 * @param {number} value
 * @param {number} digits
 */
export function round(value, digits) {
  const f = 10 ** digits;
  return Math.round(value * f) / f;
}
