// How a conversion's rows become parts (src/convert/parts.ts, sort.ts, part-writers.ts): the (cpu, time)
// partition sort equals the full sort whatever the input (per-CPU runs in time order, runs out of order,
// shuffled rows), its scratch reused from call to call, in place or into other columns; the column sets
// handed to the writers and given back are reused without a part's rows changing while it is being
// written; the writers sort each part; text columns travel to a worker as codes and come back whole.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import fc from 'fast-check';
import { finishParts, Parts } from '../src/convert/parts.js';
import { inThreadParts, type PartWriters } from '../src/convert/part-writers.js';
import { chunkMessage, chunkOf } from '../src/tables/chunk-message.js';
import type { DatasetWriter } from '../src/convert/formats.js';
import { CpuTimeSorter, cpuTimeOrder } from '../src/convert/sort.js';
import { allocColumn, TABLE_COLUMNS, type ColumnChunk, type TableName, type TypedColumn } from '../src/tables/schema.js';

/** (cpu, time, row) in the order the full sort gives: by cpu, then time, then input position. */
function fullSort(cpu: number[], time: bigint[]): number[] {
  return cpu.map((_, i) => i).sort((x, y) => cpu[x]! - cpu[y]! || (time[x]! < time[y]! ? -1 : time[x]! > time[y]! ? 1 : x - y));
}

/** Rows as per-CPU runs in time order, interleaved as buffers are (runs of 1..8 rows), some CPUs' times disturbed. */
const runsOf = fc
  .record({
    cpus: fc.integer({ min: 1, max: 6 }),
    rows: fc.array(fc.tuple(fc.nat(5), fc.integer({ min: 1, max: 8 }), fc.bigInt({ min: 0n, max: 1000n })), { maxLength: 60 }),
    disturb: fc.array(fc.tuple(fc.nat(400), fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n })), { maxLength: 3 }),
  })
  .map(({ cpus, rows, disturb }) => {
    const cpu: number[] = [];
    const time: bigint[] = [];
    const clock = new Array<bigint>(cpus).fill(-(2n ** 40n));
    for (const [c0, run, step] of rows) {
      const c = c0 % cpus;
      for (let k = 0; k < run; k++) {
        clock[c]! += step; // steps of 0: equal times, kept in input order
        cpu.push(c);
        time.push(clock[c]!);
      }
    }
    for (const [at, t] of disturb) if (time.length > 0) time[at % time.length] = t;
    return { cpu, time };
  });

