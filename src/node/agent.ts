/**
 * `probelet node`'s agent: a source of pods and a sink of status and events for the same
 * Kubelet `probelet run` drives. It registers the Node and keeps its Lease, feeds the pods
 * bound to it (list + watch) to the Kubelet, writes their status and the Kubelet's events
 * through the API, and ends a deleted pod as the kubelet does: terminate with the grace
 * period, write the final status, then delete the object with `gracePeriodSeconds=0`.
 */
import { PLEG_RELIST_PERIOD_MS } from '../prober/start-latency.js';
import type { Pod, PodStatus } from '../api/types.js';
import { admitExistingPods } from '../api/admit.js';
import { createEventRecorder } from '../kubelet/events.js';
import { Kubelet, type KubeletOptions } from '../kubelet/kubelet.js';
import type { EventRecorder } from '../prober/types.js';
import type { ContainerRuntime } from '../runtime/types.js';
import { realClock, realRandom, type Clock } from '../util/clock.js';
import { createEventSink, isRoutineStartEvent, type EventSink } from './event-sink.js';
import { startHeartbeat, type Heartbeat } from './heartbeat.js';
import type { LeaseHost } from './lease/controller.js';
import { startNodeHealth, type NodeHealthOptions } from './node-health.js';
import { createNodeEventRecorder, STARTING_MESSAGE, STARTING_REASON, statusEventMessage } from './node-events.js';
import { errorMessage, httpStatus, type KubeClients } from './kube.js';
import type { NodeIdentity } from './node-object.js';
import { startPodSource, type PodSource } from './pod-source.js';
import { createStatusSink, type StatusSink } from './status-sink.js';
import { apiSecretGetter } from './pull-secrets.js';
import type { ImagePullerOptions } from '../kubelet/image-puller.js';
import { VOLUMES_NOT_MOUNTED_REASON, volumesNotMountedMessage, withoutVolumes } from './volumes.js';

/** The Node it registers (name, versions, port, address, taints, labels, capacity: {@link NodeIdentity}), and how it runs. */
export interface NodeAgentOptions extends NodeIdentity {
  clients: KubeClients;
  runtime: ContainerRuntime;
  clock?: Clock;
  random?: () => number;
  log: (line: string) => void;
  /**
   * What the Kubelet admits (default: the API's defaults and validation only; what a runtime
   * cannot run — no command for the process runtime, env from a Secret — is its container's
   * `CreateContainerConfigError`, as the kubelet reports a container it cannot create).
   */
  admit?: KubeletOptions['admit'];
  /** The Kubelet's prober, built over the node's event recorder (the simulated runtime's handlers); default the real one. */
  prober?: (recorder: EventRecorder) => NonNullable<KubeletOptions['prober']>;
  /** The Kubelet's lifecycle hook runner (the simulated runtime's); default the real one. */
  lifecycleHandlers?: KubeletOptions['lifecycleHandlers'];
  /**
   * The PLEG's relist phase (ms past each second of the clock): a pod's next sync after the one
   * that started a container waits for the next relist, as on a kubelet, so probe workers see
   * a start when a kubelet's would. Default: the clock's phase when the agent starts.
   */
  relistPhaseMs?: number;
  /** Warnings about a pod, each recorded as one Warning event when the pod is admitted (a bad behaviour annotation). */
  podWarnings?: (pod: Pod) => Array<{ reason: string; message: string }>;
  /** The probe flight recorder (default on; a fleet of many nodes turns it off). */
  flightRecorder?: boolean;
  /** Aborting it gives up a registration still being retried (the node is stopped before it joined). */
  signal?: AbortSignal;
  /** Where the node's Lease is renewed (default: on this event loop; the command gives its lease thread). */
  leases?: LeaseHost;
  /** The machine's stats for the pressure conditions (readMachineStats); none: never under pressure (a simulated fleet). */
  machineStats?: NodeHealthOptions['machineStats'];
  /** `serializeImagePulls` / `maxParallelImagePulls` (default: one pull at a time). */
  imagePulls?: ImagePullerOptions;
  /** The hard eviction thresholds (`--eviction-hard`; default the kubelet's). */
  evictionHard?: NodeHealthOptions['thresholds'];
  /**
   * `--lean-writes` (a simulated fleet's opt-in; default off, the kubelet's writes): no routine
   * `Pulled`/`Created`/`Started` events through the API, and a starting pod's statuses folded
   * into one write (status-sink.ts, `LEAN_HOLD_MS`). docs/differences.md says why.
   */
  leanWrites?: boolean;
}

