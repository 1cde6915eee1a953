/**
 * The live output of `probelet run`, in the three shapes its readers need: a compact
 * screen redrawn in place for a person at a terminal, `kubectl get pods -w`-style lines
 * for a log or a pipe (a line only when something a reader would notice changed), and
 * one JSON object per line for scripts.
 */
import type { Event, Pod } from '../../api/types.js';
import { crashText, type CrashNote } from './crash-notes.js';
import type { CliIO } from '../io.js';
import { createScreenView } from './screen-view.js';
import type { Terminal } from './terminal.js';
import { eventLine, formatRow, podRowCells, POD_COLUMNS, streamedWidths, summarizePod } from './view.js';

export type OutputFormat = 'text' | 'json';

export interface LiveView {
  /** The pod changed (its status, or it is being deleted). */
  pod(pod: Pod): void;
  /** An Event was recorded, or an existing one counted again. */
  event(event: Event): void;
  /** A container crashed: its exit code and last log lines, beside the status (see crash-notes). */
  crash(note: CrashNote): void;
  /** A message for the user (shutdown progress), placed so that it does not break the view. */
  notice(text: string): void;
  /** Final rendering; stops any timer. */
  close(): void;
}

export interface LiveViewOptions {
  output: OutputFormat;
  io: CliIO;
  terminal: Terminal;
  /** The admitted pods' names, so streamed rows line up under a header printed first. */
  podNames: readonly string[];
  now?: () => number;
}

export function createLiveView(options: LiveViewOptions): LiveView {
  const now = options.now ?? Date.now;
  if (options.output === 'json') return createJsonView(options.io);
  if (options.terminal.isTTY) return createScreenView({ io: options.io, terminal: options.terminal, now });
  return createLineView(options.io, options.podNames, now);
}

/** `{"type":"pod","pod":{…}}` and `{"type":"event","event":{…}}`, one per line; notices go to stderr. */
function createJsonView(io: CliIO): LiveView {
  return {
    pod: (pod) => io.stdout(`${JSON.stringify({ type: 'pod', pod })}\n`),
    event: (event) => io.stdout(`${JSON.stringify({ type: 'event', event })}\n`),
    crash: (note) => {
      const { podUID: _uid, pod, container, exitCode, reason, log, logPath, finishedAt } = note;
      io.stdout(`${JSON.stringify({ type: 'crash', pod, container, exitCode, reason, finishedAt: new Date(finishedAt).toISOString(), log, ...(logPath ? { logPath } : {}) })}\n`);
    },
    notice: (text) => io.stderr(`${text}\n`),
    close: () => undefined,
  };
}

/**
 * `kubectl get pods -w` for a non-terminal: the header once, then a row whenever a pod's
 * NAME READY STATUS RESTARTS changes (not for every status write, most of which only move
 * timestamps), and every Event as a line of its own, prefixed with the object it is about.
 */
function createLineView(io: CliIO, podNames: readonly string[], now: () => number): LiveView {
  const widths = streamedWidths(podNames);
  const shown = new Map<string, string>();
  io.stdout(`${formatRow(POD_COLUMNS, widths)}\n`);
  return {
    pod(pod) {
      const summary = summarizePod(pod);
      const key = JSON.stringify([summary.name, summary.ready, summary.total, summary.status, summary.restarts]);
      const uid = pod.metadata?.uid ?? summary.name;
      if (shown.get(uid) === key) return;
      shown.set(uid, key);
      io.stdout(`${formatRow(podRowCells(summary, now()), widths)}\n`);
    },
    event: (event) => io.stdout(`${eventLine(event, now())}\n`),
    crash: (note) => io.stdout(`${crashText(note).join('\n')}\n`),
    notice: (text) => io.stderr(`${text}\n`),
    close: () => undefined,
  };
}