describe('the (cpu, time) partition sort', () => {
  test('equals the full sort: per-CPU runs in order, runs out of order, any rows; one sorter reused for every call (property)', () => {
    const sorter = new CpuTimeSorter();
    const anyRows = fc.array(fc.tuple(fc.nat(9), fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n })), { maxLength: 80 }).map((r) => ({ cpu: r.map((x) => x[0]), time: r.map((x) => x[1]) }));
    fc.assert(
      fc.property(fc.oneof(runsOf, anyRows), ({ cpu, time }) => {
        const n = cpu.length;
        // columns longer than the rows (a staging set): only the first n rows count
        const cpuCol = new Uint16Array(n + 3).fill(7);
        cpuCol.set(cpu);
        const timeCol = new BigInt64Array(n + 3).fill(-1n);
        timeCol.set(time);
        const pos = sorter.positions(cpuCol, timeCol, n);
        const want = fullSort(cpu, time);
        if (pos === null) expect(want).toEqual(cpu.map((_, i) => i));
        else {
          const order = new Array<number>(n);
          for (let i = 0; i < n; i++) order[pos[i]!] = i;
          expect(order).toEqual(want);
        }
        expect(Array.from(cpuTimeOrder(Uint16Array.from(cpu), BigInt64Array.from(time), n) ?? cpu.map((_, i) => i))).toEqual(want);
        // in place (a part writer's sort): the row numbers in threadId come out in the full sort's order
        const cols = TABLE_COLUMNS.readythread.map((spec): TypedColumn =>
          spec.name === 'cpu' ? Uint16Array.from(cpu) : spec.name === 'timestamp' ? BigInt64Array.from(time) : spec.name === 'threadId' ? Uint32Array.from(cpu.map((_, i) => i)) : allocColumn(spec.type, n),
        );
        sorter.sortInPlace('readythread', cols, n);
        expect(Array.from(cols[TABLE_COLUMNS.readythread.findIndex((c) => c.name === 'threadId')] as Uint32Array)).toEqual(want);
        expect(Array.from(cols[TABLE_COLUMNS.readythread.findIndex((c) => c.name === 'timestamp')] as BigInt64Array)).toEqual(want.map((i) => time[i]));
      }),
      { numRuns: 2000 },
    );
  });

  test('sortInto moves every column of the rows, text included, into the given columns', () => {
    const sorter = new CpuTimeSorter();
    const n = 5;
    const src = TABLE_COLUMNS.threadEvents.map((s, c): TypedColumn => {
      if (s.type === 'str') return ['a', 'b', 'c', 'd', 'e', 'x'];
      const col = new (s.type === 'i64' ? BigInt64Array : s.type === 'u64' ? BigUint64Array : s.type === 'f64' ? Float64Array : Uint32Array)(n + 1) as TypedColumn;
      return col;
    });
    const cols = TABLE_COLUMNS.threadEvents.map((s) => s.name);
    (src[cols.indexOf('cpu')] = Uint16Array.from([1, 0, 1, 0, 0, 9])), (src[cols.indexOf('timestamp')] = BigInt64Array.from([5n, 9n, 2n ** 62n, -3n, 9n, 0n]));
    src[cols.indexOf('threadId')] = Uint32Array.from([10, 11, 12, 13, 14, 15]);
    src[cols.indexOf('opcode')] = Uint8Array.from([1, 2, 3, 4, 5, 6]);
    src[cols.indexOf('basePriority')] = Uint8Array.from([0, 0, 0, 0, 0, 0]);
    src[cols.indexOf('version')] = Uint8Array.from([0, 0, 0, 0, 0, 0]);
    const dst = TABLE_COLUMNS.threadEvents.map((s) => (s.type === 'str' ? new Array<string>(n).fill('') : new (src[s.id]!.constructor as Uint32ArrayConstructor)(n))) as TypedColumn[];
    expect(sorter.sortInto('threadEvents', src, n, dst)).toBe(true);
    expect(Array.from(dst[cols.indexOf('threadId')] as Uint32Array)).toEqual([13, 11, 14, 10, 12]);
    expect(dst[cols.indexOf('name')]).toEqual(['d', 'b', 'e', 'a', 'c']);
    expect(Array.from(dst[cols.indexOf('timestamp')] as BigInt64Array)).toEqual([-3n, 9n, 9n, 5n, 2n ** 62n]);
    expect(sorter.sortInto('threads', src, n, dst)).toBe(false); // no cpu: not sorted
  });
});

/** A copy of a chunk's rows, as plain values. */
function rowsOf(chunk: ColumnChunk): unknown[][] {
  return chunk.columns.map((c) => Array.from(c as ArrayLike<unknown>).slice(0, chunk.length));
}

/**
 * Part writers that sort each part in place (as a worker does) and keep it "in flight" until released (as
 * a worker would, while the converting thread goes on), checking when they give it back that its rows did
 * not change meanwhile.
 */
function slowWriters(): { writers: PartWriters; parts: unknown[][][]; releaseAll(): void; changed: string[] } {
  const parts: unknown[][][] = [];
  const waiting: (() => void)[] = [];
  const changed: string[] = [];
  const sorter = new CpuTimeSorter();
  const writers: PartWriters = {
    async write(path, table, chunk, owned, giveBack) {
      expect(owned).toBe(chunk.length > 0);
      sorter.sortInPlace(table, chunk.columns, chunk.length);
      const at = rowsOf(chunk);
      parts.push(at);
      let done!: (n: number) => void;
      const size = new Promise<number>((r) => (done = r));
      waiting.push(() => {
        if (JSON.stringify(rowsOf(chunk), (_, v) => (typeof v === 'bigint' ? String(v) : v)) !== JSON.stringify(at, (_, v) => (typeof v === 'bigint' ? String(v) : v))) changed.push(path);
        if (owned) giveBack?.(chunk.columns);
        done(chunk.length);
      });
      return { size };
    },
    async close() {},
  };
  return { writers, parts, changed, releaseAll: () => waiting.splice(0).forEach((f) => f()) };
}

