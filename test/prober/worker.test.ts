/**
 * One worker iteration at a time (`doProbe`), catalog section C (T13–T28) and the derived
 * cases D1, D3, D4. Workers are built with `new ProbeWorker` (unregistered), like
 * upstream's `newTestWorker`.
 */
import { describe, expect, it } from 'vitest';
import type { Pod } from '../../src/api/types.js';
import { ProbeWorker } from '../../src/prober/worker.js';
import type { ProbeType, ResultUpdate } from '../../src/prober/types.js';
import {
  ALL_KINDS,
  TEST_CONTAINER_ID,
  TEST_CONTAINER_NAME,
  TEST_POD_UID,
  containerOf,
  fixturePod,
  fixtureSidecarPod,
  iso,
  makeEngine,
  proberSeries,
  runningContainer,
  runningInitStatus,
  runningStatus,
  sidecarOf,
  terminatedStatus,
  testProbe,
  waitingStatus,
  withStatus,
} from '../helpers/engine.js';

const INITIAL = { liveness: 'success', readiness: 'failure', startup: 'unknown' } as const;

describe('T13 doProbe branches', () => {
  for (const kind of ALL_KINDS) {
    const started = kind !== 'startup';
    describe(kind, () => {
      it('13.1 no status: keep going, nothing cached', async () => {
        const e = makeEngine();
        const w = e.newWorker(kind);
        expect(await w.doProbe()).toBe(true);
        expect(e.resultsFor(kind).get(TEST_CONTAINER_ID)).toBeUndefined();
        expect(e.prober.calls).toHaveLength(0);
      });

      it('13.2 pod Failed: stop, nothing cached', async () => {
        const e = makeEngine();
        const w = e.newWorker(kind);
        e.statuses.set(TEST_POD_UID, { ...runningStatus(e.clock, { started }), phase: 'Failed' });
        expect(await w.doProbe()).toBe(false);
        expect(e.resultsFor(kind).get(TEST_CONTAINER_ID)).toBeUndefined();
      });

      it('13.2b pod Succeeded: stop', async () => {
        const e = makeEngine();
        const w = e.newWorker(kind);
        e.statuses.set(TEST_POD_UID, { ...runningStatus(e.clock, { started }), phase: 'Succeeded' });
        expect(await w.doProbe()).toBe(false);
      });

      it('13.3 deletion timestamp in the pod snapshot', async () => {
        const e = makeEngine();
        const w = e.newWorker(kind);
        e.statuses.set(TEST_POD_UID, runningStatus(e.clock, { started }));
        // Set after construction: the snapshot is the very pod object the worker was given.
        w.pod.metadata = { ...w.pod.metadata, deletionTimestamp: iso(e.clock.now()) };
        expect(await w.doProbe()).toBe(kind === 'readiness');
        expect(e.resultsFor(kind).get(TEST_CONTAINER_ID)).toBe('success');
        expect(e.prober.calls).toHaveLength(kind === 'readiness' ? 1 : 0);
      });

      it('13.4 status only for another container: keep going, nothing cached', async () => {
        const e = makeEngine();
        const w = e.newWorker(kind);
        e.statuses.set(TEST_POD_UID, runningStatus(e.clock, { started, name: 'other', containerID: 'test://other' }));
        expect(await w.doProbe()).toBe(true);
        expect(e.resultsFor(kind).get(TEST_CONTAINER_ID)).toBeUndefined();
        expect(e.resultsFor(kind).get('test://other')).toBeUndefined();
      });

      it('13.5 waiting container: keep going, Failure cached (D4)', async () => {
        const e = makeEngine();
        const w = e.newWorker(kind);
        e.statuses.set(TEST_POD_UID, waitingStatus());
        expect(await w.doProbe()).toBe(true);
        expect(e.resultsFor(kind).get(TEST_CONTAINER_ID)).toBe('failure');
        expect(e.prober.calls).toHaveLength(0);
      });

      it('13.6 terminated container in a Never pod: stop, Failure cached', async () => {
        const e = makeEngine();
        const w = e.newWorker(kind);
        e.statuses.set(TEST_POD_UID, terminatedStatus(0));
        expect(await w.doProbe()).toBe(false);
        expect(e.resultsFor(kind).get(TEST_CONTAINER_ID)).toBe('failure');
      });

      it('13.7 running and the probe succeeds: Success', async () => {
        const e = makeEngine();
        const w = e.newWorker(kind);
        e.statuses.set(TEST_POD_UID, runningStatus(e.clock, { started }));
        expect(await w.doProbe()).toBe(true);
        expect(e.resultsFor(kind).get(TEST_CONTAINER_ID)).toBe('success');
        expect(e.prober.calls).toEqual([{ probeType: kind, containerID: TEST_CONTAINER_ID, at: e.clock.now() }]);
      });

      it('13.8 negative initial delay never blocks', async () => {
        const e = makeEngine();
        const w = e.newWorker(kind, testProbe({ initialDelaySeconds: -100 }));
        e.statuses.set(TEST_POD_UID, runningStatus(e.clock, { started }));
        expect(await w.doProbe()).toBe(true);
        expect(e.resultsFor(kind).get(TEST_CONTAINER_ID)).toBe('success');
      });
    });
  }
});

