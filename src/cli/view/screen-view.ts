/**
 * The terminal form of the live view: the pod table and the latest events on one compact
 * screen, redrawn in place (cursor up, clear to the end of the screen) whenever something
 * changes and once a second so ages keep counting, like `watch kubectl get pods`.
 */
import { Help } from 'commander';
import type { Event, Pod } from '../../api/types.js';
import { crashText, type CrashNote } from './crash-notes.js';
import type { CliIO } from '../io.js';
import type { LiveView } from './live-view.js';
import type { Terminal } from './terminal.js';
import { eventLine, eventParts, formatTable, podRowCells, POD_COLUMNS, summarizePod } from './view.js';
import { clearLongTimeout, setLongTimeout } from '../../util/timer.js';

/** Redraws are coalesced: a burst of status writes costs one repaint. */
const REDRAW_DELAY_MS = 50;
/** Ages and "(10s ago)" are shown to the second. */
const TICK_MS = 1000;
/** Events shown at most, newest last, whatever the terminal height. */
const MAX_EVENTS = 10;
const KEPT_EVENTS = 50;

const CURSOR_UP = (n: number): string => `\x1b[${n}A`;
const CLEAR_TO_END = '\r\x1b[J';

export interface ScreenViewOptions {
  io: CliIO;
  terminal: Terminal;
  now: () => number;
}

export function createScreenView({ io, terminal, now }: ScreenViewOptions): LiveView {
  const pods = new Map<string, Pod>();
  /** Keyed by Event name, so a repeat (count + 1) moves to the end instead of adding a line. */
  const events = new Map<string, Event>();
  /** The latest crash of each container (pod uid + name), shown under the table as describe shows Last State. */
  const crashes = new Map<string, CrashNote>();
  let drawnLines = 0;
  let pending: unknown;
  let closed = false;

  const erase = (): void => {
    if (drawnLines > 0) io.stdout(CURSOR_UP(drawnLines) + CLEAR_TO_END);
    drawnLines = 0;
  };

  const draw = (): void => {
    if (pending !== undefined) clearLongTimeout(pending);
    pending = undefined;
    const lines = renderScreen({ pods: pods.values(), events: events.values(), crashes: crashes.values() }, now(), terminal.columns(), terminal.rows());
    erase();
    io.stdout(`${lines.join('\n')}\n`);
    drawnLines = lines.length;
  };

  const schedule = (): void => {
    if (closed || pending !== undefined) return;
    pending = setLongTimeout(draw, REDRAW_DELAY_MS);
  };

  // A tick that does not keep the process alive; each one schedules the next.
  let ticker: unknown;
  const tick = (): void => {
    draw();
    ticker = setLongTimeout(tick, TICK_MS, { ref: false });
  };
  ticker = setLongTimeout(tick, TICK_MS, { ref: false });
  draw();

  return {
    pod(pod) {
      pods.set(pod.metadata?.uid ?? pod.metadata?.name ?? '', pod);
      schedule();
    },
    crash(note) {
      crashes.set(`${note.podUID}/${note.container}`, note);
      schedule();
    },
    event(event) {
      events.delete(event.metadata.name ?? '');
      events.set(event.metadata.name ?? '', event);
      while (events.size > KEPT_EVENTS) events.delete(events.keys().next().value ?? '');
      schedule();
    },
    notice(text) {
      // Printed above the screen, which is then drawn again below it.
      if (!closed) erase();
      io.stderr(`${text}\n`);
      if (!closed) draw();
    },
    close() {
      if (closed) return;
      draw();
      closed = true;
      clearLongTimeout(ticker);
    },
  };
}

/** What the screen shows: the pods, the latest crash of each container, the events (oldest first). */
export interface ScreenContent {
  pods: Iterable<Pod>;
  events: Iterable<Event>;
  crashes: Iterable<CrashNote>;
}

/**
 * The screen at `nowMs` on a terminal of `columns` × `rows`, one string per line, none
 * longer than `columns − 1` (a line that fills the last column would wrap on some
 * terminals and break the cursor arithmetic of the next redraw). The newest events that
 * fit, newest last: each on one line when it fits the width, else its columns on one line
 * and its message under them, wrapped, so that a message keeps most of the width on a
 * narrow terminal (on 80 columns the columns before it leave a one-line message ~15).
 */
export function renderScreen(content: ScreenContent, nowMs: number, columns: number, rows: number): string[] {
  const width = Math.max(20, columns - 1);
  const table = formatTable([POD_COLUMNS, ...[...content.pods].map((p) => podRowCells(summarizePod(p), nowMs))]);
  const lastStates = [...content.crashes].flatMap((c) => crashText(c));
  if (lastStates.length > 0) table.push('', 'LAST STATE', ...lastStates);
  const room = Math.max(1, rows - table.length - 4);
  const latest: string[][] = [];
  let used = 0;
  for (const event of [...content.events].reverse()) {
    if (latest.length === MAX_EVENTS) break;
    const lines = eventBlock(event, nowMs, width);
    // The newest event is shown however little room there is, cut to it.
    if (latest.length > 0 && used + lines.length > room) break;
    latest.unshift(lines.slice(0, room));
    used += lines.length;
  }
  const shown = latest.flat();
  return [...table, '', shown.length > 0 ? 'EVENTS' : 'EVENTS (none yet)', ...shown].map((l) => clip(l, width));
}

/** The message's lines under its event's columns are indented this much. */
const MESSAGE_INDENT = '    ';
/** A wrapped message takes this many lines at most; the last is cut with `…`. */
const MAX_MESSAGE_LINES = 3;
const helpWrap = new Help();

/** One event in `width` columns: one line when it fits, else its columns, then its message wrapped under them. */
function eventBlock(event: Event, nowMs: number, width: number): string[] {
  const line = eventLine(event, nowMs);
  if (line.length <= width) return [line];
  const { head, message } = eventParts(event, nowMs);
  const room = width - MESSAGE_INDENT.length;
  // At spaces; a word longer than the line (a URL, an exec probe's output) is cut into lines too.
  const wrapped = helpWrap
    .boxWrap(message, room)
    .split('\n')
    .flatMap((l) => Array.from({ length: Math.max(1, Math.ceil(l.length / room)) }, (_, i) => l.slice(i * room, (i + 1) * room)));
  const kept = wrapped.slice(0, MAX_MESSAGE_LINES).map((l) => MESSAGE_INDENT + l);
  if (wrapped.length > MAX_MESSAGE_LINES) kept[kept.length - 1] = `${(kept.at(-1) ?? '').slice(0, width - 1)}…`;
  return [head, ...kept];
}

/** Long lines would wrap and break the cursor arithmetic of the next redraw. */
function clip(line: string, width: number): string {
  return line.length <= width ? line : `${line.slice(0, width - 1)}…`;
}
