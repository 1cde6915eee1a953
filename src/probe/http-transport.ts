/**
 * One HTTP/1.1 exchange of a probe over a fresh connection, behaving like the kubelet's
 * Go transport: no proxy, no keep-alive (`Connection: close`), no compression, TLS
 * without verification, Go's header order and Go-worded errors. node:http does the
 * protocol; the connection is created here so that its close is ours (a FIN, as the
 * kubelet's `DisableKeepAlives` transport closes each connection after its response, or a
 * reset when asked: see ProbeClose) and so that the dial phase is known when the deadline
 * strikes.
 */
import http, { type IncomingMessage } from 'node:http';
import net from 'node:net';
import tls from 'node:tls';
import { MAX_PROBE_OUTPUT_BYTES } from './constants.js';
import { fromByteString, goRequestURI, goURLHostname, goURLPort, hasControlByte, HTTP_TOKEN, toByteString, type GoURL } from './http-url.js';
import { describeConnError, describeDialError, dialTimeoutText, fdExhaustion, goQuote, joinHostPort, lookupTimeoutText, type SocketEnd } from './net-errors.js';
import { probeLookup, type ProbeLookup } from './resolve.js';
import { FirstRecordTap, goFirstRecordError } from './tls-first-record.js';
import type { ProbeClose } from './types.js';

/** One request of a redirect chain (Go's `http.Request` as far as probes use it). */
export interface Hop {
  url: GoURL;
  /** The Host to send; '' means the URL's host (Go's `Request.Host`). */
  host: string;
  /** Canonical names, values in order (Go's `http.Header`). */
  headers: Array<[string, string]>;
  /** Go's default transport (see HttpProbeRequest.keepAlive) instead of the probe's. */
  keepAlive?: boolean;
}

/** The single timeout of a probe: connect, TLS, redirects, headers and body. */
export interface Deadline {
  readonly expired: boolean;
  /** Calls `fn` when the deadline passes (at once if it has); returns an unsubscribe. */
  onExpire(fn: () => void): () => void;
}

export type Sent =
  | { ok: true; response: IncomingMessage; connection: Connection }
  /** `errored`: the request could not be attempted at all (no file descriptor left): a probe error, not a failure. */
  | { ok: false; message: string; errored?: Error };

export type Body = { ok: true; bytes: Buffer } | { ok: false; error: Error };

/** Go's default `Transport.MaxResponseHeaderBytes`. */
const MAX_RESPONSE_HEADER_BYTES = 10 << 20;

/** Header lines Go writes itself rather than from `Request.Header`. */
const NOT_FROM_HEADER = new Set(['Host', 'User-Agent', 'Content-Length', 'Transfer-Encoding', 'Trailer']);

/** A probe's own TCP connection (and TLS session over it). */
export interface Connection {
  readonly socket: net.Socket;
  readonly connected: boolean;
  /** Whether the host name was resolved (always, for an IP literal): a deadline before it is the lookup's. */
  readonly resolved: boolean;
  /** The last socket error seen, for wording a failed read. */
  readonly lastError: Error | undefined;
  readonly local: SocketEnd;
  readonly remote: SocketEnd;
  /** For HTTPS, Go's error for the server's first bytes when they are no TLS record; else undefined. */
  readonly firstRecordError: string | undefined;
  /**
   * Closes the connection: with a FIN by default; with `'reset'`, without leaving TIME_WAIT
   * behind (a connection the server already closed is simply destroyed, as we close second;
   * any other is reset).
   */
  close(): void;
}

/**
 * The probe's TCP socket. Its two ends (addresses and ports) only serve to word an error
 * on the established connection like Go's `net.OpError`, and reading them costs two system
 * calls per probe. So where it is safe they are read only when needed:
 *
 * - the local end when the socket is destroyed with an error — the way every read or
 *   write error ends it — before `_destroy` closes the handle (after which it is lost);
 * - the remote end of a connection dialled to an IPv4 literal is that address and port
 *   (`net.isIPv4` accepts only the dotted-decimal form the kernel reports back); after a
 *   reset it could not be read any more.
 *
 * Otherwise (TLS, whose errors end the TLS socket rather than this one; IPv6 literals and
 * host names, whose connected address is only known from the kernel) both are read as soon
 * as the connection is established, as before.
 */
