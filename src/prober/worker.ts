import {
  DEFAULT_PROBE_FAILURE_THRESHOLD,
  DEFAULT_PROBE_PERIOD_SECONDS,
  DEFAULT_PROBE_SUCCESS_THRESHOLD,
} from '../api/defaults.js';
import { findByName } from '../util/by-name.js';
import type { ContainerStatus, ContainerWithRules, Pod, PodStatus, Probe } from '../api/types.js';
import type { WorkerContext } from './context.js';
import type { ProbeManager } from './manager.js';
import type { WorkerSeries } from './metrics.js';
import type { ProbeVerdict } from './prober.js';
import type { ProbeRing } from './recorder.js';
import { ringInfoOf } from './recorder-info.js';
import { containerShouldRestart } from './restart-rules.js';
import { containerAgeSeconds } from './start-latency.js';
import type { ResultsManager } from './results.js';
import { Ticker } from './ticker.js';
import { parseApiTime, predatesKubelet } from './timestamps.js';
import type { ProbeType, Result } from './types.js';

/** How far before its tick a ticker's timer may run by the clock's `now()` (see `dueAt`). */
const TIMER_EARLY_MS = 2;

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

/**
 * Where the probe loop is (see `run`). Plain numbers, compared often and stored per worker.
 * NEW: not started. STARTING: start requested, the first step is queued. JITTER: sleeping
 * the start-up jitter. IDLE: waiting for a tick, a trigger or stop. PROBING: `doProbe` in
 * flight. EXITED: stopped and cleaned up.
 */
