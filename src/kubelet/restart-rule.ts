/**
 * The kubelet's kill-and-restart rule as a checker: given one agent's own timeline of one
 * container (each instance's start and finish, how it ended), says for each kill and each
 * restart which branch of the rule it took, whether the rule allows it on that timeline, and
 * why, in a sentence a user can read.
 *
 * Why a checker and not a replay: a kubelet's restarts depend on draws (the pod worker's
 * requeue jitter, the probe ticker's phase, the relist) and on load, so two correct kubelets
 * differ; what they share is the rule. The oracle judges each side by it, `simulate`'s tests
 * hold every seed to it, and `explain` tells a user which branch was taken.
 *
 * The rule, as docs/timing-model.md reads it from upstream:
 * - a probe kills after `failureThreshold` failures in a row, one per `periodSeconds` tick, the
 *   first probe once the container's age — from `startedAt` cut to the second — reaches
 *   `initialDelaySeconds`; its exit follows within the kill's grace period;
 * - `doBackOff` (kuberuntime_manager.go) measures from the latest *exited* instance in the
 *   status the sync read: for a probe kill that is the status from before the kill, so the
 *   instance before the killed one (none on the first kill: start at once, no back-off entry);
 *   for an exit on its own, that exit itself. `IsInBackOffSince` (now − that exit < the step)
 *   means CrashLoopBackOff; else `Next` starts the step at 10 s or doubles it up to 300 s
 *   (`CrashLoopBackOff`, backoff.ts — the one copy of those numbers and of the 600 s reset);
 * - in back-off, later syncs measure from the latest exit, and the pod worker requeues each at
 *   the remaining step, capped at the resync interval, jittered up to +50 % (`completeWork`):
 *   the restart comes between the step's end and half the remaining step (plus a queue poll)
 *   after it.
 * Times on the API are whole seconds and an agent is late under load: `resolutionMs` and
 * `slackMs` widen every window, and a decision that falls inside them allows either branch.
 */
import type { ProbeTiming } from '../api/defaults.js';
import { policyRestarts } from '../prober/restart-rules.js';
import { PLEG_RELIST_PERIOD_MS } from '../prober/start-latency.js';
import { manualClock } from '../util/clock.js';
import { CrashLoopBackOff, type CrashLoopBackOffOptions, WORKER_BACK_OFF_JITTER_FACTOR } from './backoff.js';
import { SYNC_FREQUENCY_MS } from './kubelet.js';

/** A pod's (or a container's own) `restartPolicy`. */
export type RestartPolicy = 'Always' | 'OnFailure' | 'Never';

/** The probes that kill. */
export type KillProbe = 'liveness' | 'startup';

/** A probe kill: which probe, its timing, the grace its kill had, and when it began to fail. */
export interface KillCause {
  probe: KillProbe;
  /** The probe's timing (`probeTiming(probe)`): initial delay, period, timeout, failure threshold. */
  timing: ProbeTiming;
  /** The kill's grace period (seconds): the probe's `terminationGracePeriodSeconds`, else the pod's. */
  gracePeriodSeconds: number;
  /**
   * From when (ms, the timeline's base) every probe fails. Absent: not known (an app that
   * fails later in its run), so only the earliest kill is checked.
   */
  failingFromMs?: number;
}

/** How an instance ended: killed by a probe, exited on its own, or not known (either is tried). */
export type InstanceEnd = { by: 'kill'; cause: KillCause } | { by: 'exit' } | { by: 'unknown' };

/** One instance of the container, as one agent's status showed it. */
export interface ContainerInstance {
  startedAtMs: number;
  /** Absent while it runs — or when its exit was not seen though a later instance started. */
  finishedAtMs?: number;
  exitCode?: number;
  /** The terminated reason (`Error`, `Completed`, …): for the sentences. */
  reason?: string;
  /** How it ended (default `unknown`); ignored while it runs. */
  end?: InstanceEnd;
}

