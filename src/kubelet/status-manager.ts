/**
 * The kubelet's status manager (upstream `pkg/kubelet/status/status_manager.go`), in memory:
 * the last generated API `PodStatus` per pod. The probe workers read it on every iteration
 * (container IDs, `started`, `startedAt`), the sync loop writes probe verdicts into it, and
 * the read-only API serves it.
 *
 * Statuses handed out are deeply frozen snapshots, one fresh object per change: readers on
 * the hot path pay nothing, and a caller that tries to mutate one fails loudly instead of
 * corrupting the cache. `structuredClone` a snapshot to edit it.
 */
import { noteReplacedItem, toKubeTime } from '../api/time.js';
import type { ContainerStatus, Pod, PodCondition, PodStatus } from '../api/types.js';
import type { PodStatusProvider } from '../prober/types.js';
import { type Clock, realClock } from '../util/clock.js';
import { cloneData, equalData } from '../util/copy.js';
import { generateContainersReadyCondition, generatePodReadyCondition } from './conditions.js';

export interface StatusManagerOptions {
  clock?: Clock;
}

/** Called synchronously after a pod's status really changed, with the new (frozen) status. */
export type PodStatusListener = (podUID: string, status: PodStatus) => void;

/**
 * Conditions whose `lastTransitionTime` the status manager maintains (`updateStatusInternal`).
 * Others (readiness gates set by controllers) keep the time they were given.
 */
const TRANSITION_TRACKED_CONDITIONS: readonly string[] = [
  'ContainersReady',
  'Ready',
  'Initialized',
  'PodReadyToStartContainers',
  'PodScheduled',
  'DisruptionTarget',
];

interface PodEntry {
  pod: Pod;
  status?: PodStatus;
  /**
   * Where each container ID's status sits in `status` (regular or init list, index): a
   * readiness change keeps every position, so finding the container is not a scan of n
   * statuses per change. Checked at each use, rebuilt when stale.
   */
  positions?: Map<string, { init: boolean; at: number }>;
}

export class StatusManager implements PodStatusProvider {
  private readonly clock: Clock;
  private readonly pods = new Map<string, PodEntry>();
  private readonly listeners = new Set<PodStatusListener>();

  constructor(options: StatusManagerOptions = {}) {
    this.clock = options.clock ?? realClock;
  }

  /** The last status set for the pod: a frozen snapshot, never mutated afterwards. */
  getPodStatus(podUID: string): PodStatus | undefined {
    return this.pods.get(podUID)?.status;
  }

  /** The pod as last given to `addPod`/`setPodStatus` (frozen). */
  getPod(podUID: string): Pod | undefined {
    return this.pods.get(podUID)?.pod;
  }

  /**
   * Makes the pod known (the pod manager's role upstream) without a status yet, or refreshes
   * its spec. Probe verdicts for a known pod without a status are dropped, as upstream does
   * before the pod's first sync.
   */
  addPod(pod: Pod): void {
    const uid = requireUID(pod);
    const entry = this.pods.get(uid);
    // Our own frozen copy given back (the kubelet syncs with it) cannot have changed:
    // copying and freezing the whole spec at every sync was most of a sync's cost.
    if (entry?.pod === pod) return;
    const frozen = deepFreeze(structuredClone(pod));
    if (entry) entry.pod = frozen;
    else this.pods.set(uid, { pod: frozen });
  }

  /**
   * Stores a copy of `status` as the pod's status (registering the pod if needed).
   * Kubelet-owned conditions keep the previous `lastTransitionTime` unless their status
   * flipped; new or flipped ones get now. The previous status is the cached one, else
   * `pod.status` (the API's). `startTime` never changes once set, and is set to now if the
   * first status lacks it. Listeners hear about it only if something changed.
   */
  setPodStatus(pod: Pod, status: PodStatus): void {
    this.addPod(pod);
    this.updateStatusInternal(requireUID(pod), cloneData(status));
  }

  /**
   * The sync loop's readiness write: sets `ready` on the container with this ID (regular
   * statuses first, then init) and regenerates `Ready` and `ContainersReady`. No-op when the
   * pod is unknown, has no status yet, has no such container, or the value is unchanged.
   */
  setContainerReadiness(podUID: string, containerID: string, ready: boolean): void {
    const current = this.findContainer(podUID, containerID);
    if (current === undefined || (current.containerStatus.ready ?? false) === ready) return;
    const { pod, status, containerStatus } = current;
    const next = withContainerStatus(status, containerStatus, { ...containerStatus, ready });
    const containersReady = generateContainersReadyCondition(pod, next);
    replaceOrAppendCondition(next, generatePodReadyCondition(pod, next, next.conditions, containersReady));
    replaceOrAppendCondition(next, containersReady);
    this.updateStatusInternal(podUID, next);
  }

  /**
   * The sync loop's startup write: sets `started` on the container with this ID and nothing
   * else. Same no-op cases as readiness; "unchanged" needs `started` to be present already.
   */
  setContainerStartup(podUID: string, containerID: string, started: boolean): void {
    const current = this.findContainer(podUID, containerID);
    if (current === undefined || current.containerStatus.started === started) return;
    const { status, containerStatus } = current;
    this.updateStatusInternal(podUID, withContainerStatus(status, containerStatus, { ...containerStatus, started }));
  }

  /** Forgets the pod and its status. */
  removePod(podUID: string): void {
    this.pods.delete(podUID);
  }

