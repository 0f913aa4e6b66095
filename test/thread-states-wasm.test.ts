// The WebAssembly threadStates core (assembly/derive/thread-states.ts) against its TypeScript twin (the
// reference core of src/derive/thread-states.ts, `engine: 'reference'`): the same chunks, column for
// column, and the same statistics, on simulated traces (schedule.ts, realistic.ts; both pointer sizes) cut
// into any chunks, with events lost, arriving late, rows held, threads known only from the end rundown or
// never, thread ids reused, many events at one time; streamed (with or without `cpus`), `ordered`, or
// given the `threads` table (a whole decode).
import { describe, expect, test } from 'vitest';
import fc from 'fast-check';
import { decodeSync, streamFile, threadStates, ThreadStatesDeriver, type DecodeResult, type Table, type ThreadStatesOptions } from '../src/node.js';
import * as L from '../src/generated/layout.js';
import { deriveThreads } from '../src/derive/lifetimes.js';
import type { TypedColumn } from '../src/tables/schema.js';
import { chunksOf, table, type Chunk, type In, type Name, lost, noStartRundown, reused, unknown } from './helpers/deriver-chunks.js';
import { generateRealisticTrace, simulateSchedule, writeTrace } from '../src/writer/index.js';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

function same(chunks: Chunk[], options: ThreadStatesOptions = {}) {
  const got: Table<'threadStates'>[] = [];
  const want: Table<'threadStates'>[] = [];
  const w = new ThreadStatesDeriver((t) => got.push(t), { ...options, engine: 'wasm' });
  const ts = new ThreadStatesDeriver((t) => want.push(t), { ...options, engine: 'reference' });
  for (const c of chunks) {
    w.add(...c);
    ts.add(...c);
  }
  const stats = w.finish();
  expect(stats).toEqual(ts.finish());
  expect(got.map((t) => t.length)).toEqual(want.map((t) => t.length));
  got.forEach((t, k) => t.columns.forEach((col, c) => expect(col, `chunk ${k} column ${t.specs[c]!.name}`).toEqual(want[k]!.columns[c])));
  expect(stats.rows).toBe(got.reduce((n, t) => n + t.length, 0));
  return stats;
}

/** many events at one time: every time rounded down to a multiple of 5000 ticks */
const coarse = (r: In): In => {
  const m = <T extends Name>(t: Table<T>): Table<T> => {
    const c = t.columns.slice();
    c[0] = (t.columns[0] as BigInt64Array).map((x) => (x / 5000n) * 5000n);
    return table(t.name as T, t.length, c as TypedColumn[]);
  };
  return { cswitch: m(r.cswitch), readythread: m(r.readythread), threadEvents: m(r.threadEvents) };
};
const MUTATIONS: [string, (r: In) => In][] = [
  ['as written', (r) => r],
  ['no start rundown', noStartRundown],
  ['lost events', lost],
  ['thread ids reused', reused],
  ['threads never known', unknown],
  ['many events at one time', coarse],
];

const cpusOf = (r: In) => 1 + Math.max(0, ...Array.from(r.cswitch.column('cpu')));

const traces: [string, DecodeResult][] = [
  ['schedule compact, 64-bit', decodeSync(writeTrace(simulateSchedule({ seed: 31, cpus: 4, duration: 800_000, switchMode: 'compact' }).description).bytes)],
  ['schedule mixed, 32-bit', decodeSync(writeTrace(simulateSchedule({ seed: 32, cpus: 6, duration: 800_000, switchMode: 'mixed', pointerSize: 4 }).description).bytes)],
  ['schedule CSwitch v2-v4', decodeSync(writeTrace(simulateSchedule({ seed: 33, cpus: 3, duration: 800_000, switchMode: 'cswitch', cswitchVersions: [2, 3, 4] }).description).bytes)],
  ['realistic, 64-bit', decodeSync(generateRealisticTrace({ seed: 34, targetBytes: 1 << 19, cpus: 4 }).bytes)],
  ['realistic mixed, 32-bit', decodeSync(generateRealisticTrace({ seed: 35, targetBytes: 1 << 19, cpus: 8, switches: 'mixed', pointerSize: 4 }).bytes)],
];

