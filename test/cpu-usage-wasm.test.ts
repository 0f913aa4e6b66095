// The WebAssembly cpuUsage core (assembly/derive/) against its TypeScript twin (the reference core of
// src/derive/cpu-usage.ts, `engine: 'reference'`): the same chunks, column for column, and the same
// statistics, on simulated traces (schedule.ts, realistic.ts; both pointer sizes) cut into any chunks, with
// events lost, arriving late, rows held, threads never known and thread ids reused; streaming, or given the
// `threads` table (a whole decode).
import { describe, expect, test } from 'vitest';
import fc from 'fast-check';
import { CpuUsageDeriver, decodeSync, streamFile, type CpuUsageOptions, type DecodeResult, type Table } from '../src/node.js';
import * as L from '../src/generated/layout.js';
import { RWS } from '../src/derive/cpu-usage.js';
import { deriveThreads } from '../src/derive/lifetimes.js';
import type { TypedColumn } from '../src/tables/schema.js';
import { chunksOf, table, type Chunk, type In, type Name, lost, noStartRundown, reused, unknown } from './helpers/deriver-chunks.js';
import { generateRealisticTrace, simulateSchedule, writeTrace } from '../src/writer/index.js';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

function same(chunks: Chunk[], options: CpuUsageOptions = {}) {
  const got: Table<'cpuUsage'>[] = [];
  const want: Table<'cpuUsage'>[] = [];
  const halves: Table<'cpuUsage'>[] = [];
  const w = new CpuUsageDeriver((t) => got.push(t), { ...options, engine: 'wasm' });
  const ts = new CpuUsageDeriver((t) => want.push(t), { ...options, engine: 'reference' });
  // streaming: also the core in its two halves (remote-cpu-fold.ts runs them on two threads), what the
  // intake releases handed to the apply half as a copy, as a worker gets it
  const split = options.threads === undefined ? splitHalves((t) => halves.push(t), options) : null;
  for (const c of chunks) {
    w.add(...c);
    ts.add(...c);
    split?.add(...c);
  }
  const stats = w.finish();
  expect(stats).toEqual(ts.finish());
  expect(got.map((t) => t.length)).toEqual(want.map((t) => t.length));
  got.forEach((t, k) => t.columns.forEach((col, c) => expect(col, `chunk ${k} column ${t.specs[c]!.name}`).toEqual(want[k]!.columns[c])));
  if (split) {
    expect(split.finish()).toEqual(stats);
    expect(halves.map((t) => t.length)).toEqual(want.map((t) => t.length));
    halves.forEach((t, k) => t.columns.forEach((col, c) => expect(col, `halves: chunk ${k} column ${t.specs[c]!.name}`).toEqual(want[k]!.columns[c])));
  }
  return stats;
}

/** The WebAssembly core's intake and apply halves chained (CpuUsageOptions.split), what is released copied over. */
function splitHalves(onRows: (t: Table<'cpuUsage'>) => void, options: CpuUsageOptions) {
  const intake = new CpuUsageDeriver(
    () => {
      throw new Error('the intake made rows');
    },
    { ...options, engine: 'wasm', split: 'intake' },
  );
  const apply = new CpuUsageDeriver(onRows, { ...options, engine: 'wasm', split: 'apply' });
  const hand = () => {
    const e = intake.released();
    apply.addReleased({ ...e, records: e.records.slice(), groupEnds: e.groupEnds.slice(), idleSlots: e.idleSlots.slice() });
  };
  return {
    add(...c: Chunk) {
      intake.add(...c);
      hand();
    },
    finish() {
      const first = intake.finish();
      hand();
      return { ...apply.finish(), lateEvents: first.lateEvents, maxHeld: first.maxHeld };
    },
  };
}

const MUTATIONS: [string, (r: In) => In][] = [['as written', (r) => r], ['no start rundown', noStartRundown], ['lost events', lost], ['thread ids reused', reused], ['threads never known', unknown]];