  subscribe(listener: PodStatusListener): () => void {
    this.listeners.add(listener);
    return () => {
      this.listeners.delete(listener);
    };
  }

  private findContainer(
    podUID: string,
    containerID: string,
  ): { pod: Pod; status: PodStatus; containerStatus: ContainerStatus } | undefined {
    const entry = this.pods.get(podUID);
    if (entry?.status === undefined) return undefined;
    const containerStatus = positionedStatus(entry, containerID);
    if (containerStatus === undefined) return undefined;
    return { pod: entry.pod, status: entry.status, containerStatus };
  }

  /**
   * `status` must be a private object: it is adjusted, frozen and kept. Its parts may be
   * frozen parts of the previous snapshot (see `withContainerStatus`): those are replaced,
   * never changed, so a pod of n containers whose one container changed costs a copy of
   * references, not of n container statuses (a deep copy, compare and freeze per change made
   * a pod of 2,000 containers O(n²): 38 s of a 10 min simulation).
   */
  private updateStatusInternal(podUID: string, status: PodStatus): void {
    const entry = this.pods.get(podUID);
    if (entry === undefined) return;
    const previous = entry.status ?? entry.pod.status ?? {};
    const nowText = toKubeTime(this.clock.now());

    for (const type of TRANSITION_TRACKED_CONDITIONS) {
      const conditions = status.conditions;
      const i = conditions?.findIndex((x) => x.type === type) ?? -1;
      const c = conditions?.[i];
      if (conditions === undefined || c === undefined) continue;
      const old = previous.conditions?.find((x) => x.type === type);
      const time = old !== undefined && old.status === c.status ? old.lastTransitionTime : nowText;
      if (c.lastTransitionTime === time && (time !== undefined || !('lastTransitionTime' in c))) continue;
      const { lastTransitionTime: _, ...rest } = c;
      const replaced = time === undefined ? rest : { ...c, lastTransitionTime: time };
      if (Object.isFrozen(conditions)) status.conditions = conditions.map((x, j) => (j === i ? replaced : x));
      else conditions[i] = replaced;
    }
    if (previous.startTime) status.startTime = previous.startTime;
    else if (!status.startTime) status.startTime = nowText;

    if (entry.status !== undefined && equalData(entry.status, status)) return;
    const frozen = deepFreeze(status);
    entry.status = frozen;
    for (const listener of [...this.listeners]) listener(podUID, frozen);
  }
}


/**
 * A new status object sharing every part of the frozen `status` but `old`, which `replacement`
 * takes the place of, and the conditions list, copied so that it can be changed.
 */
function withContainerStatus(status: PodStatus, old: ContainerStatus, replacement: ContainerStatus): PodStatus {
  Object.freeze(replacement); // its parts are `old`'s, frozen
  const swap = (list: readonly ContainerStatus[] | undefined): ContainerStatus[] | undefined => {
    const at = list?.indexOf(old) ?? -1;
    if (list === undefined || at < 0) return list as ContainerStatus[] | undefined;
    const copy = list.slice();
    copy[at] = replacement;
    // Frozen now, so that deepFreeze does not visit the n statuses it shares.
    Object.freeze(copy);
    noteReplacedItem(copy, list, at);
    return copy;
  };
  const next: PodStatus = { ...status };
  if (status.containerStatuses !== undefined) next.containerStatuses = swap(status.containerStatuses);
  if (status.initContainerStatuses !== undefined) next.initContainerStatuses = swap(status.initContainerStatuses);
  if (status.conditions !== undefined) next.conditions = [...status.conditions];
  return next;
}

/** `findContainerStatus` through the entry's positions, which are rebuilt when they no longer point at the ID. */
function positionedStatus(entry: PodEntry, containerID: string): ContainerStatus | undefined {
  const status = entry.status;
  if (status === undefined) return undefined;
  const listOf = (init: boolean): readonly ContainerStatus[] | undefined => (init ? status.initContainerStatuses : status.containerStatuses);
  const known = entry.positions?.get(containerID);
  const hit = known === undefined ? undefined : listOf(known.init)?.[known.at];
  if (hit?.containerID === containerID) return hit;
  const found = findContainerStatus(status, containerID);
  if (found === undefined) return undefined;
  const positions = new Map<string, { init: boolean; at: number }>();
  for (const init of [false, true]) {
    for (const [at, c] of (listOf(init) ?? []).entries()) {
      if (c.containerID && !positions.has(c.containerID)) positions.set(c.containerID, { init, at });
    }
  }
  entry.positions = positions;
  return found;
}

function findContainerStatus(status: PodStatus, containerID: string): ContainerStatus | undefined {
  return (
    status.containerStatuses?.find((c) => c.containerID === containerID) ??
    status.initContainerStatuses?.find((c) => c.containerID === containerID)
  );
}

function replaceOrAppendCondition(status: PodStatus, condition: PodCondition): void {
  const conditions = (status.conditions ??= []);
  const i = conditions.findIndex((c) => c.type === condition.type);
  if (i >= 0) conditions[i] = condition;
  else conditions.push(condition);
}

function requireUID(pod: Pod): string {
  const uid = pod.metadata?.uid;
  if (!uid) throw new TypeError('pod has no metadata.uid');
  return uid;
}

/** Freezes what is not frozen yet; a frozen part (shared with the last snapshot) is left as it is. */
function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const v of Array.isArray(value) ? (value as unknown[]) : Object.values(value)) deepFreeze(v);
  }
  return value;
}
