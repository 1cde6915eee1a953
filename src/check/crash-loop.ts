/**
 * The crash loop of a container that a probe kills on every start (a start-up longer than its
 * budget): when it is killed, when it restarts at once, when CrashLoopBackOff begins.
 *
 * The back-off itself is the kubelet's own gate (`CrashLoopBackOff`, kubelet/backoff.ts),
 * driven here on a clock of its own, so its steps, cap and reset cannot drift from what `run`
 * and `simulate` do. What this file adds is `doBackOff`'s choice of exit, which lives in
 * `Kubelet.restartWithBackOff`: a sync that kills a container for a probe restarts it over the
 * status read *before* the kill, so the gate measures from the exit before the killed instance
 * (none on the first kill: at once, no entry). A probe-killed container therefore restarts at
 * once for as long as one run outlasts the step (kubernetes#22240); the first kill that comes
 * sooner enters CrashLoopBackOff, and the next sync measures from that kill itself.
 *
 * A restart at once comes from the tick that killed, so the next instance runs a whole number
 * of periods: `firstProbeAgeMs + δ + (F − 1) × P` from that tick, over a restart's δ, the
 * start's fraction of a second (the worker reads `startedAt` in whole seconds) and the relist
 * (prober/start-latency.ts) — a range of a period when `initialDelaySeconds` is a multiple of
 * the period (at the delay, or a period after it), and with a 1 s period (the relist). A restart after a back-off comes at the pod worker's requeue, at any phase of the ticks
 * and up to half the remaining step late (at most half the 60 s resync), which is why only the
 * first back-off restart is given as a time; after it, the rule (a step from the previous kill)
 * is stated instead.
 */
import { probeTiming } from '../api/defaults.js';
import type { Probe } from '../api/types.js';
import { CrashLoopBackOff } from '../kubelet/backoff.js';
import { FIRST_START_LATENCY, firstProbeAgeBoundsMs, START_LATENCY } from '../prober/start-latency.js';
import { manualClock } from '../util/clock.js';

/** The probe-kill crash loop for one run length (seconds from a kill to the next, restarts at once). */
export interface ProbeKillLoop {
  /** How long an instance restarted at once runs before its kill. */
  runSeconds: number;
  /** Kill times (seconds from the first start) after which the container restarts at once. */
  restartedAtOnce: number[];
  /** The kill that enters CrashLoopBackOff (the first `BackOff` event); null when a run outlasts every step. */
  firstBackOffSeconds: number | null;
  /** The step in force at that kill: the restart comes no sooner than this after it. */
  firstBackOffStepSeconds: number | null;
  /** The steps that follow, doubling up to the cap (the last one repeats). */
  laterStepsSeconds: number[];
}

/** More kills than the steps can double (10 s → 300 s takes six): a loop that is not in back-off by then never is. */
const MAX_KILLS = 16;

/**
 * The crash loop when every instance restarted at once runs `runSeconds` and the first one
 * `firstRunSeconds` (default the same): the gate only sees the runs between kills, so the first
 * run shifts every time and changes no decision.
 */
export function probeKillLoop(runSeconds: number, firstRunSeconds = runSeconds): ProbeKillLoop {
  const clock = manualClock();
  const gate = new CrashLoopBackOff({ clock });
  const key = 'container';
  const restartedAtOnce: number[] = [];
  let exitBefore: number | undefined;
  for (let kill = firstRunSeconds; restartedAtOnce.length < MAX_KILLS; kill += runSeconds) {
    clock.set(kill * 1000);
    const decision = exitBefore === undefined ? undefined : gate.check(key, exitBefore * 1000);
    if (decision?.inBackOff) {
      const laterStepsSeconds: number[] = [];
      // The restart after this back-off is allowed (`Next`): the step doubles from here on.
      for (let step = decision.delayMs; laterStepsSeconds.length < 8; ) {
        clock.set(clock.now() + step);
        gate.next(key, clock.now());
        step = gate.get(key);
        laterStepsSeconds.push(step / 1000);
        if (step >= gate.maxMs) break;
      }
      return { runSeconds, restartedAtOnce, firstBackOffSeconds: kill, firstBackOffStepSeconds: decision.delayMs / 1000, laterStepsSeconds };
    }
    restartedAtOnce.push(kill);
    exitBefore = kill;
  }
  return { runSeconds, restartedAtOnce, firstBackOffSeconds: null, firstBackOffStepSeconds: null, laterStepsSeconds: [] };
}

/**
 * How long an instance restarted at once runs before the probe that guards its start kills
 * it, from the tick before its start (`min`, `max`), and the same for the first start (`first`),
 * over δ (a restart's; a first start's with its sandbox), the start's fraction of a second and
 * the relist, in seconds. A range only with a 1 s period without initial delay (the relist), or
 * for a restart with a delay that is a multiple of the period (probed at the delay, or a period
 * after it: prober/start-latency.ts); a first start's δ is over a second, so it is probed a
 * period after such a delay.
 */
export function probeKillRunSeconds(probe: Probe): { min: number; max: number; first: { min: number; max: number } } {
  const t = probeTiming(probe);
  const restart = firstProbeAgeBoundsMs(t.initialDelay, t.period, START_LATENCY);
  const first = firstProbeAgeBoundsMs(t.initialDelay, t.period, FIRST_START_LATENCY);
  const more = (t.failureThreshold - 1) * t.period;
  return {
    min: restart.tickMinMs / 1000 + more,
    max: restart.tickMaxMs / 1000 + more,
    first: { min: first.tickMinMs / 1000 + more, max: first.tickMaxMs / 1000 + more },
  };
}
