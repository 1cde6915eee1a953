/**
 * `hang`: liveness timeouts, exactly the streaks the kills needed, in runs that lived longer
 * than a never-answering run could — the probe had passed, then the app stopped answering.
 * Not the probes: the numbers say how soon a hang is restarted (`failureWindow(…, 'timeout', false)`).
 * Asked after `liveness-timeout`, which takes the timeouts that come and go.
 */
import { failureWindow } from '../../check/budgets.js';
import type { Diagnosis } from '../diagnosis.js';
import { fmt, make, plural } from './common.js';
import type { KillContext } from './kill-reading.js';

export function hang(x: KillContext): Diagnosis | undefined {
  const { t, r, timing, numbers } = x;
  if (r.dominant !== 'timeout') return undefined;
  const ran = r.ages.length > 0 ? Math.max(...r.ages) : undefined;
  const afterHang = failureWindow(r.probe, 'timeout', false);
  numbers['hangToKillSeconds'] = afterHang.latestSeconds;
  return make(
    t,
    'hang',
    `the app hung: its liveness probe passed${ran !== undefined ? ` for about ${fmt(Math.max(0, ran - afterHang.earliestSeconds))}` : ' for a while'} (longer than the ${fmt(x.budget)} a run that never answers would get), then timed out ${timing.failureThreshold} times in a row until the kill (${plural(r.kills, 'kill')}); the probe did its job`,
    x.evidence,
    numbers,
    { text: `find why the app stops answering (a deadlock, an exhausted pool); the probe restarts it ${fmt(afterHang.earliestSeconds)}–${fmt(afterHang.latestSeconds)} after a hang. A preStop hook that dumps its threads would keep evidence of the next one` },
  );
}
