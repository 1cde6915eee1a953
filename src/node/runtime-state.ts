/**
 * The kubelet's `runtimeState` (pkg/kubelet/runtime.go) and its `updateRuntimeUp`
 * (kubelet.go): every 5 s the runtime's CRI `Status` is asked; a runtime that is ready marks a
 * successful sync. The node's Ready condition is False (`KubeletNotReady`) with these errors
 * as its message while there are any — worded as upstream words them, so `kubectl describe
 * node` reads the same.
 */
import type { RuntimeCondition } from '../runtime/types.js';

/** `updateRuntimeUp`'s period. */
export const RUNTIME_UP_PERIOD_MS = 5_000;
/** `maxWaitForContainerRuntime`: a runtime not synced for this long is down. */
export const MAX_WAIT_FOR_CONTAINER_RUNTIME_MS = 30_000;

/** `RuntimeCondition.String()` (kubecontainer), `<nil>` when the runtime did not report it. */
export function runtimeConditionText(c: RuntimeCondition | undefined): string {
  return c ? `${c.type}=${String(c.status)} reason:${c.reason} message:${c.message}` : '<nil>';
}

/** `utilerrors.NewAggregate(errs).Error()`: one error as it is, several de-duplicated in `[a, b]`. */
export function aggregateMessage(errors: readonly string[]): string {
  const seen = [...new Set(errors)];
  return seen.length === 1 ? (seen[0] ?? '') : `[${seen.join(', ')}]`;
}

export interface RuntimeState {
  /** `updateRuntimeUp` with the runtime's conditions (undefined: the runtime has none to report, a local one that is always up; a thrown call: the check failed). */
  update(nowMs: number, conditions: () => Promise<readonly RuntimeCondition[] | undefined>): Promise<void>;
  /** `runtimeErrors()` then `networkErrors()`, as the Ready condition gathers them. */
  errors(nowMs: number): string[];
}

export function createRuntimeState(): RuntimeState {
  let lastBaseRuntimeSync: number | undefined;
  let runtimeError: string | undefined;
  let networkError: string | undefined;
  return {
    async update(nowMs, conditions) {
      let reported: readonly RuntimeCondition[] | undefined;
      try {
        reported = await conditions();
      } catch {
        // "Container runtime sanity check failed": no sync; the runtime goes down after 30 s.
        return;
      }
      if (reported === undefined) {
        runtimeError = networkError = undefined;
        lastBaseRuntimeSync = nowMs;
        return;
      }
      const network = reported.find((c) => c.type === 'NetworkReady');
      networkError = network?.status === true ? undefined : `container runtime network not ready: ${runtimeConditionText(network)}`;
      const runtime = reported.find((c) => c.type === 'RuntimeReady');
      if (runtime?.status !== true) {
        runtimeError = `container runtime not ready: ${runtimeConditionText(runtime)}`;
        return;
      }
      runtimeError = undefined;
      lastBaseRuntimeSync = nowMs;
    },
    errors(nowMs) {
      const errs: string[] = [];
      if (lastBaseRuntimeSync === undefined) errs.push('container runtime status check may not have completed yet');
      else if (!(lastBaseRuntimeSync + MAX_WAIT_FOR_CONTAINER_RUNTIME_MS > nowMs)) errs.push('container runtime is down');
      if (runtimeError) errs.push(runtimeError);
      if (networkError) errs.push(networkError);
      return errs;
    },
  };
}
