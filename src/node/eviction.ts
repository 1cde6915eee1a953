/**
 * The node pressure conditions as the kubelet's eviction manager decides them
 * (pkg/kubelet/eviction): signals observed from the machine's stats, compared with the hard
 * eviction thresholds (`--eviction-hard`, default {@link DEFAULT_EVICTION_HARD}), each met
 * threshold putting its node condition under pressure; a condition stays under pressure for
 * the pressure transition period (`evictionPressureTransitionPeriod`, 5 min) after it was last
 * observed. probelet evicts nothing: only the conditions are reported.
 */
import type { MachineStats } from './machine-stats.js';

export const EVICTION_SIGNALS = ['memory.available', 'nodefs.available', 'nodefs.inodesFree', 'imagefs.available', 'imagefs.inodesFree', 'pid.available'] as const;
export type EvictionSignal = (typeof EVICTION_SIGNALS)[number];
export type PressureCondition = 'MemoryPressure' | 'DiskPressure' | 'PIDPressure';

/** `signalToNodeCondition` (eviction/helpers.go). */
export const SIGNAL_CONDITION: Record<EvictionSignal, PressureCondition> = {
  'memory.available': 'MemoryPressure',
  'nodefs.available': 'DiskPressure',
  'nodefs.inodesFree': 'DiskPressure',
  'imagefs.available': 'DiskPressure',
  'imagefs.inodesFree': 'DiskPressure',
  'pid.available': 'PIDPressure',
};

/** `DefaultEvictionHard` (eviction/defaults_linux.go), in the flag's syntax. */
export const DEFAULT_EVICTION_HARD = 'memory.available<100Mi,nodefs.available<10%,nodefs.inodesFree<5%,imagefs.available<15%,imagefs.inodesFree<5%';
/** `evictionPressureTransitionPeriod`'s default. */
export const PRESSURE_TRANSITION_PERIOD_MS = 5 * 60_000;

/** One hard threshold: under pressure when the signal's available amount is below it. */
export interface Threshold {
  signal: EvictionSignal;
  /** An absolute amount (bytes, inodes, PIDs) … */
  quantity?: number;
  /** … or a fraction of the capacity (0.1 for `10%`). */
  percentage?: number;
}

const SUFFIX: Record<string, number> = { '': 1, k: 1e3, M: 1e6, G: 1e9, T: 1e12, P: 1e15, Ki: 2 ** 10, Mi: 2 ** 20, Gi: 2 ** 30, Ti: 2 ** 40, Pi: 2 ** 50 };

/**
 * Parses `--eviction-hard` (`memory.available<100Mi,nodefs.available<10%`), as the kubelet's
 * `ParseThresholdConfig` reads it; an empty string is no thresholds. Errors name the entry
 * and the fix.
 */
export function parseEvictionHard(text: string, flag = '--eviction-hard'): Threshold[] {
  const out: Threshold[] = [];
  for (const entry of text.split(',').map((e) => e.trim()).filter((e) => e !== '')) {
    const m = /^([a-zA-Z.]+)<(.+)$/.exec(entry);
    const signal = m?.[1] as EvictionSignal | undefined;
    if (!m || !signal || !EVICTION_SIGNALS.includes(signal)) {
      throw new Error(`${flag}: ${JSON.stringify(entry)}: expected SIGNAL<QUANTITY or SIGNAL<PERCENT% with SIGNAL one of ${EVICTION_SIGNALS.join(', ')}`);
    }
    const value = (m[2] ?? '').trim();
    if (value.endsWith('%')) {
      const pct = Number(value.slice(0, -1));
      if (!Number.isFinite(pct) || pct < 0 || pct > 100) throw new Error(`${flag}: ${JSON.stringify(entry)}: a percentage must be from 0% to 100%`);
      out.push({ signal, percentage: pct / 100 });
      continue;
    }
    const q = /^(\d+(?:\.\d+)?)([kMGTP]i?|[KMGTP]i)?$/.exec(value);
    const factor = SUFFIX[q?.[2] ?? ''];
    if (!q || factor === undefined) throw new Error(`${flag}: ${JSON.stringify(entry)}: ${JSON.stringify(value)} is not a quantity (e.g. 100Mi, 1Gi, 5%)`);
    out.push({ signal, quantity: Number(q[1]) * factor });
  }
  return out;
}

/** What one signal observed: the amount available and the capacity it is a part of. */
export interface Observation {
  available: number;
  capacity: number;
}

/** `makeSignalObservations`: the signals the stats allow. */
export function observeSignals(stats: MachineStats): Map<EvictionSignal, Observation> {
  const out = new Map<EvictionSignal, Observation>();
  if (stats.memory) out.set('memory.available', { available: stats.memory.availableBytes, capacity: stats.memory.capacityBytes });
  if (stats.nodeFs) {
    out.set('nodefs.available', { available: stats.nodeFs.availableBytes, capacity: stats.nodeFs.capacityBytes });
    out.set('nodefs.inodesFree', { available: stats.nodeFs.inodesFree, capacity: stats.nodeFs.inodes });
  }
  if (stats.imageFs) {
    out.set('imagefs.available', { available: stats.imageFs.availableBytes, capacity: stats.imageFs.capacityBytes });
    out.set('imagefs.inodesFree', { available: stats.imageFs.inodesFree, capacity: stats.imageFs.inodes });
  }
  if (stats.rlimit) out.set('pid.available', { available: stats.rlimit.maxPID - stats.rlimit.processes, capacity: stats.rlimit.maxPID });
  return out;
}

/** `thresholdsMet`: those whose amount (a percentage of the capacity, truncated) exceeds what is available. */
export function thresholdsMet(thresholds: readonly Threshold[], observations: ReadonlyMap<EvictionSignal, Observation>): Threshold[] {
  return thresholds.filter((t) => {
    const seen = observations.get(t.signal);
    if (!seen) return false;
    const amount = t.quantity ?? Math.trunc(seen.capacity * (t.percentage ?? 0));
    return amount > seen.available;
  });
}

/** The pressure of each condition, remembered over the transition period (`nodeConditionsObservedSince`). */
export interface PressureTracker {
  /** Observes `stats` at `nowMs`; returns the conditions under pressure. */
  update(nowMs: number, stats: MachineStats): Set<PressureCondition>;
}

export function createPressureTracker(thresholds: readonly Threshold[], transitionPeriodMs = PRESSURE_TRANSITION_PERIOD_MS): PressureTracker {
  const lastObservedAt = new Map<PressureCondition, number>();
  return {
    update(nowMs, stats) {
      for (const t of thresholdsMet(thresholds, observeSignals(stats))) lastObservedAt.set(SIGNAL_CONDITION[t.signal], nowMs);
      const under = new Set<PressureCondition>();
      for (const [condition, at] of lastObservedAt) {
        if (nowMs - at < transitionPeriodMs) under.add(condition);
        else lastObservedAt.delete(condition);
      }
      return under;
    },
  };
}
