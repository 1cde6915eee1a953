/**
 * What the oracle keeps of one scenario on one agent (the real kubelet or probelet), built
 * from what both agents expose the same way: the Pod objects a watch delivers (with the time
 * each arrived), the aggregated Events, and what the probed test server saw. Times are seconds
 * from the pod's first container start (its `startedAt`), so the two agents' records line up
 * although they ran side by side, not at the same instant.
 */
import type { Event, Pod } from '../../src/api/types.js';

/** One observed Pod, with the local time (ms) it reached the harness. */
export interface PodSnapshot {
  atMs: number;
  pod: Pod;
}

export interface EventRecord {
  /** `involvedObject.fieldPath`: which container (`spec.containers{app}`), or '' for the pod. */
  object: string;
  reason: string;
  type: string;
  /** The message with pod UIDs written `<uid>` (they differ between agents and runs) and a `Pulled` event's times `<duration>`. */
  message: string;
  count: number;
  /** Seconds from the first start to firstTimestamp / lastTimestamp (whole seconds, as the API keeps them). */
  first: number;
  last: number;
}

export interface ContainerRecord {
  name: string;
  /** Each instance's `startedAt`, in seconds from the first start. */
  starts: number[];
  /** Each terminated instance: when it finished, why, with which code. */
  exits: { at: number; reason: string; exitCode: number }[];
  /** Readiness changes as the watch saw them (`false` first unless ready at once). */
  ready: { at: number; ready: boolean }[];
  /** Waiting reasons in the order first seen (e.g. CrashLoopBackOff). */
  waiting: string[];
  restartCount: number;
}

/** One request (or connection) the test server saw. */
export interface ProbeRequestRecord {
  at: number;
  /** `tcp` for a bare connection, else the HTTP method. */
  method: string;
  path: string;
  /** Lower-cased header names with their values, without Host (it names the port, which differs). */
  headers: Record<string, string>;
  /** How the prober closed: `FIN` (orderly), `RST` (reset), or `open` when the record was taken. */
  close: 'FIN' | 'RST' | 'open';
}

/** One pod condition's changes as the watch saw them (status and reason; times from the first start). */
export interface ConditionRecord {
  type: string;
  changes: { at: number; status: string; reason?: string }[];
}

export interface OracleRecord {
  scenario: string;
  agent: 'kubelet' | 'probelet';
  /** The kubelet's version (`kubelet --version`) or probelet's package version. */
  version: string;
  /** How long the scenario ran, from the first container start (seconds). */
  duration: number;
  phase: string;
  events: EventRecord[];
  containers: ContainerRecord[];
  /** The pod's conditions (absent from golden files recorded before they were kept). */
  conditions?: ConditionRecord[];
  requests: ProbeRequestRecord[];
}

const UID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g;
/** The two durations of a `Pulled` event (`in 1.2s (1.5s including waiting)`): the runtime's and the load's, not the agent's. */
const PULL_TIMES = /in [\d.]+[µmhs]+(?:[\d.]+[µms]+)* \([\d.]+[µmhs]+(?:[\d.]+[µms]+)* including waiting\)/;

/** An event's message as compared: pod UIDs and pull times masked. */
function maskedMessage(message: string): string {
  return message.replace(UID, '<uid>').replace(PULL_TIMES, 'in <duration> (<duration> including waiting)');
}

function seconds(iso: string | undefined, t0Ms: number): number | undefined {
  if (iso === undefined) return undefined;
  const ms = Date.parse(iso);
  return Number.isNaN(ms) ? undefined : Math.round((ms - t0Ms) / 100) / 10;
}

/** The earliest `startedAt` of any container in the snapshots: the record's time zero (ms). */
export function firstStartMs(snapshots: PodSnapshot[]): number | undefined {
  let first: number | undefined;
  for (const { pod } of snapshots) {
    for (const s of [...(pod.status?.initContainerStatuses ?? []), ...(pod.status?.containerStatuses ?? [])]) {
      const at = s.state?.running?.startedAt ?? s.state?.terminated?.startedAt ?? s.lastState?.terminated?.startedAt;
      if (at === undefined) continue;
      const ms = Date.parse(at);
      if (!Number.isNaN(ms) && (first === undefined || ms < first)) first = ms;
    }
  }
  return first;
}

