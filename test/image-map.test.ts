// ImageMap (src/derive/lifetimes.ts): address → image lifetime by time, checked by hand against a BigInt
// brute force over every image lifetime — nested and overlapping ranges, bounds in and out of range, load
// and unload times at their edges, kernel addresses (process 0 first, then the process's own), 64-bit
// addresses above 2^63, offsets.
import { describe, expect, test } from 'vitest';
import { ImageMap } from '../src/derive/lifetimes.js';
import { isKernelAddress } from '../src/analysis/samples.js';
import { DerivedRows } from './helpers/derived-rows.js';
import * as L from '../src/generated/layout.js';
import type { Table } from '../src/tables/table.js';

type Life = [pid: number, base: bigint, size: bigint, load: bigint | null, unload: bigint | null];

function images(lives: Life[]): Table<'images'> {
  const b = new DerivedRows('images');
  for (const [pid, base, size, load, unload] of lives) {
    const r = b.add();
    b.set(r, L.IM_PROCESS_ID, pid);
    b.set(r, L.IM_IMAGE_BASE, base);
    b.set(r, L.IM_IMAGE_SIZE, size);
    b.maybe(r, L.IM_LOAD_TIME, load);
    b.maybe(r, L.IM_UNLOAD_TIME, unload);
  }
  return b.take();
}

/** the brute force: the lifetimes holding (address, t) in process p (kernel: 0's first), the latest loaded, then the highest base */
function brute(lives: Life[], pid: number, kernel: boolean, a: bigint, t: bigint): number {
  const inProcess = (p: number) => {
    let best = -1;
    lives.forEach(([q, base, size, load, unload], i) => {
      if (q !== p || a < base || a >= base + size || (load !== null && t < load) || (unload !== null && t >= unload)) return;
      const [bl, l] = [best < 0 ? 0n : (lives[best]![3] ?? -(2n ** 63n)), load ?? -(2n ** 63n)];
      if (best < 0 || bl < l || (bl === l && lives[best]![1] < base)) best = i;
    });
    return best;
  };
  if (kernel) {
    const k = inProcess(0);
    if (k >= 0 || pid === 0) return k;
  }
  return inProcess(pid);
}

const words = (x: bigint) => [Number(x >> 32n), Number(x & 0xffffffffn)] as const;

describe('ImageMap', () => {
  const K = 0xfffff80000000000n;
  const lives: Life[] = [
    [8, 0x10000n, 0x100000n, null, null], // a big image ...
    [8, 0x20000n, 0x1000n, 100n, 200n], // ... and one inside it, loaded for [100, 200)
    [8, 0x30000n, 0x1000n, null, 150n], // inside too, unloaded at 150
    [8, 0x30000n, 0x2000n, 160n, null], // the base reused from 160
    [8, 0x200000n, 0x10n, null, null],
    [9, 0x20000n, 0x1000n, null, null], // another process at the same base
    [0, K, 0x800000n, null, null], // the kernel
    [8, K + 0x1000000n, 0x1000n, null, null], // a kernel-space image of process 8 only (process 0's first, then its own)
    [0, 0xfffffffffffff000n, 0x1000n, null, null], // ends at 2^64
  ];
  const map = new ImageMap(images(lives));
  const addresses = [0n, 0xffffn, 0x10000n, 0x1ffffn, 0x20000n, 0x20fffn, 0x21000n, 0x30000n, 0x30fffn, 0x31000n, 0x31fffn, 0x32000n, 0x10ffffn, 0x110000n, 0x200000n, 0x20000fn, 0x200010n, K, K + 0x7fffffn, K + 0x800000n, K + 0x1000000n, K + 0x1000fffn, 0xfffffffffffff000n, 0xffffffffffffffffn];
  const times = [0n, 99n, 100n, 149n, 150n, 159n, 160n, 199n, 200n, 10n ** 12n];

  test('every (process, address, time) as the brute force; offsets', () => {
    for (const pid of [0, 8, 9, 10])
      for (const a of addresses)
        for (const t of times) {
          const [hi, lo] = words(a);
          const [tHi, tLo] = words(t);
          const kernel = isKernelAddress(8, hi, lo);
          const got = map.find(pid, kernel, hi, lo, tHi, tLo);
          expect([pid, a, t, got]).toEqual([pid, a, t, brute(lives, pid, kernel, a, t)]);
          if (got >= 0) expect(BigInt(map.offset(got, hi, lo))).toBe(a - lives[got]![1]);
        }
  });

  test('the edges: load inclusive, unload exclusive; the nested image at its time, the outer one around it', () => {
    const find = (pid: number, a: bigint, t: bigint) => map.find(pid, false, ...words(a), ...words(t));
    expect([find(8, 0x20010n, 99n), find(8, 0x20010n, 100n), find(8, 0x20010n, 199n), find(8, 0x20010n, 200n)]).toEqual([0, 1, 1, 0]);
    expect([find(8, 0x30010n, 149n), find(8, 0x30010n, 150n), find(8, 0x30010n, 160n), find(8, 0x31010n, 160n)]).toEqual([2, 0, 3, 3]);
    expect(find(9, 0x20010n, 0n)).toBe(5);
    expect(find(7, 0x20010n, 0n)).toBe(-1);
  });

  test('isKernelAddress: the upper half of the pointer size', () => {
    expect([isKernelAddress(4, 0, 0x7fffffff), isKernelAddress(4, 0, 0x80000000), isKernelAddress(8, 0x7fffffff, 0xffffffff), isKernelAddress(8, 0x80000000, 0)]).toEqual([false, true, false, true]);
    // the words as int32 (how the stack and sample columns are read) give the same answers
    expect([isKernelAddress(4, 0, 0x80000000 | 0), isKernelAddress(8, 0xfffff800 | 0, 0), isKernelAddress(8, 0x7ff, -1)]).toEqual([true, true, false]);
  });
});
