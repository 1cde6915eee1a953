import { createHook } from 'node:async_hooks';
import http from 'node:http';
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { Server, ServerCredentials, status } from '@grpc/grpc-js';
import type { sendUnaryData, ServerUnaryCall, UntypedServiceImplementation } from '@grpc/grpc-js';
import { HealthImplementation, service as healthService } from 'grpc-health-check';
import { describe, expect, it } from 'vitest';
import { goStatusErrorText, probeGrpc } from '../../src/probe/grpc.js';
import { PROBE_USER_AGENT } from '../../src/probe/constants.js';
import { timeWaitSockets } from '../helpers/tcp-state.js';

type CheckCall = ServerUnaryCall<{ service: string }, unknown>;
type CheckCallback = sendUnaryData<{ status: string }>;

interface GrpcTestServer {
  server: Server;
  port: number;
}

async function startGrpcServer(register: (server: Server) => void): Promise<GrpcTestServer> {
  const server = new Server();
  register(server);
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync('127.0.0.1:0', ServerCredentials.createInsecure(), (err, bound) =>
      err ? reject(err) : resolve(bound),
    ),
  );
  return { server, port };
}

/** A health service whose Check is entirely up to the test. */
function customHealth(check: (call: CheckCall, callback: CheckCallback) => void): (server: Server) => void {
  return (server) => server.addService(healthService, { check } as UntypedServiceImplementation);
}

function standardHealth(statuses: Record<string, 'SERVING' | 'NOT_SERVING' | 'UNKNOWN'>): (server: Server) => void {
  return (server) => new HealthImplementation(statuses).addToServer(server);
}

/** Runs `fn` against a fresh server and always force-shuts the server down afterwards. */
async function withGrpcServer<T>(register: (server: Server) => void, fn: (port: number) => Promise<T>): Promise<T> {
  const { server, port } = await startGrpcServer(register);
  try {
    return await fn(port);
  } finally {
    server.forceShutdown();
  }
}

async function timed<T>(fn: () => Promise<T>): Promise<{ value: T; elapsed: number }> {
  const started = performance.now();
  const value = await fn();
  return { value, elapsed: performance.now() - started };
}

/** Socket and timer handles of this process, by kind (leak checks). */
function handleCounts(): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const kind of process.getActiveResourcesInfo()) {
    if (/TCP|Timeout|Immediate/.test(kind)) counts[kind] = (counts[kind] ?? 0) + 1;
  }
  return counts;
}

/**
 * Waits up to `withinMs` for the handle counts to drop back to `before` (peers close their side
 * asynchronously), then asserts. Not vi.waitFor: its own timers would count as a surplus.
 */
