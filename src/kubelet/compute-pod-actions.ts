/**
 * `computePodActions` (upstream kuberuntime_manager.go): what a sync of a pod does to its
 * containers, decided from the pod's spec, what is known of each container's instances and
 * the probes' cached verdicts — and nothing else: no runtime, no clock, no class. SyncPod
 * (sync-pod.ts) does what it says; tests and `explain` call it to tell which branch the
 * kubelet takes and why.
 *
 * The decisions, in the order a sync takes them:
 * - init containers first, in spec order: an init container that has not succeeded is started
 *   (or restarted, through the back-off, if its policy says so) and nothing after it runs; a
 *   sidecar (a restartable init container) is started, restarted whatever the pod's policy,
 *   killed and restarted when its liveness or startup probe failed, and lets the next init
 *   container start once it runs (and, with a startup probe, has started);
 * - once every init container is done (the pod is initialized), each regular container:
 *   started if it never ran; killed when its liveness (then startup) probe failed, and
 *   restarted unless its policy is `Never`; restarted when it exited and its policy (or
 *   restart rules) say so; when a probe kills a `Never` container and no other regular
 *   container is kept or to be started, the whole pod is killed instead (KillPod);
 * - a restart after an exit goes through the crash-loop back-off (`doBackOff`), measured from
 *   the latest *exited* instance the sync read: for a container the same sync kills, the one
 *   before it (so the first kill restarts at once).
 *
 * The walk ({@link podActions}) reads its input lazily, one decision at a time: SyncPod acts on
 * each action before asking for the next, so a decision sees what the actions before it did
 * (a sidecar that did not start holds the next init container back; the containers a KillPod
 * stopped are seen stopped), as the kubelet's sync always has. {@link computePodActions} runs
 * the same walk on a copy, with each action's expected outcome, and returns the whole plan.
 */
import type { Container, Pod } from '../api/types.js';
import { containerShouldRestart } from '../prober/restart-rules.js';
import type { Result } from '../prober/types.js';
import type { RuntimeContainerStatus } from '../runtime/types.js';
import { isInBackOffSince, type BackOffEntry } from './backoff.js';

/** What the sync reads of one instance of a container (a runtime container status is one). */
export type ObservedInstance = Pick<RuntimeContainerStatus, 'id' | 'state' | 'exitCode' | 'finishedAt'>;

/** What is known of one of the pod's containers (pod-status.ts's ContainerRecord is one). */
export interface ObservedContainer {
  readonly spec: Container;
  readonly kind: 'init' | 'sidecar' | 'regular';
  /** The newest instance, if one was ever started. */
  readonly current?: ObservedInstance | undefined;
  /** The instance before it. */
  readonly previous?: ObservedInstance | undefined;
}

/** The cached verdicts of one kind of probe, by container ID (a results manager, or a Map). */
export interface ProbeVerdicts {
  get(containerID: string): Result | undefined;
}

/** A copy of the crash-loop back-off's state, to tell whether each restart would wait. */
export interface BackOffState {
  /** The instant the verdicts are for (epoch ms on the kubelet's clock). */
  nowMs: number;
  /** Each container's entry, by container name; a container without one restarts at once. */
  entries: Readonly<Record<string, BackOffEntry>>;
}

export interface PodActionsInput {
  pod: Pod;
  /** The init containers (sidecars among them) in spec order, then the regular containers in spec order. */
  containers: readonly ObservedContainer[];
  /** Every init container has completed once: regular containers may run. */
  initialized: boolean;
  liveness: ProbeVerdicts;
  startup: ProbeVerdicts;
  /** The back-off's state, for {@link computePodActions}' verdicts (absent: no entries). */
  backOff?: BackOffState | undefined;
}

/** What the back-off says about a restart. */
export interface BackOffVerdict {
  /** True: the container waits (`CrashLoopBackOff`). */
  inBackOff: boolean;
  /** The step in force, when in back-off (the `<dur>` of "back-off 40s restarting failed container"). */
  stepMs?: number;
  /** When a restart will be allowed (epoch ms), when in back-off. */
  untilMs?: number;
}

/** One thing a sync does, in order. */
export type PodAction =
  /** First start of a container that never ran. */
  | { type: 'start'; container: string }
  /**
   * Start a container again, through the back-off measured from `latestExited` (`doBackOff`);
   * without one (its first kill), at once.
   */
  | { type: 'restart'; container: string; latestExited: ObservedInstance | undefined; backOff?: BackOffVerdict }
  /** Kill a container whose liveness or startup probe failed (`Killing` with `message`); a `restart` follows when `restart`. */
  | { type: 'kill'; container: string; probe: 'liveness' | 'startup'; message: string; restart: boolean }
  /** Kill every container of the pod with the pod's grace (`KillPod`): a probe killed a container that will not restart and nothing else runs. */
  | { type: 'killPod'; container: string; probe: 'liveness' | 'startup' }
  /** Every init container is done from here on: regular containers may run. */
  | { type: 'initialized' };

