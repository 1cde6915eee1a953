/**
 * `check --cluster`'s live evidence: for pods whose containers were restarted, explain's
 * diagnosis, kept when the cause is the probes' (a restart the manifest's probes caused), and
 * put beside the workload that owns the pod. Bounded: at most {@link MAX_PODS} pods have their
 * events read, the most restarted first.
 */
import type { Pod } from '../api/types.js';
import type { CauseId } from './causes.js';
import { explainPod, ownerOf } from './explain.js';
import { readEvents, type ReadClients } from './source.js';

/** The causes that are the probes' doing (the others are the app's, the node's or the image's). */
export const PROBE_CAUSES: ReadonlySet<CauseId> = new Set(['slow-start-liveness', 'startup-probe-too-short', 'probe-wrong-target', 'liveness-timeout', 'hang', 'liveness-unhealthy', 'readiness-flapping']);

/** Pods whose events are read at most, per run: a cluster in trouble must not cost a request per pod. */
export const MAX_PODS = 50;

export interface LiveEvidence {
  /** The workload the finding is about (the pod's owner, or the pod itself). */
  object: { kind: string; namespace: string; name: string };
  pod: string;
  container: string;
  cause: CauseId;
  summary: string;
}

function restarts(pod: Pod): number {
  return [...(pod.status?.containerStatuses ?? []), ...(pod.status?.initContainerStatuses ?? [])].reduce((n, c) => n + c.restartCount, 0);
}

/** Explains the most restarted pods (up to MAX_PODS) and keeps the probe causes; `skipped` says how many were left out. */
export async function liveEvidence(clients: ReadClients, pods: readonly Pod[], nowMs: number): Promise<{ evidence: LiveEvidence[]; skipped: number }> {
  const chosen = [...pods].sort((a, b) => restarts(b) - restarts(a)).slice(0, MAX_PODS);
  const evidence: LiveEvidence[] = [];
  for (const pod of chosen) {
    const events = await readEvents(clients, pod);
    const x = explainPod(pod, events, { nowMs });
    const owner = ownerOf(pod);
    const object = owner ? { kind: owner.kind, namespace: x.namespace, name: owner.name } : { kind: 'Pod', namespace: x.namespace, name: x.name };
    for (const d of x.diagnoses) {
      if (PROBE_CAUSES.has(d.cause)) evidence.push({ object, pod: x.name, container: d.container, cause: d.cause, summary: d.summary });
    }
  }
  return { evidence, skipped: pods.length - chosen.length };
}
