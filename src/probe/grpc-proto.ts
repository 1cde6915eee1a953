/**
 * The two protobuf messages of `grpc.health.v1.Health/Check`, encoded and decoded by hand: a
 * probe needs one string field out and one enum field back, and a schema runtime
 * (protobufjs through grpc-health-check) cost more per probe than the probe's own I/O.
 * Decoding follows protobufjs's reader — what the probe used before — so a malformed reply
 * gives the same error text, and unknown fields are skipped as it skips them.
 */

/** `HealthCheckResponse.ServingStatus` names, by number (health.proto). */
const SERVING_STATUS_NAMES: readonly string[] = ['UNKNOWN', 'SERVING', 'NOT_SERVING', 'SERVICE_UNKNOWN'];

/** gRPC's length-prefixed message framing: 1 byte compressed flag, 4 bytes big-endian length. */
export const GRPC_FRAME_HEADER_BYTES = 5;

/**
 * A `HealthCheckRequest{service}` in gRPC framing (uncompressed). The field is written even
 * when empty, as protobufjs wrote it for `{ service: '' }` (`0a 00`).
 */
export function encodeHealthCheckRequest(service: string): Buffer {
  const length = Buffer.byteLength(service, 'utf8');
  let varintBytes = 1;
  for (let rest = length >>> 7; rest > 0; rest >>>= 7) varintBytes++;
  const messageLength = 1 + varintBytes + length;
  const frame = Buffer.allocUnsafe(GRPC_FRAME_HEADER_BYTES + messageLength);
  frame[0] = 0;
  frame.writeUInt32BE(messageLength, 1);
  let at = GRPC_FRAME_HEADER_BYTES;
  frame[at++] = 0x0a; // field 1, wire type 2 (length-delimited)
  let rest = length;
  while (rest >= 0x80) {
    frame[at++] = (rest & 0x7f) | 0x80;
    rest >>>= 7;
  }
  frame[at++] = rest;
  frame.write(service, at, 'utf8');
  return frame;
}

/** protobufjs's reader position error, word for word. */
function indexOutOfRange(pos: number, want: number, len: number): RangeError {
  return new RangeError(`index out of range: ${pos} + ${want} > ${len}`);
}

/** Nesting of groups protobufjs follows before it gives up (util.recursionLimit). */
const RECURSION_LIMIT = 100;

/** A cursor over one message, with protobufjs's varint and skip rules. */
class Reader {
  pos = 0;
  constructor(
    private readonly buf: Buffer,
    readonly len: number = buf.length,
  ) {}

  /** An unsigned varint of at most 32 significant bits (longer encodings keep the low 32). */
  uint32(): number {
    let value = 0;
    for (let i = 0; i < 10; i++) {
      if (this.pos >= this.len) throw indexOutOfRange(this.pos, 1, this.len);
      const byte = this.buf[this.pos++] ?? 0;
      if (i < 5) value = (value | ((byte & 0x7f) << (7 * i))) >>> 0;
      if (byte < 0x80) return value;
    }
    throw new Error('invalid varint encoding');
  }

  skip(length?: number): void {
    if (length !== undefined) {
      if (this.pos + length > this.len) throw indexOutOfRange(this.pos, length, this.len);
      this.pos += length;
      return;
    }
    do {
      if (this.pos >= this.len) throw indexOutOfRange(this.pos, 1, this.len);
    } while ((this.buf[this.pos++] ?? 0) & 0x80);
  }

  skipType(wireType: number, depth = 0): void {
    if (depth > RECURSION_LIMIT) throw new Error('maximum nesting depth exceeded');
    switch (wireType) {
      case 0:
        return this.skip();
      case 1:
        return this.skip(8);
      case 2:
        return this.skip(this.uint32());
      case 3:
        for (let inner = this.uint32() & 7; inner !== 4; inner = this.uint32() & 7) this.skipType(inner, depth + 1);
        return;
      case 5:
        return this.skip(4);
      default:
        throw new Error(`invalid wire type ${wireType} at offset ${this.pos}`);
    }
  }
}

/**
 * The serving status of a `HealthCheckResponse`, named as proto-loader named it (`enums:
 * String, defaults: true`): a known value by its name, an unknown one by its number, an
 * absent field as `UNKNOWN`. The last occurrence of field 1 wins; other fields are skipped.
 * Throws protobufjs's error for a malformed message.
 */
export function decodeServingStatus(message: Buffer): string {
  const reader = new Reader(message);
  let status = 0;
  while (reader.pos < reader.len) {
    const tag = reader.uint32();
    // protobufjs's generated decoder reads field 1 as an int32 whatever its wire type.
    if (tag >>> 3 === 1) status = reader.uint32() | 0;
    else reader.skipType(tag & 7);
  }
  return SERVING_STATUS_NAMES[status] ?? String(status);
}
