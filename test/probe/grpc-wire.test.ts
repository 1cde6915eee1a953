/**
 * The gRPC probe against raw HTTP/2 servers that answer Health/Check in every way the wire
 * allows: trailers-only replies, HTTP errors, resets, compression, odd protobuf. The
 * expected messages are what the probe printed when it ran on grpc-js (checked against that
 * implementation side by side), except where noted.
 */
import http2 from 'node:http2';
import type { AddressInfo } from 'node:net';
import zlib from 'node:zlib';
import { service as healthService } from 'grpc-health-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { probeGrpc } from '../../src/probe/grpc.js';
import { decodeServingStatus, encodeHealthCheckRequest } from '../../src/probe/grpc-proto.js';
import { PROBE_USER_AGENT } from '../../src/probe/constants.js';

type Answer = (stream: http2.ServerHttp2Stream) => void;

const OK_HEADERS = { ':status': 200, 'content-type': 'application/grpc' };

function frame(message: Buffer | number[], compressed = 0): Buffer {
  const body = Buffer.from(message);
  const head = Buffer.alloc(5);
  head[0] = compressed;
  head.writeUInt32BE(body.length, 1);
  return Buffer.concat([head, body]);
}

/** A reply with `body` as DATA, then trailers grpc-status 0. */
function withOkTrailers(body: Buffer, headers: http2.OutgoingHttpHeaders = OK_HEADERS): Answer {
  return (stream) => {
    stream.respond(headers, { waitForTrailers: true });
    stream.on('wantTrailers', () => stream.sendTrailers({ 'grpc-status': '0' }));
    stream.end(body);
  };
}

let server: http2.Http2Server;
let port = 0;
let answer: Answer = () => undefined;
let lastHeaders: http2.IncomingHttpHeaders = {};
let lastBody = Buffer.alloc(0);
/** Server sessions still open: one that sent GOAWAY stops reading and never sees the probe's reset. */
const sessions = new Set<http2.ServerHttp2Session>();
/** Called with every new server session (before any stream on it). */
let onSession: (session: http2.ServerHttp2Session) => void = () => undefined;

