/**
 * `/probes`, the dashboard's files and its live stream, over a real server on 127.0.0.1:
 * filters and their errors, loopback Host/Origin only, a strict CSP, and the stream's
 * snapshot-then-changes protocol for a live view and for a finished timeline.
 */
import { request } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import type { Event, Pod } from '../../src/api/types.js';
import { DASHBOARD_CSP } from '../../src/server/dashboard.js';
import { startServer, type RunningServer } from '../../src/server/server.js';
import { timelineView } from '../../src/server/timeline.js';
import type { KubeletView, ProbeQuery, ViewChange } from '../../src/server/view.js';

const pod: Pod = { metadata: { name: 'web', namespace: 'default', uid: 'u1' }, spec: { containers: [{ name: 'app' }] } };
const ring = (probeType: string, seqs: number[]) => ({ pod: 'web', podUID: 'u1', container: 'app', probeType, attempts: seqs.map((seq) => ({ seq, message: '<b>x</b>' })) });
const rings = [ring('liveness', [3, 2, 1]), ring('readiness', [2, 1])];

function get(url: string, path: string, headers: Record<string, string> = {}): Promise<{ status: number; headers: Record<string, string | string[] | undefined>; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(`${url}${path}`, { headers }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (body += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

/** Reads SSE messages until `count` arrived, then hangs up. */
function readStream(url: string, count: number, headers: Record<string, string> = {}): Promise<Array<{ event: string; data: unknown }>> {
  return new Promise((resolve, reject) => {
    const req = request(`${url}/stream`, { headers }, (res) => {
      expect(res.headers['content-type']).toBe('text/event-stream; charset=utf-8');
      let buffer = '';
      const out: Array<{ event: string; data: unknown }> = [];
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        buffer += chunk;
        let end: number;
        while ((end = buffer.indexOf('\n\n')) >= 0) {
          const block = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          const event = /^event: (.*)$/m.exec(block)?.[1];
          const data = /^data: (.*)$/m.exec(block)?.[1];
          if (event !== undefined && data !== undefined) out.push({ event, data: JSON.parse(data) });
        }
        if (out.length >= count) {
          req.destroy();
          resolve(out);
        }
      });
    });
    req.on('error', (err) => (err.message.includes('socket hang up') ? undefined : reject(err)));
    req.end();
  });
}

let servers: RunningServer[] = [];
async function start(view: KubeletView): Promise<RunningServer> {
  const server = await startServer(view, { port: 0 });
  servers.push(server);
  return server;
}
afterEach(async () => {
  await Promise.all(servers.map((s) => s.close()));
  servers = [];
});

function liveView(): KubeletView & { emit(change: ViewChange): void; queries: ProbeQuery[]; watchers: () => number } {
  const listeners = new Set<(c: ViewChange) => void>();
  const queries: ProbeQuery[] = [];
  return {
    queries,
    listPods: () => [pod],
    listEvents: () => [],
    probeMetrics: () => Promise.resolve(''),
    listProbes: (query) => {
      queries.push(query);
      return rings;
    },
    watch: (listener) => {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    emit: (change) => {
      for (const l of listeners) l(change);
    },
    watchers: () => listeners.size,
  };
}

describe('GET /probes', () => {
  it('passes the checked filters to the view and lists its rings', async () => {
    const view = liveView();
    const { url } = await start(view);
    const res = await get(url, '/probes?pod=web&container=app&type=liveness&limit=2');
    expect(res.status).toBe(200);
    expect(JSON.parse(res.body)).toEqual({ kind: 'ProbeHistoryList', items: rings });
    expect(view.queries).toEqual([{ pod: 'web', container: 'app', probeType: 'liveness', limit: 2 }]);
  });

  it('refuses a bad type or limit with a 400 naming the parameter', async () => {
    const { url } = await start(liveView());
    const type = await get(url, '/probes?type=Liveness');
    expect(type.status).toBe(400);
    expect(JSON.parse(type.body)).toMatchObject({ reason: 'BadRequest', message: 'type: Unsupported value: "Liveness": supported values: "liveness", "readiness", "startup"' });
    const limit = await get(url, '/probes?limit=-1');
    expect(JSON.parse(limit.body)).toMatchObject({ code: 400, message: 'limit: Invalid value: "-1": must be a non-negative integer' });
  });

  it('answers an empty list for a view without a flight recorder', async () => {
    const { url } = await start({ listPods: () => [], listEvents: () => [], probeMetrics: () => Promise.resolve('') });
    expect(JSON.parse((await get(url, '/probes')).body)).toEqual({ kind: 'ProbeHistoryList', items: [] });
  });
});

describe('dashboard files', () => {
  it('serves the built page with a strict CSP and no CORS headers', async () => {
    const { url } = await start(liveView());
    for (const [path, type] of [['/', 'text/html; charset=utf-8'], ['/app.js', 'text/javascript; charset=utf-8'], ['/app.css', 'text/css; charset=utf-8']] as const) {
      const res = await get(url, path);
      expect(res.status, path).toBe(200);
      expect(res.headers['content-type']).toBe(type);
      expect(res.headers['content-security-policy']).toBe(DASHBOARD_CSP);
      expect(res.headers['access-control-allow-origin']).toBeUndefined();
    }
    expect(DASHBOARD_CSP).toContain("default-src 'none'");
    expect(DASHBOARD_CSP).not.toContain('unsafe');
    const html = (await get(url, '/')).body;
    expect(html).toContain('<script type="module" src="/app.js"></script>');
    expect(html).not.toMatch(/https?:\/\//); // nothing fetched from elsewhere
  });

  it('answers only requests addressed to a loopback name with its port, from no other origin', async () => {
    const { url, address } = await start(liveView());
    const own = `127.0.0.1:${address.port}`;
    for (const headers of [{ Host: `evil.example:${address.port}` } as Record<string, string>, { Host: 'localhost:1' }, { Host: own, Origin: 'http://evil.example' }, { Host: own, Origin: `http://localhost:${address.port}` }]) {
      for (const path of ['/', '/stream', '/probes']) {
        const res = await get(url, path, headers);
        expect(res.status, `${path} ${JSON.stringify(headers)}`).toBe(403);
        expect(JSON.parse(res.body)).toMatchObject({ reason: 'Forbidden' });
      }
    }
    expect((await get(url, '/probes', { Host: `localhost:${address.port}` })).status).toBe(200);
    expect((await get(url, '/probes', { Host: own, Origin: `http://${own}` })).status).toBe(200);
    // The other endpoints keep answering as before.
    expect((await get(url, '/healthz', { Host: 'evil.example' })).status).toBe(200);
  });
});

describe('GET /stream', () => {
  it('sends a snapshot, then the changes as they happen; a client that leaves unsubscribes', async () => {
    const view = liveView();
    const { url } = await start(view);
    const messages = readStream(url, 3);
    // The client, and the snapshot it shares with clients that come within a second (it replays the changes since).
    await expect.poll(() => view.watchers()).toBe(2);
    const event = { metadata: { name: 'e1' }, involvedObject: { name: 'web' }, reason: 'Killing' } as Event;
    view.emit({ type: 'event', event });
    view.emit({ type: 'probe', entry: { kind: 'attempt', attempt: { seq: 4 } } });
    const [snapshot, first, second] = await messages;
    expect(snapshot).toEqual({ event: 'snapshot', data: { live: true, pods: [pod], events: [], probes: rings } });
    expect(first).toEqual({ event: 'event', data: event });
    expect(second).toEqual({ event: 'probe', data: { kind: 'attempt', attempt: { seq: 4 } } });
    await expect.poll(() => view.watchers()).toBe(0);
  });

  it('when the server closes (the run is over), a client gets the last batched change and an end, not a cut connection', async () => {
    const view = liveView();
    const server = await start(view);
    const messages = readStream(server.url, 3);
    await expect.poll(() => view.watchers()).toBe(2); // the client and the snapshot it shares with those that come within a second
    const event = { metadata: { name: 'e2' }, involvedObject: { name: 'web' }, reason: 'Killing' } as Event;
    view.emit({ type: 'event', event }); // still batched when the server closes
    const before = Date.now();
    await server.close();
    const [snapshot, last, end] = await messages;
    expect(snapshot?.event).toBe('snapshot');
    expect(last).toEqual({ event: 'event', data: event });
    expect(end?.event).toBe('end');
    const at = Date.parse((end?.data as { at: string }).at);
    expect(at).toBeGreaterThanOrEqual(before - 1000);
    expect(at).toBeLessThanOrEqual(Date.now());
    expect(view.watchers()).toBe(0);
  });

  it('a finished timeline: the snapshot says not live, /probes filters it', async () => {
    const { url } = await start(timelineView({ pods: [pod], events: [], probes: rings }));
    const [snapshot] = await readStream(url, 1);
    expect(snapshot).toEqual({ event: 'snapshot', data: { live: false, pods: [pod], events: [], probes: rings } });
    const limited = JSON.parse((await get(url, '/probes?type=liveness&limit=1')).body) as { items: Array<{ attempts: unknown[] }> };
    expect(limited.items).toEqual([{ ...rings[0], attempts: [{ seq: 3, message: '<b>x</b>' }] }]);
  });
});
