/**
 * The status manager's API half (`syncPod` of `pkg/kubelet/status/status_manager.go`): the
 * kubelet's generated status goes to `pods/status` as a strategic merge patch (conditions
 * merge by type, so the scheduler's `PodScheduled` and controllers' conditions stay), with the
 * pod's UID as a precondition, only when it differs from what was last written, one write in
 * flight per pod, the newest status winning over any queued one.
 */
import type { Pod, PodStatus } from '../api/types.js';
import { realClock, type Clock } from '../util/clock.js';
import { errorMessage, httpStatus, strategicMergePatch, type KubeClients } from './kube.js';

export interface StatusSink {
  /** The kubelet's newest status for a pod (times serialized). Ignored for pods not tracked. */
  offer(pod: Pod): void;
  /** Starts writing a pod's status (the API object exists). */
  track(uid: string, namespace: string, name: string): void;
  /** Resolves once the newest status offered for the pod is written (or given up). */
  flush(uid: string): Promise<void>;
  /** Stops writing a pod's status (the API object is gone). */
  untrack(uid: string): void;
  /**
   * The pod as the API now holds it (a watch event, a re-list): its status is written again when
   * another writer changed the conditions this node wrote (the node lifecycle controller sets
   * Ready False while the node is out of reach), and a write that failed is tried again.
   */
  reconcile(apiPod: Pod): void;
  /** Stops the retries of failed writes (the node is stopping). */
  close(): void;
  /** How many status writes were made, for tests and the benchmark. */
  readonly writes: number;
}

interface Tracked {
  namespace: string;
  name: string;
  /** JSON of the status last written. */
  written?: string;
  /** The status last written. */
  last?: PodStatus;
  pending?: PodStatus;
  inFlight?: Promise<void>;
  /** The retry of a failed write. */
  retry?: unknown;
  /** The last write failed (its retries are not logged again: a fleet's pods during an outage). */
  failing?: boolean;
  /** Lean writes: when the first status of a starting pod was offered (clock ms), and the timer that writes it then. */
  heldSince?: number;
  holdTimer?: unknown;
}

/**
 * A failed write is tried again after the status manager's `syncPeriod` (10 s: its syncBatch
 * writes every status the API does not hold yet), not only at the pod's next change.
 */
export const STATUS_RETRY_MS = 10_000;

/** The address the local runtimes give a pod and its host: loopback (they share the host's network). */
const LOOPBACK = '127.0.0.1';

/**
 * The status as the API gets it. `qosClass` is the API server's (computed at creation, never
 * changed after). Pods of the local runtimes share the host's network, like `hostNetwork`
 * pods, whose IP is the node's: the kubelet probes them on loopback, the cluster sees the
 * node's address (the API server refuses loopback addresses in EndpointSlices).
 */
export function forAPI(status: PodStatus, nodeAddress: string): PodStatus {
  const { qosClass: _q, ...rest } = status;
  const host = (ip: string | undefined): string | undefined => (ip === LOOPBACK ? nodeAddress : ip);
  const out: PodStatus = { ...rest };
  if (rest.podIP !== undefined) out.podIP = host(rest.podIP);
  if (rest.podIPs) out.podIPs = rest.podIPs.map((p) => ({ ip: host(p.ip) ?? p.ip }));
  if (rest.hostIP !== undefined) out.hostIP = host(rest.hostIP);
  if (rest.hostIPs) out.hostIPs = rest.hostIPs.map((p) => ({ ip: host(p.ip) ?? p.ip }));
  return out;
}

/**
 * Conditions merge by `type` in a strategic merge patch: a field the new condition leaves out
 * would keep its old value (Ready turning True kept `reason: ContainersNotReady`). The
 * kubelet's two-way merge patch (statusutil.PatchPodStatus) sends such a field as null,
 * which deletes it; here every optional field the condition lacks is sent as null.
 */
const CLEARED_CONDITION_FIELDS = { reason: null, message: null, lastProbeTime: null } as const;

/**
 * The patch body of a status. `podIPs` and `hostIPs` merge by `ip` in a strategic merge patch,
 * so a pod whose IP changed (its sandbox re-created, as after a restart of the node) would end
 * with the old and the new IP, which the API refuses (one IP per family). The kubelet's
 * two-way merge patch deletes the old entries; here each list says `$patch: replace`.
 */
export function statusPatch(status: PodStatus): Record<string, unknown> {
  const out: Record<string, unknown> = { ...status };
  if (status.conditions) out.conditions = status.conditions.map((c) => ({ ...CLEARED_CONDITION_FIELDS, ...c }));
  if (status.podIPs) out.podIPs = [...status.podIPs, { $patch: 'replace' }];
  if (status.hostIPs) out.hostIPs = [...status.hostIPs, { $patch: 'replace' }];
  return out;
}

/**
 * Whether the API's status still has the conditions `written` wrote (status, reason, message),
 * as `isPodStatusByKubeletEqual` (pkg/kubelet/status) compares the kubelet's conditions.
 */
export function conditionsByNodeEqual(written: PodStatus, api: PodStatus | undefined): boolean {
  return (written.conditions ?? []).every((c) => {
    const other = api?.conditions?.find((x) => x.type === c.type);
    return other !== undefined && other.status === c.status && (other.reason ?? '') === (c.reason ?? '') && (other.message ?? '') === (c.message ?? '');
  });
}

