import type { Container, ContainerStatus, Pod, PodStatus } from '../api/types.js';
import type { ResultsManager } from './results.js';
import { firstByName } from '../util/by-name.js';
import { predatesKubelet } from './timestamps.js';
import type { ProbeType } from './types.js';

/** What `updatePodStatus` reads from the manager. */
export interface ProbeStateView {
  readonly startupResults: ResultsManager;
  readonly readinessResults: ResultsManager;
  /** When the kubelet started (ms). */
  readonly startTime: number;
  getWorker(podUID: string, containerName: string, probeType: ProbeType): { trigger(): void } | undefined;
}

/**
 * The manager's `UpdatePodStatus` (§3.7): fills `started` and `ready` of a freshly
 * generated status in place, from the caches and from which workers exist. A missing
 * worker means "no such probe", which for a running, started container means ready.
 */
export function updatePodStatus(view: ProbeStateView, pod: Pod, status: PodStatus): void {
  const podUID = pod.metadata?.uid ?? '';
  const specs = firstByName(pod.spec?.containers);

  for (const c of status.containerStatuses ?? []) {
    const started = isStarted(view, podUID, c);
    c.started = started;
    if (!started) continue; // `ready` stays as generated
    c.ready = readiness(view, pod, c, specs.get(c.name));
  }

  const initContainers = pod.spec?.initContainers ?? [];
  (status.initContainerStatuses ?? []).forEach((c, i) => {
    const started = isStarted(view, podUID, c);
    c.started = started;
    const spec = initContainers[i];
    // Spec and status disagree (programmer error upstream logs): leave `ready` alone.
    if (!spec || spec.name !== c.name) return;
    if (spec.restartPolicy !== 'Always') {
      // A plain init container is ready once it has exited successfully, and only then.
      if (c.state?.terminated?.exitCode === 0) c.ready = true;
      return;
    }
    if (!started) return;
    c.ready = readiness(view, pod, c, spec);
  });
}

function isStarted(view: ProbeStateView, podUID: string, c: ContainerStatus): boolean {
  if (!c.state?.running) return false;
  const cached = view.startupResults.get(c.containerID ?? '');
  if (cached !== undefined) return cached === 'success';
  // ChangeContainerStatusOnKubeletRestart disabled (1.35 default): a container the
  // generated status already calls started stays started across a kubelet restart.
  if (c.started === true) return true;
  return view.getWorker(podUID, c.name, 'startup') === undefined;
}

function readiness(view: ProbeStateView, pod: Pod, c: ContainerStatus, spec: Container | undefined): boolean {
  const running = c.state?.running;
  if (!running) return false;
  const containerID = c.containerID ?? '';
  let ready: boolean;
  if (view.readinessResults.get(containerID) === 'success') {
    ready = true;
  } else {
    const worker = view.getWorker(pod.metadata?.uid ?? '', c.name, 'readiness');
    ready = worker === undefined;
    // Not ready yet: probe now rather than at the next tick, so readiness follows a
    // status change (e.g. startup success) without waiting a whole period.
    worker?.trigger();
  }

  // Kubelet-restart rule (gate disabled): containers older than this kubelet keep the
  // readiness the API last showed until their first real verdict.
  if (predatesKubelet(running.startedAt, view.startTime)) {
    if (!ready && view.readinessResults.get(containerID) === undefined) ready = true;
    if (spec?.readinessProbe && !podIsReady(pod)) ready = false;
  }
  return ready;
}

function podIsReady(pod: Pod): boolean {
  return pod.status?.conditions?.some((cond) => cond.type === 'Ready' && cond.status === 'True') ?? false;
}