/** One container's timeline on one agent. Times are ms from any common origin. */
export interface ContainerTimeline {
  container: string;
  /** The pod's `restartPolicy` (a sidecar's is `Always`). */
  restartPolicy: RestartPolicy;
  /** In start order. */
  instances: ContainerInstance[];
  /** The end of what this agent was watched for: nothing due after it is missing. */
  endMs: number;
  /** How finely the times are known: 1000 for the API's whole seconds (default), 1 for `simulate`. */
  resolutionMs?: number;
  /** How late this agent may be beyond the rule (a runtime's create and start, a loaded sync): default 1000. */
  slackMs?: number;
  /** The node's back-off configuration, when not the default. */
  backOff?: Pick<CrashLoopBackOffOptions, 'maxContainerRestartPeriodMs' | 'reduceDefaultDecay'>;
}

/**
 * A branch of the rule:
 * - `kill-after-failures`: a probe killed it (`failureThreshold` failures, `periodSeconds` apart);
 * - `exited`: it ended on its own;
 * - `restart-at-once-no-entry`: `doBackOff` found no exited instance in the status it read, so
 *   started it at once and made no back-off entry (a first probe kill);
 * - `restart-at-once`: `IsInBackOffSince` said no, `Next` stepped the back-off, start at once;
 * - `restart-after-back-off`: CrashLoopBackOff, then the restart at a requeue after the step;
 * - `not-restarted`: the restart policy keeps it down;
 * - `restart-pending`: due after the end of the watch (not yet a difference);
 * - `restart-unseen`: the instance's exit was not seen (a watch can miss a short-lived
 *   status), so its restart is not judged.
 */
export type RuleBranch =
  | 'kill-after-failures'
  | 'exited'
  | 'restart-at-once-no-entry'
  | 'restart-at-once'
  | 'restart-after-back-off'
  | 'not-restarted'
  | 'restart-pending'
  | 'restart-unseen';

/** One decision of the rule about one instance. */
export interface RuleStep {
  /** The instance it is about (index in `instances`): the killed or exited one. */
  instance: number;
  kind: 'kill' | 'exit' | 'restart';
  /** The branch the agent took (for a restart not observed: the one the rule expects). */
  branch: RuleBranch;
  /** Whether the rule allows what the agent did. */
  allowed: boolean;
  /** The times, within their resolution and the slack, allow the other restart branch too. */
  either: boolean;
  /** The observed instant judged: a kill's exit, a restart's start. */
  atMs?: number;
  /** The window the rule gives that instant. */
  window?: { earliestMs: number; latestMs: number };
  /** The back-off step in force when it was decided (ms; 0 without an entry). */
  stepMs?: number;
  /** Why, in one sentence a user can read. */
  why: string;
}

export interface RestartRuleCheck {
  container: string;
  steps: RuleStep[];
  /** The steps the rule does not allow. */
  violations: RuleStep[];
  ok: boolean;
}

/** The pod worker's queue is polled once a second (`syncTicker`): a requeue fires up to that late. */
const QUEUE_POLL_MS = 1_000;
const DEFAULT_RESOLUTION_MS = 1_000;
const DEFAULT_SLACK_MS = 1_000;
const BACK_OFF_KEY = 'container';
/** Gate histories followed at once (each missed exit can double them): nothing grows without bound. */
const MAX_WORLDS = 16;

const sec = (ms: number): string => `${Math.round(ms / 100) / 10} s`;

/**
 * One possible state of the kubelet's back-off gate: the `Next` calls so far (clock, exit). The
 * gate is rebuilt from them, so its numbers are `CrashLoopBackOff`'s. More than one when an
 * exit was missed or a decision fell within the times' uncertainty.
 */
type World = { now: number; exit: number }[];

function gateOf(world: World, options: ContainerTimeline['backOff']): { gate: CrashLoopBackOff; clock: ReturnType<typeof manualClock> } {
  const clock = manualClock();
  const gate = new CrashLoopBackOff({ clock, ...options });
  for (const call of world) {
    clock.set(call.now);
    gate.next(BACK_OFF_KEY, call.exit);
  }
  return { gate, clock };
}

