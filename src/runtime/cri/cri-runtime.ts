/**
 * The CRI runtime: pods and containers on a real container runtime (containerd, CRI-O)
 * through CRI `runtime.v1`, behind the same `ContainerRuntime` seam as the process runtime,
 * so the kubelet above runs unchanged.
 *
 * - One sandbox per pod (pod or node network per `hostNetwork`); the pod IP comes from
 *   `PodSandboxStatus`, and is what HTTP/TCP/gRPC probes dial.
 * - Container state is the runtime's: `ContainerStatus` after every action, and a relist
 *   every second (the kubelet's PLEG relist period) to see containers exit on their own.
 *   The seam's `containerStatus` is synchronous, so it answers from that cache.
 * - `ExecSync` carries the probe's timeout; a gRPC DEADLINE_EXCEEDED becomes the
 *   runner's timeout error, so an exec probe that overruns fails as upstream's does.
 * - Everything created is labelled with this run and the probelet PID; at start, labelled
 *   sandboxes whose probelet process is gone (a crash) are removed, and `close()` removes
 *   every sandbox and container of this run.
 * - `probelet node` (`node` and `adopt`): what a killed earlier run of the same node left is
 *   not removed at start but kept for the kubelet to adopt pod by pod (`adoptPod`), as the
 *   kubelet finds its pods in the runtime after a restart; what no pod claims is removed
 *   once the node knows its pods (`removeUnadopted`).
 */
import { randomBytes } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { Container, Pod } from '../../api/types.js';
import { realClock, type Clock } from '../../util/clock.js';
import { commandTimedOut } from '../../spawn/index.js';
import { execOutput } from '../exec-output.js';
import { resolveContainerEnv } from '../env.js';
import { containerFieldPath } from '../input-error.js';
import { DEFAULT_LOG_TAIL_BYTES } from '../logs.js';
import { containerEvents } from '../container-events.js';
import { leftPods } from '../adoption.js';
import { inFlight } from '../in-flight.js';
import { ownerAlive, removedAtStart } from '../leftovers.js';
import { relistLoop, type RelistLoop } from '../relist.js';
import { singleFlight } from '../single-flight.js';
import { refreshedStatus } from '../vanished.js';
import type { AdoptedPod, ContainerEvent, ContainerRuntime, ExecResult, ImageInfo, PodSandbox, RegistryAuth, RuntimeCondition, RuntimeContainerStatus } from '../types.js';
import type { CriClient } from './client.js';
import { GrpcStatus, grpcCode, grpcMessage } from './grpc-error.js';
import { readCriLogTail } from './cri-logs.js';
import { checkSocket, explainConnectError } from './errors.js';
import {
  MANAGED_LABEL,
  NODE_LABEL,
  POD_UID_LABEL,
  RESTART_COUNT_ANNOTATION,
  RUN_LABEL,
  containerConfig,
  podSandboxConfig,
  processStartTime,
  type Owner,
} from './pod-config.js';
import type * as cri from './types.js';
import { goStatusErrorText } from '../../util/go-status.js';
import { EXEC_DEADLINE_SLACK_MS } from '../exec-deadline.js';

/** `crictl`'s and the kubelet's default endpoint. */
export const DEFAULT_CRI_ENDPOINT = 'unix:///run/containerd/containerd.sock';
/** How long the first call may take before the runtime counts as unreachable. */
const CONNECT_TIMEOUT_MS = 5_000;
/** Deadline of a pull (the kubelet's `--runtime-request-timeout` does not apply to pulls). */
const PULL_TIMEOUT_MS = 10 * 60_000;
/** How often, and how far apart, a removal refused because of a stop still settling is tried again. */
const REMOVE_ATTEMPTS = 50;
const REMOVE_RETRY_MS = 100;
/**
 * Errors of a stop or removal that raced another stop of the same object, which the next try
 * gets past: containerd refusing to remove what its own state does not yet show as exited, and
 * a sandbox's CNI teardown failing because a concurrent stop (a second Ctrl-C's kill beside the
 * graceful deletion) already deleted its interface (`failed to destroy network for sandbox …:
 * plugin type="bridge" failed (delete): failed to delete "eth0": no such device`) — the kubelet
 * retries such a stop at its next sync too.
 */
