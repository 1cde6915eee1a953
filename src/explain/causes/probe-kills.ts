/**
 * The probe-kill causes, asked in the order in which one hides the next: a wrong target, a
 * startup probe too short, timeouts (under load, or a hang), a slow start, and last the app
 * saying it is unhealthy. What the probes allow a run that never answers is check's budget
 * (`check/budgets.ts`).
 */
import { probeTiming } from '../../api/defaults.js';
import type { Container } from '../../api/types.js';
import { describeFailureBudget, failureWindow, startupGuard } from '../../check/budgets.js';
import type { Statement } from '../causes.js';
import type { Diagnosis } from '../diagnosis.js';
import type { ContainerTimeline } from '../timeline.js';
import { FIELD, fmt, ms, plural, portDeclared, probePort, SLACK_SECONDS } from './common.js';
import { hang } from './hang.js';
import { failuresText, readKills, type KillContext } from './kill-reading.js';
import { livenessTimeout } from './liveness-timeout.js';
import { livenessUnhealthy } from './liveness-unhealthy.js';
import { wrongTargetOfKills } from './probe-wrong-target.js';
import { slowStartLiveness } from './slow-start-liveness.js';
import { startupProbeTooShort } from './startup-probe-too-short.js';

export function probeKill(c: Container, t: ContainerTimeline): Diagnosis | undefined {
  const r = readKills(c, t);
  if (!r) return undefined;
  // Probe kills in the past, and the last run ended otherwise (its own exit): that exit is the news.
  const last = t.instances.find((i) => i.from === 'lastState');
  const lastKill = Math.max(...t.kills.filter((k) => k.cause === r.kind).map((k) => ms(k.last) ?? 0));
  if (last?.startedAt !== undefined && lastKill < (ms(last.startedAt) ?? 0) - 1000 && last.exitCode !== 137 && last.exitCode !== 143) return undefined;
  const timing = probeTiming(r.probe);
  const guard = startupGuard(c);
  const numbers: Record<string, number> = {
    kills: r.kills,
    restarts: t.restartCount,
    periodSeconds: timing.period,
    failureThreshold: timing.failureThreshold,
    timeoutSeconds: timing.timeout,
  };
  const evidence: Statement[] = [
    { text: `${plural(r.kills, 'kill')} by the ${r.kind} probe (Killing: "Container ${c.name} failed ${r.kind} probe…")`, confidence: 'certain', from: 'events' },
    { text: `${r.kind} probe failures: ${failuresText(r)}`, confidence: r.failures.length > 0 ? 'certain' : 'possible', from: 'events' },
  ];
  if (r.ages.length > 0) {
    numbers['killAgeSeconds'] = Math.max(...r.ages);
    evidence.push({ text: `killed ${r.ages.map((a) => fmt(a)).join(' and ')} after ${r.ages.length === 1 ? 'its start' : 'their starts'} (Started/Killing events, lastState.startedAt)`, confidence: 'likely', from: 'events' });
  }
  // From the start, with failing probes failing at once or at their timeout: what the probes allow a run that never answers.
  const mode = r.dominant === 'timeout' ? 'timeout' : 'refused';
  const fromStart = failureWindow(r.probe, mode, true).latestSeconds;
  const budget = r.kind === 'startup' || !c.startupProbe ? Math.max(fromStart, mode === 'refused' ? (guard?.budgetSeconds ?? 0) : 0) : fromStart;
  numbers['budgetSeconds'] = budget;
  const port = probePort(r.probe);
  const x: KillContext = {
    c,
    t,
    r,
    timing,
    field: FIELD[r.kind],
    numbers,
    evidence,
    budget,
    budgetText: `${fmt(budget)} (${describeFailureBudget(r.kind, r.probe, true, mode)})`,
    neverSucceeded: r.ages.length > 0 ? r.ages.every((a) => a <= budget + SLACK_SECONDS) : undefined,
    port,
    declared: portDeclared(c, port),
  };
  return wrongTargetOfKills(x) ?? startupProbeTooShort(x) ?? livenessTimeout(x) ?? hang(x) ?? slowStartLiveness(x) ?? livenessUnhealthy(x);
}
