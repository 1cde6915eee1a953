/**
 * `app-crash`: the app exited by itself — an instance terminated with an exit code (≠ 0, or 0
 * with restarts) and no probe `Killing` for that instance: "not the probes", with the previous
 * run's last log lines when they could be read (live only).
 */
import type { Container } from '../../api/types.js';
import type { Statement } from '../causes.js';
import type { DiagnoseOptions, Diagnosis } from '../diagnosis.js';
import type { ContainerTimeline } from '../timeline.js';
import { fmt, killOf, make, plural, seconds } from './common.js';

export function crash(c: Container, t: ContainerTimeline, options: DiagnoseOptions): Diagnosis | undefined {
  const exited = [...t.instances].reverse().find((i) => i.state === 'terminated' && i.reason !== 'OOMKilled');
  if (!exited) return undefined;
  const probeKilled = t.kills.some((k) => (k.cause === 'liveness' || k.cause === 'startup') && killOf(k, exited));
  if (probeKilled) return undefined;
  const deleted = t.kills.some((k) => k.cause === 'deletion');
  if (deleted && exited.from === 'state') return undefined;
  const code = exited.exitCode ?? 0;
  // An exit 0 of a container that is restarted anyway (restartPolicy Always) is a crash loop too.
  if (code === 0 && t.restartCount === 0) return undefined;
  // Killed by a signal, and no event left to say by whom: a probe kill looks just like this.
  const noEvents = t.starts === undefined && t.kills.length === 0 && t.failures.length === 0;
  if (noEvents && (code === 137 || code === 143)) return undefined;
  const ran = seconds(exited.startedAt, exited.finishedAt);
  const logs = options.logs?.get(t.name) ?? [];
  const evidence: Statement[] = [
    { text: `run ${exited.attempt} exited with code ${code}${exited.signal ? ` (signal ${exited.signal})` : ''}, reason ${exited.reason ?? '?'}${ran !== undefined ? `, after ${fmt(ran)}` : ''} (${exited.from})`, confidence: 'certain', from: 'status' },
  ];
  const probeKills = t.kills.filter((k) => k.cause === 'liveness' || k.cause === 'startup').reduce((n, k) => n + k.count, 0);
  evidence.push(
    probeKills === 0
      ? { text: 'no probe killed it (no Killing event)', confidence: t.starts !== undefined ? 'likely' : 'possible', from: 'events' }
      : { text: `probes killed earlier runs ${plural(probeKills, 'time')}, but not this one`, confidence: 'likely', from: 'events' },
  );
  if (code === 137 || code === 143) evidence.push({ text: `exit code ${code} is ${code - 128 === 9 ? 'SIGKILL' : 'SIGTERM'} from outside the container (not the kubelet: no Killing event for it)`, confidence: 'likely', from: 'rule' });
  if (logs.length > 0) evidence.push({ text: `last lines of its log:\n${logs.map((l) => `    | ${l}`).join('\n')}`, confidence: 'certain', from: 'logs' });
  const numbers: Record<string, number> = { exitCode: code, restarts: t.restartCount };
  if (ran !== undefined) numbers['ranSeconds'] = ran;
  if (t.backOffStepSeconds !== undefined) numbers['backOffSeconds'] = t.backOffStepSeconds;
  const loop = t.waiting?.reason === 'CrashLoopBackOff' ? `; now in CrashLoopBackOff${t.backOffStepSeconds !== undefined ? ` (next start in up to ${fmt(t.backOffStepSeconds)})` : ''}` : '';
  return make(
    t,
    'app-crash',
    `not the probes: the app exited by itself with code ${code}${ran !== undefined ? ` after ${fmt(ran)}` : ''}, ${plural(t.restartCount, 'restart')} in all${loop}`,
    evidence,
    numbers,
    { text: `read why it exits: kubectl logs ${'<pod>'} -c ${c.name} --previous; no probe change helps` },
  );
}
