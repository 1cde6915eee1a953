/**
 * The kubelet's event sink, in memory. The real kubelet hands events to client-go's
 * recorder, whose correlator (event-correlator.ts) folds identical repeats into one Event
 * (count, lastTimestamp), combines similar ones and drops spam before the apiserver stores
 * them; users read them through `kubectl describe pod`. Here the recorder, the correlator
 * and the store are one object, so the read-only API and the CLI show the same Events a
 * cluster would, and `subscribeLog` sees every event, as the kubelet's own log does.
 */
import { toSerializedTime } from '../api/time.js';
import { hostname } from 'node:os';
import type { Event, ObjectReference, Pod } from '../api/types.js';
import type { EventRecorder, EventRef } from '../prober/types.js';
import { type Clock, realClock } from '../util/clock.js';
import { cloneData } from '../util/copy.js';
import { createEventCorrelator } from './event-correlator.js';

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
  /**
   * client-go's spam filter (25 events of one type per object, then one per 5 minutes).
   * Default true, as the kubelet; false keeps every event in the store (aggregation stays).
   */
  spamFilter?: boolean;
}

export interface InMemoryEventRecorder extends EventRecorder {
  /** Snapshots, least recently seen first (the order `kubectl describe` sorts by: lastTimestamp). */
  list(filter?: EventFilter): Event[];
  /**
   * `listener` gets a snapshot of every new or re-counted Event the API would store (what
   * `kubectl get events -w` shows: not the ones the spam filter drops), synchronously. Returns unsubscribe.
   */
  subscribe(listener: (e: Event) => void): () => void;
  /**
   * `listener` gets every event as it is recorded, before the correlator (count 1, its own
   * name), the ones the spam filter drops included: what the kubelet's log shows
   * (`StartStructuredLogging`). For views that must not miss a restart or a kill.
   */
  subscribeLog(listener: (e: Event) => void): () => void;
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
  // Keyed by the Event's name, as the apiserver stores them; Map order doubles as recency order (re-inserted on repeat).
  const events = new Map<string, Event>();
  const listeners = new Set<(e: Event) => void>();
  const logListeners = new Set<(e: Event) => void>();
  let lastNanos = -1n;

  /** client-go names events `<object>.<unix nanos in hex>`; bump on a tie so names stay unique under a fake clock. */
  function uniqueName(podName: string, nowMs: number): string {
    let nanos = BigInt(Math.trunc(nowMs)) * 1_000_000n;
    if (nanos <= lastNanos) nanos = lastNanos + 1n;
    lastNanos = nanos;
    return `${podName}.${nanos.toString(16)}`;
  }

  const correlator = createEventCorrelator({ clock, eventName: uniqueName, spamFilter: options.spamFilter !== false });

  function publish(to: ReadonlySet<(e: Event) => void>, e: Event): void {
    if (to.size === 0) return;
    for (const listener of [...to]) {
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
    // client-go's `makeEvent`: a new Event, count 1, named after the object and the instant.
    const recorded: Event = {
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
    publish(logListeners, recorded);
    const { event: observed, skip } = correlator.correlate(recorded);
    if (skip) return;
    const name = observed.metadata.name ?? '';
    const existing = events.get(name);
    // A patch of an Event the store has keeps its creation time; otherwise it is created now.
    const stored: Event = existing ? { ...observed, metadata: { ...existing.metadata } } : { ...observed, metadata: { ...observed.metadata, creationTimestamp: now } };
    events.delete(name);
    events.set(name, stored);
    for (const oldest of events.keys()) {
      if (events.size <= limit) break;
      events.delete(oldest);
    }
    publish(listeners, stored);
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

  function subscribeLog(listener: (e: Event) => void): () => void {
    const own = (e: Event): void => listener(e);
    logListeners.add(own);
    return () => {
      logListeners.delete(own);
    };
  }

  return { event, list, subscribe, subscribeLog };
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
