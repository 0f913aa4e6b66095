// Timestamp conversion (spec A.10): integer-exact nanoseconds since the anchor and FILETIMEs, every clock type.
import { expect, test } from 'vitest';
import fc from 'fast-check';
import { createClock, EtlError } from '../src/node.js';

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
