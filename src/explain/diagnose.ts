/**
 * One cause per container, from its timeline and its (defaulted) spec, with the evidence and a
 * fix naming fields and numbers. The budgets ("the probes allow N s") are check's
 * (src/check/budgets.ts), the grace periods the kubelet's (src/prober/kill-policy.ts): nothing
 * here recomputes a kubelet rule.
 *
 * The order of the questions is the order in which one cause hides another: an image that
 * never came means nothing ran; an OOM kill or a crash is the app's own exit whatever the
 * probes said; a deletion that waits out its grace is about SIGTERM; then the probe kills, read
 * from the kubelet's `Killing` words and the failures before them; then readiness; then
 * restarts whose evidence has gone.
 */
import { probeTiming } from '../api/defaults.js';
import type { Container, IntOrString, Pod, Probe } from '../api/types.js';
import { describeFailureBudget, failureWindow, startupGuard } from '../check/budgets.js';
import { killWaitSeconds, terminationGracePeriodSeconds } from '../prober/kill-policy.js';
import type { ProbeType } from '../prober/types.js';
import { formatGoDuration } from '../util/duration.js';
import { CAUSES, type CauseId, type Statement } from './causes.js';
import { IMAGE_WAITING_REASONS, type FailureKind } from './kubelet-words.js';
import type { ContainerTimeline, FailureGroup, Instance, KillGroup, PodTimeline } from './timeline.js';
import { restartSteps, type RestartStep } from './restarts.js';
import type { Verification } from './verify.js';

/** A change to the container (strategic-merge shape: merged into the container of that name). */
export type ContainerPatch = Partial<Container> & { name: string };

export interface Fix {
  text: string;
  /** The change, when it is one of the container's fields. */
  patch?: ContainerPatch;
}

export interface Diagnosis {
  container: string;
  cause: CauseId;
  title: string;
  /** One paragraph: what happened, in numbers. */
  summary: string;
  evidence: Statement[];
  fix?: Fix;
  /** Other causes seen beside the main one (e.g. SIGTERM ignored on a probe kill). */
  also: { cause: CauseId; summary: string }[];
  /** The numbers the summary quotes, by name, for scripts and tests. */
  numbers: Record<string, number>;
  /** The kills and restarts of the runs explain knows, each with the kubelet rule's branch and why (restart-rule.ts). */
  restarts: RestartStep[];
  /** `--verify`: the fix simulated (or why it cannot be). */
  verify?: Verification | { skipped: string };
}

export interface DiagnoseOptions {
  /** When the pod and events were read (epoch ms): ages of events are measured from it. */
  nowMs: number;
  /** The container's last log lines (`kubectl logs --previous`), when they were read. */
  logs?: ReadonlyMap<string, readonly string[]>;
}

/** Events and status times are whole seconds; the kubelet sees a change up to a relist (1 s) late. */
const SLACK_SECONDS = 2;
/** The API server keeps events this long by default (`--event-ttl`). */
export const EVENT_TTL_SECONDS = 3600;
/** What a start-up fix asks for at least: twice what the probes allowed, never under a minute. */
const MIN_STARTUP_BUDGET_SECONDS = 60;

const ms = (t: string | undefined): number | undefined => {
  if (t === undefined) return undefined;
  const v = Date.parse(t);
  return Number.isNaN(v) ? undefined : v;
};

const seconds = (from: string | undefined, to: string | undefined): number | undefined => {
  const a = ms(from);
  const b = ms(to);
  return a === undefined || b === undefined ? undefined : Math.round((b - a) / 1000);
};

const plural = (n: number, word: string): string => `${n} ${word}${n === 1 ? '' : 's'}`;

const fmt = (s: number): string => formatGoDuration(Math.round(s * 1000));

/** Diagnoses every container of the pod. `pod` must be defaulted (setPodDefaults). */
export function diagnosePod(pod: Pod, timeline: PodTimeline, options: DiagnoseOptions): Diagnosis[] {
  const containers = [...(pod.spec?.initContainers ?? []), ...(pod.spec?.containers ?? [])];
  return timeline.containers.map((t) => {
    const spec = containers.find((c) => c.name === t.name);
    return spec === undefined ? noneFor(t.name) : diagnoseContainer(pod, spec, t, timeline, options);
  });
}

function noneFor(container: string): Diagnosis {
  return { container, cause: 'none', title: CAUSES.none, summary: 'nothing wrong', evidence: [], also: [], numbers: {}, restarts: [] };
}

function make(t: ContainerTimeline, cause: CauseId, summary: string, evidence: Statement[], numbers: Record<string, number>, fix?: Fix): Diagnosis {
  return { container: t.name, cause, title: CAUSES[cause], summary, evidence, ...(fix ? { fix } : {}), also: [], numbers, restarts: [] };
}

export function diagnoseContainer(pod: Pod, c: Container, t: ContainerTimeline, podTimeline: PodTimeline, options: DiagnoseOptions): Diagnosis {
  const evidence: Statement[] = [];
  const d =
    imagePull(t) ??
    oomKilled(pod, c, t) ??
    sigtermOnDeletion(c, t, podTimeline, options) ??
    probeKill(pod, c, t, options) ??
    crash(c, t, options) ??
    readiness(c, t, podTimeline) ??
    unexplained(pod, c, t, options) ??
    healthy(t, evidence);
  const ignored = sigtermOnProbeKill(pod, c, t);
  if (ignored && d.cause !== 'sigterm-ignored') d.also.push(ignored);
  d.evidence.push(...eventGaps(t, options));
  const rule = restartSteps(pod, c, t, options.nowMs);
  d.restarts = rule.steps;
  d.evidence.push(...rule.statements);
  const odd = rule.steps.filter((step) => !step.allowed);
  if (odd.length > 0) d.evidence.push({ text: `the kubelet's restart rule does not explain ${odd.length === 1 ? 'this step' : 'these steps'} (a node with a non-default back-off, or a kubelet under heavy load): ${odd.map((step) => step.why).join('; ')}`, confidence: 'likely', from: 'rule' });
  return d;
}

