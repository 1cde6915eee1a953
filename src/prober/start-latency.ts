/**
 * When a probe worker first sees a container, as pure data and formulas: the worker computes
 * a container's age with {@link containerAgeSeconds}, the simulator plays the latencies
 * (simulate/runtime.ts, simulate/simulation.ts) and `check` bounds its budgets with
 * {@link firstProbeAgeBoundsMs} (check/budgets.ts) — one source of truth for all three, which
 * is why it lives here, below them. docs/timing-model.md tells the whole model and why.
 *
 * On a kubelet a worker's ticker always starts *before* its container: `SyncPod` calls
 * `probeManager.AddPod` (the worker probes at once and starts its ticker) and only then the
 * runtime creates the sandbox and starts the container; a restart after a probe kill comes from
 * the sync that the failing probe's tick caused. Call that gap δ (worker tick → container
 * `startedAt`). The worker reads the container from the status the kubelet generated at its
 * last sync, and the kubelet learns that a container started from the PLEG, which relists the
 * runtime every second: the new instance is visible λ ∈ [0, 1 s) after it started. `doProbe`
 * then compares the container's age truncated to whole seconds with `initialDelaySeconds`
 * (`int32(time.Since(startedAt).Seconds())`, kubernetes#130393) — and that `startedAt` is the
 * status manager's, cut to the whole second (`normalizeStatus` → `Rfc3339Copy`). With the start
 * a fraction `e` into its second, a tick `k × P` after the worker's start sees an age of
 * `k × P − δ + e`: the first probe after an `initialDelaySeconds` that is a multiple of
 * `periodSeconds` lands a period after the delay when `e < δ` (a second boundary fell between
 * the tick and the start), else at the delay.
 */

/** `genericPlegRelistPeriod` (pkg/kubelet/kubelet.go): how often the PLEG relists the runtime. */
export const PLEG_RELIST_PERIOD_MS = 1_000;

/** A latency range in ms, drawn uniformly by the simulator and bounded over by `check`. */
export interface LatencyRange {
  readonly minMs: number;
  readonly maxMs: number;
}

/**
 * δ of a container start in a sandbox that exists (a restart): from the worker's tick to the
 * container's `startedAt` — the sync's CRI round trips (stop the killed instance, create,
 * start). Above 0 because the start is the work of the sync that follows the tick, a few
 * hundred ms for a local image (containerd's create + start), below one relist period.
 */
export const START_LATENCY: LatencyRange = { minMs: 100, maxMs: 400 };

/**
 * What a pod's first start adds to {@link START_LATENCY}: `RunPodSandbox` (the pause
 * container, the network namespace, the CNI bridge plugin) and the image check, between
 * `AddPod` and the first container's start. Measured on the real kubelet v1.35.4 of this
 * machine (the oracle's goldens, test/oracle/golden/): the phase of the readiness and liveness
 * ticks against the whole-second `startedAt` puts the first start 0.7–2 s after the worker's
 * first tick (`http-named-port`, `https-readiness`, `http-404`, `grpc-readiness`, and
 * `initial-delay-multiple`, whose first probe came a period after the delay), more under
 * the full oracle's load. So a first start is always more than a second after its worker's
 * start (1.05–1.9 s with {@link START_LATENCY}): `e < δ`, the first probe after a delay that is a
 * multiple of the period a period later. The range stays inside (1 s, 2 s) on purpose: every
 * draw then gives the same whole-second outcomes (a start-up of n s survives or not), so seeds
 * move sub-second times only.
 */
export const SANDBOX_LATENCY: LatencyRange = { minMs: 950, maxMs: 1_500 };

/** δ of a pod's first start: the sandbox's latency and the container's. */
export const FIRST_START_LATENCY: LatencyRange = {
  minMs: SANDBOX_LATENCY.minMs + START_LATENCY.minMs,
  maxMs: SANDBOX_LATENCY.maxMs + START_LATENCY.maxMs,
};

/**
 * The container's age in whole seconds as `doProbe` compares it with `initialDelaySeconds`:
 * from `startedAt` cut to the whole second (the status manager's `normalizeStatus`,
 * pkg/kubelet/status/status_manager.go, stores it through `Rfc3339Copy`), truncated
 * (`int32(time.Since(startedAt).Seconds())`, pkg/kubelet/prober/worker.go).
 */
export function containerAgeSeconds(nowMs: number, startedAtMs: number): number {
  return Math.trunc((nowMs - Math.floor(startedAtMs / 1000) * 1000) / 1000);
}

