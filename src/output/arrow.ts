// Tables → Apache Arrow: every registry table becomes an Arrow table whose numeric columns are the Table's
// own typed arrays (no copy), with validity bitmaps built from the `valid` mask (which is not a column of
// its own), text as Dictionary<Int32, Utf8>, and optional extra columns next to their source column:
//   - `<col>Name` (option `names`): the names of an enumeration (registry `enum`; like the CSV --names).
//     A u8 enumeration is a Dictionary<Uint8, Utf8> whose indices ARE the column (no copy) over a fixed
//     256-entry dictionary (entry v = nameOf(v): the enumeration's name or `Unknown(v)`).
//   - `<col>Ns` (option `clock`): int64 nanoseconds since the trace start for every column of raw ticks
//     (registry `time`; `timestamp` → `timeNs`), and the duration in ns of every tick difference
//     (registry `duration`), exactly as the CSV --time ns (src/time.ts nanosecondsColumn); and for every
//     column of raw ticks a `<col>Utc` timestamp (ns since 1970, UTC: `timestamp` → `timeUtc`).
// Arrow IPC: tableToArrowIpc (one file in memory) and ArrowIpcWriter (record batches streamed to a sink;
// text dictionaries grow across batches as delta dictionary batches, which the IPC file format allows).
import * as arrow from 'apache-arrow';
import { TABLES } from '../generated/registry.js';
import { ENUMS, nameOf } from '../tables/enums.js';
import { EtlError, writeError } from '../errors.js';
import { emptyChunk, TABLE_COLUMNS, validColumnOf, type NumericColumnType, type TableName } from '../tables/schema.js';
import { Table } from '../tables/table.js';
import { nanosecondsColumn, unixNanosecondsColumn, unixNanosecondsFrom, type Clock, type NanosecondsColumn } from '../time.js';
import { concatBytes } from './bytes.js';
import type { ByteSink } from './sink.js';

export interface ArrowOptions {
  /** add a `<col>Name` dictionary column of names next to every enumeration column (like the CSV --names) */
  names?: boolean;
  /**
   * the trace's clock (DecodeResult.clock): adds an int64 `<col>Ns` column of nanoseconds since the trace
   * start next to every column of raw ticks (`timestamp` → `timeNs`) and of tick differences
   */
  clock?: Clock | null;
}

export type { ByteSink };

type AnyData = arrow.Data<arrow.DataType>;

/** One output column: its field and how to build its data from a Table. */
interface OutColumn {
  readonly field: arrow.Field;
  /** raw ticks, tick differences or their nanoseconds (registry `time` / `duration`) */
  readonly time?: boolean;
  build(t: Table, validity: ValidityCache): AnyData;
}

const ARROW_TYPES: Record<NumericColumnType, () => arrow.DataType> = {
  i64: () => new arrow.Int64(),
  u64: () => new arrow.Uint64(),
  f64: () => new arrow.Float64(),
  u32: () => new arrow.Uint32(),
  i32: () => new arrow.Int32(),
  u16: () => new arrow.Uint16(),
  u8: () => new arrow.Uint8(),
  i8: () => new arrow.Int8(),
};

/** The integers held by doubles (|v| < 2^53) as int64s, written as their two 32-bit words (no BigInt per value); `into`: as in time.ts. */
function int64Of(col: Float64Array, n: number, into?: BigInt64Array): BigInt64Array {
  const out = into === undefined ? new BigInt64Array(n) : into.subarray(0, n);
  const w = new Int32Array(out.buffer, out.byteOffset, 2 * n);
  for (let i = 0; i < n; i++) {
    const v = col[i]!;
    const hi = Math.floor(v / 4294967296);
    w[2 * i] = (v - hi * 4294967296) | 0;
    w[2 * i + 1] = hi;
  }
  return out;
}

/**
 * The int64 columns a batch makes (`<col>Ns`, `<col>Utc`, the f64 columns as int64), lent from a thread's
 * spares when the converter's batches are done with once written (ArrowIpcWriter with `reuseBuffers`, the
 * Parquet writer: parquet-wasm copies each batch) and given back by release(): no new column per batch.
 */
const SPARE_INT64: BigInt64Array[] = [];
const SPARE_LIMIT = 16;

