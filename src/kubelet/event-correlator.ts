/**
 * client-go's `EventCorrelator` (tools/record/events_cache.go), which every kubelet event
 * passes before it reaches the apiserver: the aggregator (`EventAggregate`: ten distinct
 * messages of one reason within 10 minutes become one "(combined from similar events): …"
 * Event), the logger (`eventObserve`: an identical repeat patches the existing Event's count
 * and lastTimestamp) and then the spam filter (`EventSourceObjectSpamFilter`: a token bucket
 * per source, involved object and event type, burst 25, one more token every 5 minutes).
 *
 * The order is upstream's and it shows: the filter sees the event *after* the logger counted
 * it, so a count update takes a token like a new Event does, and a dropped repeat still
 * raises the count the next accepted one carries (the API then jumps, e.g. ×25 → ×34).
 * The kubelet's own log sees every event (its broadcaster logs before correlating); the
 * API's Events do not.
 */
import type { Event } from '../api/types.js';
import type { Clock } from '../util/clock.js';

/** `defaultSpamBurst`: events of one type an object may have before the filter drops some. */
export const SPAM_BURST = 25;
/** `defaultSpamQPS` (1/300, a Go float32): one more token every 5 minutes. */
export const SPAM_QPS = Math.fround(1 / 300);
/** `defaultAggregateMaxEvents`: distinct messages of one reason before they are combined. */
export const AGGREGATE_MAX_EVENTS = 10;
/** `defaultAggregateIntervalInSeconds`: a reason's distinct messages are forgotten after this quiet time. */
export const AGGREGATE_INTERVAL_MS = 600_000;
/** `maxLruCacheEntries`: each of the three caches keeps this many keys, least recently used go first. */
export const CORRELATOR_CACHE_ENTRIES = 4096;
/** `EventAggregatorByReasonMessageFunc`'s prefix. */
export const COMBINED_PREFIX = '(combined from similar events): ';

export interface CorrelateResult {
  /** The Event as the API would store it (a new one, or an existing one's name with its new count). */
  event: Event;
  /** true: the spam filter dropped it; nothing reaches the API. */
  skip: boolean;
}

export interface EventCorrelator {
  correlate(event: Event): CorrelateResult;
}

export interface EventCorrelatorOptions {
  clock: Clock;
  /** Names a new Event of `objectName` at `nowMs` (client-go: `<name>.<unix nanos in hex>`). */
  eventName(objectName: string, nowMs: number): string;
  /** false: no spam filter (aggregation and counting stay). Default true, as the kubelet. */
  spamFilter?: boolean;
}

/** `k8s.io/utils/lru`: a lookup makes a key the most recently used; the least recently used goes when full. */
function lruCache<V>(size: number): { get(key: string): V | undefined; add(key: string, value: V): void } {
  const entries = new Map<string, V>();
  return {
    get(key) {
      const value = entries.get(key);
      if (value === undefined) return undefined;
      entries.delete(key);
      entries.set(key, value);
      return value;
    },
    add(key, value) {
      entries.delete(key);
      entries.set(key, value);
      if (entries.size > size) {
        const oldest = entries.keys().next();
        if (oldest.done !== true) entries.delete(oldest.value);
      }
    },
  };
}

/**
 * golang.org/x/time/rate's `Limiter` as `TryAccept` uses it (`AllowN(now, 1)`): full at
 * first, refilled continuously at `qps`, capped at `burst`; a refusal changes nothing.
 */
interface TokenBucket {
  tokens: number;
  lastMs: number;
}

function tryAccept(bucket: TokenBucket, nowMs: number, qps: number, burst: number): boolean {
  const last = nowMs < bucket.lastMs ? nowMs : bucket.lastMs;
  const tokens = Math.min(burst, bucket.tokens + ((nowMs - last) / 1000) * qps) - 1;
  // reserveN: the wait for a missing fraction, in whole nanoseconds, must be zero.
  if (tokens < 0 && Math.trunc((-tokens / qps) * 1e9) > 0) return false;
  bucket.tokens = tokens;
  bucket.lastMs = nowMs;
  return true;
}

/**
 * Keys join their parts as client-go does, with a separator so that two different parts
 * cannot run together (Go joins with "", where "ab"+"c" and "a"+"bc" would collide).
 */
const joinKey = (parts: (string | undefined)[]): string => parts.map((p) => p ?? '').join('\u0000');