const RACING_STOP = /still running|stop first|not stopped|failed to destroy network/i;
/** Deadline of each stop/remove call when cleaning up: a wedged runtime must not hold Ctrl-C for long. */
const CLEANUP_TIMEOUT_MS = 10_000;
/** The pod IP of a host-network pod: the node's, which probelet reports as 127.0.0.1. */
const HOST_NETWORK_POD_IP = '127.0.0.1';

export interface CriRuntimeOptions {
  /** `unix:///run/containerd/containerd.sock` and the like. */
  endpoint: string;
  /** Root of the pod log directories (the kubelet's `/var/log/pods`). */
  runDir: string;
  clock?: Clock;
  /** Default the kubelet's PLEG period (relist.ts). */
  relistPeriodMs?: number;
  /** Relist at `relistPhaseMs + k × relistPeriodMs` of the clock (RelistOptions.phaseMs). */
  relistPhaseMs?: number;
  /** The node name of a `probelet node` agent, labelled on every sandbox and container (NODE_LABEL). */
  node?: string;
  /**
   * With `node`: keep what a killed earlier run of this node left (its sandboxes and
   * containers, found by NODE_LABEL) for `adoptPod`, instead of removing it at start.
   */
  adopt?: boolean;
  /** Bytes of a container's log returned by `containerLogs`. Default 64 KiB. */
  logTailBytes?: number;
  /**
   * Where warnings go (what could not be removed, and how to remove it). Default
   * `process.emitWarning`; the CLI prints them as plain `probelet: …` lines.
   */
  warn?: (message: string) => void;
}

interface SandboxRecord {
  readonly sandbox: PodSandbox;
  readonly config: cri.PodSandboxConfig;
}

interface ContainerRecord {
  /** The runtime's own ID (without the `containerd://` scheme). */
  readonly criID: string;
  readonly sandboxID: string;
  status: RuntimeContainerStatus;
}

/** What an earlier run of this node left of one pod, until adopted or removed. */
interface LeftPod {
  sandboxes: cri.PodSandbox[];
  containers: cri.Container[];
}

/** A container or sandbox that `removeAll` could not remove, and why. */
interface RemovalFailure {
  kind: 'container' | 'sandbox';
  id: string;
  error: unknown;
}

/** How a user removes what probelet could not: `remove it by hand (crictl rm -f ID)`. */
function removeByHand(kind: RemovalFailure['kind'], id: string): string {
  return `remove it by hand (${kind === 'sandbox' ? 'crictl rmp -f' : 'crictl rm -f'} ${id})`;
}

/**
 * What a run leaves in a runtime that stopped answering before the run could remove its pods:
 * the sandboxes (each with its containers), why, and the one crictl line that removes them once
 * the runtime is back (the next start on the same endpoint removes them too).
 */
export function leftBehind(endpoint: string, sandboxIDs: readonly string[], err: unknown): string {
  const why = explainConnectError(endpoint, err).message;
  if (sandboxIDs.length === 0) return `could not check that this run left nothing behind: ${why}`;
  const what = sandboxIDs.length === 1 ? 'its pod sandbox' : `its ${sandboxIDs.length} pod sandboxes`;
  return (
    `this run could not remove ${what} (and their containers): ${why}; ` +
    `the next probelet start on ${endpoint} removes them, or once the runtime is back: ` +
    `crictl --runtime-endpoint ${endpoint} rmp -f ${sandboxIDs.join(' ')}`
  );
}

