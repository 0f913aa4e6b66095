// When framing stops reading buffer headers synchronously (src/input/disk-detector.ts): only when batch after
// batch is slow, as reads from the disk are, not when a busy machine slows one or two.
import { describe, expect, test } from 'vitest';
import { DiskDetector, SLOW_BATCHES, SLOW_BATCH_MS } from '../src/input/disk-detector.js';

const feed = (times: number[]): boolean[] => {
  const d = new DiskDetector();
  return times.map((ms) => d.slow(ms));
};

describe('DiskDetector', () => {
  test('page-cache batches (well under SLOW_BATCH_MS) never say disk', () => {
    expect(feed(Array(1000).fill(0.3)).some(Boolean)).toBe(false);
    expect(feed(Array(100).fill(SLOW_BATCH_MS)).some(Boolean)).toBe(false);
  });

  test('hiccups of a busy machine (a few slow batches in a row, then fast ones) never say disk', () => {
    const times: number[] = [];
    for (let k = 0; k < 50; k++) times.push(...Array(SLOW_BATCHES - 1).fill(8), 0.3);
    expect(feed(times).some(Boolean)).toBe(false);
  });

  test('SLOW_BATCHES slow batches in a row say disk, at the last of them', () => {
    const said = feed([0.3, 0.3, ...Array(SLOW_BATCHES).fill(5.4)]);
    expect(said.indexOf(true)).toBe(2 + SLOW_BATCHES - 1);
    expect(SLOW_BATCHES).toBeGreaterThanOrEqual(3);
  });
});