export interface NodeAgent {
  readonly name: string;
  readonly kubelet: Kubelet;
  /** Resolves after the first list of pods was handed to the Kubelet. */
  readonly synced: Promise<void>;
  /** Status and event writes so far (tests, the benchmark). */
  writes(): { status: number; events: number };
  /** Lease renewals so far and the longest time between two (how late one came). */
  leaseRenewals(): { count: number; longestGapMs: number };
  /**
   * Stops the node: no more pods are taken; every pod still running is stopped (with its
   * grace period) and its final status written, but the API objects stay (the node, not
   * the pods, went away: the node lifecycle controller evicts them). Then the Lease stops.
   */
  close(): Promise<void>;
}

type PodState = 'running' | 'terminating';

/** How long a stopping node waits for its last status and event writes. */
export const CLOSE_FLUSH_LIMIT_MS = 5_000;

/** Waits for `work` (whether it succeeds or fails), but no longer than `ms` on the clock. */
function withinMs(clock: Clock, ms: number, work: Promise<unknown>): Promise<void> {
  return new Promise((resolve) => {
    const timer = clock.setTimeout(resolve, ms);
    const done = (): void => {
      clock.clearTimeout(timer);
      resolve();
    };
    work.then(done, done);
  });
}

interface Known {
  namespace: string;
  name: string;
  state: PodState;
}

