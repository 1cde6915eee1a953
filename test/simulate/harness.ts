/**
 * The simulator under test: the real Kubelet on the simulated runtime and handlers, on the
 * FakeClock, with every pod status and event recorded at its virtual time.
 */
import type { Container, Event, Pod, PodSpec } from '../../src/api/types.js';
import type { ContainerBehaviour } from '../../src/simulate/behaviour.js';
import { admitForSimulation } from '../../src/simulate/pods.js';
import { parseScript } from '../../src/simulate/script.js';
import { startSimulation, type RunningSimulation } from '../../src/simulate/simulation.js';

export interface Recorded {
  sim: RunningSimulation;
  pod: Pod;
  statuses: { t: number; pod: Pod }[];
  events: { t: number; event: Event }[];
}

/** A pod named `probed` with one container `c` (and anything else in `spec`). */
export function podWith(container: Omit<Container, 'name' | 'image'>, spec: Partial<PodSpec> = {}): Pod {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'probed', namespace: 'default' },
    spec: { containers: [{ name: 'c', image: 'busybox', ...container }], ...spec },
  };
}

/** `{ c: 'up:10s,fail', 'c.readiness': 'down' }` → behaviours (objects pass through). */
export function behaviours(spec: Record<string, string | ContainerBehaviour>): Map<string, ContainerBehaviour> {
  const out = new Map<string, ContainerBehaviour>();
  for (const [key, value] of Object.entries(spec)) {
    const [name = '', probe] = key.split('.');
    const b = out.get(name) ?? { probes: {} };
    if (typeof value !== 'string') Object.assign(b, value, { probes: { ...b.probes, ...value.probes } });
    else if (probe === undefined) b.script = parseScript(value);
    else b.probes[probe as 'liveness' | 'readiness' | 'startup'] = parseScript(value);
    out.set(name, b);
  }
  return out;
}

export function start(pod: Pod, spec: Record<string, string | ContainerBehaviour> = {}, seed = 1): Recorded {
  const admitted = admitForSimulation([pod]);
  const [admittedPod] = admitted.pods;
  if (!admittedPod) throw new Error(`pod rejected: ${admitted.errors.map((e) => e.message).join('; ')}`);
  const recorded: Recorded = { sim: undefined as unknown as RunningSimulation, pod: admittedPod, statuses: [], events: [] };
  recorded.sim = startSimulation({
    pods: [admittedPod],
    behaviours: behaviours(spec),
    seed,
    onPod: (p, t) => recorded.statuses.push({ t, pod: p }),
    onEvent: (event, t) => recorded.events.push({ t, event }),
  });
  return recorded;
}

export function restarts(pod: Pod, name = 'c'): number {
  return [...(pod.status?.containerStatuses ?? []), ...(pod.status?.initContainerStatuses ?? [])].find((s) => s.name === name)?.restartCount ?? 0;
}

export function isReady(pod: Pod): boolean {
  return (pod.status?.conditions ?? []).some((c) => c.type === 'Ready' && c.status === 'True');
}

export function latest(r: Recorded): Pod {
  return r.statuses.at(-1)?.pod ?? r.pod;
}

/** Advances in `stepMs` steps up to `totalMs`, calling `check` after each (the e2e tests' polling). */
export async function poll(r: Recorded, totalMs: number, stepMs: number, check: (pod: Pod) => boolean | void): Promise<boolean> {
  for (let waited = 0; waited < totalMs; waited += stepMs) {
    await r.sim.advance(stepMs);
    if (check(latest(r)) === true) return true;
  }
  return false;
}
