/**
 * A ContainerRuntime whose containers live on a clock (the FakeClock, in `probelet
 * simulate`): nothing runs, but everything the kubelet sees happens as it would with the
 * local process runtime — a sandbox per pod, containers that start at once and exit when
 * their behaviour script says `exit(N)`, SIGTERM honoured at once (143) unless the script
 * ignores it, SIGKILL after the grace period (137), PLEG events, ExecSync on virtual time.
 *
 * With a start latency (as `probelet simulate` runs it), a container starts δ after the
 * kubelet asked for it, as on a node (prober/start-latency.ts, docs/timing-model.md): the
 * worker whose tick caused a restart never sees the new instance at that tick, and the ages
 * it compares with `initialDelaySeconds` fall a little short of whole periods.
 */
import type { Container, Pod } from '../api/types.js';
import type { ContainerEvent, ContainerRuntime, ExecResult, ImageInfo, PodSandbox, RuntimeContainerStatus } from '../runtime/types.js';
import { containerEvents } from '../runtime/container-events.js';
import type { ProbeType } from '../prober/types.js';
import { commandTimedOut } from '../spawn/index.js';
import type { Clock } from '../util/clock.js';
import { containerScript, isPlainInit, probeScript, type Behaviours } from './behaviour.js';
import { exitOf, phaseAt, type PhaseState, type Script } from './script.js';

/** Exit codes of a process killed by SIGTERM / SIGKILL (128 + signal), as the process runtime reports them. */
const SIGTERM_EXIT = 143;
const SIGKILL_EXIT = 137;

interface SimContainer {
  status: RuntimeContainerStatus;
  /** The script's own exit, or the SIGKILL after a grace period. */
  timer: unknown;
  /** Resolvers of stopContainer calls waiting for the exit. */
  waiters: Array<() => void>;
  /** When SIGTERM arrived (clock ms), if it has. */
  termAt?: number;
  /** The SIGKILL at the end of the grace period. */
  killTimer?: unknown;
  /** The script this instance plays (its own, or the default for its kind of container). */
  script: Script;
}

export interface SimRuntimeOptions {
  clock: Clock;
  behaviours: Behaviours;
  /**
   * Added to every container ID's number: each simulated node counts from its own base, so
   * that IDs stay unique across the nodes of one simulation (default 0).
   */
  idBase?: number;
  /**
   * δ of each start (ms): from the kubelet's request to the container's `startedAt`
   * (prober/start-latency.ts). Default: none, a container starts at once.
   */
  startLatency?: () => number;
  /**
   * What creating a pod's sandbox adds to its first start (ms): `RunPodSandbox` resolves this
   * long after the kubelet asked (prober/start-latency.ts `SANDBOX_LATENCY`). Default: none.
   */
  sandboxLatency?: () => number;
  /**
   * Behaviours of one pod, asked once when its sandbox is created (a cluster node reads them
   * from the pod's annotation); a pod it gives none plays `behaviours`.
   */
  behavioursFor?: (pod: Pod) => Behaviours | undefined;
  /**
   * Every image is on the node (a simulated node of a cluster, `probelet node --runtime
   * simulated`): the kubelet's image manager finds it and records its `Pulled` ("already present
   * on machine"), as a kubelet whose node has the image does; a policy `Always` pulls at once.
   * Default: a runtime without images (`probelet simulate`), nothing pulled, no `Pulled`.
   */
  imagesPresent?: boolean;
}

/** The image a node with every image holds: its reference as its ID, its size unknown. */
function presentImage(image: string): Promise<ImageInfo> {
  return Promise.resolve({ ref: image });
}

/** The simulated runtime; also tells the probe handlers what a container's script says now. */
export class SimRuntime implements ContainerRuntime {
  private readonly clock: Clock;
  private readonly behaviours: Behaviours;
  private readonly containers = new Map<string, SimContainer>();
  private readonly sandboxes = new Map<string, string>();
  private readonly events = containerEvents();
  private nextID = 1;
  private readonly idBase: number;
  private readonly startLatency: (() => number) | undefined;
  private readonly sandboxLatency: (() => number) | undefined;
  /** Starts under way (δ not over yet): finished on close. */
  private readonly starting = new Map<unknown, () => void>();
  private readonly behavioursFor: SimRuntimeOptions['behavioursFor'];
  /** Pod UID → its own behaviours (from `behavioursFor`), while its sandbox exists. */
  private readonly podBehaviours = new Map<string, Behaviours>();
  /** Told of every container the kubelet stops (so that exits it caused are told apart). */
  onStop: ((containerID: string) => void) | undefined;
  /** CRI `ImageStatus` and `PullImage` when every image is present (`imagesPresent`); else none, as the process runtime. */
  readonly imageStatus: ContainerRuntime['imageStatus'];
  readonly pullImage: ContainerRuntime['pullImage'];

