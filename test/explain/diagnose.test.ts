/**
 * The diagnosis core on pods and events written the way the API shows them (the shapes of
 * test/oracle/golden's real kubelet records): each cause from its evidence, the numbers from
 * check's budgets, and what is said when the events are gone. The real kubelet's incidents are
 * test/explain/real-kubelet.test.ts; these cover the edges a live cluster cannot produce on demand
 * (expired events, events.k8s.io, spam-filtered counts).
 */
import { describe, expect, it } from 'vitest';
import { setPodDefaults } from '../../src/api/defaults.js';
import type { Container, ContainerStatus, Pod } from '../../src/api/types.js';
import { startupGuard } from '../../src/check/budgets.js';
import { explainPod } from '../../src/explain/explain.js';
import { toPatch, toText } from '../../src/explain/output.js';

const T0 = Date.parse('2026-11-29T00:00:00Z');
const at = (s: number): string => new Date(T0 + s * 1000).toISOString().replace(/\.000Z$/, 'Z');

function pod(container: Container, status: Partial<ContainerStatus>, extra: { meta?: Pod['metadata']; conditions?: NonNullable<Pod['status']>['conditions'] } = {}): Pod {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'web', namespace: 'shop', uid: 'u1', ...extra.meta },
    spec: { containers: [container], terminationGracePeriodSeconds: 30 },
    status: {
      phase: 'Running',
      conditions: extra.conditions ?? [],
      containerStatuses: [{ name: container.name, image: container.image ?? 'img', imageID: '', ready: false, restartCount: 0, ...status } as ContainerStatus],
    },
  };
}

function event(reason: string, message: string, first: number, last = first, count = 1, type = 'Warning', container = 'app'): Record<string, unknown> {
  return {
    apiVersion: 'v1',
    kind: 'Event',
    metadata: { name: `web.${reason}.${first}`, namespace: 'shop' },
    involvedObject: { kind: 'Pod', name: 'web', namespace: 'shop', uid: 'u1', apiVersion: 'v1', fieldPath: `spec.containers{${container}}` },
    reason,
    message,
    type,
    count,
    firstTimestamp: at(first),
    lastTimestamp: at(last),
    source: { component: 'kubelet', host: 'node-1' },
  };
}

const liveness = { httpGet: { path: '/healthz', port: 8080 }, periodSeconds: 10, failureThreshold: 3 };
const app: Container = { name: 'app', image: 'api:1', ports: [{ name: 'http', containerPort: 8080 }], livenessProbe: liveness };

