/**
 * The timing budgets of a container: how long it may take to start, when it can be Ready,
 * and how long a hang goes unnoticed — computed from the worker's semantics (§4.3, §4.6), the
 * kill grace (§10.6) and the crash-loop back-off (§10.7). This is the one place the timing
 * formulas live; `test/check/budgets-engine.test.ts` checks them against the real
 * `ProbeManager` on the `FakeClock`, so they cannot drift from the engine.
 *
 * The model, read off `prober/worker.ts` and `prober/ticker.ts`:
 * - A worker probes at once and then on a fixed-rate (start-to-start) ticker whose phase is
 *   arbitrary relative to the container's start (workers exist before their container), so
 *   the first probe that passes `initialDelaySeconds` lands between D and D + P after the start.
 * - A probe that ends within its period does not delay the next tick; one that takes
 *   `timeoutSeconds ≥ periodSeconds` is followed at once by the next (the one buffered
 *   tick), so failing probes that time out run every `max(P, T)`.
 * - The verdict is counted when the probe *ends*; the `failureThreshold`-th failure in a
 *   row writes Failure (a liveness/startup Failure is a kill). A probe that *errors* (it
 *   could not even be attempted) never counts: budgets assume real failures.
 * - Liveness and readiness wait until the container is `started` (at once without a
 *   startup probe, at the startup probe's success with one).
 *
 * Every window below runs from `earliest` (the first probe that sees the container, or the
 * hang, lands at once: exactly at `initialDelaySeconds`, or at the hang) to `latest` (it lands a
 * full period later: the container started, or the app hung, just after a tick).
 *
 * With `initialDelaySeconds` D, the earliest is a second sooner (`earliestFirstProbeAgeSeconds`):
 * the worker ages the container from `startedAt` cut to the whole second.
 *
 * The start-up of a container is not at an arbitrary phase, though: its worker's ticker starts
 * δ before it (the same sync starts both, and a first start waits for the pod's sandbox; a
 * restart at once after a probe kill comes from the tick that killed), and the kubelet sees it a
 * relist later (prober/start-latency.ts, docs/timing-model.md). Over a first start's δ
 * (`FIRST_START_LATENCY`), its fraction of a second and the relist, the first start is killed in
 * `StartupGuard.firstStartKill`, inside the arbitrary-phase bounds.
 */
import type { ManifestObject } from '../api/documents.js';
import { probeTiming, type ProbeTiming } from '../api/defaults.js';
import type { Container, Pod, Probe } from '../api/types.js';
import { CRASH_LOOP_BACK_OFF, killWaitSeconds } from '../prober/kill-policy.js';
import { earliestFirstProbeAgeSeconds, firstProbeAgeBoundsMs } from '../prober/start-latency.js';
import type { ProbeType } from '../prober/types.js';
import { formatGoDuration } from '../util/duration.js';
import type { ContainerBudget, ContainerRole } from './types.js';

/** How a failing probe fails: at once (nothing listens yet, exec exits ≠ 0) or at its timeout (a hung app). */
export type FailureMode = 'refused' | 'timeout';

/** A span of time in seconds over every phase of the ticker, both ends included. */
export interface TimeWindow {
  earliestSeconds: number;
  latestSeconds: number;
}


export const PROBE_FIELD = {
  liveness: 'livenessProbe',
  readiness: 'readinessProbe',
  startup: 'startupProbe',
} as const satisfies Record<ProbeType, keyof Container>;

const PROBE_ORDER: readonly ProbeType[] = ['liveness', 'readiness', 'startup'];

/** A start-up that reaches one hour unnoticed is what the `startup-hang-unnoticed` rule reports. */
export const ONE_HOUR_SECONDS = 3600;


/** The spacing of consecutive failing probes: the period, or the timeout when a probe overruns it. */
export function failureInterval(t: ProbeTiming, mode: FailureMode): number {
  return mode === 'timeout' ? Math.max(t.period, t.timeout) : t.period;
}

/**
 * When the worker writes Failure, in seconds after the moment from which every probe fails:
 * `earliest = (F − 1) × interval + duration` and `latest = earliest + P` for a hang later on,
 * where `interval` is `failureInterval` and `duration` is 0 (refused) or the timeout. Counted
 * from the container's start (`fromStart`), `initialDelaySeconds` D comes first: the latest
 * adds D, the earliest a second less (`earliestFirstProbeAgeSeconds`: the worker ages the
 * container from `startedAt` cut to the whole second, so its first probe can come up to a
 * second before D).
 */
