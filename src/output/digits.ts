// Decimal digits written as ASCII bytes straight into a buffer (through a DataView), with number arithmetic
// only (no string, no BigInt): 32-bit integers, safe integers (|v| < 2^53) and 64-bit integers given as two
// 32-bit halves. Groups of up to 4 digits come from tables and are stored 4 bytes at a time, so a writer
// may store up to 3 bytes past the position it returns (they are overwritten by whatever comes next).
// Every writer returns the position after the last digit; the caller makes sure there is room for
// MAX_INT64_DIGITS + DIGITS_OVERHANG bytes.
import { floorDiv } from '../time.js';

/** Bytes of the longest decimal 64-bit integer ("-9223372036854775808", "18446744073709551615"). */
export const MAX_INT64_DIGITS = 20;
/** Bytes a writer may store past the position it returns. */
export const DIGITS_OVERHANG = 3;

const ZERO = 48;
const MINUS = 45;
const TWO_32 = 4294967296;

/** the 4 digits of 0 ≤ v < 10^4, zero-padded, as a little-endian word ("0042" → '0' '0' '4' '2') */
const PADDED = new Int32Array(10000);
/** the digits of 0 ≤ v < 10^4 without padding, from the low byte up ("42" → '4' '2' 0 0), and their count */
const PLAIN = new Int32Array(10000);
const PLAIN_LENGTH = new Uint8Array(10000);
for (let v = 0; v < 10000; v++) {
  // (plain arithmetic: this runs at import, before any of it is optimized)
  const d0 = ZERO + ((v / 1000) | 0);
  const d1 = ZERO + (((v / 100) | 0) % 10);
  const d2 = ZERO + (((v / 10) | 0) % 10);
  const d3 = ZERO + (v % 10);
  PADDED[v] = d0 | (d1 << 8) | (d2 << 16) | (d3 << 24);
  const n = v < 10 ? 1 : v < 100 ? 2 : v < 1000 ? 3 : 4;
  PLAIN[v] = n === 4 ? PADDED[v]! : n === 3 ? d1 | (d2 << 8) | (d3 << 16) : n === 2 ? d2 | (d3 << 8) : d3;
  PLAIN_LENGTH[v] = n;
}

/** Exactly 4 digits of 0 ≤ v < 10^4, zero-padded. */
function write4(out: DataView, pos: number, v: number): number {
  out.setInt32(pos, PADDED[v]!, true);
  return pos + 4;
}

// writeU32 and writeUSafe take every cell of most tables: each is one flat function (its groups stored
// inline, no call below it), as a row loop cannot inline them all.

/** The digits of 0 ≤ v < 2^32 (at most two divisions). */
export function writeU32(out: DataView, pos: number, v: number): number {
  if (v < 10000) {
    out.setInt32(pos, PLAIN[v]!, true);
    return pos + PLAIN_LENGTH[v]!;
  }
  if (v < 100000000) {
    const a = (v / 10000) >>> 0; // exact floor: v < 2^32
    out.setInt32(pos, PLAIN[a]!, true);
    pos += PLAIN_LENGTH[a]!;
    out.setInt32(pos, PADDED[v - a * 10000]!, true);
    return pos + 4;
  }
  const a = (v / 100000000) >>> 0; // ≤ 42
  const b = v - a * 100000000;
  const c = (b / 10000) >>> 0;
  out.setInt32(pos, PLAIN[a]!, true);
  pos += PLAIN_LENGTH[a]!;
  out.setInt32(pos, PADDED[c]!, true);
  out.setInt32(pos + 4, PADDED[b - c * 10000]!, true);
  return pos + 8;
}

/** Exactly 6 digits of 0 ≤ v < 10^6, zero-padded. */
function write6(out: DataView, pos: number, v: number): number {
  const a = (v / 10000) >>> 0; // < 100: the last two of its 4 padded digits
  out.setUint16(pos, PADDED[a]! >>> 16, true);
  return write4(out, pos + 2, v - a * 10000);
}

