import { afterEach, describe, expect, it } from 'vitest';
import { setPodDefaults } from '../../src/api/defaults.js';
import type { Container, Pod, PodStatus, Probe } from '../../src/api/types.js';
import { computeBudget, failureWindow, startupGuard } from '../../src/check/budgets.js';
import { killGracePeriodSeconds } from '../../src/kubelet/kubelet.js';
import type { ProbeType, Result } from '../../src/prober/types.js';
import { sleep } from '../../src/util/clock.js';
import { iso, makeEngine, TEST_CONTAINER_ID, TEST_POD_UID, type Engine } from '../helpers/engine.js';
import { bareWebPod } from '../helpers/manifest-object.js';

/**
 * The budget formulas against the real engine: the same probe specs run through
 * `ProbeManager` and its workers on the `FakeClock`, with a prober that plays an app (fails
 * at once until it is up — nothing listens —, answers at once while up, and times out once
 * it hangs), and a status loop that regenerates the pod status on every result the way the
 * kubelet's sync does (so `started`, `ready` and the readiness triggers are the engine's own).
 * The time the engine writes Failure / Ready is compared with the computed budget, at both
 * ends of the ticker's phase.
 */

const MS = 1000;
/**
 * The ends of the phase are taken 1 ms inside the window: a container that starts at the very
 * moment of a tick is seen by the next one (the kubelet writes the status after starting it).
 */
const EPS = 1;

interface App {
  /** When the app answers (ms on the clock); before it, probes fail at once. */
  readyAt: number;
  /** From when it hangs: probes time out after `timeoutSeconds`. */
  hangAt: number;
}

interface Verdict {
  kind: ProbeType;
  result: Result;
  at: number;
}

interface Harness {
  engine: Engine;
  pod: Pod;
  container: Container;
  app: App;
  calls: { kind: ProbeType; at: number }[];
  verdicts: Verdict[];
  /** The container starts now. */
  start(): void;
  /** Regenerates the status now, as a pod sync would (and so triggers a not-ready readiness probe). */
  sync(): void;
  /** First verdict of `kind` equal to `result`, in ms after `from` (ms; whole ms, so compared exactly). */
  firstVerdict(kind: ProbeType, result: Result, from: number): number | undefined;
}

let open: Harness[] = [];
afterEach(async () => {
  for (const h of open) {
    // A hung probe sleeps on the fake clock: move it on so the in-flight probe ends and the workers exit.
    const closing = h.engine.manager.close();
    await h.engine.clock.advance(3_600 * MS);
    await closing;
  }
  open = [];
});

function podWith(container: Container, terminationGracePeriodSeconds = 30): Pod {
  return setPodDefaults({
    metadata: { name: 'web', namespace: 'default', uid: TEST_POD_UID },
    spec: { restartPolicy: 'Always', terminationGracePeriodSeconds, containers: [container] },
  });
}

/**
 * `clockStart` (default: a whole second) sets where the worker's ticks fall within a second,
 * which with `startWithPhase` sets the start's fraction of its second: the worker ages the
 * container from `startedAt` cut to the whole second (prober/start-latency.ts).
 */
