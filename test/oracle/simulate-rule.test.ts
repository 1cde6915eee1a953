/**
 * `simulate` held to the kubelet's restart rule (src/kubelet/restart-rule.ts) on its own
 * timeline, draw by draw: the same checker the oracle judges both agents with. Where the
 * golden tests pin the restarts up to the first back-off (a single draw of the pod worker's
 * requeue jitter decides the later ones), the rule judges every restart of every seed.
 */
import { describe, expect, it } from 'vitest';
import { probeTiming } from '../../src/api/defaults.js';
import { checkRestartRule, type ContainerInstance } from '../../src/kubelet/restart-rule.js';
import { killWaitSeconds } from '../../src/prober/kill-policy.js';
import { admitForSimulation } from '../../src/simulate/pods.js';
import { simulate } from '../../src/simulate/simulation.js';
import { behaviours } from '../simulate/harness.js';
import { SCENARIOS } from './scenarios.js';

const NAME = 'exec-liveness-slow-app';

describe(`simulate's restarts of ${NAME} pass the kubelet's restart rule, seed by seed`, () => {
  const scenario = SCENARIOS.find((s) => s.name === NAME);
  for (const seed of [1, 2, 3, 4, 5, 6, 7, 8]) {
    it(`seed ${seed}`, async () => {
      if (scenario === undefined) throw new Error(`no scenario ${NAME}`);
      const admitted = admitForSimulation([scenario.pod(0)]);
      expect(admitted.errors).toEqual([]);
      const pod = admitted.pods[0];
      const spec = pod?.spec?.containers[0];
      const probe = spec?.livenessProbe;
      if (pod === undefined || spec === undefined || probe === undefined) throw new Error('the scenario pod has no liveness probe');
      const forMs = scenario.duration * 1000;
      const result = await simulate({ pods: admitted.pods, behaviours: behaviours({ app: 'down:40s,up' }), forMs, seed, threads: 1 });
      const app = result.pods[0]?.containers[0];
      const starts = app?.starts ?? [];
      expect(starts.length).toBeGreaterThanOrEqual(6);
      const cause = { probe: 'liveness' as const, timing: probeTiming(probe), gracePeriodSeconds: killWaitSeconds(pod, spec, 'liveness') };
      // Each instance ends at its kill: the simulated app stops on SIGTERM.
      const instances: ContainerInstance[] = starts.map((startedAtMs) => {
        const kill = app?.kills.find((k) => k.instanceStartMs === startedAtMs);
        if (kill === undefined) return { startedAtMs };
        return { startedAtMs, finishedAtMs: kill.tMs, exitCode: 137, reason: 'Error', end: { by: 'kill', cause: { ...cause, failingFromMs: startedAtMs } } };
      });
      const check = checkRestartRule({ container: 'app', restartPolicy: 'Always', instances, endMs: forMs, resolutionMs: 1, slackMs: 1000 });
      expect(check.violations.map((v) => JSON.stringify(v)), `starts ${starts.map((s) => s / 1000).join(', ')}`).toEqual([]);
      expect(check.ok).toBe(true);
      expect(check.steps.length).toBeGreaterThanOrEqual(5);
      // The same instances restarted always at once (no back-off ever): the rule rejects it.
      const atOnce: ContainerInstance[] = [];
      for (const [i, x] of instances.entries()) {
        const before = atOnce[i - 1];
        const shift = before?.finishedAtMs === undefined ? 0 : before.finishedAtMs + 500 - x.startedAtMs;
        const moved = { ...x, startedAtMs: x.startedAtMs + shift };
        if (x.finishedAtMs !== undefined) moved.finishedAtMs = x.finishedAtMs + shift;
        if (x.end?.by === 'kill') moved.end = { by: 'kill', cause: { ...cause, failingFromMs: moved.startedAtMs } };
        atOnce.push(moved);
      }
      expect(checkRestartRule({ container: 'app', restartPolicy: 'Always', instances: atOnce, endMs: forMs, resolutionMs: 1, slackMs: 1000 }).ok).toBe(false);
    });
  }
});