function healthy(t: ContainerTimeline, evidence: Statement[]): Diagnosis {
  const d = noneFor(t.name);
  d.summary = t.restartCount === 0 ? `running, ${t.ready ? 'Ready' : 'not Ready'}, never restarted` : 'nothing wrong';
  d.evidence = evidence;
  return d;
}

// ————— image —————

function imagePull(t: ContainerTimeline): Diagnosis | undefined {
  const waiting = t.waiting && IMAGE_WAITING_REASONS.has(t.waiting.reason) ? t.waiting : undefined;
  if (!waiting && t.pullFailures.length === 0) return undefined;
  // A pull that failed once and then worked is history, not the cause.
  if (!waiting && t.instances.some((i) => i.from === 'state' && i.state === 'running')) return undefined;
  const failed = t.pullFailures.find((g) => g.message.startsWith('Failed to pull image'));
  const detail = failed?.message ?? waiting?.message ?? waiting?.reason ?? '';
  const attempts = failed?.count ?? 0;
  const evidence: Statement[] = [];
  if (waiting) evidence.push({ text: `waiting: ${waiting.reason}${waiting.message ? ` (${waiting.message})` : ''}`, confidence: 'certain', from: 'status' });
  for (const g of t.pullFailures) evidence.push({ text: `${g.reason} ×${g.count}: ${g.message}`, confidence: 'certain', from: 'events' });
  const notFound = /not found|manifest unknown|NotFound/i.test(detail);
  const auth = /unauthorized|authorization failed|denied|403 Forbidden|401 Unauthorized/i.test(detail);
  const why = notFound ? 'the registry has no such image or tag' : auth ? 'the registry refused the credentials' : 'the pull failed';
  const fix = notFound
    ? `set image to a tag that exists (now ${JSON.stringify(t.image)}): check it with \`crane ls\` or the registry's UI; the kubelet retries with back-off up to 5 min between pulls`
    : auth
      ? `give the pod an imagePullSecrets entry (or the ServiceAccount one) with credentials for the registry of ${JSON.stringify(t.image)}`
      : `make ${JSON.stringify(t.image)} reachable from the node (registry address, network, proxy), or set image to one that is`;
  return make(t, 'image-pull-failure', `${why}: ${detail}${attempts > 0 ? ` (${plural(attempts, 'failed pull')})` : ''}; nothing of the container ever ran, so its probes played no part`, evidence, { pullFailures: attempts }, { text: fix });
}

// ————— the app's own exits —————

function oomKilled(pod: Pod, c: Container, t: ContainerTimeline): Diagnosis | undefined {
  const oom = [...t.instances].reverse().find((i) => i.reason === 'OOMKilled');
  if (!oom) return undefined;
  const limit = c.resources?.limits?.['memory'];
  const ran = seconds(oom.startedAt, oom.finishedAt);
  const evidence: Statement[] = [
    { text: `run ${oom.attempt} ended OOMKilled, exit code ${oom.exitCode ?? '?'}${ran !== undefined ? ` after ${fmt(ran)}` : ''} (${oom.from})`, confidence: 'certain', from: 'status' },
  ];
  if (limit !== undefined) evidence.push({ text: `resources.limits.memory: ${String(limit)}`, confidence: 'certain', from: 'spec' });
  const probeKills = t.kills.filter((k) => k.cause === 'liveness' || k.cause === 'startup').reduce((n, k) => n + k.count, 0);
  if (probeKills === 0) evidence.push({ text: 'no probe killed it: no Killing event of a probe', confidence: t.kills.length === 0 && t.starts === undefined ? 'possible' : 'likely', from: 'events' });
  const bytes = limit === undefined ? undefined : quantityBytes(String(limit));
  const suggested = bytes === undefined ? undefined : formatMi(bytes * 2);
  const fix: Fix =
    suggested === undefined
      ? { text: 'the kernel killed it at the memory limit of its cgroup (the node or the pod): give the container a resources.limits.memory above its peak, or find the leak' }
      : {
          text: `raise resources.limits.memory above the app's peak use (now ${String(limit)}; e.g. ${suggested}, then watch its working set), or make the app use less; the probes are not the cause`,
          patch: { name: c.name, resources: { limits: { memory: suggested }, ...(c.resources?.requests?.['memory'] !== undefined ? {} : {}) } },
        };
  void pod;
  const numbers: Record<string, number> = { restarts: t.restartCount };
  if (oom.exitCode !== undefined) numbers['exitCode'] = oom.exitCode;
  if (bytes !== undefined) numbers['memoryLimitBytes'] = bytes;
  if (ran !== undefined) numbers['ranSeconds'] = ran;
  return make(t, 'oom-killed', `not the probes: run ${oom.attempt} was OOMKilled (exit code ${oom.exitCode ?? 137})${ran !== undefined ? ` ${fmt(ran)} after it started` : ''}${limit !== undefined ? ` at its memory limit ${String(limit)}` : ''}; ${plural(t.restartCount, 'restart')} in all`, evidence, numbers, fix);
}

