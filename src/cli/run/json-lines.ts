/**
 * `probelet run -o json`: a stream of one JSON object per line. A pod's whole status on every
 * change of any container was n² bytes for a pod of n containers (573 MB in 10 s for 1,000;
 * issue 33), so a pod is written whole only when something about the pod itself changes, and
 * a change of one container is a line about that container:
 *
 * - `{"type":"pod","pod":{…}}`: the whole pod — its first status, every change of its phase,
 *   of a condition's status or reason, of its IPs, start time or QoS class, its deletion, and
 *   its last state when the run ends (if anything changed since its last `pod` line);
 * - `{"type":"containerStatus","pod","namespace","uid","list","status":{…}}`: one container's
 *   status changed; `list` names where it sits in the pod's status (`containerStatuses`,
 *   `initContainerStatuses`, `ephemeralContainerStatuses`) and `status` replaces the entry of
 *   the same `name` there.
 *
 * The last `pod` line with the `containerStatus` lines after it applied is the pod's status
 * ({@link podLineReader} does it), except condition messages that changed without their
 * status (the list of unready containers as they start one by one), which come with the next
 * `pod` line. Events, probes and crashes are written as the other views do.
 */
import type { ContainerStatus, Pod, PodStatus } from '../../api/types.js';
import { equalData } from '../../util/copy.js';
import type { CliIO } from '../io.js';
import { createLiveView, type LiveView } from '../view/live-view.js';
import type { Terminal } from '../view/terminal.js';

/** The lists of container statuses in a pod's status, in the order they are compared. */
export const CONTAINER_STATUS_LISTS = ['initContainerStatuses', 'containerStatuses', 'ephemeralContainerStatuses'] as const;
export type ContainerStatusList = (typeof CONTAINER_STATUS_LISTS)[number];

export interface PodLine {
  type: 'pod';
  pod: Pod;
}

export interface ContainerStatusLine {
  type: 'containerStatus';
  pod: string;
  namespace: string;
  uid: string;
  list: ContainerStatusList;
  status: ContainerStatus;
}

/** What was last written of one pod. */
interface Shown {
  /** {@link podKey} of the last `pod` line. */
  key: string;
  /** The container statuses as last written, by list. */
  lists: Record<ContainerStatusList, readonly ContainerStatus[]>;
  /** The pod as last seen, and whether it differs from the last `pod` line (written at the end). */
  latest: Pod;
  behind: boolean;
}

/** The JSON view of `run`: the lines above for pods; events, crashes and notices as `createLiveView` writes them. */
export function createRunJsonView(io: CliIO, terminal: Terminal): LiveView {
  const lines = createLiveView({ output: 'json', io, terminal, podNames: [] });
  const shown = new Map<string, Shown>();
  const writePod = (uid: string, pod: Pod): void => {
    const line: PodLine = { type: 'pod', pod };
    io.stdout(`${JSON.stringify(line)}\n`);
    shown.set(uid, { key: podKey(pod), lists: listsOf(pod.status), latest: pod, behind: false });
  };
  return {
    ...lines,
    pod(pod) {
      const uid = pod.metadata?.uid ?? pod.metadata?.name ?? '';
      const last = shown.get(uid);
      if (last === undefined || last.key !== podKey(pod)) {
        writePod(uid, pod);
        return;
      }
      const changed = changedStatuses(last.lists, pod.status);
      if (changed === undefined) {
        // The containers are not the ones last written (added, removed, reordered): the whole pod.
        writePod(uid, pod);
        return;
      }
      for (const [list, status] of changed) {
        const line: ContainerStatusLine = { type: 'containerStatus', pod: pod.metadata?.name ?? '', namespace: pod.metadata?.namespace ?? '', uid, list, status };
        io.stdout(`${JSON.stringify(line)}\n`);
      }
      last.lists = listsOf(pod.status);
      last.latest = pod;
      last.behind = true;
    },
    close() {
      for (const [uid, last] of shown) if (last.behind) writePod(uid, last.latest);
      lines.close();
    },
  };
}

/**
 * What makes a `pod` line: the pod's status but its container statuses, conditions by type,
 * status and reason only (their messages name the containers not ready yet and change with
 * each), and its deletion. A few hundred bytes whatever the number of containers.
 */
function podKey(pod: Pod): string {
  const { initContainerStatuses: _i, containerStatuses: _c, ephemeralContainerStatuses: _e, conditions, ...rest } = pod.status ?? {};
  const conditionKeys = (conditions ?? []).map((c) => [c.type, c.status, c.reason]);
  return JSON.stringify([pod.metadata?.deletionTimestamp, pod.metadata?.deletionGracePeriodSeconds, rest, conditionKeys]);
}

function listsOf(status: PodStatus | undefined): Record<ContainerStatusList, readonly ContainerStatus[]> {
  return {
    initContainerStatuses: status?.initContainerStatuses ?? [],
    containerStatuses: status?.containerStatuses ?? [],
    ephemeralContainerStatuses: status?.ephemeralContainerStatuses ?? [],
  };
}

/**
 * The container statuses that differ from those last written, or undefined when the lists do
 * not hold the same containers in the same places. The kubelet hands out the same object for
 * a status that did not change, so most comparisons are one `===`.
 */
function changedStatuses(before: Record<ContainerStatusList, readonly ContainerStatus[]>, status: PodStatus | undefined): [ContainerStatusList, ContainerStatus][] | undefined {
  const now = listsOf(status);
  const changed: [ContainerStatusList, ContainerStatus][] = [];
  for (const list of CONTAINER_STATUS_LISTS) {
    const was = before[list];
    const is = now[list];
    if (was.length !== is.length) return undefined;
    for (let i = 0; i < is.length; i++) {
      const a = was[i];
      const b = is[i];
      if (a === b) continue;
      if (a === undefined || b === undefined || a.name !== b.name) return undefined;
      if (!equalData(a, b)) changed.push([list, b]);
    }
  }
  return changed;
}

/**
 * Reads `run -o json` lines back into whole pods: give it every parsed line in order; after a
 * `pod` or `containerStatus` line it returns that pod's status as the kubelet had it (condition
 * messages as of the last `pod` line), otherwise undefined. For scripts and tests that want the
 * pod at each change, as the lines before `containerStatus` gave it.
 */
export function podLineReader(): (line: { type: string }) => Pod | undefined {
  const pods = new Map<string, Pod>();
  return (line) => {
    if (line.type === 'pod') {
      const { pod } = line as PodLine;
      pods.set(pod.metadata?.uid ?? pod.metadata?.name ?? '', pod);
      return pod;
    }
    if (line.type !== 'containerStatus') return undefined;
    const { uid, list, status } = line as ContainerStatusLine;
    const pod = pods.get(uid);
    if (pod === undefined) return undefined;
    const statuses = (pod.status?.[list] ?? []).map((s) => (s.name === status.name ? status : s));
    const next: Pod = { ...pod, status: { ...pod.status, [list]: statuses } };
    pods.set(uid, next);
    return next;
  };
}
