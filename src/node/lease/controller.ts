/**
 * The node lease controller (upstream `component-helpers/apimachinery/lease`, as the kubelet
 * runs it): each node's Lease in `kube-node-lease` is renewed every 10 s; the node lifecycle
 * controller reads a Lease older than its grace as a node gone and taints it unreachable.
 * A renewal is the heartbeat that matters most, so it must never wait behind a node's pod work:
 * the kubelet renews from a goroutine of its own; probelet renews either on the caller's event
 * loop ({@link inThreadLeases}: one node, tests on a FakeClock) or, for the `probelet node`
 * command, on a thread of its own (thread.ts), whose event loop no pod work can hold up.
 */
import type { CoordinationV1Api, V1Lease } from '@kubernetes/client-node';
import type { Lease } from 'kubernetes-types/coordination/v1.js';
import type { Clock } from '../../util/clock.js';
import { errorMessage, httpStatus, plain, withTimeout } from '../kube.js';

/** `kube-node-lease`: where every node's Lease lives. */
export const NODE_LEASE_NAMESPACE = 'kube-node-lease';
/** The kubelet's `nodeLeaseDurationSeconds` default. */
export const NODE_LEASE_DURATION_SECONDS = 40;
/** The lease controller renews at a quarter of the duration: 10 s. */
export const LEASE_RENEW_INTERVAL_MS = (NODE_LEASE_DURATION_SECONDS * 1000) / 4;
/** The lease controller's `maxUpdateRetries`: immediate tries of a renewal before it waits for the next tick. */
export const MAX_LEASE_UPDATE_RETRIES = 5;
/** `nodeStatusUpdateFrequency`: how often the node status is computed (and sent if it changed). */
export const NODE_STATUS_UPDATE_FREQUENCY_MS = 10_000;
/**
 * The heartbeat client's timeout (`cmd/kubelet/app/server.go`): the smaller of
 * `nodeStatusUpdateFrequency` and the lease duration. A renewal the API server does not
 * answer is given up and tried again, instead of holding the next one back.
 */
export const HEARTBEAT_TIMEOUT_MS = Math.min(NODE_STATUS_UPDATE_FREQUENCY_MS, NODE_LEASE_DURATION_SECONDS * 1000);

/** `metav1.MicroTime` on the wire: RFC 3339 with microseconds. */
export function microTime(ms: number): string {
  return new Date(ms).toISOString().replace(/Z$/, '000Z');
}

/** Renewals written so far, and the longest time between two (the first counted from the start). */
export interface LeaseRenewals {
  count: number;
  longestGapMs: number;
}

/** One node's running lease controller. */
export interface LeaseController {
  renewals(): LeaseRenewals;
  /** Stops renewing (the Lease simply expires). */
  close(): void;
}

/** Where a node's lease controller runs: started once the Node is registered (its UID owns the Lease). */
export interface LeaseHost {
  /** Starts renewing `name`'s Lease; resolves after the first renewal was tried. */
  start(name: string, uid: string): Promise<LeaseController>;
}

export interface LeaseControllerOptions {
  /** The heartbeat client's Lease API (connections no pod write can occupy). */
  coordination: CoordinationV1Api;
  name: string;
  /** The Node's UID: the Lease's owner, so the Lease goes with its Node. */
  uid: string;
  clock: Clock;
  log: (line: string) => void;
  /** Told each renewal written (the count and the gap since the previous one). */
  onRenewed?: (renewals: LeaseRenewals) => void;
}

/**
 * Starts `name`'s lease controller: a renewal at once, then one every
 * {@link LEASE_RENEW_INTERVAL_MS} after the previous ended (`wait.JitterUntil`, sliding).
 */
