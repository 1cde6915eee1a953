/**
 * The container actions (upstream kuberuntime_container.go): `startContainer` (image, create
 * and start, the `postStart` hook), `killContainer` with its `Killing` event, the stop itself
 * (`preStop` first, then the grace that is left), `killContainersWithSyncResult` for a pod's
 * termination, and the two hooks' executors.
 */
import type { LifecycleHandler } from '../api/types.js';
import { MINIMUM_KILL_GRACE_SECONDS, terminationGracePeriodSeconds } from '../prober/kill-policy.js';
import { containerShouldRestart } from '../prober/restart-rules.js';
import type { RuntimeContainerStatus } from '../runtime/types.js';
import { containerEvent, noteProbeAction, type KubeletContext, type PodRecord } from './context.js';
import type { ContainerRecord } from './pod-status.js';
import { BACK_OFF_PERIOD_MS, CONFIG_ERROR_RETRY_MS, requeueAfterBackOff, requestSyncAfter } from './pod-workers.js';
import { FAILED_TO_RETRIEVE_PULL_SECRET, failedPullSecretsMessage, pullSecretsForPod, type PullSecret } from './pull-secrets.js';
import { newTerminationOrdering, type TerminationOrdering } from './termination-order.js';

/**
 * `startContainer`: `EnsureImageExists` first (a missing image keeps the container waiting,
 * ErrImagePull / ImagePullBackOff, and the sync is requeued after the pod worker's back-off),
 * then the runtime's create and start, the `Created` and `Started` events, and the
 * `postStart` hook, which the sync waits for.
 */
export async function startContainer(ctx: KubeletContext, rec: PodRecord, c: ContainerRecord): Promise<void> {
  if (!rec.sandbox) return;
  const attempt = c.current ? c.restartCount + 1 : 0;
  const image = await ctx.images.ensureImageExists(
    rec.pod,
    c.spec,
    (type, reason, message) => containerEvent(ctx, rec, c, type, reason, message),
    () => podPullSecrets(ctx, rec),
  );
  if (!image.ok) {
    // Like upstream's reasonCache, the waiting reason shows from the next sync's status on;
    // the failed sync is requeued after the pod worker's back-off (jittered), whatever its
    // reason — the image's own back-off decides whether that sync pulls again.
    c.waiting = { reason: image.reason, message: image.message };
    containerEvent(ctx, rec, c, 'Warning', 'Failed', `Error: ${image.reason}`);
    requeueAfterBackOff(ctx, rec, BACK_OFF_PERIOD_MS);
    return;
  }
  let started: RuntimeContainerStatus;
  try {
    started = await ctx.runtime.startContainer(rec.sandbox.id, rec.pod, c.spec, attempt);
  } catch (err) {
    // A spec the runtime refuses: retried at a later sync, never in a tight loop.
    const message = err instanceof Error ? err.message : String(err);
    if (c.waiting?.reason !== 'CreateContainerConfigError' || c.waiting.message !== message) rec.changed = true;
    c.waiting = { reason: 'CreateContainerConfigError', message };
    containerEvent(ctx, rec, c, 'Warning', 'Failed', `Error: ${message}`);
    requestSyncAfter(ctx, rec, CONFIG_ERROR_RETRY_MS);
    return;
  }
  rec.changed = true;
  if (c.current) {
    c.previous = c.current;
    c.restartCount++;
    void ctx.runtime.removeContainer(c.previous.id).catch(() => undefined);
  }
  c.current = started;
  c.waiting = undefined;
  if (started.state === 'exited' && started.reason === 'StartError') {
    c.waiting = { reason: 'RunContainerError', message: started.message ?? 'failed to start container' };
    containerEvent(ctx, rec, c, 'Warning', 'Failed', `Error: ${started.message ?? 'failed to start container'}`);
    return;
  }
  // kubelet 1.35's words (kuberuntime_container.go startContainer): the container's name is in the
  // event's involvedObject.fieldPath, not in the message.
  containerEvent(ctx, rec, c, 'Normal', 'Created', 'Container created');
  containerEvent(ctx, rec, c, 'Normal', 'Started', 'Container started');
  if (c.restartCount > 0) noteProbeAction(ctx, rec, c, undefined, 'Started', `Restarted container ${c.spec.name} (restart ${c.restartCount})`);
  const postStart = c.spec.lifecycle?.postStart;
  if (postStart) await executePostStartHook(ctx, rec, c, started.id, postStart);
}