/** The digits of an integer 0 ≤ v < 2^53. */
export function writeUSafe(out: DataView, pos: number, v: number): number {
  if (v < 10000) {
    out.setInt32(pos, PLAIN[v]!, true);
    return pos + PLAIN_LENGTH[v]!;
  }
  // v = hi·10^8 + lo (below 2^53: hi < 2^27), every step exact
  const hi = Math.floor(v / 1e8);
  const lo = v - hi * 1e8;
  const a = (lo / 10000) >>> 0;
  if (hi === 0) {
    out.setInt32(pos, PLAIN[a]!, true);
    pos += PLAIN_LENGTH[a]!;
  } else {
    if (hi < 10000) {
      out.setInt32(pos, PLAIN[hi]!, true);
      pos += PLAIN_LENGTH[hi]!;
    } else if (hi >= 100000000) {
      pos = writeU32(out, pos, hi); // an exact double at or beyond 2^53 (10^16, …): as the number prints
    } else {
      const h = (hi / 10000) >>> 0;
      out.setInt32(pos, PLAIN[h]!, true);
      pos += PLAIN_LENGTH[h]!;
      out.setInt32(pos, PADDED[hi - h * 10000]!, true);
      pos += 4;
    }
    out.setInt32(pos, PADDED[a]!, true);
    pos += 4;
  }
  out.setInt32(pos, PADDED[lo - a * 10000]!, true);
  return pos + 4;
}

/** The digits of an integer |v| < 2^53, with '-' when negative (-0 is "0", as String(-0)). */
export function writeSafe(out: DataView, pos: number, v: number): number {
  if (v < 0) {
    out.setUint8(pos, MINUS);
    return writeUSafe(out, pos + 1, -v);
  }
  return writeUSafe(out, pos, v);
}

/** The digits of a 32-bit signed integer (i8, i16, i32 columns). */
export function writeI32(out: DataView, pos: number, v: number): number {
  if (v < 0) {
    out.setUint8(pos, MINUS);
    return writeU32(out, pos + 1, -v);
  }
  return writeU32(out, pos, v);
}

/** The digits of the unsigned 64-bit integer hi·2^32 + lo (0 ≤ hi, lo < 2^32). */
export function writeU64(out: DataView, pos: number, hi: number, lo: number): number {
  if (hi < 0x200000) return writeUSafe(out, pos, hi * TWO_32 + lo); // < 2^53: exact as a number
  // long division by 10^6 in two steps, every intermediate below 2^53:
  //   hi = qh·10^6 + rh;  rh·2^32 + lo = ql·10^6 + r  (< 10^6·2^32 < 2^53)
  //   value = (qh·2^32 + ql)·10^6 + r, and qh·2^32 + ql < 2^64 / 10^6 < 2^45
  const qh = floorDiv(hi, 1e6);
  const x = (hi - qh * 1e6) * TWO_32 + lo;
  const ql = floorDiv(x, 1e6);
  return write6(out, writeUSafe(out, pos, qh * TWO_32 + ql), x - ql * 1e6);
}

/** The digits of the signed 64-bit integer whose two's complement halves are hi (signed or not) and lo (0 ≤ lo < 2^32). */
export function writeI64(out: DataView, pos: number, hi: number, lo: number): number {
  if (hi >= 0 && hi < 0x80000000) return writeU64(out, pos, hi, lo);
  hi |= 0; // the sign bit, whichever way hi was read
  // magnitude = 2^64 − value: negate the 64-bit two's complement
  out.setUint8(pos, MINUS);
  if (lo === 0) return writeU64(out, pos + 1, -hi, 0); // -hi in 1 … 2^31
  return writeU64(out, pos + 1, ~hi >>> 0, TWO_32 - lo);
}

const HEX = [48, 49, 50, 51, 52, 53, 54, 55, 56, 57, 97, 98, 99, 100, 101, 102];

/** The unsigned 64-bit integer hi·2^32 + lo (0 ≤ hi, lo < 2^32) as an address: 0x and lowercase hex digits, no padding (0x0). */
export function writeHex64(out: DataView, pos: number, hi: number, lo: number): number {
  out.setUint8(pos++, 48); // 0
  out.setUint8(pos++, 120); // x
  let started = false;
  for (let k = 28; k >= 0; k -= 4) {
    const d = (hi >>> k) & 15;
    if (d !== 0 || started) {
      out.setUint8(pos++, HEX[d]!);
      started = true;
    }
  }
  for (let k = 28; k >= 0; k -= 4) {
    const d = (lo >>> k) & 15;
    if (d !== 0 || started || k === 0) {
      out.setUint8(pos++, HEX[d]!);
      started = true;
    }
  }
  return pos;
}
