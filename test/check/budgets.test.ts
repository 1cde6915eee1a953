import { describe, expect, it } from 'vitest';
import { setPodDefaults } from '../../src/api/defaults.js';
import type { ManifestObject } from '../../src/api/documents.js';
import type { Container, Pod, Probe } from '../../src/api/types.js';
import { backOffAfterRestarts, computeBudget, describeFailureBudget, failureWindow, formatBudgetTable, startupGuard } from '../../src/check/budgets.js';
import { CrashLoopBackOff } from '../../src/kubelet/backoff.js';
import { FakeClock } from '../../src/util/clock.js';

const object: ManifestObject = {
  source: 'deploy/web.yaml',
  document: 2,
  line: 30,
  column: 1,
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  name: 'web',
  namespace: 'shop',
  value: {},
  position: () => ({ line: 30, column: 1 }),
};

const http: Probe = { httpGet: { path: '/healthz', port: 8080 } };

function defaulted(containers: Container[], initContainers: Container[] = []): Pod {
  return setPodDefaults({ metadata: { name: 'web' }, spec: { containers, initContainers } });
}

describe('computeBudget', () => {
  it('a tcpSocket probe never fails on a hang (the kernel accepts the connection): its hang budgets are never (null)', () => {
    const tcp: Probe = { tcpSocket: { port: 8080 } };
    const pod = defaulted([{ name: 'app', readinessProbe: tcp, livenessProbe: tcp }]);
    const b = computeBudget(object, pod, pod.spec?.containers[0] as Container, 'container');
    expect([b.hangToKillSeconds, b.hangToNotReadySeconds]).toEqual([null, null]);
    // Only the readiness probe a hang fails bounds it; a TCP liveness beside it kills nothing.
    const mixed = defaulted([{ name: 'app', readinessProbe: http, livenessProbe: tcp }]);
    const m = computeBudget(object, mixed, mixed.spec?.containers[0] as Container, 'container');
    expect([m.hangToKillSeconds, m.hangToNotReadySeconds]).toEqual([null, 10 + 2 * 10 + 1]);
    // A start-up is still timed: a TCP probe is refused until the app listens.
    expect(b.startupBudgetSeconds).toBe(30);
    expect(formatBudgetTable([b])).toMatch(/app\s+liveness,readiness\s+30s\s+0s\s+never\s+never/);
    // The "never" says when it stops being true, with the number measured in test/probe/tcp-accept-queue.test.ts.
    expect(formatBudgetTable([b])).toContain(
      "app: the liveness probe never sees a hang: it is a tcpSocket probe, which a hung app still passes (the kernel completes the connection) until the app's accept queue is full: " +
        'after listen backlog + 1 connections it never accepted (measured on Linux: 5 with a backlog of 4) probes time out — ' +
        'from the probes alone (backlog + 1) × 10s after the hang (1h25m20s with a backlog of 511), sooner while other clients connect',
    );
  });

  it('names the file, object and container, and lists the probes in the order liveness, readiness, startup', () => {
    const pod = defaulted([{ name: 'app', startupProbe: http, readinessProbe: http, livenessProbe: http }]);
    const b = computeBudget(object, pod, pod.spec?.containers[0] as Container, 'container');
    expect(b).toEqual({
      file: 'deploy/web.yaml',
      object: { apiVersion: 'apps/v1', kind: 'Deployment', namespace: 'shop', name: 'web' },
      container: 'app',
      probes: ['liveness', 'readiness', 'startup'],
      startupBudgetSeconds: 30, // the startup probe's 3 × 10s; liveness waits for it
      earliestReadySeconds: 0,
      hangToKillSeconds: 10 + 2 * 10 + 1 + 30,
      hangToNotReadySeconds: 10 + 2 * 10 + 1,
      hangBlind: [],
    });
  });

  it('an exec probe that only reads a file or the process table cannot see a hang: never (null), and the table says why; one that calls the app can', () => {
    const blind: Probe[] = [
      { exec: { command: ['cat', '/tmp/healthy'] } },
      { exec: { command: ['test', '-f', '/tmp/ready'] } },
      { exec: { command: ['/bin/sh', '-c', 'test -f /tmp/ready && ls /tmp/ready; cat /tmp/ok'] } },
      { exec: { command: ['pgrep', 'java'] } },
    ];
    for (const probe of blind) {
      const pod = defaulted([{ name: 'app', readinessProbe: probe, livenessProbe: probe }]);
      const b = computeBudget(object, pod, pod.spec?.containers[0] as Container, 'container');
      expect([b.hangToKillSeconds, b.hangToNotReadySeconds]).toEqual([null, null]);
      expect(b.hangBlind?.map((h) => h.probe)).toEqual(['liveness', 'readiness']);
      expect(formatBudgetTable([b])).toContain(`app: the liveness probe never sees a hang: it is an exec probe (${probe.exec?.command?.join(' ')}) that only reads files or the process table`);
    }
    const calling: Probe[] = [
      { exec: { command: ['curl', '-f', 'http://localhost:8080/healthz'] } },
      { exec: { command: ['sh', '-c', 'cat /tmp/x && redis-cli ping'] } },
      { exec: { command: ['sh', '-c', 'test "$(cat /tmp/x)" = ok'] } },
      { exec: { command: ['/bin/grpc_health_probe', '-addr=:9000'] } },
    ];
    for (const probe of calling) {
      const pod = defaulted([{ name: 'app', livenessProbe: probe }]);
      const b = computeBudget(object, pod, pod.spec?.containers[0] as Container, 'container');
      expect(b.hangToKillSeconds).not.toBeNull();
      expect(b.hangBlind).toEqual([]);
    }
  });

  it('is unbounded (null) everywhere without probes, and for plain init containers whatever they carry', () => {
    const pod = defaulted([{ name: 'app' }], [{ name: 'migrate', livenessProbe: http }]);
    for (const [container, role] of [
      [pod.spec?.containers[0], 'container'],
      [pod.spec?.initContainers?.[0], 'init'],
    ] as const) {
      const b = computeBudget(object, pod, container as Container, role);
      expect([b.probes, b.startupBudgetSeconds, b.earliestReadySeconds, b.hangToKillSeconds, b.hangToNotReadySeconds]).toEqual([[], null, null, null, null]);
    }
  });

  it('budgets a sidecar like a container; readiness alone bounds only NotReady', () => {
    const pod = defaulted([{ name: 'app', readinessProbe: { ...http, initialDelaySeconds: 5, successThreshold: 2 } }], [
      { name: 'proxy', restartPolicy: 'Always', startupProbe: { ...http, periodSeconds: 1, failureThreshold: 30 } },
    ]);
    const sidecar = computeBudget(object, pod, pod.spec?.initContainers?.[0] as Container, 'sidecar');
    // 30 × 1s, and up to a second more on the first start: its sandbox and the relist can hide it from the first ticks.
    expect([sidecar.startupBudgetSeconds, sidecar.earliestReadySeconds, sidecar.hangToKillSeconds]).toEqual([31, 0, null]);
    const app = computeBudget(object, pod, pod.spec?.containers[0] as Container, 'container');
    expect([app.startupBudgetSeconds, app.earliestReadySeconds, app.hangToKillSeconds, app.hangToNotReadySeconds]).toEqual([null, 14, null, 31]);
  });

  it('reads values the apiserver rejects as their defaults, so a budget still prints beside the validation error', () => {
    const pod = defaulted([{ name: 'app', livenessProbe: { ...http, periodSeconds: -5, failureThreshold: -1, initialDelaySeconds: -3 } }]);
    expect(computeBudget(object, pod, pod.spec?.containers[0] as Container, 'container').startupBudgetSeconds).toBe(30);
  });
});

