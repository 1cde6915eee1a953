/**
 * What the rule families share: the probes of a container with their field paths, the
 * handler a probe uses, port resolution inside one container, and the intent of a pod
 * (a batch pod runs to completion; a long-running one serves).
 */
import type { FieldPath } from '../../api/documents.js';
import type { Container, IntOrString, Probe } from '../../api/types.js';
import type { ProbeType } from '../../prober/types.js';
import type { ContainerContext } from '../types.js';

export const PROBE_FIELDS: readonly (readonly [ProbeType, 'livenessProbe' | 'readinessProbe' | 'startupProbe'])[] = [
  ['liveness', 'livenessProbe'],
  ['readiness', 'readinessProbe'],
  ['startup', 'startupProbe'],
];

export interface ProbeAt {
  type: ProbeType;
  field: 'livenessProbe' | 'readinessProbe' | 'startupProbe';
  probe: Probe;
  /** Path of the probe inside the object. */
  path: FieldPath;
}

/** The probes the container has, liveness, readiness, startup. Plain init containers are never probed. */
export function probesOf(ctx: ContainerContext): ProbeAt[] {
  if (ctx.role === 'init') return [];
  const out: ProbeAt[] = [];
  for (const [type, field] of PROBE_FIELDS) {
    const probe = ctx.container[field];
    if (probe) out.push({ type, field, probe, path: [...ctx.path, field] });
  }
  return out;
}

export type HandlerKind = 'exec' | 'httpGet' | 'tcpSocket' | 'grpc';

/** The handler the kubelet runs: the first set one (validation reports the others). */
export function handlerOf(probe: Probe): HandlerKind | undefined {
  if (probe.exec) return 'exec';
  if (probe.httpGet) return 'httpGet';
  if (probe.tcpSocket) return 'tcpSocket';
  if (probe.grpc) return 'grpc';
  return undefined;
}

/** The port of a network probe (`httpGet.port`, `tcpSocket.port`, `grpc.port`) with its path. */
export function probePort(at: ProbeAt): { port: IntOrString; path: FieldPath; handler: 'httpGet' | 'tcpSocket' | 'grpc' } | undefined {
  const handler = handlerOf(at.probe);
  if (handler === undefined || handler === 'exec') return undefined;
  const port = at.probe[handler]?.port;
  if (port === undefined || port === null) return undefined;
  return { port, path: [...at.path, handler, 'port'], handler };
}

/**
 * The containerPort of the port named `name` in this container only, as the kubelet's
 * `findPortByName` looks it up (any protocol; `probe/` is below `check/`'s reach, so the
 * one-line lookup is restated here).
 */
export function resolvePortName(container: Container, name: string): number | undefined {
  for (const port of container.ports ?? []) {
    if (port.name === name) return port.containerPort;
  }
  return undefined;
}

/**
 * A pod that runs to completion (Job, CronJob, or `restartPolicy` Never/OnFailure): it
 * serves nobody, so it needs no readiness probe, and a liveness kill may end it.
 */
export function isBatch(ctx: ContainerContext): boolean {
  if (ctx.object.kind === 'Job' || ctx.object.kind === 'CronJob') return true;
  const policy = ctx.pod.spec?.restartPolicy;
  return policy === 'Never' || policy === 'OnFailure';
}

/** `container "web"` or `sidecar "istio-proxy"`, for messages. */
export function who(ctx: ContainerContext): string {
  return `${ctx.role === 'sidecar' ? 'sidecar' : ctx.role === 'init' ? 'init container' : 'container'} ${JSON.stringify(ctx.container.name ?? '')}`;
}

/** Every container of the pod that probes can run in (sidecars and regular containers), in pod order. */
export function containersOfPod(ctx: ContainerContext): { container: Container; role: ContainerContext['role'] }[] {
  const spec = ctx.pod.spec;
  return [
    ...(spec?.initContainers ?? []).map((container) => ({ container, role: container.restartPolicy === 'Always' ? ('sidecar' as const) : ('init' as const) })),
    ...(spec?.containers ?? []).map((container) => ({ container, role: 'container' as const })),
  ];
}
