/**
 * Why a container was killed, in numbers: which probe, what its script said then, what set
 * the pace of its failures (the period, or timeouts that outlast it) after its initial delay,
 * and — when the container would have become healthy later — the startup budget that would
 * have let it start; and why a pod was never Ready.
 */
import { probeTiming } from '../api/defaults.js';
import type { Container, Probe } from '../api/types.js';
import { FIRST_START_LATENCY } from '../prober/start-latency.js';
import { formatGoDuration } from '../util/duration.js';
import { containerScript, probeScript, type Behaviours } from './behaviour.js';
import type { Kill, PodOutcome } from './simulation.js';
import { firstHealthyMs, formatScript, phaseAt, type PhaseState, type Script } from './script.js';

/**
 * `+1m30s`, as every simulate text output stamps a time: `clockMs`, the time on the node's
 * clock since the pods' creation second, cut to the whole second as kubectl cuts the ages
 * it prints (a rounded stamp was a second ahead of the AGE beside it half the time). Cut
 * both ways from the one clock, a line's stamp minus an event's first stamp is the age the
 * event shows.
 */
export function stamp(clockMs: number): string {
  return `+${formatGoDuration(Math.trunc(clockMs / 1000) * 1000)}`;
}

/** {@link stamp} of a pod's virtual time `tMs` (ms since its node started), on its node's clock. */
export function podStamp(outcome: Pick<PodOutcome, 'clockPhaseMs'>, tMs: number): string {
  return stamp(outcome.clockPhaseMs + tMs);
}

function numbers(probe: Probe): { threshold: number; periodS: number; delayS: number; timeoutMs: number } {
  const t = probeTiming(probe);
  return { threshold: t.failureThreshold, periodS: t.period, delayS: t.initialDelay, timeoutMs: t.timeout * 1000 };
}

/**
 * "killed at +31s: liveness still `down` 31s after start, liveness failed 3 × period 10s
 * after initialDelay 0s; a startupProbe with failureThreshold × period ≥ 50s would let it start".
 */
export function explainKill(kill: Kill, container: Container, behaviours: Behaviours, outcome: Pick<PodOutcome, 'clockPhaseMs'>): string {
  const probe = kill.probe === 'startup' ? container.startupProbe : container.livenessProbe;
  const head = `killed at ${podStamp(outcome, kill.tMs)}`;
  if (!probe) return `${head}: ${kill.message}`;
  const n = numbers(probe);
  const script = probeScript(behaviours, container.name, kill.probe);
  const age = kill.tMs - kill.instanceStartMs;
  const phaseState = phaseAt(script, age).phase.state;
  const state = phaseState.kind;
  const rule = failurePace(kill.probe, n, timesOut(phaseState, n.timeoutMs));
  const why = `${kill.probe} still \`${state}\` ${formatGoDuration(Math.round(age / 1000) * 1000)} after the container started (script ${formatScript(script)})`;
  const healthy = firstHealthyMs(script, n.timeoutMs);
  let advice: string;
  if (healthy === undefined || healthy <= age) {
    advice = healthy === undefined ? 'the script never answers healthy again: no probe setting would save it' : 'it had been healthy: the script turned unhealthy';
  } else {
    const needS = neededStartupBudgetSeconds(healthy, n.periodS);
    advice =
      kill.probe === 'liveness' && !container.startupProbe
        ? `a startupProbe with failureThreshold × period ≥ ${needS}s would let it start`
        : `a ${kill.probe}Probe with failureThreshold × period ≥ ${needS}s (now ${n.threshold * n.periodS}s) would let it start`;
  }
  return `${head}: ${why}, ${rule}; ${advice}`;
}

/** Whether the script has answered `probe` healthy by `ageMs` into the instance's life (a startup probe passes once). */
function answersHealthy(script: Script, ageMs: number, probe: Probe): boolean {
  const first = firstHealthyMs(script, numbers(probe).timeoutMs);
  return first !== undefined && first <= ageMs;
}

/** Whether a probe answered from `state` runs into its timeout (a hang, or slower than the timeout). */
function timesOut(state: PhaseState, timeoutMs: number): boolean {
  return state.kind === 'hang' || (state.kind === 'slow' && state.delayMs >= timeoutMs);
}

