/**
 * `SyncPod` (kubelet.go and kuberuntime_manager.go): a pod's status first
 * (`generateAPIPodStatus`, `updatePodStatus`, conditions), the probe workers (`addPod`), the
 * sandbox, then what computePodActions says, done in its order — starts, restarts through the
 * crash-loop back-off (`doBackOff`), probe kills, KillPod — and, when every regular container
 * has finished for good, the pod's termination.
 */
import { DEFAULT_TERMINATION_GRACE_PERIOD_SECONDS } from '../api/defaults.js';
import type { PodStatus } from '../api/types.js';
import { adoptFromRuntime } from './adopt.js';
import {
  BACK_OFF_EVENT_REASON,
  CRASH_LOOP_BACK_OFF_REASON,
  backOffEventMessage,
  crashLoopBackOffKey,
  crashLoopBackOffMessage,
} from './backoff.js';
import { podActions, regularContainersDone, type ObservedInstance } from './compute-pod-actions.js';
import { generatePodConditions } from './conditions.js';
import { killContainer, killContainersWithSyncResult, startContainer } from './container-actions.js';
import { containerEvent, noteProbeAction, type KubeletContext, type PodRecord } from './context.js';
import { generatePodStatus, type ContainerRecord } from './pod-status.js';
import { clearTimer, completeWork, requeueAfterBackOff } from './pod-workers.js';

/** `SyncPod`: status, then `addPod`, then the runtime's actions for this pod. */
export async function syncPod(ctx: KubeletContext, rec: PodRecord): Promise<void> {
  if (!rec.adoptionChecked) {
    rec.adoptionChecked = true;
    await adoptFromRuntime(ctx, rec);
  }
  const status = await syncStatus(ctx, rec);
  if (status.phase === 'Succeeded' || status.phase === 'Failed') {
    await finishPod(ctx, rec);
    return;
  }
  ctx.probeManager.addPod(rec.pod);
  rec.changed = false;
  if (!rec.sandbox) {
    rec.sandbox = await ctx.runtime.runPodSandbox(rec.pod);
    // A new sandbox is a PLEG event: the pod is synced again at the next relist, even when
    // nothing else of this sync changed (a container whose image could not be pulled).
    rec.changed = true;
  }
  rec.backedOff = false;
  await syncContainers(ctx, rec);
  if (regularContainersDone({ pod: rec.pod, containers: [...rec.containers.values()], initialized: rec.initialized })) {
    // Sidecars run until every regular container has finished for good, then the pod ends.
    await finishPod(ctx, rec);
    return;
  }
  // What this sync did shows in the next status (upstream: the next sync, which its own
  // PLEG events trigger); a start error has no event, so ask directly. A new back-off
  // does not ask: upstream shows it only at the pod's next sync (see restartWithBackOff).
  if (rec.changed) rec.dirty = true;
  // `completeWork` enqueues one requeue per sync: the back-off's, or else the resync.
  completeWork(ctx, rec);
}

/** Generates the API status (`updatePodStatus` first, conditions last) and stores it. */
export async function syncStatus(ctx: KubeletContext, rec: PodRecord): Promise<PodStatus> {
  for (const c of rec.containers.values()) {
    if (c.current) c.current = ctx.runtime.containerStatus(c.current.id) ?? c.current;
  }
  const status = generatePodStatus({
    pod: rec.pod,
    podIP: rec.sandbox?.podIP,
    initialized: rec.initialized,
    records: rec.containers,
    // Upstream's generateAPIPodStatus: the status manager's, else the API's (after a restart).
    previous: ctx.statusManager.getPodStatus(rec.uid) ?? rec.pod.status,
    podIsTerminal: rec.lifecycle === 'terminated',
  });
  ctx.probeManager.updatePodStatus(rec.pod, status);
  // A terminated pod's sandbox is stopped (`killPod` in SyncTerminatingPod): not ready, as
  // `podHasSandboxReady` then finds it; its IP stays in the status.
  status.conditions = generatePodConditions(rec.pod, status, { sandboxReady: rec.sandbox !== undefined && rec.lifecycle !== 'terminated' });
  ctx.statusManager.setPodStatus(rec.pod, status);
  return status;
}

/**
 * A pod whose containers will not run again goes through termination like a deleted one
 * (§3.9: stop liveness/startup, stop what is left — sidecars —, remove the workers).
 */
