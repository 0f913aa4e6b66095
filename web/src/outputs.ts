// Downloads of decoded tables (run in the worker), each streamed through a decode of the File with
// borrowed rows, so memory stays bounded whatever the trace's size: CSV is the CLI's `dump --format csv`
// byte for byte (src/output/text.ts TextTableWriter); Parquet goes through ParquetTableWriter (one row group at a time);
// the Perfetto trace through PerfettoWriter (process tree written at the end, as `convert --to perfetto`
// does). Output goes into Blob parts every FLUSH_BYTES, which the browser may keep outside the JS heap.
// With a selected time range, each chunk goes through the library's selectTable (as `dump --from --to`
// and `convert --from --to` select), the lifetimes too; the Perfetto trace keeps its process tree whole.
// cswitch, readythread and samples rows get their stackId (samples also their processId, imageName and
// imageOffset), and stacks / stackFrames their rows, from a first pass over the stack tables and the
// lifetimes (src/derive/stack-pass.ts), as `dump` does.
import {
  CpuUsageDeriver,
  createClock,
  decodeStream,
  decodeSync,
  DECODED_TABLE_NAMES,
  init,
  ParquetTableWriter,
  PerfettoWriter,
  needsStackPass,
  resolveSelection,
  runStackPass,
  selectTable,
  type StackPass,
  type Selection,
  Table,
  type TableName,
  type Clock,
  type DecodedTableName,
  TextTableWriter,
} from '../../src/index.js';
import { clockUnavailable } from '../../src/time.js';
import { rangeSuffix, type ExportFormat, type ExportTable } from './export-formats.js';
import type { PageRange } from './protocol.js';

const FLUSH_BYTES = 16 << 20;

