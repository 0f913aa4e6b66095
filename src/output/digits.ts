// Decimal digits written as ASCII bytes straight into a Uint8Array, with number arithmetic only (no string,
// no BigInt): 32-bit integers, safe integers (|v| < 2^53) and 64-bit integers given as two 32-bit halves.
// Every writer returns the position after the last byte; the caller makes sure there is room
// (MAX_INT64_DIGITS bytes at most, sign included).

/** Bytes of the longest decimal 64-bit integer ("-9223372036854775808", "18446744073709551615"). */
export const MAX_INT64_DIGITS = 20;

const ZERO = 48;
const MINUS = 45;
const TWO_32 = 4294967296;

/** "00" … "99": the two ASCII digits of n at [2n, 2n + 1]. */
const PAIRS = new Uint8Array(200);
for (let n = 0; n < 100; n++) {
  PAIRS[2 * n] = ZERO + Math.floor(n / 10);
  PAIRS[2 * n + 1] = ZERO + (n % 10);
}

/** Exactly 4 digits of 0 ≤ v < 10^4, zero-padded. */
function write4(buf: Uint8Array, pos: number, v: number): number {
  const q = (v * 5243) >>> 19; // floor(v / 100) for v < 43699, in integer arithmetic
  const r = 2 * (v - 100 * q);
  buf[pos] = PAIRS[2 * q]!;
  buf[pos + 1] = PAIRS[2 * q + 1]!;
  buf[pos + 2] = PAIRS[r]!;
  buf[pos + 3] = PAIRS[r + 1]!;
  return pos + 4;
}

/** The 1 to 4 digits of 0 ≤ v < 10^4. */
function writeUpTo4(buf: Uint8Array, pos: number, v: number): number {
  if (v < 10) {
    buf[pos] = ZERO + v;
    return pos + 1;
  }
  if (v < 100) {
    buf[pos] = PAIRS[2 * v]!;
    buf[pos + 1] = PAIRS[2 * v + 1]!;
    return pos + 2;
  }
  const q = (v * 5243) >>> 19;
  const r = 2 * (v - 100 * q);
  if (q < 10) {
    buf[pos] = ZERO + q;
    pos += 1;
  } else {
    buf[pos] = PAIRS[2 * q]!;
    buf[pos + 1] = PAIRS[2 * q + 1]!;
    pos += 2;
  }
  buf[pos] = PAIRS[r]!;
  buf[pos + 1] = PAIRS[r + 1]!;
  return pos + 2;
}

/** The digits of 0 ≤ v < 2^32 (at most two divisions; the rest in 4-digit groups). */
export function writeU32(buf: Uint8Array, pos: number, v: number): number {
  if (v < 10000) return writeUpTo4(buf, pos, v);
  if (v < 100000000) {
    const a = (v / 10000) >>> 0; // exact floor: v < 2^32
    return write4(buf, writeUpTo4(buf, pos, a), v - a * 10000);
  }
  const a = (v / 100000000) >>> 0; // ≤ 42
  const b = v - a * 100000000;
  const c = (b / 10000) >>> 0;
  return write4(buf, write4(buf, writeUpTo4(buf, pos, a), c), b - c * 10000);
}

/** Exactly 8 digits of 0 ≤ v < 10^8, zero-padded. */
function write8(buf: Uint8Array, pos: number, v: number): number {
  const a = (v / 10000) >>> 0;
  return write4(buf, write4(buf, pos, a), v - a * 10000);
}

/** Exactly 6 digits of 0 ≤ v < 10^6, zero-padded. */
function write6(buf: Uint8Array, pos: number, v: number): number {
  const a = (v / 10000) >>> 0; // < 100
  buf[pos] = PAIRS[2 * a]!;
  buf[pos + 1] = PAIRS[2 * a + 1]!;
  return write4(buf, pos + 2, v - a * 10000);
}

/** The digits of an integer 0 ≤ v < 2^53. */
export function writeUSafe(buf: Uint8Array, pos: number, v: number): number {
  if (v < TWO_32) return writeU32(buf, pos, v);
  // v = hi·10^8 + lo with hi < 2^27; the quotient of the float division is corrected, never trusted
  let hi = Math.floor(v / 1e8);
  let lo = v - hi * 1e8;
  if (lo < 0) {
    hi -= 1;
    lo += 1e8;
  } else if (lo >= 1e8) {
    hi += 1;
    lo -= 1e8;
  }
  return write8(buf, writeU32(buf, pos, hi), lo);
}

/** The digits of an integer |v| < 2^53, with '-' when negative (-0 is "0", as String(-0)). */
export function writeSafe(buf: Uint8Array, pos: number, v: number): number {
  if (v < 0) {
    buf[pos] = MINUS;
    return writeUSafe(buf, pos + 1, -v);
  }
  return writeUSafe(buf, pos, v);
}

/** The digits of a 32-bit signed integer (i8, i16, i32 columns). */
export function writeI32(buf: Uint8Array, pos: number, v: number): number {
  if (v < 0) {
    buf[pos] = MINUS;
    return writeU32(buf, pos + 1, -v);
  }
  return writeU32(buf, pos, v);
}

/** The digits of the unsigned 64-bit integer hi·2^32 + lo (0 ≤ hi, lo < 2^32). */
export function writeU64(buf: Uint8Array, pos: number, hi: number, lo: number): number {
  if (hi < 0x200000) return writeUSafe(buf, pos, hi * TWO_32 + lo); // < 2^53: exact as a number
  // long division by 10^6 in two steps, every intermediate below 2^53:
  //   hi = qh·10^6 + rh;  rh·2^32 + lo = ql·10^6 + r  (< 10^6·2^32 < 2^53)
  //   value = (qh·2^32 + ql)·10^6 + r, and qh·2^32 + ql < 2^64 / 10^6 < 2^45
  let qh = Math.floor(hi / 1e6);
  let rh = hi - qh * 1e6;
  if (rh < 0) {
    qh -= 1;
    rh += 1e6;
  } else if (rh >= 1e6) {
    qh += 1;
    rh -= 1e6;
  }
  const x = rh * TWO_32 + lo;
  let ql = Math.floor(x / 1e6);
  let r = x - ql * 1e6;
  if (r < 0) {
    ql -= 1;
    r += 1e6;
  } else if (r >= 1e6) {
    ql += 1;
    r -= 1e6;
  }
  return write6(buf, writeUSafe(buf, pos, qh * TWO_32 + ql), r);
}

/** The digits of the signed 64-bit integer whose two's complement halves are hi (signed or not) and lo (0 ≤ lo < 2^32). */
export function writeI64(buf: Uint8Array, pos: number, hi: number, lo: number): number {
  if (hi >= 0 && hi < 0x80000000) return writeU64(buf, pos, hi, lo);
  hi |= 0; // the sign bit, whichever way hi was read
  // magnitude = 2^64 − value: negate the 64-bit two's complement
  buf[pos] = MINUS;
  if (lo === 0) return writeU64(buf, pos + 1, -hi, 0); // -hi in 1 … 2^31
  return writeU64(buf, pos + 1, ~hi >>> 0, TWO_32 - lo);
}
