/**
 * A container's timeline as far as the API still tells it: the instances its status shows (the
 * current one, and the one before in `lastState`; older ones only by `restartCount`), and what
 * the kubelet's events say happened to it — kills with their cause, probe failures by message
 * with their counts, starts, back-offs, image pulls. Events are aggregated (`count`, first and
 * last time), so a timeline holds groups, not every occurrence; what is missing is said in
 * `gaps`.
 */
import { toSerializedTime } from '../api/time.js';
import type { Container, ContainerStatus, Pod } from '../api/types.js';
import type { ProbeType } from '../prober/types.js';
import { readBackOffStep, readImagePull, readKilling, readUnhealthy, type FailureKind, type KillCause } from './kubelet-words.js';
import type { ObservedEvent } from './observed.js';

export type ContainerRole = 'container' | 'sidecar' | 'init';

/** One run of the container, from its status. */
export interface Instance {
  /** 1 for the container's first run; the current one is `restartCount + 1`. */
  attempt: number;
  /** `state` (the current run) or `lastState` (the run before). */
  from: 'state' | 'lastState';
  state: 'running' | 'terminated' | 'waiting';
  startedAt?: string;
  finishedAt?: string;
  exitCode?: number;
  signal?: number;
  /** `Error`, `Completed`, `OOMKilled`, `ContainerCannotRun`, … */
  reason?: string;
  message?: string;
}

/** An aggregated event: one message, `count` times from `first` to `last`. */
export interface EventGroup {
  reason: string;
  message: string;
  count: number;
  first?: string;
  last?: string;
}

export interface KillGroup extends EventGroup {
  cause: KillCause;
}

export interface FailureGroup extends EventGroup {
  probe: ProbeType;
  kind: FailureKind;
  errored: boolean;
  statusCode?: number;
  /** The probe's own output (after `probe failed: `). */
  output: string;
}

export interface ContainerTimeline {
  name: string;
  role: ContainerRole;
  image: string;
  restartCount: number;
  ready: boolean;
  started?: boolean;
  waiting?: { reason: string; message?: string };
  /** The back-off step in force, from a `CrashLoopBackOff` waiting message (seconds). */
  backOffStepSeconds?: number;
  /** Oldest first: at most the run before and the current run. */
  instances: Instance[];
  /** Earlier runs known only by `restartCount` (none of their times or exit codes survive). */
  unseenInstances: number;
  kills: KillGroup[];
  failures: FailureGroup[];
  starts?: EventGroup;
  backOffs?: EventGroup;
  pullFailures: EventGroup[];
  /** Other events about the container (Pulled, Created, hooks…), kept for the text view. */
  other: EventGroup[];
}

export interface PodTimeline {
  namespace: string;
  name: string;
  uid?: string;
  phase?: string;
  ready?: { status: string; lastTransitionTime?: string };
  deletionTimestamp?: string;
  deletionGracePeriodSeconds?: number;
  /** Events about the pod itself (scheduling, ExceededGracePeriod…). */
  podEvents: EventGroup[];
  containers: ContainerTimeline[];
}

function iso(ms: number | undefined): string | undefined {
  return ms === undefined ? undefined : toSerializedTime(ms);
}

function group(e: ObservedEvent): EventGroup {
  const out: EventGroup = { reason: e.reason, message: e.message, count: e.count };
  const first = iso(e.firstMs);
  const last = iso(e.lastMs);
  if (first !== undefined) out.first = first;
  if (last !== undefined) out.last = last;
  return out;
}

/** Folds groups of the same message (two Event objects for one message: the correlator's key changed). */
function merge(into: EventGroup | undefined, e: ObservedEvent): EventGroup {
  const g = group(e);
  if (into === undefined) return g;
  const first = [into.first, g.first].filter((t): t is string => t !== undefined).sort()[0];
  const last = [into.last, g.last].filter((t): t is string => t !== undefined).sort().at(-1);
  return { ...into, count: into.count + g.count, ...(first !== undefined ? { first } : {}), ...(last !== undefined ? { last } : {}) };
}

function instanceOf(status: ContainerStatus, from: 'state' | 'lastState', attempt: number): Instance | undefined {
  const s = from === 'state' ? status.state : status.lastState;
  if (s?.running) return { attempt, from, state: 'running', ...(s.running.startedAt ? { startedAt: s.running.startedAt } : {}) };
  if (s?.terminated) {
    const t = s.terminated;
    const out: Instance = { attempt, from, state: 'terminated', exitCode: t.exitCode };
    if (t.startedAt) out.startedAt = t.startedAt;
    if (t.finishedAt) out.finishedAt = t.finishedAt;
    if (t.signal !== undefined) out.signal = t.signal;
    if (t.reason) out.reason = t.reason;
    if (t.message) out.message = t.message;
    return out;
  }
  return undefined;
}

