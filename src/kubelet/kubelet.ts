/**
 * The local kubelet: runs admitted pods on a ContainerRuntime and reacts to probe results
 * the way the kubelet's sync loop does (§3.9, §10): status generation with
 * `updatePodStatus` before `addPod` on every sync, liveness/startup failures kill and
 * restart with crash-loop back-off, readiness and startup results go to the status manager,
 * housekeeping every 2 s, and graceful termination in the kubelet's order.
 */
import { Registry } from 'prom-client';
import type { AdmitResult } from '../api/admit.js';
import { DEFAULT_TERMINATION_GRACE_PERIOD_SECONDS } from '../api/defaults.js';
import { serializeTimes, toKubeTime } from '../api/time.js';
import type { Event, LifecycleHandler, Pod, PodStatus } from '../api/types.js';
import { ProbeManager, type ProbeManagerOptions } from '../prober/manager.js';
import type { FlightRecorderOptions, HistoryFilter, ProbeHistory, RecorderEntry } from '../prober/recorder.js';
import { containerShouldRestart } from '../prober/restart-rules.js';
import { MINIMUM_KILL_GRACE_SECONDS, terminationGracePeriodSeconds } from '../prober/kill-policy.js';
import { ResultsManager } from '../prober/results.js';
import { PLEG_RELIST_PERIOD_MS } from '../prober/start-latency.js';
import type { ProbeType, ResultUpdate } from '../prober/types.js';
import type { AdoptedPod, ContainerEvent, ContainerRuntime, PodSandbox, RuntimeContainerStatus } from '../runtime/types.js';
import { realClock, realRandom, yieldToEventLoop, type Clock } from '../util/clock.js';
import { admitForLocalRun } from './admission.js';
import {
  BACK_OFF_EVENT_REASON,
  CRASH_LOOP_BACK_OFF_REASON,
  CrashLoopBackOff,
  backOffEventMessage,
  crashLoopBackOffKey,
  crashLoopBackOffMessage,
} from './backoff.js';
import { generatePodConditions, isRestartableInitContainer } from './conditions.js';
import { createEventRecorder, type EventFilter, type InMemoryEventRecorder } from './events.js';
import { ImageManager } from './images.js';
import { createHandlerRunner, type HandlerRunner } from './lifecycle.js';
import { generatePodStatus, type ContainerRecord } from './pod-status.js';
import { StatusManager } from './status-manager.js';
import { newTerminationOrdering, type TerminationOrdering } from './termination-order.js';

// The kill grace formula lives in prober/ so that check/ predicts exactly what the kubelet does.
export { killGracePeriodSeconds, MINIMUM_KILL_GRACE_SECONDS } from '../prober/kill-policy.js';

/** The kubelet's housekeeping period (`housekeepingPeriod`). */
export const HOUSEKEEPING_PERIOD_MS = 2_000;
/** `syncFrequency`: every pod is re-synced at least this often (jittered up to +50%). */
export const SYNC_FREQUENCY_MS = 60_000;
/** `workerBackOffPeriodJitterFactor` (pod_workers.go): a sync that failed is requeued up to this much later. */
const WORKER_BACK_OFF_JITTER_FACTOR = 0.5;
/** How soon a container whose spec the runtime refused is tried again (the pod worker's back-off). */
const CONFIG_ERROR_RETRY_MS = 10_000;
/** Immediate re-syncs of one pod in a row before the loop yields to timers and I/O (a safety net). */
const MAX_IMMEDIATE_SYNCS = 10;
/** "A kubelet that has been running for a while": no start-up jitter for its workers. */
const LONG_AGO_MS = 365 * 24 * 3_600_000;

export interface KubeletOptions {
  runtime: ContainerRuntime;
  clock?: Clock;
  random?: () => number;
  registry?: Registry;
  recorder?: InMemoryEventRecorder;
  /** Behave like a freshly restarted kubelet (jittered first probes) instead of one running for a while. */
  kubeletRestart?: boolean;
  /** Node config `crashLoopBackOff.maxContainerRestartPeriod` (1–300 s; default 300 s). */
  maxContainerRestartPeriodMs?: number;
  /** Test seam: the probe manager's prober (default: the real one over the runtime's exec). */
  prober?: ConstructorParameters<typeof ProbeManager>[0]['prober'];
  /**
   * What `addPods` admits (default: {@link admitForLocalRun}, which also wants a command per
   * container unless the runtime runs images). The simulator runs no process, so it admits
   * pods without commands.
   */
  admit?: (pods: readonly Pod[]) => AdmitResult;
  /** The probe manager's flight recorder: its options, or `false` for none (default: on). */
  flightRecorder?: FlightRecorderOptions | false;
  /** How network probes close their connections (default `'fin'`, the kubelet's); see ProbeClose. */
  probeClose?: ProbeManagerOptions['probeClose'];
  /**
   * Model the PLEG's relist (every {@link PLEG_RELIST_PERIOD_MS}, at this offset in ms from
   * whole seconds of the clock): a pod's next sync waits for the first relist that begins
   * after its previous sync ended, as the pod worker's `podCache.GetNewerThan(uid,
   * lastSyncTime)` does — so what a sync did (a container started) shows in the status, and
   * to the probe workers, only from that relist on: a new container's first probe waits for
   * it, whatever the probe. Default: none, a sync runs when asked (the runtime's own events
   * stand in for the PLEG). `probelet simulate` sets it on virtual time, `probelet run` on the
   * real clock (with the CRI runtime relisting at the same instants).
   */
  relistPhaseMs?: number;
  /**
   * When a requested pod sync starts. `turn` (the default on real time): after this event
   * loop turn's I/O callbacks, so the exits of containers that ended together — a pod of
   * 1,000 being deleted — are one sync of n containers, not n syncs of n each (n²); the
   * kubelet's pod worker coalesces PLEG events the same way. `microtask` (the default with
   * an injected clock): right after the current chain, the order a virtual clock replays
   * deterministically (the simulator, FakeClock tests).
   */
  syncBatching?: 'turn' | 'microtask';
  /**
   * Runs `postStart` and `preStop` hooks (default: exec through the runtime, HTTP on the
   * network, sleep on the clock — lifecycle.ts). The simulator answers exec and HTTP hooks
   * at once.
   */
  lifecycleHandlers?: HandlerRunner;
}

