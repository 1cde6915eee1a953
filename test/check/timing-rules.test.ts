import { describe, expect, it } from 'vitest';
import { setPodDefaults } from '../../src/api/defaults.js';
import { formatFieldPath, parseManifestDocuments, type FieldPath } from '../../src/api/documents.js';
import { podsOf } from '../../src/api/manifest.js';
import type { Container, Probe } from '../../src/api/types.js';
import { computeBudget } from '../../src/check/budgets.js';
import { timingRules } from '../../src/check/rules/timing.js';
import type { ContainerContext, ContainerRole, Rule, Severity } from '../../src/check/types.js';

interface Seen {
  container: string;
  severity: Severity;
  field: string;
  message: string;
}

/** Runs one rule over every container of `object` (a manifest object, given as JSON), as the runner does. */
function check(ruleId: string, object: Record<string, unknown>, startupTimes: Record<string, number> = {}, measuredP99: Record<string, number> = {}): Seen[] {
  const rule = timingRules.find((r) => r.id === ruleId) as Rule;
  expect(rule, ruleId).toBeDefined();
  const load = parseManifestDocuments(JSON.stringify(object), 'test.yaml');
  const { pods, problems } = podsOf(load.objects);
  expect([...load.problems, ...problems]).toEqual([]);
  const out: Seen[] = [];
  for (const { pod: raw, object: manifest, templatePath } of pods) {
    const pod = setPodDefaults(raw);
    const spec: FieldPath = [...templatePath, 'spec'];
    const containers: { container: Container; role: ContainerRole; path: FieldPath }[] = [
      ...(pod.spec?.initContainers ?? []).map((container, i) => ({
        container,
        role: (container.restartPolicy === 'Always' ? 'sidecar' : 'init') as ContainerRole,
        path: [...spec, 'initContainers', i],
      })),
      ...(pod.spec?.containers ?? []).map((container, i) => ({ container, role: 'container' as ContainerRole, path: [...spec, 'containers', i] })),
    ];
    for (const { container, role, path } of containers) {
      const ctx: ContainerContext = {
        object: manifest,
        pod,
        container,
        role,
        path,
        budget: computeBudget(manifest, pod, container, role),
        options: { startupTimes: new Map(Object.entries(startupTimes)), measuredP99: new Map(Object.entries(measuredP99)) },
      };
      for (const f of rule.check(ctx)) {
        out.push({ container: container.name, severity: f.severity ?? rule.severity, field: formatFieldPath(f.path), message: f.message });
      }
    }
  }
  return out;
}

const http: Probe = { httpGet: { path: '/healthz', port: 8080 } };

function deployment(containers: Container[], extra: { initContainers?: Container[]; spec?: Record<string, unknown> } = {}): Record<string, unknown> {
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: 'web' },
    spec: {
      ...extra.spec,
      selector: { matchLabels: { app: 'web' } },
      template: {
        metadata: { labels: { app: 'web' } },
        spec: { ...(extra.initContainers ? { initContainers: extra.initContainers } : {}), containers },
      },
    },
  };
}