describe('T14 initial delay', () => {
  for (const kind of ALL_KINDS) {
    it(`${kind}: initial value during the delay, probed after it`, async () => {
      const e = makeEngine();
      const w = e.newWorker(kind, testProbe({ initialDelaySeconds: 10 }));
      const started = kind !== 'startup';
      e.statuses.set(TEST_POD_UID, runningStatus(e.clock, { started }));
      expect(await w.doProbe()).toBe(true);
      expect(e.resultsFor(kind).get(TEST_CONTAINER_ID)).toBe(INITIAL[kind]);
      expect(e.prober.calls).toHaveLength(0);

      e.statuses.set(TEST_POD_UID, runningStatus(e.clock, { started, startedAt: e.clock.now() - 100_000 }));
      expect(await w.doProbe()).toBe(true);
      expect(e.resultsFor(kind).get(TEST_CONTAINER_ID)).toBe('success');
    });
  }

  it('compares whole elapsed seconds: 9.9 s is still inside a 10 s delay', async () => {
    // A start on a whole second, so that cutting it to the second (below) changes nothing.
    const e = makeEngine({ clockStart: 1_000_900 });
    const w = e.newWorker('readiness', testProbe({ initialDelaySeconds: 10 }));
    e.statuses.set(TEST_POD_UID, runningStatus(e.clock, { started: true, startedAt: e.clock.now() - 9_900 }));
    await w.doProbe();
    expect(e.prober.calls).toHaveLength(0);
    await e.clock.advance(100);
    await w.doProbe();
    expect(e.prober.calls).toHaveLength(1);
  });
  it('ages the container from startedAt cut to the whole second, as the status manager stores it (normalizeStatus)', async () => {
    // Started at x.700 and probed 9.5 s later: 10.2 s from x.000, so a 10 s delay has passed.
    const e = makeEngine({ clockStart: 1_010_200 });
    const w = e.newWorker('readiness', testProbe({ initialDelaySeconds: 10 }));
    e.statuses.set(TEST_POD_UID, runningStatus(e.clock, { started: true, startedAt: 1_000_700 }));
    await e.clock.advance(0);
    await w.doProbe();
    expect(e.prober.calls).toHaveLength(1);
    // 8.9 s after x.700 is 9.6 s from x.000: still inside.
    const early = makeEngine({ clockStart: 1_009_600 });
    const v = early.newWorker('readiness', testProbe({ initialDelaySeconds: 10 }));
    early.statuses.set(TEST_POD_UID, runningStatus(early.clock, { started: true, startedAt: 1_000_700 }));
    await v.doProbe();
    expect(early.prober.calls).toHaveLength(0);
  });
  it('truncates toward zero like Go: a start up to 1 s in the future does not block a zero delay', async () => {
    const e = makeEngine();
    const w = e.newWorker('readiness');
    e.statuses.set(TEST_POD_UID, runningStatus(e.clock, { started: true, startedAt: e.clock.now() + 1_500 }));
    await w.doProbe();
    expect(e.prober.calls).toHaveLength(0); // -1.5 s truncates to -1 < 0
    e.statuses.set(TEST_POD_UID, runningStatus(e.clock, { started: true, startedAt: e.clock.now() + 500 }));
    await w.doProbe();
    expect(e.prober.calls).toHaveLength(1); // -0.5 s truncates to 0
  });
});

