/**
 * Presence rules, scoped by intent: a long-running container (regular or sidecar) of a pod
 * that is restarted forever should say when it is ready and when it is stuck; a batch pod
 * (Job, CronJob, `restartPolicy` Never/OnFailure) serves nobody and needs neither — the
 * mistake kubescape, Datree and Terrascan make (terrascan #767). Plain init containers
 * cannot have probes at all.
 */
import type { Rule, RuleFinding } from '../types.js';
import { isBatch, probesOf, who } from './probes.js';
import type { ContainerContext } from '../types.js';

/** Long-running containers only; `has` tells which probes it has. */
function presence(ctx: ContainerContext): Set<string> | undefined {
  if (ctx.role === 'init' || isBatch(ctx)) return undefined;
  return new Set(probesOf(ctx).map((p) => p.type));
}

export const probesMissing: Rule = {
  id: 'probes-missing',
  severity: 'warning',
  summary: 'A long-running container has no probe at all.',
  explain: `What: a container (or sidecar) of a long-running pod has no liveness, readiness or startup probe.
Why: without a readiness probe the container is Ready the moment its process starts, so a Service
sends it traffic while it is still loading; without a liveness probe a deadlocked process is never
restarted. Batch pods (Job, CronJob, restartPolicy Never/OnFailure) are not flagged: they serve
nobody (kube-score and Checkov skip them too; kubescape and Datree do not, terrascan #767).
Fix: add at least a readiness probe on the endpoint that says "I can serve", and a liveness probe
that only fails when a restart helps.
Example:
  readinessProbe:
    httpGet: { path: /ready, port: http }
  livenessProbe:
    httpGet: { path: /healthz, port: http }
    failureThreshold: 6`,
  equivalents: ['Kyverno require-pod-probes', 'Gatekeeper K8sRequiredProbes', 'Popeye POP-102'],
  check(ctx): RuleFinding[] {
    const has = presence(ctx);
    if (!has || has.size > 0) return [];
    return [{ path: [...ctx.path, 'name'], message: `${who(ctx)} has no liveness, readiness or startup probe` }];
  },
};

export const readinessProbeMissing: Rule = {
  id: 'readiness-probe-missing',
  severity: 'warning',
  summary: 'A long-running container has probes but no readiness probe.',
  explain: `What: a container of a long-running pod has a liveness or startup probe but no readiness probe.
Why: the kubelet then reports the container Ready as soon as it has started (after the startup
probe, if any), so traffic arrives before the app can serve it, and a container that cannot serve
for a while (overloaded, reconnecting) keeps receiving traffic until liveness kills it.
Not flagged on batch pods (Job, CronJob, restartPolicy Never/OnFailure) or plain init containers.
Fix: add a readiness probe; it may use the same endpoint as liveness with a lower failure budget.
Example:
  readinessProbe:
    httpGet: { path: /healthz, port: http }
    failureThreshold: 2`,
  equivalents: [
    'kube-linter no-readiness-probe',
    'kube-score pod-probes',
    'Polaris readinessProbeMissing',
    'Datree CONTAINERS_MISSING_READINESSPROBE_KEY',
    'Checkov CKV_K8S_9',
    'kubescape C-0018',
    'Popeye POP-104',
    'certsuite lifecycle-readiness-probe',
    'KICS a659f3b5',
    'Steampipe container_readiness_probe',
  ],
  check(ctx): RuleFinding[] {
    const has = presence(ctx);
    if (!has || has.size === 0 || has.has('readiness')) return [];
    return [{ path: [...ctx.path, 'name'], message: `${who(ctx)} has no readiness probe: it is Ready as soon as it has started` }];
  },
};

export const livenessProbeMissing: Rule = {
  id: 'liveness-probe-missing',
  severity: 'info',
  summary: 'A long-running container has probes but no liveness probe.',
  explain: `What: a container of a long-running pod has a readiness or startup probe but no liveness probe.
Why: a process that hangs without exiting (deadlock, stuck event loop) is taken out of service by
readiness but never restarted. This is only info: a liveness probe that fails for the wrong reason
(a slow dependency) does more harm than none, which is why kube-linter keeps its rule off by
default (stackrox/kube-linter #178).
Fix: add a liveness probe on an endpoint that checks only the process itself, with a failure
budget larger than readiness's.
Example:
  livenessProbe:
    httpGet: { path: /healthz, port: http }
    periodSeconds: 10
    failureThreshold: 6`,
  equivalents: [
    'kube-linter no-liveness-probe',
    'kube-score pod-probes',
    'Polaris livenessProbeMissing',
    'Datree CONTAINERS_MISSING_LIVENESSPROBE_KEY',
    'Checkov CKV_K8S_8',
    'kubescape C-0056',
    'Popeye POP-103',
    'certsuite lifecycle-liveness-probe',
    'KICS 5b6d53dd',
    'Terrascan AC-K8-OE-PO-L-0129',
    'Steampipe container_liveness_probe',
  ],
  check(ctx): RuleFinding[] {
    const has = presence(ctx);
    if (!has || has.size === 0 || has.has('liveness')) return [];
    return [{ path: [...ctx.path, 'name'], message: `${who(ctx)} has no liveness probe: a hung process is never restarted` }];
  },
};

export const startupProbeMissing: Rule = {
  id: 'startup-probe-missing',
  severity: 'info',
  summary: 'A liveness probe without a startup probe also limits how long the app may take to start.',
  explain: `What: a container has a liveness probe but no startup probe.
Why: without a startup probe the liveness probe runs from the start, so its failure budget
(initialDelaySeconds + failureThreshold × periodSeconds) is also the start-up budget: a start
slower than that (cold cache, slow node, throttled CPU) is killed and restarted in a loop
(kubernetes/kubernetes #27114; the budget numbers are in the timing rules). kube-linter declined
this rule (#505); certsuite requires a startup probe on every container.
Fix: add a startup probe on the same endpoint with a generous failureThreshold, and keep liveness
tight for the running app.
Example:
  startupProbe:
    httpGet: { path: /healthz, port: http }
    periodSeconds: 5
    failureThreshold: 60   # up to 5 minutes to start`,
  equivalents: ['certsuite lifecycle-startup-probe', 'kube-linter no-startup-probe (declined, #505)'],
  check(ctx): RuleFinding[] {
    const has = presence(ctx);
    if (!has || !has.has('liveness') || has.has('startup')) return [];
    return [{ path: [...ctx.path, 'livenessProbe'], message: `${who(ctx)} has a liveness probe but no startup probe: the liveness budget is also its start-up budget` }];
  },
};

export const presenceRules: Rule[] = [probesMissing, readinessProbeMissing, livenessProbeMissing, startupProbeMissing];
