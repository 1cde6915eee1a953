#!/usr/bin/env node
/**
 * The probed side, in a process of its own so its CPU is not charged to the prober:
 * `node bench/target.mjs http|tcp|grpc MAX_SECONDS`. Listens on 127.0.0.1 (a free port),
 * prints `{"port":N}`, and exits on SIGTERM, when stdin closes (the bench died) or after
 * MAX_SECONDS, whichever comes first.
 *
 * - http: 200 "ok" on /healthz, 404 elsewhere (node:http; closes after each response
 *   because probes ask for `Connection: close`).
 * - tcp: accepts and waits for the prober to close (it never closes first, so any
 *   TIME_WAIT is the prober's doing).
 * - grpc: grpc.health.v1 with the server ('') SERVING (grpc-health-check).
 */
import http from 'node:http';
import net from 'node:net';
import { Server, ServerCredentials } from '@grpc/grpc-js';
import { HealthImplementation } from 'grpc-health-check';

const handler = process.argv[2] ?? 'http';
const maxSeconds = Number(process.argv[3] ?? 300);

const shutdown = () => process.exit(0);
setTimeout(() => shutdown(), maxSeconds * 1000).unref();
process.on('SIGTERM', () => shutdown());
process.stdin.on('end', () => shutdown());
process.stdin.on('error', () => shutdown());
process.stdin.resume();

/** @param {number} port */
const ready = (port) => process.stdout.write(`${JSON.stringify({ port })}\n`);

if (handler === 'http') {
  const server = http.createServer((req, res) => {
    const ok = req.url === '/healthz';
    res.writeHead(ok ? 200 : 404, { 'Content-Type': 'text/plain' });
    res.end(ok ? 'ok' : 'not found');
  });
  server.keepAliveTimeout = 1000;
  server.listen({ port: 0, host: '127.0.0.1', backlog: 4096 }, () =>
    ready(/** @type {net.AddressInfo} */ (server.address()).port),
  );
} else if (handler === 'tcp') {
  const server = net.createServer((socket) => {
    socket.on('error', () => socket.destroy());
    socket.on('end', () => socket.end());
    socket.setTimeout(5000, () => socket.destroy());
    socket.resume();
  });
  server.listen({ port: 0, host: '127.0.0.1', backlog: 4096 }, () =>
    ready(/** @type {net.AddressInfo} */ (server.address()).port),
  );
} else if (handler === 'grpc') {
  const server = new Server();
  new HealthImplementation({ '': 'SERVING' }).addToServer(server);
  server.bindAsync('127.0.0.1:0', ServerCredentials.createInsecure(), (err, port) => {
    if (err) throw err;
    ready(port);
  });
} else {
  process.stderr.write(`bench target: unknown handler ${JSON.stringify(handler)}\n`);
  process.exit(2);
}
