import type http from 'node:http';
import { describe, expect, it } from 'vitest';
import { newHttpProbeRequestForURL, type HttpProbeRequest } from '../../src/probe/http-request.js';
import { probeHttp, type HttpProbeOptions } from '../../src/probe/http.js';
import { goRedirect, startHttp } from './http-servers.js';

const req = (url: string, headers: Array<[string, string]> = []): HttpProbeRequest =>
  newHttpProbeRequestForURL(url, headers);

const modes: Array<[string, HttpProbeOptions]> = [
  ['kubelet mode (local redirects only)', {}],
  ['follow-all mode', { followNonLocalRedirects: true }],
];

/** The handler of upstream's TestHTTPProbeChecker_NonLocalRedirects; counts requests. */
function redirector(hits: string[]): http.RequestListener {
  return (rq, rs) => {
    hits.push(rq.url ?? '');
    const url = new URL(rq.url ?? '/', 'http://x');
    switch (url.pathname) {
      case '/redirect':
        goRedirect(rs, url.searchParams.get('loc') ?? '');
        return;
      case '/loop':
        goRedirect(rs, '/loop');
        return;
      case '/success':
        rs.end('success');
        return;
      default:
        rs.statusCode = 500;
        rs.end();
    }
  };
}

async function servers(): Promise<{ a: string; b: string; hitsA: string[]; hitsB: string[] }> {
  const hitsA: string[] = [];
  const hitsB: string[] = [];
  const a = await startHttp(redirector(hitsA));
  const b = await startHttp(redirector(hitsB));
  return { a: a.base, b: b.base, hitsA, hitsB };
}

const via = (base: string, target: string): HttpProbeRequest =>
  req(`${base}/redirect?loc=${encodeURIComponent(target)}`);

describe('T41 TestHTTPProbeChecker_NonLocalRedirects', () => {
  describe.each(modes)('%s', (_name, options) => {
    const followAll = options.followNonLocalRedirects === true;

    it('local success → success', async () => {
      const { a } = await servers();
      expect(await probeHttp(via(a, '/success'), 5000, options)).toEqual({ result: 'success', output: 'success' });
    });

    it('local fail → failure', async () => {
      const { a } = await servers();
      expect((await probeHttp(via(a, '/fail'), 5000, options)).result).toBe('failure');
    });

    it('other port, same host: success → success', async () => {
      const { a, b, hitsB } = await servers();
      expect(await probeHttp(via(a, `${b}/success`), 5000, options)).toEqual({ result: 'success', output: 'success' });
      expect(hitsB).toEqual(['/success']);
    });

    it('other port, same host: fail → failure', async () => {
      const { a, b } = await servers();
      expect(await probeHttp(via(a, `${b}/fail`), 5000, options)).toEqual({
        result: 'failure',
        output: 'HTTP probe failed with statuscode: 500',
      });
    });

    it(`other host (http://0.0.0.0/fail) → ${followAll ? 'failure' : 'warning'}`, async () => {
      const { a } = await servers();
      const outcome = await probeHttp(via(a, 'http://0.0.0.0/fail'), 5000, options);
      if (followAll) {
        expect(outcome.result).toBe('failure');
      } else {
        expect(outcome).toEqual({
          result: 'warning',
          output: 'Probe terminated redirects, Response body: <a href="http://0.0.0.0/fail">Found</a>.\n\n',
        });
      }
    });

    it(`other host name, same machine (localhost) → ${followAll ? 'followed' : 'warning'}`, async () => {
      const { a, b, hitsB } = await servers();
      const port = new URL(b).port;
      const outcome = await probeHttp(via(a, `http://localhost:${port}/success`), 5000, options);
      if (followAll) {
        expect(outcome).toEqual({ result: 'success', output: 'success' });
        expect(hitsB).toEqual(['/success']);
      } else {
        expect(outcome.result).toBe('warning');
        expect(hitsB).toEqual([]);
      }
    });

    it('a redirect loop → failure after 10 requests', async () => {
      const { a, hitsA } = await servers();
      expect(await probeHttp(via(a, '/loop'), 5000, options)).toEqual({
        result: 'failure',
        output: 'Get "/loop": stopped after 10 redirects',
      });
      expect(hitsA).toHaveLength(10);
      expect(hitsA.slice(1)).toEqual(Array<string>(9).fill('/loop'));
    });

    it('a chain of 9 redirects is still followed', async () => {
      const hits: string[] = [];
      const { base } = await startHttp((rq, rs) => {
        hits.push(rq.url ?? '');
        const n = Number((rq.url ?? '').slice(1));
        if (n < 9) goRedirect(rs, `/${n + 1}`);
        else rs.end(`done at ${n}`);
      });
      expect(await probeHttp(req(`${base}/0`), 5000, options)).toEqual({ result: 'success', output: 'done at 9' });
      expect(hits).toHaveLength(10);
    });
  });
});