/**
 * What the walk yields: the actions, and after each sidecar a `sidecarSettled` mark, where
 * SyncPod lets one microtask turn pass as the kubelet's sidecar step always has (see
 * sync-pod.ts); {@link computePodActions} leaves the marks out.
 */
export type PodWalkStep = PodAction | { type: 'sidecarSettled'; container: string };

export interface PodActions {
  actions: PodAction[];
  /** The pod is initialized after these actions. */
  initialized: boolean;
  /** After these actions every regular container has exited for good: the pod ends, its sidecars stopped. */
  podDone: boolean;
}

/**
 * The whole plan of one sync: the walk run on a copy of `input` where each action has its
 * expected outcome — a start runs the container (a new instance, without probe verdicts), a
 * kill leaves it exited with 137 as a container that does not handle SIGTERM does, a restart
 * in back-off leaves it as it was. Pure: same input, same plan.
 */
export function computePodActions(input: PodActionsInput): PodActions {
  const nowMs = input.backOff?.nowMs ?? 0;
  const containers: Array<{ -readonly [K in keyof ObservedContainer]: ObservedContainer[K] }> = input.containers.map((c) => ({ ...c }));
  const byName = new Map(containers.map((c) => [c.spec.name, c]));
  const actions: PodAction[] = [];
  let initialized = input.initialized;
  const run = (c: (typeof containers)[number]): void => {
    if (c.current) c.previous = c.current;
    c.current = { id: `new:${c.spec.name}`, state: 'running' };
  };
  const kill = (c: (typeof containers)[number]): void => {
    if (c.current?.state === 'running') c.current = { ...c.current, state: 'exited', exitCode: 137, finishedAt: nowMs };
  };
  for (const action of podActions({ ...input, containers })) {
    const c = action.type === 'initialized' ? undefined : byName.get(action.container);
    switch (action.type) {
      case 'sidecarSettled':
        break;
      case 'initialized':
        initialized = true;
        actions.push(action);
        break;
      case 'start':
        if (c) run(c);
        actions.push(action);
        break;
      case 'restart': {
        const backOff = backOffVerdict(input, action.container, action.latestExited);
        if (c?.current && !backOff.inBackOff) run(c);
        actions.push({ ...action, backOff });
        break;
      }
      case 'kill':
        if (c) kill(c);
        actions.push(action);
        break;
      case 'killPod':
        for (const o of containers) kill(o);
        actions.push(action);
        break;
    }
  }
  return { actions, initialized, podDone: regularContainersDone({ pod: input.pod, containers, initialized }) };
}

/** Whether the restart of `name` after `latestExited` waits, by the back-off state in `input` (`IsInBackOffSince`). */
function backOffVerdict(input: PodActionsInput, name: string, latestExited: ObservedInstance | undefined): BackOffVerdict {
  if (!latestExited) return { inBackOff: false };
  const nowMs = input.backOff?.nowMs ?? 0;
  const entry = input.backOff?.entries[name];
  const finishedAtMs = latestExited.finishedAt ?? nowMs;
  if (!entry || !isInBackOffSince(entry, finishedAtMs, nowMs)) return { inBackOff: false };
  return { inBackOff: true, stepMs: entry.backoffMs, untilMs: finishedAtMs + entry.backoffMs };
}

/**
 * The walk of one sync, one action at a time. Each decision reads `input` when it is taken:
 * a caller that acts on an action before asking for the next (SyncPod) has the decisions after
 * it see its effects on the same container objects.
 */