type Lifecycle = 'sync' | 'terminating' | 'terminated';

interface PodRecord {
  uid: string;
  /** The current pod object; replaced (never mutated) when deletion is requested. */
  pod: Pod;
  sandbox?: PodSandbox;
  containers: Map<string, ContainerRecord>;
  lifecycle: Lifecycle;
  initialized: boolean;
  /** Sync loop bookkeeping: one sync at a time per pod, coalescing requests. */
  dirty: boolean;
  /** Set by an action of this sync (start, kill, new waiting reason): the status must be regenerated. */
  changed: boolean;
  /** Set when this sync ended in a back-off: its requeue is the one `completeWork` makes (no resync besides). */
  backedOff: boolean;
  syncing: Promise<void> | undefined;
  timer: unknown;
  timerDue: number;
  /**
   * The pod worker's work-queue entry (`completeWork`: the resync, or a back-off's requeue):
   * each sync's replaces the last, as upstream's queue keeps one per pod.
   */
  requeue: unknown;
  /** When the last sync ended (for the relist gate); undefined before the first. */
  lastSyncEndMs: number | undefined;
  /**
   * Cancels the hooks of the pod's syncs (a postStart, a probe kill's preStop) when its
   * deletion begins, as the pod worker cancels a sync's context; then the termination's
   * preStops get a controller of their own, aborted once the pod has stopped.
   */
  hooks: AbortController;
  /** The runtime was asked for what an earlier run left of this pod (once, at the first sync). */
  adoptionChecked: boolean;
}

/** One change {@link Kubelet.watch} reports. */
export type KubeletChange = { type: 'pod'; pod: Pod } | { type: 'event'; event: Event } | { type: 'probe'; entry: RecorderEntry };

export class Kubelet {
  readonly clock: Clock;
  private readonly syncBatching: 'turn' | 'microtask';
  readonly statusManager: StatusManager;
  readonly recorder: InMemoryEventRecorder;
  readonly registry: Registry;
  readonly probeManager: ProbeManager;
  readonly livenessResults = new ResultsManager();
  readonly readinessResults = new ResultsManager();
  readonly startupResults = new ResultsManager();
  private readonly runtime: ContainerRuntime;
  private readonly random: () => number;
  private readonly admit: (pods: readonly Pod[]) => AdmitResult;
  private readonly backOff: CrashLoopBackOff;
  private readonly images: ImageManager;
  private readonly hookRunner: HandlerRunner;
  /** `<pod uid>/<container>` → when its image may be tried again (after ErrImagePull and the like). */
  private readonly imageRetryAt = new Map<string, number>();
  private readonly pods = new Map<string, PodRecord>();
  private readonly unsubscribe: Array<() => void> = [];
  private housekeepingTimer: unknown;
  private closed = false;
  private closing: Promise<void> | undefined;
  private readonly podListeners = new Set<(pod: Pod) => void>();
  private readonly relistPhaseMs: number | undefined;

  constructor(options: KubeletOptions) {
    this.runtime = options.runtime;
    this.clock = options.clock ?? realClock;
    this.syncBatching = options.syncBatching ?? (options.clock === undefined ? 'turn' : 'microtask');
    this.random = options.random ?? realRandom;
    this.admit = options.admit ?? ((pods) => admitForLocalRun(pods, { requireCommand: options.runtime.runsImages !== true }));
    this.relistPhaseMs = options.relistPhaseMs;
    this.registry = options.registry ?? new Registry();
    this.recorder = options.recorder ?? createEventRecorder({ clock: this.clock });
    this.statusManager = new StatusManager({ clock: this.clock });
    this.backOff = new CrashLoopBackOff({
      clock: this.clock,
      ...(options.maxContainerRestartPeriodMs !== undefined ? { maxContainerRestartPeriodMs: options.maxContainerRestartPeriodMs } : {}),
    });
    this.images = new ImageManager(this.runtime, this.clock);
    this.hookRunner =
      options.lifecycleHandlers ??
      createHandlerRunner({
        execSync: (id, cmd, timeoutMs) => this.runtime.execSync(id, cmd, timeoutMs),
        clock: this.clock,
        event: (pod, type, reason, message) => this.recorder.event({ pod }, type, reason, message),
      });
    this.probeManager = new ProbeManager({
      statusProvider: this.statusManager,
      livenessResults: this.livenessResults,
      readinessResults: this.readinessResults,
      startupResults: this.startupResults,
      runner: { runInContainer: (id, cmd, timeoutMs) => this.runtime.execSync(id, cmd, timeoutMs) },
      recorder: this.recorder,
      clock: this.clock,
      random: this.random,
      registry: this.registry,
      startTime: options.kubeletRestart ? this.clock.now() : this.clock.now() - LONG_AGO_MS,
      ...(options.prober ? { prober: options.prober } : {}),
      ...(options.flightRecorder !== undefined ? { flightRecorder: options.flightRecorder } : {}),
      ...(options.probeClose !== undefined ? { probeClose: options.probeClose } : {}),
    });
    this.unsubscribe.push(
      this.livenessResults.subscribe((u) => this.onLiveness(u)),
      this.readinessResults.subscribe((u) => this.onReadiness(u)),
      this.startupResults.subscribe((u) => this.onStartup(u)),
      this.runtime.subscribe((e) => this.onContainerEvent(e)),
      this.statusManager.subscribe((uid) => {
        const rec = this.pods.get(uid);
        if (rec) this.notify(rec);
      }),
    );
    this.scheduleHousekeeping();
  }

