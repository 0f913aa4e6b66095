// Every output format × every option on every table, each file read back by a reader independent of its
// writer and compared cell by cell with the decoded Table: Parquet by DuckDB and hyparquet, Arrow IPC by
// apache-arrow (file and stream) and by the Rust arrow crate (parquet-wasm's IPC stream reader), CSV by
// an RFC 4180 reader of the tests, JSON lines by JSON.parse, Perfetto by protobufjs. Files are written
// through the writers `convert` uses (src/convert/formats.ts) and the in-memory API (tableToParquet,
// tableToArrowIpc). The sources: samples/sample.etl (threadEvents: 128 rows, where `--names` broke the
// Parquet output), a simulated schedule, and tables of random edge values with a row count that is a
// multiple of 8 and one that is not (a u8 name column shares its source column's bytes; with no padding
// between the two, apache-arrow's tableToIPC kept them once).
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { tableFromIPC } from 'apache-arrow';
import protobuf from 'protobufjs';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ArrowIpcWriter, decodeSync, ParquetTableWriter, tableToArrowIpc, tableToParquet, toPerfetto, type Clock, type DecodeResult, type ParquetCompression } from '../src/node.js';
import { EtlError, writeError } from '../src/errors.js';
import { datasetWriter, type DatasetFormat } from '../src/convert/formats.js';
import { loadParquetWasm } from '../src/output/parquet-wasm.js';
import { sliceTable } from '../src/output/parquet.js';
import { TABLES } from '../src/generated/registry.js';
import { ENUMS, nameOf } from '../src/tables/enums.js';
import { TABLE_NAMES, type TableName } from '../src/tables/schema.js';
import { Table, type Tables } from '../src/tables/table.js';
import { allTables, arrowDifference, cell, edgeTable, firstDifference, scheduleDecode, testClocks, visibleColumns, type Cell } from './helpers/columnar.js';
import { duckRows, hyparquetRows, parseCsv, readBytes } from './helpers/readers.js';

let dir = '';
let files = 0;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'etw-matrix-'));
});
afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
});

interface Source {
  name: string;
  tables: Tables;
  clock: Clock;
}

const SAMPLE = fileURLToPath(new URL('../samples/sample.etl', import.meta.url));

function decoded(name: string, r: DecodeResult): Source {
  expect(r.clock).not.toBeNull();
  return { name, tables: allTables(r), clock: r.clock! };
}

function edges(n: number, seed: number): Source {
  const tables = Object.fromEntries(TABLE_NAMES.map((t, k) => [t, edgeTable(t, n, seed + k)])) as unknown as Tables;
  return { name: `edge values, ${n} rows`, tables, clock: testClocks()[1]!.clock };
}

const sample = decodeSync(new Uint8Array(readFileSync(SAMPLE)));
const SOURCES: Source[] = [decoded('samples/sample.etl', sample), decoded('simulated schedule', scheduleDecode()), edges(1024, 300), edges(1021, 400)];

/** names on/off × the time columns (nanoseconds) on/off */
const COMBOS = [
  { names: false, time: false },
  { names: true, time: false },
  { names: false, time: true },
  { names: true, time: true },
] as const;

const label = (c: { names: boolean; time: boolean }) => `names ${c.names ? 'on' : 'off'}, time columns ${c.time ? 'on' : 'off'}`;

/** Writes `t` as one part file through the dataset writer `convert` uses; returns its path. */
async function writePart(format: DatasetFormat, t: Table, clock: Clock | null, names: boolean): Promise<string> {
  const writer = await datasetWriter(format, 1 << 20);
  const path = join(dir, `${t.name}-${files++}.${writer.ext}`);
  const part = await writer.openPart(path, t.name, { clock, names });
  await part.write(t);
  await part.close();
  return path;
}

// --------------------------------------------------------------------------------------------------
// text: the expected cells by output column name (times converted exactly; names of enumerations)

type TimeText = 'raw' | 'ns' | 'filetime';

interface TextColumn {
  name: string;
  value: (i: number) => Cell;
  /** 64-bit: a JSON string */
  wide: boolean;
  f64: boolean;
  /** the exact conversion, when the int64 output of Parquet and Arrow stores null because it does not fit */
  exact?: (i: number) => bigint | null;
}

