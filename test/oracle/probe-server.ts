/**
 * The probed test server of an oracle scenario, one per agent: on 127.0.0.1, reached by the
 * probes through `httpGet.host` / `tcpSocket.host`, so the kubelet and probelet dial it from
 * the host exactly as they would a pod IP. It answers as the scenario says (by the seconds
 * since its first request) and logs every request: method, path, headers, and how the prober closed
 * the connection — FIN (an orderly close, 'end') or RST ('ECONNRESET').
 */
import { STATUS_CODES } from 'node:http';
import { createServer as createTcpServer, type AddressInfo, type Server, type Socket } from 'node:net';
import type { ProbeRequestRecord } from './record.js';

/**
 * What the server answers at `t` seconds after the first request it got (about the container's
 * first probe, so the two agents' servers change their answers at the same age), for `path`.
 */
export type Responder = (t: number, path: string) => { status: number; location?: string };

export interface ProbeServer {
  port: number;
  /** The requests so far, times in seconds from `t0Ms` (the pod's first start, once known). */
  requests(t0Ms: number): ProbeRequestRecord[];
  close(): Promise<void>;
}

interface Entry {
  atMs: number;
  method: string;
  path: string;
  headers: Record<string, string>;
  socket: Socket;
}

/** How each socket ended, as far as the server could tell. */
function trackClose(socket: Socket, closes: WeakMap<Socket, 'FIN' | 'RST'>): void {
  socket.on('end', () => {
    if (!closes.has(socket)) closes.set(socket, 'FIN');
    socket.end();
  });
  socket.on('error', (err: NodeJS.ErrnoException) => {
    if (err.code === 'ECONNRESET') closes.set(socket, 'RST');
  });
}

/** `kind: 'http'` answers with `respond`; `kind: 'tcp'` accepts and logs bare connections. */
export async function startProbeServer(kind: 'http' | 'tcp', respond: Responder = () => ({ status: 200 })): Promise<ProbeServer> {
  let first: number | undefined;
  const entries: Entry[] = [];
  const closes = new WeakMap<Socket, 'FIN' | 'RST'>();
  const sockets = new Set<Socket>();
  let server: Server;
  if (kind === 'http') {
    // HTTP/1.1 by hand, so that the server never closes first: how the prober closes (after
    // reading the answer) is then what the socket sees. Node's http server would close a
    // `Connection: close` request's socket itself.
    server = createTcpServer((socket) => {
      sockets.add(socket);
      socket.on('close', () => sockets.delete(socket));
      trackClose(socket, closes);
      let buffer = '';
      socket.setEncoding('latin1');
      socket.on('data', (chunk: string) => {
        buffer += chunk;
        let end: number;
        while ((end = buffer.indexOf('\r\n\r\n')) >= 0) {
          const [requestLine = '', ...headerLines] = buffer.slice(0, end).split('\r\n');
          buffer = buffer.slice(end + 4);
          const [method = '', path = ''] = requestLine.split(' ');
          const headers: Record<string, string> = {};
          for (const line of headerLines) {
            const colon = line.indexOf(':');
            const name = line.slice(0, colon).trim().toLowerCase();
            if (name === 'host') continue;
            // The server's own port (in a Referer) differs between the agents' servers.
            headers[name] = line.slice(colon + 1).trim().replace(/127\.0\.0\.1:\d+/g, '127.0.0.1:<port>');
          }
          entries.push({ atMs: Date.now(), method, path, headers, socket });
          first ??= Date.now();
          const answer = respond((Date.now() - first) / 1000, path);
          const body = `status ${answer.status}\n`;
          const location = answer.location === undefined ? '' : `Location: ${answer.location}\r\n`;
          socket.write(`HTTP/1.1 ${answer.status} ${STATUS_CODES[answer.status] ?? ''}\r\nContent-Type: text/plain\r\nContent-Length: ${body.length}\r\n${location}\r\n${body}`);
        }
      });
    });
  } else {
    server = createTcpServer((socket) => {
      sockets.add(socket);
      socket.on('close', () => sockets.delete(socket));
      entries.push({ atMs: Date.now(), method: 'tcp', path: '', headers: {}, socket });
      trackClose(socket, closes);
    });
  }
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  return {
    port: (server.address() as AddressInfo).port,
    requests: (t0Ms) =>
      entries.map((e) => ({
        at: Math.round((e.atMs - t0Ms) / 100) / 10,
        method: e.method,
        path: e.path,
        headers: e.headers,
        close: closes.get(e.socket) ?? 'open',
      })),
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}
