// The number-only decimal writers (src/output/digits.ts) and tick conversions as text (TickWriter of
// src/output/text.ts, on src/time.ts TickConverter) against BigInt: edge values (0, 2^32, 2^53 ± 1, 2^63,
// 2^64 − 1, the anchor ± 2^52 …), quotients just below an integer, and random values; the fast path is
// taken where it should be.
import { afterEach, describe, expect, test, vi } from 'vitest';
import fc from 'fast-check';
import { createClock, type Clock } from '../src/node.js';
import { DIGITS_OVERHANG, writeI32, writeI64, writeSafe, writeU32, writeU64 } from '../src/output/digits.js';
import { NO_TICK_VALUE, TickWriter } from '../src/output/text.js';
import { packNames } from '../src/output/row-loop.js';
import { TickConverter, type TickConversion } from '../src/time.js';

const buf = new Uint8Array(64);
const out = new DataView(buf.buffer);
const ascii = (end: number, start = 3) => String.fromCharCode(...buf.subarray(start, end));
const half = (v: bigint) => {
  const u = BigInt.asUintN(64, v);
  return { hi: Number(u >> 32n), lo: Number(u & 0xffffffffn) };
};

describe('digits', () => {
  const U64 = [0n, 1n, 9n, 10n, 99n, 100n, 2n ** 32n - 1n, 2n ** 32n, 10n ** 9n, 10n ** 10n, 2n ** 53n - 1n, 2n ** 53n, 2n ** 53n + 1n, 10n ** 16n, 10n ** 19n - 1n, 10n ** 19n, 2n ** 63n - 1n, 2n ** 63n, 2n ** 64n - 1n];
  test('u32, i32, safe integers: edges', () => {
    for (const v of [0, 1, 9, 10, 99, 100, 999, 1000, 99999999, 100000000, 999999999, 1000000000, 2 ** 31 - 1, 2 ** 31, 2 ** 32 - 1]) {
      expect(ascii(writeU32(out, 3, v))).toBe(String(v));
    }
    for (const v of [0, -1, 1, -128, 127, -(2 ** 31), 2 ** 31 - 1]) expect(ascii(writeI32(out, 3, v))).toBe(String(v));
    for (const v of [0, -0, 2 ** 32, 2 ** 32 + 1, 10 ** 8 * 2 ** 20, 10 ** 15, 10 ** 15 - 1, 2 ** 53 - 1, -(2 ** 53 - 1), 4503599627370497, 99999999_99999999 - 1]) {
      expect(ascii(writeSafe(out, 3, v))).toBe(String(v));
    }
  });

  test('u64 and i64 from 32-bit halves: edges and their neighbours', () => {
    for (const e of U64) {
      for (const v of [e - 1n, e, e + 1n].filter((x) => x >= 0n && x < 2n ** 64n)) {
        const { hi, lo } = half(v);
        expect(ascii(writeU64(out, 3, hi, lo))).toBe(v.toString());
        const s = BigInt.asIntN(64, v);
        expect(ascii(writeI64(out, 3, hi | 0, lo))).toBe(s.toString()); // hi read signed
        expect(ascii(writeI64(out, 3, hi, lo))).toBe(s.toString()); // or unsigned
      }
    }
  });

  test('u64 and i64: random values (property)', () => {
    fc.assert(
      fc.property(fc.bigInt({ min: 0n, max: 2n ** 64n - 1n }), (v) => {
        const { hi, lo } = half(v);
        expect(ascii(writeU64(out, 3, hi, lo))).toBe(v.toString());
        expect(ascii(writeI64(out, 3, hi | 0, lo))).toBe(BigInt.asIntN(64, v).toString());
      }),
      { numRuns: 5000 },
    );
  });

  test('stores nothing before pos and at most DIGITS_OVERHANG bytes past the returned position', () => {
    for (const [hi, lo, digits] of [[0xffffffff, 0xffffffff, 20], [0, 7, 1], [0, 42, 2], [0, 123456789, 9]] as const) {
      buf.fill(0xee);
      const end = writeU64(out, 5, hi, lo);
      expect(end).toBe(5 + digits);
      expect(buf[4]).toBe(0xee);
      expect(buf.subarray(end + DIGITS_OVERHANG).every((b) => b === 0xee)).toBe(true);
    }
  });
});

// ---- tick conversions