describe('explain: probe kills', () => {
  it('slow start: killed ~31 s after each start with connection refused, the probes allow what check computes', () => {
    const p = pod(app, {
      restartCount: 3,
      state: { waiting: { reason: 'CrashLoopBackOff', message: 'back-off 20s restarting failed container=app pod=web_shop(u1)' } },
      lastState: { terminated: { exitCode: 143, reason: 'Error', startedAt: at(100), finishedAt: at(131) } },
    });
    const events = [
      event('Started', 'Container started', 0, 100, 4, 'Normal'),
      event('Unhealthy', 'Liveness probe failed: Get "http://10.0.0.5:8080/healthz": dial tcp 10.0.0.5:8080: connect: connection refused', 11, 131, 12),
      event('Killing', 'Container app failed liveness probe, will be restarted', 31, 131, 4, 'Normal'),
      event('BackOff', 'Back-off restarting failed container app in pod web_shop(u1)', 62, 135, 3),
    ];
    const x = explainPod(p, { kind: 'EventList', items: events }, { nowMs: T0 + 140_000 });
    const d = x.diagnoses[0];
    expect(d?.cause).toBe('slow-start-liveness');
    const budget = startupGuard(setPodDefaults(p).spec?.containers[0] as Container)?.budgetSeconds;
    expect(d?.numbers).toMatchObject({ kills: 4, killAgeSeconds: 31, budgetSeconds: budget, suggestedFailureThreshold: 6, suggestedBudgetSeconds: 60 });
    expect(d?.summary).toContain('killed 4 times by its liveness probe, each ~31s after start');
    expect(d?.fix?.patch).toEqual({ name: 'app', startupProbe: { httpGet: { path: '/healthz', port: 8080, scheme: 'HTTP' }, periodSeconds: 10, timeoutSeconds: 1, failureThreshold: 6 } });
    expect(x.owner).toBeUndefined();
    expect(toText({ target: 'pod/web', pods: [x] })).toContain('slow-start-liveness');
  });

  it('wrong port: refused on a port the container does not declare; the patch names the declared one', () => {
    const c = { ...app, livenessProbe: { ...liveness, httpGet: { path: '/healthz', port: 8081 } } };
    const p = pod(c, { restartCount: 1, state: { running: { startedAt: at(32) } }, lastState: { terminated: { exitCode: 143, reason: 'Error', startedAt: at(0), finishedAt: at(31) } } });
    const events = [
      event('Started', 'Container started', 0, 32, 2, 'Normal'),
      event('Unhealthy', 'Liveness probe failed: Get "http://10.0.0.5:8081/healthz": dial tcp 10.0.0.5:8081: connect: connection refused', 10, 30, 3),
      event('Killing', 'Container app failed liveness probe, will be restarted', 30, 30, 1, 'Normal'),
    ];
    const d = explainPod(p, events, { nowMs: T0 + 40_000 }).diagnoses[0];
    expect(d?.cause).toBe('probe-wrong-target');
    expect(d?.summary).toContain('dials port 8081');
    expect(d?.summary).toContain('containerPort 8080 (http)');
    expect(d?.fix?.patch).toEqual({ name: 'app', livenessProbe: { httpGet: { port: 8080 } } });
    // Both runs are known (restartCount 1): the kill and the restart held to the kubelet's rule (restart-rule.ts).
    expect(d?.restarts.map((r) => [r.branch, r.allowed])).toEqual([
      ['kill-after-failures', true],
      ['restart-at-once-no-entry', true],
    ]);
    expect(d?.restarts[1]?.why).toContain('restarted at once');
  });

  it('a first probe kill restarted only 20 s later breaks the rule, and explain says so', () => {
    const c = { ...app, livenessProbe: { ...liveness, httpGet: { path: '/healthz', port: 8081 } } };
    const p = pod(c, { restartCount: 1, state: { running: { startedAt: at(51) } }, lastState: { terminated: { exitCode: 143, reason: 'Error', startedAt: at(0), finishedAt: at(31) } } });
    const events = [event('Unhealthy', 'Liveness probe failed: dial tcp 10.0.0.5:8081: connect: connection refused', 10, 30, 3), event('Killing', 'Container app failed liveness probe, will be restarted', 30, 30, 1, 'Normal')];
    const d = explainPod(p, events, { nowMs: T0 + 60_000 }).diagnoses[0];
    expect(d?.restarts.find((r) => !r.allowed)?.branch).toBe('restart-at-once-no-entry');
    expect(d?.evidence.some((e) => e.text.startsWith("the kubelet's restart rule does not explain"))).toBe(true);
  });

  it('404 from the first probe: wrong path', () => {
    const p = pod(app, { restartCount: 1, lastState: { terminated: { exitCode: 143, reason: 'Error', startedAt: at(0), finishedAt: at(31) } }, state: { running: { startedAt: at(32) } } });
    const events = [event('Unhealthy', 'Liveness probe failed: HTTP probe failed with statuscode: 404', 10, 30, 3), event('Killing', 'Container app failed liveness probe, will be restarted', 30, 30, 1, 'Normal')];
    expect(explainPod(p, events, { nowMs: T0 + 40_000 }).diagnoses[0]?.cause).toBe('probe-wrong-target');
  });

  it('timeouts that come and go (more than the kills needed) are liveness timeouts, not a hang', () => {
    const p = pod(app, { restartCount: 1, state: { running: { startedAt: at(602) } }, lastState: { terminated: { exitCode: 143, reason: 'Error', startedAt: at(0), finishedAt: at(600) } } });
    const msg = 'Liveness probe failed: Get "http://10.0.0.5:8080/healthz": context deadline exceeded (Client.Timeout exceeded while awaiting headers)';
    const d = explainPod(p, [event('Unhealthy', msg, 100, 598, 9), event('Killing', 'Container app failed liveness probe, will be restarted', 600, 600, 1, 'Normal')], { nowMs: T0 + 610_000 }).diagnoses[0];
    expect(d?.cause).toBe('liveness-timeout');
    expect(d?.numbers['suggestedTimeoutSeconds']).toBe(5);
  });

  it('a run that passed its probe for minutes, then exactly failureThreshold timeouts: a hang', () => {
    const p = pod(app, { restartCount: 1, state: { running: { startedAt: at(602) } }, lastState: { terminated: { exitCode: 143, reason: 'Error', startedAt: at(0), finishedAt: at(600) } } });
    const msg = 'Liveness probe failed: Get "http://10.0.0.5:8080/healthz": context deadline exceeded (Client.Timeout exceeded while awaiting headers)';
    const d = explainPod(p, [event('Started', 'Container started', 0, 602, 2, 'Normal'), event('Unhealthy', msg, 580, 600, 3), event('Killing', 'Container app failed liveness probe, will be restarted', 600, 600, 1, 'Normal')], { nowMs: T0 + 610_000 }).diagnoses[0];
    expect(d?.cause).toBe('hang');
  });

  it('a probe kill that took the whole grace (exit 137) notes SIGTERM ignored beside the cause', () => {
    const p = pod(app, { restartCount: 1, state: { running: { startedAt: at(62) } }, lastState: { terminated: { exitCode: 137, reason: 'Error', startedAt: at(0), finishedAt: at(61) } } });
    const events = [event('Unhealthy', 'Liveness probe failed: HTTP probe failed with statuscode: 500', 300, 310, 3)];
    events.push(event('Killing', 'Container app failed liveness probe, will be restarted', 31, 31, 1, 'Normal'));
    const d = explainPod(p, events, { nowMs: T0 + 70_000 }).diagnoses[0];
    expect(d?.also.map((a) => a.cause)).toEqual(['sigterm-ignored']);
    expect(d?.also[0]?.summary).toContain('whole 30s grace period');
  });
});

