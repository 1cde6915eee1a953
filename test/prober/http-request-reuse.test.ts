/**
 * The prober reuses a worker's built HTTP request, and probeHttp its parsed form, only
 * while every input is unchanged: a spec changed in place, another pod IP, another named
 * port or a request object changed between probes is probed exactly as if new.
 */
import { describe, expect, it } from 'vitest';
import type { Container, Pod, PodStatus, Probe } from '../../src/api/types.js';
import { probeHttp } from '../../src/probe/http.js';
import { newHttpProbeRequestForURL, type HttpProbeRequest } from '../../src/probe/http-request.js';
import { Prober } from '../../src/prober/prober.js';
import { startHttp } from '../probe/http-servers.js';

interface Seen {
  url: string;
  headers: Record<string, string | string[] | undefined>;
}

async function recordingServer(): Promise<{ port: number; seen: Seen[] }> {
  const seen: Seen[] = [];
  const { port } = await startHttp((rq, rs) => {
    seen.push({ url: rq.url ?? '', headers: rq.headers });
    rs.end('ok');
  });
  return { port, seen };
}

const runner = { runInContainer: async () => ({ output: '', exitCode: 0 }) };

function podOf(container: Container): Pod {
  return { metadata: { name: 'p', namespace: 'ns', uid: 'u' }, spec: { containers: [container] } };
}

describe('HTTP request reuse', () => {
  it('a spec changed in place, a new pod IP or a moved named port is probed as new', async () => {
    const { port, seen } = await recordingServer();
    const probe: Probe = {
      httpGet: { path: '/a', port: 'web', httpHeaders: [{ name: 'x-one', value: '1' }] },
      timeoutSeconds: 2,
    };
    const container: Container = { name: 'c', readinessProbe: probe, ports: [{ name: 'web', containerPort: port }] };
    const pod = podOf(container);
    const status: PodStatus = { podIP: '127.0.0.1' };
    const prober = new Prober({ runner });
    const run = () => prober.runProbe('readiness', probe, pod, status, container, 'id');

    expect(await run()).toEqual({ result: 'success', output: 'ok' });
    expect(await run()).toEqual({ result: 'success', output: 'ok' });
    expect(seen.map((s) => s.url)).toEqual(['/a', '/a']);
    expect(seen[1]?.headers['x-one']).toBe('1');

    const action = probe.httpGet;
    if (!action) throw new Error('no httpGet');
    action.path = '/b?q=1';
    expect(await run()).toEqual({ result: 'success', output: 'ok' });
    expect(seen.at(-1)?.url).toBe('/b?q=1');

    const header = action.httpHeaders?.[0];
    if (!header) throw new Error('no header');
    header.value = '2';
    await run();
    expect(seen.at(-1)?.headers['x-one']).toBe('2');
    action.httpHeaders?.push({ name: 'X-Two', value: 'two' });
    await run();
    expect(seen.at(-1)?.headers['x-two']).toBe('two');

    // Another pod IP (the server listens on 127.0.0.1 only): the URL follows it.
    status.podIP = '127.0.0.2';
    const moved = await run();
    expect(moved.output).not.toBe('ok');
    expect(moved.output).toContain(`127.0.0.2:${port}`);
    status.podIP = '127.0.0.1';
    expect(await run()).toEqual({ result: 'success', output: 'ok' });

    // The named port now resolves elsewhere.
    container.ports = [{ name: 'web', containerPort: 1 }];
    expect((await run()).output).toBe('Get "http://127.0.0.1:1/b?q=1": dial tcp 127.0.0.1:1: connect: connection refused');
    container.ports = [];
    expect(await run()).toEqual({
      result: 'unknown',
      output: '',
      error: new Error('strconv.Atoi: parsing "web": invalid syntax'),
    });
  });

  it('probeHttp re-parses a request object changed between probes', async () => {
    const { port, seen } = await recordingServer();
    const request: HttpProbeRequest = newHttpProbeRequestForURL(`http://127.0.0.1:${port}/one`, [['X-A', 'a']]);
    expect(await probeHttp(request, 2000)).toEqual({ result: 'success', output: 'ok' });
    expect(await probeHttp(request, 2000)).toEqual({ result: 'success', output: 'ok' });
    request.url = `http://127.0.0.1:${port}/two`;
    await probeHttp(request, 2000);
    const first = request.headers[0];
    if (!first) throw new Error('no header');
    first[1] = 'b';
    await probeHttp(request, 2000);
    request.url = 'http://127.0.0.1:%zz/';
    expect((await probeHttp(request, 2000)).result).toBe('unknown');
    expect(seen.map((s) => [s.url, s.headers['x-a']])).toEqual([
      ['/one', 'a'],
      ['/one', 'a'],
      ['/two', 'a'],
      ['/two', 'b'],
    ]);
  });
});

describe('HTTP request reuse with a replacement handler', () => {
  const probe: Probe = { httpGet: { path: '/a', port: 8080 }, timeoutSeconds: 1 };
  const container: Container = { name: 'c', readinessProbe: probe };
  const pod = podOf(container);
  const status: PodStatus = { podIP: '10.0.0.1' };

  /** The requests a replacement http handler was given over three probes (the spec changed before the third). */
  async function requestsSeen(readsOnly: boolean): Promise<HttpProbeRequest[]> {
    const seen: HttpProbeRequest[] = [];
    const prober = new Prober({
      runner,
      handlers: { http: (request) => (seen.push(request), Promise.resolve({ result: 'success', output: '' })) },
      ...(readsOnly ? { httpHandlerReadsOnly: true } : {}),
    });
    const spec = structuredClone(probe);
    const run = () => prober.runProbe('readiness', spec, pod, status, container, 'id');
    await run();
    await run();
    if (spec.httpGet) spec.httpGet.path = '/b';
    await run();
    return seen;
  }

  it('gets a new request at every probe unless it says it only reads', async () => {
    const [first, second, third] = await requestsSeen(false);
    expect(second).not.toBe(first);
    expect(Object.isFrozen(first)).toBe(false);
    expect(third?.url).toBe('http://10.0.0.1:8080/b');
  });

  it('that only reads gets the request built once, frozen, and a new one when the spec changes', async () => {
    const [first, second, third] = await requestsSeen(true);
    expect(second).toBe(first);
    expect(Object.isFrozen(first)).toBe(true);
    expect(first?.url).toBe('http://10.0.0.1:8080/a');
    expect(third?.url).toBe('http://10.0.0.1:8080/b');
  });
});