/** Connects (failing with an error that names the fix), removes crash leftovers, starts the relist. */
export async function createCriRuntime(options: CriRuntimeOptions): Promise<CriRuntime> {
  checkSocket(options.endpoint);
  // grpc-js is loaded here, not with the module: a kubelet without CRI never pays its RSS.
  const { createCriClient } = await import('./client.js');
  const client = createCriClient(options.endpoint);
  let version: cri.VersionResponse;
  try {
    version = await client.Version({ version: 'v1' }, CONNECT_TIMEOUT_MS);
  } catch (err) {
    client.close();
    throw explainConnectError(options.endpoint, err);
  }
  const runtime = new CriRuntime(client, version, options);
  try {
    await runtime.removeLeftovers();
  } catch (err) {
    await runtime.close();
    throw err;
  }
  runtime.startRelist();
  return runtime;
}

/** See the file comment; build it with {@link createCriRuntime}. */
export class CriRuntime implements ContainerRuntime {
  readonly runsImages = true;
  /** `containerd 1.6.20` — what `Version` said. */
  readonly version: string;
  private readonly scheme: string;
  private readonly clock: Clock;
  private readonly runDir: string;
  /** Exits are found by relisting: the kubelet's PLEG (ContainerRuntime.relists). */
  readonly relists = true;
  private readonly logTailBytes: number;
  private readonly owner: Owner;
  private readonly sandboxes = new Map<string, SandboxRecord>();
  private readonly containers = new Map<string, ContainerRecord>();
  private readonly events = containerEvents();
  private readonly calls = inFlight();
  private readonly relister: RelistLoop;
  private readonly warn: (message: string) => void;
  /**
   * Sandbox removals under way, by ID: the kubelet's and close()'s removal of one sandbox
   * share one sequence of calls, because containerd can hang a RemovePodSandbox that races
   * another removal of the same sandbox.
   */
  private readonly sandboxRemovals = singleFlight<string>();
  /** With `adopt`: what a killed earlier run of this node left, by pod UID, until adopted or removed. */
  private readonly left = leftPods<LeftPod>({
    takeOver: (pod, left) => this.takeOver(pod, left),
    forget: (left) => {
      for (const s of left.sandboxes) {
        this.sandboxes.delete(s.id);
        this.adopted.delete(s.id);
      }
      for (const c of left.containers) this.containers.delete(`${this.scheme}${c.id}`);
    },
    remove: async (left) => this.warnFailures(await this.removeListed(left.containers, left.sandboxes).catch(() => [])),
    calls: this.calls,
  });
  /** Sandboxes taken over from an earlier run (they carry its run label, not this one's). */
  private readonly adopted = new Set<string>();
  private readonly adopt: boolean;

  constructor(
    private readonly client: CriClient,
    version: cri.VersionResponse,
    options: CriRuntimeOptions,
  ) {
    this.version = `${version.runtime_name} ${version.runtime_version}`;
    this.scheme = `${version.runtime_name || 'cri'}://`;
    this.clock = options.clock ?? realClock;
    this.runDir = options.runDir;
    this.relister = relistLoop({
      clock: this.clock,
      ...(options.relistPeriodMs !== undefined ? { periodMs: options.relistPeriodMs } : {}),
      ...(options.relistPhaseMs !== undefined ? { phaseMs: options.relistPhaseMs } : {}),
      relist: () => this.listExits(),
    });
    this.logTailBytes = options.logTailBytes ?? DEFAULT_LOG_TAIL_BYTES;
    this.warn = options.warn ?? ((message) => process.emitWarning(message));
    this.owner = { runID: randomBytes(6).toString('hex'), pid: process.pid, pidStart: processStartTime(process.pid), ...(options.node ? { node: options.node } : {}) };
    this.adopt = options.adopt === true && options.node !== undefined;
  }

  /** The label value of this run, for tests that look for what it left. */
  get runID(): string {
    return this.owner.runID;
  }

  // --- images -------------------------------------------------------------------------

  async imageStatus(image: string): Promise<ImageInfo | undefined> {
    const res = await this.client.ImageStatus({ image: { image } });
    if (!res.image?.id) return undefined;
    return { ref: res.image.id, size: res.image.size };
  }

