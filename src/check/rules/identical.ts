/**
 * Identical liveness and readiness probes, judged by behaviour: the same check (ports
 * resolved, so two named ports are not conflated) with the same timing and failure budget
 * means liveness kills the container at the moment readiness takes it out of service, so
 * readiness never gets to do its job. The same endpoint with a larger liveness budget is
 * the documented safe pattern, not a finding (zegl/kube-score #339).
 */
import type { Container, Probe } from '../../api/types.js';
import { failsOnHang, failureWindow, formatSeconds } from '../budgets.js';
import type { Rule, RuleFinding } from '../types.js';
import { handlerOf, resolvePortName, who } from './probes.js';

/** What the probe does, as a comparable key; undefined when it has no handler. */
export function handlerKey(probe: Probe, container: Container): string | undefined {
  const port = (p: number | string | undefined): number | string | undefined =>
    typeof p === 'string' ? (resolvePortName(container, p) ?? `name:${p}`) : p;
  switch (handlerOf(probe)) {
    case 'exec':
      return JSON.stringify(['exec', probe.exec?.command ?? []]);
    case 'httpGet': {
      const h = probe.httpGet;
      const headers = (h?.httpHeaders ?? []).map((x) => [(x.name ?? '').toLowerCase(), x.value ?? '']).sort();
      return JSON.stringify(['http', h?.scheme ?? 'HTTP', h?.host ?? '', port(h?.port), h?.path ?? '/', headers]);
    }
    case 'tcpSocket':
      return JSON.stringify(['tcp', probe.tcpSocket?.host ?? '', port(probe.tcpSocket?.port)]);
    case 'grpc':
      return JSON.stringify(['grpc', probe.grpc?.port, probe.grpc?.service ?? '']);
    default:
      return undefined;
  }
}

/** When and how fast the probe fails: the fields that decide when a failing check trips it. */
function failureTiming(probe: Probe): string {
  return JSON.stringify([probe.initialDelaySeconds ?? 0, probe.periodSeconds, probe.timeoutSeconds, probe.failureThreshold]);
}

export const probesIdentical: Rule = {
  id: 'probes-identical',
  severity: 'warning',
  summary: 'Liveness and readiness probes behave identically: liveness kills when readiness would take the container out of service.',
  explain: `What: the liveness and readiness probes run the same check (same handler, port, path or
command) with the same initialDelaySeconds, periodSeconds, timeoutSeconds and failureThreshold.
Why: both trip on the same failed attempt, so the container is restarted at the very moment it
is taken out of service: a temporary overload that readiness should ride out ends in a restart
(and with every replica overloaded, in restarts of all of them). Using the same endpoint is fine
when liveness tolerates more failures — that is the pattern the Kubernetes docs recommend, and
kube-score flags it wrongly because it compares the handler only (zegl/kube-score #339, #296).
Kyverno compares whole objects, so it misses identical probes that differ only in a default.
Fix: give liveness a larger failure budget (failureThreshold × periodSeconds) than readiness, or
a cheaper endpoint that only checks the process.
Example:
  readinessProbe:
    httpGet: { path: /healthz, port: http }
    failureThreshold: 3
  livenessProbe:
    httpGet: { path: /healthz, port: http }
    failureThreshold: 10`,
  equivalents: ['kube-score pod-probes-identical', 'Kyverno validate-probes (ensure-probes-different)', 'kube-linter #375 (requested)'],
  check(ctx): RuleFinding[] {
    if (ctx.role === 'init') return [];
    const { livenessProbe: live, readinessProbe: ready } = ctx.container;
    if (!live || !ready) return [];
    const key = handlerKey(live, ctx.container);
    if (key === undefined || key !== handlerKey(ready, ctx.container)) return [];
    if (failureTiming(live) !== failureTiming(ready)) return [];
    const budget = (live.failureThreshold ?? 0) * (live.periodSeconds ?? 0);
    // The fact liveness-before-readiness would state (folded here, see fold.ts): when each trips after a hang.
    const hang = failsOnHang(live)
      ? (() => {
          const w = failureWindow(live, 'timeout', false);
          return `; after a hang both trip after ${formatSeconds(w.earliestSeconds)} to ${formatSeconds(w.latestSeconds)}, in an order set by when each one's first failing probe lands`;
        })()
      : '';
    return [{
      path: [...ctx.path, 'livenessProbe'],
      message: `the liveness and readiness probes of ${who(ctx)} are identical (same check, ${live.failureThreshold} failures × ${live.periodSeconds}s = ${budget}s): a failure that takes it out of service also restarts it${hang}; give liveness a larger failureThreshold`,
    }];
  },
};

export const identicalRules: Rule[] = [probesIdentical];