async function expectNoSurplusHandles(before: Record<string, number>, withinMs = 2000): Promise<void> {
  const giveUpAt = performance.now() + withinMs;
  while (Object.keys(surplusHandles(before)).length > 0 && performance.now() < giveUpAt) {
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  expect(surplusHandles(before)).toEqual({});
}

// Not HTTP2SESSION: its destroy hook waits for garbage collection, not for close.
const TRACKED_RESOURCES = new Set(['Timeout', 'TCPWRAP']);

/**
 * Records timers and sockets created from now on (refed or not, unlike
 * getActiveResourcesInfo). `stillAlive()` stops recording, waits up to 2 s for them to be
 * destroyed, and lists the types of those that were not.
 */
function trackResourcesCreated(): { stillAlive(): Promise<string[]> } {
  const live = new Map<number, string>();
  let recording = true;
  const hook = createHook({
    init(asyncId, type) {
      if (recording && TRACKED_RESOURCES.has(type)) live.set(asyncId, type);
    },
    destroy(asyncId) {
      live.delete(asyncId);
    },
  }).enable();
  return {
    async stillAlive() {
      recording = false;
      const giveUpAt = performance.now() + 2000;
      while (live.size > 0 && performance.now() < giveUpAt) {
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      hook.disable();
      return [...live.values()].sort();
    },
  };
}

/** Kinds of handle of which there are more now than in `before`, with the surplus. */
function surplusHandles(before: Record<string, number>): Record<string, number> {
  const surplus: Record<string, number> = {};
  for (const [kind, count] of Object.entries(handleCounts())) {
    const extra = count - (before[kind] ?? 0);
    if (extra > 0) surplus[kind] = extra;
  }
  return surplus;
}

describe('probeGrpc (T47)', () => {
  it('row 1: nothing listening, host "" → connect timeout after the full deadline', async () => {
    const before = handleCounts();
    const created = trackResourcesCreated();
    const { value, elapsed } = await timed(() => probeGrpc('', 32, '', 1000));
    expect(value).toEqual({
      result: 'failure',
      output: 'timeout: failed to connect service ":32" within 1s: context deadline exceeded',
    });
    expect(elapsed).toBeGreaterThanOrEqual(950);
    expect(elapsed).toBeLessThan(3000);
    // The reconnect back-off timers of the abandoned channel are gone too.
    await expectNoSurplusHandles(before);
    expect(await created.stillAlive()).toEqual([]);
  });

  it('row 2: a plain HTTP/1.1 server → failure, no error', async () => {
    const server = http.createServer((_req, res) => res.end('not grpc'));
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    const { port } = server.address() as AddressInfo;
    try {
      const outcome = await probeGrpc('127.0.0.1', port, '', 1000);
      expect(outcome).toEqual({
        result: 'failure',
        output: `timeout: failed to connect service "127.0.0.1:${port}" within 1s: context deadline exceeded`,
      });
    } finally {
      server.closeAllConnections();
      server.close();
      await once(server, 'close');
    }
  });

  it('row 3: NOT_SERVING → failure with the status name', async () => {
    const outcome = await withGrpcServer(standardHealth({ '': 'NOT_SERVING' }), (port) =>
      probeGrpc('127.0.0.1', port, '', 1000),
    );
    expect(outcome).toEqual({ result: 'failure', output: 'service unhealthy (responded with "NOT_SERVING")' });
  });

  it('row 4: a server slower than the timeout → rpc timeout text (1 s timeout, 3 s sleep)', async () => {
    const sleeps = new Set<NodeJS.Timeout>();
    const before = handleCounts();
    const created = trackResourcesCreated();
    try {
      const { value, elapsed } = await withGrpcServer(
        customHealth((_call, callback) => {
          const timer = setTimeout(() => {
            sleeps.delete(timer);
            callback(null, { status: 'SERVING' });
          }, 3000);
          sleeps.add(timer);
        }),
        (port) => timed(() => probeGrpc('127.0.0.1', port, '', 1000)),
      );
      expect(value).toEqual({ result: 'failure', output: 'timeout: health rpc did not complete within 1s' });
      expect(elapsed).toBeGreaterThanOrEqual(950);
      expect(elapsed).toBeLessThan(3000);
    } finally {
      for (const timer of sleeps) clearTimeout(timer);
    }
    await expectNoSurplusHandles(before);
    expect(await created.stillAlive()).toEqual([]);
  });

  it('rows 5–6: SERVING → success "service healthy"', async () => {
    const outcome = await withGrpcServer(standardHealth({ '': 'SERVING' }), (port) =>
      probeGrpc('127.0.0.1', port, '', 2000),
    );
    expect(outcome).toEqual({ result: 'success', output: 'service healthy' });
  });
});

describe('probeGrpc, other outcomes', () => {
  it('SERVICE_UNKNOWN from a custom implementation → unhealthy', async () => {
    const outcome = await withGrpcServer(
      customHealth((_call, callback) => callback(null, { status: 'SERVICE_UNKNOWN' })),
      (port) => probeGrpc('127.0.0.1', port, '', 1000),
    );
    expect(outcome).toEqual({ result: 'failure', output: 'service unhealthy (responded with "SERVICE_UNKNOWN")' });
  });

  it('an unknown service on a standard health server → NotFound in Go status text', async () => {
    const outcome = await withGrpcServer(standardHealth({ '': 'SERVING' }), (port) =>
      probeGrpc('127.0.0.1', port, 'no.such.Service', 1000),
    );
    expect(outcome).toEqual({
      result: 'failure',
      output:
        'error: health rpc probe failed: rpc error: code = NotFound desc = Health status unknown for service no.such.Service',
    });
  });

  it('any other status code → Go status text with its code name', async () => {
    const outcome = await withGrpcServer(
      customHealth((_call, callback) => callback({ code: status.UNAVAILABLE, details: 'draining' })),
      (port) => probeGrpc('127.0.0.1', port, '', 1000),
    );
    expect(outcome).toEqual({
      result: 'failure',
      output: 'error: health rpc probe failed: rpc error: code = Unavailable desc = draining',
    });
  });

  it('a gRPC server without the health service → UNIMPLEMENTED message', async () => {
    const outcome = await withGrpcServer(
      () => undefined,
      (port) => probeGrpc('127.0.0.1', port, '', 1000),
    );
    expect(outcome.result).toBe('failure');
    expect(outcome.error).toBeUndefined();
    expect(outcome.output).toMatch(
      /^error: this server does not implement the grpc health protocol \(grpc\.health\.v1\.Health\): .*\/grpc\.health\.v1\.Health\/Check/,
    );
  });

  it('passes the service name through and identifies itself as kube-probe', async () => {
    const seen: { service: string; userAgent: string }[] = [];
    const outcome = await withGrpcServer(
      customHealth((call, callback) => {
        seen.push({ service: call.request.service, userAgent: String(call.metadata.get('user-agent')[0]) });
        callback(null, { status: 'SERVING' });
      }),
      (port) => probeGrpc('127.0.0.1', port, 'my.pkg.Service', 1000),
    );
    expect(outcome).toEqual({ result: 'success', output: 'service healthy' });
    expect(seen).toHaveLength(1);
    expect(seen[0]?.service).toBe('my.pkg.Service');
    expect(seen[0]?.userAgent.startsWith(`${PROBE_USER_AGENT} `)).toBe(true);
  });

  it('host "" dials the local host', async () => {
    const outcome = await withGrpcServer(standardHealth({ '': 'SERVING' }), (port) => probeGrpc('', port, '', 1000));
    expect(outcome).toEqual({ result: 'success', output: 'service healthy' });
  });

  it('leaves no socket or timer behind', async () => {
    const { server, port } = await startGrpcServer(standardHealth({ '': 'SERVING' }));
    try {
      const before = handleCounts();
      const created = trackResourcesCreated();
      expect(await probeGrpc('127.0.0.1', port, '', 1000)).toEqual({ result: 'success', output: 'service healthy' });
      expect(await probeGrpc('127.0.0.1', port, 'missing', 1000)).toMatchObject({ result: 'failure' });
      // The server's side of the connection closes asynchronously; the probe's must not linger.
      await expectNoSurplusHandles(before);
      // Unref'd timers (a channel's idle timer) are invisible above but keep the channel alive.
      expect(await created.stillAlive()).toEqual([]);
    } finally {
      server.forceShutdown();
    }
  });

  it("with close: 'reset', leaves no TIME_WAIT behind on the probing side; by default (a FIN, as the kubelet) it does", async () => {
    const { server, port } = await startGrpcServer(standardHealth({ '': 'SERVING' }));
    try {
      const reset = { close: 'reset' } as const;
      // An earlier server of this file may have had the same port: only new TIME_WAITs count.
      const before = new Set((await timeWaitSockets({ remotePort: port })).map((e) => e.localPort));
      const newTimeWaits = async (): Promise<number> =>
        (await timeWaitSockets({ remotePort: port })).filter((e) => !before.has(e.localPort)).length;
      expect(await probeGrpc('127.0.0.1', port, '', 1000, undefined, reset)).toEqual({ result: 'success', output: 'service healthy' });
      expect(await probeGrpc('127.0.0.1', port, 'missing', 1000, undefined, reset)).toMatchObject({ result: 'failure' });
      await new Promise((resolve) => setTimeout(resolve, 50));
      expect(await newTimeWaits()).toBe(0);
      expect(await probeGrpc('127.0.0.1', port, '', 1000)).toEqual({ result: 'success', output: 'service healthy' });
      await new Promise((resolve) => setTimeout(resolve, 50));
      expect(await newTimeWaits()).toBe(1);
    } finally {
      server.forceShutdown();
    }
  });


  it('formats status errors like Go', () => {
    expect(goStatusErrorText(status.CANCELLED, 'x')).toBe('rpc error: code = Canceled desc = x');
    expect(goStatusErrorText(17, 'y')).toBe('rpc error: code = Code(17) desc = y');
  });
});
