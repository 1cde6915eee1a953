import {
  DEFAULT_PROBE_FAILURE_THRESHOLD,
  DEFAULT_PROBE_PERIOD_SECONDS,
  DEFAULT_PROBE_SUCCESS_THRESHOLD,
} from '../api/defaults.js';
import type { ContainerStatus, ContainerWithRules, Pod, PodStatus, Probe } from '../api/types.js';
import type { WorkerContext } from './context.js';
import type { ProbeManager } from './manager.js';
import type { WorkerSeries } from './metrics.js';
import { containerShouldRestart } from './restart-rules.js';
import type { ResultsManager } from './results.js';
import { Ticker } from './ticker.js';
import { parseApiTime, predatesKubelet } from './timestamps.js';
import type { ProbeType, Result } from './types.js';

/** What the cache says before the first verdict for a container instance (§1.1). */
const INITIAL_VALUE: Record<ProbeType, Result> = {
  liveness: 'success',
  readiness: 'failure',
  startup: 'unknown',
};

const PROBE_FIELD = {
  liveness: 'livenessProbe',
  readiness: 'readinessProbe',
  startup: 'startupProbe',
} as const satisfies Record<ProbeType, keyof ContainerWithRules>;

type WakeReason = 'stop' | 'trigger' | 'tick';

/**
 * The periodic prober of one (pod, container, probe kind) — upstream's `worker`.
 * Everything it knows about the container comes from the status provider (what the
 * kubelet last generated), never from the runtime; probe spec, restart policy and
 * deletion timestamp come from the pod it was created with, which it never refreshes.
 */
export class ProbeWorker {
  readonly probeType: ProbeType;
  /** The pod as given at creation (not copied): spec, metadata and API status. */
  readonly pod: Pod;
  readonly container: ContainerWithRules;
  readonly spec: Probe;

  private readonly context: WorkerContext;
  private readonly resultsManager: ResultsManager;
  private readonly initialValue: Result;
  private readonly series: WorkerSeries;
  private readonly isRestartableInit: boolean;

  private currentContainerID = '';
  private last: Result | undefined;
  private runLength = 0;
  private hold = false;

  private stopRequested = false;
  private triggerPending = false;
  private wake: (() => void) | undefined;
  private loop: Promise<void> | undefined;

  /** Creates a worker without starting or registering it. */
  constructor(manager: ProbeManager, probeType: ProbeType, pod: Pod, container: ContainerWithRules) {
    const spec = container[PROBE_FIELD[probeType]];
    if (!spec) throw new TypeError(`container "${container.name}" has no ${PROBE_FIELD[probeType]}`);
    this.probeType = probeType;
    this.pod = pod;
    this.container = container;
    this.spec = spec;
    this.context = manager.context;
    this.resultsManager = this.context.resultsFor(probeType);
    this.initialValue = INITIAL_VALUE[probeType];
    this.series = this.context.metrics.seriesFor(probeType, pod, container.name);
    this.isRestartableInit =
      container.restartPolicy === 'Always' && (pod.spec?.initContainers ?? []).some((c) => c.name === container.name);
  }

  /** The container instance last seen (`''` before any). */
  get containerID(): string {
    return this.currentContainerID;
  }

  /** The last counted verdict (`undefined` before any). */
  get lastResult(): Result | undefined {
    return this.last;
  }

  /** How many counted verdicts in a row equal `lastResult` (0 after a hold). */
  get resultRun(): number {
    return this.runLength;
  }

  /** Probing is suspended until a new container instance appears. */
  get onHold(): boolean {
    return this.hold;
  }

  /** Asks the loop to exit before its next probe. Idempotent; an in-flight probe completes. */
  stop(): void {
    this.stopRequested = true;
    this.signal();
  }

  /** Asks for a probe now and re-phases the schedule from it (one pending request at most). */
  trigger(): void {
    this.triggerPending = true;
    this.signal();
  }

  /** The probe loop; resolves once the worker has exited and cleaned up. Never rejects. */
  run(): Promise<void> {
    this.loop ??= this.runLoop();
    return this.loop;
  }