/** Bytes of a Kubernetes quantity (`64Mi`, `1G`, `128974848`, `129e6`); undefined when unreadable. */
export function quantityBytes(q: string): number | undefined {
  const m = /^(\d+(?:\.\d+)?)(?:e(\d+))?(Ki|Mi|Gi|Ti|Pi|Ei|k|M|G|T|P|E|m)?$/.exec(q.trim());
  if (!m) return undefined;
  const n = Number(m[1]) * 10 ** Number(m[2] ?? 0);
  const unit: Record<string, number> = { Ki: 2 ** 10, Mi: 2 ** 20, Gi: 2 ** 30, Ti: 2 ** 40, Pi: 2 ** 50, Ei: 2 ** 60, k: 1e3, M: 1e6, G: 1e9, T: 1e12, P: 1e15, E: 1e18, m: 1e-3 };
  return Math.round(n * (m[3] === undefined ? 1 : (unit[m[3]] ?? 1)));
}

function formatMi(bytes: number): string {
  return `${Math.ceil(bytes / 2 ** 20)}Mi`;
}

function crash(c: Container, t: ContainerTimeline, options: DiagnoseOptions): Diagnosis | undefined {
  const exited = [...t.instances].reverse().find((i) => i.state === 'terminated' && i.reason !== 'OOMKilled');
  if (!exited) return undefined;
  const probeKilled = t.kills.some((k) => (k.cause === 'liveness' || k.cause === 'startup') && killOf(k, exited));
  if (probeKilled) return undefined;
  const deleted = t.kills.some((k) => k.cause === 'deletion');
  if (deleted && exited.from === 'state') return undefined;
  const code = exited.exitCode ?? 0;
  // An exit 0 of a container that is restarted anyway (restartPolicy Always) is a crash loop too.
  if (code === 0 && t.restartCount === 0) return undefined;
  // Killed by a signal, and no event left to say by whom: a probe kill looks just like this.
  const noEvents = t.starts === undefined && t.kills.length === 0 && t.failures.length === 0;
  if (noEvents && (code === 137 || code === 143)) return undefined;
  const ran = seconds(exited.startedAt, exited.finishedAt);
  const logs = options.logs?.get(t.name) ?? [];
  const evidence: Statement[] = [
    { text: `run ${exited.attempt} exited with code ${code}${exited.signal ? ` (signal ${exited.signal})` : ''}, reason ${exited.reason ?? '?'}${ran !== undefined ? `, after ${fmt(ran)}` : ''} (${exited.from})`, confidence: 'certain', from: 'status' },
  ];
  const probeKills = t.kills.filter((k) => k.cause === 'liveness' || k.cause === 'startup').reduce((n, k) => n + k.count, 0);
  evidence.push(
    probeKills === 0
      ? { text: 'no probe killed it (no Killing event)', confidence: t.starts !== undefined ? 'likely' : 'possible', from: 'events' }
      : { text: `probes killed earlier runs ${plural(probeKills, 'time')}, but not this one`, confidence: 'likely', from: 'events' },
  );
  if (code === 137 || code === 143) evidence.push({ text: `exit code ${code} is ${code - 128 === 9 ? 'SIGKILL' : 'SIGTERM'} from outside the container (not the kubelet: no Killing event for it)`, confidence: 'likely', from: 'rule' });
  if (logs.length > 0) evidence.push({ text: `last lines of its log:\n${logs.map((l) => `    | ${l}`).join('\n')}`, confidence: 'certain', from: 'logs' });
  const numbers: Record<string, number> = { exitCode: code, restarts: t.restartCount };
  if (ran !== undefined) numbers['ranSeconds'] = ran;
  if (t.backOffStepSeconds !== undefined) numbers['backOffSeconds'] = t.backOffStepSeconds;
  const loop = t.waiting?.reason === 'CrashLoopBackOff' ? `; now in CrashLoopBackOff${t.backOffStepSeconds !== undefined ? ` (next start in up to ${fmt(t.backOffStepSeconds)})` : ''}` : '';
  return make(
    t,
    'app-crash',
    `not the probes: the app exited by itself with code ${code}${ran !== undefined ? ` after ${fmt(ran)}` : ''}, ${plural(t.restartCount, 'restart')} in all${loop}`,
    evidence,
    numbers,
    { text: `read why it exits: kubectl logs ${'<pod>'} -c ${c.name} --previous; no probe change helps` },
  );
}

// ————— SIGTERM —————

/** A pod being deleted whose container outlives SIGTERM: it will go at SIGKILL, the grace period after. */
function sigtermOnDeletion(c: Container, t: ContainerTimeline, pod: PodTimeline, options: DiagnoseOptions): Diagnosis | undefined {
  if (pod.deletionTimestamp === undefined) return undefined;
  const stop = t.kills.find((k) => k.cause === 'deletion');
  const grace = pod.deletionGracePeriodSeconds;
  const deadline = ms(pod.deletionTimestamp);
  if (stop === undefined || deadline === undefined || grace === undefined) return undefined;
  const sent = ms(stop.last);
  const current = t.instances.find((i) => i.from === 'state');
  const evidence: Statement[] = [
    { text: `the pod is being deleted with a grace period of ${fmt(grace)} (metadata.deletionTimestamp ${pod.deletionTimestamp})`, confidence: 'certain', from: 'status' },
    { text: `Killing: ${stop.message} at ${stop.last ?? '?'}`, confidence: 'certain', from: 'events' },
  ];
  const numbers: Record<string, number> = { graceSeconds: grace };
  if (current?.state === 'running' && sent !== undefined) {
    const since = Math.round((options.nowMs - sent) / 1000);
    if (since < SLACK_SECONDS) return undefined;
    numbers['runningAfterSigtermSeconds'] = since;
    evidence.push({ text: `still running ${fmt(since)} after SIGTERM`, confidence: 'certain', from: 'status' });
    return make(t, 'sigterm-ignored', `SIGTERM ignored: still running ${fmt(since)} after the kubelet sent it; it will be killed (SIGKILL, exit code 137) at ${pod.deletionTimestamp}, the whole ${fmt(grace)} grace period after`, evidence, numbers, sigtermFix(c, grace));
  }
  if (current?.state === 'terminated' && current.exitCode === 137 && current.finishedAt !== undefined && sent !== undefined) {
    const took = seconds(stop.last, current.finishedAt) ?? 0;
    if (took < grace - SLACK_SECONDS) return undefined;
    numbers['exitCode'] = 137;
    numbers['stopSeconds'] = took;
    return make(t, 'sigterm-ignored', `SIGTERM ignored: killed with SIGKILL (exit code 137) ${fmt(took)} after SIGTERM, the whole ${fmt(grace)} grace period`, evidence, numbers, sigtermFix(c, grace));
  }
  return undefined;
}

