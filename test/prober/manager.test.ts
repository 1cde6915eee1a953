/** ProbeManager: catalog section B (T3–T11) plus close(), ordering and the restart rule of §3.7. */
import { describe, expect, it, vi } from 'vitest';
import type { Container, ContainerStatus, Pod, PodStatus } from '../../src/api/types.js';
import type { ProbeType, ResultUpdate } from '../../src/prober/types.js';
import {
  TEST_POD_UID,
  iso,
  makeEngine,
  runningContainer,
  settle,
  testProbe,
  type Engine,
} from '../helpers/engine.js';

const defaultProbe = testProbe({ failureThreshold: 3 });

type Key = [podUID: string, container: string, kind: ProbeType];

function withProbes(name: string, kinds: readonly ProbeType[], extra: Partial<Container> = {}): Container {
  const c: Container = { name, ...extra };
  for (const kind of kinds) c[`${kind}Probe`] = defaultProbe;
  return c;
}

function pod(uid: string, containers: Container[], initContainers?: Container[]): Pod {
  return { metadata: { name: uid, namespace: 'ns', uid }, spec: { containers, initContainers, restartPolicy: 'Never' } };
}

/** The exact set of registered worker keys (upstream `expectProbes`). */
function expectWorkers(e: Engine, candidates: readonly Key[], expected: readonly Key[]): void {
  const present = candidates.filter(([uid, name, kind]) => e.manager.getWorker(uid, name, kind) !== undefined);
  expect(present).toEqual(expected);
  expect(e.manager.workerCount()).toBe(expected.length);
}

/** Lets stopped workers exit (they are idle between probes: no clock movement needed). */
async function drain(e: Engine): Promise<void> {
  await settle(e.clock);
}

