/**
 * A scripted ContainerRuntime for the kubelet's state-machine tests (the seam upstream fakes
 * with its FakeRuntimeService): containers "run" until the test makes them exit, stop
 * honours SIGTERM/SIGKILL timing on the injected clock, and every call is recorded.
 */
import type { Container, Pod } from '../../src/api/types.js';
import type {
  ContainerEvent,
  ContainerRuntime,
  ExecResult,
  PodSandbox,
  RuntimeContainerStatus,
} from '../../src/runtime/types.js';
import type { Clock } from '../../src/util/clock.js';

export interface FakeContainerBehaviour {
  /** Exit code when SIGTERM arrives; `undefined` = ignores SIGTERM and waits for SIGKILL. */
  onTerm?: number;
  /** Fails to start with this message (StartError). */
  startError?: string;
  /** The spec is refused outright (startContainer rejects), like an unsupported env source. */
  configError?: string;
}

export class FakeRuntime implements ContainerRuntime {
  readonly calls: string[] = [];
  readonly containers = new Map<string, RuntimeContainerStatus>();
  /** Per container name: how it behaves (default: exits 143 on SIGTERM). */
  readonly behaviour = new Map<string, FakeContainerBehaviour>();
  private readonly listeners = new Set<(e: ContainerEvent) => void>();
  private nextId = 1;

  constructor(private readonly clock: Clock) {}

  async runPodSandbox(pod: Pod): Promise<PodSandbox> {
    this.calls.push(`runPodSandbox ${pod.metadata?.name}`);
    return { id: `sandbox-${pod.metadata?.uid}`, podUID: pod.metadata?.uid ?? '', podIP: '127.0.0.1' };
  }

  async removePodSandbox(sandboxID: string): Promise<void> {
    this.calls.push(`removePodSandbox ${sandboxID}`);
  }

  async startContainer(_sandboxID: string, pod: Pod, container: Container, attempt: number): Promise<RuntimeContainerStatus> {
    const id = `fake://${this.nextId++}`;
    const now = this.clock.now();
    const b = this.behaviour.get(container.name) ?? {};
    this.calls.push(`start ${container.name}#${attempt}`);
    if (b.configError) throw new Error(b.configError);
    const status: RuntimeContainerStatus = b.startError
      ? { id, podUID: pod.metadata?.uid ?? '', name: container.name, attempt, image: container.image ?? '', state: 'exited', createdAt: now, finishedAt: now, exitCode: 128, reason: 'StartError', message: b.startError }
      : { id, podUID: pod.metadata?.uid ?? '', name: container.name, attempt, image: container.image ?? '', state: 'running', createdAt: now, startedAt: now };
    this.containers.set(id, status);
    if (status.state === 'running') this.emit({ type: 'started', status: { ...status } });
    return { ...status };
  }

  async stopContainer(containerID: string, gracePeriodMs: number): Promise<void> {
    const c = this.containers.get(containerID);
    if (!c || c.state !== 'running') return;
    this.calls.push(`stop ${c.name} grace=${gracePeriodMs}`);
    const b = this.behaviour.get(c.name);
    if (!b || !('onTerm' in b) || b.onTerm !== undefined) return this.exit(containerID, b?.onTerm ?? 143);
    // Ignores SIGTERM: dies of SIGKILL when the grace period is over.
    await new Promise<void>((resolve) => this.clock.setTimeout(resolve, gracePeriodMs));
    this.exit(containerID, 137);
  }

  async removeContainer(containerID: string): Promise<void> {
    this.calls.push(`remove ${this.containers.get(containerID)?.name}`);
  }

  containerStatus(containerID: string): RuntimeContainerStatus | undefined {
    const c = this.containers.get(containerID);
    return c ? { ...c } : undefined;
  }

  listContainers(podUID?: string): RuntimeContainerStatus[] {
    return [...this.containers.values()].filter((c) => podUID === undefined || c.podUID === podUID).map((c) => ({ ...c }));
  }

  async execSync(): Promise<ExecResult> {
    return { output: '', exitCode: 0 };
  }

  containerLogs(): string {
    return '';
  }

  subscribe(listener: (event: ContainerEvent) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  async close(): Promise<void> {
    this.calls.push('close');
    for (const c of this.containers.values()) if (c.state === 'running') this.exit(c.id, 137);
  }

  /** The container's process exits on its own (or is killed) with `exitCode`. */
  exit(containerID: string, exitCode: number): void {
    const c = this.containers.get(containerID);
    if (!c || c.state !== 'running') return;
    c.state = 'exited';
    c.exitCode = exitCode;
    c.finishedAt = this.clock.now();
    c.reason = exitCode === 0 ? 'Completed' : 'Error';
    this.emit({ type: 'exited', status: { ...c } });
  }

  /** The running instance of container `name`, if any. */
  running(name: string): RuntimeContainerStatus | undefined {
    return [...this.containers.values()].find((c) => c.name === name && c.state === 'running');
  }

  private emit(event: ContainerEvent): void {
    for (const l of this.listeners) l(event);
  }
}