function harness(probes: Partial<Record<'livenessProbe' | 'readinessProbe' | 'startupProbe', Probe>>, grace = 30, clockStart = 1_000_000): Harness {
  const pod = podWith({ name: 'app', image: 'app:1', ...probes }, grace);
  const container = pod.spec?.containers[0] as Container;
  const app: App = { readyAt: Number.POSITIVE_INFINITY, hangAt: Number.POSITIVE_INFINITY };
  const calls: Harness['calls'] = [];
  const verdicts: Verdict[] = [];
  let startedAt: number | undefined;
  const engine = makeEngine({
    clockStart,
    prober: {
      probe: async (kind, _pod, _status, c) => {
        const now = engine.clock.now();
        calls.push({ kind, at: now });
        if (now >= app.hangAt) {
          const probe = c[`${kind}Probe`] as Probe;
          await sleep(engine.clock, (probe.timeoutSeconds ?? 1) * MS);
          return { result: 'failure' };
        }
        return { result: now >= app.readyAt ? 'success' : 'failure' };
      },
    },
  });
  const sync = (): void => {
    const status: PodStatus =
      startedAt === undefined
        ? { phase: 'Pending', containerStatuses: [] }
        : {
            phase: 'Running',
            containerStatuses: [
              {
                name: 'app',
                containerID: TEST_CONTAINER_ID,
                image: 'app:1',
                imageID: '',
                ready: false,
                restartCount: 0,
                state: { running: { startedAt: iso(startedAt) } },
              },
            ],
          };
    engine.manager.updatePodStatus(pod, status);
    engine.statuses.set(TEST_POD_UID, status);
  };
  for (const kind of ['liveness', 'readiness', 'startup'] as const) {
    engine.resultsFor(kind).subscribe((u) => {
      verdicts.push({ kind, result: u.result, at: engine.clock.now() });
      sync(); // the kubelet syncs the pod on every result
    });
  }
  sync();
  engine.manager.addPod(pod);
  const h: Harness = {
    engine,
    pod,
    container,
    app,
    calls,
    verdicts,
    start: () => {
      startedAt = engine.clock.now();
      sync();
    },
    sync,
    firstVerdict: (kind, result, from) => {
      const v = verdicts.find((x) => x.kind === kind && x.result === result && x.at >= from);
      return v === undefined ? undefined : v.at - from;
    },
  };
  open.push(h);
  return h;
}

/**
 * Advances the clock so that the container starts `phaseMs` before a tick of a worker
 * with period `periodS` shifted by `delayS`: its first probe past the initial delay then
 * lands `phaseMs` after `initialDelaySeconds`. Workers tick at addPod time + k × period.
 */
async function startWithPhase(h: Harness, periodS: number, delayS: number, phaseMs: number): Promise<number> {
  const w = h.engine.clock.now();
  const p = periodS * MS;
  const k = Math.ceil((delayS * MS + phaseMs) / p) + 1;
  const start = w + k * p - delayS * MS - phaseMs;
  await h.engine.clock.advance(start - w);
  h.start();
  return start;
}

/** Hangs the app `phaseMs` before the next tick of the worker of `kind` (read off its last probe). */
async function hangWithPhase(h: Harness, kind: ProbeType, periodS: number, phaseMs: number): Promise<number> {
  const last = [...h.calls].reverse().find((c) => c.kind === kind);
  if (!last) throw new Error(`no ${kind} probe yet`);
  const hangAt = last.at + 2 * periodS * MS - phaseMs;
  h.app.hangAt = hangAt; // before the clock gets there: a probe at the very moment of the hang hangs
  await h.engine.clock.advance(hangAt - h.engine.clock.now());
  return hangAt;
}

const object = bareWebPod;

const http = { httpGet: { port: 8080 } };

