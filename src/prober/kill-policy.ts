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
 * §10.6, upstream's `setTerminationGracePeriod`: the pod's deletion grace if it is being
 * deleted; else, for a probe's kill (`kind`), the failing probe's own
 * `terminationGracePeriodSeconds`, else the pod's; 2 s for a pod without one. Not floored:
 * `killContainer` first takes a `preStop` hook's time off it, then floors what is left.
 */
export function terminationGracePeriodSeconds(pod: Pod, container: Container, kind: ProbeType | undefined): number {
  const deletion = pod.metadata?.deletionGracePeriodSeconds;
  if (deletion !== undefined && deletion !== null) return deletion;
  if (pod.spec?.terminationGracePeriodSeconds === undefined) return FALLBACK_KILL_GRACE_SECONDS;
  const probe = kind === 'startup' ? container.startupProbe : kind === 'liveness' ? container.livenessProbe : undefined;
  return probe?.terminationGracePeriodSeconds ?? pod.spec.terminationGracePeriodSeconds;
}

/** The grace a probe's kill gives a container without a `preStop` hook: the above, floored at 2 s like the kubelet. */
export function killGracePeriodSeconds(pod: Pod, container: Container, kind: ProbeType): number {
  return Math.max(terminationGracePeriodSeconds(pod, container, kind), MINIMUM_KILL_GRACE_SECONDS);
}

/**
 * The longest a kill keeps the container after its `Killing` event (`killContainer`): a
 * `preStop` hook is waited for at most the grace period G and the whole seconds it took are
 * taken off G; the stop then gets what is left, at least 2 s. A `sleep` hook lasts its
 * seconds, an `exec` or `httpGet` hook as long as G allows. So G (at least 2 s) without a hook,
 * and max(G, min(hook, G) + 2) with one: a hook that ends in the last 2 s of the grace, or is
 * cut by it, leaves the container 2 s more.
 */
export function killWaitSeconds(pod: Pod, container: Container, kind: ProbeType | undefined): number {
  const grace = terminationGracePeriodSeconds(pod, container, kind);
  const floored = Math.max(grace, MINIMUM_KILL_GRACE_SECONDS);
  const preStop = container.lifecycle?.preStop;
  if (!preStop || grace <= 0) return floored;
  const hook = preStop.sleep ? Math.min(preStop.sleep.seconds, grace) : grace;
  return Math.max(floored, hook + MINIMUM_KILL_GRACE_SECONDS);
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
