#!/usr/bin/env node
/**
 * The four probe handlers, side by side: one readiness probe per case, run once through
 * the library's Prober exactly as the kubelet's worker would, against servers this script
 * starts on 127.0.0.1. Prints what the kubelet would decide and the event it would record.
 *
 *   npm run -s build && node examples/probe-demo/demo.mjs
 *
 * Exits 0 when every probe came out as the kubelet's would (1 otherwise), once everything
 * it started is closed: nothing calls process.exit, so a leaked handle would show as a hang.
 */
import { once } from 'node:events';
import http from 'node:http';
import net from 'node:net';
import { performance } from 'node:perf_hooks';
import { Server, ServerCredentials } from '@grpc/grpc-js';
import { HealthImplementation } from 'grpc-health-check';
import { LocalCommandRunner, Prober, setProbeDefaults } from '../../dist/index.js';

const HOST = '127.0.0.1';

/** HTTP: /healthz 200, /fail 500, /moved 302 to another host, anything else never answered. */
async function startHttp() {
  const server = http.createServer((req, res) => {
    if (req.url === '/healthz') res.end('ok');
    else if (req.url === '/fail') res.writeHead(500).end('database unreachable');
    else if (req.url === '/moved') res.writeHead(302, { Location: 'http://login.example.invalid/' }).end();
    // /slow: never answered, so the probe's timeout decides.
  });
  server.listen(0, HOST);
  await once(server, 'listening');
  return {
    port: server.address().port,
    close: async () => {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

/** TCP: accepts and lets go, which is all a tcpSocket probe needs. */
async function startTcp() {
  const sockets = new Set();
  const server = net.createServer((socket) => {
    sockets.add(socket);
    socket.on('error', () => {});
    socket.on('close', () => sockets.delete(socket));
  });
  server.listen(0, HOST);
  await once(server, 'listening');
  return {
    port: server.address().port,
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

/** gRPC health: the server as a whole is SERVING, its "payments" service is not. */
async function startGrpc() {
  const server = new Server();
  new HealthImplementation({ '': 'SERVING', payments: 'NOT_SERVING' }).addToServer(server);
  const port = await new Promise((resolve, reject) =>
    server.bindAsync(`${HOST}:0`, ServerCredentials.createInsecure(), (err, bound) => (err ? reject(err) : resolve(bound))),
  );
  return { port, close: async () => server.forceShutdown() };
}

/** A port nothing listens on: bound, then released. */
async function closedPort() {
  const server = net.createServer().listen(0, HOST);
  await once(server, 'listening');
  const { port } = server.address();
  await new Promise((resolve) => server.close(resolve));
  return port;
}

function cases({ httpPort, tcpPort, grpcPort, refusedPort }) {
  const http = (path) => ({ httpGet: { scheme: 'HTTP', host: HOST, port: httpPort, path } });
  const httpTarget = (path) => `http://${HOST}:${httpPort}${path}`;
  return [
    { handler: 'http', target: httpTarget('/healthz'), probe: http('/healthz'), expect: 'success' },
    { handler: 'http', target: httpTarget('/moved'), probe: http('/moved'), expect: 'warning' },
    { handler: 'http', target: httpTarget('/fail'), probe: http('/fail'), expect: 'failure' },
    { handler: 'http', target: httpTarget('/slow'), probe: http('/slow'), expect: 'failure', note: 'timeout' },
    { handler: 'tcp', target: `${HOST}:${tcpPort}`, probe: { tcpSocket: { port: tcpPort } }, expect: 'success' },
    { handler: 'tcp', target: `${HOST}:${refusedPort}`, probe: { tcpSocket: { port: refusedPort } }, expect: 'failure' },
    { handler: 'grpc', target: `${HOST}:${grpcPort}`, probe: { grpc: { port: grpcPort } }, expect: 'success' },
    {
      handler: 'grpc',
      target: `${HOST}:${grpcPort} service=payments`,
      probe: { grpc: { port: grpcPort, service: 'payments' } },
      expect: 'failure',
    },
    { handler: 'exec', target: "sh -c 'exit 0'", probe: { exec: { command: ['sh', '-c', 'exit 0'] } }, expect: 'success' },
    {
      handler: 'exec',
      target: "sh -c 'echo warming up; exit 1'",
      probe: { exec: { command: ['sh', '-c', 'echo warming up; exit 1'] } },
      expect: 'failure',
    },
    { handler: 'exec', target: 'sleep 30', probe: { exec: { command: ['sleep', '30'] } }, expect: 'failure', note: 'timeout' },
  ];
}

/** One probe, run once as a readiness probe with timeoutSeconds 1 (the default). */
async function run(prober, testCase, index) {
  const container = { name: `demo-${index}`, readinessProbe: setProbeDefaults({ ...testCase.probe, timeoutSeconds: 1 }) };
  const pod = { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'demo', namespace: 'default', uid: 'demo' }, spec: { containers: [container] } };
  const status = { podIP: HOST, phase: 'Running' };
  const started = performance.now();
  const details = await prober.probeWithDetails('readiness', pod, status, container, `demo://${index}`);
  const elapsedMs = performance.now() - started;
  const verdict = details.error ? 'errored' : details.outcome.result;
  const event = details.event ? `${details.event.reason}: ${details.event.message}` : '-';
  return { ...testCase, verdict, result: details.result, elapsedMs, event: event.replace(/\s+/g, ' ').trim() };
}

function printTable(rows) {
  // VERDICT is what the handler said; RESULT what the kubelet caches from it (a warning counts as success).
  const header = ['HANDLER', 'TARGET', 'VERDICT', 'RESULT', 'ELAPSED', 'EVENT (as the kubelet records it)'];
  const cells = rows.map((r) => [
    r.handler,
    r.target,
    `${r.verdict}${r.note ? ` (${r.note})` : ''}${r.verdict === r.expect ? '' : ` !! expected ${r.expect}`}`,
    r.result,
    `${Math.round(r.elapsedMs)}ms`,
    r.event,
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...cells.map((c) => c[i].length)));
  const line = (c) => c.map((text, i) => (i === c.length - 1 ? text : text.padEnd(widths[i]))).join('  ');
  console.log([line(header), ...cells.map(line)].join('\n'));
}

const servers = [];
try {
  const web = await startHttp();
  servers.push(web);
  const tcp = await startTcp();
  servers.push(tcp);
  const grpc = await startGrpc();
  servers.push(grpc);
  const refusedPort = await closedPort();

  // Exec probes run as local processes here; in a cluster they run inside the container (CRI ExecSync).
  const prober = new Prober({ runner: new LocalCommandRunner() });
  const rows = [];
  for (const [i, testCase] of cases({ httpPort: web.port, tcpPort: tcp.port, grpcPort: grpc.port, refusedPort }).entries()) {
    rows.push(await run(prober, testCase, i));
  }
  printTable(rows);
  const unexpected = rows.filter((r) => r.verdict !== r.expect).length;
  console.log(`\n${rows.length} probes, ${rows.length - unexpected} as expected.`);
  process.exitCode = unexpected === 0 ? 0 : 1;
} catch (err) {
  console.error(`probe demo: ${err instanceof Error ? err.stack : String(err)}`);
  process.exitCode = 1;
} finally {
  await Promise.all(servers.map((s) => s.close()));
}
