/**
 * One simulation: the real `Kubelet` (and with it the real ProbeManager, workers, Prober,
 * status manager and crash-loop back-off) over the simulated runtime and handlers, on a
 * FakeClock and a seeded random source. Nothing here decides what the kubelet does; it
 * only records what it did, on virtual time. More pods than one node holds run on as many
 * simulated nodes as they need (see {@link simulate}).
 */
import { firstByName } from '../util/by-name.js';
import { admitPods } from '../api/admit.js';
import type { ContainerStatus, Event, Pod, PodStatus } from '../api/types.js';
import { containerOfFieldPath, createEventRecorder } from '../kubelet/events.js';
import { Kubelet } from '../kubelet/kubelet.js';
import { Prober } from '../prober/prober.js';
import { PLEG_RELIST_PERIOD_MS, SANDBOX_LATENCY, START_LATENCY, type LatencyRange } from '../prober/start-latency.js';
import type { ProbeHistory } from '../prober/recorder.js';
import type { ProbeType } from '../prober/types.js';
import { FakeClock } from '../util/clock.js';
import type { Behaviours } from './behaviour.js';
import { simulatedHandlers, type ProbeCounter } from './handlers.js';
import { simulatedHandlerRunner } from './hooks.js';
import { driveNodes, localNodes, NODE_ID_SPAN, nodeName, nodeOptions, nodeSeed, simulationPlan } from './nodes.js';
import { seededRandom } from './random.js';
import { SimRuntime } from './runtime.js';
import { threadNodes } from './threads.js';

/** Virtual time starts here (a fixed instant, so every output is the same every time). */
export const SIMULATION_ORIGIN_MS = Date.UTC(2026, 0, 1);
/** Mixed into a node's seed for its latency stream, so that the kubelet's own draws stay as they were. */
const LATENCY_STREAM = 0x2545f491;
/** Mixed into a node's seed for where its virtual time 0 falls in a wall-clock second. */
const SECOND_PHASE_STREAM = 0x5bd1e995;
/** How long the kubelet may take to delete the pods after the simulated span (virtual). */
const CLOSE_LIMIT_MS = 10 * 60_000;

export interface SimulationOptions {
  /** Admitted pods (names, UIDs, defaults). */
  pods: readonly Pod[];
  behaviours: Behaviours;
  forMs: number;
  seed: number;
  kubeletRestart?: boolean;
  /**
   * Every status change of a pod, at virtual time `tMs` (ms since the start); `clockMs` is
   * its node's clock then (epoch ms), the clock its times and ages are read on.
   */
  onPod?: (pod: Pod, tMs: number, clockMs: number) => void;
  /** Every new or re-counted Event, at `tMs` and its node's `clockMs` (see `onPod`). */
  onEvent?: (event: Event, tMs: number, clockMs: number) => void;
  /** Keep every probe attempt in the flight recorder and return the whole timeline (for `--ui`). */
  record?: boolean;
  /**
   * Worker threads at most for a simulation of more than one node (1: none). Default: one
   * per core up to 4, none when the work is small (see `simulationPlan`). The output is the
   * same for any number.
   */
  threads?: number;
}

/** A probe-triggered kill, from the kubelet's `Killing` event. */
export interface Kill {
  tMs: number;
  probe: ProbeType;
  /** The event's message, e.g. `Container app failed liveness probe, will be restarted`. */
  message: string;
  /** When the killed instance started (ms since the start). */
  instanceStartMs: number;
}

export interface ContainerOutcome {
  name: string;
  readyAtMs: number | null;
  restarts: number;
  kills: Kill[];
  state: 'running' | 'waiting' | 'terminated';
  reason: string;
  /** Every `Started` of this container (ms since the start). */
  starts: number[];
  /** Every exit that no kill caused: the script's own `exit(N)`. */
  exits: { tMs: number; code: number }[];
}

export interface PodOutcome {
  pod: Pod;
  /**
   * How long after its creation second (`creationTimestamp`, whole seconds, at
   * {@link SIMULATION_ORIGIN_MS}) the pod's node got it: virtual time 0 falls at a phase of
   * the wall-clock second (see `startSimulation`). Adding it to a virtual time gives the
   * time on the node's clock since the creation, what ages are computed from.
   */
  clockPhaseMs: number;
  readyAtMs: number | null;
  containers: ContainerOutcome[];
}

export interface SimulationResult {
  endMs: number;
  pods: PodOutcome[];
  /** Probe handler calls (attempts) made. */
  probes: number;
  /** With `record`: pods, events and probe histories as they stood at the end, for the dashboard. */
  timeline?: { pods: Pod[]; events: Event[]; probes: ProbeHistory[] };
}

const KILL_MESSAGE = /failed (liveness|startup) probe/;