export function failureWindow(probe: Probe, mode: FailureMode, fromStart: boolean): TimeWindow {
  const t = probeTiming(probe);
  const rest = (t.failureThreshold - 1) * failureInterval(t, mode) + (mode === 'timeout' ? t.timeout : 0);
  if (!fromStart) return { earliestSeconds: rest, latestSeconds: rest + t.period };
  return { earliestSeconds: earliestFirstProbeAgeSeconds(t.initialDelay) + rest, latestSeconds: t.initialDelay + rest + t.period };
}

/** Which probe kills a container that does not start: the startup probe, else liveness. */
export interface StartupGuard {
  kind: 'startup' | 'liveness';
  probe: Probe;
  /**
   * Start-ups up to this long always survive (the last probe lands at or after it whatever
   * the phase): `initialDelaySeconds + (failureThreshold − 1) × periodSeconds`.
   */
  alwaysSurvivesSeconds: number;
  /**
   * `initialDelaySeconds + failureThreshold × periodSeconds` (= `startupBudgetSeconds`), or the
   * end of `firstStartKill` when that is later (a 1 s period with no initial delay: the relist
   * can hide the new container from the first tick): the latest the kill can come, so a
   * start-up this long or longer is killed whatever the phase; between `alwaysSurvivesSeconds`
   * and this, whether a start is killed depends on the phase. One exception, left out on
   * purpose (it would add a second to every probe without initial delay): a restart after a
   * back-off or a crash starts at any phase and is seen a relist later, so with no initial
   * delay its first probe can come up to a second past a period and its kill up to a second
   * past this (docs/timing-model.md).
   */
  budgetSeconds: number;
  /**
   * When the kill comes, in seconds from the container's start, on a start tied to the
   * worker's ticker — the first start: the first probe at `firstProbeAgeMs` over δ in
   * `FIRST_START_LATENCY`, the start's fraction of a second and the relist, then
   * `failureThreshold − 1` periods, rounded outwards to a tenth of a second. `(⌊D/P⌋ + F) × P − δ`
   * when the relist does not matter: an `initialDelaySeconds` that is a multiple of the period
   * costs a period more (kubernetes#130393; a first start's δ is over a second, so a second
   * boundary always falls between the tick and the start), and a start-up shorter than
   * `earliestSeconds` survives.
   */
  firstStartKill: TimeWindow;
}

/**
 * The probe that decides whether a slow start is killed, and its window, assuming the app
 * answers nothing until it is up and its probes fail at once (connection refused, exec
 * exit ≠ 0): timeouts then do not count, since a probe shorter than its period does not
 * delay the next tick. `undefined` when nothing can kill a slow start.
 */
export function startupGuard(container: Container): StartupGuard | undefined {
  const kind = container.startupProbe ? 'startup' : container.livenessProbe ? 'liveness' : undefined;
  const probe = kind === undefined ? undefined : container[PROBE_FIELD[kind]];
  if (kind === undefined || !probe) return undefined;
  const window = failureWindow(probe, 'refused', true);
  const t = probeTiming(probe);
  const firstProbe = firstProbeAgeBoundsMs(t.initialDelay, t.period);
  const more = (t.failureThreshold - 1) * t.period;
  // Rounded outwards to a tenth of a second: still bounds, and read as `61s`, not `60.998s`.
  const firstStartKill = { earliestSeconds: Math.floor(firstProbe.minMs / 100) / 10 + more, latestSeconds: Math.ceil(firstProbe.maxMs / 100) / 10 + more };
  return {
    kind,
    probe,
    alwaysSurvivesSeconds: Math.min(window.earliestSeconds, firstStartKill.earliestSeconds),
    budgetSeconds: Math.max(window.latestSeconds, firstStartKill.latestSeconds),
    firstStartKill,
  };
}

/**
 * How a bound of `failureWindow` is made, for messages, so that the terms add up to the number
 * printed beside them: the latest bound `liveness 3 × 10s`, `liveness 3 × 10s + timeout 1s`,
 * `liveness period 10s + 3 × timeout 30s` (timeout ≥ period); the earliest `liveness 2 × 10s
 * + timeout 1s`, `liveness 3 × timeout 30s`; `startup initialDelaySeconds 5 + …` from the start.
 */
