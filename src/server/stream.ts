/**
 * The dashboard's live stream (`GET /stream`, Server-Sent Events): one `snapshot` message
 * with everything (pods, events, probe rings), then every change as it happens — `pod`,
 * `event`, `probe` — batched into one write every {@link STREAM_BATCH_MS} so a busy kubelet
 * costs the browser a few writes a second, not one per probe. The browser never polls; a
 * finished timeline (a view without `watch`) sends its snapshot and stays quiet. When the
 * server closes (the run is over), each stream gets what was still batched and an `end`
 * message, so the page shows the run's final state as ended instead of reconnecting forever.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { realClock, type Clock } from '../util/clock.js';
import type { KubeletView, ViewChange } from './view.js';

export const STREAM_BATCH_MS = 100;
/** A comment line now and then keeps proxies and idle-connection reapers from closing the stream. */
export const STREAM_HEARTBEAT_MS = 15_000;
/** A client this far behind is cut off; its EventSource reconnects and starts from a fresh snapshot. */
export const STREAM_MAX_BACKLOG_BYTES = 8 * 2 ** 20;

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

export function serveStream(
  view: KubeletView,
  req: IncomingMessage,
  res: ServerResponse,
  clock: Clock,
  headers: Record<string, string>,
): OpenStream {
  res.writeHead(200, { ...headers, 'Content-Type': 'text/event-stream; charset=utf-8', Connection: 'keep-alive' });
  const snapshot: StreamSnapshot = {
    live: view.watch !== undefined,
    pods: view.listPods(),
    events: view.listEvents(),
    probes: view.listProbes?.({}) ?? [],
  };
  res.write(`retry: 2000\n${frame('snapshot', snapshot)}`);

  let pending = '';
  let flushTimer: unknown;
  const flush = (): void => {
    flushTimer = undefined;
    if (pending === '') return;
    const chunk = pending;
    pending = '';
    if (res.writableLength > STREAM_MAX_BACKLOG_BYTES) {
      res.destroy();
      return;
    }
    res.write(chunk);
  };
  const off = view.watch?.((change) => {
    pending += frame(change.type, payloadOf(change));
    flushTimer ??= clock.setTimeout(flush, STREAM_BATCH_MS);
  });
  let heartbeat: unknown;
  const beat = (): void => {
    res.write(': ping\n\n');
    heartbeat = clock.setTimeout(beat, STREAM_HEARTBEAT_MS);
  };
  heartbeat = clock.setTimeout(beat, STREAM_HEARTBEAT_MS);
  const done = (): void => {
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