  private async runLoop(): Promise<void> {
    const { clock } = this.context;
    let ticker: Ticker | undefined;
    try {
      // Start asynchronously (upstream: `go w.run()`): addPod returns before any probing,
      // so result listeners never run inside it.
      await Promise.resolve();
      const periodMs = periodSecondsOf(this.spec) * 1000;
      // A freshly (re)started kubelet would otherwise probe every container at once.
      if (periodMs > clock.now() - this.context.startTime) {
        await this.jitter(this.context.random() * periodMs);
      }
      ticker = new Ticker(clock, periodMs, () => this.signal());
      while (!this.stopRequested && (await this.doProbe())) {
        const reason = await this.nextWake(ticker);
        if (reason === 'stop') break;
        if (reason === 'trigger') ticker.reset();
      }
    } catch (error) {
      // doProbe catches everything; this only guards the loop against a faulty clock or random().
      warn('probe worker loop failed', error);
    } finally {
      ticker?.stop();
      this.cleanUp();
    }
  }

  /**
   * Sleeps `ms` on the clock, or less if stopped meanwhile. Deliberately interruptible
   * (upstream's `time.Sleep` is not, and probes once after it): a stopped worker should
   * not hold `close()` or a removed pod's clean-up for up to a period.
   */
  private async jitter(ms: number): Promise<void> {
    const { clock } = this.context;
    let elapsed = false;
    const handle = clock.setTimeout(() => {
      elapsed = true;
      this.signal();
    }, ms);
    while (!elapsed && !this.stopRequested) await this.waitForSignal();
    if (!elapsed) clock.clearTimeout(handle);
  }

  /** Waits for the first of stop, manual trigger or tick (in that priority when several are pending). */
  private async nextWake(ticker: Ticker): Promise<WakeReason> {
    for (;;) {
      if (this.stopRequested) return 'stop';
      if (this.triggerPending) {
        this.triggerPending = false;
        return 'trigger';
      }
      if (ticker.take()) return 'tick';
      await this.waitForSignal();
    }
  }

  private waitForSignal(): Promise<void> {
    return new Promise((resolve) => {
      this.wake = resolve;
    });
  }

  private signal(): void {
    const wake = this.wake;
    this.wake = undefined;
    wake?.();
  }

  private cleanUp(): void {
    try {
      if (this.currentContainerID !== '') this.resultsManager.remove(this.currentContainerID);
      this.context.removeWorker(this);
      this.series.remove();
    } catch (error) {
      warn('probe worker clean-up failed', error);
    }
  }

  /**
   * One iteration (§4.3); returns whether the worker should keep going. Anything thrown
   * inside — by the prober or by bad input — means "keep going", as upstream recovers panics.
   */
  async doProbe(): Promise<boolean> {
    try {
      return await this.probeOnce();
    } catch {
      return true;
    }
  }

  private async probeOnce(): Promise<boolean> {
    const { clock } = this.context;
    const start = clock.now();
    const podUID = this.pod.metadata?.uid ?? '';

    const status = this.context.statusProvider.getPodStatus(podUID);
    if (!status) return true; // not created yet, or already gone

    if (status.phase === 'Failed' || status.phase === 'Succeeded') return false;

    const found = this.findContainerStatus(status);
    if (!found) return true; // container not created yet, or deleted
    const { containerStatus: c, fromInit } = found;
    const containerID = c.containerID ?? '';

    if (containerID !== this.currentContainerID) this.adoptContainer(c, containerID, fromInit);

    if (this.hold) return true;

    const running = c.state?.running;
    if (!running) {
      if (this.currentContainerID !== '') this.resultsManager.set(this.currentContainerID, 'failure', this.pod);
      const terminated = c.state?.terminated;
      if (!terminated) return true; // waiting: it will run (again)
      return containerShouldRestart(this.container, this.pod, terminated.exitCode);
    }

    // Only fires for workers created after deletion was requested (the snapshot never
    // changes); a quiet Success keeps the runtime from killing a container on its way out.
    if (this.pod.metadata?.deletionTimestamp && this.probeType !== 'readiness') {
      this.resultsManager.set(this.currentContainerID, 'success', this.pod);
      return false;
    }

    const startedAt = parseApiTime(running.startedAt);
    if (startedAt !== undefined && Math.trunc((clock.now() - startedAt) / 1000) < (this.spec.initialDelaySeconds ?? 0)) {
      return true;
    }

    if (c.started === true) {
      // Kept alive (but idle) so a restarted container gets its startup probe again.
      if (this.probeType === 'startup') return true;
    } else if (this.probeType !== 'startup') {
      return true; // liveness and readiness wait until the container has started
    }

    const { result, error } = await this.context.prober.probe(
      this.probeType,
      this.pod,
      status,
      this.container,
      this.currentContainerID,
    );
    // An errored probe could not even be attempted: it says nothing about the container.
    if (error) return true;

    this.series.record(result, (clock.now() - start) / 1000);

    if (this.last === result) {
      this.runLength++;
    } else {
      this.last = result;
      this.runLength = 1;
    }

    if (
      (result === 'failure' && this.runLength < failureThresholdOf(this.spec)) ||
      (result === 'success' && this.runLength < successThresholdOf(this.spec))
    ) {
      return true; // below threshold: the cached verdict stands
    }

    this.resultsManager.set(this.currentContainerID, result, this.pod);

    // A failed liveness container is about to be killed: probing it again risks exec-ing
    // into a dying container (#21751). A startup verdict is final for the instance (#117153).
    if ((this.probeType === 'liveness' && result === 'failure') || this.probeType === 'startup') {
      this.hold = true;
      this.runLength = 0;
    }
    return true;
  }

