// Parquet files verified by real readers: DuckDB and hyparquet read back every cell of every table (nulls,
// UBIGINT above 2^63, negative BIGINT, text, names, nanoseconds) and must equal the in-memory Tables; row
// groups hold rowGroupRows rows with min/max statistics; large outputs stream row group by row group with
// bounded memory — on a simulated schedule, tables of random edge values and the real corpus.
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { open } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { decodeSync, DEFAULT_COMPRESSION, DEFAULT_ROW_GROUP_ROWS, ParquetTableWriter, tableToParquet, type ParquetCompression, type ParquetOptions } from '../src/index.js';
import { readParquetFooter } from '../src/output/parquet-footer.js';
import { loadParquetWasm } from '../src/output/parquet-wasm.js';
import { sliceTable } from '../src/output/parquet.js';
import { TABLE_COLUMNS, TABLE_NAMES, type ColumnType, type TableName } from '../src/tables/schema.js';
import type { Table } from '../src/tables/table.js';
import { generateMixedTrace } from '../src/writer/index.js';
import { allTables, edgeTable, firstDifference, scheduleDecode, testClocks, visibleColumns, type ExtraOptions } from './helpers/columnar.js';
import { corpusFiles, corpusTestsEnabled, readCorpus } from './helpers/corpus.js';
import { duckMetadata, duckRows, duckTypes, hyparquetRows, readBytes } from './helpers/readers.js';

let dir = '';
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'etw-parquet-'));
});
afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
});

let files = 0;
/** Writes `t` through ParquetTableWriter to a file, in pieces of `piece` rows; returns the path and result. */
async function writeFile(t: Table, options: ParquetOptions = {}, piece = t.length || 1) {
  const path = join(dir, `${t.name}-${files++}.parquet`);
  const fh = await open(path, 'w');
  try {
    const w = await ParquetTableWriter.create(t.name, async (b) => void (await fh.write(b)), options);
    for (let at = 0; at < t.length; at += piece) await w.write(sliceTable(t, at, Math.min(t.length, at + piece)));
    return { path, result: await w.close() };
  } finally {
    await fh.close();
  }
}

/** Both readers return exactly the Table's cells (and the extra columns). */
async function expectReadBack(t: Table, path: string, o: ExtraOptions = {}) {
  const duck = await duckRows(path);
  expect(firstDifference(t, duck.length, (i, c) => duck[i]![c], o), `duckdb ${t.name}`).toBeNull();
  const hy = await hyparquetRows(readBytes(path));
  expect(firstDifference(t, hy.length, (i, c) => hy[i]![c], o), `hyparquet ${t.name}`).toBeNull();
  // nothing else: the `valid` mask is not a column
  const names = Object.keys(duck[0] ?? {});
  if (names.length) expect(names).not.toContain('valid');
}

const sched = scheduleDecode();
const schedTables = allTables(sched);

