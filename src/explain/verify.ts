/**
 * `explain --verify`: proof of a fix by simulation. A behaviour is fitted to what was observed —
 * a start-up just past what the probes allowed (every run was killed before it answered), or a
 * probe answer time past `timeoutSeconds` — and `simulate` (the real kubelet and prober code on
 * virtual time) runs the pod's spec twice: as it is, which must show the restarts seen, and with
 * the fix, which must show none. Causes whose fix is no timing (a wrong port, a crash, an OOM)
 * have nothing to simulate and say so.
 */
import { probeTiming } from '../api/defaults.js';
import type { Container, Pod } from '../api/types.js';
import { admitForSimulation } from '../simulate/pods.js';
import type { Behaviours } from '../simulate/behaviour.js';
import { simulate } from '../simulate/simulation.js';
import type { Script } from '../simulate/script.js';
import { formatGoDuration } from '../util/duration.js';
import type { ContainerPatch, Diagnosis } from './diagnose.js';

export interface VerifyRun {
  restarts: number;
  /** Seconds from the start to Ready, null when never Ready in the window. */
  readyAtSeconds: number | null;
  state: string;
}

export interface Verification {
  container: string;
  /** What the fitted behaviour is, in simulate's script language (`down:31s,up`, `slow(3s)`). */
  behaviour: string;
  forSeconds: number;
  asIs: VerifyRun;
  fixed: VerifyRun;
  /** As it is reproduced restarts and the fix shows none. */
  agrees: boolean;
}

/** Virtual time each simulation covers: long enough for a crash loop's back-off to show. */
const VERIFY_FOR_MS = 5 * 60_000;

/** The fitted behaviour of a container, or why there is none. */
function fit(d: Diagnosis, c: Container): { script: Script; text: string; probe?: 'liveness' } | string {
  if (d.cause === 'slow-start-liveness' || d.cause === 'startup-probe-too-short') {
    // Every run was killed before it answered: a start-up just past what the probes allowed.
    const budget = d.numbers['budgetSeconds'] ?? 0;
    const period = probeTiming((d.cause === 'startup-probe-too-short' ? c.startupProbe : c.livenessProbe) ?? {}).period;
    const startup = budget + period;
    return { script: [{ state: { kind: 'down' }, durationMs: startup * 1000 }, { state: { kind: 'up' }, durationMs: Infinity }], text: `down:${formatGoDuration(startup * 1000)},up` };
  }
  if (d.cause === 'liveness-timeout') {
    const timeout = d.numbers['timeoutSeconds'] ?? probeTiming(c.livenessProbe ?? {}).timeout;
    const suggested = d.numbers['suggestedTimeoutSeconds'] ?? timeout * 5;
    // Answers later than the timeout it had, sooner than the one suggested.
    const delayMs = Math.round(((timeout + suggested) / 2) * 1000);
    return { script: [{ state: { kind: 'slow', delayMs }, durationMs: Infinity }], text: `liveness=slow(${formatGoDuration(delayMs)})`, probe: 'liveness' };
  }
  return d.fix?.patch === undefined ? 'no field to change: nothing to simulate' : `the fix changes what the probe looks at, not its timing: nothing to simulate (${d.cause})`;
}

/** `patch` merged into `container` as a strategic merge patch merges these fields: maps deep, lists replaced. */
export function mergeContainer(container: Container, patch: ContainerPatch): Container {
  const merge = (a: unknown, b: unknown): unknown => {
    if (b === null || typeof b !== 'object' || Array.isArray(b) || a === null || typeof a !== 'object' || Array.isArray(a)) return b;
    const out: Record<string, unknown> = { ...(a as Record<string, unknown>) };
    for (const [k, v] of Object.entries(b)) out[k] = merge(out[k], v);
    return out;
  };
  return merge(container, patch) as Container;
}

function withContainer(pod: Pod, container: Container): Pod {
  const swap = (list: Container[] | undefined): Container[] | undefined => list?.map((c) => (c.name === container.name ? container : c));
  const spec = pod.spec ?? { containers: [] };
  const initContainers = swap(spec.initContainers);
  return { ...pod, spec: { ...spec, containers: swap(spec.containers) ?? [], ...(initContainers ? { initContainers } : {}) } };
}

async function run(pod: Pod, name: string, behaviours: Behaviours): Promise<VerifyRun> {
  // Nothing of the cluster's pod goes in but its spec: no node, no status.
  const { nodeName: _node, ...spec } = pod.spec ?? { containers: [] };
  const admitted = admitForSimulation([{ apiVersion: 'v1', kind: 'Pod', metadata: { name: pod.metadata?.name ?? 'pod', namespace: pod.metadata?.namespace ?? 'default' }, spec: spec as Pod['spec'] }]);
  const [one] = admitted.pods;
  if (!one) throw new Error(`the pod cannot be simulated: ${admitted.errors.map((e) => e.errors.join('; ')).join('; ')}`);
  const result = await simulate({ pods: [one], behaviours, forMs: VERIFY_FOR_MS, seed: 1 });
  const c = result.pods[0]?.containers.find((x) => x.name === name);
  return { restarts: c?.restarts ?? 0, readyAtSeconds: c?.readyAtMs == null ? null : Math.round(c.readyAtMs / 1000), state: c ? `${c.state}${c.reason ? ` (${c.reason})` : ''}` : 'unknown' };
}

/** Simulates the container as it is and with its fix; undefined-free: a string says why it cannot. */
export async function verifyDiagnosis(pod: Pod, d: Diagnosis): Promise<Verification | string> {
  const container = [...(pod.spec?.initContainers ?? []), ...(pod.spec?.containers ?? [])].find((c) => c.name === d.container);
  if (!container) return `no container ${d.container} in the pod`;
  const fitted = fit(d, container);
  if (typeof fitted === 'string') return fitted;
  if (!d.fix?.patch) return 'no field to change: nothing to simulate';
  const behaviour = fitted.probe === undefined ? { script: fitted.script, probes: {} } : { probes: { [fitted.probe]: fitted.script } };
  const behaviours: Behaviours = new Map([[d.container, behaviour]]);
  const asIs = await run(pod, d.container, behaviours);
  const fixed = await run(withContainer(pod, mergeContainer(container, d.fix.patch)), d.container, behaviours);
  return { container: d.container, behaviour: fitted.text, forSeconds: VERIFY_FOR_MS / 1000, asIs, fixed, agrees: asIs.restarts > 0 && fixed.restarts === 0 };
}

/** `as it is: 7 restarts, never Ready …; with the fix: 0 restarts, Ready at +41s`. */
export function formatVerification(v: Verification): string {
  const one = (r: VerifyRun): string => `${r.restarts} restart${r.restarts === 1 ? '' : 's'}, ${r.readyAtSeconds === null ? 'never Ready' : `Ready at +${formatGoDuration(r.readyAtSeconds * 1000)}`}, ${r.state} at the end`;
  return `simulated ${formatGoDuration(v.forSeconds * 1000)} with ${v.container} ${v.behaviour}: as it is ${one(v.asIs)}; with the fix ${one(v.fixed)} — ${v.agrees ? 'the simulation agrees with the diagnosis' : 'the simulation does NOT agree: read the numbers above'}`;
}
