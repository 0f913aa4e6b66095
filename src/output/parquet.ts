// Tables → Parquet files, streamed: each Table handed to write() becomes Arrow record batches (arrow.ts)
// that parquet-wasm's streaming writer (transformParquetStream: the Rust `parquet` crate's AsyncArrowWriter)
// encodes into the open row group; a row group is written to the sink as soon as it holds `rowGroupRows`
// rows, so memory holds one row group (encoded, in the wasm memory) plus the Table being written, whatever
// the number of rows. Statistics (min/max, null count) are on for every column; text and name columns are
// dictionary-encoded; ticks and integers of ≤ 16 bits DELTA_BINARY_PACKED (smaller, and cheaper to
// compress); the rest PLAIN; then every page is compressed (DEFAULT_COMPRESSION).
import { DataType } from 'apache-arrow';
import { EtlError, writeError } from '../errors.js';
import { emptyChunk, type TableName } from '../tables/schema.js';
import { Table } from '../tables/table.js';
import { TABLES } from '../generated/registry.js';
import { concatBytes } from './bytes.js';
import { ArrowConverter, ipcParts, type ArrowOptions, type ByteSink } from './arrow.js';
import { readParquetFooter } from './parquet-footer.js';
import { loadParquetWasm, type ParquetWasm } from './parquet-wasm.js';
import type { RecordBatch, WriterProperties } from 'parquet-wasm/esm';

const COMPRESSIONS = ['zstd', 'snappy', 'lz4', 'gzip', 'none'] as const;
export type ParquetCompression = (typeof COMPRESSIONS)[number];

export interface ParquetOptions extends ArrowOptions {
  /** rows per row group (the last one holds the rest); default 1,048,576 */
  rowGroupRows?: number;
  /** column compression, default 'zstd' (see DEFAULT_COMPRESSION) */
  compression?: ParquetCompression;
  /** min/max statistics per column chunk ('chunk', default) or also per page with a page index ('page') */
  statistics?: 'chunk' | 'page';
}

export interface ParquetWriteResult {
  /** rows written (read back from the file's footer) */
  rows: number;
  /** row groups in the file */
  rowGroups: number;
  /** bytes handed to the sink: the file size */
  bytes: number;
}

export const DEFAULT_ROW_GROUP_ROWS = 1_048_576;
/**
 * zstd. Measured on a compact-heavy cswitch table of 5.19 M rows (scripts/measure-columnar.mjs, CPU time on
 * the 2-core VM): zstd 34.7 MiB in 4.1 s, snappy 49.7 MiB in 2.3 s, none 110 MiB in 2.1 s. zstd files are
 * 30 % smaller than snappy's for ~0.35 µs more per row, and DuckDB, Arrow, Spark, polars and hyparquet
 * (with hyparquet-compressors) read them. `compression: 'snappy'` when write speed matters more.
 */
export const DEFAULT_COMPRESSION: ParquetCompression = 'zstd';

/** Rows converted to Arrow and copied into the wasm memory at a time. */
const SLICE_ROWS = 1 << 18;

/** The IPC bytes of one batch, joined in this thread's scratch (used only until parquet-wasm copied them, in the same synchronous step). */
let ipcScratch = new Uint8Array(0);
function joinIpc(parts: readonly Uint8Array[]): Uint8Array {
  let n = 0;
  for (const p of parts) n += p.byteLength;
  if (ipcScratch.length < n) ipcScratch = new Uint8Array(n);
  let at = 0;
  for (const p of parts) {
    ipcScratch.set(p, at);
    at += p.byteLength;
  }
  return ipcScratch.subarray(0, n);
}

/** Rows [start, end) of a Table: typed columns as views (no copy). */
export function sliceTable(t: Table, start: number, end: number): Table {
  if (start === 0 && end === t.length) return t;
  const columns = t.columns.map((c) => (Array.isArray(c) ? c.slice(start, end) : c.subarray(start, end)));
  return new Table(t.name, { length: end - start, columns });
}

function compressionOf(pw: ParquetWasm, c: ParquetCompression) {
  switch (c) {
    case 'zstd':
      return pw.Compression.ZSTD;
    case 'snappy':
      return pw.Compression.SNAPPY;
    case 'lz4':
      return pw.Compression.LZ4_RAW;
    case 'gzip':
      return pw.Compression.GZIP;
    case 'none':
      return pw.Compression.UNCOMPRESSED;
  }
}