class Int64Lender {
  private readonly lent: BigInt64Array[] = [];

  /** A column of at least n cells (undefined when not lending: the caller makes a new one). */
  take(n: number): BigInt64Array | undefined {
    let k = -1;
    for (let i = 0; i < SPARE_INT64.length; i++) if (SPARE_INT64[i]!.length >= n && (k < 0 || SPARE_INT64[i]!.length < SPARE_INT64[k]!.length)) k = i;
    const col = k >= 0 ? SPARE_INT64.splice(k, 1)[0]! : new BigInt64Array(n);
    this.lent.push(col);
    return col;
  }

  /** Every column lent since the last release is free again. */
  release(): void {
    for (const col of this.lent.splice(0)) if (SPARE_INT64.length < SPARE_LIMIT) SPARE_INT64.push(col);
  }
}

/** Set bits of every byte value. */
const POPCOUNT = new Uint8Array(256);
for (let i = 1; i < 256; i++) POPCOUNT[i] = (i & 1) + POPCOUNT[i >> 1]!;

interface Validity {
  /** Arrow validity bitmap (LSB first), or null when no cell is null */
  readonly bitmap: Uint8Array | null;
  readonly nullCount: number;
}
const ALL_VALID: Validity = { bitmap: null, nullCount: 0 };

/** The validity bitmap of column `bit` from a table's `valid` mask column. */
export function validityOf(valid: Uint32Array, bit: number, n: number): Validity {
  const out = new Uint8Array((n + 7) >>> 3);
  let present = 0;
  let i = 0;
  let b = 0;
  for (; i + 8 <= n; i += 8) {
    const byte =
      ((valid[i]! >>> bit) & 1) |
      (((valid[i + 1]! >>> bit) & 1) << 1) |
      (((valid[i + 2]! >>> bit) & 1) << 2) |
      (((valid[i + 3]! >>> bit) & 1) << 3) |
      (((valid[i + 4]! >>> bit) & 1) << 4) |
      (((valid[i + 5]! >>> bit) & 1) << 5) |
      (((valid[i + 6]! >>> bit) & 1) << 6) |
      (((valid[i + 7]! >>> bit) & 1) << 7);
    out[b++] = byte;
    present += POPCOUNT[byte]!;
  }
  if (i < n) {
    let byte = 0;
    for (let k = 0; i + k < n; k++) byte |= ((valid[i + k]! >>> bit) & 1) << k;
    out[b] = byte;
    present += POPCOUNT[byte]!;
  }
  return present === n ? ALL_VALID : { bitmap: out, nullCount: n - present };
}

/**
 * Validity of each nullable column of one Table, computed once (a name or ns column shares its source's).
 * One pass ANDs and ORs the masks first: a column whose bit is set in every row needs no bitmap, one whose
 * bit is clear in every row gets an all-null bitmap; only the mixed ones are walked bit by bit.
 */
class ValidityCache {
  private readonly cache = new Map<number, Validity>();
  private readonly valid: Uint32Array | null;
  private all = 0;
  private any = 0;

  constructor(private readonly t: Table) {
    const validId = validColumnOf(t.name);
    this.valid = validId >= 0 ? (t.columns[validId] as Uint32Array) : null;
    if (this.valid !== null) {
      const v = this.valid;
      const n = t.length;
      let all = 0xffffffff | 0;
      let any = 0;
      for (let i = 0; i < n; i++) {
        all &= v[i]!;
        any |= v[i]!;
      }
      this.all = all;
      this.any = any;
    }
  }

  of(columnId: number): Validity {
    let v = this.cache.get(columnId);
    if (!v) {
      const n = this.t.length;
      const spec = TABLE_COLUMNS[this.t.name][columnId]!;
      if (!spec.nullable || this.valid === null || n === 0 || ((this.all >>> columnId) & 1) === 1) v = ALL_VALID;
      else if (((this.any >>> columnId) & 1) === 0) v = { bitmap: new Uint8Array((n + 7) >>> 3), nullCount: n };
      else v = validityOf(this.valid, columnId, n);
      this.cache.set(columnId, v);
    }
    return v;
  }
}

/** Text values → dictionary indices; `persistent` keeps the dictionary across calls (IPC delta dictionaries). */
class TextDictionary {
  private readonly index = new Map<string, number>();
  private chunks: arrow.Data<arrow.Utf8>[] = [];

