/**
 * The apiserver's defaulting for the pod fields probelet relies on (`SetDefaults_*` in
 * `pkg/apis/core/v1`). The kubelet never sees an undefaulted pod, so everything below the
 * API layer may assume these values; run `setPodDefaults` on anything read from a manifest.
 */
import { copyPlain } from '../util/copy.js';
import type { Container, HTTPGetAction, Lifecycle, Pod, Probe } from './types.js';

export const DEFAULT_PROBE_TIMEOUT_SECONDS = 1;
export const DEFAULT_PROBE_PERIOD_SECONDS = 10;
export const DEFAULT_PROBE_SUCCESS_THRESHOLD = 1;
export const DEFAULT_PROBE_FAILURE_THRESHOLD = 3;
export const DEFAULT_TERMINATION_GRACE_PERIOD_SECONDS = 30;

/** The probe fields the budgets read, defaulted like the worker defaults them: one reading for check's budgets, the flight recorder and simulate's explanations. */
export interface ProbeTiming {
  /** `initialDelaySeconds`; negative values never block (§4.3 step 9), so they read as 0. */
  initialDelay: number;
  period: number;
  timeout: number;
  successThreshold: number;
  failureThreshold: number;
}

/**
 * The probe's timing fields. The pod is defaulted already; a value the apiserver would
 * reject (zero or negative) reads as its default here, so a budget can still be printed
 * beside the validation error.
 */
export function probeTiming(probe: Probe): ProbeTiming {
  const positive = (value: number | undefined, fallback: number): number =>
    typeof value === 'number' && value > 0 ? value : fallback;
  return {
    initialDelay: Math.max(0, probe.initialDelaySeconds ?? 0),
    period: positive(probe.periodSeconds, DEFAULT_PROBE_PERIOD_SECONDS),
    timeout: positive(probe.timeoutSeconds, DEFAULT_PROBE_TIMEOUT_SECONDS),
    successThreshold: positive(probe.successThreshold, DEFAULT_PROBE_SUCCESS_THRESHOLD),
    failureThreshold: positive(probe.failureThreshold, DEFAULT_PROBE_FAILURE_THRESHOLD),
  };
}

/**
 * Returns a defaulted copy of `probe`: zero or unset timeout 1, period 10, success 1,
 * failure 3; `httpGet.path` '/', `httpGet.scheme` 'HTTP'; `grpc.service` ''.
 * `initialDelaySeconds` and the probe-level grace period have no default.
 */
export function setProbeDefaults(probe: Probe): Probe {
  const out = structuredClone(probe);
  applyProbeDefaults(out);
  return out;
}

/**
 * Returns a defaulted deep copy of `pod`: probes and container defaults of every regular,
 * init and ephemeral container; `spec.restartPolicy` 'Always',
 * `spec.terminationGracePeriodSeconds` 30, `spec.dnsPolicy` 'ClusterFirst';
 * `metadata.namespace` 'default'; with `hostNetwork`, each unset `hostPort` = its `containerPort`.
 */
export function setPodDefaults(pod: Pod): Pod {
  return applyPodDefaults(copyPlain(pod));
}

/**
 * `setPodDefaults` in place, for a pod the caller made itself (a workload's pod from
 * `podsOf` is a fresh copy of its template): `check` saves a second deep copy per object.
 * `template`: the pod is a workload's template, which upstream defaults with
 * `SetDefaults_PodSpec` only — `SetDefaults_Pod`'s host-network ports wait for the Pod.
 */
export function applyPodDefaults(out: Pod, { template = false }: { template?: boolean } = {}): Pod {
  const metadata = (out.metadata ??= {});
  if (!metadata.namespace) metadata.namespace = 'default';
  // The apiserver defaults a missing spec like an empty one, leaving only `containers` to complain about.
  const spec = (out.spec ??= { containers: [] });
  if (!spec.restartPolicy) spec.restartPolicy = 'Always';
  if (spec.terminationGracePeriodSeconds === undefined || spec.terminationGracePeriodSeconds === null) {
    spec.terminationGracePeriodSeconds = DEFAULT_TERMINATION_GRACE_PERIOD_SECONDS;
  }
  if (!spec.dnsPolicy) spec.dnsPolicy = 'ClusterFirst';
  for (const list of [spec.containers, spec.initContainers, spec.ephemeralContainers]) {
    for (const ctr of Array.isArray(list) ? list : []) applyContainerDefaults(ctr);
  }
  if (!template && spec.hostNetwork === true) {
    for (const list of [spec.containers, spec.initContainers]) {
      for (const ctr of Array.isArray(list) ? list : []) defaultHostNetworkPorts(ctr);
    }
  }
  return out;
}

