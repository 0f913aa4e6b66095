// threadStates streamed (ThreadStatesDeriver, src/derive/thread-states.ts) against the whole-trace walk it
// replaced (test/helpers/thread-states-whole.ts) as the oracle: the same set of rows on simulated traces —
// scheduler simulations and realistic traces (thread Start/End, reused ids), with events lost, threads known
// only from the end rundown or not at all, the CPUs' rows arriving in other interleavings (each CPU's in its
// order, as buffers drain), cut into any chunks, and decoded on several threads; threadStates() of a whole
// decode equals the oracle row for row (its order included). The window and the hold bound what is kept.
import { describe, expect, test } from 'vitest';
import fc from 'fast-check';
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as L from '../src/generated/layout.js';
import { decodeSync, streamFile, threadStates, ThreadStatesDeriver, type DecodeResult, type Table, type ThreadStatesOptions } from '../src/node.js';
import { convertFile } from '../src/convert/convert-file.js';
import { deriveThreads } from '../src/derive/lifetimes.js';
import type { TableName, TypedColumn } from '../src/tables/schema.js';
import { Table as TableCtor } from '../src/tables/table.js';
import { generateRealisticTrace, simulateSchedule, writeTrace } from '../src/writer/index.js';
import { DerivedRows } from './helpers/derived-rows.js';
import { threadStatesWhole } from './helpers/thread-states-whole.js';

type Input = { cswitch: Table<'cswitch'>; readythread: Table<'readythread'>; threadEvents: Table<'threadEvents'> };
const KINDS = ['threadEvents', 'readythread', 'cswitch'] as const;

/** Rows idx of t, in that order. */
function pick<T extends TableName>(t: Table<T>, idx: readonly number[]): Table<T> {
  const columns = t.columns.map((c) => (Array.isArray(c) ? idx.map((i) => c[i]!) : (c.constructor as unknown as { from(a: unknown[]): TypedColumn }).from(idx.map((i) => (c as unknown as unknown[])[i])))) as TypedColumn[];
  return new TableCtor(t.name, { length: idx.length, columns }) as unknown as Table<T>;
}

