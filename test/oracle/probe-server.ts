/**
 * The probed test server of an oracle scenario, one per agent: on 127.0.0.1, reached by the
 * probes through `httpGet.host` / `tcpSocket.host`, so the kubelet and probelet dial it from
 * the host exactly as they would a pod IP. It answers as the scenario says (by the seconds
 * since its first request) and logs every request: method, path, headers, and how the prober closed
 * the connection — FIN (an orderly close, 'end') or RST ('ECONNRESET').
 */
import * as grpc from '@grpc/grpc-js';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { STATUS_CODES } from 'node:http';
import { createServer as createTcpServer, type AddressInfo, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createServer as createTlsServer } from 'node:tls';
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

export type ServerKind = 'http' | 'https' | 'tcp' | 'grpc';

/** A self-signed certificate for 127.0.0.1 (probes skip verification, like the kubelet's). */
function selfSigned(): { key: Buffer; cert: Buffer } {
  const dir = mkdtempSync(join(tmpdir(), 'oracle-tls-'));
  try {
    execFileSync('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-days', '1', '-subj', '/CN=127.0.0.1', '-keyout', join(dir, 'k'), '-out', join(dir, 'c')], {
      stdio: 'ignore',
    });
    return { key: readFileSync(join(dir, 'k')), cert: readFileSync(join(dir, 'c')) };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * grpc.health.v1.Health/Check by hand (no .proto needed): the request's field 1 is the service
 * name, the answer's field 1 the status enum. `respond(t, service)` maps 200 to SERVING (1),
 * 404 to the NOT_FOUND error of an unknown service, anything else to NOT_SERVING (2). On all
 * interfaces: a gRPC probe has no host, so the scenario's pod uses the host network and the
 * probe dials the pod IP (the node's address on the kubelet, 127.0.0.1 under probelet).
 */
async function startGrpcServer(respond: Responder): Promise<ProbeServer> {
  let first: number | undefined;
  const entries: { atMs: number; service: string; userAgent: string }[] = [];
  const server = new grpc.Server();
  // Objects, not bare strings: grpc-js takes a falsy request ('' for no service) as no request.
  const decode = (b: Buffer): { service: string } => ({ service: b.length >= 2 && b[0] === 0x0a ? b.subarray(2, 2 + (b[1] ?? 0)).toString('utf8') : '' });
  server.addService(
    {
      Check: {
        path: '/grpc.health.v1.Health/Check',
        requestStream: false,
        responseStream: false,
        requestSerialize: (v: { service: string }) => Buffer.from(v.service),
        requestDeserialize: decode,
        responseSerialize: (v: { status: number }) => Buffer.from([0x08, v.status]),
        responseDeserialize: (b: Buffer) => ({ status: b[1] ?? 0 }),
      },
    },
    {
      Check: (call: grpc.ServerUnaryCall<{ service: string }, { status: number }>, callback: grpc.sendUnaryData<{ status: number }>) => {
        const ua = call.metadata.get('user-agent')[0];
        entries.push({ atMs: Date.now(), service: call.request.service, userAgent: typeof ua === 'string' ? ua : '' });
        first ??= Date.now();
        const { status } = respond((Date.now() - first) / 1000, call.request.service);
        if (status === 404) callback({ code: grpc.status.NOT_FOUND, details: 'unknown service' });
        else callback(null, { status: status === 200 ? 1 : 2 });
      },
    },
  );
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync('0.0.0.0:0', grpc.ServerCredentials.createInsecure(), (err, p) => (err ? reject(err) : resolve(p))),
  );
  return {
    port,
    requests: (t0Ms) =>
      entries.map((e) => ({
        at: Math.round((e.atMs - t0Ms) / 100) / 10,
        method: 'grpc',
        path: e.service,
        // grpc-go appends its own version ("kube-probe/1.35 grpc-go/1.x"): only the prober's part.
        headers: { 'user-agent': e.userAgent.split(' ')[0] ?? '' },
        close: 'open',
      })),
    close: () => new Promise<void>((resolve) => server.tryShutdown(() => resolve())),
  };
}

/**
 * `kind: 'http'` (or 'https', with a self-signed certificate) answers with `respond`; `'tcp'`
 * accepts and logs bare connections; `'grpc'` is a health server (startGrpcServer).
 */
export async function startProbeServer(kind: ServerKind, respond: Responder = () => ({ status: 200 })): Promise<ProbeServer> {
  if (kind === 'grpc') return startGrpcServer(respond);
  let first: number | undefined;
  const entries: Entry[] = [];
  const closes = new WeakMap<Socket, 'FIN' | 'RST'>();
  const sockets = new Set<Socket>();
  let server: Server;
  if (kind === 'http' || kind === 'https') {
    // HTTP/1.1 by hand, so that the server never closes first: how the prober closes (after
    // reading the answer) is then what the socket sees. Node's http server would close a
    // `Connection: close` request's socket itself.
    const onSocket = (socket: Socket): void => {
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
    };
    server = kind === 'https' ? createTlsServer(selfSigned(), onSocket) : createTcpServer(onSocket);
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
