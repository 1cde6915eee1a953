/**
 * `probelet explain` without the CLI or the API: a Pod (as `kubectl get pod -o json` gives it)
 * and its Events in, each container's timeline and one diagnosis out. Pure: the caller says
 * when the pod was read (`nowMs`); nothing here reads a clock, a file or the network.
 */
import { setPodDefaults } from '../api/defaults.js';
import { toSerializedTime } from '../api/time.js';
import type { Pod } from '../api/types.js';
import { diagnosePod, type Diagnosis } from './diagnose.js';
import { eventsIn, eventsOfPod } from './observed.js';
import { buildTimeline, type PodTimeline } from './timeline.js';

/** The workload a pod's template belongs to: where a fix must be applied (a Pod's probes cannot be changed). */
export interface Owner {
  kind: string;
  name: string;
  /** `certain` from an ownerReference, `likely` when derived (a ReplicaSet's Deployment from the pod-template-hash). */
  confidence: 'certain' | 'likely';
}

export interface PodExplanation {
  namespace: string;
  name: string;
  uid?: string;
  /** When the pod and its events were read, RFC 3339. */
  observedAt: string;
  owner?: Owner;
  timeline: PodTimeline;
  diagnoses: Diagnosis[];
}

export interface ExplainOptions {
  nowMs: number;
  /** Last log lines of each container's previous run, by container name (live only). */
  logs?: ReadonlyMap<string, readonly string[]>;
}

/** Explains one pod from its object and every event at hand (any mix: they are narrowed to the pod by name and UID). */
export function explainPod(pod: Pod, events: unknown, given: ExplainOptions): PodExplanation {
  // The API keeps whole seconds: so does "now", so that live and saved output read alike.
  const options = { ...given, nowMs: Math.floor(given.nowMs / 1000) * 1000 };
  const defaulted = setPodDefaults(pod);
  const own = eventsOfPod(eventsIn(events), defaulted);
  const timeline = buildTimeline(defaulted, own);
  const diagnoses = diagnosePod(defaulted, timeline, options.logs ? { nowMs: options.nowMs, logs: options.logs } : { nowMs: options.nowMs });
  const out: PodExplanation = {
    namespace: timeline.namespace,
    name: timeline.name,
    observedAt: toSerializedTime(options.nowMs),
    timeline,
    diagnoses,
  };
  if (timeline.uid) out.uid = timeline.uid;
  const owner = ownerOf(pod);
  if (owner) out.owner = owner;
  return out;
}

/**
 * The workload to patch: the controller reference, and for a ReplicaSet named
 * `<deployment>-<pod-template-hash>` its Deployment (the Deployment controller's naming).
 */
export function ownerOf(pod: Pod): Owner | undefined {
  const ref = pod.metadata?.ownerReferences?.find((r) => r.controller === true) ?? pod.metadata?.ownerReferences?.[0];
  if (!ref) return undefined;
  const hash = pod.metadata?.labels?.['pod-template-hash'];
  if (ref.kind === 'ReplicaSet' && hash && ref.name.endsWith(`-${hash}`)) {
    return { kind: 'Deployment', name: ref.name.slice(0, -hash.length - 1), confidence: 'likely' };
  }
  return { kind: ref.kind, name: ref.name, confidence: 'certain' };
}

/**
 * The latest time found in a pod and its events: "now" for saved output, when it was read is
 * not known. `deletionTimestamp` is left out: it lies in the future (the end of the grace period).
 */
export function latestTimeMs(...values: unknown[]): number | undefined {
  let latest: number | undefined;
  const visit = (v: unknown, depth: number): void => {
    if (depth > 12) return;
    if (typeof v === 'string') {
      if (v.length >= 20 && v.length <= 35 && /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/.test(v)) {
        const t = Date.parse(v);
        if (!Number.isNaN(t) && (latest === undefined || t > latest)) latest = t;
      }
      return;
    }
    if (Array.isArray(v)) for (const x of v) visit(x, depth + 1);
    else if (v !== null && typeof v === 'object') for (const [k, x] of Object.entries(v)) if (k !== 'deletionTimestamp') visit(x, depth + 1);
  };
  for (const v of values) visit(v, 0);
  return latest;
}
