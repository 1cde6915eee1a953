/**
 * The timing rules: findings about *when* the kubelet acts, computed from the budgets of
 * `budgets.ts` (the only place the formulas live) — what no other linter checks
 * (probe-tools-landscape.md §A3). Every message states the numbers it used, and every fix
 * is given in numbers.
 */
import type { FieldPath } from '../../api/documents.js';
import type { Container, Probe } from '../../api/types.js';
import type { ProbeType } from '../../prober/types.js';
import {
  describeFailureBudget,
  failureInterval,
  failsOnHang,
  hangBlindness,
  failureWindow,
  formatSeconds,
  livenessKillGraceSeconds,
  ONE_HOUR_SECONDS,
  PROBE_FIELD,
  startupGuard,
  type StartupGuard,
} from '../budgets.js';
import { probeTiming } from '../../api/defaults.js';
import type { ContainerContext, Rule, RuleFinding } from '../types.js';
import { figureFor } from '../figures.js';
import { probeKillLoop, probeKillRunSeconds } from '../crash-loop.js';
import { isWritten, writtenValue } from '../written.js';
import { who } from './probes.js';

const KINDS: readonly ProbeType[] = ['liveness', 'readiness', 'startup'];
/** `progressDeadlineSeconds` when a Deployment does not set it. */
const DEFAULT_PROGRESS_DEADLINE_SECONDS = 600;
/** What an exec probe's timeout should at least be: a process start in the container alone can take about a second. */
const EXEC_TIMEOUT_SUGGESTED_SECONDS = 5;

function probesOf(container: Container): { kind: ProbeType; probe: Probe }[] {
  return KINDS.flatMap((kind) => {
    const probe = container[PROBE_FIELD[kind]];
    return probe ? [{ kind, probe }] : [];
  });
}

function probePath(ctx: ContainerContext, kind: ProbeType, field?: string): FieldPath {
  return field === undefined ? [...ctx.path, PROBE_FIELD[kind]] : [...ctx.path, PROBE_FIELD[kind], field];
}

/** Path of the pod spec inside the object (the container path without `containers`, index). */
function podSpecPath(ctx: ContainerContext): FieldPath {
  return ctx.path.slice(0, -2);
}

/** Smallest failureThreshold with which every start-up of `needs` seconds survives: `delay + (F − 1) × P ≥ needs`. */
function failureThresholdFor(needs: number, delay: number, period: number): number {
  return Math.max(1, Math.ceil((needs - delay) / period) + 1);
}

/** The `--startup-time` of this container, when given. */
function startupTimeOf(ctx: ContainerContext): number | undefined {
  return figureFor(ctx.options.startupTimes, ctx);
}

export const timeoutNotBelowPeriod: Rule = {
  id: 'probe-timeout-not-below-period',
  severity: 'warning',
  summary: 'timeoutSeconds > periodSeconds: probes that time out run back to back, and a hang takes threshold × timeout to count.',
  explain: `What: a probe whose timeoutSeconds is longer than its periodSeconds (a tcpSocket probe
excepted: a hung app still accepts its connections, so it does not time out on a hang).
Why: the kubelet's prober runs on a fixed-rate ticker and never overlaps probes: a probe that
times out is followed at once by the next, so a hung app is probed every timeoutSeconds, not every
periodSeconds, and failureThreshold failures take failureThreshold × timeoutSeconds to count — a
customer probe with period 1, timeout 15, failureThreshold 60 needs 15 minutes, not one, to
notice a hang (kyverno/policies PR #1500; openshift-docs PR #32219, bz 1956644; kubernetes #39633).
timeoutSeconds equal to periodSeconds is not reported: the next probe then comes on the next
tick anyway, and a lower timeout saves less than a second per failure.
Fix: keep timeoutSeconds at or below periodSeconds and size failureThreshold × periodSeconds for
the detection time you want.
Example:
  livenessProbe:
    httpGet: { path: /healthz, port: 8080 }
    periodSeconds: 10
    timeoutSeconds: 3
    failureThreshold: 3`,
  equivalents: ['Kyverno policies PR #1500 (proposed, not merged)'],
  check(ctx): RuleFinding[] {
    if (ctx.role === 'init') return [];
    return probesOf(ctx.container).flatMap(({ kind, probe }) => {
      const t = probeTiming(probe);
      if (t.timeout <= t.period || !failsOnHang(probe)) return [];
      const hang = failureWindow(probe, 'timeout', false);
      // The same probe with the largest timeout this rule accepts (T = P, always valid as P ≥ 1).
      const atPeriod = failureWindow({ ...probe, timeoutSeconds: t.period }, 'timeout', false);
      return [
        {
          path: probePath(ctx, kind, 'timeoutSeconds'),
          message: `${kind} probe of ${who(ctx)}: timeoutSeconds ${t.timeout} > periodSeconds ${t.period}: a probe that times out is followed at once by the next, so a hung app is probed every ${formatSeconds(failureInterval(t, 'timeout'))}, and ${t.failureThreshold} failures take up to ${formatSeconds(hang.latestSeconds)} to count (${describeFailureBudget(kind, probe, false, 'timeout')}), against up to ${formatSeconds(atPeriod.latestSeconds)} with timeoutSeconds ${t.period}; set timeoutSeconds to ${t.period} or less`,
        },
      ];
    });
  },
};