describe('failureWindow and startupGuard', () => {
  it('refused: (F − 1) × P after the delay, up to a period later; timeout: back to back at max(P, T) plus the last timeout', () => {
    const probe: Probe = { ...http, initialDelaySeconds: 5, periodSeconds: 10, timeoutSeconds: 3, failureThreshold: 4 };
    // From the start, the earliest is a second short of the delay: the worker ages the container
    // from startedAt cut to the whole second (status manager's normalizeStatus).
    expect(failureWindow(probe, 'refused', true)).toEqual({ earliestSeconds: 34, latestSeconds: 45 });
    expect(failureWindow(probe, 'timeout', true)).toEqual({ earliestSeconds: 37, latestSeconds: 48 });
    expect(failureWindow(probe, 'timeout', false)).toEqual({ earliestSeconds: 33, latestSeconds: 43 });
    expect(failureWindow({ ...probe, timeoutSeconds: 25 }, 'timeout', false)).toEqual({ earliestSeconds: 100, latestSeconds: 110 });
  });

  it('the startup probe guards the start when there is one, else liveness, else nothing', () => {
    expect(startupGuard({ name: 'a', livenessProbe: http, startupProbe: { ...http, failureThreshold: 30 } })).toMatchObject({
      kind: 'startup',
      alwaysSurvivesSeconds: 290,
      budgetSeconds: 300,
    });
    expect(startupGuard({ name: 'a', livenessProbe: http })).toMatchObject({ kind: 'liveness', alwaysSurvivesSeconds: 20, budgetSeconds: 30 });
    expect(startupGuard({ name: 'a', readinessProbe: http })).toBeUndefined();
  });
});