describe('T42 TestHTTPProbeChecker_HostHeaderPreservedAfterRedirect', () => {
  const hostServer = (location: (base: string) => string): Promise<{ base: string }> => {
    let base = '';
    const started = startHttp((rq, rs) => {
      if (rq.url === '/redirect') goRedirect(rs, location(base));
      else if (rq.url === '/success') {
        rs.statusCode = rq.headers.host === 'www.success.com' ? 200 : 400;
        rs.end();
      } else {
        rs.statusCode = 500;
        rs.end();
      }
    });
    return started.then((s) => {
      base = s.base;
      return s;
    });
  };

  describe.each(modes)('%s', (_name, options) => {
    it('Host www.success.com survives a relative redirect → success', async () => {
      const { base } = await hostServer(() => '/success');
      const outcome = await probeHttp(req(`${base}/redirect`, [['Host', 'www.success.com']]), 5000, options);
      expect(outcome.result).toBe('success');
    });

    it('Host www.fail.com → failure', async () => {
      const { base } = await hostServer(() => '/success');
      const outcome = await probeHttp(req(`${base}/redirect`, [['Host', 'www.fail.com']]), 5000, options);
      expect(outcome).toEqual({ result: 'failure', output: 'HTTP probe failed with statuscode: 400' });
    });

    it('an absolute same-host redirect drops the custom Host (as Go does)', async () => {
      const { base } = await hostServer((b) => `${b}/success`);
      const outcome = await probeHttp(req(`${base}/redirect`, [['Host', 'www.success.com']]), 5000, options);
      expect(outcome).toEqual({ result: 'failure', output: 'HTTP probe failed with statuscode: 400' });
    });
  });
});

describe('redirect requests', () => {
  it('carry the original headers and a Referer', async () => {
    const seen: Array<http.IncomingHttpHeaders> = [];
    const { base } = await startHttp((rq, rs) => {
      seen.push(rq.headers);
      if (rq.url === '/start?x=1') goRedirect(rs, 'next');
      else rs.end('ok');
    });
    const outcome = await probeHttp(req(`${base}/start?x=1`, [['X-Token', 't'], ['Accept', 'text/plain']]), 5000);
    expect(outcome).toEqual({ result: 'success', output: 'ok' });
    expect(seen).toHaveLength(2);
    expect(seen[1]).toMatchObject({
      'x-token': 't',
      accept: 'text/plain',
      'user-agent': 'kube-probe/1.35',
      referer: `${base}/start?x=1`,
      host: new URL(base).host,
    });
  });

  it('drop Authorization when leaving the host (follow-all mode), keep it on the same host', async () => {
    const seen: Array<string | undefined> = [];
    const b = await startHttp((rq, rs) => {
      seen.push(rq.headers.authorization);
      rs.end('b');
    });
    const a = await startHttp((rq, rs) => {
      seen.push(rq.headers.authorization);
      if (rq.url === '/same') goRedirect(rs, `${b.base}/`);
      else goRedirect(rs, `http://localhost:${b.port}/`);
    });
    const headers: Array<[string, string]> = [['Authorization', 'Bearer x']];
    await probeHttp(req(`${a.base}/same`, headers), 5000, { followNonLocalRedirects: true });
    await probeHttp(req(`${a.base}/other`, headers), 5000, { followNonLocalRedirects: true });
    expect(seen).toEqual(['Bearer x', 'Bearer x', 'Bearer x', undefined]);
  });

  it('an unparsable Location → failure worded like Go', async () => {
    const { base } = await startHttp((_rq, rs) => {
      rs.writeHead(302, { Location: 'http://h:port/' });
      rs.end();
    });
    expect(await probeHttp(req(`${base}/x`), 5000)).toEqual({
      result: 'failure',
      output: `Get "${base}/x": failed to parse Location header "http://h:port/": parse "http://h:port/": invalid port ":port" after host`,
    });
  });

  it('a refused redirect target names the target URL', async () => {
    const { base } = await startHttp((_rq, rs) => goRedirect(rs, 'http://127.0.0.1:1/next'));
    expect(await probeHttp(req(`${base}/`), 5000)).toEqual({
      result: 'failure',
      output: 'Get "http://127.0.0.1:1/next": dial tcp 127.0.0.1:1: connect: connection refused',
    });
  });

  it('one deadline covers the whole chain', async () => {
    const { base } = await startHttp((rq, rs) => {
      if (rq.url === '/') goRedirect(rs, '/slow');
      // '/slow' never answers
    });
    const start = performance.now();
    const outcome = await probeHttp(req(`${base}/`), 1000);
    const ms = performance.now() - start;
    expect(outcome).toEqual({
      result: 'failure',
      output: `Get "${base}/slow": context deadline exceeded (Client.Timeout exceeded while awaiting headers)`,
    });
    expect(ms).toBeGreaterThanOrEqual(950);
    expect(ms).toBeLessThan(3000);
  });
});
