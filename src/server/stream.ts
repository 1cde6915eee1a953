/**
 * The dashboard's live stream (`GET /stream`, Server-Sent Events): one `snapshot` message
 * with everything (pods, events, probe rings), then every change as it happens — `pod`,
 * `event`, `probe` — batched into one write every {@link STREAM_BATCH_MS} so a busy kubelet
 * costs the browser a few writes a second, not one per probe. The browser never polls; a
 * finished timeline (a view without `watch`) sends its snapshot and stays quiet.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Clock } from '../util/clock.js';
import { serviceUnavailableStatus } from './status.js';
import { STREAM_LIMITS, STREAM_RETRY_AFTER_S, type StreamBudget } from './stream-budget.js';
import type { KubeletView, ViewChange } from './view.js';

export const STREAM_BATCH_MS = 100;
/** A comment line now and then keeps proxies and idle-connection reapers from closing the stream. */
export const STREAM_HEARTBEAT_MS = 15_000;
/** A client this far behind is cut off; its EventSource reconnects and starts from a fresh snapshot. */
export const STREAM_MAX_BACKLOG_BYTES = STREAM_LIMITS.maxBacklogBytes;

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
 */
export function serveStream(view: KubeletView, req: IncomingMessage, res: ServerResponse, clock: Clock, headers: Record<string, string>, budget: StreamBudget): void {
  // Built only once a stream is free: 500 clients each serializing everything blocked the API for 20 s.
  const slot = budget.open(res, () => {
    const snapshot: StreamSnapshot = {
      live: view.watch !== undefined,
      pods: view.listPods(),
      events: view.listEvents(),
      probes: view.listProbes?.({}) ?? [],
    };
    return `retry: 2000\n${frame('snapshot', snapshot)}`;
  });
  if ('refused' in slot) {
    const body = `${JSON.stringify(serviceUnavailableStatus(`/stream: ${slot.refused}; try again in ${STREAM_RETRY_AFTER_S} s`))}\n`;
    res.writeHead(503, { 'Content-Type': 'application/json', 'Retry-After': String(STREAM_RETRY_AFTER_S), 'Content-Length': Buffer.byteLength(body) });
    res.end(body);
    return;
  }
  res.writeHead(200, { ...headers, 'Content-Type': 'text/event-stream; charset=utf-8', Connection: 'keep-alive' });
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
    pending += frame(change.type, payloadOf(change));
    flushTimer ??= clock.setTimeout(flush, STREAM_BATCH_MS);
  });
  let heartbeat: unknown;
  const beat = (): void => {
    slot.write(': ping\n\n');
    heartbeat = clock.setTimeout(beat, STREAM_HEARTBEAT_MS);
  };
  heartbeat = clock.setTimeout(beat, STREAM_HEARTBEAT_MS);
  const done = (): void => {
    slot.release();
    off?.();
    if (flushTimer !== undefined) clock.clearTimeout(flushTimer);
    clock.clearTimeout(heartbeat);
  };
  req.once('close', done);
  res.once('close', done);
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