/** A simulation in progress: the kubelet and its clock, for callers that act on it (tests delete pods). */
export interface RunningSimulation {
  readonly kubelet: Kubelet;
  readonly clock: FakeClock;
  readonly runtime: SimRuntime;
  /** Virtual ms since the start. */
  now(): number;
  /** Moves virtual time on by `ms`, letting the kubelet do all it would meanwhile. */
  advance(ms: number): Promise<void>;
  /** What happened so far (outcomes are live objects, updated as time moves on). */
  result(): SimulationResult;
  /** Stops recording and winds the kubelet down out of sight; nothing stays on the clock. */
  finish(): Promise<SimulationResult>;
}

/**
 * Starts a simulation on one node: the pods are added at virtual time 0; time moves only
 * with `advance`. `node` (0 by default) is the node's place among the nodes of a bigger
 * simulation: it names the node, derives its seed and keeps its container IDs apart.
 */
export function startSimulation(options: Omit<SimulationOptions, 'forMs' | 'threads'>, node = 0): RunningSimulation {
  // Virtual time 0 falls at a phase of the wall-clock second drawn from the seed: the probe
  // worker reads `startedAt` cut to the whole second (prober/start-latency.ts), so where the
  // ticks fall within a second decides whether a restart's first probe after the delay comes
  // at it or a period later, as on a node, where nothing aligns the ticks with the seconds.
  const originMs = SIMULATION_ORIGIN_MS + Math.floor(seededRandom(nodeSeed(options.seed, node) ^ SECOND_PHASE_STREAM)() * 1000);
  const clock = new FakeClock(originMs, { settle: 'microtasks' });
  const t = (): number => clock.now() - originMs;
  // The node's own chance for what the runtime and the PLEG add (docs/timing-model.md), apart
  // from the kubelet's: a start's δ, a sandbox's, and where the relists fall.
  const latency = seededRandom(nodeSeed(options.seed, node) ^ LATENCY_STREAM);
  const relistPhaseMs = Math.floor(latency() * PLEG_RELIST_PERIOD_MS);
  const draw = (range: LatencyRange) => (): number => range.minMs + Math.round(latency() * (range.maxMs - range.minMs));
  const runtime = new SimRuntime({
    clock,
    behaviours: options.behaviours,
    idBase: node * NODE_ID_SPAN,
    startLatency: draw(START_LATENCY),
    sandboxLatency: draw(SANDBOX_LATENCY),
  });
  const recorder = createEventRecorder({ clock, host: nodeName(node) });
  const counter: ProbeCounter = { probes: 0 };
  const prober = new Prober({
    runner: { runInContainer: (id, cmd, ms) => runtime.execSync(id, cmd, ms) },
    recorder,
    clock,
    handlers: simulatedHandlers(runtime, clock, counter),
    // They read the URL and nothing else: the request built once per probe spec will do.
    httpHandlerReadsOnly: true,
  });
  const kubelet = new Kubelet({
    runtime,
    clock,
    random: seededRandom(nodeSeed(options.seed, node)),
    recorder,
    prober,
    kubeletRestart: options.kubeletRestart === true,
    admit: admitPods,
    lifecycleHandlers: simulatedHandlerRunner(clock),
    relistPhaseMs,
    // Unless asked for (`--ui`), nobody reads it: a simulated day should not pay for its rings.
    ...(options.record === true ? {} : { flightRecorder: false }),
  });

  const outcomes = new Map<string, PodOutcome>();
  for (const pod of options.pods) {
    const names = [...(pod.spec?.initContainers ?? []), ...(pod.spec?.containers ?? [])].map((c) => c.name);
    outcomes.set(pod.metadata?.uid ?? '', {
      pod,
      clockPhaseMs: originMs - SIMULATION_ORIGIN_MS,
      readyAtMs: null,
      containers: names.map((name) => ({ name, readyAtMs: null, restarts: 0, kills: [], state: 'waiting', reason: 'ContainerCreating', starts: [], exits: [] })),
    });
  }
  // By name: every status of a pod of n containers looks up each of them (a scan was n² per status).
  const byName = new Map([...outcomes].map(([uid, o]) => [uid, firstByName(o.containers)] as const));
  const containerOf = (uid: string, name: string): ContainerOutcome | undefined => byName.get(uid)?.get(name);

  /**
   * The container statuses `track` last read, per pod. The status manager's snapshots are
   * frozen and share what a change left alone, so a status the same object as last time
   * says nothing new (reading all n of a pod's at each of its changes was n² work).
   */
  const lastSeen = new Map<string, { init: readonly ContainerStatus[]; regular: readonly ContainerStatus[] }>();
  /** Ready times, restarts and states, from every status the kubelet stores. */
  const track = (uid: string, status: PodStatus): void => {
    const now = t();
    const outcome = outcomes.get(uid);
    const containers = byName.get(uid);
    if (!outcome || !containers) return;
    const ready = (status.conditions ?? []).some((c) => c.type === 'Ready' && c.status === 'True');
    if (ready && outcome.readyAtMs === null) outcome.readyAtMs = now;
    const seen = lastSeen.get(uid);
    const init = status.initContainerStatuses ?? [];
    const regular = status.containerStatuses ?? [];
    lastSeen.set(uid, { init, regular });
    const changed: ContainerStatus[] = [];
    for (const [list, before] of [[init, seen?.init], [regular, seen?.regular]] as const) {
      for (let i = 0; i < list.length; i++) {
        const s = list[i] as ContainerStatus;
        if (s !== before?.[i] || !Object.isFrozen(s)) changed.push(s);
      }
    }
    for (const s of changed) {
      const c = containers.get(s.name);
      if (!c) continue;
      if (s.ready && c.readyAtMs === null) c.readyAtMs = now;
      c.restarts = s.restartCount;
      if (s.state?.running) {
        c.state = 'running';
        c.reason = s.ready ? 'Ready' : 'NotReady';
      } else if (s.state?.terminated) {
        c.state = 'terminated';
        c.reason = s.state.terminated.reason ?? `ExitCode:${s.state.terminated.exitCode}`;
      } else {
        c.state = 'waiting';
        c.reason = s.state?.waiting?.reason ?? '';
      }
    }
  };
  const offStatus = kubelet.statusManager.subscribe(track);
  const stopping = new Set<string>();
  const offRuntime = runtime.subscribe((e) => {
    if (e.type !== 'exited' || stopping.has(e.status.id)) return;
    containerOf(e.status.podUID, e.status.name)?.exits.push({ tMs: t(), code: e.status.exitCode ?? 0 });
  });
  runtime.onStop = (id) => stopping.add(id);
  // The API view of the pod (times serialized) is made only for a caller that prints it.
  const onPod = options.onPod;
  const offPod = onPod
    ? kubelet.onPodStatus((pod) => {
        const outcome = outcomes.get(pod.metadata?.uid ?? '');
        if (outcome) outcome.pod = pod;
        onPod(pod, t(), clock.now());
      })
    : () => undefined;
  // Starts and kills from the kubelet's log view (every event): the spam filter may keep a
  // pod's 26th Started or Killing from the API, not from the outcome. The caller's timeline
  // gets what the API shows, as `probelet run` prints it.
  const offLog = recorder.subscribeLog((event) => {
    const now = t();
    const container = containerOfFieldPath(event.involvedObject.fieldPath);
    const c = container === undefined ? undefined : containerOf(event.involvedObject.uid ?? '', container);
    if (c && event.reason === 'Started' && c.starts.at(-1) !== now) c.starts.push(now);
    const kill = KILL_MESSAGE.exec(event.message ?? '');
    if (c && event.reason === 'Killing' && kill) {
      c.kills.push({ tMs: now, probe: kill[1] as ProbeType, message: event.message ?? '', instanceStartMs: c.starts.at(-1) ?? 0 });
    }
  });
  const onEvent = options.onEvent;
  const offEvents = onEvent ? recorder.subscribe((event) => onEvent(event, t(), clock.now())) : () => undefined;

  kubelet.addPods(options.pods);
  const result = (): SimulationResult => ({ endMs: t(), pods: [...outcomes.values()], probes: counter.probes });
  return {
    kubelet,
    clock,
    runtime,
    now: t,
    advance: (ms) => clock.advance(ms),
    result,
    async finish() {
      offStatus();
      offRuntime();
      offPod();
      offLog();
      offEvents();
      const final = result();
      if (options.record === true) final.timeline = { pods: kubelet.listPods(), events: kubelet.listEvents(), probes: kubelet.listProbes() };
      // Wind down as `probelet run` does, out of sight: nothing may be left on the clock.
      let closed = false;
      void kubelet.close().then(() => (closed = true));
      for (let waited = 0; !closed && waited < CLOSE_LIMIT_MS; waited += 1000) await clock.advance(1000);
      return final;
    },
  };
}

/**
 * Runs the pods for `forMs` of virtual time and tells what happened. The pods of one
 * node (`MAX_PODS_PER_NODE`, the kubelet's default `maxPods`: 110) run on one kubelet;
 * more on as many simulated nodes as they need (nodes.ts), on worker threads when the
 * machine has more than one core and the work pays for them (`simulationPlan`).
 */
export async function simulate(options: SimulationOptions): Promise<SimulationResult> {
  const { nodes, threads } = simulationPlan(options);
  if (nodes.length <= 1) {
    const running = startSimulation(options);
    await running.advance(options.forMs);
    return running.finish();
  }
  const shared = nodeOptions(options);
  // threadNodes ends the threads it started if it cannot start them all; from then on driveNodes closes them.
  return driveNodes(threads > 1 ? threadNodes(nodes, shared, threads) : localNodes(nodes, shared, startSimulation), options);
}
