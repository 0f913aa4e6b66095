// toArrow, Arrow IPC files and the streaming ArrowIpcWriter: every cell of every table equals the Table's
// (nulls, u64 above 2^63, negative i64, text), name and nanosecond columns equal the CSV conversions, and
// IPC files read back with apache-arrow equal the Tables — on a simulated schedule, on tables of random
// edge values and on the real corpus.
import { describe, expect, test } from 'vitest';
import { tableFromIPC, Type } from 'apache-arrow';
import { ArrowIpcWriter, decodeSync, tableToArrowIpc, toArrow, type Clock } from '../src/index.js';
import { nanosecondsColumn, unixNanosecondsColumn, unixNanosecondsFrom } from '../src/time.js';
import { validityOf } from '../src/output/arrow.js';
import { sliceTable } from '../src/output/parquet.js';
import { Table } from '../src/tables/table.js';
import { allocColumn, SUMMARY_TABLE_NAMES, TABLE_COLUMNS, TABLE_NAMES, type ColumnName, type TableName } from '../src/tables/schema.js';
import { Rng } from '../src/writer/index.js';
import { allTables, arrowDifference, edgeTable, scheduleDecode, testClocks, visibleColumns, type ExtraOptions } from './helpers/columnar.js';
import { corpusFiles, corpusTestsEnabled, readCorpus } from './helpers/corpus.js';

function concat(chunks: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(chunks.reduce((n, c) => n + c.length, 0));
  let at = 0;
  for (const c of chunks) {
    out.set(c, at);
    at += c.length;
  }
  return out;
}

const sched = scheduleDecode();
const schedTables = allTables(sched);