  /** Admits pods (defaults, validation, a command per container unless the runtime runs images) and runs the valid ones. */
  addPods(pods: readonly Pod[]): AdmitResult {
    const admitted = this.admit(pods);
    for (const pod of admitted.pods) this.runPod(pod);
    return admitted;
  }

  /** Pods with their current status, as the read-only API serves them (times in whole seconds). */
  listPods(): Pod[] {
    return [...this.pods.values()].map((rec) => {
      const status = this.statusManager.getPodStatus(rec.uid);
      return serializeTimes({ ...rec.pod, ...(status ? { status } : {}) });
    });
  }

  listEvents(filter?: EventFilter): Event[] {
    return this.recorder.list(filter);
  }

  probeMetrics(): Promise<string> {
    return this.registry.metrics();
  }

  /** The flight recorder's rings (the read-only API's `/probes`), newest attempts first. */
  listProbes(filter: HistoryFilter = {}): ProbeHistory[] {
    return this.probeManager.flightRecorder?.histories(filter) ?? [];
  }

  /**
   * Every change the dashboard shows, as it happens: pod statuses, events, recorded probe
   * attempts and transitions. Returns the unsubscribe.
   */
  watch(listener: (change: KubeletChange) => void): () => void {
    const offs = [
      this.onPodStatus((pod) => listener({ type: 'pod', pod })),
      this.recorder.subscribe((event) => listener({ type: 'event', event })),
      this.probeManager.flightRecorder?.subscribe((entry) => listener({ type: 'probe', entry })),
    ];
    return () => {
      for (const off of offs) off?.();
    };
  }

  /** Called with the pod (times serialized) after every change of its status, and when its deletion starts. */
  onPodStatus(listener: (pod: Pod) => void): () => void {
    this.podListeners.add(listener);
    return () => this.podListeners.delete(listener);
  }

  private notify(rec: PodRecord): void {
    if (this.podListeners.size === 0) return;
    const status = this.statusManager.getPodStatus(rec.uid);
    const pod = serializeTimes({ ...rec.pod, ...(status ? { status } : {}) });
    for (const listener of [...this.podListeners]) {
      try {
        listener(pod);
      } catch (err) {
        this.warn('pod status listener failed', err);
      }
    }
  }

  /** A container's recent output (the runtime's in-memory tail). */
  containerLogs(containerID: string): string {
    return this.runtime.containerLogs(containerID);
  }

  /**
   * Graceful deletion (§10.8): liveness and startup stop, readiness keeps probing while the
   * containers get SIGTERM and the grace period, then every worker stops.
   */
  async deletePod(uid: string, gracePeriodSeconds?: number): Promise<void> {
    const rec = this.pods.get(uid);
    if (!rec || rec.lifecycle !== 'sync') return;
    const grace = gracePeriodSeconds ?? rec.pod.spec?.terminationGracePeriodSeconds ?? DEFAULT_TERMINATION_GRACE_PERIOD_SECONDS;
    rec.lifecycle = 'terminating';
    rec.pod = {
      ...rec.pod,
      metadata: {
        ...rec.pod.metadata,
        deletionTimestamp: toKubeTime(this.clock.now()),
        deletionGracePeriodSeconds: grace,
      },
    };
    // The status manager's frozen copy, as runPod does: a pod it does not know as its own is
    // copied and frozen whole at every sync (n syncs of a pod of n containers while it stops).
    this.statusManager.addPod(rec.pod);
    rec.pod = this.statusManager.getPod(uid) ?? rec.pod;
    this.clearTimer(rec);
    this.notify(rec);
    // A sync waiting on a hook (a postStart that never returns) must not hold the deletion up.
    rec.hooks.abort();
    rec.hooks = new AbortController();
    await rec.syncing;
    await this.syncStatus(rec);
    this.probeManager.stopLivenessAndStartup(rec.pod);
    await this.stopAll(rec, grace);
    // preStop hooks still under way after their grace (a sleep, a request without an answer) end here.
    rec.hooks.abort();
    this.probeManager.removePod(rec.pod);
    if (rec.sandbox) await this.runtime.removePodSandbox(rec.sandbox.id);
    rec.lifecycle = 'terminated';
    // Nothing will be restarted any more: show how each container ended, not a back-off.
    for (const c of rec.containers.values()) c.waiting = undefined;
    await this.syncStatus(rec);
  }

  /** Whether the pod was given to this kubelet and not removed since (any lifecycle). */
  hasPod(uid: string): boolean {
    return this.pods.has(uid);
  }

  /**
   * Forgets a pod whose termination has finished (the pod worker's "finished" state, after
   * which upstream's pod manager drops the pod once the API object is gone): its record and
   * its status go. A source of pods that outlives its pods (the cluster agent) calls this, so
   * that what the kubelet keeps does not grow with every pod it ever ran. Refuses a pod that
   * still runs: only {@link deletePod} ends one.
   */
  removePod(uid: string): void {
    const rec = this.pods.get(uid);
    if (!rec) return;
    if (rec.lifecycle !== 'terminated') throw new Error(`pod ${rec.pod.metadata?.name ?? uid} is not terminated: delete it first`);
    this.clearTimer(rec);
    this.pods.delete(uid);
    this.statusManager.removePod(uid);
    for (const key of this.imageRetryAt.keys()) if (key.startsWith(`${uid}/`)) this.imageRetryAt.delete(key);
  }

  /**
   * `killContainersWithSyncResult`: every running container is killed at once, each with its
   * `Killing` event, its `preStop` hook and the whole grace; a sidecar's stop then waits for
   * its turn (after the regular containers and the sidecars declared after it,
   * termination-order.ts), which takes whole seconds off its grace.
   */
  private async stopAll(rec: PodRecord, graceSeconds: number): Promise<void> {
    const all = [...rec.containers.values()];
    const running = all.filter((c) => c.current?.state === 'running');
    const ordering = newTerminationOrdering(
      all.filter((c) => c.kind === 'regular').map((c) => c.spec.name),
      all.filter((c) => c.kind !== 'regular').map((c) => ({ name: c.spec.name, sidecar: c.kind === 'sidecar' })),
      new Set(running.map((c) => c.spec.name)),
      this.clock,
    );
    for (const c of running) this.event(rec, c, 'Normal', 'Killing', `Stopping container ${c.spec.name}`);
    await Promise.all(
      running.map(async (c) => {
        await this.stopContainer(rec, c, graceSeconds, ordering);
        ordering.containerTerminated(c.spec.name);
      }),
    );
  }

