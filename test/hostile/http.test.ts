/**
 * The HTTP probe against hostile servers (all on 127.0.0.1): each case checks the verdict,
 * the message (Go's client wording, as the kubelet reports it), the time taken — cut at
 * the probe's timeout — and that nothing was left behind (see leaks.ts).
 */
import { gzipSync } from 'node:zlib';
import type net from 'node:net';
import { describe, expect, it } from 'vitest';
import { MAX_PROBE_OUTPUT_BYTES } from '../../src/probe/constants.js';
import { probeHttp } from '../../src/probe/http.js';
import { newHttpProbeRequestForURL } from '../../src/probe/http-request.js';
import type { ProbeOutcome } from '../../src/probe/types.js';
import { startHttp, startTcp } from '../probe/http-servers.js';
import { hostileCase } from './leaks.js';

const TIMEOUT_MS = 1000;
/** How far past its timeout a cut-off probe may end (a loaded 2-core machine). */
const CUT_SLACK_MS = 750;

async function probe(url: string, { timeoutMs = TIMEOUT_MS, heapSlackMiB = 8 } = {}): Promise<{ value: ProbeOutcome; ms: number }> {
  return hostileCase(() => probeHttp(newHttpProbeRequestForURL(url), timeoutMs), { heapSlackMiB });
}

function expectCutAtTimeout(ms: number): void {
  expect(ms).toBeGreaterThanOrEqual(TIMEOUT_MS - 5);
  expect(ms).toBeLessThan(TIMEOUT_MS + CUT_SLACK_MS);
}

function expectQuick(ms: number): void {
  expect(ms).toBeLessThan(TIMEOUT_MS);
}

/** A raw server that answers each request (after its first bytes arrive) with `answer`. */
function onRequest(answer: (socket: net.Socket) => void): (socket: net.Socket) => void {
  return (socket) => {
    socket.on('error', () => undefined);
    socket.once('data', () => answer(socket));
  };
}

/** Writes `chunk` for as long as the peer reads, until the socket closes. */
function flood(socket: net.Socket, chunk: Buffer): void {
  const write = (): void => {
    while (!socket.destroyed && socket.write(chunk));
    if (!socket.destroyed) socket.once('drain', write);
  };
  write();
}

/** Sends `text` one byte per second (a slowloris server). */
function trickle(socket: net.Socket, text: string): void {
  let i = 0;
  const timer = setInterval(() => {
    if (socket.destroyed || i >= text.length) {
      clearInterval(timer);
      return;
    }
    socket.write(text[i++] ?? '');
  }, 1000);
  socket.once('close', () => clearInterval(timer));
}

