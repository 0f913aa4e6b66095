// Deterministic pseudo-random numbers for synthetic traces (no Math.random).
// xoshiro128** (period 2^128 − 1), seeded from a u32 through splitmix32. Browser-safe.

function splitmix32(state: { s: number }): number {
  state.s = (state.s + 0x9e3779b9) | 0;
  let z = state.s;
  z = Math.imul(z ^ (z >>> 16), 0x85ebca6b);
  z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35);
  return (z ^ (z >>> 16)) >>> 0;
}

export class Rng {
  private a: number;
  private b: number;
  private c: number;
  private d: number;

  constructor(seed: number) {
    if (!Number.isFinite(seed)) throw new RangeError(`Rng seed: ${seed} is not a finite number`);
    const st = { s: Math.trunc(seed) | 0 };
    this.a = splitmix32(st) | 0;
    this.b = splitmix32(st) | 0;
    this.c = splitmix32(st) | 0;
    this.d = splitmix32(st) | 0;
    if ((this.a | this.b | this.c | this.d) === 0) this.a = 1;
  }

  /** next u32 */
  next(): number {
    const b = this.b;
    // xoshiro128**: result = rotl(b * 5, 7) * 9
    const m = Math.imul(b, 5);
    const result = Math.imul((m << 7) | (m >>> 25), 9) >>> 0;
    const t = b << 9;
    this.c ^= this.a;
    this.d ^= this.b;
    this.b ^= this.c;
    this.a ^= this.d;
    this.c ^= t;
    this.d = (this.d << 11) | (this.d >>> 21);
    return result;
  }

  /** uniform float in [0, 1) with 32 bits of randomness */
  float(): number {
    return this.next() / 4294967296;
  }

  /** uniform integer in [lo, hi] (both inclusive); hi − lo must be < 2^53 */
  int(lo: number, hi: number): number {
    if (!Number.isInteger(lo) || !Number.isInteger(hi) || hi < lo) {
      throw new RangeError(`Rng.int: bad range [${lo}, ${hi}]`);
    }
    const span = hi - lo + 1;
    if (span <= 4294967296) return lo + Math.floor((this.next() / 4294967296) * span);
    // 53-bit uniform
    const x = (this.next() >>> 5) * 67108864 + (this.next() >>> 6);
    return lo + Math.floor((x / 9007199254740992) * span);
  }

  /** uniform u64 as a bigint */
  bigint64(): bigint {
    const hi = this.next();
    const lo = this.next();
    return (BigInt(hi) << 32n) | BigInt(lo);
  }

  /** n random bytes */
  bytes(n: number): Uint8Array {
    const out = new Uint8Array(n);
    let i = 0;
    for (; i + 4 <= n; i += 4) {
      const v = this.next();
      out[i] = v & 0xff;
      out[i + 1] = (v >>> 8) & 0xff;
      out[i + 2] = (v >>> 16) & 0xff;
      out[i + 3] = v >>> 24;
    }
    if (i < n) {
      let v = this.next();
      for (; i < n; i++) {
        out[i] = v & 0xff;
        v >>>= 8;
      }
    }
    return out;
  }

  /** a uniformly chosen element */
  pick<T>(a: readonly T[]): T {
    if (a.length === 0) throw new RangeError('Rng.pick: empty array');
    return a[Math.floor((this.next() / 4294967296) * a.length)];
  }

  /** true with probability p */
  chance(p: number): boolean {
    return this.next() < p * 4294967296;
  }
}
