/**
 * TCP and gRPC probes against hostile peers (all on 127.0.0.1): verdict, message, time cut
 * at the timeout, and nothing left behind (see leaks.ts).
 */
import { Server, ServerCredentials, type UntypedServiceImplementation, type sendUnaryData } from '@grpc/grpc-js';
import { service as healthService } from 'grpc-health-check';
import { describe, expect, it, onTestFinished } from 'vitest';
import { probeGrpc } from '../../src/probe/grpc.js';
import { probeTcp } from '../../src/probe/tcp.js';
import { startStalledListener } from '../helpers/stalled-listener.js';
import { startTcp } from '../probe/http-servers.js';
import { hostileCase } from './leaks.js';

const TIMEOUT_MS = 1000;
const CUT_SLACK_MS = 750;

function expectCutAtTimeout(ms: number): void {
  expect(ms).toBeGreaterThanOrEqual(TIMEOUT_MS - 50);
  expect(ms).toBeLessThan(TIMEOUT_MS + CUT_SLACK_MS);
}

describe('TCP probe against hostile peers', () => {
  it('accept-then-close: success (a TCP probe only connects)', async () => {
    const s = await startTcp((sock) => sock.destroy());
    const { value, ms } = await hostileCase(() => probeTcp('127.0.0.1', s.port, TIMEOUT_MS));
    expect(value).toEqual({ result: 'success', output: '' });
    expect(ms).toBeLessThan(TIMEOUT_MS);
  });

  it('a closed port: failure at once, connection refused', async () => {
    const s = await startTcp(() => undefined);
    await new Promise((resolve) => s.server.close(resolve));
    const { value, ms } = await hostileCase(() => probeTcp('127.0.0.1', s.port, TIMEOUT_MS));
    expect(value).toEqual({ result: 'failure', output: `dial tcp 127.0.0.1:${s.port}: connect: connection refused` });
    expect(ms).toBeLessThan(TIMEOUT_MS);
  });

  it('a full backlog: failure at the timeout, i/o timeout', async () => {
    const listener = await startStalledListener();
    onTestFinished(() => listener.close());
    const { value, ms } = await hostileCase(() => probeTcp('127.0.0.1', listener.port, TIMEOUT_MS));
    expect(value).toEqual({ result: 'failure', output: `dial tcp 127.0.0.1:${listener.port}: i/o timeout` });
    expectCutAtTimeout(ms);
  });
});

/** A gRPC server whose Health/Check is `check`; shut down when the test ends. */
async function grpcServer(register: (server: Server) => void): Promise<number> {
  const server = new Server();
  register(server);
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync('127.0.0.1:0', ServerCredentials.createInsecure(), (err, bound) => (err ? reject(err) : resolve(bound))),
  );
  onTestFinished(() => server.forceShutdown());
  return port;
}

function health(check: (callback: sendUnaryData<unknown>) => void): (server: Server) => void {
  return (server) => server.addService(healthService, { check: (_call: unknown, cb: sendUnaryData<unknown>) => check(cb) } as UntypedServiceImplementation);
}

async function grpcProbe(port: number): Promise<{ value: Awaited<ReturnType<typeof probeGrpc>>; ms: number }> {
  return hostileCase(() => probeGrpc('127.0.0.1', port, '', TIMEOUT_MS));
}

describe('gRPC probe against hostile peers', () => {
  it('a non-gRPC server: failure at the timeout', async () => {
    const garbage = await startTcp((sock) => {
      sock.on('error', () => undefined);
      sock.resume(); // reads, so it sees the probe's reset (else its own socket lingers)
      sock.end('HTTP/1.1 400 Bad Request\r\n\r\nnot grpc');
    });
    let connections = 0;
    garbage.server.on('connection', () => connections++);
    const a = await grpcProbe(garbage.port);
    expect(a.value).toEqual({
      result: 'failure',
      output: `timeout: failed to connect service "127.0.0.1:${garbage.port}" within 1s: context deadline exceeded`,
    });
    expectCutAtTimeout(a.ms);
    // The closed channel reconnects once its back-off expires; that socket is reset at once.
    const after = connections;
    await new Promise((resolve) => setTimeout(resolve, 1500));
    expect(connections - after).toBeLessThanOrEqual(1);
  });

  it('a gRPC server that never answers: failure at the timeout', async () => {
    const port = await grpcServer(health(() => undefined));
    const { value, ms } = await grpcProbe(port);
    expect(value).toEqual({ result: 'failure', output: 'timeout: health rpc did not complete within 1s' });
    expectCutAtTimeout(ms);
  });

  it('a huge response (5 MiB): failure, larger than the 4 MiB gRPC receive limit, in grpc-go words', async () => {
    const huge = Buffer.alloc(5 * 2 ** 20);
    const port = await grpcServer((server) => {
      const path = '/grpc.health.v1.Health/Check';
      server.register(
        path,
        (_call: unknown, cb: sendUnaryData<Buffer>) => cb(null, huge),
        (b: Buffer) => b,
        (b: Buffer) => b,
        'unary',
      );
    });
    const { value, ms } = await grpcProbe(port);
    expect(value).toEqual({
      result: 'failure',
      output: `error: health rpc probe failed: rpc error: code = ResourceExhausted desc = grpc: received message larger than max (${huge.length} vs. 4194304)`,
    });
    expect(ms).toBeLessThan(TIMEOUT_MS);
  }, 20_000);

  it('every serving status: only SERVING succeeds; the others name the status', async () => {
    const cases: Array<[unknown, string]> = [
      ['SERVING', ''],
      ['NOT_SERVING', 'NOT_SERVING'],
      ['UNKNOWN', 'UNKNOWN'],
      ['SERVICE_UNKNOWN', 'SERVICE_UNKNOWN'],
      [99, '99'],
    ];
    for (const [status, name] of cases) {
      const port = await grpcServer(health((cb) => cb(null, { status })));
      const { value } = await grpcProbe(port);
      expect(value, String(status)).toEqual(
        name === '' ? { result: 'success', output: 'service healthy' } : { result: 'failure', output: `service unhealthy (responded with "${name}")` },
      );
    }
  });

  it('UNIMPLEMENTED (no health service): failure saying so', async () => {
    const port = await grpcServer(() => undefined);
    const { value, ms } = await grpcProbe(port);
    expect(value.result).toBe('failure');
    expect(value.output).toMatch(/^error: this server does not implement the grpc health protocol \(grpc\.health\.v1\.Health\): /);
    expect(ms).toBeLessThan(TIMEOUT_MS);
  });
});
