import { spawn } from 'node:child_process';
import type http from 'node:http';
import net from 'node:net';
import type tls from 'node:tls';
import { describe, expect, it, onTestFinished } from 'vitest';
import { newHttpProbeRequestForURL, type HttpProbeRequest } from '../../src/probe/http-request.js';
import { probeHttp } from '../../src/probe/http.js';
import type { ProbeClose } from '../../src/probe/types.js';
import { startHttp, startHttps, startTcp, timed, timeWaitBetween } from './http-servers.js';

const req = (url: string, headers: Array<[string, string]> = []): HttpProbeRequest =>
  newHttpProbeRequestForURL(url, headers);

/** SNI names (false = none sent) of every TLS connection the server accepted. */
function recordSni(server: tls.Server): Array<string | false> {
  const names: Array<string | false> = [];
  server.on('secureConnection', (s: tls.TLSSocket) => names.push((s as tls.TLSSocket & { servername: string | false }).servername));
  return names;
}

/**
 * A port whose accept queue is full, so a new connection hangs in the handshake: a
 * child process listens with a tiny backlog and blocks its event loop (never
 * accepts), and connections fill the queue until one no longer completes.
 * Everything is torn down when the test ends.
 */
async function unansweredPort(): Promise<number> {
  const script =
    "const s=require('net').createServer().listen({port:0,host:'127.0.0.1',backlog:1},()=>{" +
    'console.log(s.address().port);Atomics.wait(new Int32Array(new SharedArrayBuffer(4)),0,0,60000)})';
  const child = spawn(process.execPath, ['-e', script], { stdio: ['ignore', 'pipe', 'inherit'] });
  onTestFinished(() => {
    child.kill('SIGKILL');
  });
  const port = await new Promise<number>((resolve, reject) => {
    child.stdout.once('data', (d: Buffer) => resolve(Number(d.toString().trim())));
    child.once('error', reject);
  });
  for (let i = 0; i < 16; i++) {
    const filler = net.connect(port, '127.0.0.1');
    filler.on('error', () => undefined);
    onTestFinished(() => {
      filler.destroy();
    });
    let timer: NodeJS.Timeout | undefined;
    const connected = await new Promise<boolean>((resolve) => {
      filler.once('connect', () => resolve(true));
      timer = setTimeout(() => resolve(false), 300);
    });
    clearTimeout(timer);
    if (!connected) return port;
  }
  throw new Error('could not fill the accept queue');
}

describe('dial timeout', () => {
  it('a connection that never completes fails at the timeout with a dial i/o timeout', async () => {
    const port = await unansweredPort();
    const { value, ms } = await timed(() => probeHttp(req(`http://127.0.0.1:${port}/healthz`), 1000));
    expect(value).toEqual({
      result: 'failure',
      output: `Get "http://127.0.0.1:${port}/healthz": dial tcp 127.0.0.1:${port}: i/o timeout (Client.Timeout exceeded while awaiting headers)`,
    });
    expect(ms).toBeGreaterThanOrEqual(950);
    expect(ms).toBeLessThan(3000);
  });
});

describe('IPv6', () => {
  it('probes a bracketed IPv6 literal', async () => {
    const { server } = await startHttp((rq, rs) => rs.end(rq.headers.host));
    const v6 = net.createServer();
    const ok = await new Promise<boolean>((resolve) => {
      v6.once('error', () => resolve(false));
      v6.listen(0, '::1', () => resolve(true));
    });
    onTestFinished(() => new Promise<void>((resolve) => v6.close(() => resolve())));
    if (!ok) return; // no IPv6 loopback on this machine
    const port = (v6.address() as net.AddressInfo).port;
    v6.on('connection', (s) => server.emit('connection', s));
    expect(await probeHttp(req(`http://[::1]:${port}/`), 2000)).toEqual({ result: 'success', output: `[::1]:${port}` });
  });
});

