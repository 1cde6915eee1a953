import { afterEach, describe, expect, it } from 'vitest';
import { setPodDefaults } from '../../src/api/defaults.js';
import type { Container, Pod, Probe } from '../../src/api/types.js';
import { backOffAfterRestarts, computeBudget, startupGuard } from '../../src/check/budgets.js';
import { Kubelet } from '../../src/kubelet/kubelet.js';
import type { ProbeType, Result } from '../../src/prober/types.js';
import { FakeClock, sleep } from '../../src/util/clock.js';
import { FakeRuntime } from '../helpers/fake-runtime.js';
import { bareWebPod } from '../helpers/manifest-object.js';

/**
 * The budgets end to end through the real local kubelet (probe manager, sync loop, kills with
 * their grace, crash-loop back-off) over the scripted runtime, on the FakeClock: the app
 * ignores SIGTERM, so it is gone exactly when the grace period ends. The engine-level checks
 * of every formula are in `budgets-engine.test.ts`; this shows the kubelet adds nothing to them.
 */

const T0 = Date.UTC(2026, 0, 1);
const MS = 1000;

const object = bareWebPod;

const http: Probe = { httpGet: { path: '/healthz', port: 8080 } };

interface Harness {
  clock: FakeClock;
  runtime: FakeRuntime;
  calls: { kind: ProbeType; at: number }[];
  /** Each instance answers this long (ms) after its start; before, its probes fail at once. */
  app: { readyAfter: number; hangAt: number };
  instances(): { startedAt: number; finishedAt: number | undefined }[];
}

const kubelets: Kubelet[] = [];
afterEach(async () => {
  for (const k of kubelets.splice(0)) {
    const closing = k.close();
    await (k.clock as FakeClock).advance(3_600 * MS);
    await closing;
  }
});

function run(pod: Pod): Harness {
  const clock = new FakeClock(T0);
  const runtime = new FakeRuntime(clock);
  runtime.behaviour.set('app', { onTerm: undefined }); // ignores SIGTERM: SIGKILL when the grace ends
  const calls: Harness['calls'] = [];
  const app = { readyAfter: 0, hangAt: Number.POSITIVE_INFINITY };
  const prober = {
    probe: async (kind: ProbeType, _p: Pod, _s: unknown, c: Container, containerID: string): Promise<{ result: Result }> => {
      const now = clock.now();
      calls.push({ kind, at: now });
      if (now >= app.hangAt) {
        await sleep(clock, ((c[`${kind}Probe`] as Probe).timeoutSeconds ?? 1) * MS);
        return { result: 'failure' };
      }
      const startedAt = runtime.containerStatus(containerID)?.startedAt ?? now;
      return { result: now >= startedAt + app.readyAfter ? 'success' : 'failure' };
    },
  };
  // random 0: the pod worker requeues a throttled pod at the back-off's expiry itself (no +50 % jitter).
  const kubelet = new Kubelet({ runtime, clock, random: () => 0, prober });
  kubelets.push(kubelet);
  expect(kubelet.addPods([pod]).errors).toEqual([]);
  return {
    clock,
    runtime,
    calls,
    app,
    instances: () =>
      [...runtime.containers.values()]
        .filter((c) => c.name === 'app')
        .sort((a, b) => a.attempt - b.attempt)
        .map((c) => ({ startedAt: c.startedAt ?? 0, finishedAt: c.finishedAt })),
  };
}

function podWith(container: Partial<Container>, grace?: number): Pod {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'web', namespace: 'default', uid: 'uid-web' },
    spec: { containers: [{ name: 'app', image: 'app:1', command: ['app'], ...container }], ...(grace === undefined ? {} : { terminationGracePeriodSeconds: grace }) },
  };
}

function budgetOf(pod: Pod): ReturnType<typeof computeBudget> {
  const defaulted = setPodDefaults(pod);
  return computeBudget(object, defaulted, defaulted.spec?.containers[0] as Container, 'container');
}