describe('backOffAfterRestarts', () => {
  it('equals the wait the kubelet’s CrashLoopBackOff imposes before each restart of a crash loop', async () => {
    const clock = new FakeClock(1_000_000);
    const backOff = new CrashLoopBackOff({ clock });
    const waits: number[] = [];
    for (let restarts = 0; restarts < 10; restarts++) {
      await clock.advance(1_000); // runs a second, then exits
      const finishedAt = clock.now();
      const decision = backOff.check('app', finishedAt);
      const wait = decision.inBackOff ? decision.remainingMs : 0;
      await clock.advance(wait);
      if (wait > 0) expect(backOff.check('app', finishedAt).inBackOff).toBe(false);
      waits.push(wait / 1000);
    }
    expect(waits).toEqual([0, 10, 20, 40, 80, 160, 300, 300, 300, 300]);
    expect(waits.map((_, n) => backOffAfterRestarts(n))).toEqual(waits);
    expect(backOffAfterRestarts(1_000)).toBe(300);
  });
});

describe('formatBudgetTable', () => {
  it('prints one row per container with worded headers and a legend', () => {
    const pod = defaulted([
      { name: 'app', startupProbe: { ...http, failureThreshold: 30 }, readinessProbe: http, livenessProbe: { ...http, terminationGracePeriodSeconds: 10 } },
      { name: 'worker' },
    ]);
    const budgets = (pod.spec?.containers ?? []).map((c) => computeBudget(object, pod, c, 'container'));
    expect(formatBudgetTable(budgets)).toBe(
      [
        'CONTAINER  PROBES                      KILLED IF NOT STARTED BY  READY AT THE EARLIEST  HANG → NOT READY  HANG → KILLED',
        'app        liveness,readiness,startup  5m0s                      0s                     ≤ 31s             ≤ 41s',
        'worker     -                           never killed              when started           never             never',
        '(times from the container\'s start, or from the moment the app hangs; ≤ = worst case, kill grace included)',
      ].join('\n'),
    );
    expect(formatBudgetTable([])).toBe('');
  });
});

describe('describeFailureBudget: the terms add up to the bound they explain', () => {
  const sum = (text: string): number => {
    let total = 0;
    if (text.endsWith(' at once')) return 0;
    for (const term of text.replace(/^\w+ /, '').split(' + ')) {
      // `initialDelaySeconds 7 − 1s`: the earliest first probe, from startedAt cut to the second.
      const m = /^(?:(\d+) × )?(?:period |timeout |initialDelaySeconds )?(\d+)s?(?: − (\d+)s)?$/.exec(term);
      if (!m) throw new Error(`unexpected term ${term}`);
      total += Number(m[1] ?? 1) * Number(m[2]) - Number(m[3] ?? 0);
    }
    return total;
  };
  const cases: Probe[] = [
    { periodSeconds: 10, timeoutSeconds: 1, failureThreshold: 3 },
    { periodSeconds: 1, timeoutSeconds: 15, failureThreshold: 60 },
    { periodSeconds: 5, timeoutSeconds: 5, failureThreshold: 2, initialDelaySeconds: 7 },
    { periodSeconds: 10, timeoutSeconds: 3, failureThreshold: 1 },
  ];
  for (const probe of cases) {
    for (const mode of ['refused', 'timeout'] as const) {
      for (const fromStart of [false, true]) {
        it(`${JSON.stringify(probe)} ${mode}${fromStart ? ' from start' : ''}`, () => {
          const w = failureWindow(probe, mode, fromStart);
          expect(sum(describeFailureBudget('liveness', probe, fromStart, mode, 'latest'))).toBe(w.latestSeconds);
          expect(sum(describeFailureBudget('liveness', probe, fromStart, mode, 'earliest'))).toBe(w.earliestSeconds);
        });
      }
    }
  }
});