describe('explain: not the probes', () => {
  it('OOMKilled: the limit and a patch doubling it', () => {
    const c = { ...app, resources: { limits: { memory: '128Mi' } } };
    const p = pod(c, { restartCount: 2, lastState: { terminated: { exitCode: 137, reason: 'OOMKilled', startedAt: at(0), finishedAt: at(45) } }, state: { running: { startedAt: at(46) } } });
    const d = explainPod(p, [], { nowMs: T0 + 50_000 }).diagnoses[0];
    expect(d?.cause).toBe('oom-killed');
    expect(d?.numbers).toMatchObject({ memoryLimitBytes: 128 * 2 ** 20, exitCode: 137, ranSeconds: 45 });
    expect(d?.fix?.patch).toEqual({ name: 'app', resources: { limits: { memory: '256Mi' } } });
  });

  it('exit 1 with no Killing event: the app crashed; the log lines are evidence', () => {
    const p = pod({ name: 'app', image: 'x' }, { restartCount: 4, state: { waiting: { reason: 'CrashLoopBackOff', message: 'back-off 40s restarting failed container=app pod=web_shop(u1)' } }, lastState: { terminated: { exitCode: 1, reason: 'Error', startedAt: at(0), finishedAt: at(2) } } });
    const d = explainPod(p, [event('Started', 'Container started', 0, 0, 5, 'Normal')], { nowMs: T0 + 10_000, logs: new Map([['app', ['fatal: no config']]]) }).diagnoses[0];
    expect(d?.cause).toBe('app-crash');
    expect(d?.numbers).toMatchObject({ exitCode: 1, backOffSeconds: 40 });
    expect(d?.evidence.map((e) => e.text)).toContain('the back-off now in force is 40 s (the waiting message): the kubelet doubles it at each restart of a crash loop, up to 5 min, and starts over after a run of 10 min');
    expect(d?.evidence.some((e) => e.from === 'logs' && e.text.includes('fatal: no config'))).toBe(true);
  });

  it('image pull failure from the waiting reason and the Failed event', () => {
    const p = pod({ name: 'app', image: 'reg/x:nope' }, { state: { waiting: { reason: 'ImagePullBackOff', message: 'Back-off pulling image "reg/x:nope"' } } });
    const events = [event('Failed', 'Failed to pull image "reg/x:nope": rpc error: code = NotFound desc = failed to pull and unpack image "reg/x:nope": not found', 1, 30, 3)];
    const d = explainPod(p, events, { nowMs: T0 + 40_000 }).diagnoses[0];
    expect(d?.cause).toBe('image-pull-failure');
    expect(d?.numbers['pullFailures']).toBe(3);
  });

  it('a deletion whose container outlives SIGTERM: SIGTERM ignored, killed at the deletion timestamp', () => {
    const p = pod({ name: 'app', image: 'x' }, { state: { running: { startedAt: at(0) } }, ready: true }, { meta: { deletionTimestamp: at(120), deletionGracePeriodSeconds: 20 } });
    const d = explainPod(p, [event('Killing', 'Stopping container app', 100, 100, 1, 'Normal')], { nowMs: T0 + 108_000 }).diagnoses[0];
    expect(d?.cause).toBe('sigterm-ignored');
    expect(d?.numbers).toMatchObject({ graceSeconds: 20, runningAfterSigtermSeconds: 8 });
  });
});

