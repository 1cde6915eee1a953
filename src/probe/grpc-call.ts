// The dashboard's typecheck (web/tsconfig.json, `types: []`) reaches this file through type
// imports of the prober; grpc-js's typings used to bring Node's along, nothing else does now.
/// <reference types="node" />
/**
 * One `grpc.health.v1.Health/Check` call over a fresh plaintext HTTP/2 connection, written on
 * `node:http2` directly. The kubelet dials a new connection per probe; grpc-js built a whole
 * channel for that (resolver, load balancer, subchannel, filter stack), which cost more CPU
 * than the probe's I/O. What the call sends, and how every reply maps to a gRPC status, is
 * what grpc-js 1.14 did (its `transport.ts`, `subchannel-call.ts`, `compression-filter.ts`,
 * `client.ts`), so probe results and messages are unchanged — but for a 200 answer that is
 * not gRPC, which grpc-js did not check and is refused in grpc-go's words, the kubelet's.
 */
import http2 from 'node:http2';
import { createRequire } from 'node:module';
import net from 'node:net';
import zlib from 'node:zlib';
import { afterPendingIO, realClock } from '../util/clock.js';
import { goQuote } from '../util/go-quote.js';
import { PROBE_USER_AGENT } from './constants.js';
import { GRPC_FRAME_HEADER_BYTES, decodeServingStatus, encodeHealthCheckRequest } from './grpc-proto.js';
import { fdExhaustion, joinHostPort } from './net-errors.js';
import type { ProbeClose } from './types.js';

/** gRPC status codes used here (grpc/status.h). */
export const GrpcCode = {
  OK: 0,
  CANCELLED: 1,
  UNKNOWN: 2,
  DEADLINE_EXCEEDED: 4,
  PERMISSION_DENIED: 7,
  RESOURCE_EXHAUSTED: 8,
  UNIMPLEMENTED: 12,
  INTERNAL: 13,
  UNAVAILABLE: 14,
  UNAUTHENTICATED: 16,
} as const;

/** How a Check call ended. */
export type CheckResult =
  | { kind: 'connect-timeout' }
  /** No file descriptor left to dial with: a probe error (see `fdExhaustion`), not a failure. */
  | { kind: 'errored'; error: Error }
  | { kind: 'status'; code: number; details: string }
  | { kind: 'serving'; status: string };

const HEALTH_CHECK_PATH = '/grpc.health.v1.Health/Check';

/** grpc-js's (and grpc-go's) default limit on a received message: 4 MiB. */
const MAX_RECEIVE_MESSAGE_BYTES = 4 * 1024 * 1024;

/**
 * The user agent grpc-js sent for the probe: the kubelet's, then the gRPC library's token
 * (grpc-go appends its own the same way). The token is kept as it was so targets see the
 * same header; grpc-js stays installed for the CRI client.
 */
const USER_AGENT = `${PROBE_USER_AGENT} grpc-node-js/${(createRequire(import.meta.url)('@grpc/grpc-js/package.json') as { version: string }).version}`;

/** grpc-js's connection back-off (subchannel.ts): first retry after 1 s, then × 1.6. */
const INITIAL_BACKOFF_MS = 1000;
const BACKOFF_MULTIPLIER = 1.6;
const MAX_BACKOFF_MS = 120_000;

const SESSION_OPTIONS = {
  settings: { initialWindowSize: http2.getDefaultSettings().initialWindowSize ?? 65535 },
  maxSendHeaderBlockLength: Number.MAX_SAFE_INTEGER,
  maxSessionMemory: Number.MAX_SAFE_INTEGER,
} as const;

const {
  NGHTTP2_NO_ERROR,
  NGHTTP2_REFUSED_STREAM,
  NGHTTP2_CANCEL,
  NGHTTP2_ENHANCE_YOUR_CALM,
  NGHTTP2_INADEQUATE_SECURITY,
  NGHTTP2_INTERNAL_ERROR,
  NGHTTP2_FLAG_END_STREAM,
} = http2.constants;

