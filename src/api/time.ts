/**
 * Kubernetes times (`metav1.Time`). probelet keeps full precision inside and cuts to whole
 * seconds at the boundary (`serializeTimes`: read-only API, CLI output), as the API's wire
 * format does. The kubelet's status manager already stores its statuses in whole seconds
 * (`normalizeStatus`); the one place that shows inside, the probe worker's initial-delay
 * check, cuts `startedAt` itself (prober/start-latency.ts `containerAgeSeconds`).
 */

/*
 * The last time formatted, by each function: the kubelet stamps many things at one instant
 * (a probe's event, the status it changes, the next pod's), and formatting a Date was a
 * visible part of what a simulated probe cost.
 */
let kubeMs = Number.NaN;
let kubeText = '';
let serializedSecond = Number.NaN;
let serializedText = '';

/** A time as the kubelet holds it in memory: RFC 3339 with milliseconds. */
export function toKubeTime(ms: number): string {
  if (ms !== kubeMs) {
    kubeText = new Date(ms).toISOString();
    kubeMs = ms;
  }
  return kubeText;
}

/** A time as the API serializes it: RFC 3339, UTC, whole seconds. */
export function toSerializedTime(ms: number): string {
  const second = Math.floor(ms / 1000);
  if (second !== serializedSecond) {
    serializedText = new Date(second * 1000).toISOString().replace(/\.\d{3}Z$/, 'Z');
    serializedSecond = second;
  }
  return serializedText;
}

const TIME_FIELDS: ReadonlySet<string> = new Set([
  'creationTimestamp',
  'deletionTimestamp',
  'startTime',
  'startedAt',
  'finishedAt',
  'lastTransitionTime',
  'lastProbeTime',
  'lastUpdateTime',
  'firstTimestamp',
  'lastTimestamp',
]);
const FRACTION = /^(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2})\.\d+Z$/;

/**
 * The copies of deeply frozen objects (the status manager's snapshots, which share every part
 * a change left alone), frozen in turn: the kubelet hands a pod on after every change of its
 * status, and copying all n container statuses of a pod each time made a pod of n containers
 * O(n²) (a 2,000-container pod spent half of a simulation here). Only what is frozen all the
 * way down is kept, so a copy never goes stale.
 */
const copies = new WeakMap<object, unknown>();
/** Whether the last `copy` was of a value frozen all the way down (scalars are). */
let deeplyFrozen = true;
/** Frozen lists known to be another frozen list with one item replaced (see `noteReplacedItem`). */
const derived = new WeakMap<readonly unknown[], { base: readonly unknown[]; index: number }>();

/**
 * Says that `list` is `base` with the item at `index` replaced, both frozen (or about to be):
 * the copy of `list` is then the copy of `base` with that one item copied, not n items looked up.
 */
export function noteReplacedItem(list: readonly unknown[], base: readonly unknown[], index: number): void {
  derived.set(list, { base, index });
}

/**
 * A deep copy of an API object with every `metav1.Time` field cut to whole seconds, as
 * serialized. Parts that were deeply frozen come back frozen (and shared between calls).
 */
export function serializeTimes<T>(value: T): T {
  return copy(value, '') as T;
}

function copy(value: unknown, key: string): unknown {
  if (typeof value === 'string') {
    deeplyFrozen = true;
    return TIME_FIELDS.has(key) ? value.replace(FRACTION, '$1Z') : value;
  }
  if (value === null || typeof value !== 'object') {
    deeplyFrozen = true;
    return value;
  }
  const frozen = Object.isFrozen(value);
  if (frozen) {
    const known = copies.get(value);
    if (known !== undefined) {
      deeplyFrozen = true;
      return known;
    }
  }
  let all = frozen;
  let out: unknown;
  if (Array.isArray(value)) {
    const from = frozen ? derived.get(value) : undefined;
    const baseCopy = from === undefined ? undefined : (copies.get(from.base) as unknown[] | undefined);
    if (from !== undefined && baseCopy !== undefined && baseCopy.length === value.length) {
      const items = baseCopy.slice();
      items[from.index] = copy(value[from.index], '');
      all = deeplyFrozen;
      out = items;
    } else {
      const items: unknown[] = new Array<unknown>(value.length);
      for (let i = 0; i < value.length; i++) {
        items[i] = copy(value[i], '');
        all &&= deeplyFrozen;
      }
      out = items;
    }
  } else {
    const fields: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) {
      fields[k] = copy(v, k);
      all &&= deeplyFrozen;
    }
    out = fields;
  }
  if (all) copies.set(value, Object.freeze(out));
  deeplyFrozen = all;
  return out;
}
