/**
 * The Docker runtime: pods and containers on a Docker Engine — or Podman's Docker-compatible
 * service — through the Engine API (dockerode), behind the same `ContainerRuntime` seam as the
 * process and CRI runtimes, so the kubelet above runs unchanged.
 *
 * - A pod is an infra container of the pause image holding the pod's network (its address is
 *   the pod IP: HTTP/TCP/gRPC probes dial it from the host, as the kubelet's do), IPC and, with
 *   `shareProcessNamespace`, PID namespaces; its containers join them (pod-config.ts), as
 *   dockershim did. Volumes: volumes.ts.
 * - Container state is the daemon's: an inspect after every action, and a relist every second
 *   (the kubelet's PLEG) that finds the containers that exited on their own.
 * - Exec probes go through the exec API with containerd's ExecSync timeout semantics
 *   (exec-sync.ts): the timeout bounds the command's own run, past it the probe fails as
 *   upstream's does (`command timed out: …`).
 * - Logs come through the API (a follow stream per container) into the kubelet's log layout
 *   under `runDir`, the tail kept in memory.
 * - Everything created (containers, volumes) carries probelet's owner labels (run, PID and
 *   the PID's start time): `close()` removes what this run made; at start, what a probelet
 *   that is gone (SIGKILL) left is removed; what a live probelet made is never touched.
 * - `probelet node` (`node` and `adopt`): what a killed earlier run of the same node left is
 *   kept at start for the kubelet to adopt pod by pod (`adoptPod`), as the CRI runtime does;
 *   what no pod claims is removed once the node knows its pods (`removeUnadopted`).
 */
import { randomBytes } from 'node:crypto';
import { Writable } from 'node:stream';
import type Dockerode from 'dockerode';
import type { Container, Pod } from '../../api/types.js';
import { realClock, type Clock } from '../../util/clock.js';
import { goStatusErrorText } from '../../util/go-status.js';
import { resolveContainerEnv } from '../env.js';
import { containerFieldPath } from '../input-error.js';
import { DEFAULT_LOG_TAIL_BYTES, containerLogPath, openContainerLog, type ContainerLog } from '../logs.js';
import { readCriLogTail } from '../cri/cri-logs.js';
import { containerEvents } from '../container-events.js';
import { leftPods } from '../adoption.js';
import { inFlight } from '../in-flight.js';
import { ownerAlive, removedAtStart } from '../leftovers.js';
import { relistLoop, type RelistLoop } from '../relist.js';
import { singleFlight } from '../single-flight.js';
import { refreshedStatus } from '../vanished.js';
import type { AdoptedPod, ContainerEvent, ContainerRuntime, ExecResult, ImageInfo, PodSandbox, RegistryAuth, RuntimeCondition, RuntimeContainerStatus } from '../types.js';
import { MANAGED_LABEL, NODE_LABEL, POD_UID_LABEL, RESTART_COUNT_ANNOTATION, RUN_LABEL, ownerLabels, podLogDirectory, processStartTime, type Owner } from '../cri/pod-config.js';
import { apiMessage, apiStatus, CODE_UNKNOWN } from './api-errors.js';
import { criLogFramer, type CriLogFramer } from './cri-log-framing.js';
import { describeConnection, type DockerConnection } from './docker-host.js';
import { engineExecSync } from './exec-sync.js';
import { demuxFrames, unseenFrames, type LogFrame, type LogStream } from './log-catch-up.js';
import { CONTAINER_NAME_LABEL, CONTAINER_TYPE_LABEL, DEFAULT_PAUSE_IMAGE, SANDBOX_ID_LABEL, containerCreateOptions, infraCreateOptions } from './pod-config.js';
import { podVolumeSources, type VolumePolicy, type VolumeSource } from './volumes.js';
import { dockerAuthConfig } from './registry-auth.js';

/** How long the first call may take before the daemon counts as unreachable. */
const CONNECT_TIMEOUT_MS = 5_000;
/** How long `GET /version` may take once the daemon answered its ping. */
const VERSION_TIMEOUT_MS = 30_000;
/**
 * Deadline of each removal when cleaning up: a wedged daemon must not hold Ctrl-C for ever, but a
 * busy one is slow (a `docker rm -f` took 14 s here with the machine's load at 55).
 */
const CLEANUP_TIMEOUT_MS = 30_000;
/** How long an exit waits for the container's log to be complete (logComplete). */
const LOG_DRAIN_TIMEOUT_MS = 2_000;
/** The pod IP of a host-network pod: the node's, which probelet reports as 127.0.0.1. */
const HOST_NETWORK_POD_IP = '127.0.0.1';

