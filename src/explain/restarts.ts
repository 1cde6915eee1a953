/**
 * The kill-and-restart steps of a container's timeline, held to the kubelet's rule — by the
 * rule's one checker (`kubelet/restart-rule.ts`, which drives the kubelet's own back-off gate),
 * not a copy of it. explain knows every run only while `restartCount` ≤ 1 (the status keeps the
 * current run and the one before); with more, the back-off history that decides a restart is
 * gone, and what is said comes from the waiting message instead.
 */
import { probeTiming } from '../api/defaults.js';
import type { Container, Pod } from '../api/types.js';
import { checkRestartRule, type ContainerInstance, type RestartPolicy, type RuleBranch } from '../kubelet/restart-rule.js';
import { killGracePeriodSeconds } from '../prober/kill-policy.js';
import type { Statement } from './causes.js';
import type { ContainerTimeline, Instance, KillGroup } from './timeline.js';

export interface RestartStep {
  branch: RuleBranch;
  /** Whether the kubelet's rule allows what happened. */
  allowed: boolean;
  why: string;
}

const ms = (t: string | undefined): number | undefined => (t === undefined ? undefined : Date.parse(t));

/** Whether `k`'s last kill fell inside `run` (its Killing event between the run's start and end). */
function killedBy(k: KillGroup, run: Instance): boolean {
  const at = ms(k.last);
  const start = ms(run.startedAt);
  const end = ms(run.finishedAt);
  return at !== undefined && start !== undefined && at >= start - 1000 && (end === undefined || at <= end + 1000);
}

/**
 * The steps the rule checker finds in the runs explain knows, times from the first run's start;
 * `statements` says what can be said instead when runs are missing.
 */
export function restartSteps(pod: Pod, c: Container, t: ContainerTimeline, nowMs: number): { steps: RestartStep[]; statements: Statement[] } {
  const statements: Statement[] = [];
  if (t.restartCount === 0) return { steps: [], statements };
  if (t.restartCount > 1 || t.instances.length < 2) {
    if (t.backOffStepSeconds !== undefined) {
      statements.push({
        text: `the back-off now in force is ${t.backOffStepSeconds} s (the waiting message): the kubelet doubles it at each restart of a crash loop, up to 5 min, and starts over after a run of 10 min`,
        confidence: 'certain',
        from: 'status',
      });
    }
    statements.push({ text: `only the last ${t.instances.length} of ${t.restartCount + 1} runs are in the status: the earlier restarts' back-off steps cannot be checked`, confidence: 'certain', from: 'status' });
    return { steps: [], statements };
  }
  const origin = ms(t.instances[0]?.startedAt) ?? nowMs;
  const policy: RestartPolicy = t.role === 'sidecar' ? 'Always' : ((pod.spec?.restartPolicy as RestartPolicy | undefined) ?? 'Always');
  const instances: ContainerInstance[] = t.instances.map((run) => {
    const start = (ms(run.startedAt) ?? origin) - origin;
    const out: ContainerInstance = { startedAtMs: start };
    const finished = ms(run.finishedAt);
    if (finished !== undefined) out.finishedAtMs = finished - origin;
    if (run.exitCode !== undefined) out.exitCode = run.exitCode;
    if (run.reason !== undefined) out.reason = run.reason;
    const kill = t.kills.find((k) => (k.cause === 'liveness' || k.cause === 'startup') && killedBy(k, run));
    const probe = kill?.cause === 'startup' ? c.startupProbe : kill?.cause === 'liveness' ? c.livenessProbe : undefined;
    if (kill && probe && run.state === 'terminated') {
      const cause = kill.cause as 'liveness' | 'startup';
      out.end = { by: 'kill', cause: { probe: cause, timing: probeTiming(probe), gracePeriodSeconds: killGracePeriodSeconds(pod, c, cause) } };
    } else if (run.state === 'terminated') out.end = t.kills.length === 0 ? { by: 'exit' } : { by: 'unknown' };
    return out;
  });
  const check = checkRestartRule({ container: t.name, restartPolicy: policy, instances, endMs: nowMs - origin });
  return { steps: check.steps.map((s) => ({ branch: s.branch, allowed: s.allowed, why: s.why })), statements };
}
