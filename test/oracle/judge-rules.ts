/**
 * The oracle's judgement by rule: each side's own timeline of each container is checked
 * against the kubelet's kill-and-restart rule (src/kubelet/restart-rule.ts), so that two
 * correct agents whose draws (requeue jitter, tick phase) or load differ are not called
 * different. What it reports:
 * - a side that breaks the rule: a difference, with the rule's sentence;
 * - two sides whose restart branches differ, each allowed by its own times: explained (a note);
 * - one side's branches a strict prefix of the other's: that side is late (a note, with how
 *   many steps and when the other side took the first it lacks) — the end-of-window states
 *   that follow from the missing steps (waiting reason, readiness, phase, counts) are then
 *   not compared.
 * And for events: counts of a type (Normal, Warning) that the kubelet's spam filter may have
 * clipped on either side (25 per pod and type, then one per 5 minutes) are not compared.
 */
import type { Pod } from '../../src/api/types.js';
import { SPAM_BURST } from '../../src/kubelet/event-correlator.js';
import { checkRestartRule, type ContainerTimeline, type RestartRuleCheck, type RuleStep } from '../../src/kubelet/restart-rule.js';
import type { OracleRecord } from './record.js';
import { containerTimeline } from './rule-timeline.js';

export interface RuleOptions {
  pod: Pod;
  /** Lateness each side may have beyond the rule (seconds): the runtime, the relist, measured load. */
  slackSeconds: { kubelet: number; probelet: number };
  /** The killing probe fails from each start (the scenario's; default true). */
  failsFromStart?: boolean;
}

/** How the rule sees one container on both sides. */
export type RuleVerdict = 'same' | 'explained' | 'late';

export interface RuleJudgement {
  differences: string[];
  notes: string[];
  /** Containers whose restart branches differ (explained) or where one side is late. */
  containers: Map<string, RuleVerdict>;
  /** Event types (Normal, Warning) whose counts the spam filter may have clipped on a side. */
  clippedTypes: Set<string>;
}

/**
 * A container's course on one side, step by step: its first start, each end of an instance (`ended`), then the
 * branch its restart took; a restart not yet due or not judged (its exit unseen) ends nothing.
 */
function course(check: RestartRuleCheck, timeline: ContainerTimeline): { word: string; step?: RuleStep; endedAtMs?: number }[] {
  const out: { word: string; step?: RuleStep; endedAtMs?: number }[] = [];
  timeline.instances.forEach((inst, i) => {
    if (i === 0) out.push({ word: 'started', endedAtMs: inst.startedAtMs });
    if (inst.finishedAtMs !== undefined) out.push({ word: 'ended', endedAtMs: inst.finishedAtMs });
    const restart = check.steps.find((s) => s.instance === i && s.kind === 'restart');
    if (restart !== undefined && restart.branch !== 'restart-pending' && restart.branch !== 'restart-unseen') out.push({ word: restart.branch, step: restart });
  });
  return out;
}

const sec = (ms: number | undefined): string => (ms === undefined ? '?' : `${Math.round(ms / 100) / 10} s`);

export function judgeByRule(kubelet: OracleRecord, probelet: OracleRecord, options: RuleOptions): RuleJudgement {
  const out: RuleJudgement = { differences: [], notes: [], containers: new Map(), clippedTypes: new Set() };
  for (const kc of kubelet.containers) {
    const pc = probelet.containers.find((x) => x.name === kc.name);
    if (pc === undefined) continue;
    const fails = { failsFromStart: options.failsFromStart ?? true };
    const kt = containerTimeline(kubelet, options.pod, kc, { slackSeconds: options.slackSeconds.kubelet, ...fails });
    const pt = containerTimeline(probelet, options.pod, pc, { slackSeconds: options.slackSeconds.probelet, ...fails });
    if (kt === undefined || pt === undefined) continue;
    const k = checkRestartRule(kt);
    const p = checkRestartRule(pt);
    for (const v of k.violations) out.differences.push(`the kubelet breaks the restart rule: ${kc.name} ${v.why}`);
    for (const v of p.violations) out.differences.push(`probelet breaks the restart rule: ${kc.name} ${v.why}`);
    const kb = course(k, kt);
    const pb = course(p, pt);
    const n = Math.min(kb.length, pb.length);
    const firstApart = kb.slice(0, n).findIndex((s, i) => s.word !== pb[i]?.word);
    if (firstApart >= 0) {
      out.containers.set(kc.name, 'explained');
      const a = kb[firstApart];
      const b = pb[firstApart];
      const say = (x: (typeof kb)[number] | undefined): string => x?.step?.why ?? (x?.endedAtMs === undefined ? 'nothing yet' : `its instance ended at ${sec(x.endedAtMs)}`);
      out.notes.push(`${kc.name}: step ${firstApart + 1} took different branches, each by its own times — the kubelet: ${say(a)}; probelet: ${say(b)}`);
    } else if (kb.length !== pb.length) {
      const [slower, faster, steps, end] = kb.length < pb.length ? ['the kubelet', 'probelet', pb, kt.endMs] : ['probelet', 'the kubelet', kb, pt.endMs];
      const missing = steps[n];
      const at = missing?.endedAtMs ?? missing?.step?.atMs;
      out.containers.set(kc.name, 'late');
      out.notes.push(
        `${kc.name}: ${slower} late — ${Math.abs(kb.length - pb.length)} step(s) behind at the end (${sec(end)}); ${faster}'s next one (${missing?.word === 'ended' ? 'an instance ending' : missing?.word === 'started' ? 'its first start' : (missing?.word ?? '?')}) came at ${sec(at)}`,
      );
    } else {
      out.containers.set(kc.name, 'same');
    }
  }
  for (const type of ['Normal', 'Warning']) {
    const total = (r: OracleRecord): number => r.events.filter((e) => e.type === type).reduce((sum, e) => sum + e.count, 0);
    const [kt, pt] = [total(kubelet), total(probelet)];
    if (kt >= SPAM_BURST || pt >= SPAM_BURST) {
      out.clippedTypes.add(type);
      out.notes.push(`${type} event counts not compared: ${kt} on the kubelet, ${pt} on probelet reach the spam filter's burst of ${SPAM_BURST} per pod and type`);
    }
  }
  return out;
}
