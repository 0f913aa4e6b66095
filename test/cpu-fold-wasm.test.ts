// The `cpu` command's fold inside the WebAssembly core (assembly/derive/cpu-fold.ts, a CoreFoldSink's
// fold) against its twin, CpuAnalyzer.addStaged fed by the reference core (`engine: 'reference'`): the
// same analysis — totals, processes, threads (their order and ties), percentiles, warnings — and the same
// statistics, on simulated and realistic traces (both pointer sizes) cut into any chunks, with events
// lost, thread ids reused, threads never known, rows held, times far apart (sums past 2^52, past 2^63),
// percentiles on and off; and row by row (foldRow) on any 64-bit times.
import { describe, expect, test } from 'vitest';
import fc from 'fast-check';
import { CpuAnalyzer, CpuUsageDeriver, type CpuAnalyzerOptions } from '../src/analysis/cpu.js';
import * as L from '../src/generated/layout.js';
import * as R from '../src/derive/cpu-usage.js';
import { deriveInstance } from '../src/engine/wasm/derive.js';
import { deriveThreads } from '../src/derive/lifetimes.js';
import { BUCKETS, KEY_MAPPING, keyOf } from '../src/analysis/distributions.js';
import { Selection } from '../src/select/selection.js';
import { decodeSync, streamFile, type CpuUsageOptions, type DecodeResult, type Table } from '../src/node.js';
import { allocColumn, TABLE_COLUMNS, type TypedColumn } from '../src/tables/schema.js';
import { Table as TableCtor } from '../src/tables/table.js';
import { stageRow } from './helpers/staged-rows.js';
import { chunksOf, table, type Chunk, type In, type Name, lost, noStartRundown, reused, unknown } from './helpers/deriver-chunks.js';
import { generateRealisticTrace, simulateSchedule, writeTrace } from '../src/writer/index.js';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

type Names = Pick<DecodeResult, 'threads' | 'processes' | 'clock'>;

/** An analyzer that counts how its rows came: staged (addStaged calls) or as the core's fold. */
function counted(options: CpuAnalyzerOptions) {
  const a = new CpuAnalyzer(options);
  const calls = { staged: 0, folds: 0 };
  const addStaged = a.addStaged.bind(a);
  const addCoreFold = a.addCoreFold.bind(a);
  a.addStaged = (S, n) => {
    calls.staged++;
    addStaged(S, n);
  };
  a.addCoreFold = (f) => {
    calls.folds++;
    addCoreFold(f);
  };
  return { a, calls };
}

/**
 * The chunks through the WebAssembly core folding for the analyzer, and through the reference core staging
 * to its twin: the same statistics and analysis (the fold used: no row staged). Returns the analysis.
 */
function same(chunks: Chunk[], names: Names, analyzer: CpuAnalyzerOptions = {}, options: CpuUsageOptions = {}) {
  const fold = counted(analyzer);
  const ref = new CpuAnalyzer(analyzer);
  const w = new CpuUsageDeriver(fold.a, { ...options, engine: 'wasm' });
  const ts = new CpuUsageDeriver(ref, { ...options, engine: 'reference' });
  for (const c of chunks) {
    w.add(...c);
    ts.add(...c);
  }
  const stats = w.finish();
  expect(stats).toEqual(ts.finish());
  expect(fold.calls).toEqual({ staged: 0, folds: 1 });
  const got = fold.a.result(names, { stats, dataLoss: 'some' });
  expect(got).toEqual(ref.result(names, { stats, dataLoss: 'some' }));
  return { analysis: got, stats };
}

const MUTATIONS: [string, (r: In) => In][] = [['as written', (r) => r], ['no start rundown', noStartRundown], ['lost events', lost], ['thread ids reused', reused], ['threads never known', unknown]];

const traces: [string, DecodeResult][] = [
  ['schedule compact, 64-bit', decodeSync(writeTrace(simulateSchedule({ seed: 41, cpus: 4, duration: 800_000, switchMode: 'compact' }).description).bytes)],
  ['schedule mixed, 32-bit', decodeSync(writeTrace(simulateSchedule({ seed: 42, cpus: 6, duration: 800_000, switchMode: 'mixed', pointerSize: 4 }).description).bytes)],
  ['realistic, 64-bit', decodeSync(generateRealisticTrace({ seed: 43, targetBytes: 1 << 19, cpus: 4 }).bytes)],
  ['realistic mixed, 32-bit', decodeSync(generateRealisticTrace({ seed: 44, targetBytes: 1 << 19, cpus: 8, switches: 'mixed', pointerSize: 4 }).bytes)],
];

