/**
 * A container's probe kills, read once for every cause that follows from them: which probe
 * kills it now (the kind of the latest `Killing`), how many kills, each known run's age at its
 * kill and the failures before them; and the words the summaries use for them.
 */
import type { probeTiming } from '../../api/defaults.js';
import type { Container, IntOrString, Probe } from '../../api/types.js';
import type { Statement } from '../causes.js';
import type { FailureKind } from '../kubelet-words.js';
import type { ContainerTimeline, FailureGroup, KillGroup } from '../timeline.js';
import { fmt, killOf, ms, seconds } from './common.js';

export interface KillReading {
  kind: 'liveness' | 'startup';
  probe: Probe;
  kills: number;
  /** Seconds from a run's start to its kill, where both are known (the first run, the run before the current one). */
  ages: number[];
  failures: FailureGroup[];
  dominant?: FailureKind;
  failureCount: number;
}

/** What every probe-kill cause is decided from; `numbers` and `evidence` are the diagnosis's, added to by the cause that answers. */
export interface KillContext {
  c: Container;
  t: ContainerTimeline;
  r: KillReading;
  timing: ReturnType<typeof probeTiming>;
  /** The probe's field in the container: `livenessProbe` or `startupProbe`. */
  field: 'livenessProbe' | 'readinessProbe' | 'startupProbe';
  numbers: Record<string, number>;
  evidence: Statement[];
  /** What the probes allow a run that never answers, from its start (s). */
  budget: number;
  budgetText: string;
  /** Killed at its first chance in every run whose age is known; undefined when no age is known. */
  neverSucceeded: boolean | undefined;
  port: IntOrString | undefined;
  declared: boolean | undefined;
}

export function readKills(c: Container, t: ContainerTimeline): KillReading | undefined {
  const probeKills = t.kills.filter((k): k is KillGroup & { cause: 'liveness' | 'startup' } => k.cause === 'liveness' || k.cause === 'startup');
  if (probeKills.length === 0) return undefined;
  // The kind of the latest kill is what the container suffers from now.
  const latest = [...probeKills].sort((a, b) => (ms(a.last) ?? 0) - (ms(b.last) ?? 0)).at(-1);
  if (!latest) return undefined;
  const kind = latest.cause;
  const probe = kind === 'startup' ? c.startupProbe : c.livenessProbe;
  if (!probe) return undefined;
  const own = probeKills.filter((k) => k.cause === kind);
  const kills = own.reduce((n, k) => n + k.count, 0);
  const ages: number[] = [];
  const first = own.map((k) => k.first).filter((x): x is string => x !== undefined).sort()[0];
  // The first run's age at the first kill: the first Started event to the first Killing.
  if (t.starts?.first !== undefined && first !== undefined && t.unseenInstances + t.instances.length >= 1) {
    const age = seconds(t.starts.first, first);
    if (age !== undefined && age >= 0) ages.push(age);
  }
  const last = t.instances.find((i) => i.from === 'lastState');
  // The run before the current one; when it is the first run too, its age is already counted.
  const same = last?.startedAt !== undefined && t.starts?.first !== undefined && ms(last.startedAt) === ms(t.starts.first);
  if (last && last.startedAt !== undefined && killOf(latest, last) && !same) {
    const age = seconds(last.startedAt, latest.last);
    if (age !== undefined && age >= 0) ages.push(age);
  }
  const failures = t.failures.filter((f) => f.probe === kind && !f.errored);
  const byKind = new Map<FailureKind, number>();
  for (const f of failures) byKind.set(f.kind, (byKind.get(f.kind) ?? 0) + f.count);
  const dominant = [...byKind].sort((a, b) => b[1] - a[1])[0]?.[0];
  const failureCount = failures.reduce((n, f) => n + f.count, 0);
  return { kind, probe, kills, ages, failures, ...(dominant !== undefined ? { dominant } : {}), failureCount };
}

/** `httpGet /healthz on port 8080`, `exec "cat /tmp/ok"`: what the probe checks, in words. */
export function where(probe: Probe): string {
  if (probe.httpGet) return `httpGet ${probe.httpGet.path ?? '/'} on port ${String(probe.httpGet.port)}`;
  if (probe.tcpSocket) return `tcpSocket port ${String(probe.tcpSocket.port)}`;
  if (probe.grpc) return `grpc port ${probe.grpc.port}`;
  return `exec ${JSON.stringify((probe.exec?.command ?? []).join(' '))}`;
}

/** The three most frequent failure messages with their counts. */
export function failuresText(r: KillReading): string {
  if (r.failures.length === 0) return 'no failure message left in the events';
  return r.failures
    .slice()
    .sort((a, b) => b.count - a.count)
    .slice(0, 3)
    .map((f) => `${JSON.stringify(f.output === '' ? '(no output)' : f.output)} ×${f.count}`)
    .join(', ');
}

/** `, each ~31s after start`: the runs' age at their kill, for a summary. */
export function agesText(r: KillReading): string {
  if (r.ages.length === 0) return '';
  return r.kills === 1 ? `, ${fmt(Math.max(...r.ages))} after its start` : `, each ~${fmt(Math.max(...r.ages))} after start`;
}