function sigtermFix(c: Container, grace: number): Fix {
  const shell = (c.command ?? []).slice(0, 2).join(' ');
  const hint = /^(\/bin\/)?(ba|da)?sh -c$/.test(shell) ? ' (a `sh -c` command runs as PID 1, which ignores SIGTERM unless it traps it: `exec` the app, or `trap … TERM`)' : '';
  return { text: `make the app exit on SIGTERM${hint}; until then every stop takes the whole terminationGracePeriodSeconds (${fmt(grace)}), and a rollout waits that long per pod` };
}

/** A probe kill that waited out the whole grace period: noted beside the probe's cause. */
function sigtermOnProbeKill(pod: Pod, c: Container, t: ContainerTimeline): { cause: CauseId; summary: string } | undefined {
  const last = t.instances.find((i) => i.from === 'lastState');
  if (last?.exitCode !== 137 || last.finishedAt === undefined) return undefined;
  const kill = t.kills.find((k) => (k.cause === 'liveness' || k.cause === 'startup') && killOf(k, last));
  if (!kill) return undefined;
  const grace = killWaitSeconds(pod, c, kill.cause as ProbeType);
  const took = seconds(kill.last, last.finishedAt);
  if (took === undefined || took < grace - SLACK_SECONDS) return undefined;
  return { cause: 'sigterm-ignored', summary: `the ${kill.cause} kill took the whole ${fmt(grace)} grace period (SIGKILL, exit code 137, ${fmt(took)} after SIGTERM): the app ignores SIGTERM` };
}

/** Whether the kill group's last kill is the one that ended `run` (its time between the run's start and end). */
function killOf(k: KillGroup, run: Instance): boolean {
  const at = ms(k.last);
  const start = ms(run.startedAt);
  const end = ms(run.finishedAt);
  if (at === undefined || start === undefined) return false;
  return at >= start - 1000 && (end === undefined || at <= end + 1000);
}

// ————— probe kills —————

interface KillReading {
  kind: 'liveness' | 'startup';
  probe: Probe;
  kills: number;
  /** Seconds from a run's start to its kill, where both are known (the first run, the run before the current one). */
  ages: number[];
  failures: FailureGroup[];
  dominant?: FailureKind;
  failureCount: number;
}

function readKills(c: Container, t: ContainerTimeline): KillReading | undefined {
  const probeKills = t.kills.filter((k): k is KillGroup & { cause: 'liveness' | 'startup' } => k.cause === 'liveness' || k.cause === 'startup');
  if (probeKills.length === 0) return undefined;
  // The kind of the latest kill is what the container suffers from now.
  const latest = [...probeKills].sort((a, b) => (ms(a.last) ?? 0) - (ms(b.last) ?? 0)).at(-1);
  if (!latest) return undefined;
  const kind = latest.cause;
  const probe = kind === 'startup' ? c.startupProbe : c.livenessProbe;
  if (!probe) return undefined;
  const own = probeKills.filter((k) => k.cause === kind);
  const kills = own.reduce((n, k) => n + k.count, 0);
  const ages: number[] = [];
  const first = own.map((k) => k.first).filter((x): x is string => x !== undefined).sort()[0];
  // The first run's age at the first kill: the first Started event to the first Killing.
  if (t.starts?.first !== undefined && first !== undefined && t.unseenInstances + t.instances.length >= 1) {
    const age = seconds(t.starts.first, first);
    if (age !== undefined && age >= 0) ages.push(age);
  }
  const last = t.instances.find((i) => i.from === 'lastState');
  // The run before the current one; when it is the first run too, its age is already counted.
  const same = last?.startedAt !== undefined && t.starts?.first !== undefined && ms(last.startedAt) === ms(t.starts.first);
  if (last && last.startedAt !== undefined && killOf(latest, last) && !same) {
    const age = seconds(last.startedAt, latest.last);
    if (age !== undefined && age >= 0) ages.push(age);
  }
  const failures = t.failures.filter((f) => f.probe === kind && !f.errored);
  const byKind = new Map<FailureKind, number>();
  for (const f of failures) byKind.set(f.kind, (byKind.get(f.kind) ?? 0) + f.count);
  const dominant = [...byKind].sort((a, b) => b[1] - a[1])[0]?.[0];
  const failureCount = failures.reduce((n, f) => n + f.count, 0);
  return { kind, probe, kills, ages, failures, ...(dominant !== undefined ? { dominant } : {}), failureCount };
}

/** The port a probe dials, if it names one. */
function probePort(probe: Probe): IntOrString | undefined {
  return probe.httpGet?.port ?? probe.tcpSocket?.port ?? probe.grpc?.port;
}

/** Whether the probe's port is one the container declares (by number or name); undefined when nothing is declared. */
function portDeclared(c: Container, port: IntOrString | undefined): boolean | undefined {
  const ports = c.ports ?? [];
  if (port === undefined || ports.length === 0) return undefined;
  return ports.some((p) => (typeof port === 'number' ? p.containerPort === port : p.name === port));
}

