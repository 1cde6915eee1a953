/**
 * Why a container was killed, in numbers: which probe, what its script said then, the
 * probe's threshold × period after its initial delay, and — when the container would have
 * become healthy later — the startup budget that would have let it start.
 */
import { probeTiming } from '../api/defaults.js';
import type { Container, Probe } from '../api/types.js';
import { START_LATENCY } from '../prober/start-latency.js';
import { formatGoDuration } from '../util/duration.js';
import { probeScript, type Behaviours } from './behaviour.js';
import type { Kill } from './simulation.js';
import { firstHealthyMs, formatScript, phaseAt } from './script.js';

/** `+1m30s`: virtual time since the start, as every simulate output stamps it. */
export function stamp(ms: number): string {
  return `+${formatGoDuration(Math.round(ms / 1000) * 1000)}`;
}

function numbers(probe: Probe): { threshold: number; periodS: number; delayS: number; timeoutMs: number } {
  const t = probeTiming(probe);
  return { threshold: t.failureThreshold, periodS: t.period, delayS: t.initialDelay, timeoutMs: t.timeout * 1000 };
}

/**
 * "killed at +31s: liveness still `down` 31s after start, liveness failed 3 × period 10s
 * after initialDelay 0s; a startupProbe with failureThreshold × period ≥ 50s would let it start".
 */
export function explainKill(kill: Kill, container: Container, behaviours: Behaviours): string {
  const probe = kill.probe === 'startup' ? container.startupProbe : container.livenessProbe;
  const head = `killed at ${stamp(kill.tMs)}`;
  if (!probe) return `${head}: ${kill.message}`;
  const n = numbers(probe);
  const script = probeScript(behaviours, container.name, kill.probe);
  const age = kill.tMs - kill.instanceStartMs;
  const state = phaseAt(script, age).phase.state.kind;
  const rule = `${kill.probe} failed ${n.threshold} × period ${n.periodS}s after initialDelay ${n.delayS}s`;
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

/**
 * The startup budget (failureThreshold × period) a probe with no initial delay needs so that
 * the container's first healthy answer at `healthyMs` comes in time. Its ticker starts δ
 * before the container (prober/start-latency.ts): the tick at 0 finds no container yet, so
 * failures are counted at ages p − δ, 2p − δ, … and the kill follows failure
 * `failureThreshold` at threshold × p − δ; a probe at or after `healthyMs` must come by then
 * whatever δ: threshold × period ≥ ⌈(healthy + δmax) / period⌉ × period (the sweep tests
 * check this) — for a whole-second start-up, one period more when it is a multiple of it.
 */
export function neededStartupBudgetSeconds(healthyMs: number, periodS: number): number {
  return Math.max(periodS, Math.ceil((healthyMs + START_LATENCY.maxMs) / 1000 / periodS) * periodS);
}
