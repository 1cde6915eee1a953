/**
 * What Go's crypto/tls says when an HTTPS probe's server does not answer with TLS. OpenSSL
 * (Node) words every such answer alike ("wrong version number"), while the kubelet's event
 * depends on the first five bytes the server sent — the first record's header:
 *
 * - `HTTP/`: `http: server gave HTTP response to HTTPS client` (net/http's `send`, which
 *   looks at the `tls.RecordHeaderError`'s header; the lifecycle handler retries over http);
 * - a first byte 0x80: `tls: unsupported SSLv2 handshake received`;
 * - a record type other than alert (21) or handshake (22), or a version ≥ 0x1000 (a
 *   banner, an SSH or SMTP greeting, any text): `tls: first record does not look like a TLS
 *   handshake`;
 * - a length over 16384 + 2048: `tls: oversized record received with length N`.
 *
 * Those bytes never reach JavaScript when TLS runs on the socket's handle, so an HTTPS
 * probe's TLS runs over {@link FirstRecordTap}, a pass-through stream that keeps them.
 */
import { Duplex } from 'node:stream';
import type net from 'node:net';

/** A TLS record header: type, version (2 bytes), length (2 bytes). */
const RECORD_HEADER_LENGTH = 5;
const RECORD_TYPE_ALERT = 21;
const RECORD_TYPE_HANDSHAKE = 22;
/** crypto/tls `maxCiphertext`: the plaintext limit 2^14 plus 2048 of expansion. */
const MAX_CIPHERTEXT = 16384 + 2048;
/** net/http's `ErrSchemeMismatch`. */
export const SCHEME_MISMATCH = 'http: server gave HTTP response to HTTPS client';

/**
 * Go's error for a first record with this header (crypto/tls `readRecordOrCCS` before any
 * version is agreed, then net/http's "HTTP/" check), or undefined when Go would read on:
 * a header that looks like TLS, or fewer than five bytes.
 */
export function goFirstRecordError(header: Uint8Array): string | undefined {
  if (header.length < RECORD_HEADER_LENGTH) return undefined;
  const text = recordHeaderText(header);
  if (text === undefined) return undefined;
  return Buffer.from(header.subarray(0, RECORD_HEADER_LENGTH)).toString('latin1') === 'HTTP/' ? SCHEME_MISMATCH : text;
}

function recordHeaderText(header: Uint8Array): string | undefined {
  const type = header[0] ?? 0;
  if (type === 0x80) return 'tls: unsupported SSLv2 handshake received';
  const version = ((header[1] ?? 0) << 8) | (header[2] ?? 0);
  if ((type !== RECORD_TYPE_ALERT && type !== RECORD_TYPE_HANDSHAKE) || version >= 0x1000) {
    return 'tls: first record does not look like a TLS handshake';
  }
  const length = ((header[3] ?? 0) << 8) | (header[4] ?? 0);
  return length > MAX_CIPHERTEXT ? `tls: oversized record received with length ${length}` : undefined;
}

/**
 * The probe's TCP socket as a plain stream for TLS to run over, keeping the first five
 * bytes the server sends ({@link header}). Everything else passes through unchanged: writes
 * go to the socket (buffered by it while it connects), its data, end, errors and close come
 * back. The socket itself stays the probe's: its connect, its ends and its close (FIN or
 * reset) are read and done on it as for plain HTTP.
 */
export class FirstRecordTap extends Duplex {
  private received: Buffer = Buffer.alloc(0);

  constructor(private readonly socket: net.Socket) {
    super({ allowHalfOpen: true });
    socket.on('data', (chunk: Buffer) => {
      if (this.received.length < RECORD_HEADER_LENGTH) {
        this.received = Buffer.concat([this.received, chunk.subarray(0, RECORD_HEADER_LENGTH - this.received.length)]);
      }
      if (!this.push(chunk)) socket.pause();
    });
    socket.on('end', () => this.push(null));
    socket.on('error', (err) => this.destroy(err));
    socket.on('close', () => this.destroy());
  }

  /** The first bytes the server sent (at most five; fewer when it sent less). */
  get header(): Buffer {
    return this.received;
  }

  override _read(): void {
    this.socket.resume();
  }

  override _write(chunk: Buffer, _encoding: BufferEncoding, callback: (error?: Error | null) => void): void {
    this.socket.write(chunk, (err) => callback(err ?? null));
  }

  override _final(callback: (error?: Error | null) => void): void {
    this.socket.end();
    callback();
  }

  override _destroy(error: Error | null, callback: (error?: Error | null) => void): void {
    this.socket.destroy();
    callback(error);
  }
}
