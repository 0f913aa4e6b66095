// A small protobuf encoder (wire format: https://protobuf.dev/programming-guides/encoding/): varints,
// zigzag sint32, 64-bit varints from two 32-bit halves or an exact integer double, UTF-8 strings, and
// length-delimited nested messages whose lengths are back-patched. No schema, no objects per field: the
// caller writes tags and values in order into one growing byte buffer, which it hands over with take().
//
// Nested messages: begin(field) writes the tag and reserves one byte for the length; end() writes the
// length there. A message of 128 bytes or more needs a longer varint: its content is moved right by the
// missing bytes (one copyWithin per such message — per bundle or packet, never per small message), so
// every length is the minimal varint encoding.
// Browser-safe: no node imports.

/** Wire types. */
export const VARINT = 0;
export const I64 = 1;
export const LEN = 2;
export const I32 = 5;

const TWO_32 = 4294967296;
const utf8 = new TextEncoder();

/** Bytes of the varint encoding of an unsigned 32-bit value. */
export function varint32Size(v: number): number {
  v >>>= 0;
  return v < 0x80 ? 1 : v < 0x4000 ? 2 : v < 0x200000 ? 3 : v < 0x10000000 ? 4 : 5;
}

/**
 * Writes the varint of an unsigned 32-bit value at b[p] (room checked by the caller); returns the position
 * after it. For hot loops that write whole small messages at once.
 */
export function putVarint32(b: Uint8Array, p: number, v: number): number {
  v >>>= 0;
  while (v > 0x7f) {
    b[p++] = (v & 0x7f) | 0x80;
    v >>>= 7;
  }
  b[p++] = v;
  return p;
}

/** Writes the 64-bit varint of (lo, hi) halves at b[p] (up to 10 bytes, room checked by the caller). */
export function putVarint64(b: Uint8Array, p: number, lo: number, hi: number): number {
  lo >>>= 0;
  hi >>>= 0;
  while (hi !== 0) {
    b[p++] = (lo & 0x7f) | 0x80;
    lo = ((lo >>> 7) | (hi << 25)) >>> 0;
    hi >>>= 7;
  }
  return putVarint32(b, p, lo);
}

export class ProtoWriter {
  /** the buffer being written (reallocated when it grows and by take()) */
  buf: Uint8Array;
  /** bytes written */
  pos = 0;
  /** start offsets (after the reserved length byte) of the messages begun and not ended */
  private readonly stack: number[] = [];

  constructor(initialSize = 1 << 16) {
    this.buf = new Uint8Array(initialSize);
  }

  /** Makes room for `n` more bytes. */
  ensure(n: number): void {
    if (this.pos + n <= this.buf.length) return;
    let size = this.buf.length * 2;
    while (size < this.pos + n) size *= 2;
    const next = new Uint8Array(size);
    next.set(this.buf.subarray(0, this.pos));
    this.buf = next;
  }

  /** Nested messages begun and not yet ended. */
  get depth(): number {
    return this.stack.length;
  }

  /**
   * Hands over a copy of the bytes written so far (the caller owns it) and starts again at the beginning
   * of the same buffer, which keeps its size: the only allocation per take() is the output itself.
   * Only between top-level messages.
   */
  take(): Uint8Array {
    if (this.stack.length) throw new Error('ProtoWriter.take() inside an open message');
    const out = this.buf.slice(0, this.pos);
    this.pos = 0;
    return out;
  }

  /** An unsigned 32-bit varint (values are taken modulo 2^32). */
  varint32(v: number): void {
    this.ensure(5);
    this.pos = putVarint32(this.buf, this.pos, v);
  }

  /** A 64-bit varint from its low and high 32-bit halves (two's complement for negative values). */
  varint64(lo: number, hi: number): void {
    this.ensure(10);
    this.pos = putVarint64(this.buf, this.pos, lo, hi);
  }

  /**
   * A 64-bit varint of an integer held in a double (exact below 2^53 in magnitude); negative values are
   * written as their 64-bit two's complement (10 bytes), as int64/uint64 fields carry them.
   */
  varintNumber(v: number): void {
    if (v >= 0 && v < TWO_32) {
      this.varint32(v);
      return;
    }
    const hi = Math.floor(v / TWO_32);
    this.varint64(v - hi * TWO_32, hi);
  }

  /** A 64-bit varint of a bigint (two's complement below 0; taken modulo 2^64). */
  varintBigInt(v: bigint): void {
    const u = BigInt.asUintN(64, v);
    this.varint64(Number(u & 0xffffffffn), Number(u >> 32n));
  }

  /** An int32 / enum value: negative values take 10 bytes (sign-extended to 64 bits), as the wire format says. */
  int32(v: number): void {
    v |= 0;
    if (v >= 0) this.varint32(v);
    else this.varint64(v >>> 0, 0xffffffff);
  }

  /** A sint32 value (zigzag). */
  sint32(v: number): void {
    v |= 0;
    this.varint32(((v << 1) ^ (v >> 31)) >>> 0);
  }

  /** A field key: field number and wire type. */
  tag(field: number, wireType: number): void {
    this.varint32(((field << 3) | wireType) >>> 0);
  }

  /** A uint32 field. */
  uint32Field(field: number, v: number): void {
    this.tag(field, VARINT);
    this.varint32(v);
  }

  /** An int32 or enum field. */
  int32Field(field: number, v: number): void {
    this.tag(field, VARINT);
    this.int32(v);
  }

  /** A sint32 field. */
  sint32Field(field: number, v: number): void {
    this.tag(field, VARINT);
    this.sint32(v);
  }

  /** A string field (UTF-8; lone surrogates become U+FFFD). */
  stringField(field: number, s: string): void {
    this.begin(field);
    this.ensure(s.length * 3);
    const { written } = utf8.encodeInto(s, this.buf.subarray(this.pos));
    this.pos += written;
    this.end();
  }

  /** Starts a length-delimited field (a nested message): end() closes it. */
  begin(field: number): void {
    this.tag(field, LEN);
    this.ensure(1);
    this.pos++;
    this.stack.push(this.pos);
  }

  /** Closes the innermost begin(): writes its length, moving the content right if it needs more than one byte. */
  end(): void {
    const start = this.stack.pop();
    if (start === undefined) throw new Error('ProtoWriter.end() without begin()');
    const len = this.pos - start;
    if (len < 0x80) {
      this.buf[start - 1] = len;
      return;
    }
    const extra = varint32Size(len) - 1;
    this.ensure(extra);
    const b = this.buf;
    b.copyWithin(start + extra, start, this.pos);
    let p = start - 1;
    let v = len;
    while (v > 0x7f) {
      b[p++] = (v & 0x7f) | 0x80;
      v >>>= 7;
    }
    b[p] = v;
    this.pos += extra;
  }
}
