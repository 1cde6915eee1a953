import { Registry } from 'prom-client';
import type { ContainerWithRules, Pod, PodStatus } from '../api/types.js';
import type { CommandRunner, ProbeClose } from '../probe/types.js';
import { realClock, type Clock } from '../util/clock.js';
import type { ProbeFunction, WorkerContext } from './context.js';
import { ProberMetrics } from './metrics.js';
import { updatePodStatus } from './pod-status.js';
import { Prober } from './prober.js';
import { FlightRecorder, type FlightRecorderOptions } from './recorder.js';
import type { ResultsManager } from './results.js';
import type { EventRecorder, PodStatusProvider, ProbeType } from './types.js';
import { ProbeWorker } from './worker.js';

export interface ProbeManagerOptions {
  /** Where workers read the pod's last generated API status (the kubelet's status manager). */
  statusProvider: PodStatusProvider;
  livenessResults: ResultsManager;
  readinessResults: ResultsManager;
  startupResults: ResultsManager;
  /** Runs exec probes; used by the default prober. */
  runner: CommandRunner;
  recorder?: EventRecorder;
  clock?: Clock;
  /** Source of start-up jitter, in [0, 1). */
  random?: () => number;
  /** Where the probe metrics go; default: a registry of this manager's own. */
  registry?: Registry;
  /** Replaces the default `new Prober({ runner, recorder, clock, probeClose })`. */
  prober?: ProbeFunction;
  /**
   * How the default prober's network probes close their connections: `'fin'` (default, the
   * kubelet's) or `'reset'` (no TIME_WAIT on the probing side; the probed server sees a
   * reset). See ProbeClose.
   */
  probeClose?: ProbeClose;
  /** When the kubelet started (ms on `clock`); default: construction time. */
  startTime?: number;
  /**
   * The flight recorder (a ring of the last attempts per worker, read through
   * `flightRecorder`): its options, or `false` for none. Default: on, 100 attempts per ring.
   */
  flightRecorder?: FlightRecorderOptions | false;
}

/** Kinds in the order AddPod creates them (upstream's order). */
const PROBE_KINDS_IN_ADD_ORDER: readonly ProbeType[] = ['startup', 'readiness', 'liveness'];
const PROBE_FIELD = { liveness: 'livenessProbe', readiness: 'readinessProbe', startup: 'startupProbe' } as const;

function workerKey(podUID: string, containerName: string, probeType: ProbeType): string {
  // NUL cannot occur in a UID or a container name, so keys cannot collide.
  return `${podUID}\u0000${containerName}\u0000${probeType}`;
}

/** The default jitter source: the one place the engine reads real randomness. */
function defaultRandom(): number {
  // eslint-disable-next-line no-restricted-properties -- the injectable default itself
  return Math.random();
}

/**
 * The kubelet's probe manager: one worker per (pod, container, probe kind), created by
 * `addPod` and stopped by `removePod` / `cleanupPods`; workers remove themselves when
 * they exit. `updatePodStatus` turns cached results into `started` / `ready`.
 */
export class ProbeManager {
  /** @internal What workers read from their manager. */
  readonly context: WorkerContext;
  /** Every worker's recent attempts and transitions; undefined when disabled. */
  readonly flightRecorder: FlightRecorder | undefined;

  private readonly workers = new Map<string, ProbeWorker>();
  /**
   * Workers started by `addPod` that have not exited yet, and the `close()` calls waiting
   * for none to be left. A count rather than a promise and a callback per worker: an idle
   * worker should cost as little memory as possible.
   */
  private running = 0;
  private readonly closeWaiters: Array<() => void> = [];
  private readonly livenessResults: ResultsManager;
  private readonly readinessResults: ResultsManager;
  private readonly startupResults: ResultsManager;
  private closed = false;

  constructor(options: ProbeManagerOptions) {
    const clock = options.clock ?? realClock;
    this.livenessResults = options.livenessResults;
    this.readinessResults = options.readinessResults;
    this.startupResults = options.startupResults;
    const prober =
      options.prober ??
      new Prober({
        runner: options.runner,
        recorder: options.recorder,
        clock,
        ...(options.probeClose !== undefined ? { probeClose: options.probeClose } : {}),
      });
    const resultsByKind: Record<ProbeType, ResultsManager> = {
      liveness: options.livenessResults,
      readiness: options.readinessResults,
      startup: options.startupResults,
    };
    this.flightRecorder = options.flightRecorder === false ? undefined : new FlightRecorder(clock, options.flightRecorder);
    this.context = {
      statusProvider: options.statusProvider,
      clock,
      random: options.random ?? defaultRandom,
      startTime: options.startTime ?? clock.now(),
      prober,
      metrics: new ProberMetrics(options.registry ?? new Registry()),
      flightRecorder: this.flightRecorder,
      resultsFor: (probeType) => resultsByKind[probeType],
      removeWorker: (worker) => this.removeWorker(worker),
      workerExited: () => this.workerExited(),
    };
  }

