import { spawn } from 'node:child_process';
import { once } from 'node:events';
import type http from 'node:http';
import { describe, expect, it } from 'vitest';
import { MAX_PROBE_OUTPUT_BYTES, PROBE_USER_AGENT } from '../../src/probe/constants.js';
import { newHttpProbeRequestForURL, type HttpProbeRequest } from '../../src/probe/http-request.js';
import { probeHttp } from '../../src/probe/http.js';
import { goRedirect, rawHeaderLines, startHttp, startTcp, timed } from './http-servers.js';

const req = (url: string, headers: Array<[string, string]> = []): HttpProbeRequest =>
  newHttpProbeRequestForURL(url, headers);

/** Echo of the request headers as the server saw them, as a probe output. */
async function echoed(headers: Array<[string, string]>): Promise<string> {
  const { base } = await startHttp((rq, rs) => rs.end(rawHeaderLines(rq)));
  const outcome = await probeHttp(req(`${base}/`, headers), 1000, { followNonLocalRedirects: true });
  expect(outcome.result).toBe('success');
  expect(outcome.error).toBeUndefined();
  return outcome.output;
}

describe('probeHttp — T40 TestHTTPProbeChecker', () => {
  it('40.1 200 → success with the body', async () => {
    const { base } = await startHttp((_rq, rs) => rs.end('ok body'));
    expect(await probeHttp(req(`${base}/`), 1000)).toEqual({ result: 'success', output: 'ok body' });
  });

  it('40.2 a custom header is sent', async () => {
    expect(await echoed([['X-Muffins-Or-Cupcakes', 'muffins']])).toContain('X-Muffins-Or-Cupcakes: muffins');
  });

  it('40.3 a custom User-Agent replaces the default', async () => {
    const out = await echoed([['User-Agent', 'foo/1.0']]);
    expect(out).toContain('User-Agent: foo/1.0');
    expect(out).not.toContain('kube-probe');
  });

  it('40.4 an empty User-Agent sends none', async () => {
    expect(await echoed([['User-Agent', '']])).not.toContain('User-Agent');
  });

  it('40.5 the default User-Agent is kube-probe/<major>.<minor>', async () => {
    expect(await echoed([])).toContain(`User-Agent: ${PROBE_USER_AGENT}`);
    expect(PROBE_USER_AGENT).toBe('kube-probe/1.35');
  });

  it('40.6 a Host header sets the request Host', async () => {
    const { base } = await startHttp((rq, rs) => rs.end(rq.headers.host));
    const outcome = await probeHttp(req(`${base}/`, [['Host', 'muffins.cupcakes.org']]), 1000);
    expect(outcome).toEqual({ result: 'success', output: 'muffins.cupcakes.org' });
  });

  it('40.7 an invalid status line → failure', async () => {
    const { base } = await startTcp((s) => s.end('HTTP/1.1 abc Broken\r\n\r\n'));
    const outcome = await probeHttp(req(`${base}/`), 1000);
    expect(outcome.result).toBe('failure');
    expect(outcome.error).toBeUndefined();
    expect(outcome.output).toMatch(new RegExp(`^Get "${base}/": `));
  });

  it('40.8 500 → failure, the body never appears', async () => {
    const { base } = await startHttp((_rq, rs) => {
      rs.statusCode = 500;
      rs.end('fail body');
    });
    expect(await probeHttp(req(`${base}/`), 1000)).toEqual({
      result: 'failure',
      output: 'HTTP probe failed with statuscode: 500',
    });
  });

  it('40.9 a handler slower than the timeout → failure at the timeout', async () => {
    const { base } = await startHttp(() => undefined); // accepts, never answers
    const { value, ms } = await timed(() => probeHttp(req(`${base}/`), 1000));
    expect(value).toEqual({
      result: 'failure',
      output: `Get "${base}/": context deadline exceeded (Client.Timeout exceeded while awaiting headers)`,
    });
    expect(ms).toBeGreaterThanOrEqual(950);
    expect(ms).toBeLessThan(3000);
  });

  describe.each([301, 302, 303, 307, 308])('40.10–17 redirect %i', (status) => {
    const start = (bad: boolean): Promise<{ base: string }> =>
      startHttp((rq, rs) => {
        if (rq.url === '/') goRedirect(rs, '/new', status);
        else if (rq.url === '/new' && bad) {
          rs.statusCode = 500;
          rs.end();
        } else rs.end('new');
      });

    it('to a good target → success', async () => {
      const { base } = await start(false);
      expect(await probeHttp(req(`${base}/`), 1000)).toEqual({ result: 'success', output: 'new' });
    });

    it('to a bad target → failure', async () => {
      const { base } = await start(true);
      expect(await probeHttp(req(`${base}/`), 1000)).toEqual({
        result: 'failure',
        output: 'HTTP probe failed with statuscode: 500',
      });
    });
  });

  it('40.18 Accept defaults to */*', async () => {
    expect(await echoed([])).toContain('Accept: */*');
  });

  it.each(['text/html', 'foo/*'])('40.19 a given Accept (%s) is sent as is', async (accept) => {
    const out = await echoed([['Accept', accept]]);
    expect(out).toContain(`Accept: ${accept}`);
    expect(out).not.toContain('Accept: */*');
  });

  it('40.20 an empty Accept removes the header', async () => {
    expect(await echoed([['Accept', '']])).not.toMatch(/^Accept:/m);
  });

  it('40.21 a plain probe sends exactly Host, User-Agent, Accept, Connection: close', async () => {
    const out = await echoed([]);
    const host = /^Host: (.*)$/m.exec(out)?.[1] ?? '';
    expect(out).toBe(`Host: ${host}\nUser-Agent: ${PROBE_USER_AGENT}\nAccept: */*\nConnection: close`);
    expect(host).toMatch(/^127\.0\.0\.1:\d+$/);
  });
});

