/**
 * The pod conditions the kubelet owns (upstream `pkg/kubelet/status/generate.go`). They are
 * what `kubectl get pods` turns into READY and what Services use to pick endpoints, so
 * reasons and messages are reproduced word for word: people alert and grep on them.
 *
 * Pure functions of the pod spec and a `PodStatus`; `lastTransitionTime` is the status
 * manager's business, not theirs.
 */
import { firstByName } from '../util/by-name.js';
import { goQuote } from '../util/go-quote.js';
import type { Container, ContainerStatus, Pod, PodCondition, PodStatus } from '../api/types.js';

/** Condition reasons, as upstream spells them. */
export const UNKNOWN_CONTAINER_STATUSES = 'UnknownContainerStatuses';
export const POD_COMPLETED = 'PodCompleted';
export const POD_FAILED = 'PodFailed';
export const CONTAINERS_NOT_READY = 'ContainersNotReady';
export const CONTAINERS_NOT_INITIALIZED = 'ContainersNotInitialized';
export const READINESS_GATES_NOT_READY = 'ReadinessGatesNotReady';

/** The condition types the kubelet generates itself (`kubetypes.PodConditionsByKubelet`). */
export const KUBELET_OWNED_CONDITION_TYPES: ReadonlySet<string> = new Set([
  'PodScheduled',
  'Ready',
  'Initialized',
  'ContainersReady',
  'PodReadyToStartContainers',
]);

/**
 * `kubernetes-types` predates `PodCondition.observedGeneration` (PodObservedGenerationTracking,
 * on by default since 1.34); upstream stamps it on every kubelet-generated condition.
 */
export type KubeletPodCondition = PodCondition & { observedGeneration?: number };

/** Sidecars: init containers with `restartPolicy: Always` (`podutil.IsRestartableInitContainer`). */
export function isRestartableInitContainer(container: Container): boolean {
  return container.restartPolicy === 'Always';
}

/**
 * Init statuses followed by regular ones, the list upstream hands to the generators. Go's
 * `append(init, regular...)` is nil when `init` is nil and `regular` adds nothing; that nil
 * is what "no statuses at all" (UnknownContainerStatuses) means, so it is kept as `undefined`.
 */
export function allContainerStatuses(status: PodStatus): ContainerStatus[] | undefined {
  const init = status.initContainerStatuses;
  const regular = status.containerStatuses ?? [];
  if (init === undefined && regular.length === 0) return undefined;
  return [...(init ?? []), ...regular];
}

/** `ContainersReady`: every regular container and every sidecar has a status with `ready: true`. */
export function generateContainersReadyCondition(pod: Pod, status: PodStatus): KubeletPodCondition {
  const statuses = allContainerStatuses(status);
  if (statuses === undefined) {
    return condition(pod, 'ContainersReady', 'False', UNKNOWN_CONTAINER_STATUSES);
  }
  const unknown: string[] = [];
  const unready: string[] = [];
  const spec = pod.spec;
  const considered = [
    ...(spec?.initContainers ?? []).filter(isRestartableInitContainer),
    ...(spec?.containers ?? []),
  ];
  // Statuses come in spec order: matched by position, indexed by name only past a mismatch
  // (this runs at every readiness change; a Map of n statuses each time was n² for a pod of n).
  let byName: Map<string, ContainerStatus> | undefined;
  const sidecars = considered.length - (spec?.containers?.length ?? 0);
  const regularFrom = statuses.length - (status.containerStatuses?.length ?? 0);
  for (const [i, container] of considered.entries()) {
    const guess = i >= sidecars ? statuses[regularFrom + i - sidecars] : undefined;
    const cs = guess?.name === container.name ? guess : (byName ??= firstByName(statuses)).get(container.name);
    if (cs === undefined) unknown.push(container.name);
    else if (cs.ready !== true) unready.push(container.name);
  }

  // Terminal phases: containers may still be winding down, so their readiness says nothing.
  if (status.phase === 'Succeeded' && unknown.length === 0) {
    return condition(pod, 'ContainersReady', 'False', POD_COMPLETED);
  }
  if (status.phase === 'Failed') {
    return condition(pod, 'ContainersReady', 'False', POD_FAILED);
  }

  const messages: string[] = [];
  if (unknown.length > 0) messages.push(`containers with unknown status: ${goList(unknown)}`);
  if (unready.length > 0) messages.push(`containers with unready status: ${goList(unready)}`);
  if (messages.length > 0) {
    return condition(pod, 'ContainersReady', 'False', CONTAINERS_NOT_READY, messages.join(', '));
  }
  return condition(pod, 'ContainersReady', 'True');
}

/**
 * `Ready`: `ContainersReady` (copied status/reason/message when not True), then every
 * readiness gate must name a condition in `conditions` whose status is True.
 */
