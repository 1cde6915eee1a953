/**
 * The read-only API against hostile clients (127.0.0.1 only): it refuses to listen beyond
 * loopback, and through malformed requests, huge URLs, 1,000 concurrent connections,
 * slowloris clients, path traversal and every other method `/healthz` keeps answering,
 * nothing but GET/HEAD of the known routes is served, and closing it leaves nothing behind.
 */
import { writeFileSync, rmSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import type { Pod } from '../../src/api/types.js';
import { startServer, type RunningServer } from '../../src/server/server.js';
import type { KubeletView } from '../../src/server/view.js';
import { runCli } from '../cli/helpers.js';
import { hostileCase } from './leaks.js';

const pods: Pod[] = [{ metadata: { name: 'web', namespace: 'default', uid: 'u1' }, spec: { containers: [{ name: 'app' }] } }];
const view: KubeletView = { listPods: () => pods, listEvents: () => [], probeMetrics: () => Promise.resolve('') };

interface RawAnswer {
  /** The status code of the first response, 0 when the server closed without one. */
  status: number;
  text: string;
}

/** Writes `request` on a fresh connection and collects whatever comes back until the server closes or `ms` pass. */
function raw(port: number, request: string | Buffer, ms = 3000): Promise<RawAnswer> {
  return new Promise((resolve) => {
    const socket = net.connect({ host: '127.0.0.1', port });
    let text = '';
    const done = (): void => {
      clearTimeout(timer);
      socket.destroy();
      resolve({ status: Number(/^HTTP\/1\.1 (\d{3})/.exec(text)?.[1] ?? 0), text });
    };
    const timer = setTimeout(done, ms);
    socket.setEncoding('latin1');
    socket.on('data', (chunk: string) => (text += chunk));
    socket.on('error', done);
    socket.on('close', done);
    socket.write(request);
  });
}

async function healthz(port: number): Promise<number> {
  return (await raw(port, 'GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n')).status;
}

/** A server for one test, closed with it; the case runs between start and close. */
async function withServer(run: (server: RunningServer) => Promise<void>): Promise<void> {
  await hostileCase(async () => {
    const server = await startServer(view, { port: 0 });
    try {
      await run(server);
    } finally {
      await server.close();
    }
  });
}

describe('read-only API against hostile clients', () => {
  it('refuses non-loopback addresses, in the library and as `run --listen` (exit 2, naming the flag)', async () => {
    for (const host of ['0.0.0.0', '::', '10.1.2.3', '169.254.1.1', 'example.com', '']) {
      await expect(startServer(view, { host, port: 0 }), host).rejects.toThrow(/only loopback addresses/);
    }
    const file = join(tmpdir(), 'pod.yaml');
    writeFileSync(file, 'apiVersion: v1\nkind: Pod\nmetadata: {name: web}\nspec: {containers: [{name: app, image: x, command: [sleep, "1"]}]}\n');
    onTestFinished(() => rmSync(file, { force: true }));
    const run = await runCli(['run', file, '--listen', '0.0.0.0:0']);
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(/^probelet: --listen 0\.0\.0\.0:0: refusing to serve the read-only API on "0\.0\.0\.0"/);
  });

  it('survives malformed requests: each is refused, /healthz keeps answering', async () => {
    await withServer(async (server) => {
      const { port } = server.address;
      const malformed = [
        'GARBAGE\r\n\r\n',
        'GET /healthz HTTP/9.9\r\n\r\n',
        'GET /healthz HTTP/1.1\r\nNo colon here\r\n\r\n',
        'GET /healthz HTTP/1.1\r\nHost: x\r\nContent-Length: -1\r\n\r\n',
        'GET /healthz HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\nContent-Length: 3\r\n\r\n',
        Buffer.from([0, 1, 2, 3, 0xff, 0xfe, 13, 10, 13, 10]),
        'FOO /healthz HTTP/1.1\r\nHost: x\r\n\r\n',
      ];
      for (const request of malformed) {
        const answer = await raw(port, request);
        expect([0, 400], JSON.stringify(String(request))).toContain(answer.status);
        expect(await healthz(port)).toBe(200);
      }
    });
  });

  it('huge URLs and headers are refused (431), /healthz keeps answering', async () => {
    await withServer(async (server) => {
      const { port } = server.address;
      for (const target of [`/healthz?x=${'a'.repeat(1 << 20)}`, `/${'p'.repeat(100_000)}`]) {
        const answer = await raw(port, `GET ${target} HTTP/1.1\r\nHost: x\r\n\r\n`);
        expect([0, 431]).toContain(answer.status);
        expect(await healthz(port)).toBe(200);
      }
    });
  });

  it('every path but /healthz refuses a request addressed to another host (DNS rebinding): events quote probe output', async () => {
    await withServer(async (server) => {
      const { port } = server.address;
      for (const path of ['/pods', '/events', '/metrics/probes', '/probes']) {
        expect((await raw(port, `GET ${path} HTTP/1.1\r\nHost: rebound.example:${port}\r\nConnection: close\r\n\r\n`)).status, path).toBe(403);
        expect((await raw(port, `GET ${path} HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nConnection: close\r\n\r\n`)).status, path).toBe(200);
      }
      expect((await raw(port, `GET /healthz HTTP/1.1\r\nHost: rebound.example:${port}\r\nConnection: close\r\n\r\n`)).status).toBe(200);
    });
  });

  it('1,000 concurrent connections are all answered, and /healthz with them', async () => {
    await withServer(async (server) => {
      const { port } = server.address;
      const answers = await Promise.all([
        ...Array.from({ length: 1000 }, (_, i) => raw(port, `GET ${i % 2 ? '/healthz' : '/pods'} HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nConnection: close\r\n\r\n`, 20_000)),
        healthz(port),
      ]);
      expect(answers.filter((a) => typeof a === 'number' ? a !== 200 : a.status !== 200)).toEqual([]);
    });
  }, 60_000);

  it('slowloris clients are cut off; /healthz keeps answering meanwhile', async () => {
    await withServer(async (server) => {
      const { port } = server.address;
      const slow: net.Socket[] = [];
      const closed: Array<Promise<number>> = [];
      const started = performance.now();
      for (let i = 0; i < 50; i++) {
        const socket = net.connect({ host: '127.0.0.1', port });
        socket.on('error', () => undefined);
        socket.write('GET /healthz HTTP/1.1\r\n');
        const trickle = setInterval(() => socket.write('X'), 500);
        closed.push(
          new Promise((resolve) =>
            socket.once('close', () => {
              clearInterval(trickle);
              resolve(performance.now() - started);
            }),
          ),
        );
        slow.push(socket);
      }
      try {
        for (let i = 0; i < 5; i++) {
          expect(await healthz(port)).toBe(200);
          await new Promise((resolve) => setTimeout(resolve, 200));
        }
        const times = await Promise.race([
          Promise.all(closed),
          new Promise<never>((_, reject) => setTimeout(() => reject(new Error('slowloris clients still connected after 15 s')), 15_000)),
        ]);
        expect(Math.max(...times)).toBeLessThan(15_000);
      } finally {
        for (const socket of slow) socket.destroy();
        await Promise.all(closed);
      }
    });
  }, 30_000);

  it('path traversal (raw and percent-encoded) is refused with 400 and never reaches a route', async () => {
    await withServer(async (server) => {
      const { port } = server.address;
      for (const target of ['/../healthz', '/healthz/..', '/x/../pods', '/%2e%2e/pods', '/%2E%2e/pods', '/.%2e/pods', '/pods%2f..%2fhealthz', '/pods%5c..%5cx', '/pods%00', '/./pods']) {
        const answer = await raw(port, `GET ${target} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`);
        expect(answer.status, target).toBe(400);
        expect(answer.text, target).toContain('"reason":"BadRequest"');
        expect(answer.text, target).not.toContain('PodList');
      }
      expect(await healthz(port)).toBe(200);
    });
  });

  it('methods other than GET and HEAD get 405 with Allow, on every path; TRACE echoes nothing', async () => {
    await withServer(async (server) => {
      const { port } = server.address;
      for (const method of ['POST', 'PUT', 'DELETE', 'PATCH', 'OPTIONS', 'TRACE', 'PROPFIND']) {
        for (const path of ['/pods', '/nowhere']) {
          const answer = await raw(port, `${method} ${path} HTTP/1.1\r\nHost: x\r\nX-Secret: s3cr3t\r\nContent-Length: 0\r\nConnection: close\r\n\r\n`);
          expect(answer.status, `${method} ${path}`).toBe(405);
          expect(answer.text).toMatch(/\r\nAllow: GET, HEAD\r\n/);
          expect(answer.text).not.toContain('s3cr3t');
        }
      }
      const connect = await raw(port, 'CONNECT 127.0.0.1:22 HTTP/1.1\r\nHost: 127.0.0.1:22\r\n\r\n');
      expect([0, 405]).toContain(connect.status);
      expect(await healthz(port)).toBe(200);
    });
  });
});