async function finishPod(ctx: KubeletContext, rec: PodRecord): Promise<void> {
  rec.lifecycle = 'terminating';
  clearTimer(ctx, rec);
  ctx.probeManager.stopLivenessAndStartup(rec.pod);
  await killContainersWithSyncResult(ctx, rec, rec.pod.spec?.terminationGracePeriodSeconds ?? DEFAULT_TERMINATION_GRACE_PERIOD_SECONDS);
  ctx.probeManager.removePod(rec.pod);
  if (rec.sandbox) await ctx.runtime.removePodSandbox(rec.sandbox.id);
  rec.lifecycle = 'terminated';
  for (const c of rec.containers.values()) c.waiting = undefined;
  await syncStatus(ctx, rec);
}

/** The runtime manager's `SyncPod` proper: computePodActions' actions, each done before the next is decided. */
async function syncContainers(ctx: KubeletContext, rec: PodRecord): Promise<void> {
  const actions = podActions({
    pod: rec.pod,
    containers: [...rec.containers.values()],
    initialized: rec.initialized,
    liveness: ctx.livenessResults,
    startup: ctx.startupResults,
  });
  for (const action of actions) {
    if (action.type === 'initialized') {
      rec.initialized = true;
      continue;
    }
    if (action.type === 'sidecarSettled') {
      // The sync's step for a sidecar has always ended one microtask turn after its actions.
      // Kept so that what else happens at the same instant (a probe result, a runtime event)
      // keeps its order against the sync's next steps. (It was first kept because a request
      // made as a sync ended could be dropped, by which side of that moment it fell; the pod
      // worker drops none now: see requestSync.)
      await Promise.resolve();
      continue;
    }
    const c = rec.containers.get(action.container);
    if (!c) continue;
    switch (action.type) {
      case 'start':
        await startContainer(ctx, rec, c);
        break;
      case 'restart':
        await restartWithBackOff(ctx, rec, c, action.latestExited);
        break;
      case 'kill':
        await killContainer(ctx, rec, c, action.probe, action.message);
        break;
      case 'killPod':
        // killContainer's message when none is given, and the pod's grace, not the probe's.
        rec.changed = true;
        await killContainersWithSyncResult(ctx, rec, rec.pod.spec?.terminationGracePeriodSeconds ?? DEFAULT_TERMINATION_GRACE_PERIOD_SECONDS);
        break;
    }
  }
}

/**
 * Starts an exited container again unless the crash-loop back-off says wait (`doBackOff`).
 *
 * `latestExited` is the latest *exited* instance in the pod status the sync read: the
 * current instance when it exited on its own, but for a container this same sync has just
 * killed (liveness/startup), the instance before it — upstream's `SyncPod` kills and starts
 * in one pass over the status read before the kill. Without one (the first kill) the
 * container starts at once and the back-off gets no entry; otherwise the gate measures from
 * that older exit, so a probe-killed container restarts at once until the step outgrows
 * how long it runs (kubernetes#22240).
 */
async function restartWithBackOff(
  ctx: KubeletContext,
  rec: PodRecord,
  c: ContainerRecord,
  latestExited: ObservedInstance | undefined,
): Promise<void> {
  if (!c.current) return;
  if (!latestExited) {
    await startContainer(ctx, rec, c);
    return;
  }
  const decision = ctx.backOff.check(crashLoopBackOffKey(rec.pod, c.spec), latestExited.finishedAt ?? ctx.clock.now());
  if (decision.inBackOff) {
    const message = crashLoopBackOffMessage(decision.delayMs, c.spec.name, rec.pod);
    if (c.waiting?.reason !== CRASH_LOOP_BACK_OFF_REASON || c.waiting.message !== message) {
      noteProbeAction(ctx, rec, c, undefined, BACK_OFF_EVENT_REASON, message);
    }
    // Like upstream's `reasonCache` (kubelet.go SyncPod: updated after the runtime's SyncPod,
    // read by the *next* sync's generateAPIPodStatus): the waiting reason shows from the
    // next sync on, whatever triggers it (the requeue below, a probe result, a PLEG event).
    // No sync of its own: after a crash the status reads terminated (Error) until then.
    c.waiting = { reason: CRASH_LOOP_BACK_OFF_REASON, message };
    containerEvent(ctx, rec, c, 'Warning', BACK_OFF_EVENT_REASON, backOffEventMessage(c.spec.name, rec.pod));
    requeueAfterBackOff(ctx, rec, decision.remainingMs);
    return;
  }
  await startContainer(ctx, rec, c);
}
