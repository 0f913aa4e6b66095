// Exact tick conversions for text output without a BigInt per cell: --time ns (nanoseconds since the
// trace anchor), --time filetime (FILETIME) and duration columns (ticks → ns, truncated toward zero as
// BigInt division does). The value arrives as the two 32-bit halves of an i64 and leaves as decimal digits.
//
// Fast path (every realistic trace): the ticks relative to the anchor fit in 2^52, the clock ratio
// 10^9/f (10^7/f) reduced to num/den has den < 2^32, and the result fits in 2^53 (ns) or is the anchor's
// FILETIME plus such a number (FILETIME, added in 32-bit halves). Then
//   floor(a·num/den) = q·num + floor(r·num/den), a = q·den + r, 0 ≤ r < den,
// where r·num is split in two 15-bit halves of num so no product reaches 2^53. Anything outside that
// (hostile timestamps, a Clock not made by createClock) takes the clock's own BigInt conversion, so the
// digits are always those of Clock.toNanoseconds / toFileTime / the BigInt formula. A result outside the
// int64 range (only from corrupt ticks or clocks) is no value (NO_TICK_VALUE): the row loop writes null,
// as Arrow and Parquet store it (src/output/nanos.ts) — one rule for out-of-range times in every output.
import { linearClock, type Clock } from '../time.js';
import { writeI64, writeSafe } from './digits.js';

export type TickConversion = 'ns' | 'filetime' | 'duration';

/** What TickWriter.write returns for a value outside the int64 range: the cell is null. */
export const NO_TICK_VALUE = -1;
const I64_MIN = -(2n ** 63n);
const I64_MAX = 2n ** 63n - 1n;

const TWO_32 = 4294967296;
const TWO_53 = 9007199254740992;
/** |hi − anchorHi| below this: the tick difference fits in 2^52 + 2^32 */
const HI_LIMIT = 0x100000;

function gcd(a: bigint, b: bigint): bigint {
  while (b !== 0n) [a, b] = [b, a % b];
  return a < 0n ? -a : a;
}

/** the signed 32-bit halves of an int64 bigint */
function halves(v: bigint): [hi: number, lo: number] {
  const u = BigInt.asUintN(64, v);
  return [Number(BigInt.asIntN(32, u >> 32n)), Number(u & 0xffffffffn)];
}

export class TickWriter {
  private readonly fast: boolean;
  private readonly anchorHi: number = 0;
  private readonly anchorLo: number = 0;
  private readonly num: number = 1;
  private readonly den: number = 1;
  private readonly numHi: number = 0;
  private readonly numLo: number = 0;
  /** r·num stays below 2^53 for every r < den */
  private readonly direct: boolean = true;
  /** largest |q| whose q·num + (num − 1) is below 2^53 */
  private readonly qLimit: number = 0;
  private readonly originHi: number = 0;
  private readonly originLo: number = 0;

  constructor(
    private readonly clock: Clock,
    private readonly kind: TickConversion,
  ) {
    const lin = linearClock(clock);
    const perSecond = kind === 'filetime' ? 10_000_000n : 1_000_000_000n;
    const f = kind === 'duration' ? clock.ticksPerSecond : lin?.ticksPerSecond;
    const g = f !== undefined && f > 0n ? gcd(perSecond, f) : 0n;
    const den = g ? f! / g : 0n;
    const origin = lin?.fileTimeOrigin ?? 0n;
    this.fast =
      (kind === 'duration' || (lin !== null && BigInt.asIntN(64, lin.anchorTicks) === lin.anchorTicks)) &&
      den > 0n &&
      den < BigInt(TWO_32) &&
      (kind !== 'filetime' || (origin > -(2n ** 62n) && origin < 2n ** 62n));
    if (!this.fast) return;
    if (kind !== 'duration') [this.anchorHi, this.anchorLo] = halves(lin!.anchorTicks);
    [this.originHi, this.originLo] = halves(origin);
    this.num = Number(perSecond / g);
    this.den = Number(den);
    this.numHi = Math.floor(this.num / 32768);
    this.numLo = this.num - this.numHi * 32768;
    this.direct = this.den * this.num <= TWO_53;
    this.qLimit = Math.floor((TWO_53 - 2 * this.num) / this.num);
  }