/** A small deterministic generator (mulberry32). */
function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * The rows of `r` as another decode could deliver them: each row lost with probability `lose` (but Thread
 * Starts; Thread DCStart events always, with `noStartRundown`), each CPU's rows in their time order (ties: Thread events,
 * readies, switches) but the CPUs interleaved in blocks of up to `block` rows, then cut into `chunks`
 * chunks. Returns the chunks and the same rows in arrival order as whole tables (the oracle's input).
 */
function delivered(r: Input, seed: number, o: { lose?: number; noStartRundown?: boolean; block?: number; chunks?: number }) {
  const rand = rng(seed);
  type Entry = { kind: number; row: number; hi: bigint };
  const perCpu = new Map<number, Entry[]>();
  KINDS.forEach((name, kind) => {
    const t = r[name] as Table<'cswitch'>;
    const ts = t.columns[t.specs.findIndex((s) => s.name === 'timestamp')] as BigInt64Array;
    const cpu = t.columns[t.specs.findIndex((s) => s.name === 'cpu')] as Uint16Array;
    const op = name === 'threadEvents' ? (t.columns[L.TE_OPCODE] as Uint8Array) : null;
    for (let i = 0; i < t.length; i++) {
      if (op && o.noStartRundown && op[i] === L.OPCODE_DC_START) continue;
      // (a lost Thread Start is the one loss after which streaming can differ: see the test of it below)
      if (o.lose && rand() < o.lose && !(op && op[i] === L.OPCODE_START)) continue;
      (perCpu.get(cpu[i]!) ?? perCpu.set(cpu[i]!, []).get(cpu[i]!)!).push({ kind, row: i, hi: ts[i]! });
    }
  });
  for (const list of perCpu.values()) list.sort((a, b) => (a.hi < b.hi ? -1 : a.hi > b.hi ? 1 : a.kind - b.kind || a.row - b.row));
  const lists = [...perCpu.values()];
  const at = lists.map(() => 0);
  const arrival: Entry[] = [];
  for (;;) {
    const open = lists.map((l, k) => (at[k]! < l.length ? k : -1)).filter((k) => k >= 0);
    if (open.length === 0) break;
    const k = open[Math.floor(rand() * open.length)]!;
    const take = 1 + Math.floor(rand() * (o.block ?? 1));
    for (let j = 0; j < take && at[k]! < lists[k]!.length; j++) arrival.push(lists[k]![at[k]!++]!);
  }
  const cuts = [0, ...Array.from({ length: (o.chunks ?? 1) - 1 }, () => Math.floor(rand() * arrival.length)).sort((a, b) => a - b), arrival.length];
  const part = (from: number, to: number): Input => {
    const idx: number[][] = [[], [], []];
    for (let i = from; i < to; i++) idx[arrival[i]!.kind]!.push(arrival[i]!.row);
    return { threadEvents: pick(r.threadEvents, idx[0]!), readythread: pick(r.readythread, idx[1]!), cswitch: pick(r.cswitch, idx[2]!) };
  };
  return { chunks: cuts.slice(1).map((b, k) => part(cuts[k]!, b)), whole: part(0, arrival.length) };
}

/** The rows as sorted strings (a set to compare). */
function rowSet(tables: Table<'threadStates'>[]): string[] {
  const out: string[] = [];
  for (const t of tables) for (let i = 0; i < t.length; i++) out.push(JSON.stringify(Object.values(t.get(i)), (_, v) => (typeof v === 'bigint' ? v.toString() : v)));
  return out.sort();
}

/** The streamed rows of these chunks, and the statistics (every CPU of the trace in the watermark from the start). */
function streamed(chunks: Input[], options: ThreadStatesOptions = {}) {
  const got: Table<'threadStates'>[] = [];
  const cpus = 1 + Math.max(0, ...chunks.flatMap((c) => Array.from(c.cswitch.column('cpu'))));
  const d = new ThreadStatesDeriver((t) => got.push(t), { cpus, ...options });
  for (const c of chunks) d.add(c.cswitch, c.readythread, c.threadEvents);
  return { stats: d.finish(), got };
}

/** threadStates() of a whole decode by the TypeScript core (`engine: 'reference'`). */
function wholeByReference(w: { cswitch: Table<'cswitch'>; readythread: Table<'readythread'>; threads: Table<'threads'> }): Table<'threadStates'> {
  const got: Table<'threadStates'>[] = [];
  const d = new ThreadStatesDeriver((t) => got.push(t), { threads: w.threads, ordered: true, engine: 'reference' });
  d.add(w.cswitch, w.readythread);
  d.finish();
  return got[0]!;
}

/** The oracle's rows for the whole tables (their threads lifetimes derived from their Thread events). */
function oracle(w: Input): Table<'threadStates'> {
  return threadStatesWhole({ cswitch: w.cswitch, readythread: w.readythread, threads: deriveThreads(w.threadEvents) });
}

const traces: [string, DecodeResult][] = [
  ['compact, 4 CPUs', decodeSync(writeTrace(simulateSchedule({ seed: 31, cpus: 4, duration: 400_000, switchMode: 'compact' }).description).bytes)],
  ['CSwitch v2-v4, 3 CPUs', decodeSync(writeTrace(simulateSchedule({ seed: 32, cpus: 3, duration: 400_000, switchMode: 'cswitch', cswitchVersions: [2, 3, 4] }).description).bytes)],
  ['mixed, 6 CPUs', decodeSync(writeTrace(simulateSchedule({ seed: 33, cpus: 6, duration: 400_000, switchMode: 'mixed' }).description).bytes)],
  ['realistic (thread churn, reused ids)', decodeSync(generateRealisticTrace({ seed: 9, targetBytes: 1 << 20, switches: 'mixed' }).bytes)],
];

describe('streamed = the whole-trace walk (the same set of rows)', () => {
  test.each(traces)('%s: as decoded, in one chunk and in many', (_, r) => {
    const want = rowSet([oracle(r)]);
    expect(want.length).toBeGreaterThan(300);
    for (const chunks of [1, 2, 50]) {
      const { chunks: parts, whole } = delivered(r, chunks, { chunks });
      const { stats, got } = streamed(parts, { chunkRows: 1000 });
      expect([stats.lateEvents, stats.unresolvedRows]).toEqual([0, 0]);
      expect(rowSet(got)).toEqual(rowSet([oracle(whole)]));
    }
    // and the whole decode's threadStates() is the oracle row for row
    const got = threadStates(r);
    const o = threadStatesWhole(r);
    got.columns.forEach((col, c) => expect(col, got.specs[c]!.name).toEqual(o.columns[c]));
    expect(got.textCodes).toBeUndefined(); // a whole table keeps no codes (only streamed chunks, for messages)
  });

  test('any loss, CPU interleaving, chunking, output chunk size; threads known only from the end rundown', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: traces.length - 1 }),
        fc.integer({ min: 1, max: 1e9 }),
        fc.constantFrom(0, 0.001, 0.02, 0.2),
        fc.boolean(),
        fc.constantFrom(1, 16, 500),
        fc.constantFrom(1, 3, 40),
        fc.constantFrom(1, 100, 65536),
        fc.constantFrom('wasm', 'reference'),
        (which, seed, lose, noStartRundown, block, chunks, chunkRows, engine) => {
          const r = traces[which]![1];
          const { chunks: parts, whole } = delivered(r, seed, { lose, noStartRundown, block, chunks });
          const { stats, got } = streamed(parts, { chunkRows, engine }); // the WebAssembly core or its twin
          expect([stats.lateEvents, stats.unresolvedRows]).toEqual([0, 0]);
          expect(rowSet(got)).toEqual(rowSet([oracle(whole)]));
          // given the final lifetimes, the whole decode's rows in their order
          const w = { cswitch: whole.cswitch, readythread: whole.readythread, threads: deriveThreads(whole.threadEvents) };
          const ordered = engine === 'wasm' ? threadStates(w) : wholeByReference(w);
          const o = threadStatesWhole(w);
          ordered.columns.forEach((col, c) => expect(col, ordered.specs[c]!.name).toEqual(o.columns[c]));
        },
      ),
      { numRuns: 40 },
    );
  });

  test('the runs above have lost events, unknown threads and rows that wait for a process id', () => {
    const r = traces[3]![1];
    const { chunks: parts, whole } = delivered(r, 5, { lose: 0.02, noStartRundown: true, block: 16, chunks: 40 });
    const { stats, got } = streamed(parts);
    expect(stats.heldRows).toBeGreaterThan(50);
    const rows = got.flatMap((t) => Array.from({ length: t.length }, (_, i) => t.get(i)));
    expect(rows.filter((x) => x.processId === null).length).toBeGreaterThan(10); // threads with no lifetime at all
    expect(rows.filter((x) => x.state === 'unknown' && x.startTime > whole.cswitch.get(0).timestamp).length).toBeGreaterThan(10); // after lost switch-outs
    expect(deriveThreads(whole.threadEvents).column('startTime').length).toBeGreaterThan(100);
  });
});

