/**
 * The restart rule checker (src/kubelet/restart-rule.ts): the real kubelet's recorded timelines
 * (test/oracle/golden) pass it, and timelines that break the rule — the old "back-off measured
 * from the killed instance" schedule, a crash loop restarted at once, a back-off restart too
 * soon — do not. Each rejection names the rule it broke.
 */
import { describe, expect, it } from 'vitest';
import { probeTiming } from '../../src/api/defaults.js';
import { checkRestartRule, type ContainerInstance, type ContainerTimeline, type KillCause } from '../../src/kubelet/restart-rule.js';
import { readGolden } from '../oracle/oracle.js';
import { checkRecord } from '../oracle/rule-timeline.js';
import { SCENARIOS } from '../oracle/scenarios.js';

/** Scenarios whose golden timeline the documented rule does not explain, with what was seen. */
const UNEXPLAINED: Record<string, string> = {
  // flaky: killed at 22 s, 4 s after the exit before it, with a 10 s step in force (one Next at
  // 18 s), yet restarted at once; the back-off that follows has a 10 s step again, as if that
  // restart had made no back-off entry. docs/differences.md, "Found by the oracle".
  'two-containers': 'a restart at once inside the back-off',
};

const s = (seconds: number): number => seconds * 1000;
const liveness = (period: number, threshold: number, failingFromMs?: number): KillCause => ({
  probe: 'liveness',
  timing: probeTiming({ periodSeconds: period, failureThreshold: threshold }),
  gracePeriodSeconds: 2,
  ...(failingFromMs === undefined ? {} : { failingFromMs }),
});

/** Instances killed by `cause` (failing from each start), from [start, exit] pairs in seconds; the last may still run. */
function killed(pairs: [number, number?][], cause: (start: number) => KillCause): ContainerInstance[] {
  return pairs.map(([start, exit]) =>
    exit === undefined ? { startedAtMs: s(start) } : { startedAtMs: s(start), finishedAtMs: s(exit), exitCode: 137, reason: 'Error', end: { by: 'kill', cause: cause(s(start)) } },
  );
}

function timeline(instances: ContainerInstance[], endSeconds: number, more: Partial<ContainerTimeline> = {}): ContainerTimeline {
  return { container: 'app', restartPolicy: 'Always', instances, endMs: s(endSeconds), ...more };
}

describe('the kubelet goldens pass the restart rule', () => {
  for (const scenario of SCENARIOS) {
    const golden = readGolden(scenario.name);
    if (golden === undefined) continue;
    const unexplained = UNEXPLAINED[scenario.name];
    const title = unexplained === undefined ? scenario.name : `${scenario.name} breaks it where known (${unexplained})`;
    it(title, () => {
      // The goldens were recorded with every scenario's pod starting at once on 2 cores: the
      // runtime took up to 3 s to start a container (scenarios.ts RUNTIME).
      const checks = checkRecord(golden, scenario.pod(0), { slackSeconds: 3, failsFromStart: scenario.failsLater !== true });
      const violations = checks.flatMap((c) => c.violations.map((v) => `${c.container}: ${v.why}`));
      if (unexplained === undefined) expect(violations).toEqual([]);
      else expect(violations.length).toBeGreaterThan(0);
    });
  }
});

