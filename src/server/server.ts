/**
 * The read-only HTTP API (the kubelet's read-only port, 10255, by default): state out,
 * nothing in. Bound to loopback only, since it has no authentication.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { realClock, type Clock } from '../util/clock.js';
import { dashboardHeaders, loadDashboard, type Dashboard } from './dashboard.js';
import { awaitTurn } from './connection-gate.js';
import { guardRequest } from './guard.js';
import { isLoopbackHost, nonLoopbackMessage } from './loopback.js';
import { writeList } from './list-answer.js';
import { isOwnOrigin } from './origin.js';
import { route } from './routes.js';
import { forbiddenStatus, internalErrorStatus, serviceUnavailableStatus } from './status.js';
import { serveStream, type OpenStream } from './stream.js';
import { createStreamBudget, STREAM_LIMITS, STREAM_RETRY_AFTER_S, type StreamBudget, type StreamLimits } from './stream-budget.js';
import type { KubeletView } from './view.js';

export interface ServerOptions {
  /** A loopback address or `localhost`; anything else is refused. Default `127.0.0.1`. */
  host?: string;
  /** 0 picks any free port. Default 10255, the kubelet's read-only port. */
  port?: number;
  /** Where the built dashboard is (index.html, app.js, app.css); default: dist/web of this package. */
  dashboardDir?: string;
  /** Timers of the live stream (batching, heartbeat); default the real clock. */
  clock?: Clock;
  /** What all `/stream` clients together may hold; default {@link STREAM_LIMITS}. */
  streamLimits?: StreamLimits;
}

export interface RunningServer {
  /** Base URL, e.g. `http://127.0.0.1:10255` (`http://[::1]:…` for IPv6). */
  url: string;
  address: { host: string; port: number };
  /** Stops listening and closes every connection, keep-alive ones included. Idempotent. */
  close(): Promise<void>;
  /** `/stream` clients open now and the bytes they have not read yet (all within {@link ServerOptions.streamLimits}). */
  streamUse(): { streams: number; backlogBytes: number };
}

export const DEFAULT_READ_ONLY_PORT = 10255;

/** Every answer is immediate, so a request taking longer than this to arrive is hostile or broken. */
const SLOW_CLIENT_TIMEOUT_MS = 5000;

export async function startServer(view: KubeletView, options: ServerOptions = {}): Promise<RunningServer> {
  const host = options.host ?? '127.0.0.1';
  const port = options.port ?? DEFAULT_READ_ONLY_PORT;
  if (!isLoopbackHost(host)) {
    throw new Error(nonLoopbackMessage(host));
  }
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    throw new RangeError(`port must be an integer from 0 to 65535, got ${port}`);
  }

  const dashboard = await loadDashboard(options.dashboardDir);
  const clock = options.clock ?? realClock;
  const streams = createStreamBudget(options.streamLimits ?? STREAM_LIMITS);
  const open = new Set<OpenStream>();
  let ownPort = port;
  const server = createServer(
    {
      // A client that has not sent its request within this long is cut off (Node's
      // defaults, 60 s for headers, let slowloris clients hold connections that long).
      // Only receiving the request counts: a long answer (the /stream) is not cut.
      headersTimeout: SLOW_CLIENT_TIMEOUT_MS,
      requestTimeout: SLOW_CLIENT_TIMEOUT_MS,
      connectionsCheckingInterval: 1000,
    },
    (req, res) => {
      void respond(view, req, res, { dashboard, clock, port: ownPort, streams, open });
    },
  );
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });

  const info = server.address() as AddressInfo;
  ownPort = info.port;
  const urlHost = info.family === 'IPv6' ? `[${info.address}]` : info.address;
  let closing: Promise<void> | undefined;
  return {
    url: `http://${urlHost}:${info.port}`,
    address: { host: info.address, port: info.port },
    streamUse: () => ({ streams: streams.streams(), backlogBytes: streams.backlogBytes() }),
    close: () => {
      closing ??= (async () => {
        // The dashboards watching get the run's last changes and an `end`, rather than a cut
        // connection they would keep trying to reconnect to.
        await Promise.all([...open].map((stream) => stream.end()));
        await new Promise<void>((resolve, reject) => {
          server.close((err) => (err ? reject(err) : resolve()));
          // server.close() alone waits for keep-alive clients to hang up; we do not.
          server.closeAllConnections();
        });
      })();
      return closing;
    },
  };
}

interface ServeContext {
  dashboard: Dashboard;
  clock: Clock;
  port: number;
  streams: StreamBudget;
  /** Open `/stream` responses, ended (not cut) when the server closes. */
  open: Set<OpenStream>;
}

/**
 * Every path but `/healthz` carries probe evidence (events quote probe output and bodies) or
 * runs code in the browser: only for requests addressed to this server by a loopback name and
 * from its own pages (no DNS rebinding, no other site reading them).
 */
