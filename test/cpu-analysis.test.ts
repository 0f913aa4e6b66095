// CpuAnalyzer (src/analysis/cpu.ts) sums cpuUsage rows by (thread, process) in typed arrays, 64-bit sums
// split into words: it equals the plain BigInt-per-row sums, in the same order, whatever the values
// (near ±2^63, sums past 2^64), the null cells and the chunking.
import { describe, expect, test } from 'vitest';
import fc from 'fast-check';
import * as L from '../src/generated/layout.js';
import { CpuAnalyzer, CpuUsageDeriver } from '../src/analysis/cpu.js';
import * as R from '../src/derive/cpu-usage.js';
import { decodeSync } from '../src/node.js';
import { simulateSchedule, writeTrace } from '../src/writer/index.js';
import { allocColumn, TABLE_COLUMNS } from '../src/tables/schema.js';
import { Table } from '../src/tables/table.js';
import { stageRow } from './helpers/staged-rows.js';

interface Row {
  tid: number;
  pid: number | null;
  usage: bigint | null;
  ready: bigint | null;
  waits: bigint | null;
}

function table(rows: Row[]): Table<'cpuUsage'> {
  const cols = TABLE_COLUMNS.cpuUsage.map((c) => allocColumn(c.type, rows.length));
  rows.forEach((r, i) => {
    let v = (1 << L.CU_VALID) | (1 << L.CU_NEW_THREAD_ID);
    (cols[L.CU_NEW_THREAD_ID] as Uint32Array)[i] = r.tid;
    // null cells hold garbage here: the analyzer must look at the valid bits
    (cols[L.CU_NEW_PROCESS_ID] as Uint32Array)[i] = r.pid ?? 0xdead;
    if (r.pid !== null) v |= 1 << L.CU_NEW_PROCESS_ID;
    for (const [col, x] of [[L.CU_CPU_USAGE, r.usage], [L.CU_READY, r.ready], [L.CU_WAITS, r.waits]] as const) {
      (cols[col] as BigInt64Array)[i] = x ?? -12345n;
      if (x !== null) v |= 1 << col;
    }
    (cols[L.CU_VALID] as Uint32Array)[i] = v >>> 0;
  });
  return new Table('cpuUsage', { length: rows.length, columns: cols });
}

/** no names: the analysis of the rows alone */
const NO_NAMES = {
  threads: new Table('threads', { length: 0, columns: TABLE_COLUMNS.threads.map((c) => allocColumn(c.type, 0)) }),
  processes: new Table('processes', { length: 0, columns: TABLE_COLUMNS.processes.map((c) => allocColumn(c.type, 0)) }),
  clock: null,
};

/** The sums by a Map of BigInts per row, threads in the order first seen. */
function plainSums(rows: Row[]) {
  const by = new Map<string, { threadId: number; processId: number | null; switchIns: number; cpuTicks: bigint; readyTicks: bigint; waitTicks: bigint }>();
  for (const r of rows) {
    const key = `${r.tid}/${r.pid}`;
    let a = by.get(key);
    if (!a) by.set(key, (a = { threadId: r.tid, processId: r.pid, switchIns: 0, cpuTicks: 0n, readyTicks: 0n, waitTicks: 0n }));
    a.switchIns++;
    a.cpuTicks += r.usage ?? 0n;
    a.readyTicks += r.ready ?? 0n;
    a.waitTicks += r.waits ?? 0n;
  }
  return [...by.values()];
}

const i64 = fc.oneof(
  fc.bigInt({ min: 0n, max: 1n << 40n }),
  fc.bigInt({ min: -(1n << 63n), max: (1n << 63n) - 1n }),
  fc.constantFrom(-(1n << 63n), (1n << 63n) - 1n, (1n << 32n) - 1n, 1n << 32n, -1n, 0n),
);
const row = fc.record({
  tid: fc.oneof(fc.integer({ min: 0, max: 12 }), fc.constantFrom(0xffffffff, 0x80000000)),
  pid: fc.option(fc.oneof(fc.integer({ min: 0, max: 3 }), fc.constant(0xffffffff))),
  usage: fc.option(i64),
  ready: fc.option(i64),
  waits: fc.option(i64),
});