describe('timelines that break the rule are rejected', () => {
  // exec-liveness-slow-app's shape: liveness 10 s × 3 on an app that needs 40 s, so every
  // instance is killed 30 s (+ 2 s of grace) after its start.
  const cause = (start: number) => liveness(10, 3, start);

  it("the kubelet's schedule (doBackOff on the status before the kill) passes, each branch named", () => {
    const check = checkRestartRule(timeline(killed([[0, 32], [33, 62], [62, 92], [92, 122], [122, 152], [193, 222], [305]], cause), 320));
    expect(check.violations).toEqual([]);
    const restarts = check.steps.filter((x) => x.kind === 'restart').map((x) => x.branch);
    expect(restarts).toEqual(['restart-at-once-no-entry', 'restart-at-once', 'restart-at-once', 'restart-at-once', 'restart-after-back-off', 'restart-after-back-off']);
    const firstBackOff = check.steps.find((x) => x.branch === 'restart-after-back-off');
    expect(firstBackOff?.stepMs).toBe(40_000);
    expect(firstBackOff?.why).toContain('the status read before the kill showed the previous exit at 122 s, 30 s before, less than the 40 s step: CrashLoopBackOff');
  });

  it('the old schedule, back-off measured from the killed instance itself, is rejected at its first back-off', () => {
    // Old rule: kill 2 at 62 s measured from its own exit (0 s < 10 s): back-off, restart 10–15 s later.
    const check = checkRestartRule(timeline(killed([[0, 32], [33, 62], [74, 104], [126, 156], [198]], cause), 320));
    expect(check.ok).toBe(false);
    const first = check.violations[0];
    expect(first?.instance).toBe(1);
    expect(first?.branch).toBe('restart-after-back-off');
    expect(first?.why).toContain('but the rule restarts at once');
    expect(first?.why).toContain('no back-off entry yet');
  });

  it('a crash loop restarted at once after its second exit is rejected; 10 s then 20 s of back-off pass', () => {
    const crash = (pairs: [number, number?][]): ContainerInstance[] =>
      pairs.map(([start, exit]) => (exit === undefined ? { startedAtMs: s(start) } : { startedAtMs: s(start), finishedAtMs: s(exit), exitCode: 1, reason: 'Error', end: { by: 'exit' } }));
    const good = checkRestartRule(timeline(crash([[0, 3], [4, 7], [18, 21], [42, 45], [90]]), 120));
    expect(good.violations).toEqual([]);
    expect(good.steps.filter((x) => x.kind === 'restart').map((x) => x.stepMs)).toEqual([0, 10_000, 20_000, 40_000]);
    const bad = checkRestartRule(timeline(crash([[0, 3], [4, 7], [8, 11], [30]]), 60));
    expect(bad.violations[0]?.instance).toBe(1);
    expect(bad.violations[0]?.why).toContain('but the rule says CrashLoopBackOff');
  });

  it('a back-off restart before the step has passed, or long after the requeue, is rejected', () => {
    const crash = (second: number): ContainerInstance[] => [
      { startedAtMs: 0, finishedAtMs: s(3), exitCode: 1, end: { by: 'exit' } },
      { startedAtMs: s(4), finishedAtMs: s(7), exitCode: 1, end: { by: 'exit' } },
      { startedAtMs: s(second) },
    ];
    // Due at 17 s (7 + 10), requeued at most half the step late (+5 s), plus the poll, resolution and slack.
    expect(checkRestartRule(timeline(crash(13), 60)).violations[0]?.why).toContain('outside the back-off');
    expect(checkRestartRule(timeline(crash(17), 60)).ok).toBe(true);
    expect(checkRestartRule(timeline(crash(22), 60)).ok).toBe(true);
    expect(checkRestartRule(timeline(crash(40), 60)).violations[0]?.why).toContain('outside the back-off');
  });

  it('a restart due before the end of the watch and missing is rejected; one due after it is pending', () => {
    const instances: ContainerInstance[] = [{ startedAtMs: 0, finishedAtMs: s(3), exitCode: 1, end: { by: 'exit' } }];
    expect(checkRestartRule(timeline(instances, 30)).violations[0]?.why).toContain('not restarted by 30 s');
    expect(checkRestartRule(timeline(instances, 5)).steps.at(-1)?.branch).toBe('restart-pending');
  });

  it('a decision within the times’ uncertainty allows either branch, and says so', () => {
    // Step 20 s from the third kill on; the fourth kill comes 20 s after the exit before it.
    const atOnce = checkRestartRule(timeline(killed([[0, 10], [10, 20], [20, 30], [30, 50], [50]], () => liveness(2, 1)), 60));
    const step = atOnce.steps.filter((x) => x.kind === 'restart')[3];
    expect(step?.branch).toBe('restart-at-once');
    expect(step?.either).toBe(true);
    expect(step?.why).toContain('either branch is the rule');
  });

  it('a kill sooner than the probe can kill is rejected', () => {
    const check = checkRestartRule(timeline(killed([[0, 12], [12]], cause), 60));
    expect(check.violations[0]?.kind).toBe('kill');
    expect(check.violations[0]?.why).toContain('should have put the exit between 20 s and');
  });

  it('OnFailure: a probe-killed container that exits 0 restarts at once, but not after a back-off', () => {
    const zero = (pairs: [number, number][]): ContainerInstance[] =>
      pairs.map(([start, exit]) => ({ startedAtMs: s(start), finishedAtMs: s(exit), exitCode: 0, reason: 'Completed', end: { by: 'kill', cause: liveness(2, 2, s(start)) } }));
    const check = checkRestartRule(timeline(zero([[0, 4], [4, 8], [8, 12]]), 40, { restartPolicy: 'OnFailure' }));
    expect(check.violations).toEqual([]);
    expect(check.steps.filter((x) => x.kind === 'restart').map((x) => x.branch)).toEqual(['restart-at-once-no-entry', 'restart-at-once', 'not-restarted']);
    expect(check.steps.at(-1)?.why).toContain('restartPolicy OnFailure does not restart');
  });
});