describe('toArrow', () => {
  test('the simulated schedule has rows in every table', () => {
    for (const name of TABLE_NAMES) expect(schedTables[name].length, name).toBeGreaterThan(0);
  });

  test.each(TABLE_NAMES)('%s: every cell equals the Table, with names and ns columns', (name) => {
    const t: Table = schedTables[name];
    const o = { names: true, clock: sched.clock };
    expect(sched.clock).not.toBeNull();
    const a = toArrow(t, o);
    expect(arrowDifference(t, a, o)).toBeNull();
    expect(arrowDifference(t, toArrow(t))).toBeNull();
    // the internal mask is not a column; the extra columns sit next to their source
    expect(a.schema.names).not.toContain('valid');
    const names = a.schema.names;
    for (const c of TABLE_COLUMNS[name]) {
      if (c.name === 'valid') continue;
      const spec = TABLE_COLUMNS[name].find((s) => s.name === c.name)!;
      if (spec.type === 'f64') {
        // file offsets: written as int64 (a copy), the same integers
        expect(a.getChild(c.name)!.type.toString(), c.name).toBe('Int64');
      } else if (spec.type !== 'str') {
        // zero copy: the column's data is a view of the Table's typed array (the same memory)
        const values = a.getChild(c.name)!.data[0]!.values as Uint8Array;
        const col = t.column(c.name as ColumnName<TableName>) as Uint8Array;
        expect(values.buffer, c.name).toBe(col.buffer);
        expect([values.byteOffset, values.length], c.name).toEqual([col.byteOffset, col.length]);
      }
    }
    if (name === 'cswitch') {
      expect(names.slice(0, 4)).toEqual(['timestamp', 'timeNs', 'timeUtc', 'cpu']);
      expect(names[names.indexOf('source') + 1]).toBe('sourceName');
    }
  });

  test('column types: u64 as Uint64, i64 as Int64, text as Dictionary<Int32, Utf8>, names as Dictionary<Uint8, Utf8>', () => {
    const a = toArrow(schedTables.processEvents, { names: true });
    expect(String(a.schema.fields.find((f) => f.name === 'uniqueProcessKey')!.type)).toBe('Uint64');
    expect(String(a.schema.fields.find((f) => f.name === 'exitTime')!.type)).toBe('Int64');
    expect(String(a.schema.fields.find((f) => f.name === 'exitStatus')!.type)).toBe('Int32');
    const image = a.schema.fields.find((f) => f.name === 'imageFileName')!;
    expect(image.type.typeId).toBe(Type.Dictionary);
    expect(String(image.type)).toBe('Dictionary<Int32, Utf8>');
    expect(String(a.schema.fields.find((f) => f.name === 'opcodeName')!.type)).toBe('Dictionary<Uint8, Utf8>');
    // nullability follows the registry; descriptions travel as field metadata
    expect(a.schema.fields.find((f) => f.name === 'commandLine')!.nullable).toBe(true);
    expect(a.schema.fields.find((f) => f.name === 'processId')!.nullable).toBe(false);
    expect(a.schema.fields.find((f) => f.name === 'processId')!.metadata.get('description')).toBe('ProcessId');
    // a repeated name is stored once
    const dict = a.getChild('imageFileName')!.data[0]!.dictionary!;
    expect(dict.length).toBeLessThan(schedTables.processEvents.length);
    expect(new Set(dict.toArray()).size).toBe(dict.length);
  });

  test.each(TABLE_NAMES)('%s: random edge values (64-bit extremes, u64 > 2^63, negative i64, nulls, text)', (name) => {
    const t = edgeTable(name, 3001, 7 + TABLE_NAMES.indexOf(name));
    for (const { clock } of testClocks().slice(0, 2)) {
      const o = { names: true, clock };
      expect(arrowDifference(t, toArrow(t, o), o)).toBeNull();
    }
    expect(arrowDifference(t, toArrow(t))).toBeNull();
  });

  test('an empty table', () => {
    for (const name of TABLE_NAMES) {
      const t = sliceTable(schedTables[name], 0, 0);
      const a = toArrow(t, { names: true, clock: sched.clock });
      expect(a.numRows).toBe(0);
      expect(a.schema.names.length).toBeGreaterThanOrEqual(visibleColumns(name).length);
    }
  });

  test('validity bitmaps: bit i of byte i/8, null counts', () => {
    const rng = new Rng(4);
    for (const n of [0, 1, 7, 8, 9, 63, 64, 65, 1000]) {
      const valid = new Uint32Array(n).map(() => rng.next());
      for (const bit of [0, 5, 31]) {
        const v = validityOf(valid, bit, n);
        let nulls = 0;
        for (let i = 0; i < n; i++) {
          const present = ((valid[i]! >>> bit) & 1) === 1;
          if (!present) nulls++;
          if (v.bitmap) expect(((v.bitmap[i >>> 3]! >>> (i & 7)) & 1) === 1).toBe(present);
          else expect(present).toBe(true);
        }
        expect(v.nullCount).toBe(nulls);
      }
    }
  });
});

