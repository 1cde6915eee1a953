/**
 * The local kubelet: runs admitted pods on a ContainerRuntime and reacts to probe results
 * the way the kubelet's sync loop does (§3.9, §10): status generation with
 * `updatePodStatus` before `addPod` on every sync, liveness/startup failures kill and
 * restart with crash-loop back-off, readiness and startup results go to the status manager,
 * housekeeping every 2 s, and graceful termination in the kubelet's order.
 *
 * Laid out as upstream's kubelet: this file is kubelet.go's part (the pods in and out, the
 * sync loop's reactions to probe results and runtime events, housekeeping, the API);
 * pod-workers.ts the per-pod queue (pod_workers.go); compute-pod-actions.ts what a sync does
 * and sync-pod.ts the doing (kuberuntime_manager.go); container-actions.ts the starts, kills
 * and hooks (kuberuntime_container.go); adopt.ts the first sync after a restart.
 */
import { Registry } from 'prom-client';
import type { AdmitResult } from '../api/admit.js';
import { DEFAULT_TERMINATION_GRACE_PERIOD_SECONDS } from '../api/defaults.js';
import { serializeTimes, toKubeTime } from '../api/time.js';
import type { Event, Pod } from '../api/types.js';
import { ProbeManager, type ProbeManagerOptions } from '../prober/manager.js';
import type { FlightRecorderOptions, HistoryFilter, ProbeHistory, RecorderEntry } from '../prober/recorder.js';
import { ResultsManager } from '../prober/results.js';
import { PLEG_RELIST_PERIOD_MS } from '../prober/start-latency.js';
import type { ResultUpdate } from '../prober/types.js';
import type { ContainerEvent, ContainerRuntime } from '../runtime/types.js';
import { realClock, realRandom, type Clock } from '../util/clock.js';
import { admitForLocalRun } from './admission.js';
import { CrashLoopBackOff } from './backoff.js';
import { isRestartableInitContainer } from './conditions.js';
import { killContainersWithSyncResult } from './container-actions.js';
import { noteProbeAction, type KubeletContext, type PodRecord } from './context.js';
import { createEventRecorder, type EventFilter, type InMemoryEventRecorder } from './events.js';
import { ImageManager } from './images.js';
import type { SecretGetter } from './pull-secrets.js';
import { createHandlerRunner, type HandlerRunner } from './lifecycle.js';
import type { ContainerRecord } from './pod-status.js';
import { clearTimer, requestSync, requestSyncAfter } from './pod-workers.js';
import { StatusManager } from './status-manager.js';
import { syncPod, syncStatus } from './sync-pod.js';

// The kill grace formula lives in prober/ so that check/ predicts exactly what the kubelet does.
export { killGracePeriodSeconds, MINIMUM_KILL_GRACE_SECONDS } from '../prober/kill-policy.js';

/** The kubelet's housekeeping period (`housekeepingPeriod`). */
export const HOUSEKEEPING_PERIOD_MS = 2_000;
export { SYNC_FREQUENCY_MS } from './pod-workers.js';
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
  /**
   * The pods' pull Secrets (`imagePullSecrets`): from the API on a node, from the manifests'
   * own Secret documents under `run`. None: every pull is anonymous.
   */
  getSecret?: SecretGetter;
  /** KubeletConfiguration `serializeImagePulls` (default true; false when `maxParallelImagePulls` ≥ 2). */
  serializeImagePulls?: boolean;
  /** KubeletConfiguration `maxParallelImagePulls` (with `serializeImagePulls: false`; default no limit). */
  maxParallelImagePulls?: number;
}

/** One change {@link Kubelet.watch} reports. */
export type KubeletChange = { type: 'pod'; pod: Pod } | { type: 'event'; event: Event } | { type: 'probe'; entry: RecorderEntry };

export class Kubelet {
  readonly clock: Clock;
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
  private readonly pods = new Map<string, PodRecord>();
  private readonly unsubscribe: Array<() => void> = [];
  private housekeepingTimer: unknown;
  private closing: Promise<void> | undefined;
  private readonly podListeners = new Set<(pod: Pod) => void>();
  private readonly relistPhaseMs: number | undefined;
  /** What the pod workers, SyncPod and the container actions are handed. */
  private readonly ctx: KubeletContext;

