/**
 * Registration and the two heartbeats of a kubelet (`registerWithAPIServer`, the node lease
 * controller, `syncNodeStatus`): the Node is created (or the existing one adopted), its
 * Lease in `kube-node-lease` is renewed every 10 s (lease/controller.ts, on a thread of its
 * own where the caller gives one), and its status is reported every 10 s when it changed,
 * else every 5 minutes. A failed call is logged and tried again at the next
 * tick; nothing here ever stops the node.
 */
import type { V1Node } from '@kubernetes/client-node';
import type { Node, NodeStatus, Taint } from 'kubernetes-types/core/v1.js';
import type { Clock } from '../util/clock.js';
import { errorMessage, httpStatus, plain, strategicMergePatch, withTimeout, type KubeClients } from './kube.js';
import { HEARTBEAT_TIMEOUT_MS, NODE_STATUS_UPDATE_FREQUENCY_MS, inThreadLeases, type LeaseHost, type LeaseRenewals } from './lease/controller.js';
import { conditionChangeReasons } from './node-events.js';
import { initialNode, nodeStatus, statusFingerprint, type NodeHealth, type NodeIdentity } from './node-object.js';

/** `nodeStatusReportFrequency`: an unchanged status is still reported this often. */
export const NODE_STATUS_REPORT_FREQUENCY_MS = 5 * 60_000;

export interface Heartbeat {
  /** The registered Node's UID. */
  readonly uid: string;
  /**
   * Lease renewals written so far, and the longest time between two of them (the first
   * counted from the registration): how late a renewal came, for the benchmark and logs.
   */
  renewals(): LeaseRenewals;
  /** Stops both loops (the Lease simply expires; the node lifecycle controller marks the node NotReady). */
  close(): void;
}

export interface HeartbeatOptions {
  clients: KubeClients;
  identity: NodeIdentity;
  clock: Clock;
  log: (line: string) => void;
  /** Aborting it stops the registration attempts (the node is being stopped before it registered). */
  signal?: AbortSignal;
  /** What the conditions are computed from at each status computation (default: healthy). */
  health?: () => NodeHealth;
  /** Where the node's lease controller runs (default: on this event loop, over `clients.heartbeat`). */
  leases?: LeaseHost;
  /** Told each condition change a kubelet records as an event (`NodeReady`, `NodeHasDiskPressure`, …), once the status carrying it is written. */
  onConditionChange?: (reason: string) => void;
}

/** `registerWithAPIServer`'s back-off between attempts: 100 ms doubling to 7 s. */
const REGISTER_BACKOFF_INITIAL_MS = 100;
const REGISTER_BACKOFF_MAX_MS = 7_000;

/** Whole seconds, as `metav1.Time` is serialized. */
function kubeTime(ms: number): string {
  return new Date(Math.floor(ms / 1000) * 1000).toISOString().replace(/\.\d{3}Z$/, 'Z');
}

/** Registers the node (or adopts an existing Node of that name) and starts its heartbeats. */
export async function startHeartbeat(options: HeartbeatOptions): Promise<Heartbeat> {
  const { clients, identity, clock, log } = options;
  const node = await registerUntilDone(options);
  const uid = node.metadata?.uid ?? '';
  let closed = false;
  let lastStatus: NodeStatus | undefined = node.status;
  let lastFingerprint = '';
  let lastReportAt = -Infinity;
  let statusTimer: unknown;

  async function syncStatus(): Promise<void> {
    const now = clock.now();
    const status = nodeStatus(identity, kubeTime(now), lastStatus, options.health?.());
    const fingerprint = statusFingerprint(status);
    if (fingerprint === lastFingerprint && now - lastReportAt < NODE_STATUS_REPORT_FREQUENCY_MS) return;
    try {
      const patched = await clients.heartbeat.core.patchNodeStatus({ name: identity.name, body: { status } }, withTimeout(HEARTBEAT_TIMEOUT_MS, strategicMergePatch));
      for (const reason of conditionChangeReasons(lastStatus?.conditions, status.conditions ?? [])) options.onConditionChange?.(reason);
      lastStatus = plain<Node>(patched).status ?? status;
      lastFingerprint = fingerprint;
      lastReportAt = now;
    } catch (err) {
      log(`node ${identity.name}: updating its status failed: ${errorMessage(err)} (retrying in ${NODE_STATUS_UPDATE_FREQUENCY_MS / 1000} s)`);
    }
  }

  function statusLoop(): void {
    if (closed) return;
    void syncStatus().finally(() => {
      if (!closed) statusTimer = clock.setTimeout(statusLoop, NODE_STATUS_UPDATE_FREQUENCY_MS);
    });
  }

  await syncStatus();
  const leases = options.leases ?? inThreadLeases(clients.heartbeat.coordination, clock, log);
  const lease = await leases.start(identity.name, uid);
  statusTimer = clock.setTimeout(statusLoop, NODE_STATUS_UPDATE_FREQUENCY_MS);
  return {
    uid,
    renewals: () => lease.renewals(),
    close: () => {
      closed = true;
      lease.close();
      clock.clearTimeout(statusTimer);
    },
  };
}