type Info = Parameters<typeof createClock>[0];
const CLOCKS: [string, Info][] = [
  ['QPC 10 MHz', { clockType: 1, perfFreq: 10_000_000n, cpuSpeedInMHz: 3000, headerTimestamp: 1_000_000n, startTime: 133_000_000_000_000_000n }],
  ['QPC 3.579545 MHz', { clockType: 1, perfFreq: 3_579_545n, cpuSpeedInMHz: 3000, headerTimestamp: 77_777_777_777n, startTime: 132_500_000_123_456_789n }],
  ['QPC TSC 2.904 GHz', { clockType: 1, perfFreq: 2_904_000_000n, cpuSpeedInMHz: 2904, headerTimestamp: 2n ** 45n, startTime: 133_000_000_000_000_001n }],
  // 10^9 and 2999999999 are coprime: num·den > 2^53, the split multiplication
  ['QPC 2999999999 Hz', { clockType: 1, perfFreq: 2_999_999_999n, cpuSpeedInMHz: 3000, headerTimestamp: -(2n ** 40n), startTime: 133_000_000_000_000_000n }],
  ['QPC 4294967291 Hz (prime, den < 2^32)', { clockType: 1, perfFreq: 4_294_967_291n, cpuSpeedInMHz: 3000, headerTimestamp: 12345n, startTime: 1n }],
  ['QPC 2^33 + 1 Hz (den ≥ 2^32: BigInt)', { clockType: 1, perfFreq: 2n ** 33n + 1n, cpuSpeedInMHz: 3000, headerTimestamp: 0n, startTime: 133_000_000_000_000_000n }],
  ['system time', { clockType: 2, perfFreq: 0n, cpuSpeedInMHz: 3000, headerTimestamp: 133_000_000_000_000_000n, startTime: 132_999_999_999_000_000n }],
  ['CPU cycles 2904 MHz', { clockType: 3, perfFreq: 0n, cpuSpeedInMHz: 2904, headerTimestamp: 9_000_000_000_000n, startTime: 133_000_000_000_000_000n }],
  ['QPC, anchor at int64 max', { clockType: 1, perfFreq: 10_000_000n, cpuSpeedInMHz: 3000, headerTimestamp: 2n ** 63n - 1n, startTime: 2n ** 63n - 1n }],
  ['QPC, FILETIME origin past 2^62', { clockType: 1, perfFreq: 10_000_000n, cpuSpeedInMHz: 3000, headerTimestamp: 0n, startTime: 2n ** 62n + 5n }],
];

/** The exact value, or '' (null) when it does not fit in an int64 (the rule of every output: Arrow, Parquet, text). */
function exact(clock: Clock, kind: TickConversion, t: bigint): string {
  const v = kind === 'ns' ? clock.toNanoseconds(t) : kind === 'filetime' ? clock.toFileTime(t) : (t * 1_000_000_000n) / clock.ticksPerSecond;
  return v < -(2n ** 63n) || v >= 2n ** 63n ? '' : v.toString();
}

function converted(w: TickWriter, t: bigint): string {
  const { hi, lo } = half(t);
  const end = w.write(out, 3, hi | 0, lo);
  return end === NO_TICK_VALUE ? '' : ascii(end);
}

/** x with x·num ≡ −1 (mod den): the exact quotient of a·num/den is just below an integer */
function justBelow(num: bigint, den: bigint): bigint {
  // extended Euclid: num·inv ≡ 1 (mod den)
  let [r0, r1, s0, s1] = [num % den, den, 1n, 0n];
  while (r1 !== 0n) {
    const q = r0 / r1;
    [r0, r1] = [r1, r0 - q * r1];
    [s0, s1] = [s1, s0 - q * s1];
  }
  if (r0 !== 1n) return den - 1n;
  const inv = ((s0 % den) + den) % den;
  return (den - inv) % den;
}

function gcd(a: bigint, b: bigint): bigint {
  while (b) [a, b] = [b, a % b];
  return a;
}