export function describeFailureBudget(
  kind: ProbeType,
  probe: Probe,
  fromStart: boolean,
  mode: FailureMode = 'refused',
  bound: 'earliest' | 'latest' = 'latest',
): string {
  const t = probeTiming(probe);
  const terms: string[] = [];
  // The earliest first probe: a second before the delay (startedAt cut to the whole second).
  if (fromStart && t.initialDelay > 0) {
    const early = t.initialDelay - earliestFirstProbeAgeSeconds(t.initialDelay);
    terms.push(bound === 'earliest' && early > 0 ? `initialDelaySeconds ${t.initialDelay} − ${formatSeconds(early)}` : `initialDelaySeconds ${t.initialDelay}`);
  }
  const overrun = mode === 'timeout' && t.timeout >= t.period;
  if (overrun) {
    // Failing probes run every timeout; the window opens with the last one's end, a period's wait later at worst.
    if (bound === 'latest') terms.push(`period ${formatSeconds(t.period)}`);
    terms.push(`${t.failureThreshold} × timeout ${formatSeconds(t.timeout)}`);
  } else {
    const probes = bound === 'latest' ? t.failureThreshold : t.failureThreshold - 1;
    if (probes > 0) terms.push(`${probes} × ${formatSeconds(t.period)}`);
    if (mode === 'timeout') terms.push(`timeout ${formatSeconds(t.timeout)}`);
  }
  return `${kind} ${terms.length > 0 ? terms.join(' + ') : 'at once'}`;
}

/**
 * How long a liveness kill may take (§10.6): the liveness probe's
 * `terminationGracePeriodSeconds`, else the pod's, and with a `preStop` hook up to 2 s more
 * (the kubelet's own formula, `killWaitSeconds`).
 */
export function livenessKillGraceSeconds(pod: Pod, container: Container): number {
  return killWaitSeconds(pod, container, 'liveness');
}

/**
 * How long the kubelet waits before restarting a container that has already been
 * restarted `restarts` times in a row (its `restartCount` in a crash loop): 0 for the first
 * restart, then 10 s, 20 s, 40 s … doubling up to 300 s (§10.7, the default node config).
 * A run of more than 10 minutes between exits starts the sequence over.
 */
export function backOffAfterRestarts(restarts: number): number {
  if (!(restarts >= 1)) return 0;
  const { initialMs, maxMs } = CRASH_LOOP_BACK_OFF;
  // Past the cap the exponent no longer matters; bounding it keeps 2 ** n finite.
  const exponent = Math.min(Math.floor(restarts) - 1, 30);
  return Math.min(initialMs * 2 ** exponent, maxMs) / 1000;
}

/**
 * The budgets of one container of `object`, from its pod with the apiserver's defaults
 * applied (`setPodDefaults`). Every time is in seconds from the container's start (for
 * start-up and Ready) or from the moment the app hangs (for the hang budgets); `null`
 * where no probe bounds it.
 *
 * - `startupBudgetSeconds` — **the latest the kill can come** (so a start-up this long or
 *   longer never survives; a shorter one can, in a favourable phase):
 *   startup probe (else liveness) `initialDelaySeconds + failureThreshold × periodSeconds`,
 *   failing probes failing at once. One up to a period shorter always survives; in between it
 *   depends on the phase, and on the first start on δ (`startupGuard`, `firstStartKill`).
 * - `earliestReadySeconds` — **the earliest** Ready: readiness (gated by the startup probe's
 *   earliest success, `initialDelaySeconds`) at `max(startup delay, readiness delay) +
 *   (successThreshold − 1) × periodSeconds`; with only a startup probe, its own delay;
 *   `null` when nothing gates readiness (Ready as soon as started).
 * - `hangToKillSeconds` — **the worst case** from a hang to the container being gone:
 *   liveness `periodSeconds + (failureThreshold − 1) × max(periodSeconds, timeoutSeconds) +
 *   timeoutSeconds` (= `F × P + T` when the timeout is below the period), plus the kill
 *   grace (probe-level `terminationGracePeriodSeconds`, else the pod's, at least 2 s; 2 s
 *   more when a `preStop` hook may end in, or run past, its last 2 s).
 * - `hangToNotReadySeconds` — **the worst case** from a hang to Ready → False: the same
 *   formula over the readiness probe, or the kill if that comes first (a killed container is
 *   not Ready); `null` when neither probe exists.
 * - A `tcpSocket` probe, or an exec probe that only reads files (`hangBlindness`), never
 *   fails on a hang: it bounds neither hang budget, and `hangBlind` says why.
 */