  /** Deletes every pod gracefully, then stops probing and the runtime. Nothing is left running. */
  close(): Promise<void> {
    this.closing ??= this.shutdown();
    return this.closing;
  }

  private async shutdown(): Promise<void> {
    try {
      await Promise.all([...this.pods.keys()].map((uid) => this.deletePod(uid)));
    } finally {
      // Even when a deletion failed (a runtime that went away), no loop of ours may outlive close().
      this.closed = true;
      this.clock.clearTimeout(this.housekeepingTimer);
      for (const rec of this.pods.values()) this.clearTimer(rec);
      await this.probeManager.close();
      for (const off of this.unsubscribe) off();
      await this.runtime.close();
    }
  }

  // --- pod workers ------------------------------------------------------------------

  private runPod(admitted: Pod): void {
    const uid = admitted.metadata?.uid ?? '';
    // The status manager's frozen copy from here on: syncs hand it back without a new copy.
    this.statusManager.addPod(admitted);
    const pod = this.statusManager.getPod(uid) ?? admitted;
    const containers = new Map<string, ContainerRecord>();
    for (const c of pod.spec?.initContainers ?? []) {
      containers.set(c.name, { spec: c, kind: isRestartableInitContainer(c) ? 'sidecar' : 'init', restartCount: 0 });
    }
    for (const c of pod.spec?.containers ?? []) containers.set(c.name, { spec: c, kind: 'regular', restartCount: 0 });
    const rec: PodRecord = {
      uid,
      pod,
      containers,
      lifecycle: 'sync',
      initialized: false,
      dirty: false,
      changed: false,
      backedOff: false,
      syncing: undefined,
      timer: undefined,
      timerDue: Infinity,
      requeue: undefined,
      lastSyncEndMs: undefined,
      hooks: new AbortController(),
      adoptionChecked: false,
    };
    this.pods.set(uid, rec);
    this.requestSync(rec);
  }

  /** Asks for a sync of the pod now (coalesced with any pending one). */
  private requestSync(rec: PodRecord): void {
    if (this.closed) return;
    rec.dirty = true;
    if (rec.syncing) return;
    rec.syncing = this.syncLoop(rec).finally(() => {
      rec.syncing = undefined;
    });
  }

  /** Asks for a sync after `delayMs` (back-off expiry, periodic resync); the earliest request wins. */
  private requestSyncAfter(rec: PodRecord, delayMs: number): void {
    const due = this.clock.now() + delayMs;
    if (rec.timer !== undefined && rec.timerDue <= due) return;
    this.clearTimer(rec);
    rec.timerDue = due;
    rec.timer = this.clock.setTimeout(() => {
      rec.timer = undefined;
      rec.timerDue = Infinity;
      this.requestSync(rec);
    }, delayMs);
  }

  /** `completeWork`'s `workQueue.Enqueue`: this sync's requeue replaces the pod's previous one. */
  private enqueue(rec: PodRecord, delayMs: number): void {
    if (rec.requeue !== undefined) this.clock.clearTimeout(rec.requeue);
    rec.requeue = this.clock.setTimeout(() => {
      rec.requeue = undefined;
      this.requestSync(rec);
    }, delayMs);
  }

  private clearTimer(rec: PodRecord): void {
    if (rec.timer !== undefined) this.clock.clearTimeout(rec.timer);
    if (rec.requeue !== undefined) this.clock.clearTimeout(rec.requeue);
    rec.requeue = undefined;
    rec.timer = undefined;
    rec.timerDue = Infinity;
  }

  private async syncLoop(rec: PodRecord): Promise<void> {
    await (this.syncBatching === 'turn' ? yieldToEventLoop() : Promise.resolve());
    let immediate = 0;
    while (rec.dirty && !this.closed) {
      const untilRelist = this.untilRelist(rec);
      if (untilRelist > 0) {
        // Still dirty: the timer's sync takes it up.
        this.requestSyncAfter(rec, untilRelist);
        return;
      }
      rec.dirty = false;
      // A sync that keeps asking for another must never starve timers, signals and I/O.
      if (++immediate > MAX_IMMEDIATE_SYNCS) {
        immediate = 0;
        await yieldToEventLoop();
      }
      try {
        if (rec.lifecycle === 'sync') await this.syncPod(rec);
        else await this.syncStatus(rec);
      } catch (err) {
        this.warn(`sync of pod ${rec.pod.metadata?.name ?? rec.uid} failed`, err);
      }
      rec.lastSyncEndMs = this.clock.now();
    }
  }

  /** How long the pod's next sync must wait for a relist that began after its last sync ended (0: none). */
  private untilRelist(rec: PodRecord): number {
    if (this.relistPhaseMs === undefined || rec.lastSyncEndMs === undefined) return 0;
    const k = Math.floor((rec.lastSyncEndMs - this.relistPhaseMs) / PLEG_RELIST_PERIOD_MS) + 1;
    return Math.max(0, this.relistPhaseMs + k * PLEG_RELIST_PERIOD_MS - this.clock.now());
  }