class ProbeSocket extends net.Socket {
  // Names of our own, so as not to meet any node:net, node:tls or node:http property.
  probeConnected = false;
  probeResolved = false;
  readonly probeLocal: SocketEnd = {};
  readonly probeRemote: SocketEnd = {};
  private probeLocalRead = false;
  private probeRemoteRead = false;

  /** Records the ends not known yet, once, while the connection is established. */
  readProbeEnds(): void {
    if (!this.probeConnected) return;
    if (!this.probeLocalRead) {
      this.probeLocalRead = true;
      Object.assign(this.probeLocal, { address: this.localAddress, port: this.localPort });
    }
    if (!this.probeRemoteRead) {
      this.probeRemoteRead = true;
      Object.assign(this.probeRemote, { address: this.remoteAddress, port: this.remotePort });
    }
  }

  /** The remote end is the IPv4 address and port dialled (call on connect). */
  knowRemote(address: string, port: number): void {
    this.probeRemoteRead = true;
    Object.assign(this.probeRemote, { address, port });
  }

  override _destroy(error: Error | null, callback: (error?: Error | null) => void): void {
    if (error) this.readProbeEnds();
    super._destroy(error, callback);
  }
}

/**
 * A probe's connection: a class, not an object literal with getters. V8 allocates such
 * literals straight in the old generation, and an old object pointing at the probe's socket
 * kept the whole exchange (socket, request, response, parser) alive through every scavenge
 * until the next full GC: ≈ 700 KB promoted per scavenge at 1,000 probes/s, against ≈ 2 KB
 * with this class (measured with `--trace-gc-nvp`).
 */
class ProbeConnection implements Connection {
  lastError: Error | undefined = undefined;
  private closed = false;

  constructor(
    readonly socket: net.Socket,
    private readonly raw: ProbeSocket,
    private readonly reset: boolean,
    /** For HTTPS: the stream TLS runs over, which keeps the server's first bytes. */
    private readonly tap?: FirstRecordTap,
  ) {}

  /** Go's error for the server's first bytes when they are no TLS record (see tls-first-record.ts). */
  get firstRecordError(): string | undefined {
    return this.tap ? goFirstRecordError(this.tap.header) : undefined;
  }

  get connected(): boolean {
    return this.raw.probeConnected;
  }

  get resolved(): boolean {
    return this.raw.probeResolved;
  }

  get local(): SocketEnd {
    return this.raw.probeLocal;
  }

  get remote(): SocketEnd {
    return this.raw.probeRemote;
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    const { raw, socket } = this;
    const peerClosed = socket.readableEnded || raw.readableEnded;
    if (this.reset && !raw.destroyed && !raw.connecting && !peerClosed) {
      try {
        raw.resetAndDestroy();
      } catch {
        raw.destroy();
      }
    }
    raw.destroy();
    socket.destroy();
  }
}

function openConnection(secure: boolean, hostname: string, port: number, close: ProbeClose, lookup: ProbeLookup['lookup']): Connection {
  const raw = new ProbeSocket();
  // A literal is never looked up (node:net emits no `lookup` for it).
  raw.probeResolved = net.isIP(hostname) !== 0;
  raw.once('lookup', () => (raw.probeResolved = true));
  raw.connect({ host: hostname, port, lookup });
  // TLS over a pass-through stream rather than the socket's handle, so that the server's
  // first bytes can be read when they are no TLS (tls-first-record.ts).
  const tap = secure ? new FirstRecordTap(raw) : undefined;
  const socket = tap
    ? tls.connect({ socket: tap, servername: sniName(hostname), rejectUnauthorized: false })
    : raw;
  const lazyEnds = !secure && net.isIPv4(hostname);
  const conn = new ProbeConnection(socket, raw, close === 'reset', tap);
  const recordError = (err: Error): void => {
    conn.lastError = err;
  };
  raw.on('error', recordError);
  if (socket !== raw) socket.on('error', recordError);
  raw.once('connect', () => {
    raw.probeConnected = true;
    if (lazyEnds) raw.knowRemote(hostname, port);
    else raw.readProbeEnds();
  });
  return conn;
}

/** Go sends the URL's hostname as SNI, without a trailing dot and never for an IP literal. */
function sniName(hostname: string): string {
  const name = hostname.replace(/\.$/, '');
  return net.isIP(name) ? '' : name;
}