/** When instance `i` finished, as a range (its exit known to the resolution, or only between its start and the next start). */
function finishRange(instances: ContainerInstance[], i: number, res: number): { min: number; max: number } | undefined {
  const inst = instances[i];
  if (inst === undefined) return undefined;
  if (inst.finishedAtMs !== undefined) return { min: inst.finishedAtMs, max: inst.finishedAtMs + res };
  const next = instances[i + 1];
  return next === undefined ? undefined : { min: inst.startedAtMs, max: next.startedAtMs };
}

/**
 * Checks one agent's timeline of one container against the rule. Pure: the back-off gate is
 * the kubelet's own (`CrashLoopBackOff`) on a clock set to the timeline's instants.
 */
export function checkRestartRule(timeline: ContainerTimeline): RestartRuleCheck {
  const res = timeline.resolutionMs ?? DEFAULT_RESOLUTION_MS;
  const slack = timeline.slackMs ?? DEFAULT_SLACK_MS;
  const steps: RuleStep[] = [];
  const { instances } = timeline;
  let worlds: World[] = [[]];
  for (let i = 0; i < instances.length; i++) {
    const inst = instances[i];
    if (inst === undefined) continue;
    const next = instances[i + 1];
    if (inst.finishedAtMs === undefined) {
      if (next === undefined) continue;
      // Exit not seen: whichever branch its restart took, the gate stepped (`Next`) or not.
      const prev = finishRange(instances, i - 1, res);
      const exit = inst.end?.by === 'kill' ? prev?.min : inst.startedAtMs;
      worlds = dedupe([...worlds, ...(exit === undefined ? [] : worlds.map((w) => [...w, { now: next.startedAtMs, exit }]))]);
      steps.push({
        instance: i,
        kind: 'restart',
        branch: 'restart-unseen',
        allowed: true,
        either: false,
        atMs: next.startedAtMs,
        why: `its exit was not seen (it ended between ${sec(inst.startedAtMs)} and ${sec(next.startedAtMs)}), so its restart at ${sec(next.startedAtMs)} is not judged`,
      });
      continue;
    }
    const end = inst.end ?? { by: 'unknown' };
    if (end.by === 'kill') steps.push(judgeKill(i, inst, end.cause, res, slack));
    else if (end.by === 'exit') steps.push(exitStep(i, inst));
    const readings: ('kill' | 'exit')[] = end.by === 'unknown' ? ['exit', 'kill'] : [end.by];
    const judged = worlds.flatMap((world) => readings.map((by) => judgeRestart({ i, fin: inst.finishedAtMs ?? 0, timeline, world, res, slack }, by)));
    const allowed = judged.filter((j) => j.step.allowed);
    const chosen = allowed[0] ?? judged[0];
    if (chosen === undefined) continue;
    // The worlds that explain what the agent did go on; none does: go on as it did.
    worlds = dedupe((allowed.length > 0 ? allowed : [chosen]).map((j) => j.world));
    steps.push(allowed.length > 1 && allowed.some((j) => j.step.branch !== chosen.step.branch) ? { ...chosen.step, either: true } : chosen.step);
  }
  const violations = steps.filter((s) => !s.allowed);
  return { container: timeline.container, steps, violations, ok: violations.length === 0 };
}

function dedupe(worlds: World[]): World[] {
  const seen = new Map<string, World>();
  for (const w of worlds) seen.set(JSON.stringify(w), w);
  return [...seen.values()].slice(0, MAX_WORLDS);
}

/**
 * A kill's exit: no sooner than `failureThreshold − 1` periods after the first failing probe,
 * which comes no sooner than the initial delay (less the second `startedAt` loses to its cut)
 * or the moment the probe began to fail; no later than a period (the tick's phase) plus the
 * relist after those, the last probe's timeout, the kill's grace, the resolution and the slack.
 */