function textColumns(t: Table, names: boolean, time: TimeText, clock: Clock | null): TextColumn[] {
  const cols: TextColumn[] = [];
  const extras: TextColumn[] = [];
  for (const c of TABLES[t.name].columns) {
    if (c.name === 'valid') continue;
    // an address is hex text: 0x and lowercase digits
    const value = c.address ? (i: number) => { const v = cell(t, c.id, i) as bigint | null; return v === null ? null : `0x${v.toString(16)}`; } : (i: number) => cell(t, c.id, i);
    cols.push({ name: c.name, value, wide: c.type === 'i64' || c.type === 'u64', f64: c.type === 'f64' });
    if (time !== 'raw' && c.time !== null && (time === 'ns' || c.time === 'time')) {
      const ns = time === 'ns';
      const name = c.name === 'timestamp' ? (ns ? 'timeNs' : 'fileTime') : c.name + (ns ? 'Ns' : 'FileTime');
      const exact = (i: number): bigint | null => {
        const v = cell(t, c.id, i) as bigint | null;
        if (v === null) return null;
        if (!ns) return clock!.toFileTime(v);
        return c.time === 'time' ? clock!.toNanoseconds(v) : (v * 1_000_000_000n) / clock!.ticksPerSecond;
      };
      extras.push({
        name,
        value: (i) => {
          const v = exact(i);
          return v === null || v !== BigInt.asIntN(64, v) ? null : v;
        },
        exact,
        wide: true,
        f64: false,
      });
    }
  }
  if (names) {
    for (const c of TABLES[t.name].columns) {
      if (c.enum === null) continue;
      const e = ENUMS[c.enum]!;
      extras.push({ name: c.name + 'Name', value: (i) => nameOf(e, cell(t, c.id, i) as number | null), wide: false, f64: false });
    }
  }
  return [...cols, ...extras];
}

/**
 * An out-of-int64 conversion: Parquet and Arrow store null; the text formats print the exact value
 * (issue 28 item 8 asks for one rule): either is accepted, nothing else.
 */
function textMatches(c: TextColumn, i: number, got: unknown, csv: boolean): boolean {
  const want = c.value(i);
  const same = (w: Cell): boolean => {
    if (csv) {
      const s = got as string;
      if (w === null) return s === '';
      if (c.f64) return Number(s) === w;
      return s === String(w);
    }
    if (w === null) return got === null;
    if (c.wide) return typeof got === 'string' && got === String(w);
    if (typeof w === 'string') return got === w;
    return typeof got === 'number' && got === Number(w);
  };
  if (same(want)) return true;
  const exact = c.exact?.(i) ?? null;
  return want === null && exact !== null && same(exact);
}

function textDifference(t: Table, text: string, format: 'csv' | 'jsonl', names: boolean, time: TimeText, clock: Clock | null): string | null {
  const cols = textColumns(t, names, time, clock);
  const visible = visibleColumns(t.name).map((c) => c.name);
  let header: string[];
  let rows: unknown[][];
  if (format === 'csv') {
    const parsed = parseCsv(text);
    header = parsed.rows[0]!;
    rows = parsed.rows.slice(1);
    // text cells are always quoted or never: a name cell `Unknown(300)` stays text either way
  } else {
    const objects = text.split('\n').filter(Boolean).map((l) => JSON.parse(l) as Record<string, unknown>);
    header = objects.length ? Object.keys(objects[0]!) : cols.map((c) => c.name);
    rows = objects.map((o) => header.map((h) => o[h]));
  }
  // the table's columns first, in the registry's order, then the extra columns
  if (JSON.stringify(header.slice(0, visible.length)) !== JSON.stringify(visible)) return `${t.name}: header ${header.join(',')}`;
  if (JSON.stringify([...header].sort()) !== JSON.stringify(cols.map((c) => c.name).sort())) return `${t.name}: columns ${header.join(',')}, expected ${cols.map((c) => c.name).join(',')}`;
  if (rows.length !== t.length) return `${t.name}: ${rows.length} rows, expected ${t.length}`;
  const at = cols.map((c) => header.indexOf(c.name));
  for (let i = 0; i < t.length; i++) {
    const row = rows[i]!;
    if (row.length !== header.length) return `${t.name} row ${i}: ${row.length} cells`;
    for (let k = 0; k < cols.length; k++) {
      const got = row[at[k]!];
      if (!textMatches(cols[k]!, i, got, format === 'csv')) return `${t.name} row ${i} column ${cols[k]!.name}: got ${JSON.stringify(got)}, expected ${String(cols[k]!.value(i))}`;
    }
  }
  return null;
}

// --------------------------------------------------------------------------------------------------

async function expectParquet(t: Table, path: string, o: { names: boolean; clock: Clock | null }, what: string) {
  const duck = await duckRows(path);
  expect(firstDifference(t, duck.length, (i, c) => duck[i]![c], o), `duckdb: ${what}`).toBeNull();
  if (duck.length) expect(Object.keys(duck[0]!).length, `duckdb columns: ${what}`).toBe(Object.keys(duck[0]!).filter((k) => k !== 'valid').length);
  const hy = await hyparquetRows(readBytes(path));
  expect(firstDifference(t, hy.length, (i, c) => hy[i]![c], o), `hyparquet: ${what}`).toBeNull();
}