/**
 * What set the pace of the failures that killed it: the period when probes fail at once or
 * within it, the timeout when each probe runs into a timeout longer than the period (the next
 * probe then follows at once: `3 × timeout 10s`, not `3 × period 5s`).
 */
function failurePace(probe: string, n: ReturnType<typeof numbers>, timedOut: boolean): string {
  const timeoutS = n.timeoutMs / 1000;
  const after = `after initialDelay ${n.delayS}s`;
  if (!timedOut) return `${probe} failed ${n.threshold} × period ${n.periodS}s ${after}`;
  if (timeoutS <= n.periodS) return `${probe} failed ${n.threshold} × period ${n.periodS}s, each probe timing out after ${timeoutS}s, ${after}`;
  return `${probe} failed ${n.threshold} × timeout ${timeoutS}s back to back (the ${timeoutS}s timeouts, not the period ${n.periodS}s, set the pace) ${after}`;
}

/**
 * Why a pod was never Ready within the simulated span, in one line: the first container,
 * in start order, that held it back, and the state it was left in — an init container that
 * did not complete, a container crash-looping, or one running whose readiness (or startup)
 * script still does not answer healthy.
 */
export function explainNeverReady(outcome: PodOutcome, behaviours: Behaviours, endMs: number): string {
  const spec = outcome.pod.spec;
  const byName = new Map(outcome.containers.map((c) => [c.name, c]));
  const order: { container: Container; role: 'init container' | 'sidecar' | 'container' }[] = [
    ...(spec?.initContainers ?? []).map((container) => ({ container, role: container.restartPolicy === 'Always' ? ('sidecar' as const) : ('init container' as const) })),
    ...(spec?.containers ?? []).map((container) => ({ container, role: 'container' as const })),
  ];
  for (const { container, role } of order) {
    const c = byName.get(container.name);
    if (!c) continue;
    const who = `${role} ${JSON.stringify(c.name)}`;
    const restarts = c.restarts > 0 ? ` after ${c.restarts} restart${c.restarts === 1 ? '' : 's'}` : '';
    if (role === 'init container') {
      if (c.state === 'terminated' && c.reason === 'Completed') continue;
      const script = formatScript(containerScript(behaviours, c.name, true));
      return c.state === 'running'
        ? `${who} has not completed: still running at ${podStamp(outcome, endMs)} (script ${script}; an init container must exit 0 for the pod to go on)`
        : `${who} has not completed: ${c.state}${c.reason ? ` (${c.reason})` : ''}${restarts} (script ${script})`;
    }
    if (c.state === 'running' && c.reason === 'Ready') continue;
    if (c.state !== 'running') return `${who} is ${c.state}${c.reason ? ` (${c.reason})` : ''}${restarts}`;
    // Running, not ready: the startup probe (while its script is not healthy) or readiness holds it back.
    const age = endMs - (c.starts.at(-1) ?? 0);
    const startupPending = container.startupProbe !== undefined && !answersHealthy(probeScript(behaviours, c.name, 'startup'), age, container.startupProbe);
    const kind = startupPending ? 'startup' : container.readinessProbe ? 'readiness' : undefined;
    if (!kind) return `${who} is running, not ready${restarts}`;
    const script = probeScript(behaviours, c.name, kind);
    return `${who} is running, not ready${restarts}: its ${kind} probe's script (${formatScript(script)}) still says \`${phaseAt(script, age).phase.state.kind}\` at ${podStamp(outcome, endMs)}`;
  }
  return `no container held it back at ${podStamp(outcome, endMs)}: the simulated span ended first`;
}

/**
 * The startup budget (failureThreshold × period) a probe with no initial delay needs so that
 * the container's first healthy answer at `healthyMs` comes in time. Its ticker starts δ
 * before the container (prober/start-latency.ts; a first start's δ, the largest): the tick at 0 finds no container yet, so
 * failures are counted at ages p − δ, 2p − δ, … and the kill follows failure
 * `failureThreshold` at threshold × p − δ; a probe at or after `healthyMs` must come by then
 * whatever δ: threshold × period ≥ ⌈(healthy + δmax) / period⌉ × period (the sweep tests
 * check this) — for a whole-second start-up, one period more when it is a multiple of it.
 */
export function neededStartupBudgetSeconds(healthyMs: number, periodS: number): number {
  return Math.max(periodS, Math.ceil((healthyMs + FIRST_START_LATENCY.maxMs) / 1000 / periodS) * periodS);
}