describe.each(traces)('%s', (_, r) => {
  test.each(MUTATIONS)('%s: the same rows and statistics for chunkings, windows, chunk sizes, holds, cpus, ordered, threads given', (_, mutate) => {
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
      same(chunksOf(m, at, at.map((f) => f * 0.7)), { cpus: cpusOf(m), chunkRows: 1000 });
      same(chunksOf(m, at), { ordered: true, cpus: cpusOf(m) });
      same(chunksOf(m, at), { chunkRows: 100, threads: deriveThreads(m.threadEvents) });
      same(chunksOf(m, at), { ordered: true, threads: deriveThreads(m.threadEvents) });
    }
  });
}, 120_000);

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
    // many events at one time: groups of several switches of one CPU
    const cs = coarse(r).cswitch;
    const t = cs.column('timestamp');
    const cpu = cs.column('cpu');
    let sameCpu = 0;
    for (let i = 1; i < cs.length; i++) if (t[i] === t[i - 1] && cpu[i] === cpu[i - 1]) sameCpu++;
    expect(sameCpu).toBeGreaterThan(100);
    expect(same(chunksOf(coarse(r), [0.5]), { cpus: cpusOf(r) }).rows).toBeGreaterThan(1000);
  });

  test('times past 2^53, negative, and spans past 2^32 ticks in one sort', () => {
    const moves: ((t: bigint, i: number) => bigint)[] = [(t) => t + 2n ** 60n, (t) => t - 2n ** 62n, (t, i) => (i % 2 === 0 ? t : t + (1n << 40n))];
    for (const move of moves) {
      const m = <T extends Name>(t: Table<T>): Table<T> => {
        const c = t.columns.slice();
        c[0] = (t.columns[0] as BigInt64Array).map((x, i) => move(x, i));
        return table(t.name as T, t.length, c as TypedColumn[]);
      };
      const moved = { cswitch: m(r.cswitch), readythread: m(r.readythread), threadEvents: m(r.threadEvents) };
      same(chunksOf(moved, [0.4]), { windowEvents: 7 });
      same(chunksOf(moved, [0.4]), { cpus: cpusOf(r) });
      same(chunksOf(moved, [0.4]), { ordered: true, threads: deriveThreads(moved.threadEvents) });
    }
  });

  test('threadStates() of a whole decode (the WebAssembly core) = the reference core given the threads, ordered', () => {
    for (const [, d] of traces) {
      const want: Table<'threadStates'>[] = [];
      const ref = new ThreadStatesDeriver((t) => want.push(t), { threads: d.threads, ordered: true, engine: 'reference' });
      ref.add(d.cswitch, d.readythread);
      ref.finish();
      const got = threadStates(d);
      expect(want.length).toBe(1);
      got.columns.forEach((col, c) => expect(col, got.specs[c]!.name).toEqual(want[0]!.columns[c]));
    }
  });
});

test('streamed through streamFile (borrowed views of the decoder), on one and two decode threads: the same rows', async () => {
  const bytes = generateRealisticTrace({ seed: 36, targetBytes: 1 << 21, cpus: 4 }).bytes;
  const path = join(mkdtempSync(join(tmpdir(), 'etw-states-wasm-')), 't.etl');
  writeFileSync(path, bytes);
  for (const threads of [1, 2]) {
    const tables = { wasm: [] as Table<'threadStates'>[], reference: [] as Table<'threadStates'>[] };
    const stats = [];
    for (const engine of ['wasm', 'reference'] as const) {
      const d = new ThreadStatesDeriver((t) => tables[engine].push(t), { engine, chunkRows: 1000, cpus: 4 });
      await streamFile(path, { windowBytes: 0x10000, threads, rows: 'borrow', onRows: (t) => d.add(t.cswitch, t.readythread, t.threadEvents) });
      stats.push(d.finish());
    }
    expect(stats[0]).toEqual(stats[1]);
    expect(stats[0]!.rows).toBeGreaterThan(5000);
    expect(tables.wasm.length).toBe(tables.reference.length);
    tables.wasm.forEach((t, k) => t.columns.forEach((col, c) => expect(col).toEqual(tables.reference[k]!.columns[c])));
  }
});

test('property: any chunking, window, chunk size, hold, mutation, cpus, ordered, streaming or given the threads — the same rows and statistics', () => {
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
      fc.boolean(),
      fc.boolean(),
      (which, mutation, a, b, windowEvents, chunkRows, holdRows, shuffle, given, withCpus, ordered) => {
        const r = MUTATIONS[mutation]![1](traces[which]![1]);
        let chunks = chunksOf(r, [...a].sort((x, y) => x - y), [...b].sort((x, y) => x - y));
        if (shuffle) chunks = chunks.map((c, k) => [k, c] as const).sort((x, y) => ((x[0] * 7) % 5) - ((y[0] * 7) % 5)).map(([, c]) => c);
        same(chunks, { windowEvents, chunkRows, holdRows, ordered, cpus: withCpus ? cpusOf(r) : undefined, threads: given ? deriveThreads(r.threadEvents) : undefined });
      },
    ),
    { numRuns: 40 },
  );
}, 120_000);