describe('probeHttp — headers on the wire', () => {
  it('repeated names accumulate, in Go order (Host, User-Agent, sorted names, Connection)', async () => {
    const out = await echoed([
      ['x-zeta', 'z'],
      ['accept', 'application/json'],
      ['Accept', '*/*'],
      ['X-Alpha', 'a1'],
      ['x-alpha', 'a2'],
    ]);
    expect(out.split('\n').slice(1)).toEqual([
      `User-Agent: ${PROBE_USER_AGENT}`,
      'Accept: application/json',
      'Accept: */*',
      'X-Alpha: a1',
      'X-Alpha: a2',
      'X-Zeta: z',
      'Connection: close',
    ]);
  });

  it('sends no Accept-Encoding (no compression) and honours a given Connection', async () => {
    const out = await echoed([['Connection', 'close']]);
    expect(out).not.toMatch(/Accept-Encoding/i);
    expect(out.match(/^Connection:/gm)).toHaveLength(1);
  });

  it('sends non-ASCII header values as UTF-8', async () => {
    const { base } = await startHttp((rq, rs) => rs.end(Buffer.from(rq.headers['x-name'] as string, 'latin1')));
    const outcome = await probeHttp(req(`${base}/`, [['X-Name', 'crème brûlée']]), 1000);
    expect(outcome).toEqual({ result: 'success', output: 'crème brûlée' });
  });

  it('refuses an invalid header value like Go', async () => {
    const { base } = await startHttp((_rq, rs) => rs.end('reached'));
    const outcome = await probeHttp({ url: `${base}/`, headers: [['X-Bad', 'a\nb']] }, 1000);
    expect(outcome).toEqual({
      result: 'failure',
      output: `Get "${base}/": net/http: invalid header field value for "X-Bad"`,
    });
  });

  it('sends the path and query as written', async () => {
    const { base } = await startHttp((rq, rs) => rs.end(rq.url));
    const outcome = await probeHttp(req(`${base}/redirect?loc=%2Fhealthz&x=1`), 1000);
    expect(outcome).toEqual({ result: 'success', output: '/redirect?loc=%2Fhealthz&x=1' });
  });
});

