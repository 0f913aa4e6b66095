// Timestamp conversion (spec A.10): integer-exact nanoseconds since the anchor and FILETIMEs, every clock type.
import { expect, test } from 'vitest';
import fc from 'fast-check';
import { createClock, EtlError, type Clock } from '../src/node.js';
import { TickConverter, type TickConversion } from '../src/time.js';

const base = { headerTimestamp: 1_000_000n, startTime: 132_000_000_000_000_000n, cpuSpeedInMHz: 3000 };

test('QPC at 10 MHz: one tick is 100 ns, exactly', () => {
  const c = createClock({ ...base, clockType: 1, perfFreq: 10_000_000n });
  expect(c.toNanoseconds(1_000_000n)).toBe(0n);
  expect(c.toNanoseconds(1_000_001n)).toBe(100n);
  expect(c.toFileTime(1_000_123n)).toBe(base.startTime + 123n);
  // far beyond the i64 overflow of a naive (t - T0) * 1e9 (≈ 922 s at 10 MHz): 30 days
  const d = 30n * 86400n * 10_000_000n;
  expect(c.toNanoseconds(1_000_000n + d)).toBe(30n * 86400n * 1_000_000_000n);
});

test('QPC at an odd frequency equals the exact rational, floored (property)', () => {
  const f = 3_117_777n;
  const c = createClock({ ...base, clockType: 1, perfFreq: f });
  fc.assert(
    fc.property(fc.bigInt({ min: -(2n ** 62n), max: 2n ** 62n }), (dt) => {
      const t = base.headerTimestamp + dt;
      const exact = dt * 1_000_000_000n;
      const floor = exact / f - (exact % f !== 0n && exact < 0n ? 1n : 0n);
      expect(c.toNanoseconds(t)).toBe(floor);
    }),
  );
});

test('system-time clock: ticks are FILETIMEs already', () => {
  const c = createClock({ ...base, clockType: 2, perfFreq: 0n });
  expect(c.toFileTime(133_000_000_000_000_000n)).toBe(133_000_000_000_000_000n);
  expect(c.toNanoseconds(base.headerTimestamp + 7n)).toBe(700n);
});

test('CPU-cycle clock uses CpuSpeedInMHz', () => {
  const c = createClock({ ...base, clockType: 3, perfFreq: 0n });
  expect(c.toNanoseconds(base.headerTimestamp + 3000n)).toBe(1000n);
  expect(c.toFileTime(base.headerTimestamp + 3000n * 10_000n)).toBe(base.startTime + 100_000n);
});

test('Date conversion', () => {
  const c = createClock({ ...base, clockType: 1, perfFreq: 10_000_000n, startTime: 116_444_736_000_000_000n });
  expect(c.toDate(base.headerTimestamp + 10_000_000n).toISOString()).toBe('1970-01-01T00:00:01.000Z');
});

test('unknown clock types are refused clearly', () => {
  expect(() => createClock({ ...base, clockType: 0, perfFreq: 1n })).toThrowError(EtlError);
  expect(() => createClock({ ...base, clockType: 1, perfFreq: 0n })).toThrowError(/PerfFreq/);
});

// ---- TickConverter: the one number path of every writer, against the BigInt definitions

const I64 = (v: bigint) => BigInt.asIntN(64, v);
const floorBig = (a: bigint, b: bigint) => a / b - (a % b !== 0n && a < 0n !== b < 0n ? 1n : 0n);
const gcdBig = (a: bigint, b: bigint): bigint => (b === 0n ? a : gcdBig(b, a % b));

/** The definitions (docs/format.md §A.10), written independently of src/time.ts. */
function definition(info: Parameters<typeof createClock>[0], f: bigint, kind: TickConversion, t: bigint): bigint {
  const a = t - info.headerTimestamp;
  if (kind === 'ns') return floorBig(a * 1_000_000_000n, f);
  if (kind === 'duration') return (t * 1_000_000_000n) / f; // truncated
  return info.clockType === 2 ? t : info.startTime + floorBig(a * 10_000_000n, f);
}

