// Downloads of decoded tables (run in the worker): CSV now, Parquet and a Perfetto trace through the
// library's output writers (the outputs issue). CSV is the CLI's `dump --format csv` byte for byte
// (src/format.ts), streamed: text goes into Blob parts every FLUSH_CHARS, so the tab does not hold the
// whole text as strings.
import { CpuUsageDeriver, decode, decodeStream, DECODED_TABLE_NAMES, Table, type DecodeResult, type DecodedTableName } from '../../src/index.js';
import { concatChunks, type ColumnChunk } from '../../src/schema.js';
import { formatRows, headerLine } from '../../src/format.js';

export type ExportTable = DecodedTableName | 'cpuUsage' | 'threads' | 'processes';
export type ExportFormat = 'csv' | 'parquet' | 'perfetto';

export const EXPORT_TABLES: readonly ExportTable[] = ['cswitch', 'cpuUsage', 'spinlock', 'readythread', 'threadEvents', 'processEvents', 'threads', 'processes'];

// The outputs issue's writers. When src/index.ts exports them, import them here and set these two
// constants to the functions: the buttons switch on by themselves.
type ParquetWriter = (table: Table, options?: object) => Promise<Uint8Array>;
type PerfettoWriter = (result: DecodeResult) => Uint8Array;
const tableToParquet: ParquetWriter | null = null;
const toPerfetto: PerfettoWriter | null = null;

/** Which formats this build can write (the page greys out the others, saying why). */
export const FORMATS: readonly { id: ExportFormat; label: string; available: boolean; note: string }[] = [
  { id: 'csv', label: 'CSV', available: true, note: 'the table as `etw-decode dump --format csv` writes it' },
  {
    id: 'parquet',
    label: 'Parquet',
    available: tableToParquet !== null,
    note: tableToParquet ? 'the table as a Parquet file (64-bit values exact)' : 'Parquet output is not in this build of etw-decode yet',
  },
  {
    id: 'perfetto',
    label: 'Perfetto trace',
    available: toPerfetto !== null,
    note: toPerfetto ? 'the whole trace for ui.perfetto.dev (open it there from your disk)' : 'Perfetto output is not in this build of etw-decode yet',
  },
];

const FLUSH_CHARS = 16 << 20;

/** Text appended in pieces, kept as a Blob (which the browser may hold outside the JS heap). */
class TextSink {
  private blob = new Blob([]);
  private parts: string[] = [];
  private chars = 0;
  write(s: string): void {
    this.parts.push(s);
    this.chars += s.length;
    if (this.chars >= FLUSH_CHARS) this.flush();
  }
  private flush(): void {
    this.blob = new Blob([this.blob, ...this.parts]);
    this.parts = [];
    this.chars = 0;
  }
  finish(type: string): Blob {
    this.flush();
    return new Blob([this.blob], { type });
  }
}

export interface Exported {
  blob: Blob;
  fileName: string;
  rows: number;
}

type Progress = (phase: string, done: number, total: number) => void;

const isDecoded = (t: ExportTable): t is DecodedTableName => (DECODED_TABLE_NAMES as readonly string[]).includes(t);

/** The CSV of one table, as `etw-decode dump <file> --table <table> --format csv` writes it. */
async function csv(file: Blob, table: ExportTable, onProgress: Progress): Promise<{ blob: Blob; rows: number }> {
  const fmt = { format: 'csv' as const };
  const out = new TextSink();
  out.write(headerLine(table, fmt));
  let rows = 0;
  const put = (t: Table) => {
    if (t.length) out.write(formatRows(t, fmt));
    rows += t.length;
  };
  const deriver = table === 'cpuUsage' ? new CpuUsageDeriver(put) : null;
  const res = await decodeStream(file, {
    rows: 'borrow', // each chunk is formatted before onRows returns
    onProgress,
    onRows: isDecoded(table) ? (t) => put(t[table]) : deriver ? (t) => deriver.add(t.cswitch, t.readythread, t.threadEvents) : undefined,
  });
  deriver?.finish();
  if (table === 'threads' || table === 'processes') put(res[table]);
  return { blob: out.finish('text/csv'), rows };
}

/** Runs one download; throws when the format is not available in this build. */
export async function exportTable(file: Blob, name: string, table: ExportTable, format: ExportFormat, onProgress: Progress): Promise<Exported> {
  const stem = name.replace(/\.etl$/i, '') || 'trace';
  if (format === 'csv') {
    const { blob, rows } = await csv(file, table, onProgress);
    return { blob, rows, fileName: `${stem}.${table}.csv` };
  }
  if (format === 'parquet' && tableToParquet) {
    const t = await wholeTable(file, table, onProgress);
    const bytes = await tableToParquet(t);
    return { blob: new Blob([bytes as Uint8Array<ArrayBuffer>], { type: 'application/vnd.apache.parquet' }), rows: t.length, fileName: `${stem}.${table}.parquet` };
  }
  if (format === 'perfetto' && toPerfetto) {
    const result = await decode(file, { onProgress });
    const bytes = toPerfetto(result);
    return { blob: new Blob([bytes as Uint8Array<ArrayBuffer>], { type: 'application/octet-stream' }), rows: result.cswitch.length, fileName: `${stem}.perfetto-trace` };
  }
  throw new Error(FORMATS.find((f) => f.id === format)?.note ?? `unknown format ${format}`);
}

/** One whole table of the trace (rows of the other tables are not kept). */
async function wholeTable(file: Blob, table: ExportTable, onProgress: Progress): Promise<Table> {
  const chunks: ColumnChunk[] = [];
  const keep = (t: Table) => chunks.push({ length: t.length, columns: t.columns });
  const deriver = table === 'cpuUsage' ? new CpuUsageDeriver(keep) : null;
  const res = await decodeStream(file, {
    rows: 'copy',
    onProgress,
    onRows: isDecoded(table) ? (t) => void keep(t[table]) : deriver ? (t) => deriver.add(t.cswitch, t.readythread, t.threadEvents) : undefined,
  });
  deriver?.finish();
  if (table === 'threads' || table === 'processes') return res[table];
  return new Table(table, concatChunks(table, chunks));
}