  /**
   * Writes the converted value of the i64 whose halves are hi (signed) and lo (unsigned) at `pos`;
   * returns the position after it (up to 3 more bytes may be stored past it, as digits.ts writers do),
   * or NO_TICK_VALUE, having written nothing, when the value does not fit in an int64.
   * Room for MAX_TICK_TEXT bytes is the caller's to provide.
   */
  write(out: DataView, pos: number, hi: number, lo: number): number {
    if (this.fast) {
      const dhi = hi - this.anchorHi;
      if (dhi > -HI_LIMIT && dhi < HI_LIMIT) {
        const a = dhi * TWO_32 + (lo - this.anchorLo); // exact: |a| < 2^52 + 2^32
        if (this.kind === 'duration') {
          const v = a < 0 ? -this.scale(-a) : this.scale(a); // BigInt division truncates toward zero
          if (v === v) return writeSafe(out, pos, v);
        } else {
          const v = this.scale(a);
          if (v === v) {
            if (this.kind === 'ns') return writeSafe(out, pos, v);
            // FILETIME = origin + v, in 32-bit halves (|origin| < 2^62, |v| < 2^53: no overflow)
            const vhi = Math.floor(v / TWO_32);
            let sumLo = this.originLo + (v - vhi * TWO_32);
            let carry = 0;
            if (sumLo >= TWO_32) {
              sumLo -= TWO_32;
              carry = 1;
            }
            return writeI64(out, pos, this.originHi + vhi + carry, sumLo);
          }
        }
      }
    }
    return this.writeSlow(out, pos, hi, lo);
  }

  /** floor(a·num/den) exactly, or NaN when it would not be below 2^53 */
  private scale(a: number): number {
    const num = this.num;
    const den = this.den;
    if (den === 1) return a * num < TWO_53 && a * num > -TWO_53 ? a * num : NaN;
    let q = Math.floor(a / den);
    let r = a - q * den;
    if (r < 0) {
      q -= 1;
      r += den;
    } else if (r >= den) {
      q += 1;
      r -= den;
    }
    if (q > this.qLimit || q < -this.qLimit) return NaN;
    return q * num + this.mulDiv(r);
  }

  /** floor(r·num/den) for 0 ≤ r < den < 2^32, num < 2^30 */
  private mulDiv(r: number): number {
    const den = this.den;
    if (this.direct) return floorDiv(r * this.num, den);
    // r·num = r·numHi·2^15 + r·numLo; with r·numHi = q1·den + r1:
    // floor(r·num/den) = q1·2^15 + floor((r1·2^15 + r·numLo)/den), every product below 2^48
    const x1 = r * this.numHi;
    const q1 = floorDiv(x1, den);
    const r1 = x1 - q1 * den;
    return q1 * 32768 + floorDiv(r1 * 32768 + r * this.numLo, den);
  }

  /** The clock's own BigInt conversion (exact for any input). */
  private writeSlow(out: DataView, pos: number, hi: number, lo: number): number {
    const t = BigInt.asIntN(64, (BigInt(hi >>> 0) << 32n) | BigInt(lo >>> 0));
    const v =
      this.kind === 'ns'
        ? this.clock.toNanoseconds(t)
        : this.kind === 'filetime'
          ? this.clock.toFileTime(t)
          : (t * 1_000_000_000n) / this.clock.ticksPerSecond;
    if (v < I64_MIN || v > I64_MAX) return NO_TICK_VALUE;
    const s = v.toString();
    for (let i = 0; i < s.length; i++) out.setUint8(pos + i, s.charCodeAt(i));
    return pos + s.length;
  }
}

/** floor(x/d) for integers 0 ≤ x < 2^53, d > 0 (the float quotient corrected) */
function floorDiv(x: number, d: number): number {
  let q = Math.floor(x / d);
  const r = x - q * d;
  if (r < 0) q -= 1;
  else if (r >= d) q += 1;
  return q;
}

/** Bytes of the longest text a conversion can store (an int64: at most 20 characters), overhang included. */
export const MAX_TICK_TEXT = 48;
