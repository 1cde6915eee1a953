/**
 * Servers that speak first — a greeting on accept (SMTP, FTP, Redis-style banners), a banner
 * before the TLS handshake, an HTTP answer sent before the request has been read — seen from
 * the server: does a probe end its connection with a FIN (the server reads an end of stream)
 * or with a reset (`ECONNRESET`, which kills a Node server with no `error` handler)?
 *
 * Linux answers the close of a socket holding unread bytes with a reset. The kubelet's TCP
 * probe dials and closes within microseconds, so a greeting seldom arrives before the close;
 * probelet closes in the same tick as the connect (src/probe/tcp.ts `establishedNow`), not a
 * loop turn later. These tests keep the prober's event loop busy right after each probe starts,
 * as a kubelet with many pods is: a close that waits for the loop then always meets the greeting.
 * The servers run in their own process (their accept must not wait for our loop) and count how
 * each connection ended instead of dying of it. docs/probe-close.md has the measurements.
 */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { once } from 'node:events';
import { afterEach, describe, expect, it } from 'vitest';
import { probeHttp } from '../../src/probe/http.js';
import { probeTcp } from '../../src/probe/tcp.js';
import type { ProbeOutcome } from '../../src/probe/types.js';

/**
 * `greet`: writes a line on accept. `soon`: 20 ms after accept, if the peer is still there
 * (a server with some set-up per connection). `banner`: the same, on a port probed over HTTPS (the
 * banner is not TLS). `early`: writes a whole HTTP answer on accept, before reading.
 * Prints `end` or `reset` (or another error code) per connection.
 */
const SPEAKER = `
const net = require('node:net');
const mode = process.argv[1];
const server = net.createServer((socket) => {
  const greet = () => socket.write('220 probelet-test ready\\r\\n');
  if (mode === 'early') socket.write('HTTP/1.1 200 OK\\r\\nContent-Length: 2\\r\\nConnection: close\\r\\n\\r\\nok');
  else if (mode === 'soon') setTimeout(() => { if (!socket.destroyed) greet(); }, 20);
  else greet();
  let how = 'end';
  socket.on('error', (err) => { how = err.code === 'ECONNRESET' ? 'reset' : err.code; });
  socket.on('close', () => process.stdout.write(how + '\\n'));
  socket.resume();
});
server.listen(0, '127.0.0.1', () => process.stdout.write('port ' + server.address().port + '\\n'));
`;

type Mode = 'greet' | 'soon' | 'banner' | 'early';

interface Speaker {
  port: number;
  /** How the first `n` connections ended, once they have. */
  endings(n: number): Promise<string[]>;
}

const children: ChildProcessWithoutNullStreams[] = [];
afterEach(async () => {
  for (const child of children.splice(0)) {
    child.kill('SIGKILL');
    if (child.exitCode === null && child.signalCode === null) await once(child, 'exit');
  }
});

async function startSpeaker(mode: Mode): Promise<Speaker> {
  const child = spawn(process.execPath, ['-e', SPEAKER, mode]);
  children.push(child);
  let out = '';
  let wake: (() => void) | undefined;
  child.stdout.setEncoding('utf8').on('data', (s: string) => {
    out += s;
    wake?.();
  });
  const lines = (): string[] => out.split('\n').filter((l) => l !== '');
  while (!lines().some((l) => l.startsWith('port '))) await new Promise<void>((resolve) => (wake = resolve));
  const port = Number(lines()[0]?.slice('port '.length));
  return {
    port,
    async endings(n) {
      while (lines().length - 1 < n) await new Promise<void>((resolve) => (wake = resolve));
      return lines().slice(1, n + 1);
    },
  };
}

/** Blocks this thread, as a loop full of other pods' work would, right after the probe starts. */
function busyAfter(start: () => Promise<ProbeOutcome>, ms: number): Promise<ProbeOutcome> {
  const outcome = start();
  process.nextTick(() => {
    const until = performance.now() + ms;
    while (performance.now() < until) {
      // busy on purpose
    }
  });
  return outcome;
}

const PROBES = 10;
const BUSY_MS = 60;

describe('probing servers that speak first', () => {
  it('TCP: a server greeting soon after accept sees an end of stream — the probe closed in the tick its connect completed', async () => {
    const server = await startSpeaker('soon');
    for (let i = 0; i < PROBES; i++) {
      expect(await busyAfter(() => probeTcp('127.0.0.1', server.port, 1000), BUSY_MS)).toEqual({ result: 'success', output: '' });
    }
    // Closed a loop turn late (after the busy spell), every greeting would be there unread: ten resets.
    expect(await server.endings(PROBES)).toEqual(Array<string>(PROBES).fill('end'));
  });

  it("TCP with probeClose 'reset': the same server is reset every time (the opt-in's price)", async () => {
    const server = await startSpeaker('soon');
    for (let i = 0; i < 3; i++) await probeTcp('127.0.0.1', server.port, 1000, undefined, { close: 'reset' });
    expect(await server.endings(3)).toEqual(['reset', 'reset', 'reset']);
  });

  it('HTTP: an answer sent before the request is read is taken, then closed with a FIN', async () => {
    const server = await startSpeaker('early');
    const outcome = await busyAfter(() => probeHttp({ url: `http://127.0.0.1:${server.port}/`, headers: [] }, 1000), BUSY_MS);
    expect(outcome).toMatchObject({ result: 'success', output: 'ok' });
    expect(await server.endings(1)).toEqual(['end']);
  });

  it('HTTPS: a plain-text banner before the TLS handshake fails the probe, closed with a FIN', async () => {
    const server = await startSpeaker('banner');
    const outcome = await busyAfter(() => probeHttp({ url: `https://127.0.0.1:${server.port}/`, headers: [] }, 1000), BUSY_MS);
    expect(outcome.result).toBe('failure');
    expect(await server.endings(1)).toEqual(['end']);
  });
});
