/**
 * The apiserver's probe and lifecycle-hook validation (`validateProbe`, `validateLifecycle`,
 * `validateHandler` and the per-kind wrappers in `pkg/apis/core/validation`), reporting every
 * broken rule with upstream's field paths and wording. Probes and hooks share one handler
 * rule (upstream's `commonHandler`): exactly one of exec, httpGet, tcpSocket, grpc, sleep.
 */
import { FieldError, forbidden, invalid, notSupported, required } from './field-error.js';
import { isHTTPHeaderName, isValidPortName, isValidPortNum } from './formats.js';
import type { ExecAction, GRPCAction, HTTPGetAction, IntOrString, Lifecycle, Probe, TCPSocketAction } from './types.js';

/** Same union as the prober's `ProbeType`; declared here so `api/` does not depend on a lower layer. */
type ProbeKind = 'liveness' | 'readiness' | 'startup';

const SUPPORTED_HTTP_SCHEMES = ['HTTP', 'HTTPS'] as const;
const MORE_THAN_ONE_HANDLER = 'may not specify more than 1 handler type';
const IS_NEGATIVE = 'must be greater than or equal to 0';
const NONNEGATIVE_FIELDS = [
  'initialDelaySeconds',
  'timeoutSeconds',
  'periodSeconds',
  'successThreshold',
  'failureThreshold',
] as const;

/**
 * Validates one probe of the given kind at `fieldPath` (e.g. `spec.containers[0].livenessProbe`).
 * Includes the per-kind rules: liveness and startup need `successThreshold` 1, readiness
 * may not set `terminationGracePeriodSeconds`. Container-type rules (plain init and
 * ephemeral containers) belong to `validatePod`.
 */
export function validateProbe(probe: Probe, probeType: ProbeKind, fieldPath: string): FieldError[] {
  const errs = validateCommonProbe(probe, fieldPath);
  if (probeType === 'readiness') {
    if (isSet(probe.terminationGracePeriodSeconds)) {
      errs.push(
        invalid(
          `${fieldPath}.terminationGracePeriodSeconds`,
          probe.terminationGracePeriodSeconds,
          'must not be set for readinessProbes',
        ),
      );
    }
  } else if ((probe.successThreshold ?? 0) !== 1) {
    errs.push(invalid(`${fieldPath}.successThreshold`, probe.successThreshold ?? 0, 'must be 1'));
  }
  return errs;
}

function validateCommonProbe(probe: Probe, fieldPath: string): FieldError[] {
  const errs = validateHandler(probe, fieldPath);
  for (const name of NONNEGATIVE_FIELDS) {
    const value = probe[name] ?? 0;
    if (value < 0) errs.push(invalid(`${fieldPath}.${name}`, value, IS_NEGATIVE));
  }
  const grace = probe.terminationGracePeriodSeconds;
  if (isSet(grace) && grace <= 0) {
    errs.push(invalid(`${fieldPath}.terminationGracePeriodSeconds`, grace, 'must be greater than 0'));
  }
  return errs;
}

/** Upstream's `commonHandler`: what a probe and a lifecycle hook may set. */
interface CommonHandler {
  exec?: ExecAction | null;
  httpGet?: HTTPGetAction | null;
  tcpSocket?: TCPSocketAction | null;
  grpc?: GRPCAction | null;
  sleep?: { seconds: number } | null;
}

/**
 * `validateLifecycle`: `postStart` and `preStop` each need exactly one handler; a `sleep`
 * hook lasts from 0 (PodLifecycleSleepActionAllowZero, GA in 1.34) up to the pod's
 * `terminationGracePeriodSeconds` (`gracePeriod`, unchecked when unset: that error is
 * reported on its own field).
 */
export function validateLifecycle(lifecycle: Lifecycle, gracePeriod: number | undefined, fieldPath: string): FieldError[] {
  const errs: FieldError[] = [];
  for (const name of ['postStart', 'preStop'] as const) {
    const handler = lifecycle[name];
    // A lifecycle handler has no `grpc`: the API drops the field, so it does not count here.
    if (isSet(handler)) errs.push(...validateHandler({ ...handler, grpc: undefined }, `${fieldPath}.${name}`, gracePeriod));
  }
  return errs;
}

/** Exactly one handler; the first set one (exec, httpGet, tcpSocket, grpc, sleep) is validated, later ones are Forbidden. */
function validateHandler(handler: CommonHandler, fieldPath: string, gracePeriod?: number): FieldError[] {
  const errs: FieldError[] = [];
  const handlers: [string, unknown, () => FieldError[]][] = [
    ['exec', handler.exec, () => (handler.exec?.command?.length ? [] : [required(`${fieldPath}.exec.command`)])],
    ['httpGet', handler.httpGet, () => validateHTTPGet(handler.httpGet ?? { port: 0 }, `${fieldPath}.httpGet`)],
    ['tcpSocket', handler.tcpSocket, () => validatePortNumOrName(handler.tcpSocket?.port, `${fieldPath}.tcpSocket.port`)],
    ['grpc', handler.grpc, () => validatePortNumOrName(handler.grpc?.port ?? 0, `${fieldPath}.grpc.port`)],
    ['sleep', handler.sleep, () => validateSleep(handler.sleep?.seconds ?? 0, gracePeriod, `${fieldPath}.sleep`)],
  ];
  let count = 0;
  for (const [name, handler, validate] of handlers) {
    if (!isSet(handler)) continue;
    if (count > 0) {
      errs.push(forbidden(`${fieldPath}.${name}`, MORE_THAN_ONE_HANDLER));
    } else {
      count++;
      errs.push(...validate());
    }
  }
  if (count === 0) errs.push(required(fieldPath, 'must specify a handler type'));
  return errs;
}

/** `validateSleepAction` with zero allowed (the gate is GA and locked on in 1.35). */
function validateSleep(seconds: number, gracePeriod: number | undefined, fieldPath: string): FieldError[] {
  if (gracePeriod === undefined || (seconds >= 0 && seconds <= gracePeriod)) return [];
  return [invalid(fieldPath, seconds, `must be non-negative and less than terminationGracePeriodSeconds (${gracePeriod})`)];
}

function validateHTTPGet(action: HTTPGetAction, fieldPath: string): FieldError[] {
  const errs: FieldError[] = [];
  if (!action.path) errs.push(required(`${fieldPath}.path`));
  errs.push(...validatePortNumOrName(action.port, `${fieldPath}.port`));
  const scheme = action.scheme ?? '';
  if (!(SUPPORTED_HTTP_SCHEMES as readonly string[]).includes(scheme)) {
    errs.push(notSupported(`${fieldPath}.scheme`, scheme, SUPPORTED_HTTP_SCHEMES));
  }
  for (const header of action.httpHeaders ?? []) {
    const name = header.name ?? '';
    for (const msg of isHTTPHeaderName(name)) errs.push(invalid(`${fieldPath}.httpHeaders`, name, msg));
  }
  return errs;
}

/** `ValidatePortNumOrName`: a number must be a valid port, a string a valid IANA service name. */
export function validatePortNumOrName(port: IntOrString | undefined, fieldPath: string): FieldError[] {
  if (typeof port === 'string') return isValidPortName(port).map((msg) => invalid(fieldPath, port, msg));
  const num = port ?? 0;
  return isValidPortNum(num).map((msg) => invalid(fieldPath, num, msg));
}

/** Go's nil check: YAML `exec:` with nothing after it decodes to null, which is "not set". */
function isSet<T>(value: T | null | undefined): value is T {
  return value !== undefined && value !== null;
}
