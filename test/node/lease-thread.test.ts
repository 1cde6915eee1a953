/**
 * The lease thread (src/node/lease/thread.ts) renews a node's Lease while the main thread is
 * busy: the stand-in API server runs on a worker thread of its own and counts the Lease
 * requests in shared memory, and the main thread blocks (Atomics.wait, no event loop turn)
 * until one arrives. On the main thread's own event loop (`inThreadLeases`) nothing can arrive
 * while it is blocked — the case of a 20,000-pod fleet whose renewals all came minutes late.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import { KubeConfig } from '@kubernetes/client-node';
import { afterEach, describe, expect, it } from 'vitest';
import { inThreadLeases, type LeaseHost } from '../../src/node/lease/controller.js';
import { startLeaseThread, type LeaseThread } from '../../src/node/lease/thread.js';
import { kubeClientsFrom, type KubeClients } from '../../src/node/kube.js';
import { realClock } from '../../src/util/clock.js';

function selfSigned(): { key: string; cert: string } {
  const dir = mkdtempSync(join(tmpdir(), 'lease-thread-tls-'));
  try {
    execFileSync('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-days', '1', '-subj', '/CN=127.0.0.1', '-addext', 'subjectAltName=IP:127.0.0.1', '-keyout', join(dir, 'k'), '-out', join(dir, 'c')], { stdio: 'ignore' });
    return { key: readFileSync(join(dir, 'k'), 'utf8'), cert: readFileSync(join(dir, 'c'), 'utf8') };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * An API server stand-in on its own thread: answers the Lease's GET and PUT of node n1 and
 * counts them in `seen[0]` (notified), so a blocked main thread can wait for them.
 */
const SERVER = `
const { workerData, parentPort } = require('node:worker_threads');
const { createServer } = require('node:https');
const seen = new Int32Array(workerData.seen);
const server = createServer({ key: workerData.key, cert: workerData.cert }, (req, res) => {
  let body = '';
  req.on('data', (c) => (body += c));
  req.on('end', () => {
    const lease = (req.url || '').startsWith('/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases/n1');
    res.writeHead(lease ? 200 : 404, { 'content-type': 'application/json' });
    res.end(req.method === 'PUT' ? body : JSON.stringify({ metadata: { name: 'n1', namespace: 'kube-node-lease', resourceVersion: '1' }, spec: {} }));
    if (lease) { Atomics.add(seen, 0, 1); Atomics.notify(seen, 0); }
  });
});
server.listen(0, '127.0.0.1', () => parentPort.postMessage(server.address().port));
parentPort.on('message', () => { server.closeAllConnections(); server.close(() => process.exit(0)); });
`;

interface StandIn {
  seen: Int32Array;
  config: KubeConfig;
  stop(): Promise<void>;
}

async function standIn(): Promise<StandIn> {
  const tls = selfSigned();
  const seen = new Int32Array(new SharedArrayBuffer(4));
  const worker = new Worker(SERVER, { eval: true, workerData: { ...tls, seen: seen.buffer } });
  const port = await new Promise<number>((resolve) => worker.once('message', resolve));
  const config = new KubeConfig();
  config.loadFromOptions({
    clusters: [{ name: 'c', server: `https://127.0.0.1:${port}`, caData: Buffer.from(tls.cert).toString('base64') }],
    users: [{ name: 'u', token: 'secret' }],
    contexts: [{ name: 'x', cluster: 'c', user: 'u' }],
    currentContext: 'x',
  });
  return {
    seen,
    config,
    stop: async () => {
      const exited = new Promise((resolve) => worker.once('exit', resolve));
      worker.postMessage('stop');
      await exited;
    },
  };
}

/** Blocks this thread (no event loop turn) until `seen[0]` leaves 0 or `ms` pass; what it then holds. */
function blockUntilSeen(seen: Int32Array, ms: number): number {
  const deadline = Date.now() + ms;
  while (Atomics.load(seen, 0) === 0 && Date.now() < deadline) Atomics.wait(seen, 0, 0, deadline - Date.now());
  return Atomics.load(seen, 0);
}

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

describe('the lease thread', () => {
  it('renews a Lease while the main thread is blocked, and counts the renewal for the main thread', async () => {
    const s = await standIn();
    cleanups.push(s.stop);
    const logs: string[] = [];
    const thread: LeaseThread = startLeaseThread(s.config, 1, (line) => logs.push(line));
    cleanups.push(() => thread.close());
    const started = thread.start('n1', 'uid-1');
    // The main thread never turns its event loop here: only the lease thread can have asked.
    expect(blockUntilSeen(s.seen, 20_000)).toBeGreaterThanOrEqual(1);
    const controller = await started;
    expect(controller.renewals().count).toBe(1);
    expect(logs).toEqual([]);
    controller.close();
  });

  it('refuses a node past its slots, naming the node', async () => {
    const s = await standIn();
    cleanups.push(s.stop);
    const thread = startLeaseThread(s.config, 1, () => undefined);
    cleanups.push(() => thread.close());
    await thread.start('n1', 'uid-1');
    await expect(thread.start('n2', 'uid-2')).rejects.toThrow(/node n2: the lease thread has slots for 1 node/);
  });

  it('on the main thread’s own event loop, no renewal reaches the API server while that thread is blocked', async () => {
    const s = await standIn();
    cleanups.push(s.stop);
    const clients: KubeClients = kubeClientsFrom(s.config);
    cleanups.push(() => clients.close());
    const host: LeaseHost = inThreadLeases(clients.heartbeat.coordination, realClock, () => undefined);
    const started = host.start('n1', 'uid-1');
    expect(blockUntilSeen(s.seen, 1_000)).toBe(0);
    const controller = await started;
    expect(controller.renewals().count).toBe(1);
    controller.close();
  });
});
