import net from 'node:net';
import { once } from 'node:events';
import { describe, expect, it } from 'vitest';
import { probeTcp } from '../../src/probe/tcp.js';
import { parseTcpTable, timeWaitSockets } from '../helpers/tcp-state.js';
import { startStalledListener } from '../helpers/stalled-listener.js';

interface TestServer {
  server: net.Server;
  port: number;
}

/** A server that accepts, never writes, and closes its side when the peer closes. */
async function startServer(): Promise<TestServer> {
  const server = net.createServer((socket) => {
    socket.on('error', () => undefined); // a probe with close: 'reset' resets the connection
    socket.on('end', () => socket.end());
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return { server, port: (server.address() as net.AddressInfo).port };
}

/**
 * Resolves with the peer port of the server's next accepted connection once that connection
 * has closed on the server side too (so the kernel table is final for both ends).
 */
async function nextConnectionClosed(server: net.Server): Promise<number | undefined> {
  const [socket] = (await once(server, 'connection')) as [net.Socket];
  const peerPort = socket.remotePort;
  // Not events.once: it rejects on the 'error' (ECONNRESET) that a probe's reset causes.
  if (!socket.destroyed) await new Promise((resolve) => socket.once('close', resolve));
  return peerPort;
}

async function stop(server: net.Server): Promise<void> {
  server.close();
  await once(server, 'close');
}

describe('probeTcp', () => {
  it('T45: a listening server → success, empty output, no error', async () => {
    const s = await startServer();
    try {
      const accepted = nextConnectionClosed(s.server);
      const outcome = await probeTcp('127.0.0.1', s.port, 1000);
      expect(outcome).toEqual({ result: 'success', output: '' });
      await accepted;
    } finally {
      await stop(s.server);
    }
  });

  it('T45: port -1 → failure with Go text, no error', async () => {
    expect(await probeTcp('127.0.0.1', -1, 1000)).toEqual({
      result: 'failure',
      output: 'dial tcp: address -1: invalid port',
    });
    expect(await probeTcp('127.0.0.1', 65536, 1000)).toEqual({
      result: 'failure',
      output: 'dial tcp: address 65536: invalid port',
    });
  });

  it('connection refused → failure naming the address, like Go', async () => {
    // Find a port that was just free: listen on 0, then close.
    const s = await startServer();
    await stop(s.server);
    const outcome = await probeTcp('127.0.0.1', s.port, 1000);
    expect(outcome).toEqual({
      result: 'failure',
      output: `dial tcp 127.0.0.1:${s.port}: connect: connection refused`,
    });
    expect(outcome.error).toBeUndefined();
  });

  it('host "" dials the local host and prints ":port"', async () => {
    const s = await startServer();
    try {
      expect(await probeTcp('', s.port, 1000)).toEqual({ result: 'success', output: '' });
    } finally {
      await stop(s.server);
    }
    expect(await probeTcp('', s.port, 1000)).toEqual({
      result: 'failure',
      output: `dial tcp :${s.port}: connect: connection refused`,
    });
  });

  it('a host name is reported by its resolved address', async () => {
    const s = await startServer();
    await stop(s.server);
    const outcome = await probeTcp('localhost', s.port, 1000);
    expect(outcome.result).toBe('failure');
    expect(outcome.output).toMatch(new RegExp(`^dial tcp (127\\.0\\.0\\.1|\\[::1\\]):${s.port}: connect: connection refused$`));
  });

  it('closes with a FIN by default, as the kubelet: the server reads an end, the probing side keeps the TIME_WAIT', async () => {
    const s = await startServer();
    try {
      const seen = new Promise<string>((resolve) => {
        s.server.once('connection', (socket: net.Socket) => {
          socket.once('end', () => resolve('end'));
          socket.once('error', (err: NodeJS.ErrnoException) => resolve(err.code ?? 'error'));
        });
      });
      const probeAccepted = nextConnectionClosed(s.server);
      expect(await probeTcp('127.0.0.1', s.port, 1000)).toEqual({ result: 'success', output: '' });
      expect(await seen).toBe('end');
      const probePort = await probeAccepted;
      expect(await timeWaitSockets({ localPort: probePort, remotePort: s.port })).toHaveLength(1);
    } finally {
      await stop(s.server);
    }
  });

  it("with close: 'reset', leaves no TIME_WAIT socket on the probing side, where a FIN close does", async () => {
    const s = await startServer();
    try {
      // Control: an ordinary client that closes first with a FIN ends in TIME_WAIT.
      const plainAccepted = nextConnectionClosed(s.server);
      const plain = net.connect({ host: '127.0.0.1', port: s.port });
      await once(plain, 'connect');
      const plainPort = plain.localPort;
      plain.end();
      await once(plain, 'close');
      await plainAccepted;
      expect(await timeWaitSockets({ localPort: plainPort, remotePort: s.port })).toHaveLength(1);

      const probeAccepted = nextConnectionClosed(s.server);
      expect(await probeTcp('127.0.0.1', s.port, 1000, undefined, { close: 'reset' })).toEqual({ result: 'success', output: '' });
      const probePort = await probeAccepted;
      expect(probePort).toBeGreaterThan(0);
      // Not "the only TIME_WAIT towards the server port": an earlier test's server may have had that port.
      expect(await timeWaitSockets({ localPort: probePort, remotePort: s.port })).toEqual([]);
    } finally {
      await stop(s.server);
    }
  });

  it('parses the kernel table format', () => {
    const text = [
      '  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode',
      '   0: 0100007F:1F90 0100007F:C350 06 00000000:00000000 03:00000F9E 00000000     0        0 0 3 0000000000000000',
      '   1: 00000000:0050 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 1 1 0000000000000000 100 0 0 10 0',
      '',
    ].join('\n');
    expect(parseTcpTable(text)).toEqual([
      { localPort: 8080, remotePort: 50000, state: '06' },
      { localPort: 80, remotePort: 0, state: '0A' },
    ]);
  });

  it('a dial that hangs (full accept queue) fails at the timeout', async () => {
    const listener = await startStalledListener();
    try {
      const started = performance.now();
      const outcome = await probeTcp('127.0.0.1', listener.port, 1000);
      const elapsed = performance.now() - started;
      expect(outcome).toEqual({ result: 'failure', output: `dial tcp 127.0.0.1:${listener.port}: i/o timeout` });
      expect(elapsed).toBeGreaterThanOrEqual(950);
      expect(elapsed).toBeLessThan(3000);
    } finally {
      await listener.close();
    }
  });
});

describe('probeTcp on a busy engine', () => {
  it('a connection established in time counts even when the event loop was held up past the timeout', async () => {
    const { server, port } = await startServer();
    try {
      const probe = probeTcp('127.0.0.1', port, 100);
      await new Promise<void>((resolve) => process.nextTick(resolve)); // the connect is under way
      // The kernel completes the handshake while this process is busy (a GC, a starved CPU)...
      const until = performance.now() + 400;
      while (performance.now() < until) {
        // busy
      }
      // ...so when the loop runs again the timer is due and the connection is there: success.
      expect(await probe).toEqual({ result: 'success', output: '' });
    } finally {
      server.close();
    }
  });
});
