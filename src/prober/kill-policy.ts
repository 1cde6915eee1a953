/**
 * What follows a liveness or startup failure, as pure data and formulas: the grace period of
 * the kill (§10.6) and the crash-loop back-off before the restart (§10.7). The kubelet acts on
 * them; `check/` predicts with them — one source of truth for both, which is why they live
 * here, below both, rather than in `kubelet/`.
 */
import type { Container, Pod } from '../api/types.js';
import type { ProbeType } from './types.js';

/** `minimumGracePeriodInSeconds`: a probe-triggered kill always gets at least this long. */
export const MINIMUM_KILL_GRACE_SECONDS = 2;
/** Grace when the pod has no `terminationGracePeriodSeconds` at all (never after defaulting). */
const FALLBACK_KILL_GRACE_SECONDS = 2;

/**
 * §10.6: the pod's deletion grace if it is being deleted; else the failing probe's own
 * `terminationGracePeriodSeconds`, else the pod's; floored at 2 s like the kubelet.
 */
export function killGracePeriodSeconds(pod: Pod, container: Container, kind: ProbeType): number {
  const deletion = pod.metadata?.deletionGracePeriodSeconds;
  let grace: number;
  if (deletion !== undefined && deletion !== null) grace = deletion;
  else if (pod.spec?.terminationGracePeriodSeconds !== undefined) {
    const probe = kind === 'startup' ? container.startupProbe : container.livenessProbe;
    grace = probe?.terminationGracePeriodSeconds ?? pod.spec.terminationGracePeriodSeconds;
  } else grace = FALLBACK_KILL_GRACE_SECONDS;
  return Math.max(grace, MINIMUM_KILL_GRACE_SECONDS);
}

/** Every number of the crash-loop back-off, in milliseconds. */
export const CRASH_LOOP_BACK_OFF = {
  /** First delay (`kubecontainer.InitialContainerBackOff`). */
  initialMs: 10_000,
  /** Cap (`kubecontainer.MaxContainerBackOff`). */
  maxMs: 300_000,
  /** Gate `ReduceDefaultCrashLoopBackOffDecay` (alpha, off upstream): first delay. */
  reducedInitialMs: 1_000,
  /** Gate `ReduceDefaultCrashLoopBackOffDecay`: cap. */
  reducedMaxMs: 60_000,
  /** Node config `crashLoopBackOff.maxContainerRestartPeriod` bounds. */
  minConfigurableMaxMs: 1_000,
  maxConfigurableMaxMs: 300_000,
  /** A run (or an idle entry) longer than this resets the back-off. */
  resetAfterMs: 600_000,
} as const;