const anyI64 = fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n });
const clockInfo = fc.oneof(
  fc.record({
    clockType: fc.constant(1),
    perfFreq: fc.oneof(
      fc.bigInt({ min: 1n, max: 2n ** 34n }),
      fc.constantFrom(1n, 3n, 1_000n, 3_579_545n, 10_000_000n, 999_999_937n, 1_000_000_000n, 2_999_999_999n, 2n ** 32n - 5n, 2n ** 32n, 2n ** 32n + 1n, 5n * 2n ** 32n, 2n ** 33n + 1n, 2n ** 62n),
    ),
    cpuSpeedInMHz: fc.constant(0),
  }),
  fc.record({ clockType: fc.constant(2), perfFreq: fc.constant(0n), cpuSpeedInMHz: fc.constant(0) }),
  fc.record({ clockType: fc.constant(3), perfFreq: fc.constant(0n), cpuSpeedInMHz: fc.oneof(fc.integer({ min: 1, max: 100_000 }), fc.constantFrom(1, 7, 2904, 2995)) }),
).chain((c) =>
  fc.record({
    clockType: fc.constant(c.clockType),
    perfFreq: fc.constant(c.perfFreq),
    cpuSpeedInMHz: fc.constant(c.cpuSpeedInMHz),
    headerTimestamp: fc.oneof(fc.bigInt({ min: 0n, max: 2n ** 50n }), anyI64, fc.constantFrom(0n, -1n, 2n ** 63n - 1n, -(2n ** 63n), 2n ** 32n - 1n)),
    startTime: fc.oneof(fc.bigInt({ min: 125_000_000_000_000_000n, max: 140_000_000_000_000_000n }), anyI64, fc.constantFrom(0n, 2n ** 62n - 1n, 2n ** 62n, -(2n ** 62n))),
  }),
);

test('TickConverter equals the BigInt definitions: random clocks and ticks, the number path at its edges (property)', () => {
  let fast = 0;
  fc.assert(
    fc.property(clockInfo, fc.constantFrom<TickConversion>('ns', 'filetime', 'duration'), fc.array(fc.tuple(fc.nat(9), anyI64, fc.integer({ min: -3, max: 3 })), { minLength: 1, maxLength: 40 }), (info, kind, picks) => {
      const clock = createClock(info);
      const f = clock.ticksPerSecond;
      const conv = new TickConverter(clock, kind);
      const t0 = kind === 'duration' ? 0n : info.headerTimestamp;
      const base = kind !== 'filetime' ? 0n : info.clockType === 2 ? info.headerTimestamp : info.startTime;
      if (conv.fast) expect(BigInt(conv.baseHi) * 2n ** 32n + BigInt(conv.baseLo)).toBe(base);
      const per = kind === 'filetime' ? 10_000_000n : 1_000_000_000n;
      const g = gcdBig(per, f);
      const [num, den] = [per / g, f / g];
      // where the number path ends: |t − anchor| near 2^52 + 2^32 (the high halves 2^20 apart), results near
      // 2^53, quotients just below an integer
      const edges = [0n, 1n, 2n ** 52n - 1n, 2n ** 52n, 2n ** 52n + 2n ** 32n - 1n, 2n ** 52n + 2n ** 32n, (2n ** 53n * den) / num, (2n ** 53n * den) / num - den, den - 1n, den, 2n ** 62n];
      for (const [which, random, step] of picks) {
        const d = which < 4 ? edges[(which * 7 + Number(random & 0xffn)) % edges.length]! : which < 7 ? random >> BigInt(11 + which * 2) : random;
        const sign = step < 0 ? -1n : 1n;
        const t = I64(t0 + sign * d + BigInt(step));
        const want = definition(info, f, kind, t);
        const u = BigInt.asUintN(64, t);
        const v = conv.fromHalves(Number(BigInt.asIntN(32, u >> 32n)), Number(u & 0xffffffffn));
        const a = t - t0;
        if (v === v) {
          fast++;
          expect(Number.isSafeInteger(v)).toBe(true);
          expect([t, BigInt(v) + base]).toEqual([t, want]);
        } else {
          expect([t, conv.exact(t)]).toEqual([t, want]);
          // the number path covers every value well inside its range
          const inside = den < 2n ** 32n && base > -(2n ** 62n) && base < 2n ** 62n && t0 === I64(t0) && a < 2n ** 51n && a > -(2n ** 51n) && want - base < 2n ** 52n && want - base > -(2n ** 52n);
          expect([t, inside]).toEqual([t, false]);
        }
      }
    }),
    { numRuns: 3000 },
  );
  expect(fast).toBeGreaterThan(3000); // of about 60 000 values; the realistic ones are all on the number path (above)
});

