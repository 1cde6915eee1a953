/**
 * The agent's API clients against a real HTTPS server on 127.0.0.1 (a stand-in API server
 * that holds every pod status write unanswered): a flood of pod writes is kept to a bounded
 * number of connections, and a Lease renewal of the node's heartbeat is answered while every
 * one of those writes still waits — it never queues behind them. Before the clients had
 * their own agents, client-node opened one connection per call (the flood took 200), and a
 * single shared bounded agent would hold the renewal behind the writes.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { KubeConfig } from '@kubernetes/client-node';
import { afterEach, describe, expect, it } from 'vitest';
import { startHeartbeat } from '../../src/node/heartbeat.js';
import { POD_CONNECTIONS, heartbeatConnections, kubeClientsFrom, strategicMergePatch, type KubeClients } from '../../src/node/kube.js';
import { FakeClock } from '../../src/util/clock.js';

function selfSigned(): { key: Buffer; cert: Buffer } {
  const dir = mkdtempSync(join(tmpdir(), 'kube-clients-tls-'));
  try {
    execFileSync('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-days', '1', '-subj', '/CN=127.0.0.1', '-addext', 'subjectAltName=IP:127.0.0.1', '-keyout', join(dir, 'k'), '-out', join(dir, 'c')], { stdio: 'ignore' });
    return { key: readFileSync(join(dir, 'k')), cert: readFileSync(join(dir, 'c')) };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

interface StandIn {
  server: Server;
  clients: KubeClients;
  /** Connections opened so far, and requests seen, in arrival order (`METHOD path`). */
  connections: () => number;
  requests: string[];
  heldPodWrites: () => number;
  releasePodWrites(): void;
}

const servers: StandIn[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) {
    s.releasePodWrites();
    s.clients.close();
    s.server.closeAllConnections();
    await new Promise((resolve) => s.server.close(resolve));
  }
});

/** An API server stand-in: pod status writes wait until released; the Node, its Lease and status are answered at once. */
async function standIn(): Promise<StandIn> {
  const tls = selfSigned();
  const held: ServerResponse[] = [];
  const requests: string[] = [];
  let connections = 0;
  const json = (res: ServerResponse, status: number, body: unknown): void => {
    res.writeHead(status, { 'content-type': 'application/json' });
    res.end(JSON.stringify(body));
  };
  const server = createServer(tls, (req: IncomingMessage, res: ServerResponse) => {
    let body = '';
    req.on('data', (chunk: Buffer) => (body += chunk.toString()));
    req.on('end', () => {
      const path = req.url ?? '';
      requests.push(`${req.method ?? ''} ${path}${body === '' ? '' : ` ${body}`}`);
      if (/\/pods\/[^/]+\/status/.test(path)) {
        held.push(res);
        return;
      }
      if (req.method === 'DELETE' || (req.method === 'GET' && path.startsWith('/api/v1/namespaces/ns/pods/'))) return json(res, 200, { kind: 'Pod', metadata: { name: 'p' } });
      if (req.method === 'POST' && path === '/api/v1/nodes') return json(res, 201, { ...(JSON.parse(body) as object), metadata: { name: 'n1', uid: 'node-uid' } });
      if (path === '/api/v1/nodes/n1/status') return json(res, 200, { metadata: { name: 'n1', uid: 'node-uid' }, status: {} });
      if (req.method === 'GET' && path.startsWith('/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases/n1')) {
        return json(res, 200, { metadata: { name: 'n1', namespace: 'kube-node-lease', resourceVersion: '1' }, spec: {} });
      }
      if (req.method === 'PUT' && path.startsWith('/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases/n1')) return json(res, 200, JSON.parse(body));
      json(res, 404, { kind: 'Status', code: 404, message: `not here: ${path}` });
    });
  });
  server.on('secureConnection', () => connections++);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  const config = new KubeConfig();
  config.loadFromOptions({
    clusters: [{ name: 'c', server: `https://127.0.0.1:${port}`, caData: tls.cert.toString('base64') }],
    users: [{ name: 'u', token: 'secret' }],
    contexts: [{ name: 'x', cluster: 'c', user: 'u' }],
    currentContext: 'x',
  });
  const s: StandIn = {
    server,
    clients: kubeClientsFrom(config),
    connections: () => connections,
    requests,
    heldPodWrites: () => held.length,
    releasePodWrites: () => {
      for (const res of held.splice(0)) json(res, 200, { metadata: {} });
    },
  };
  servers.push(s);
  return s;
}

