/**
 * Lifecycle hooks against the kill they are part of: a `preStop` hook runs inside the kill's
 * grace period (kuberuntime_container.go `killContainer` → `executePreStopHook`), and a probe
 * kill's grace is often much shorter than the pod's.
 */
import type { ProbeType } from '../../prober/types.js';
import { terminationGracePeriodSeconds } from '../../prober/kill-policy.js';
import { formatSeconds, PROBE_FIELD } from '../budgets.js';
import type { Rule, RuleFinding } from '../types.js';
import { who } from './probes.js';

const KILLING_KINDS: readonly ProbeType[] = ['liveness', 'startup'];

export const preStopCutByKillGrace: Rule = {
  id: 'prestop-cut-by-kill-grace',
  severity: 'warning',
  summary: 'A preStop sleep as long as a probe kill\'s grace period: on a liveness or startup kill the hook is cut and SIGKILL follows 2 s after SIGTERM.',
  explain: `What: a container whose preStop hook sleeps at least as long as the grace period a liveness
or startup kill gives it (the probe's terminationGracePeriodSeconds, else the pod's).
Why: the kubelet waits for a preStop hook at most the grace period, takes the seconds it waited
off the grace, and gives the stop what is left but at least 2 s (killContainer,
executePreStopHook, minimumGracePeriodInSeconds). A sleep that fills the grace — a drain delay
sized for rolling updates next to a short probe-level grace — means every probe kill sends
SIGTERM at the grace's end and SIGKILL 2 s later: the graceful shutdown the sleep waits for
never gets its time. (Validation only checks the sleep against the pod's grace.)
Fix: give the probe a terminationGracePeriodSeconds of at least the sleep plus what the app needs
after SIGTERM, or shorten the sleep.
Example:
  terminationGracePeriodSeconds: 60
  containers:
  - name: app
    lifecycle:
      preStop: { sleep: { seconds: 15 } }
    livenessProbe:
      httpGet: { path: /healthz, port: 8080 }
      terminationGracePeriodSeconds: 30`,
  check(ctx): RuleFinding[] {
    const sleep = ctx.container.lifecycle?.preStop?.sleep;
    if (ctx.role === 'init' || !sleep) return [];
    const findings: RuleFinding[] = [];
    for (const kind of KILLING_KINDS) {
      const probe = ctx.container[PROBE_FIELD[kind]];
      if (!probe) continue;
      const grace = terminationGracePeriodSeconds(ctx.pod, ctx.container, kind);
      if (grace <= 0 || sleep.seconds < grace) continue;
      const own = probe.terminationGracePeriodSeconds !== undefined && probe.terminationGracePeriodSeconds !== null;
      findings.push({
        path: [...ctx.path, 'lifecycle', 'preStop', 'sleep', 'seconds'],
        message: `${who(ctx)} sleeps ${formatSeconds(sleep.seconds)} in its preStop hook, but a ${kind} kill gives it ${formatSeconds(grace)} (${own ? `${PROBE_FIELD[kind]}.terminationGracePeriodSeconds` : "the pod's terminationGracePeriodSeconds"}): the kubelet stops waiting for the hook after ${formatSeconds(grace)}, then SIGTERM, and SIGKILL 2s later; give the ${kind} probe a terminationGracePeriodSeconds of at least ${sleep.seconds} plus what the app needs after SIGTERM, or shorten the sleep`,
      });
    }
    return findings;
  },
};

export const lifecycleRules: Rule[] = [preStopCutByKillGrace];