export const execProbeDefaultTimeout: Rule = {
  id: 'exec-probe-default-timeout',
  severity: 'warning',
  summary: 'exec probe with the 1 s default timeout: starting the process can alone take that long on a busy node.',
  explain: `What: an exec probe whose timeoutSeconds is 1 (the default, or written).
Why: an exec probe starts a new process inside the container through the runtime (runc exec);
on a loaded node that alone can take a second or more, and since Kubernetes 1.20 the timeout is
enforced for exec probes (kubernetes #26895, PR #94115), so the probe fails although the app is
healthy: liveness restarts it, readiness takes it out of service (kubernetes #82440 on exec
probe cost at density; containerd/cri #971; cloudability/metrics-agent #191 "runc taking a
second or two").
Fix: give exec probes a timeout of a few seconds, or use an httpGet/tcpSocket/grpc probe,
which the kubelet runs itself without starting a process.
Example:
  livenessProbe:
    exec: { command: [pg_isready, -U, postgres] }
    timeoutSeconds: 5
    periodSeconds: 10`,
  equivalents: ['certsuite performance-max-resources-exec-probes (counts exec probes and their periods, not timeouts)'],
  check(ctx): RuleFinding[] {
    if (ctx.role === 'init') return [];
    return probesOf(ctx.container).flatMap(({ kind, probe }) => {
      if (!probe.exec || probeTiming(probe).timeout > 1) return [];
      const harm = kind === 'readiness' ? 'takes it out of service' : 'restarts it';
      // The pod is defaulted, so the field is always there; an unset one is placed at its nearest parent.
      const path = probePath(ctx, kind, 'timeoutSeconds');
      const source = isWritten(ctx.object, path) ? '' : ' (the default)';
      return [
        {
          path,
          message: `exec ${kind} probe of ${who(ctx)} runs with timeoutSeconds 1${source}: starting a process in the container can itself take about a second on a busy node, and a timed-out probe counts as a failure that ${harm} (kubernetes #82440, containerd/cri #971); set timeoutSeconds: ${EXEC_TIMEOUT_SUGGESTED_SECONDS}`,
        },
      ];
    });
  },
};

export const livenessBeforeReadiness: Rule = {
  id: 'liveness-before-readiness',
  severity: 'warning',
  summary: 'After a hang, liveness can fail before readiness has taken the container out of service (info when both have the same failure budget).',
  explain: `What: a container whose liveness probe can count its failures (after the app hangs)
before its readiness probe has taken it out of service, given when each probe's first failing
attempt can land.
Why: readiness should fail first — the pod stops getting traffic and may recover; liveness is
the last resort. When liveness can trip first the container is restarted while it still receives
requests, and a brief overload becomes a restart of every replica. kube-score compares only the
handlers and was asked to compare timing instead (zegl/kube-score #285, declined); nobody checks it.
The numbers: after a hang every probe times out (T) and the first one lands within a period (P)
of the hang, so a probe trips between (F − 1) × max(P, T) + T and one period later; liveness is
safe when its earliest is no sooner than readiness's latest. A warning when liveness's worst case
comes before readiness's (liveness is set to act first); info when the two have the same failure
budget — the common shape, kubernetes.io's examples included — where the order depends on the
phase of the two tickers. A tcpSocket liveness probe never fails on a hang (the kernel accepts
the connection): nothing to report; a tcpSocket readiness probe never takes a hung app out of
service, which is reported (info) beside a liveness probe that does fail.
Fix: make the earliest liveness failure no sooner than the latest readiness failure, usually by
raising the liveness failureThreshold (same endpoint is fine).
Example:
  readinessProbe: { httpGet: { path: /healthz, port: 8080 }, periodSeconds: 10, failureThreshold: 3 }
  livenessProbe:  { httpGet: { path: /healthz, port: 8080 }, periodSeconds: 10, failureThreshold: 4 }`,
  equivalents: ['kube-score pod-probes-identical (compares handlers only; #285 proposed this, declined)'],
  check(ctx): RuleFinding[] {
    const { livenessProbe: live, readinessProbe: ready } = ctx.container;
    // A tcpSocket liveness probe never fails on a hang (the kernel accepts the connection).
    if (ctx.role === 'init' || !live || !ready || !failsOnHang(live)) return [];
    const l = failureWindow(live, 'timeout', false);
    const path = probePath(ctx, 'liveness', 'failureThreshold');
    if (!failsOnHang(ready)) {
      // Nothing to order: readiness cannot act on a hang at all (info: liveness still ends it).
      return [
        {
          severity: 'info',
          path: probePath(ctx, 'readiness', ready.exec ? 'exec' : 'tcpSocket'),
          message: `the readiness probe of ${who(ctx)} is ${hangBlindness(ready) ?? 'blind to a hang'}: after a hang it is never taken out of service, and the liveness probe restarts it after up to ${formatSeconds(l.latestSeconds)} (${describeFailureBudget('liveness', live, false, 'timeout')}) while it still receives traffic; give readiness an httpGet, grpc or exec check that the app itself answers`,
        },
      ];
    }
    const r = failureWindow(ready, 'timeout', false);
    if (l.earliestSeconds >= r.latestSeconds) return [];
    const t = probeTiming(live);
    const needed = Math.ceil((r.latestSeconds - t.timeout) / failureInterval(t, 'timeout')) + 1;
    const lWhen = `after ${formatSeconds(l.earliestSeconds)} to ${formatSeconds(l.latestSeconds)}`;
    const rWhen = `after ${formatSeconds(r.earliestSeconds)} to ${formatSeconds(r.latestSeconds)}`;
    if (l.latestSeconds >= r.latestSeconds) {
      // The same failure budget (or a larger one): the two trip within a period of each other,
      // in an order set by the phase of their tickers — the common, documented shape.
      return [
        {
          severity: 'info',
          path,
          message: `after a hang, the liveness and readiness probes of ${who(ctx)} trip at about the same time (liveness ${lWhen}: ${describeFailureBudget('liveness', live, false, 'timeout', 'earliest')} at the earliest; readiness ${rWhen}), in an order set by when each probe's first failing attempt lands: it may be restarted just before it is taken out of service; for readiness to act first, set the liveness failureThreshold to ${needed}`,
        },
      ];
    }
    return [
      {
        path,
        message: `after a hang, the liveness probe of ${who(ctx)} can fail after ${formatSeconds(l.earliestSeconds)} (${describeFailureBudget('liveness', live, false, 'timeout', 'earliest')}, first failing probe right after the hang), before readiness has taken it out of service, which can take up to ${formatSeconds(r.latestSeconds)} (${describeFailureBudget('readiness', ready, false, 'timeout')} after a period's wait for the first probe): it is restarted while still receiving traffic; set the liveness failureThreshold to ${needed} or more (or make readiness fail sooner)`,
      },
    ];
  },
};

