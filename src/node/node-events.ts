/**
 * The events a kubelet records about its Node (`kubectl describe node`): "Starting kubelet."
 * when it starts (`BirthCry`), and "Node <name> status is now: <reason>" when a condition
 * changes (`recordNodeStatusEvent`, called by the setters of setters.go): a pressure condition
 * that is new or changed its status, a Ready condition that changed its status (a new Ready
 * condition records none). The involved object is `{apiVersion: v1, kind: Node, name}` (no
 * UID, no namespace: the Event goes to `default`); a repeat is counted, as client-go's
 * correlator counts identical events.
 */
import type { NodeCondition } from 'kubernetes-types/core/v1.js';
import type { Event } from '../api/types.js';
import type { Clock } from '../util/clock.js';

/** `events.StartingKubelet` and BirthCry's message. */
export const STARTING_REASON = 'Starting';
export const STARTING_MESSAGE = 'Starting kubelet.';

/** setters.go: the event reason of each condition's status. */
const REASONS: Record<string, { True: string; False: string }> = {
  MemoryPressure: { True: 'NodeHasInsufficientMemory', False: 'NodeHasSufficientMemory' },
  DiskPressure: { True: 'NodeHasDiskPressure', False: 'NodeHasNoDiskPressure' },
  PIDPressure: { True: 'NodeHasInsufficientPID', False: 'NodeHasSufficientPID' },
  Ready: { True: 'NodeReady', False: 'NodeNotReady' },
};

/** The reasons to record when the conditions go from `previous` to `next`, in `next`'s order. */
export function conditionChangeReasons(previous: readonly NodeCondition[] | undefined, next: readonly NodeCondition[]): string[] {
  const out: string[] = [];
  for (const c of next) {
    const words = REASONS[c.type];
    if (!words || (c.status !== 'True' && c.status !== 'False')) continue;
    const old = previous?.find((p) => p.type === c.type);
    // A new Ready condition records nothing (ReadyCondition: only a flip sets needToRecordEvent).
    if (c.type === 'Ready' ? old !== undefined && old.status !== c.status : old?.status !== c.status) out.push(words[c.status]);
  }
  return out;
}

/** `recordNodeStatusEvent`'s message. */
export function statusEventMessage(node: string, reason: string): string {
  return `Node ${node} status is now: ${reason}`;
}

export interface NodeEventRecorder {
  record(reason: string, message: string): void;
}

/** Records Normal events about the node; each new or re-counted Event goes to `offer` (the API's event sink). */
export function createNodeEventRecorder(node: string, clock: Clock, offer: (event: Event) => void): NodeEventRecorder {
  const seen = new Map<string, Event>();
  let lastNanos = -1n;
  return {
    record(reason, message) {
      const now = new Date(Math.floor(clock.now() / 1000) * 1000).toISOString().replace(/\.\d{3}Z$/, 'Z');
      const key = `${reason}\0${message}`;
      const existing = seen.get(key);
      if (existing) {
        existing.count = (existing.count ?? 1) + 1;
        existing.lastTimestamp = now;
        offer(structuredClone(existing));
        return;
      }
      let nanos = BigInt(Math.trunc(clock.now())) * 1_000_000n;
      if (nanos <= lastNanos) nanos = lastNanos + 1n;
      lastNanos = nanos;
      const event: Event = {
        metadata: { name: `${node}.${nanos.toString(16)}`, namespace: 'default' },
        involvedObject: { apiVersion: 'v1', kind: 'Node', name: node },
        reason,
        message,
        source: { component: 'kubelet', host: node },
        firstTimestamp: now,
        lastTimestamp: now,
        count: 1,
        type: 'Normal',
        reportingComponent: 'kubelet',
        reportingInstance: node,
      };
      // Few reasons exist: the map stays small (at most one entry per reason and message).
      seen.set(key, event);
      offer(structuredClone(event));
    },
  };
}
