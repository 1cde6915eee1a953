/**
 * `sigterm-ignored`: a container that outlives SIGTERM — on a deletion (still running seconds
 * after `Stopping container`, or ended 137 the whole grace after), or, noted beside a probe
 * cause (`also`), a probe kill that waited out its whole kill grace. The grace periods are the
 * kubelet's (`prober/kill-policy.ts`).
 */
import type { Container, Pod } from '../../api/types.js';
import { killWaitSeconds } from '../../prober/kill-policy.js';
import type { ProbeType } from '../../prober/types.js';
import type { CauseId, Statement } from '../causes.js';
import type { DiagnoseOptions, Diagnosis, Fix } from '../diagnosis.js';
import type { ContainerTimeline, PodTimeline } from '../timeline.js';
import { fmt, killOf, make, ms, seconds, SLACK_SECONDS } from './common.js';

/** A pod being deleted whose container outlives SIGTERM: it will go at SIGKILL, the grace period after. */
export function sigtermOnDeletion(c: Container, t: ContainerTimeline, pod: PodTimeline, options: DiagnoseOptions): Diagnosis | undefined {
  if (pod.deletionTimestamp === undefined) return undefined;
  const stop = t.kills.find((k) => k.cause === 'deletion');
  const grace = pod.deletionGracePeriodSeconds;
  const deadline = ms(pod.deletionTimestamp);
  if (stop === undefined || deadline === undefined || grace === undefined) return undefined;
  const sent = ms(stop.last);
  const current = t.instances.find((i) => i.from === 'state');
  const evidence: Statement[] = [
    { text: `the pod is being deleted with a grace period of ${fmt(grace)} (metadata.deletionTimestamp ${pod.deletionTimestamp})`, confidence: 'certain', from: 'status' },
    { text: `Killing: ${stop.message} at ${stop.last ?? '?'}`, confidence: 'certain', from: 'events' },
  ];
  const numbers: Record<string, number> = { graceSeconds: grace };
  if (current?.state === 'running' && sent !== undefined) {
    const since = Math.round((options.nowMs - sent) / 1000);
    if (since < SLACK_SECONDS) return undefined;
    numbers['runningAfterSigtermSeconds'] = since;
    evidence.push({ text: `still running ${fmt(since)} after SIGTERM`, confidence: 'certain', from: 'status' });
    return make(t, 'sigterm-ignored', `SIGTERM ignored: still running ${fmt(since)} after the kubelet sent it; it will be killed (SIGKILL, exit code 137) at ${pod.deletionTimestamp}, the whole ${fmt(grace)} grace period after`, evidence, numbers, sigtermFix(c, grace));
  }
  if (current?.state === 'terminated' && current.exitCode === 137 && current.finishedAt !== undefined && sent !== undefined) {
    const took = seconds(stop.last, current.finishedAt) ?? 0;
    if (took < grace - SLACK_SECONDS) return undefined;
    numbers['exitCode'] = 137;
    numbers['stopSeconds'] = took;
    return make(t, 'sigterm-ignored', `SIGTERM ignored: killed with SIGKILL (exit code 137) ${fmt(took)} after SIGTERM, the whole ${fmt(grace)} grace period`, evidence, numbers, sigtermFix(c, grace));
  }
  return undefined;
}

function sigtermFix(c: Container, grace: number): Fix {
  const shell = (c.command ?? []).slice(0, 2).join(' ');
  const hint = /^(\/bin\/)?(ba|da)?sh -c$/.test(shell) ? ' (a `sh -c` command runs as PID 1, which ignores SIGTERM unless it traps it: `exec` the app, or `trap … TERM`)' : '';
  return { text: `make the app exit on SIGTERM${hint}; until then every stop takes the whole terminationGracePeriodSeconds (${fmt(grace)}), and a rollout waits that long per pod` };
}

/** A probe kill that waited out the whole grace period: noted beside the probe's cause. */
export function sigtermOnProbeKill(pod: Pod, c: Container, t: ContainerTimeline): { cause: CauseId; summary: string } | undefined {
  const last = t.instances.find((i) => i.from === 'lastState');
  if (last?.exitCode !== 137 || last.finishedAt === undefined) return undefined;
  const kill = t.kills.find((k) => (k.cause === 'liveness' || k.cause === 'startup') && killOf(k, last));
  if (!kill) return undefined;
  const grace = killWaitSeconds(pod, c, kill.cause as ProbeType);
  const took = seconds(kill.last, last.finishedAt);
  if (took === undefined || took < grace - SLACK_SECONDS) return undefined;
  return { cause: 'sigterm-ignored', summary: `the ${kill.cause} kill took the whole ${fmt(grace)} grace period (SIGKILL, exit code 137, ${fmt(took)} after SIGTERM): the app ignores SIGTERM` };
}