export const livenessDelayAsStartup: Rule = {
  id: 'liveness-delay-as-startup',
  severity: 'warning',
  summary: 'No startupProbe, and liveness initialDelaySeconds guesses the start-up time: a slower start is killed.',
  explain: `What: a container with no startupProbe whose livenessProbe has an initialDelaySeconds — the
pattern of guessing the start-up time that the startup probe replaced.
Why: without a startup probe the liveness probe times the start-up: an app that is not answering
within initialDelaySeconds + failureThreshold × periodSeconds is always killed, and one that needs
more than initialDelaySeconds + (failureThreshold − 1) × periodSeconds on some starts (the first
probe lands anywhere within a period). A start slowed by a busy node, a CPU limit or a cold cache
then ends in CrashLoopBackOff (apache/camel-k #2173, treeverse/charts #143, sapcc/helm-charts
PR #11365), while the delay also postpones noticing a hang after every restart. kube-linter
rejected a no-startup-probe rule (stackrox/kube-linter #505); nobody checks the time.
Fix: a startupProbe with the same check and failureThreshold × periodSeconds ≥ the slowest
start-up plus one period; drop initialDelaySeconds from liveness. Pass --startup-time
CONTAINER=DURATION to have the start-up checked in numbers.
Example:
  startupProbe:  { httpGet: { path: /healthz, port: 8080 }, periodSeconds: 10, failureThreshold: 12 }
  livenessProbe: { httpGet: { path: /healthz, port: 8080 }, periodSeconds: 10, failureThreshold: 3 }`,
  check(ctx): RuleFinding[] {
    const live = ctx.container.livenessProbe;
    // With --startup-time, startup-time-exceeds-budget says it in numbers; without a delay, the
    // presence rule for startup probes covers it and the budget table shows the time.
    if (ctx.role === 'init' || !live || ctx.container.startupProbe || startupTimeOf(ctx) !== undefined) return [];
    const guard = startupGuard(ctx.container);
    const delay = probeTiming(live).initialDelay;
    if (!guard || delay <= 0) return [];
    return [
      {
        path: probePath(ctx, 'liveness', 'initialDelaySeconds'),
        message: `${who(ctx)} has no startupProbe, so its liveness probe times the start-up with initialDelaySeconds ${delay} as a guess: an app not answering within ${formatSeconds(guard.budgetSeconds)} of its start is always killed, and one needing more than ${formatSeconds(guard.alwaysSurvivesSeconds)} on some starts (${describeFailureBudget('liveness', live, true)}); add a startupProbe with failureThreshold × periodSeconds ≥ the slowest start-up + one period and drop initialDelaySeconds, or pass --startup-time ${ctx.container.name}=DURATION to check it`,
      },
    ];
  },
};