function describePorts(c: Container): string {
  return (c.ports ?? []).map((p) => `${p.containerPort}${p.name ? ` (${p.name})` : ''}`).join(', ');
}

function where(probe: Probe): string {
  if (probe.httpGet) return `httpGet ${probe.httpGet.path ?? '/'} on port ${String(probe.httpGet.port)}`;
  if (probe.tcpSocket) return `tcpSocket port ${String(probe.tcpSocket.port)}`;
  if (probe.grpc) return `grpc port ${probe.grpc.port}`;
  return `exec ${JSON.stringify((probe.exec?.command ?? []).join(' '))}`;
}

function failuresText(r: KillReading): string {
  if (r.failures.length === 0) return 'no failure message left in the events';
  return r.failures
    .slice()
    .sort((a, b) => b.count - a.count)
    .slice(0, 3)
    .map((f) => `${JSON.stringify(f.output === '' ? '(no output)' : f.output)} ×${f.count}`)
    .join(', ');
}

const FIELD: Record<ProbeType, 'livenessProbe' | 'readinessProbe' | 'startupProbe'> = { liveness: 'livenessProbe', readiness: 'readinessProbe', startup: 'startupProbe' };

function probeKill(pod: Pod, c: Container, t: ContainerTimeline, options: DiagnoseOptions): Diagnosis | undefined {
  void options;
  const r = readKills(c, t);
  if (!r) return undefined;
  // Probe kills in the past, and the last run ended otherwise (its own exit): that exit is the news.
  const last = t.instances.find((i) => i.from === 'lastState');
  const lastKill = Math.max(...t.kills.filter((k) => k.cause === r.kind).map((k) => ms(k.last) ?? 0));
  if (last?.startedAt !== undefined && lastKill < (ms(last.startedAt) ?? 0) - 1000 && last.exitCode !== 137 && last.exitCode !== 143) return undefined;
  const timing = probeTiming(r.probe);
  const guard = startupGuard(c);
  const field = FIELD[r.kind];
  const numbers: Record<string, number> = {
    kills: r.kills,
    restarts: t.restartCount,
    periodSeconds: timing.period,
    failureThreshold: timing.failureThreshold,
    timeoutSeconds: timing.timeout,
  };
  const evidence: Statement[] = [
    { text: `${plural(r.kills, 'kill')} by the ${r.kind} probe (Killing: "Container ${c.name} failed ${r.kind} probe…")`, confidence: 'certain', from: 'events' },
    { text: `${r.kind} probe failures: ${failuresText(r)}`, confidence: r.failures.length > 0 ? 'certain' : 'possible', from: 'events' },
  ];
  if (r.ages.length > 0) {
    numbers['killAgeSeconds'] = Math.max(...r.ages);
    evidence.push({ text: `killed ${r.ages.map((a) => fmt(a)).join(' and ')} after ${r.ages.length === 1 ? 'its start' : 'their starts'} (Started/Killing events, lastState.startedAt)`, confidence: 'likely', from: 'events' });
  }
  // From the start, with failing probes failing at once or at their timeout: what the probes allow a run that never answers.
  const mode = r.dominant === 'timeout' ? 'timeout' : 'refused';
  const fromStart = failureWindow(r.probe, mode, true).latestSeconds;
  const budget = r.kind === 'startup' || !c.startupProbe ? Math.max(fromStart, mode === 'refused' ? (guard?.budgetSeconds ?? 0) : 0) : fromStart;
  numbers['budgetSeconds'] = budget;
  const budgetText = `${fmt(budget)} (${describeFailureBudget(r.kind, r.probe, true, mode)})`;
  // Killed at its first chance in every run whose age is known: no probe ever passed there.
  const neverSucceeded = r.ages.length > 0 ? r.ages.every((a) => a <= budget + SLACK_SECONDS) : undefined;
  const port = probePort(r.probe);
  const declared = portDeclared(c, port);
  const allFailures = r.failureCount;

  // A path that is not there: 404 from the app.
  const notFound = r.failures.filter((f) => f.statusCode === 404).reduce((n, f) => n + f.count, 0);
  if (notFound > 0 && notFound === allFailures) {
    numbers['notFound'] = notFound;
    return make(
      t,
      'probe-wrong-target',
      `the ${r.kind} probe asks for ${r.probe.httpGet?.path ?? '/'} and the app answers 404 every time (${notFound} failures, ${plural(r.kills, 'kill')}): it listens, but not at that path`,
      evidence,
      numbers,
      { text: `set ${field}.httpGet.path to the app's health endpoint (the app answers 404 at ${r.probe.httpGet?.path ?? '/'} on port ${String(port)})` },
    );
  }
  if (r.dominant === 'refused' && declared === false) {
    const ports = describePorts(c);
    const first = c.ports?.[0];
    evidence.push({ text: `the probe dials port ${String(port)}; the container declares ${ports}`, confidence: 'certain', from: 'spec' });
    const to = first?.containerPort;
    return make(
      t,
      'probe-wrong-target',
      `the ${r.kind} probe dials port ${String(port)}, where nothing listens (connection refused every time, ${plural(r.kills, 'kill')}); the container declares containerPort ${ports}`,
      evidence,
      numbers,
      to === undefined ? { text: `point ${field} at the port the app listens on` } : { text: `set ${field}.${r.probe.httpGet ? 'httpGet' : r.probe.tcpSocket ? 'tcpSocket' : 'grpc'}.port to ${to}, the port the container declares`, patch: portPatch(c, r.kind, r.probe, to) },
    );
  }
  if (r.kind === 'liveness' && c.startupProbe && r.dominant === 'refused') {
    evidence.push({ text: 'the startup probe had passed (liveness runs only after it), so the app was up', confidence: 'likely', from: 'rule' });
    return make(
      t,
      'probe-wrong-target',
      `the liveness probe finds nothing listening at ${where(r.probe)} although the startup probe passed: ${plural(r.kills, 'kill')}`,
      evidence,
      numbers,
      { text: `point livenessProbe at what the startupProbe checks (${where(c.startupProbe)})` },
    );
  }
  if (r.kind === 'startup') {
    const target = startupTarget(budget);
    const fixThreshold = Math.ceil(target / timing.period);
    numbers['suggestedFailureThreshold'] = fixThreshold;
    numbers['suggestedBudgetSeconds'] = fixThreshold * timing.period;
    return make(
      t,
      'startup-probe-too-short',
      `killed ${r.kills === 1 ? 'once' : `${r.kills} times`} by its startup probe${agesText(r)}; the startup probe allows ${budgetText} and the app never passed it before the kill → it needs more than ${fmt(budget)} to start`,
      evidence,
      numbers,
      {
        text: `raise startupProbe.failureThreshold to ${fixThreshold} (failureThreshold × periodSeconds = ${fixThreshold} × ${fmt(timing.period)} = ${fmt(fixThreshold * timing.period)} ≥ ${fmt(target)}); liveness stays as it is, since it only starts after the startup probe passes`,
        patch: { name: c.name, startupProbe: { failureThreshold: fixThreshold } },
      },
    );
  }
  if (r.dominant === 'timeout') {
    // A streak of failureThreshold timeouts kills; beyond the kills' own, failureThreshold more
    // (not an ongoing streak) mean some streak broke off: timeouts come and go.
    const isolated = allFailures - r.kills * timing.failureThreshold >= timing.failureThreshold;
    if (neverSucceeded === true || isolated) {
      const suggested = suggestedTimeout(timing.timeout);
      numbers['suggestedTimeoutSeconds'] = suggested;
      const how = neverSucceeded === true ? 'from its first probe on every run, so the app accepts connections but answers after more than' : `${allFailures} times (more than the ${r.kills * timing.failureThreshold} the kills needed: timeouts come and go), so the app answers, at times after more than`;
      return make(
        t,
        'liveness-timeout',
        `the liveness probe timed out ${how} timeoutSeconds ${timing.timeout}; ${plural(r.kills, 'kill')}`,
        evidence,
        numbers,
        {
          text: `raise livenessProbe.timeoutSeconds from ${timing.timeout} to ${suggested} (the probe's answer time under load, with room); ${timing.timeout <= 1 ? 'timeoutSeconds 1 is the default and rarely enough under load; ' : ''}also check what the app does while it answers slowly`,
          patch: { name: c.name, livenessProbe: { timeoutSeconds: suggested } },
        },
      );
    }
    const ran = r.ages.length > 0 ? Math.max(...r.ages) : undefined;
    const afterHang = failureWindow(r.probe, 'timeout', false);
    numbers['hangToKillSeconds'] = afterHang.latestSeconds;
    return make(
      t,
      'hang',
      `the app hung: its liveness probe passed${ran !== undefined ? ` for about ${fmt(Math.max(0, ran - afterHang.earliestSeconds))}` : ' for a while'} (longer than the ${fmt(budget)} a run that never answers would get), then timed out ${timing.failureThreshold} times in a row until the kill (${plural(r.kills, 'kill')}); the probe did its job`,
      evidence,
      numbers,
      { text: `find why the app stops answering (a deadlock, an exhausted pool); the probe restarts it ${fmt(afterHang.earliestSeconds)}–${fmt(afterHang.latestSeconds)} after a hang. A preStop hook that dumps its threads would keep evidence of the next one` },
    );
  }
  if (r.kind === 'liveness' && !c.startupProbe && neverSucceeded !== false) {
    const target = startupTarget(budget);
    const threshold = Math.ceil(target / timing.period);
    numbers['suggestedFailureThreshold'] = threshold;
    numbers['suggestedBudgetSeconds'] = threshold * timing.period;
    const startup: Probe = { ...handlerOf(r.probe), periodSeconds: timing.period, timeoutSeconds: timing.timeout, failureThreshold: threshold };
    const sure = neverSucceeded === true ? '' : ' (no run\'s age at its kill is left in the events: a guess from the failures alone)';
    if (neverSucceeded === undefined) evidence.push({ text: 'how long after its start each run was killed is not known', confidence: 'possible', from: 'events' });
    return make(
      t,
      'slow-start-liveness',
      `killed ${r.kills === 1 ? 'once' : `${r.kills} times`} by its liveness probe${agesText(r)}; the probes allow ${budgetText} and the app never answered before the kill → it needs more than ${fmt(budget)} to start${sure}`,
      evidence,
      numbers,
      {
        text: `add a startupProbe (the liveness probe's check) with failureThreshold × periodSeconds ≥ ${fmt(target)}: failureThreshold ${threshold}, periodSeconds ${timing.period}; liveness then starts only once the app is up`,
        patch: { name: c.name, startupProbe: startup },
      },
    );
  }
  // It had passed its probe, then said it was unhealthy (or stopped listening).
  const said = r.dominant === 'refused' ? 'stopped listening (connection refused)' : r.dominant === 'http-status' ? `answered ${[...new Set(r.failures.map((f) => f.statusCode))].join(', ')}` : 'reported a failure';
  return make(
    t,
    'liveness-unhealthy',
    `the app ${said} to its liveness probe after having passed it${r.ages.length > 0 ? ` (killed ${r.ages.map((a) => fmt(a)).join(' and ')} after its start, later than the ${fmt(budget)} a run that never answers gets)` : ''}; ${plural(r.kills, 'kill')}: the probe did its job`,
    evidence,
    numbers,
    { text: `find why the app reports itself unhealthy (${failuresText(r)}); if its health check depends on something outside it (a database, another service), take that out of the liveness check — a restart does not fix a dependency` },
  );
}