describe('addPod / removePod', () => {
  it('T3 add and remove pods', async () => {
    const e = makeEngine();
    const noProbe = pod('no_probe_pod', [{ name: 'no_probe1' }, { name: 'no_probe2' }, { name: 'no_probe3' }]);
    const probePod = pod('probe_pod', [
      { name: 'probe1' },
      withProbes('readiness', ['readiness']),
      { name: 'probe2' },
      withProbes('liveness', ['liveness']),
      { name: 'probe3' },
      withProbes('startup', ['startup']),
    ]);
    const all: Key[] = [
      ['probe_pod', 'readiness', 'readiness'],
      ['probe_pod', 'liveness', 'liveness'],
      ['probe_pod', 'startup', 'startup'],
    ];
    expectWorkers(e, all, []);
    e.manager.addPod(noProbe);
    expectWorkers(e, all, []);
    e.manager.addPod(probePod);
    expectWorkers(e, all, all);
    e.manager.removePod(noProbe);
    expectWorkers(e, all, all);
    e.manager.removePod(probePod);
    await drain(e);
    expectWorkers(e, all, []);
    e.manager.removePod(probePod);
    await drain(e);
    expectWorkers(e, all, []);
  });

  const sidecarKeys: Key[] = [
    ['restartable_init_container_pod', 'restartable-init', 'liveness'],
    ['restartable_init_container_pod', 'restartable-init', 'readiness'],
    ['restartable_init_container_pod', 'restartable-init', 'startup'],
  ];

  it('T4 an init container with probes but no restartPolicy gets no workers', async () => {
    const e = makeEngine();
    const p = pod(
      'restartable_init_container_pod',
      [{ name: 'main' }],
      [{ name: 'init' }, withProbes('restartable-init', ['liveness', 'readiness', 'startup'])],
    );
    e.manager.addPod(p);
    expectWorkers(e, sidecarKeys, []);
    e.manager.removePod(p);
    e.manager.removePod(p);
    await drain(e);
    expectWorkers(e, sidecarKeys, []);
  });

  it('T5 a sidecar gets its three workers; removePod stops them', async () => {
    const e = makeEngine();
    const p = pod(
      'restartable_init_container_pod',
      [{ name: 'main' }],
      [{ name: 'init' }, withProbes('restartable-init', ['liveness', 'readiness', 'startup'], { restartPolicy: 'Always' })],
    );
    e.manager.addPod(p);
    expectWorkers(e, sidecarKeys, sidecarKeys);
    e.manager.removePod(p);
    await drain(e);
    expectWorkers(e, sidecarKeys, []);
    e.manager.removePod(p);
    await drain(e);
    expectWorkers(e, sidecarKeys, []);
  });

  it('T6 addPod keeps an existing worker and still adds the missing ones', async () => {
    const e = makeEngine();
    const p = pod('test_pod', [withProbes('container_a', ['readiness']), withProbes('container_b', ['readiness'])]);
    const keys: Key[] = [
      ['test_pod', 'container_a', 'readiness'],
      ['test_pod', 'container_b', 'readiness'],
    ];
    e.manager.addPod(p);
    expectWorkers(e, keys, keys);
    const a = e.manager.getWorker('test_pod', 'container_a', 'readiness');
    const b = e.manager.getWorker('test_pod', 'container_b', 'readiness');
    b?.stop();
    await b?.run();
    expectWorkers(e, keys, [keys[0]!]);
    e.manager.addPod(p);
    expectWorkers(e, keys, keys);
    expect(e.manager.getWorker('test_pod', 'container_a', 'readiness')).toBe(a);
    expect(e.manager.getWorker('test_pod', 'container_b', 'readiness')).not.toBe(b);
  });

  it('an existing worker is not given the new pod object', () => {
    const e = makeEngine();
    const first = pod('p', [withProbes('c', ['readiness'])]);
    e.manager.addPod(first);
    e.manager.addPod(pod('p', [withProbes('c', ['readiness'])]));
    expect(e.manager.getWorker('p', 'c', 'readiness')?.pod).toBe(first);
  });

  it('creates workers for regular containers then sidecars, kinds in the order startup, readiness, liveness', async () => {
    const e = makeEngine();
    const order: string[] = [];
    for (const kind of ['liveness', 'readiness', 'startup'] as const) {
      e.resultsFor(kind).subscribe((u: ResultUpdate) => order.push(`${u.containerID}/${kind}`));
    }
    const all = ['liveness', 'readiness', 'startup'] as const;
    const p = pod('p', [withProbes('a', all), withProbes('b', all)], [withProbes('side', all, { restartPolicy: 'Always' })]);
    // Every container waiting: each worker's first iteration writes its cache, in start order.
    const waiting = (name: string): ContainerStatus => ({
      name,
      containerID: `test://${name}`,
      image: '',
      imageID: '',
      ready: false,
      restartCount: 0,
      state: { waiting: {} },
    });
    e.statuses.set('p', { phase: 'Pending', containerStatuses: [waiting('a'), waiting('b')], initContainerStatuses: [waiting('side')] });
    e.manager.addPod(p);
    expect(order).toEqual([]); // workers start asynchronously
    await settle(e.clock);
    const firsts = [...new Set(order)]; // first update of each worker, in the order they ran
    const byContainer = (id: string): string[] => firsts.filter((o) => o.startsWith(`test://${id}/`));
    expect(byContainer('a')).toEqual(['test://a/startup', 'test://a/readiness', 'test://a/liveness']);
    expect(firsts.filter((o) => o.endsWith('/startup'))).toEqual([
      'test://a/startup',
      'test://b/startup',
      'test://side/startup',
    ]);
  });

  it('stopLivenessAndStartup stops liveness and startup of regular containers only', async () => {
    const e = makeEngine();
    const all = ['liveness', 'readiness', 'startup'] as const;
    const p = pod('p', [withProbes('main', all)], [withProbes('side', all, { restartPolicy: 'Always' })]);
    e.manager.addPod(p);
    e.manager.stopLivenessAndStartup(p);
    await drain(e);
    const keys: Key[] = [
      ['p', 'main', 'liveness'],
      ['p', 'main', 'readiness'],
      ['p', 'main', 'startup'],
      ['p', 'side', 'liveness'],
      ['p', 'side', 'readiness'],
      ['p', 'side', 'startup'],
    ];
    expectWorkers(e, keys, [keys[1]!, keys[3]!, keys[4]!, keys[5]!]);
  });
});