/** `add a startupProbe …` / `raise startupProbe.failureThreshold …`: the fix for a start-up of `needs` seconds, in numbers. */
function startupFix(guard: StartupGuard, needs: number): string {
  const t = probeTiming(guard.probe);
  if (guard.kind === 'startup') {
    const f = failureThresholdFor(needs, t.initialDelay, t.period);
    return `raise startupProbe.failureThreshold to ${f} (initialDelaySeconds ${t.initialDelay} + (${f} − 1) × ${formatSeconds(t.period)} ≥ ${formatSeconds(needs)}: the first probe can land up to a period late)`;
  }
  const f = failureThresholdFor(needs, 0, t.period);
  return `add a startupProbe with failureThreshold × periodSeconds ≥ ${formatSeconds(needs + t.period)} (start-up ${formatSeconds(needs)} + one period, as the first probe can land up to a period late), e.g. failureThreshold: ${f}, periodSeconds: ${t.period}`;
}

export const startupTimeExceedsBudget: Rule = {
  id: 'startup-time-exceeds-budget',
  severity: 'error',
  summary: '--startup-time longer than the startup budget: the kubelet kills the app before it has started.',
  explain: `What: given --startup-time CONTAINER=DURATION, a container whose start-up does not fit its
startup budget — the startup probe's (else the liveness probe's) initialDelaySeconds +
failureThreshold × periodSeconds. An error when the start-up is longer than the budget (every
start is killed); a warning when it falls within the budget's last period, where the kill
depends on when the first probe happens to land.
Why: the kill restarts the start-up from scratch and the pod never becomes Ready. The first
kills restart it at once (the back-off counts from the exit before the killed instance,
kubernetes#22240), until the back-off step outgrows a run: then CrashLoopBackOff
(apache/camel-k #2173; treeverse/charts #143; mitodl/ol-infrastructure PR #5269 and
operator-framework/operator-lifecycle-manager PR #3876 show budgets miscounted by hand).
Kubernetes' own advice "failureThreshold × periodSeconds long enough to cover the worst case
startup time" misses that the first probe lands anywhere within a period after initialDelaySeconds:
a start-up is always safe only up to initialDelaySeconds + (failureThreshold − 1) × periodSeconds.
Fix: a startupProbe (or a larger failureThreshold on it) with failureThreshold × periodSeconds ≥
start-up + one period.
Example: an app that needs 40s:
  startupProbe: { httpGet: { path: /healthz, port: 8080 }, periodSeconds: 10, failureThreshold: 5 }`,
  check(ctx): RuleFinding[] {
    const needs = startupTimeOf(ctx);
    const guard = startupGuard(ctx.container);
    if (ctx.role === 'init' || needs === undefined || !guard || needs <= guard.alwaysSurvivesSeconds) return [];
    const budget = describeFailureBudget(guard.kind, guard.probe, true);
    const always = needs > guard.budgetSeconds;
    const kills = always
      ? `the kubelet kills it after ${formatSeconds(guard.budgetSeconds)} at the latest (${budget}): every start ends in a kill and the pod crash-loops (${crashLoopSchedule(guard)})`
      : `the kubelet kills it on starts where the first ${guard.kind} probe lands early: between ${formatSeconds(guard.alwaysSurvivesSeconds)} and ${formatSeconds(guard.budgetSeconds)} (${budget})`;
    return [
      {
        severity: always ? 'error' : 'warning',
        path: guard.kind === 'startup' ? probePath(ctx, 'startup', 'failureThreshold') : probePath(ctx, 'liveness'),
        message: `${ctx.container.name} needs ${formatSeconds(needs)} to start; ${kills}; ${startupFix(guard, needs)}`,
      },
    ];
  },
};

/**
 * The crash loop of a start-up that every start is killed for, in numbers (crash-loop.ts):
 * `restarted at once after the kills at 30s, 1m0s, 1m30s and 2m0s (…); CrashLoopBackOff from
 * the kill at 2m30s: restarted no sooner than 3m10s, …`. With a 1 s period and no initial
 * delay a run can last a tick longer (the relist), and with a delay that is a multiple of the
 * period a restart's run a period shorter (startedAt read in whole seconds): the times are then
 * ranges. The first run is a first start's (after its sandbox), the others a restart's.
 */
