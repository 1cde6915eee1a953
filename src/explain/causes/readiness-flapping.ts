/**
 * `readiness-flapping`: readiness failures and no restart, with the container Ready again after
 * failing in this run, or far fewer failures than probes over their span (the others passed).
 * The kubelet records failures, not recoveries: at most ⌊failures / failureThreshold⌋ trips out
 * of service is all that can be said.
 */
import type { Container } from '../../api/types.js';
import type { Diagnosis } from '../diagnosis.js';
import { fmt, make, suggestedTimeout } from './common.js';
import type { ReadinessContext } from './readiness.js';

export function readinessFlapping(c: Container, x: ReadinessContext): Diagnosis | undefined {
  const { t, pod, timing, count, numbers, evidence, messages } = x;
  const span = x.spanSeconds;
  if (!((t.ready && x.failedThisRun) || (x.passedBetween && t.restartCount === 0))) return undefined;
  // Each trip out of service takes failureThreshold failures in a row: at most this many trips.
  const maxTrips = Math.max(1, Math.floor(count / timing.failureThreshold));
  numbers['maxNotReadyTimes'] = maxTrips;
  if (t.ready && x.failedThisRun) evidence.push({ text: `Ready now${pod.ready?.lastTransitionTime ? ` (pod Ready since ${pod.ready.lastTransitionTime})` : ''}, with readiness failures in this run: it left service and came back`, confidence: 'certain', from: 'status' });
  evidence.push({ text: `each time out of service takes ${timing.failureThreshold} failures in a row: at most ${maxTrips} times out over ${fmt(span)} (the kubelet records no event when it comes back, so the exact count is not in the API)`, confidence: 'likely', from: 'rule' });
  const timeouts = x.dominant === 'timeout';
  const suggested = suggestedTimeout(timing.timeout);
  if (timeouts) numbers['suggestedTimeoutSeconds'] = suggested;
  return make(
    t,
    'readiness-flapping',
    `readiness flapping: the readiness probe failed ${count} times over ${fmt(span)} (${messages})${t.ready ? ' and the container is Ready again' : ', passing in between'} — in and out of service up to ${maxTrips} times, without a restart`,
    evidence,
    numbers,
    timeouts
      ? { text: `the readiness probe times out: raise readinessProbe.timeoutSeconds from ${timing.timeout} to ${suggested}`, patch: { name: c.name, readinessProbe: { timeoutSeconds: suggested } } }
      : {
          text: `the app itself says it is not ready (${messages}): find why; to ride out blips shorter than ${fmt(2 * timing.failureThreshold * timing.period)}, raise readinessProbe.failureThreshold from ${timing.failureThreshold} to ${timing.failureThreshold * 2}`,
          patch: { name: c.name, readinessProbe: { failureThreshold: timing.failureThreshold * 2 } },
        },
  );
}