describe.each(traces)('%s', (_, r) => {
  test.each(MUTATIONS)('%s: the same analysis, percentiles on and off, for chunkings, windows and holds', (_, mutate) => {
    const m = mutate(r);
    for (const at of [[], [0.3, 0.31, 0.8], Array.from({ length: 40 }, (_, k) => k / 40)]) {
      for (const percentiles of [true, false]) {
        for (const [windowEvents, holdRows] of [
          [1 << 18, 1 << 16],
          [7, 5],
          [1000, 0],
        ] as const) {
          same(chunksOf(m, at, at.map((f) => f * 0.7)), r, { percentiles }, { windowEvents, holdRows });
        }
        same(chunksOf(m, at), r, { percentiles }, { threads: deriveThreads(m.threadEvents) });
      }
    }
  });
}, 120_000);

describe('what the comparisons cover happens in them', () => {
  const r = traces[2]![1];
  test('percentiles, unknown processes, held and unresolved rows, late events', () => {
    const { analysis, stats } = same(chunksOf(noStartRundown(r), [0.5]), r, {}, { holdRows: 5 });
    expect(stats.heldRows).toBe(5);
    expect(stats.unresolvedRows).toBeGreaterThan(20);
    expect(analysis.threads.some((t) => t.processId === null)).toBe(true);
    expect(analysis.total.readyPercentiles!.count).toBeGreaterThan(1000);
    expect(analysis.threads.filter((t) => t.waitPercentiles!.count > 0).length).toBeGreaterThan(10);
    const c = chunksOf(r, [0.25, 0.5, 0.75]);
    expect(same([c[2]!, c[0]!, c[3]!, c[1]!], r, {}, { windowEvents: 7 }).stats.lateEvents).toBeGreaterThan(100);
    // ties of CPU time (threads that never ran a whole row): their order is the slots'
    const ties = analysis.threads.filter((t, i, all) => all.some((u, j) => j !== i && u.cpuTicks === t.cpuTicks));
    expect(ties.length).toBeGreaterThan(1);
  });

  test('times far apart: sums past 2^52 and past 2^63, durations wrapping as int64, negative ones; warnings', () => {
    const moves: ((t: bigint, i: number) => bigint)[] = [
      (t) => t + 2n ** 60n,
      (t) => t - 2n ** 62n,
      (t, i) => (i % 2 === 0 ? t : t + (1n << 40n)),
      (t, i) => (i % 2 === 0 ? t : t + (1n << 62n)),
      (t, i) => (i % 3 === 0 ? t - (1n << 62n) : i % 3 === 1 ? t + (1n << 62n) - 1n : t),
    ];
    let past52 = 0;
    let past63 = 0;
    for (const move of moves) {
      const m = <T extends Name>(t: Table<T>): Table<T> => {
        const c = t.columns.slice();
        c[0] = (t.columns[0] as BigInt64Array).map((x, i) => move(x, i));
        return table(t.name as T, t.length, c as TypedColumn[]);
      };
      const moved = { cswitch: m(r.cswitch), readythread: m(r.readythread), threadEvents: m(r.threadEvents) };
      for (const percentiles of [true, false]) {
        for (const windowEvents of [7, 1 << 18]) {
          const { analysis } = same(chunksOf(moved, [0.4]), r, { percentiles }, { windowEvents });
          const sums = analysis.threads.flatMap((t) => [t.cpuTicks, t.readyTicks, t.waitTicks]);
          past52 += sums.filter((x) => x > 2n ** 52n || x < -(2n ** 52n)).length;
          past63 += sums.filter((x) => x > 2n ** 63n || x < -(2n ** 63n)).length;
          if (percentiles) expect(analysis.warnings.length).toBeGreaterThan(0);
        }
      }
    }
    expect(past52).toBeGreaterThan(10);
    expect(past63).toBeGreaterThan(10);
  });

  test('a selection or the longest ready delays: the rows are staged, as before (the same analysis as the reference core)', () => {
    const chunks = chunksOf(r, [0.5]);
    const tid = (r.cswitch.columns[L.CS_NEW_THREAD_ID] as Uint32Array)[100]!;
    for (const options of [{ worst: 5 }, { selection: new Selection(null, null, null, new Set([tid]), r.threads) }, { worst: 3, percentiles: false }]) {
      const staged = counted(options);
      const ref = new CpuAnalyzer(options);
      expect(staged.a.coreFold()).toBeNull();
      const w = new CpuUsageDeriver(staged.a);
      const ts = new CpuUsageDeriver(ref, { engine: 'reference' });
      for (const c of chunks) {
        w.add(...c);
        ts.add(...c);
      }
      const stats = w.finish();
      expect(stats).toEqual(ts.finish());
      expect(staged.calls.folds).toBe(0);
      expect(staged.calls.staged).toBeGreaterThan(0);
      expect(staged.a.result(r, { stats })).toEqual(ref.result(r, { stats }));
    }
    // coreFold: false stages to a CoreFoldSink too
    const off = counted({});
    const d = new CpuUsageDeriver(off.a, { coreFold: false });
    for (const c of chunks) d.add(...c);
    d.finish();
    expect(off.calls.folds).toBe(0);
  });
});

