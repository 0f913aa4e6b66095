// Raw session-clock ticks → nanoseconds since the trace start, exactly, without a BigInt per value.
//
// With a clock the value is Clock.toNanoseconds(t) = floor((t − T0) · 10^9 / f) (src/time.ts). Here
// 10^9 / f is reduced to m / d (divided by their gcd), a timestamp is read as two 32-bit halves of its
// BigInt64Array cell, and the result is computed in doubles as q·m + floor(r·m / d) with q = floor(Δ / d),
// r = Δ − q·d, every step an exact integer below 2^53 (the floating quotients are corrected by one where
// rounding put them across an integer). When a value or an intermediate product could reach 2^53 — Δ ≥
// 2^52 ticks, or d·m ≥ 2^53 for an unusual frequency — the caller falls back to the BigInt conversion
// (`NaN` says so). A 10 MHz QPC clock (m = 100, d = 1) stays on the fast path for 104 days of trace.
//
// Without a clock (a trace whose clock type has no known conversion) the "nanoseconds" are raw ticks
// since an origin (the caller's, or the first timestamp converted): right order and proportions, unknown
// scale.
// Browser-safe: no node imports.
import type { Clock } from '../time.js';

const TWO_32 = 4294967296;
const SAFE = Number.MAX_SAFE_INTEGER; // 2^53 − 1

function gcd(a: bigint, b: bigint): bigint {
  while (b !== 0n) [a, b] = [b, a % b];
  return a;
}

export class NanosecondConverter {
  private originLo = 0;
  private originHi = 0;
  private origin: bigint | null;
  /** 10^9/f reduced: ns = floor(Δ·m/d); ticks: m = d = 1 */
  private readonly m: number;
  private readonly d: number;
  private readonly mBig: bigint;
  private readonly dBig: bigint;
  /** false when d·m ≥ 2^53: r·m might not be exact, every value takes the BigInt path */
  private readonly fast: boolean;

  /**
   * @param clock the trace's clock, or null to write raw ticks since `originTicks`
   * @param originTicks without a clock: the tick that maps to 0 (default: the first timestamp converted)
   */
  constructor(
    readonly clock: Clock | null,
    originTicks?: bigint,
  ) {
    if (clock) {
      const g = gcd(1_000_000_000n, clock.ticksPerSecond);
      this.mBig = 1_000_000_000n / g;
      this.dBig = clock.ticksPerSecond / g;
      this.origin = clock.anchorTicks;
    } else {
      this.mBig = 1n;
      this.dBig = 1n;
      this.origin = originTicks ?? null;
    }
    this.m = Number(this.mBig);
    this.d = Number(this.dBig);
    this.fast = this.mBig * this.dBig <= BigInt(SAFE);
    if (this.origin !== null) this.setOrigin(this.origin);
  }

  private setOrigin(t: bigint): void {
    this.origin = t;
    const u = BigInt.asUintN(64, t);
    this.originLo = Number(u & 0xffffffffn);
    this.originHi = Number(BigInt.asIntN(32, u >> 32n));
  }

  /** The tick that maps to 0 (null until the first conversion without a clock and without an origin). */
  get originTicks(): bigint | null {
    return this.origin;
  }

  /**
   * Nanoseconds (ticks without a clock) of the timestamp whose low and high 32-bit halves are `lo`
   * (unsigned) and `hi` (signed), as an exact integer double; NaN when it might not be exact (use bigint()).
   */
  fromHalves(lo: number, hi: number): number {
    if (this.origin === null) this.setOrigin(BigInt(hi) * 4294967296n + BigInt(lo >>> 0));
    const dhi = hi - this.originHi;
    if (dhi >= 0x100000 || dhi < -0x100000 || !this.fast) return NaN; // |Δ| < 2^52 + 2^32: exact
    const delta = dhi * TWO_32 + ((lo >>> 0) - this.originLo);
    const m = this.m;
    const d = this.d;
    if (d === 1) {
      const ns = delta * m;
      return ns <= SAFE && ns >= -SAFE ? ns : NaN;
    }
    let q = Math.floor(delta / d);
    let r = delta - q * d;
    if (r < 0) {
      q--;
      r += d;
    } else if (r >= d) {
      q++;
      r -= d;
    }
    const x = r * m; // < d·m < 2^53: exact
    let k = Math.floor(x / d);
    if (k * d > x) k--;
    else if ((k + 1) * d <= x) k++;
    const hiPart = q * m;
    if (hiPart > SAFE || hiPart < -SAFE) return NaN;
    const ns = hiPart + k;
    return ns <= SAFE && ns >= -SAFE ? ns : NaN;
  }

  /** The same value as a bigint, for any timestamp. */
  bigint(ticks: bigint): bigint {
    if (this.origin === null) this.setOrigin(ticks);
    if (this.clock) return this.clock.toNanoseconds(ticks);
    return ticks - this.origin!;
  }
}
