/**
 * "Measure, then check": what `probelet run` measured about every container, from the
 * flight recorder's rings, printed when the run ends — for a person, and as the
 * `probelet check … --startup-time NAME=12.4s` line that hands the figures to `check`.
 *
 * Times to the first startup/readiness success count from the start of the container that
 * reached it (the latest start before that success: the figure `check --startup-time`
 * compares with the probes' budget), else from when the run started the pods. Probe durations
 * are over the attempts the ring still holds (the last 100 by default).
 */
import type { Pod } from '../../api/types.js';
import type { ProbeHandlerKind, ProbeHistory } from '../../prober/recorder.js';
import type { ProbeType } from '../../prober/types.js';

export interface ProbeMeasurement {
  probeType: ProbeType;
  handler: ProbeHandlerKind;
  timeoutSeconds: number;
  periodSeconds: number;
  /** Attempts over the whole run. */
  attempts: number;
  /** Attempts whose verdict was failure, and attempts that errored (whole run). */
  failures: number;
  errored: number;
  /** Probe duration percentiles (ms) over the `sampled` attempts the ring still holds. */
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
  sampled: number;
}

export interface ContainerMeasurement {
  pod: string;
  namespace: string;
  container: string;
  /** Seconds from the container's start to the first startup-probe success. */
  startedAfterSeconds?: number;
  /** Seconds from the container's start to the first readiness-probe success. */
  readyAfterSeconds?: number;
  probes: ProbeMeasurement[];
}

/**
 * The `{"type":"measurements",…}` line of `--output json`: `since` (when the pods were
 * started, RFC 3339), `containers` (above) and `check` (the suggested command).
 */
export interface MeasurementsLine {
  type: 'measurements';
  since: string;
  containers: ContainerMeasurement[];
  check: string;
}

const KIND_ORDER: readonly ProbeType[] = ['startup', 'readiness', 'liveness'];

/** When the container `container` of pod `podUID` last started at or before `at` (epoch ms), if known. */
export type ContainerStartOf = (podUID: string, container: string, at: number) => number | undefined;

/**
 * Container starts as the pods' statuses tell them (the current and the last instance,
 * `startedAt` to the second, as the API has it): the latest at or before `at`.
 */
export function containerStartsOf(pods: readonly Pod[]): ContainerStartOf {
  const starts = new Map<string, number[]>();
  for (const pod of pods) {
    const statuses = [...(pod.status?.initContainerStatuses ?? []), ...(pod.status?.containerStatuses ?? [])];
    for (const cs of statuses) {
      const times = [cs.state?.running?.startedAt, cs.state?.terminated?.startedAt, cs.lastState?.terminated?.startedAt]
        .filter((t): t is string => typeof t === 'string')
        .map((t) => Date.parse(t))
        .filter((t) => !Number.isNaN(t));
      starts.set(`${pod.metadata?.uid ?? ''}\u0000${cs.name}`, times);
    }
  }
  return (podUID, container, at) => {
    const before = (starts.get(`${podUID}\u0000${container}`) ?? []).filter((t) => t <= at);
    return before.length > 0 ? Math.max(...before) : undefined;
  };
}

export function measure(histories: readonly ProbeHistory[], since: number, startOf: ContainerStartOf = () => undefined): ContainerMeasurement[] {
  const byContainer = new Map<string, ContainerMeasurement>();
  for (const h of histories) {
    const key = `${h.podUID}\u0000${h.container}`;
    let m = byContainer.get(key);
    if (m === undefined) {
      m = { pod: h.pod, namespace: h.namespace, container: h.container, probes: [] };
      byContainer.set(key, m);
    }
    if (h.firstSuccessAt !== undefined) {
      const from = startOf(h.podUID, h.container, h.firstSuccessAt) ?? since;
      const seconds = round1(Math.max(0, h.firstSuccessAt - from) / 1000);
      if (h.probeType === 'startup') m.startedAfterSeconds = seconds;
      if (h.probeType === 'readiness') m.readyAfterSeconds = seconds;
    }
    const durations = h.attempts.filter((a) => !a.errored).map((a) => a.durationMs).sort((a, b) => a - b);
    m.probes.push({
      probeType: h.probeType,
      handler: h.handler,
      timeoutSeconds: h.timeoutSeconds,
      periodSeconds: h.periodSeconds,
      attempts: h.total,
      failures: h.failures,
      errored: h.errored,
      p50Ms: percentile(durations, 0.5),
      p99Ms: percentile(durations, 0.99),
      maxMs: durations.at(-1) ?? 0,
      sampled: durations.length,
    });
  }
  for (const m of byContainer.values()) m.probes.sort((a, b) => KIND_ORDER.indexOf(a.probeType) - KIND_ORDER.indexOf(b.probeType));
  return [...byContainer.values()];
}