test('TickConverter.convertWords (the column loop) equals the BigInt definitions row by row; what it cannot convert exactly it names (property)', () => {
  fc.assert(
    fc.property(
      clockInfo,
      fc.constantFrom<TickConversion>('ns', 'filetime', 'duration', 'unixNs'),
      fc.array(fc.tuple(fc.nat(9), anyI64, fc.integer({ min: -3, max: 3 }), fc.boolean()), { minLength: 1, maxLength: 40 }),
      fc.boolean(),
      (info, kind, picks, withBitmap) => {
        const clock = createClock(info);
        const conv = new TickConverter(clock, kind);
        const t0 = kind === 'duration' ? 0n : info.headerTimestamp;
        const n = picks.length;
        const ticks = new BigInt64Array(n);
        const bitmap = withBitmap ? new Uint8Array((n + 7) >>> 3) : null;
        picks.forEach(([which, random, step, present], i) => {
          const d = which < 3 ? 2n ** 52n + BigInt(step) * 2n ** 31n : which < 7 ? random >> BigInt(11 + which * 2) : random;
          ticks[i] = I64(t0 + d + BigInt(step));
          if (bitmap && present) bitmap[i >>> 3]! |= 1 << (i & 7);
        });
        const out = new BigInt64Array(n).fill(-7n);
        const misses = conv.convertWords(new Int32Array(ticks.buffer), new Int32Array(out.buffer), n, bitmap);
        expect(misses).toEqual([...misses].sort((a, b) => a - b));
        const unix = (clock.toFileTime(clock.anchorTicks) - 116444736000000000n) * 100n;
        for (let i = 0; i < n; i++) {
          const t = ticks[i]!;
          const present = bitmap === null || ((bitmap[i >>> 3]! >>> (i & 7)) & 1) === 1;
          const u = BigInt.asUintN(64, t);
          const one = conv.fromHalves(Number(BigInt.asIntN(32, u >> 32n)), Number(u & 0xffffffffn));
          if (!present) expect([i, out[i]]).toEqual([i, -7n]);
          else if (misses.includes(i)) expect([t, one]).toEqual([t, NaN]);
          else {
            const want = kind === 'unixNs' ? unix + definition(info, clock.ticksPerSecond, 'ns', t) : definition(info, clock.ticksPerSecond, kind, t);
            expect([t, out[i]]).toEqual([t, want]);
          }
        }
      },
    ),
    { numRuns: 3000 },
  );
});

test('TickConverter without a clock: raw ticks since an origin', () => {
  const conv = new TickConverter(null, 'ns', 5n * 2n ** 32n + 7n);
  expect(conv.fromHalves(5, 7)).toBe(0);
  expect(conv.fromHalves(4, 0xffffffff)).toBe(-8);
  expect(conv.fromHalves(5 + 0x100000, 0)).toBeNaN(); // beyond 2^52 + 2^32 ticks: exact() instead
  expect(conv.exact(2n ** 63n - 1n)).toBe(2n ** 63n - 1n - (5n * 2n ** 32n + 7n));
});

test('a Clock not made by createClock converts through its own methods', () => {
  const made = createClock({ ...base, clockType: 1, perfFreq: 10_000_000n });
  const custom: Clock = { ...made, toNanoseconds: (t) => made.toNanoseconds(t) + 1n };
  const conv = new TickConverter(custom, 'ns');
  expect(conv.fromHalves(0, 1_000_001)).toBeNaN();
  expect(conv.exact(1_000_001n)).toBe(101n);
  expect(new TickConverter(custom, 'duration').fromHalves(0, 3)).toBe(300); // the definition needs only ticksPerSecond
  expect(custom.toNanosecondsColumn(BigInt64Array.of(1_000_001n))[0]).toBe(100n); // the spread kept createClock's own
});