  /**
   * Starts a worker for every probe of the pod's regular containers, then of its
   * restartable init containers (plain init containers are never probed). Existing
   * workers are kept as they are — the new pod object is not pushed into them — and
   * the remaining probes are still added (#138930). Does nothing once closed.
   */
  addPod(pod: Pod): void {
    if (this.closed) return;
    const podUID = pod.metadata?.uid ?? '';
    for (const container of probedContainers(pod)) {
      for (const probeType of PROBE_KINDS_IN_ADD_ORDER) {
        if (!container[PROBE_FIELD[probeType]]) continue;
        const key = workerKey(podUID, container.name, probeType);
        if (this.workers.has(key)) continue;
        const worker = new ProbeWorker(this, probeType, pod, container);
        this.workers.set(key, worker);
        this.running++;
        worker.launch();
      }
    }
  }

  /**
   * Stops liveness and startup probing when termination begins, so a container being
   * shut down is not killed for failing them; readiness keeps probing. Regular
   * containers only, as in 1.35.
   */
  stopLivenessAndStartup(pod: Pod): void {
    const podUID = pod.metadata?.uid ?? '';
    for (const container of pod.spec?.containers ?? []) {
      for (const probeType of ['liveness', 'startup'] as const) {
        this.getWorker(podUID, container.name, probeType)?.stop();
      }
    }
  }

  /** Stops every worker of the pod (regular and restartable init containers); they exit asynchronously. */
  removePod(pod: Pod): void {
    const podUID = pod.metadata?.uid ?? '';
    for (const container of probedContainers(pod)) {
      for (const probeType of ['readiness', 'liveness', 'startup'] as const) {
        this.getWorker(podUID, container.name, probeType)?.stop();
      }
    }
  }

  /** Stops every worker whose pod is not in `desiredPodUIDs`. */
  cleanupPods(desiredPodUIDs: ReadonlySet<string>): void {
    for (const worker of this.workers.values()) {
      if (!desiredPodUIDs.has(worker.pod.metadata?.uid ?? '')) worker.stop();
    }
  }

  /** Fills `started` and `ready` of `status` (mutated in place) from probe state (§3.7). */
  updatePodStatus(pod: Pod, status: PodStatus): void {
    updatePodStatus(
      {
        startupResults: this.startupResults,
        readinessResults: this.readinessResults,
        startTime: this.context.startTime,
        getWorker: (podUID, name, probeType) => this.getWorker(podUID, name, probeType),
      },
      pod,
      status,
    );
  }

  getWorker(podUID: string, containerName: string, probeType: ProbeType): ProbeWorker | undefined {
    return this.workers.get(workerKey(podUID, containerName, probeType));
  }

  workerCount(): number {
    return this.workers.size;
  }

  /** Stops every worker and resolves once all have exited and cleaned up. */
  async close(): Promise<void> {
    this.closed = true;
    for (const worker of this.workers.values()) worker.stop();
    if (this.running > 0) await new Promise<void>((resolve) => this.closeWaiters.push(resolve));
  }

  private workerExited(): void {
    this.running--;
    if (this.running === 0) for (const resolve of this.closeWaiters.splice(0)) resolve();
  }

  private removeWorker(worker: ProbeWorker): void {
    const key = workerKey(worker.pod.metadata?.uid ?? '', worker.container.name, worker.probeType);
    // A worker built outside the manager must not unregister the one that is registered.
    if (this.workers.get(key) === worker) this.workers.delete(key);
  }
}

/** Regular containers in spec order, then restartable init containers (sidecars). */
function probedContainers(pod: Pod): ContainerWithRules[] {
  const sidecars = (pod.spec?.initContainers ?? []).filter((c) => c.restartPolicy === 'Always');
  return [...(pod.spec?.containers ?? []), ...sidecars];
}