/**
 * What {@link send} works out from a hop before dialling: Go's pre-dial checks, the
 * address, the request line and the header block. It depends on the hop alone, so a
 * caller probing the same request again and again (every worker, every period) can
 * compute it once with {@link prepareHop} and hand it to `send` — which is why it is a
 * separate, frozen value rather than work done inside `send`.
 */
export type PreparedHop =
  | { readonly ok: false; readonly problem: string }
  | {
      readonly ok: true;
      readonly secure: boolean;
      readonly hostname: string;
      readonly portText: string;
      readonly port: number;
      /** The request-target (`goRequestURI`). */
      readonly path: string;
      /** The header block as flat name/value pairs (node:http does not modify it). */
      readonly wire: readonly string[];
      /** No `Connection` header at all (Go's keep-alive transport); see {@link newRequest}. */
      readonly keepAlive: boolean;
    };

/** Everything `send` derives from `hop` before dialling (see {@link PreparedHop}). */
export function prepareHop(hop: Hop): PreparedHop {
  const problem = requestProblem(hop);
  if (problem) return Object.freeze({ ok: false, problem });
  const secure = hop.url.scheme === 'https';
  const portText = goURLPort(hop.url) || (secure ? '443' : '80');
  return Object.freeze({
    ok: true,
    secure,
    hostname: fromByteString(goURLHostname(hop.url)),
    portText,
    port: Number(portText),
    path: goRequestURI(hop.url),
    wire: Object.freeze(wireHeaders(hop)),
    keepAlive: hop.keepAlive === true,
  });
}

/**
 * Sends one GET and waits for the response headers. Never rejects. `prepared` must be
 * `prepareHop(hop)` (computed earlier for the same hop); by default it is computed here.
 * `close` is how the connection will be closed (see ProbeClose).
 */
export function send(hop: Hop, deadline: Deadline, prepared: PreparedHop = prepareHop(hop), close: ProbeClose = 'fin'): Promise<Sent> {
  if (!prepared.ok) return Promise.resolve({ ok: false, message: prepared.problem });
  const { secure, hostname, portText, port } = prepared;
  if (port > 65535) return Promise.resolve({ ok: false, message: `dial tcp: address ${portText}: invalid port` });
  if (deadline.expired) {
    return Promise.resolve({ ok: false, message: `${dialTimeoutText(hostname, port)} ${AWAITING_HEADERS}` });
  }
  return new Promise<Sent>((resolve) => {
    let conn: Connection;
    const resolving = probeLookup();
    try {
      conn = openConnection(secure, hostname, port, close, resolving.lookup);
    } catch (err) {
      resolve(notSent(err, describeDialError(err, hostname, port), hostname, port));
      return;
    }
    let settled = false;
    let unsubscribe = (): void => undefined;
    const finish = (result: Sent): void => {
      if (settled) return;
      settled = true;
      unsubscribe();
      resolving.cancel();
      if (!result.ok) conn.close();
      resolve(result);
    };
    const req = newRequest(prepared, conn);
    req.on('error', (err) => finish(notSent(err, describeSendError(err, conn, hostname, port), hostname, port)));
    // Go's client (1.24 on, so the kubelet's) skips any number of informational responses as long
    // as they and the final response's header fit in MaxResponseHeaderBytes together; node:http
    // limits each response alone.
    let informationalBytes = 0;
    const overflow = (): void =>
      finish({ ok: false, message: describeSendError(Object.assign(new Error('headers exceeded'), { code: HEADER_OVERFLOW_CODE }), conn, hostname, port) });
    req.on('information', (info) => {
      informationalBytes += headerBytes(info.statusMessage, info.rawHeaders);
      if (informationalBytes > MAX_RESPONSE_HEADER_BYTES) overflow();
    });
    const onResponse = (response: IncomingMessage): void => {
      response.on('error', () => undefined);
      if (informationalBytes > 0 && informationalBytes + headerBytes(response.statusMessage, response.rawHeaders) > MAX_RESPONSE_HEADER_BYTES) {
        response.destroy();
        overflow();
        return;
      }
      finish({ ok: true, response, connection: conn });
    };
    req.on('response', onResponse);
    // A 101 is a final response to Go's client (it fails the probe by its status).
    req.on('upgrade', onResponse);
    unsubscribe = deadline.onExpire(() => {
      const text = conn.connected ? 'context deadline exceeded' : conn.resolved ? dialTimeoutText(hostname, port) : lookupTimeoutText(hostname);
      finish({ ok: false, message: `${text} ${AWAITING_HEADERS}` });
    });
    req.end();
  });
}