  constructor(options: KubeletOptions) {
    this.runtime = options.runtime;
    this.clock = options.clock ?? realClock;
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
    this.images = new ImageManager(this.runtime, this.clock, {
      ...(options.serializeImagePulls !== undefined ? { serializeImagePulls: options.serializeImagePulls } : {}),
      ...(options.maxParallelImagePulls !== undefined ? { maxParallelImagePulls: options.maxParallelImagePulls } : {}),
    });
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
    this.ctx = {
      clock: this.clock,
      random: this.random,
      runtime: this.runtime,
      statusManager: this.statusManager,
      recorder: this.recorder,
      probeManager: this.probeManager,
      livenessResults: this.livenessResults,
      startupResults: this.startupResults,
      backOff: this.backOff,
      images: this.images,
      hookRunner: this.hookRunner,
      getSecret: options.getSecret,
      syncBatching: options.syncBatching ?? (options.clock === undefined ? 'turn' : 'microtask'),
      relistPhaseMs: this.relistPhaseMs,
      closed: false,
      syncPod: (rec) => syncPod(this.ctx, rec),
      syncTerminatingPod: (rec) => syncStatus(this.ctx, rec),
      warn: (what, err) => this.warn(what, err),
    };
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

  /** The same rings one at a time, each copied when reached (what `/probes` writes out). */
  eachProbeHistory(filter: HistoryFilter = {}): Iterable<ProbeHistory> {
    return this.probeManager.flightRecorder?.eachHistory(filter) ?? [];
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
    clearTimer(this.ctx, rec);
    this.notify(rec);
    // A sync waiting on a hook (a postStart that never returns) must not hold the deletion up.
    rec.hooks.abort();
    rec.hooks = new AbortController();
    await rec.syncing;
    await syncStatus(this.ctx, rec);
    this.probeManager.stopLivenessAndStartup(rec.pod);
    await killContainersWithSyncResult(this.ctx, rec, grace);
    // preStop hooks still under way after their grace (a sleep, a request without an answer) end here.
    rec.hooks.abort();
    this.probeManager.removePod(rec.pod);
    if (rec.sandbox) await this.runtime.removePodSandbox(rec.sandbox.id);
    rec.lifecycle = 'terminated';
    // Nothing will be restarted any more: show how each container ended, not a back-off.
    for (const c of rec.containers.values()) c.waiting = undefined;
    await syncStatus(this.ctx, rec);
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
    clearTimer(this.ctx, rec);
    this.pods.delete(uid);
    this.statusManager.removePod(uid);
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
      this.ctx.closed = true;
      this.clock.clearTimeout(this.housekeepingTimer);
      for (const rec of this.pods.values()) clearTimer(this.ctx, rec);
      await this.probeManager.close();
      for (const off of this.unsubscribe) off();
      await this.runtime.close();
    }
  }

  // --- pod additions (HandlePodAdditions) ------------------------------------------

  /** A new pod: its record, then its first sync through its pod worker. */
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
    requestSync(this.ctx, rec);
  }

  // --- the sync loop's reactions (§10.1) ----------------------------------------------

  private podOf(update: ResultUpdate): PodRecord | undefined {
    return this.pods.get(update.podUID);
  }

  private onLiveness(update: ResultUpdate): void {
    const rec = this.podOf(update);
    if (rec && update.result === 'failure') requestSync(this.ctx, rec);
  }

  private onReadiness(update: ResultUpdate): void {
    const rec = this.podOf(update);
    if (!rec) return;
    const ready = update.result === 'success';
    this.statusManager.setContainerReadiness(update.podUID, update.containerID, ready);
    const c = [...rec.containers.values()].find((r) => r.current?.id === update.containerID);
    if (c) noteProbeAction(this.ctx, rec, c, 'readiness', 'Ready', `Ready → ${ready ? 'True' : 'False'}`);
    requestSync(this.ctx, rec);
  }

  private onStartup(update: ResultUpdate): void {
    const rec = this.podOf(update);
    if (!rec) return;
    this.statusManager.setContainerStartup(update.podUID, update.containerID, update.result === 'success');
    requestSync(this.ctx, rec);
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
    if (untilRelist > 0) requestSyncAfter(this.ctx, rec, untilRelist);
    else requestSync(this.ctx, rec);
  }

  /** How long until the next relist instant (0: at one now, or no relist modelled). */
  private untilNextRelist(): number {
    if (this.relistPhaseMs === undefined) return 0;
    const sincePhase = (((this.clock.now() - this.relistPhaseMs) % PLEG_RELIST_PERIOD_MS) + PLEG_RELIST_PERIOD_MS) % PLEG_RELIST_PERIOD_MS;
    return sincePhase === 0 ? 0 : PLEG_RELIST_PERIOD_MS - sincePhase;
  }

  private scheduleHousekeeping(): void {
    this.housekeepingTimer = this.clock.setTimeout(() => {
      if (this.ctx.closed) return;
      const desired = new Set([...this.pods.values()].filter((r) => r.lifecycle !== 'terminated').map((r) => r.uid));
      this.probeManager.cleanupPods(desired);
      this.backOff.gc();
      this.images.gc(desired);
      this.scheduleHousekeeping();
    }, HOUSEKEEPING_PERIOD_MS);
  }

  private warn(what: string, err: unknown): void {
    process.emitWarning(`${what}: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
  }
}