export function generatePodReadyCondition(
  pod: Pod,
  status: PodStatus,
  conditions: readonly PodCondition[] | undefined,
  containersReady: KubeletPodCondition = generateContainersReadyCondition(pod, status),
): KubeletPodCondition {
  if (containersReady.status !== 'True') {
    return condition(pod, 'Ready', containersReady.status, containersReady.reason, containersReady.message);
  }
  const messages: string[] = [];
  for (const gate of pod.spec?.readinessGates ?? []) {
    const c = conditions?.find((x) => x.type === gate.conditionType);
    if (c === undefined) {
      messages.push(`corresponding condition of pod readiness gate ${goQuote(gate.conditionType)} does not exist.`);
    } else if (c.status !== 'True') {
      messages.push(`the status of pod readiness gate ${goQuote(gate.conditionType)} is not "True", but ${c.status}`);
    }
  }
  if (messages.length > 0) {
    return condition(pod, 'Ready', 'False', READINESS_GATES_NOT_READY, messages.join(', '));
  }
  return condition(pod, 'Ready', 'True');
}

/**
 * `Initialized`: plain init containers must have succeeded (`ready: true`), sidecars must have
 * started. Once any regular container has run, the pod stays initialized even while a sidecar
 * restarts, because initialization is not repeated.
 */
export function generatePodInitializedCondition(pod: Pod, status: PodStatus): KubeletPodCondition {
  const statuses = allContainerStatuses(status);
  const initContainers = pod.spec?.initContainers ?? [];
  if (statuses === undefined && initContainers.length > 0) {
    return condition(pod, 'Initialized', 'False', UNKNOWN_CONTAINER_STATUSES);
  }
  const unknown: string[] = [];
  const incomplete: string[] = [];
  const byName = firstByName(statuses);
  for (const container of initContainers) {
    const cs = byName.get(container.name);
    if (cs === undefined) unknown.push(container.name);
    else if (!isInitContainerInitialized(container, cs)) incomplete.push(container.name);
  }

  if (status.phase === 'Succeeded' && unknown.length === 0) {
    return condition(pod, 'Initialized', 'True', POD_COMPLETED);
  }
  if (hasAnyRegularContainerStarted(pod, statuses ?? [])) {
    return condition(pod, 'Initialized', 'True');
  }

  const messages: string[] = [];
  if (unknown.length > 0) messages.push(`containers with unknown status: ${goList(unknown)}`);
  if (incomplete.length > 0) messages.push(`containers with incomplete status: ${goList(incomplete)}`);
  if (messages.length > 0) {
    return condition(pod, 'Initialized', 'False', CONTAINERS_NOT_INITIALIZED, messages.join(', '));
  }
  return condition(pod, 'Initialized', 'True');
}

/** `PodReadyToStartContainers`: True once the sandbox (here: the pod's local environment) is set up. */
export function generatePodReadyToStartContainersCondition(pod: Pod, sandboxReady: boolean): KubeletPodCondition {
  return condition(pod, 'PodReadyToStartContainers', sandboxReady ? 'True' : 'False');
}

/** `PodScheduled`: a pod the kubelet runs is scheduled by definition (the kubelet always writes True). */
export function generatePodScheduledCondition(pod: Pod): KubeletPodCondition {
  return condition(pod, 'PodScheduled', 'True');
}

export interface GeneratePodConditionsOptions {
  /** Whether the pod's sandbox exists; default true. */
  sandboxReady?: boolean;
}

/**
 * The whole `conditions` list as `generateAPIPodStatus` builds it: conditions the kubelet does
 * not own (readiness gates set by controllers, `DisruptionTarget`) carried over from
 * `pod.status`, then PodReadyToStartContainers, Initialized, Ready, ContainersReady,
 * PodScheduled, in that order. `lastTransitionTime` is left for the status manager to fill.
 */
export function generatePodConditions(
  pod: Pod,
  status: PodStatus,
  options: GeneratePodConditionsOptions = {},
): KubeletPodCondition[] {
  const conditions: KubeletPodCondition[] = (pod.status?.conditions ?? [])
    .filter((c) => !KUBELET_OWNED_CONDITION_TYPES.has(c.type))
    .map((c) => ({ ...c }));
  conditions.push(generatePodReadyToStartContainersCondition(pod, options.sandboxReady ?? true));
  conditions.push(generatePodInitializedCondition(pod, status));
  const containersReady = generateContainersReadyCondition(pod, status);
  conditions.push(generatePodReadyCondition(pod, status, conditions, containersReady));
  conditions.push(containersReady);
  conditions.push(generatePodScheduledCondition(pod));
  return conditions;
}

function isInitContainerInitialized(container: Container, cs: ContainerStatus): boolean {
  return isRestartableInitContainer(container) ? cs.started === true : cs.ready === true;
}

/** `kubecontainer.HasAnyRegularContainerStarted`: a regular container is running or has run. */
function hasAnyRegularContainerStarted(pod: Pod, statuses: readonly ContainerStatus[]): boolean {
  const names = new Set((pod.spec?.containers ?? []).map((c) => c.name));
  return statuses.some((s) => names.has(s.name) && (s.state?.running !== undefined || s.state?.terminated !== undefined));
}

function condition(
  pod: Pod,
  type: string,
  status: string,
  reason?: string,
  message?: string,
): KubeletPodCondition {
  const c: KubeletPodCondition = { type, status };
  // Go's omitempty: a zero generation is not written.
  const generation = pod.metadata?.generation;
  if (generation !== undefined && generation !== 0) c.observedGeneration = generation;
  if (reason) c.reason = reason;
  if (message) c.message = message;
  return c;
}

/** Go's `%s` of a `[]string`: `[a b]`. */
function goList(names: readonly string[]): string {
  return `[${names.join(' ')}]`;
}

