/**
 * `not-enough-information`: restarts, but no kill, failure or start event left (expired after
 * the API server's `--event-ttl`, or dropped). Says what `restartCount` and `lastState` still
 * tell — an exit 137/143 is a kill from outside the app: a probe, an eviction, a deletion —
 * and how sure each statement is, rather than guess. The last question.
 */
import type { Container, Pod } from '../../api/types.js';
import { terminationGracePeriodSeconds } from '../../prober/kill-policy.js';
import type { Statement } from '../causes.js';
import type { Diagnosis } from '../diagnosis.js';
import type { ContainerTimeline } from '../timeline.js';
import { EVENT_TTL_SECONDS, fmt, make, plural, seconds } from './common.js';

export function unexplained(pod: Pod, c: Container, t: ContainerTimeline): Diagnosis | undefined {
  if (t.restartCount === 0) return undefined;
  const evidence: Statement[] = [{ text: `restartCount ${t.restartCount}`, confidence: 'certain', from: 'status' }];
  const last = t.instances.find((i) => i.from === 'lastState');
  const numbers: Record<string, number> = { restarts: t.restartCount };
  if (last) {
    const ran = seconds(last.startedAt, last.finishedAt);
    evidence.push({ text: `the run before the current one ended with exit code ${last.exitCode ?? '?'} (${last.reason ?? '?'})${ran !== undefined ? ` after ${fmt(ran)}` : ''}, at ${last.finishedAt ?? '?'}`, confidence: 'certain', from: 'status' });
    if (last.exitCode === 137 || last.exitCode === 143) {
      const kind = c.livenessProbe ? 'liveness' : c.startupProbe ? 'startup' : undefined;
      const grace = kind === undefined ? undefined : terminationGracePeriodSeconds(pod, c, kind);
      evidence.push({
        text: `exit code ${last.exitCode} is ${last.exitCode === 137 ? 'SIGKILL' : 'SIGTERM'}: a kill from outside the app — ${kind ? `a ${kind} probe kill (grace ${fmt(grace ?? 0)}), ` : ''}an eviction or a deletion; the events that would say which are gone`,
        confidence: 'possible',
        from: 'rule',
      });
    }
    if (ran !== undefined) numbers['ranSeconds'] = ran;
  }
  return make(t, 'not-enough-information', `restarted ${plural(t.restartCount, 'time')}, but the events that would say why are gone (the API server keeps events ${fmt(EVENT_TTL_SECONDS)}) and the status keeps only the last exit`, evidence, numbers, {
    text: 'run explain again right after the next restart, or keep events longer (kube-apiserver --event-ttl, an event exporter)',
  });
}
