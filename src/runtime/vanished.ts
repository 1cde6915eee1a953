/**
 * A container's status after the runtime was asked for it again, shared by the CRI and Docker
 * runtimes: either the runtime's fresh view, or — when the runtime no longer has the container
 * (removed behind probelet's back) — an exited status worded as the kubelet words it, so the
 * kubelet restarts or finishes the pod instead of waiting for a container that is gone.
 */
import type { RuntimeContainerStatus } from './types.js';

/** What the kubelet reports for a container that was running and is no longer in the runtime's list (kubelet_pods.go). */
export const VANISHED_REASON = 'ContainerStatusUnknown';
export const VANISHED_MESSAGE = 'The container could not be located when the pod was deleted.  The container used to be Running';

/**
 * The status after a refresh: `fresh` (the runtime's fields) over the old one, or, when the
 * runtime had it no more (`fresh` undefined), exited — a running one as the kubelet words it,
 * one that never ran as `Error` (upstream has no words for it). `exited` says it just stopped:
 * the runtime then emits its `exited` event.
 */
export function refreshedStatus(old: RuntimeContainerStatus, fresh: Partial<RuntimeContainerStatus> | undefined, now: number): { status: RuntimeContainerStatus; exited: boolean } {
  const wasRunning = old.state === 'running';
  let status: RuntimeContainerStatus;
  if (fresh) status = { ...old, ...fresh };
  else if (wasRunning) status = { ...old, state: 'exited', exitCode: 137, reason: VANISHED_REASON, message: VANISHED_MESSAGE, finishedAt: now };
  else if (old.state !== 'exited') status = { ...old, state: 'exited', exitCode: old.exitCode ?? 137, reason: 'Error', finishedAt: now };
  else status = old;
  return { status, exited: wasRunning && status.state === 'exited' };
}