describe('startupBudgetSeconds against the engine: a container that never starts', () => {
  // `reported`: what check reports when the first start can be killed later than any phase of
  // an arbitrary start (a 1 s period without initial delay: the relist can hide the container
  // from the first tick; prober/start-latency.ts).
  const rows: { name: string; probes: Partial<Record<'livenessProbe' | 'startupProbe', Probe>>; kind: 'liveness' | 'startup'; budget: number; reported?: number }[] = [
    { name: 'liveness defaults (3 × 10s)', probes: { livenessProbe: { ...http } }, kind: 'liveness', budget: 30 },
    {
      name: 'liveness initialDelay 15, 6 × 5s',
      probes: { livenessProbe: { ...http, initialDelaySeconds: 15, periodSeconds: 5, failureThreshold: 6 } },
      kind: 'liveness',
      budget: 45,
    },
    {
      name: 'startup probe initialDelay 5, 30 × 10s (liveness waits)',
      probes: { startupProbe: { ...http, initialDelaySeconds: 5, failureThreshold: 30 }, livenessProbe: { ...http, failureThreshold: 1 } },
      kind: 'startup',
      budget: 305,
    },
    {
      name: 'startup probe with timeout ≥ period (60 × 1s, timeout 15)',
      probes: { startupProbe: { ...http, periodSeconds: 1, timeoutSeconds: 15, failureThreshold: 60 } },
      kind: 'startup',
      budget: 60,
      reported: 61,
    },
  ];
  for (const row of rows) {
    it(`${row.name}: killed between budget − period and budget, by phase`, async () => {
      const pod = podWith({ name: 'app', ...row.probes });
      const container = pod.spec?.containers[0] as Container;
      const budget = computeBudget(object, pod, container, 'container');
      expect(budget.startupBudgetSeconds).toBe(row.reported ?? row.budget);
      const probe = container[`${row.kind}Probe`] as Probe;
      const period = probe.periodSeconds ?? 10;
      const delay = probe.initialDelaySeconds ?? 0;
      for (const phase of [EPS, period * MS - EPS]) {
        // Ticks placed so that the start falls on a whole second: its age is exact.
        const h = harness(row.probes, 30, 1_000_000 + (phase % MS));
        const start = await startWithPhase(h, period, delay, phase);
        expect(start % MS).toBe(0);
        await h.engine.clock.advance((row.budget + period) * MS);
        // 1 ms after budget − period at the earliest phase; 1 ms short of the budget at the latest.
        expect(h.firstVerdict(row.kind, 'failure', start)).toBe((row.budget - period) * MS + phase);
      }
      if (delay > 0) {
        // A start 999 ms into its second is aged from the second's start (normalizeStatus):
        // the tick 1 ms after it is already `delay` old, so the kill comes just over a second
        // before budget − period — which check's alwaysSurvivesSeconds allows for.
        const phase = period * MS - (MS - EPS);
        const h = harness(row.probes, 30, 1_000_000 + ((phase + MS - EPS) % MS));
        const start = await startWithPhase(h, period, delay, phase);
        expect(start % MS).toBe(MS - EPS);
        await h.engine.clock.advance((row.budget + period) * MS);
        expect(h.firstVerdict(row.kind, 'failure', start)).toBe((row.budget - period - 1) * MS + EPS);
        expect(startupGuard(container)?.alwaysSurvivesSeconds).toBe(row.budget - period - 1);
      }
    });
  }

  it('convention: 1 ms short of the latest phase, a start-up of budget − 1 ms survives and one of exactly the budget is killed', async () => {
    const probes = { livenessProbe: { ...http } };
    const budget = startupGuard(podWith({ name: 'app', ...probes }).spec?.containers[0] as Container)?.budgetSeconds ?? 0;
    expect(budget).toBe(30);
    for (const [needs, killed] of [
      [budget * MS - EPS, false],
      [budget * MS, true],
    ] as const) {
      const h = harness(probes);
      h.app.readyAt = Number.POSITIVE_INFINITY;
      const start = await startWithPhase(h, 10, 0, 10 * MS - EPS);
      h.app.readyAt = start + needs;
      await h.engine.clock.advance(60 * MS);
      expect(h.firstVerdict('liveness', 'failure', start) !== undefined).toBe(killed);
    }
  });

  it('convention: a container started at the very instant of a tick (no initialDelay) is killed at exactly the budget; a start-up of exactly the budget survives, 1 ms more is killed', async () => {
    const probes = { livenessProbe: { ...http } };
    const never = harness(probes);
    const start = await startWithPhase(never, 10, 0, 0); // that tick probes before the start: the next one is a period later
    await never.engine.clock.advance(60 * MS);
    expect(never.firstVerdict('liveness', 'failure', start)).toBe(30 * MS);
    for (const [needs, killed] of [
      [30 * MS, false],
      [30 * MS + EPS, true],
    ] as const) {
      const h = harness(probes);
      const at = await startWithPhase(h, 10, 0, 0);
      h.app.readyAt = at + needs;
      await h.engine.clock.advance(60 * MS);
      expect(h.firstVerdict('liveness', 'failure', at) !== undefined).toBe(killed);
    }
  });

  it('a start-up that hangs (probes time out, timeout ≥ period) runs its probes back to back: failureWindow(timeout)', async () => {
    const probes = { startupProbe: { ...http, periodSeconds: 1, timeoutSeconds: 15, failureThreshold: 4 } };
    const window = failureWindow(probes.startupProbe, 'timeout', true);
    expect(window).toEqual({ earliestSeconds: 60, latestSeconds: 61 });
    for (const phase of [EPS, MS - EPS]) {
      const h = harness(probes);
      h.app.hangAt = 0;
      const start = await startWithPhase(h, 1, 0, phase);
      await h.engine.clock.advance(70 * MS);
      expect(h.firstVerdict('startup', 'failure', start)).toBe(window.earliestSeconds * MS + phase);
    }
  });
});

