/**
 * probelet out of file descriptors (issue 21): 400 pods under `ulimit -n 1024` gave 99 false
 * liveness kills, because a probe that could not open its socket was a *failure* worded
 * `connect EMFILE … - Local (undefined:undefined)`. It is a probe *error* now: the Prober
 * reports it as an error (the worker throws the result away, as the kubelet does with a
 * prober error) with its own message. The descriptors are really used up here: the test
 * opens /dev/null until the process's own limit refuses (EMFILE), probes, and closes them.
 */
import { closeSync, openSync } from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import { describe, expect, it, onTestFinished } from 'vitest';
import type { Container, Pod } from '../../src/api/types.js';
import { probeGrpc } from '../../src/probe/grpc.js';
import { probeHttp } from '../../src/probe/http.js';
import { probeTcp } from '../../src/probe/tcp.js';
import type { ProbeOutcome } from '../../src/probe/types.js';
import { Prober } from '../../src/prober/prober.js';
import { LocalCommandRunner } from '../../src/probe/local-runner.js';
import { openFilesLimit } from '../../src/util/fd-limit.js';

/** Runs `probe` with every file descriptor of this process in use, then frees them. */
async function withoutFds<T>(probe: () => Promise<T>): Promise<T> {
  const held: number[] = [];
  try {
    for (;;) held.push(openSync('/dev/null', 'r'));
  } catch (err) {
    expect((err as NodeJS.ErrnoException).code).toBe('EMFILE');
  }
  try {
    return await probe();
  } finally {
    for (const fd of held) closeSync(fd);
  }
}

async function listening(server: net.Server): Promise<number> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  onTestFinished(() => void server.close());
  return (server.address() as net.AddressInfo).port;
}

const MESSAGE = /^dial tcp 127\.0\.0\.1:\d+: probelet has no file descriptor left \(EMFILE: too many open files; its limit, ulimit -n, is \d+\): the probe could not be attempted and counts neither as success nor failure; raise the limit or run fewer pods$/;

function expectErrored(outcome: ProbeOutcome): void {
  expect(outcome.result).toBe('unknown');
  expect(outcome.error?.message).toMatch(MESSAGE);
  expect(outcome.output).not.toContain('undefined');
}

describe('EMFILE in probe handlers is a probe error with its own message', () => {
  it('reads the limit from /proc/self/limits', () => {
    const limit = openFilesLimit();
    expect(limit?.soft).toBeGreaterThan(0);
    expect(limit?.hard).toBeGreaterThanOrEqual(limit?.soft ?? 0);
  });

  it('TCP', async () => {
    const port = await listening(net.createServer((s) => s.destroy()));
    expectErrored(await withoutFds(() => probeTcp('127.0.0.1', port, 1000)));
  });

  it('HTTP', async () => {
    const port = await listening(http.createServer((_req, res) => res.end('ok')));
    expectErrored(await withoutFds(() => probeHttp({ url: `http://127.0.0.1:${port}/`, headers: [] }, 1000)));
  });

  it('gRPC (errored at once, not a connect timeout after retrying until the deadline)', async () => {
    const port = await listening(net.createServer((s) => s.destroy()));
    expectErrored(await withoutFds(() => probeGrpc('127.0.0.1', port, '', 1000)));
  });

  it('the Prober: an error (retried, then thrown away by the worker), never a liveness failure', async () => {
    const port = await listening(net.createServer((s) => s.destroy()));
    const container: Container = { name: 'app', livenessProbe: { tcpSocket: { port }, timeoutSeconds: 1, periodSeconds: 10, successThreshold: 1, failureThreshold: 3 } };
    const pod: Pod = { metadata: { name: 'p', namespace: 'default', uid: 'u1' }, spec: { containers: [container] }, status: { podIP: '127.0.0.1' } };
    const prober = new Prober({ runner: new LocalCommandRunner() });
    const got = await withoutFds(() => prober.probe('liveness', pod, pod.status ?? {}, container, 'c1'));
    expect(got.error?.message).toMatch(MESSAGE);
  });
});