  /**
   * `PullImage` with the pod's sandbox config and, when the kubelet's keyring found some, the
   * registry credentials (CRI `AuthConfig`); the error is the runtime's gRPC status as the
   * kubelet's events show it (`rpc error: code = NotFound desc = …`), nothing added — and for
   * code Unknown the runtime's message alone, as the kubelet's CRI client strips that code
   * (cri-client remote_image.go PullImage: "they add no value").
   */
  async pullImage(image: string, pod: Pod, auth?: RegistryAuth): Promise<ImageInfo> {
    let res: cri.PullImageResponse;
    try {
      res = await this.client.PullImage(
        { image: { image }, ...(auth ? { auth: { username: auth.username, password: auth.password } } : {}), sandbox_config: podSandboxConfig(pod, this.runDir, this.owner) },
        PULL_TIMEOUT_MS,
      );
    } catch (err) {
      throw new Error(grpcCode(err) === GrpcStatus.UNKNOWN ? grpcMessage(err) : goStatusText(err));
    }
    const status = await this.imageStatus(image).catch(() => undefined);
    return { ref: res.image_ref, ...(status?.size !== undefined ? { size: status.size } : {}) };
  }

  // --- status -------------------------------------------------------------------------

  /** CRI `Status` (within the connect timeout: a runtime that does not answer is a failed check). */
  async runtimeStatus(): Promise<RuntimeCondition[]> {
    const res = await this.client.Status({}, CONNECT_TIMEOUT_MS);
    return (res.status?.conditions ?? []).map((c) => ({ type: c.type, status: c.status, reason: c.reason, message: c.message }));
  }

  // --- sandboxes ------------------------------------------------------------------------

  /** Tracked, so that `close()` waits for a sandbox being made and removes it too (containerd lists it only once made). */
  runPodSandbox(pod: Pod): Promise<PodSandbox> {
    return this.calls.track(this.makeSandbox(pod));
  }

  private async makeSandbox(pod: Pod): Promise<PodSandbox> {
    this.calls.assertOpen();
    const config = podSandboxConfig(pod, this.runDir, this.owner);
    mkdirSync(config.log_directory, { recursive: true });
    const { pod_sandbox_id: id } = await this.client.RunPodSandbox({ config });
    let podIP = HOST_NETWORK_POD_IP;
    if (pod.spec?.hostNetwork !== true) {
      const res = await this.client.PodSandboxStatus({ pod_sandbox_id: id });
      podIP = res.status?.network?.ip ?? '';
    }
    const sandbox: PodSandbox = { id, podUID: pod.metadata?.uid ?? '', podIP };
    this.sandboxes.set(id, { sandbox, config });
    // Closed while the sandbox was being made: it must not outlive the runtime.
    if (this.calls.closing) await this.removeSandboxByID(id);
    return { ...sandbox };
  }

  async removePodSandbox(sandboxID: string): Promise<void> {
    if (!this.sandboxes.has(sandboxID)) return;
    await this.removeSandboxByID(sandboxID);
  }

  private async removeSandboxByID(sandboxID: string): Promise<void> {
    await ignoreNotFound(this.client.StopPodSandbox({ pod_sandbox_id: sandboxID }));
    const records = [...this.containers.values()].filter((r) => r.sandboxID === sandboxID);
    await Promise.all(records.map((r) => this.refresh(r)));
    await this.stopAndRemoveSandbox(sandboxID);
    for (const r of records) this.containers.delete(r.status.id);
    this.sandboxes.delete(sandboxID);
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
    const config = containerConfig({ pod, container, attempt, env, runDir: this.runDir, owner: this.owner });
    mkdirSync(dirname(join(sandbox.config.log_directory, config.log_path)), { recursive: true });
    let criID: string;
    try {
      ({ container_id: criID } = await this.client.CreateContainer({ pod_sandbox_id: sandboxID, config, sandbox_config: sandbox.config }));
    } catch (err) {
      throw new Error(grpcMessage(err));
    }
    const record: ContainerRecord = {
      criID,
      sandboxID,
      status: {
        id: `${this.scheme}${criID}`,
        podUID: sandbox.sandbox.podUID,
        name: container.name,
        attempt,
        image: container.image ?? '',
        state: 'created',
        createdAt: this.clock.now(),
        logPath: join(sandbox.config.log_directory, config.log_path),
      },
    };
    this.containers.set(record.status.id, record);
    let startError: string | undefined;
    try {
      await this.client.StartContainer({ container_id: criID });
    } catch (err) {
      startError = grpcMessage(err);
    }
    const found = await this.refresh(record, false);
    if (startError !== undefined && (!found || record.status.state !== 'exited')) {
      // containerd reports a failed start as exited 128 StartError; a runtime that does not still means it.
      Object.assign(record.status, { state: 'exited', exitCode: 128, reason: 'StartError', message: startError, finishedAt: this.clock.now() });
    }
    this.events.emit(record.status.state === 'exited' ? 'exited' : 'started', record.status);
    if (this.calls.closing) await ignoreNotFound(this.client.RemoveContainer({ container_id: criID }));
    return { ...record.status };
  }