function crashLoopSchedule(guard: StartupGuard): string {
  const run = probeKillRunSeconds(guard.probe);
  const [short, long] = [probeKillLoop(run.min, run.first.min), probeKillLoop(run.max, run.first.max)];
  // The n-th kill: the first run, then n − 1 runs restarted at once.
  const earliest = (n: number): number => run.first.min + (n - 1) * run.min;
  const latest = (n: number): number => run.first.max + (n - 1) * run.max;
  const range = (lo: number, hi: number): string => (lo === hi ? formatSeconds(lo) : `${formatSeconds(lo)}–${formatSeconds(hi)}`);
  const at = (n: number): string => range(earliest(n), latest(n));
  const span = (lo: number, hi: number): string => (lo === hi ? formatSeconds(lo) : `${formatSeconds(lo)} to ${formatSeconds(hi)}`);
  const sameFirst = run.first.min === run.min && run.first.max === run.max;
  const runs = sameFirst ? span(run.min, run.max) : `${span(run.min, run.max)} (the first ${span(run.first.min, run.first.max)}: its sandbox first)`;
  const kills = (count: number): string => {
    const times = Array.from({ length: count }, (_, i) => at(i + 1));
    return times.length <= 1 ? (times[0] ?? '') : `${times.slice(0, -1).join(', ')} and ${times.at(-1) ?? ''}`;
  };
  const why = 'the back-off counts from the exit before the killed one: kubernetes#22240';
  if (long.firstBackOffSeconds === null) {
    return `each run of ${runs} is no shorter than any back-off step: restarted at once after every kill, never in CrashLoopBackOff (${why})`;
  }
  // The two ends of a 1 s period's run can enter back-off a kill apart: say so rather than pick one.
  if (short.restartedAtOnce.length !== long.restartedAtOnce.length || short.firstBackOffStepSeconds === null || long.firstBackOffStepSeconds === null) {
    return `each instance runs ${runs}: it is restarted at once while that outlasts the back-off step (${why}), then in CrashLoopBackOff`;
  }
  const n = long.restartedAtOnce.length;
  const step = long.firstBackOffStepSeconds;
  const restart = range(earliest(n + 1) + step, latest(n + 1) + step);
  const later = long.laterStepsSeconds.map((x) => formatSeconds(x));
  const capped = later.length > 1 ? `${later.slice(0, -1).join(', ')}, then ${later.at(-1) ?? ''}` : (later[0] ?? '');
  return `killed and restarted at once at ${kills(n)} — each run of ${runs} is no shorter than the back-off step, which counts from the exit before the killed one (kubernetes#22240) — then CrashLoopBackOff from the kill at ${at(n + 1)}: restarted no sooner than ${restart} (step ${formatSeconds(step)}); after that a kill restarts at once only when it comes a full step (${capped}) after the kill before it, else a step after itself, and the pod worker's requeue can add up to half the remaining step`;
}

/** Sidecars with a startup probe that start before the regular containers, with their startup budgets. */
function sidecarChain(ctx: ContainerContext): { name: string; index: number; budget: number }[] {
  return (ctx.pod.spec?.initContainers ?? []).flatMap((c, index) => {
    if (c.restartPolicy !== 'Always' || !c.startupProbe) return [];
    const guard = startupGuard(c);
    return guard ? [{ name: c.name, index, budget: guard.budgetSeconds }] : [];
  });
}

function isFirstContainer(ctx: ContainerContext): boolean {
  return ctx.role === 'container' && ctx.pod.spec?.containers[0]?.name === ctx.container.name;
}

/**
 * Sidecars a mesh injects with its own probes (istio's startup probe 600 × 1 s): a budget
 * the user did not write and rarely can change, so a finding that rests on it is info.
 */
const INJECTED_SIDECARS: ReadonlyMap<string, string> = new Map([
  ['istio-proxy', 'Istio'],
  ['linkerd-proxy', 'Linkerd'],
]);

export const startupExceedsProgressDeadline: Rule = {
  id: 'startup-exceeds-progress-deadline',
  severity: 'warning',
  summary: "A start-up may take longer than the Deployment's progressDeadlineSeconds: the rollout is reported failed while the pod may still start.",
  explain: `What: a Deployment whose containers may take longer to start before the kubelet kills
and restarts them (the sidecars' startup budgets before them, then the container's own startup
budget) than the Deployment's progressDeadlineSeconds (600 s when not set).
Why: a start-up that takes longer than the deadline makes the Deployment controller report
ProgressDeadlineExceeded (the rollout is marked failed) while the kubelet still lets the pod
start: CI waiting on the rollout reports a failure although the pod would have started, and the
budget beyond the deadline only delays noticing a stuck start. Info only where the excess comes
from a sidecar a mesh injects with its own default (istio-proxy's startup probe 600 × 1 s),
which you did not write. OpenShift Serverless documents the same constraint for Knative's
progress deadline; nobody checks it.
Fix: keep the startup budget below the deadline, or raise progressDeadlineSeconds above it.
Example: startupProbe { periodSeconds: 10, failureThreshold: 90 } (900 s) needs
  spec:
    progressDeadlineSeconds: 960`,
  check(ctx): RuleFinding[] {
    if (ctx.object.kind !== 'Deployment' || ctx.role !== 'container') return [];
    const guard = startupGuard(ctx.container);
    if (!guard) return [];
    const chain = sidecarChain(ctx);
    const before = chain.reduce((sum, s) => sum + s.budget, 0);
    const total = before + guard.budgetSeconds;
    const set = writtenValue(ctx.object, ['spec', 'progressDeadlineSeconds']);
    const deadline = typeof set === 'number' ? set : DEFAULT_PROGRESS_DEADLINE_SECONDS;
    if (total <= deadline) return [];
    const parts = [
      ...chain.map((s) => `sidecar ${JSON.stringify(s.name)} ${formatSeconds(s.budget)}`),
      `${describeFailureBudget(guard.kind, guard.probe, true)} = ${formatSeconds(guard.budgetSeconds)}`,
    ].join(' + ');
    // Without the injected sidecars' budgets (the container's own too, when it is one), does it fit?
    const injected = [...chain.filter((s) => INJECTED_SIDECARS.has(s.name)), ...(INJECTED_SIDECARS.has(ctx.container.name) ? [{ name: ctx.container.name, budget: guard.budgetSeconds }] : [])];
    const fromInjected = injected.length > 0 && total - injected.reduce((sum, s) => sum + s.budget, 0) <= deadline;
    const note = fromInjected
      ? ` (the excess comes from ${injected.map((s) => `${JSON.stringify(s.name)}, injected by ${INJECTED_SIDECARS.get(s.name) ?? ''} with its default startup probe`).join(' and ')}, which you did not write)`
      : '';
    return [
      {
        ...(fromInjected ? { severity: 'info' as const } : {}),
        path: typeof set === 'number' ? ['spec', 'progressDeadlineSeconds'] : probePath(ctx, guard.kind),
        message: `a start-up of ${who(ctx)} may last up to ${formatSeconds(total)} before the kubelet kills and restarts it (${parts}), longer than the Deployment's progressDeadlineSeconds ${deadline}${typeof set === 'number' ? '' : ' (the default)'}: a start that takes longer than ${formatSeconds(deadline)} makes the Deployment report ProgressDeadlineExceeded (the rollout is marked failed) while the pod is still allowed to start${note}; lower the startup budget below ${formatSeconds(deadline)} or set progressDeadlineSeconds: ${Math.ceil(total)} or more`,
      },
    ];
  },
};

