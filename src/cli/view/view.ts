/**
 * What `kubectl get pods` shows for a pod (NAME READY STATUS RESTARTS AGE), computed the
 * way kubectl's `printPod` computes it, so that `probelet run` reads like the cluster
 * will: users learn `CrashLoopBackOff`, `Init:0/1` or `Terminating` here first.
 */
import type { ContainerStatus, Event, Pod } from '../../api/types.js';
import { isRestartableInitContainer } from '../../kubelet/conditions.js';
import { containerOfFieldPath, formatEvent, humanDuration } from '../../kubelet/events.js';

/** The facts behind one row, before anything time-dependent is rendered. */
export interface PodSummary {
  name: string;
  /** Ready containers: regular ones, plus started sidecars (restartable init containers). */
  ready: number;
  /** Regular containers plus sidecars, as kubectl counts them since sidecars exist. */
  total: number;
  status: string;
  restarts: number;
  /** When the newest restart counted in `restarts` happened (the previous instance's finish). */
  lastRestartMs?: number;
  createdMs?: number;
}

/** kubectl's `printPod` (pkg/printers/internalversion), minus the node-lost cases that cannot happen locally. */
export function summarizePod(pod: Pod): PodSummary {
  const spec = pod.spec;
  const status = pod.status ?? {};
  const initSpecs = new Map((spec?.initContainers ?? []).map((c) => [c.name, c]));
  const isSidecar = (name: string): boolean => {
    const c = initSpecs.get(name);
    return c !== undefined && isRestartableInitContainer(c);
  };
  let total = spec?.containers?.length ?? 0;
  for (const c of initSpecs.values()) if (isRestartableInitContainer(c)) total++;

  let reason = status.reason || status.phase || '';
  let ready = 0;
  let restarts = 0;
  let lastRestart: number | undefined;
  let sidecarRestarts = 0;
  let lastSidecarRestart: number | undefined;

  const initStatuses = status.initContainerStatuses ?? [];
  let initializing = false;
  for (const [i, c] of initStatuses.entries()) {
    restarts += c.restartCount;
    lastRestart = later(lastRestart, lastFinished(c));
    if (isSidecar(c.name)) {
      sidecarRestarts += c.restartCount;
      lastSidecarRestart = later(lastSidecarRestart, lastFinished(c));
    }
    const terminated = c.state?.terminated;
    const waiting = c.state?.waiting;
    if (terminated && terminated.exitCode === 0) continue;
    if (isSidecar(c.name) && c.started === true) {
      if (c.ready) ready++;
      continue;
    }
    if (terminated) {
      reason = terminated.reason
        ? `Init:${terminated.reason}`
        : terminated.signal
          ? `Init:Signal:${terminated.signal}`
          : `Init:ExitCode:${terminated.exitCode}`;
    } else if (waiting?.reason && waiting.reason !== 'PodInitializing') {
      reason = `Init:${waiting.reason}`;
    } else {
      reason = `Init:${i}/${spec?.initContainers?.length ?? 0}`;
    }
    initializing = true;
    break;
  }

  if (!initializing || hasTrueCondition(pod, 'Initialized')) {
    restarts = sidecarRestarts;
    lastRestart = lastSidecarRestart;
    let hasRunning = false;
    const statuses = status.containerStatuses ?? [];
    for (let i = statuses.length - 1; i >= 0; i--) {
      const c = statuses[i];
      if (!c) continue;
      restarts += c.restartCount;
      lastRestart = later(lastRestart, lastFinished(c));
      const terminated = c.state?.terminated;
      if (c.state?.waiting?.reason) reason = c.state.waiting.reason;
      else if (terminated?.reason) reason = terminated.reason;
      else if (terminated) reason = terminated.signal ? `Signal:${terminated.signal}` : `ExitCode:${terminated.exitCode}`;
      else if (c.ready && c.state?.running) {
        hasRunning = true;
        ready++;
      }
    }
    // A container that completed while another still runs does not make the pod "Completed".
    if (reason === 'Completed' && hasRunning) reason = hasTrueCondition(pod, 'Ready') ? 'Running' : 'NotReady';
  }

  const phase = status.phase;
  if (pod.metadata?.deletionTimestamp && phase !== 'Succeeded' && phase !== 'Failed') reason = 'Terminating';

  const summary: PodSummary = { name: pod.metadata?.name ?? '', ready, total, status: reason, restarts };
  if (lastRestart !== undefined) summary.lastRestartMs = lastRestart;
  const created = parseTime(pod.metadata?.creationTimestamp);
  if (created !== undefined) summary.createdMs = created;
  return summary;
}