describe('hang budgets against the engine: the app hangs after it is Ready', () => {
  const rows: {
    name: string;
    probes: Partial<Record<'livenessProbe' | 'readinessProbe' | 'startupProbe', Probe>>;
    grace?: number;
    kind: 'liveness' | 'readiness';
    /** Expected worst case (seconds) of the field under test. */
    hangToKill?: number;
    hangToNotReady?: number;
  }[] = [
    { name: 'liveness defaults: 10 + 2 × 10 + 1 + grace 30', probes: { livenessProbe: { ...http } }, kind: 'liveness', hangToKill: 61 },
    {
      name: 'liveness timeout ≥ period: 2 + 2 × 5 + 5 + grace 30',
      probes: { livenessProbe: { ...http, periodSeconds: 2, timeoutSeconds: 5 } },
      kind: 'liveness',
      hangToKill: 47,
    },
    {
      name: 'liveness with probe-level grace 5 (pod 60)',
      probes: { livenessProbe: { ...http, terminationGracePeriodSeconds: 5 } },
      grace: 60,
      kind: 'liveness',
      hangToKill: 36,
    },
    {
      name: 'liveness behind a startup probe, custom thresholds 5 × 3s timeout 2',
      probes: { startupProbe: { ...http, failureThreshold: 30 }, livenessProbe: { ...http, periodSeconds: 3, timeoutSeconds: 2, failureThreshold: 5 } },
      kind: 'liveness',
      hangToKill: 3 + 4 * 3 + 2 + 30,
    },
    {
      name: 'readiness 3 × 5s before the liveness kill',
      probes: { readinessProbe: { ...http, periodSeconds: 5 }, livenessProbe: { ...http } },
      kind: 'readiness',
      hangToNotReady: 16,
      hangToKill: 61,
    },
    {
      name: 'readiness with timeout ≥ period and successThreshold 2',
      probes: { readinessProbe: { ...http, periodSeconds: 1, timeoutSeconds: 3, successThreshold: 2, failureThreshold: 2 } },
      kind: 'readiness',
      hangToNotReady: 1 + 3 + 3,
    },
  ];
  for (const row of rows) {
    it(`${row.name}`, async () => {
      const pod = podWith({ name: 'app', ...row.probes }, row.grace);
      const container = pod.spec?.containers[0] as Container;
      const budget = computeBudget(object, pod, container, 'container');
      if (row.hangToKill !== undefined) expect(budget.hangToKillSeconds).toBe(row.hangToKill);
      if (row.hangToNotReady !== undefined) expect(budget.hangToNotReadySeconds).toBe(row.hangToNotReady);
      const probe = container[`${row.kind}Probe`] as Probe;
      const period = probe.periodSeconds ?? 10;
      // What the engine must produce for the probe itself; the kill adds the kubelet's grace.
      const grace = row.kind === 'liveness' ? killGracePeriodSeconds(pod, container, 'liveness') : 0;
      const worst = row.kind === 'liveness' ? (budget.hangToKillSeconds ?? 0) - grace : (budget.hangToNotReadySeconds ?? 0);
      for (const phase of [EPS, period * MS - EPS]) {
        const h = harness(row.probes, row.grace);
        h.app.readyAt = 0;
        await startWithPhase(h, period, 0, 0);
        await h.engine.clock.advance(120 * MS); // started, Ready, steady
        if (row.kind === 'readiness') expect(h.engine.readiness.get(TEST_CONTAINER_ID)).toBe('success');
        const hangAt = await hangWithPhase(h, row.kind, period, phase);
        await h.engine.clock.advance((worst + 2 * period) * MS);
        const seen = h.firstVerdict(row.kind, 'failure', hangAt);
        // The first failing probe lands `phase` after the hang; the worst phase is a period minus 1 ms.
        expect(seen).toBe((worst - period) * MS + phase);
      }
    });
  }

  it('hangToNotReadySeconds is the kill when the kill comes first (a killed container is not Ready)', () => {
    const pod = podWith({
      name: 'app',
      readinessProbe: { ...http, failureThreshold: 10 },
      livenessProbe: { ...http, periodSeconds: 1, failureThreshold: 1, terminationGracePeriodSeconds: 2 },
    });
    const container = pod.spec?.containers[0] as Container;
    const budget = computeBudget(object, pod, container, 'container');
    expect(budget.hangToKillSeconds).toBe(1 + 1 + killGracePeriodSeconds(pod, container, 'liveness'));
    expect(budget.hangToNotReadySeconds).toBe(4);
  });
});