const OPEN_PATHS = new Set(['/healthz']);

/** Answers smaller than this are not counted in the budget: what 1,000 clients hold of them is a few MiB. */
const HELD_ANSWER_MIN_BYTES = 16 * 1024;

async function respond(view: KubeletView, req: IncomingMessage, res: ServerResponse, ctx: ServeContext): Promise<void> {
  // Nothing is built for a request before the answers ahead of it on its connection were read.
  if (!(await awaitTurn(req, res))) return;
  const method = req.method ?? 'GET';
  const refused = guardRequest(method, req.url ?? '/', req.rawHeaders);
  if (refused) {
    send(res, method, refused);
    return;
  }
  const rawUrl = req.url ?? '/';
  const queryAt = rawUrl.indexOf('?');
  const path = queryAt < 0 ? rawUrl : rawUrl.slice(0, queryAt);
  if (!OPEN_PATHS.has(path) && !isOwnOrigin(req, ctx.port)) {
    send(res, method, { status: 403, headers: { 'Content-Type': 'application/json' }, body: `${JSON.stringify(forbiddenStatus())}\n` });
    return;
  }
  if (method === 'GET' && path === '/stream') {
    const stream = serveStream(view, req, res, ctx.clock, dashboardHeaders('text/event-stream'), ctx.streams);
    if (stream) {
      ctx.open.add(stream);
      res.once('close', () => ctx.open.delete(stream));
    }
    return;
  }
  if (path === '/' && ctx.dashboard.size === 0) {
    const body = 'The dashboard was not built: run `npm run build` (it bundles web/ into dist/web/).\n';
    send(res, method, { status: 503, headers: { 'Content-Type': 'text/plain; charset=utf-8' }, body });
    return;
  }
  const file = method === 'GET' || method === 'HEAD' ? ctx.dashboard.get(path) : undefined;
  if (file) {
    if (method === 'GET' && !held(res, file.body.length, ctx)) return;
    res.statusCode = 200;
    for (const [name, value] of Object.entries(dashboardHeaders(file.type))) res.setHeader(name, value);
    res.setHeader('Content-Length', file.body.length);
    res.end(method === 'HEAD' ? undefined : file.body);
    return;
  }
  const reply = await route(view, method, rawUrl);
  if ('list' in reply) {
    const fits = (bytes: number): boolean => method !== 'GET' || holds(res, bytes, ctx);
    try {
      await writeList(res, reply, { fits, refuse: () => refuse(res, ctx) });
    } catch (err) {
      // The view failed while the list was read: a 500 if nothing was sent yet, else the answer is cut.
      if (res.headersSent) res.destroy();
      else send(res, method, { status: 500, headers: { 'Content-Type': 'application/json' }, body: `${JSON.stringify(internalErrorStatus(err))}\n` });
    }
    return;
  }
  if (method === 'GET' && !held(res, Buffer.byteLength(reply.body), ctx)) return;
  send(res, method, reply);
}

/** Whether an answer of `bytes` fits the budget (and is held in it until written out); when not, the 503 has been sent. */
function held(res: ServerResponse, bytes: number, ctx: ServeContext): boolean {
  if (holds(res, bytes, ctx)) return true;
  refuse(res, ctx, bytes);
  return false;
}

/** Whether `bytes` unread of this answer fit the budget (they are held in it until written out). */
function holds(res: ServerResponse, bytes: number, ctx: ServeContext): boolean {
  return bytes < HELD_ANSWER_MIN_BYTES || ctx.streams.hold(res, bytes);
}

/** The 503 of an answer that does not fit the budget for unread answers. */
function refuse(res: ServerResponse, ctx: ServeContext, bytes?: number): void {
  const mib = (n: number): string => `${(n / 2 ** 20).toFixed(1)} MiB`;
  const status = serviceUnavailableStatus(
    `${bytes === undefined ? 'the answer' : `the answer (${mib(bytes)})`}, with what the clients connected now have not read (${mib(ctx.streams.backlogBytes())}), does not fit the server's budget for unread answers; ask for less (/probes?pod=&container=&limit=) or try again in ${STREAM_RETRY_AFTER_S} s`,
  );
  res.setHeader('Retry-After', String(STREAM_RETRY_AFTER_S));
  send(res, 'GET', { status: 503, headers: { 'Content-Type': 'application/json' }, body: `${JSON.stringify(status)}\n` });
}

function send(res: ServerResponse, method: string, reply: { status: number; headers: Record<string, string>; body: string }): void {
  res.statusCode = reply.status;
  for (const [name, value] of Object.entries(reply.headers)) res.setHeader(name, value);
  res.setHeader('Content-Length', Buffer.byteLength(reply.body));
  res.end(method === 'HEAD' ? undefined : reply.body);
}
