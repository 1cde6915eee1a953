/**
 * The hook runner against real servers on 127.0.0.1 (pkg/kubelet/lifecycle/handlers.go):
 * an `httpGet` hook says `kube-lifecycle/1.35`, counts any answer — a 500 too — as done and
 * fails only without one; an `exec` hook fails on a non-zero exit with the CRI client's
 * words; a `sleep` cut short by the pod's deletion says so.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import type { Container, Pod } from '../../src/api/types.js';
import { createHandlerRunner, type HookTarget } from '../../src/kubelet/lifecycle.js';
import { FakeClock, realClock } from '../../src/util/clock.js';

const pod: Pod = { metadata: { name: 'web', namespace: 'default', uid: 'u1' } };
const container: Container = { name: 'app', image: 'img' };
const servers: Server[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => new Promise((resolve) => s.close(resolve))));
});

function target(signal = new AbortController().signal): HookTarget {
  return { pod, container, containerID: 'c1', podIP: '127.0.0.1', signal };
}

async function serve(status: number, seen: string[]): Promise<number> {
  const server = createServer((req, res) => {
    seen.push(`${req.method} ${req.url} ${req.headers['user-agent']} ${req.headers['accept-encoding']} ${req.headers.connection ?? '-'}`);
    res.statusCode = status;
    res.end('body');
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return (server.address() as AddressInfo).port;
}

const execNever = (): Promise<never> => Promise.reject(new Error('no exec here'));

describe('lifecycle handler runner', () => {
  it('httpGet: GET with User-Agent kube-lifecycle/1.35 to the pod IP, as Go\'s default transport sends it (gzip, keep-alive); a 500 is still a hook that ran', async () => {
    const seen: string[] = [];
    const port = await serve(500, seen);
    const runner = createHandlerRunner({ execSync: execNever, clock: realClock });
    const error = await runner.run(target(), { httpGet: { path: '/drain', port } });
    expect(error).toBeUndefined();
    expect(seen).toEqual(['GET /drain kube-lifecycle/1.35 gzip -']);
  });

  it('httpGet without an answer fails with Go\'s client error in upstream\'s sentence', async () => {
    const port = await serve(200, []);
    await new Promise((resolve) => servers.pop()!.close(resolve));
    const runner = createHandlerRunner({ execSync: execNever, clock: realClock });
    const error = await runner.run(target(), { httpGet: { path: '/drain', port } });
    expect(error).toBe(
      `HTTP lifecycle hook (/drain) for Container "app" in Pod "web_default(u1)" failed - error: Get "http://127.0.0.1:${port}/drain": dial tcp 127.0.0.1:${port}: connect: connection refused`,
    );
  });

  it('httpGet over HTTPS to a plain HTTP server: sent again over HTTP, done, one LifecycleHTTPFallback Warning on the pod', async () => {
    const seen: string[] = [];
    const port = await serve(200, seen);
    const events: string[] = [];
    const runner = createHandlerRunner({ execSync: execNever, clock: realClock, event: (p, type, reason, message) => void events.push(`${p.metadata?.name} ${type} ${reason} ${message}`) });
    const error = await runner.run(target(), { httpGet: { path: '/drain', port, scheme: 'HTTPS' } });
    expect(error).toBeUndefined();
    expect(seen).toEqual(['GET /drain kube-lifecycle/1.35 gzip -']);
    expect(events).toEqual([`web Warning LifecycleHTTPFallback request to HTTPS lifecycle hook 127.0.0.1:${port} got HTTP response, retry with HTTP succeeded`]);
  });

  it('httpGet without host on a pod without an IP fails (no networking container), and sends nothing', async () => {
    const runner = createHandlerRunner({ execSync: execNever, clock: realClock });
    const error = await runner.run({ ...target(), podIP: '' }, { httpGet: { path: '/drain', port: 1 } });
    expect(error).toBe('HTTP lifecycle hook (/drain) for Container "app" in Pod "web_default(u1)" failed - error: failed to find networking container: the pod has no IP');
  });

  it('exec: a non-zero exit fails with the CRI client\'s words and the output quoted', async () => {
    const runner = createHandlerRunner({ execSync: async () => ({ output: 'not yet\n', exitCode: 3 }), clock: realClock });
    const error = await runner.run(target(), { exec: { command: ['sh', '-c', 'exit 3'] } });
    expect(error).toBe(
      'Exec lifecycle hook ([sh -c exit 3]) for Container "app" in Pod "web_default(u1)" failed - error: command \'sh -c exit 3\' exited with 3: not yet\n, message: "not yet\\n"',
    );
  });

  it('exec asks the runtime for no timeout (0), as RunInContainer does', async () => {
    const timeouts: number[] = [];
    const runner = createHandlerRunner({ execSync: async (_id, _cmd, ms) => (timeouts.push(ms), { output: '', exitCode: 0 }), clock: realClock });
    expect(await runner.run(target(), { exec: { command: ['true'] } })).toBeUndefined();
    expect(timeouts).toEqual([0]);
  });

  it('sleep: waits its seconds on the clock; aborted, it fails as upstream words a cancelled context', async () => {
    const clock = new FakeClock(0);
    const runner = createHandlerRunner({ execSync: execNever, clock });
    let done: string | undefined | null = null;
    void runner.run(target(), { sleep: { seconds: 3 } }).then((e) => (done = e));
    await clock.advance(2_999);
    expect(done).toBeNull();
    await clock.advance(1);
    expect(done).toBeUndefined();
    const abort = new AbortController();
    const cut = runner.run(target(abort.signal), { sleep: { seconds: 3 } });
    abort.abort();
    expect(await cut).toBe('Sleep lifecycle hook (3) for Container "app" in Pod "web_default(u1)" failed - error: container terminated before sleep hook finished');
  });

  it('tcpSocket (in the API for old objects) is never run', async () => {
    const runner = createHandlerRunner({ execSync: execNever, clock: realClock });
    expect(await runner.run(target(), { tcpSocket: { port: 80 } })).toMatch(/^Cannot run handler: invalid handler/);
  });
});
