/**
 * Fixtures for the probe engine's unit tests, following the upstream test conventions
 * (kubelet-test-catalog.md, "Fixture pod"): a scripted prober, a fake status provider
 * and a manager wired to a FakeClock, so hours of probing run in milliseconds.
 */
import { Registry } from 'prom-client';
import type { ContainerStatus, ContainerWithRules, Pod, PodStatus, Probe } from '../../src/api/types.js';
import type { CommandRunner } from '../../src/probe/types.js';
import { ProbeManager, type ProbeManagerOptions } from '../../src/prober/manager.js';
import { ResultsManager } from '../../src/prober/results.js';
import type { PodStatusProvider, ProbeType, Result } from '../../src/prober/types.js';
import { ProbeWorker } from '../../src/prober/worker.js';
import { FakeClock, sleep, type Clock } from '../../src/util/clock.js';

export const TEST_POD_NAME = 'testPod';
export const TEST_POD_UID = 'pOd_UiD';
export const TEST_CONTAINER_NAME = 'cOnTaInEr_NaMe';
export const TEST_CONTAINER_ID = 'test://cOnTaInEr_Id';

export const PROBE_FIELD = {
  liveness: 'livenessProbe',
  readiness: 'readinessProbe',
  startup: 'startupProbe',
} as const;

export const ALL_KINDS: readonly ProbeType[] = ['liveness', 'readiness', 'startup'];

/** Test probe defaults: exec handler, timeout 1, period 1, success 1, failure 1. */
export function testProbe(overrides: Partial<Probe> = {}): Probe {
  return {
    exec: { command: ['/bin/true'] },
    timeoutSeconds: 1,
    periodSeconds: 1,
    successThreshold: 1,
    failureThreshold: 1,
    ...overrides,
  };
}

export function iso(ms: number): string {
  return new Date(ms).toISOString();
}

/** The fixture pod with one container carrying `probe` as its `probeType` probe. */
export function fixturePod(probeType: ProbeType, probe: Probe = testProbe()): Pod {
  return {
    metadata: { name: TEST_POD_NAME, namespace: '', uid: TEST_POD_UID },
    spec: {
      restartPolicy: 'Never',
      containers: [{ name: TEST_CONTAINER_NAME, [PROBE_FIELD[probeType]]: probe }],
    },
  };
}

/** The fixture pod whose single container is a restartable init container (sidecar) instead. */
export function fixtureSidecarPod(probes: Partial<Record<ProbeType, Probe>>): Pod {
  const sidecar: ContainerWithRules = { name: TEST_CONTAINER_NAME, restartPolicy: 'Always' };
  for (const [kind, probe] of Object.entries(probes) as [ProbeType, Probe][]) sidecar[PROBE_FIELD[kind]] = probe;
  return {
    metadata: { name: TEST_POD_NAME, namespace: '', uid: TEST_POD_UID },
    spec: { restartPolicy: 'Never', initContainers: [sidecar], containers: [{ name: 'main' }] },
  };
}

/** The pod with an API status, as the pod manager would hand it to AddPod. */
export function withStatus(pod: Pod, status: PodStatus): Pod {
  return { ...pod, status };
}

export function containerOf(pod: Pod): ContainerWithRules {
  const c = pod.spec?.containers[0];
  if (!c) throw new Error('pod has no container');
  return c;
}

export function sidecarOf(pod: Pod): ContainerWithRules {
  const c = pod.spec?.initContainers?.[0];
  if (!c) throw new Error('pod has no init container');
  return c;
}

export interface StatusOptions {
  started?: boolean;
  startedAt?: number;
  containerID?: string;
  name?: string;
}

/** A running container status (`startedAt` defaults to `clock.now()`). */
export function runningContainer(clock: Clock, opts: StatusOptions = {}): ContainerStatus {
  const status: ContainerStatus = {
    name: opts.name ?? TEST_CONTAINER_NAME,
    containerID: opts.containerID ?? TEST_CONTAINER_ID,
    image: 'img',
    imageID: '',
    ready: false,
    restartCount: 0,
    state: { running: { startedAt: iso(opts.startedAt ?? clock.now()) } },
  };
  if (opts.started !== undefined) status.started = opts.started;
  return status;
}

/** "Running status" of the catalog: phase Running, one running container. */
export function runningStatus(clock: Clock, opts: StatusOptions = {}): PodStatus {
  return { phase: 'Running', containerStatuses: [runningContainer(clock, opts)] };
}

/** Same, with the container listed among the init container statuses. */
export function runningInitStatus(clock: Clock, opts: StatusOptions = {}): PodStatus {
  return {
    phase: 'Running',
    initContainerStatuses: [runningContainer(clock, opts)],
    containerStatuses: [],
  };
}