/** Folds the watched snapshots of one pod into its containers' records. */
export function containerRecords(snapshots: PodSnapshot[], t0Ms: number): ContainerRecord[] {
  const byName = new Map<string, ContainerRecord & { startSet: Set<number>; exitSet: Set<string> }>();
  for (const { atMs, pod } of snapshots) {
    for (const s of [...(pod.status?.initContainerStatuses ?? []), ...(pod.status?.containerStatuses ?? [])]) {
      let c = byName.get(s.name);
      if (c === undefined) {
        c = { name: s.name, starts: [], exits: [], ready: [], waiting: [], restartCount: 0, startSet: new Set(), exitSet: new Set() };
        byName.set(s.name, c);
      }
      for (const term of [s.lastState?.terminated, s.state?.terminated]) {
        if (term === undefined) continue;
        const started = seconds(term.startedAt, t0Ms);
        if (started !== undefined && !c.startSet.has(started)) c.startSet.add(started);
        const at = seconds(term.finishedAt, t0Ms) ?? 0;
        const key = `${at}/${term.reason ?? ''}/${term.exitCode}`;
        if (!c.exitSet.has(key)) {
          c.exitSet.add(key);
          c.exits.push({ at, reason: term.reason ?? '', exitCode: term.exitCode });
        }
      }
      const running = seconds(s.state?.running?.startedAt, t0Ms);
      if (running !== undefined) c.startSet.add(running);
      const waiting = s.state?.waiting?.reason;
      if (waiting !== undefined && !c.waiting.includes(waiting)) c.waiting.push(waiting);
      const lastReady = c.ready.at(-1)?.ready;
      if (lastReady !== s.ready) c.ready.push({ at: Math.round((atMs - t0Ms) / 100) / 10, ready: s.ready });
      c.restartCount = Math.max(c.restartCount, s.restartCount);
    }
  }
  return [...byName.values()].map(({ startSet, exitSet: _exitSet, ...c }) => ({
    ...c,
    starts: [...startSet].sort((a, b) => a - b),
    exits: c.exits.sort((a, b) => a.at - b.at),
  }));
}

/** Folds the watched snapshots of one pod into its conditions' changes. */
export function conditionRecords(snapshots: PodSnapshot[], t0Ms: number): ConditionRecord[] {
  const byType = new Map<string, ConditionRecord>();
  for (const { atMs, pod } of snapshots) {
    for (const c of pod.status?.conditions ?? []) {
      let r = byType.get(c.type);
      if (r === undefined) {
        r = { type: c.type, changes: [] };
        byType.set(c.type, r);
      }
      const last = r.changes.at(-1);
      if (last?.status !== c.status || last.reason !== c.reason) {
        r.changes.push({ at: Math.round((atMs - t0Ms) / 100) / 10, status: c.status, ...(c.reason !== undefined ? { reason: c.reason } : {}) });
      }
    }
  }
  return [...byType.values()].sort((a, b) => a.type.localeCompare(b.type));
}

/** The pod's aggregated Events, oldest first, with UIDs masked. */
export function eventRecords(events: Event[], t0Ms: number): EventRecord[] {
  return events
    .map((e) => ({
      object: e.involvedObject?.fieldPath ?? '',
      reason: e.reason ?? '',
      type: e.type ?? '',
      message: maskedMessage(e.message ?? ''),
      count: e.count ?? 1,
      first: seconds(e.firstTimestamp ?? e.eventTime, t0Ms) ?? 0,
      last: seconds(e.lastTimestamp ?? e.firstTimestamp ?? e.eventTime, t0Ms) ?? 0,
    }))
    .sort((a, b) => a.first - b.first || a.last - b.last || a.reason.localeCompare(b.reason));
}

/**
 * The record with its pod's namespace written `<namespace>` in event messages (the BackOff
 * message names `pod_namespace(uid)`): for two records taken in different namespaces.
 */
export function maskNamespace(record: OracleRecord, namespace: string): OracleRecord {
  const named = `_${namespace}(`;
  return { ...record, events: record.events.map((e) => ({ ...e, message: e.message.split(named).join('_<namespace>(') })) };
}