async function until(what: string, check: () => boolean): Promise<void> {
  for (let i = 0; i < 1000 && !check(); i++) await new Promise((resolve) => setTimeout(resolve, 10));
  if (!check()) throw new Error(`never: ${what}`);
}

describe('the node agent’s API clients', () => {
  it('keep a flood of pod status writes to a bounded number of connections, and renew the Lease while every one of them waits', async () => {
    const s = await standIn();
    const clock = new FakeClock(0);
    const heartbeat = await startHeartbeat({
      clients: s.clients,
      identity: { name: 'n1', runtimeVersion: 'probelet-simulated://0', probeletVersion: '0', port: 10255, address: '10.0.0.1' },
      clock,
      log: () => undefined,
    });
    try {
      const flood = Array.from({ length: 200 }, (_, i) =>
        s.clients.core.patchNamespacedPodStatus({ name: `p${i}`, namespace: 'ns', body: { status: {} } }, strategicMergePatch),
      );
      await until(`${POD_CONNECTIONS} pod writes held`, () => s.heldPodWrites() >= POD_CONNECTIONS);
      const before = s.requests.filter((r) => r.startsWith('PUT /apis/coordination.k8s.io')).length;
      // The next renewal falls due while all 200 writes wait (none has been answered).
      await clock.advance(10_000);
      await until('a Lease renewal', () => s.requests.filter((r) => r.startsWith('PUT /apis/coordination.k8s.io')).length > before);
      expect(s.heldPodWrites()).toBeLessThanOrEqual(POD_CONNECTIONS);
      await until('the renewal counted', () => heartbeat.renewals().count === 2);
      expect(heartbeat.renewals().longestGapMs).toBe(10_000);
      // The pod writes, the heartbeat's own connection(s), and the first registration/status calls: far from one per write.
      expect(s.connections()).toBeLessThanOrEqual(POD_CONNECTIONS + 4);
      s.releasePodWrites();
      await until('every pod write answered', () => {
        s.releasePodWrites();
        return s.requests.filter((r) => r.includes('/pods/')).length === 200;
      });
      await Promise.all(flood);
      expect(s.connections()).toBeLessThanOrEqual(POD_CONNECTIONS + 4);
    } finally {
      heartbeat.close();
    }
  });

  it('send a DELETE’s body with its length, so the next call on the kept-alive connection is read as a call of its own', async () => {
    const s = await standIn();
    await s.clients.core.deleteNamespacedPod({ name: 'p', namespace: 'ns', gracePeriodSeconds: 0, body: { gracePeriodSeconds: 0, preconditions: { uid: 'u1' } } });
    await s.clients.core.readNamespacedPod({ name: 'p', namespace: 'ns' });
    expect(s.requests).toEqual([
      'DELETE /api/v1/namespaces/ns/pods/p?gracePeriodSeconds=0 {"gracePeriodSeconds":0,"preconditions":{"uid":"u1"}}',
      'GET /api/v1/namespaces/ns/pods/p',
    ]);
    expect(s.connections()).toBe(1);
  });
});

describe('a fleet’s heartbeat connections', () => {
  it('grow with its nodes, one per ten (500 nodes renew 50 Leases a second), never fewer than a node’s 8', () => {
    expect([1, 80, 81, 500, 10_000].map(heartbeatConnections)).toEqual([8, 8, 9, 50, 1000]);
  });
});

describe('the node agent’s watches', () => {
  it('share one kept-alive agent: five watches one after another take one connection, not five', async () => {
    const s = await standIn();
    const before = s.connections();
    for (let i = 0; i < 5; i++) {
      await new Promise<void>((resolve) => {
        void s.clients.watch.watch('/api/v1/pods', { fieldSelector: 'spec.nodeName=n1' }, () => undefined, () => resolve());
      });
    }
    expect(s.requests.filter((r) => r.startsWith('GET /api/v1/pods?')).length).toBe(5);
    expect(s.connections() - before).toBe(1);
  });
});
