/**
 * The read-only HTTP API (the kubelet's read-only port, 10255, by default): state out,
 * nothing in. Bound to loopback only, since it has no authentication.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { guardRequest } from './guard.js';
import { isLoopbackHost } from './loopback.js';
import { route } from './routes.js';
import type { KubeletView } from './view.js';

export interface ServerOptions {
  /** A loopback address or `localhost`; anything else is refused. Default `127.0.0.1`. */
  host?: string;
  /** 0 picks any free port. Default 10255, the kubelet's read-only port. */
  port?: number;
}

export interface RunningServer {
  /** Base URL, e.g. `http://127.0.0.1:10255` (`http://[::1]:…` for IPv6). */
  url: string;
  address: { host: string; port: number };
  /** Stops listening and closes every connection, keep-alive ones included. Idempotent. */
  close(): Promise<void>;
}

export const DEFAULT_READ_ONLY_PORT = 10255;

/** Every answer is immediate, so a request taking longer than this to arrive is hostile or broken. */
const SLOW_CLIENT_TIMEOUT_MS = 5000;

export async function startServer(view: KubeletView, options: ServerOptions = {}): Promise<RunningServer> {
  const host = options.host ?? '127.0.0.1';
  const port = options.port ?? DEFAULT_READ_ONLY_PORT;
  if (!isLoopbackHost(host)) {
    throw new Error(
      `refusing to serve the read-only API on ${JSON.stringify(host)}: it has no authentication, so only loopback addresses (127.0.0.1, ::1, localhost) are allowed`,
    );
  }
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    throw new RangeError(`port must be an integer from 0 to 65535, got ${port}`);
  }

  const server = createServer(
    {
      // A client that has not sent its request within this long is cut off (Node's
      // defaults, 60 s for headers, let slowloris clients hold connections that long).
      headersTimeout: SLOW_CLIENT_TIMEOUT_MS,
      requestTimeout: SLOW_CLIENT_TIMEOUT_MS,
      connectionsCheckingInterval: 1000,
    },
    (req, res) => {
      void respond(view, req, res);
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
  const urlHost = info.family === 'IPv6' ? `[${info.address}]` : info.address;
  let closing: Promise<void> | undefined;
  return {
    url: `http://${urlHost}:${info.port}`,
    address: { host: info.address, port: info.port },
    close: () => {
      closing ??= new Promise<void>((resolve, reject) => {
        server.close((err) => (err ? reject(err) : resolve()));
        // server.close() alone waits for keep-alive clients to hang up; we do not.
        server.closeAllConnections();
      });
      return closing;
    },
  };
}

async function respond(view: KubeletView, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const method = req.method ?? 'GET';
  const reply = guardRequest(method, req.url ?? '/') ?? (await route(view, method, req.url ?? '/'));
  res.statusCode = reply.status;
  for (const [name, value] of Object.entries(reply.headers)) res.setHeader(name, value);
  res.setHeader('Content-Length', Buffer.byteLength(reply.body));
  res.end(method === 'HEAD' ? undefined : reply.body);
}