describe('thresholds', () => {
  it('T15 failure threshold (readiness, S=1, F=3)', async () => {
    const e = makeEngine();
    const w = e.newWorker('readiness', testProbe({ successThreshold: 1, failureThreshold: 3 }));
    e.statuses.set(TEST_POD_UID, runningStatus(e.clock, { started: true }));
    const cached = (): string | undefined => e.readiness.get(TEST_CONTAINER_ID);
    for (let round = 0; round < 2; round++) {
      e.prober.result = 'success';
      for (let i = 0; i < 3; i++) {
        expect(await w.doProbe()).toBe(true);
        expect(cached()).toBe('success');
      }
      e.prober.result = 'failure';
      for (let i = 0; i < 2; i++) {
        expect(await w.doProbe()).toBe(true);
        expect(cached()).toBe('success');
      }
      for (let i = 0; i < 3; i++) {
        expect(await w.doProbe()).toBe(true);
        expect(cached()).toBe('failure');
      }
    }
  });

  it('T16 success threshold (readiness, S=3, F=1)', async () => {
    const e = makeEngine();
    const w = e.newWorker('readiness', testProbe({ successThreshold: 3, failureThreshold: 1 }));
    e.statuses.set(TEST_POD_UID, runningStatus(e.clock, { started: true }));
    e.readiness.set(TEST_CONTAINER_ID, 'failure', w.pod);
    const cached = (): string | undefined => e.readiness.get(TEST_CONTAINER_ID);
    for (let round = 0; round < 2; round++) {
      e.prober.result = 'success';
      for (let i = 0; i < 2; i++) {
        expect(await w.doProbe()).toBe(true);
        expect(cached()).toBe('failure');
      }
      for (let i = 0; i < 3; i++) {
        expect(await w.doProbe()).toBe(true);
        expect(cached()).toBe('success');
      }
      e.prober.result = 'failure';
      expect(await w.doProbe()).toBe(true);
      expect(cached()).toBe('failure');
    }
  });

  it('T17 startup success holds the worker and resets resultRun', async () => {
    const e = makeEngine();
    const w = e.newWorker('startup', testProbe({ successThreshold: 1, failureThreshold: 3 }));
    e.statuses.set(TEST_POD_UID, runningStatus(e.clock, { started: false }));
    expect(w.onHold).toBe(false);
    expect(await w.doProbe()).toBe(true);
    expect(e.startup.get(TEST_CONTAINER_ID)).toBe('success');
    expect(w.onHold).toBe(true);
    expect(w.resultRun).toBe(0);
  });

  for (const [name, id] of [
    ['T18 startup failure threshold', 'T18'],
    ['T22 resultRun on startup failure', 'T22'],
  ] as const) {
    it(`${name} (S=1, F=3)`, async () => {
      const e = makeEngine();
      const w = e.newWorker('startup', testProbe({ successThreshold: 1, failureThreshold: 3 }));
      e.statuses.set(TEST_POD_UID, runningStatus(e.clock, { started: false }));
      e.prober.result = 'failure';
      const steps = [
        { cached: 'unknown', run: 1, hold: false },
        { cached: 'unknown', run: 2, hold: false },
        { cached: 'failure', run: 0, hold: true },
      ];
      for (const step of steps) {
        expect(await w.doProbe(), id).toBe(true);
        expect(e.startup.get(TEST_CONTAINER_ID)).toBe(step.cached);
        expect(w.resultRun).toBe(step.run);
        expect(w.onHold).toBe(step.hold);
      }
      expect(w.lastResult).toBe('failure');
    });
  }

  it('T21 resultRun on liveness failure (S=1, F=3)', async () => {
    const e = makeEngine();
    const w = e.newWorker('liveness', testProbe({ successThreshold: 1, failureThreshold: 3 }));
    e.statuses.set(TEST_POD_UID, runningStatus(e.clock, { started: true }));
    const steps = [
      { probe: 'success', cached: 'success', run: 1 },
      { probe: 'failure', cached: 'success', run: 1 },
      { probe: 'failure', cached: 'success', run: 2 },
      { probe: 'failure', cached: 'failure', run: 0 },
    ] as const;
    for (const step of steps) {
      e.prober.result = step.probe;
      expect(await w.doProbe()).toBe(true);
      expect(e.liveness.get(TEST_CONTAINER_ID)).toBe(step.cached);
      expect(w.resultRun).toBe(step.run);
    }
    expect(w.onHold).toBe(true);
  });

  it('readiness never holds: every further failure is probed and keeps Failure', async () => {
    const e = makeEngine();
    const w = e.newWorker('readiness');
    e.statuses.set(TEST_POD_UID, runningStatus(e.clock, { started: true }));
    e.prober.result = 'failure';
    for (let i = 0; i < 3; i++) await w.doProbe();
    expect(e.prober.calls).toHaveLength(3);
    expect(w.onHold).toBe(false);
    expect(w.resultRun).toBe(3);
  });

  it('run counters survive a container restart (readiness S=3: 2 old + 1 new ⇒ Success)', async () => {
    const e = makeEngine();
    const w = e.newWorker('readiness', testProbe({ successThreshold: 3 }));
    e.statuses.set(TEST_POD_UID, runningStatus(e.clock, { started: true }));
    await w.doProbe();
    await w.doProbe();
    expect(e.readiness.get(TEST_CONTAINER_ID)).toBe('failure');
    e.statuses.set(TEST_POD_UID, runningStatus(e.clock, { started: true, containerID: 'test://newCont_ID' }));
    await w.doProbe();
    expect(e.readiness.get('test://newCont_ID')).toBe('success');
    expect(w.resultRun).toBe(3);
  });
});

