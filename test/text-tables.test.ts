// The CLI's aligned text tables (cpu, cpu --sampled, spinlocks) hold any number of rows: `cpu --sampled --by
// address --top 0` can list a row per distinct address, `spinlocks --top N` millions of locks. The column
// widths were a Math.max over every cell spread into one call, which overflows the stack past ~100 k rows.
import { describe, expect, test } from 'vitest';
import { alignedTable } from '../src/cli/cpu-text.js';
import { renderSpinlocks } from '../src/cli/spinlocks.js';
import type { SpinlockAnalysis, SpinlockStats } from '../src/analysis/spinlocks.js';

const ROWS = 300_000;

describe('aligned text tables of many rows', () => {
  test('alignedTable: 300 k rows, the widest cell sets the width', () => {
    const rows = Array.from({ length: ROWS }, (_, i) => [`m${i}`, String(i)]);
    const lines = alignedTable(['module', 'n'], rows, new Set([0]));
    expect(lines.length).toBe(ROWS + 1);
    expect(lines[0]).toBe('module        n'); // widths 7 (m299999) and 6 (299999)
    expect(lines[ROWS]).toBe(`m${ROWS - 1}  ${ROWS - 1}`);
    expect(lines[1]).toBe('m0'.padEnd(7) + '  ' + '0'.padStart(6));
  });

  test('renderSpinlocks: 300 k locks', () => {
    const lock = (i: number): SpinlockStats => ({
      address: 0xfffff80000000000n + BigInt(i) * 16n,
      count: 1,
      contended: 1,
      spinCountSum: 5n,
      spinCountMax: 5,
      waitTimeInCyclesSum: BigInt(i),
      waitTimeInCyclesMax: i,
      holdCyclesSum: 7n,
      holdCyclesMax: 7n,
      inconsistent: 0,
      waitNsSum: null,
      waitNsMax: null,
      holdNsSum: null,
      holdNsMax: null,
    });
    const byLock = Array.from({ length: ROWS }, (_, i) => lock(i));
    const a: SpinlockAnalysis = { totals: { rows: ROWS, contended: ROWS, locks: ROWS, callers: 1, inconsistent: 0 } as SpinlockAnalysis['totals'], cpuSpeedInMHz: null, byLock, byCaller: [] };
    const text = renderSpinlocks('t.etl', a, 'lock', ROWS).split('\n');
    expect(text[1]).toBe(`top ${ROWS} of ${ROWS} locks by contended rows, then wait cycles:`);
    expect(text.filter((l) => l.includes('0xfffff80000000000')).length).toBe(1);
    expect(text.some((l) => l.includes(`0x${(0xfffff80000000000n + BigInt(ROWS - 1) * 16n).toString(16)}`))).toBe(true);
  });
});
