/**
 * A container's readiness failures, read once for the readiness causes: how many over what
 * span, of which kind, and whether probes passed in between (far fewer failures than probes
 * over the span). Then the questions: flapping (in and out of service), and — never Ready — a
 * wrong target, else readiness failing.
 */
import { probeTiming } from '../../api/defaults.js';
import type { Container, Probe } from '../../api/types.js';
import type { Statement } from '../causes.js';
import type { Diagnosis } from '../diagnosis.js';
import type { FailureKind } from '../kubelet-words.js';
import type { ContainerTimeline, FailureGroup, PodTimeline } from '../timeline.js';
import { fmt, ms, seconds } from './common.js';
import { wrongTargetOfReadiness } from './probe-wrong-target.js';
import { readinessFailing } from './readiness-failing.js';
import { readinessFlapping } from './readiness-flapping.js';

export interface ReadinessContext {
  t: ContainerTimeline;
  pod: PodTimeline;
  probe: Probe;
  failures: FailureGroup[];
  timing: ReturnType<typeof probeTiming>;
  /** Failures in all (each event's count). */
  count: number;
  spanSeconds: number;
  dominant: FailureKind | undefined;
  /** The three most frequent messages with their counts. */
  messages: string;
  /** The last failure came during the current run. */
  failedThisRun: boolean;
  /** Far fewer failures than probes over the span: the others passed. */
  passedBetween: boolean;
  numbers: Record<string, number>;
  evidence: Statement[];
}

export function readiness(c: Container, t: ContainerTimeline, pod: PodTimeline): Diagnosis | undefined {
  const probe = c.readinessProbe;
  const failures = t.failures.filter((f) => f.probe === 'readiness' && !f.errored);
  if (!probe || failures.length === 0) return undefined;
  const timing = probeTiming(probe);
  const count = failures.reduce((n, f) => n + f.count, 0);
  const first = failures.map((f) => f.first).filter((x): x is string => x !== undefined).sort()[0];
  const last = failures.map((f) => f.last).filter((x): x is string => x !== undefined).sort().at(-1);
  const span = seconds(first, last) ?? 0;
  const byKind = new Map<FailureKind, number>();
  for (const f of failures) byKind.set(f.kind, (byKind.get(f.kind) ?? 0) + f.count);
  const dominant = [...byKind].sort((a, b) => b[1] - a[1])[0]?.[0];
  const messages = failures.slice().sort((a, b) => b.count - a.count).slice(0, 3).map((f) => `${JSON.stringify(f.output)} ×${f.count}`).join(', ');
  const evidence: Statement[] = [{ text: `readiness probe failures: ${messages}, from ${first ?? '?'} to ${last ?? '?'}`, confidence: 'certain', from: 'events' }];
  const current = t.instances.find((i) => i.from === 'state');
  const runningSince = current?.state === 'running' ? current.startedAt : undefined;
  // Ready now, and failures in this run: it left service and came back at least once.
  const failedThisRun = runningSince !== undefined && last !== undefined && (ms(last) ?? 0) >= (ms(runningSince) ?? 0);
  const numbers: Record<string, number> = { failures: count, spanSeconds: span, periodSeconds: timing.period, failureThreshold: timing.failureThreshold, successThreshold: timing.successThreshold };
  // Probes run every period: far fewer failures than probes over the span means the others passed.
  const probesInSpan = Math.floor(span / timing.period) + 1;
  const passedBetween = count + timing.successThreshold + 1 < probesInSpan;
  if (passedBetween) {
    numbers['probesInSpan'] = probesInSpan;
    evidence.push({ text: `${count} failures out of about ${probesInSpan} probes over ${fmt(span)} (one every ${fmt(timing.period)}): the others passed`, confidence: 'likely', from: 'rule' });
  }
  const x: ReadinessContext = { t, pod, probe, failures, timing, count, spanSeconds: span, dominant, messages, failedThisRun, passedBetween, numbers, evidence };
  const flapping = readinessFlapping(c, x);
  if (flapping) return flapping;
  if (!t.ready) return wrongTargetOfReadiness(c, x) ?? readinessFailing(x);
  return undefined;
}