export interface DockerRuntimeOptions {
  connection: DockerConnection;
  /** Root of the pod log directories (the kubelet's `/var/log/pods`); configMap/secret files go there too. */
  runDir: string;
  clock?: Clock;
  relistPeriodMs?: number;
  /** Relist at `relistPhaseMs + k × relistPeriodMs` of the clock (as CriRuntimeOptions.relistPhaseMs). */
  relistPhaseMs?: number;
  logTailBytes?: number;
  /** The infra container's image. Default {@link DEFAULT_PAUSE_IMAGE}. */
  pauseImage?: string;
  volumes?: VolumePolicy;
  /** The node name of a `probelet node` agent, labelled on everything it creates (NODE_LABEL). */
  node?: string;
  /**
   * With `node`: keep what a killed earlier run of this node left (found by NODE_LABEL) for
   * `adoptPod`, instead of removing it at start.
   */
  adopt?: boolean;
  /** Where warnings go. Default `process.emitWarning`. */
  warn?: (message: string) => void;
  onLogWriteError?: (container: RuntimeContainerStatus, path: string, error: Error) => void;
}

interface SandboxRecord {
  readonly sandbox: PodSandbox;
  readonly volumes: ReadonlyMap<string, VolumeSource>;
}

interface ContainerRecord {
  readonly dockerID: string;
  readonly sandboxID: string;
  status: RuntimeContainerStatus;
  log?: ContainerLog;
  logStream?: NodeJS.ReadableStream;
  /** Ends the follow request, answered or not (Podman may never answer one for a container removed silent). */
  logAbort?: AbortController;
  /** Resolves once the log file holds all the container wrote (the follow stream ended and was caught up) and is closed. */
  logClosed?: Promise<void>;
}

/** What an earlier run of this node left of one pod, until adopted or removed. */
interface LeftPod {
  uid: string;
  infra: Dockerode.ContainerInfo[];
  containers: Dockerode.ContainerInfo[];
  volumes: string[];
}

/** A connect error in words that say what to do. */
export function explainDockerConnectError(connection: DockerConnection, err: unknown): Error {
  const where = describeConnection(connection);
  const code = (err as NodeJS.ErrnoException | undefined)?.code;
  if (code === 'ENOENT' || code === 'ECONNREFUSED') {
    return new Error(`no Docker daemon answers at ${where} (${code}): start one — \`npm run docker:up\` starts a private one and prints its DOCKER_HOST — or point --docker-host / DOCKER_HOST at yours (Podman: \`podman system service\`, unix:///run/podman/podman.sock)`);
  }
  if (code === 'EACCES') return new Error(`permission denied on ${where}: run probelet as root or as a member of the socket's group (docker)`);
  return new Error(`the Docker daemon at ${where} does not answer: ${apiMessage(err)}`);
}

/** `busybox` → `busybox:latest`: the Engine pulls every tag of a repository given without one. */
export function withDefaultTag(image: string): string {
  const last = image.slice(image.lastIndexOf('/') + 1);
  return last.includes(':') || last.includes('@') ? image : `${image}:latest`;
}

/** Connects (failing with an error that names the fix), removes crash leftovers, starts the relist. */
export async function createDockerRuntime(options: DockerRuntimeOptions): Promise<DockerRuntime> {
  // dockerode is loaded here, not with the module: a kubelet without Docker never pays for it.
  const { default: Docker } = await import('dockerode');
  const docker = new Docker(options.connection);
  let version: Dockerode.DockerVersion;
  try {
    await withTimeout(docker.ping(), CONNECT_TIMEOUT_MS, 'no answer to GET /_ping', options.clock);
    // Podman answers /version by running conmon and its OCI runtime (4 s on a loaded machine): a daemon that answered the ping gets longer.
    version = await withTimeout(docker.version(), VERSION_TIMEOUT_MS, 'no answer to GET /version', options.clock);
  } catch (err) {
    throw explainDockerConnectError(options.connection, err);
  }
  const runtime = new DockerRuntime(docker, version, options);
  try {
    await runtime.removeLeftovers();
  } catch (err) {
    await runtime.close();
    throw err;
  }
  runtime.startRelist();
  return runtime;
}

function withTimeout<T>(work: Promise<T>, ms: number, what: string, clock: Clock = realClock): Promise<T> {
  let timer: unknown;
  const timeout = new Promise<never>((_, reject) => {
    timer = clock.setTimeout(() => reject(new Error(what)), ms);
  });
  return Promise.race([work, timeout]).finally(() => clock.clearTimeout(timer));
}

/** See the file comment; build it with {@link createDockerRuntime}. */
export class DockerRuntime implements ContainerRuntime {
  readonly runsImages = true;
  readonly relists = true;
  /** `Docker Engine 20.10.24` or `Podman Engine 4.3.1`. */
  readonly version: string;
  /** Podman's service, whose follow streams of logs may end before the last lines (log-catch-up.ts). */
  private readonly isPodman: boolean;
  private readonly scheme = 'docker://';
  private readonly where: string;
  private readonly clock: Clock;
  private readonly runDir: string;
  private readonly logTailBytes: number;
  private readonly pauseImage: string;
  private readonly policy: VolumePolicy;
  private readonly owner: Owner;
  private readonly warn: (message: string) => void;
  private readonly onLogWriteError: DockerRuntimeOptions['onLogWriteError'];
  private readonly sandboxes = new Map<string, SandboxRecord>();
  private readonly containers = new Map<string, ContainerRecord>();
  private readonly events = containerEvents();
  private readonly calls = inFlight();
  private readonly relister: RelistLoop;
  private readonly sandboxRemovals = singleFlight<string>();
  /**
   * Stops in their grace period. Podman's service answers a stop only when the grace is over,
   * even once the container was removed (Docker answers when it is gone): close() ends them
   * after removing the containers, or a forced stop would wait out the grace.
   */
  private readonly stops = new Set<AbortController>();
  private readonly adopt: boolean;
  /** With `adopt`: what a killed earlier run of this node left, by pod UID, until adopted or removed. */
  private readonly left = leftPods<LeftPod>({
    takeOver: (pod, left) => this.takeOver(pod, left),
    forget: (left) => {
      for (const c of left.infra) this.sandboxes.delete(c.Id);
      for (const c of left.containers) this.forgetID(`${this.scheme}${c.Id}`);
      this.adoptedPods.delete(left.uid);
    },
    remove: (left) => this.removeListed([...left.containers, ...left.infra], left.volumes, 'an earlier run of this node left'),
    calls: this.calls,
  });
  /** Pods taken over from an earlier run: what they hold carries its run label, not this one's. */
  private readonly adoptedPods = new Set<string>();

