/**
 * The dashboard page: one EventSource to `/stream` (the server pushes; the page never
 * polls), a model folded from its messages, and a render at most once per animation frame.
 * In a live run the time axis follows the clock; a finished timeline is drawn whole.
 */
import type { Event, Pod } from '../../src/api/types.js';
import type { ProbeAttemptRecord, RecorderEntry } from '../../src/prober/recorder.js';
import type { StreamEnd, StreamSnapshot } from '../../src/server/stream.js';
import { renderDetails } from './details.js';
import { renderEvents } from './events.js';
import { applyEvent, applyPod, applyProbe, applySnapshot, emptyModel, eventTime, type Lane } from './state.js';
import { renderPods, type TimeWindow } from './timeline.js';

/** A live run shows the last few minutes. */
const LIVE_WINDOW_MS = 3 * 60_000;
const LABEL_WIDTH = 170;

const model = emptyModel();
const podsRoot = byId('pods');
const details = byId('details');
const eventsList = byId('events');
const connection = byId('connection');
const filterText = byId('event-filter') as HTMLInputElement;
const filterType = byId('event-type') as HTMLSelectElement;

let selected: { lane: Lane; attempt: ProbeAttemptRecord; sticky: boolean } | undefined;
/** When the run ended, once the server said so (its `end` message). */
let ended: string | undefined;
let frame = 0;

function byId(id: string): HTMLElement {
  const el = document.getElementById(id);
  if (!el) throw new Error(`#${id} missing from the page`);
  return el;
}

function requestRender(): void {
  if (frame === 0) frame = requestAnimationFrame(render);
}

/** A live run shows from its first data (at least the last 30 s) up to the last few minutes; a finished one, everything. */
function timeWindow(): TimeWindow {
  const extent = dataExtent();
  if (model.live) {
    const to = Date.now();
    const earliest = Number.isFinite(extent.from) ? extent.from - 2000 : to;
    return { from: Math.max(to - LIVE_WINDOW_MS, Math.min(earliest, to - 30_000)), to };
  }
  if (!Number.isFinite(extent.from)) return { from: 0, to: 1 };
  const pad = Math.max(1000, (extent.to - extent.from) * 0.02);
  return { from: extent.from - pad, to: extent.to + pad };
}

function dataExtent(): TimeWindow {
  let from = Infinity;
  let to = -Infinity;
  for (const lane of model.lanes.values()) {
    for (const a of lane.attempts) {
      from = Math.min(from, a.start);
      to = Math.max(to, a.start + a.durationMs);
    }
    for (const t of lane.transitions) to = Math.max(to, t.time);
  }
  for (const e of model.events.values()) {
    const at = eventTime(e);
    from = Math.min(from, at);
    to = Math.max(to, at);
  }
  return { from, to };
}

function render(): void {
  frame = 0;
  const width = Math.max(200, podsRoot.clientWidth - LABEL_WIDTH - 8);
  const key = selected ? `${selected.lane.key}#${selected.attempt.seq}` : undefined;
  renderPods(podsRoot, model, timeWindow(), width, key, pick);
  renderEvents(eventsList, model.events.values(), { text: filterText.value, type: filterType.value });
}

function pick(lane: Lane, attempt: ProbeAttemptRecord, sticky: boolean): void {
  if (selected?.sticky && !sticky) return; // a clicked mark stays until another is clicked
  selected = { lane, attempt, sticky };
  renderDetails(details, lane.info, attempt);
  if (sticky) requestRender();
}

function connect(): void {
  const source = new EventSource('/stream');
  source.addEventListener('open', () => setConnection('live', 'live'));
  source.addEventListener('error', () => {
    if (ended === undefined) setConnection(model.live ? 'reconnecting…' : 'finished timeline', model.live ? 'down' : 'finished');
  });
  // The run is over (the server closes after it): keep its final state, drawn whole, and stop reconnecting.
  source.addEventListener('end', (m) => {
    const { at } = JSON.parse((m as MessageEvent<string>).data) as StreamEnd;
    ended = at;
    source.close();
    // A finished timeline (simulate --ui) was never live: it stays "finished timeline".
    if (!model.live) return;
    model.live = false;
    setConnection(`run ended ${new Date(at).toLocaleTimeString()}`, 'ended');
    requestRender();
  });
  source.addEventListener('snapshot', (m) => {
    applySnapshot(model, JSON.parse((m as MessageEvent<string>).data) as StreamSnapshot);
    setConnection(model.live ? 'live' : 'finished timeline', model.live ? 'live' : 'finished');
    requestRender();
  });
  source.addEventListener('pod', (m) => {
    applyPod(model, JSON.parse((m as MessageEvent<string>).data) as Pod);
    requestRender();
  });
  source.addEventListener('event', (m) => {
    applyEvent(model, JSON.parse((m as MessageEvent<string>).data) as Event);
    requestRender();
  });
  source.addEventListener('probe', (m) => {
    applyProbe(model, JSON.parse((m as MessageEvent<string>).data) as RecorderEntry);
    requestRender();
  });
}

function setConnection(text: string, state: string): void {
  connection.textContent = text;
  connection.className = `connection ${state}`;
}

filterText.addEventListener('input', requestRender);
filterType.addEventListener('change', requestRender);
window.addEventListener('resize', requestRender);
// The axis of a live run moves with the clock even when nothing happens.
setInterval(() => {
  if (model.live) requestRender();
}, 1000);
connect();
