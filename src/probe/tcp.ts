/**
 * The kubelet's TCP socket probe (`pkg/probe/tcp`): can a connection be opened within the
 * timeout? Nothing is sent or read. Every dial problem is a probe *failure* whose output is
 * the Go dialer's error text, never an error, because that is what users see in events.
 */
import net from 'node:net';
import { afterPendingIO, realClock } from '../util/clock.js';
import { describeDialError, dialTimeoutText, fdExhaustion, joinHostPort, lookupTimeoutText } from './net-errors.js';
import { probeLookup } from './resolve.js';
import type { HandlerObservation, NetProbeOptions, ProbeOutcome } from './types.js';

/** Go's `net.Dial` accepts 0..65535; anything else fails before any packet is sent. */
function isDialablePort(port: number): boolean {
  return Number.isInteger(port) && port >= 0 && port <= 65535;
}

function failure(output: string): ProbeOutcome {
  return { result: 'failure', output };
}

/**
 * How long the same tick waits for a loopback handshake the kernel has not finished when
 * connect() returns (it finishes in microseconds, later under load). Bounded, so a busy
 * machine costs at most this much of the loop per probe; a remote peer is never waited for
 * (its greeting needs a round trip too, and the loop's `'connect'` comes first).
 */
const LOOPBACK_HANDSHAKE_MS = 0.5;

/** Loopback addresses: 127.0.0.0/8, ::1 and the local host ('' is dialled as localhost). */
function isLoopback(address: string): boolean {
  return address === '' || address === 'localhost' || address === '::1' || address.startsWith('127.') || address.startsWith('::ffff:127.');
}

/** The one method of Node's TCP handle (`socket._handle`, not public) read here. */
interface PeerNameHandle {
  getpeername?: (out: object) => number;
}

/**
 * Whether the connection is already established, asked of the kernel now (getpeername
 * succeeds only once the handshake is done), not when Node's event loop next polls.
 *
 * Why: a server that speaks first (a greeting, a banner) writes as soon as it accepts; if
 * its bytes reach this socket before the close, Linux answers the close with a reset, and a
 * server with no `error` handler dies of it. The kubelet's Go dialer closes microseconds
 * after the connect; Node's `'connect'` event comes a whole loop turn later — 15–50 ms in
 * `probelet probe` while the rest of the process runs (docs/probe-close.md). On loopback the
 * handshake completes inside the connect() system call itself, so asking right after it
 * (Node makes that call in a `process.nextTick`) closes before the server has even accepted.
 * Without the handle (another Node), `false`: the `'connect'` event still closes.
 */
function establishedNow(socket: net.Socket, waitMs: number): boolean {
  const handle = (socket as unknown as { _handle?: PeerNameHandle | null })._handle;
  if (typeof handle?.getpeername !== 'function') return false;
  const until = performance.now() + waitMs;
  for (;;) {
    if (handle.getpeername({}) === 0) return true;
    if (performance.now() >= until) return false;
  }
}

/**
 * Opens a TCP connection to `host:port` and closes it at once (upstream `DoTCPProbe`: dial
 * with the timeout, then `Close`).
 *
 * `host` '' means the local host (Go dials the local system for `":port"` and prints the
 * address as `:port`). The connection ends with a FIN, as the kubelet's, unless
 * `options.close` is `'reset'` (see `ProbeClose` in types.ts); with a FIN it is closed in
 * the same tick as the connect completes, where the kernel says so (`establishedNow`).
 */
export function probeTcp(
  host: string,
  port: number,
  timeoutMs: number,
  seen?: HandlerObservation,
  options?: NetProbeOptions,
): Promise<ProbeOutcome> {
  const reset = options?.close === 'reset';
  if (!isDialablePort(port)) {
    return Promise.resolve(failure(`dial tcp: address ${port}: invalid port`));
  }
  return new Promise((resolve) => {
    const isLiteral = host === '' || net.isIP(host) !== 0;
    // Go names the resolved IP in dial errors, not the name that was dialled.
    let resolvedHost: string | undefined = isLiteral ? host : undefined;
    let settled = false;
    const startedAt = seen ? realClock.now() : 0;

    const resolving = probeLookup();
    const socket = net.connect({ host: host === '' ? 'localhost' : host, port, lookup: resolving.lookup });

    const finish = (outcome: ProbeOutcome): void => {
      if (settled) return;
      settled = true;
      resolving.cancel();
      realClock.clearTimeout(timer);
      resolve(outcome);
    };

    // A connection already established when the timer fires (the loop was busy) still counts.
    const timer = realClock.setTimeout(() => afterPendingIO(onTimeout), timeoutMs);
    function onTimeout(): void {
      if (settled) return;
      socket.destroy();
      finish(
        failure(resolvedHost === undefined ? lookupTimeoutText(host) : dialTimeoutText(resolvedHost, port)),
      );
    }

    const connected = (): void => {
      if (settled) return;
      if (reset) socket.resetAndDestroy();
      else socket.destroy();
      if (seen) seen.connectMs = realClock.now() - startedAt;
      finish({ result: 'success', output: '' });
    };
    // Node calls connect() in a nextTick after net.connect (after the lookup for a name): a
    // nextTick queued now or in 'lookup' runs right after that call, before anything else.
    // A reset waits for 'connect' (Node resets only a connected socket), so only 'fin' looks.
    const closeIfEstablished = (): void => {
      if (reset || settled) return;
      const waitMs = isLoopback(resolvedHost ?? host) ? LOOPBACK_HANDSHAKE_MS : 0;
      if (establishedNow(socket, waitMs)) connected();
    };
    if (isLiteral) process.nextTick(closeIfEstablished);

    socket.on('lookup', (err: Error | null, address: string | undefined) => {
      if (!isLiteral && !err && address) resolvedHost = address;
      process.nextTick(closeIfEstablished);
    });
    socket.on('connect', connected);
    // Stays attached after settling: a late error on a socket nobody listens to would crash.
    socket.on('error', (err: Error) => {
      socket.destroy();
      if (seen) seen.errorCode = (err as NodeJS.ErrnoException).code;
      const exhausted = fdExhaustion(err, `dial tcp ${joinHostPort(resolvedHost ?? host, port)}`);
      finish(exhausted ? { result: 'unknown', output: '', error: exhausted } : failure(describeDialError(err, resolvedHost ?? host, port)));
    });
  });
}