  /** Generates the API status (`updatePodStatus` first, conditions last) and stores it. */
  private async syncStatus(rec: PodRecord): Promise<PodStatus> {
    for (const c of rec.containers.values()) {
      if (c.current) c.current = this.runtime.containerStatus(c.current.id) ?? c.current;
    }
    const status = generatePodStatus({
      pod: rec.pod,
      podIP: rec.sandbox?.podIP,
      initialized: rec.initialized,
      records: rec.containers,
      // Upstream's generateAPIPodStatus: the status manager's, else the API's (after a restart).
      previous: this.statusManager.getPodStatus(rec.uid) ?? rec.pod.status,
      podIsTerminal: rec.lifecycle === 'terminated',
    });
    this.probeManager.updatePodStatus(rec.pod, status);
    // A terminated pod's sandbox is stopped (`killPod` in SyncTerminatingPod): not ready, as
    // `podHasSandboxReady` then finds it; its IP stays in the status.
    status.conditions = generatePodConditions(rec.pod, status, { sandboxReady: rec.sandbox !== undefined && rec.lifecycle !== 'terminated' });
    this.statusManager.setPodStatus(rec.pod, status);
    return status;
  }

  /** `SyncPod`: status, then `addPod`, then the runtime's actions for this pod. */
  private async syncPod(rec: PodRecord): Promise<void> {
    if (!rec.adoptionChecked) {
      rec.adoptionChecked = true;
      await this.adoptFromRuntime(rec);
    }
    const status = await this.syncStatus(rec);
    if (status.phase === 'Succeeded' || status.phase === 'Failed') {
      await this.finishPod(rec);
      return;
    }
    this.probeManager.addPod(rec.pod);
    if (!rec.sandbox) rec.sandbox = await this.runtime.runPodSandbox(rec.pod);
    rec.changed = false;
    rec.backedOff = false;
    await this.syncContainers(rec);
    if (this.regularContainersDone(rec)) {
      // Sidecars run until every regular container has finished for good, then the pod ends.
      await this.finishPod(rec);
      return;
    }
    // What this sync did shows in the next status (upstream: the next sync, which its own
    // PLEG events trigger); a start error has no event, so ask directly. A new back-off
    // does not ask: upstream shows it only at the pod's next sync (see restartWithBackOff).
    if (rec.changed) rec.dirty = true;
    // `completeWork` enqueues one requeue per sync: the back-off's, or else the resync.
    if (!rec.backedOff) this.enqueue(rec, SYNC_FREQUENCY_MS * (1 + 0.5 * this.random()));
  }

  /**
   * After a restart of the node agent: the pod's sandbox and containers an earlier run left
   * become this pod's, as the kubelet's first sync after a restart finds its pod in the
   * runtime (its pod cache is the runtime's, not its own memory). The newest instance of
   * each container is current, with the runtime's restart count (the
   * `io.kubernetes.container.restartCount` annotation); the one before it, if it exited, is
   * `lastState`. No event: nothing was created or started. A running container keeps running
   * and is probed (the prober's kubelet-restart rules apply); an exited one is restarted by
   * the usual rules, its back-off starting afresh as upstream's in-memory back-off does.
   */
  private async adoptFromRuntime(rec: PodRecord): Promise<void> {
    let adopted: AdoptedPod | undefined;
    try {
      adopted = await this.runtime.adoptPod?.(rec.pod);
    } catch (err) {
      this.warn(`taking over what an earlier run left of pod ${rec.pod.metadata?.name ?? rec.uid} failed; it starts anew`, err);
      return;
    }
    if (!adopted) return;
    rec.sandbox = adopted.sandbox;
    const byName = new Map<string, RuntimeContainerStatus[]>();
    for (const status of adopted.containers) byName.set(status.name, [...(byName.get(status.name) ?? []), status]);
    for (const [name, instances] of byName) {
      const c = rec.containers.get(name);
      if (!c) continue;
      instances.sort((a, b) => b.attempt - a.attempt || b.createdAt - a.createdAt);
      const [newest, before] = instances;
      if (!newest) continue;
      c.current = newest;
      c.restartCount = newest.attempt;
      if (before?.state === 'exited') c.previous = before;
    }
    // A regular container ran: the init containers are done (computePodActions' view of a pod
    // whose init containers may since have been removed).
    if ([...rec.containers.values()].some((c) => c.kind === 'regular' && c.current !== undefined)) rec.initialized = true;
  }

  /**
   * A pod whose containers will not run again goes through termination like a deleted one
   * (§3.9: stop liveness/startup, stop what is left — sidecars —, remove the workers).
   */
  private async finishPod(rec: PodRecord): Promise<void> {
    rec.lifecycle = 'terminating';
    this.clearTimer(rec);
    this.probeManager.stopLivenessAndStartup(rec.pod);
    await this.stopAll(rec, rec.pod.spec?.terminationGracePeriodSeconds ?? DEFAULT_TERMINATION_GRACE_PERIOD_SECONDS);
    this.probeManager.removePod(rec.pod);
    if (rec.sandbox) await this.runtime.removePodSandbox(rec.sandbox.id);
    rec.lifecycle = 'terminated';
    for (const c of rec.containers.values()) c.waiting = undefined;
    await this.syncStatus(rec);
  }

  /** `computePodActions` + `SyncPod` of the runtime manager, in the kubelet's order. */
  private async syncContainers(rec: PodRecord): Promise<void> {
    const records = [...rec.containers.values()];
    let initDone = true;
    for (const c of records.filter((r) => r.kind !== 'regular')) {
      if (c.kind === 'sidecar') {
        if (!(await this.syncSidecar(rec, c)) && !rec.initialized) {
          initDone = false;
          break;
        }
        continue;
      }
      if (rec.initialized) continue;
      const cur = c.current;
      if (cur?.state === 'exited' && cur.exitCode === 0) continue;
      initDone = false;
      if (!cur) await this.startContainer(rec, c);
      else if (cur.state === 'exited' && containerShouldRestart(c.spec, rec.pod, cur.exitCode ?? 0)) {
        await this.restartWithBackOff(rec, c, cur);
      }
      break;
    }
    if (initDone) rec.initialized = true;
    if (!rec.initialized) return;

    for (const c of records.filter((r) => r.kind === 'regular')) {
      const cur = c.current;
      if (!cur) {
        await this.startContainer(rec, c);
        continue;
      }
      if (cur.state === 'running') {
        const kind = this.failedProbe(cur);
        if (!kind) continue;
        // Exit-code rules are not consulted for a container that is still running (§10.4).
        const restart = (c.spec.restartPolicy ?? rec.pod.spec?.restartPolicy ?? 'Always') !== 'Never';
        const exitedBefore = c.previous;
        if (!restart && !this.anyOtherRegularKeptOrStarting(rec, c)) {
          // computePodActions: nothing kept, nothing to start → KillPod, which stops every
          // container with `Stopping container X` and the pod's grace, not the probe's
          // (kuberuntime_manager.go; killContainer's message when none is given).
          rec.changed = true;
          await this.stopAll(rec, rec.pod.spec?.terminationGracePeriodSeconds ?? DEFAULT_TERMINATION_GRACE_PERIOD_SECONDS);
          continue;
        }
        await this.killForProbe(rec, c, kind, restart);
        if (restart) await this.restartWithBackOff(rec, c, exitedBefore);
        continue;
      }
      if (containerShouldRestart(c.spec, rec.pod, cur.exitCode ?? 0)) await this.restartWithBackOff(rec, c, cur);
    }
  }