test('streamed through streamFile (borrowed views of the decoder): the fold gives the analysis the reference core gives', async () => {
  const bytes = generateRealisticTrace({ seed: 46, targetBytes: 1 << 21, cpus: 4 }).bytes;
  const path = join(mkdtempSync(join(tmpdir(), 'etw-cpu-fold-')), 't.etl');
  writeFileSync(path, bytes);
  const fold = counted({});
  const ref = new CpuAnalyzer({});
  const w = new CpuUsageDeriver(fold.a);
  const ts = new CpuUsageDeriver(ref, { engine: 'reference' });
  const names = await streamFile(path, {
    windowBytes: 0x10000,
    rows: 'borrow',
    onRows: (t) => {
      w.add(t.cswitch, t.readythread, t.threadEvents);
      ts.add(t.cswitch, t.readythread, t.threadEvents);
    },
  });
  const stats = w.finish();
  expect(stats).toEqual(ts.finish());
  expect(stats.rows).toBeGreaterThan(5000);
  expect(fold.calls).toEqual({ staged: 0, folds: 1 });
  expect(fold.a.result(names, { stats })).toEqual(ref.result(names, { stats }));
});

test('property: any chunking, window, hold, mutation, percentiles, streaming or given the threads — the same analysis', () => {
  fc.assert(
    fc.property(
      fc.integer({ min: 0, max: traces.length - 1 }),
      fc.integer({ min: 0, max: MUTATIONS.length - 1 }),
      fc.array(fc.double({ min: 0, max: 1, noNaN: true }), { maxLength: 16 }),
      fc.array(fc.double({ min: 0, max: 1, noNaN: true }), { maxLength: 16 }),
      fc.constantFrom(1, 7, 64, 1000, 1 << 18),
      fc.constantFrom(0, 1, 5, 1 << 16),
      fc.boolean(),
      fc.boolean(),
      (which, mutation, a, b, windowEvents, holdRows, percentiles, given) => {
        const r = traces[which]![1];
        const m = MUTATIONS[mutation]![1](r);
        const chunks = chunksOf(m, [...a].sort((x, y) => x - y), [...b].sort((x, y) => x - y));
        same(chunks, r, { percentiles }, given ? { threads: deriveThreads(m.threadEvents) } : { windowEvents, holdRows });
      },
    ),
    { numRuns: 40 },
  );
});

/** no names: the analysis of the rows alone */
const NO_NAMES = {
  threads: new TableCtor('threads', { length: 0, columns: TABLE_COLUMNS.threads.map((c) => allocColumn(c.type, 0)) }),
  processes: new TableCtor('processes', { length: 0, columns: TABLE_COLUMNS.processes.map((c) => allocColumn(c.type, 0)) }),
  clock: null,
};