describe('cleanupPods', () => {
  const kinds = (uid: string): Key[] => [
    [uid, 'prober1', 'readiness'],
    [uid, 'prober2', 'liveness'],
    [uid, 'prober3', 'startup'],
  ];
  const threeProbers = (uid: string): Pod =>
    pod(uid, [withProbes('prober1', ['readiness']), withProbes('prober2', ['liveness']), withProbes('prober3', ['startup'])]);

  it('T7 stops the workers of pods not desired', async () => {
    const e = makeEngine();
    e.manager.addPod(threeProbers('pod_cleanup'));
    e.manager.addPod(threeProbers('pod_keep'));
    e.manager.cleanupPods(new Set(['pod_keep']));
    await drain(e);
    expectWorkers(e, [...kinds('pod_cleanup'), ...kinds('pod_keep')], kinds('pod_keep'));
  });

  it('T8 repeated cleanup of 300 workers is harmless', async () => {
    const e = makeEngine();
    for (let i = 0; i < 100; i++) e.manager.addPod(pod(String(i), [withProbes('prober', ['readiness', 'liveness', 'startup'])]));
    expect(e.manager.workerCount()).toBe(300);
    for (let i = 0; i < 10; i++) e.manager.cleanupPods(new Set());
    await drain(e);
    expect(e.manager.workerCount()).toBe(0);
    expect(e.clock.pendingTimers()).toBe(0);
  });
});

describe('close', () => {
  it('stops every worker, resolves once all have exited, and ignores later addPod', async () => {
    const e = makeEngine({ startTime: undefined }); // jitter: every worker asleep
    const all = ['liveness', 'readiness', 'startup'] as const;
    for (let i = 0; i < 5; i++) e.manager.addPod(pod(`p${i}`, [withProbes('c', all)]));
    expect(e.manager.workerCount()).toBe(15);
    await e.manager.close();
    expect(e.manager.workerCount()).toBe(0);
    expect(e.clock.pendingTimers()).toBe(0);
    e.manager.addPod(pod('late', [withProbes('c', all)]));
    expect(e.manager.workerCount()).toBe(0);
  });

  it('waits for an in-flight probe', async () => {
    const e = makeEngine();
    e.prober.durationMs = 1_000;
    e.statuses.set('p', { phase: 'Running', containerStatuses: [runningContainer(e.clock, { name: 'c', containerID: 'test://c', started: true })] });
    e.manager.addPod(pod('p', [withProbes('c', ['readiness'])]));
    await settle(e.clock);
    let closed = false;
    const closing = e.manager.close().then(() => (closed = true));
    await settle(e.clock);
    expect(closed).toBe(false);
    await e.clock.advance(1_000);
    await closing;
    expect(e.manager.workerCount()).toBe(0);
  });
});