export function* podActions(input: PodActionsInput): Generator<PodWalkStep, void, undefined> {
  const wasInitialized = input.initialized;
  let initDone = true;
  for (const c of input.containers) {
    if (c.kind === 'regular') continue;
    if (c.kind === 'sidecar') {
      const started = yield* sidecarActions(input, c);
      yield { type: 'sidecarSettled', container: c.spec.name };
      if (!started && !wasInitialized) {
        initDone = false;
        break;
      }
      continue;
    }
    if (wasInitialized) continue;
    const cur = c.current;
    if (cur?.state === 'exited' && cur.exitCode === 0) continue;
    initDone = false;
    if (!cur) yield { type: 'start', container: c.spec.name };
    else if (cur.state === 'exited' && containerShouldRestart(c.spec, input.pod, cur.exitCode ?? 0)) {
      yield { type: 'restart', container: c.spec.name, latestExited: cur };
    }
    break;
  }
  if (initDone && !wasInitialized) yield { type: 'initialized' };
  if (!wasInitialized && !initDone) return;

  for (const c of input.containers) {
    if (c.kind !== 'regular') continue;
    const cur = c.current;
    if (!cur) {
      yield { type: 'start', container: c.spec.name };
      continue;
    }
    if (cur.state === 'running') {
      const probe = failedProbe(input, cur);
      if (!probe) continue;
      // Exit-code rules are not consulted for a container that is still running (§10.4).
      const restart = !neverRestarts(c, input.pod);
      const exitedBefore = c.previous;
      if (!restart && !anyOtherRegularKeptOrStarting(input, c)) {
        // Nothing kept, nothing to start → KillPod, which stops every container with
        // `Stopping container X` and the pod's grace, not the probe's (kuberuntime_manager.go;
        // killContainer's message when none is given).
        yield { type: 'killPod', container: c.spec.name, probe };
        continue;
      }
      yield { type: 'kill', container: c.spec.name, probe, message: probeKillMessage(c, probe, restart), restart };
      if (restart) yield { type: 'restart', container: c.spec.name, latestExited: exitedBefore };
      continue;
    }
    if (containerShouldRestart(c.spec, input.pod, cur.exitCode ?? 0)) yield { type: 'restart', container: c.spec.name, latestExited: cur };
  }
}

/** A sidecar's actions (restarted whatever the pod's policy); returns whether it counts as started for the next init container. */
function* sidecarActions(input: PodActionsInput, c: ObservedContainer): Generator<PodAction, boolean, undefined> {
  const cur = c.current;
  if (!cur) {
    yield { type: 'start', container: c.spec.name };
    // Read after the start: only a sidecar that runs now lets the next one start.
    return runsNow(c) && !c.spec.startupProbe;
  }
  if (cur.state === 'running') {
    const probe = failedProbe(input, cur);
    if (probe) {
      const exitedBefore = c.previous;
      yield { type: 'kill', container: c.spec.name, probe, message: probeKillMessage(c, probe, true), restart: true };
      yield { type: 'restart', container: c.spec.name, latestExited: exitedBefore };
      // Liveness does not gate later containers (§10.5); a failed startup does.
      return probe === 'liveness';
    }
    return !c.spec.startupProbe || input.startup.get(cur.id) === 'success';
  }
  yield { type: 'restart', container: c.spec.name, latestExited: cur };
  return false;
}

/** The container's newest instance runs (read when called: after the actions so far). */
function runsNow(c: ObservedContainer): boolean {
  return c.current?.state === 'running';
}

/** Liveness, then startup: which cached verdict condemns this running container, if any. */
function failedProbe(input: PodActionsInput, cur: ObservedInstance): 'liveness' | 'startup' | undefined {
  if (input.liveness.get(cur.id) === 'failure') return 'liveness';
  if (input.startup.get(cur.id) === 'failure') return 'startup';
  return undefined;
}

/** The container's own policy, else the pod's (default `Always`), is `Never`. */
function neverRestarts(c: ObservedContainer, pod: Pod): boolean {
  return (c.spec.restartPolicy ?? pod.spec?.restartPolicy ?? 'Always') === 'Never';
}

/** Whether another regular container keeps running (no failed probe) or is to be (re)started: upstream's keepCount / ContainersToStart. */
function anyOtherRegularKeptOrStarting(input: PodActionsInput, condemned: ObservedContainer): boolean {
  return input.containers.some((o) => {
    if (o === condemned || o.kind !== 'regular') return false;
    const cur = o.current;
    if (!cur) return true;
    if (cur.state === 'running') return failedProbe(input, cur) === undefined || !neverRestarts(o, input.pod);
    return containerShouldRestart(o.spec, input.pod, cur.exitCode ?? 0);
  });
}

/** The `Killing` event's message of a probe kill. */
export function probeKillMessage(c: Pick<ObservedContainer, 'spec' | 'kind'>, probe: 'liveness' | 'startup', willRestart: boolean): string {
  return c.kind === 'sidecar'
    ? `Init container ${c.spec.name} failed ${probe} probe`
    : `Container ${c.spec.name} failed ${probe} probe${willRestart ? ', will be restarted' : ''}`;
}

/** Every regular container has exited and will not be restarted: the pod is done (its sidecars are then stopped). */
export function regularContainersDone(input: Pick<PodActionsInput, 'pod' | 'containers' | 'initialized'>): boolean {
  if (!input.initialized) return false;
  return input.containers
    .filter((c) => c.kind === 'regular')
    .every((c) => c.current?.state === 'exited' && !containerShouldRestart(c.spec, input.pod, c.current.exitCode ?? 0));
}
