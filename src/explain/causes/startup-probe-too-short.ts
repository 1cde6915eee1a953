/**
 * `startup-probe-too-short`: `Killing: Container X failed startup probe, will be restarted` —
 * the app never passed its startup probe before the kill. The fix raises
 * `startupProbe.failureThreshold` so that failureThreshold × periodSeconds ≥ max(60 s, 2 × what
 * it allowed); liveness stays, since it starts only once the startup probe passes.
 */
import type { Diagnosis } from '../diagnosis.js';
import { fmt, make, startupTarget } from './common.js';
import { agesText, type KillContext } from './kill-reading.js';

export function startupProbeTooShort(x: KillContext): Diagnosis | undefined {
  const { t, r, timing, numbers, budget } = x;
  if (r.kind !== 'startup') return undefined;
  const target = startupTarget(budget);
  const fixThreshold = Math.ceil(target / timing.period);
  numbers['suggestedFailureThreshold'] = fixThreshold;
  numbers['suggestedBudgetSeconds'] = fixThreshold * timing.period;
  return make(
    t,
    'startup-probe-too-short',
    `killed ${r.kills === 1 ? 'once' : `${r.kills} times`} by its startup probe${agesText(r)}; the startup probe allows ${x.budgetText} and the app never passed it before the kill → it needs more than ${fmt(budget)} to start`,
    x.evidence,
    numbers,
    {
      text: `raise startupProbe.failureThreshold to ${fixThreshold} (failureThreshold × periodSeconds = ${fixThreshold} × ${fmt(timing.period)} = ${fmt(fixThreshold * timing.period)} ≥ ${fmt(target)}); liveness stays as it is, since it only starts after the startup probe passes`,
      patch: { name: x.c.name, startupProbe: { failureThreshold: fixThreshold } },
    },
  );
}