const NEW = 0;
const STARTING = 1;
const JITTER = 2;
const IDLE = 3;
const PROBING = 4;
const EXITED = 5;
type Phase = typeof NEW | typeof STARTING | typeof JITTER | typeof IDLE | typeof PROBING | typeof EXITED;

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
  /** The last `startedAt` text parsed, and what it gave (see `startedAtOf`). */
  private startedAtText: string | undefined;
  private startedAtMs: number | undefined;

  private stopRequested = false;
  private triggerPending = false;
  private phase: Phase = NEW;
  /** A wake-up (`onWake`) is queued as a microtask. */
  private wakeQueued = false;
  private periodMs = 0;
  private ticker: Ticker | undefined;
  private jitterTimer: unknown;
  /** What `run()` returned, made only when someone asks for it. */
  private loop: Promise<void> | undefined;
  private resolveLoop: (() => void) | undefined;
  /** Started by its manager, which counts the workers still running (see `launch`). */
  private managed = false;
  /** The flight recorder's ring, made at the first probe (an idle worker holds none). */
  private ring: ProbeRing | undefined;
  /** When the ticker's schedule was (re)phased: ticks fall due a whole number of periods after it. */
  private scheduleFrom = 0;
  /** Made once: the ticker calls it at every tick. */
  private readonly onTick = (): void => this.tick();

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
    if (this.loop === undefined) {
      this.loop = new Promise<void>((resolve) => {
        this.resolveLoop = resolve;
      });
      if (this.phase === EXITED) this.resolveLoop?.();
      else this.start();
    }
    return this.loop;
  }

  /**
   * @internal How the manager starts a worker: like `run()`, but without a promise (the
   * manager counts running workers instead of holding a promise and a callback for each);
   * the worker tells the manager when it has exited.
   */
  launch(): void {
    if (this.phase !== NEW) return;
    this.managed = true;
    this.start();
  }

  /*
   * The loop is a small state machine driven by callbacks rather than an `async` function
   * awaiting a fresh promise at every wake-up. Upstream's loop is:
   *
   *   [jitter]; probe; loop { wait for stop | trigger (→ re-phase) | tick; probe }
   *
   * and that is what happens here, step for step: start asynchronously; sleep the start-up
   * jitter (interruptible by stop); create the ticker; probe; then after every probe (unless
   * it said stop) take the first pending of stop, trigger, tick — in that priority — or wait
   * for one. Why not `async`: a suspended async frame, its awaited promise and resolver live
   * a whole period, so every tick promoted them to the old generation (work for the GC at
   * 1,000 probes a second) and an idle worker carried them. Here an idle worker holds only
   * its ticker's timer; what a probe allocates dies young.
   */

  /** Starts the loop (once); the first step runs asynchronously. */
  private start(): void {
    if (this.phase !== NEW) return;
    this.phase = STARTING;
    // Start asynchronously (upstream: `go w.run()`): addPod returns before any probing,
    // so result listeners never run inside it.
    queueMicrotask(() => this.guarded(() => this.begin()));
  }

  private begin(): void {
    const { clock } = this.context;
    this.periodMs = periodSecondsOf(this.spec) * 1000;
    // A freshly (re)started kubelet would otherwise probe every container at once.
    if (this.periodMs > clock.now() - this.context.startTime) {
      const ms = this.context.random() * this.periodMs;
      if (!this.stopRequested) {
        // Deliberately interruptible (upstream's `time.Sleep` is not, and probes once after
        // it): a stopped worker should not hold `close()` or a removed pod's clean-up for up
        // to a period. A trigger meanwhile waits for the end of the sleep.
        this.phase = JITTER;
        this.jitterTimer = clock.setTimeout(() => {
          this.jitterTimer = undefined;
          this.guarded(() => this.afterJitter());
        }, ms);
        return;
      }
    }
    this.afterJitter();
  }

  private afterJitter(): void {
    if (this.stopRequested) {
      this.exit();
      return;
    }
    this.scheduleFrom = this.context.clock.now();
    this.ticker = new Ticker(this.context.clock, this.periodMs, this.onTick);
    this.probeNow();
  }

  private probeNow(): void {
    this.phase = PROBING;
    // doProbe never rejects.
    void this.doProbe().then((keepGoing) => this.guarded(() => this.afterProbe(keepGoing)));
  }

  private afterProbe(keepGoing: boolean): void {
    if (!keepGoing) {
      this.exit();
      return;
    }
    this.phase = IDLE;
    this.dispatch();
  }

  /** Acts on the first pending of stop, manual trigger or tick (in that priority); else waits. */
  private dispatch(): void {
    if (this.stopRequested) {
      this.exit();
    } else if (this.triggerPending) {
      this.triggerPending = false;
      this.ticker?.reset();
      this.scheduleFrom = this.context.clock.now();
      this.probeNow();
    } else if (this.ticker?.take()) {
      this.probeNow();
    }
  }

  /**
   * Something may be pending (stop, trigger, tick). Acted on in a microtask, never inside
   * the caller (`stop()`/`trigger()` come from the kubelet's own code); while a probe is in
   * flight or before the loop has started nothing is queued: those steps look for themselves.
   */
  private signal(): void {
    if ((this.phase !== IDLE && this.phase !== JITTER) || this.wakeQueued) return;
    this.wakeQueued = true;
    queueMicrotask(() => {
      this.wakeQueued = false;
      this.guarded(() => this.onWake());
    });
  }

  /**
   * A tick. A worker on hold whose container instance is still the one it holds for (a
   * started container's startup probe, a failed liveness probe awaiting the kill) would
   * only find that out in `probeOnce` and return: that is read here, in the timer's own
   * callback, and the tick is consumed without the wake-up, the probe's promises and the
   * hops between them — a third of a long simulation's timers. Nothing differs that anyone
   * can see: a timer's callback starts with the microtask queue empty, so the status read
   * here is the one the wake-up would read, no other chain runs during the hops skipped
   * (nothing can trigger or stop the worker meanwhile), and such a probe changes nothing.
   */
  private tick(): void {
    if (this.phase === IDLE && this.hold && !this.wakeQueued && !this.stopRequested && !this.triggerPending && this.holdStandsSafely()) {
      this.ticker?.take();
      return;
    }
    this.signal();
  }

  /**
   * `holdStands`, in a timer's callback where nothing catches: a status provider that throws
   * (or a malformed status) sends the tick the usual way, where `doProbe` deals with it as
   * it always did — never out of the timer.
   */
  private holdStandsSafely(): boolean {
    try {
      return this.holdStands();
    } catch {
      return false;
    }
  }

  /** `probeOnce` would return `true` at the hold, having done nothing (same instance, pod not finished). */
  private holdStands(): boolean {
    const status = this.context.statusProvider.getPodStatus(this.pod.metadata?.uid ?? '');
    if (!status) return true;
    if (status.phase === 'Failed' || status.phase === 'Succeeded') return false;
    const c = this.containerStatusIn(status);
    return c === undefined || c.containerID === this.currentContainerID;
  }

  private onWake(): void {
    if (this.phase === IDLE) {
      this.dispatch();
    } else if (this.phase === JITTER && this.stopRequested) {
      this.context.clock.clearTimeout(this.jitterTimer);
      this.jitterTimer = undefined;
      this.exit();
    }
  }

  /** Runs a step of the loop; anything thrown (a faulty clock or random()) ends the worker. */
  private guarded(step: () => void): void {
    try {
      step();
    } catch (error) {
      // doProbe catches everything; this only guards the loop against a faulty clock or random().
      warn('probe worker loop failed', error);
      this.exit();
    }
  }

  private exit(): void {
    if (this.phase === EXITED) return;
    this.phase = EXITED;
    try {
      this.ticker?.stop();
    } catch (error) {
      warn('probe worker loop failed', error);
    }
    this.ticker = undefined;
    this.cleanUp();
    this.resolveLoop?.();
    this.resolveLoop = undefined;
    if (this.managed) this.context.workerExited();
  }

  private cleanUp(): void {
    try {
      if (this.currentContainerID !== '') this.resultsManager.remove(this.currentContainerID);
      this.context.removeWorker(this);
      this.series.remove();
      if (this.ring) this.ring.live = false;
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

    const c = this.containerStatusIn(status);
    if (c === undefined) return true; // container not created yet, or deleted
    const containerID = c.containerID ?? '';

    if (containerID !== this.currentContainerID) {
      this.adoptContainer(c, containerID, c !== statusNamed(status.containerStatuses, this.container.name));
    }

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

    // The age from `startedAt` cut to the whole second, as the kubelet's status manager stores it.
    const startedAt = this.startedAtOf(running.startedAt);
    if (startedAt !== undefined && containerAgeSeconds(clock.now(), startedAt) < (this.spec.initialDelaySeconds ?? 0)) {
      return true;
    }

    if (c.started === true) {
      // Kept alive (but idle) so a restarted container gets its startup probe again.
      if (this.probeType === 'startup') return true;
    } else if (this.probeType !== 'startup') {
      return true; // liveness and readiness wait until the container has started
    }

    const recorder = this.context.flightRecorder;
    const slot =
      recorder === undefined
        ? undefined
        : (this.ring ??= recorder.ringFor(ringInfoOf(this.pod, this.container, this.probeType, this.spec))).begin(
            this.dueAt(start),
            start,
            this.currentContainerID,
          );
    const verdict = await this.context.prober.probe(this.probeType, this.pod, status, this.container, this.currentContainerID, slot);
    if (slot === undefined || this.ring === undefined) return this.countVerdict(verdict, start);
    const id = this.currentContainerID;
    const before = this.resultsManager.get(id);
    this.ring.countingVerdict();
    const keepGoing = this.countVerdict(verdict, start);
    this.ring.commit(slot, clock.now(), verdict.result, verdict.error, before, this.resultsManager.get(id));
    return keepGoing;
  }

  /** The container's status with an ID: among the regular statuses first, the init ones when absent there or without an ID. */
  private containerStatusIn(status: PodStatus): ContainerStatus | undefined {
    const c = statusNamed(status.containerStatuses, this.container.name);
    if (c?.containerID) return c;
    const init = statusNamed(status.initContainerStatuses, this.container.name);
    return init?.containerID ? init : undefined;
  }

  /**
   * When the probe starting at `start` was due: the last tick of the schedule, or `start`
   * off-schedule. A start up to `TIMER_EARLY_MS` before a tick is that tick's: Node runs
   * timers on the event loop's monotonic clock in whole ms, so a tick can run while the
   * clock's `now()` (Date.now()) still reads 1 ms before it — it was filed under the tick
   * before, 999 ms "late" (≈ 1 % of the probes of `npm run bench -- --scenario stream`).
   */
  private dueAt(start: number): number {
    if (this.periodMs <= 0 || start < this.scheduleFrom) return start;
    return this.scheduleFrom + Math.floor((start + TIMER_EARLY_MS - this.scheduleFrom) / this.periodMs) * this.periodMs;
  }

  /** Counts a verdict against the thresholds and caches the result once one is crossed. */
  private countVerdict({ result, error }: ProbeVerdict, start: number): boolean {
    const { clock } = this.context;
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

  /**
   * `parseApiTime(startedAt)`, kept for the last text seen: a container's start time is the
   * same string at every probe of its instance, and parsing it was a visible part of a probe.
   */
  private startedAtOf(value: string | Date | undefined): number | undefined {
    if (typeof value !== 'string') return parseApiTime(value);
    if (value !== this.startedAtText) {
      this.startedAtMs = parseApiTime(value);
      this.startedAtText = value;
    }
    return this.startedAtMs;
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

/**
 * The first status of that name. Every tick of every worker looks: through an index kept
 * with the status manager's frozen snapshot (a scan made a period of a pod of n probed
 * containers cost n²), a scan for a provider's own mutable lists.
 */
function statusNamed(statuses: readonly ContainerStatus[] | null | undefined, name: string): ContainerStatus | undefined {
  // `null` too: what decoded JSON or YAML gives for an empty list (a library user's provider).
  return findByName(statuses, name);
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