describe('holds and container changes', () => {
  for (const kind of ['liveness', 'startup'] as const) {
    it(`T20 ${kind}: on hold after Failure until a new container ID`, async () => {
      const e = makeEngine();
      const w = e.newWorker(kind);
      const started = kind !== 'startup';
      e.statuses.set(TEST_POD_UID, runningStatus(e.clock, { started }));
      e.prober.result = 'failure';
      expect(await w.doProbe()).toBe(true);
      expect(e.resultsFor(kind).get(TEST_CONTAINER_ID)).toBe('failure');
      expect(w.onHold).toBe(true);

      e.prober.result = 'success';
      expect(await w.doProbe()).toBe(true);
      expect(e.resultsFor(kind).get(TEST_CONTAINER_ID)).toBe('failure');
      expect(w.onHold).toBe(true);
      expect(e.prober.calls).toHaveLength(1);

      e.statuses.set(TEST_POD_UID, runningStatus(e.clock, { started, containerID: 'test://newCont_ID' }));
      expect(await w.doProbe()).toBe(true);
      expect(w.containerID).toBe('test://newCont_ID');
      expect(e.resultsFor(kind).get('test://newCont_ID')).toBe('success');
      expect(e.resultsFor(kind).get(TEST_CONTAINER_ID)).toBeUndefined(); // old instance forgotten
      expect(w.onHold).toBe(kind === 'startup'); // startup holds after success too
    });
  }

  it('a new container ID removes the old result silently and seeds the initial value', async () => {
    const e = makeEngine();
    const w = e.newWorker('readiness', testProbe({ initialDelaySeconds: 100 }));
    const updates: ResultUpdate[] = [];
    e.readiness.subscribe((u) => updates.push(u));
    e.statuses.set(TEST_POD_UID, runningStatus(e.clock, { started: true }));
    await w.doProbe();
    e.statuses.set(TEST_POD_UID, runningStatus(e.clock, { started: true, containerID: 'test://two' }));
    await w.doProbe();
    expect(e.readiness.size).toBe(1);
    expect(updates).toEqual([
      { containerID: TEST_CONTAINER_ID, result: 'failure', podUID: TEST_POD_UID },
      { containerID: 'test://two', result: 'failure', podUID: TEST_POD_UID },
    ]);
  });
});