describe('probeHttp — status codes', () => {
  const withStatus = (status: number, body = ''): Promise<{ base: string }> =>
    startHttp((_rq, rs) => {
      rs.statusCode = status;
      rs.end(body);
    });

  it('404 → failure with the status code', async () => {
    const { base } = await withStatus(404, 'not here');
    expect(await probeHttp(req(`${base}/healthz`), 1000)).toEqual({
      result: 'failure',
      output: 'HTTP probe failed with statuscode: 404',
    });
  });

  it.each([200, 201, 204, 299])('%i → success', async (status) => {
    const { base } = await withStatus(status);
    expect((await probeHttp(req(`${base}/`), 1000)).result).toBe('success');
  });

  it.each([300, 304])('%i → warning with the body', async (status) => {
    const { base } = await withStatus(status, status === 304 ? '' : 'choices');
    expect(await probeHttp(req(`${base}/`), 1000)).toEqual({
      result: 'warning',
      output: `Probe terminated redirects, Response body: ${status === 304 ? '' : 'choices'}`,
    });
  });

  it('a redirect without Location → warning', async () => {
    const { base } = await startHttp((_rq, rs) => {
      rs.statusCode = 302;
      rs.end('nowhere');
    });
    expect(await probeHttp(req(`${base}/`), 1000)).toEqual({
      result: 'warning',
      output: 'Probe terminated redirects, Response body: nowhere',
    });
  });

  it('101 Switching Protocols → failure by status, without waiting for the deadline', async () => {
    const { base } = await startTcp((s) => {
      s.on('data', () => s.write('HTTP/1.1 101 Switching Protocols\r\nUpgrade: x\r\nConnection: Upgrade\r\n\r\n'));
    });
    const { value, ms } = await timed(() => probeHttp(req(`${base}/`), 2000));
    expect(value).toEqual({ result: 'failure', output: 'HTTP probe failed with statuscode: 101' });
    expect(ms).toBeLessThan(1000);
  });

  it('an informational 103 before the response is skipped', async () => {
    const { base } = await startTcp((s) => {
      s.on('data', () => s.end('HTTP/1.1 103 Early Hints\r\nLink: </a>\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok'));
    });
    expect(await probeHttp(req(`${base}/`), 2000)).toEqual({ result: 'success', output: 'ok' });
  });

  it.each([400, 401, 418, 503, 600, 999])('%i → failure', async (status) => {
    const { base } = await startTcp((s) => {
      s.on('data', () => s.end(`HTTP/1.1 ${status} X\r\nContent-Length: 4\r\nConnection: close\r\n\r\nbody`));
    });
    expect(await probeHttp(req(`${base}/`), 1000)).toEqual({
      result: 'failure',
      output: `HTTP probe failed with statuscode: ${status}`,
    });
  });
});

describe('probeHttp — body', () => {
  const payload = (size: number): Promise<{ base: string }> =>
    startHttp((rq, rs) => {
      if (rq.headers.host !== 'www.success.com') {
        rs.statusCode = 400;
        rs.end();
        return;
      }
      rs.end('a'.repeat(size));
    });
  const success = (base: string): HttpProbeRequest => req(`${base}/success`, [['Host', 'www.success.com']]);

  it('T43 a body of 10241 bytes is truncated to 10240, without error', async () => {
    const { base } = await payload(MAX_PROBE_OUTPUT_BYTES + 1);
    expect(await probeHttp(success(base), 5000)).toEqual({ result: 'success', output: 'a'.repeat(10240) });
  });

  it('T44 a body of 10239 bytes is returned whole', async () => {
    const { base } = await payload(MAX_PROBE_OUTPUT_BYTES - 1);
    expect(await probeHttp(success(base), 5000)).toEqual({ result: 'success', output: 'a'.repeat(10239) });
  });

  it('a 100 MB body is cut at 10240 bytes without being read whole', async () => {
    const total = 100 * 1024 * 1024;
    let written = 0;
    let closed!: () => void;
    const serverDone = new Promise<void>((resolve) => (closed = resolve));
    const { base } = await startHttp((_rq, rs: http.ServerResponse) => {
      rs.writeHead(200, { 'Content-Length': total });
      const chunk = Buffer.alloc(64 * 1024, 'a');
      const pump = (): void => {
        while (written < total && !rs.destroyed) {
          written += chunk.length;
          if (!rs.write(chunk)) {
            rs.once('drain', pump);
            return;
          }
        }
        rs.end();
      };
      rs.on('close', closed);
      pump();
    });
    const { value, ms } = await timed(() => probeHttp(req(`${base}/`), 10_000));
    expect(value).toEqual({ result: 'success', output: 'a'.repeat(10240) });
    expect(ms).toBeLessThan(2000);
    await serverDone;
    expect(written).toBeLessThan(total / 2);
  });

  it('a body reset mid-way → failure with an error (errored probe)', async () => {
    const { base } = await startTcp((s) => {
      s.on('data', () => {
        s.write('HTTP/1.1 200 OK\r\nContent-Length: 100000\r\n\r\n' + 'a'.repeat(1000));
        // Reset once the client has the first part (a reset racing the data reads as EOF).
        const timer = setTimeout(() => s.resetAndDestroy(), 50);
        s.on('close', () => clearTimeout(timer));
      });
    });
    const outcome = await probeHttp(req(`${base}/`), 2000);
    expect(outcome.result).toBe('failure');
    expect(outcome.output).toBe('');
    expect(outcome.error?.message).toMatch(
      /^read tcp 127\.0\.0\.1:\d+->127\.0\.0\.1:\d+: read: connection reset by peer$/,
    );
  });

  it('a body closed early → failure with "unexpected EOF"', async () => {
    const { base } = await startTcp((s) => {
      s.on('data', () => s.end('HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nshort'));
    });
    const outcome = await probeHttp(req(`${base}/`), 2000);
    expect(outcome).toEqual({ result: 'failure', output: '', error: new Error('unexpected EOF') });
  });

  it('a body that stalls past the deadline → failure with the body-timeout error', async () => {
    const { base } = await startHttp((_rq, rs) => {
      rs.writeHead(200, { 'Content-Length': 1000 });
      rs.write('partial');
    });
    const { value, ms } = await timed(() => probeHttp(req(`${base}/`), 1000));
    expect(value).toEqual({
      result: 'failure',
      output: '',
      error: new Error('context deadline exceeded (Client.Timeout or context cancellation while reading body)'),
    });
    expect(ms).toBeGreaterThanOrEqual(950);
    expect(ms).toBeLessThan(3000);
  });

  it('a body error on a non-2xx response is still an error', async () => {
    const { base } = await startTcp((s) => {
      s.on('data', () => s.end('HTTP/1.1 500 Oops\r\nContent-Length: 100\r\n\r\nshort'));
    });
    expect(await probeHttp(req(`${base}/`), 2000)).toEqual({
      result: 'failure',
      output: '',
      error: new Error('unexpected EOF'),
    });
  });
});

