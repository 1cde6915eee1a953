/**
 * Cross-site requests are refused (issue 33): a tag on any page the user visits
 * (`<img src="http://127.0.0.1:10255/stream">`) carries our own Host and no Origin, so the Host
 * check let it hold `/stream` places and read `/pods`. Browsers say where a request comes from
 * (`Sec-Fetch-Site`); Fetch Metadata resource isolation refuses cross-site requests and
 * same-site no-cors ones, and keeps same-origin pages, navigations to the dashboard and clients
 * that send no such headers. First with the headers as a browser sends them, then with a real
 * headless Chromium loading a page of another site that points tags at the API.
 */
import http from 'node:http';
import net from 'node:net';
import { describe, expect, it, onTestFinished } from 'vitest';
import type { Pod } from '../../src/api/types.js';
import { startServer, type RunningServer } from '../../src/server/server.js';
import type { KubeletView } from '../../src/server/view.js';
import { browserTests, launchBrowser } from '../web/browser.js';

const pods: Pod[] = [{ metadata: { name: 'web', namespace: 'default', uid: 'u1' }, spec: { containers: [{ name: 'app' }] } }];

/** A view that counts what was read from it: a refused request reads nothing. */
function countingView(): KubeletView & { reads: number } {
  const view = {
    reads: 0,
    listPods: () => {
      view.reads++;
      return pods;
    },
    listEvents: () => [],
    probeMetrics: () => Promise.resolve(''),
    listProbes: () => [],
    watch: () => () => undefined,
  };
  return view;
}

async function start(view: KubeletView): Promise<RunningServer> {
  const server = await startServer(view, { port: 0 });
  onTestFinished(() => server.close());
  return server;
}

/** The status of one request with these headers (the answer's first line only; a stream is cut then). */
function status(port: number, path: string, headers: Record<string, string>): Promise<number> {
  return new Promise((resolve) => {
    const socket = net.connect({ host: '127.0.0.1', port });
    let text = '';
    socket.setEncoding('latin1');
    socket.on('data', (chunk: string) => {
      text += chunk;
      const code = /^HTTP\/1\.1 (\d{3})/.exec(text)?.[1];
      if (code) {
        socket.destroy();
        resolve(Number(code));
      }
    });
    socket.on('error', () => resolve(0));
    const lines = Object.entries(headers).map(([name, value]) => `${name}: ${value}\r\n`).join('');
    socket.write(`GET ${path} HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\n${lines}Connection: close\r\n\r\n`);
  });
}

const PATHS = ['/pods', '/events', '/probes', '/metrics/probes', '/stream'];

describe('cross-site requests are refused (Fetch Metadata)', () => {
  it('cross-site and same-site no-cors: 403 on every path but /healthz; same-origin, none, cors and header-less clients are served', async () => {
    const view = countingView();
    const server = await start(view);
    const { port } = server.address;
    const refused: Array<Record<string, string>> = [
      { 'Sec-Fetch-Site': 'cross-site', 'Sec-Fetch-Mode': 'no-cors', 'Sec-Fetch-Dest': 'image' },
      { 'Sec-Fetch-Site': 'cross-site', 'Sec-Fetch-Mode': 'no-cors', 'Sec-Fetch-Dest': 'script' },
      { 'Sec-Fetch-Site': 'cross-site', 'Sec-Fetch-Mode': 'cors', 'Sec-Fetch-Dest': 'empty' },
      { 'Sec-Fetch-Site': 'same-site', 'Sec-Fetch-Mode': 'no-cors', 'Sec-Fetch-Dest': 'image' },
    ];
    for (const path of PATHS) {
      for (const headers of refused) expect(await status(port, path, headers), `${path} ${JSON.stringify(headers)}`).toBe(403);
    }
    expect(view.reads).toBe(0);
    expect(server.streamUse().streams).toBe(0);
    const served: Array<Record<string, string>> = [
      {},
      { 'Sec-Fetch-Site': 'same-origin', 'Sec-Fetch-Mode': 'cors', 'Sec-Fetch-Dest': 'empty' },
      { 'Sec-Fetch-Site': 'none', 'Sec-Fetch-Mode': 'navigate', 'Sec-Fetch-Dest': 'document' },
      { 'Sec-Fetch-Site': 'same-site', 'Sec-Fetch-Mode': 'cors', 'Sec-Fetch-Dest': 'empty' },
    ];
    for (const path of PATHS) {
      for (const headers of served) expect(await status(port, path, headers), `${path} ${JSON.stringify(headers)}`).toBe(200);
    }
    // /healthz says nothing about the pods: open to all.
    expect(await status(port, '/healthz', refused[0] ?? {})).toBe(200);
  });

  it('following a link from another site to the dashboard is a navigation, and allowed; an <object> of it is not', async () => {
    const server = await start(countingView());
    const { port } = server.address;
    const navigate = await status(port, '/', { 'Sec-Fetch-Site': 'cross-site', 'Sec-Fetch-Mode': 'navigate', 'Sec-Fetch-Dest': 'document' });
    expect([200, 503]).toContain(navigate); // 503: the dashboard was not built
    expect(await status(port, '/', { 'Sec-Fetch-Site': 'cross-site', 'Sec-Fetch-Mode': 'navigate', 'Sec-Fetch-Dest': 'object' })).toBe(403);
    expect(await status(port, '/pods', { 'Sec-Fetch-Site': 'cross-site', 'Sec-Fetch-Mode': 'navigate', 'Sec-Fetch-Dest': 'document' })).toBe(403);
  });

  it.runIf(browserTests.run)(`a page of another site in headless Chromium cannot reach the API with tags${browserTests.reason}`, async () => {
    const view = countingView();
    const server = await start(view);
    const { port } = server.address;
    const seen: string[] = [];
    // The API listens on 127.0.0.1; the other site is `localhost` (another host, so another site).
    const evil = http.createServer((req, res) => {
      res.setHeader('Content-Type', 'text/html');
      res.end(
        `<!doctype html><img src="http://127.0.0.1:${port}/stream"><img src="http://127.0.0.1:${port}/pods">` +
          `<script src="http://127.0.0.1:${port}/pods"></script><link rel="stylesheet" href="http://127.0.0.1:${port}/probes">` +
          `<script>fetch("http://127.0.0.1:${port}/pods", { mode: "no-cors" }).then(() => { document.title = "fetched"; }, () => { document.title = "failed"; });</script>`,
      );
    });
    await new Promise<void>((resolve) => evil.listen(0, '127.0.0.1', resolve));
    onTestFinished(() => new Promise<void>((resolve) => evil.close(() => resolve())));
    const evilPort = (evil.address() as net.AddressInfo).port;
    const browser = await launchBrowser();
    onTestFinished(() => browser.close());
    const page = await browser.context.newPage();
    page.on('request', (r) => seen.push(r.url()));
    await page.goto(`http://localhost:${evilPort}/`);
    await expect.poll(() => page.title(), { timeout: 10_000 }).not.toBe('');
    expect(seen.filter((u) => u.startsWith(`http://127.0.0.1:${port}/`)).length).toBeGreaterThanOrEqual(4);
    expect(view.reads).toBe(0);
    expect(server.streamUse().streams).toBe(0);
    // The dashboard's own page, same-origin, still reads everything.
    const own = await browser.context.newPage();
    const answer = await own.goto(`http://127.0.0.1:${port}/pods`);
    expect(answer?.status()).toBe(200);
    expect(view.reads).toBe(1);
  }, 60_000);
});
