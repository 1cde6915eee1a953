/** Go's zero `time.Time` as it serialises; the kubelet treats it as "no time". */
const GO_ZERO_TIME_MS = Date.parse('0001-01-01T00:00:00Z');

/**
 * Milliseconds since the epoch of an API timestamp (RFC 3339 string), or `undefined`
 * when it is absent, unparsable or Go's zero time — the cases where the kubelet's
 * `IsZero()` checks would say "never happened".
 */
export function parseApiTime(value: string | Date | undefined): number | undefined {
  if (value === undefined || value === '') return undefined;
  // kubernetes-types says string; objects built in code sometimes carry a Date anyway.
  const ms = value instanceof Date ? value.getTime() : Date.parse(value);
  if (Number.isNaN(ms) || ms === GO_ZERO_TIME_MS) return undefined;
  return ms;
}

/**
 * Containers that started this long before the kubelet count as having survived its
 * restart; the margin keeps containers the new kubelet started itself (clock skew, slow
 * start-up) from being mistaken for survivors.
 */
const RESTART_SURVIVOR_MARGIN_MS = 10_000;

/** Did a container that started at `startedAt` start before the kubelet (at `kubeletStart` ms)? */
export function predatesKubelet(startedAt: string | undefined, kubeletStart: number): boolean {
  const ms = parseApiTime(startedAt);
  return ms !== undefined && ms < kubeletStart - RESTART_SURVIVOR_MARGIN_MS;
}