export function computeBudget(object: ManifestObject, pod: Pod, container: Container, role: ContainerRole): ContainerBudget {
  const probing = role !== 'init'; // the kubelet runs no probes for plain init containers
  const probes = probing ? PROBE_ORDER.filter((kind) => container[PROBE_FIELD[kind]] !== undefined && container[PROBE_FIELD[kind]] !== null) : [];
  const guard = probing ? startupGuard(container) : undefined;
  const hangToKill = probing ? hangToKillSeconds(pod, container) : null;
  const notReadyByProbe = probing && container.readinessProbe && failsOnHang(container.readinessProbe) ? failureWindow(container.readinessProbe, 'timeout', false).latestSeconds : null;
  const hangToNotReady = notReadyByProbe === null ? hangToKill : hangToKill === null ? notReadyByProbe : Math.min(notReadyByProbe, hangToKill);
  return {
    file: object.source,
    object: { apiVersion: object.apiVersion, kind: object.kind, namespace: object.namespace, name: object.name },
    container: container.name ?? '',
    probes,
    startupBudgetSeconds: guard?.budgetSeconds ?? null,
    earliestReadySeconds: probing ? earliestReadySeconds(container) : null,
    hangToKillSeconds: hangToKill,
    hangToNotReadySeconds: hangToNotReady,
    hangBlind: probing ? hangBlindProbes(container) : [],
  };
}

/** The liveness and readiness probes that cannot see a hang, and why. */
function hangBlindProbes(container: Container): { probe: ProbeType; reason: string }[] {
  const out: { probe: ProbeType; reason: string }[] = [];
  for (const probe of ['liveness', 'readiness'] as const) {
    const spec = container[PROBE_FIELD[probe]];
    const reason = spec ? hangBlindness(spec) : undefined;
    if (reason !== undefined) out.push({ probe, reason });
  }
  return out;
}

/**
 * Whether the probe fails when the app hangs: it does unless {@link hangBlindness} says why not.
 * The handler is the kubelet's pick (exec, httpGet, tcpSocket, grpc: the first set).
 */
export function failsOnHang(probe: Probe): boolean {
  return hangBlindness(probe) === undefined;
}

/**
 * How many connections beyond its listen backlog an app's accept queue holds on Linux
 * (`sk_acceptq_is_full` compares with `>`): with a backlog of 4, 5 probes of a hung app pass
 * and the 6th times out (measured on the real kernel by test/probe/tcp-accept-queue.test.ts).
 */
export const ACCEPT_QUEUE_EXTRA = 1;
/** A common listen backlog (Node's and nginx's default), for the example in the text. */
const EXAMPLE_BACKLOG = 511;

/**
 * Why a probe cannot see a hung app, or undefined when it can. A `tcpSocket` probe only
 * opens a connection, which the kernel completes into a listening socket's accept queue
 * whether or not the app answers — until that queue is full of connections the app never
 * accepted (a probe's close does not take its connection out; only accept() does): after
 * backlog + 1 probes the next one times out. An exec probe that only reads the file system or
 * the process table (`cat /tmp/healthy`, `test -f`, `ls`, `pgrep`) sees what a hung app left
 * there. Either way its hang budgets are "never" (as `simulate`'s `hang` shows).
 */
export function hangBlindness(probe: Probe): string | undefined {
  if (probe.exec) {
    const command = probe.exec.command ?? [];
    return blindCommand(command) ? `an exec probe (${command.join(' ')}) that only reads files or the process table, which a hung app leaves as they were` : undefined;
  }
  if (probe.httpGet) return undefined;
  if (probe.tcpSocket) {
    const period = probeTiming(probe).period;
    return (
      `a tcpSocket probe, which a hung app still passes (the kernel completes the connection) until the app's accept queue is full: ` +
      `after listen backlog + ${ACCEPT_QUEUE_EXTRA} connections it never accepted (measured on Linux: ${4 + ACCEPT_QUEUE_EXTRA} with a backlog of 4) probes time out — ` +
      `from the probes alone (backlog + ${ACCEPT_QUEUE_EXTRA}) × ${formatSeconds(period)} after the hang ` +
      `(${formatSeconds((EXAMPLE_BACKLOG + ACCEPT_QUEUE_EXTRA) * period)} with a backlog of ${EXAMPLE_BACKLOG}), sooner while other clients connect`
    );
  }
  return undefined;
}