describe('hangToKillSeconds through the kubelet: from the hang to the container being gone', () => {
  const rows: { name: string; container: Partial<Container>; grace?: number; expected: number }[] = [
    { name: 'liveness defaults, pod grace 30', container: { livenessProbe: http }, expected: 61 },
    { name: 'probe-level grace 5 over the pod grace 60', container: { livenessProbe: { ...http, terminationGracePeriodSeconds: 5 } }, grace: 60, expected: 36 },
    { name: 'timeout ≥ period (2 s, timeout 5 s)', container: { livenessProbe: { ...http, periodSeconds: 2, timeoutSeconds: 5 } }, expected: 47 },
  ];
  for (const row of rows) {
    it(`${row.name}: ${row.expected}s at the worst phase`, async () => {
      const pod = podWith(row.container, row.grace);
      expect(budgetOf(pod).hangToKillSeconds).toBe(row.expected);
      const period = (row.container.livenessProbe?.periodSeconds ?? 10) * MS;
      for (const phase of [1, period - 1]) {
        const h = run(pod);
        await h.clock.advance(120 * MS);
        const last = [...h.calls].reverse().find((c) => c.kind === 'liveness');
        expect(last).toBeDefined();
        const hangAt = (last?.at ?? 0) + 2 * period - phase; // the first failing probe lands `phase` after it
        h.app.hangAt = hangAt;
        await h.clock.advance(hangAt - h.clock.now() + (row.expected + 10) * MS);
        const gone = h.instances()[0]?.finishedAt;
        expect(gone === undefined ? undefined : gone - hangAt).toBe(row.expected * MS - period + phase);
      }
    });
  }
});

/**
 * The waits between a probe kill and the restart that upstream's `doBackOff` gives, read off
 * the instances' own start and finish times: the gate measures from the exit before the
 * killed instance; no such exit → at once and no entry; in back-off → the killed exit + the step.
 */
function probeKillWaits(instances: readonly { startedAt: number; finishedAt: number | undefined }[]): number[] {
  const waits: number[] = [];
  let step = 0; // 0: no entry
  for (let n = 0; n + 1 < instances.length; n++) {
    const killedExit = instances[n]?.finishedAt ?? 0;
    const before = n === 0 ? undefined : instances[n - 1]?.finishedAt;
    if (before === undefined) {
      waits.push(0);
    } else if (step > 0 && killedExit - before < step) {
      waits.push(step);
      step = Math.min(step * 2, backOffAfterRestarts(64) * MS);
    } else {
      step = step === 0 ? backOffAfterRestarts(1) * MS : Math.min(step * 2, backOffAfterRestarts(64) * MS);
      waits.push(0);
    }
  }
  return waits;
}

describe('startupBudgetSeconds and backOffAfterRestarts through the kubelet: an app that never starts', () => {
  it('each instance is killed after the budget, gone a grace later, and restarted after the back-off', async () => {
    const pod = podWith({ livenessProbe: http }, 5);
    const budget = budgetOf(pod).startupBudgetSeconds ?? 0;
    expect(budget).toBe(30);
    const h = run(pod);
    h.app.readyAfter = Number.POSITIVE_INFINITY;
    await h.clock.advance(20 * 60 * MS);
    const instances = h.instances().slice(0, 6);
    expect(instances).toHaveLength(6);
    const grace = 5 * MS;
    const guard = startupGuard(setPodDefaults(pod).spec?.containers[0] as Container);
    instances.forEach((instance, n) => {
      const killedAfter = (instance.finishedAt ?? 0) - grace - instance.startedAt;
      if (n === 0) {
        // The kubelet starts the first instance at the instant its worker ticks, so that tick
        // misses it: the kill comes a full period late, at exactly the budget (the latest).
        expect(killedAfter).toBe(budget * MS);
      } else {
        // Restarts fall anywhere in the worker's period (the ticker keeps its phase).
        expect(killedAfter).toBeGreaterThanOrEqual((guard?.alwaysSurvivesSeconds ?? 0) * MS);
        expect(killedAfter).toBeLessThanOrEqual(budget * MS);
      }
    });
    // The restarts follow doBackOff over the status read before each kill: measured from the
    // exit *before* the killed instance, so at once while the step is shorter than a run.
    const waits = instances.slice(1).map((next, n) => next.startedAt - (instances[n]?.finishedAt ?? 0));
    expect(waits).toEqual(probeKillWaits(instances).slice(0, waits.length));
    expect(waits.slice(0, 3)).toEqual([0, 0, 0]);
    expect(waits.filter((w) => w > 0).length).toBeGreaterThan(0);
  });

  it('a start-up of exactly the budget survives that phase; one a second longer is killed', async () => {
    const pod = podWith({ livenessProbe: http });
    const guard = startupGuard(setPodDefaults(pod).spec?.containers[0] as Container);
    for (const [needs, restarts] of [
      [(guard?.budgetSeconds ?? 0) * MS, 0],
      [((guard?.budgetSeconds ?? 0) + 1) * MS, 1],
    ] as const) {
      const h = run(pod);
      h.app.readyAfter = needs;
      await h.clock.advance(90 * MS);
      expect(h.instances().length - 1).toBe(restarts);
    }
  });
});