  /** Whether another regular container keeps running (no failed probe) or is to be (re)started: upstream's keepCount / ContainersToStart. */
  private anyOtherRegularKeptOrStarting(rec: PodRecord, condemned: ContainerRecord): boolean {
    return [...rec.containers.values()].some((o) => {
      if (o === condemned || o.kind !== 'regular') return false;
      const cur = o.current;
      if (!cur) return true;
      if (cur.state === 'running') return this.failedProbe(cur) === undefined || (o.spec.restartPolicy ?? rec.pod.spec?.restartPolicy ?? 'Always') !== 'Never';
      return containerShouldRestart(o.spec, rec.pod, cur.exitCode ?? 0);
    });
  }

  /** Every regular container has exited and will not be restarted. */
  private regularContainersDone(rec: PodRecord): boolean {
    if (!rec.initialized) return false;
    return [...rec.containers.values()]
      .filter((c) => c.kind === 'regular')
      .every((c) => c.current?.state === 'exited' && !containerShouldRestart(c.spec, rec.pod, c.current.exitCode ?? 0));
  }

  /** Sidecars are restarted whatever the pod's policy; returns whether it counts as started. */
  private async syncSidecar(rec: PodRecord, c: ContainerRecord): Promise<boolean> {
    const cur = c.current;
    if (!cur) {
      await this.startContainer(rec, c);
      return c.current?.state === 'running' && !c.spec.startupProbe;
    }
    if (cur.state === 'running') {
      const kind = this.failedProbe(cur);
      if (kind) {
        const exitedBefore = c.previous;
        await this.killForProbe(rec, c, kind, true);
        await this.restartWithBackOff(rec, c, exitedBefore);
        // Liveness does not gate later containers (§10.5); a failed startup does.
        return kind === 'liveness';
      }
      return !c.spec.startupProbe || this.startupResults.get(cur.id) === 'success';
    }
    await this.restartWithBackOff(rec, c, cur);
    return false;
  }

  /** Liveness, then startup: which cached verdict condemns this running container, if any. */
  private failedProbe(cur: RuntimeContainerStatus): ProbeType | undefined {
    if (this.livenessResults.get(cur.id) === 'failure') return 'liveness';
    if (this.startupResults.get(cur.id) === 'failure') return 'startup';
    return undefined;
  }

  private async killForProbe(rec: PodRecord, c: ContainerRecord, kind: ProbeType, willRestart: boolean): Promise<void> {
    const message =
      c.kind === 'sidecar'
        ? `Init container ${c.spec.name} failed ${kind} probe`
        : `Container ${c.spec.name} failed ${kind} probe${willRestart ? ', will be restarted' : ''}`;
    this.event(rec, c, 'Normal', 'Killing', message);
    this.noteProbeAction(rec, c, kind, 'Killing', message);
    rec.changed = true;
    await this.stopContainer(rec, c, terminationGracePeriodSeconds(rec.pod, c.spec, kind));
  }

  /**
   * `killContainer` after its `Killing` event: the container's `preStop` hook first, when it
   * has one and `graceSeconds` > 0, which uses up whole seconds of the grace
   * (`executePreStopHook`); in a pod's termination, a sidecar then waits for its turn
   * (`ordering`), which takes whole seconds off too; then the stop with what is left, at
   * least 2 s (`minimumGracePeriodInSeconds`).
   */
  private async stopContainer(rec: PodRecord, c: ContainerRecord, graceSeconds: number, ordering?: TerminationOrdering): Promise<void> {
    const cur = c.current;
    if (!cur || cur.state !== 'running') return;
    let grace = graceSeconds;
    const preStop = c.spec.lifecycle?.preStop;
    if (preStop && grace > 0) grace -= await this.executePreStopHook(rec, c, cur.id, preStop, grace);
    if (ordering && grace > 0) grace -= Math.trunc(await ordering.waitForTurn(c.spec.name, grace));
    grace = Math.max(grace, MINIMUM_KILL_GRACE_SECONDS);
    try {
      await this.runtime.stopContainer(cur.id, grace * 1000);
    } catch {
      // The runtime refused or went away (closed under a forced stop): its own status is what is known.
    }
    c.current = this.runtime.containerStatus(cur.id) ?? cur;
  }

