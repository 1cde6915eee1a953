/**
 * Go-worded network errors. Probe output is what users grep for in events
 * (`dial tcp 10.0.0.5:81: connect: connection refused`), so Node's errno codes are
 * rendered the way the kubelet's Go dialer would print them.
 */

/** `host:port`, with IPv6 literals bracketed like Go's net.JoinHostPort. */
export function joinHostPort(host: string, port: number | string): string {
  return host.includes(':') ? `[${host}]:${port}` : `${host}:${port}`;
}

import { openFilesLimit } from '../util/fd-limit.js';

const SYSCALL_TEXT: Record<string, string> = {
  ECONNREFUSED: 'connect: connection refused',
  ECONNRESET: 'connect: connection reset by peer',
  EHOSTUNREACH: 'connect: no route to host',
  ENETUNREACH: 'connect: network is unreachable',
  EADDRNOTAVAIL: 'connect: cannot assign requested address',
  EACCES: 'connect: permission denied',
  EPERM: 'connect: operation not permitted',
  ETIMEDOUT: 'i/o timeout',
};

/** The text Go's `net.Dial("tcp", address)` error would have for a Node socket error. */
export function describeDialError(err: unknown, host: string, port: number | string): string {
  const address = joinHostPort(host, port);
  const code = (err as NodeJS.ErrnoException | undefined)?.code;
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN' || code === 'EAI_NONAME') {
    return `dial tcp: lookup ${host}: no such host`;
  }
  // From probe/resolve.ts: no DNS server answered, or one failed.
  if (code === 'ETIMEOUT') return lookupTimeoutText(host);
  if (code === 'ESERVFAIL') return `dial tcp: lookup ${host}: server misbehaving`;
  const text = code ? SYSCALL_TEXT[code] : undefined;
  if (text) return `dial tcp ${address}: ${text}`;
  const message = err instanceof Error ? err.message : String(err);
  return `dial tcp ${address}: ${message}`;
}

/** Go's text for a dial whose name was still being resolved at its deadline (`lookupIPAddr`: `newDNSError(mapErr(ctx.Err()), host, "")`). */
export function lookupTimeoutText(host: string): string {
  return `dial tcp: lookup ${host}: i/o timeout`;
}

/** Go's text for a dial that did not finish before its deadline. */
export function dialTimeoutText(host: string, port: number | string): string {
  return `dial tcp ${joinHostPort(host, port)}: i/o timeout`;
}

export { goQuote } from '../util/go-quote.js';

/** Read once, at start-up: when the descriptors are gone, /proc/self/limits cannot be opened either. */
const OPEN_FILES_LIMIT = openFilesLimit();

/**
 * The probe could not be attempted because probelet itself is out of file descriptors
 * (`EMFILE`: its own limit, `ulimit -n`; `ENFILE`: the whole system's). That says nothing
 * about the container, so it is a probe *error* (retried, and its result thrown away, as the
 * kubelet does with a prober error), never a failure that kills a healthy container. Node's
 * own message for it is `connect EMFILE 10.0.0.5:80 - Local (undefined:undefined)`.
 * Returns the error to report, or undefined when `err` is something else.
 */
export function fdExhaustion(err: unknown, what: string): Error | undefined {
  const first = err instanceof AggregateError && err.errors[0] instanceof Error ? err.errors[0] : err;
  const code = (first as NodeJS.ErrnoException | undefined)?.code;
  if (code !== 'EMFILE' && code !== 'ENFILE') return undefined;
  const limit = OPEN_FILES_LIMIT;
  const why =
    code === 'EMFILE'
      ? `probelet has no file descriptor left (EMFILE: too many open files; its limit, ulimit -n, is ${limit ? String(limit.soft) : 'unknown'})`
      : 'the system has no file descriptor left (ENFILE: file table overflow)';
  return Object.assign(new Error(`${what}: ${why}: the probe could not be attempted and counts neither as success nor failure; raise the limit or run fewer pods`), { code });
}

const READ_SYSCALL_TEXT: Record<string, string> = {
  ECONNRESET: 'read: connection reset by peer',
  ETIMEDOUT: 'read: connection timed out',
  EPIPE: 'write: broken pipe',
};

/** One end of an established TCP connection, as Node reports it. */
export interface SocketEnd {
  address?: string | undefined;
  port?: number | undefined;
}

/**
 * The text of Go's `net.OpError` for a failure on an established connection, e.g.
 * `read tcp 127.0.0.1:54321->127.0.0.1:8080: read: connection reset by peer`.
 * Returns undefined for errors Go would not word as a socket error.
 */
export function describeConnError(err: unknown, local: SocketEnd, remote: SocketEnd): string | undefined {
  const code = (err as NodeJS.ErrnoException | undefined)?.code;
  const text = code ? READ_SYSCALL_TEXT[code] : undefined;
  if (!text) return undefined;
  const op = code === 'EPIPE' ? 'write' : 'read';
  const from = joinHostPort(local.address ?? '', local.port ?? 0);
  const to = joinHostPort(remote.address ?? '', remote.port ?? 0);
  return `${op} tcp ${from}->${to}: ${text}`;
}
