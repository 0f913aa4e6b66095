// Columns of raw ticks → int64 nanoseconds, exact and without a BigInt per value.
//   time:     floor((t − T0) · 10^9 / f)   (Clock.toNanoseconds: ns since the trace start)
//   duration: trunc(d · 10^9 / f)          (the CSV --time ns conversion of tick differences)
// 10^9/f is reduced to num/den (divided by their gcd). While |d| and |ns| ≤ 2^52 and den·num ≤ 2^52, every step
// below is an exact double operation: d from the two 32-bit halves (d = (hi − H0)·2^32 + (lo − L0)),
// q = floor(d / den) and r = d − q·den (corrected by one when the division rounded), then
// ns = q·num + floor(r·num / den) (same correction), written back as two 32-bit halves. Values outside
// that range (and clocks whose reduced fraction is too wide) take the BigInt path, one value at a time.
// Typed arrays are little-endian on every platform JavaScript runs on (WebAssembly memory is too).
import type { Clock } from '../time.js';

const TWO32 = 4294967296;
const LIMIT = 2 ** 52;

function gcd(a: bigint, b: bigint): bigint {
  while (b !== 0n) [a, b] = [b, a % b];
  return a < 0n ? -a : a;
}

/** floor(x / den) for an integer 0 ≤ |x| ≤ 2^52 held exactly in a double. */
function floorDiv(x: number, den: number): number {
  let q = Math.floor(x / den);
  const r = x - q * den;
  if (r < 0) q -= 1;
  else if (r >= den) q += 1;
  return q;
}

const I64_MIN = -(2n ** 63n);
const I64_MAX = 2n ** 63n - 1n;

export interface NanosecondsColumn {
  readonly values: BigInt64Array;
  /** validity: the input bitmap, or a copy with the cells whose nanoseconds do not fit in an int64 cleared */
  readonly bitmap: Uint8Array | null;
  readonly nullCount: number;
}

/**
 * Nanoseconds of a column of ticks: `time` since the clock's anchor, or a `duration`. Null cells (bit
 * clear in `bitmap`, when given) are 0; so are cells whose nanoseconds overflow an int64 (ticks centuries
 * away from the anchor, only in corrupt data), which become null.
 */
export function nanosecondsColumn(
  ticks: BigInt64Array,
  n: number,
  bitmap: Uint8Array | null,
  nullCount: number,
  clock: Clock,
  kind: 'time' | 'duration',
): NanosecondsColumn {
  const out = new BigInt64Array(n);
  if (n === 0) return { values: out, bitmap, nullCount };
  let valid = bitmap;
  let nulls = nullCount;
  const f = clock.ticksPerSecond;
  const g = gcd(1_000_000_000n, f);
  const numBig = 1_000_000_000n / g;
  const denBig = f / g;
  const fast = numBig * denBig <= BigInt(LIMIT);
  const num = Number(numBig);
  const den = Number(denBig);
  // |d| ≤ dMax keeps d and the result within ±2^52
  const dMax = fast ? Math.min(LIMIT, Number((BigInt(LIMIT) * denBig) / numBig)) : 0;
  const t0 = kind === 'time' ? clock.anchorTicks : 0n;
  const h0 = Number(BigInt.asIntN(32, t0 >> 32n));
  const l0 = Number(BigInt.asUintN(32, t0));
  const slow = (t: bigint): bigint => {
    if (kind === 'time') return clock.toNanoseconds(t);
    const p = t * 1_000_000_000n;
    return p / f; // BigInt division truncates, as the CSV conversion
  };
  const src = new Int32Array(ticks.buffer, ticks.byteOffset, 2 * n);
  const dst = new Int32Array(out.buffer, 0, 2 * n);
  for (let i = 0; i < n; i++) {
    if (valid !== null && ((valid[i >>> 3]! >>> (i & 7)) & 1) === 0) continue;
    const lo = src[2 * i]! >>> 0;
    const hi = src[2 * i + 1]!;
    const d = (hi - h0) * TWO32 + (lo - l0);
    if (!fast || d > dMax || d < -dMax) {
      const ns = slow(ticks[i]!);
      if (ns >= I64_MIN && ns <= I64_MAX) out[i] = ns;
      else {
        if (valid === null || valid === bitmap) valid = bitmap === null ? new Uint8Array((n + 7) >>> 3).fill(0xff) : bitmap.slice();
        valid[i >>> 3]! &= ~(1 << (i & 7));
        nulls++;
      }
      continue;
    }
    // durations truncate toward zero: convert |d| and put the sign back
    const neg = kind === 'duration' && d < 0;
    const a = neg ? -d : d;
    const q = floorDiv(a, den);
    let ns = q * num + floorDiv((a - q * den) * num, den);
    if (neg) ns = -ns;
    const nh = Math.floor(ns / TWO32);
    dst[2 * i] = (ns - nh * TWO32) | 0;
    dst[2 * i + 1] = nh;
  }
  return { values: out, bitmap: valid, nullCount: nulls };
}