export function terminatedStatus(exitCode: number, containerID = TEST_CONTAINER_ID): PodStatus {
  return {
    phase: 'Running',
    containerStatuses: [
      {
        name: TEST_CONTAINER_NAME,
        containerID,
        image: 'img',
        imageID: '',
        ready: false,
        restartCount: 0,
        state: { terminated: { exitCode } },
      },
    ],
  };
}

export function waitingStatus(): PodStatus {
  return {
    phase: 'Running',
    containerStatuses: [
      {
        name: TEST_CONTAINER_NAME,
        containerID: TEST_CONTAINER_ID,
        image: 'img',
        imageID: '',
        ready: false,
        restartCount: 0,
        state: { waiting: { reason: 'ContainerCreating' } },
      },
    ],
  };
}

/** The kubelet's status manager, reduced to a map the test writes. */
export class FakeStatusProvider implements PodStatusProvider {
  readonly statuses = new Map<string, PodStatus>();
  set(podUID: string, status: PodStatus): void {
    this.statuses.set(podUID, status);
  }
  delete(podUID: string): void {
    this.statuses.delete(podUID);
  }
  getPodStatus(podUID: string): PodStatus | undefined {
    return this.statuses.get(podUID);
  }
}

export interface ProbeCall {
  probeType: ProbeType;
  containerID: string;
  at: number;
}

/**
 * A prober whose verdict the test sets (`result`, `error`, `throws`), optionally taking
 * `durationMs` on the clock, and which records every call with its start time.
 */
export class ScriptedProber {
  result: Result = 'success';
  error: Error | undefined;
  throws: Error | undefined;
  durationMs = 0;
  readonly calls: ProbeCall[] = [];

  constructor(private readonly clock: Clock) {}

  probe = async (
    probeType: ProbeType,
    _pod: Pod,
    _status: PodStatus,
    _container: ContainerWithRules,
    containerID: string,
  ): Promise<{ result: Result; error?: Error }> => {
    this.calls.push({ probeType, containerID, at: this.clock.now() });
    if (this.durationMs > 0) await sleep(this.clock, this.durationMs);
    if (this.throws) throw this.throws;
    return this.error ? { result: 'failure', error: this.error } : { result: this.result };
  };
}

const unusedRunner: CommandRunner = {
  runInContainer: () => Promise.reject(new Error('the scripted prober runs no commands')),
};

export interface Engine {
  clock: FakeClock;
  statuses: FakeStatusProvider;
  prober: ScriptedProber;
  liveness: ResultsManager;
  readiness: ResultsManager;
  startup: ResultsManager;
  registry: Registry;
  manager: ProbeManager;
  resultsFor(probeType: ProbeType): ResultsManager;
  /** A worker for the fixture container, not registered in the manager (upstream `newTestWorker`). */
  newWorker(probeType: ProbeType, probe?: Probe): ProbeWorker;
}

/**
 * A manager on a FakeClock at `clockStart` (default 1 000 000 ms) with a scripted prober.
 * `startTime` defaults to long before the clock so no start-up jitter applies.
 */
export function makeEngine(
  overrides: Partial<ProbeManagerOptions> & { clockStart?: number } = {},
): Engine {
  const { clockStart, ...options } = overrides;
  const clock = new FakeClock(clockStart ?? 1_000_000);
  const statuses = new FakeStatusProvider();
  const prober = new ScriptedProber(clock);
  const liveness = new ResultsManager();
  const readiness = new ResultsManager();
  const startup = new ResultsManager();
  const registry = new Registry();
  const manager = new ProbeManager({
    statusProvider: statuses,
    livenessResults: liveness,
    readinessResults: readiness,
    startupResults: startup,
    runner: unusedRunner,
    clock,
    registry,
    prober,
    startTime: clock.now() - 3_600_000,
    random: () => 0.5,
    ...options,
  });
  const byKind = { liveness, readiness, startup };
  return {
    clock,
    statuses,
    prober,
    liveness,
    readiness,
    startup,
    registry,
    manager,
    resultsFor: (probeType) => byKind[probeType],
    newWorker: (probeType, probe) => {
      const pod = fixturePod(probeType, probe);
      return new ProbeWorker(manager, probeType, pod, containerOf(pod));
    },
  };
}

/** Lets pending promise chains (worker loops) settle without moving the clock. */
export async function settle(clock: FakeClock): Promise<void> {
  await clock.advance(0);
}

/** prom-client's JSON for the `prober_` families: the series each one holds. */
export async function proberSeries(registry: Registry): Promise<{ name: string; labels: Record<string, string | number>; value: number }[]> {
  const out: { name: string; labels: Record<string, string | number>; value: number }[] = [];
  for (const metric of await registry.getMetricsAsJSON()) {
    if (!metric.name.startsWith('prober_')) continue;
    for (const v of metric.values as { metricName?: string; labels: Record<string, string | number>; value: number }[]) {
      out.push({ name: v.metricName ?? metric.name, labels: v.labels, value: v.value });
    }
  }
  return out;
}