describe('earliestReadySeconds against the engine: the app answers from the start', () => {
  // Each start below falls 999 ms into its second, and the worker ages it from the second's
  // start (startedAt cut to the whole second): a probe can pass the delay a second early.
  it('readiness initialDelay 6, successThreshold 3, period 2: a pod sync at 5.001 s reaches the bound 6 − 1 + 2 × 2', async () => {
    const probes = { readinessProbe: { ...http, initialDelaySeconds: 6, periodSeconds: 2, successThreshold: 3 } };
    const pod = podWith({ name: 'app', ...probes });
    const budget = computeBudget(object, pod, pod.spec?.containers[0] as Container, 'container');
    expect(budget.earliestReadySeconds).toBe(9);
    const h = harness(probes);
    h.app.readyAt = 0;
    const start = await startWithPhase(h, 2, 0, MS + EPS);
    expect(start % MS).toBe(MS - EPS);
    // The start's own sync re-phased the ticks to it (ages 0, 2, 4, 6 …); one at 5.001 s probes.
    await h.engine.clock.advance(5 * MS + EPS);
    h.sync();
    await h.engine.clock.advance(30 * MS);
    expect(h.firstVerdict('readiness', 'success', start)).toBe(9 * MS + EPS);
  });

  it('readiness initialDelay 5 with period 2: a pod sync at 4.001 s reaches the bound 5 − 1 + 2 × 2', async () => {
    const probes = { readinessProbe: { ...http, initialDelaySeconds: 5, periodSeconds: 2, successThreshold: 3 } };
    const pod = podWith({ name: 'app', ...probes });
    expect(computeBudget(object, pod, pod.spec?.containers[0] as Container, 'container').earliestReadySeconds).toBe(8);
    const h = harness(probes);
    h.app.readyAt = 0;
    const start = await startWithPhase(h, 2, 0, MS + EPS);
    expect(start % MS).toBe(MS - EPS);
    await h.engine.clock.advance(4 * MS + EPS);
    h.sync(); // not Ready yet: the sync triggers a readiness probe at once
    await h.engine.clock.advance(30 * MS);
    expect(h.firstVerdict('readiness', 'success', start)).toBe(8 * MS + EPS);
  });

  it('startup probe initialDelay 10 gates readiness: Ready at 10 − 1, triggered by the startup success', async () => {
    const probes = { startupProbe: { ...http, initialDelaySeconds: 10, periodSeconds: 5 }, readinessProbe: { ...http } };
    const pod = podWith({ name: 'app', ...probes });
    expect(computeBudget(object, pod, pod.spec?.containers[0] as Container, 'container').earliestReadySeconds).toBe(9);
    const h = harness(probes);
    h.app.readyAt = 0;
    const start = await startWithPhase(h, 5, 10, -(MS - EPS)); // the startup tick at age 9.001
    expect(start % MS).toBe(MS - EPS);
    await h.engine.clock.advance(40 * MS);
    expect(h.firstVerdict('startup', 'success', start)).toBe(9 * MS + EPS);
    expect(h.firstVerdict('readiness', 'success', start)).toBe(9 * MS + EPS);
  });
});
