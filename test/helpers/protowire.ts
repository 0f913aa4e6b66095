// A schema-less protobuf wire reader for the tests, written from the wire format
// (https://protobuf.dev/programming-guides/encoding/) and importing nothing from src/: it splits a message
// into its fields — number, wire type, raw varint (bigint) or bytes — so a test can check field numbers
// and wire types as they are on the wire, whatever a schema-driven decoder would make of them.

export const WIRE = { VARINT: 0, I64: 1, LEN: 2, I32: 5 } as const;

export interface WireField {
  field: number;
  wireType: number;
  /** VARINT fields: the value as written (64 bits, unsigned) */
  varint?: bigint;
  /** VARINT fields: bytes the varint took, and whether that is its shortest encoding */
  varintBytes?: number;
  minimal?: boolean;
  /** LEN fields: the content */
  bytes?: Uint8Array;
}

function readVarint(buf: Uint8Array, at: number): { value: bigint; next: number } {
  let value = 0n;
  let shift = 0n;
  for (let i = 0; i < 10; i++) {
    if (at + i >= buf.length) throw new Error(`varint runs past the end at ${at}`);
    const b = buf[at + i]!;
    value |= BigInt(b & 0x7f) << shift;
    if ((b & 0x80) === 0) return { value: BigInt.asUintN(64, value), next: at + i + 1 };
    shift += 7n;
  }
  throw new Error(`varint longer than 10 bytes at ${at}`);
}

function varintSize(v: bigint): number {
  let n = 1;
  while (v >= 0x80n) {
    v >>= 7n;
    n++;
  }
  return n;
}

/** The fields of one message, in wire order. Throws on malformed input. */
export function readFields(buf: Uint8Array): WireField[] {
  const out: WireField[] = [];
  let at = 0;
  while (at < buf.length) {
    const key = readVarint(buf, at);
    at = key.next;
    const field = Number(key.value >> 3n);
    const wireType = Number(key.value & 7n);
    if (field === 0) throw new Error('field number 0');
    switch (wireType) {
      case WIRE.VARINT: {
        const v = readVarint(buf, at);
        const size = v.next - at;
        out.push({ field, wireType, varint: v.value, varintBytes: size, minimal: size === varintSize(v.value) });
        at = v.next;
        break;
      }
      case WIRE.LEN: {
        const len = readVarint(buf, at);
        const n = Number(len.value);
        if (len.next + n > buf.length) throw new Error(`length ${n} runs past the end at ${at}`);
        out.push({ field, wireType, bytes: buf.subarray(len.next, len.next + n), minimal: len.next - at === varintSize(len.value) });
        at = len.next + n;
        break;
      }
      case WIRE.I64:
        at += 8;
        out.push({ field, wireType });
        break;
      case WIRE.I32:
        at += 4;
        out.push({ field, wireType });
        break;
      default:
        throw new Error(`wire type ${wireType} at ${at}`);
    }
  }
  if (at !== buf.length) throw new Error('message runs past the end');
  return out;
}

/** sint32 from its zigzag varint */
export function unzigzag32(v: bigint): number {
  const n = Number(v & 0xffffffffn);
  return (n >>> 1) ^ -(n & 1);
}

/** int32 / enum from its varint (sign-extended to 64 bits when negative) */
export function int32Of(v: bigint): number {
  return Number(BigInt.asIntN(32, v));
}