  constructor(private readonly persistent: boolean) {}

  /** Indices of `values` (null cells: 0) and the dictionary they index. */
  encode(values: readonly string[], n: number, validity: Validity): { indices: Int32Array; dictionary: arrow.Vector<arrow.Utf8> } {
    if (!this.persistent) {
      this.index.clear();
      this.chunks = [];
    }
    const indices = new Int32Array(n);
    const added: string[] = [];
    const bitmap = validity.bitmap;
    for (let i = 0; i < n; i++) {
      if (bitmap !== null && ((bitmap[i >>> 3]! >>> (i & 7)) & 1) === 0) continue; // null: index 0
      const s = values[i]!;
      let k = this.index.get(s);
      if (k === undefined) {
        k = this.index.size;
        this.index.set(s, k);
        added.push(s);
      }
      indices[i] = k;
    }
    // null cells point at entry 0: the dictionary is never empty when the column has rows
    if (this.index.size === 0 && n > 0) {
      this.index.set('', 0);
      added.push('');
    }
    if (added.length > 0 || this.chunks.length === 0) this.chunks.push(arrow.vectorFromArray(added, new arrow.Utf8()).data[0]!);
    return { indices, dictionary: new arrow.Vector(this.chunks) };
  }
}

/** The fixed name dictionary of a u8 enumeration: entry v is nameOf(names, v). */
const NAME_DICTIONARIES = new Map<string, arrow.Vector<arrow.Utf8>>();
function nameDictionary(enumName: string): arrow.Vector<arrow.Utf8> {
  let v = NAME_DICTIONARIES.get(enumName);
  if (!v) {
    const names = ENUMS[enumName]!;
    v = arrow.vectorFromArray(
      Array.from({ length: 256 }, (_, i) => nameOf(names, i)!),
      new arrow.Utf8(),
    );
    NAME_DICTIONARIES.set(enumName, v);
  }
  return v;
}

function metadata(description: string): Map<string, string> {
  return new Map([['description', description]]);
}

/**
 * The conversion of one table's Tables to Arrow: the schema is built once (its dictionary ids stay the
 * same for every batch), then each Table becomes one RecordBatch.
 */
export class ArrowConverter {
  readonly schema: arrow.Schema;
  /** names of the columns of ticks (registry `time` / `duration`) and of their `Ns` columns */
  readonly timeColumns: readonly string[];
  private readonly columns: OutColumn[];

  /** the int64 columns of the batches since release(), when they are lent (`reuse`) */
  private readonly lender: Int64Lender | null;

  /**
   * `persistent`: text dictionaries grow across batches instead of being rebuilt for each (IPC streams).
   * `reuse`: the batches' own int64 columns are lent (Int64Lender); the caller calls release() once it is
   * done with every batch made so far.
   */
  constructor(
    readonly table: TableName,
    options: ArrowOptions = {},
    persistent = false,
    reuse = false,
  ) {
    this.lender = reuse ? new Int64Lender() : null;
    const lender = this.lender;
    this.columns = planColumns(table, options, persistent, lender === null ? () => undefined : (n) => lender.take(n));
    this.schema = new arrow.Schema(
      this.columns.map((c) => c.field),
      new Map([['etw-decode.table', table]]),
    );
    this.timeColumns = this.columns.filter((c) => c.time).map((c) => c.field.name);
  }

  /** One RecordBatch holding the rows of `t` (numeric columns are views of t's typed arrays). */
  toBatch(t: Table): arrow.RecordBatch {
    if (t.name !== this.table) throw new EtlError('BAD_OPTION', `expected a ${this.table} table, got ${t.name}`);
    const validity = new ValidityCache(t);
    const children = this.columns.map((c) => c.build(t, validity));
    const data = arrow.makeData({ type: new arrow.Struct(this.schema.fields), length: t.length, nullCount: 0, children });
    return new arrow.RecordBatch(this.schema, data);
  }

  /** The batches made so far are done with: their lent columns go back to the spares (`reuse`). */
  release(): void {
    this.lender?.release();
  }
}

