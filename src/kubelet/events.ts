/**
 * The kubelet's event sink, in memory. The real kubelet hands events to client-go's
 * recorder, whose correlator folds identical repeats into one Event (count, lastTimestamp)
 * before the apiserver stores it; users read them through `kubectl describe pod`. Here the
 * recorder, the correlator and the store are one object, so the read-only API and the CLI
 * show the same aggregated Events a cluster would.
 */
import { toSerializedTime } from '../api/time.js';
import { hostname } from 'node:os';
import type { Event, ObjectReference, Pod } from '../api/types.js';
import type { EventRecorder, EventRef } from '../prober/types.js';
import { type Clock, realClock } from '../util/clock.js';
import { cloneData } from '../util/copy.js';

export interface EventFilter {
  podName?: string;
  namespace?: string;
}

export interface EventRecorderOptions {
  clock?: Clock;
  /** `source.host` / `reportingInstance`: the node name. Default: this machine's hostname, lower-cased (the kubelet's default node name). */
  host?: string;
  /** How many distinct Events to keep; the least recently seen go first. Default 1000. */
  limit?: number;
}

export interface InMemoryEventRecorder extends EventRecorder {
  /** Snapshots, least recently seen first (the order `kubectl describe` sorts by: lastTimestamp). */
  list(filter?: EventFilter): Event[];
  /** `listener` gets a snapshot of every new or re-counted Event, synchronously. Returns unsubscribe. */
  subscribe(listener: (e: Event) => void): () => void;
}

export const DEFAULT_EVENT_LIMIT = 1000;
const COMPONENT = 'kubelet';

/** Creates an `EventRecorder` that keeps the newest `limit` Events, aggregated like client-go's correlator. */
export function createEventRecorder(options: EventRecorderOptions = {}): InMemoryEventRecorder {
  const clock = options.clock ?? realClock;
  const host = options.host ?? hostname().toLowerCase();
  const limit = options.limit ?? DEFAULT_EVENT_LIMIT;
  if (!Number.isInteger(limit) || limit < 1) {
    throw new RangeError(`event limit must be a positive integer, got ${limit}`);
  }
  // Keyed by the correlator's key; Map order doubles as recency order (re-inserted on repeat).
  const events = new Map<string, Event>();
  const listeners = new Set<(e: Event) => void>();
  let lastNanos = -1n;

  /** client-go names events `<object>.<unix nanos in hex>`; bump on a tie so names stay unique under a fake clock. */
  function uniqueName(podName: string, nowMs: number): string {
    let nanos = BigInt(Math.trunc(nowMs)) * 1_000_000n;
    if (nanos <= lastNanos) nanos = lastNanos + 1n;
    lastNanos = nanos;
    return `${podName}.${nanos.toString(16)}`;
  }

  function publish(e: Event): void {
    if (listeners.size === 0) return;
    for (const listener of [...listeners]) {
      try {
        // An Event is plain data: cloneData gives what structuredClone would, much cheaper.
        listener(cloneData(e));
      } catch {
        // A broken viewer must neither stop the prober that recorded the event nor the other viewers.
      }
    }
  }

  function event(ref: EventRef, type: 'Normal' | 'Warning', reason: string, message: string): void {
    const involvedObject = objectReference(ref);
    const nowMs = clock.now();
    const now = formatTime(nowMs);
    const key = eventKey(involvedObject, host, type, reason, message);
    const existing = events.get(key);
    if (existing) {
      existing.count = (existing.count ?? 1) + 1;
      existing.lastTimestamp = now;
      events.delete(key);
      events.set(key, existing);
      publish(existing);
      return;
    }
    const created: Event = {
      metadata: {
        name: uniqueName(involvedObject.name ?? '', nowMs),
        namespace: involvedObject.namespace || 'default',
        creationTimestamp: now,
      },
      involvedObject,
      reason,
      message,
      source: { component: COMPONENT, host },
      firstTimestamp: now,
      lastTimestamp: now,
      count: 1,
      type,
      reportingComponent: COMPONENT,
      reportingInstance: host,
    };
    events.set(key, created);
    for (const oldest of events.keys()) {
      if (events.size <= limit) break;
      events.delete(oldest);
    }
    publish(created);
  }

  function list(filter: EventFilter = {}): Event[] {
    const out: Event[] = [];
    for (const e of events.values()) {
      if (filter.podName !== undefined && e.involvedObject.name !== filter.podName) continue;
      if (filter.namespace !== undefined && e.metadata.namespace !== filter.namespace) continue;
      out.push(structuredClone(e));
    }
    return out;
  }

  function subscribe(listener: (e: Event) => void): () => void {
    const own = (e: Event): void => listener(e);
    listeners.add(own);
    return () => {
      listeners.delete(own);
    };
  }

  return { event, list, subscribe };
}