function checkOptions(options: ParquetOptions): number {
  const rows = options.rowGroupRows ?? DEFAULT_ROW_GROUP_ROWS;
  if (!Number.isSafeInteger(rows) || rows < 1 || rows > 2 ** 31 - 1) {
    throw new EtlError('BAD_OPTION', `rowGroupRows must be an integer from 1 to 2^31-1, got ${String(options.rowGroupRows)}`);
  }
  const c = options.compression ?? DEFAULT_COMPRESSION;
  if (!COMPRESSIONS.includes(c)) throw new EtlError('BAD_OPTION', `compression must be one of ${COMPRESSIONS.join(', ')}; got '${String(c)}'`);
  const s = options.statistics ?? 'chunk';
  if (s !== 'chunk' && s !== 'page') throw new EtlError('BAD_OPTION', `statistics must be 'chunk' or 'page', got '${String(s)}'`);
  return rows;
}

function writerProperties(pw: ParquetWasm, converter: ArrowConverter, options: ParquetOptions, rowGroupRows: number) {
  let b = new pw.WriterPropertiesBuilder()
    .setCreatedBy('etw-decode (parquet-wasm)')
    .setCompression(compressionOf(pw, options.compression ?? DEFAULT_COMPRESSION))
    .setMaxRowGroupSize(rowGroupRows)
    .setStatisticsEnabled(options.statistics === 'page' ? pw.EnabledStatistics.Page : pw.EnabledStatistics.Chunk)
    .setDictionaryEnabled(false);
  const time = new Set(converter.timeColumns);
  for (const f of converter.schema.fields) {
    // text repeats (names, image files, enumeration names): dictionary pages make those columns small
    if (DataType.isDictionary(f.type)) b = b.setColumnDictionaryEnabled(f.name, true);
    // ticks (sorted per cpu) and small integers (cpu, priorities, states, flags): deltas bit-packed
    // before compression are smaller and cheaper to compress than PLAIN values (DEFAULT_COMPRESSION)
    else if (time.has(f.name) || (DataType.isInt(f.type) && f.type.bitWidth <= 16)) b = b.setColumnEncoding(f.name, pw.Encoding.DELTA_BINARY_PACKED);
  }
  b = b.setKeyValueMetadata(new Map([['etw-decode.table', converter.table]]));
  return b.build();
}

/** A promise with its resolver. */
function deferred<T = void>(): { promise: Promise<T>; resolve: (v: T) => void } {
  let resolve!: (v: T) => void;
  const promise = new Promise<T>((r) => (resolve = r));
  return { promise, resolve };
}

/**
 * Writes the rows of one table, Table by Table, as one Parquet file to a sink. Row groups of
 * `rowGroupRows` rows reach the sink as they fill; memory is bounded by one row group whatever the
 * number of rows. `close()` writes the footer and checks the rows it reports.
 */
export class ParquetTableWriter {
  private controller!: ReadableStreamDefaultController<unknown>;
  /** resolved when the wasm writer asks for the next batch */
  private demand = deferred();
  private pump: Promise<void> | null = null;
  private failure: unknown = null;
  private rows = 0;
  private bytes = 0;
  private closed = false;
  /** the bytes written after the input ended: the last row group and the footer (read back by verify) */
  private tail: Uint8Array[] | null = null;
  private tailBytes = 0;
  private readonly output: Promise<ReadableStream<Uint8Array>>;

  private constructor(
    readonly table: TableName,
    private readonly sink: ByteSink,
    private readonly pw: ParquetWasm,
    private readonly converter: ArrowConverter,
    properties: WriterProperties,
  ) {
    const input = new ReadableStream<unknown>(
      {
        start: (c) => {
          this.controller = c;
        },
        pull: () => {
          this.demand.resolve();
        },
      },
      { highWaterMark: 0 },
    );
    // resolves once the first batch arrived (parquet-wasm takes the schema from it)
    this.output = pw.transformParquetStream(input, properties) as Promise<ReadableStream<Uint8Array>>;
    this.output.catch((e: unknown) => this.fail(e));
  }

  /** Loads the Parquet writer (parquet-wasm, once) and opens a file of `table` rows on `sink`. */
  static async create(table: TableName, sink: ByteSink, options: ParquetOptions = {}): Promise<ParquetTableWriter> {
    if (!(table in TABLES)) throw new EtlError('BAD_OPTION', `unknown table '${String(table)}'`);
    const rowGroupRows = checkOptions(options);
    const pw = await loadParquetWasm();
    const converter = new ArrowConverter(table, options, false, true); // each batch is copied into the wasm memory at once
    return new ParquetTableWriter(table, sink, pw, converter, writerProperties(pw, converter, options, rowGroupRows));
  }

