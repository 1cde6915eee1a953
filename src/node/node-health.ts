/**
 * The node's health as its conditions report it: the runtime's state, checked every 5 s as
 * `updateRuntimeUp` does, and the pressure conditions, evaluated from the machine's stats at
 * each node status computation (every 10 s, the eviction manager's monitoring interval).
 * A node without machine stats (the simulated fleet) is never under pressure.
 */
import type { ContainerRuntime } from '../runtime/types.js';
import type { Clock } from '../util/clock.js';
import { createPressureTracker, DEFAULT_EVICTION_HARD, parseEvictionHard, type Threshold } from './eviction.js';
import type { MachineStats } from './machine-stats.js';
import { HEALTHY, type NodeHealth } from './node-object.js';
import { createRuntimeState, RUNTIME_UP_PERIOD_MS } from './runtime-state.js';

export interface NodeHealthOptions {
  runtime: Pick<ContainerRuntime, 'runtimeStatus'>;
  clock: Clock;
  /** The machine's stats (readMachineStats; a fake in tests); none: no pressure is ever reported. */
  machineStats?: () => MachineStats;
  /** The hard eviction thresholds (default {@link DEFAULT_EVICTION_HARD}). */
  thresholds?: readonly Threshold[];
}

export interface NodeHealthMonitor {
  /** The health now (evaluates the pressure thresholds). */
  current(): NodeHealth;
  /** Resolves after the first runtime check (a node registers Ready only once it knows). */
  readonly checked: Promise<void>;
  close(): void;
}

export function startNodeHealth(options: NodeHealthOptions): NodeHealthMonitor {
  const { runtime, clock, machineStats } = options;
  const state = createRuntimeState();
  const tracker = createPressureTracker(options.thresholds ?? parseEvictionHard(DEFAULT_EVICTION_HARD));
  const conditions = runtime.runtimeStatus ? () => runtime.runtimeStatus?.() ?? Promise.resolve(undefined) : () => Promise.resolve(undefined);
  let closed = false;
  let timer: unknown;
  const loop = (): void => {
    if (closed) return;
    timer = clock.setTimeout(() => {
      void state.update(clock.now(), conditions).finally(loop);
    }, RUNTIME_UP_PERIOD_MS);
  };
  const checked = state.update(clock.now(), conditions).finally(loop);
  return {
    current() {
      const now = clock.now();
      let stats: MachineStats = {};
      try {
        stats = machineStats?.() ?? {};
      } catch {
        // Unreadable stats are no observation, as a failed cAdvisor read is for the kubelet.
      }
      const health: NodeHealth = { pressure: machineStats ? tracker.update(now, stats) : HEALTHY.pressure, readyErrors: state.errors(now) };
      return health;
    },
    checked,
    close() {
      closed = true;
      clock.clearTimeout(timer);
    },
  };
}