describe('probeHttp — transport errors', () => {
  it('connection refused', async () => {
    expect(await probeHttp(req('http://127.0.0.1:1/healthz'), 1000)).toEqual({
      result: 'failure',
      output: 'Get "http://127.0.0.1:1/healthz": dial tcp 127.0.0.1:1: connect: connection refused',
    });
  });

  it('a server that closes without answering → EOF', async () => {
    const { base } = await startTcp((s) => s.on('data', () => s.end()));
    expect(await probeHttp(req(`${base}/x`), 1000)).toEqual({ result: 'failure', output: `Get "${base}/x": EOF` });
  });

  it('a server that resets before answering → connection reset by peer', async () => {
    const { base } = await startTcp((s) => s.on('data', () => s.resetAndDestroy()));
    const outcome = await probeHttp(req(`${base}/x`), 1000);
    expect(outcome.result).toBe('failure');
    expect(outcome.output).toMatch(
      new RegExp(`^Get "${base}/x": read tcp 127\\.0\\.0\\.1:\\d+->127\\.0\\.0\\.1:\\d+: read: connection reset by peer$`),
    );
  });

  it('an unsupported scheme and a missing host fail like Go', async () => {
    expect(await probeHttp(req('ftp://127.0.0.1:1/x'), 1000)).toEqual({
      result: 'failure',
      output: 'Get "ftp://127.0.0.1:1/x": unsupported protocol scheme "ftp"',
    });
    expect(await probeHttp(req('http:///x'), 1000)).toEqual({
      result: 'failure',
      output: 'Get "http:///x": http: no Host in request URL',
    });
  });

  it('an unparsable URL → unknown with an error', async () => {
    const outcome = await probeHttp({ url: 'http://h:port/', headers: [] }, 1000);
    expect(outcome.result).toBe('unknown');
    expect(outcome.error?.message).toBe('parse "http://h:port/": invalid port ":port" after host');
  });
});

describe('probeHttp on a busy engine', () => {
  it('a reply that arrived in time counts even when the event loop was held up past the timeout', async () => {
    // The server runs in another process, so it answers while this one is busy.
    const server = spawn(process.execPath, [
      '-e',
      "require('http').createServer((q, s) => s.end('ok')).listen(0, '127.0.0.1', function () { console.log(this.address().port) })",
    ]);
    try {
      const [line] = (await once(server.stdout, 'data')) as [Buffer];
      const probe = probeHttp(req(`http://127.0.0.1:${Number(line.toString())}/`), 300);
      await new Promise((resolve) => setTimeout(resolve, 20)); // connected, request written
      await new Promise((resolve) => setImmediate(resolve)); // block from the check phase: timers come next
      // The reply arrives while this process is busy (a GC, a starved CPU)...
      const until = performance.now() + 600;
      while (performance.now() < until) {
        // busy
      }
      // ...so when the loop runs again the deadline is due and the reply is there: success.
      expect(await probe).toEqual({ result: 'success', output: 'ok' });
    } finally {
      server.kill('SIGKILL');
    }
  });
});
