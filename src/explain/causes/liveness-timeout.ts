/**
 * `liveness-timeout`: the liveness probe times out under load (`context deadline exceeded`,
 * `command timed out`) — from the first probe of every run (the app accepts but answers late),
 * or more timeouts than the kills needed by at least failureThreshold (a streak broke off:
 * they come and go). The fix: `timeoutSeconds` to max(5, 5 × timeoutSeconds).
 */
import type { Diagnosis } from '../diagnosis.js';
import { make, plural, suggestedTimeout } from './common.js';
import type { KillContext } from './kill-reading.js';

export function livenessTimeout(x: KillContext): Diagnosis | undefined {
  const { t, r, timing, numbers } = x;
  if (r.dominant !== 'timeout') return undefined;
  const allFailures = r.failureCount;
  // A streak of failureThreshold timeouts kills; beyond the kills' own, failureThreshold more
  // (not an ongoing streak) mean some streak broke off: timeouts come and go.
  const isolated = allFailures - r.kills * timing.failureThreshold >= timing.failureThreshold;
  if (x.neverSucceeded !== true && !isolated) return undefined;
  const suggested = suggestedTimeout(timing.timeout);
  numbers['suggestedTimeoutSeconds'] = suggested;
  const how = x.neverSucceeded === true ? 'from its first probe on every run, so the app accepts connections but answers after more than' : `${allFailures} times (more than the ${r.kills * timing.failureThreshold} the kills needed: timeouts come and go), so the app answers, at times after more than`;
  return make(
    t,
    'liveness-timeout',
    `the liveness probe timed out ${how} timeoutSeconds ${timing.timeout}; ${plural(r.kills, 'kill')}`,
    x.evidence,
    numbers,
    {
      text: `raise livenessProbe.timeoutSeconds from ${timing.timeout} to ${suggested} (the probe's answer time under load, with room); ${timing.timeout <= 1 ? 'timeoutSeconds 1 is the default and rarely enough under load; ' : ''}also check what the app does while it answers slowly`,
      patch: { name: x.c.name, livenessProbe: { timeoutSeconds: suggested } },
    },
  );
}