/** `int64(n)`: a column of at least n cells to write a batch's int64 values into, or undefined for a new one. */
function planColumns(table: TableName, options: ArrowOptions, persistent: boolean, int64: (n: number) => BigInt64Array | undefined): OutColumn[] {
  const out: OutColumn[] = [];
  const clock = options.clock ?? null;
  // dictionary ids numbered per schema (Arrow JS would draw them from a process-wide counter): the same
  // table's files are the same bytes whatever was written before them in the process or a worker
  let dictIds = 0;
  for (const c of TABLES[table].columns) {
    if (c.name === 'valid') continue;
    const id = c.id;
    if (c.type === 'str') {
      const type = new arrow.Dictionary(new arrow.Utf8(), new arrow.Int32(), dictIds++);
      const dict = new TextDictionary(persistent);
      out.push({
        field: new arrow.Field(c.name, type, c.nullable, metadata(c.description)),
        build(t, validity) {
          const v = validity.of(id);
          const { indices, dictionary } = dict.encode(t.columns[id] as string[], t.length, v);
          return arrow.makeData({ type, length: t.length, nullCount: v.nullCount, nullBitmap: v.bitmap, data: indices, dictionary });
        },
      });
    } else {
      // the f64 columns hold integers (file offsets, below 2^53): an integer type in the file, as tools expect
      const integral = c.type === 'f64';
      const type = (integral ? new arrow.Int64() : ARROW_TYPES[c.type]()) as arrow.Int;
      out.push({
        field: new arrow.Field(c.name, type, c.nullable, metadata(c.description)),
        time: c.time !== null,
        build(t, validity) {
          const v = validity.of(id);
          const data = integral ? int64Of(t.columns[id] as Float64Array, t.length, int64(t.length)) : (t.columns[id] as Int32Array);
          return arrow.makeData({ type, length: t.length, nullCount: v.nullCount, nullBitmap: v.bitmap, data });
        },
      });
    }
    if (clock !== null && c.time !== null) {
      const name = c.name === 'timestamp' ? 'timeNs' : c.name + 'Ns';
      const kind = c.time;
      const type = new arrow.Int64();
      const what = kind === 'time' ? 'nanoseconds since the trace start' : 'in nanoseconds';
      // the batch's nanoseconds of this column, which its Utc column reuses
      let last: { t: Table; ns: NanosecondsColumn } | null = null;
      out.push({
        // nullable: a value out of the int64 range (only in corrupt data) is null
        field: new arrow.Field(name, type, true, metadata(`${c.name} ${what} (ticks × 10^9 / ticks per second)`)),
        time: true,
        build(t, validity) {
          const v = validity.of(id);
          const ns = nanosecondsColumn(t.columns[id] as BigInt64Array, t.length, v.bitmap, v.nullCount, clock, kind, int64(t.length));
          last = kind === 'time' ? { t, ns } : null;
          return arrow.makeData({ type, length: t.length, nullCount: ns.nullCount, nullBitmap: ns.bitmap, data: ns.values });
        },
      });
      if (kind === 'time') {
        // the same instant as a timestamp tools understand: nanoseconds since 1970 in UTC, stored without a
        // zone (Parquet isAdjustedToUTC false), which DuckDB reads as TIMESTAMP_NS — exact to the ns, where
        // its TIMESTAMPTZ would keep microseconds
        const utc = new arrow.TimestampNanosecond();
        out.push({
          field: new arrow.Field(c.name === 'timestamp' ? 'timeUtc' : c.name + 'Utc', utc, true, metadata(`${c.name} as UTC (the anchor's wall-clock time + ${name})`)),
          time: true,
          build(t, validity) {
            const v = validity.of(id);
            const ticks = t.columns[id] as BigInt64Array;
            const into = int64(t.length);
            const u =
              last !== null && last.t === t
                ? unixNanosecondsFrom(last.ns, ticks, t.length, v.bitmap, v.nullCount, clock, into)
                : unixNanosecondsColumn(ticks, t.length, v.bitmap, v.nullCount, clock, into);
            last = null;
            return arrow.makeData({ type: utc, length: t.length, nullCount: u.nullCount, nullBitmap: u.bitmap, data: u.values });
          },
        });
      }
    }
    if (options.names && c.enum !== null) out.push(nameColumn(c.id, c.name, c.type, c.enum, c.nullable, persistent, dictIds++));
  }
  return out;
}

