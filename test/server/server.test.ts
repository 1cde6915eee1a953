import { Agent, request } from 'node:http';
import type { Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { Counter, Registry } from 'prom-client';
import type { Pod } from '../../src/api/types.js';
import { createEventRecorder } from '../../src/kubelet/events.js';
import { isLoopbackHost } from '../../src/server/loopback.js';
import { startServer, type RunningServer } from '../../src/server/server.js';
import type { KubeletView } from '../../src/server/view.js';
import { FakeClock } from '../../src/util/clock.js';

interface Response {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

function send(url: string, method: string, path: string, agent?: Agent): Promise<Response> {
  return new Promise((resolve, reject) => {
    const req = request(`${url}${path}`, { method, agent }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (body += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

const pods: Pod[] = [
  { metadata: { name: 'web', namespace: 'default', uid: 'u1' }, spec: { containers: [{ name: 'app' }] } },
  { metadata: { name: 'api', namespace: 'default', uid: 'u2' }, spec: { containers: [{ name: 'app' }] } },
];

function makeView(overrides: Partial<KubeletView> = {}): KubeletView & { eventFilters: unknown[] } {
  const recorder = createEventRecorder({ clock: new FakeClock(Date.UTC(2025, 0, 1)), host: 'node-1' });
  for (const pod of pods) recorder.event({ pod, containerName: 'app' }, 'Warning', 'Unhealthy', 'Liveness probe failed: x');
  const registry = new Registry();
  const counter = new Counter({ name: 'prober_probe_total', help: 'h', labelNames: ['pod'], registers: [registry] });
  counter.inc({ pod: 'web' });
  const eventFilters: unknown[] = [];
  return {
    eventFilters,
    listPods: () => pods,
    listEvents: (filter) => {
      eventFilters.push(filter);
      return recorder.list(filter);
    },
    probeMetrics: () => registry.metrics(),
    ...overrides,
  };
}

const NOT_FOUND = {
  kind: 'Status',
  apiVersion: 'v1',
  metadata: {},
  status: 'Failure',
  message: 'the server could not find the requested resource',
  reason: 'NotFound',
  code: 404,
};

let running: RunningServer[] = [];
async function start(view: KubeletView = makeView()): Promise<RunningServer> {
  const s = await startServer(view, { port: 0 });
  running.push(s);
  return s;
}

afterEach(async () => {
  await Promise.all(running.map((s) => s.close()));
  running = [];
});

describe('read-only API routes', () => {
  it('GET /healthz says ok in plain text', async () => {
    const { url } = await start();
    const res = await send(url, 'GET', '/healthz');
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toBe('text/plain; charset=utf-8');
    expect(res.body).toBe('ok');
  });

  it('GET /pods returns a v1 PodList of the view pods', async () => {
    const { url } = await start();
    const res = await send(url, 'GET', '/pods');
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toBe('application/json');
    expect(res.body.startsWith('{"kind":"PodList","apiVersion":"v1","metadata":{},"items":[')).toBe(true);
    expect(JSON.parse(res.body)).toEqual({ kind: 'PodList', apiVersion: 'v1', metadata: {}, items: pods });
  });

  it('GET /events returns a v1 EventList; ?pod=NAME narrows it to one pod', async () => {
    const view = makeView();
    const { url } = await start(view);
    const all = await send(url, 'GET', '/events');
    expect(all.status).toBe(200);
    expect(all.headers['content-type']).toBe('application/json');
    const list = JSON.parse(all.body) as { kind: string; apiVersion: string; metadata: object; items: { involvedObject: { name: string } }[] };
    expect(list).toMatchObject({ kind: 'EventList', apiVersion: 'v1', metadata: {} });
    expect(list.items.map((e) => e.involvedObject.name)).toEqual(['web', 'api']);

    const one = JSON.parse((await send(url, 'GET', '/events?pod=api')).body) as typeof list;
    expect(one.items.map((e) => e.involvedObject.name)).toEqual(['api']);
    expect(view.eventFilters).toEqual([undefined, { podName: 'api' }]);

    const none = JSON.parse((await send(url, 'GET', '/events?pod=nope')).body) as typeof list;
    expect(none.items).toEqual([]);
  });

  it('GET /metrics/probes serves the Prometheus text with its content type', async () => {
    const { url } = await start();
    const res = await send(url, 'GET', '/metrics/probes');
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toBe('text/plain; version=0.0.4; charset=utf-8');
    expect(res.body).toContain('# TYPE prober_probe_total counter');
    expect(res.body).toContain('prober_probe_total{pod="web"} 1');
  });

  it('HEAD answers like GET without a body', async () => {
    const { url } = await start();
    for (const path of ['/healthz', '/pods', '/events', '/metrics/probes', '/nope']) {
      const get = await send(url, 'GET', path);
      const head = await send(url, 'HEAD', path);
      expect(head.status).toBe(get.status);
      expect(head.headers['content-type']).toBe(get.headers['content-type']);
      expect(head.headers['content-length']).toBe(String(Buffer.byteLength(get.body)));
      expect(head.body).toBe('');
    }
  });

  it('a list larger than a piece is sent chunked from the view\'s rings one at a time: the same bytes as one JSON.stringify', async () => {
    const ring = { pod: 'web', container: 'app', probeType: 'liveness', attempts: [{ message: 'x'.repeat(1000) }] };
    let reached = 0;
    const view = makeView({
      listProbes: () => Array.from({ length: 300 }, () => ring),
      *eachProbeHistory() {
        for (let i = 0; i < 300; i++) {
          reached++;
          yield ring;
        }
      },
    });
    const { url } = await start(view);
    const res = await send(url, 'GET', '/probes');
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toBe('application/json');
    expect(res.headers['transfer-encoding']).toBe('chunked');
    expect(res.body).toBe(`${JSON.stringify({ kind: 'ProbeHistoryList', items: view.listProbes?.({}) })}\n`);
    expect(reached).toBe(300);
    const head = await send(url, 'HEAD', '/probes');
    expect(head.status).toBe(200);
    expect(head.body).toBe('');
  });

  it('unknown paths get 404 with a NotFound Status', async () => {
    const { url } = await start();
    for (const path of ['/podsx', '/pods/web', '/metrics', '//healthz']) {
      const res = await send(url, 'GET', path);
      expect(res.status, path).toBe(404);
      expect(res.headers['content-type']).toBe('application/json');
      expect(JSON.parse(res.body)).toEqual(NOT_FOUND);
    }
  });

  it('other methods get 405 with a MethodNotAllowed Status and Allow: GET, HEAD', async () => {
    const { url } = await start();
    for (const method of ['POST', 'PUT', 'DELETE', 'PATCH']) {
      const res = await send(url, method, '/pods');
      expect(res.status, method).toBe(405);
      expect(res.headers['allow']).toBe('GET, HEAD');
      expect(JSON.parse(res.body)).toEqual({
        kind: 'Status',
        apiVersion: 'v1',
        metadata: {},
        status: 'Failure',
        message: 'the server does not allow this method on the requested resource',
        reason: 'MethodNotAllowed',
        code: 405,
      });
    }
  });

  it('a failing view gives a 500 InternalError Status, and the server keeps serving', async () => {
    const { url } = await start(makeView({ probeMetrics: () => Promise.reject(new Error('registry gone')) }));
    const res = await send(url, 'GET', '/metrics/probes');
    expect(res.status).toBe(500);
    expect(JSON.parse(res.body)).toMatchObject({ reason: 'InternalError', code: 500, message: 'Internal error occurred: registry gone' });
    expect((await send(url, 'GET', '/healthz')).body).toBe('ok');
  });
});

describe('startServer', () => {
  it('port 0 picks a free port on 127.0.0.1 and reports it', async () => {
    const s = await start();
    expect(s.address.host).toBe('127.0.0.1');
    expect(s.address.port).toBeGreaterThan(0);
    expect(s.url).toBe(`http://127.0.0.1:${s.address.port}`);
  });

  it('accepts localhost and other loopback addresses', async () => {
    const s = await startServer(makeView(), { host: 'localhost', port: 0 });
    running.push(s);
    expect(isLoopbackHost(s.address.host)).toBe(true);
    expect((await send(s.url, 'GET', '/healthz')).body).toBe('ok');
    for (const host of ['127.0.0.1', '127.8.9.10', '::1', '0:0:0:0:0:0:0:1', '::ffff:127.0.0.1', 'LOCALHOST']) {
      expect(isLoopbackHost(host), host).toBe(true);
    }
  });

  it('refuses a non-loopback host with a clear error', async () => {
    for (const host of ['0.0.0.0', '::', '192.168.1.10', '::ffff:10.0.0.1', 'example.com', '']) {
      await expect(startServer(makeView(), { host, port: 0 }), host).rejects.toThrow(/only loopback addresses/);
    }
  });

  it('rejects an invalid port, and a port already in use', async () => {
    await expect(startServer(makeView(), { port: 70000 })).rejects.toThrow(RangeError);
    const s = await start();
    await expect(startServer(makeView(), { port: s.address.port })).rejects.toMatchObject({ code: 'EADDRINUSE' });
  });

  it('close() drops idle keep-alive and in-flight connections, leaving no socket or server handle', async () => {
    const count = (kind: string): number => process.getActiveResourcesInfo().filter((r) => r === kind).length;
    // libuv frees a closed handle on a later loop turn: let earlier tests' handles go first.
    const settle = async (): Promise<void> => {
      for (let i = 0; i < 10; i++) await new Promise((r) => setImmediate(r));
    };
    await settle();
    const sockets0 = count('TCPSocketWrap');
    const servers0 = count('TCPServerWrap');

    // A scrape that never finishes on its own keeps one request in flight.
    let entered!: () => void;
    const scrapeStarted = new Promise<void>((resolve) => (entered = resolve));
    let finishScrape!: (text: string) => void;
    const view = makeView({
      probeMetrics: () => {
        entered();
        return new Promise<string>((resolve) => (finishScrape = resolve));
      },
    });
    const s = await startServer(view, { port: 0 });

    const agent = new Agent({ keepAlive: true });
    let clientSocket: Socket | undefined;
    const req = request(`${s.url}/pods`, { agent }, (res) => res.resume());
    req.on('socket', (sock) => (clientSocket = sock));
    await new Promise<void>((resolve, reject) => {
      req.on('close', resolve);
      req.on('error', reject);
      req.end();
    });
    if (!clientSocket) throw new Error('no socket');
    const idle = clientSocket;
    expect(idle.destroyed).toBe(false); // kept alive in the agent's pool
    const idleClosed = new Promise<void>((resolve) => idle.once('close', () => resolve()));

    const inFlight = send(s.url, 'GET', '/metrics/probes');
    await scrapeStarted;
    expect(count('TCPServerWrap')).toBe(servers0 + 1);

    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<string>((resolve) => (timer = setTimeout(() => resolve('timed out'), 3000)));
    expect(await Promise.race([s.close().then(() => 'closed'), timedOut])).toBe('closed');
    clearTimeout(timer);
    await expect(inFlight).rejects.toThrow(/socket hang up|ECONNRESET/);
    await idleClosed;
    finishScrape('too late'); // answering a closed connection must be harmless
    agent.destroy();
    await settle();

    expect(count('TCPServerWrap')).toBe(servers0);
    expect(count('TCPSocketWrap')).toBe(sockets0);
    await expect(s.close()).resolves.toBeUndefined(); // idempotent
    await expect(send(s.url, 'GET', '/healthz')).rejects.toMatchObject({ code: 'ECONNREFUSED' });
  });
});
