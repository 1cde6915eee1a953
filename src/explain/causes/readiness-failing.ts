/**
 * `readiness-failing`: never Ready — the readiness probe fails on every probe for a reason that
 * is not a wrong target (asked before it). The fix is the app's readiness condition, or the
 * timeout when the failures are timeouts.
 */
import type { Diagnosis } from '../diagnosis.js';
import { fmt, make } from './common.js';
import type { ReadinessContext } from './readiness.js';

export function readinessFailing(x: ReadinessContext): Diagnosis {
  const { count, messages, timing } = x;
  return make(x.t, 'readiness-failing', `not Ready: the readiness probe failed ${count} times over ${fmt(x.spanSeconds)} (${messages})`, x.evidence, x.numbers, {
    text: x.dominant === 'timeout' ? `the readiness probe times out: raise readinessProbe.timeoutSeconds from ${timing.timeout}` : `the app says it is not ready (${messages}): its readiness check depends on something that is not there`,
  });
}