  /** Regular statuses first; init statuses when absent there or without an ID. */
  private findContainerStatus(status: PodStatus): { containerStatus: ContainerStatus; fromInit: boolean } | undefined {
    const name = this.container.name;
    const regular = status.containerStatuses?.find((s) => s.name === name);
    if (regular?.containerID) return { containerStatus: regular, fromInit: false };
    const init = status.initContainerStatuses?.find((s) => s.name === name);
    if (init?.containerID) return { containerStatus: init, fromInit: true };
    return undefined;
  }

  /**
   * A new container instance: forget the old one's verdict and seed the new one. Run
   * counters deliberately survive (a readiness run may span a restart); the hold does not.
   */
  private adoptContainer(c: ContainerStatus, containerID: string, fromInit: boolean): void {
    if (this.currentContainerID !== '') this.resultsManager.remove(this.currentContainerID);
    this.currentContainerID = containerID;
    if (!this.isRestartSurvivor(c, containerID, fromInit)) {
      this.resultsManager.set(containerID, this.initialValue, this.pod);
    } else if (this.probeType === 'startup' && this.isRestartableInit && c.started === true) {
      // Without it the runtime would wait forever for the sidecar to "start" again (#137146).
      this.resultsManager.set(containerID, 'success', this.pod);
    }
    // Other survivors get no seed: the state the API last reported stands until a real
    // verdict (ChangeContainerStatusOnKubeletRestart disabled, the 1.35 default).
    this.hold = false;
  }

  /**
   * Running since before this kubelet started, under the container ID the API status of
   * our pod snapshot reports — a replaced container inherits nothing (#141487).
   */
  private isRestartSurvivor(c: ContainerStatus, containerID: string, fromInit: boolean): boolean {
    if (!c.state?.running || !predatesKubelet(c.state.running.startedAt, this.context.startTime)) return false;
    const previous = fromInit ? this.pod.status?.initContainerStatuses : this.pod.status?.containerStatuses;
    return previous?.find((s) => s.name === this.container.name)?.containerID === containerID;
  }
}

/** API defaults for fields a hand-written probe may omit (only zero/absent is replaced). */
function periodSecondsOf(spec: Probe): number {
  return spec.periodSeconds || DEFAULT_PROBE_PERIOD_SECONDS;
}

function successThresholdOf(spec: Probe): number {
  return spec.successThreshold || DEFAULT_PROBE_SUCCESS_THRESHOLD;
}

function failureThresholdOf(spec: Probe): number {
  return spec.failureThreshold || DEFAULT_PROBE_FAILURE_THRESHOLD;
}

function warn(what: string, error: unknown): void {
  const detail = error instanceof Error ? (error.stack ?? error.message) : String(error);
  process.emitWarning(`${what}: ${detail}`);
}