describe('updatePodStatus', () => {
  function status(name: string, state: ContainerStatus['state'], extra: Partial<ContainerStatus> = {}): ContainerStatus {
    return { name, containerID: `test://${name}_id`, image: '', imageID: '', ready: false, restartCount: 0, state, ...extra };
  }
  const running = { running: {} };
  const terminated0 = { terminated: { exitCode: 0 } };

  it('T9 regular containers', () => {
    const e = makeEngine();
    // Placeholder workers: no status is known for the pod, so they never touch the caches.
    const placeholders = pod(TEST_POD_UID, [
      withProbes('unprobed_container', ['liveness']),
      withProbes('probed_container_ready', ['readiness']),
      withProbes('probed_container_pending', ['readiness']),
      withProbes('probed_container_unready', ['readiness']),
      withProbes('not_started_container_no_readiness', ['startup']),
      withProbes('started_container_no_readiness', ['startup']),
      withProbes('terminated_container', ['readiness']),
    ]);
    e.manager.addPod(placeholders);
    const apiPod = placeholders;
    e.readiness.set('test://probed_container_ready_id', 'success', apiPod);
    e.readiness.set('test://probed_container_unready_id', 'failure', apiPod);
    e.startup.set('test://started_container_no_readiness_id', 'success', apiPod);
    e.readiness.set('test://terminated_container_id', 'success', apiPod);
    const s: PodStatus = {
      phase: 'Running',
      containerStatuses: [
        status('unprobed_container', running),
        status('probed_container_ready', running),
        status('probed_container_pending', running),
        status('probed_container_unready', running),
        status('not_started_container_no_readiness', running),
        status('started_container_no_readiness', running),
        status('terminated_container', terminated0),
      ],
    };
    const pending = e.manager.getWorker(TEST_POD_UID, 'probed_container_pending', 'readiness')!;
    const unready = e.manager.getWorker(TEST_POD_UID, 'probed_container_unready', 'readiness')!;
    const ready = e.manager.getWorker(TEST_POD_UID, 'probed_container_ready', 'readiness')!;
    const triggers = [vi.spyOn(pending, 'trigger'), vi.spyOn(unready, 'trigger'), vi.spyOn(ready, 'trigger')];
    e.manager.updatePodStatus(apiPod, s);
    const got = Object.fromEntries((s.containerStatuses ?? []).map((c) => [c.name, [c.started, c.ready]]));
    expect(got).toEqual({
      unprobed_container: [true, true],
      probed_container_ready: [true, true],
      probed_container_pending: [true, false],
      probed_container_unready: [true, false],
      not_started_container_no_readiness: [false, false],
      started_container_no_readiness: [true, true],
      terminated_container: [false, false],
    });
    expect(triggers.map((t) => t.mock.calls.length)).toEqual([1, 1, 0]);
  });

  function initPlaceholders(e: Engine): void {
    // Startup workers keyed by the init containers' names (addPod never probes plain
    // init containers, so they are registered through regular containers of the same pod UID).
    e.manager.addPod(pod(TEST_POD_UID, [withProbes('not_started_container', ['startup']), withProbes('started_container', ['startup'])]));
    e.startup.set('test://started_container_id', 'success', pod(TEST_POD_UID, []));
  }

  function initStatus(): PodStatus {
    return {
      phase: 'Pending',
      initContainerStatuses: [
        status('not_started_container', running),
        status('started_container', running),
        status('terminated_container', terminated0),
      ],
    };
  }

  it('T10 plain init containers: ready only once exited 0', () => {
    const e = makeEngine();
    initPlaceholders(e);
    const s = initStatus();
    const spec = pod(TEST_POD_UID, [{ name: 'main' }], [
      { name: 'not_started_container' },
      { name: 'started_container' },
      { name: 'terminated_container' },
    ]);
    e.manager.updatePodStatus(spec, s);
    expect(s.initContainerStatuses?.map((c) => [c.started, c.ready])).toEqual([
      [false, false],
      [true, false],
      [false, true],
    ]);
  });

  it('T11 restartable init containers: readiness like regular containers once started', () => {
    const e = makeEngine();
    initPlaceholders(e);
    const s = initStatus();
    const always = { restartPolicy: 'Always' };
    const spec = pod(TEST_POD_UID, [{ name: 'main' }], [
      { name: 'not_started_container', ...always },
      { name: 'started_container', ...always },
      { name: 'terminated_container', ...always },
    ]);
    e.manager.updatePodStatus(spec, s);
    expect(s.initContainerStatuses?.map((c) => [c.started, c.ready])).toEqual([
      [false, false],
      [true, true],
      [false, false],
    ]);
  });

  it('a started sidecar with a pending readiness worker is not ready and gets a manual trigger', () => {
    const e = makeEngine();
    const spec = pod(TEST_POD_UID, [{ name: 'main' }], [withProbes('side', ['readiness'], { restartPolicy: 'Always' })]);
    e.manager.addPod(spec);
    const w = e.manager.getWorker(TEST_POD_UID, 'side', 'readiness')!;
    const trigger = vi.spyOn(w, 'trigger');
    const s: PodStatus = { phase: 'Running', initContainerStatuses: [status('side', running)] };
    e.manager.updatePodStatus(spec, s);
    expect(s.initContainerStatuses?.[0]?.ready).toBe(false);
    expect(trigger).toHaveBeenCalledTimes(1);
  });

  it('init container spec looked up by index and name: a mismatch leaves ready alone', () => {
    const e = makeEngine();
    const s: PodStatus = { phase: 'Pending', initContainerStatuses: [status('first', terminated0)] };
    e.manager.updatePodStatus(pod(TEST_POD_UID, [{ name: 'main' }], [{ name: 'other' }, { name: 'first' }]), s);
    expect(s.initContainerStatuses?.[0]).toMatchObject({ started: false, ready: false });
  });

  it('not-started containers keep the ready value they came with', () => {
    const e = makeEngine();
    e.manager.addPod(pod(TEST_POD_UID, [withProbes('c', ['startup'])]));
    const s: PodStatus = { phase: 'Running', containerStatuses: [status('c', running, { ready: true })] };
    e.manager.updatePodStatus(pod(TEST_POD_UID, [withProbes('c', ['startup'])]), s);
    expect(s.containerStatuses?.[0]).toMatchObject({ started: false, ready: true });
  });

  it('started=true in the incoming status survives without a startup result (gate disabled)', () => {
    const e = makeEngine();
    const spec = pod(TEST_POD_UID, [withProbes('c', ['startup'])]);
    e.manager.addPod(spec);
    const s: PodStatus = { phase: 'Running', containerStatuses: [status('c', running, { started: true })] };
    e.manager.updatePodStatus(spec, s);
    expect(s.containerStatuses?.[0]?.started).toBe(true);
    // A startup verdict in the cache wins over the inherited flag.
    e.startup.set('test://c_id', 'failure', spec);
    e.manager.updatePodStatus(spec, s);
    expect(s.containerStatuses?.[0]?.started).toBe(false);
  });

  describe('kubelet-restart rule', () => {
    const kubeletStart = 1_000_000;
    function setup(apiReady: boolean | undefined): { e: Engine; spec: Pod; s: PodStatus } {
      const e = makeEngine({ clockStart: kubeletStart, startTime: kubeletStart });
      const base = pod(TEST_POD_UID, [withProbes('c', ['readiness'])]);
      const spec: Pod =
        apiReady === undefined ? base : { ...base, status: { conditions: [{ type: 'Ready', status: apiReady ? 'True' : 'False' }] } };
      e.manager.addPod(spec);
      const s: PodStatus = {
        phase: 'Running',
        containerStatuses: [status('c', { running: { startedAt: iso(kubeletStart - 100_000) } })],
      };
      return { e, spec, s };
    }

    it('a survivor stays ready when the API pod was Ready', () => {
      const { e, spec, s } = setup(true);
      e.manager.updatePodStatus(spec, s);
      expect(s.containerStatuses?.[0]?.ready).toBe(true);
    });

    it('a survivor with a readiness probe is not ready when the API pod was not Ready', () => {
      for (const apiReady of [false, undefined]) {
        const { e, spec, s } = setup(apiReady);
        e.manager.updatePodStatus(spec, s);
        expect(s.containerStatuses?.[0]?.ready).toBe(false);
      }
    });

    it('a real readiness verdict replaces the inherited state', () => {
      const { e, spec, s } = setup(true);
      e.readiness.set('test://c_id', 'failure', spec);
      e.manager.updatePodStatus(spec, s);
      expect(s.containerStatuses?.[0]?.ready).toBe(false);
    });

    it('a container started by this kubelet is not covered', () => {
      const { e, spec, s } = setup(true);
      s.containerStatuses![0]!.state = { running: { startedAt: iso(kubeletStart - 5_000) } };
      e.manager.updatePodStatus(spec, s);
      expect(s.containerStatuses?.[0]?.ready).toBe(false);
    });
  });
});