  constructor(
    private readonly docker: Dockerode,
    version: Dockerode.DockerVersion,
    options: DockerRuntimeOptions,
  ) {
    const components = (version as { Components?: { Name?: string; Version?: string }[] }).Components ?? [];
    const podman = components.find((c) => /podman/i.test(c.Name ?? ''));
    this.version = podman ? `${podman.Name ?? 'Podman'} ${podman.Version ?? version.Version}` : `Docker Engine ${version.Version}`;
    this.isPodman = podman !== undefined;
    this.where = describeConnection(options.connection);
    this.clock = options.clock ?? realClock;
    this.runDir = options.runDir;
    this.relister = relistLoop({
      clock: this.clock,
      ...(options.relistPeriodMs !== undefined ? { periodMs: options.relistPeriodMs } : {}),
      ...(options.relistPhaseMs !== undefined ? { phaseMs: options.relistPhaseMs } : {}),
      relist: () => this.listExits(),
    });
    this.logTailBytes = options.logTailBytes ?? DEFAULT_LOG_TAIL_BYTES;
    this.pauseImage = options.pauseImage ?? DEFAULT_PAUSE_IMAGE;
    this.policy = options.volumes ?? {};
    this.warn = options.warn ?? ((message) => process.emitWarning(message));
    this.onLogWriteError = options.onLogWriteError;
    this.owner = { runID: randomBytes(6).toString('hex'), pid: process.pid, pidStart: processStartTime(process.pid), ...(options.node ? { node: options.node } : {}) };
    this.adopt = options.adopt === true && options.node !== undefined;
  }

  /** The label value of this run, for tests that look for what it left. */
  get runID(): string {
    return this.owner.runID;
  }

  // --- images -------------------------------------------------------------------------

  async imageStatus(image: string): Promise<ImageInfo | undefined> {
    try {
      const info = await this.docker.getImage(image).inspect();
      return { ref: info.Id, size: info.Size };
    } catch (err) {
      if (apiStatus(err) === 404) return undefined;
      throw new Error(apiMessage(err));
    }
  }

  /** Pulls with the credentials the kubelet's keyring found in the pod's pull Secrets, else anonymously. */
  async pullImage(image: string, _pod: Pod, credentials?: RegistryAuth): Promise<ImageInfo> {
    try {
      const auth = dockerAuthConfig(image, credentials);
      const stream = await this.docker.pull(withDefaultTag(image), auth ? { authconfig: auth } : {});
      await new Promise<void>((resolve, reject) => {
        this.docker.modem.followProgress(stream, (err: Error | null, output: { error?: string }[]) => {
          const failed = output.find((o) => typeof o.error === 'string');
          if (err) reject(err);
          else if (failed) reject(new Error(failed.error));
          else resolve();
        });
      });
    } catch (err) {
      const detail = apiMessage(err);
      throw new Error(`${goStatusErrorText(CODE_UNKNOWN, `Error response from daemon: ${detail}`)}${pullHint(detail)}`);
    }
    const status = await this.imageStatus(image);
    if (!status) throw new Error(goStatusErrorText(CODE_UNKNOWN, `image "${image}" not present after its pull`));
    return status;
  }

  /** The daemon answers `GET /_ping`: both conditions true; else rejects. */
  async runtimeStatus(): Promise<RuntimeCondition[]> {
    await withTimeout(this.docker.ping(), CONNECT_TIMEOUT_MS, `no answer from ${this.where}`, this.clock);
    return [
      { type: 'RuntimeReady', status: true, reason: '', message: '' },
      { type: 'NetworkReady', status: true, reason: '', message: '' },
    ];
  }

  // --- sandboxes ------------------------------------------------------------------------

  runPodSandbox(pod: Pod): Promise<PodSandbox> {
    return this.calls.track(this.makeSandbox(pod));
  }