export async function startLeaseController(options: LeaseControllerOptions): Promise<LeaseController> {
  const { coordination, name, uid, clock, log } = options;
  const timeout = withTimeout(HEARTBEAT_TIMEOUT_MS);
  let closed = false;
  let lease: Lease | undefined;
  let timer: unknown;
  const renewals: LeaseRenewals = { count: 0, longestGapMs: 0 };
  let lastRenewalAt = clock.now();

  /** A renewal was written: how long since the last one. */
  function renewedNow(): void {
    const now = clock.now();
    renewals.count++;
    renewals.longestGapMs = Math.max(renewals.longestGapMs, now - lastRenewalAt);
    lastRenewalAt = now;
    options.onRenewed?.({ ...renewals });
  }

  /** The lease controller's `newLease`: this node's Lease, renewed now, over the version last seen. */
  function renewed(base: Lease | undefined): V1Lease {
    const fresh: Lease = {
      apiVersion: 'coordination.k8s.io/v1',
      kind: 'Lease',
      metadata: {
        ...base?.metadata,
        name,
        namespace: NODE_LEASE_NAMESPACE,
        ownerReferences: [{ apiVersion: 'v1', kind: 'Node', name, uid }],
      },
      spec: { holderIdentity: name, leaseDurationSeconds: NODE_LEASE_DURATION_SECONDS, renewTime: microTime(clock.now()) },
    };
    return fresh as unknown as V1Lease;
  }

  /** `ensureLease`: the stored Lease, or a new one (then `created`: no update needed). */
  async function ensureLease(): Promise<{ lease: Lease; created: boolean }> {
    try {
      return { lease: plain<Lease>(await coordination.readNamespacedLease({ name, namespace: NODE_LEASE_NAMESPACE }, timeout)), created: false };
    } catch (err) {
      if (httpStatus(err) !== 404) throw err;
      const created = await coordination.createNamespacedLease({ namespace: NODE_LEASE_NAMESPACE, body: renewed(undefined) }, timeout);
      return { lease: plain<Lease>(created), created: true };
    }
  }

  /**
   * One renewal (`sync`): the Lease is read when not known (or created when missing), then
   * updated, tried up to {@link MAX_LEASE_UPDATE_RETRIES} times at once (a conflict reads it
   * afresh). A renewal that still fails waits for the next tick, logged.
   */
  async function renewLease(): Promise<void> {
    let failure: unknown;
    for (let attempt = 0; attempt < MAX_LEASE_UPDATE_RETRIES && !closed; attempt++) {
      try {
        if (lease === undefined) {
          const ensured = await ensureLease();
          lease = ensured.lease;
          if (ensured.created) return renewedNow();
        }
        lease = plain<Lease>(await coordination.replaceNamespacedLease({ name, namespace: NODE_LEASE_NAMESPACE, body: renewed(lease) }, timeout));
        return renewedNow();
      } catch (err) {
        failure = err;
        // A conflict (someone else wrote it) or a lost Lease: read it afresh.
        if (httpStatus(err) === 409 || httpStatus(err) === 404) lease = undefined;
      }
    }
    lease = undefined;
    if (failure !== undefined) {
      log(`node ${name}: renewing its Lease in ${NODE_LEASE_NAMESPACE} failed ${MAX_LEASE_UPDATE_RETRIES} times: ${errorMessage(failure)} (retrying in ${LEASE_RENEW_INTERVAL_MS / 1000} s)`);
    }
  }

  function loop(): void {
    if (closed) return;
    void renewLease().finally(() => {
      if (!closed) timer = clock.setTimeout(loop, LEASE_RENEW_INTERVAL_MS);
    });
  }

  await renewLease();
  if (!closed) timer = clock.setTimeout(loop, LEASE_RENEW_INTERVAL_MS);
  return {
    renewals: () => ({ ...renewals }),
    close: () => {
      closed = true;
      clock.clearTimeout(timer);
    },
  };
}

/** Lease controllers on the caller's event loop, over its heartbeat client. */
export function inThreadLeases(coordination: CoordinationV1Api, clock: Clock, log: (line: string) => void): LeaseHost {
  return { start: (name, uid) => startLeaseController({ coordination, name, uid, clock, log }) };
}