  constructor(options: SimRuntimeOptions) {
    this.clock = options.clock;
    this.behaviours = options.behaviours;
    this.idBase = options.idBase ?? 0;
    this.startLatency = options.startLatency;
    this.sandboxLatency = options.sandboxLatency;
    this.behavioursFor = options.behavioursFor;
    this.imageStatus = options.imagesPresent === true ? presentImage : undefined;
    this.pullImage = options.imagesPresent === true ? presentImage : undefined;
  }

  /** The behaviours a pod's containers play: its own, else the runtime's. */
  private behavioursOf(podUID: string): Behaviours {
    return this.podBehaviours.get(podUID) ?? this.behaviours;
  }

  runPodSandbox(pod: Pod): Promise<PodSandbox> {
    const podUID = pod.metadata?.uid ?? '';
    const id = `sandbox-${podUID}`;
    this.sandboxes.set(id, podUID);
    const own = this.behavioursFor?.(pod);
    if (own) this.podBehaviours.set(podUID, own);
    // One address for every pod, like the local runtime's host network: outputs read alike.
    const sandbox: PodSandbox = { id, podUID, podIP: '127.0.0.1' };
    const delay = this.sandboxLatency?.();
    if (delay === undefined) return Promise.resolve(sandbox);
    return new Promise((resolve) => {
      const handle = this.clock.setTimeout(() => {
        this.starting.delete(handle);
        resolve(sandbox);
      }, Math.max(0, delay));
      this.starting.set(handle, () => resolve(sandbox));
    });
  }

  async removePodSandbox(sandboxID: string): Promise<void> {
    const podUID = this.sandboxes.get(sandboxID);
    this.sandboxes.delete(sandboxID);
    for (const c of this.containers.values()) {
      if (c.status.podUID === podUID && c.status.state === 'running') this.exit(c, SIGKILL_EXIT);
    }
    if (podUID !== undefined) this.podBehaviours.delete(podUID);
    return Promise.resolve();
  }

  /** Starts the container: at once, or δ from now with a start latency (the promise resolves then). */
  startContainer(sandboxID: string, pod: Pod, container: Container, attempt: number): Promise<RuntimeContainerStatus> {
    const delta = this.startLatency?.();
    if (delta === undefined) return Promise.resolve({ ...this.startNow(sandboxID, pod, container, attempt).status });
    return new Promise((resolve) => {
      const handle = this.clock.setTimeout(() => {
        this.starting.delete(handle);
        resolve({ ...this.startNow(sandboxID, pod, container, attempt).status });
      }, Math.max(0, delta));
      this.starting.set(handle, () => resolve({ ...this.startNow(sandboxID, pod, container, attempt).status }));
    });
  }

  /** The instance, running from now. */
  private startNow(sandboxID: string, pod: Pod, container: Container, attempt: number): SimContainer {
    const now = this.clock.now();
    const id = `simulate://${(this.idBase + this.nextID++).toString(16).padStart(12, '0')}`;
    const status: RuntimeContainerStatus = {
      id,
      podUID: this.sandboxes.get(sandboxID) ?? pod.metadata?.uid ?? '',
      name: container.name,
      attempt,
      image: container.image ?? '',
      state: 'running',
      createdAt: now,
      startedAt: now,
    };
    const script = containerScript(this.behavioursOf(status.podUID), container.name, isPlainInit(pod, container));
    const sim: SimContainer = { status, timer: undefined, waiters: [], script };
    this.containers.set(id, sim);
    const exit = exitOf(script);
    if (exit) sim.timer = this.clock.setTimeout(() => this.exit(sim, exit.code), exit.atMs);
    this.events.emit('started', sim.status);
    return sim;
  }

  stopContainer(containerID: string, gracePeriodMs: number): Promise<void> {
    const sim = this.containers.get(containerID);
    if (!sim || sim.status.state !== 'running') return Promise.resolve();
    this.onStop?.(containerID);
    const done = new Promise<void>((resolve) => sim.waiters.push(resolve));
    const onSigterm = this.behavioursOf(sim.status.podUID).get(sim.status.name)?.onSigterm;
    if (!onSigterm) {
      this.exit(sim, SIGTERM_EXIT);
      return done;
    }
    if (sim.termAt === undefined) {
      sim.termAt = this.clock.now();
      if (Number.isFinite(onSigterm.exitAfterMs)) {
        this.clock.clearTimeout(sim.timer);
        sim.timer = this.clock.setTimeout(() => this.exit(sim, onSigterm.exitCode), onSigterm.exitAfterMs);
      }
    }
    // A second stop (a shorter grace) may bring the SIGKILL forward, never push it back.
    this.clock.clearTimeout(sim.killTimer);
    sim.killTimer = this.clock.setTimeout(() => this.exit(sim, SIGKILL_EXIT), Math.max(0, gracePeriodMs));
    return done;
  }

