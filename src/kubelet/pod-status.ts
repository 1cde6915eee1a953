/**
 * Builds a pod's API status from what the runtime knows, as the kubelet's
 * `generateAPIPodStatus` does. The probe manager then fills `started`/`ready` and the
 * conditions are derived last, so they see the probed values.
 */
import { toKubeTime } from '../api/time.js';
import type { Container, ContainerState, ContainerStatus, Pod, PodStatus } from '../api/types.js';
import type { RuntimeContainerStatus } from '../runtime/types.js';
import { firstByName } from '../util/by-name.js';
import { isRestartableInitContainer } from './conditions.js';

/** What the kubelet tracks of one container of a pod (all its instances live in the runtime). */
export interface ContainerRecord {
  spec: Container;
  kind: 'init' | 'sidecar' | 'regular';
  /** The newest instance, if one was ever started. */
  current?: RuntimeContainerStatus;
  /** The instance before it: the source of `lastState`. */
  previous?: RuntimeContainerStatus;
  restartCount: number;
  /** Shown instead of the terminated state while the kubelet will not (yet) restart it. */
  waiting?: { reason: string; message: string };
}

export interface PodStatusInput {
  pod: Pod;
  podIP: string | undefined;
  initialized: boolean;
  records: ReadonlyMap<string, ContainerRecord>;
  /** The status last generated, for `started` inheritance (same container ID only). */
  previous: PodStatus | undefined;
  /** The pod will run no more containers (deleted, or finished for good). */
  podIsTerminal: boolean;
}

function toKubeTimeOrUndefined(ms: number | undefined): string | undefined {
  return ms === undefined ? undefined : toKubeTime(ms);
}

/** Everything but `started`, `ready` (the probe manager's) and `conditions` (derived afterwards). */
export function generatePodStatus(input: PodStatusInput): PodStatus {
  const { pod, records } = input;
  const previous = previousByInstance(input.previous);
  const initContainerStatuses = (pod.spec?.initContainers ?? []).map((c) => containerStatus(input, previous, records.get(c.name), c));
  const containerStatuses = (pod.spec?.containers ?? []).map((c) => containerStatus(input, previous, records.get(c.name), c));
  const status: PodStatus = {
    phase: getPhase(pod, [...containerStatuses, ...initContainerStatuses], input.podIsTerminal),
    hostIP: '127.0.0.1',
    hostIPs: [{ ip: '127.0.0.1' }],
    qosClass: 'BestEffort',
    initContainerStatuses,
    containerStatuses,
  };
  if (input.podIP) {
    status.podIP = input.podIP;
    status.podIPs = [{ ip: input.podIP }];
  }
  // PodObservedGenerationTracking (on in 1.35): the generation of the spec this status is
  // for, omitted (Go's omitempty) for a pod without one, as a local manifest is.
  const generation = pod.metadata?.generation;
  if (generation !== undefined && generation !== 0) (status as PodStatus & { observedGeneration?: number }).observedGeneration = generation;
  return status;
}

/** The previous statuses by container name and ID (regular ones first, the first of each): one pass, not one scan per container. */
function previousByInstance(previous: PodStatus | undefined): Map<string, ContainerStatus> {
  const index = new Map<string, ContainerStatus>();
  for (const s of [...(previous?.containerStatuses ?? []), ...(previous?.initContainerStatuses ?? [])]) {
    const key = instanceKey(s.name, s.containerID);
    if (!index.has(key)) index.set(key, s);
  }
  return index;
}

function instanceKey(name: string, containerID: string | undefined): string {
  return `${name}\0${containerID ?? ''}`;
}

function containerStatus(
  input: PodStatusInput,
  previous: ReadonlyMap<string, ContainerStatus>,
  record: ContainerRecord | undefined,
  spec: Container,
): ContainerStatus {
  const current = record?.current;
  const status: ContainerStatus = {
    name: spec.name,
    image: spec.image ?? '',
    imageID: '',
    ready: false,
    restartCount: record?.restartCount ?? 0,
    state: {},
    lastState: {},
  };
  if (!current) {
    // Upstream's default waiting state: PodInitializing for every container of a pod with
    // init containers, ContainerCreating otherwise.
    const reason = record?.waiting?.reason ?? ((input.pod.spec?.initContainers?.length ?? 0) > 0 ? 'PodInitializing' : 'ContainerCreating');
    status.state = { waiting: withMessage({ reason }, record?.waiting?.message) };
    status.started = false;
    return status;
  }
  status.containerID = current.id;
  const previousSameID = previous.get(instanceKey(spec.name, current.id));
  // Gate ChangeContainerStatusOnKubeletRestart off (1.35): `started` survives regeneration
  // for the same container instance only (#141342).
  status.started = previousSameID?.started === true;
  if (current.state === 'running') {
    status.state = { running: { startedAt: toKubeTimeOrUndefined(current.startedAt) ?? '' } };
    if (record?.previous) status.lastState = terminatedState(record.previous);
  } else if (record?.waiting && !(record.kind !== 'regular' && current.exitCode === 0)) {
    // convertToAPIContainerStatuses (kubelet_pods.go) skips the reasonCache's waiting reason
    // for an init container whose newest instance exited 0 ("it won't be restarted") — a
    // sidecar too, which will: one that exits 0 when killed shows Completed, not CrashLoopBackOff.
    status.state = { waiting: withMessage({ reason: record.waiting.reason }, record.waiting.message) };
    status.lastState = terminatedState(current);
  } else {
    status.state = terminatedState(current);
    if (record?.previous) status.lastState = terminatedState(record.previous);
  }
  return status;
}