describe('startup gating', () => {
  it('T23 liveness is disabled until started', async () => {
    const e = makeEngine();
    const w = e.newWorker('liveness');
    e.statuses.set(TEST_POD_UID, runningStatus(e.clock, { started: false }));
    e.prober.result = 'failure';
    expect(await w.doProbe()).toBe(true);
    expect(e.liveness.get(TEST_CONTAINER_ID)).toBe('success');
    expect(e.prober.calls).toHaveLength(0);
    e.statuses.set(TEST_POD_UID, runningStatus(e.clock, { started: true }));
    expect(await w.doProbe()).toBe(true);
    expect(e.liveness.get(TEST_CONTAINER_ID)).toBe('failure');
  });

  it('T24 startup is disabled once started', async () => {
    const e = makeEngine();
    const w = e.newWorker('startup', testProbe({ successThreshold: 1, failureThreshold: 2 }));
    e.statuses.set(TEST_POD_UID, runningStatus(e.clock, { started: false }));
    e.prober.result = 'failure';
    await w.doProbe();
    expect(e.startup.get(TEST_CONTAINER_ID)).toBe('unknown');
    e.prober.result = 'success';
    await w.doProbe();
    expect(e.startup.get(TEST_CONTAINER_ID)).toBe('success');
    e.statuses.set(TEST_POD_UID, runningStatus(e.clock, { started: true }));
    e.prober.result = 'failure';
    expect(await w.doProbe()).toBe(true);
    expect(e.startup.get(TEST_CONTAINER_ID)).toBe('success');
    expect(e.prober.calls).toHaveLength(2);
  });

  it('startup with started=true skips even on a fresh (not held) container', async () => {
    const e = makeEngine();
    const w = e.newWorker('startup');
    e.statuses.set(TEST_POD_UID, runningStatus(e.clock, { started: true }));
    expect(await w.doProbe()).toBe(true);
    expect(e.prober.calls).toHaveLength(0);
    expect(e.startup.get(TEST_CONTAINER_ID)).toBe('unknown');
  });

  it('D3 readiness without a startup probe never probes until the status says started', async () => {
    const e = makeEngine();
    const w = e.newWorker('readiness');
    e.statuses.set(TEST_POD_UID, runningStatus(e.clock)); // started unset
    for (let i = 0; i < 3; i++) expect(await w.doProbe()).toBe(true);
    expect(e.prober.calls).toHaveLength(0);
    expect(e.readiness.get(TEST_CONTAINER_ID)).toBe('failure');
  });
});

describe('errors', () => {
  it('T25 a prober that throws: keep going, cache unchanged', async () => {
    const e = makeEngine();
    const w = e.newWorker('readiness');
    e.statuses.set(TEST_POD_UID, runningStatus(e.clock, { started: true }));
    expect(await w.doProbe()).toBe(true);
    expect(e.readiness.get(TEST_CONTAINER_ID)).toBe('success');
    e.prober.throws = new Error('panic');
    expect(await w.doProbe()).toBe(true);
    expect(e.readiness.get(TEST_CONTAINER_ID)).toBe('success');
    expect(w.resultRun).toBe(1);
  });

  it('a status provider that throws: keep going', async () => {
    const e = makeEngine({
      statusProvider: {
        getPodStatus: () => {
          throw new Error('status manager broken');
        },
      },
    });
    const w = e.newWorker('liveness');
    expect(await w.doProbe()).toBe(true);
  });

  it('D1 an errored probe changes no cache entry, no counter, no run', async () => {
    const e = makeEngine();
    const w = e.newWorker('readiness');
    e.statuses.set(TEST_POD_UID, runningStatus(e.clock, { started: true }));
    const updates: ResultUpdate[] = [];
    e.readiness.subscribe((u) => updates.push(u));
    e.prober.error = new Error('unresolvable port');
    for (let i = 0; i < 3; i++) expect(await w.doProbe()).toBe(true);
    expect(e.prober.calls).toHaveLength(3);
    expect(e.readiness.get(TEST_CONTAINER_ID)).toBe('failure'); // the seed, nothing more
    expect(updates).toHaveLength(1);
    expect(w.resultRun).toBe(0);
    expect(w.lastResult).toBeUndefined();
    expect(await proberSeries(e.registry)).toEqual([]);
  });
});

