/**
 * Adoption after a restart of the node agent: what an earlier run left of a pod in the
 * runtime becomes the pod's, as the kubelet's first sync after a restart finds its pod in the
 * runtime (its pod cache is the runtime's, not its own memory).
 */
import type { AdoptedPod, RuntimeContainerStatus } from '../runtime/types.js';
import type { KubeletContext, PodRecord } from './context.js';

/**
 * The pod's sandbox and containers an earlier run left become this pod's. The newest
 * instance of each container is current, with the runtime's restart count (the
 * `io.kubernetes.container.restartCount` annotation); the one before it, if it exited, is
 * `lastState`. No event: nothing was created or started. A running container keeps running
 * and is probed (the prober's kubelet-restart rules apply); an exited one is restarted by
 * the usual rules, its back-off starting afresh as upstream's in-memory back-off does.
 */
export async function adoptFromRuntime(ctx: Pick<KubeletContext, 'runtime' | 'warn'>, rec: PodRecord): Promise<void> {
  let adopted: AdoptedPod | undefined;
  try {
    adopted = await ctx.runtime.adoptPod?.(rec.pod);
  } catch (err) {
    ctx.warn(`taking over what an earlier run left of pod ${rec.pod.metadata?.name ?? rec.uid} failed; it starts anew`, err);
    return;
  }
  if (!adopted) return;
  rec.sandbox = adopted.sandbox;
  const byName = new Map<string, RuntimeContainerStatus[]>();
  for (const status of adopted.containers) byName.set(status.name, [...(byName.get(status.name) ?? []), status]);
  for (const [name, instances] of byName) {
    const c = rec.containers.get(name);
    if (!c) continue;
    instances.sort((a, b) => b.attempt - a.attempt || b.createdAt - a.createdAt);
    const [newest, before] = instances;
    if (!newest) continue;
    c.current = newest;
    c.restartCount = newest.attempt;
    if (before?.state === 'exited') c.previous = before;
  }
  // A regular container ran: the init containers are done (computePodActions' view of a pod
  // whose init containers may since have been removed).
  if ([...rec.containers.values()].some((c) => c.kind === 'regular' && c.current !== undefined)) rec.initialized = true;
}