/**
 * `getPullSecretsForPod`: the pod's pull Secrets, with one pod Warning naming those that could
 * not be fetched (the pull goes on without them).
 */
async function podPullSecrets(ctx: KubeletContext, rec: PodRecord): Promise<PullSecret[]> {
  const { secrets, failed } = await pullSecretsForPod(rec.pod, ctx.getSecret);
  if (failed.length > 0) ctx.recorder.event({ pod: rec.pod }, 'Warning', FAILED_TO_RETRIEVE_PULL_SECRET, failedPullSecretsMessage(failed));
  return secrets;
}

/**
 * `killContainer` for a failed liveness or startup probe: the `Killing` event with
 * computePodActions' message, then the stop with the probe's grace
 * (`terminationGracePeriodSeconds`, the probe's own when it sets one).
 */
export async function killContainer(
  ctx: KubeletContext,
  rec: PodRecord,
  c: ContainerRecord,
  probe: 'liveness' | 'startup',
  message: string,
): Promise<void> {
  containerEvent(ctx, rec, c, 'Normal', 'Killing', message);
  noteProbeAction(ctx, rec, c, probe, 'Killing', message);
  rec.changed = true;
  await stopContainer(ctx, rec, c, terminationGracePeriodSeconds(rec.pod, c.spec, probe));
}

/**
 * `killContainersWithSyncResult`: every running container is killed at once, each with its
 * `Killing` event, its `preStop` hook and the whole grace; a sidecar's stop then waits for
 * its turn (after the regular containers and the sidecars declared after it,
 * termination-order.ts), which takes whole seconds off its grace.
 */
export async function killContainersWithSyncResult(ctx: KubeletContext, rec: PodRecord, graceSeconds: number): Promise<void> {
  const all = [...rec.containers.values()];
  const running = all.filter((c) => c.current?.state === 'running');
  const ordering = newTerminationOrdering(
    all.filter((c) => c.kind === 'regular').map((c) => c.spec.name),
    all.filter((c) => c.kind !== 'regular').map((c) => ({ name: c.spec.name, sidecar: c.kind === 'sidecar' })),
    new Set(running.map((c) => c.spec.name)),
    ctx.clock,
  );
  for (const c of running) containerEvent(ctx, rec, c, 'Normal', 'Killing', `Stopping container ${c.spec.name}`);
  await Promise.all(
    running.map(async (c) => {
      await stopContainer(ctx, rec, c, graceSeconds, ordering);
      ordering.containerTerminated(c.spec.name);
    }),
  );
}

/**
 * `killContainer` after its `Killing` event: the container's `preStop` hook first, when it
 * has one and `graceSeconds` > 0, which uses up whole seconds of the grace
 * (`executePreStopHook`); in a pod's termination, a sidecar then waits for its turn
 * (`ordering`), which takes whole seconds off too; then the stop with what is left, at
 * least 2 s (`minimumGracePeriodInSeconds`).
 */
export async function stopContainer(
  ctx: KubeletContext,
  rec: PodRecord,
  c: ContainerRecord,
  graceSeconds: number,
  ordering?: TerminationOrdering,
): Promise<void> {
  const cur = c.current;
  if (!cur || cur.state !== 'running') return;
  let grace = graceSeconds;
  const preStop = c.spec.lifecycle?.preStop;
  if (preStop && grace > 0) grace -= await executePreStopHook(ctx, rec, c, cur.id, preStop, grace);
  if (ordering && grace > 0) grace -= Math.trunc(await ordering.waitForTurn(c.spec.name, grace));
  grace = Math.max(grace, MINIMUM_KILL_GRACE_SECONDS);
  try {
    await ctx.runtime.stopContainer(cur.id, grace * 1000);
  } catch {
    // The runtime refused or went away (closed under a forced stop): its own status is what is known.
  }
  c.current = ctx.runtime.containerStatus(cur.id) ?? cur;
}