describe('non-running containers (ContainerRestartRules)', () => {
  function workerFor(pod: Pod, kind: ProbeType, e = makeEngine()): { e: typeof e; w: ProbeWorker } {
    return { e, w: new ProbeWorker(e.manager, kind, pod, containerOf(pod)) };
  }

  it('D4 a terminated liveness container gets Failure cached (all kinds)', async () => {
    for (const kind of ALL_KINDS) {
      const pod = fixturePod(kind);
      pod.spec!.restartPolicy = 'Always';
      const { e, w } = workerFor(pod, kind);
      e.statuses.set(TEST_POD_UID, terminatedStatus(1));
      expect(await w.doProbe()).toBe(true);
      expect(e.resultsFor(kind).get(TEST_CONTAINER_ID)).toBe('failure');
    }
  });

  it('pod OnFailure: keep going only for a non-zero exit', async () => {
    for (const [exitCode, keep] of [
      [0, false],
      [3, true],
    ] as const) {
      const pod = fixturePod('liveness');
      pod.spec!.restartPolicy = 'OnFailure';
      const { e, w } = workerFor(pod, 'liveness');
      e.statuses.set(TEST_POD_UID, terminatedStatus(exitCode));
      expect(await w.doProbe()).toBe(keep);
    }
  });

  it('container restartPolicy beats the pod policy; restartPolicyRules beat both', async () => {
    const cases = [
      { policy: 'Always', rules: undefined, exit: 0, keep: true },
      { policy: 'Never', rules: [{ action: 'Restart', exitCodes: { operator: 'In', values: [42] } }], exit: 42, keep: true },
      { policy: 'Never', rules: [{ action: 'Restart', exitCodes: { operator: 'In', values: [42] } }], exit: 1, keep: false },
      { policy: 'Never', rules: [{ action: 'Restart', exitCodes: { operator: 'NotIn', values: [0] } }], exit: 1, keep: true },
    ] as const;
    for (const c of cases) {
      const pod = fixturePod('readiness');
      const container = containerOf(pod);
      container.restartPolicy = c.policy;
      if (c.rules) container.restartPolicyRules = c.rules.map((r) => ({ ...r, exitCodes: { ...r.exitCodes, values: [...r.exitCodes.values] } }));
      const { e, w } = workerFor(pod, 'readiness');
      e.statuses.set(TEST_POD_UID, terminatedStatus(c.exit));
      expect(await w.doProbe(), JSON.stringify(c)).toBe(c.keep);
    }
  });

  it('T26 a sidecar in a Never pod keeps its worker after exiting; a plain container does not', async () => {
    const e = makeEngine();
    const pod = fixtureSidecarPod({ startup: testProbe() });
    const w = new ProbeWorker(e.manager, 'startup', pod, sidecarOf(pod));
    e.statuses.set(TEST_POD_UID, {
      phase: 'Running',
      containerStatuses: [],
      initContainerStatuses: terminatedStatus(1).containerStatuses,
    });
    expect(await w.doProbe()).toBe(true);
    expect(e.startup.get(TEST_CONTAINER_ID)).toBe('failure');

    const plain = e.newWorker('startup');
    e.statuses.set(TEST_POD_UID, terminatedStatus(1));
    expect(await plain.doProbe()).toBe(false);
  });
});

describe('container lookup', () => {
  it('falls back to init container statuses when the regular one is absent or has no ID', async () => {
    const e = makeEngine();
    const w = e.newWorker('readiness');
    const status = runningInitStatus(e.clock, { started: true });
    status.containerStatuses = [{ ...runningContainer(e.clock, { started: true }), containerID: '' }];
    e.statuses.set(TEST_POD_UID, status);
    await w.doProbe();
    expect(e.readiness.get(TEST_CONTAINER_ID)).toBe('success');
  });
});