function agesText(r: KillReading): string {
  if (r.ages.length === 0) return '';
  return r.kills === 1 ? `, ${fmt(Math.max(...r.ages))} after its start` : `, each ~${fmt(Math.max(...r.ages))} after start`;
}

/** What a start-up fix asks for: twice what the probes allowed, at least a minute. */
function startupTarget(budget: number): number {
  return Math.max(MIN_STARTUP_BUDGET_SECONDS, 2 * budget);
}

/**
 * A timeout with room: five times the old one, at least 5 s. A timeout past the period is
 * allowed (failing probes then follow each other at the timeout), so the period does not cap it.
 */
function suggestedTimeout(timeout: number): number {
  return Math.max(5, timeout * 5);
}

/** The probe's handler alone (which check it runs), for a new probe doing the same. */
function handlerOf(probe: Probe): Probe {
  if (probe.httpGet) return { httpGet: probe.httpGet };
  if (probe.tcpSocket) return { tcpSocket: probe.tcpSocket };
  if (probe.grpc) return { grpc: probe.grpc };
  return probe.exec ? { exec: probe.exec } : {};
}

function portPatch(c: Container, kind: ProbeType, probe: Probe, port: number): ContainerPatch {
  const field = FIELD[kind];
  if (probe.httpGet) return { name: c.name, [field]: { httpGet: { port } } };
  if (probe.tcpSocket) return { name: c.name, [field]: { tcpSocket: { port } } };
  return { name: c.name, [field]: { grpc: { port } } };
}