/** The Rust arrow crate's IPC stream reader (parquet-wasm), its table written as Parquet and read by hyparquet. */
async function rustArrowRows(stream: Uint8Array): Promise<Record<string, unknown>[]> {
  const pw = await loadParquetWasm();
  const table = pw.Table.fromIPCStream(stream);
  const parquet = pw.writeParquet(table);
  return hyparquetRows(parquet);
}

describe.each(SOURCES)('$name', (source) => {
  test.each(TABLE_NAMES)('%s: Parquet (convert part, tableToParquet) read by DuckDB and hyparquet', async (name) => {
    const t = source.tables[name];
    for (const combo of COMBOS) {
      const o = { names: combo.names, clock: combo.time ? source.clock : null };
      const what = `${source.name} ${name} ${label(combo)}`;
      await expectParquet(t, await writePart('parquet', t, o.clock, o.names), o, `part ${what}`);
      const bytes = await tableToParquet(t, { ...o, rowGroupRows: 100 });
      const hy = await hyparquetRows(bytes);
      expect(firstDifference(t, hy.length, (i, c) => hy[i]![c], o), `tableToParquet hyparquet: ${what}`).toBeNull();
    }
  });

  test.each(TABLE_NAMES)('%s: Arrow IPC (convert part, tableToArrowIpc, stream) read by apache-arrow and the Rust arrow reader', async (name) => {
    const t = source.tables[name];
    for (const combo of COMBOS) {
      const o = { names: combo.names, clock: combo.time ? source.clock : null };
      const what = `${source.name} ${name} ${label(combo)}`;
      const part = readFileSync(await writePart('arrow', t, o.clock, o.names));
      expect(arrowDifference(t, tableFromIPC(part), o), `part ${what}`).toBeNull();
      expect(arrowDifference(t, tableFromIPC(tableToArrowIpc(t, o)), o), `tableToArrowIpc ${what}`).toBeNull();
      const chunks: Uint8Array[] = [];
      const w = new ArrowIpcWriter(name, (b) => void chunks.push(b.slice()), { ...o, format: 'stream' });
      await w.write(t);
      await w.close();
      const stream = Buffer.concat(chunks);
      expect(arrowDifference(t, tableFromIPC(stream), o), `stream ${what}`).toBeNull();
      const rust = await rustArrowRows(stream);
      expect(firstDifference(t, rust.length, (i, c) => rust[i]![c], o), `Rust reader ${what}`).toBeNull();
    }
  });

  test.each(TABLE_NAMES)('%s: CSV and JSON lines (convert part: raw or ns; dump: filetime) parsed back', async (name) => {
    const t = source.tables[name];
    for (const format of ['csv', 'jsonl'] as const) {
      for (const combo of COMBOS) {
        const clock = combo.time ? source.clock : null;
        const text = readFileSync(await writePart(format, t, clock, combo.names), 'utf8');
        expect(textDifference(t, text, format, combo.names, combo.time ? 'ns' : 'raw', clock), `${format} ${source.name} ${name} ${label(combo)}`).toBeNull();
      }
      // --time filetime (dump): FILETIME columns for every column of ticks, none for tick differences
      const { TextTableWriter } = await import('../src/output/text.js');
      for (const names of [false, true]) {
        const chunks: Uint8Array[] = [];
        const w = new TextTableWriter(name, { format, names, time: 'filetime', clock: source.clock }, (b) => void chunks.push(b));
        await w.writeHeader();
        if (t.length) await w.write(t);
        await w.end();
        const text = Buffer.concat(chunks).toString('utf8');
        expect(textDifference(t, text, format, names, 'filetime', source.clock), `${format} filetime ${source.name} ${name} names ${names}`).toBeNull();
      }
    }
  });
});

describe('Parquet options on every table: compression × statistics', () => {
  const source = SOURCES[1]!;
  const compressions: ParquetCompression[] = ['zstd', 'snappy', 'lz4', 'gzip', 'none'];
  test.each(TABLE_NAMES)('%s', async (name) => {
    const t = source.tables[name];
    const o = { names: true, clock: source.clock };
    for (const compression of compressions) {
      for (const statistics of ['chunk', 'page'] as const) {
        const bytes = await tableToParquet(t, { ...o, compression, statistics, rowGroupRows: 64 });
        const path = join(dir, `${name}-${files++}.parquet`);
        writeFileSync(path, bytes);
        await expectParquet(t, path, o, `${name} ${compression} ${statistics}`);
      }
    }
  });
});