describe('CpuAnalyzer', () => {
  test('equals BigInt sums per (thread, process), any values, nulls and chunking', () => {
    fc.assert(
      fc.property(fc.array(row, { maxLength: 300 }), fc.array(fc.nat(), { maxLength: 5 }), (rows, cutsAt) => {
        const a = new CpuAnalyzer();
        const cuts = [...new Set(cutsAt.map((c) => c % (rows.length + 1)))].sort((x, y) => x - y);
        let from = 0;
        for (const c of [...cuts, rows.length]) {
          a.add(table(rows.slice(from, c)));
          from = c;
        }
        const got = a.result(NO_NAMES);
        const want = plainSums(rows);
        const threads = got.threads.map((t) => ({ threadId: t.threadId, processId: t.processId, switchIns: t.switchIns, cpuTicks: t.cpuTicks, readyTicks: t.readyTicks, waitTicks: t.waitTicks }));
        const byCpu = (x: (typeof want)[number], y: (typeof want)[number]) =>
          (x.cpuTicks > y.cpuTicks ? -1 : x.cpuTicks < y.cpuTicks ? 1 : y.switchIns - x.switchIns) || x.threadId - y.threadId;
        expect(threads).toEqual([...want].sort(byCpu));
        expect(got.total.cpuTicks).toBe(want.reduce((s, x) => s + x.cpuTicks, 0n));
        expect(got.total.switchIns).toBe(rows.length);
      }),
      { numRuns: 200 },
    );
  });

  test('sums beyond 2^84 (the high words past 2^52) stay exact', () => {
    const n = 1 << 20;
    const cols = TABLE_COLUMNS.cpuUsage.map((c) => allocColumn(c.type, n));
    const big = (1n << 63n) - 1n;
    (cols[L.CU_NEW_THREAD_ID] as Uint32Array).fill(4);
    (cols[L.CU_CPU_USAGE] as BigInt64Array).fill(big);
    (cols[L.CU_READY] as BigInt64Array).fill(-(1n << 63n));
    (cols[L.CU_WAITS] as BigInt64Array).fill(3n);
    (cols[L.CU_VALID] as Uint32Array).fill((1 << L.CU_VALID) | (1 << L.CU_NEW_THREAD_ID) | (1 << L.CU_CPU_USAGE) | (1 << L.CU_READY) | (1 << L.CU_WAITS));
    const a = new CpuAnalyzer();
    for (let k = 0; k < 5; k++) a.add(new Table('cpuUsage', { length: n, columns: cols })); // 5 x 2^20 rows: sums near ±2^85.3
    const t = a.result(NO_NAMES).threads[0]!;
    expect([t.switchIns, t.cpuTicks, t.readyTicks, t.waitTicks]).toEqual([5 * n, 5n * BigInt(n) * big, -5n * BigInt(n) * (1n << 63n), 15n * BigInt(n)]);
  });

  test('milliseconds: (ticks · 10^6 / ticks per second, truncated) / 1000 for any sums and clock', () => {
    fc.assert(
      fc.property(fc.array(row, { minLength: 1, maxLength: 60 }), fc.oneof(fc.bigInt({ min: 1n, max: 1n << 40n }), fc.constantFrom(10_000_000n, 3n, (1n << 53n) - 1n, 1n << 53n, 1n << 62n)), (rows, ticksPerSecond) => {
        const a = new CpuAnalyzer();
        a.add(table(rows));
        const clock = { ticksPerSecond, toNanoseconds: (t: bigint) => t } as unknown as NonNullable<Parameters<CpuAnalyzer['result']>[0]['clock']>;
        const got = a.result({ ...NO_NAMES, clock });
        const ms = (t: bigint) => Number((t * 1_000_000n) / ticksPerSecond) / 1000;
        for (const x of [...got.threads, ...got.processes, got.total]) {
          expect([x.cpuMs, x.readyMs, x.waitMs]).toEqual([ms(x.cpuTicks), ms(x.readyTicks), ms(x.waitTicks)]);
          expect(Object.is(x.cpuMs, -0)).toBe(false);
        }
      }),
      { numRuns: 200 },
    );
  });

  test('staged rows (a CpuUsageDeriver sink): durations from any 64-bit times, wrapping as int64, the same sums and analysis as the columns', () => {
    const wrap = (x: bigint) => BigInt.asIntN(64, x);
    const time = fc.oneof(fc.bigInt({ min: 0n, max: 1n << 36n }), fc.bigInt({ min: -(1n << 63n), max: (1n << 63n) - 1n }), fc.constantFrom(-(1n << 63n), (1n << 63n) - 1n, (1n << 51n) + 7n, 0n));
    const timedRow = fc.record({
      tid: fc.integer({ min: 0, max: 6 }),
      pid: fc.option(fc.integer({ min: 0, max: 2 })),
      cpu: fc.integer({ min: 0, max: 3 }),
      in: time,
      next: fc.option(time),
      ready: fc.option(time),
      last: fc.option(time),
      readying: fc.option(fc.integer({ min: 0, max: 9 })),
    });
    fc.assert(
      fc.property(fc.array(timedRow, { minLength: 1, maxLength: 200 }), fc.integer({ min: 1, max: 5000 }), fc.integer({ min: 1, max: 64 }), (rows, repeat, block) => {
        // repeated, so that sums pass 2^52 (the spill) with durations of any size
        const all = Array.from({ length: Math.min(repeat, Math.floor(20000 / rows.length) + 1) }, () => rows).flat();
        const n = all.length;
        const S = new Int32Array(n * R.RWS);
        const cols = TABLE_COLUMNS.cpuUsage.map((c) => allocColumn(c.type, n));
        const put = (col: number, i: number, x: bigint) => ((cols[col] as BigInt64Array)[i] = x);
        all.forEach((r, i) => {
          // the deriver's thread slot: one per thread id, or (some rows) one that another thread had
          const v = stageRow(S, i, r, i % 3 === 0 ? 0 : r.tid + 1);
          (cols[L.CU_CPU] as Uint16Array)[i] = r.cpu;
          (cols[L.CU_NEW_THREAD_ID] as Uint32Array)[i] = r.tid;
          put(L.CU_SWITCH_IN_TIME, i, r.in);
          if (r.pid !== null) (cols[L.CU_NEW_PROCESS_ID] as Uint32Array)[i] = r.pid;
          if (r.next !== null) {
            put(L.CU_NEXT_SWITCH_OUT_TIME, i, r.next);
            put(L.CU_CPU_USAGE, i, wrap(r.next - r.in));
          }
          if (r.ready !== null) {
            put(L.CU_READY_TIME, i, r.ready);
            put(L.CU_READY, i, wrap(r.in - r.ready));
            if (r.readying !== null) (cols[L.CU_READYING_THREAD_ID] as Uint32Array)[i] = r.readying;
          }
          if (r.last !== null) {
            put(L.CU_LAST_SWITCH_OUT_TIME, i, r.last);
            if (r.ready !== null) put(L.CU_WAITS, i, wrap(r.ready - r.last));
          }
          (cols[L.CU_VALID] as Uint32Array)[i] = v >>> 0;
        });
        for (const options of [{}, { percentiles: false }, { worst: 5, percentiles: false }]) {
          const staged = new CpuAnalyzer(options);
          for (let from = 0; from < n; from += block) staged.addStaged(S.subarray(from * R.RWS), Math.min(block, n - from));
          const columns = new CpuAnalyzer(options);
          columns.add(new Table('cpuUsage', { length: n, columns: cols }));
          const got = staged.result(NO_NAMES);
          expect(got).toEqual(columns.result(NO_NAMES));
          const want = plainSums(all.map((r) => ({ tid: r.tid, pid: r.pid, usage: r.next === null ? null : wrap(r.next - r.in), ready: r.ready === null ? null : wrap(r.in - r.ready), waits: r.ready === null || r.last === null ? null : wrap(r.ready - r.last) })));
          const key = (t: { threadId: number; processId: number | null }) => `${t.threadId}/${t.processId}`;
          const sums = new Map(got.threads.map((t) => [key(t), [t.switchIns, t.cpuTicks, t.readyTicks, t.waitTicks]]));
          for (const w of want) expect(sums.get(key(w)), key(w)).toEqual([w.switchIns, w.cpuTicks, w.readyTicks, w.waitTicks]);
        }
      }),
      { numRuns: 60 },
    );
  });

  test('as a CpuUsageDeriver sink (the rows as staged, no columns): the same analysis and statistics as from the chunks', () => {
    const r = decodeSync(writeTrace(simulateSchedule({ seed: 31, cpus: 3, duration: 600_000, switchMode: 'mixed' }).description).bytes);
    // without the start rundown most threads are known only at the end: rows wait, or go out unresolved
    const op = r.threadEvents.columns[L.TE_OPCODE] as Uint8Array;
    const keep = Array.from(op, (o) => o !== L.OPCODE_DC_START);
    const late = new Table('threadEvents', { length: keep.filter(Boolean).length, columns: r.threadEvents.columns.map((c) => (c as Uint8Array).filter((_, i) => keep[i])) as typeof r.threadEvents.columns });
    const slice = <T extends 'cswitch' | 'readythread' | 'threadEvents'>(t: Table<T>, a: number, b: number): Table<T> =>
      new Table(t.name, { length: b - a, columns: t.columns.map((c) => c.slice(a, b)) }) as unknown as Table<T>;
    fc.assert(
      fc.property(
        fc.boolean(),
        fc.array(fc.double({ min: 0, max: 1, noNaN: true }), { maxLength: 8 }),
        fc.constantFrom(7, 1000, 1 << 18),
        fc.constantFrom(0, 5, 1 << 16),
        fc.constantFrom(3, 100, 65536),
        (withStartRundown, at, windowEvents, holdRows, chunkRows) => {
          const te = withStartRundown ? r.threadEvents : late;
          const cuts = [0, ...[...at].sort((x, y) => x - y), 1];
          const byChunks = new CpuAnalyzer({ worst: 25 });
          const bySink = new CpuAnalyzer({ worst: 25 });
          const d1 = new CpuUsageDeriver((t) => byChunks.add(t), { windowEvents, holdRows, chunkRows });
          const d2 = new CpuUsageDeriver(bySink, { windowEvents, holdRows, chunkRows });
          for (let k = 1; k < cuts.length; k++) {
            const part = <T extends 'cswitch' | 'readythread' | 'threadEvents'>(t: Table<T>) => slice(t, Math.floor(cuts[k - 1]! * t.length), Math.floor(cuts[k]! * t.length));
            d1.add(part(r.cswitch), part(r.readythread), part(te));
            d2.add(part(r.cswitch), part(r.readythread), part(te));
          }
          expect(d2.finish()).toEqual(d1.finish());
          expect(bySink.result(r)).toEqual(byChunks.result(r));
        },
      ),
      { numRuns: 40 },
    );
  });
});