/** The kubelet's `GenerateContainerRef`: the Pod, narrowed to a container by field path. */
function objectReference(ref: EventRef): ObjectReference {
  const meta = ref.pod.metadata ?? {};
  const out: ObjectReference = { kind: 'Pod', apiVersion: 'v1', name: meta.name, namespace: meta.namespace, uid: meta.uid };
  if (meta.resourceVersion) out.resourceVersion = meta.resourceVersion;
  if (ref.containerName !== undefined) out.fieldPath = containerFieldPath(ref.pod, ref.containerName);
  return out;
}

/** Upstream falls back to the "implicitly required container" path rather than dropping the event. */
function containerFieldPath(pod: Pod, name: string): string {
  const spec = pod.spec;
  return (
    fieldPathIn('containers', spec?.containers, name) ??
    fieldPathIn('initContainers', spec?.initContainers, name) ??
    fieldPathIn('ephemeralContainers', spec?.ephemeralContainers, name) ??
    `implicitly required container ${name}`
  );
}

/**
 * The container name in a field path `spec.containers{name}` (undefined: the event is about
 * the pod, or a container without a name). Found by position, not by `/\{(.*)\}$/`, which
 * rescans the rest of the path from every `{` (quadratic in a path full of them).
 */
export function containerOfFieldPath(fieldPath: string | undefined): string | undefined {
  if (fieldPath === undefined || !fieldPath.endsWith('}')) return undefined;
  const open = fieldPath.indexOf('{');
  return open === -1 || open === fieldPath.length - 1 ? undefined : fieldPath.slice(open + 1, -1);
}

/** The container's field path in one of the pod's lists, if it is there (no closure: every event asks). */
function fieldPathIn(field: string, containers: readonly { name: string }[] | null | undefined, name: string): string | undefined {
  // `null` too: what decoded JSON or YAML gives for an empty list.
  if (containers == null) return undefined;
  for (let index = 0; index < containers.length; index++) {
    if (containers[index]?.name !== name) continue;
    return name === '' ? `spec.${field}[${index}]` : `spec.${field}{${name}}`;
  }
  return undefined;
}

/** client-go's `getEventKey`: what must match for a repeat to be counted instead of stored anew. */
function eventKey(o: ObjectReference, host: string, type: string, reason: string, message: string): string {
  return JSON.stringify([
    COMPONENT,
    host,
    o.kind,
    o.namespace ?? '',
    o.name ?? '',
    o.fieldPath ?? '',
    o.uid ?? '',
    o.apiVersion,
    type,
    reason,
    message,
  ]);
}

/** `metav1.Time` serialises as RFC 3339 in UTC with whole seconds. */
const formatTime = toSerializedTime;

/**
 * One line of `kubectl describe`'s Events table (columns joined by two spaces):
 * `Warning  Unhealthy  10s (x3 over 30s)  kubelet  Liveness probe failed: ...`, ages as of `nowMs`.
 */
export function formatEvent(e: Event, nowMs: number): string {
  const since = (time: string | undefined): string => {
    const at = time ? Date.parse(time) : Number.NaN;
    return Number.isNaN(at) ? '<unknown>' : humanDuration(nowMs - at);
  };
  const first = e.eventTime ? since(e.eventTime) : since(e.firstTimestamp);
  let interval = first;
  if (e.series) {
    interval = `${since(e.series.lastObservedTime)} (x${e.series.count ?? 0} over ${first})`;
  } else if ((e.count ?? 0) > 1) {
    interval = `${since(e.lastTimestamp)} (x${e.count} over ${first})`;
  }
  const source = e.source?.component || e.reportingComponent || '';
  return [e.type ?? '', e.reason ?? '', interval, source, (e.message ?? '').trim()].join('  ');
}

/**
 * apimachinery's `duration.HumanDuration`, the short ages kubectl prints (`10s`, `2m5s`,
 * `15m`, `3h20m`, `2d5h`): precision drops as the age grows, so columns stay narrow.
 */
export function humanDuration(ms: number): string {
  const seconds = Math.trunc(ms / 1000);
  if (seconds < -1) return '<invalid>';
  if (seconds < 0) return '0s';
  if (seconds < 120) return `${seconds}s`;
  const minutes = Math.trunc(seconds / 60);
  if (minutes < 10) {
    const s = seconds % 60;
    return s === 0 ? `${minutes}m` : `${minutes}m${s}s`;
  }
  if (minutes < 180) return `${minutes}m`;
  const hours = Math.trunc(minutes / 60);
  if (hours < 8) {
    const m = minutes % 60;
    return m === 0 ? `${hours}h` : `${hours}h${m}m`;
  }
  if (hours < 48) return `${hours}h`;
  const days = Math.trunc(hours / 24);
  if (hours < 24 * 8) {
    const h = hours % 24;
    return h === 0 ? `${days}d` : `${days}d${h}h`;
  }
  if (hours < 24 * 365 * 2) return `${days}d`;
  const years = Math.trunc(days / 365);
  if (hours < 24 * 365 * 8) {
    const d = days % 365;
    return d === 0 ? `${years}y` : `${years}y${d}d`;
  }
  return `${years}y`;
}
