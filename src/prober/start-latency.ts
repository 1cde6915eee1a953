/**
 * When a probe worker first sees a container, as pure data and formulas: the simulator plays
 * it (simulate/runtime.ts) and `check` bounds its budgets with it (check/budgets.ts) — one
 * source of truth for both, which is why it lives here, below both. docs/timing-model.md
 * tells the whole model and why.
 *
 * On a kubelet a worker's ticker always starts *before* its container: `SyncPod` calls
 * `probeManager.AddPod` (the worker probes at once and starts its ticker) and only then the
 * runtime creates and starts the container; a restart after a probe kill comes from the sync
 * that the failing probe's tick caused. Call that gap δ (worker tick → container `startedAt`).
 * The worker reads the container from the status the kubelet generated at its last sync, and
 * the kubelet learns that a container started from the PLEG, which relists the runtime every
 * second: the new instance is visible λ ∈ [0, 1 s) after it started. `doProbe` then compares the
 * container's age truncated to whole seconds with `initialDelaySeconds`
 * (`int32(time.Since(startedAt).Seconds())`, kubernetes#130393), so a tick `D` after the worker
 * start sees an age of `D − δ`, which truncates below `D`: the first probe after an
 * `initialDelaySeconds` that is a multiple of `periodSeconds` lands a period after the delay.
 */

/** `genericPlegRelistPeriod` (pkg/kubelet/kubelet.go): how often the PLEG relists the runtime. */
export const PLEG_RELIST_PERIOD_MS = 1_000;

/**
 * δ, the latency from the worker's tick (or start) to the container's `startedAt`, as the
 * simulator draws it (uniformly, per container start, from the seed). The range is a model, to
 * be replaced by what the oracle measures on the real kubelet: above 0 because the start is
 * the work of the sync that follows the tick (CRI round trips: create, start, and for a
 * restart the stop before them), below half a second for a local image and a ready sandbox
 * (containerd's create + start take a few hundred ms), and so below one relist period.
 * Any δ in (0, 1 s) gives the same whole-second ticks; the range only moves sub-second times.
 */
export const START_LATENCY = { minMs: 100, maxMs: 400 } as const;

/**
 * The age (ms) of a container at its first probe after `initialDelaySeconds`, when the
 * worker's ticks fall at whole periods from a point `deltaMs` before the container's start
 * and the container becomes visible `visibleAfterMs` after its start: the first tick
 * `k × P` with `k × P − δ ≥ D` (the age truncated to seconds must reach `D`: for a whole `D`,
 * the same as the untruncated age reaching it) and `k × P ≥ δ + λ` (seen by then).
 */
export function firstProbeAgeMs(initialDelaySeconds: number, periodSeconds: number, deltaMs: number, visibleAfterMs: number): number {
  const periodMs = periodSeconds * 1000;
  const k = Math.max(
    1,
    Math.ceil((initialDelaySeconds * 1000 + deltaMs) / periodMs),
    Math.ceil((deltaMs + visibleAfterMs) / periodMs),
  );
  return k * periodMs - deltaMs;
}

/**
 * The bounds of {@link firstProbeAgeMs} over δ in {@link START_LATENCY} and λ in
 * [0, {@link PLEG_RELIST_PERIOD_MS}): for whole-second delays and periods the age only changes
 * piecewise and monotonically in δ and λ, so the corners bound it (λ just under the period
 * stands for the open end).
 */
export function firstProbeAgeBoundsMs(initialDelaySeconds: number, periodSeconds: number): { minMs: number; maxMs: number } {
  const ages = [START_LATENCY.minMs, START_LATENCY.maxMs].flatMap((delta) =>
    [0, PLEG_RELIST_PERIOD_MS - 1].map((lag) => firstProbeAgeMs(initialDelaySeconds, periodSeconds, delta, lag)),
  );
  return { minMs: Math.min(...ages), maxMs: Math.max(...ages) };
}