/**
 * The exact age (ms) of a container at its first probe after `initialDelaySeconds`, when the
 * worker's ticks fall at whole periods from a point `deltaMs` before the container's start,
 * the start falls `fractionMs` into its wall-clock second, and the container becomes visible
 * `visibleAfterMs` after its start: the first tick `k × P` with `k × P − δ + e ≥ D` (the
 * age from the whole-second `startedAt`, truncated, must reach a whole `D`) and
 * `k × P ≥ δ + λ` (seen by then).
 */
export function firstProbeAgeMs(initialDelaySeconds: number, periodSeconds: number, deltaMs: number, visibleAfterMs: number, fractionMs = 0): number {
  const periodMs = periodSeconds * 1000;
  const k = Math.max(
    1,
    Math.ceil((initialDelaySeconds * 1000 + deltaMs - fractionMs) / periodMs),
    Math.ceil((deltaMs + visibleAfterMs) / periodMs),
  );
  return k * periodMs - deltaMs;
}

/**
 * The youngest a container can be at its first probe after `initialDelaySeconds` D, whatever
 * the phase of the ticks: `doProbe` ages it from `startedAt` cut to the whole second, so a
 * start late in its second is already D "old" a second before it is (just over D − 1 s; 0
 * without a delay).
 */
export function earliestFirstProbeAgeSeconds(initialDelaySeconds: number): number {
  return Math.max(0, initialDelaySeconds - 1);
}

/** Bounds over the latencies: of the first probe's age, and of its tick (δ + age: from the worker's tick before the start). */
export interface FirstProbeBounds {
  minMs: number;
  maxMs: number;
  tickMinMs: number;
  tickMaxMs: number;
}

/** The open end of the start's fraction of a second and of the relist's lag, in whole ms. */
const UNDER_A_SECOND_MS = PLEG_RELIST_PERIOD_MS - 1;

/**
 * The bounds already computed, by delay, period and latency: every rule of `check` asks for
 * the same container's (seven times a container), over thousands of containers with a handful
 * of distinct timings — the steps over δ were a fifth of the rules' time.
 */
const boundsMemo = new Map<string, Readonly<FirstProbeBounds>>();
const BOUNDS_MEMO_SIZE = 1024;

/**
 * The bounds of {@link firstProbeAgeMs} over δ in `latency` (default: a first start,
 * {@link FIRST_START_LATENCY}), the start's fraction of a second `e` and the relist's lag λ,
 * both in [0, 1 s) — and of the tick it falls on (`δ + age`, a whole number of periods). For
 * one δ the tick's index is smallest with `e` just under a second and λ = 0, largest with
 * `e` = 0 and λ just under a second; every ms of δ is tried (a few thousand steps at most).
 */
export function firstProbeAgeBoundsMs(initialDelaySeconds: number, periodSeconds: number, latency: LatencyRange = FIRST_START_LATENCY): Readonly<FirstProbeBounds> {
  const key = `${initialDelaySeconds}/${periodSeconds}/${latency.minMs}/${latency.maxMs}`;
  const known = boundsMemo.get(key);
  if (known !== undefined) return known;
  // Few distinct probe timings in any input: a bound past it only means computing again.
  if (boundsMemo.size >= BOUNDS_MEMO_SIZE) boundsMemo.clear();
  const bounds = Object.freeze(computeFirstProbeAgeBounds(initialDelaySeconds, periodSeconds, latency));
  boundsMemo.set(key, bounds);
  return bounds;
}

function computeFirstProbeAgeBounds(initialDelaySeconds: number, periodSeconds: number, latency: LatencyRange): FirstProbeBounds {
  const periodMs = periodSeconds * 1000;
  const delayMs = initialDelaySeconds * 1000;
  const bounds: FirstProbeBounds = { minMs: Infinity, maxMs: -Infinity, tickMinMs: Infinity, tickMaxMs: -Infinity };
  for (let delta = latency.minMs; delta <= latency.maxMs; delta++) {
    const low = Math.max(1, Math.ceil((delayMs + delta - UNDER_A_SECOND_MS) / periodMs), Math.ceil(delta / periodMs)) * periodMs;
    const high = Math.max(1, Math.ceil((delayMs + delta) / periodMs), Math.ceil((delta + UNDER_A_SECOND_MS) / periodMs)) * periodMs;
    bounds.minMs = Math.min(bounds.minMs, low - delta);
    bounds.maxMs = Math.max(bounds.maxMs, high - delta);
    bounds.tickMinMs = Math.min(bounds.tickMinMs, low);
    bounds.tickMaxMs = Math.max(bounds.tickMaxMs, high);
  }
  return bounds;
}