function pod(containers: Container[], spec: Record<string, unknown> = {}): Record<string, unknown> {
  return { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p' }, spec: { ...spec, containers } };
}

const app = (probes: Partial<Container> = {}): Container => ({ name: 'app', image: 'app:1', ...probes });

describe('every timing rule', () => {
  it('has a unique kebab-case id, a summary and explain text with what, why, fix and an example', () => {
    const ids = timingRules.map((r) => r.id);
    expect(new Set(ids).size).toBe(ids.length);
    for (const rule of timingRules) {
      expect(rule.id).toMatch(/^[a-z]+(?:-[a-z]+)*$/);
      expect(rule.summary.length).toBeGreaterThan(20);
      for (const part of ['What:', 'Why:', 'Fix:', 'Example']) expect(rule.explain, `${rule.id} ${part}`).toContain(part);
    }
  });

  it('never reports on plain init containers (the kubelet runs no probes there)', () => {
    const init: Container = { name: 'migrate', image: 'm:1', livenessProbe: { ...http, periodSeconds: 1, timeoutSeconds: 5 } };
    for (const rule of timingRules) {
      expect(check(rule.id, pod([app()], { initContainers: [init], restartPolicy: 'Never' }), { migrate: 500 })).toEqual([]);
    }
  });
});

describe('startup-time-exceeds-budget', () => {
  it('error with the numbers and the fix when every start is killed (the issue example: 40s vs liveness 3 × 10s)', () => {
    const seen = check('startup-time-exceeds-budget', deployment([app({ livenessProbe: http })]), { app: 40 });
    expect(seen).toEqual([
      {
        container: 'app',
        severity: 'error',
        field: 'spec.template.spec.containers[0].livenessProbe',
        message:
          "app needs 40s to start; the kubelet kills it after 30s at the latest (liveness 3 × 10s): every start ends in a kill and the pod crash-loops (killed and restarted at once at 30s, 1m0s, 1m30s and 2m0s — each run of 30s is no shorter than the back-off step, which counts from the exit before the killed one (kubernetes#22240) — then CrashLoopBackOff from the kill at 2m30s: restarted no sooner than 3m10s (step 40s); after that a kill restarts at once only when it comes a full step (1m20s, 2m40s, then 5m0s) after the kill before it, else a step after itself, and the pod worker's requeue can add up to half the remaining step); add a startupProbe with failureThreshold × periodSeconds ≥ 50s (start-up 40s + one period, as the first probe can land up to a period late), e.g. failureThreshold: 5, periodSeconds: 10",
      },
    ]);
  });

  it('warning when only some starts are killed (the start-up falls within the last period)', () => {
    const [seen] = check('startup-time-exceeds-budget', deployment([app({ livenessProbe: http })]), { app: 25 });
    expect(seen?.severity).toBe('warning');
    expect(seen?.message).toContain('between 20s and 30s (liveness 3 × 10s)');
    // Exactly the budget survives only in the most favourable phase: still a warning, not an error.
    expect(check('startup-time-exceeds-budget', deployment([app({ livenessProbe: http })]), { app: 30 })[0]?.severity).toBe('warning');
    expect(check('startup-time-exceeds-budget', deployment([app({ livenessProbe: http })]), { app: 30.5 })[0]?.severity).toBe('error');
  });

  it('with a startup probe: raise its failureThreshold, counting initialDelaySeconds', () => {
    const startupProbe: Probe = { ...http, initialDelaySeconds: 10, failureThreshold: 3 };
    const [seen] = check('startup-time-exceeds-budget', deployment([app({ startupProbe, livenessProbe: http })]), { app: 90 });
    expect(seen?.field).toBe('spec.template.spec.containers[0].startupProbe.failureThreshold');
    expect(seen?.message).toContain('kills it after 40s at the latest (startup initialDelaySeconds 10 + 3 × 10s)');
    expect(seen?.message).toContain('raise startupProbe.failureThreshold to 9 (initialDelaySeconds 10 + (9 − 1) × 10s ≥ 1m30s');
  });

  it('passes when the start-up fits, when the fix is applied, and without --startup-time', () => {
    expect(check('startup-time-exceeds-budget', deployment([app({ livenessProbe: http })]), { app: 20 })).toEqual([]);
    const fixed = app({ startupProbe: { ...http, failureThreshold: 5 }, livenessProbe: http });
    expect(check('startup-time-exceeds-budget', deployment([fixed]), { app: 40 })).toEqual([]);
    expect(check('startup-time-exceeds-budget', deployment([app({ livenessProbe: http })]))).toEqual([]);
    expect(check('startup-time-exceeds-budget', deployment([app({ readinessProbe: http })]), { app: 4000 })).toEqual([]);
  });
});

describe('liveness-delay-as-startup', () => {
  it('fails when liveness guesses the start-up with initialDelaySeconds and there is no startup probe, with the window', () => {
    const seen = check('liveness-delay-as-startup', deployment([app({ livenessProbe: { ...http, initialDelaySeconds: 10 } })]));
    expect(seen).toEqual([
      {
        container: 'app',
        severity: 'warning',
        field: 'spec.template.spec.containers[0].livenessProbe.initialDelaySeconds',
        message:
          'container "app" has no startupProbe, so its liveness probe times the start-up with initialDelaySeconds 10 as a guess: an app not answering within 40s of its start is always killed, and one needing more than 29s on some starts (liveness initialDelaySeconds 10 + 3 × 10s); add a startupProbe with failureThreshold × periodSeconds ≥ the slowest start-up + one period and drop initialDelaySeconds, or pass --startup-time app=DURATION to check it',
      },
    ]);
  });

  it('passes with a startup probe, without a delay, without liveness, or when --startup-time checks it in numbers', () => {
    const delayed = { ...http, initialDelaySeconds: 10 };
    expect(check('liveness-delay-as-startup', deployment([app({ livenessProbe: delayed, startupProbe: http })]))).toEqual([]);
    expect(check('liveness-delay-as-startup', deployment([app({ livenessProbe: http })]))).toEqual([]);
    expect(check('liveness-delay-as-startup', deployment([app({ readinessProbe: delayed })]))).toEqual([]);
    expect(check('liveness-delay-as-startup', deployment([app({ livenessProbe: delayed })]), { app: 5 })).toEqual([]);
  });
});

describe('liveness-before-readiness', () => {
  it('is info for the same timing on both (they trip together, the order set by the phase), with the numbers and the threshold that orders them', () => {
    const seen = check('liveness-before-readiness', deployment([app({ livenessProbe: http, readinessProbe: http })]));
    expect(seen).toHaveLength(1);
    expect(seen[0]?.severity).toBe('info');
    expect(seen[0]?.message).toContain('trip at about the same time (liveness after 21s to 31s: liveness 2 × 10s + timeout 1s at the earliest; readiness after 21s to 31s)');
    expect(seen[0]?.message).toContain('set the liveness failureThreshold to 4');
  });

  it('is a warning when liveness is set to act first, with the numbers and the threshold that fixes it', () => {
    const seen = check('liveness-before-readiness', deployment([app({ livenessProbe: { ...http, failureThreshold: 2 }, readinessProbe: http })]));
    expect(seen).toHaveLength(1);
    expect(seen[0]?.severity).toBe('warning');
    expect(seen[0]?.message).toContain('can fail after 11s (liveness 1 × 10s + timeout 1s');
    expect(seen[0]?.message).toContain('can take up to 31s (readiness 3 × 10s + timeout 1s');
    expect(seen[0]?.message).toContain('set the liveness failureThreshold to 4 or more');
  });

  it('passes with that threshold (same endpoint: the documented safe pattern, kube-score #339)', () => {
    const live = { ...http, failureThreshold: 4 };
    expect(check('liveness-before-readiness', deployment([app({ livenessProbe: live, readinessProbe: http })]))).toEqual([]);
    expect(check('liveness-before-readiness', deployment([app({ livenessProbe: http })]))).toEqual([]);
  });

  it('passes for a tcpSocket liveness probe: a hung app still accepts connections, so it never fails on a hang', () => {
    const tcp: Probe = { tcpSocket: { port: 8080 }, failureThreshold: 1 };
    expect(check('liveness-before-readiness', deployment([app({ livenessProbe: tcp, readinessProbe: http })]))).toEqual([]);
    expect(check('liveness-before-readiness', deployment([app({ livenessProbe: tcp, readinessProbe: tcp })]))).toEqual([]);
  });

  it('says so (info) when readiness is a tcpSocket probe (it never takes a hung app out of service) and liveness kills', () => {
    const seen = check('liveness-before-readiness', deployment([app({ livenessProbe: { ...http, failureThreshold: 6 }, readinessProbe: { tcpSocket: { port: 8080 } } })]));
    expect(seen).toHaveLength(1);
    expect(seen[0]?.severity).toBe('info');
    expect(seen[0]?.field).toBe('spec.template.spec.containers[0].readinessProbe.tcpSocket');
    expect(seen[0]?.message).toContain('a hung app still passes');
    expect(seen[0]?.message).toContain('restarts it after up to 1m1s (liveness 6 × 10s + timeout 1s)');
  });
});

describe('probe-timeout-not-below-period', () => {
  it('fails for period 1, timeout 15, failureThreshold 60 (kyverno/policies PR #1500): 15 minutes, not one', () => {
    const seen = check('probe-timeout-not-below-period', deployment([app({ livenessProbe: { ...http, periodSeconds: 1, timeoutSeconds: 15, failureThreshold: 60 } })]));
    expect(seen).toEqual([
      {
        container: 'app',
        severity: 'warning',
        field: 'spec.template.spec.containers[0].livenessProbe.timeoutSeconds',
        message:
          'liveness probe of container "app": timeoutSeconds 15 > periodSeconds 1: a probe that times out is followed at once by the next, so a hung app is probed every 15s, and 60 failures take up to 15m1s to count (liveness period 1s + 60 × timeout 15s), against up to 1m1s with timeoutSeconds 1; set timeoutSeconds to 1 or less',
      },
    ]);
  });

  it('passes with the timeout below or equal to the period (linkerd T = P = 1, calico T = P = 10: the next tick comes anyway)', () => {
    expect(check('probe-timeout-not-below-period', deployment([app({ livenessProbe: { ...http, timeoutSeconds: 9 } })]))).toEqual([]);
    expect(check('probe-timeout-not-below-period', deployment([app({ livenessProbe: { ...http, periodSeconds: 1, timeoutSeconds: 1 } })]))).toEqual([]);
    expect(check('probe-timeout-not-below-period', deployment([app({ livenessProbe: { ...http, periodSeconds: 10, timeoutSeconds: 10, failureThreshold: 6 } })]))).toEqual([]);
  });

  it('passes for a tcpSocket probe: a hang does not time it out', () => {
    expect(check('probe-timeout-not-below-period', deployment([app({ livenessProbe: { tcpSocket: { port: 8080 }, periodSeconds: 1, timeoutSeconds: 5 } })]))).toEqual([]);
  });
});

describe('exec-probe-default-timeout', () => {
  it('fails for an exec probe at the 1 s default, on sidecars too', () => {
    const exec: Probe = { exec: { command: ['pg_isready'] } };
    const sidecar: Container = { name: 'proxy', image: 'p:1', restartPolicy: 'Always', readinessProbe: { ...exec, timeoutSeconds: 1 } };
    const seen = check('exec-probe-default-timeout', deployment([app({ livenessProbe: exec })], { initContainers: [sidecar] }));
    expect(seen.map((s) => [s.container, s.field])).toEqual([
      ['proxy', 'spec.template.spec.initContainers[0].readinessProbe.timeoutSeconds'],
      ['app', 'spec.template.spec.containers[0].livenessProbe.timeoutSeconds'],
    ]);
    expect(seen[1]?.message).toContain('timeoutSeconds 1 (the default)');
    expect(seen[1]?.message).toContain('set timeoutSeconds: 5');
    // The sidecar writes timeoutSeconds: 1 itself: not "the default", though the value is the same.
    expect(seen[0]?.message).toContain('runs with timeoutSeconds 1: starting a process');
    expect(seen[0]?.message).not.toContain('(the default)');
  });

  it('passes with a longer timeout, or for handlers the kubelet runs itself', () => {
    expect(check('exec-probe-default-timeout', deployment([app({ livenessProbe: { exec: { command: ['true'] }, timeoutSeconds: 5 } })]))).toEqual([]);
    expect(check('exec-probe-default-timeout', deployment([app({ livenessProbe: http })]))).toEqual([]);
  });
});

describe('startup-exceeds-progress-deadline', () => {
  const slow = app({ startupProbe: { ...http, failureThreshold: 90 } });

  it('fails when the startup budget exceeds the default 600 s, counting the sidecars before it', () => {
    const sidecar: Container = { name: 'proxy', image: 'p:1', restartPolicy: 'Always', startupProbe: { tcpSocket: { port: 15021 }, periodSeconds: 1, failureThreshold: 30 } };
    const seen = check('startup-exceeds-progress-deadline', deployment([slow], { initContainers: [sidecar] }));
    expect(seen).toHaveLength(1);
    expect(seen[0]?.field).toBe('spec.template.spec.containers[0].startupProbe');
    expect(seen[0]?.severity).toBe('warning');
    expect(seen[0]?.message).toContain('up to 15m31s before the kubelet kills and restarts it (sidecar "proxy" 31s + startup 90 × 10s = 15m0s)');
    expect(seen[0]?.message).toContain('makes the Deployment report ProgressDeadlineExceeded (the rollout is marked failed) while the pod is still allowed to start');
    expect(seen[0]?.message).toContain("progressDeadlineSeconds 600 (the default)");
    expect(seen[0]?.message).toContain('set progressDeadlineSeconds: 931 or more');
  });

  it("is info when the excess is an injected sidecar's default startup probe (istio-proxy 600 × 1 s), which the user did not write", () => {
    const istio: Container = {
      name: 'istio-proxy',
      image: 'docker.io/istio/proxyv2:1.24.0',
      restartPolicy: 'Always',
      startupProbe: { httpGet: { path: '/healthz/ready', port: 15021 }, periodSeconds: 1, timeoutSeconds: 3, failureThreshold: 600 },
    };
    const seen = check('startup-exceeds-progress-deadline', deployment([app({ livenessProbe: http })], { initContainers: [istio] }));
    expect(seen).toHaveLength(1);
    expect(seen[0]?.severity).toBe('info');
    expect(seen[0]?.message).toContain('"istio-proxy", injected by Istio with its default startup probe, which you did not write');
    // The app's own slow start-up beside it is the user's: a warning.
    const own = check('startup-exceeds-progress-deadline', deployment([slow], { initContainers: [istio] }));
    expect(own[0]?.severity).toBe('warning');
  });

  it('points at progressDeadlineSeconds when it is set too low', () => {
    const seen = check('startup-exceeds-progress-deadline', deployment([app({ startupProbe: { ...http, failureThreshold: 40 } })], { spec: { progressDeadlineSeconds: 300 } }));
    expect(seen[0]?.field).toBe('spec.progressDeadlineSeconds');
  });

  it('passes under the deadline, with a raised deadline, and for kinds without one', () => {
    expect(check('startup-exceeds-progress-deadline', deployment([app({ startupProbe: { ...http, failureThreshold: 60 } })]))).toEqual([]);
    expect(check('startup-exceeds-progress-deadline', deployment([slow], { spec: { progressDeadlineSeconds: 960 } }))).toEqual([]);
    expect(check('startup-exceeds-progress-deadline', pod([slow]))).toEqual([]);
  });
});

describe('startup-hang-unnoticed', () => {
  it('fails when a hung start-up is killed only after an hour', () => {
    const seen = check('startup-hang-unnoticed', deployment([app({ startupProbe: { ...http, failureThreshold: 360 } })]));
    expect(seen[0]?.message).toContain('killed only after up to 1h0m1s (startup 360 × 10s + timeout 1s');
    expect(seen[0]?.field).toBe('spec.template.spec.containers[0].startupProbe.failureThreshold');
  });

  it('counts a tcpSocket startup probe as refused, not timing out: a hung start-up never holds its connection', () => {
    // period 1, timeout 10, 400 failures: 400 × 10s = 1h6m40s if it timed out, 6m40s as it is refused.
    const tcp: Probe = { tcpSocket: { port: 8080 }, periodSeconds: 1, timeoutSeconds: 10, failureThreshold: 400 };
    expect(check('startup-hang-unnoticed', deployment([app({ startupProbe: tcp })]))).toEqual([]);
    expect(check('startup-hang-unnoticed', deployment([app({ startupProbe: { ...tcp, tcpSocket: undefined, httpGet: { path: '/', port: 8080 } } })]))).toHaveLength(1);
  });

  it('passes for a budget sized to a real start-up', () => {
    expect(check('startup-hang-unnoticed', deployment([app({ startupProbe: { ...http, failureThreshold: 30 } })]))).toEqual([]);
  });
});

describe('hang-kill-unnoticed', () => {
  it('fails when the pod grace makes a liveness kill take an hour (kubernetes #64715)', () => {
    const seen = check('hang-kill-unnoticed', pod([app({ livenessProbe: http })], { terminationGracePeriodSeconds: 3600 }));
    expect(seen).toEqual([
      {
        container: 'app',
        severity: 'warning',
        field: 'spec.containers[0].livenessProbe',
        message:
          "after a hang, container \"app\" is gone only after up to 1h0m31s: liveness fails after up to 31s (liveness 3 × 10s + timeout 1s), then the kill waits 1h0m0s for SIGKILL (the pod's terminationGracePeriodSeconds; a hung app ignores SIGTERM, kubernetes/kubernetes #64715); set livenessProbe.terminationGracePeriodSeconds, e.g. 30",
      },
    ]);
  });

  it('counts a preStop hook: it may take the whole grace, and the stop 2 s more (killContainer)', () => {
    const seen = check('hang-kill-unnoticed', pod([app({ livenessProbe: http, lifecycle: { preStop: { exec: { command: ['drain'] } } } })], { terminationGracePeriodSeconds: 3600 }));
    expect(seen[0]?.message).toContain('is gone only after up to 1h0m33s');
    expect(seen[0]?.message).toContain('then the kill waits 1h0m2s for SIGKILL (the pod\'s terminationGracePeriodSeconds, with up to 2s more after its preStop hook;');
  });

  it('passes with the probe-level grace (KEP-2238) or a normal pod grace', () => {
    const live = { ...http, terminationGracePeriodSeconds: 30 };
    expect(check('hang-kill-unnoticed', pod([app({ livenessProbe: live })], { terminationGracePeriodSeconds: 3600 }))).toEqual([]);
    expect(check('hang-kill-unnoticed', pod([app({ livenessProbe: http })]))).toEqual([]);
  });
});

describe('liveness-ends-pod', () => {
  it('fails for liveness under restartPolicy Never and OnFailure (kubernetes #109537)', () => {
    const never = check('liveness-ends-pod', pod([app({ livenessProbe: http })], { restartPolicy: 'Never' }));
    expect(never[0]?.message).toContain('restartPolicy Never');
    expect(never[0]?.message).toContain('#109537');
    const job = {
      apiVersion: 'batch/v1',
      kind: 'Job',
      metadata: { name: 'j' },
      spec: { template: { spec: { restartPolicy: 'OnFailure', containers: [app({ startupProbe: http })] } } },
    };
    const onFailure = check('liveness-ends-pod', job);
    expect(onFailure[0]?.field).toBe('spec.template.spec.containers[0].startupProbe');
    expect(onFailure[0]?.message).toContain('exits 0 on SIGTERM ends the pod Succeeded');
  });

  it('passes under Always, for sidecars (always restarted) and for a container-level restartPolicy Always', () => {
    expect(check('liveness-ends-pod', deployment([app({ livenessProbe: http })]))).toEqual([]);
    const sidecar: Container = { name: 'proxy', image: 'p:1', restartPolicy: 'Always', livenessProbe: http };
    expect(check('liveness-ends-pod', pod([app()], { restartPolicy: 'Never', initContainers: [sidecar] }))).toEqual([]);
    expect(check('liveness-ends-pod', pod([app({ restartPolicy: 'Always', livenessProbe: http })], { restartPolicy: 'Never' }))).toEqual([]);
  });
});

describe('sidecar-startup-chain', () => {
  it('reports the chain once per pod, with each sidecar budget', () => {
    const sidecars: Container[] = [
      { name: 'proxy', image: 'p:1', restartPolicy: 'Always', startupProbe: { tcpSocket: { port: 15021 }, periodSeconds: 1, failureThreshold: 30 } },
      { name: 'logs', image: 'l:1', restartPolicy: 'Always', startupProbe: { ...http, periodSeconds: 10, failureThreshold: 6 } },
    ];
    const seen = check('sidecar-startup-chain', deployment([app(), { name: 'worker', image: 'w:1' }], { initContainers: sidecars }));
    expect(seen).toEqual([
      {
        container: 'app',
        severity: 'info',
        field: 'spec.template.spec.initContainers[0].startupProbe',
        message:
          'the containers of this pod start only after its sidecars have started, one after another: up to 1m31s ("proxy" ≤ 31s + "logs" ≤ 1m0s, their startup budgets) before container "app" even starts, more if a sidecar is killed and restarted',
      },
    ]);
  });

  it('passes when sidecars have no startup probe (started as soon as they run)', () => {
    const sidecar: Container = { name: 'proxy', image: 'p:1', restartPolicy: 'Always', livenessProbe: http };
    expect(check('sidecar-startup-chain', deployment([app()], { initContainers: [sidecar] }))).toEqual([]);
  });
});

describe('startup-unhealthy-events', () => {
  it('counts the Warning events of a normal start: ceil((startup − initialDelay) / period)', () => {
    const seen = check('startup-unhealthy-events', deployment([app({ startupProbe: { ...http, periodSeconds: 2, failureThreshold: 30 }, readinessProbe: http })]), { app: 20 });
    expect(seen).toEqual([
      {
        container: 'app',
        severity: 'info',
        field: 'spec.template.spec.containers[0].startupProbe',
        message:
          'a normal start of app (20s) emits up to 10 Warning Unhealthy events (startup 10 = ceil((20 − 0) / 2)): probes fail until the app answers; raise initialDelaySeconds towards the start-up time or lengthen periodSeconds for fewer',
      },
    ]);
  });

  it('without a startup probe, liveness and readiness both fail until the app answers', () => {
    const [seen] = check('startup-unhealthy-events', deployment([app({ livenessProbe: http, readinessProbe: { ...http, periodSeconds: 5 } })]), { app: 12 });
    expect(seen?.message).toContain('up to 5 Warning Unhealthy events (liveness 2 = ceil((12 − 0) / 10), readiness 3 = ceil((12 − 0) / 5))');
    expect(seen?.field).toBe('spec.template.spec.containers[0].readinessProbe');
  });

  it('passes when the first probe comes after the start-up, without --startup-time, and when the start is killed anyway', () => {
    const late = app({ startupProbe: { ...http, initialDelaySeconds: 20, periodSeconds: 5, failureThreshold: 12 } });
    expect(check('startup-unhealthy-events', deployment([late]), { app: 20 })).toEqual([]);
    expect(check('startup-unhealthy-events', deployment([app({ startupProbe: http })]))).toEqual([]);
    expect(check('startup-unhealthy-events', deployment([app({ livenessProbe: http })]), { app: 45 })).toEqual([]);
  });
});

describe('probe-near-timeout', () => {
  it('fails when a measured p99 is within 20 % of the timeout, naming the numbers and the fix', () => {
    const seen = check('probe-near-timeout', deployment([app({ livenessProbe: { ...http, timeoutSeconds: 1 }, readinessProbe: { ...http, timeoutSeconds: 2 } })]), {}, {
      'app.liveness': 0.85,
      'app.readiness': 1.5,
    });
    expect(seen).toEqual([
      {
        container: 'app',
        severity: 'warning',
        field: 'spec.template.spec.containers[0].livenessProbe.timeoutSeconds',
        message:
          'the liveness probe of container "app" took 850ms at p99 when measured, 85% of its timeoutSeconds 1: on a busier node it times out, and a timeout is a failure that restarts it; set timeoutSeconds: 2',
      },
    ]);
  });

  it('passes below 80 % of the timeout, and without measurements', () => {
    const object = deployment([app({ livenessProbe: { ...http, timeoutSeconds: 1 } })]);
    expect(check('probe-near-timeout', object, {}, { 'app.liveness': 0.79 })).toEqual([]);
    expect(check('probe-near-timeout', object)).toEqual([]);
  });
});