describe('HTTPS', () => {
  it('succeeds against a self-signed certificate (no verification)', async () => {
    const { base, server } = await startHttps((_rq, rs) => rs.end('secure ok'));
    const sni = recordSni(server);
    expect(await probeHttp(req(`${base}/`), 2000)).toEqual({ result: 'success', output: 'secure ok' });
    expect(sni).toEqual([false]); // an IP literal gets no SNI
  });

  it('sends the URL hostname as SNI; a custom Host header changes the Host, not the SNI', async () => {
    const { port, server } = await startHttps((rq, rs) => rs.end(rq.headers.host));
    const sni = recordSni(server);
    const plain = await probeHttp(req(`https://localhost:${port}/`), 2000);
    const custom = await probeHttp(req(`https://localhost:${port}/`, [['Host', 'www.example.com']]), 2000);
    expect(plain).toEqual({ result: 'success', output: `localhost:${port}` });
    expect(custom).toEqual({ result: 'success', output: 'www.example.com' });
    expect(sni).toEqual(['localhost', 'localhost']);
  });

  it('a plain HTTP server behind an https URL → failure', async () => {
    const { port } = await startHttp((_rq, rs) => rs.end('plain'));
    const outcome = await probeHttp(req(`https://127.0.0.1:${port}/`), 2000);
    expect(outcome.result).toBe('failure');
    expect(outcome.output).toBe(`Get "https://127.0.0.1:${port}/": http: server gave HTTP response to HTTPS client`);
  });

  // Go's words depend on the first five bytes the server sends (crypto/tls readRecordOrCCS,
  // net/http send); OpenSSL says "wrong version number" or "packet length too long" for all.
  it.each([
    ['a banner, sent first (SSH)', 'SSH-2.0-OpenSSH_9.2\r\n', true, 'tls: first record does not look like a TLS handshake'],
    ['plain text, answered after the ClientHello', '220 mail.example ESMTP ready\r\n', false, 'tls: first record does not look like a TLS handshake'],
    ['an HTTP response written by hand', 'HTTP/1.0 400 Bad Request\r\n\r\n', false, 'http: server gave HTTP response to HTTPS client'],
    ['a handshake record header with an oversized length', '\x16\x03\x01\xff\xff', false, 'tls: oversized record received with length 65535'],
    ['an SSLv2 record', '\x80\x2e\x01\x03\x01', false, 'tls: unsupported SSLv2 handshake received'],
  ])('a server that answers an https probe with %s → failure in Go\'s words', async (_what, answer, first, words) => {
    const { port } = await startTcp((socket) => {
      socket.on('error', () => undefined);
      if (first) socket.end(Buffer.from(answer, 'latin1'));
      else socket.once('data', () => socket.end(Buffer.from(answer, 'latin1')));
    });
    expect(await probeHttp(req(`https://127.0.0.1:${port}/healthz`), 2000)).toEqual({
      result: 'failure',
      output: `Get "https://127.0.0.1:${port}/healthz": ${words}`,
    });
  });

  it('a server demanding a client certificate → failure with the TLS alert (no client cert is sent)', async () => {
    const { base } = await startHttps((_rq, rs) => rs.end('no'), { requestCert: true, rejectUnauthorized: true });
    expect(await probeHttp(req(`${base}/`), 2000)).toEqual({
      result: 'failure',
      output: `Get "${base}/": remote error: tls: certificate required`,
    });
  });

  it('a TLS body over the cap is cut short too', async () => {
    const { base } = await startHttps((_rq, rs) => rs.end('b'.repeat(50_000)));
    expect(await probeHttp(req(`${base}/`), 2000)).toEqual({ result: 'success', output: 'b'.repeat(10240) });
  });
});

describe('no proxy (T39)', () => {
  it('ignores HTTP_PROXY / http_proxy', async () => {
    let proxyConnections = 0;
    const proxy = await startTcp((s) => {
      proxyConnections++;
      s.end('HTTP/1.1 200 OK\r\nContent-Length: 27\r\n\r\nwelcome to http probe proxy');
    });
    const target = await startHttp((_rq, rs) => rs.end('direct'));
    const saved = ['HTTP_PROXY', 'http_proxy', 'HTTPS_PROXY', 'https_proxy', 'NO_PROXY', 'no_proxy'].map(
      (k) => [k, process.env[k]] as const,
    );
    try {
      for (const k of ['HTTP_PROXY', 'http_proxy', 'HTTPS_PROXY', 'https_proxy']) process.env[k] = `${proxy.base}/`;
      delete process.env.NO_PROXY;
      delete process.env.no_proxy;
      expect(await probeHttp(req(`${target.base}/`), 2000)).toEqual({ result: 'success', output: 'direct' });
      expect(proxyConnections).toBe(0);
    } finally {
      for (const [k, v] of saved) {
        if (v === undefined) delete process.env[k];
        else process.env[k] = v;
      }
    }
  });
});

