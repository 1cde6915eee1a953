/**
 * Real local servers for the HTTP probe tests. Every server started here is closed
 * when the calling test finishes (vitest `onTestFinished`), connections included.
 */
import { parseTcpTable, TCP_STATE_TIME_WAIT } from '../helpers/tcp-state.js';
import { readFileSync, existsSync } from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import net from 'node:net';
import { onTestFinished } from 'vitest';

export interface Started<S> {
  server: S;
  port: number;
  /** `http://127.0.0.1:<port>` (or https). */
  base: string;
}

const fixture = (name: string): Buffer => readFileSync(new URL(`../fixtures/tls/${name}`, import.meta.url));

async function listen(server: net.Server): Promise<number> {
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('no port');
  return address.port;
}

/** Tracks a server's sockets so closing it never waits on a lingering connection. */
function closeWithTest(server: net.Server): void {
  const sockets = new Set<net.Socket>();
  server.on('connection', (s: net.Socket) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
    s.on('error', () => undefined);
  });
  onTestFinished(async () => {
    for (const s of sockets) s.destroy();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });
}

export async function startHttp(handler: http.RequestListener): Promise<Started<http.Server>> {
  const server = http.createServer(handler);
  closeWithTest(server);
  const port = await listen(server);
  return { server, port, base: `http://127.0.0.1:${port}` };
}

export async function startHttps(
  handler: http.RequestListener,
  options: https.ServerOptions = {},
): Promise<Started<https.Server>> {
  const server = https.createServer({ key: fixture('key.pem'), cert: fixture('cert.pem'), ...options }, handler);
  closeWithTest(server);
  server.on('tlsClientError', () => undefined);
  const port = await listen(server);
  return { server, port, base: `https://127.0.0.1:${port}` };
}

/** A bare TCP server for misbehaving peers (malformed responses, resets, silence). */
export async function startTcp(onSocket: (socket: net.Socket) => void): Promise<Started<net.Server>> {
  const server = net.createServer(onSocket);
  closeWithTest(server);
  const port = await listen(server);
  return { server, port, base: `http://127.0.0.1:${port}` };
}

/** Headers as the server received them, `Name: value` per line, in wire order. */
export function rawHeaderLines(req: http.IncomingMessage): string {
  const lines: string[] = [];
  for (let i = 0; i + 1 < req.rawHeaders.length; i += 2) lines.push(`${req.rawHeaders[i]}: ${req.rawHeaders[i + 1]}`);
  return lines.join('\n');
}

/** The body Go's `http.Redirect` writes for a GET. */
export function goRedirect(res: http.ServerResponse, location: string, status = 302): void {
  const text = http.STATUS_CODES[status] ?? '';
  res.writeHead(status, { Location: location, 'Content-Type': 'text/html; charset=utf-8' });
  res.end(`<a href="${location}">${text}</a>.\n\n`);
}

/**
 * TIME_WAIT sockets of one connection, named by its two ports on 127.0.0.1 (a socket is
 * its 4-tuple: other tests' sockets may reuse the same ephemeral local port towards other
 * peers). `undefined` where /proc/net/tcp is not available.
 */
export function timeWaitBetween(localPort: number, remotePort: number): number | undefined {
  const files = ['/proc/net/tcp', '/proc/net/tcp6'].filter((f) => existsSync(f));
  if (files.length === 0) return undefined;
  return files
    .flatMap((f) => parseTcpTable(readFileSync(f, 'utf8')))
    .filter((e) => e.state === TCP_STATE_TIME_WAIT && e.localPort === localPort && e.remotePort === remotePort).length;
}

/** Wall-clock milliseconds of `fn` (tests may read real time; src/ may not). */
export async function timed<T>(fn: () => Promise<T>): Promise<{ value: T; ms: number }> {
  const start = performance.now();
  const value = await fn();
  return { value, ms: performance.now() - start };
}