describe('Parquet read back by DuckDB and hyparquet', () => {
  test.each(TABLE_NAMES)('%s (simulated schedule, written in pieces, names and ns columns)', async (name) => {
    const t = schedTables[name];
    expect(t.length).toBeGreaterThan(0);
    const o = { names: true, clock: sched.clock };
    const { path, result } = await writeFile(t, { ...o, rowGroupRows: 64 }, 50);
    expect(result.rows).toBe(t.length);
    expect(result.rowGroups).toBe(Math.ceil(t.length / 64));
    await expectReadBack(t, path, o);
  });

  test.each(TABLE_NAMES)('%s (random edge values: 64-bit extremes, u64 > 2^63, negative i64, nulls, text)', async (name) => {
    const t = edgeTable(name, 2500, 50 + TABLE_NAMES.indexOf(name));
    const o = { names: true, clock: testClocks()[1]!.clock };
    const { path } = await writeFile(t, { ...o, rowGroupRows: 1000 }, 777);
    await expectReadBack(t, path, o);
  });

  test('column types as DuckDB sees them: u64 UBIGINT, i64 and f64 (file offsets) BIGINT, text and names VARCHAR', async () => {
    const expected: Record<ColumnType, string> = {
      i64: 'BIGINT',
      u64: 'UBIGINT',
      f64: 'BIGINT', // file offsets: integers
      u32: 'UINTEGER',
      i32: 'INTEGER',
      u16: 'USMALLINT',
      u8: 'UTINYINT',
      i8: 'TINYINT',
      str: 'VARCHAR',
    };
    for (const name of TABLE_NAMES) {
      const { path } = await writeFile(schedTables[name], { names: true, clock: sched.clock });
      const types = await duckTypes(path);
      for (const c of visibleColumns(name)) expect(types[c.name], `${name}.${c.name}`).toBe(expected[c.type]);
      for (const [col, type] of Object.entries(types)) {
        if (col.endsWith('Name')) expect(type).toBe('VARCHAR');
        if (col === 'timeNs' || (col.endsWith('Ns') && !TABLE_COLUMNS[name].some((c) => c.name === col))) expect(type, col).toBe('BIGINT');
      }
    }
  });

  test.each(['zstd', 'snappy', 'lz4', 'gzip', 'none'] as ParquetCompression[])('compression %s', async (compression) => {
    const t = schedTables.processEvents;
    const { path } = await writeFile(t, { compression });
    const meta = await duckMetadata(path);
    const want = compression === 'none' ? 'UNCOMPRESSED' : compression === 'lz4' ? 'LZ4_RAW' : compression.toUpperCase();
    for (const m of meta) expect(m.compression).toBe(want);
    await expectReadBack(t, path);
  });

  test("statistics: 'page' (a page index besides the chunk statistics)", async () => {
    const t = schedTables.cswitch;
    const { path } = await writeFile(t, { statistics: 'page', rowGroupRows: 200 });
    const meta = await duckMetadata(path);
    const first = Array.from((t.column('timestamp') as BigInt64Array).subarray(0, 200));
    const min = first.reduce((a, b) => (b < a ? b : a));
    expect(meta.find((m) => m.path_in_schema === 'timestamp' && m.row_group_id === 0n)!.stats_min_value).toBe(String(min));
    await expectReadBack(t, path);
  });

  test('an empty table gives a file with the schema and no rows', async () => {
    for (const name of TABLE_NAMES as TableName[]) {
      const t = sliceTable(schedTables[name], 0, 0);
      const { path, result } = await writeFile(t);
      expect(result).toMatchObject({ rows: 0, rowGroups: 0 });
      expect(await duckRows(path)).toEqual([]);
      expect(Object.keys(await duckTypes(path))).toEqual(visibleColumns(name).map((c) => c.name));
    }
  });
});