  /** Appends the rows of `t` (a Table of this writer's table); resolves when the wasm writer took them. */
  async write(t: Table): Promise<void> {
    this.usable();
    if (t.name !== this.table) throw new EtlError('BAD_OPTION', `this Parquet writer writes ${this.table} rows, got a ${t.name} table`);
    // a large Table goes in slices (views, no copy): the IPC copy and the wasm copy stay small
    for (let at = 0; at < t.length; at += SLICE_ROWS) {
      await this.send(sliceTable(t, at, Math.min(t.length, at + SLICE_ROWS)));
      this.rows += Math.min(t.length, at + SLICE_ROWS) - at;
    }
  }

  /** Ends the file: the last row group and the footer reach the sink before it resolves. */
  async close(): Promise<ParquetWriteResult> {
    this.usable();
    this.closed = true;
    // no rows: one empty batch gives the writer its schema
    if (this.pump === null) await this.send(new Table(this.table, emptyChunk(this.table)));
    await this.next();
    this.tail = [];
    this.controller.close();
    await this.pump;
    this.check();
    return { rows: this.rows, rowGroups: this.verify(), bytes: this.bytes };
  }

  private usable(): void {
    this.check();
    if (this.closed) throw new EtlError('BAD_OPTION', 'the Parquet writer is closed');
  }

  private check(): void {
    if (this.failure !== null) {
      throw writeError(`writing the ${this.table} Parquet file`, this.failure);
    }
  }

  private fail(e: unknown): void {
    if (this.failure !== null) return;
    this.failure = e;
    this.demand.resolve();
    try {
      this.controller.error(e);
    } catch {
      // already closed
    }
  }

  /** Waits until the wasm writer wants a batch (or failed). */
  private async next(): Promise<void> {
    await this.demand.promise;
    this.check();
    this.demand = deferred();
  }

  private async send(t: Table): Promise<void> {
    // Arrow JS → IPC stream → Arrow in the wasm memory (parquet-wasm has no other way in)
    let batches: RecordBatch[];
    try {
      const ipc = joinIpc(ipcParts(this.converter.schema, [this.converter.toBatch(t)], 'stream'));
      this.converter.release(); // the IPC bytes are a copy
      const wasmTable = this.pw.Table.fromIPCStream(ipc); // copied into the wasm memory: the scratch is free again
      batches = wasmTable.recordBatches();
      wasmTable.free();
    } catch (e) {
      this.fail(e);
      this.check();
      throw e; // unreachable: check() throws the failure
    }
    for (const b of batches) {
      await this.next();
      this.controller.enqueue(b);
    }
    this.pump ??= this.output.then((stream) => this.drain(stream)).catch((e: unknown) => this.fail(e));
  }

  /** Hands the writer's output to the sink, in order, until the file ends. */
  private async drain(stream: ReadableStream<Uint8Array>): Promise<void> {
    const reader = stream.getReader();
    try {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) return;
        if (this.tail !== null) {
          this.tail.push(value);
          this.tailBytes += value.byteLength;
        }
        this.bytes += value.byteLength;
        await this.sink(value);
      }
    } catch (e) {
      await reader.cancel(e).catch(() => undefined);
      throw e;
    }
  }

  /** Row groups of the footer; throws when the footer's rows differ from the rows written. */
  private verify(): number {
    const tail = new Uint8Array(this.tailBytes);
    let at = 0;
    for (const c of this.tail ?? []) {
      tail.set(c, at);
      at += c.byteLength;
    }
    this.tail = null;
    let footer;
    try {
      footer = readParquetFooter(tail);
    } catch (e) {
      throw new EtlError('WRITE_FAILED', `the ${this.table} Parquet file has no readable footer: ${(e as Error).message}`);
    }
    const sum = footer.rowGroupRows.reduce((a, b) => a + b, 0);
    if (footer.rows !== this.rows || sum !== this.rows) {
      throw new EtlError('WRITE_FAILED', `the ${this.table} Parquet file holds ${footer.rows} rows (row groups: ${sum}), but ${this.rows} were written`);
    }
    return footer.rowGroupRows.length;
  }
}

/** Converts one table's rows to Parquet in memory (for downloads); see ParquetTableWriter for large tables. */
export async function tableToParquet(table: Table, options: ParquetOptions = {}): Promise<Uint8Array> {
  const chunks: Uint8Array[] = [];
  const w = await ParquetTableWriter.create(table.name, (b) => void chunks.push(b.slice()), options);
  await w.write(table);
  await w.close();
  return concatBytes(chunks);
}