describe('HTTP probe against hostile servers', () => {
  it('status line trickled 1 byte/s: failure at the timeout, awaiting headers', async () => {
    const s = await startTcp(onRequest((sock) => trickle(sock, 'HTTP/1.1 200 OK\r\n\r\n')));
    const { value, ms } = await probe(`${s.base}/`);
    expect(value).toEqual({ result: 'failure', output: `Get "${s.base}/": context deadline exceeded (Client.Timeout exceeded while awaiting headers)` });
    expectCutAtTimeout(ms);
  });

  it('a server that accepts and never answers: failure at the timeout', async () => {
    // It reads (and drops) the request: a server that never reads never sees the probe's FIN
    // either, and would keep its own socket in CLOSE_WAIT — its leak, not the probe's.
    const s = await startTcp((sock) => sock.on('error', () => undefined).resume());
    const { value, ms } = await probe(`${s.base}/`);
    expect(value).toEqual({ result: 'failure', output: `Get "${s.base}/": context deadline exceeded (Client.Timeout exceeded while awaiting headers)` });
    expectCutAtTimeout(ms);
  });

  it('a 1 GB body: success with the first 10 KiB, the rest never read', async () => {
    const chunk = Buffer.alloc(64 * 1024, 'a');
    const s = await startTcp(onRequest((sock) => {
      sock.write('HTTP/1.1 200 OK\r\nContent-Length: 1000000000\r\n\r\n');
      flood(sock, chunk);
    }));
    const { value, ms } = await probe(`${s.base}/`);
    expect(value).toEqual({ result: 'success', output: 'a'.repeat(MAX_PROBE_OUTPUT_BYTES) });
    expectQuick(ms);
  });

  it('an endless chunked body: success with the first 10 KiB', async () => {
    const chunk = Buffer.from(`4000\r\n${'b'.repeat(0x4000)}\r\n`);
    const s = await startTcp(onRequest((sock) => {
      sock.write('HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n');
      flood(sock, chunk);
    }));
    const { value, ms } = await probe(`${s.base}/`);
    expect(value).toEqual({ result: 'success', output: 'b'.repeat(MAX_PROBE_OUTPUT_BYTES) });
    expectQuick(ms);
  });

  it('an endless body trickled 1 byte/s: an errored failure at the timeout', async () => {
    const s = await startTcp(onRequest((sock) => {
      sock.write('HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n');
      trickle(sock, 'x'.repeat(100));
    }));
    const { value, ms } = await probe(`${s.base}/`);
    expect(value.result).toBe('failure');
    expect(value.error?.message).toBe('context deadline exceeded (Client.Timeout or context cancellation while reading body)');
    expectCutAtTimeout(ms);
  });

  it('10,000 headers (within Go\'s 10 MB): the status decides', async () => {
    const headers = Array.from({ length: 10_000 }, (_, i) => `X-H${i}: v\r\n`).join('');
    const s = await startTcp(onRequest((sock) => sock.end(`HTTP/1.1 503 Busy\r\n${headers}Content-Length: 0\r\n\r\n`)));
    const { value, ms } = await probe(`${s.base}/`);
    expect(value).toEqual({ result: 'failure', output: 'HTTP probe failed with statuscode: 503' });
    expectQuick(ms);
  });

  it('one 10 MB header line: failure, headers exceeded 10 MB', async () => {
    const s = await startTcp(onRequest((sock) => {
      sock.write('HTTP/1.1 200 OK\r\nX-Big: ');
      flood(sock, Buffer.alloc(64 * 1024, 'h'));
    }));
    // 10 MB through the parser takes ≈ 1 s on a loaded machine: a timeout that leaves it room.
    const { value, ms } = await probe(`${s.base}/`, { timeoutMs: 10_000, heapSlackMiB: 24 });
    expect(value).toEqual({ result: 'failure', output: `Get "${s.base}/": net/http: HTTP/1.x transport connection broken: net/http: server response headers exceeded 10485760 bytes; aborted` });
    expect(ms).toBeLessThan(5000);
  });

  it('a redirect loop: failure after 10 requests', async () => {
    let requests = 0;
    const s = await startHttp((_req, res) => {
      requests++;
      res.writeHead(302, { Location: '/loop' }).end();
    });
    const { value, ms } = await probe(`${s.base}/loop`);
    expect(value).toEqual({ result: 'failure', output: 'Get "/loop": stopped after 10 redirects' });
    expect(requests).toBe(10);
    expectQuick(ms);
  });

  it('a redirect to another host: warning, not followed; to another port of the same host: followed', async () => {
    let otherRequests = 0;
    const other = await startHttp((_req, res) => {
      otherRequests++;
      res.end('other');
    });
    const s = await startHttp((req, res) => {
      const location = req.url === '/host' ? `http://localhost:${other.port}/` : `http://127.0.0.1:${other.port}/`;
      res.writeHead(302, { Location: location }).end('moved');
    });
    const offHost = await probe(`${s.base}/host`);
    expect(offHost.value).toEqual({ result: 'warning', output: 'Probe terminated redirects, Response body: moved' });
    expect(otherRequests).toBe(0);
    const otherPort = await probe(`${s.base}/port`);
    expect(otherPort.value).toEqual({ result: 'success', output: 'other' });
    expect(otherRequests).toBe(1);
  });

  it('redirects to file: (another host: warning) and ftp: (same host: unsupported scheme)', async () => {
    const s = await startHttp((req, res) => {
      const location = req.url === '/file' ? 'file:///etc/passwd' : 'ftp://127.0.0.1/pub';
      res.writeHead(302, { Location: location }).end('x');
    });
    expect((await probe(`${s.base}/file`)).value).toEqual({ result: 'warning', output: 'Probe terminated redirects, Response body: x' });
    expect((await probe(`${s.base}/ftp`)).value).toEqual({ result: 'failure', output: 'Get "ftp://127.0.0.1/pub": unsupported protocol scheme "ftp"' });
  });

  it('a 3xx without Location: warning with the body', async () => {
    const s = await startHttp((_req, res) => res.writeHead(302).end('no location'));
    const { value, ms } = await probe(`${s.base}/`);
    expect(value).toEqual({ result: 'warning', output: 'Probe terminated redirects, Response body: no location' });
    expectQuick(ms);
  });

  it('garbage and HTTP/0.9 answers: failure naming the malformed line, as Go does', async () => {
    const garbage = await startTcp(onRequest((sock) => sock.end('HELLO WORLD\r\n\r\n')));
    expect((await probe(`${garbage.base}/`)).value).toEqual({
      result: 'failure',
      output: `Get "${garbage.base}/": net/http: HTTP/1.x transport connection broken: malformed HTTP status code "WORLD"`,
    });
    const http09 = await startTcp(onRequest((sock) => sock.end('ok\n')));
    expect((await probe(`${http09.base}/`)).value).toEqual({
      result: 'failure',
      output: `Get "${http09.base}/": net/http: HTTP/1.x transport connection broken: malformed HTTP response "ok"`,
    });
    const version = await startTcp(onRequest((sock) => sock.end('HTTX/1.1 200 OK\r\n\r\n')));
    expect((await probe(`${version.base}/`)).value).toEqual({
      result: 'failure',
      output: `Get "${version.base}/": net/http: HTTP/1.x transport connection broken: malformed HTTP version "HTTX/1.1"`,
    });
    const silent = await startTcp(onRequest((sock) => sock.end()));
    expect((await probe(`${silent.base}/`)).value).toEqual({ result: 'failure', output: `Get "${silent.base}/": EOF` });
  });

  it('a malformed header line, in the first packet or a later one: failure quoting the header line as Go does', async () => {
    const broken = 'net/http: HTTP/1.x transport connection broken';
    const same = await startTcp(onRequest((sock) => sock.end('HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nNo Colon Here\r\n\r\nok')));
    expect((await probe(`${same.base}/`)).value).toEqual({ result: 'failure', output: `Get "${same.base}/": ${broken}: malformed MIME header: missing colon: "No Colon Here"` });
    const later = await startTcp(onRequest((sock) => {
      sock.write('HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n');
      setTimeout(() => sock.end('Bad(Name): x\r\n\r\nok'), 30);
    }));
    expect((await probe(`${later.base}/`)).value).toEqual({ result: 'failure', output: `Get "${later.base}/": ${broken}: malformed MIME header line: Bad(Name): x` });
    const lateNoColon = await startTcp(onRequest((sock) => {
      sock.write('HTTP/1.1 200 OK\r\n');
      setTimeout(() => sock.end('garbage\r\n\r\n'), 30);
    }));
    expect((await probe(`${lateNoColon.base}/`)).value).toEqual({ result: 'failure', output: `Get "${lateNoColon.base}/": ${broken}: malformed MIME header: missing colon: "garbage"` });
    // A continuation line (obs-fold) is part of the header before it, as Go reads it: the bad line is the next.
    const folded = await startTcp(onRequest((sock) => sock.end('HTTP/1.1 200 OK\r\nX-A: b\r\n c\r\nNo Colon\r\n\r\nok')));
    expect((await probe(`${folded.base}/`)).value).toEqual({ result: 'failure', output: `Get "${folded.base}/": ${broken}: malformed MIME header: missing colon: "No Colon"` });
  });

  it('TLS garbage on https: failure at once', async () => {
    const s = await startTcp(onRequest((sock) => sock.end(Buffer.from('\x00\x01garbage, not TLS at all\r\n'))));
    const url = `https://127.0.0.1:${s.port}/`;
    const { value, ms } = await probe(url);
    expect(value.result).toBe('failure');
    expect(value.output).toMatch(new RegExp(`^Get "${url}": `));
    expectQuick(ms);
  });

  it('a reset in the middle of the body: an errored failure naming the connection', async () => {
    const s = await startTcp(onRequest((sock) => {
      sock.write(`HTTP/1.1 200 OK\r\nContent-Length: 100000\r\n\r\n${'x'.repeat(100)}`);
      setTimeout(() => sock.resetAndDestroy(), 20);
    }));
    const { value, ms } = await probe(`${s.base}/`);
    expect(value.result).toBe('failure');
    expect(value.error?.message).toMatch(/^read tcp 127\.0\.0\.1:\d+->127\.0\.0\.1:\d+: read: connection reset by peer$/);
    expectQuick(ms);
  });

  it('1xx responses: any number skipped (Go 1.24 on); all of them over MaxResponseHeaderBytes together fail', async () => {
    const few = await startTcp(onRequest((sock) => sock.end(`${'HTTP/1.1 103 Early Hints\r\nLink: </a>\r\n\r\n'.repeat(5)}HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok`)));
    expect((await probe(`${few.base}/`)).value).toEqual({ result: 'success', output: 'ok' });
    // Go 1.23 and older gave up after 5 ("too many 1xx informational responses"); kubelet 1.35 is built with Go 1.25.
    const many = await startTcp(onRequest((sock) => sock.end(`${'HTTP/1.1 100 Continue\r\n\r\n'.repeat(50)}HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok`)));
    expect((await probe(`${many.base}/`)).value).toEqual({ result: 'success', output: 'ok' });
    // 11 MiB of 103s, each well under the limit alone: they add up past 10 MiB.
    const hint = `HTTP/1.1 103 Early Hints\r\nLink: <${'a'.repeat(64 * 1024)}>\r\n\r\n`;
    const flood = await startTcp(onRequest((sock) => {
      let sent = 0;
      const more = (): void => {
        while (sent < 176 && sock.writable) {
          sent++;
          if (!sock.write(hint)) return void sock.once('drain', more);
        }
        if (sock.writable) sock.end('HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok');
      };
      more();
    }));
    // A 1xx and the final response under the limit each, over it together: the final one tips it.
    const big = (name: string): string => `${name}: ${'b'.repeat(2 << 20)}\r\n`;
    const tipped = await startTcp(onRequest((sock) => {
      sock.write(`HTTP/1.1 103 Early Hints\r\n${big('A')}${big('B')}${big('C')}\r\n`);
      sock.end(`HTTP/1.1 200 OK\r\n${big('D')}${big('E')}${big('F')}Content-Length: 2\r\n\r\nok`);
    }));
    expect((await probe(`${tipped.base}/`, { timeoutMs: 10_000, heapSlackMiB: 24 })).value).toEqual({
      result: 'failure',
      output: `Get "${tipped.base}/": net/http: HTTP/1.x transport connection broken: net/http: server response headers exceeded 10485760 bytes; aborted`,
    });
    const { value, ms } = await probe(`${flood.base}/`, { timeoutMs: 10_000, heapSlackMiB: 24 });
    expect(value).toEqual({ result: 'failure', output: `Get "${flood.base}/": net/http: HTTP/1.x transport connection broken: net/http: server response headers exceeded 10485760 bytes; aborted` });
    expectQuick(ms);
  });

  it('a lying Content-Length: too long is unexpected EOF (errored), too short is cut where it says', async () => {
    const long = await startTcp(onRequest((sock) => sock.end('HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nshort')));
    const a = await probe(`${long.base}/`);
    expect(a.value.result).toBe('failure');
    expect(a.value.error?.message).toBe('unexpected EOF');
    const short = await startTcp(onRequest((sock) => sock.end('HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nokAND THEN SOME GARBAGE\r\n\r\n')));
    expect((await probe(`${short.base}/`)).value).toEqual({ result: 'success', output: 'ok' });
  });

  it('a gzip bomb with Content-Encoding: gzip is not inflated (the kubelet disables compression)', async () => {
    const bomb = gzipSync(Buffer.alloc(64 * 2 ** 20)); // 64 MiB of zeros in ~64 KiB
    let acceptEncoding: string | undefined = 'unset';
    const s = await startHttp((req, res) => {
      acceptEncoding = req.headers['accept-encoding'];
      res.writeHead(200, { 'Content-Encoding': 'gzip', 'Content-Length': bomb.length }).end(bomb);
    });
    const { value, ms } = await probe(`${s.base}/`);
    expect(acceptEncoding).toBeUndefined();
    expect(value.result).toBe('success');
    expect(value.output).toBe(bomb.subarray(0, MAX_PROBE_OUTPUT_BYTES).toString('utf8'));
    expectQuick(ms);
  });
});
