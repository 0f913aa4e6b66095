// What the page can download (shared by the page and its download worker; no heavy imports here).
import type { DecodedTableName } from '../../src/index.js';
import { DECODED_TABLE_NAMES } from '../../src/tables/schema.js';

export type ExportTable = DecodedTableName | 'cpuUsage' | 'threads' | 'processes';
export type ExportFormat = 'csv' | 'parquet' | 'perfetto';

/** cswitch and its cpuUsage first, then every other decoded table of the registry, then the lifetimes */
export const EXPORT_TABLES: readonly ExportTable[] = ['cswitch', 'cpuUsage', ...DECODED_TABLE_NAMES.filter((t) => t !== 'cswitch'), 'threads', 'processes'];

/** The formats the page writes (all of them now; `available: false` greys a button out, saying why). */
export const FORMATS: readonly { id: ExportFormat; label: string; available: boolean; note: string }[] = [
  { id: 'csv', label: 'CSV', available: true, note: 'the table as `etw-decode dump --format csv` writes it' },
  { id: 'parquet', label: 'Parquet', available: true, note: 'the table as a Parquet file (zstd; 64-bit values exact)' },
  { id: 'perfetto', label: 'Perfetto trace', available: true, note: 'the whole trace for ui.perfetto.dev (CPU tracks, wake-ups, process tree)' },
];