// ————— readiness —————

function readiness(c: Container, t: ContainerTimeline, pod: PodTimeline): Diagnosis | undefined {
  const probe = c.readinessProbe;
  const failures = t.failures.filter((f) => f.probe === 'readiness' && !f.errored);
  if (!probe || failures.length === 0) return undefined;
  const timing = probeTiming(probe);
  const count = failures.reduce((n, f) => n + f.count, 0);
  const first = failures.map((f) => f.first).filter((x): x is string => x !== undefined).sort()[0];
  const last = failures.map((f) => f.last).filter((x): x is string => x !== undefined).sort().at(-1);
  const span = seconds(first, last) ?? 0;
  const byKind = new Map<FailureKind, number>();
  for (const f of failures) byKind.set(f.kind, (byKind.get(f.kind) ?? 0) + f.count);
  const dominant = [...byKind].sort((a, b) => b[1] - a[1])[0]?.[0];
  const messages = failures.slice().sort((a, b) => b.count - a.count).slice(0, 3).map((f) => `${JSON.stringify(f.output)} ×${f.count}`).join(', ');
  const evidence: Statement[] = [{ text: `readiness probe failures: ${messages}, from ${first ?? '?'} to ${last ?? '?'}`, confidence: 'certain', from: 'events' }];
  const current = t.instances.find((i) => i.from === 'state');
  const runningSince = current?.state === 'running' ? current.startedAt : undefined;
  // Ready now, and failures in this run: it left service and came back at least once.
  const failedThisRun = runningSince !== undefined && last !== undefined && (ms(last) ?? 0) >= (ms(runningSince) ?? 0);
  const numbers: Record<string, number> = { failures: count, spanSeconds: span, periodSeconds: timing.period, failureThreshold: timing.failureThreshold, successThreshold: timing.successThreshold };
  // Probes run every period: far fewer failures than probes over the span means the others passed.
  const probesInSpan = Math.floor(span / timing.period) + 1;
  const passedBetween = count + timing.successThreshold + 1 < probesInSpan;
  if (passedBetween) {
    numbers['probesInSpan'] = probesInSpan;
    evidence.push({ text: `${count} failures out of about ${probesInSpan} probes over ${fmt(span)} (one every ${fmt(timing.period)}): the others passed`, confidence: 'likely', from: 'rule' });
  }
  if ((t.ready && failedThisRun) || (passedBetween && t.restartCount === 0)) {
    // Each trip out of service takes failureThreshold failures in a row: at most this many trips.
    const maxTrips = Math.max(1, Math.floor(count / timing.failureThreshold));
    numbers['maxNotReadyTimes'] = maxTrips;
    if (t.ready && failedThisRun) evidence.push({ text: `Ready now${pod.ready?.lastTransitionTime ? ` (pod Ready since ${pod.ready.lastTransitionTime})` : ''}, with readiness failures in this run: it left service and came back`, confidence: 'certain', from: 'status' });
    evidence.push({ text: `each time out of service takes ${timing.failureThreshold} failures in a row: at most ${maxTrips} times out over ${fmt(span)} (the kubelet records no event when it comes back, so the exact count is not in the API)`, confidence: 'likely', from: 'rule' });
    const timeouts = dominant === 'timeout';
    const suggested = suggestedTimeout(timing.timeout);
    if (timeouts) numbers['suggestedTimeoutSeconds'] = suggested;
    return make(
      t,
      'readiness-flapping',
      `readiness flapping: the readiness probe failed ${count} times over ${fmt(span)} (${messages})${t.ready ? ' and the container is Ready again' : ', passing in between'} — in and out of service up to ${maxTrips} times, without a restart`,
      evidence,
      numbers,
      timeouts
        ? { text: `the readiness probe times out: raise readinessProbe.timeoutSeconds from ${timing.timeout} to ${suggested}`, patch: { name: c.name, readinessProbe: { timeoutSeconds: suggested } } }
        : {
            text: `the app itself says it is not ready (${messages}): find why; to ride out blips shorter than ${fmt(2 * timing.failureThreshold * timing.period)}, raise readinessProbe.failureThreshold from ${timing.failureThreshold} to ${timing.failureThreshold * 2}`,
            patch: { name: c.name, readinessProbe: { failureThreshold: timing.failureThreshold * 2 } },
          },
    );
  }
  if (!t.ready) {
    const port = probePort(probe);
    const declared = portDeclared(c, port);
    if (dominant === 'refused' && declared === false && c.ports?.[0]) {
      evidence.push({ text: `the probe dials port ${String(port)}; the container declares ${describePorts(c)}`, confidence: 'certain', from: 'spec' });
      return make(t, 'probe-wrong-target', `never Ready: the readiness probe dials port ${String(port)}, where nothing listens (connection refused ×${count}); the container declares containerPort ${describePorts(c)}`, evidence, numbers, {
        text: `set readinessProbe.${probe.httpGet ? 'httpGet' : 'tcpSocket'}.port to ${c.ports[0].containerPort}`,
        patch: portPatch(c, 'readiness', probe, c.ports[0].containerPort),
      });
    }
    const notFound = failures.filter((f) => f.statusCode === 404).reduce((n, f) => n + f.count, 0);
    if (notFound === count) {
      return make(t, 'probe-wrong-target', `never Ready: the readiness probe asks for ${probe.httpGet?.path ?? '/'} and the app answers 404 every time (${count} failures)`, evidence, numbers, { text: `set readinessProbe.httpGet.path to the app's readiness endpoint` });
    }
    return make(t, 'readiness-failing', `not Ready: the readiness probe failed ${count} times over ${fmt(span)} (${messages})`, evidence, numbers, {
      text: dominant === 'timeout' ? `the readiness probe times out: raise readinessProbe.timeoutSeconds from ${timing.timeout}` : `the app says it is not ready (${messages}): its readiness check depends on something that is not there`,
    });
  }
  return undefined;
}

