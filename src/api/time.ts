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

/** A deep copy of an API object with every `metav1.Time` field cut to whole seconds, as serialized. */
export function serializeTimes<T>(value: T): T {
  return copy(value, '') as T;
}

function copy(value: unknown, key: string): unknown {
  if (typeof value === 'string') return TIME_FIELDS.has(key) ? value.replace(FRACTION, '$1Z') : value;
  if (Array.isArray(value)) return value.map((v) => copy(v, ''));
  if (value !== null && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) out[k] = copy(v, k);
    return out;
  }
  return value;
}
