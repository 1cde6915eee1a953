/**
 * Events as explain reads them: one shape for core/v1 Events (what the kubelet records and
 * `kubectl get events -o json` prints: `count`, `firstTimestamp`, `lastTimestamp`) and
 * events.k8s.io/v1 Events (`regarding`, `note`, `deprecatedCount`, `series`), narrowed to one
 * pod by UID (an earlier pod of the same name leaves its events behind for an hour).
 */
import type { Pod } from '../api/types.js';
import { isRecord } from '../api/workloads.js';
import { containerOfFieldPath } from '../kubelet/events.js';

/** One stored Event: a message the kubelet recorded `count` times between `firstMs` and `lastMs`. */
export interface ObservedEvent {
  type: string;
  reason: string;
  message: string;
  count: number;
  /** Epoch ms of the first and last occurrence (undefined when the event carries no time). */
  firstMs?: number;
  lastMs?: number;
  /** The container the event is about (its field path), undefined for the pod itself. */
  container?: string;
  /** Who recorded it (`kubelet`, `default-scheduler`…). */
  source: string;
}

/** Which object an event is about, as far as matching it to a pod goes. */
interface Regarding {
  kind?: string;
  name?: string;
  namespace?: string;
  uid?: string;
  fieldPath?: string;
}

/** Every Event in a decoded JSON value: an Event, an EventList, a `List` (any mix), or an array of those. */
export function eventsIn(value: unknown): Record<string, unknown>[] {
  if (Array.isArray(value)) return value.flatMap(eventsIn);
  if (!isRecord(value)) return [];
  if (value['kind'] === 'Event') return [value];
  // Items of a typed list come without their kind (the API's EventList, client libraries' lists).
  if (value['kind'] === undefined && (isRecord(value['involvedObject']) || isRecord(value['regarding']))) return [value];
  if (Array.isArray(value['items'])) return value['items'].flatMap(eventsIn);
  return [];
}

function text(value: unknown): string | undefined {
  return typeof value === 'string' ? value : undefined;
}

function time(value: unknown): number | undefined {
  const s = text(value);
  if (s === undefined || s === '') return undefined;
  const ms = Date.parse(s);
  // The zero time (`0001-01-01T00:00:00Z`) some clients write means "not set".
  return Number.isNaN(ms) || ms <= 0 ? undefined : ms;
}

/** An event in either API version, read; undefined when it is no Event at all. */
export function readEvent(raw: Record<string, unknown>): { regarding: Regarding; event: ObservedEvent } | undefined {
  const events = text(raw['apiVersion'])?.startsWith('events.k8s.io/') === true;
  const regardingRaw = events ? raw['regarding'] : raw['involvedObject'];
  if (!isRecord(regardingRaw)) return undefined;
  const regarding: Regarding = {
    kind: text(regardingRaw['kind']),
    name: text(regardingRaw['name']),
    namespace: text(regardingRaw['namespace']),
    uid: text(regardingRaw['uid']),
    fieldPath: text(regardingRaw['fieldPath']),
  };
  const series = isRecord(raw['series']) ? raw['series'] : undefined;
  const count = events ? (series?.['count'] ?? raw['deprecatedCount']) : (raw['count'] ?? series?.['count']);
  const eventTime = time(raw['eventTime']);
  const first = (events ? time(raw['deprecatedFirstTimestamp']) : time(raw['firstTimestamp'])) ?? eventTime;
  const last = time(series?.['lastObservedTime']) ?? (events ? time(raw['deprecatedLastTimestamp']) : time(raw['lastTimestamp'])) ?? first;
  const source = isRecord(raw['source']) ? text(raw['source']['component']) : undefined;
  const event: ObservedEvent = {
    type: text(raw['type']) ?? '',
    reason: text(raw['reason']) ?? '',
    message: (events ? text(raw['note']) : text(raw['message'])) ?? '',
    count: typeof count === 'number' && count > 0 ? count : 1,
    source: source ?? text(raw['reportingController']) ?? text(raw['reportingComponent']) ?? '',
  };
  if (first !== undefined) event.firstMs = first;
  if (last !== undefined) event.lastMs = last;
  const container = containerOfFieldPath(regarding.fieldPath);
  if (container !== undefined) event.container = container;
  return { regarding, event };
}

/**
 * The events about `pod`, oldest first: same namespace and name, and the same UID when both
 * sides have one. An event that names the pod without a UID is kept (some recorders leave it out).
 */
export function eventsOfPod(raw: readonly Record<string, unknown>[], pod: Pod): ObservedEvent[] {
  const name = pod.metadata?.name;
  const namespace = pod.metadata?.namespace ?? 'default';
  const uid = pod.metadata?.uid;
  const out: ObservedEvent[] = [];
  for (const one of raw) {
    const read = readEvent(one);
    if (read === undefined) continue;
    const r = read.regarding;
    if ((r.kind ?? 'Pod') !== 'Pod' || r.name !== name || (r.namespace ?? namespace) !== namespace) continue;
    if (uid && r.uid && r.uid !== uid) continue;
    out.push(read.event);
  }
  return out.sort((a, b) => (a.firstMs ?? 0) - (b.firstMs ?? 0));
}