describe('kubelet restart (ChangeContainerStatusOnKubeletRestart disabled)', () => {
  /** Manager started "now"; the container has been running for 100 s. */
  function restarted(): ReturnType<typeof makeEngine> {
    const e = makeEngine({ startTime: 1_000_000, clockStart: 1_000_000 });
    return e;
  }

  it('a survivor under the same container ID gets no seed', async () => {
    const e = restarted();
    const bare = fixturePod('readiness', testProbe({ initialDelaySeconds: 1000 }));
    const survivor = runningStatus(e.clock, { started: true, startedAt: e.clock.now() - 100_000 });
    const pod = withStatus(bare, structuredClone(survivor));
    e.statuses.set(TEST_POD_UID, survivor);
    const w = new ProbeWorker(e.manager, 'readiness', pod, containerOf(pod));
    expect(await w.doProbe()).toBe(true);
    expect(w.containerID).toBe(TEST_CONTAINER_ID);
    expect(e.readiness.get(TEST_CONTAINER_ID)).toBeUndefined();
  });

  it('a container started less than 10 s before the kubelet is not a survivor', async () => {
    const e = restarted();
    const bare = fixturePod('readiness', testProbe({ initialDelaySeconds: 1000 }));
    const status = runningStatus(e.clock, { started: true, startedAt: e.clock.now() - 10_000 });
    const pod = withStatus(bare, structuredClone(status));
    e.statuses.set(TEST_POD_UID, status);
    const w = new ProbeWorker(e.manager, 'readiness', pod, containerOf(pod));
    await w.doProbe();
    expect(e.readiness.get(TEST_CONTAINER_ID)).toBe('failure');
  });

  it('T27 sidecar startup re-seed: survivor ∧ started ⇒ Success', async () => {
    const e = restarted();
    const bare = fixtureSidecarPod({ startup: testProbe() });
    const status = runningInitStatus(e.clock, { started: true, startedAt: e.clock.now() - 100_000 });
    const pod = withStatus(bare, structuredClone(status));
    e.statuses.set(TEST_POD_UID, status);
    const w = new ProbeWorker(e.manager, 'startup', pod, sidecarOf(pod));
    expect(await w.doProbe()).toBe(true);
    expect(e.startup.get(TEST_CONTAINER_ID)).toBe('success');
    expect(e.prober.calls).toHaveLength(0);
  });

  it('T27 contrast: a regular container survivor gets no startup re-seed', async () => {
    const e = restarted();
    const bare = fixturePod('startup');
    const status = runningStatus(e.clock, { started: true, startedAt: e.clock.now() - 100_000 });
    const pod = withStatus(bare, structuredClone(status));
    e.statuses.set(TEST_POD_UID, status);
    const w = new ProbeWorker(e.manager, 'startup', pod, containerOf(pod));
    await w.doProbe();
    expect(e.startup.get(TEST_CONTAINER_ID)).toBeUndefined();
  });

  for (const kind of ['readiness', 'startup'] as const) {
    it(`T28 ${kind}: a replaced container (other ID in the snapshot) seeds the initial value`, async () => {
      const e = restarted();
      const bare = fixtureSidecarPod({ [kind]: testProbe({ initialDelaySeconds: 1000 }) });
      const status = runningInitStatus(e.clock, { started: true, startedAt: e.clock.now() - 100_000 });
      const pod = withStatus(bare, runningInitStatus(e.clock, { started: true, containerID: 'test://previous' }));
      e.statuses.set(TEST_POD_UID, status);
      const updates: ResultUpdate[] = [];
      e.resultsFor(kind).subscribe((u) => updates.push(u));
      const w = new ProbeWorker(e.manager, kind, pod, sidecarOf(pod));
      await w.doProbe();
      expect(updates).toEqual([{ containerID: TEST_CONTAINER_ID, result: INITIAL[kind], podUID: TEST_POD_UID }]);
    });
  }
});

describe('construction', () => {
  it('a worker built with new is not registered, and its snapshot is the given pod', async () => {
    const e = makeEngine();
    const bare = fixturePod('liveness');
    const pod = withStatus(bare, { phase: 'Pending' });
    const w = new ProbeWorker(e.manager, 'liveness', pod, containerOf(pod));
    expect(e.manager.getWorker(TEST_POD_UID, TEST_CONTAINER_NAME, 'liveness')).toBeUndefined();
    expect(e.manager.workerCount()).toBe(0);
    expect(w.pod).toBe(pod);
    expect(w.pod.status).toEqual({ phase: 'Pending' });
    expect(w.spec).toBe(containerOf(pod).livenessProbe);
    expect([w.containerID, w.lastResult, w.resultRun, w.onHold]).toEqual(['', undefined, 0, false]);
  });

  it('rejects a container without a probe of that kind', () => {
    const e = makeEngine();
    const pod = fixturePod('liveness');
    expect(() => new ProbeWorker(e.manager, 'readiness', pod, containerOf(pod))).toThrow(/readinessProbe/);
  });
});