describe('socket hygiene', () => {
  const hasProc = timeWaitBetween(0, 0) !== undefined;

  /** The probe's connection as the server saw it: its local and remote ports. */
  async function probeAndPort(handler: http.RequestListener, secure = false, close?: ProbeClose): Promise<[number, number]> {
    let clientPort = 0;
    let serverPort = 0;
    const start = secure ? startHttps : startHttp;
    const { base } = await start((rq, rs) => {
      clientPort = rq.socket.remotePort ?? 0;
      serverPort = rq.socket.localPort ?? 0;
      handler(rq, rs);
    });
    const outcome = await probeHttp(req(`${base}/`), 5000, close ? { close } : {});
    expect(outcome.result).toBe('success');
    expect(clientPort).toBeGreaterThan(0);
    await new Promise((resolve) => setImmediate(resolve));
    return [clientPort, serverPort];
  }

  it.runIf(hasProc)("with close: 'reset', leaves no TIME_WAIT on the probing side after a normal response", async () => {
    for (let i = 0; i < 5; i++) {
      const [client, server] = await probeAndPort((_rq, rs) => rs.end('ok'), false, 'reset');
      expect(timeWaitBetween(client, server)).toBe(0);
    }
  });

  it.runIf(hasProc)('by default closes first with a FIN when the server keeps the connection open: the server reads an end', async () => {
    let clientPort = 0;
    let serverPort = 0;
    let seen: Promise<string> = Promise.resolve('no connection');
    const { base } = await startTcp((s) => {
      clientPort = s.remotePort ?? 0;
      serverPort = s.localPort ?? 0;
      seen = new Promise((resolve) => {
        s.once('end', () => resolve('end'));
        s.once('error', (err: NodeJS.ErrnoException) => resolve(err.code ?? 'error'));
      });
      s.on('data', () => s.write('HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok'));
    });
    expect(await probeHttp(req(`${base}/`), 2000)).toEqual({ result: 'success', output: 'ok' });
    expect(await seen).toBe('end');
    await new Promise((resolve) => setTimeout(resolve, 50));
    // The kubelet's node keeps this TIME_WAIT too (its 1 s SO_LINGER does not shorten it).
    expect(timeWaitBetween(clientPort, serverPort)).toBe(1);
  });

  it.runIf(hasProc)("with close: 'reset', leaves no TIME_WAIT when the server keeps the connection open after the response", async () => {
    // The probe has to close first here; a plain close would leave it in TIME_WAIT.
    let clientPort = 0;
    let serverPort = 0;
    const { base } = await startTcp((s) => {
      clientPort = s.remotePort ?? 0;
      serverPort = s.localPort ?? 0;
      s.on('data', () => s.write('HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok'));
    });
    expect(await probeHttp(req(`${base}/`), 2000, { close: 'reset' })).toEqual({ result: 'success', output: 'ok' });
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(clientPort).toBeGreaterThan(0);
    expect(timeWaitBetween(clientPort, serverPort)).toBe(0);
  });

  it.runIf(hasProc)("with close: 'reset', leaves no TIME_WAIT after cutting a long body short (plain and TLS)", async () => {
    const long: http.RequestListener = (_rq, rs) => rs.end('x'.repeat(200_000));
    expect(timeWaitBetween(...(await probeAndPort(long, false, 'reset')))).toBe(0);
    expect(timeWaitBetween(...(await probeAndPort(long, true, 'reset')))).toBe(0);
  });

  it('leaves no socket or timer behind once the promise settles', async () => {
    const count = (...kinds: string[]): number =>
      process.getActiveResourcesInfo().filter((r) => kinds.includes(r)).length;
    const sockets = (): number => count('TCPSocketWrap', 'TLSWrap');
    const timers = (): number => count('Timeout');
    const serverSockets = new Set<Promise<void>>();
    const { base, server } = await startHttp((rq, rs) => {
      if (rq.url === '/hang') return;
      if (rq.url === '/redirect') {
        rs.writeHead(302, { Location: '/big' });
        rs.end();
        return;
      }
      rs.end('y'.repeat(100_000));
    });
    server.on('connection', (s) => serverSockets.add(new Promise((resolve) => s.on('close', () => resolve()))));
    // Let sockets closed by earlier tests leave the list before taking the baseline.
    for (let i = 0; i < 3; i++) await new Promise((resolve) => setImmediate(resolve));
    const socketsBefore = sockets();
    const timersBefore = timers();
    await probeHttp(req(`${base}/redirect`), 5000);
    await probeHttp(req(`${base}/hang`), 300);
    await probeHttp(req('http://127.0.0.1:1/'), 1000);
    // The server's ends go once they see the probe's close; closed handles leave the
    // list on the next turn of the event loop.
    await Promise.all(serverSockets);
    await new Promise((resolve) => setImmediate(resolve));
    expect(serverSockets.size).toBe(3);
    expect(sockets()).toBe(socketsBefore);
    expect(timers()).toBeLessThanOrEqual(timersBefore);
  });
});