function judgeKill(i: number, inst: ContainerInstance, cause: KillCause, res: number, slack: number): RuleStep {
  const start = inst.startedAtMs;
  const at = inst.finishedAtMs ?? start;
  const t = cause.timing;
  const failing = cause.failingFromMs ?? start;
  const failures = (t.failureThreshold - 1) * t.period * 1000;
  const earliestMs = Math.max(start + Math.max(0, t.initialDelay - 1) * 1000, failing) + failures;
  const latestMs =
    cause.failingFromMs === undefined
      ? Infinity
      : Math.max(start + res + t.initialDelay * 1000 + PLEG_RELIST_PERIOD_MS, failing) + t.period * 1000 + failures + t.timeout * 1000 + cause.gracePeriodSeconds * 1000 + res + slack;
  const allowed = at >= earliestMs - res && at <= latestMs;
  const shape = `${t.failureThreshold} failure${t.failureThreshold === 1 ? '' : 's'} ${t.period} s apart, ${t.initialDelay === 0 ? 'no initial delay' : `an initial delay of ${t.initialDelay} s`}, a ${t.timeout} s timeout and ${cause.gracePeriodSeconds} s of grace`;
  const from = cause.failingFromMs === undefined || cause.failingFromMs === start ? 'its start' : `its start (failing from ${sec(failing)})`;
  const verdict = allowed ? 'put' : 'should have put';
  const range = latestMs === Infinity ? `no sooner than ${sec(earliestMs - start)} after its start (when the probe began to fail is not known)` : `between ${sec(earliestMs - start)} and ${sec(latestMs - start)} after ${from}`;
  const why = `killed by its ${cause.probe} probe, exiting at ${sec(at)}, ${sec(at - start)} after its start at ${sec(start)}: ${shape} ${verdict} the exit ${range} (the first probe at a tick within a period of the initial delay, the age counted from startedAt cut to the second)`;
  return { instance: i, kind: 'kill', branch: 'kill-after-failures', allowed, either: false, atMs: at, window: { earliestMs, latestMs }, why };
}

function exitStep(i: number, inst: ContainerInstance): RuleStep {
  const at = inst.finishedAtMs ?? inst.startedAtMs;
  const code = inst.exitCode === undefined ? '' : ` with code ${inst.exitCode}${inst.reason ? ` (${inst.reason})` : ''}`;
  return { instance: i, kind: 'exit', branch: 'exited', allowed: true, either: false, atMs: at, why: `exited on its own at ${sec(at)}${code}` };
}

/** Whether the restart policy starts the container again after this end (`ShouldContainerBeRestarted`; a probe kill restarts unless `Never`). */
function shouldRestart(policy: RestartPolicy, by: 'kill' | 'exit', exitCode: number | undefined): boolean {
  return by === 'kill' ? policy !== 'Never' : policyRestarts(policy, exitCode ?? 1);
}

interface RestartContext {
  i: number;
  fin: number;
  timeline: ContainerTimeline;
  world: World;
  res: number;
  slack: number;
}

/** A judged restart in one world, and the world after it if the agent took it. */
interface Judged {
  step: RuleStep;
  world: World;
}

/**
 * The restart after instance `i` ended (`by`: a probe kill, whose sync read the status from
 * before it, or an exit on its own, noticed at the next relist), judged against one state of
 * the gate built from this timeline's earlier restarts.
 */