  async stopContainer(containerID: string, gracePeriodMs: number): Promise<void> {
    const record = this.containers.get(containerID);
    if (!record) return;
    const seconds = Math.max(0, Math.ceil(gracePeriodMs / 1000));
    await ignoreNotFound(this.client.StopContainer({ container_id: record.criID, timeout: seconds }, gracePeriodMs + 30_000));
    await this.refresh(record);
  }

  async removeContainer(containerID: string): Promise<void> {
    const record = this.containers.get(containerID);
    if (!record) return;
    await ignoreNotFound(this.client.RemoveContainer({ container_id: record.criID }));
    this.containers.delete(containerID);
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
    // Not tracked: `close()` must not wait out a probe's timeout (a forced stop kills at once);
    // closing the client cancels an exec under way, which the prober sees as an errored probe.
    return this.exec(record, cmd, timeoutMs);
  }

  private async exec(record: ContainerRecord, cmd: string[], timeoutMs: number): Promise<ExecResult> {
    // 0 is no timeout (a lifecycle hook's exec), for containerd and for the call's deadline.
    const seconds = timeoutMs > 0 ? Math.max(1, Math.ceil(timeoutMs / 1000)) : 0;
    let res: cri.ExecSyncResponse;
    try {
      res = await this.client.ExecSync({ container_id: record.criID, cmd, timeout: seconds }, timeoutMs > 0 ? timeoutMs + EXEC_DEADLINE_SLACK_MS : Infinity);
    } catch (err) {
      // The kubelet's CRI client turns DeadlineExceeded into its exec timeout error.
      if (grpcCode(err) === GrpcStatus.DEADLINE_EXCEEDED) throw commandTimedOut(cmd, timeoutMs, '');
      // As the kubelet words it: "rpc error: code = Unknown desc = failed to exec in container: …".
      throw Object.assign(new Error(goStatusText(err)), { output: '' });
    }
    return { output: execOutput(res.stdout, res.stderr), exitCode: res.exit_code };
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
      // Each one named: a leftover whose ID and reason are known can be removed by hand.
      const adopted: RemovalFailure[] = [];
      for (const id of this.adopted) {
        if (!this.sandboxes.has(id)) continue;
        const inside = [...this.containers.values()].filter((r) => r.sandboxID === id).map((r) => ({ id: r.criID }));
        adopted.push(...(await this.removeListed(inside, [{ id }])));
      }
      for (const { kind, id, error } of [...adopted, ...(await this.removeAll({ [RUN_LABEL]: this.owner.runID }))]) {
        this.warn(`could not remove the ${kind} ${id} of this run from ${this.client.endpoint}: ${grpcMessage(error)}; the next start removes it, or ${removeByHand(kind, id)}`);
      }
    } catch (err) {
      // The runtime went away (containerd stopped mid-run): what it still holds carries this run's
      // labels for the next start to remove. Say what is left and how to remove it by hand.
      this.warn(leftBehind(this.client.endpoint, [...this.sandboxes.keys()], err));
    } finally {
      this.sandboxes.clear();
      this.containers.clear();
      this.client.close();
    }
  }

  /**
   * Removes labelled sandboxes (and their containers) whose probelet process is gone. One
   * that cannot be removed is a warning that names it and how to remove it by hand, never a
   * failed start: it belongs to a run that is over, and every start would fail on it again.
   * A runtime that cannot even list them fails the start.
   *
   * What another node left is that node's: it takes its containers over when it starts again
   * (`probelet node --runtime cri`, as a kubelet after a restart), so neither a `run` nor
   * another node on the same containerd removes them in the meantime (`cri:down` does).
   */
  async removeLeftovers(): Promise<void> {
    const self = { node: this.owner.node, adopt: this.adopt };
    for (const { kind, id, error } of await this.removeAll({ [MANAGED_LABEL]: 'true' }, (labels) => removedAtStart(labels, self))) {
      this.warn(`could not remove the ${kind} ${id} an earlier probelet left in ${this.client.endpoint}: ${grpcMessage(error)}; ${removeByHand(kind, id)}`);
    }
    if (this.adopt) await this.collectLeft();
  }

  /** Lists what earlier runs of this node left (their process is gone), by pod UID. */
  private async collectLeft(): Promise<void> {
    const selector = { [NODE_LABEL]: this.owner.node ?? '' };
    const { items } = await this.client.ListPodSandbox({ filter: { label_selector: selector } });
    const { containers } = await this.client.ListContainers({ filter: { label_selector: selector } });
    const entry = (labels: cri.Labels): LeftPod => this.left.of(labels[POD_UID_LABEL] ?? '', () => ({ sandboxes: [], containers: [] }));
    for (const s of items) if (!ownerAlive(s.labels)) entry(s.labels).sandboxes.push(s);
    for (const c of containers) if (!ownerAlive(c.labels)) entry(c.labels).containers.push(c);
  }

  /** The pods an earlier run of this node left, not yet adopted nor removed (UIDs). */
  leftPods(): string[] {
    return this.left.uids();
  }

  adoptPod(pod: Pod): Promise<AdoptedPod | undefined> {
    return this.left.adopt(pod);
  }

  /**
   * The pod's newest ready sandbox and its containers become this run's (their labels still
   * name the earlier run: close() removes them by ID). Older or not-ready sandboxes, and
   * containers outside the kept sandbox, are removed: the kubelet would kill a pod whose
   * sandbox changed and start it in a new one, which here is the same as not adopting it.
   */
  private async takeOver(pod: Pod, left: LeftPod): Promise<AdoptedPod | undefined> {
    this.calls.assertOpen();
    const uid = pod.metadata?.uid ?? '';
    const kept = left.sandboxes.filter((s) => s.state === 'SANDBOX_READY').sort((a, b) => b.created_at - a.created_at)[0];
    this.warnFailures(await this.removeListed(left.containers.filter((c) => c.pod_sandbox_id !== kept?.id), left.sandboxes.filter((s) => s !== kept)));
    if (!kept) return undefined;
    let podIP = HOST_NETWORK_POD_IP;
    if (pod.spec?.hostNetwork !== true) {
      const res = await this.client.PodSandboxStatus({ pod_sandbox_id: kept.id });
      podIP = res.status?.network?.ip ?? '';
    }
    const config = podSandboxConfig(pod, this.runDir, this.owner);
    mkdirSync(config.log_directory, { recursive: true });
    const sandbox: PodSandbox = { id: kept.id, podUID: uid, podIP };
    this.sandboxes.set(kept.id, { sandbox, config });
    this.adopted.add(kept.id);
    const containers: RuntimeContainerStatus[] = [];
    for (const c of left.containers.filter((x) => x.pod_sandbox_id === kept.id)) {
      let status: cri.ContainerStatus | undefined;
      try {
        status = (await this.client.ContainerStatus({ container_id: c.id })).status;
      } catch (err) {
        if (grpcCode(err) !== GrpcStatus.NOT_FOUND) throw err;
      }
      if (!status) continue;
      const record: ContainerRecord = {
        criID: c.id,
        sandboxID: kept.id,
        status: {
          id: `${this.scheme}${c.id}`,
          podUID: uid,
          name: status.metadata?.name ?? c.metadata?.name ?? '',
          attempt: restartCountOf(status.annotations ?? c.annotations, status.metadata?.attempt ?? c.metadata?.attempt ?? 0),
          image: status.image?.image ?? c.image?.image ?? '',
          state: 'unknown',
          createdAt: 0,
          ...(status.log_path ? { logPath: status.log_path } : {}),
          ...fromCriStatus(status),
        },
      };
      this.containers.set(record.status.id, record);
      containers.push({ ...record.status });
    }
    // Closed meanwhile: what was adopted must not outlive the runtime.
    if (this.calls.closing) {
      await this.removeSandboxByID(kept.id);
      return undefined;
    }
    return { sandbox: { ...sandbox }, containers };
  }

  removeUnadopted(keep: ReadonlySet<string>): Promise<number> {
    return this.left.removeUnadopted(keep);
  }

  private warnFailures(failures: readonly RemovalFailure[]): void {
    for (const { kind, id, error } of failures) {
      this.warn(`could not remove the ${kind} ${id} an earlier run of this node left in ${this.client.endpoint}: ${grpcMessage(error)}; ${removeByHand(kind, id)}`);
    }
  }

  /**
   * Removes every container, then every sandbox, that matches; one that cannot be removed
   * does not keep the others. Returns those that could not be; a failed listing is thrown.
   */
  private async removeAll(selector: cri.Labels, which: (labels: cri.Labels) => boolean = () => true): Promise<RemovalFailure[]> {
    const { items } = await this.client.ListPodSandbox({ filter: { label_selector: selector } });
    const { containers } = await this.client.ListContainers({ filter: { label_selector: selector } });
    return this.removeListed(
      containers.filter((c) => which(c.labels)),
      items.filter((s) => which(s.labels)),
    );
  }

  /** Removes these containers, then these sandboxes; returns those that could not be. */
  private async removeListed(containers: ReadonlyArray<{ id: string }>, sandboxes: ReadonlyArray<{ id: string }>): Promise<RemovalFailure[]> {
    const failed: RemovalFailure[] = [];
    for (const c of containers) {
      await this.stopAndRemove(
        () => this.client.StopContainer({ container_id: c.id, timeout: 0 }, CLEANUP_TIMEOUT_MS),
        () => this.client.RemoveContainer({ container_id: c.id }, CLEANUP_TIMEOUT_MS),
      ).catch((error: unknown) => failed.push({ kind: 'container', id: c.id, error }));
    }
    for (const s of sandboxes) await this.stopAndRemoveSandbox(s.id).catch((error: unknown) => failed.push({ kind: 'sandbox', id: s.id, error }));
    return failed;
  }

  private stopAndRemoveSandbox(id: string): Promise<void> {
    return this.sandboxRemovals(id, () =>
      this.stopAndRemove(
        () => this.client.StopPodSandbox({ pod_sandbox_id: id }, CLEANUP_TIMEOUT_MS),
        () => this.client.RemovePodSandbox({ pod_sandbox_id: id }, CLEANUP_TIMEOUT_MS),
      ),
    );
  }

  /**
   * Stop, then remove; retried while the runtime still sees it running, or while a sandbox's
   * network teardown raced another stop of it (below). containerd answers
   * a stop that races another one (the kubelet's graceful stop, when Ctrl-C is pressed twice)
   * before its own state says "exited", and then refuses the removal ("container is still
   * running, to stop first") for a few milliseconds.
   */
  private async stopAndRemove(stop: () => Promise<unknown>, remove: () => Promise<unknown>): Promise<void> {
    for (let attempt = 1; ; attempt++) {
      try {
        await ignoreNotFound(stop());
        await ignoreNotFound(remove());
        return;
      } catch (err) {
        if (attempt >= REMOVE_ATTEMPTS || !RACING_STOP.test(grpcMessage(err))) throw err;
      }
      await new Promise<void>((resolve) => this.clock.setTimeout(resolve, REMOVE_RETRY_MS));
    }
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
      const selector: cri.Labels = this.adopt ? { [NODE_LABEL]: this.owner.node ?? '' } : { [RUN_LABEL]: this.owner.runID };
      const { containers } = await this.client.ListContainers({ filter: { label_selector: selector } });
      const states = new Map(containers.map((c) => [c.id, c.state]));
      for (const record of [...this.containers.values()]) {
        if (record.status.state !== 'running') continue;
        const state = states.get(record.criID);
        if (state === undefined || state === 'CONTAINER_EXITED' || state === 'CONTAINER_UNKNOWN') await this.refresh(record);
      }
    } catch {
      // A relist that fails is retried at the next period, as the PLEG does.
    }
  }

  /**
   * Reads the container's status from the runtime; emits `exited` when it has just stopped.
   * Resolves whether the runtime still had the container (true too when it could not tell).
   */
  private async refresh(record: ContainerRecord, emit = true): Promise<boolean> {
    let status: cri.ContainerStatus | undefined;
    try {
      status = (await this.client.ContainerStatus({ container_id: record.criID })).status;
    } catch (err) {
      if (grpcCode(err) !== GrpcStatus.NOT_FOUND) return true;
    }
    const { status: next, exited } = refreshedStatus(record.status, status ? fromCriStatus(status) : undefined, this.clock.now());
    record.status = next;
    if (emit && exited) this.events.emit('exited', record.status);
    return status !== undefined;
  }
}