const AWAITING_HEADERS = '(Client.Timeout exceeded while awaiting headers)';

/** What Go's transport refuses before dialling, in its words; undefined when the request is fine. */
function requestProblem(hop: Hop): string | undefined {
  for (const [name, value] of hop.headers) {
    if (!HTTP_TOKEN.test(name)) return `net/http: invalid header field name ${goQuote(name)}`;
    if (hasControlByte(value, true)) return `net/http: invalid header field value for ${goQuote(name)}`;
  }
  const scheme = hop.url.scheme;
  if (scheme !== 'http' && scheme !== 'https') return `unsupported protocol scheme ${goQuote(fromByteString(scheme))}`;
  if (hop.url.host === '') return 'http: no Host in request URL';
  if (!/^[!$%&'()*+,\-.0-9:;=A-Z[\]_a-z~\x80-\xff]*$/.test(hostBytes(hop))) return 'http: invalid Host header';
  return undefined;
}

/**
 * The GET on `conn`. Headers go out as the flat `wire` list, which node:http sends as they
 * are — except that, given no `Connection` header, it adds `Connection: close` of its own
 * (no keep-alive agent here). A keep-alive hop must send none, as Go's transport does: its
 * headers are set one by one (in the same order) and the `Connection` header removed,
 * which node:http honours only before the header block is built.
 */
function newRequest(prepared: PreparedHop & { ok: true }, conn: Connection): http.ClientRequest {
  const common = { method: 'GET', path: prepared.path, createConnection: () => conn.socket, maxHeaderSize: MAX_RESPONSE_HEADER_BYTES };
  if (!prepared.keepAlive) return http.request({ ...common, headers: prepared.wire as string[] });
  const req = http.request({ ...common, setHost: false });
  const byName = new Map<string, string[]>();
  for (let i = 0; i + 1 < prepared.wire.length; i += 2) {
    const name = prepared.wire[i] ?? '';
    const values = byName.get(name) ?? [];
    values.push(prepared.wire[i + 1] ?? '');
    byName.set(name, values);
  }
  for (const [name, values] of byName) req.setHeader(name, values.length === 1 ? (values[0] ?? '') : values);
  req.removeHeader('Connection');
  return req;
}

/**
 * The header block in Go's order: Host, User-Agent, the other headers sorted by name
 * (values in order), then `Connection: close` unless a given Connection says close — or,
 * for a keep-alive hop, `Accept-Encoding: gzip`.
 * Values are byte strings so non-ASCII text goes out as UTF-8, as Go sends it.
 */
function wireHeaders(hop: Hop): string[] {
  const wire: string[] = ['Host', removeZone(hostBytes(hop))];
  const userAgent = hop.headers.find(([name]) => name === 'User-Agent');
  if (userAgent && userAgent[1] !== '') wire.push('User-Agent', toByteString(cleanValue(userAgent[1])));
  const rest = hop.headers.filter(([name]) => !NOT_FROM_HEADER.has(name));
  const names = [...new Set(rest.map(([name]) => name))].sort();
  for (const name of names) {
    for (const [n, value] of rest) if (n === name) wire.push(name, toByteString(cleanValue(value)));
  }
  if (hop.keepAlive === true) {
    // Go's transport adds it after the request's own headers, unless they ask for an encoding or a range.
    if (!rest.some(([name]) => name === 'Accept-Encoding' || name === 'Range')) wire.push('Accept-Encoding', 'gzip');
    return wire;
  }
  const asksClose = rest.some(([name, value]) => name === 'Connection' && /(^|,)\s*close\s*(,|$)/i.test(value));
  if (!asksClose) wire.push('Connection', 'close');
  return wire;
}


/**
 * A header value on one line, without surrounding blanks. Trimmed by a scan: the pattern
 * `[ \t]+$` rescans a long run of blanks from each of its positions (quadratic).
 */
function cleanValue(value: string): string {
  const line = value.replace(/[\r\n]/g, ' ');
  let start = 0;
  let end = line.length;
  while (start < end && (line[start] === ' ' || line[start] === '\t')) start++;
  while (end > start && (line[end - 1] === ' ' || line[end - 1] === '\t')) end--;
  return line.slice(start, end);
}

/** The Host line's value as bytes: the request's Host, else the URL's host. */
function hostBytes(hop: Hop): string {
  return hop.host !== '' ? toByteString(hop.host) : hop.url.host;
}

/** Go's `removeZone`: no IPv6 zone in the Host header. */
function removeZone(host: string): string {
  if (!host.startsWith('[')) return host;
  const close = host.lastIndexOf(']');
  const zone = host.slice(0, Math.max(close, 0)).indexOf('%');
  return close < 0 || zone < 0 ? host : host.slice(0, zone) + host.slice(close);
}

function notSent(err: unknown, message: string, hostname: string, port: number): Sent {
  const errored = fdExhaustion(err, `dial tcp ${joinHostPort(hostname, port)}`);
  return errored ? { ok: false, message, errored } : { ok: false, message };
}

function describeSendError(err: Error, conn: Connection, hostname: string, port: number): string {
  // With several addresses to try (happy eyeballs) Node reports them all; Go names the first.
  const first = err instanceof AggregateError && err.errors[0] instanceof Error ? err.errors[0] : err;
  const errno = first as NodeJS.ErrnoException & { address?: string; port?: number };
  const code = errno.code ?? '';
  if (!conn.connected) {
    if (code === 'ECONNRESET' && err.message === 'socket hang up') return 'EOF';
    return describeDialError(first, errno.address ?? hostname, errno.port ?? port);
  }
  if (code === 'ECONNRESET' && err.message === 'socket hang up') return 'EOF';
  if (code === HEADER_OVERFLOW_CODE) {
    // Go's read loop fails the connection with it, after the request was written: wrapped.
    return `${CONNECTION_BROKEN}: net/http: server response headers exceeded ${MAX_RESPONSE_HEADER_BYTES} bytes; aborted`;
  }
  if (code.startsWith('HPE_')) {
    const problem = headProblem((err as Error & { rawPacket?: unknown }).rawPacket, conn.socket.bytesRead);
    if (problem !== undefined) return `${CONNECTION_BROKEN}: ${problem}`;
    if (code === 'HPE_INVALID_STATUS') return `${CONNECTION_BROKEN}: malformed HTTP status code`;
    return `${CONNECTION_BROKEN}: malformed HTTP response`;
  }
  const tlsText = conn.firstRecordError ?? describeTlsError(err.message);
  if (tlsText) return tlsText;
  return describeConnError(conn.lastError ?? err, conn.local, conn.remote) ?? err.message;
}

const CONNECTION_BROKEN = 'net/http: HTTP/1.x transport connection broken';

/** node:http's code for a header over `maxHeaderSize`, also used for 1xx responses that add up to more. */
const HEADER_OVERFLOW_CODE = 'HPE_HEADER_OVERFLOW';

/** The bytes of a response head on the wire, near enough: status line, header lines, blank line. */
function headerBytes(statusMessage: string | undefined, rawHeaders: readonly string[]): number {
  let n = 'HTTP/1.1 100 \r\n\r\n'.length + (statusMessage?.length ?? 0);
  for (let i = 0; i + 1 < rawHeaders.length; i += 2) n += (rawHeaders[i]?.length ?? 0) + (rawHeaders[i + 1]?.length ?? 0) + 4;
  return n;
}

/**
 * What Go would say about the response head node:http's parser choked on (`rawPacket`, the
 * packet it was reading; `bytesRead`, all the connection read so far): the first bad status
 * or header line in Go's words; undefined when there is nothing to go on.
 */
function headProblem(raw: unknown, bytesRead: number): string | undefined {
  if (!Buffer.isBuffer(raw) || raw.length === 0) return undefined;
  const lines = raw.toString('latin1').split('\n').map((l) => l.replace(/\r$/, ''));
  // The parser hands over the packet it choked on: the response's first when nothing came
  // before it (or it starts like a status line), else one that continues the header.
  let first = true;
  if (bytesRead <= raw.length || lines[0]?.startsWith('HTTP/')) {
    const problem = statusLineProblem(lines.shift() ?? '');
    if (problem !== undefined) return problem;
  } else {
    first = false;
  }
  for (const line of lines) {
    if (line === '') return undefined;
    // A continuation (obs-fold) of the line before: Go folds it in, nothing to say about it.
    if (!first && (line.startsWith(' ') || line.startsWith('\t'))) continue;
    const problem = headerLineProblem(line, first);
    if (problem !== undefined) return problem;
    first = false;
  }
  return undefined;
}

/** What Go's `textproto.Reader.ReadMIMEHeader` says about a header line; undefined when it takes it. */
function headerLineProblem(line: string, first: boolean): string | undefined {
  if (first && (line.startsWith(' ') || line.startsWith('\t'))) return `malformed MIME header initial line: ${fromByteString(line)}`;
  const colon = line.indexOf(':');
  if (colon < 0) return `malformed MIME header: missing colon: ${goQuote(fromByteString(line))}`;
  // Spaces in a name: Go takes it (since 1.20, go.dev/issue/34540) where node:http does not;
  // undefined then, so that no message Go never prints is given for it.
  const name = line.slice(0, colon);
  if (name.includes(' ') && HTTP_TOKEN.test(name.replaceAll(' ', 'x'))) return undefined;
  if (!HTTP_TOKEN.test(name) || hasControlByte(line.slice(colon + 1), true)) {
    return `malformed MIME header line: ${fromByteString(line)}`;
  }
  return undefined;
}

/**
 * What Go's `http.ReadResponse` says about a status line, checked in its order (response
 * shape, status code, version); undefined when Go would accept the line (the problem is
 * then in the headers). The quoted part is the offending text, as Go's `%q` prints it.
 */
function statusLineProblem(line: string): string | undefined {
  const space = line.indexOf(' ');
  if (space < 0) return `malformed HTTP response ${goQuote(fromByteString(line))}`;
  const proto = line.slice(0, space);
  const status = line.slice(space + 1).replace(/^ +/, '');
  const statusCode = status.split(' ')[0] ?? '';
  if (statusCode.length !== 3 || !/^[+-]?\d+$/.test(statusCode) || Number(statusCode) < 0) {
    return `malformed HTTP status code ${goQuote(fromByteString(statusCode))}`;
  }
  if (!/^HTTP\/\d\.\d$/.test(proto)) {
    return `malformed HTTP version ${goQuote(fromByteString(proto))}`;
  }
  return undefined;
}

/** OpenSSL's wording of the common handshake failures, as Go's crypto/tls words them (a non-TLS answer: `firstRecordError`). */
function describeTlsError(message: string): string | undefined {
  const alert = /(?:sslv3|tlsv1[0-9]*) alert ([a-z ]+?)(?::|$)/.exec(message);
  return alert ? `remote error: tls: ${alert[1]}` : undefined;
}

const BODY_TIMEOUT = 'context deadline exceeded (Client.Timeout or context cancellation while reading body)';

/**
 * Reads at most `MAX_PROBE_OUTPUT_BYTES` of the body, then closes the connection —
 * a longer body is cut short without reading it to its end. Never rejects; closes
 * the connection in every case.
 */
export function readBody(response: IncomingMessage, conn: Connection, deadline: Deadline): Promise<Body> {
  return new Promise<Body>((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let settled = false;
    let unsubscribe = (): void => undefined;
    const finish = (result: Body): void => {
      if (settled) return;
      settled = true;
      unsubscribe();
      conn.close();
      resolve(result);
    };
    const done = (): void => finish({ ok: true, bytes: Buffer.concat(chunks, size) });
    // Runs before node:http's own 'end' handler, which would half-close the socket
    // first and leave it in TIME_WAIT.
    if (response.statusCode === 101) {
      done(); // the rest of the stream is another protocol: nothing to read
      return;
    }
    response.prependListener('end', done);
    response.on('data', (chunk: Buffer) => {
      if (settled) return;
      const room = MAX_PROBE_OUTPUT_BYTES - size;
      chunks.push(chunk.length > room ? chunk.subarray(0, room) : chunk);
      size += Math.min(chunk.length, room);
      if (size >= MAX_PROBE_OUTPUT_BYTES) done();
    });
    response.on('close', () => {
      if (response.complete) done();
      else finish({ ok: false, error: new Error(bodyErrorText(conn)) });
    });
    unsubscribe = deadline.onExpire(() => finish({ ok: false, error: new Error(BODY_TIMEOUT) }));
  });
}

function bodyErrorText(conn: Connection): string {
  const err = conn.lastError;
  if (!err) return 'unexpected EOF';
  return describeConnError(err, conn.local, conn.remote) ?? err.message;
}
