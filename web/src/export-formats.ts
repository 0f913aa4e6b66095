// What the page can download (shared by the page and its download worker; no heavy imports here).
import type { DecodedTableName, TimeSpec } from '../../src/index.js';
import { DECODED_TABLE_NAMES } from '../../src/tables/schema.js';

export type ExportTable = DecodedTableName | 'cpuUsage' | 'threads' | 'processes' | 'images' | 'stacks' | 'stackFrames';
export type ExportFormat = 'csv' | 'parquet' | 'perfetto';

/** cswitch and its cpuUsage first, then every other decoded table of the registry, then the lifetimes, then the distinct stacks */
export const EXPORT_TABLES: readonly ExportTable[] = ['cswitch', 'cpuUsage', ...DECODED_TABLE_NAMES.filter((t) => t !== 'cswitch'), 'threads', 'processes', 'images', 'stacks', 'stackFrames'];

/** The formats the page writes (all of them now; `available: false` greys a button out, saying why). */
export const FORMATS: readonly { id: ExportFormat; label: string; available: boolean; note: string }[] = [
  { id: 'csv', label: 'CSV', available: true, note: 'the table as `etw-decode dump --format csv` writes it' },
  { id: 'parquet', label: 'Parquet', available: true, note: 'the table as a Parquet file (zstd; 64-bit values exact)' },
  { id: 'perfetto', label: 'Perfetto trace', available: true, note: 'the whole trace for ui.perfetto.dev (CPU tracks, wake-ups, process tree)' },
];

/** A time of a selected range for a file name: ms since the trace start to the ns ("12.345678ms"), or raw ticks ("t1234"). */
function specText(t: TimeSpec): string {
  if (typeof t === 'object' && 'ns' in t) {
    const ns = BigInt(t.ns);
    const whole = ns / 1_000_000n;
    const frac = (ns % 1_000_000n).toString().padStart(6, '0').replace(/0+$/, '');
    return `${whole}${frac ? '.' + frac : ''}ms`;
  }
  if (typeof t === 'object' && 'ticks' in t) return `t${t.ticks}`;
  return String(t);
}

/** What a download's file name says of the selected range ('' for the whole trace): ".100ms-250.5ms". */
export function rangeSuffix(range: { from: TimeSpec; to: TimeSpec } | null): string {
  return range ? `.${specText(range.from)}-${specText(range.to)}` : '';
}
