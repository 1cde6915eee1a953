/**
 * `oom-killed`: an instance ended `OOMKilled` — the kernel killed it at its memory limit,
 * whatever the probes said ("not the probes"). The fix doubles `resources.limits.memory`: a
 * starting point, not a measurement.
 */
import type { Container } from '../../api/types.js';
import type { Statement } from '../causes.js';
import type { Diagnosis, Fix } from '../diagnosis.js';
import type { ContainerTimeline } from '../timeline.js';
import { fmt, make, plural, seconds } from './common.js';

export function oomKilled(c: Container, t: ContainerTimeline): Diagnosis | undefined {
  const oom = [...t.instances].reverse().find((i) => i.reason === 'OOMKilled');
  if (!oom) return undefined;
  const limit = c.resources?.limits?.['memory'];
  const ran = seconds(oom.startedAt, oom.finishedAt);
  const evidence: Statement[] = [
    { text: `run ${oom.attempt} ended OOMKilled, exit code ${oom.exitCode ?? '?'}${ran !== undefined ? ` after ${fmt(ran)}` : ''} (${oom.from})`, confidence: 'certain', from: 'status' },
  ];
  if (limit !== undefined) evidence.push({ text: `resources.limits.memory: ${String(limit)}`, confidence: 'certain', from: 'spec' });
  const probeKills = t.kills.filter((k) => k.cause === 'liveness' || k.cause === 'startup').reduce((n, k) => n + k.count, 0);
  if (probeKills === 0) evidence.push({ text: 'no probe killed it: no Killing event of a probe', confidence: t.kills.length === 0 && t.starts === undefined ? 'possible' : 'likely', from: 'events' });
  const bytes = limit === undefined ? undefined : quantityBytes(String(limit));
  const suggested = bytes === undefined ? undefined : formatMi(bytes * 2);
  const fix: Fix =
    suggested === undefined
      ? { text: 'the kernel killed it at the memory limit of its cgroup (the node or the pod): give the container a resources.limits.memory above its peak, or find the leak' }
      : {
          text: `raise resources.limits.memory above the app's peak use (now ${String(limit)}; e.g. ${suggested}, then watch its working set), or make the app use less; the probes are not the cause`,
          patch: { name: c.name, resources: { limits: { memory: suggested } } },
        };
  const numbers: Record<string, number> = { restarts: t.restartCount };
  if (oom.exitCode !== undefined) numbers['exitCode'] = oom.exitCode;
  if (bytes !== undefined) numbers['memoryLimitBytes'] = bytes;
  if (ran !== undefined) numbers['ranSeconds'] = ran;
  return make(t, 'oom-killed', `not the probes: run ${oom.attempt} was OOMKilled (exit code ${oom.exitCode ?? 137})${ran !== undefined ? ` ${fmt(ran)} after it started` : ''}${limit !== undefined ? ` at its memory limit ${String(limit)}` : ''}; ${plural(t.restartCount, 'restart')} in all`, evidence, numbers, fix);
}

/** Bytes of a Kubernetes quantity (`64Mi`, `1G`, `128974848`, `129e6`); undefined when unreadable. */
export function quantityBytes(q: string): number | undefined {
  const m = /^(\d+(?:\.\d+)?)(?:e(\d+))?(Ki|Mi|Gi|Ti|Pi|Ei|k|M|G|T|P|E|m)?$/.exec(q.trim());
  if (!m) return undefined;
  const n = Number(m[1]) * 10 ** Number(m[2] ?? 0);
  const unit: Record<string, number> = { Ki: 2 ** 10, Mi: 2 ** 20, Gi: 2 ** 30, Ti: 2 ** 40, Pi: 2 ** 50, Ei: 2 ** 60, k: 1e3, M: 1e6, G: 1e9, T: 1e12, P: 1e15, E: 1e18, m: 1e-3 };
  return Math.round(n * (m[3] === undefined ? 1 : (unit[m[3]] ?? 1)));
}

function formatMi(bytes: number): string {
  return `${Math.ceil(bytes / 2 ** 20)}Mi`;
}
