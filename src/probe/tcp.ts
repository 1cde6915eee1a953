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
 * Opens a TCP connection to `host:port` and closes it at once (upstream `DoTCPProbe`: dial
 * with the timeout, then `Close`).
 *
 * `host` '' means the local host (Go dials the local system for `":port"` and prints the
 * address as `:port`). The connection ends with a FIN, as the kubelet's, unless
 * `options.close` is `'reset'` (see `ProbeClose` in types.ts).
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

    socket.on('lookup', (err: Error | null, address: string | undefined) => {
      if (!isLiteral && !err && address) resolvedHost = address;
    });
    socket.on('connect', () => {
      if (reset) socket.resetAndDestroy();
      else socket.destroy();
      if (seen) seen.connectMs = realClock.now() - startedAt;
      finish({ result: 'success', output: '' });
    });
    // Stays attached after settling: a late error on a socket nobody listens to would crash.
    socket.on('error', (err: Error) => {
      socket.destroy();
      if (seen) seen.errorCode = (err as NodeJS.ErrnoException).code;
      const exhausted = fdExhaustion(err, `dial tcp ${joinHostPort(resolvedHost ?? host, port)}`);
      finish(exhausted ? { result: 'unknown', output: '', error: exhausted } : failure(describeDialError(err, resolvedHost ?? host, port)));
    });
  });
}
