import type { Clock } from '../util/clock.js';
import type { ProberMetrics } from './metrics.js';
import type { Prober } from './prober.js';
import type { FlightRecorder } from './recorder.js';
import type { ResultsManager } from './results.js';
import type { PodStatusProvider, ProbeType } from './types.js';
import type { ProbeWorker } from './worker.js';

/** The one method of a `Prober` the engine needs; tests script it through `prober`. */
export interface ProbeFunction {
  probe: Prober['probe'];
}

/**
 * What a worker borrows from its manager (upstream workers hold a pointer to the
 * manager and read its fields). Kept as a narrow interface so the worker does not
 * reach into the manager's registry of workers beyond removing itself.
 */
export interface WorkerContext {
  readonly statusProvider: PodStatusProvider;
  readonly clock: Clock;
  readonly random: () => number;
  /** When the kubelet started (ms on `clock`): start-up jitter and restart survivors. */
  readonly startTime: number;
  readonly prober: ProbeFunction;
  readonly metrics: ProberMetrics;
  /** Where workers record their attempts; absent when the manager was told not to record. */
  readonly flightRecorder: FlightRecorder | undefined;
  resultsFor(probeType: ProbeType): ResultsManager;
  /** Unregisters `worker` if it is the one registered under its key. */
  removeWorker(worker: ProbeWorker): void;
  /** A worker the manager started (`launch`) has exited and cleaned up. */
  workerExited(): void;
}