export const startupHangUnnoticed: Rule = {
  id: 'startup-hang-unnoticed',
  severity: 'warning',
  summary: 'The startup budget is so long that a start-up that hangs goes unnoticed for an hour or more.',
  explain: `What: a container whose start-up may hang for an hour or more before the kubelet kills it:
the startup probe's (else liveness's) budget when its probes time out (a hung app):
P + initialDelaySeconds + (failureThreshold − 1) × max(periodSeconds, timeoutSeconds) + timeoutSeconds
(a tcpSocket probe does not time out on a hang — an app that hangs before it listens is refused —
so there it is P + initialDelaySeconds + (failureThreshold − 1) × periodSeconds).
Why: a generous startup budget is cheap to write (failureThreshold: 360) but a start that hangs —
a lock never released, a dependency that never answers — then holds the pod out of service for
that long without a restart, an event or a crash loop to alert on (influxdata/helm-charts PR #827;
paritytech/helm-charts PR #318). Nobody checks it.
Fix: size the budget from the slowest real start-up (measure it; pass --startup-time) plus a
margin, not "as long as possible".
Example:
  startupProbe: { httpGet: { path: /healthz, port: 8080 }, periodSeconds: 10, failureThreshold: 30 }`,
  check(ctx): RuleFinding[] {
    const guard = startupGuard(ctx.container);
    if (ctx.role === 'init' || !guard) return [];
    // A start that hangs before listening is refused by a tcpSocket probe (it never times out).
    const mode = failsOnHang(guard.probe) ? 'timeout' : 'refused';
    const hang = failureWindow(guard.probe, mode, true).latestSeconds;
    if (hang < ONE_HOUR_SECONDS) return [];
    return [
      {
        path: probePath(ctx, guard.kind, 'failureThreshold'),
        message: `a start-up of ${who(ctx)} that hangs is killed only after up to ${formatSeconds(hang)} (${describeFailureBudget(guard.kind, guard.probe, true, mode)}, first probe up to a period after initialDelaySeconds): a stuck start goes unnoticed for ${hang >= 2 * ONE_HOUR_SECONDS ? 'hours' : 'an hour'}; size failureThreshold × periodSeconds from the slowest real start-up plus a margin`,
      },
    ];
  },
};

export const hangKillUnnoticed: Rule = {
  id: 'hang-kill-unnoticed',
  severity: 'warning',
  summary: 'A hung container is gone only an hour or more after the hang: the kill waits for a long grace period.',
  explain: `What: a container whose liveness kill, counted from the moment the app hangs, completes an
hour or more later: the liveness probe's detection time plus the kill's grace period — the liveness
probe's terminationGracePeriodSeconds, else the pod's.
Why: a hung app usually ignores SIGTERM, so the kubelet waits the whole grace period before
SIGKILL; a pod grace of 3600 s (sized for a graceful drain) made liveness kills take an hour
(kubernetes/kubernetes #64715). The probe-level terminationGracePeriodSeconds (KEP-2238, GA in
1.28) exists for this; nobody checks it.
Fix: give the liveness probe its own, short terminationGracePeriodSeconds.
Example:
  terminationGracePeriodSeconds: 3600
  containers:
  - name: app
    livenessProbe:
      httpGet: { path: /healthz, port: 8080 }
      terminationGracePeriodSeconds: 30`,
  check(ctx): RuleFinding[] {
    const live = ctx.container.livenessProbe;
    const total = ctx.budget.hangToKillSeconds;
    if (ctx.role === 'init' || !live || total === null || total < ONE_HOUR_SECONDS) return [];
    const grace = livenessKillGraceSeconds(ctx.pod, ctx.container);
    const own = live.terminationGracePeriodSeconds !== undefined && live.terminationGracePeriodSeconds !== null;
    return [
      {
        path: own ? probePath(ctx, 'liveness', 'terminationGracePeriodSeconds') : probePath(ctx, 'liveness'),
        message: `after a hang, ${who(ctx)} is gone only after up to ${formatSeconds(total)}: liveness fails after up to ${formatSeconds(total - grace)} (${describeFailureBudget('liveness', live, false, 'timeout')}), then the kill waits ${formatSeconds(grace)} for SIGKILL (${own ? "the probe's" : "the pod's"} terminationGracePeriodSeconds${ctx.container.lifecycle?.preStop ? ', with up to 2s more after its preStop hook' : ''}; a hung app ignores SIGTERM, kubernetes/kubernetes #64715); ${own ? 'lower it' : 'set livenessProbe.terminationGracePeriodSeconds'}, e.g. 30`,
      },
    ];
  },
};