  private async makeSandbox(pod: Pod): Promise<PodSandbox> {
    this.calls.assertOpen();
    const uid = pod.metadata?.uid ?? '';
    const volumes = podVolumeSources(pod, podLogDirectory(this.runDir, pod), this.policy);
    const labels = { ...ownerLabels(this.owner), [POD_UID_LABEL]: uid };
    for (const source of volumes.values()) {
      if (source.kind !== 'daemon-volume') continue;
      await this.docker.createVolume({ Name: source.name, Labels: labels, ...(source.memory ? { Driver: 'local', DriverOpts: { type: 'tmpfs', device: 'tmpfs' } } : {}) });
    }
    let infra: Dockerode.Container;
    try {
      infra = await this.docker.createContainer(infraCreateOptions(pod, this.owner, this.pauseImage));
    } catch (err) {
      await this.removeVolumes(volumes).catch(() => undefined);
      throw new Error(`creating the pod's infra container: ${apiMessage(err)}${apiStatus(err) === 404 ? ` (the pause image ${this.pauseImage} is not in the daemon: \`npm run docker:up\` loads it)` : ''}`);
    }
    const sandbox: PodSandbox = { id: infra.id, podUID: uid, podIP: HOST_NETWORK_POD_IP };
    this.sandboxes.set(infra.id, { sandbox, volumes });
    try {
      await infra.start();
      if (pod.spec?.hostNetwork !== true) sandbox.podIP = infraIP(await infra.inspect());
    } catch (err) {
      await this.removeSandboxByID(infra.id).catch(() => undefined);
      throw new Error(`starting the pod's infra container: ${apiMessage(err)}`);
    }
    // Closed while the sandbox was being made: it must not outlive the runtime.
    if (this.calls.closing) await this.removeSandboxByID(infra.id);
    return { ...sandbox };
  }

  removePodSandbox(sandboxID: string): Promise<void> {
    if (!this.sandboxes.has(sandboxID)) return Promise.resolve();
    return this.removeSandboxByID(sandboxID);
  }

  /**
   * One removal per sandbox at a time, tracked (close() waits for it): the kubelet removes a
   * finished pod's sandbox and removes it again when it is deleted, and the daemon refuses a
   * removal that races another ("removal of container … is already in progress").
   */
  private removeSandboxByID(sandboxID: string): Promise<void> {
    return this.sandboxRemovals(sandboxID, () => this.calls.track(this.removeSandbox(sandboxID)));
  }

  /**
   * Kills the pod's containers (their final status read first), then removes them, the infra
   * container and the pod's volumes. The containers' records stay (their last status, for the
   * kubelet; an exec on one is the daemon's "No such container") until removed or closed.
   */
  private async removeSandbox(sandboxID: string): Promise<void> {
    const records = [...this.containers.values()].filter((r) => r.sandboxID === sandboxID);
    await Promise.all(
      records.map(async (r) => {
        await ignoreGone(this.docker.getContainer(r.dockerID).stop({ t: 0 }));
        await this.refresh(r);
      }),
    );
    for (const r of records) await ignoreGone(this.docker.getContainer(r.dockerID).remove({ force: true }));
    await ignoreGone(this.docker.getContainer(sandboxID).remove({ force: true }));
    const record = this.sandboxes.get(sandboxID);
    this.sandboxes.delete(sandboxID);
    if (record) await this.removeVolumes(record.volumes);
  }

  private async removeVolumes(volumes: ReadonlyMap<string, VolumeSource>): Promise<void> {
    for (const source of volumes.values()) {
      if (source.kind === 'daemon-volume') await ignoreGone(this.docker.getVolume(source.name).remove({ force: true }));
    }
  }

  // --- containers -----------------------------------------------------------------------

  startContainer(sandboxID: string, pod: Pod, container: Container, attempt: number): Promise<RuntimeContainerStatus> {
    return this.calls.track(this.start(sandboxID, pod, container, attempt));
  }

  private async start(sandboxID: string, pod: Pod, container: Container, attempt: number): Promise<RuntimeContainerStatus> {
    this.calls.assertOpen();
    const sandbox = this.sandboxes.get(sandboxID);
    if (!sandbox) throw new Error(`pod sandbox "${sandboxID}" not found`);
    const env = resolveContainerEnv(pod, container, { podIP: sandbox.sandbox.podIP }, containerFieldPath(pod, container));
    const options = containerCreateOptions({ pod, container, attempt, infraID: sandboxID, env, owner: this.owner, volumes: sandbox.volumes });
    let created: Dockerode.Container;
    try {
      created = await this.docker.createContainer(options);
    } catch (err) {
      throw new Error(apiMessage(err));
    }
    const meta = pod.metadata ?? {};
    const record: ContainerRecord = {
      dockerID: created.id,
      sandboxID,
      status: {
        id: `${this.scheme}${created.id}`,
        podUID: sandbox.sandbox.podUID,
        name: container.name,
        attempt,
        image: container.image ?? '',
        state: 'created',
        createdAt: this.clock.now(),
        logPath: containerLogPath(this.runDir, { namespace: meta.namespace ?? 'default', name: meta.name ?? '', uid: meta.uid ?? '' }, container.name, attempt),
      },
    };
    this.containers.set(record.status.id, record);
    let startError: string | undefined;
    try {
      await created.start();
    } catch (err) {
      startError = apiMessage(err);
    }
    if (startError === undefined) this.followLogs(record, created);
    await this.refresh(record, false);
    if (startError !== undefined) {
      // As containerd reports a failed start (Docker leaves it `created` with exit 127 or 126).
      Object.assign(record.status, { state: 'exited', exitCode: 128, reason: 'StartError', message: startError, finishedAt: this.clock.now() });
    }
    if (record.status.state === 'exited') await this.logComplete(record);
    this.events.emit(record.status.state === 'exited' ? 'exited' : 'started', record.status);
    if (this.calls.closing) await ignoreGone(created.remove({ force: true }));
    return { ...record.status };
  }

  /**
   * The container's output from the API into its log file, in the CRI log format with the
   * daemon's times (cri-log-framing.ts), until it exits: the kubelet's `/var/log/pods` files,
   * which `kubectl logs` on a node reads as it reads the CRI runtime's.
   */
  private followLogs(record: ContainerRecord, container: Dockerode.Container): void {
    const path = record.status.logPath ?? '';
    let log: ContainerLog;
    try {
      // Nothing kept in memory: containerLogs reads the file's tail, as the CRI runtime does.
      log = openContainerLog(path, 0, (p, error) => this.onLogWriteError?.({ ...record.status }, p, error));
    } catch (err) {
      this.onLogWriteError?.({ ...record.status }, path, err instanceof Error ? err : new Error(String(err)));
      return;
    }
    record.log = log;
    record.logAbort = new AbortController();
    let closed = (): void => undefined;
    record.logClosed = new Promise((resolve) => (closed = resolve));
    const close = (): void => {
      log.close();
      closed();
    };
    // Not awaited: Podman answers a follow request only once the container wrote something.
    void container.logs({ follow: true, stdout: true, stderr: true, timestamps: true, abortSignal: record.logAbort.signal }).then(
      (stream) => this.pipeLogs(record, log, stream as NodeJS.ReadableStream, close),
      close,
    );
  }

  private pipeLogs(record: ContainerRecord, log: ContainerLog, stream: NodeJS.ReadableStream, close: () => void): void {
    if (this.containers.get(record.status.id) !== record) {
      // Forgotten (removed, closed) before the daemon answered.
      (stream as NodeJS.ReadableStream & { destroy?: () => void }).destroy?.();
      close();
      return;
    }
    record.logStream = stream;
    const now = (): number => this.clock.now();
    const framers: Record<LogStream, CriLogFramer> = { stdout: criLogFramer('stdout', now), stderr: criLogFramer('stderr', now) };
    const received: Record<LogStream, number> = { stdout: 0, stderr: 0 };
    const sink = (name: LogStream): Writable =>
      new Writable({
        write(chunk: Buffer, _encoding, done) {
          received[name] += chunk.length;
          log.write(framers[name].frame(chunk));
          done();
        },
      });
    this.docker.modem.demuxStream(stream, sink('stdout'), sink('stderr'));
    let ended = false;
    const end = (): void => {
      if (ended) return;
      ended = true;
      void this.catchUpLogs(record, received).then((missed) => {
        for (const frame of missed) log.write(framers[frame.stream].frame(frame.payload));
        for (const framer of Object.values(framers)) log.write(framer.end());
        close();
      });
    };
    stream.on('end', end);
    stream.on('error', end);
  }

  /**
   * On Podman, what the ended follow stream missed (log-catch-up.ts), read once without
   * `follow`; nothing elsewhere, nor for a container forgotten meanwhile, nor when the read fails.
   */
  private async catchUpLogs(record: ContainerRecord, received: Readonly<Record<LogStream, number>>): Promise<LogFrame[]> {
    if (!this.isPodman || this.containers.get(record.status.id) !== record) return [];
    try {
      const all = (await this.docker.getContainer(record.dockerID).logs({ follow: false, stdout: true, stderr: true, timestamps: true, abortSignal: record.logAbort?.signal })) as unknown as Buffer;
      return unseenFrames(demuxFrames(all), received);
    } catch {
      return [];
    }
  }

  async stopContainer(containerID: string, gracePeriodMs: number): Promise<void> {
    const record = this.containers.get(containerID);
    if (!record) return;
    const seconds = Math.max(0, Math.ceil(gracePeriodMs / 1000));
    const abort = new AbortController();
    this.stops.add(abort);
    try {
      await ignoreGone(this.docker.getContainer(record.dockerID).stop({ t: seconds, abortSignal: abort.signal }));
    } catch (err) {
      if (!abort.signal.aborted) throw err;
    } finally {
      this.stops.delete(abort);
    }
    await this.refresh(record);
  }

  async removeContainer(containerID: string): Promise<void> {
    const record = this.containers.get(containerID);
    if (!record) return;
    await ignoreGone(this.docker.getContainer(record.dockerID).remove({ force: true }));
    this.forget(record);
  }

  private forget(record: ContainerRecord): void {
    const stream = record.logStream as (NodeJS.ReadableStream & { destroy?: () => void }) | undefined;
    stream?.destroy?.();
    record.logAbort?.abort();
    record.log?.close();
    this.containers.delete(record.status.id);
  }

  private forgetID(containerID: string): void {
    const record = this.containers.get(containerID);
    if (record) this.forget(record);
  }

  containerStatus(containerID: string): RuntimeContainerStatus | undefined {
    const record = this.containers.get(containerID);
    return record ? { ...record.status } : undefined;
  }

  listContainers(podUID?: string): RuntimeContainerStatus[] {
    return [...this.containers.values()].filter((r) => podUID === undefined || r.status.podUID === podUID).map((r) => ({ ...r.status }));
  }

  execSync(containerID: string, cmd: string[], timeoutMs: number): Promise<ExecResult> {
    if (this.calls.closing) return Promise.reject(new Error('container runtime is closed'));
    const record = this.containers.get(containerID);
    if (!record) return Promise.reject(new Error(`container "${containerID}" not found`));
    // Not tracked: close() must not wait out a probe's timeout.
    return engineExecSync(this.docker, record.dockerID, cmd, timeoutMs, this.clock);
  }

  containerLogs(containerID: string): string {
    const path = this.containers.get(containerID)?.status.logPath;
    return path ? readCriLogTail(path, this.logTailBytes) : '';
  }

  subscribe(listener: (event: ContainerEvent) => void): () => void {
    return this.events.subscribe(listener);
  }

  // --- lifecycle ------------------------------------------------------------------------

  close(): Promise<void> {
    this.relister.stop();
    return this.calls.close(() => this.shutdown());
  }

  private async shutdown(): Promise<void> {
    try {
      // A node's adopted pods carry the earlier run's label: the node's own is the one they share.
      const label = this.adopt ? `${NODE_LABEL}=${this.owner.node ?? ''}` : `${RUN_LABEL}=${this.owner.runID}`;
      await this.removeLabelled(label, (labels) => labels[RUN_LABEL] === this.owner.runID || this.adoptedPods.has(labels[POD_UID_LABEL] ?? ''), 'of this run');
    } catch (err) {
      this.warn(`could not remove this run's containers from ${this.where}: ${apiMessage(err)}; the next probelet start on it removes them, or: docker rm -f $(docker ps -aq --filter label=${RUN_LABEL}=${this.owner.runID})`);
    } finally {
      for (const record of [...this.containers.values()]) this.forget(record);
      this.sandboxes.clear();
      for (const stop of this.stops) stop.abort();
    }
  }

  /**
   * Removes containers (the pods' own first, then their infra containers) and volumes that
   * carry `label` and satisfy `which`; one that cannot be removed is a warning naming it.
   */
  private async removeLabelled(label: string, which: (labels: Record<string, string>) => boolean, whose: string): Promise<void> {
    const listed = await this.docker.listContainers({ all: true, filters: { label: [label] } });
    const { Volumes } = await this.docker.listVolumes({ filters: { label: [label] } });
    await this.removeListed(
      listed.filter((c) => which(c.Labels)),
      (Volumes ?? []).filter((v) => which(v.Labels ?? {})).map((v) => v.Name),
      whose,
    );
  }

  /** Removes these containers (the pods' own first, then their infra containers), then these volumes; one that cannot be removed is a warning naming it. */
  private async removeListed(containers: readonly Dockerode.ContainerInfo[], volumes: readonly string[], whose: string): Promise<void> {
    const infraLast = [...containers.filter((c) => c.Labels[CONTAINER_TYPE_LABEL] !== 'podsandbox'), ...containers.filter((c) => c.Labels[CONTAINER_TYPE_LABEL] === 'podsandbox')];
    for (const c of infraLast) {
      await ignoreGone(withTimeout(killThenRemove(this.docker.getContainer(c.Id)), CLEANUP_TIMEOUT_MS, 'no answer within 30s', this.clock)).catch((err: unknown) =>
        this.warn(`could not remove the container ${c.Id} ${whose} from ${this.where}: ${apiMessage(err)}; remove it by hand (docker rm -f ${c.Id})`),
      );
    }
    for (const name of volumes) {
      await ignoreGone(withTimeout(this.docker.getVolume(name).remove({ force: true }), CLEANUP_TIMEOUT_MS, 'no answer within 30s', this.clock)).catch((err: unknown) =>
        this.warn(`could not remove the volume ${name} ${whose} from ${this.where}: ${apiMessage(err)}; remove it by hand (docker volume rm -f ${name})`),
      );
    }
  }

  /**
   * Removes what probelet processes that are gone (a SIGKILL, a crash) left in the daemon.
   * What a live probelet made is never touched; a node's pods are kept for that node
   * (leftovers.ts), and with `adopt` this node's are collected for adoption.
   */
  async removeLeftovers(): Promise<void> {
    const self = { node: this.owner.node, adopt: this.adopt };
    await this.removeLabelled(`${MANAGED_LABEL}=true`, (labels) => removedAtStart(labels, self), 'an earlier probelet left');
    if (this.adopt) await this.collectLeft();
  }

  /** Lists what earlier runs of this node left (their process is gone), by pod UID. */
  private async collectLeft(): Promise<void> {
    const filters = { label: [`${NODE_LABEL}=${this.owner.node ?? ''}`] };
    const containers = await this.docker.listContainers({ all: true, filters });
    const { Volumes } = await this.docker.listVolumes({ filters });
    const entry = (labels: Record<string, string>): LeftPod => {
      const uid = labels[POD_UID_LABEL] ?? '';
      return this.left.of(uid, () => ({ uid, infra: [], containers: [], volumes: [] }));
    };
    for (const c of containers) {
      if (ownerAlive(c.Labels)) continue;
      const left = entry(c.Labels);
      (c.Labels[CONTAINER_TYPE_LABEL] === 'podsandbox' ? left.infra : left.containers).push(c);
    }
    for (const v of Volumes ?? []) if (!ownerAlive(v.Labels ?? {})) entry(v.Labels ?? {}).volumes.push(v.Name);
  }

  /** The pods an earlier run of this node left, not yet adopted nor removed (UIDs). */
  leftPods(): string[] {
    return this.left.uids();
  }

  adoptPod(pod: Pod): Promise<AdoptedPod | undefined> {
    return this.left.adopt(pod);
  }

  /**
   * The pod's newest running infra container and the containers joined to it become this
   * run's (their logs are read again from the daemon into this run's files). Older or stopped
   * infra containers, and containers outside the kept one, are removed: the kubelet would kill
   * a pod whose sandbox changed and start it in a new one, which here is the same as not
   * adopting it.
   */
  private async takeOver(pod: Pod, left: LeftPod): Promise<AdoptedPod | undefined> {
    this.calls.assertOpen();
    const uid = pod.metadata?.uid ?? '';
    const kept = left.infra.filter((c) => c.State === 'running').sort((a, b) => b.Created - a.Created)[0];
    const joined = (c: Dockerode.ContainerInfo): boolean => kept !== undefined && c.Labels[SANDBOX_ID_LABEL] === kept.Id;
    const whose = 'an earlier run of this node left';
    await this.removeListed([...left.containers.filter((c) => !joined(c)), ...left.infra.filter((c) => c !== kept)], kept ? [] : left.volumes, whose);
    if (!kept) return undefined;
    this.adoptedPods.add(uid);
    let podIP = HOST_NETWORK_POD_IP;
    if (pod.spec?.hostNetwork !== true) podIP = infraIP(await this.docker.getContainer(kept.Id).inspect());
    const sandbox: PodSandbox = { id: kept.Id, podUID: uid, podIP };
    this.sandboxes.set(kept.Id, { sandbox, volumes: podVolumeSources(pod, podLogDirectory(this.runDir, pod), this.policy) });
    const meta = pod.metadata ?? {};
    const ref = { namespace: meta.namespace ?? 'default', name: meta.name ?? '', uid };
    const containers: RuntimeContainerStatus[] = [];
    for (const c of left.containers.filter(joined)) {
      const container = this.docker.getContainer(c.Id);
      let info: Dockerode.ContainerInspectInfo;
      try {
        info = await container.inspect();
      } catch (err) {
        if (apiStatus(err) === 404) continue;
        throw err;
      }
      const name = c.Labels[CONTAINER_NAME_LABEL] ?? '';
      const attempt = restartCountOf(c.Labels[RESTART_COUNT_ANNOTATION]);
      const record: ContainerRecord = {
        dockerID: c.Id,
        sandboxID: kept.Id,
        status: {
          id: `${this.scheme}${c.Id}`,
          podUID: uid,
          name,
          attempt,
          image: info.Config.Image,
          state: 'unknown',
          createdAt: 0,
          logPath: containerLogPath(this.runDir, ref, name, attempt),
          ...fromInspect(info),
        },
      };
      this.containers.set(record.status.id, record);
      this.followLogs(record, container);
      containers.push({ ...record.status });
    }
    // Closed meanwhile: what was adopted must not outlive the runtime.
    if (this.calls.closing) {
      await this.removeSandboxByID(kept.Id);
      return undefined;
    }
    return { sandbox: { ...sandbox }, containers };
  }

  removeUnadopted(keep: ReadonlySet<string>): Promise<number> {
    return this.left.removeUnadopted(keep);
  }

  startRelist(): void {
    this.relister.start();
  }

  /** PLEG: containers that stopped since the last look get their final status and an `exited` event. */
  relist(): Promise<void> {
    return this.relister.relistNow();
  }

  private async listExits(): Promise<void> {
    try {
      // A node's adopted containers carry the earlier run's label: the node's own is the one they share.
      const label = this.adopt ? `${NODE_LABEL}=${this.owner.node ?? ''}` : `${RUN_LABEL}=${this.owner.runID}`;
      const listed = await this.docker.listContainers({ all: true, filters: { label: [label] } });
      const states = new Map(listed.map((c) => [c.Id, c.State]));
      for (const record of [...this.containers.values()]) {
        if (record.status.state !== 'running') continue;
        const state = states.get(record.dockerID);
        if (state === undefined || engineState(state) === 'exited') await this.refresh(record);
      }
    } catch {
      // A relist that fails is retried at the next period, as the PLEG does.
    }
  }

  /** Reads the container's state from the daemon; emits `exited` when it has just stopped. Resolves whether the daemon still had it. */
  private async refresh(record: ContainerRecord, emit = true): Promise<boolean> {
    let info: Dockerode.ContainerInspectInfo | undefined;
    try {
      info = await this.docker.getContainer(record.dockerID).inspect();
    } catch (err) {
      if (apiStatus(err) !== 404) return true;
    }
    const { status, exited } = refreshedStatus(record.status, info ? fromInspect(info) : undefined, this.clock.now());
    record.status = status;
    if (emit && exited) {
      await this.logComplete(record);
      this.events.emit('exited', record.status);
    }
    return info !== undefined;
  }

  /**
   * Waits (LOG_DRAIN_TIMEOUT_MS at most) until an exited container's log file holds all it
   * wrote, as containerd's CRI waits for a container's output before it reports the exit: the
   * kubelet syncs the pod on the exit, and its log then reads whole (Podman's follow stream ends
   * a moment after the exit, and its catch-up read takes another).
   */
  private async logComplete(record: ContainerRecord): Promise<void> {
    if (!record.logClosed) return;
    let timer: unknown;
    await Promise.race([record.logClosed, new Promise<void>((resolve) => (timer = this.clock.setTimeout(resolve, LOG_DRAIN_TIMEOUT_MS)))]);
    this.clock.clearTimeout(timer);
  }
}

/** The infra container's address on its network (the default bridge's, or the first network's). */
function infraIP(info: Dockerode.ContainerInspectInfo): string {
  const settings = info.NetworkSettings as { IPAddress?: string; Networks?: Record<string, { IPAddress?: string }> };
  if (settings.IPAddress) return settings.IPAddress;
  for (const network of Object.values(settings.Networks ?? {})) if (network.IPAddress) return network.IPAddress;
  return '';
}

/** Docker's zero time (`0001-01-01T00:00:00Z`) is unset. */
function epochMs(iso: string | undefined): number | undefined {
  if (!iso) return undefined;
  const ms = Date.parse(iso);
  return Number.isFinite(ms) && ms > 0 ? ms : undefined;
}

/**
 * The runtime's state for an Engine state (inspect's `State.Status`, a list's `State`). Podman's
 * service answers with its own states where they have no Docker name: `stopped` (the process
 * exited, its exit code and time recorded; Podman's cleanup of it not done yet — seconds on a
 * loaded machine) is exited, `stopping` (a stop in its grace period) is still running.
 */
export function engineState(status: string | undefined): RuntimeContainerStatus['state'] {
  switch (status) {
    case 'created':
      return 'created';
    case 'exited':
    case 'dead':
    case 'stopped':
      return 'exited';
    case 'running':
    case 'paused':
    case 'restarting':
    case 'stopping':
      return 'running';
    default:
      return 'unknown';
  }
}

/** The fields of an inspect the kubelet reads, with containerd's reasons (`Completed`, `Error`, `OOMKilled`). */
export function fromInspect(info: Dockerode.ContainerInspectInfo): Partial<RuntimeContainerStatus> {
  const s = info.State;
  const state = engineState(s.Status);
  const out: Partial<RuntimeContainerStatus> = { state };
  const createdAt = epochMs(info.Created);
  if (createdAt !== undefined) out.createdAt = createdAt;
  const startedAt = epochMs(s.StartedAt);
  if (startedAt !== undefined) out.startedAt = startedAt;
  if (state === 'exited') {
    out.exitCode = s.ExitCode;
    const finishedAt = epochMs(s.FinishedAt);
    if (finishedAt !== undefined) out.finishedAt = finishedAt;
    out.reason = s.OOMKilled ? 'OOMKilled' : s.ExitCode === 0 ? 'Completed' : 'Error';
    if (s.Error) out.message = s.Error;
  }
  return out;
}

/** The kubelet's restart count read back from the container's label (kuberuntime labels.go), 0 when unreadable. */
function restartCountOf(label: string | undefined): number {
  const n = Number(label);
  return Number.isInteger(n) && n >= 0 ? n : 0;
}

/**
 * A forced removal that kills first. Podman's service removes a container whose stop is in its
 * grace period (state `stopping`) without killing it — its processes live on until that stop's
 * own SIGKILL — and Podman's kill with SIGKILL answers once the container is dead. A container
 * that is not running (409) or gone (404) is removed as it is.
 */
async function killThenRemove(container: Dockerode.Container): Promise<void> {
  try {
    await container.kill({ signal: 'SIGKILL' });
  } catch (err) {
    const status = apiStatus(err);
    if (status !== 404 && status !== 409 && status !== 304) throw err;
  }
  await container.remove({ force: true });
}

/** Stop/remove of something already gone (404) or already stopped (304) is done. */
async function ignoreGone(call: Promise<unknown>): Promise<void> {
  try {
    await call;
  } catch (err) {
    const status = apiStatus(err);
    if (status !== 404 && status !== 304) throw err;
  }
}

/** What to do about an image the daemon cannot pull (no registry reachable, unknown name). */
function pullHint(detail: string): string {
  if (!/not found|does not exist|no such host|connection refused|i\/o timeout|pull access denied|manifest unknown/i.test(detail)) return '';
  return ' (the image is neither on this machine nor pullable: check its name, or load it into the daemon — e.g. `docker load -i IMAGE.tar` — and use imagePullPolicy IfNotPresent)';
}