export async function startNodeAgent(options: NodeAgentOptions): Promise<NodeAgent> {
  const { clients, name, runtime, log } = options;
  const clock = options.clock ?? realClock;
  const random = options.random ?? realRandom;
  const identity: NodeIdentity = {
    name,
    runtimeVersion: options.runtimeVersion,
    probeletVersion: options.probeletVersion,
    port: options.port,
    address: options.address,
    ...(options.taints ? { taints: options.taints } : {}),
    ...(options.labels ? { labels: options.labels } : {}),
    ...(options.capacity ? { capacity: options.capacity } : {}),
  };
  const health = startNodeHealth({
    runtime,
    clock,
    ...(options.machineStats ? { machineStats: options.machineStats } : {}),
    ...(options.evictionHard ? { thresholds: options.evictionHard } : {}),
  });
  // The first status says Ready only once the runtime answered (upstream may first post
  // "container runtime status check may not have completed yet"; this avoids that flap).
  await health.checked;
  const eventSink: EventSink = createEventSink(clients, log);
  const nodeEvents = createNodeEventRecorder(name, clock, (event) => eventSink.offer(event));
  // BirthCry: before the registration, whose first status records the conditions' events.
  nodeEvents.record(STARTING_REASON, STARTING_MESSAGE);
  let heartbeat: Heartbeat;
  try {
    heartbeat = await startHeartbeat({
      clients,
      identity,
      clock,
      log,
      health: () => health.current(),
      onConditionChange: (reason) => nodeEvents.record(reason, statusEventMessage(name, reason)),
      ...(options.signal ? { signal: options.signal } : {}),
      ...(options.leases ? { leases: options.leases } : {}),
    });
  } catch (err) {
    health.close();
    throw err;
  }
  const recorder = createEventRecorder({ clock, host: name });
  const kubelet = new Kubelet({
    runtime,
    clock,
    random,
    recorder,
    // Pods from the apiserver exist already: ValidatePodCreate's rules (no ephemeral
    // containers, added since by `kubectl debug`) are not theirs.
    admit: options.admit ?? admitExistingPods,
    // A kubelet that has just started: probes of containers that outlived the agent follow
    // upstream's kubelet-restart rules (readiness kept until the first verdict), and the
    // first probes of its workers are jittered.
    kubeletRestart: true,
    ...(options.prober ? { prober: options.prober(recorder) } : {}),
    ...(options.lifecycleHandlers ? { lifecycleHandlers: options.lifecycleHandlers } : {}),
    relistPhaseMs: options.relistPhaseMs ?? clock.now() % PLEG_RELIST_PERIOD_MS,
    ...(options.flightRecorder === false ? { flightRecorder: false } : {}),
    // imagePullSecrets from the API, and the image pull settings (`--serialize-image-pulls`).
    getSecret: apiSecretGetter(clients),
    ...options.imagePulls,
  });
  const statusSink: StatusSink = createStatusSink(clients, options.address, log, { clock, ...(options.leanWrites === true ? { lean: true } : {}) });
  const offStatus = kubelet.onPodStatus((pod) => statusSink.offer(pod));
  const offEvents = recorder.subscribe((event) => {
    if (options.leanWrites === true && isRoutineStartEvent(event)) return;
    eventSink.offer(event);
  });
  const pods = new Map<string, Known>();
  /** Pods the Kubelet refused: told once, not again at every update of the object. */
  const refused = new Set<string>();
  const terminations = new Set<Promise<void>>();
  /** The Kubelet's part of those terminations (grace periods), which a stop waits for in full. */
  const stopping = new Set<Promise<void>>();
  let closing = false;

  function admit(apiPod: Pod): void {
    const uid = apiPod.metadata?.uid ?? '';
    const namespace = apiPod.metadata?.namespace ?? 'default';
    const podName = apiPod.metadata?.name ?? '';
    const { pod, dropped } = withoutVolumes(apiPod);
    const result = kubelet.addPods([pod]);
    const rejected = result.errors[0];
    if (rejected) {
      refused.add(uid);
      log(`pod ${namespace}/${podName}: not admitted: ${rejected.message}`);
      recorder.event({ pod: apiPod }, 'Warning', FAILED_ADMISSION_REASON, rejected.message);
      // The kubelet's `rejectPod`: the pod ends Failed, so that its controller replaces it
      // instead of it waiting Pending for good. One write, then the sink forgets it.
      statusSink.track(uid, namespace, podName);
      statusSink.offer({ ...apiPod, status: rejectedStatus(apiPod, FAILED_ADMISSION_REASON, rejected.message) });
      void statusSink.flush(uid).finally(() => {
        if (!pods.has(uid)) statusSink.untrack(uid);
      });
      return;
    }
    pods.set(uid, { namespace, name: podName, state: 'running' });
    statusSink.track(uid, namespace, podName);
    if (dropped.length > 0) recorder.event({ pod: apiPod }, 'Warning', VOLUMES_NOT_MOUNTED_REASON, volumesNotMountedMessage(dropped));
    for (const w of options.podWarnings?.(apiPod) ?? []) recorder.event({ pod: apiPod }, 'Warning', w.reason, w.message);
  }

  /** Graceful termination of a pod whose deletion the API asked for, then the kubelet's final delete. */
  function terminate(uid: string, known: Known, graceSeconds: number | undefined): void {
    known.state = 'terminating';
    const stopped = kubelet.deletePod(uid, graceSeconds);
    stopping.add(stopped);
    void stopped.finally(() => stopping.delete(stopped)).catch(() => undefined);
    const work = (async () => {
      try {
        await stopped;
        // The final status before the object goes; its events need not wait (a kubelet's do not).
        await statusSink.flush(uid);
        if (!closing) await deleteFromAPI(uid, known);
      } catch (err) {
        log(`pod ${known.namespace}/${known.name}: termination failed: ${errorMessage(err)}`);
      } finally {
        forget(uid);
      }
    })();
    terminations.add(work);
    void work.finally(() => terminations.delete(work));
  }

  /** `canBeDeleted` → `Delete` with grace 0 and the UID as precondition, as the status manager does. */
  async function deleteFromAPI(uid: string, known: Known): Promise<void> {
    try {
      await clients.core.deleteNamespacedPod({
        name: known.name,
        namespace: known.namespace,
        gracePeriodSeconds: 0,
        body: { gracePeriodSeconds: 0, preconditions: { uid } },
      });
    } catch (err) {
      const code = httpStatus(err);
      if (code !== 404 && code !== 409) throw err;
    }
  }

  function forget(uid: string): void {
    statusSink.untrack(uid);
    pods.delete(uid);
    if (kubelet.hasPod(uid)) {
      try {
        kubelet.removePod(uid);
      } catch {
        // Still terminating (closing): the kubelet's close ends it.
      }
    }
  }

  const source: PodSource = startPodSource({
    clients,
    nodeName: name,
    clock,
    random,
    log,
    handlers: {
      upsert(pod) {
        if (closing) return;
        const uid = pod.metadata?.uid ?? '';
        const known = pods.get(uid);
        if (pod.metadata?.deletionTimestamp) {
          if (known?.state === 'running') terminate(uid, known, pod.metadata.deletionGracePeriodSeconds);
          else if (!known && !kubelet.hasPod(uid)) {
            // Never started here: nothing to stop, the object can go.
            void deleteFromAPI(uid, { namespace: pod.metadata.namespace ?? 'default', name: pod.metadata.name ?? '', state: 'terminating' }).catch(
              (err: unknown) => log(`pod ${pod.metadata?.namespace ?? ''}/${pod.metadata?.name ?? ''}: deleting it failed: ${errorMessage(err)}`),
            );
          }
          return;
        }
        if (known?.state === 'running') statusSink.reconcile(pod);
        if (known || kubelet.hasPod(uid) || refused.has(uid)) return;
        // A pod that finished before this node saw it is not run again.
        const phase = pod.status?.phase;
        if (phase === 'Succeeded' || phase === 'Failed') return;
        admit(pod);
      },
      remove(uid) {
        refused.delete(uid);
        const known = pods.get(uid);
        // Deleted at once (--force, or the node's own final delete): tear down now.
        if (known?.state === 'running') {
          statusSink.untrack(uid);
          terminate(uid, known, 0);
        }
      },
    },
  });

  // Once the node knows its pods: what an earlier run left for pods no longer bound to it goes,
  // as the kubelet's HandlePodCleanups kills runtime pods it does not want.
  // A stop waits for a cleanup under way, never for a first list that may not come.
  let cleanedUp: Promise<void> | undefined;
  void source.synced.then(() => {
    if (closing || !runtime.removeUnadopted) return;
    cleanedUp = runtime
      .removeUnadopted(new Set(pods.keys()))
      .then((removed) => {
        if (removed > 0) log(`node ${name}: removed what an earlier run left running for ${removed} pod(s) no longer bound to this node`);
      })
      .catch((err: unknown) => log(`node ${name}: removing what an earlier run left failed: ${errorMessage(err)}`));
  });

  return {
    name,
    kubelet,
    synced: source.synced,
    writes: () => ({ status: statusSink.writes, events: eventSink.writes }),
    leaseRenewals: () => heartbeat.renewals(),
    async close() {
      closing = true;
      source.close();
      await cleanedUp;
      // Pods being deleted finish their grace periods, then every other pod gets its own.
      await Promise.allSettled([...stopping]);
      await kubelet.close();
      // What is left to tell the API is told if it answers soon: one out of reach must not hold the stop.
      const flushed = Promise.all([...terminations, ...[...pods.keys()].map((uid) => statusSink.flush(uid)), eventSink.flush()]);
      await withinMs(clock, CLOSE_FLUSH_LIMIT_MS, flushed);
      statusSink.close();
      offStatus();
      offEvents();
      heartbeat.close();
      health.close();
    },
  };
}

/** probelet's own reason for a pod its validation refuses (the API server had accepted it). */
const FAILED_ADMISSION_REASON = 'FailedAdmission';

/** `rejectPod`'s status: Failed, the reason, "Pod was rejected: …", the QoS class kept. */
function rejectedStatus(pod: Pod, reason: string, message: string): PodStatus {
  return {
    ...(pod.status?.qosClass ? { qosClass: pod.status.qosClass } : {}),
    phase: 'Failed',
    reason,
    message: `Pod was rejected: ${message}`,
  };
}