describe('parts', () => {
  test('column sets handed to the writers come back and are reused; no part changes while it is written; the rows are every row, each part sorted', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'etw-parts-'));
    for (const table of ['readythread', 'threadEvents', 'threads'] as TableName[]) {
      const { writers, parts, releaseAll, changed } = slowWriters();
      const p = new Parts(table, join(dir, table), writers, 'x', 7);
      const specs = TABLE_COLUMNS[table];
      const all: unknown[][] = specs.map(() => []);
      let row = 0;
      for (let k = 0; k < 12; k++) {
        const n = (k * 5) % 11;
        const columns = specs.map((s): TypedColumn => {
          if (s.type === 'str') return Array.from({ length: n }, (_, i) => `s${(row + i) % 3}`);
          if (s.name === 'cpu') return Uint16Array.from({ length: n }, (_, i) => (row + i) % 3);
          if (s.type === 'i64') return BigInt64Array.from({ length: n }, (_, i) => BigInt(1000 - row - i)); // out of time order per CPU
          if (s.type === 'u64') return BigUint64Array.from({ length: n }, (_, i) => BigInt(row + i) << 40n);
          if (s.type === 'f64') return Float64Array.from({ length: n }, (_, i) => row + i);
          if (s.type === 'u32' || s.type === 'i32') return Uint32Array.from({ length: n }, (_, i) => row + i);
          return Uint8Array.from({ length: n }, (_, i) => (row + i) & 0xff);
        });
        columns.forEach((c, i) => all[i]!.push(...Array.from(c as ArrayLike<unknown>)));
        // the chunk is written over after add (a borrowed chunk): the parts must have copied it
        await p.add({ length: n, columns });
        for (const c of columns) (c as { fill(v: unknown): void }).fill(Array.isArray(c) ? 'gone' : c instanceof BigInt64Array || c instanceof BigUint64Array ? 0n : 0);
        row += n;
        if (k % 3 === 2) releaseAll(); // some parts come back while others are still out
      }
      const finished = p.finish();
      releaseAll();
      await finished;
      expect(changed).toEqual([]);
      expect(p.rows).toBe(row);
      expect(parts.length).toBe(Math.ceil(row / 7));
      // every row once, each part in (cpu, time) order
      const cpuAt = specs.findIndex((s) => s.name === 'cpu');
      const timeAt = specs.findIndex((s) => s.name === 'timestamp');
      let first = 0;
      for (const part of parts) {
        const n = part[0]!.length;
        const slice = all.map((c) => c.slice(first, first + n));
        const order = cpuAt >= 0 && timeAt >= 0 ? fullSort(slice[cpuAt] as number[], slice[timeAt] as bigint[]) : slice[0]!.map((_, i) => i);
        expect(part).toEqual(slice.map((c) => order.map((i) => c[i])));
        first += n;
      }
    }
  });

  test('parts written in this thread are sorted: in place when owned, else into new columns (the caller\'s untouched)', async () => {
    const seen: unknown[][][] = [];
    const writer: DatasetWriter = {
      ext: 'x',
      async openPart() {
        return { write: async (t) => void seen.push(rowsOf({ length: t.length, columns: t.columns })), close: async () => 0 };
      },
    };
    const w = inThreadParts(writer, { clock: null, names: false });
    const specs = TABLE_COLUMNS.readythread;
    const make = () =>
      specs.map((s): TypedColumn => {
        if (s.name === 'cpu') return Uint16Array.from([2, 1, 2, 0]);
        if (s.name === 'timestamp') return BigInt64Array.from([5n, 7n, 3n, 9n]);
        if (s.name === 'threadId') return Uint32Array.from([10, 11, 12, 13]);
        return allocColumn(s.type, 4);
      });
    const tid = specs.findIndex((s) => s.name === 'threadId');
    const kept = make();
    await w.write('p0', 'readythread', { length: 4, columns: kept }, false);
    expect(Array.from(kept[tid] as Uint32Array)).toEqual([10, 11, 12, 13]);
    const given = make();
    let back: readonly TypedColumn[] | null = null;
    await w.write('p1', 'readythread', { length: 4, columns: given }, true, (c) => (back = c));
    expect(back).toBe(given);
    expect(Array.from(given[tid] as Uint32Array)).toEqual([13, 11, 12, 10]);
    expect(seen.map((rows) => rows[tid])).toEqual([
      [13, 11, 12, 10],
      [13, 11, 12, 10],
    ]);
  });

  test('adopt: an owned chunk becomes a part as it is (no copy) and its columns come back once written; behind pending rows it is copied and given back at once', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'etw-parts-'));
    const sent: ColumnChunk[] = [];
    const release: (() => void)[] = [];
    const writers: PartWriters = {
      async write(_path, _table, chunk, owned, giveBack) {
        expect(owned).toBe(true);
        sent.push(chunk);
        return { size: new Promise<number>((r) => release.push(() => (giveBack?.(chunk.columns), r(chunk.length)))) };
      },
      async close() {},
    };
    const specs = TABLE_COLUMNS.threadStates;
    const make = (n: number, base: number) =>
      specs.map((s): TypedColumn => {
        if (s.type === 'str') return Array.from({ length: n }, (_, i) => `s${base + i}`);
        const c = allocColumn(s.type, n) as { fill(v: unknown): unknown };
        c.fill(s.type === 'i64' || s.type === 'u64' ? BigInt(base) : base);
        return c as TypedColumn;
      });
    const state = specs.findIndex((s) => s.name === 'state');
    const p = new Parts('threadStates', join(dir, 'ts'), writers, 'x', 4);
    const back: (readonly TypedColumn[])[] = [];
    const full = make(4, 1);
    await p.adopt({ length: 4, columns: full }, (c) => back.push(c));
    expect(sent.length).toBe(1);
    expect(sent[0]!.columns.every((c, i) => c === full[i])).toBe(true); // the same columns: not copied
    expect(back).toEqual([]); // ours again only once written
    release.shift()!();
    expect(back.length).toBe(1);
    expect(back[0]!.every((c, i) => c === full[i])).toBe(true);
    // rows pending (added, copied): an adopted chunk behind them is copied too, and given back at once
    await p.add({ length: 1, columns: make(1, 2) });
    const more = make(4, 3);
    await p.adopt({ length: 4, columns: more }, (c) => back.push(c));
    expect(back.length).toBe(2);
    expect(back[1]).toBe(more);
    expect(sent.length).toBe(2); // rows 0-3 of the pending 5 went as a part (staging columns, not `more`)
    expect(sent[1]!.columns[0]).not.toBe(more[0]);
    expect((sent[1]!.columns[state] as string[]).slice(0, 4)).toEqual(['s2', 's3', 's4', 's5']);
    const end = p.finish();
    for (let k = 0; k < 100 && sent.length < 3; k++) await new Promise((r) => setTimeout(r, 10));
    release.splice(0).forEach((f) => f());
    await end;
    expect([p.rows, p.files]).toEqual([9, 3]);
  });

  test('finishParts hands every table\'s last part to the writers before awaiting any (the writers take them side by side)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'etw-parts-'));
    const { writers, parts, releaseAll } = slowWriters();
    const tables: TableName[] = ['readythread', 'threadEvents', 'cswitch'];
    const all = tables.map((t) => new Parts(t, join(dir, t), writers, 'x', 100));
    for (const [k, p] of all.entries()) await p.add({ length: 3, columns: TABLE_COLUMNS[tables[k]!].map((s) => (s.type === 'str' ? ['a', 'b', 'c'] : allocColumn(s.type, 3))) });
    expect(parts.length).toBe(0); // 3 rows of 100: nothing written yet
    let finished = false;
    const done = finishParts(all).then(() => (finished = true));
    // let the ends go out (each makes its directory first): a second's worth of turns, or until all three did
    for (let k = 0; k < 100 && parts.length < 3; k++) await new Promise((r) => setTimeout(r, 10));
    expect(parts.length).toBe(3); // no table's part waited for another's to be written
    expect(finished).toBe(false);
    releaseAll();
    await done;
    expect(all.map((p) => [p.rows, p.files, p.bytes])).toEqual([
      [3, 1, 3],
      [3, 1, 3],
      [3, 1, 3],
    ]);
  });

  test('a text column goes to a worker as codes into its distinct values and comes out the same', () => {
    const chunk = chunkOf({ length: 4, columns: [{ codes: Int32Array.from([1, 0, 1, 2]), values: ['b', 'a', ''] }, Uint8Array.from([1, 2, 3, 4])] });
    expect(chunk.columns[0]).toEqual(['a', 'b', 'a', '']);
    expect(Array.from(chunk.columns[1] as Uint8Array)).toEqual([1, 2, 3, 4]);
  });

  test("a text column whose producer made its codes (textCodes) goes as those codes: handed over when owned, else copied", () => {
    // codes that disagree with the strings, to see which the message took
    const made = { codes: Int32Array.from([1, 1, 0, 9]), values: ['x', 'y'] };
    const chunk = { length: 3, columns: [['a', 'b', 'c'], Uint8Array.from([1, 2, 3])], textCodes: [made] };
    const owned = chunkMessage(chunk, true);
    expect(chunkOf(owned.chunk).columns[0]).toEqual(['y', 'y', 'x']);
    expect(owned.transfer).toContain(made.codes.buffer);
    const kept = chunkMessage(chunk, false);
    expect(chunkOf(kept.chunk).columns[0]).toEqual(['y', 'y', 'x']);
    expect(kept.transfer).not.toContain(made.codes.buffer);
    // too few codes for the rows: found again from the strings
    const short = chunkMessage({ ...chunk, textCodes: [{ codes: Int32Array.from([0]), values: ['x'] }] }, true);
    expect(chunkOf(short.chunk).columns[0]).toEqual(['a', 'b', 'c']);
  });
});
