/**
 * What the cause questions share: times read from the API's whole-second timestamps, the words
 * and numbers of the summaries, a diagnosis made from its parts, and the probe's target as the
 * spec names it. No kubelet rule lives here (those are check's budgets and the prober's
 * kill policy).
 */
import type { Container, IntOrString, Probe } from '../../api/types.js';
import type { ProbeType } from '../../prober/types.js';
import { formatGoDuration } from '../../util/duration.js';
import { CAUSES, type CauseId, type Statement } from '../causes.js';
import type { ContainerPatch, Diagnosis, Fix } from '../diagnosis.js';
import type { ContainerTimeline, Instance, KillGroup } from '../timeline.js';

/** Events and status times are whole seconds; the kubelet sees a change up to a relist (1 s) late. */
export const SLACK_SECONDS = 2;
/** The API server keeps events this long by default (`--event-ttl`). */
export const EVENT_TTL_SECONDS = 3600;
/** What a start-up fix asks for at least: twice what the probes allowed, never under a minute. */
const MIN_STARTUP_BUDGET_SECONDS = 60;

export const ms = (t: string | undefined): number | undefined => {
  if (t === undefined) return undefined;
  const v = Date.parse(t);
  return Number.isNaN(v) ? undefined : v;
};

export const seconds = (from: string | undefined, to: string | undefined): number | undefined => {
  const a = ms(from);
  const b = ms(to);
  return a === undefined || b === undefined ? undefined : Math.round((b - a) / 1000);
};

export const plural = (n: number, word: string): string => `${n} ${word}${n === 1 ? '' : 's'}`;

export const fmt = (s: number): string => formatGoDuration(Math.round(s * 1000));

export function noneFor(container: string): Diagnosis {
  return { container, cause: 'none', title: CAUSES.none, summary: 'nothing wrong', evidence: [], also: [], numbers: {}, restarts: [] };
}

export function make(t: ContainerTimeline, cause: CauseId, summary: string, evidence: Statement[], numbers: Record<string, number>, fix?: Fix): Diagnosis {
  return { container: t.name, cause, title: CAUSES[cause], summary, evidence, ...(fix ? { fix } : {}), also: [], numbers, restarts: [] };
}

/** Whether the kill group's last kill is the one that ended `run` (its time between the run's start and end). */
export function killOf(k: KillGroup, run: Instance): boolean {
  const at = ms(k.last);
  const start = ms(run.startedAt);
  const end = ms(run.finishedAt);
  if (at === undefined || start === undefined) return false;
  return at >= start - 1000 && (end === undefined || at <= end + 1000);
}

/** What a start-up fix asks for: twice what the probes allowed, at least a minute. */
export function startupTarget(budget: number): number {
  return Math.max(MIN_STARTUP_BUDGET_SECONDS, 2 * budget);
}

/**
 * A timeout with room: five times the old one, at least 5 s. A timeout past the period is
 * allowed (failing probes then follow each other at the timeout), so the period does not cap it.
 */
export function suggestedTimeout(timeout: number): number {
  return Math.max(5, timeout * 5);
}

export const FIELD: Record<ProbeType, 'livenessProbe' | 'readinessProbe' | 'startupProbe'> = { liveness: 'livenessProbe', readiness: 'readinessProbe', startup: 'startupProbe' };

/** The port a probe dials, if it names one. */
export function probePort(probe: Probe): IntOrString | undefined {
  return probe.httpGet?.port ?? probe.tcpSocket?.port ?? probe.grpc?.port;
}

/** Whether the probe's port is one the container declares (by number or name); undefined when nothing is declared. */
export function portDeclared(c: Container, port: IntOrString | undefined): boolean | undefined {
  const ports = c.ports ?? [];
  if (port === undefined || ports.length === 0) return undefined;
  return ports.some((p) => (typeof port === 'number' ? p.containerPort === port : p.name === port));
}

export function describePorts(c: Container): string {
  return (c.ports ?? []).map((p) => `${p.containerPort}${p.name ? ` (${p.name})` : ''}`).join(', ');
}

export function portPatch(c: Container, kind: ProbeType, probe: Probe, port: number): ContainerPatch {
  const field = FIELD[kind];
  if (probe.httpGet) return { name: c.name, [field]: { httpGet: { port } } };
  if (probe.tcpSocket) return { name: c.name, [field]: { tcpSocket: { port } } };
  return { name: c.name, [field]: { grpc: { port } } };
}