export const livenessEndsPod: Rule = {
  id: 'liveness-ends-pod',
  severity: 'warning',
  summary: 'Liveness or startup probe in a container that is not restarted (restartPolicy Never/OnFailure): a kill ends it.',
  explain: `What: a liveness or startup probe on a regular container whose restart policy is Never or
OnFailure (the pod's, or the container's own).
Why: a probe failure kills the container; with Never it is not restarted and the pod ends Failed,
and with OnFailure it is restarted only if it exits non-zero — an app that exits 0 on SIGTERM (a
graceful shutdown) ends the pod Succeeded, reporting a job that was killed as completed
(kubernetes/kubernetes #109537). The probe then means "fail (or finish) the pod", not "restart it".
Fix: for batch work, use activeDeadlineSeconds or the app's own timeouts; keep a liveness probe
only if killing the pod is the intent, and make the app exit non-zero on SIGTERM.
Example:
  spec:
    restartPolicy: Never
    activeDeadlineSeconds: 3600
    containers: [{ name: job, image: batch:1 }]`,
  check(ctx): RuleFinding[] {
    if (ctx.role !== 'container') return [];
    const policy = ctx.container.restartPolicy ?? ctx.pod.spec?.restartPolicy ?? 'Always';
    if (policy !== 'Never' && policy !== 'OnFailure') return [];
    const kind = ctx.container.livenessProbe ? 'liveness' : ctx.container.startupProbe ? 'startup' : undefined;
    if (!kind) return [];
    const outcome =
      policy === 'Never'
        ? 'it is not restarted and the pod ends Failed (or Succeeded when the app exits 0 on SIGTERM)'
        : 'it is restarted only if it exits non-zero, so an app that exits 0 on SIGTERM ends the pod Succeeded';
    return [
      {
        path: probePath(ctx, kind),
        message: `${who(ctx)} runs under restartPolicy ${policy}: when its ${kind} probe fails the kubelet kills it, and ${outcome} (kubernetes/kubernetes #109537); use activeDeadlineSeconds for a time limit, or keep the probe only if ending the pod is the intent`,
      },
    ];
  },
};

export const sidecarStartupChain: Rule = {
  id: 'sidecar-startup-chain',
  severity: 'info',
  summary: "Sidecars' startup probes delay the app's start: their budgets add up before the containers start.",
  explain: `What: a pod whose sidecars (initContainers with restartPolicy: Always) have startup probes.
Why: the kubelet starts init containers one after another and a sidecar counts as started only
when its startup probe succeeds, so the regular containers start only after every sidecar has —
up to the sum of their startup budgets, more when a sidecar fails its startup probe and is
restarted. That time is not part of the app's own budgets and adds to the rollout's (kubernetes
#132826, fixed by PR #133072; every linter skips sidecars).
Fix: keep sidecar startup budgets tight, and count them when sizing progressDeadlineSeconds and
readiness expectations.
Example:
  initContainers:
  - name: proxy
    restartPolicy: Always
    startupProbe: { tcpSocket: { port: 15021 }, periodSeconds: 1, failureThreshold: 30 }`,
  check(ctx): RuleFinding[] {
    if (!isFirstContainer(ctx)) return [];
    const chain = sidecarChain(ctx);
    const first = chain[0];
    if (!first) return [];
    const total = chain.reduce((sum, s) => sum + s.budget, 0);
    const parts = chain.map((s) => `${JSON.stringify(s.name)} ≤ ${formatSeconds(s.budget)}`).join(' + ');
    return [
      {
        path: [...podSpecPath(ctx), 'initContainers', first.index, 'startupProbe'],
        message: `the containers of this pod start only after its sidecars have started, one after another: up to ${formatSeconds(total)} (${parts}, their startup budgets) before ${who(ctx)} even starts, more if a sidecar is killed and restarted`,
      },
    ];
  },
};