/**
 * `probelet check FILE… --startup-time NAME=12.4s --probe-p99 NAME.liveness=0.02s …`: a start-up flag per container that reached
 * startup (or, without a startup probe, readiness) success and a p99 flag per probe that ran; NAME is the container name, or
 * `pod/container` when two pods have a container of that name.
 */
export function checkCommand(files: readonly string[], measurements: readonly ContainerMeasurement[]): string {
  const counts = new Map<string, number>();
  for (const m of measurements) counts.set(m.container, (counts.get(m.container) ?? 0) + 1);
  const flags: string[] = [];
  for (const m of measurements) {
    const name = (counts.get(m.container) ?? 0) > 1 ? `${m.pod}/${m.container}` : m.container;
    const seconds = m.startedAfterSeconds ?? m.readyAfterSeconds;
    if (seconds !== undefined) flags.push(`--startup-time ${shellWord(`${name}=${seconds}s`)}`);
    // check warns when a measured p99 is within 20 % of the probe's timeout.
    for (const p of m.probes) if (p.sampled > 0) flags.push(`--probe-p99 ${shellWord(`${name}.${p.probeType}=${formatP99(p.p99Ms)}`)}`);
  }
  return ['probelet check', ...files.map(shellWord), ...flags].join(' ');
}

/** A p99 to the millisecond, as `check`'s duration flags read it: `12ms`, `1.25s`. */
function formatP99(ms: number): string {
  const whole = Math.round(ms);
  return whole < 1000 ? `${whole}ms` : `${whole / 1000}s`;
}

/** The end-of-run report for a person. */
export function formatMeasurements(measurements: readonly ContainerMeasurement[], check: string): string {
  if (measurements.length === 0) return 'Measured: no probe ran.\n';
  const lines = ["Measured (times from the container's start; durations over the last recorded attempts):"];
  for (const m of measurements) {
    const milestones = [
      m.startedAfterSeconds !== undefined ? `started after ${m.startedAfterSeconds}s` : undefined,
      m.readyAfterSeconds !== undefined ? `ready after ${m.readyAfterSeconds}s` : undefined,
    ].filter((x) => x !== undefined);
    lines.push(`  ${m.pod}/${m.container}${milestones.length > 0 ? `: ${milestones.join(', ')}` : ''}`);
    for (const p of m.probes) {
      const failed = p.failures + p.errored;
      lines.push(
        `    ${p.probeType.padEnd(9)} ${p.handler.padEnd(9)} p50 ${formatMs(p.p50Ms)}  p99 ${formatMs(p.p99Ms)}  timeout ${p.timeoutSeconds}s  ` +
          `${p.attempts} probe${p.attempts === 1 ? '' : 's'}, ${failed} failed${p.errored > 0 ? ` (${p.errored} errored)` : ''}`,
      );
    }
  }
  lines.push('Check the manifests against these figures:', `  ${check}`);
  return `${lines.join('\n')}\n`;
}

function percentile(sorted: readonly number[], q: number): number {
  if (sorted.length === 0) return 0;
  return sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)] ?? 0;
}

function round1(n: number): number {
  return Math.round(n * 10) / 10;
}

function formatMs(ms: number): string {
  return ms >= 1000 ? `${round1(ms / 1000)}s` : `${Math.round(ms)}ms`;
}

/** Quoted for a POSIX shell only when it needs to be. */
function shellWord(word: string): string {
  return /^[\w./=:@%+-]+$/.test(word) ? word : `'${word.replaceAll("'", "'\\''")}'`;
}