/** Where they lived before vanished.ts; kept for the callers that import them from here. */
export { VANISHED_MESSAGE, VANISHED_REASON } from '../vanished.js';

const CRI_STATES: Record<cri.ContainerState, RuntimeContainerStatus['state']> = {
  CONTAINER_CREATED: 'created',
  CONTAINER_RUNNING: 'running',
  CONTAINER_EXITED: 'exited',
  CONTAINER_UNKNOWN: 'unknown',
};

/** The fields of a CRI ContainerStatus the kubelet reads (times: ns → ms, 0 = unset). */
function fromCriStatus(s: cri.ContainerStatus): Partial<RuntimeContainerStatus> {
  const ms = (ns: number): number | undefined => (ns > 0 ? Math.floor(ns / 1e6) : undefined);
  const out: Partial<RuntimeContainerStatus> = { state: CRI_STATES[s.state] };
  const createdAt = ms(s.created_at);
  if (createdAt !== undefined) out.createdAt = createdAt;
  const startedAt = ms(s.started_at);
  if (startedAt !== undefined) out.startedAt = startedAt;
  if (s.state === 'CONTAINER_EXITED') {
    out.exitCode = s.exit_code;
    const finishedAt = ms(s.finished_at);
    if (finishedAt !== undefined) out.finishedAt = finishedAt;
    if (s.reason) out.reason = s.reason;
    if (s.message) out.message = s.message;
  }
  return out;
}

/**
 * The container's restart count as the kubelet reads it back from the runtime
 * (`io.kubernetes.container.restartCount`, kuberuntime labels.go), else its CRI attempt.
 */
function restartCountOf(annotations: cri.Labels | undefined, attempt: number): number {
  const n = Number(annotations?.[RESTART_COUNT_ANNOTATION]);
  return Number.isInteger(n) && n >= 0 ? n : attempt;
}

/** Stop/remove of something already gone is done. */
async function ignoreNotFound(call: Promise<unknown>): Promise<void> {
  try {
    await call;
  } catch (err) {
    if (grpcCode(err) !== GrpcStatus.NOT_FOUND) throw err;
  }
}

/** Go's gRPC error text, as the kubelet's messages show it: `rpc error: code = Unknown desc = …`. */
function goStatusText(err: unknown): string {
  const code = grpcCode(err);
  return code === undefined ? grpcMessage(err) : goStatusErrorText(code, grpcMessage(err));
}