/** Output appended in pieces (text, or bytes that are copied), kept as a Blob (which the browser may hold outside the JS heap). */
class BlobSink {
  private blob = new Blob([]);
  private parts: BlobPart[] = [];
  private size = 0;
  write(s: string | Uint8Array): void {
    this.parts.push(typeof s === 'string' ? s : s.slice());
    this.size += s.length;
    if (this.size >= FLUSH_BYTES) this.flush();
  }
  private flush(): void {
    this.blob = new Blob([this.blob, ...this.parts]);
    this.parts = [];
    this.size = 0;
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
/** The rows of `t` the selection keeps (all without one). */
function pick<T extends TableName>(t: Table<T>, selection: Selection | null): Table<T> {
  return selection ? selectTable(t, selection) : t;
}

async function csv(file: Blob, table: ExportTable, selection: Selection | null, onProgress: Progress): Promise<{ blob: Blob; rows: number }> {
  const out = new BlobSink();
  // formatted into 1 MiB byte buffers (src/output/text.ts), each appended to the Blob when full
  const w = new TextTableWriter(table, { format: 'csv' }, (bytes) => out.write(bytes), 1 << 20);
  w.writeHeader();
  let rows = 0;
  const put = (all: Table) => {
    const t = pick(all, selection);
    if (t.length) w.write(t);
    rows += t.length;
  };
  const deriver = table === 'cpuUsage' ? new CpuUsageDeriver(put) : null;
  const stacks = await stacksOf(file, table, onProgress);
  const res = await decodeStream(file, {
    rows: 'borrow', // each chunk is formatted before onRows returns
    onProgress,
    onRows: isDecoded(table)
      ? (t) => {
          stacks?.fill(t);
          put(t[table]);
        }
      : deriver
        ? (t) => deriver.add(t.cswitch, t.readythread, t.threadEvents)
        : undefined,
  });
  deriver?.finish();
  if (table === 'threads' || table === 'processes' || table === 'images') put(res[table]);
  if (table === 'stacks' || table === 'stackFrames') put(stacks!.tables()[table]);
  w.end();
  return { blob: out.finish('text/csv'), rows };
}

/** The Parquet file of one table. */
async function parquet(file: Blob, table: ExportTable, selection: Selection | null, onProgress: Progress): Promise<{ blob: Blob; rows: number }> {
  const out = new BlobSink();
  const w = await ParquetTableWriter.create(table, (b) => out.write(b));
  // cpuUsage rows come out of the deriver synchronously; they are written after each chunk
  const pending: Table[] = [];
  const deriver = table === 'cpuUsage' ? new CpuUsageDeriver((t) => pending.push(pick(t, selection))) : null;
  const flush = async () => {
    for (const t of pending.splice(0)) await w.write(t);
  };
  const stacks = await stacksOf(file, table, onProgress);
  const res = await decodeStream(file, {
    rows: 'borrow', // each chunk is written before onRows settles
    onProgress,
    onRows: isDecoded(table)
      ? (t) => {
          stacks?.fill(t);
          return w.write(pick(t[table], selection));
        }
      : deriver
        ? (t) => {
            deriver.add(t.cswitch, t.readythread, t.threadEvents);
            return flush();
          }
        : undefined,
  });
  if (deriver) {
    deriver.finish();
    await flush();
  }
  if (table === 'threads' || table === 'processes' || table === 'images') await w.write(pick(res[table], selection));
  if (table === 'stacks' || table === 'stackFrames') await w.write(stacks!.tables()[table]);
  const { rows } = await w.close();
  return { blob: out.finish('application/vnd.apache.parquet'), rows };
}

/** The first pass over the stack tables when `table`'s rows need it (null otherwise). */
function stacksOf(file: Blob, table: ExportTable, onProgress: Progress): Promise<StackPass | null> | null {
  return needsStackPass([table]) ? runStackPass((o) => decodeStream(file, { ...o, onProgress }), [table]) : null;
}

/** The trace's clock, from its first buffer (as readTraceInfo does), or null. */
async function clockOf(file: Blob): Promise<Clock | null> {
  const head = new Uint8Array(await file.slice(0, 0x48).arrayBuffer());
  if (head.length < 0x48) return null;
  const size = new DataView(head.buffer).getUint32(0, true);
  const first = new Uint8Array(await file.slice(0, Math.min(file.size, Math.max(size, 0x48), 16 << 20)).arrayBuffer());
  await init();
  const info = decodeSync(first).info;
  return info && clockUnavailable(info) === null ? createClock(info) : null;
}

/** The whole trace as a Perfetto trace: CPU tracks with thread states, wake-ups, the process tree. */
async function perfetto(file: Blob, clock: Clock | null, selection: Selection | null, onProgress: Progress): Promise<{ blob: Blob; rows: number }> {
  const out = new BlobSink();
  const writer = new PerfettoWriter((b) => out.write(b), { clock });
  let rows = 0;
  const res = await decodeStream(file, {
    rows: 'borrow', // each chunk is encoded before onRows returns
    onProgress,
    onRows: async (t) => {
      const cswitch = pick(t.cswitch, selection);
      rows += cswitch.length;
      await writer.readyThread(pick(t.readythread, selection));
      await writer.cswitch(cswitch);
    },
  });
  await writer.processTree(res.threads, res.processes);
  await writer.close();
  return { blob: out.finish('application/octet-stream'), rows };
}

/** Runs one download. */
export async function exportTable(file: Blob, name: string, table: ExportTable, format: ExportFormat, range: PageRange | null, onProgress: Progress): Promise<Exported> {
  const stem = (name.replace(/\.etl$/i, '') || 'trace') + rangeSuffix(range);
  const clock = range || format === 'perfetto' ? await clockOf(file) : null;
  // a time range needs only the clock (no process or thread filter: no lifetimes)
  const selection = range ? resolveSelection({ from: range.from, to: range.to }, clock) : null;
  if (format === 'csv') return { ...(await csv(file, table, selection, onProgress)), fileName: `${stem}.${table}.csv` };
  if (format === 'parquet') return { ...(await parquet(file, table, selection, onProgress)), fileName: `${stem}.${table}.parquet` };
  if (format === 'perfetto') return { ...(await perfetto(file, clock, selection, onProgress)), fileName: `${stem}.perfetto-trace` };
  throw new Error(`unknown format ${String(format)}`);
}
