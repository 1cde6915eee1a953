/**
 * The container runtime seam, shaped after the CRI RuntimeService (pod sandbox with an IP,
 * containers in it, ExecSync with a timeout, container status) so that a containerd
 * backend can implement it next to the local process runtime. It knows nothing of probes.
 */
import type { Container, Pod } from '../api/types.js';

export type ContainerRuntimeState = 'created' | 'running' | 'exited' | 'unknown';

/** CRI ContainerStatus, trimmed to what the kubelet reads. Times are epoch milliseconds on the runtime's clock. */
export interface RuntimeContainerStatus {
  /** `<runtime>://<id>`, e.g. `probelet://3f2a…`. */
  id: string;
  podUID: string;
  name: string;
  /** How many times this container was created before in this pod (CRI metadata.attempt). */
  attempt: number;
  image: string;
  state: ContainerRuntimeState;
  createdAt: number;
  startedAt?: number;
  finishedAt?: number;
  exitCode?: number;
  /** `Completed`, `Error`, `StartError` … as containerd reports them. */
  reason?: string;
  message?: string;
  /** Where the container's output is written (CRI `log_path`), when the runtime keeps a log file. */
  logPath?: string;
}

export interface PodSandbox {
  id: string;
  podUID: string;
  /** Pods of the local runtime share the host network: always 127.0.0.1. */
  podIP: string;
}

export interface ExecResult {
  /** stdout followed by stderr, capped. */
  output: string;
  exitCode: number;
}

/** A container started or exited (the runtime's part of the kubelet's PLEG). */
export interface ContainerEvent {
  type: 'started' | 'exited';
  status: RuntimeContainerStatus;
}

/** A runtime's image, as CRI `ImageStatus` reports it. */
/**
 * Registry credentials for one pull (CRI `AuthConfig`): what the kubelet's keyring takes from a
 * `kubernetes.io/dockerconfigjson` Secret — user and password (an entry's `auth` decoded).
 */
export interface RegistryAuth {
  username: string;
  password: string;
}

export interface ImageInfo {
  /** The image's ID (CRI `image_ref`), e.g. `sha256:…`. */
  ref: string;
  /** Bytes, when the runtime knows. */
  size?: number;
}

/**
 * A pod an earlier run of the same node left in the runtime (the agent was killed), as the
 * kubelet finds its pods in the runtime after a restart: the sandbox and every container of
 * the pod in it, running or exited, each with its `attempt` (the container's
 * `io.kubernetes.container.restartCount` annotation).
 */
export interface AdoptedPod {
  sandbox: PodSandbox;
  containers: RuntimeContainerStatus[];
}

/** A CRI `RuntimeCondition` (`RuntimeReady`, `NetworkReady`). */
export interface RuntimeCondition {
  type: string;
  status: boolean;
  reason: string;
  message: string;
}

export interface ContainerRuntime {
  /**
   * The runtime runs containers from their images (a CRI runtime), so a container without
   * `command` runs the image's ENTRYPOINT. Unset: the runtime runs commands on the host
   * and every container needs one.
   */
  readonly runsImages?: boolean;
  /**
   * The runtime finds exits by relisting (the CRI runtime: its relist is the kubelet's PLEG), so
   * its `exited` events come at relist instants and the kubelet acts on them as they come.
   * Unset: exits are known at once (the process runtime), and a kubelet that models the relist
   * waits for its next one, as a kubelet's PLEG would find them there.
   */
  readonly relists?: boolean;
  /**
   * CRI `ImageStatus`: the image if the runtime has it locally, else undefined. Runtimes
   * without images omit this and `pullImage`; the kubelet then has nothing to pull.
   */
  imageStatus?(image: string): Promise<ImageInfo | undefined>;
  /**
   * CRI `PullImage`, with the credentials the kubelet's keyring found for the image in the
   * pod's pull secrets (none: anonymously); rejects with the runtime's reason.
   */
  pullImage?(image: string, pod: Pod, auth?: RegistryAuth): Promise<ImageInfo>;
  /**
   * After a restart of `probelet node`: what an earlier run of the same node left of this
   * pod, which from now on is this runtime's own (stopped, removed, listed, probed like the
   * rest); undefined when nothing was left or it cannot be used (no ready sandbox). Claimed
   * at the call, so asking twice gives it once. Runtimes that cannot take over what another
   * process started (the process runtime) omit it.
   */
  adoptPod?(pod: Pod): Promise<AdoptedPod | undefined>;
  /** The UIDs of the pods an earlier run of the node left, not yet adopted nor removed (for the node's log line). */
  leftPods?(): string[];
  /**
   * Removes what an earlier run left for pods not in `keep` (no longer bound to the node, or
   * finished): the kubelet's `HandlePodCleanups` of pods it finds running but no longer
   * wants. Resolves with how many pods' sandboxes went.
   */
  removeUnadopted?(keep: ReadonlySet<string>): Promise<number>;
  /**
   * CRI `Status`: the runtime's conditions, for the node's Ready condition; rejects when the
   * runtime does not answer. Runtimes inside probelet's own process (always up) omit it.
   */
  runtimeStatus?(): Promise<RuntimeCondition[]>;
  /** Creates the pod's sandbox (network identity). */
  runPodSandbox(pod: Pod): Promise<PodSandbox>;
  /** Stops every container still running in the sandbox (SIGKILL) and forgets the sandbox. */
  removePodSandbox(sandboxID: string): Promise<void>;
  /**
   * Creates and starts a container. Resolves with its status once it is running, or once
   * it failed to start (state `exited`, reason `StartError`, exit code 128 and a message
   * saying why — e.g. the command does not exist). Rejects only for invalid input
   * (unsupported env source, missing command) with an error naming the field.
   */
  startContainer(sandboxID: string, pod: Pod, container: Container, attempt: number): Promise<RuntimeContainerStatus>;
  /** SIGTERM to the container's whole process tree, SIGKILL after `gracePeriodMs`. Resolves when it has exited. */
  stopContainer(containerID: string, gracePeriodMs: number): Promise<void>;
  /** Forgets an exited container (its logs stay on disk). */
  removeContainer(containerID: string): Promise<void>;
  containerStatus(containerID: string): RuntimeContainerStatus | undefined;
  listContainers(podUID?: string): RuntimeContainerStatus[];
  /** CRI ExecSync: runs `cmd` with the container's environment and working directory; a timeout of 0 is none. */
  execSync(containerID: string, cmd: string[], timeoutMs: number): Promise<ExecResult>;
  /** The tail of a container's output (stdout and stderr interleaved as they came). */
  containerLogs(containerID: string): string;
  subscribe(listener: (event: ContainerEvent) => void): () => void;
  /** Kills every process it started and waits for them; nothing outlives it. */
  close(): Promise<void>;
}