  /**
   * `executePreStopHook`: runs the hook and waits for it at most `graceSeconds`; returns the
   * whole seconds it took. A failure records `FailedPreStopHook` ("PreStopHook failed": the
   * kubelet keeps the hook's own message out of events, where secrets could leak), also one
   * that comes after the wait was given up. A sleep or a request still under way then is
   * ended (upstream leaves its goroutine to finish; nothing shows either way); an exec is
   * left to end with its container, as on a node.
   */
  private async executePreStopHook(
    rec: PodRecord,
    c: ContainerRecord,
    containerID: string,
    handler: LifecycleHandler,
    graceSeconds: number,
  ): Promise<number> {
    const started = this.clock.now();
    const own = new AbortController();
    const parent = rec.hooks.signal;
    const onParentAbort = (): void => own.abort();
    parent.addEventListener('abort', onParentAbort, { once: true });
    let done = false;
    const run = this.hookRunner
      .run({ pod: rec.pod, container: c.spec, containerID, podIP: rec.sandbox?.podIP ?? '', signal: own.signal }, handler)
      .catch((err: unknown) => (err instanceof Error ? err.message : String(err)))
      .then((error) => {
        done = true;
        parent.removeEventListener('abort', onParentAbort);
        if (error !== undefined && !own.signal.aborted) this.event(rec, c, 'Warning', 'FailedPreStopHook', 'PreStopHook failed');
      });
    let timer: unknown;
    const gaveUp = new Promise<void>((resolve) => {
      timer = this.clock.setTimeout(resolve, graceSeconds * 1000);
    });
    await Promise.race([run, gaveUp]);
    this.clock.clearTimeout(timer);
    if (!done && !handler.exec) own.abort();
    return Math.floor((this.clock.now() - started) / 1000);
  }

  /**
   * Starts an exited container again unless the crash-loop back-off says wait (`doBackOff`).
   *
   * `latestExited` is the latest *exited* instance in the pod status the sync read: the
   * current instance when it exited on its own, but for a container this same sync has just
   * killed (liveness/startup), the instance before it — upstream's `SyncPod` kills and starts
   * in one pass over the status read before the kill. Without one (the first kill) the
   * container starts at once and the back-off gets no entry; otherwise the gate measures from
   * that older exit, so a probe-killed container restarts at once until the step outgrows
   * how long it runs (kubernetes#22240).
   */
  private async restartWithBackOff(rec: PodRecord, c: ContainerRecord, latestExited: RuntimeContainerStatus | undefined): Promise<void> {
    if (!c.current) return;
    if (!latestExited) {
      await this.startContainer(rec, c);
      return;
    }
    const decision = this.backOff.check(crashLoopBackOffKey(rec.pod, c.spec), latestExited.finishedAt ?? this.clock.now());
    if (decision.inBackOff) {
      const message = crashLoopBackOffMessage(decision.delayMs, c.spec.name, rec.pod);
      if (c.waiting?.reason !== CRASH_LOOP_BACK_OFF_REASON || c.waiting.message !== message) {
        this.noteProbeAction(rec, c, undefined, BACK_OFF_EVENT_REASON, message);
      }
      // Like upstream's `reasonCache` (kubelet.go SyncPod: updated after the runtime's SyncPod,
      // read by the *next* sync's generateAPIPodStatus): the waiting reason shows from the
      // next sync on, whatever triggers it (the requeue below, a probe result, a PLEG event).
      // No sync of its own: after a crash the status reads terminated (Error) until then.
      c.waiting = { reason: CRASH_LOOP_BACK_OFF_REASON, message };
      this.event(rec, c, 'Warning', BACK_OFF_EVENT_REASON, backOffEventMessage(c.spec.name, rec.pod));
      // `completeWork` (pod_workers.go): a sync that ends in back-off is requeued at the
      // back-off's expiry, capped at the resync interval, jittered up to +50 % — so a restart
      // comes up to half the remaining step late, at any phase of the probe ticks.
      const requeueMs = Math.min(decision.remainingMs, SYNC_FREQUENCY_MS);
      rec.backedOff = true;
      this.enqueue(rec, Math.max(requeueMs * (1 + WORKER_BACK_OFF_JITTER_FACTOR * this.random()), 1));
      return;
    }
    await this.startContainer(rec, c);
  }

  private async startContainer(rec: PodRecord, c: ContainerRecord): Promise<void> {
    if (!rec.sandbox) return;
    const attempt = c.current ? c.restartCount + 1 : 0;
    // `EnsureImageExists` first: a missing image keeps the container waiting (ErrImagePull,
    // ImagePullBackOff), and the image is not tried again before the pod worker's retry.
    const imageKey = `${rec.uid}/${c.spec.name}`;
    if ((this.imageRetryAt.get(imageKey) ?? -Infinity) > this.clock.now()) return;
    const image = await this.images.ensureImageExists(rec.pod, c.spec, (type, reason, message) => this.event(rec, c, type, reason, message));
    if (!image.ok) {
      if (c.waiting?.reason !== image.reason || c.waiting.message !== image.message) rec.changed = true;
      c.waiting = { reason: image.reason, message: image.message };
      this.event(rec, c, 'Warning', 'Failed', `Error: ${image.reason}`);
      this.imageRetryAt.set(imageKey, this.clock.now() + image.retryAfterMs);
      this.requestSyncAfter(rec, image.retryAfterMs);
      return;
    }
    this.imageRetryAt.delete(imageKey);
    let started: RuntimeContainerStatus;
    try {
      started = await this.runtime.startContainer(rec.sandbox.id, rec.pod, c.spec, attempt);
    } catch (err) {
      // A spec the runtime refuses: retried at a later sync, never in a tight loop.
      const message = err instanceof Error ? err.message : String(err);
      if (c.waiting?.reason !== 'CreateContainerConfigError' || c.waiting.message !== message) rec.changed = true;
      c.waiting = { reason: 'CreateContainerConfigError', message };
      this.event(rec, c, 'Warning', 'Failed', `Error: ${message}`);
      this.requestSyncAfter(rec, CONFIG_ERROR_RETRY_MS);
      return;
    }
    rec.changed = true;
    if (c.current) {
      c.previous = c.current;
      c.restartCount++;
      void this.runtime.removeContainer(c.previous.id).catch(() => undefined);
    }
    c.current = started;
    c.waiting = undefined;
    if (started.state === 'exited' && started.reason === 'StartError') {
      c.waiting = { reason: 'RunContainerError', message: started.message ?? 'failed to start container' };
      this.event(rec, c, 'Warning', 'Failed', `Error: ${started.message ?? 'failed to start container'}`);
      return;
    }
    // kubelet 1.35's words (kuberuntime_container.go startContainer): the container's name is in the
    // event's involvedObject.fieldPath, not in the message.
    this.event(rec, c, 'Normal', 'Created', 'Container created');
    this.event(rec, c, 'Normal', 'Started', 'Container started');
    if (c.restartCount > 0) this.noteProbeAction(rec, c, undefined, 'Started', `Restarted container ${c.spec.name} (restart ${c.restartCount})`);
    const postStart = c.spec.lifecycle?.postStart;
    if (postStart) await this.executePostStartHook(rec, c, started.id, postStart);
  }