/** `defaultHostNetworkPorts`: on the node's network a container port is a host port, so an unset (0) one is the container port. */
function defaultHostNetworkPorts(ctr: Container): void {
  if (!ctr || typeof ctr !== 'object') return;
  for (const port of Array.isArray(ctr.ports) ? ctr.ports : []) {
    if (port && typeof port === 'object' && !port.hostPort) port.hostPort = port.containerPort;
  }
}

/** `SetDefaults_Container` plus the defaults of everything nested in a container. */
function applyContainerDefaults(ctr: Container): void {
  if (!ctr || typeof ctr !== 'object') return;
  if (!ctr.imagePullPolicy && ctr.image !== undefined) {
    ctr.imagePullPolicy = imageTag(ctr.image) === 'latest' ? 'Always' : 'IfNotPresent';
  }
  if (!ctr.terminationMessagePath) ctr.terminationMessagePath = '/dev/termination-log';
  if (!ctr.terminationMessagePolicy) ctr.terminationMessagePolicy = 'File';
  for (const port of Array.isArray(ctr.ports) ? ctr.ports : []) {
    if (port && typeof port === 'object' && !port.protocol) port.protocol = 'TCP';
  }
  for (const probe of [ctr.livenessProbe, ctr.readinessProbe, ctr.startupProbe]) {
    if (probe && typeof probe === 'object') applyProbeDefaults(probe);
  }
  applyLifecycleDefaults(ctr.lifecycle);
}

function applyProbeDefaults(probe: Probe): void {
  if (!probe.timeoutSeconds) probe.timeoutSeconds = DEFAULT_PROBE_TIMEOUT_SECONDS;
  if (!probe.periodSeconds) probe.periodSeconds = DEFAULT_PROBE_PERIOD_SECONDS;
  if (!probe.successThreshold) probe.successThreshold = DEFAULT_PROBE_SUCCESS_THRESHOLD;
  if (!probe.failureThreshold) probe.failureThreshold = DEFAULT_PROBE_FAILURE_THRESHOLD;
  if (probe.httpGet && typeof probe.httpGet === 'object') applyHTTPGetDefaults(probe.httpGet);
  if (probe.grpc && typeof probe.grpc === 'object' && (probe.grpc.service === undefined || probe.grpc.service === null)) {
    probe.grpc.service = '';
  }
}

/** Lifecycle hooks share `HTTPGetAction`, so upstream defaults their path and scheme too. */
function applyLifecycleDefaults(lifecycle: Lifecycle | undefined): void {
  if (!lifecycle || typeof lifecycle !== 'object') return;
  for (const handler of [lifecycle.postStart, lifecycle.preStop]) {
    if (handler?.httpGet && typeof handler.httpGet === 'object') applyHTTPGetDefaults(handler.httpGet);
  }
}

function applyHTTPGetDefaults(action: HTTPGetAction): void {
  if (!action.path) action.path = '/';
  if (!action.scheme) action.scheme = 'HTTP';
}

/**
 * The tag the runtime would pull: explicit tag, none when pinned by digest only, else
 * `latest` (the image-reference parser's default, which decides `imagePullPolicy`).
 */
function imageTag(image: string): string {
  if (image === '') return '';
  const [name = '', digest] = image.split('@', 2);
  const lastSegment = name.slice(name.lastIndexOf('/') + 1);
  const colon = lastSegment.indexOf(':');
  if (colon >= 0) return lastSegment.slice(colon + 1);
  return digest === undefined ? 'latest' : '';
}