/** `getEventKey`: what must match for a repeat to be counted instead of stored anew. */
export function getEventKey(e: Event): string {
  const o = e.involvedObject;
  return joinKey([e.source?.component, e.source?.host, o.kind, o.namespace, o.name, o.fieldPath, o.uid, o.apiVersion, e.type, e.reason, e.message]);
}

/** `getSpamKey`: the filter's bucket: source, involved object (no field path: the whole pod) and type. */
export function getSpamKey(e: Event): string {
  const o = e.involvedObject;
  return joinKey([e.source?.component, e.source?.host, o.kind, o.namespace, o.name, o.uid, o.apiVersion, e.type]);
}

/** `EventAggregatorByReasonFunc`: the aggregate key (no field path, no message) and the local key (the message). */
function aggregatorKeys(e: Event): [string, string] {
  const o = e.involvedObject;
  const key = joinKey([e.source?.component, e.source?.host, o.kind, o.namespace, o.name, o.uid, o.apiVersion, e.type, e.reason, e.reportingComponent, e.reportingInstance]);
  return [key, e.message ?? ''];
}

interface AggregateRecord {
  localKeys: Set<string>;
  lastMs: number;
}

interface EventLog {
  count: number;
  firstTimestamp: string | undefined;
  name: string;
}

/** `NewEventCorrelator` with client-go's defaults, on `clock`. */
export function createEventCorrelator(options: EventCorrelatorOptions): EventCorrelator {
  const { clock, eventName } = options;
  const spamFilter = options.spamFilter !== false;
  const aggregates = lruCache<AggregateRecord>(CORRELATOR_CACHE_ENTRIES);
  const logs = lruCache<EventLog>(CORRELATOR_CACHE_ENTRIES);
  const buckets = lruCache<TokenBucket>(CORRELATOR_CACHE_ENTRIES);

  /** `EventAggregate`: the event itself under its event key, or the combined one under the aggregate key. */
  function aggregate(e: Event): [Event, string] {
    const nowMs = clock.now();
    const [aggregateKey, localKey] = aggregatorKeys(e);
    let record = aggregates.get(aggregateKey);
    if (record === undefined || nowMs - record.lastMs > AGGREGATE_INTERVAL_MS) record = { localKeys: new Set(), lastMs: nowMs };
    record.localKeys.add(localKey);
    record.lastMs = nowMs;
    aggregates.add(aggregateKey, record);
    if (record.localKeys.size < AGGREGATE_MAX_EVENTS) return [e, getEventKey(e)];
    // `PopAny` takes one at random (Go's map order); the oldest here, so runs are repeatable.
    const any = record.localKeys.values().next();
    if (any.done !== true) record.localKeys.delete(any.value);
    const now = e.lastTimestamp;
    const combined: Event = {
      metadata: { name: eventName(e.involvedObject.name ?? '', nowMs), namespace: e.metadata.namespace },
      count: 1,
      firstTimestamp: now,
      involvedObject: e.involvedObject,
      lastTimestamp: now,
      message: COMBINED_PREFIX + (e.message ?? ''),
      type: e.type,
      reason: e.reason,
    };
    if (e.source) combined.source = e.source;
    return [combined, aggregateKey];
  }

  /** `eventObserve`: a key seen before keeps its Event's name and first time, one more in count. */
  function observe(e: Event, key: string): Event {
    const last = logs.get(key);
    const observed: Event = { ...e };
    if (last !== undefined && last.count > 0) {
      observed.metadata = { ...e.metadata, name: last.name };
      observed.firstTimestamp = last.firstTimestamp;
      observed.count = last.count + 1;
    }
    logs.add(key, { count: observed.count ?? 1, firstTimestamp: observed.firstTimestamp, name: observed.metadata.name ?? '' });
    return observed;
  }

  /** `EventSourceObjectSpamFilter.Filter`: true drops the event. */
  function filter(e: Event): boolean {
    const key = getSpamKey(e);
    const bucket = buckets.get(key) ?? { tokens: SPAM_BURST, lastMs: Number.NEGATIVE_INFINITY };
    const accepted = tryAccept(bucket, clock.now(), SPAM_QPS, SPAM_BURST);
    buckets.add(key, bucket);
    return !accepted;
  }

  return {
    correlate(e) {
      const [aggregated, key] = aggregate(e);
      const event = observe(aggregated, key);
      return { event, skip: spamFilter && filter(event) };
    },
  };
}
