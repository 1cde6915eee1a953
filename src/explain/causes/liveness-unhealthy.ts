/**
 * `liveness-unhealthy`: a liveness kill after the run had passed its probe — the app answered
 * HTTP 5xx, exec exit ≠ 0, gRPC NOT_SERVING, or stopped listening. The probe did its job; the
 * fix is the app's (and no dependency in the liveness check). The last probe-kill question.
 */
import type { Diagnosis } from '../diagnosis.js';
import { fmt, make, plural } from './common.js';
import { failuresText, type KillContext } from './kill-reading.js';

export function livenessUnhealthy(x: KillContext): Diagnosis {
  const { t, r } = x;
  // It had passed its probe, then said it was unhealthy (or stopped listening).
  const said = r.dominant === 'refused' ? 'stopped listening (connection refused)' : r.dominant === 'http-status' ? `answered ${[...new Set(r.failures.map((f) => f.statusCode))].join(', ')}` : 'reported a failure';
  return make(
    t,
    'liveness-unhealthy',
    `the app ${said} to its liveness probe after having passed it${r.ages.length > 0 ? ` (killed ${r.ages.map((a) => fmt(a)).join(' and ')} after its start, later than the ${fmt(x.budget)} a run that never answers gets)` : ''}; ${plural(r.kills, 'kill')}: the probe did its job`,
    x.evidence,
    x.numbers,
    { text: `find why the app reports itself unhealthy (${failuresText(r)}); if its health check depends on something outside it (a database, another service), take that out of the liveness check — a restart does not fix a dependency` },
  );
}