function withMessage(waiting: { reason: string }, message: string | undefined): { reason: string; message?: string } {
  return message ? { ...waiting, message } : waiting;
}

function terminatedState(c: RuntimeContainerStatus): ContainerState {
  const terminated: NonNullable<ContainerState['terminated']> = {
    exitCode: c.exitCode ?? 0,
    containerID: c.id,
  };
  if (c.reason) terminated.reason = c.reason;
  if (c.message) terminated.message = c.message;
  const startedAt = toKubeTimeOrUndefined(c.startedAt);
  const finishedAt = toKubeTimeOrUndefined(c.finishedAt);
  if (startedAt) terminated.startedAt = startedAt;
  if (finishedAt) terminated.finishedAt = finishedAt;
  return { terminated };
}

/** Upstream `getPhase` (1.29+, sidecar-aware), over init and regular statuses together. */
export function getPhase(pod: Pod, statuses: readonly ContainerStatus[], podIsTerminal: boolean): string {
  const spec = pod.spec;
  const byName = firstByName(statuses);
  const find = (name: string): ContainerStatus | undefined => byName.get(name);
  let pendingRegularInit = 0;
  let pendingRestartableInit = 0;
  let failedInitialization = 0;
  let unknown = 0;
  let running = 0;
  let waiting = 0;
  let stopped = 0;
  let succeeded = 0;

  for (const c of spec?.initContainers ?? []) {
    const s = find(c.name);
    if (isRestartableInitContainer(c)) {
      if (!s) unknown++;
      else if (s.state?.running) {
        if (s.started !== true) pendingRestartableInit++;
        running++;
      } else if (s.state?.terminated) {
        // terminated sidecars are ignored
      } else if (s.state?.waiting) {
        if (!s.lastState?.terminated) {
          pendingRestartableInit++;
          waiting++;
        }
      } else {
        pendingRestartableInit++;
        unknown++;
      }
      continue;
    }
    if (!s) pendingRegularInit++;
    else if (s.state?.running) pendingRegularInit++;
    else if (s.state?.terminated) {
      if (s.state.terminated.exitCode !== 0) failedInitialization++;
    } else if (s.state?.waiting && s.lastState?.terminated) {
      if (s.lastState.terminated.exitCode !== 0) failedInitialization++;
    } else pendingRegularInit++;
  }

  for (const c of spec?.containers ?? []) {
    const s = find(c.name);
    if (!s) unknown++;
    else if (s.state?.running) running++;
    else if (s.state?.terminated) {
      stopped++;
      if (s.state.terminated.exitCode === 0) succeeded++;
    } else if (s.state?.waiting) {
      if (s.lastState?.terminated) stopped++;
      else waiting++;
    } else unknown++;
  }

  if (failedInitialization > 0 && spec?.restartPolicy === 'Never') return 'Failed';
  const anyRegularStarted = (spec?.containers ?? []).some((c) => {
    const s = find(c.name);
    return s?.state?.running !== undefined || s?.state?.terminated !== undefined;
  });
  if (pendingRegularInit > 0 || (pendingRestartableInit > 0 && !anyRegularStarted) || waiting > 0) return 'Pending';
  if (running > 0 && unknown === 0) return 'Running';
  if (running === 0 && stopped > 0 && unknown === 0) {
    if (podIsTerminal) return stopped === succeeded ? 'Succeeded' : 'Failed';
    if ((spec?.restartPolicy ?? 'Always') === 'Always') return 'Running';
    if (stopped === succeeded) return 'Succeeded';
    if (spec?.restartPolicy === 'Never') return 'Failed';
    return 'Running';
  }
  return 'Pending';
}