describe('tick conversions: the clock\u2019s exact BigInt values', () => {
  afterEach(() => vi.restoreAllMocks());

  for (const [label, info] of CLOCKS) {
    const clock = createClock(info);
    for (const kind of ['ns', 'filetime', 'duration'] as const) {
      test(`${label}, ${kind}`, () => {
        const w = new TickWriter(clock, kind);
        const t0 = kind === 'duration' ? 0n : clock.anchorTicks;
        const per = kind === 'filetime' ? 10_000_000n : 1_000_000_000n;
        const g = gcd(per, clock.ticksPerSecond);
        const [num, den] = [per / g, clock.ticksPerSecond / g];
        const below = justBelow(num, den);
        const ds = [0n, 1n, -1n, 2n ** 32n, 2n ** 52n - 1n, 2n ** 52n, 2n ** 52n + 2n ** 32n, 2n ** 53n, 2n ** 62n, den, den - 1n, below, below + den * 12345n, below + den * 2n ** 30n];
        const ts = [0n, 1n, -1n, 2n ** 53n - 1n, 2n ** 53n, 2n ** 53n + 1n, 2n ** 63n - 1n, -(2n ** 63n), ...ds.flatMap((d) => [t0 + d, t0 - d])];
        for (const t of ts) {
          const v = BigInt.asIntN(64, t);
          expect([v, converted(w, v)]).toEqual([v, exact(clock, kind, v)]);
        }
        fc.assert(
          fc.property(fc.oneof(fc.bigInt({ min: -(2n ** 53n), max: 2n ** 53n }), fc.bigInt({ min: -(2n ** 34n), max: 2n ** 34n })), (d) => {
            const v = BigInt.asIntN(64, t0 + d);
            expect(converted(w, v)).toBe(exact(clock, kind, v));
          }),
          { numRuns: 2000 },
        );
      });
    }
  }

  // --time s and iso: the same exact values, as seconds with 9 decimals and as ISO UTC; the oracle's texts
  // made here from the BigInt by slicing its digits, and from Date (ms) plus the last 4 digits of the 100 ns
  const seconds = (v: bigint) => {
    const a = (v < 0n ? -v : v).toString().padStart(10, '0');
    return `${v < 0n ? '-' : ''}${a.slice(0, -9)}.${a.slice(-9)}`;
  };
  const iso = (ft: bigint) => {
    const unix100 = ft - 116444736000000000n;
    const ms = unix100 / 10_000n - (unix100 % 10_000n < 0n ? 1n : 0n);
    if (ms < -62167219200000n || ms > 253402300799999n) return ''; // years 0000–9999
    return `${new Date(Number(ms)).toISOString().slice(0, 23)}${(unix100 - ms * 10_000n).toString().padStart(4, '0')}Z`;
  };
  for (const [label, info] of CLOCKS) {
    test(`${label}: --time s and iso`, () => {
      const clock = createClock(info);
      const ws = new TickWriter(clock, 'ns', 'seconds');
      const wi = new TickWriter(clock, 'filetime', 'iso');
      const check = (t: bigint) => {
        const v = BigInt.asIntN(64, t);
        const ns = exact(clock, 'ns', v);
        expect([v, converted(ws, v)]).toEqual([v, ns === '' ? '' : seconds(BigInt(ns))]);
        const ft = exact(clock, 'filetime', v);
        expect([v, converted(wi, v)]).toEqual([v, ft === '' ? '' : iso(BigInt(ft))]);
      };
      const t0 = clock.anchorTicks;
      for (const d of [0n, 1n, -1n, 999n, clock.ticksPerSecond, clock.ticksPerSecond * 86_400n - 1n, clock.ticksPerSecond * 86_400n * 366n * 400n, 2n ** 53n, 2n ** 62n]) {
        check(t0 + d);
        check(t0 - d);
      }
      fc.assert(
        fc.property(fc.oneof(fc.bigInt({ min: -(2n ** 53n), max: 2n ** 53n }), fc.bigInt({ min: -(2n ** 40n), max: 2n ** 40n })), (d) => check(t0 + d)),
        { numRuns: 1000 },
      );
    });
  }

  test('realistic ticks take the number path, not BigInt', () => {
    const slow = vi.spyOn(TickConverter.prototype, 'exact');
    for (const [label, info] of CLOCKS.slice(0, 5).concat(CLOCKS.slice(6, 8))) {
      const clock = createClock(info);
      for (const kind of ['ns', 'filetime', 'duration'] as const) {
        const w = new TickWriter(clock, kind);
        const t0 = kind === 'duration' ? 0n : clock.anchorTicks;
        // an hour of ticks either side of the anchor
        for (const d of [0n, 1n, -7n, clock.ticksPerSecond * 3600n, -clock.ticksPerSecond * 3600n + 3n]) converted(w, t0 + d);
        expect([label, kind, slow.mock.calls.length]).toEqual([label, kind, 0]);
      }
    }
    // the den ≥ 2^32 clock and a Clock not made by createClock convert through BigInt, exactly
    converted(new TickWriter(createClock(CLOCKS[5]![1]), 'ns'), 5n);
    const custom: Clock = { ...createClock(CLOCKS[0]![1]) };
    expect(converted(new TickWriter(custom, 'filetime'), 1_000_123n)).toBe(custom.toFileTime(1_000_123n).toString());
    expect(slow.mock.calls.length).toBe(2);
  });
});

test('every value below 10^5 and every power of ten and its neighbours below 2^32 (the 4-digit groups)', () => {
  for (let v = 0; v < 100_000; v++) {
    const end = writeU32(out, 3, v);
    if (ascii(end) !== String(v)) expect(ascii(end)).toBe(String(v));
  }
  for (let p = 1; p <= 4e9; p *= 10) for (const v of [p - 1, p, p + 1, 2 * p - 1, 9 * p + 9]) if (v < 2 ** 32) expect(ascii(writeU32(out, 3, v))).toBe(String(v));
});

describe('packNames', () => {
  test('packs each known name into whole little-endian words, its length beside it; unknown values have length 0', () => {
    const enc = new TextEncoder();
    const names = [enc.encode('Ready'), undefined, enc.encode('WrLpcReply'), enc.encode('')];
    const { words, length } = packNames(names);
    // the longest name (10 bytes) takes 3 words per value
    expect(words.length).toBe(3 * 256);
    const bytes = new Uint8Array(words.buffer);
    expect(new TextDecoder().decode(bytes.subarray(0, 5))).toBe('Ready');
    expect([...bytes.subarray(5, 12)]).toEqual([0, 0, 0, 0, 0, 0, 0]);
    expect(new TextDecoder().decode(bytes.subarray(24, 34))).toBe('WrLpcReply');
    expect([length[0], length[1], length[2], length[3], length[255]]).toEqual([5, 0, 10, 0, 0]);
  });
});