describe('nanoseconds', () => {
  /** ticks around the anchor (fast path), far from it (BigInt path) and at the int64 extremes (overflow → null) */
  function ticksFor(clock: Clock, n: number, seed: number): BigInt64Array {
    const rng = new Rng(seed);
    const out = new BigInt64Array(n);
    for (let i = 0; i < n; i++) {
      const r = rng.next() % 6;
      const small = BigInt(rng.next()) * BigInt(rng.next() % 4096) - 2n ** 40n;
      out[i] =
        r === 0
          ? BigInt.asIntN(64, (BigInt(rng.next()) << 32n) | BigInt(rng.next()))
          : r === 1
            ? [-(2n ** 63n), 2n ** 63n - 1n, clock.anchorTicks, clock.anchorTicks - 1n, clock.anchorTicks + 2n ** 52n, clock.anchorTicks - 2n ** 52n][rng.next() % 6]!
            : BigInt.asIntN(64, clock.anchorTicks + small);
    }
    return out;
  }

  test.each(testClocks())('$name: time and duration columns equal the exact BigInt conversions', ({ clock }) => {
    const n = 20_000;
    const ticks = ticksFor(clock, n, 9);
    const time = nanosecondsColumn(ticks, n, null, 0, clock, 'time');
    const duration = nanosecondsColumn(ticks, n, null, 0, clock, 'duration');
    let overflow = 0;
    for (let i = 0; i < n; i++) {
      const t = ticks[i]!;
      const want = clock.toNanoseconds(t);
      const wantD = (t * 1_000_000_000n) / clock.ticksPerSecond;
      const isNull = (c: { bitmap: Uint8Array | null }) => c.bitmap !== null && ((c.bitmap[i >>> 3]! >>> (i & 7)) & 1) === 0;
      if (want !== BigInt.asIntN(64, want)) {
        overflow++;
        expect(isNull(time)).toBe(true);
      } else {
        expect(isNull(time)).toBe(false);
        if (time.values[i] !== want) expect.fail(`ticks ${t}: ${time.values[i]} ns, expected ${want}`);
      }
      if (wantD === BigInt.asIntN(64, wantD)) {
        expect(isNull(duration)).toBe(false);
        if (duration.values[i] !== wantD) expect.fail(`duration ${t}: ${duration.values[i]} ns, expected ${wantD}`);
      } else expect(isNull(duration)).toBe(true);
    }
    // the extremes were exercised (slower clocks than 1 GHz give more ns than ticks)
    if (clock.ticksPerSecond < 1_000_000_000n) expect(overflow).toBeGreaterThan(0);
    expect(time.nullCount).toBe(overflow);
  });

  test.each(testClocks())('$name: Utc from the nanoseconds column equals the direct conversion, cell for cell, nulls included', ({ clock }) => {
    const n = 20_000;
    const ticks = ticksFor(clock, n, 11);
    const bitmap = new Uint8Array((n + 7) >>> 3).fill(0xff);
    let nullCount = 0;
    for (let i = 0; i < n; i += 7) {
      bitmap[i >>> 3]! &= ~(1 << (i & 7));
      nullCount++;
    }
    for (const [bits, nulls] of [[null, 0], [bitmap, nullCount]] as const) {
      const ns = nanosecondsColumn(ticks, n, bits, nulls, clock, 'time');
      const direct = unixNanosecondsColumn(ticks, n, bits, nulls, clock);
      const from = unixNanosecondsFrom(ns, ticks, n, bits, nulls, clock);
      expect(from.nullCount).toBe(direct.nullCount);
      expect(Array.from(from.bitmap ?? [])).toEqual(Array.from(direct.bitmap ?? []));
      expect(from.values).toEqual(direct.values);
    }
  });

  test.each(testClocks())('$name: a reused values column (dirty, longer than the rows) gives the same values, its null cells 0', ({ clock }) => {
    const n = 5_000;
    const ticks = ticksFor(clock, n, 13);
    const bitmap = new Uint8Array((n + 7) >>> 3).fill(0xff);
    let nullCount = 0;
    for (let i = 0; i < n; i += 5) {
      bitmap[i >>> 3]! &= ~(1 << (i & 7));
      nullCount++;
    }
    for (const [bits, nulls] of [[null, 0], [bitmap, nullCount]] as const) {
      for (const kind of ['time', 'duration'] as const) {
        const fresh = nanosecondsColumn(ticks, n, bits, nulls, clock, kind);
        const reused = nanosecondsColumn(ticks, n, bits, nulls, clock, kind, new BigInt64Array(n + 9).fill(-5n));
        expect(reused.values.length).toBe(n);
        expect(reused.values).toEqual(fresh.values);
        expect(reused.nullCount).toBe(fresh.nullCount);
        if (kind === 'time') {
          const utc = unixNanosecondsFrom(fresh, ticks, n, bits, nulls, clock);
          expect(unixNanosecondsFrom(fresh, ticks, n, bits, nulls, clock, new BigInt64Array(n).fill(-5n)).values).toEqual(utc.values);
          expect(unixNanosecondsColumn(ticks, n, bits, nulls, clock, new BigInt64Array(n + 1).fill(-5n)).values).toEqual(utc.values);
        }
      }
    }
  });

  test('null cells stay null and are skipped', () => {
    const clock = testClocks()[0]!.clock;
    const ticks = BigInt64Array.of(1n, 2n ** 63n - 1n, 3n);
    const bitmap = Uint8Array.of(0b101);
    const r = nanosecondsColumn(ticks, 3, bitmap, 1, clock, 'time');
    expect(r.bitmap).toBe(bitmap); // nothing overflowed: the source bitmap is shared
    expect(r.nullCount).toBe(1);
    expect([r.values[0], r.values[2]]).toEqual([clock.toNanoseconds(1n), clock.toNanoseconds(3n)]);
  });
});