/** The row's cells as kubectl prints them at `nowMs`: `RESTARTS` as `2 (15s ago)`, `AGE` as `3m5s`. */
export function podRowCells(s: PodSummary, nowMs: number): [string, string, string, string, string] {
  const restarts =
    s.restarts !== 0 && s.lastRestartMs !== undefined ? `${s.restarts} (${humanDuration(nowMs - s.lastRestartMs)} ago)` : String(s.restarts);
  const age = s.createdMs === undefined ? '<unknown>' : humanDuration(nowMs - s.createdMs);
  return [s.name, `${s.ready}/${s.total}`, s.status, restarts, age];
}

export const POD_COLUMNS = ['NAME', 'READY', 'STATUS', 'RESTARTS', 'AGE'] as const;

/**
 * For a table streamed row by row under a header printed first (`kubectl get pods -w`): the
 * longest values READY, STATUS and RESTARTS commonly take — `ContainerCreating`, every pod's
 * first status; a two-digit restart count minutes ago — so that rows line up under the
 * header. A longer one (`Init:CrashLoopBackOff`) pushes the rest of its own row only.
 */
const STREAMED_SAMPLES = ['READY', 'ContainerCreating', '10 (4m50s ago)'] as const;

/** The minimum widths of a streamed table's columns (see {@link formatRow}) for pods named `podNames`. */
export function streamedWidths(podNames: readonly string[]): number[] {
  return [Math.max(POD_COLUMNS[0].length, ...podNames.map((n) => n.length)), ...STREAMED_SAMPLES.map((s) => s.length)];
}

/**
 * Pads cells into columns three spaces apart (kubectl's tabwriter padding). `minWidths`
 * keeps streamed rows aligned with a header printed before their values were known.
 */
export function formatRow(cells: readonly string[], minWidths: readonly number[] = []): string {
  return cells
    .map((cell, i) => (i === cells.length - 1 ? cell : cell.padEnd(Math.max(minWidths[i] ?? 0, cell.length) + 3)))
    .join('');
}

/** Lays out a whole table: every column as wide as its widest cell. */
export function formatTable(rows: readonly (readonly string[])[]): string[] {
  const widths: number[] = [];
  for (const row of rows) row.forEach((cell, i) => (widths[i] = Math.max(widths[i] ?? 0, cell.length)));
  return rows.map((row) => formatRow(row, widths));
}

/**
 * Which object an event is about, in the fieldPath style `kubectl describe` shows:
 * `pod/demo` or `pod/demo{app}` for a container's event (several containers probe at once).
 */
export function eventObject(e: Event): string {
  const name = `pod/${e.involvedObject.name ?? ''}`;
  const container = containerOfFieldPath(e.involvedObject.fieldPath);
  return container === undefined ? name : `${name}{${container}}`;
}

/**
 * One event as one line: the object, then `kubectl describe`'s columns. Line breaks in the
 * message (an exec probe's output) are folded, so one event never spans several lines.
 */
export function eventLine(e: Event, nowMs: number): string {
  return foldLineBreaks(`${eventObject(e)}  ${formatEvent(e, nowMs)}`);
}

/**
 * An event in two parts, for a view too narrow for {@link eventLine}: the object and the
 * columns before the message (`pod/demo{app}  Warning  Unhealthy  20s (x6 over 33s)  kubelet`),
 * and the message, its line breaks folded.
 */
export function eventParts(e: Event, nowMs: number): { head: string; message: string } {
  return { head: foldLineBreaks(`${eventObject(e)}  ${formatEvent({ ...e, message: '' }, nowMs)}`).trimEnd(), message: foldLineBreaks((e.message ?? '').trim()) };
}

// Each blank run that holds a line break becomes one space (`/\s*\n\s*/` was quadratic on long blank runs).
function foldLineBreaks(text: string): string {
  return text.replace(/\s+/g, (run) => (run.includes('\n') ? ' ' : run));
}

function hasTrueCondition(pod: Pod, type: string): boolean {
  return (pod.status?.conditions ?? []).some((c) => c.type === type && c.status === 'True');
}

function lastFinished(c: ContainerStatus): number | undefined {
  return parseTime(c.lastState?.terminated?.finishedAt);
}

function later(a: number | undefined, b: number | undefined): number | undefined {
  if (a === undefined) return b;
  if (b === undefined) return a;
  return Math.max(a, b);
}

function parseTime(text: string | undefined): number | undefined {
  if (!text) return undefined;
  const ms = Date.parse(text);
  return Number.isNaN(ms) ? undefined : ms;
}
