/**
 * Errors on an established connection name both of its ends exactly, like Go's
 * `net.OpError` (`read tcp <local>-><remote>: …`), whether the ends were read at connect
 * (TLS) or only when the error ended the socket (plain HTTP to an IPv4 address).
 */
import { readFileSync } from 'node:fs';
import net from 'node:net';
import tls from 'node:tls';
import { describe, expect, it, onTestFinished } from 'vitest';
import { newHttpProbeRequestForURL } from '../../src/probe/http-request.js';
import { probeHttp } from '../../src/probe/http.js';

const fixture = (name: string): Buffer => readFileSync(new URL(`../fixtures/tls/${name}`, import.meta.url));

/** A server that resets the connection after the request (`before`) or mid-body (`mid`). */
async function resetting(
  when: 'before' | 'mid',
  secure: boolean,
): Promise<{ port: number; clientPorts: number[] }> {
  const clientPorts: number[] = [];
  const sockets = new Set<net.Socket>();
  const server = net.createServer((raw) => {
    sockets.add(raw);
    raw.on('error', () => undefined);
    clientPorts.push(raw.remotePort ?? -1);
    const s = secure ? new tls.TLSSocket(raw, { isServer: true, key: fixture('key.pem'), cert: fixture('cert.pem') }) : raw;
    s.on('error', () => undefined);
    s.once('data', () => {
      if (when === 'before') {
        raw.resetAndDestroy();
        return;
      }
      s.write(`HTTP/1.1 200 OK\r\nContent-Length: 100000\r\n\r\n${'a'.repeat(1000)}`);
      const timer = setTimeout(() => raw.resetAndDestroy(), 50);
      raw.on('close', () => clearTimeout(timer));
    });
  });
  onTestFinished(async () => {
    for (const s of sockets) s.destroy();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('no port');
  return { port: address.port, clientPorts };
}

describe('probeHttp — errors on an established connection name both ends', () => {
  for (const secure of [false, true]) {
    const scheme = secure ? 'https' : 'http';
    it(`${scheme}: reset before the response`, async () => {
      const { port, clientPorts } = await resetting('before', secure);
      const outcome = await probeHttp(newHttpProbeRequestForURL(`${scheme}://127.0.0.1:${port}/x`), 2000);
      expect(outcome).toEqual({
        result: 'failure',
        output: `Get "${scheme}://127.0.0.1:${port}/x": read tcp 127.0.0.1:${clientPorts[0]}->127.0.0.1:${port}: read: connection reset by peer`,
      });
    });

    it(`${scheme}: reset mid-body`, async () => {
      const { port, clientPorts } = await resetting('mid', secure);
      const outcome = await probeHttp(newHttpProbeRequestForURL(`${scheme}://127.0.0.1:${port}/x`), 2000);
      expect(outcome).toEqual({
        result: 'failure',
        output: '',
        error: new Error(`read tcp 127.0.0.1:${clientPorts[0]}->127.0.0.1:${port}: read: connection reset by peer`),
      });
    });
  }

  it('http to an IPv6 literal reads the ends at connect', async () => {
    const server = net.createServer((s) => {
      s.on('error', () => undefined);
      s.once('data', () => s.resetAndDestroy());
    });
    onTestFinished(() => new Promise<void>((resolve) => server.close(() => resolve())));
    const listening = await new Promise<boolean>((resolve) => {
      server.once('error', () => resolve(false));
      server.listen(0, '::1', () => resolve(true));
    });
    if (!listening) return; // no IPv6 loopback here
    const address = server.address();
    if (address === null || typeof address === 'string') throw new Error('no port');
    const outcome = await probeHttp(newHttpProbeRequestForURL(`http://[0:0::1]:${address.port}/x`), 2000);
    expect(outcome.output).toMatch(
      new RegExp(`^Get "http://\\[0:0::1\\]:${address.port}/x": read tcp \\[::1\\]:\\d+->\\[::1\\]:${address.port}: read: connection reset by peer$`),
    );
  });
});