describe('row groups and statistics', () => {
  test('row groups of rowGroupRows rows, min/max statistics on every column chunk (checked against the Table)', async () => {
    for (const name of ['cswitch', 'spinlock', 'processEvents', 'cpuUsage'] as TableName[]) {
      const t = name === 'spinlock' ? edgeTable('spinlock', 1000, 3) : schedTables[name];
      const per = 100;
      const { path, result } = await writeFile(t, { rowGroupRows: per }, 33);
      const meta = await duckMetadata(path);
      const groups = Math.ceil(t.length / per);
      expect(result.rowGroups).toBe(groups);
      expect(new Set(meta.map((m) => m.row_group_id)).size).toBe(groups);
      const specs = visibleColumns(name);
      for (const m of meta) {
        const g = Number(m.row_group_id);
        expect(Number(m.row_group_num_rows)).toBe(g < groups - 1 ? per : t.length - per * (groups - 1));
        const spec = specs.find((s) => s.name === m.path_in_schema)!;
        // the Table's min, max and nulls of this row group
        const part = sliceTable(t, g * per, Math.min(t.length, (g + 1) * per));
        let min: bigint | number | string | null = null;
        let max: bigint | number | string | null = null;
        let nulls = 0;
        for (let i = 0; i < part.length; i++) {
          if (part.isNull(spec.id, i)) {
            nulls++;
            continue;
          }
          const v = part.columns[spec.id]![i]!;
          if (min === null || v < min) min = v;
          if (max === null || v > max) max = v;
        }
        expect(Number(m.stats_null_count), `${name}.${spec.name} nulls`).toBe(nulls);
        if (min === null) continue; // all null: no min/max
        expect(m.stats_min_value, `${name}.${spec.name} min`).not.toBeNull();
        expect(m.stats_max_value, `${name}.${spec.name} max`).not.toBeNull();
        if (spec.type !== 'str') {
          expect(m.stats_min_value, `${name}.${spec.name} min`).toBe(String(min));
          expect(m.stats_max_value, `${name}.${spec.name} max`).toBe(String(max));
        }
      }
    }
  });

  test('the footer reader agrees with DuckDB and rejects what is not a Parquet end', async () => {
    const t = schedTables.cswitch;
    const { path } = await writeFile(t, { rowGroupRows: 128 });
    const bytes = readBytes(path);
    const footer = readParquetFooter(bytes);
    const meta = await duckMetadata(path);
    const groups = [...new Map(meta.map((m) => [m.row_group_id, Number(m.row_group_num_rows)])).values()];
    expect(footer).toEqual({ rows: t.length, rowGroupRows: groups });
    expect(() => readParquetFooter(bytes.subarray(0, 11))).toThrow(/too short/);
    expect(() => readParquetFooter(bytes.subarray(0, bytes.length - 1))).toThrow(/does not end with PAR1/);
    const cut = bytes.slice(bytes.length - 40);
    expect(() => readParquetFooter(cut)).toThrow(/exceeds the 32 bytes/);
    const broken = bytes.slice();
    broken.fill(0xff, broken.length - 8 - new DataView(broken.buffer).getUint32(broken.length - 8, true), broken.length - 8);
    expect(() => readParquetFooter(broken)).toThrow(RangeError);
  });
});

describe('streaming', () => {
  test('many row groups: bytes reach the sink as row groups fill, the wasm memory stops growing', async () => {
    const r = decodeSync(generateMixedTrace({ seed: 12, targetBytes: 1_700_000, cpus: 4, mix: { compact: 1 } }).bytes);
    const t = r.cswitch;
    const per = 10_000;
    expect(t.length).toBeGreaterThan(12 * per);
    const pw = await loadParquetWasm();
    const chunks: Uint8Array[] = [];
    const w = await ParquetTableWriter.create('cswitch', (b) => void chunks.push(b.slice()), { rowGroupRows: per, clock: r.clock });
    const piece = 3_333;
    const memory: number[] = [];
    const received: number[] = [];
    for (let at = 0; at < t.length; at += piece) {
      await w.write(sliceTable(t, at, Math.min(t.length, at + piece)));
      memory.push(pw.wasmMemory().buffer.byteLength);
      received.push(chunks.reduce((n, c) => n + c.length, 0));
    }
    const before = chunks.length;
    const result = await w.close();
    const groups = Math.ceil(t.length / per);
    expect(result).toMatchObject({ rows: t.length, rowGroups: groups });
    // row groups were written while rows were still coming: all but the last one or two before close()
    expect(before).toBeGreaterThanOrEqual(groups - 2);
    expect(received[Math.floor(received.length / 2)]).toBeGreaterThan(0);
    // bounded memory: after the first row groups, the last two thirds of the rows (several MiB of Arrow
    // data) grow the wasm memory by less than 1 MiB (allocator slack), not by their size
    const third = memory[Math.floor(memory.length / 3)]!;
    const arrowBytes = (t.length * 2) / 3 * 50;
    expect(arrowBytes).toBeGreaterThan(4 << 20);
    expect(memory.at(-1)! - third).toBeLessThan(1 << 20);
    const path = join(dir, 'streamed.parquet');
    const bytes = new Uint8Array(result.bytes);
    let at = 0;
    for (const c of chunks) {
      bytes.set(c, at);
      at += c.length;
    }
    writeFileSync(path, bytes);
    const duck = await duckRows(path);
    expect(firstDifference(t, duck.length, (i, c) => duck[i]![c], { clock: r.clock })).toBeNull();
    const meta = await duckMetadata(path);
    expect(Math.max(...meta.map((m) => Number(m.row_group_num_rows)))).toBe(per);
  });

  test(`defaults: ${DEFAULT_ROW_GROUP_ROWS} rows per row group, ${DEFAULT_COMPRESSION}, deltas for ticks and small integers, dictionaries for text`, async () => {
    expect(DEFAULT_ROW_GROUP_ROWS).toBe(1_048_576);
    const t = schedTables.processEvents;
    const { path } = await writeFile(t, { names: true, clock: sched.clock });
    const meta = await duckMetadata(path);
    const enc = (col: string) => meta.find((m) => m.path_in_schema === col)!.encodings;
    expect(meta.every((m) => m.compression === DEFAULT_COMPRESSION.toUpperCase())).toBe(true);
    expect(enc('timestamp')).toContain('DELTA_BINARY_PACKED');
    expect(enc('timeNs')).toContain('DELTA_BINARY_PACKED');
    expect(enc('cpu')).toContain('DELTA_BINARY_PACKED');
    expect(enc('processId')).toContain('PLAIN');
    expect(enc('imageFileName')).toContain('RLE_DICTIONARY');
    expect(enc('opcodeName')).toContain('RLE_DICTIONARY');
  });
});

