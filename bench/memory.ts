// What each table of a `decodeFile` result costs in memory, per row. Run in a process of its own, with
// --expose-gc (bench/e2e.ts runs it for each trace):
//   node --expose-gc dist-bench/bench/memory.js FILE [--json]
// Measured, not computed: after decodeFile (and cpuUsage(), for that table) and a full GC, the tables are
// dropped one by one, each followed by a full GC; what the heap and the external memory (heapUsed +
// external: typed arrays' backing stores are external) lose at each drop is that table's cost. Beside it
// the floor its columns alone make (the typed arrays' byteLength, and 8 bytes per string reference).
// The whole decode is stated too: RSS and heap + external before and after decodeFile, and the process's
// peak RSS (VmHWM) during it.
import { readFileSync, statSync } from 'node:fs';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { cpuUsage, decodeFile, type Table } from '../src/node.js';
import { textTable } from './report.js';

export interface TableMemory {
  table: string;
  rows: number;
  /** heapUsed + external released when the table was dropped, bytes */
  measuredBytes: number;
  /** typed columns' byteLength + 8 bytes per string cell, bytes */
  columnBytes: number;
}

export interface MemoryResult {
  file: string;
  fileBytes: number;
  rssBefore: number;
  rssAfter: number;
  /** VmHWM after decodeFile (null where /proc is missing) */
  peakRss: number | null;
  /** heapUsed + external before / after decodeFile (after a GC) */
  heapBefore: number;
  heapAfter: number;
  decodeSeconds: number;
  tables: TableMemory[];
}

const gc = (globalThis as { gc?: () => void }).gc;

function heapNow(): number {
  gc!();
  gc!();
  const m = process.memoryUsage();
  return m.heapUsed + m.external;
}

function vmHwm(): number | null {
  try {
    const m = /VmHWM:\s+(\d+) kB/.exec(readFileSync('/proc/self/status', 'utf8'));
    return m ? Number(m[1]) * 1024 : null;
  } catch {
    return null;
  }
}

/** rows and the bytes of the columns of table r[name] */
function sizes(r: Record<string, unknown>, name: string): { rows: number; cols: number } {
  const t = r[name] as Table;
  let cols = 0;
  for (const c of t.columns) cols += Array.isArray(c) ? c.length * 8 : c.byteLength;
  return { rows: t.length, cols };
}

function derive(r: Record<string, unknown>): void {
  r.cpuUsage = cpuUsage(r as unknown as Parameters<typeof cpuUsage>[0]);
}

/** decodeFile's result as a fresh object (the awaited original stays with this frame, which ends here: a
 *  table dropped from the copy is then garbage) */
async function decodeCopy(file: string): Promise<Record<string, unknown>> {
  return { ...(await decodeFile(file)) };
}

export async function measureMemory(file: string): Promise<MemoryResult> {
  if (!gc) throw new Error('run with node --expose-gc');
  const heapBefore = heapNow();
  const rssBefore = process.memoryUsage().rss;
  const t0 = performance.now();
  const r = await decodeCopy(file);
  const decodeSeconds = (performance.now() - t0) / 1000;
  const peakRss = vmHwm();
  const heapAfter = heapNow();
  const rssAfter = process.memoryUsage().rss;
  // the derived cpuUsage table (not part of decodeFile's result): its own cost, measured when made
  derive(r);
  const names = ['cswitch', 'spinlock', 'readythread', 'threadEvents', 'processEvents', 'samples', 'images', 'threads', 'processes', 'traces', 'cpuUsage'];
  const tables: TableMemory[] = [];
  let before = heapNow();
  for (const name of names) {
    // the table is read in a function of its own, so no register of this frame keeps it alive
    const { rows, cols } = sizes(r, name);
    r[name] = null;
    const after = heapNow();
    tables.push({ table: name, rows, measuredBytes: Math.max(0, before - after), columnBytes: cols });
    before = after;
  }
  return { file, fileBytes: statSync(file).size, rssBefore, rssAfter, peakRss, heapBefore, heapAfter, decodeSeconds, tables };
}

const MiB = 2 ** 20;
const mib = (n: number) => (n / MiB).toFixed(1);

/** The table of a MemoryResult, and a line on the whole decode. */
export function memoryText(m: MemoryResult): string {
  const rows = m.tables.map((t) => [
    t.table,
    String(t.rows),
    t.rows ? (t.measuredBytes / t.rows).toFixed(1) : '-',
    t.rows ? (t.columnBytes / t.rows).toFixed(1) : '-',
    mib(t.measuredBytes),
  ]);
  const rowsTotal = m.tables.reduce((n, t) => n + t.rows, 0);
  const measured = m.tables.reduce((n, t) => n + t.measuredBytes, 0);
  rows.push(['(all tables)', String(rowsTotal), (measured / rowsTotal).toFixed(1), (m.tables.reduce((n, t) => n + t.columnBytes, 0) / rowsTotal).toFixed(1), mib(measured)]);
  return [
    textTable(['table', 'rows', 'bytes/row (measured)', 'bytes/row (columns)', 'MiB'], rows, 1),
    `decodeFile of ${mib(m.fileBytes)} MiB in ${m.decodeSeconds.toFixed(2)} s: heap + external ${mib(m.heapBefore)} → ${mib(m.heapAfter)} MiB, ` +
      `RSS ${mib(m.rssBefore)} → ${mib(m.rssAfter)} MiB, peak RSS ${m.peakRss === null ? '?' : mib(m.peakRss)} MiB` +
      ` (cpuUsage made afterwards: ${mib(m.tables.find((t) => t.table === 'cpuUsage')?.measuredBytes ?? 0)} MiB more)`,
  ].join('\n');
}

async function main(): Promise<void> {
  const { values, positionals } = parseArgs({ allowPositionals: true, options: { json: { type: 'boolean', default: false } } });
  if (!positionals[0]) throw new Error('usage: node --expose-gc dist-bench/bench/memory.js FILE [--json]');
  const m = await measureMemory(resolve(positionals[0]));
  console.log(values.json ? JSON.stringify(m) : memoryText(m));
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  main().catch((e: unknown) => {
    console.error(e instanceof Error ? (e.stack ?? e.message) : String(e));
    process.exit(2);
  });
}
