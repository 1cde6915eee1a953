/**
 * The terminal form of the live view: the pod table and the latest events on one compact
 * screen, redrawn in place (cursor up, clear to the end of the screen) whenever something
 * changes and once a second so ages keep counting, like `watch kubectl get pods`.
 */
import type { Event, Pod } from '../../api/types.js';
import { crashText, type CrashNote } from './crash-notes.js';
import type { CliIO } from '../io.js';
import type { LiveView } from './live-view.js';
import type { Terminal } from './terminal.js';
import { eventLine, formatTable, podRowCells, POD_COLUMNS, summarizePod } from './view.js';
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
    const at = now();
    const width = Math.max(20, terminal.columns() - 1);
    const table = formatTable([POD_COLUMNS, ...[...pods.values()].map((p) => podRowCells(summarizePod(p), at))]);
    const lastStates = [...crashes.values()].flatMap((c) => crashText(c));
    if (lastStates.length > 0) table.push('', 'LAST STATE', ...lastStates);
    const room = Math.max(1, Math.min(MAX_EVENTS, terminal.rows() - table.length - 4));
    const latest = [...events.values()].slice(-room).map((e) => eventLine(e, at));
    const lines = [...table, '', latest.length > 0 ? 'EVENTS' : 'EVENTS (none yet)', ...latest].map((l) => clip(l, width));
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

/** Long lines would wrap and break the cursor arithmetic of the next redraw. */
function clip(line: string, width: number): string {
  return line.length <= width ? line : `${line.slice(0, width - 1)}…`;
}