describe('bounded', () => {
  const r = traces[2]![1];
  test('a reorder window bounds what is held; what arrives behind it is counted', () => {
    const { chunks } = delivered(r, 3, { block: 500, chunks: 40 });
    const { stats } = streamed(chunks, { windowEvents: 256 });
    expect(stats.maxHeld).toBeLessThanOrEqual(256 + chunks.reduce((m, c) => Math.max(m, c.cswitch.length + c.readythread.length + c.threadEvents.length), 0));
    expect(stats.lateEvents).toBeGreaterThan(0);
    const { stats: big } = streamed(chunks);
    expect(big.lateEvents).toBe(0);
  });

  test('the hold: past holdRows rows are emitted with a process id unknown, and counted', () => {
    const { chunks } = delivered(r, 4, { noStartRundown: true, chunks: 10 });
    const all = streamed(chunks).stats;
    expect(all.heldRows).toBeGreaterThan(50);
    const few = streamed(chunks, { holdRows: 5 }).stats;
    expect([few.heldRows, few.unresolvedRows]).toEqual([5, all.heldRows - 5]);
    expect(few.rows).toBe(all.rows);
  });
});

test('through streamFile, on one and two decode threads, small windows: the same rows', async () => {
  const bytes = writeTrace(simulateSchedule({ seed: 34, cpus: 4, duration: 600_000, switchMode: 'mixed' }).description).bytes;
  const path = join(mkdtempSync(join(tmpdir(), 'etw-tstates-')), 't.etl');
  writeFileSync(path, bytes);
  const want = rowSet([threadStatesWhole(decodeSync(bytes))]);
  for (const threads of [1, 2]) {
    for (const windowBytes of [0x4000, 1 << 22]) {
      const got: Table<'threadStates'>[] = [];
      const d = new ThreadStatesDeriver((t) => got.push(t), { chunkRows: 500 });
      await streamFile(path, { windowBytes, threads, rows: 'borrow', onRows: (t) => d.add(t.cswitch, t.readythread, t.threadEvents) });
      const stats = d.finish();
      expect(stats.lateEvents).toBe(0);
      expect(rowSet(got), `threads ${threads}, window ${windowBytes}`).toEqual(want);
      // each chunk's states also as codes (what a message to a worker sends): the same cells, new codes per chunk
      const at = got[0]!.specs.findIndex((c) => c.name === 'state');
      for (const t of got) {
        const cells = t.textCodes![at]!;
        const state = t.columns[at] as string[];
        expect(Array.from(cells.codes.subarray(0, t.length), (k) => cells.values[k])).toEqual(state.slice(0, t.length));
      }
      expect(new Set(got.map((t) => t.textCodes![at]!.codes)).size).toBe(got.length);
    }
  }
});

