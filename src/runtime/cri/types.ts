/**
 * The `runtime.v1` messages probelet exchanges, as `cri.proto` declares them: snake_case,
 * enums as their names, int64 as number (nanosecond timestamps then keep a precision of a
 * few hundred nanoseconds, far below the milliseconds the kubelet reports).
 */
export type NamespaceMode = 'POD' | 'CONTAINER' | 'NODE' | 'TARGET';
export type ContainerState = 'CONTAINER_CREATED' | 'CONTAINER_RUNNING' | 'CONTAINER_EXITED' | 'CONTAINER_UNKNOWN';
export type PodSandboxState = 'SANDBOX_READY' | 'SANDBOX_NOTREADY';

export type Labels = Record<string, string>;

export interface VersionRequest {
  version: string;
}
export interface VersionResponse {
  version: string;
  runtime_name: string;
  runtime_version: string;
  runtime_api_version: string;
}

export interface StatusRequest {
  verbose?: boolean;
}
export interface RuntimeCondition {
  type: string;
  status: boolean;
  reason: string;
  message: string;
}
export interface StatusResponse {
  status?: { conditions: RuntimeCondition[] };
}

export interface PodSandboxMetadata {
  name: string;
  uid: string;
  namespace: string;
  attempt: number;
}

export interface DNSConfig {
  servers: string[];
  searches: string[];
  options: string[];
}

export interface PodSandboxConfig {
  metadata: PodSandboxMetadata;
  hostname?: string;
  log_directory: string;
  dns_config?: DNSConfig;
  labels: Labels;
  annotations: Labels;
  linux: {
    cgroup_parent?: string;
    security_context: { namespace_options: NamespaceOptions };
  };
}

export interface RunPodSandboxRequest {
  config: PodSandboxConfig;
  runtime_handler?: string;
}
export interface RunPodSandboxResponse {
  pod_sandbox_id: string;
}

export interface PodSandboxStatusResponse {
  status?: {
    id: string;
    metadata?: PodSandboxMetadata;
    state: PodSandboxState;
    created_at: number;
    network?: { ip: string };
    labels: Labels;
  };
}

export interface ListPodSandboxRequest {
  filter?: { id?: string; label_selector?: Labels };
}
export interface PodSandbox {
  id: string;
  metadata?: PodSandboxMetadata;
  state: PodSandboxState;
  created_at: number;
  labels: Labels;
}
export interface ListPodSandboxResponse {
  items: PodSandbox[];
}

export interface ImageSpec {
  image: string;
}

export interface NamespaceOptions {
  network: NamespaceMode;
  pid: NamespaceMode;
  ipc: NamespaceMode;
}

export interface ContainerConfig {
  metadata: { name: string; attempt: number };
  image: ImageSpec;
  command: string[];
  args: string[];
  working_dir: string;
  envs: { key: string; value: string }[];
  labels: Labels;
  annotations: Labels;
  log_path: string;
  linux?: { security_context: { namespace_options: NamespaceOptions } };
}

export interface CreateContainerRequest {
  pod_sandbox_id: string;
  config: ContainerConfig;
  sandbox_config: PodSandboxConfig;
}
export interface CreateContainerResponse {
  container_id: string;
}

export interface ListContainersRequest {
  filter?: { id?: string; pod_sandbox_id?: string; label_selector?: Labels };
}
export interface Container {
  id: string;
  pod_sandbox_id: string;
  metadata?: { name: string; attempt: number };
  image?: ImageSpec;
  state: ContainerState;
  created_at: number;
  labels: Labels;
  /** `io.kubernetes.container.restartCount` among them (what the kubelet reads back after a restart). */
  annotations?: Labels;
}
export interface ListContainersResponse {
  containers: Container[];
}

export interface ContainerStatus {
  id: string;
  metadata?: { name: string; attempt: number };
  state: ContainerState;
  created_at: number;
  started_at: number;
  finished_at: number;
  exit_code: number;
  image?: ImageSpec;
  image_ref: string;
  reason: string;
  message: string;
  labels: Labels;
  annotations?: Labels;
  log_path: string;
}
export interface ContainerStatusResponse {
  status?: ContainerStatus;
}

export interface ExecSyncRequest {
  container_id: string;
  cmd: string[];
  /** Seconds; 0 = no timeout. */
  timeout: number;
}
export interface ExecSyncResponse {
  stdout: Buffer;
  stderr: Buffer;
  exit_code: number;
}

export interface Image {
  id: string;
  repo_tags: string[];
  repo_digests: string[];
  size: number;
}
export interface ImageStatusResponse {
  image?: Image | null;
}

/** CRI `AuthConfig`: the credentials of one pull. */
export interface AuthConfig {
  username?: string;
  password?: string;
  auth?: string;
  server_address?: string;
  identity_token?: string;
  registry_token?: string;
}

export interface PullImageRequest {
  image: ImageSpec;
  auth?: AuthConfig;
  sandbox_config?: PodSandboxConfig;
}
export interface PullImageResponse {
  image_ref: string;
}
