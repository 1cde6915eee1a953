/**
 * Port resolution for HTTP and TCP probes (kubelet `probe.ResolveContainerPort`).
 * The error texts are the kubelet's, because they end up in `Unhealthy` events.
 */
import type { Container, IntOrString } from '../api/types.js';
import { goQuote } from './net-errors.js';

/** The `containerPort` of the container's port named `name`; throws `port <name> not found`. */
export function findPortByName(container: Container, name: string): number {
  for (const port of container.ports ?? []) {
    if (port.name === name) return port.containerPort;
  }
  throw new Error(`port ${name} not found`);
}

/**
 * The port a probe targets: an int as is; a string names one of the container's own
 * ports, or — the kubelet's "last ditch effort" — is a number written as a string.
 * The result must be 1..65535. Throws with the kubelet's texts
 * (`strconv.Atoi: parsing "abc": invalid syntax`, `invalid port number: 66666`).
 */
export function resolveContainerPort(port: IntOrString, container: Container): number {
  let resolved: number | bigint;
  if (typeof port === 'number') {
    resolved = port;
  } else if (typeof port === 'string') {
    resolved = portByNameOrNumber(port, container);
  } else {
    throw new Error(`intOrString had no kind: ${describeValue(port)}`);
  }
  if (typeof resolved === 'number' && Number.isInteger(resolved) && resolved > 0 && resolved < 65536) {
    return resolved;
  }
  throw new Error(`invalid port number: ${String(resolved)}`);
}

function portByNameOrNumber(name: string, container: Container): number | bigint {
  const named = container.ports?.find((p) => p.name === name);
  return named ? named.containerPort : goAtoi(name);
}

const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;

/**
 * Go's `strconv.Atoi` on a 64-bit platform: optional sign, decimal digits only.
 * A bigint keeps values beyond 2^53 exact for the `invalid port number` message.
 */
function goAtoi(s: string): number | bigint {
  if (!/^[+-]?[0-9]+$/.test(s)) {
    throw new Error(`strconv.Atoi: parsing ${goQuote(s)}: invalid syntax`);
  }
  const value = BigInt(s);
  if (value < INT64_MIN || value > INT64_MAX) {
    throw new Error(`strconv.Atoi: parsing ${goQuote(s)}: value out of range`);
  }
  return Number.isSafeInteger(Number(value)) ? Number(value) : value;
}

function describeValue(value: unknown): string {
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return String(value);
  }
}