test('the one difference: after a lost Thread Start, a thread id with two lifetimes without a Start takes, streamed, the process known at the time', () => {
  const cs = new DerivedRows('cswitch');
  for (const [t, nw, old, state] of [[110, 7, 0, 2], [120, 0, 7, 5]] as const) {
    const r = cs.add();
    cs.set(r, L.CS_TIMESTAMP, BigInt(t));
    cs.set(r, L.CS_CPU, 0);
    cs.set(r, L.CS_NEW_THREAD_ID, nw);
    cs.set(r, L.CS_OLD_THREAD_ID, old);
    cs.set(r, L.CS_OLD_THREAD_STATE, state);
  }
  const te = new DerivedRows('threadEvents');
  // thread 7 of process 70 from the start rundown, its End; the id reused by process 80 whose Start was lost, seen in the end rundown
  for (const [t, op, pid] of [[100, L.OPCODE_DC_START, 70], [200, L.OPCODE_END, 70], [400, L.OPCODE_DC_END, 80]] as const) {
    const r = te.add();
    te.set(r, L.TE_TIMESTAMP, BigInt(t));
    te.set(r, L.TE_OPCODE, op);
    te.set(r, L.TE_CPU, 0);
    te.set(r, L.TE_THREAD_ID, 7);
    te.set(r, L.TE_PROCESS_ID, pid);
  }
  const input = { cswitch: cs.take(), readythread: new DerivedRows('readythread').take(), threadEvents: te.take() };
  const running = (t: Table<'threadStates'>) => Array.from({ length: t.length }, (_, i) => t.get(i)).find((x) => x.state === 'running')!;
  // the whole trace's rule (as cpuUsage's): no lifetime started by then, so the last one without a Start
  expect(running(oracle(input)).processId).toBe(80);
  expect(running(threadStates({ ...input, threads: deriveThreads(input.threadEvents) })).processId).toBe(80);
  // streamed: the lifetime applied by then
  expect(running(streamed([input]).got[0]!).processId).toBe(70);
});

test('convert streams threadStates: its parts hold the rows of threadStates(), in many parts', async () => {
  const bytes = generateRealisticTrace({ seed: 11, targetBytes: 1 << 20, switches: 'mixed' }).bytes;
  const dir = mkdtempSync(join(tmpdir(), 'etw-tstates-convert-'));
  const file = join(dir, 't.etl');
  writeFileSync(file, bytes);
  const result = await convertFile(file, { to: 'csv', outDir: join(dir, 'ds'), tables: ['threadStates'], partRows: 1000, partWorkers: 0 });
  const want = threadStates(decodeSync(bytes));
  expect(result.rows.threadStates).toBe(want.length);
  expect(result.files).toBeGreaterThan(3);
  const lines: string[] = [];
  const walk = (d: string): void => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      if (e.isDirectory()) walk(join(d, e.name));
      else if (e.name.endsWith('.csv')) lines.push(...readFileSync(join(d, e.name), 'utf8').trimEnd().split('\n').slice(1));
    }
  };
  walk(join(dir, 'ds', 'threadStates'));
  const columns = want.specs.length - 1; // the table's columns but valid (the ns columns follow them)
  const got = lines.map((l) => l.split(',').slice(0, columns).join(',')).sort();
  const expected = Array.from({ length: want.length }, (_, i) => Object.values(want.get(i)).slice(0, columns).map((v) => (v === null ? '' : String(v))).join(',')).sort();
  expect(got).toEqual(expected);
});
