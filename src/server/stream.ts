/**
 * The dashboard's live stream (`GET /stream`, Server-Sent Events): one `snapshot` message
 * with everything (pods, events, probe rings), then every change as it happens — `pod`,
 * `event`, `probe` — batched into one write every {@link STREAM_BATCH_MS} so a busy kubelet
 * costs the browser a few writes a second, not one per probe. The browser never polls; a
 * finished timeline (a view without `watch`) sends its snapshot and stays quiet.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { realClock, type Clock } from '../util/clock.js';
import { serviceUnavailableStatus } from './status.js';
import { STREAM_LIMITS, STREAM_RETRY_AFTER_S, type StreamBudget } from './stream-budget.js';
import type { KubeletView, ViewChange } from './view.js';

export const STREAM_BATCH_MS = 100;
/** A comment line now and then keeps proxies and idle-connection reapers from closing the stream. */
export const STREAM_HEARTBEAT_MS = 15_000;
/** A client this far behind is cut off; its EventSource reconnects and starts from a fresh snapshot. */
export const STREAM_MAX_BACKLOG_BYTES = STREAM_LIMITS.maxBacklogBytes;

/** How long closing waits for a stream's last messages to be written before cutting it. */
export const STREAM_END_WAIT_MS = 1000;

/** What the `end` message carries: when the run ended (ISO 8601). */
export interface StreamEnd {
  at: string;
}

/** An open stream, as the server holds it to end it when it closes. */
export interface OpenStream {
  /** Writes what is batched and the `end` message, then ends the response; resolves once written (or after a wait). */
  end(): Promise<void>;
}

/** What the snapshot message carries. */
export interface StreamSnapshot {
  live: boolean;
  pods: unknown[];
  events: unknown[];
  probes: unknown[];
}

/**
 * Serves one stream within `budget`: refused (503, `Retry-After`) when as many streams as the
 * budget allows are open or the snapshot does not fit; cut when the client falls too far behind.
 * Returns the open stream (undefined when refused), for the server to end when it closes.
 */
export function serveStream(view: KubeletView, req: IncomingMessage, res: ServerResponse, clock: Clock, headers: Record<string, string>, budget: StreamBudget): OpenStream | undefined {
  // Built only once a stream is free: 500 clients each serializing everything blocked the API for 20 s.
  let share: SharedSnapshot | undefined;
  const slot = budget.open(res, () => {
    const first = snapshotMessage(view, clock);
    share = first.share;
    return first.message;
  });
  if ('refused' in slot) {
    // A snapshot made for this client alone and refused stops listening at once.
    if (share?.users === 0) share.forget();
    const body = `${JSON.stringify(serviceUnavailableStatus(`/stream: ${slot.refused}; try again in ${STREAM_RETRY_AFTER_S} s`))}\n`;
    res.writeHead(503, { 'Content-Type': 'application/json', 'Retry-After': String(STREAM_RETRY_AFTER_S), 'Content-Length': Buffer.byteLength(body) });
    res.end(body);
    return undefined;
  }
  res.writeHead(200, { ...headers, 'Content-Type': 'text/event-stream; charset=utf-8', Connection: 'keep-alive' });
  if (share) share.users++;
  slot.write(slot.first);

  let pending = '';
  let flushTimer: unknown;
  const flush = (): void => {
    flushTimer = undefined;
    if (pending === '') return;
    const chunk = pending;
    pending = '';
    slot.write(chunk);
  };
  const off = view.watch?.((change) => {
    pending += frameOf(change);
    flushTimer ??= clock.setTimeout(flush, STREAM_BATCH_MS);
  });
  let heartbeat: unknown;
  const beat = (): void => {
    slot.write(': ping\n\n');
    heartbeat = clock.setTimeout(beat, STREAM_HEARTBEAT_MS);
  };
  heartbeat = clock.setTimeout(beat, STREAM_HEARTBEAT_MS);
  let closed = false;
  const done = (): void => {
    if (closed) return;
    closed = true;
    if (share && --share.users === 0) share.forget();
    slot.release();
    off?.();
    if (flushTimer !== undefined) clock.clearTimeout(flushTimer);
    clock.clearTimeout(heartbeat);
  };
  req.once('close', done);
  res.once('close', done);
  return {
    end: () =>
      new Promise<void>((resolve) => {
        if (res.writableEnded || res.destroyed) {
          resolve();
          return;
        }
        done();
        const end: StreamEnd = { at: new Date(clock.now()).toISOString() };
        // Real time, not the stream's clock: a FakeClock (tests, simulate) would never fire it.
        const cut = realClock.setTimeout(resolve, STREAM_END_WAIT_MS);
        const written = (): void => {
          realClock.clearTimeout(cut);
          resolve();
        };
        res.once('close', written);
        res.end(`${pending}${frame('end', end)}`, written);
        pending = '';
      }),
  };
}