/** Every container of the pod spec with its role, in the kubelet's order (init containers first). */
function specContainers(pod: Pod): { container: Container; role: ContainerRole }[] {
  const spec = pod.spec;
  return [
    ...(spec?.initContainers ?? []).map((container) => ({ container, role: container.restartPolicy === 'Always' ? ('sidecar' as const) : ('init' as const) })),
    ...(spec?.containers ?? []).map((container) => ({ container, role: 'container' as const })),
  ];
}

/** The timeline of every container of `pod` from its status and `events` (already narrowed to the pod). */
export function buildTimeline(pod: Pod, events: readonly ObservedEvent[]): PodTimeline {
  const statuses = [...(pod.status?.initContainerStatuses ?? []), ...(pod.status?.containerStatuses ?? [])];
  const readyCondition = pod.status?.conditions?.find((c) => c.type === 'Ready');
  const out: PodTimeline = {
    namespace: pod.metadata?.namespace ?? 'default',
    name: pod.metadata?.name ?? '',
    podEvents: [],
    containers: [],
  };
  if (pod.metadata?.uid) out.uid = pod.metadata.uid;
  if (pod.status?.phase) out.phase = pod.status.phase;
  if (readyCondition) out.ready = { status: readyCondition.status, ...(readyCondition.lastTransitionTime ? { lastTransitionTime: readyCondition.lastTransitionTime } : {}) };
  if (pod.metadata?.deletionTimestamp) out.deletionTimestamp = pod.metadata.deletionTimestamp;
  if (typeof pod.metadata?.deletionGracePeriodSeconds === 'number') out.deletionGracePeriodSeconds = pod.metadata.deletionGracePeriodSeconds;
  const byName = new Map<string, ContainerTimeline>();
  for (const { container, role } of specContainers(pod)) {
    const status = statuses.find((s) => s.name === container.name);
    const restartCount = status?.restartCount ?? 0;
    const t: ContainerTimeline = {
      name: container.name,
      role,
      image: container.image ?? '',
      restartCount,
      ready: status?.ready ?? false,
      instances: [],
      unseenInstances: Math.max(0, restartCount - 1),
      kills: [],
      failures: [],
      pullFailures: [],
      other: [],
    };
    if (status?.started !== undefined) t.started = status.started;
    const waiting = status?.state?.waiting;
    if (waiting?.reason) {
      t.waiting = { reason: waiting.reason, ...(waiting.message ? { message: waiting.message } : {}) };
      const step = waiting.message === undefined ? undefined : readBackOffStep(waiting.message);
      if (step !== undefined) t.backOffStepSeconds = step;
    }
    if (status) {
      const last = instanceOf(status, 'lastState', restartCount);
      const current = instanceOf(status, 'state', restartCount + 1);
      if (last) t.instances.push(last);
      // A waiting container has no current run yet: its next one is still to come.
      if (current) t.instances.push(current);
      // Without a lastState, the run before the current one is unseen too.
      if (!last && restartCount > 0) t.unseenInstances = restartCount;
    }
    out.containers.push(t);
    byName.set(container.name, t);
  }
  for (const e of events) {
    const t = e.container === undefined ? undefined : byName.get(e.container);
    if (t === undefined) {
      out.podEvents.push(group(e));
      continue;
    }
    addEvent(t, e);
  }
  return out;
}

function addEvent(t: ContainerTimeline, e: ObservedEvent): void {
  if (e.reason === 'Killing') {
    const words = readKilling(e.message);
    const at = t.kills.findIndex((k) => k.message === e.message);
    if (at >= 0) t.kills[at] = { ...merge(t.kills[at], e), cause: words.cause };
    else t.kills.push({ ...group(e), cause: words.cause });
    return;
  }
  if (e.reason === 'Unhealthy') {
    const words = readUnhealthy(e.message);
    if (words) {
      const at = t.failures.findIndex((f) => f.message === e.message);
      const base = { probe: words.probe, kind: words.kind, errored: words.errored, output: words.output, ...(words.statusCode !== undefined ? { statusCode: words.statusCode } : {}) };
      if (at >= 0) t.failures[at] = { ...merge(t.failures[at], e), ...base };
      else t.failures.push({ ...group(e), ...base });
      return;
    }
  }
  if (e.reason === 'Started') {
    t.starts = merge(t.starts, e);
    return;
  }
  if (e.reason === 'BackOff' && e.message.startsWith('Back-off restarting failed container')) {
    t.backOffs = merge(t.backOffs, e);
    return;
  }
  if ((e.reason === 'Failed' || e.reason === 'BackOff') && (readImagePull(e.message) !== undefined || /^Error: (ErrImagePull|ImagePullBackOff|InvalidImageName|ErrImageNeverPull)/.test(e.message))) {
    t.pullFailures.push(group(e));
    return;
  }
  t.other.push(group(e));
}
