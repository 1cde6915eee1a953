/**
 * What earlier runs of a node left in the runtime, pod by pod, until the node's kubelet
 * adopts each pod (`adoptPod`) or removes what no pod claims (`removeUnadopted`), as a kubelet
 * finds its pods after a restart. Shared by the CRI and Docker runtimes: what a pod's remains
 * are (sandboxes or infra containers, containers, volumes) and how they are taken over or
 * removed is the runtime's; the bookkeeping and its rules are here:
 * - a pod is claimed once: asking twice gives its remains once;
 * - never two copies: remains that could not be taken over are forgotten by the runtime and
 *   removed before the pod starts anew, and the take-over's error is passed on;
 * - an adoption is one of the runtime's calls in flight, which `close()` waits for.
 */
import type { Pod } from '../api/types.js';
import type { InFlight } from './in-flight.js';
import type { AdoptedPod } from './types.js';

/** The runtime's part, over one pod's remains `L`. */
export interface LeftPodsRuntime<L> {
  /** Makes the pod's remains this run's; undefined when they cannot be used (no ready sandbox). */
  takeOver(pod: Pod, left: L): Promise<AdoptedPod | undefined>;
  /** Drops from the runtime's records what a failed take-over may have put there. */
  forget(left: L): void;
  /** Removes the remains; what cannot be removed is warned about, never thrown. */
  remove(left: L): Promise<void>;
  readonly calls: Pick<InFlight, 'track'>;
}

export interface LeftPods<L> {
  /** The remains of pod `uid`, made with `make` the first time (while listing what was left). */
  of(uid: string, make: () => L): L;
  /** The pods left, not yet adopted nor removed (UIDs). */
  uids(): string[];
  /** `ContainerRuntime.adoptPod`. */
  adopt(pod: Pod): Promise<AdoptedPod | undefined>;
  /** `ContainerRuntime.removeUnadopted`: removes every pod's remains but `keep`'s; how many pods. */
  removeUnadopted(keep: ReadonlySet<string>): Promise<number>;
}

export function leftPods<L>(runtime: LeftPodsRuntime<L>): LeftPods<L> {
  const byPod = new Map<string, L>();
  return {
    of(uid, make) {
      let left = byPod.get(uid);
      if (left === undefined) byPod.set(uid, (left = make()));
      return left;
    },
    uids: () => [...byPod.keys()],
    adopt(pod) {
      const uid = pod.metadata?.uid ?? '';
      const left = byPod.get(uid);
      if (left === undefined) return Promise.resolve(undefined);
      byPod.delete(uid);
      return runtime.calls.track(
        runtime.takeOver(pod, left).catch(async (err: unknown) => {
          // Never two copies: what could not be taken over goes before the pod starts anew.
          runtime.forget(left);
          await runtime.remove(left);
          throw err;
        }),
      );
    },
    async removeUnadopted(keep) {
      let removed = 0;
      for (const [uid, left] of [...byPod]) {
        if (keep.has(uid)) continue;
        byPod.delete(uid);
        await runtime.remove(left);
        removed++;
      }
      return removed;
    },
  };
}