const traces: [string, DecodeResult][] = [
  ['schedule compact, 64-bit', decodeSync(writeTrace(simulateSchedule({ seed: 31, cpus: 4, duration: 800_000, switchMode: 'compact' }).description).bytes)],
  ['schedule mixed, 32-bit', decodeSync(writeTrace(simulateSchedule({ seed: 32, cpus: 6, duration: 800_000, switchMode: 'mixed', pointerSize: 4 }).description).bytes)],
  ['schedule CSwitch v2-v4', decodeSync(writeTrace(simulateSchedule({ seed: 33, cpus: 3, duration: 800_000, switchMode: 'cswitch', cswitchVersions: [2, 3, 4] }).description).bytes)],
  ['realistic, 64-bit', decodeSync(generateRealisticTrace({ seed: 34, targetBytes: 1 << 19, cpus: 4 }).bytes)],
  ['realistic mixed, 32-bit', decodeSync(generateRealisticTrace({ seed: 35, targetBytes: 1 << 19, cpus: 8, switches: 'mixed', pointerSize: 4 }).bytes)],
];

describe.each(traces)('%s', (_, r) => {
  test.each(MUTATIONS)('%s: the same rows and statistics for chunkings, windows, chunk sizes and holds', (_, mutate) => {
    const m = mutate(r);
    const chunkings = [[], [0.3, 0.31, 0.8], Array.from({ length: 40 }, (_, k) => k / 40)];
    for (const at of chunkings) {
      for (const [windowEvents, chunkRows, holdRows] of [
        [1 << 18, 1 << 16, 1 << 16],
        [7, 100, 5],
        [1000, 3, 0],
      ] as const) {
        same(chunksOf(m, at, at.map((f) => f * 0.7)), { windowEvents, chunkRows, holdRows });
      }
      same(chunksOf(m, at), { chunkRows: 100, threads: deriveThreads(m.threadEvents) });
    }
  });
}, 60_000);

describe('what the comparisons cover happens in them', () => {
  const r = traces[3]![1];
  test('late events (chunks out of order, a small window), held and unresolved rows, many lifetimes per thread id', () => {
    const c = chunksOf(r, [0.25, 0.5, 0.75]);
    const late = same([c[2]!, c[0]!, c[3]!, c[1]!], { windowEvents: 7 });
    expect(late.lateEvents).toBeGreaterThan(100);
    expect(late.maxHeld).toBeLessThanOrEqual(8);
    const held = same(chunksOf(noStartRundown(r), [0.5]));
    expect(held.heldRows).toBeGreaterThan(50);
    const over = same(chunksOf(noStartRundown(r), [0.5]), { holdRows: 5 });
    expect([over.heldRows, over.unresolvedRows]).toEqual([5, held.heldRows - 5]);
    const never = same(chunksOf(unknown(r), []));
    expect(never.heldRows).toBeGreaterThan(50);
    const tid = reused(r).threadEvents.columns[L.TE_THREAD_ID] as Uint32Array;
    expect(new Set(tid).size).toBeLessThan(25);
    expect(tid.length).toBeGreaterThan(200);
    expect(same(chunksOf(reused(r), [0.5])).rows).toBeGreaterThan(1000);
  });

  test('times past 2^53, negative, and spans past 2^32 ticks in one sort; many events of one time', () => {
    const moves: ((t: bigint, i: number) => bigint)[] = [(t) => t + 2n ** 60n, (t) => t - 2n ** 62n, (t, i) => (i % 2 === 0 ? t : t + (1n << 40n)), (t) => (t / 5000n) * 5000n];
    for (const move of moves) {
      const m = <T extends Name>(t: Table<T>): Table<T> => {
        const c = t.columns.slice();
        c[0] = (t.columns[0] as BigInt64Array).map((x, i) => move(x, i));
        return table(t.name as T, t.length, c as TypedColumn[]);
      };
      same(chunksOf({ cswitch: m(r.cswitch), readythread: m(r.readythread), threadEvents: m(r.threadEvents) }, [0.4]), { windowEvents: 7 });
      same(chunksOf({ cswitch: m(r.cswitch), readythread: m(r.readythread), threadEvents: m(r.threadEvents) }, [0.4]));
    }
  });

  test('switches at the very times thread ids are reused (a lifetime starts as the last one is asked for)', () => {
    // few ids of many lifetimes, every time rounded: switches and readies fall on the Thread Starts' ticks
    const q = <T extends Name>(t: Table<T>): Table<T> => {
      const c = t.columns.slice();
      c[0] = (t.columns[0] as BigInt64Array).map((x) => (x / 20_000n) * 20_000n);
      return table(t.name as T, t.length, c as TypedColumn[]);
    };
    const m = reused(r);
    const at = { cswitch: q(m.cswitch), readythread: q(m.readythread), threadEvents: q(m.threadEvents) };
    const ts = new Set((at.threadEvents.columns[0] as BigInt64Array).filter((_, i) => (at.threadEvents.columns[L.TE_OPCODE] as Uint8Array)[i] === L.OPCODE_START));
    expect((at.cswitch.columns[0] as BigInt64Array).filter((t) => ts.has(t)).length).toBeGreaterThan(100);
    same(chunksOf(at, [0.5]));
    same(chunksOf(at, [0.5]), { threads: deriveThreads(at.threadEvents) });
  });
});