/**
 * `registerWithAPIServer` retries until it succeeds (an API server still starting, a network
 * not yet up): each failure is a log line naming the fix where there is one.
 */
async function registerUntilDone({ clients, identity, clock, log, signal }: HeartbeatOptions): Promise<Node> {
  let backoffMs = REGISTER_BACKOFF_INITIAL_MS;
  for (;;) {
    if (signal?.aborted) throw new Error(`node ${identity.name}: stopped before it registered`);
    try {
      return await register(clients, identity);
    } catch (err) {
      const why = `${errorMessage(err)}${registrationHint(httpStatus(err), identity.name)}`;
      log(`node ${identity.name}: registering with ${clients.server} failed: ${why} (retrying in ${(backoffMs / 1000).toFixed(1)} s)`);
    }
    await new Promise<void>((resolve) => {
      const timer = clock.setTimeout(resolve, backoffMs);
      signal?.addEventListener('abort', () => {
        clock.clearTimeout(timer);
        resolve();
      }, { once: true });
    });
    backoffMs = Math.min(backoffMs * 2, REGISTER_BACKOFF_MAX_MS);
  }
}

/** What to do about a refused registration. */
export function registrationHint(code: number | undefined, name: string): string {
  if (code === 401) return '; the kubeconfig\'s credentials were refused: renew them (an expired certificate or token)';
  if (code === 403) {
    return `; the kubeconfig's identity may not write Node ${name}: use system:node:${name} (group system:nodes) under the Node authorizer, or an identity RBAC allows to write nodes (docs/node.md, Authentication)`;
  }
  return '';
}

/**
 * `registerWithAPIServer`: creates the Node; when one of that name exists (a restart), adopts
 * it and brings its labels to what this node declares. Its taints are the kubelet's only at
 * creation (`--register-with-taints`): on an existing Node the kubelet leaves them alone — the
 * node lifecycle controller's `node.kubernetes.io/unreachable` included, which NodeRestriction
 * forbids a node to remove — so only a declared taint the Node lacks is added.
 */
async function register(clients: KubeClients, identity: NodeIdentity): Promise<Node> {
  const wanted = initialNode(identity);
  try {
    return plain<Node>(await clients.core.createNode({ body: wanted as unknown as V1Node }));
  } catch (err) {
    if (httpStatus(err) !== 409) throw err;
  }
  const declared = wanted.spec?.taints ?? [];
  let spec: { taints: Taint[] } | undefined;
  if (declared.length > 0) {
    const existing = plain<Node>(await clients.core.readNode({ name: identity.name })).spec?.taints ?? [];
    const missing = declared.filter((t) => !existing.some((e) => e.key === t.key && e.effect === t.effect));
    if (missing.length > 0) spec = { taints: [...existing, ...missing] };
  }
  const body = { metadata: { labels: wanted.metadata?.labels, annotations: wanted.metadata?.annotations }, ...(spec ? { spec } : {}) };
  return plain<Node>(await clients.core.patchNode({ name: identity.name, body }, strategicMergePatch));
}