/** Commands that look at files or processes, never at the app: a hang does not change what they see. */
const BLIND_COMMANDS: ReadonlySet<string> = new Set(['cat', 'test', '[', '[[', 'ls', 'stat', 'head', 'tail', 'grep', 'true', 'echo', 'exit', 'pgrep', 'pidof', 'ps', 'find']);
const SHELLS: ReadonlySet<string> = new Set(['sh', 'bash', 'ash', 'dash', 'zsh', 'busybox']);
/** Shell operators between commands: each command of the script must be blind. */
const SEPARATORS: ReadonlySet<string> = new Set(['&&', '||', ';', '|', '!']);

/** `[cat, /tmp/healthy]`, or `[sh, -c, "test -f /tmp/ready && cat /tmp/ok"]`, whose every command is blind. */
function blindCommand(command: readonly string[]): boolean {
  const [first, flag, script] = command;
  if (first === undefined) return false;
  const name = first.slice(first.lastIndexOf('/') + 1);
  if (SHELLS.has(name) && flag !== undefined && flag.startsWith('-') && flag.includes('c') && script !== undefined) return blindScript(script);
  return BLIND_COMMANDS.has(name);
}

/** A shell script of simple commands only (no substitution, which could call anything), each blind. */
function blindScript(script: string): boolean {
  if (script.includes('$(') || script.includes('`') || script.length > 1000) return false;
  const words = script.replace(/;/g, ' ; ').split(/\s+/).filter((w) => w !== '');
  let expectCommand = true;
  for (const word of words) {
    if (SEPARATORS.has(word)) {
      expectCommand = true;
      continue;
    }
    if (expectCommand) {
      if (!BLIND_COMMANDS.has(word.slice(word.lastIndexOf('/') + 1))) return false;
      expectCommand = false;
    }
  }
  return words.length > 0;
}

function hangToKillSeconds(pod: Pod, container: Container): number | null {
  if (!container.livenessProbe || !failsOnHang(container.livenessProbe)) return null;
  return failureWindow(container.livenessProbe, 'timeout', false).latestSeconds + livenessKillGraceSeconds(pod, container);
}

/** The first probe past each delay can come a second early: `startedAt` is read in whole seconds. */
function earliestReadySeconds(container: Container): number | null {
  const startedAt = container.startupProbe ? earliestFirstProbeAgeSeconds(probeTiming(container.startupProbe).initialDelay) : 0;
  if (!container.readinessProbe) return container.startupProbe ? startedAt : null;
  const r = probeTiming(container.readinessProbe);
  return Math.max(startedAt, earliestFirstProbeAgeSeconds(r.initialDelay)) + (r.successThreshold - 1) * r.period;
}

/** Seconds as `40s`, `2m30s`, `1h0m0s`; `unbounded` for null. */
export function formatSeconds(seconds: number | null): string {
  return seconds === null ? 'unbounded' : formatGoDuration(Math.round(seconds * 1000));
}

/**
 * A small per-container table of the budgets, for `check -o text`: one row per container,
 * headed in words so it reads without the docs, with a legend for the bounds.
 */
export function formatBudgetTable(budgets: readonly ContainerBudget[]): string {
  if (budgets.length === 0) return '';
  const header = ['CONTAINER', 'PROBES', 'KILLED IF NOT STARTED BY', 'READY AT THE EARLIEST', 'HANG → NOT READY', 'HANG → KILLED'];
  const rows = budgets.map((b) => [
    b.container,
    b.probes.length > 0 ? b.probes.join(',') : '-',
    b.startupBudgetSeconds === null ? 'never killed' : formatSeconds(b.startupBudgetSeconds),
    b.earliestReadySeconds === null ? 'when started' : formatSeconds(b.earliestReadySeconds),
    b.hangToNotReadySeconds === null ? 'never' : `≤ ${formatSeconds(b.hangToNotReadySeconds)}`,
    b.hangToKillSeconds === null ? 'never' : `≤ ${formatSeconds(b.hangToKillSeconds)}`,
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: readonly string[]): string =>
    cells
      .map((c, i) => (i === cells.length - 1 ? c : c.padEnd(widths[i] ?? 0)))
      .join('  ')
      .trimEnd();
  const blind = budgets.flatMap((b) => (b.hangBlind ?? []).map((h) => `${b.container}: the ${h.probe} probe never sees a hang: it is ${h.reason}`));
  return [
    line(header),
    ...rows.map(line),
    '(times from the container\'s start, or from the moment the app hangs; ≤ = worst case, kill grace included)',
    ...blind,
  ].join('\n');
}