function judgeRestart(ctx: RestartContext, by: 'kill' | 'exit'): Judged {
  const { i, fin, timeline, world, res, slack } = ctx;
  const { gate, clock } = gateOf(world, timeline.backOff);
  const inst = timeline.instances[i];
  const startAt = timeline.instances[i + 1]?.startedAtMs;
  const base = { instance: i, kind: 'restart' as const, atMs: startAt };
  const ended = by === 'kill' ? `the kill's exit at ${sec(fin)}` : `its exit at ${sec(fin)}`;
  if (!shouldRestart(timeline.restartPolicy, by, inst?.exitCode)) {
    const allowed = startAt === undefined;
    const rule = `restartPolicy ${timeline.restartPolicy} does not start it again after ${by === 'kill' ? 'a probe kill' : `exit code ${inst?.exitCode ?? '?'}`}`;
    return { step: { ...base, branch: 'not-restarted', allowed, either: false, why: allowed ? `not restarted: ${rule}` : `started again at ${sec(startAt ?? 0)}, but ${rule}` }, world };
  }
  // doBackOff's exit: the status a kill's sync read is from before the kill.
  const measured = by === 'kill' ? finishRange(timeline.instances, i - 1, res) : { min: fin, max: fin + res };
  // When that sync ran: right after the kill's exit; for an exit, at the relist after it.
  const nowMin = fin;
  const nowMax = fin + res + (by === 'exit' ? PLEG_RELIST_PERIOD_MS : 0) + slack;
  const atOnceLatest = nowMax + slack;
  if (measured === undefined) {
    const rule = `the status read before the kill held no exited instance of it, so doBackOff started it without the back-off and made no back-off entry`;
    const window = { earliestMs: fin, latestMs: atOnceLatest };
    if (startAt === undefined) {
      const allowed = atOnceLatest >= timeline.endMs;
      const why = allowed
        ? `restart due at once after ${ended}, after the end of the watch (${sec(timeline.endMs)}): ${rule}`
        : `not restarted by ${sec(timeline.endMs)}, though due at once after ${ended} (by ${sec(atOnceLatest)}): ${rule}`;
      return { step: { ...base, branch: allowed ? 'restart-pending' : 'restart-at-once-no-entry', allowed, either: false, window, stepMs: 0, why }, world };
    }
    const allowed = startAt >= fin - res && startAt <= atOnceLatest;
    const why = `${allowed ? 'restarted at once' : 'restarted late, though due at once'} (${sec(startAt)}, ${sec(startAt - fin)} after ${ended}): ${rule}`;
    return { step: { ...base, branch: 'restart-at-once-no-entry', allowed, either: false, window, stepMs: 0, why }, world };
  }
  const stepMs = gate.get(BACK_OFF_KEY);
  clock.set(nowMax);
  const surelyBackOff = gate.isInBackOff(BACK_OFF_KEY, measured.min);
  clock.set(nowMin);
  const surelyAtOnce = !gate.isInBackOff(BACK_OFF_KEY, measured.max);
  const either = !surelyBackOff && !surelyAtOnce;
  // In back-off, later syncs measure from the latest exit (this one); each requeue comes at the
  // remaining step, capped at the resync, jittered: half the remaining step late at most.
  const dueMs = fin + stepMs;
  const backOffLatest = dueMs + res + WORKER_BACK_OFF_JITTER_FACTOR * Math.min(stepMs, SYNC_FREQUENCY_MS) + QUEUE_POLL_MS + 2 * slack;
  const elapsed = fin - measured.min;
  const which =
    by === 'kill'
      ? `the status read before the kill showed the previous exit at ${measured.max - measured.min > res ? `${sec(measured.min)}–${sec(measured.max)}` : sec(measured.min)}`
      : 'the latest exited instance is this one';
  const stepWords = stepMs === 0 ? 'no back-off entry yet' : `the ${sec(stepMs)} step`;
  const borderline = either ? ` (either branch is the rule's: ${sec(elapsed)} against ${sec(stepMs)} is within the times' ${sec(res)} resolution and ${sec(slack)} of lateness)` : '';
  // A kill's restart that backs off is no longer the kill's: the later sync sees an exited
  // container and restarts it only if the policy restarts that exit (OnFailure and exit 0: no).
  const restartsLater = by === 'exit' || policyRestarts(timeline.restartPolicy, inst?.exitCode ?? 1);
  if (!restartsLater && !surelyAtOnce && (startAt === undefined || startAt > atOnceLatest)) {
    const allowed = startAt === undefined;
    const rule = `${which}, ${sec(elapsed)} before, less than ${stepWords}: CrashLoopBackOff, and the syncs after it see an exit with code ${inst?.exitCode ?? '?'}, which restartPolicy ${timeline.restartPolicy} does not restart`;
    return { step: { ...base, branch: 'not-restarted', allowed, either, stepMs, why: allowed ? `not restarted after ${ended}: ${rule}` : `started again at ${sec(startAt ?? 0)}, but ${rule}` }, world };
  }
  if (startAt === undefined) {
    const pending = (!surelyBackOff && atOnceLatest >= timeline.endMs) || (!surelyAtOnce && backOffLatest >= timeline.endMs);
    const due = surelyBackOff ? `after the back-off, by ${sec(backOffLatest)}` : `at once, by ${sec(atOnceLatest)}`;
    const step: RuleStep = {
      ...base,
      branch: pending ? 'restart-pending' : surelyBackOff ? 'restart-after-back-off' : 'restart-at-once',
      allowed: pending,
      either,
      stepMs,
      window: surelyBackOff ? { earliestMs: dueMs, latestMs: backOffLatest } : { earliestMs: fin, latestMs: atOnceLatest },
      why: pending
        ? `restart after ${ended} not due before the end of the watch (${sec(timeline.endMs)}): ${which}, ${stepWords}`
        : `not restarted by ${sec(timeline.endMs)} though due ${due} after ${ended}: ${which}, ${stepWords}${borderline}`,
    };
    return { step, world };
  }
  // A start inside the at-once window is at once, unless a step so short it ended there explains it.
  const tookAtOnce = startAt <= atOnceLatest && !(surelyBackOff && startAt >= dueMs - res);
  if (tookAtOnce) {
    const allowed = !surelyBackOff && startAt >= fin - res;
    const after = gate.peekNext(BACK_OFF_KEY, measured.min);
    const rule = `${which}, ${sec(elapsed)} before${stepMs === 0 ? ', and no back-off entry yet' : `, ${allowed ? 'not less than' : 'less than'} the ${sec(stepMs)} step`}`;
    const why = allowed
      ? `restarted at once (${sec(startAt)}, ${sec(startAt - fin)} after ${ended}): ${rule}, so IsInBackOffSince said no and Next ${stepMs === 0 ? 'set' : 'stepped'} the back-off to ${sec(after)}${borderline}`
      : `restarted at once (${sec(startAt)}, ${sec(startAt - fin)} after ${ended}), but the rule says CrashLoopBackOff: ${rule}, so the restart was due no sooner than ${sec(dueMs)}`;
    const step: RuleStep = { ...base, branch: 'restart-at-once', allowed, either, stepMs, window: { earliestMs: fin, latestMs: atOnceLatest }, why };
    return { step, world: [...world, { now: nowMin, exit: measured.min }] };
  }
  const rule = `${which}${by === 'kill' ? `, ${sec(elapsed)} before` : ''}, ${surelyAtOnce ? 'not less than' : 'less than'} ${stepWords}`;
  const allowed = !surelyAtOnce && startAt >= dueMs - res && startAt <= backOffLatest;
  const window = `later syncs measure from ${ended}, so the restart is due at ${sec(dueMs)} and comes at the pod worker's requeue, up to half the remaining step (capped at the ${sec(SYNC_FREQUENCY_MS)} resync) plus a queue poll later: by ${sec(backOffLatest)}`;
  const why = surelyAtOnce
    ? `restarted after a back-off (${sec(startAt)}, ${sec(startAt - fin)} after ${ended}), but the rule restarts at once: ${rule}`
    : allowed
      ? `restarted after a back-off (${sec(startAt)}): ${rule}: CrashLoopBackOff; ${window}${borderline}`
      : `restarted at ${sec(startAt)}, outside the back-off's window: ${rule}: CrashLoopBackOff; ${window}`;
  const step: RuleStep = { ...base, branch: 'restart-after-back-off', allowed, either, stepMs, window: { earliestMs: dueMs, latestMs: backOffLatest }, why };
  return { step, world: [...world, { now: startAt, exit: fin }] };
}
