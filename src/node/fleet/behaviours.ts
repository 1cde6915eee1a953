/**
 * What a simulated pod's containers play on a fleet: for each container, the first of the
 * fleet's behaviours whose match it meets (namespace, pod labels, container name, image —
 * every key given), then the pod's behaviour annotation on top, as the per-pod override:
 * `app=SCRIPT` replaces what the fleet gave `app`, `app.readiness=SCRIPT` only that probe.
 * Plain init containers are left out of the fleet's matches (they complete, as in
 * `simulate`): a catch-all `match: {}` must not hold every pod in Init. The annotation can
 * still script them.
 */
import type { Container, Pod } from '../../api/types.js';
import { parseBehaviourAnnotation } from '../../simulate/annotation.js';
import { isPlainInit, type Behaviours, type ContainerBehaviour } from '../../simulate/behaviour.js';
import type { FleetBehaviour, FleetMatch } from './fleet-file.js';
import { matchesGlob } from './glob.js';

/** Whether `container` of `pod` meets every key of `match`. */
export function matches(match: FleetMatch, pod: Pod, container: Container): boolean {
  if (match.namespace !== undefined && !matchesGlob(pod.metadata?.namespace ?? 'default', match.namespace)) return false;
  if (match.container !== undefined && !matchesGlob(container.name, match.container)) return false;
  if (match.image !== undefined && !matchesGlob(container.image ?? '', match.image)) return false;
  if (match.labels !== undefined) {
    const labels = pod.metadata?.labels ?? {};
    for (const [key, value] of Object.entries(match.labels)) if (labels[key] !== value) return false;
  }
  return true;
}

/** The fleet's behaviours of the pod's containers (those none matches play `up`). */
export function fleetBehaviours(rules: readonly FleetBehaviour[], pod: Pod): Map<string, ContainerBehaviour> {
  const out = new Map<string, ContainerBehaviour>();
  if (rules.length === 0) return out;
  for (const container of [...(pod.spec?.initContainers ?? []), ...(pod.spec?.containers ?? [])]) {
    if (isPlainInit(pod, container)) continue;
    const rule = rules.find((r) => matches(r.match, pod, container));
    if (rule) out.set(container.name, { script: rule.script, probes: { ...rule.probes } });
  }
  return out;
}

/**
 * The pod's behaviours: the fleet's, with the annotation `key` on top. A bad annotation is
 * `error` (one Warning event on the pod), and the fleet's behaviours alone apply.
 */
export function podBehaviours(rules: readonly FleetBehaviour[], key: string, pod: Pod): { behaviours?: Behaviours; error?: string } {
  const fleet = fleetBehaviours(rules, pod);
  const text = pod.metadata?.annotations?.[key];
  const fallback = rules.length > 0 ? "the fleet's behaviours" : '"up"';
  if (text === undefined) return fleet.size > 0 ? { behaviours: fleet } : {};
  const containers = [...(pod.spec?.initContainers ?? []), ...(pod.spec?.containers ?? [])].map((c) => c.name);
  let own: Behaviours;
  try {
    own = parseBehaviourAnnotation(text, containers);
  } catch (err) {
    return { ...(fleet.size > 0 ? { behaviours: fleet } : {}), error: `annotation ${key}: ${err instanceof Error ? err.message : String(err)}; its containers play ${fallback}` };
  }
  for (const [name, b] of own) {
    const base = fleet.get(name);
    fleet.set(name, b.script !== undefined || !base ? b : { ...base, probes: { ...base.probes, ...b.probes } });
  }
  return { behaviours: fleet };
}