test('property: rows of any 64-bit times folded by foldRow (after some staged) equal them staged to addStaged (sums past 2^64, wrapping durations, buckets, maxima, span)', () => {
  const time = fc.oneof(
    fc.bigInt({ min: 0n, max: 1n << 36n }),
    fc.bigInt({ min: -(1n << 63n), max: (1n << 63n) - 1n }),
    fc.constantFrom(-(1n << 63n), (1n << 63n) - 1n, (1n << 51n) + 7n, (1n << 52n) - 1n, 1n << 53n, 0n),
  );
  const timedRow = fc.record({
    tid: fc.integer({ min: 0, max: 6 }),
    pid: fc.option(fc.integer({ min: 0, max: 2 })),
    cpu: fc.integer({ min: 0, max: 70 }),
    in: time,
    next: fc.option(time),
    ready: fc.option(time),
    last: fc.option(time),
  });
  fc.assert(
    fc.property(fc.array(timedRow, { minLength: 1, maxLength: 100 }), fc.integer({ min: 1, max: 3000 }), fc.boolean(), fc.double({ min: 0, max: 1, noNaN: true }), (rows, repeat, percentiles, before) => {
      // repeated, so that sums pass 2^52, 2^63 and 2^64 with durations of any size
      const all = Array.from({ length: Math.min(repeat, Math.floor(6000 / rows.length) + 1) }, () => rows).flat();
      const n = all.length;
      const S = new Int32Array(n * R.RWS);
      const staged = new CpuAnalyzer({ percentiles });
      const folded = new CpuAnalyzer({ percentiles });
      const w = deriveInstance(() => {});
      const request = folded.coreFold()!;
      w.foldInit(request.histograms !== null, request.histograms?.lnGamma ?? 0, request.histograms?.maxIndex ?? 0);
      // the deriver's thread slot: one per thread id, or (some rows) one that another thread had, or none (-1: a switch without its new thread id)
      all.forEach((r, i) => stageRow(S, i, r, i % 3 === 0 ? 0 : i % 7 === 1 ? -1 : r.tid + 1 + (i % 5 === 0 ? 300 : 0)));
      // the first rows staged to both (the fold then merges into slots, sums and histograms there), the rest folded
      const k = Math.floor(before * n);
      staged.addStaged(S, n);
      folded.addStaged(S, k);
      for (let i = k; i < n; i++) {
        const b = i * R.RWS;
        const t = (hi: number) => (BigInt(S[b + hi]!) << 32n) | BigInt(S[b + hi + 1]! >>> 0);
        w.foldRow(S[b + R.R_VALID]!, S[b + R.R_CPU]!, t(R.R_IN_HI), t(R.R_NEXT_HI), t(R.R_READY_HI), t(R.R_LAST_HI), S[b + R.R_NEW_TID]!, S[b + R.R_NEW_PID]!, S[b + R.R_NEW_SLOT]!);
      }
      folded.addCoreFold(R.coreFoldOf(w));
      const context = { stats: { rows: n, lateEvents: 0, maxHeld: 0, threads: 0, heldRows: 0, unresolvedRows: 3 } };
      expect(folded.result(NO_NAMES, context)).toEqual(staged.result(NO_NAMES, context));
    }),
    { numRuns: 150 },
  );
});

test("every bucket boundary: the fold's bucket of a value is keyOf's (distributions.ts), from 1 to 2^63, both signs", () => {
  const w = deriveInstance(() => {});
  w.foldInit(true, KEY_MAPPING.lnGamma, KEY_MAPPING.maxIndex);
  const values: bigint[] = [0n, 1n, -1n, (1n << 63n) - 1n, -(1n << 63n), (1n << 53n) + 1n, (1n << 53n) - 1n];
  for (let i = 0; i <= KEY_MAPPING.maxIndex; i++) {
    const edge = Math.exp(i * KEY_MAPPING.lnGamma);
    if (edge >= 2 ** 63) break;
    const x = BigInt(Math.floor(edge));
    for (let d = -2n; d <= 2n; d++) if (x + d > 0n && x + d < 1n << 63n) values.push(x + d, -(x + d));
  }
  // each value the ready of its own slot (thread id = its index)
  values.forEach((x, i) => w.foldRow((1 << L.CU_READY) | (1 << L.CU_NEW_PROCESS_ID), 0, x, 0n, 0n, 0n, i, 1, i));
  const { table } = R.coreFoldOf(w).histograms![0];
  const got = new Int32Array(values.length).fill(-1);
  for (let e = 0; e < table.length; e += 2) {
    const cell = table[e]!;
    if (cell === 0) continue;
    const g = Math.floor((cell - 1) / BUCKETS);
    got[g] = cell - 1 - g * BUCKETS;
  }
  const want = values.map((x) => keyOf(Number(BigInt.asIntN(32, x)), Number(BigInt.asIntN(32, x >> 32n))));
  expect(values.length).toBeGreaterThan(20_000);
  expect(Array.from(got)).toEqual(want);
});
