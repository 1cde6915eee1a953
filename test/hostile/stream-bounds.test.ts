/**
 * `/stream` memory is bounded in total (issue 21): a cap on open streams (one more takes the
 * place of the stream furthest behind, issue 33), one backlog budget shared by every client (a client that never reads
 * is cut, not buffered for), the snapshot counted in it; and a request with two `Host`
 * headers is refused. Clients here are raw sockets that send their request and never read.
 */
import http from 'node:http';
import net from 'node:net';
import { describe, expect, it, onTestFinished } from 'vitest';
import type { Pod } from '../../src/api/types.js';
import { startServer, type RunningServer } from '../../src/server/server.js';
import type { StreamLimits } from '../../src/server/stream-budget.js';
import type { KubeletView, ViewChange } from '../../src/server/view.js';
import { FakeClock } from '../../src/util/clock.js';

const pod: Pod = { metadata: { name: 'web', namespace: 'default', uid: 'u1' }, spec: { containers: [{ name: 'app' }] } };

function liveView(pods: Pod[] = [pod]): KubeletView & { emit(change: ViewChange): void } {
  const listeners = new Set<(c: ViewChange) => void>();
  return {
    listPods: () => pods,
    listEvents: () => [],
    probeMetrics: () => Promise.resolve(''),
    watch: (listener) => {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    emit: (change) => {
      for (const l of listeners) l(change);
    },
  };
}

async function start(view: KubeletView, streamLimits?: StreamLimits, clock = new FakeClock()): Promise<RunningServer> {
  const server = await startServer(view, { port: 0, clock, ...(streamLimits ? { streamLimits } : {}) });
  onTestFinished(() => server.close());
  return server;
}

/** A client that sends its request and then never reads; `head` resolves with the status line once it came. */
function stalledClient(port: number, extraHeaders = ''): { socket: net.Socket; head: Promise<string> } {
  const socket = net.connect({ host: '127.0.0.1', port });
  onTestFinished(() => void socket.destroy());
  const head = new Promise<string>((resolve) => {
    socket.once('data', (chunk: Buffer) => {
      socket.pause();
      resolve(chunk.toString('latin1'));
    });
  });
  socket.on('error', () => undefined);
  socket.write(`GET /stream HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\n${extraHeaders}\r\n`);
  return { socket, head };
}

const MiB = 2 ** 20;

/** The first `count` SSE messages of a new stream (the `retry:` line left out); the stream stays open until the test ends. */
function firstMessages(port: number, count: number): Promise<string[]> {
  return new Promise((resolve, reject) => {
    const req = http.get({ host: '127.0.0.1', port, path: '/stream' }, (res) => {
      onTestFinished(() => void req.destroy());
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        body += chunk;
        const messages = body.replace(/^retry: \d+\n/, '').split('\n\n').slice(0, -1);
        if (messages.length >= count) resolve(messages.slice(0, count));
      });
    });
    req.on('error', (err) => (err.message.includes('socket hang up') ? undefined : reject(err)));
  });
}