describe('Arrow IPC', () => {
  test.each(TABLE_NAMES)('%s: tableToArrowIpc read back with apache-arrow', (name) => {
    const t = schedTables[name];
    const o = { names: true, clock: sched.clock };
    const back = tableFromIPC(tableToArrowIpc(t, o));
    expect(arrowDifference(t, back, o)).toBeNull();
    const edge = edgeTable(name, 2000, 100 + TABLE_NAMES.indexOf(name));
    expect(arrowDifference(edge, tableFromIPC(tableToArrowIpc(edge)))).toBeNull();
  });

  test.each(['file', 'stream'] as const)('ArrowIpcWriter (%s): Tables written in pieces read back as one table', async (format) => {
    for (const name of TABLE_NAMES) {
      const t = name === 'cswitch' ? schedTables.cswitch : edgeTable(name, 5000, 31 + TABLE_NAMES.indexOf(name));
      const o = { names: true, clock: testClocks()[1]!.clock };
      const chunks: Uint8Array[] = [];
      let calls = 0;
      const w = new ArrowIpcWriter(name, async (b) => {
        calls++;
        chunks.push(b.slice());
      }, { ...o, format });
      const cuts = [0, 1, 200, 201, 400, t.length];
      expect(t.length).toBeGreaterThan(400);
      for (let k = 0; k + 1 < cuts.length; k++) await w.write(sliceTable(t, cuts[k]!, cuts[k + 1]!));
      const before = calls;
      const res = await w.close();
      expect(before).toBeGreaterThan(0); // batches reached the sink before close
      const bytes = concat(chunks);
      expect(res).toEqual({ rows: t.length, batches: cuts.length - 1, bytes: bytes.length });
      const back = tableFromIPC(bytes);
      expect(back.batches.length).toBe(cuts.length - 1);
      expect(arrowDifference(t, back, o), name).toBeNull();
    }
  });

  test('ArrowIpcWriter with reuseBuffers (the sink done with each buffer when its write resolves): the same bytes, batch after batch, writers side by side', async () => {
    const o = { names: true, clock: testClocks()[1]!.clock };
    for (const name of ['cswitch', 'cpuUsage', 'threadStates', 'spinlock'] as TableName[]) {
      // pieces of 10,000 rows: each int64 column (80 kB) reaches the sink as a view, not joined with others
      const t = edgeTable(name, 40_000, 17 + TABLE_NAMES.indexOf(name));
      const cuts = [0, 10_000, 20_000, 20_001, t.length];
      const write = async (reuseBuffers: boolean) => {
        // a sink that writes later (a file): what it was given must not change before its promise resolves
        const chunks: Uint8Array[] = [];
        const w = new ArrowIpcWriter(name, (b) => new Promise<void>((r) => setTimeout(() => r(void chunks.push(b.slice())), 1)), { ...o, reuseBuffers });
        return { w, chunks };
      };
      const pieces = cuts.slice(1).map((end, k) => sliceTable(t, cuts[k]!, end));
      const orders = [pieces, [...pieces].reverse()];
      // two writers taking spares in turn, each with other rows at the same time
      const plain = [await write(false), await write(false)];
      const reusing = [await write(true), await write(true)];
      for (let k = 0; k < pieces.length; k++) {
        await Promise.all(plain.map((r, i) => r.w.write(orders[i]![k]!)));
        await Promise.all(reusing.map((r, i) => r.w.write(orders[i]![k]!)));
      }
      await Promise.all([...plain, ...reusing].map((r) => r.w.close()));
      reusing.forEach((r, i) => expect(Buffer.from(concat(r.chunks)).equals(Buffer.from(concat(plain[i]!.chunks))), name).toBe(true));
    }
  });

  test('text dictionaries grow across batches (delta dictionary batches)', async () => {
    const mk = (names: string[]) => {
      const specs = TABLE_COLUMNS.threadEvents;
      const columns = specs.map((s) => allocColumn(s.type, names.length));
      columns[specs.findIndex((s) => s.name === 'name')] = names;
      (columns[specs.findIndex((s) => s.name === 'valid')] as Uint32Array).fill(0xffffffff);
      return new Table('threadEvents', { length: names.length, columns });
    };
    const chunks: Uint8Array[] = [];
    const w = new ArrowIpcWriter('threadEvents', (b) => void chunks.push(b.slice()));
    await w.write(mk(['a', 'b', 'a']));
    await w.write(mk(['b', 'c']));
    await w.write(mk(['a']));
    await w.close();
    const back = tableFromIPC(concat(chunks));
    expect(back.getChild('name')!.toArray()).toEqual(['a', 'b', 'a', 'b', 'c', 'a']);
    // one dictionary shared by the batches: its entries are not repeated
    const dict = back.getChild('name')!.data.at(-1)!.dictionary!;
    expect(dict.toArray()).toEqual(['a', 'b', 'c']);
  });

  test('an empty writer gives a file with the schema and no rows; misuse is reported', async () => {
    const chunks: Uint8Array[] = [];
    const w = await ArrowIpcWriter.create('spinlock', (b) => void chunks.push(b.slice()));
    await expect(w.write(schedTables.cswitch as unknown as Table)).rejects.toThrow(/expected a spinlock table, got cswitch/);
    expect(await w.close()).toMatchObject({ rows: 0, batches: 0 });
    const back = tableFromIPC(concat(chunks));
    expect(back.numRows).toBe(0);
    expect(back.schema.names).toEqual(visibleColumns('spinlock').map((c) => c.name));
    await expect(w.write(schedTables.spinlock)).rejects.toThrow(/closed/);
    expect(() => new ArrowIpcWriter('spinlock', () => undefined, { format: 'feather' as 'file' })).toThrow(/format must be 'file' or 'stream'/);
  });

  test('a failing sink fails the writer', async () => {
    const w = new ArrowIpcWriter('cswitch', () => {
      throw new Error('disk full');
    });
    await expect(w.write(schedTables.cswitch)).rejects.toThrow(/disk full/);
    await expect(w.close()).rejects.toThrow(/failed earlier: disk full/);
  });
});

describe.skipIf(!corpusTestsEnabled())('real corpus', () => {
  test.each(corpusFiles())('%s: every table through toArrow and an IPC file', (file) => {
    const r = decodeSync(readCorpus(file));
    const tables = allTables(r);
    const o = { names: true, clock: r.clock };
    let rows = 0;
    for (const name of TABLE_NAMES as TableName[]) {
      const t = tables[name];
      rows += t.length;
      expect(arrowDifference(t, toArrow(t, o), o), `${file} ${name}`).toBeNull();
      expect(arrowDifference(t, tableFromIPC(tableToArrowIpc(t, o)), o), `${file} ${name} ipc`).toBeNull();
    }
    expect(rows).toBe(SUMMARY_TABLE_NAMES.reduce((n, name) => n + (r.summary[name] as number), tables.threadStates.length + tables.stacks.length + tables.stackFrames.length));
  });
});