// ————— restarts whose evidence is gone —————

function unexplained(pod: Pod, c: Container, t: ContainerTimeline, options: DiagnoseOptions): Diagnosis | undefined {
  if (t.restartCount === 0) return undefined;
  const evidence: Statement[] = [{ text: `restartCount ${t.restartCount}`, confidence: 'certain', from: 'status' }];
  const last = t.instances.find((i) => i.from === 'lastState');
  const numbers: Record<string, number> = { restarts: t.restartCount };
  if (last) {
    const ran = seconds(last.startedAt, last.finishedAt);
    evidence.push({ text: `the run before the current one ended with exit code ${last.exitCode ?? '?'} (${last.reason ?? '?'})${ran !== undefined ? ` after ${fmt(ran)}` : ''}, at ${last.finishedAt ?? '?'}`, confidence: 'certain', from: 'status' });
    if (last.exitCode === 137 || last.exitCode === 143) {
      const kind = c.livenessProbe ? 'liveness' : c.startupProbe ? 'startup' : undefined;
      const grace = kind === undefined ? undefined : terminationGracePeriodSeconds(pod, c, kind);
      evidence.push({
        text: `exit code ${last.exitCode} is ${last.exitCode === 137 ? 'SIGKILL' : 'SIGTERM'}: a kill from outside the app — ${kind ? `a ${kind} probe kill (grace ${fmt(grace ?? 0)}), ` : ''}an eviction or a deletion; the events that would say which are gone`,
        confidence: 'possible',
        from: 'rule',
      });
    }
    if (ran !== undefined) numbers['ranSeconds'] = ran;
  }
  void options;
  return make(t, 'not-enough-information', `restarted ${plural(t.restartCount, 'time')}, but the events that would say why are gone (the API server keeps events ${fmt(EVENT_TTL_SECONDS)}) and the status keeps only the last exit`, evidence, numbers, {
    text: 'run explain again right after the next restart, or keep events longer (kube-apiserver --event-ttl, an event exporter)',
  });
}

/** What the events cannot tell: expired or spam-filtered kills and starts. */
function eventGaps(t: ContainerTimeline, options: DiagnoseOptions): Statement[] {
  const out: Statement[] = [];
  const starts = t.starts?.count ?? 0;
  const expected = t.restartCount + (t.instances.some((i) => i.from === 'state' && i.state !== 'waiting') ? 1 : 0);
  if (t.restartCount > 0 && starts < expected) {
    const missing = expected - starts;
    const oldest = t.starts?.first;
    const age = oldest === undefined ? undefined : Math.round((options.nowMs - (ms(oldest) ?? options.nowMs)) / 1000);
    const why =
      starts === 0
        ? `no Started event is left: events expire after ${fmt(EVENT_TTL_SECONDS)} (kube-apiserver --event-ttl)`
        : age !== undefined && age >= EVENT_TTL_SECONDS - 60
          ? `the oldest left is ${fmt(age)} old: the earlier ones expired`
          : `the kubelet's event spam filter (25 events per pod, then one per 5 min) may have dropped some`;
    out.push({ text: `${plural(missing, 'start')} of the ${expected} that restartCount implies ${missing === 1 ? 'has' : 'have'} no event; ${why}; what is said of ${missing === 1 ? 'it' : 'them'} comes from restartCount and lastState only`, confidence: 'certain', from: 'events' });
  }
  if (t.unseenInstances > 0) {
    out.push({ text: `${plural(t.unseenInstances, 'earlier run')} known only by restartCount: the status keeps no exit code or times for ${t.unseenInstances === 1 ? 'it' : 'them'}`, confidence: 'certain', from: 'status' });
  }
  return out;
}
