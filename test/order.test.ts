// The orders of src/order.ts against a stable comparison sort: random keys of every width (so passes
// are skipped or not), ties (stability), payload moved with the keys.
import { describe, expect, it, test } from 'vitest';
import fc from 'fast-check';
import { radixOrder, radixSort, timeOrder } from '../src/order.js';

function comparisonOrder(keys: Uint32Array[], n: number): number[] {
  const idx = Array.from({ length: n }, (_, i) => i);
  return idx.sort((a, b) => {
    for (let k = keys.length - 1; k >= 0; k--) if (keys[k]![a] !== keys[k]![b]) return keys[k]![a]! - keys[k]![b]!;
    return a - b;
  });
}

const word = fc.oneof(fc.integer({ min: 0, max: 3 }), fc.integer({ min: 0, max: 0xffff }), fc.integer({ min: 0, max: 0xffffffff }), fc.constantFrom(0, 0x7ff, 0x800, 0x3fffff, 0x400000, 0xffffffff));

describe('radixSort', () => {
  it('orders like a stable comparison sort, keys and payload together', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 3 }), fc.array(fc.tuple(word, word, word), { maxLength: 300 }), (nk, rows) => {
        const n = rows.length;
        const keys = Array.from({ length: nk }, (_, k) => Uint32Array.from(rows, (r) => r[k]!));
        const payload = Uint32Array.from(rows, (_, i) => i * 7 + 1);
        const expected = comparisonOrder(keys, n);
        const sorted = radixSort(keys, [payload], n);
        expect(Array.from(sorted[nk]!)).toEqual(expected.map((i) => i * 7 + 1));
        for (let k = 0; k < nk; k++) expect(Array.from(sorted[k]!)).toEqual(expected.map((i) => keys[k]![i]!));
        expect(Array.from(radixOrder(keys, n))).toEqual(expected);
      }),
      { numRuns: 300 },
    );
  });

  it('sorts only the first n rows and leaves its arguments as they were', () => {
    const key = Uint32Array.from([5, 1, 4, 0, 9]);
    const copy = key.slice();
    expect(Array.from(radixOrder([key], 3))).toEqual([1, 2, 0]);
    expect(key).toEqual(copy);
  });

  it('a large input with every digit in use', () => {
    const n = 100_000;
    const lo = new Uint32Array(n);
    const hi = new Uint32Array(n);
    let x = 0x9e3779b9;
    for (let i = 0; i < n; i++) {
      x = (Math.imul(x, 1664525) + 1013904223) >>> 0;
      lo[i] = x;
      hi[i] = x % 5;
    }
    const order = radixOrder([lo, hi], n);
    for (let i = 1; i < n; i++) {
      const a = order[i - 1]!;
      const b = order[i]!;
      const before = hi[a]! < hi[b]! || (hi[a] === hi[b] && (lo[a]! < lo[b]! || (lo[a] === lo[b] && a < b)));
      expect(before).toBe(true);
    }
  });
});

describe('timeOrder', () => {
  /** rows (time, cpu): in time order per cpu unless `shuffle`, times possibly negative or equal across cpus */
  const rows = fc.array(fc.tuple(fc.integer({ min: 0, max: 5 }), fc.integer({ min: 0, max: 4 }), fc.constantFrom(0n, -(1n << 40n), (1n << 33n) - 3n, -(1n << 62n), (1n << 62n) + 7n)), { maxLength: 400 });
  test('equals a stable sort by signed time, ties by row', () => {
    fc.assert(
      fc.property(rows, fc.boolean(), (spec, shuffle) => {
        const n = spec.length;
        const cpu = Uint16Array.from(spec, (r) => r[1]);
        const t = new BigInt64Array(n);
        const last = new Map<number, bigint>();
        spec.forEach(([step, c, base], i) => {
          // per cpu: non-decreasing from its base (equal times across cpus happen), or anything when shuffled
          const prev = last.get(c) ?? base;
          const v = shuffle ? base + BigInt(step * 7 - 15) : prev + BigInt(step);
          last.set(c, v);
          t[i] = v;
        });
        const words = new Uint32Array(t.buffer);
        const expected = Array.from({ length: n }, (_, i) => i).sort((a, b) => (t[a]! < t[b]! ? -1 : t[a]! > t[b]! ? 1 : a - b));
        expect(Array.from(timeOrder(words, cpu, n))).toEqual(expected);
      }),
      { numRuns: 400 },
    );
  });
});