export const startupUnhealthyEvents: Rule = {
  id: 'startup-unhealthy-events',
  severity: 'info',
  summary: 'A normal start emits Warning Unhealthy events (given --startup-time).',
  explain: `What: given --startup-time CONTAINER=DURATION, how many Warning "Unhealthy" events a normal,
successful start emits: every probe that runs before the app answers fails and is reported, up to
ceil((start-up − initialDelaySeconds) / periodSeconds) per probe (the startup probe; without one,
liveness and readiness), on each probe's own schedule — every pod sync while the container is not
Ready also probes readiness at once, which can add one.
Why: Warning events during every rollout train people to ignore them, and CI gates or alerts on
Warning events fail for a healthy start (devantler-tech/platform commit 19fb2b3: 5–7 events per
cold start with a 2 s period). Nobody checks it.
Fix: an initialDelaySeconds close to the fastest start-up, or a longer period for the probe that
covers the start-up.
Example: an app that needs 20s with a startupProbe every 2s emits up to 10 events; with
  startupProbe: { initialDelaySeconds: 15, periodSeconds: 5, failureThreshold: 12 }
it emits at most 1.`,
  check(ctx): RuleFinding[] {
    const needs = startupTimeOf(ctx);
    const guard = startupGuard(ctx.container);
    if (ctx.role === 'init' || needs === undefined) return [];
    if (guard && needs > guard.budgetSeconds) return []; // killed anyway: startup-time-exceeds-budget says so
    // With a startup probe, liveness and readiness wait for it; without one, both run from the start.
    const running = probesOf(ctx.container).filter(({ kind }) => (ctx.container.startupProbe ? kind === 'startup' : kind !== 'startup'));
    const counts = running
      .map(({ kind, probe }) => {
        const t = probeTiming(probe);
        return { kind, t, events: needs > t.initialDelay ? Math.ceil((needs - t.initialDelay) / t.period) : 0 };
      })
      .filter((c) => c.events > 0);
    const worst = counts.reduce<(typeof counts)[number] | undefined>((a, c) => (a && a.events >= c.events ? a : c), undefined);
    if (!worst) return [];
    const total = counts.reduce((sum, c) => sum + c.events, 0);
    const each = counts.map((c) => `${c.kind} ${c.events} = ceil((${needs} − ${c.t.initialDelay}) / ${c.t.period})`).join(', ');
    return [
      {
        path: probePath(ctx, worst.kind),
        message: `a normal start of ${ctx.container.name} (${formatSeconds(needs)}) emits up to ${total} Warning Unhealthy event${total === 1 ? '' : 's'} (${each}): probes fail until the app answers; raise initialDelaySeconds towards the start-up time or lengthen periodSeconds for fewer`,
      },
    ];
  },
};

/** A measured p99 this close to the timeout (as a share of it) is one busy node away from timing out. */
const P99_NEAR_TIMEOUT_SHARE = 0.8;

export const probeP99NearTimeout: Rule = {
  id: 'probe-near-timeout',
  severity: 'warning',
  summary: 'A probe measured by `probelet run` takes (at p99) within 20 % of its timeoutSeconds.',
  explain: `What: a probe whose measured duration at the 99th percentile (given with --probe-p99, as the
line \`probelet run\` prints at its end suggests) is 80 % or more of its timeoutSeconds.
Why: a probe that outlives its timeout is a failure, not an error: on a node busier than your
laptop (CPU throttling, a garbage collection, a slow dependency) the few percent of slow answers
become timeouts, and liveness restarts a healthy container or readiness takes it out of service
(kubernetes #82440, #89898). Nothing measures this before deployment; probelet run does.
Fix: give the probe room: a timeoutSeconds of at least twice the measured p99, or make the
endpoint cheaper (no dependency checks in liveness).
Example:
  probelet run deploy.yaml --timeout 2m   # prints: probelet check deploy.yaml --probe-p99 app.liveness=0.9s
  livenessProbe:
    httpGet: { path: /healthz, port: 8080 }
    timeoutSeconds: 2`,
  check(ctx): RuleFinding[] {
    const measured = ctx.options.measuredP99;
    if (!measured || measured.size === 0 || ctx.role === 'init') return [];
    return probesOf(ctx.container).flatMap(({ kind, probe }) => {
      const p99 = figureFor(measured, ctx, `.${kind}`);
      const timeout = probeTiming(probe).timeout;
      if (p99 === undefined || p99 < P99_NEAR_TIMEOUT_SHARE * timeout) return [];
      const harm = kind === 'readiness' ? 'takes it out of service' : 'restarts it';
      const suggested = Math.max(timeout + 1, Math.ceil(p99 * 2));
      return [
        {
          path: probePath(ctx, kind, 'timeoutSeconds'),
          message: `the ${kind} probe of ${who(ctx)} took ${formatSeconds(p99)} at p99 when measured, ${Math.round((p99 / timeout) * 100)}% of its timeoutSeconds ${timeout}: on a busier node it times out, and a timeout is a failure that ${harm}; set timeoutSeconds: ${suggested}`,
        },
      ];
    });
  },
};

/** The timing rules, in the order `--explain` and the README list them. */
export const timingRules: Rule[] = [
  startupTimeExceedsBudget,
  livenessDelayAsStartup,
  livenessBeforeReadiness,
  timeoutNotBelowPeriod,
  execProbeDefaultTimeout,
  startupExceedsProgressDeadline,
  startupHangUnnoticed,
  hangKillUnnoticed,
  livenessEndsPod,
  sidecarStartupChain,
  startupUnhealthyEvents,
  probeP99NearTimeout,
];
