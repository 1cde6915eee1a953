/**
 * What the kubelet's parts share: the record it keeps of each pod, and the context — the
 * kubelet's clock, runtime, managers and gates — that the pod workers (pod-workers.ts),
 * SyncPod (sync-pod.ts) and the container actions (container-actions.ts) are handed, as
 * upstream's Kubelet and kubeGenericRuntimeManager hand theirs to the same steps.
 */
import type { Pod } from '../api/types.js';
import type { ProbeManager } from '../prober/manager.js';
import type { ResultsManager } from '../prober/results.js';
import type { ProbeType } from '../prober/types.js';
import type { ContainerRuntime, PodSandbox } from '../runtime/types.js';
import type { Clock } from '../util/clock.js';
import type { CrashLoopBackOff } from './backoff.js';
import type { InMemoryEventRecorder } from './events.js';
import type { ImageManager } from './images.js';
import type { HandlerRunner } from './lifecycle.js';
import type { SecretGetter } from './pull-secrets.js';
import type { ContainerRecord } from './pod-status.js';
import type { StatusManager } from './status-manager.js';

type Lifecycle = 'sync' | 'terminating' | 'terminated';

/** What the kubelet keeps of one pod. */
export interface PodRecord {
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

/** The kubelet's parts that its steps use; one per Kubelet. */
export interface KubeletContext {
  readonly clock: Clock;
  readonly random: () => number;
  readonly runtime: ContainerRuntime;
  readonly statusManager: StatusManager;
  readonly recorder: InMemoryEventRecorder;
  readonly probeManager: ProbeManager;
  readonly livenessResults: ResultsManager;
  readonly startupResults: ResultsManager;
  readonly backOff: CrashLoopBackOff;
  readonly images: ImageManager;
  readonly hookRunner: HandlerRunner;
  /** Where the pods' pull Secrets come from (KubeletOptions.getSecret); none: every pull is anonymous. */
  readonly getSecret: SecretGetter | undefined;
  /** When a requested sync starts (KubeletOptions.syncBatching). */
  readonly syncBatching: 'turn' | 'microtask';
  /** The PLEG relist's phase, when modelled (KubeletOptions.relistPhaseMs). */
  readonly relistPhaseMs: number | undefined;
  /** Set when close() has begun: no sync starts any more. */
  closed: boolean;
  /** The pod worker's sync of a pod that is to run (sync-pod.ts `syncPod`). */
  syncPod(rec: PodRecord): Promise<void>;
  /** The pod worker's sync of a pod that is stopping or stopped: its status only. */
  syncTerminatingPod(rec: PodRecord): Promise<unknown>;
  warn(what: string, err: unknown): void;
}

/** Records an event about one of the pod's containers. */
export function containerEvent(
  ctx: Pick<KubeletContext, 'recorder'>,
  rec: PodRecord,
  c: ContainerRecord,
  type: 'Normal' | 'Warning',
  reason: string,
  message: string,
): void {
  ctx.recorder.event({ pod: rec.pod, containerName: c.spec.name }, type, reason, message);
}

/** Tells the flight recorder what the kubelet did about a probe (or, without `kind`, about all of the container's). */
export function noteProbeAction(
  ctx: Pick<KubeletContext, 'probeManager'>,
  rec: PodRecord,
  c: ContainerRecord,
  kind: ProbeType | undefined,
  reason: string,
  message: string,
): void {
  ctx.probeManager.flightRecorder?.noteAction(rec.uid, c.spec.name, kind, reason, message);
}