  removeContainer(containerID: string): Promise<void> {
    const sim = this.containers.get(containerID);
    if (sim && sim.status.state !== 'running') this.containers.delete(containerID);
    return Promise.resolve();
  }

  containerStatus(containerID: string): RuntimeContainerStatus | undefined {
    const sim = this.containers.get(containerID);
    return sim ? { ...sim.status } : undefined;
  }

  listContainers(podUID?: string): RuntimeContainerStatus[] {
    return [...this.containers.values()].filter((c) => podUID === undefined || c.status.podUID === podUID).map((c) => ({ ...c.status }));
  }

  /** An exec follows the container's own script (see {@link SimRuntime.execAs} for a probe's). */
  execSync(containerID: string, cmd: string[], timeoutMs: number): Promise<ExecResult> {
    return this.execAs(containerID, cmd, timeoutMs, undefined);
  }

  /**
   * ExecSync answered by the script of probe `kind` (or the container's): `up` exits 0,
   * `down`/`fail` exit 1, `hang` and a `slow(D)` with D ≥ timeout time out at the timeout
   * (the runner's TimeoutError, so the exec handler words it as the kubelet does).
   */
  execAs(containerID: string, cmd: string[], timeoutMs: number, kind: ProbeType | undefined): Promise<ExecResult> {
    const sim = this.containers.get(containerID);
    if (!sim || sim.status.state !== 'running') {
      return Promise.reject(new Error(`container ${containerID} is not running`));
    }
    const state = this.stateOf(containerID, kind);
    const answer = (exitCode: number): ExecResult => ({ output: exitCode === 0 ? '' : `simulated: ${state?.kind ?? 'down'}\n`, exitCode });
    if (!state || state.kind === 'down' || state.kind === 'fail' || state.kind === 'exit') return Promise.resolve(answer(1));
    // A redirect is an HTTP answer; the process itself is up.
    if (state.kind === 'up' || state.kind === 'redirect') return Promise.resolve(answer(0));
    const delay = state.kind === 'slow' ? state.delayMs : Infinity;
    return new Promise((resolve, reject) => {
      if (delay < timeoutMs) this.clock.setTimeout(() => resolve(answer(0)), delay);
      else this.clock.setTimeout(() => reject(commandTimedOut(cmd, timeoutMs, '')), timeoutMs);
    });
  }

  /** What the instance's script says now for probe `kind` (undefined: no such running container). */
  stateOf(containerID: string, kind: ProbeType | undefined): PhaseState | undefined {
    const sim = this.containers.get(containerID);
    if (!sim || sim.status.state !== 'running') return undefined;
    const name = sim.status.name;
    const behaviours = this.behavioursOf(sim.status.podUID);
    const afterTerm = behaviours.get(name)?.onSigterm?.probes;
    if (sim.termAt !== undefined && afterTerm) return phaseAt(afterTerm, this.clock.now() - sim.termAt).phase.state;
    const script = kind === undefined ? sim.script : probeScript(behaviours, name, kind);
    return phaseAt(script, this.clock.now() - (sim.status.startedAt ?? 0)).phase.state;
  }

  containerLogs(): string {
    return '';
  }

  subscribe(listener: (event: ContainerEvent) => void): () => void {
    return this.events.subscribe(listener);
  }

  close(): Promise<void> {
    // A start under way is finished now: nothing of ours stays on the clock.
    for (const [handle, start] of [...this.starting]) {
      this.clock.clearTimeout(handle);
      start();
    }
    this.starting.clear();
    for (const c of this.containers.values()) if (c.status.state === 'running') this.exit(c, SIGKILL_EXIT);
    this.sandboxes.clear();
    this.podBehaviours.clear();
    return Promise.resolve();
  }

  private exit(sim: SimContainer, exitCode: number): void {
    if (sim.status.state !== 'running') return;
    this.clock.clearTimeout(sim.timer);
    this.clock.clearTimeout(sim.killTimer);
    sim.timer = undefined;
    sim.killTimer = undefined;
    Object.assign(sim.status, {
      state: 'exited',
      finishedAt: this.clock.now(),
      exitCode,
      reason: exitCode === 0 ? 'Completed' : 'Error',
    } satisfies Partial<RuntimeContainerStatus>);
    this.events.emit('exited', sim.status);
    for (const resolve of sim.waiters.splice(0)) resolve();
  }
}