describe('rows in slices of every length 0-16 (padding or none between a column and its name column)', () => {
  test.each(['threadEvents', 'cswitch', 'readythread', 'processEvents'] as TableName[])('%s', async (name) => {
    const t = SOURCES[1]!.tables[name];
    const o = { names: true, clock: SOURCES[1]!.clock };
    for (let n = 0; n <= 16; n++) {
      const s = sliceTable(t, 3, 3 + n);
      const hy = await hyparquetRows(await tableToParquet(s, o));
      expect(firstDifference(s, hy.length, (i, c) => hy[i]![c], o), `${name} ${n} rows`).toBeNull();
      expect(arrowDifference(s, tableFromIPC(tableToArrowIpc(s, o)), o), `${name} ${n} rows arrow`).toBeNull();
    }
  });
});

describe('Perfetto (the tables it holds: cswitch, readythread, threads, processes), with and without the clock', () => {
  const root = protobuf.loadSync(fileURLToPath(new URL('./fixtures/perfetto/perfetto-etw.proto', import.meta.url)));
  const TraceType = root.lookupType('perfetto.protos.Trace');
  test.each([true, false])('samples/sample.etl, clock %s: every switch, wake-up and lifetime', (withClock) => {
    const r = sample;
    const bytes = toPerfetto(r, withClock ? {} : { clock: null, originTicks: 0n });
    // eslint-disable-next-line @typescript-eslint/no-explicit-any
    const trace = TraceType.toObject(TraceType.decode(bytes), { longs: String }) as { packet: any[] };
    const events = trace.packet.flatMap((p) => (p.etwEvents?.event ?? []) as { timestamp: string; cpu: number; cSwitch?: { oldThreadId: number }; readyThread?: { tThreadId: number } }[]);
    const switches = events.filter((e) => e.cSwitch);
    const readies = events.filter((e) => e.readyThread);
    expect(switches.length).toBe(r.cswitch.length);
    expect(readies.length).toBe(r.readythread.length);
    // rows of each CPU in decode order, one bundle per CPU ascending
    const order = (t: Table) => {
      const cpu = t.column('cpu') as Uint16Array;
      return Array.from({ length: t.length }, (_, i) => i).sort((a, b) => cpu[a]! - cpu[b]! || a - b);
    };
    const ts = (ticks: bigint) => (withClock ? r.clock!.toNanoseconds(ticks) : ticks);
    order(r.cswitch).forEach((row, k) => {
      const want = r.cswitch.get(row);
      expect([switches[k]!.timestamp, switches[k]!.cpu, switches[k]!.cSwitch!.oldThreadId]).toEqual([String(ts(want.timestamp)), want.cpu, want.oldThreadId]);
    });
    order(r.readythread).forEach((row, k) => {
      const want = r.readythread.get(row);
      expect([readies[k]!.cpu, readies[k]!.readyThread!.tThreadId]).toEqual([want.cpu, want.threadId]);
    });
    const tree = trace.packet.find((p) => p.processTree)!.processTree;
    expect(tree.processes.length).toBe(r.processes.length);
    expect(tree.threads.length).toBe(r.threads.length);
  });
});

describe('writer failures reach the caller as EtlError WRITE_FAILED, saying what was written and why', () => {
  const t = SOURCES[0]!.tables.threadEvents;
  const failing = () => {
    throw new Error('disk full');
  };

  test('Parquet: a failing sink', async () => {
    const w = await ParquetTableWriter.create('threadEvents', failing, { names: true });
    const e = await (async () => {
      await w.write(t);
      await w.close();
    })().catch((x: unknown) => x);
    expect(e).toBeInstanceOf(EtlError);
    expect(e).toMatchObject({ code: 'WRITE_FAILED', message: 'writing the threadEvents Parquet file failed: disk full' });
  });

  test('Parquet: input the wasm writer cannot take (a column shorter than the table)', async () => {
    const broken = new Table('threadEvents', { length: t.length, columns: t.columns.map((c, k) => (k === 0 ? (c as BigInt64Array).subarray(0, 3) : c)) });
    const e = await tableToParquet(broken).catch((x: unknown) => x);
    expect(e).toBeInstanceOf(EtlError);
    expect((e as EtlError).code).toBe('WRITE_FAILED');
    expect((e as EtlError).message).toMatch(/^writing the threadEvents Parquet file failed: /);
  });

  test('Arrow IPC: a failing sink', async () => {
    const w = new ArrowIpcWriter('threadEvents', failing, { names: true });
    const e = await w.write(t).catch((x: unknown) => x);
    expect(e).toBeInstanceOf(EtlError);
    expect(e).toMatchObject({ code: 'WRITE_FAILED', message: 'writing the Arrow IPC file failed: disk full' });
  });

  test('writeError keeps an EtlError and words any other failure', () => {
    const own = new EtlError('BAD_OPTION', 'x');
    expect(writeError('writing y', own)).toBe(own);
    expect(writeError('writing y', new Error('ENOSPC: no space left on device'))).toMatchObject({ code: 'WRITE_FAILED', message: 'writing y failed: ENOSPC: no space left on device' });
    expect(writeError('writing y', 'boom').message).toBe('writing y failed: boom');
  });
});