function nameColumn(id: number, column: string, type: string, enumName: string, nullable: boolean, persistent: boolean, dictId: number): OutColumn {
  const description = `name of the ${column} value (${enumName})`;
  if (type === 'u8') {
    // zero copy: the raw values index the fixed 256-entry dictionary
    const dictType = new arrow.Dictionary(new arrow.Utf8(), new arrow.Uint8(), dictId);
    const dictionary = nameDictionary(enumName);
    return {
      field: new arrow.Field(column + 'Name', dictType, nullable, metadata(description)),
      build(t, validity) {
        const v = validity.of(id);
        return arrow.makeData({ type: dictType, length: t.length, nullCount: v.nullCount, nullBitmap: v.bitmap, data: t.columns[id] as Uint8Array, dictionary });
      },
    };
  }
  // wider enumerations (none in the registry today): names as text
  const dictType = new arrow.Dictionary(new arrow.Utf8(), new arrow.Int32(), dictId);
  const dict = new TextDictionary(persistent);
  const names = ENUMS[enumName]!;
  return {
    field: new arrow.Field(column + 'Name', dictType, nullable, metadata(description)),
    build(t, validity) {
      const v = validity.of(id);
      const raw = t.columns[id] as ArrayLike<number>;
      const text = Array.from({ length: t.length }, (_, i) => nameOf(names, raw[i]!)!);
      const { indices, dictionary } = dict.encode(text, t.length, v);
      return arrow.makeData({ type: dictType, length: t.length, nullCount: v.nullCount, nullBitmap: v.bitmap, data: indices, dictionary });
    },
  };
}

/**
 * A Table as an Apache Arrow table (one record batch). Numeric columns share the Table's typed arrays
 * (no copy: a Table whose columns are borrowed views must be converted before they are reused); nullable
 * cells become validity bitmaps; u64 is Uint64, i64 Int64, text Dictionary<Int32, Utf8>.
 */
export function toArrow(table: Table, options: ArrowOptions = {}): arrow.Table {
  const converter = new ArrowConverter(table.name, options);
  return new arrow.Table(converter.schema, converter.toBatch(table));
}

/** A Table as an Arrow IPC file (the `.arrow` / Feather v2 format) in memory. */
export function tableToArrowIpc(table: Table, options: ArrowOptions = {}): Uint8Array {
  const converter = new ArrowConverter(table.name, options);
  return batchesToIpc(converter.schema, [converter.toBatch(table)], 'file');
}

/**
 * Record batches as the bytes of one Arrow IPC file or stream in memory. Not apache-arrow's tableToIPC:
 * that joins the writer's chunks with collapseContiguousByteRanges, which takes two chunks that are views
 * of the same memory for one range of a stream being read and keeps it once — and a batch holds the same
 * memory twice whenever a `<col>Name` column's indices are its source column's bytes (u8 enumerations,
 * zero copy). With no padding chunk between the two (a row count that is a multiple of 8) the body lost
 * those bytes: a message shorter than its header says, every later buffer shifted.
 */
export function batchesToIpc(schema: arrow.Schema, batches: readonly arrow.RecordBatch[], format: 'file' | 'stream'): Uint8Array {
  return concatBytes(ipcParts(schema, batches, format));
}

/** The bytes of batchesToIpc in parts, in order (views of the batches' buffers among them). */
export function ipcParts(schema: arrow.Schema, batches: readonly arrow.RecordBatch[], format: 'file' | 'stream'): Uint8Array[] {
  const queue = new CollectingQueue();
  const writer = format === 'file' ? new arrow.RecordBatchFileWriter() : new arrow.RecordBatchStreamWriter();
  writer.reset(queue as unknown as arrow.WritableSink<Uint8Array>, schema);
  for (const b of batches) writer.write(b);
  writer.finish();
  return queue.pending;
}


export interface ArrowIpcWriterOptions extends ArrowOptions {
  /** 'file' (default: the random-access IPC file format, with a footer) or 'stream' (the IPC stream format) */
  format?: 'file' | 'stream';
  /**
   * the sink is done with each buffer once the promise it returned settles (it writes them out and keeps
   * none: a file): the memory of the int64 columns the writer makes (`<col>Ns`, `<col>Utc`) is then reused
   * from batch to batch (default false: every buffer is the sink's to keep)
   */
  reuseBuffers?: boolean;
}