/** grpc-js's `grpc-timeout` header: the time left, in the smallest unit that fits 8 digits. */
function grpcTimeout(msLeft: number): string {
  const ms = Math.max(msLeft, 0);
  if (ms < 1e8) return `${Math.ceil(ms)}m`;
  if (ms / 1000 < 1e8) return `${Math.ceil(ms / 1000)}S`;
  if (ms / 60_000 < 1e8) return `${Math.ceil(ms / 60_000)}M`;
  return `${Math.ceil(ms / 3_600_000)}H`;
}

/** grpc-js's mapping of a non-200 HTTP status to a gRPC status. */
function httpStatusToGrpc(httpStatus: number): { code: number; details: string } {
  const details = `Received HTTP status code ${httpStatus}`;
  switch (httpStatus) {
    case 400:
      return { code: GrpcCode.INTERNAL, details };
    case 401:
      return { code: GrpcCode.UNAUTHENTICATED, details };
    case 403:
      return { code: GrpcCode.PERMISSION_DENIED, details };
    case 404:
      return { code: GrpcCode.UNIMPLEMENTED, details };
    case 429:
    case 502:
    case 503:
    case 504:
      return { code: GrpcCode.UNAVAILABLE, details };
    default:
      return { code: GrpcCode.UNKNOWN, details };
  }
}

/**
 * grpc-go's verdict on an answer's content-type, in its words (the kubelet's client,
 * `http2_client.go` `operateHeaders`, with `grpcutil.ContentSubtype`): `application/grpc`,
 * or that followed by `+` or `;` and anything, is gRPC; anything else, or none, is not.
 * (grpc-js did not look.) A non-200 status keeps grpc-js's words, as before.
 */
function contentTypeError(type: string | undefined): string | undefined {
  if (type === undefined) return 'malformed header: missing HTTP content-type';
  const base = 'application/grpc';
  if (type === base || (type.startsWith(base) && (type[base.length] === '+' || type[base.length] === ';'))) return undefined;
  return `transport: received unexpected content-type ${goQuote(type)}`;
}