test('streamed through streamFile (borrowed views of the decoder), to columns and to a StagedRowSink: the same rows', async () => {
  const bytes = generateRealisticTrace({ seed: 36, targetBytes: 1 << 21, cpus: 4 }).bytes;
  const path = join(mkdtempSync(join(tmpdir(), 'etw-cpu-wasm-')), 't.etl');
  writeFileSync(path, bytes);
  const staged = { wasm: [] as number[][], reference: [] as number[][] };
  const tables = { wasm: [] as Table<'cpuUsage'>[], reference: [] as Table<'cpuUsage'>[] };
  const stats = [];
  for (const engine of ['wasm', 'reference'] as const) {
    const sink = { addStaged: (S: Int32Array, n: number) => staged[engine].push(Array.from(S.subarray(0, n * RWS))) };
    const toSink = new CpuUsageDeriver(sink, { engine });
    const toColumns = new CpuUsageDeriver((t) => tables[engine].push(t), { engine, chunkRows: 1000 });
    await streamFile(path, {
      windowBytes: 0x10000,
      rows: 'borrow',
      onRows: (t) => {
        toSink.add(t.cswitch, t.readythread, t.threadEvents);
        toColumns.add(t.cswitch, t.readythread, t.threadEvents);
      },
    });
    stats.push(toSink.finish(), toColumns.finish());
  }
  expect(stats[0]).toEqual(stats[2]);
  expect(stats[1]).toEqual(stats[3]);
  expect(stats[0]!.rows).toBeGreaterThan(5000);
  // the staged rows: the same words in the same order (blocks may be cut elsewhere)
  expect(staged.wasm.flat()).toEqual(staged.reference.flat());
  expect(tables.wasm.length).toBe(tables.reference.length);
  tables.wasm.forEach((t, k) => t.columns.forEach((col, c) => expect(col).toEqual(tables.reference[k]!.columns[c])));
});

test('property: any chunking, window, chunk size, hold, mutation, streaming or given the threads — the same rows and statistics', () => {
  fc.assert(
    fc.property(
      fc.integer({ min: 0, max: traces.length - 1 }),
      fc.integer({ min: 0, max: MUTATIONS.length - 1 }),
      fc.array(fc.double({ min: 0, max: 1, noNaN: true }), { maxLength: 16 }),
      fc.array(fc.double({ min: 0, max: 1, noNaN: true }), { maxLength: 16 }),
      fc.constantFrom(1, 7, 64, 1000, 1 << 18),
      fc.constantFrom(1, 3, 100, 65536),
      fc.constantFrom(0, 1, 5, 1 << 16),
      fc.boolean(),
      fc.boolean(),
      (which, mutation, a, b, windowEvents, chunkRows, holdRows, shuffle, given) => {
        const r = MUTATIONS[mutation]![1](traces[which]![1]);
        let chunks = chunksOf(r, [...a].sort((x, y) => x - y), [...b].sort((x, y) => x - y));
        if (shuffle) chunks = chunks.map((c, k) => [k, c] as const).sort((x, y) => ((x[0] * 7) % 5) - ((y[0] * 7) % 5)).map(([, c]) => c);
        same(chunks, { windowEvents, chunkRows, holdRows, threads: given ? deriveThreads(r.threadEvents) : undefined });
      },
    ),
    { numRuns: 40 },
  );
}, 120_000);