describe('explain: readiness', () => {
  const ready = { httpGet: { path: '/ready', port: 8080 }, periodSeconds: 1, failureThreshold: 2 };
  it('failures with passes between and no restart: flapping, at most ⌊failures / failureThreshold⌋ times out', () => {
    const p = pod({ ...app, livenessProbe: undefined, readinessProbe: ready }, { ready: true, state: { running: { startedAt: at(0) } } });
    const d = explainPod(p, [event('Unhealthy', 'Readiness probe failed: HTTP probe failed with statuscode: 503', 5, 45, 20)], { nowMs: T0 + 50_000 }).diagnoses[0];
    expect(d?.cause).toBe('readiness-flapping');
    expect(d?.numbers).toMatchObject({ failures: 20, maxNotReadyTimes: 10, spanSeconds: 40 });
  });

  it('every probe failing and never Ready: readiness failing, not flapping', () => {
    const p = pod({ ...app, livenessProbe: undefined, readinessProbe: ready }, { ready: false, state: { running: { startedAt: at(0) } } });
    const d = explainPod(p, [event('Unhealthy', 'Readiness probe failed: HTTP probe failed with statuscode: 503', 1, 40, 40)], { nowMs: T0 + 41_000 }).diagnoses[0];
    expect(d?.cause).toBe('readiness-failing');
  });
});