/**
 * `--lean-writes` (a simulated fleet's opt-in, docs/differences.md): a pod's statuses while it
 * starts (ContainerCreating, Running not Ready) are held, and only the newest is written, once
 * the pod is Ready or this long after its first status — the status manager's own `syncPeriod`,
 * as if only its periodic batch wrote them. One patch a pod instead of the kubelet's three when
 * it turns Ready within that time; every status after the first write is written as usual.
 */
export const LEAN_HOLD_MS = STATUS_RETRY_MS;

export interface StatusSinkOptions {
  clock?: Clock;
  /** Hold a starting pod's statuses until it is Ready or {@link LEAN_HOLD_MS} passed (default off: the kubelet's writes). */
  lean?: boolean;
}

/** Whether a status says the pod is Ready (its `Ready` condition True). */
function isReady(status: PodStatus): boolean {
  return status.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ?? false;
}

export function createStatusSink(clients: KubeClients, nodeAddress: string, log: (line: string) => void, options: StatusSinkOptions = {}): StatusSink {
  const clock = options.clock ?? realClock;
  const pods = new Map<string, Tracked>();
  let writes = 0;

  /** Lean writes: whether this status waits (the pod has no status written yet, is not Ready, and its hold is not over). */
  function held(uid: string, t: Tracked, status: PodStatus): boolean {
    if (options.lean !== true || t.written !== undefined || t.inFlight !== undefined || isReady(status) || status.phase === 'Succeeded' || status.phase === 'Failed') return false;
    const now = clock.now();
    t.heldSince ??= now;
    const left = t.heldSince + LEAN_HOLD_MS - now;
    if (left <= 0) return false;
    t.holdTimer ??= clock.setTimeout(() => {
      t.holdTimer = undefined;
      void kick(uid, t);
    }, left);
    return true;
  }

  function release(t: Tracked): void {
    if (t.holdTimer !== undefined) clock.clearTimeout(t.holdTimer);
    t.holdTimer = undefined;
  }

  async function drain(uid: string, t: Tracked): Promise<void> {
    while (t.pending !== undefined && pods.get(uid) === t) {
      const status = t.pending;
      t.pending = undefined;
      const json = JSON.stringify(status);
      if (json === t.written) continue;
      try {
        writes++;
        await clients.core.patchNamespacedPodStatus(
          { name: t.name, namespace: t.namespace, body: { metadata: { uid }, status: statusPatch(status) } },
          strategicMergePatch,
        );
        t.written = json;
        t.last = status;
        t.failing = false;
      } catch (err) {
        const code = httpStatus(err);
        // Gone (404) or replaced by a pod of the same name (409, the UID precondition): nothing to write to.
        if (code === 404 || code === 409) return;
        if (t.failing !== true) log(`pod ${t.namespace}/${t.name}: writing its status failed: ${errorMessage(err)} (retrying every ${STATUS_RETRY_MS / 1000} s)`);
        t.failing = true;
        // Keep the newest unwritten status for the retry, the next offer or a flush.
        t.pending ??= status;
        t.retry ??= clock.setTimeout(() => {
          t.retry = undefined;
          void kick(uid, t);
        }, STATUS_RETRY_MS);
        return;
      }
    }
  }

  function kick(uid: string, t: Tracked): Promise<void> {
    t.inFlight ??= drain(uid, t).finally(() => {
      t.inFlight = undefined;
    });
    return t.inFlight;
  }

  return {
    offer(pod) {
      const uid = pod.metadata?.uid ?? '';
      const t = pods.get(uid);
      if (!t || !pod.status) return;
      t.pending = forAPI(pod.status, nodeAddress);
      if (held(uid, t, t.pending)) return;
      release(t);
      void kick(uid, t);
    },
    track(uid, namespace, name) {
      if (!pods.has(uid)) pods.set(uid, { namespace, name });
    },
    async flush(uid) {
      const t = pods.get(uid);
      if (!t) return;
      await t.inFlight;
      if (t.pending !== undefined) await kick(uid, t);
    },
    untrack(uid) {
      const t = pods.get(uid);
      if (t?.retry !== undefined) clock.clearTimeout(t.retry);
      if (t) release(t);
      pods.delete(uid);
    },
    close() {
      for (const t of pods.values()) {
        if (t.retry !== undefined) clock.clearTimeout(t.retry);
        t.retry = undefined;
        release(t);
      }
    },
    reconcile(apiPod) {
      const uid = apiPod.metadata?.uid ?? '';
      const t = pods.get(uid);
      // A write in flight answers for itself; the watch may still be showing the one before it.
      // A held status (lean writes) waits for its pod's Ready or its hold.
      if (!t || t.inFlight || t.holdTimer !== undefined) return;
      if (t.pending === undefined) {
        if (t.last === undefined || conditionsByNodeEqual(t.last, apiPod.status)) return;
        // needsReconcile → syncPod: the status this node holds is written again.
        t.pending = t.last;
        t.written = undefined;
      }
      void kick(uid, t);
    },
    get writes() {
      return writes;
    },
  };
}
