/**
 * `slow-start-liveness`: killed by its liveness probe, no startup probe, and every run whose age
 * at its kill is known was killed within what the probes allow a run that never answers
 * (check's `startupGuard` budget) + the slack. The fix: a startupProbe doing the liveness
 * probe's check with failureThreshold × periodSeconds ≥ max(60 s, 2 × budget).
 */
import type { Probe } from '../../api/types.js';
import type { Diagnosis } from '../diagnosis.js';
import { fmt, make, startupTarget } from './common.js';
import { agesText, type KillContext } from './kill-reading.js';

export function slowStartLiveness(x: KillContext): Diagnosis | undefined {
  const { c, t, r, timing, numbers, evidence, budget } = x;
  if (r.kind !== 'liveness' || c.startupProbe || x.neverSucceeded === false) return undefined;
  const target = startupTarget(budget);
  const threshold = Math.ceil(target / timing.period);
  numbers['suggestedFailureThreshold'] = threshold;
  numbers['suggestedBudgetSeconds'] = threshold * timing.period;
  const startup: Probe = { ...handlerOf(r.probe), periodSeconds: timing.period, timeoutSeconds: timing.timeout, failureThreshold: threshold };
  const sure = x.neverSucceeded === true ? '' : ' (no run\'s age at its kill is left in the events: a guess from the failures alone)';
  if (x.neverSucceeded === undefined) evidence.push({ text: 'how long after its start each run was killed is not known', confidence: 'possible', from: 'events' });
  return make(
    t,
    'slow-start-liveness',
    `killed ${r.kills === 1 ? 'once' : `${r.kills} times`} by its liveness probe${agesText(r)}; the probes allow ${x.budgetText} and the app never answered before the kill → it needs more than ${fmt(budget)} to start${sure}`,
    evidence,
    numbers,
    {
      text: `add a startupProbe (the liveness probe's check) with failureThreshold × periodSeconds ≥ ${fmt(target)}: failureThreshold ${threshold}, periodSeconds ${timing.period}; liveness then starts only once the app is up`,
      patch: { name: c.name, startupProbe: startup },
    },
  );
}

/** The probe's handler alone (which check it runs), for a new probe doing the same. */
function handlerOf(probe: Probe): Probe {
  if (probe.httpGet) return { httpGet: probe.httpGet };
  if (probe.tcpSocket) return { tcpSocket: probe.tcpSocket };
  if (probe.grpc) return { grpc: probe.grpc };
  return probe.exec ? { exec: probe.exec } : {};
}