/**
 * `executePreStopHook`: runs the hook and waits for it at most `graceSeconds`; returns the
 * whole seconds it took. A failure records `FailedPreStopHook` ("PreStopHook failed": the
 * kubelet keeps the hook's own message out of events, where secrets could leak), also one
 * that comes after the wait was given up. A sleep or a request still under way then is
 * ended (upstream leaves its goroutine to finish; nothing shows either way); an exec is
 * left to end with its container, as on a node.
 */
export async function executePreStopHook(
  ctx: KubeletContext,
  rec: PodRecord,
  c: ContainerRecord,
  containerID: string,
  handler: LifecycleHandler,
  graceSeconds: number,
): Promise<number> {
  const started = ctx.clock.now();
  const own = new AbortController();
  const parent = rec.hooks.signal;
  const onParentAbort = (): void => own.abort();
  parent.addEventListener('abort', onParentAbort, { once: true });
  let done = false;
  const run = ctx.hookRunner
    .run({ pod: rec.pod, container: c.spec, containerID, podIP: rec.sandbox?.podIP ?? '', signal: own.signal }, handler)
    .catch((err: unknown) => (err instanceof Error ? err.message : String(err)))
    .then((error) => {
      done = true;
      parent.removeEventListener('abort', onParentAbort);
      if (error !== undefined && !own.signal.aborted) containerEvent(ctx, rec, c, 'Warning', 'FailedPreStopHook', 'PreStopHook failed');
    });
  let timer: unknown;
  const gaveUp = new Promise<void>((resolve) => {
    timer = ctx.clock.setTimeout(resolve, graceSeconds * 1000);
  });
  await Promise.race([run, gaveUp]);
  ctx.clock.clearTimeout(timer);
  if (!done && !handler.exec) own.abort();
  return Math.floor((ctx.clock.now() - started) / 1000);
}

/**
 * `startContainer`'s step 4: the sync waits for the hook (no timeout upstream; the pod's
 * deletion cancels it). A failure records `FailedPostStartHook` ("PostStartHook failed"),
 * kills the container with `Killing` "FailedPostStartHook" and the pod's grace (its
 * preStop included), and the container waits with reason `PostStartHookError` and the
 * hook's message (the `reasonCache` entry) until the next sync restarts it.
 */
export async function executePostStartHook(
  ctx: KubeletContext,
  rec: PodRecord,
  c: ContainerRecord,
  containerID: string,
  handler: LifecycleHandler,
): Promise<void> {
  const signal = rec.hooks.signal;
  const error = await ctx.hookRunner
    .run({ pod: rec.pod, container: c.spec, containerID, podIP: rec.sandbox?.podIP ?? '', signal }, handler)
    .catch((err: unknown) => (err instanceof Error ? err.message : String(err)));
  if (error === undefined || signal.aborted) return;
  containerEvent(ctx, rec, c, 'Warning', 'FailedPostStartHook', 'PostStartHook failed');
  containerEvent(ctx, rec, c, 'Normal', 'Killing', 'FailedPostStartHook');
  rec.changed = true;
  await stopContainer(ctx, rec, c, terminationGracePeriodSeconds(rec.pod, c.spec, undefined));
  // The reasonCache's waiting state shows only for a container that will be started again
  // (convertToAPIContainerStatuses asks ShouldContainerBeRestarted); else it reads terminated.
  const exitCode = c.current?.exitCode ?? 0;
  if (containerShouldRestart(c.spec, rec.pod, exitCode)) c.waiting = { reason: 'PostStartHookError', message: error };
}
