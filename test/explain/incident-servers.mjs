#!/usr/bin/env node
/**
 * The HTTP servers the incidents' probes reach (incidents.ts), in a process of their own: the
 * test's worker loads modules and explains pods while the probes run, and a probe must not time
 * out because that worker was busy (under load it was, for more than a second). Each server on
 * 127.0.0.1; the stateful ones (flap, unhealthy, once) count from their first request. Prints
 * their ports as one JSON line, then serves until its stdin closes (the test's end, or its
 * death) or a signal.
 */
import { createServer } from 'node:http';

/**
 * @param {(t: number, path: string, n: number) => { status: number, delayMs?: number }} respond
 *   the answer to a request `t` seconds after the first, for `path`, the `n`th
 * @returns {Promise<import('node:http').Server>}
 */
async function httpServer(respond) {
  /** @type {number | undefined} */
  let first;
  let n = 0;
  const server = createServer((req, res) => {
    first ??= Date.now();
    const answer = respond((Date.now() - first) / 1000, req.url ?? '/', ++n);
    const send = () => void res.writeHead(answer.status, { 'content-type': 'text/plain' }).end(`status ${answer.status}\n`);
    if (answer.delayMs) setTimeout(send, answer.delayMs);
    else send();
  });
  server.keepAliveTimeout = 100;
  await new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(undefined)));
  return server;
}

/** A port nothing listens on (bound, then closed). */
async function closedPort() {
  const s = createServer();
  await new Promise((resolve) => s.listen(0, '127.0.0.1', () => resolve(undefined)));
  const address = /** @type {import('node:net').AddressInfo} */ (s.address());
  await new Promise((resolve) => s.close(() => resolve(undefined)));
  return address.port;
}

const servers = {
  declared: await httpServer((_t, path) => ({ status: path === '/healthz' ? 200 : 404 })),
  slow: await httpServer(() => ({ status: 200, delayMs: 2_500 })),
  flap: await httpServer((t) => ({ status: Math.floor(t / 4) % 2 === 0 ? 200 : 503 })),
  unhealthy: await httpServer((t) => ({ status: t < 8 ? 200 : 500 })),
  unready: await httpServer(() => ({ status: 503 })),
  // A registry that has nothing: every manifest is 404 (containerd talks plain HTTP to a loopback registry).
  registry: await httpServer(() => ({ status: 404 })),
};
/** @type {Record<string, number>} */
const ports = { wrong: await closedPort() };
for (const [name, server] of Object.entries(servers)) ports[name] = /** @type {import('node:net').AddressInfo} */ (server.address()).port;
process.stdout.write(`${JSON.stringify(ports)}\n`);

const stop = () => {
  for (const server of Object.values(servers)) {
    server.closeAllConnections();
    server.close();
  }
  process.stdin.destroy();
};
process.stdin.on('end', stop).on('close', stop).resume();
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP', 'SIGQUIT']) process.once(signal, stop);