describe('API', () => {
  test('tableToParquet gives the same rows as the streaming writer', async () => {
    const t = schedTables.threadEvents;
    const bytes = await tableToParquet(t, { names: true });
    expect(String.fromCharCode(...bytes.subarray(0, 4))).toBe('PAR1');
    const path = join(dir, 'in-memory.parquet');
    writeFileSync(path, bytes);
    const duck = await duckRows(path);
    expect(firstDifference(t, duck.length, (i, c) => duck[i]![c], { names: true })).toBeNull();
  });

  test('misuse and failures are reported', async () => {
    await expect(ParquetTableWriter.create('cswitch', () => undefined, { rowGroupRows: 0 })).rejects.toThrow(/rowGroupRows must be an integer/);
    await expect(ParquetTableWriter.create('cswitch', () => undefined, { compression: 'brotli' as ParquetCompression })).rejects.toThrow(/compression must be one of/);
    await expect(ParquetTableWriter.create('nope' as TableName, () => undefined)).rejects.toThrow(/unknown table 'nope'/);
    await expect(ParquetTableWriter.create('cswitch', () => undefined, { statistics: 'none' as 'page' })).rejects.toThrow(/statistics must be 'chunk' or 'page'/);
    const w = await ParquetTableWriter.create('spinlock', () => undefined);
    await expect(w.write(schedTables.cswitch as unknown as Table)).rejects.toThrow(/writes spinlock rows, got a cswitch table/);
    await w.close();
    await expect(w.write(schedTables.spinlock)).rejects.toThrow(/closed/);
    // a sink that fails: the error comes back from write() or close()
    const bad = await ParquetTableWriter.create('cswitch', () => {
      throw new Error('disk full');
    }, { rowGroupRows: 10 });
    const outcome = (async () => {
      for (let at = 0; at < schedTables.cswitch.length; at += 10) await bad.write(sliceTable(schedTables.cswitch, at, Math.min(schedTables.cswitch.length, at + 10)));
      await bad.close();
    })();
    await expect(outcome).rejects.toThrow(/disk full/);
  });
});

describe.skipIf(!corpusTestsEnabled())('real corpus', () => {
  test.each(corpusFiles())('%s: every table read back by DuckDB and hyparquet', async (file) => {
    const r = decodeSync(readCorpus(file));
    const tables = allTables(r);
    const o = { names: true, clock: r.clock };
    for (const name of TABLE_NAMES as TableName[]) {
      const t = tables[name];
      if (t.length === 0) continue;
      const path = join(dir, `${file}-${name}.parquet`);
      writeFileSync(path, await tableToParquet(t, { ...o, rowGroupRows: 4096 }));
      await expectReadBack(t, path, o);
    }
  });
});