  /**
   * `startContainer`'s step 4: the sync waits for the hook (no timeout upstream; the pod's
   * deletion cancels it). A failure records `FailedPostStartHook` ("PostStartHook failed"),
   * kills the container with `Killing` "FailedPostStartHook" and the pod's grace (its
   * preStop included), and the container waits with reason `PostStartHookError` and the
   * hook's message (the `reasonCache` entry) until the next sync restarts it.
   */
  private async executePostStartHook(
    rec: PodRecord,
    c: ContainerRecord,
    containerID: string,
    handler: LifecycleHandler,
  ): Promise<void> {
    const signal = rec.hooks.signal;
    const error = await this.hookRunner
      .run({ pod: rec.pod, container: c.spec, containerID, podIP: rec.sandbox?.podIP ?? '', signal }, handler)
      .catch((err: unknown) => (err instanceof Error ? err.message : String(err)));
    if (error === undefined || signal.aborted) return;
    this.event(rec, c, 'Warning', 'FailedPostStartHook', 'PostStartHook failed');
    this.event(rec, c, 'Normal', 'Killing', 'FailedPostStartHook');
    rec.changed = true;
    await this.stopContainer(rec, c, terminationGracePeriodSeconds(rec.pod, c.spec, undefined));
    // The reasonCache's waiting state shows only for a container that will be started again
    // (convertToAPIContainerStatuses asks ShouldContainerBeRestarted); else it reads terminated.
    const exitCode = c.current?.exitCode ?? 0;
    if (containerShouldRestart(c.spec, rec.pod, exitCode)) c.waiting = { reason: 'PostStartHookError', message: error };
  }

  // --- the sync loop's reactions (§10.1) ----------------------------------------------

  private podOf(update: ResultUpdate): PodRecord | undefined {
    return this.pods.get(update.podUID);
  }

  private onLiveness(update: ResultUpdate): void {
    const rec = this.podOf(update);
    if (rec && update.result === 'failure') this.requestSync(rec);
  }

  private onReadiness(update: ResultUpdate): void {
    const rec = this.podOf(update);
    if (!rec) return;
    const ready = update.result === 'success';
    this.statusManager.setContainerReadiness(update.podUID, update.containerID, ready);
    const c = [...rec.containers.values()].find((r) => r.current?.id === update.containerID);
    if (c) this.noteProbeAction(rec, c, 'readiness', 'Ready', `Ready → ${ready ? 'True' : 'False'}`);
    this.requestSync(rec);
  }

  private onStartup(update: ResultUpdate): void {
    const rec = this.podOf(update);
    if (!rec) return;
    this.statusManager.setContainerStartup(update.podUID, update.containerID, update.result === 'success');
    this.requestSync(rec);
  }

  /** The runtime's part of the PLEG: a container started or exited → sync its pod. */
  private onContainerEvent(event: ContainerEvent): void {
    const rec = this.pods.get(event.status.podUID);
    if (!rec) return;
    const c = rec.containers.get(event.status.name);
    if (c?.current?.id === event.status.id) c.current = event.status;
    // With the relist modelled, the kubelet learns of a change at the first relist at or
    // after it (pleg/generic.go: relist every second, its events sync the pod): a crash is
    // acted on up to a second after the exit, not at the exit — unless the runtime's own
    // relist found it (CRI), which is that relist.
    const untilRelist = this.runtime.relists === true ? 0 : this.untilNextRelist();
    if (untilRelist > 0) this.requestSyncAfter(rec, untilRelist);
    else this.requestSync(rec);
  }

  /** How long until the next relist instant (0: at one now, or no relist modelled). */
  private untilNextRelist(): number {
    if (this.relistPhaseMs === undefined) return 0;
    const sincePhase = (((this.clock.now() - this.relistPhaseMs) % PLEG_RELIST_PERIOD_MS) + PLEG_RELIST_PERIOD_MS) % PLEG_RELIST_PERIOD_MS;
    return sincePhase === 0 ? 0 : PLEG_RELIST_PERIOD_MS - sincePhase;
  }

  private scheduleHousekeeping(): void {
    this.housekeepingTimer = this.clock.setTimeout(() => {
      if (this.closed) return;
      const desired = new Set([...this.pods.values()].filter((r) => r.lifecycle !== 'terminated').map((r) => r.uid));
      this.probeManager.cleanupPods(desired);
      this.backOff.gc();
      this.images.gc(desired);
      for (const key of this.imageRetryAt.keys()) {
        if (!desired.has(key.slice(0, key.indexOf('/')))) this.imageRetryAt.delete(key);
      }
      this.scheduleHousekeeping();
    }, HOUSEKEEPING_PERIOD_MS);
  }

  private event(rec: PodRecord, c: ContainerRecord, type: 'Normal' | 'Warning', reason: string, message: string): void {
    this.recorder.event({ pod: rec.pod, containerName: c.spec.name }, type, reason, message);
  }

  /** Tells the flight recorder what the kubelet did about a probe (or, without `kind`, about all of the container's). */
  private noteProbeAction(rec: PodRecord, c: ContainerRecord, kind: ProbeType | undefined, reason: string, message: string): void {
    this.probeManager.flightRecorder?.noteAction(rec.uid, c.spec.name, kind, reason, message);
  }

  private warn(what: string, err: unknown): void {
    process.emitWarning(`${what}: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
  }
}