describe('explain: what is left when events are gone', () => {
  it('restarts with no event left: not enough information, said from restartCount and lastState', () => {
    const p = pod(app, { restartCount: 7, state: { running: { startedAt: at(5000) } }, lastState: { terminated: { exitCode: 137, reason: 'Error', startedAt: at(4000), finishedAt: at(4040) } } });
    const d = explainPod(p, [], { nowMs: T0 + 9000_000 }).diagnoses[0];
    expect(d?.cause).toBe('not-enough-information');
    const texts = d?.evidence.map((e) => `${e.confidence}: ${e.text}`).join('\n') ?? '';
    expect(texts).toContain('certain: restartCount 7');
    expect(texts).toContain('possible: exit code 137 is SIGKILL');
    expect(texts).toContain('8 starts of the 8 that restartCount implies have no event');
    expect(texts).toContain('6 earlier runs known only by restartCount');
  });

  it('a healthy pod: cause none, exit-worthy nothing', () => {
    const p = pod(app, { ready: true, state: { running: { startedAt: at(0) } } });
    const x = explainPod(p, [event('Started', 'Container started', 0, 0, 1, 'Normal')], { nowMs: T0 + 1000 });
    expect(x.diagnoses[0]?.cause).toBe('none');
  });

  it('events.k8s.io/v1 Events are read like core ones (regarding, note, series)', () => {
    const c = { ...app, livenessProbe: { ...liveness, httpGet: { path: '/healthz', port: 8081 } } };
    const p = pod(c, { restartCount: 1, state: { running: { startedAt: at(32) } }, lastState: { terminated: { exitCode: 143, reason: 'Error', startedAt: at(0), finishedAt: at(31) } } });
    const regarding = { kind: 'Pod', name: 'web', namespace: 'shop', uid: 'u1', fieldPath: 'spec.containers{app}' };
    const events = [
      { apiVersion: 'events.k8s.io/v1', kind: 'Event', regarding, reason: 'Unhealthy', note: 'Liveness probe failed: dial tcp 10.0.0.5:8081: connect: connection refused', type: 'Warning', eventTime: at(10), series: { count: 3, lastObservedTime: at(30) } },
      { apiVersion: 'events.k8s.io/v1', kind: 'Event', regarding, reason: 'Killing', note: 'Container app failed liveness probe, will be restarted', type: 'Normal', deprecatedCount: 1, deprecatedFirstTimestamp: at(30), deprecatedLastTimestamp: at(30) },
      // Another pod of the same name (an earlier UID): left out.
      { ...event('Killing', 'Container app failed startup probe, will be restarted', 5), involvedObject: { kind: 'Pod', name: 'web', namespace: 'shop', uid: 'old', fieldPath: 'spec.containers{app}' } },
    ];
    const x = explainPod(p, { kind: 'List', items: events }, { nowMs: T0 + 40_000 });
    expect(x.diagnoses[0]?.cause).toBe('probe-wrong-target');
    expect(x.timeline.containers[0]?.failures[0]).toMatchObject({ count: 3, first: at(10), last: at(30), kind: 'refused' });
  });

  it('-o patch: a Deployment\'s pod gets kubectl patch on the Deployment (from the ReplicaSet name)', () => {
    const c = { ...app, livenessProbe: { ...liveness, httpGet: { path: '/healthz', port: 8081 } } };
    const p = pod(c, { restartCount: 1, state: { running: { startedAt: at(32) } }, lastState: { terminated: { exitCode: 143, reason: 'Error', startedAt: at(0), finishedAt: at(31) } } }, {
      meta: { name: 'web', namespace: 'shop', uid: 'u1', labels: { 'pod-template-hash': '7d9c5' }, ownerReferences: [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'api-7d9c5', uid: 'rs', controller: true }] },
    });
    const events = [event('Unhealthy', 'Liveness probe failed: dial tcp 10.0.0.5:8081: connect: connection refused', 10, 30, 3), event('Killing', 'Container app failed liveness probe, will be restarted', 30, 30, 1, 'Normal')];
    const x = explainPod(p, events, { nowMs: T0 + 40_000 });
    expect(x.owner).toEqual({ kind: 'Deployment', name: 'api', confidence: 'likely' });
    expect(toPatch({ target: 'pod/web', pods: [x] })).toContain(`kubectl patch deployment api -n shop --type strategic -p '{"spec":{"template":{"spec":{"containers":[{"name":"app","livenessProbe":{"httpGet":{"port":8080}}}]}}}}'`);
  });
});

describe('explain: events as lists give them', () => {
  it('items of an EventList without their own kind (the API serves them so) are read', () => {
    const c = { ...app, livenessProbe: { ...liveness, httpGet: { path: '/healthz', port: 8081 } } };
    const p = pod(c, { restartCount: 1, state: { running: { startedAt: at(32) } }, lastState: { terminated: { exitCode: 143, reason: 'Error', startedAt: at(0), finishedAt: at(31) } } });
    const bare = (e: Record<string, unknown>): Record<string, unknown> => {
      const { kind: _k, apiVersion: _a, ...rest } = e;
      return rest;
    };
    const events = [event('Unhealthy', 'Liveness probe failed: dial tcp 10.0.0.5:8081: connect: connection refused', 10, 30, 3), event('Killing', 'Container app failed liveness probe, will be restarted', 30, 30, 1, 'Normal')].map(bare);
    expect(explainPod(p, { apiVersion: 'v1', kind: 'EventList', items: events }, { nowMs: T0 + 40_000 }).diagnoses[0]?.cause).toBe('probe-wrong-target');
  });
});