beforeAll(async () => {
  server = http2.createServer();
  server.on('session', (session) => {
    sessions.add(session);
    session.on('error', () => undefined);
    session.on('close', () => sessions.delete(session));
    onSession(session);
  });
  server.on('stream', (stream, headers) => {
    lastHeaders = headers;
    const chunks: Buffer[] = [];
    stream.on('error', () => undefined);
    stream.on('data', (chunk: Buffer) => chunks.push(chunk));
    stream.on('end', () => (lastBody = Buffer.concat(chunks)));
    answer(stream);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as AddressInfo).port;
});

afterAll(async () => {
  for (const session of sessions) session.destroy();
  await new Promise((resolve) => server.close(resolve));
});

async function probeWith(reply: Answer, service = ''): Promise<string> {
  answer = reply;
  return (await probeGrpc('127.0.0.1', port, service, 1000)).output;
}

const unimplemented = (details: string): string =>
  `error: this server does not implement the grpc health protocol (grpc.health.v1.Health): ${details}`;
const failed = (text: string): string => `error: health rpc probe failed: rpc error: ${text}`;

describe('gRPC probe on the wire', () => {
  it('sends what grpc-js sent: headers in its order and a protobufjs-identical request', async () => {
    await probeWith(withOkTrailers(frame([8, 1])), 'my.pkg.Service');
    const { 'grpc-timeout': timeout, ...rest } = lastHeaders;
    expect(timeout).toMatch(/^\d+m$/);
    expect(Number(String(timeout).slice(0, -1))).toBeLessThanOrEqual(1000);
    expect(rest).toMatchObject({
      ':method': 'POST',
      ':path': '/grpc.health.v1.Health/Check',
      ':scheme': 'http',
      ':authority': `127.0.0.1:${port}`,
      'content-type': 'application/grpc',
      te: 'trailers',
      'grpc-accept-encoding': 'identity,deflate,gzip',
      'accept-encoding': 'identity',
    });
    expect(String(rest['user-agent'])).toMatch(new RegExp(`^${PROBE_USER_AGENT} grpc-node-js/\\d+\\.\\d+\\.\\d+$`));
    const check = healthService['Check'];
    expect(lastBody).toEqual(frame(check?.requestSerialize({ service: 'my.pkg.Service' }) ?? []));
    await probeWith(withOkTrailers(frame([8, 1])), '');
    expect(lastBody).toEqual(frame(check?.requestSerialize({ service: '' }) ?? []));
  });

  it.each<[string, Answer, string]>([
    ['trailers-only status, message percent-decoded', (s) => s.respond({ ...OK_HEADERS, 'grpc-status': '5', 'grpc-message': 'no%20such%20thing' }, { endStream: true }), failed('code = NotFound desc = no such thing')],
    ['an undecodable grpc-message stays as sent', (s) => s.respond({ ...OK_HEADERS, 'grpc-status': '99', 'grpc-message': '%E0%A4%A' }, { endStream: true }), failed('code = Code(99) desc = %E0%A4%A')],
    ['a non-numeric grpc-status', (s) => s.respond({ ...OK_HEADERS, 'grpc-status': 'abc' }, { endStream: true }), failed('code = Code(NaN) desc = ')],
    ['DEADLINE_EXCEEDED from the server', (s) => s.respond({ ...OK_HEADERS, 'grpc-status': '4' }, { endStream: true }), 'timeout: health rpc did not complete within 1s'],
    ['HTTP 404', (s) => { s.respond({ ':status': 404 }); s.end('nope'); }, unimplemented('Received HTTP status code 404')],
    ['HTTP 503', (s) => { s.respond({ ':status': 503 }); s.end(); }, failed('code = Unavailable desc = Received HTTP status code 503')],
    ['HTTP 500 with an HTML page', (s) => { s.respond({ ':status': 500 }); s.end(`<html>${'x'.repeat(100)}`); }, failed('code = Unknown desc = Received HTTP status code 500')],
    ['no trailers at all', (s) => { s.respond(OK_HEADERS); s.end(frame([8, 1])); }, failed('code = Internal desc = Received RST_STREAM with code 0 (Call ended without gRPC status)')],
    // grpc-go's words (the kubelet's client): grpc-js read the page as a message "larger than max".
    ['a 200 that is not gRPC (an HTTP/2 web page)', (s) => { s.respond({ ':status': 200, 'content-type': 'text/html' }); s.end('<html>hello</html>'); }, failed('code = Unknown desc = transport: received unexpected content-type "text/html"')],
    ['a 200 without a content-type', (s) => { s.respond({ ':status': 200 }); s.end('hello'); }, failed('code = Unknown desc = malformed header: missing HTTP content-type')],
    ['a non-gRPC content-type with a gRPC answer after it', withOkTrailers(frame([8, 1]), { ':status': 200, 'content-type': 'application/grpcx' }), failed('code = Unknown desc = transport: received unexpected content-type "application/grpcx"')],
    ['application/grpc+proto is gRPC', withOkTrailers(frame([8, 1]), { ':status': 200, 'content-type': 'application/grpc+proto' }), 'service healthy'],
    ['application/grpc; charset is gRPC', withOkTrailers(frame([8, 2]), { ':status': 200, 'content-type': 'application/grpc;x=y' }), 'service unhealthy (responded with "NOT_SERVING")'],
    ['OK without a message', withOkTrailers(Buffer.alloc(0)), unimplemented('No message received')],
    ['OK after half a message', withOkTrailers(Buffer.from([0, 0, 0, 0, 5, 8])), unimplemented('No message received')],
    ['unknown fields of every wire type are skipped', withOkTrailers(frame([0x12, 3, 1, 2, 3, 8, 2, 0x19, 1, 2, 3, 4, 5, 6, 7, 8, 0x2d, 1, 2, 3, 4])), 'service unhealthy (responded with "NOT_SERVING")'],
    ['the last status field wins', withOkTrailers(frame([8, 2, 8, 1])), 'service healthy'],
    ['a negative status prints as its number', withOkTrailers(frame([8, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 1])), 'service unhealthy (responded with "-1")'],
    ['an empty message is UNKNOWN', withOkTrailers(frame([])), 'service unhealthy (responded with "UNKNOWN")'],
    ['a truncated field: protobufjs\'s error', withOkTrailers(frame([0x12, 10, 1])), failed('code = Internal desc = Response message parsing error: index out of range: 2 + 10 > 3')],
    ['a gzip-compressed reply', withOkTrailers(frame(zlib.gzipSync(Buffer.from([8, 2])), 1), { ...OK_HEADERS, 'grpc-encoding': 'gzip' }), 'service unhealthy (responded with "NOT_SERVING")'],
    ['a deflate-compressed reply', withOkTrailers(frame(zlib.deflateSync(Buffer.from([8, 1])), 1), { ...OK_HEADERS, 'grpc-encoding': 'deflate' }), 'service healthy'],
    ['broken gzip', withOkTrailers(frame([1, 2, 3], 1), { ...OK_HEADERS, 'grpc-encoding': 'gzip' }), failed('code = Internal desc = Failed to decompress gzip-encoded message')],
    // grpc-js lost this error's status and printed "undefined undefined: undefined".
    ['compressed without grpc-encoding', withOkTrailers(frame(zlib.gzipSync(Buffer.from([8, 2])), 1)), failed('code = Internal desc = Received compressed message but "grpc-encoding" header was identity')],
    // grpc-js cancelled the call but never reported it: the probe timed out.
    ['two messages', withOkTrailers(Buffer.concat([frame([8, 1]), frame([8, 2])])), unimplemented('Too many responses received')],
    ['RST_STREAM REFUSED_STREAM', (s) => s.close(http2.constants.NGHTTP2_REFUSED_STREAM), failed('code = Unavailable desc = Stream refused by server')],
    ['RST_STREAM CANCEL', (s) => s.close(http2.constants.NGHTTP2_CANCEL), failed('code = Canceled desc = Call cancelled')],
    ['RST_STREAM INTERNAL_ERROR', (s) => s.close(http2.constants.NGHTTP2_INTERNAL_ERROR), failed('code = Internal desc = Received RST_STREAM with code 2 (Internal server error)')],
    ['RST_STREAM ENHANCE_YOUR_CALM', (s) => s.close(http2.constants.NGHTTP2_ENHANCE_YOUR_CALM), failed('code = ResourceExhausted desc = Bandwidth exhausted or memory limit exceeded')],
    ['RST_STREAM NO_ERROR', (s) => s.close(http2.constants.NGHTTP2_NO_ERROR), failed('code = Internal desc = Received RST_STREAM with code 0 (Call ended without gRPC status)')],
    ['RST_STREAM with an unknown code', (s) => s.close(99), failed('code = Internal desc = Received RST_STREAM with code 99')],
    ['the server drops the session mid-call', (s) => s.session?.destroy(), failed('code = Unavailable desc = Connection dropped')],
    ['GOAWAY, then the answer on the open stream', (s) => { s.session?.goaway(0); withOkTrailers(frame([8, 1]))(s); }, 'service healthy'],
    ['an answer a byte at a time', (s) => {
      s.respond(OK_HEADERS, { waitForTrailers: true });
      s.on('wantTrailers', () => s.sendTrailers({ 'grpc-status': '0' }));
      const bytes = frame([8, 3]);
      for (const byte of bytes) s.write(Buffer.from([byte]));
      s.end();
    }, 'service unhealthy (responded with "SERVICE_UNKNOWN")'],
  ])('%s', async (_name, reply, expected) => {
    expect(await probeWith(reply)).toBe(expected);
  });

  /** The first call gets `first`, every later one a SERVING answer; how many calls came. */
  async function firstThenServing(first: Answer): Promise<[string, number]> {
    let calls = 0;
    const output = await probeWith((s) => (++calls === 1 ? first(s) : withOkTrailers(frame([8, 1]))(s)));
    return [output, calls];
  }

  it('a refused stream is retried once, transparently, as grpc-js did', async () => {
    expect(await firstThenServing((s) => s.close(http2.constants.NGHTTP2_REFUSED_STREAM))).toEqual(['service healthy', 2]);
  });

  it('a GOAWAY before the call (a server draining): the call is retried on a new connection', async () => {
    let opened = 0;
    onSession = (session) => {
      if (++opened === 1) session.goaway(http2.constants.NGHTTP2_NO_ERROR, 0);
    };
    try {
      expect(await probeWith(withOkTrailers(frame([8, 1])))).toBe('service healthy');
      expect(opened).toBe(2);
    } finally {
      onSession = () => undefined;
    }
  });

  it('the header order grpc-js sent (metadata in its order after the pseudo-headers)', async () => {
    await probeWith(withOkTrailers(frame([8, 1])));
    expect(Object.keys(lastHeaders).filter((name) => !name.startsWith(':'))).toEqual([
      'grpc-accept-encoding',
      'accept-encoding',
      'grpc-timeout',
      'user-agent',
      'content-type',
      'te',
    ]);
  });
});

describe('gRPC probe to an IPv6 address with a zone', () => {
  it('probes it (the zone is no valid URL host, and must not throw out of the probe)', async () => {
    const v6 = http2.createServer();
    v6.on('stream', (stream) => withOkTrailers(frame([8, 1]))(stream));
    v6.on('session', (session) => session.on('error', () => undefined));
    await new Promise<void>((resolve) => v6.listen(0, '::1', resolve));
    try {
      const result = await probeGrpc('::1%lo', (v6.address() as AddressInfo).port, '', 1000);
      expect(result.output).toBe('service healthy');
    } finally {
      await new Promise((resolve) => v6.close(resolve));
    }
  });
});

describe('Health/Check protobuf', () => {
  it('encodes a request exactly as protobufjs does, long names included', () => {
    const check = healthService['Check'];
    for (const service of ['', 'a', 'grpc.health.v1.Health', 'é'.repeat(100), 'x'.repeat(20_000)]) {
      expect(encodeHealthCheckRequest(service)).toEqual(frame(check?.requestSerialize({ service }) ?? []));
    }
  });

  it('decodes every serving status as proto-loader named it', () => {
    const check = healthService['Check'];
    for (const status of ['UNKNOWN', 'SERVING', 'NOT_SERVING', 'SERVICE_UNKNOWN', 7, 300, -5]) {
      const bytes = check?.responseSerialize({ status }) ?? Buffer.alloc(0);
      const named = (check?.responseDeserialize(bytes) as { status: unknown }).status;
      expect(decodeServingStatus(bytes)).toBe(String(named));
    }
  });

  it('throws protobufjs\'s errors for malformed messages', () => {
    expect(() => decodeServingStatus(Buffer.from([0x0f, 1]))).not.toThrow(); // wire type 7 is read as field 1's varint
    expect(() => decodeServingStatus(Buffer.from([0x17]))).toThrow('invalid wire type 7 at offset 1');
    expect(() => decodeServingStatus(Buffer.from([0x08]))).toThrow('index out of range: 1 + 1 > 1');
  });
});