/** How long, and up to how many bytes of later changes, one snapshot serves the clients that come after it. */
const SHARED_SNAPSHOT_MS = 1000;
const SHARED_SNAPSHOT_MAX_BYTES = 2 ** 20;

/** A snapshot of a live view and every change since it was made (framed): together, the state now. */
interface SharedSnapshot {
  message: string;
  changes: string[];
  bytes: number;
  madeAt: number;
  /** Streams open that started from it: when the last one closes, it is forgotten (and stops listening). */
  users: number;
  forget(): void;
}

const sharedSnapshots = new WeakMap<KubeletView, SharedSnapshot>();

/**
 * The first message of a stream. Clients that connect within {@link SHARED_SNAPSHOT_MS} of
 * each other share one serialization of the snapshot, followed by the changes since it was
 * made (so none is missed): 32 snapshots of a busy run made one after the other held
 * `/healthz` up for two seconds.
 */
function snapshotMessage(view: KubeletView, clock: Clock): { message: string; share?: SharedSnapshot } {
  const shared = sharedSnapshots.get(view);
  if (shared !== undefined && clock.now() - shared.madeAt < SHARED_SNAPSHOT_MS) return { message: shared.message + shared.changes.join(''), share: shared };
  shared?.forget();
  const snapshot: StreamSnapshot = {
    live: view.watch !== undefined,
    pods: view.listPods(),
    events: view.listEvents(),
    probes: view.listProbes?.({}) ?? [],
  };
  const message = `retry: 2000\n${frame('snapshot', snapshot)}`;
  if (view.watch) {
    const share: SharedSnapshot = { message, changes: [], bytes: 0, madeAt: clock.now(), users: 0, forget: () => undefined };
    const off = view.watch((change) => {
      const framed = frameOf(change);
      share.changes.push(framed);
      share.bytes += framed.length;
      if (share.bytes > SHARED_SNAPSHOT_MAX_BYTES) share.forget();
    });
    let listening = true;
    share.forget = () => {
      if (listening) off();
      listening = false;
      if (sharedSnapshots.get(view) === share) sharedSnapshots.delete(view);
    };
    sharedSnapshots.set(view, share);
    return { message, share };
  }
  return { message };
}

/** Each change framed once for all clients (their listeners are called one after another with the same object). */
const framedChanges = new WeakMap<ViewChange, string>();

function frameOf(change: ViewChange): string {
  let framed = framedChanges.get(change);
  if (framed === undefined) {
    framed = frame(change.type, payloadOf(change));
    framedChanges.set(change, framed);
  }
  return framed;
}

function payloadOf(change: ViewChange): unknown {
  switch (change.type) {
    case 'pod':
      return change.pod;
    case 'event':
      return change.event;
    case 'probe':
      return change.entry;
  }
}

/** One SSE message; JSON has no raw newlines, so `data:` is a single line. */
function frame(name: string, data: unknown): string {
  return `event: ${name}\ndata: ${JSON.stringify(data)}\n\n`;
}