/** Smaller chunks of the Arrow writer (message headers, padding) are joined before they reach the sink. */
const COALESCE_BYTES = 1 << 16;

/** Receives the Arrow writer's output synchronously (a public extension point: RecordBatchWriter.reset(sink)). */
class CollectingQueue extends arrow.AsyncByteQueue {
  pending: Uint8Array[] = [];
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  override write(value: any): void {
    const bytes = value as Uint8Array;
    if (bytes.byteLength > 0) this.pending.push(bytes);
  }
}

/**
 * Writes Tables of one table as record batches of one Arrow IPC file (or stream) to a sink, batch by batch:
 * memory holds one batch at a time. Chunks handed to the sink may be views of the Tables' column buffers.
 */
export class ArrowIpcWriter {
  private readonly converter: ArrowConverter;
  private readonly writer: arrow.RecordBatchWriter;
  private readonly queue = new CollectingQueue();
  private rows = 0;
  private batches = 0;
  private bytes = 0;
  private closed = false;
  private failed: unknown = null;

  constructor(
    readonly table: TableName,
    private readonly sink: ByteSink,
    options: ArrowIpcWriterOptions = {},
  ) {
    const format = options.format ?? 'file';
    if (format !== 'file' && format !== 'stream') throw new EtlError('BAD_OPTION', `format must be 'file' or 'stream', got '${String(format)}'`);
    this.converter = new ArrowConverter(table, options, true, options.reuseBuffers === true);
    this.writer = format === 'file' ? new arrow.RecordBatchFileWriter() : new arrow.RecordBatchStreamWriter();
    this.writer.reset(this.queue as unknown as arrow.WritableSink<Uint8Array>, this.converter.schema);
  }

  /** Same as the constructor (for symmetry with ParquetTableWriter.create). */
  static async create(table: TableName, sink: ByteSink, options: ArrowIpcWriterOptions = {}): Promise<ArrowIpcWriter> {
    return new ArrowIpcWriter(table, sink, options);
  }

  /** Appends the rows of `t` as one record batch (nothing for an empty table). */
  async write(t: Table): Promise<void> {
    this.usable();
    if (t.length === 0) return;
    const batch = this.converter.toBatch(t);
    try {
      this.writer.write(batch);
    } catch (e) {
      this.failed = e;
      throw writeError('writing the Arrow IPC file', e);
    }
    this.rows += t.length;
    this.batches++;
    await this.drain();
    this.converter.release();
  }

  /** Writes the end of the file (schema only when no row was written); the sink has every byte when it resolves. */
  async close(): Promise<{ rows: number; batches: number; bytes: number }> {
    this.usable();
    this.closed = true;
    if (this.batches === 0) this.writer.write(this.converter.toBatch(new Table(this.table, emptyChunk(this.table))));
    this.writer.finish();
    await this.drain();
    this.converter.release();
    return { rows: this.rows, batches: this.batches, bytes: this.bytes };
  }

  private usable(): void {
    if (this.failed !== null) throw new EtlError('WRITE_FAILED', `the Arrow IPC writer failed earlier: ${(this.failed as Error).message ?? this.failed}`);
    if (this.closed) throw new EtlError('BAD_OPTION', 'the Arrow IPC writer is closed');
  }

  private async drain(): Promise<void> {
    const chunks = this.queue.pending;
    this.queue.pending = [];
    try {
      let small: Uint8Array[] = [];
      let smallBytes = 0;
      const flushSmall = async () => {
        if (smallBytes === 0) return;
        const joined = concatBytes(small);
        small = [];
        smallBytes = 0;
        await this.emit(joined);
      };
      for (const c of chunks) {
        if (c.byteLength >= COALESCE_BYTES) {
          await flushSmall();
          await this.emit(c);
        } else {
          small.push(c);
          smallBytes += c.byteLength;
          if (smallBytes >= COALESCE_BYTES) await flushSmall();
        }
      }
      await flushSmall();
    } catch (e) {
      this.failed = e;
      throw writeError('writing the Arrow IPC file', e);
    }
  }

  private async emit(bytes: Uint8Array): Promise<void> {
    this.bytes += bytes.byteLength;
    await this.sink(bytes);
  }
}