describe('/stream is bounded in total', () => {
  it('one stream more than the cap takes the place of the one furthest behind (the oldest when none is)', async () => {
    const clock = new FakeClock();
    const view = liveView();
    const server = await start(view, { maxStreams: 3, maxBacklogBytes: 8 * MiB, totalBacklogBytes: 32 * MiB }, clock);
    const { port } = server.address;
    // The oldest stream reads all it is sent: never behind.
    const reader = net.connect({ host: '127.0.0.1', port });
    onTestFinished(() => void reader.destroy());
    let readerClosed = false;
    reader.on('data', () => undefined);
    reader.on('close', () => (readerClosed = true));
    reader.write(`GET /stream HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\n\r\n`);
    await expect.poll(() => server.streamUse().streams).toBe(1);
    for (const c of [stalledClient(port), stalledClient(port)]) expect(await c.head).toMatch(/^HTTP\/1\.1 200/);
    // The two stalled ones fall behind (more than the kernel takes, unread).
    view.emit({ type: 'probe', entry: { kind: 'attempt', attempt: { message: 'x'.repeat(6 * MiB) } } });
    await clock.advance(100);
    await expect.poll(() => server.streamUse().backlogBytes).toBeGreaterThan(MiB);
    expect(await stalledClient(port).head).toMatch(/^HTTP\/1\.1 200/);
    expect(server.streamUse().streams).toBe(3);
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(readerClosed).toBe(false);
  });

  it('clients that never read share one backlog budget: the furthest behind are cut, the total stays within it', async () => {
    const clock = new FakeClock();
    const view = liveView();
    const limits = { maxStreams: 20, maxBacklogBytes: 4 * MiB, totalBacklogBytes: 6 * MiB };
    const server = await start(view, limits, clock);
    const clients = Array.from({ length: 12 }, () => stalledClient(server.address.port));
    for (const c of clients) await c.head;
    // One client that reads: it is never the one furthest behind, so it is never cut.
    const reader = net.connect({ host: '127.0.0.1', port: server.address.port });
    onTestFinished(() => void reader.destroy());
    let read = 0;
    reader.on('data', (chunk: Buffer) => (read += chunk.length));
    reader.write(`GET /stream HTTP/1.1\r\nHost: 127.0.0.1:${server.address.port}\r\n\r\n`);
    await expect.poll(() => server.streamUse().streams).toBe(13);
    const payload = { kind: 'attempt', attempt: { seq: 1, message: 'x'.repeat(64 * 1024) } };
    let most = 0;
    // 12 clients × 40 MiB each offered: 480 MiB if nothing bounded it.
    for (let round = 0; round < 40; round++) {
      for (let i = 0; i < 16; i++) view.emit({ type: 'probe', entry: payload });
      await clock.advance(100);
      // The reader takes what it was sent before the next round.
      await new Promise((resolve) => setTimeout(resolve, 5));
      most = Math.max(most, server.streamUse().backlogBytes);
    }
    expect(most).toBeLessThanOrEqual(limits.totalBacklogBytes);
    expect(most).toBeGreaterThan(MiB);
    // Every client that does not read was cut (its own cap or the shared budget); the reader got it all.
    expect(server.streamUse().streams).toBe(1);
    await expect.poll(() => read).toBeGreaterThan(40 * 16 * 64 * 1024);
  });

  it('the snapshot counts: one larger than the whole budget is a 503 saying so', async () => {
    const pods = Array.from({ length: 40 }, (_, i): Pod => ({ ...pod, metadata: { name: `p${i}`, annotations: { big: 'x'.repeat(64 * 1024) } } }));
    const server = await start(liveView(pods), { maxStreams: 4, maxBacklogBytes: MiB, totalBacklogBytes: 2 * MiB });
    const answer = await stalledClient(server.address.port).head;
    expect(answer).toMatch(/^HTTP\/1\.1 503/);
    expect(answer).toMatch(/the snapshot is 2\.\d MiB, more than all streams may hold \(2\.0 MiB\)/);
    expect(server.streamUse().streams).toBe(0);
  });

  it('clients that come together share one snapshot, and a later one gets the changes made since', async () => {
    const view = liveView();
    const server = await start(view);
    const first = await firstMessages(server.address.port, 1);
    expect(first[0]).toMatch(/^event: snapshot/);
    view.emit({ type: 'probe', entry: { kind: 'attempt', attempt: { seq: 7 } } });
    const second = await firstMessages(server.address.port, 2);
    expect(second[0]).toBe(first[0]);
    expect(second[1]).toBe('event: probe\ndata: {"kind":"attempt","attempt":{"seq":7}}');
  });

  it('two Host headers: 400, on every path', async () => {
    const server = await start(liveView());
    const { port } = server.address;
    for (const path of ['/healthz', '/pods', '/stream']) {
      const socket = net.connect({ host: '127.0.0.1', port });
      const text = await new Promise<string>((resolve) => {
        let got = '';
        socket.on('data', (c: Buffer) => (got += c.toString('latin1')));
        socket.on('close', () => resolve(got));
        socket.on('error', () => resolve(got));
        socket.write(`GET ${path} HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nHost: evil.example:80\r\nConnection: close\r\n\r\n`);
      });
      expect(text, path).toMatch(/^HTTP\/1\.1 400/);
      expect(text, path).toContain('the request has 2 Host headers; send exactly one');
    }
  });
});