function firstHeader(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

/** Errors on sockets and sessions after the probe is over: nobody is waiting for them. */
function ignore(): void {}

/**
 * One probe: dial, HTTP/2 handshake, one unary call, then everything torn down. Retries a
 * failed connection with grpc-js's back-off until the deadline, as grpc-js's `waitForReady`
 * did (the kubelet's blocking dial does too). Ready means the server's SETTINGS arrived.
 */
class HealthCheckCall {
  private readonly dialHost: string;
  private readonly authority: string;
  private readonly deadline: number;
  private readonly deadlineTimer: unknown;
  private retryTimer: unknown;
  private backoffMs = INITIAL_BACKOFF_MS;
  private attemptStartedAt = 0;
  private socket: net.Socket | undefined;
  private session: http2.ClientHttp2Session | undefined;
  private stream: http2.ClientHttp2Stream | undefined;
  private ready = false;
  private done = false;
  /** A call the server never started (refused stream, GOAWAY before it) is retried once, as grpc-js does. */
  private retriedTransparently = false;

  // The call's state, as grpc-js's Http2SubchannelCall keeps it.
  private httpStatus: number | undefined;
  private encoding = 'identity';
  private finalStatus: { code: number; details: string } | undefined;
  private readsClosed = false;
  private pendingReads = 0;
  private servingStatus: string | undefined;
  private internalError: NodeJS.ErrnoException | undefined;
  private connectionDropped = false;
  private frameHeader = Buffer.alloc(0);
  private frameBody: Buffer[] = [];
  private frameBodyBytes = 0;
  private frameLength = -1;
  private frameCompressed = false;

  constructor(
    host: string,
    private readonly port: number,
    private readonly service: string,
    timeoutMs: number,
    private readonly resolve: (result: CheckResult) => void,
    /** Close with a reset instead of the kubelet's FIN (see ProbeClose). */
    private readonly reset: boolean,
  ) {
    this.dialHost = host === '' ? 'localhost' : host;
    this.authority = joinHostPort(this.dialHost, port);
    this.deadline = realClock.now() + timeoutMs;
    this.deadlineTimer = realClock.setTimeout(() => afterPendingIO(() => this.onDeadline()), timeoutMs);
    this.dial();
  }

  private dial(): void {
    this.retryTimer = undefined;
    this.attemptStartedAt = realClock.now();
    let socket: net.Socket;
    try {
      socket = net.connect({ host: this.dialHost, port: this.port });
    } catch {
      return; // a port Node refuses to dial: like grpc-js, wait out the deadline
    }
    this.socket = socket;
    socket.on('error', (err) => {
      const exhausted = fdExhaustion(err, `dial tcp ${this.authority}`);
      if (exhausted && !this.done && socket === this.socket) this.finish({ kind: 'errored', error: exhausted });
    });
    socket.once('close', () => this.attemptFailed(socket));
    socket.once('connect', () => {
      if (this.done || socket !== this.socket) return;
      socket.setNoDelay(true);
      // The URL only names the scheme (`:authority` is sent explicitly): a host such as
      // `fe80::1%eth0` is no valid URL, and a throw here would escape the probe.
      const session = http2.connect('http://localhost', { ...SESSION_OPTIONS, createConnection: () => socket });
      this.session = session;
      session.on('error', () => this.attemptFailed(socket));
      session.once('close', () => this.attemptFailed(socket));
      session.once('remoteSettings', () => this.onReady(socket));
    });
  }

  /** A connection attempt ended before the server's SETTINGS: try again after the back-off. */
  private attemptFailed(socket: net.Socket): void {
    if (this.done || socket !== this.socket) return;
    if (this.ready) {
      this.onDisconnect(socket);
      return;
    }
    this.dropConnection();
    const retryAt = this.attemptStartedAt + this.backoffMs;
    this.backoffMs = Math.min(this.backoffMs * BACKOFF_MULTIPLIER, MAX_BACKOFF_MS);
    if (retryAt >= this.deadline) return; // the deadline timer ends the probe
    this.retryTimer = realClock.setTimeout(() => this.dial(), retryAt - realClock.now());
  }

  private onReady(socket: net.Socket): void {
    if (this.done || socket !== this.socket || !this.session) return;
    this.ready = true;
    this.startCall(this.session);
  }

  private startCall(session: http2.ClientHttp2Session): void {
    let stream: http2.ClientHttp2Stream;
    try {
      // grpc-js's order (metadata first; Node adds :scheme and sends pseudo-headers first).
      stream = session.request({
        'grpc-accept-encoding': 'identity,deflate,gzip',
        'accept-encoding': 'identity',
        'grpc-timeout': grpcTimeout(this.deadline - realClock.now()),
        ':authority': this.authority,
        'user-agent': USER_AGENT,
        'content-type': 'application/grpc',
        ':method': 'POST',
        ':path': HEALTH_CHECK_PATH,
        te: 'trailers',
      });
    } catch {
      if (this.socket) this.onDisconnect(this.socket);
      return;
    }
    this.stream = stream;
    stream.on('response', (headers, flags) => {
      this.httpStatus = headers[':status'];
      // A 200 that is not gRPC (an HTTP/2 web server on the port) is refused before a byte
      // of it is read, as grpc-go refuses it: grpc-js read its page as a gRPC message.
      const notGrpc = this.httpStatus === 200 ? contentTypeError(firstHeader(headers['content-type'])) : undefined;
      if (notGrpc !== undefined) {
        this.endCall({ code: GrpcCode.UNKNOWN, details: notGrpc });
        return;
      }
      if (flags & NGHTTP2_FLAG_END_STREAM) this.onTrailers(headers);
      else this.encoding = firstHeader(headers['grpc-encoding']) ?? 'identity';
    });
    stream.on('trailers', (headers) => this.onTrailers(headers));
    stream.on('data', (chunk: Buffer) => this.onData(chunk));
    stream.on('end', () => {
      this.readsClosed = true;
      this.maybeFinish();
    });
    stream.on('error', (err: NodeJS.ErrnoException) => {
      if (err.code !== 'ERR_HTTP2_STREAM_ERROR') this.internalError = err;
    });
    stream.on('close', () => process.nextTick(() => this.onStreamClose(stream.rstCode)));
    stream.end(encodeHealthCheckRequest(this.service));
  }

  /** Splits the DATA into gRPC messages (5-byte prefix), cutting the call at the size limit. */
  private onData(chunk: Buffer): void {
    let at = 0;
    while (at < chunk.length && !this.done && this.finalStatus === undefined) {
      if (this.frameLength < 0) {
        const need = GRPC_FRAME_HEADER_BYTES - this.frameHeader.length;
        this.frameHeader = Buffer.concat([this.frameHeader, chunk.subarray(at, at + need)]);
        at += Math.min(need, chunk.length - at);
        if (this.frameHeader.length < GRPC_FRAME_HEADER_BYTES) return;
        this.frameCompressed = this.frameHeader[0] === 1;
        this.frameLength = this.frameHeader.readUInt32BE(1);
        this.frameHeader = Buffer.alloc(0);
        if (this.frameLength > MAX_RECEIVE_MESSAGE_BYTES) {
          const detail = `Received message larger than max (${this.frameLength} vs ${MAX_RECEIVE_MESSAGE_BYTES})`;
          this.endCall(
            this.httpStatus !== undefined && this.httpStatus !== 200
              ? httpStatusToGrpc(this.httpStatus)
              : { code: GrpcCode.RESOURCE_EXHAUSTED, details: detail },
          );
          return;
        }
      }
      const take = Math.min(this.frameLength - this.frameBodyBytes, chunk.length - at);
      if (take > 0) this.frameBody.push(chunk.subarray(at, at + take));
      this.frameBodyBytes += take;
      at += take;
      if (this.frameBodyBytes === this.frameLength) {
        const message = this.frameBody.length === 1 ? (this.frameBody[0] as Buffer) : Buffer.concat(this.frameBody);
        const compressed = this.frameCompressed;
        this.frameBody = [];
        this.frameBodyBytes = 0;
        this.frameLength = -1;
        this.onMessage(message, compressed);
      }
    }
  }

  private onMessage(message: Buffer, compressed: boolean): void {
    if (!compressed) {
      this.onPlainMessage(message);
      return;
    }
    if (this.encoding === 'identity') {
      this.endCall({ code: GrpcCode.INTERNAL, details: 'Received compressed message but "grpc-encoding" header was identity' });
      return;
    }
    if (this.encoding !== 'gzip' && this.encoding !== 'deflate') {
      this.endCall({ code: GrpcCode.INTERNAL, details: `Compression method not supported: ${this.encoding}` });
      return;
    }
    const encoding = this.encoding;
    const inflate = encoding === 'gzip' ? zlib.gunzip : zlib.inflate;
    this.pendingReads++;
    inflate(message, { maxOutputLength: MAX_RECEIVE_MESSAGE_BYTES }, (err, plain) => {
      this.pendingReads--;
      if (this.done) return;
      if ((err as NodeJS.ErrnoException | null)?.code === 'ERR_BUFFER_TOO_LARGE') {
        this.endCall({
          code: GrpcCode.RESOURCE_EXHAUSTED,
          details: `Received message that decompresses to a size larger than ${MAX_RECEIVE_MESSAGE_BYTES}`,
        });
      } else if (err) {
        this.endCall({ code: GrpcCode.INTERNAL, details: `Failed to decompress ${encoding}-encoded message` });
      } else {
        this.onPlainMessage(plain);
      }
      this.maybeFinish();
    });
  }

  private onPlainMessage(message: Buffer): void {
    let status: string;
    try {
      status = decodeServingStatus(message);
    } catch (err) {
      const text = err instanceof Error ? err.message : String(err);
      this.endCall({ code: GrpcCode.INTERNAL, details: `Response message parsing error: ${text}` });
      return;
    }
    if (this.servingStatus !== undefined) {
      this.endCall({ code: GrpcCode.UNIMPLEMENTED, details: 'Too many responses received' });
      return;
    }
    this.servingStatus = status;
  }

  /** grpc-status / grpc-message, from trailers or a trailers-only response. */
  private onTrailers(headers: http2.IncomingHttpHeaders): void {
    const statusText = firstHeader(headers['grpc-status']);
    if (statusText !== undefined) {
      const message = firstHeader(headers['grpc-message']);
      let details = '';
      if (message !== undefined) {
        try {
          details = decodeURI(message);
        } catch {
          details = message;
        }
      }
      this.endCall({ code: Number(statusText), details });
    } else if (this.httpStatus) {
      this.endCall(httpStatusToGrpc(this.httpStatus));
    } else {
      this.endCall({ code: GrpcCode.UNKNOWN, details: 'No status information received' });
    }
  }

  /** The stream closed: a status from how it closed, unless the trailers gave one. */
  private onStreamClose(rstCode: number | undefined): void {
    if (this.done || this.finalStatus?.code === GrpcCode.OK) return;
    switch (rstCode) {
      case NGHTTP2_NO_ERROR:
        if (this.finalStatus !== undefined) return;
        if (this.httpStatus && this.httpStatus !== 200) return this.endCall(httpStatusToGrpc(this.httpStatus));
        return this.endCall({
          code: GrpcCode.INTERNAL,
          details: `Received RST_STREAM with code ${rstCode} (Call ended without gRPC status)`,
        });
      case NGHTTP2_REFUSED_STREAM:
        // Refused, or cut by a GOAWAY before the server took it: the server never saw the
        // call, which grpc-js (and grpc-go) then retry on a new connection, once.
        if (this.httpStatus === undefined && !this.retriedTransparently && realClock.now() < this.deadline) {
          return this.retryTransparently();
        }
        return this.endCall({ code: GrpcCode.UNAVAILABLE, details: 'Stream refused by server' });
      case NGHTTP2_CANCEL:
        return this.endCall(
          this.connectionDropped
            ? { code: GrpcCode.UNAVAILABLE, details: 'Connection dropped' }
            : { code: GrpcCode.CANCELLED, details: 'Call cancelled' },
        );
      case NGHTTP2_ENHANCE_YOUR_CALM:
        return this.endCall({ code: GrpcCode.RESOURCE_EXHAUSTED, details: 'Bandwidth exhausted or memory limit exceeded' });
      case NGHTTP2_INADEQUATE_SECURITY:
        return this.endCall({ code: GrpcCode.PERMISSION_DENIED, details: 'Protocol not secure enough' });
      case NGHTTP2_INTERNAL_ERROR: {
        const err = this.internalError;
        if (err === undefined) {
          return this.endCall({
            code: GrpcCode.INTERNAL,
            details: `Received RST_STREAM with code ${rstCode} (Internal server error)`,
          });
        }
        if (err.code === 'ECONNRESET' || err.code === 'ETIMEDOUT') {
          return this.endCall({ code: GrpcCode.UNAVAILABLE, details: err.message });
        }
        return this.endCall({
          code: GrpcCode.INTERNAL,
          details: `Received RST_STREAM with code ${rstCode} triggered by internal client error: ${err.message}`,
        });
      }
      default:
        return this.endCall({ code: GrpcCode.INTERNAL, details: `Received RST_STREAM with code ${rstCode}` });
    }
  }

  /** The connection went away during the call; the stream's own close usually says more first. */
  private onDisconnect(socket: net.Socket): void {
    this.connectionDropped = true;
    setImmediate(() => {
      // Not if the call went on over a new connection (a transparent retry) meanwhile.
      if (socket === this.socket) this.endCall({ code: GrpcCode.UNAVAILABLE, details: 'Connection dropped' });
    });
  }

  /** The call again from the start, on a fresh connection: nothing of the first one counts. */
  private retryTransparently(): void {
    this.retriedTransparently = true;
    this.dropConnection();
    this.ready = false;
    this.httpStatus = undefined;
    this.encoding = 'identity';
    this.finalStatus = undefined;
    this.readsClosed = false;
    this.pendingReads = 0;
    this.servingStatus = undefined;
    this.internalError = undefined;
    this.connectionDropped = false;
    this.frameHeader = Buffer.alloc(0);
    this.frameBody = [];
    this.frameBodyBytes = 0;
    this.frameLength = -1;
    this.frameCompressed = false;
    this.dial();
  }

  /** The first status wins, except that an error found after an OK status replaces it. */
  private endCall(status: { code: number; details: string }): void {
    if (this.done) return;
    if (this.finalStatus === undefined || this.finalStatus.code === GrpcCode.OK) this.finalStatus = status;
    this.maybeFinish();
  }

  /** An error status ends the call at once; OK waits for the end of the stream's data. */
  private maybeFinish(): void {
    const status = this.finalStatus;
    if (this.done || status === undefined) return;
    if (status.code !== GrpcCode.OK) {
      this.finish({ kind: 'status', code: status.code, details: status.details });
    } else if (this.readsClosed && this.pendingReads === 0) {
      this.finish(
        this.servingStatus === undefined
          ? { kind: 'status', code: GrpcCode.UNIMPLEMENTED, details: 'No message received' }
          : { kind: 'serving', status: this.servingStatus },
      );
    }
  }

  private onDeadline(): void {
    if (this.done) return;
    if (!this.ready) this.finish({ kind: 'connect-timeout' });
    else this.finish({ kind: 'status', code: GrpcCode.DEADLINE_EXCEEDED, details: 'Deadline exceeded' });
  }

  private finish(result: CheckResult): void {
    this.done = true;
    realClock.clearTimeout(this.deadlineTimer);
    if (this.retryTimer !== undefined) realClock.clearTimeout(this.retryTimer);
    this.dropConnection();
    this.resolve(result);
  }

  /**
   * Closes the connection: with a FIN, as the kubelet closes its `ClientConn` (its dialer,
   * `probe.ProbeDialer()`, lingers 1 s rather than 0 so as not to reset), or with a reset
   * when asked (no TIME_WAIT on the probing side; see ProbeClose).
   */
  private dropConnection(): void {
    const { socket, session, stream } = this;
    this.socket = undefined;
    this.session = undefined;
    this.stream = undefined;
    // The stream first: a session destroyed with a stream still open builds an error (and
    // its stack trace) to cancel it with, ≈ 18 µs a probe.
    if (stream && !stream.destroyed) stream.destroy();
    if (socket && !socket.destroyed) {
      if (this.reset) socket.resetAndDestroy();
      else socket.destroy();
    }
    if (session) {
      session.on('error', ignore);
      session.destroy();
    }
  }
}

/**
 * Calls Health/Check for `service` on `host:port` ('' = the local host) within `timeoutMs`
 * for dialling and the call together. Never rejects.
 */
export function callHealthCheck(
  host: string,
  port: number,
  service: string,
  timeoutMs: number,
  close: ProbeClose = 'fin',
): Promise<CheckResult> {
  return new Promise((resolve) => {
    new HealthCheckCall(host, port, service, timeoutMs, resolve, close === 'reset');
  });
}
