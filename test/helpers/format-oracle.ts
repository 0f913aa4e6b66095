// The string-based CSV / JSON-lines formatter that `dump` used before src/output/text.ts (kept verbatim as
// the test oracle: the byte encoder must produce exactly these strings, UTF-8 encoded). One header row of
// column names, decimal integers (64-bit values exact), empty cell (CSV) or null (JSON) for null.
import { TABLES } from '../../src/generated/registry.js';
import { TABLE_COLUMNS, type TableName } from '../../src/tables/schema.js';
import type { Table } from '../../src/tables/table.js';
import type { Clock } from '../../src/time.js';
import { ENUMS, nameOf } from '../../src/tables/enums.js';

export type DumpFormat = 'csv' | 'jsonl';
export type TimeColumn = 'raw' | 'ns' | 'filetime';

export interface FormatOptions {
  format: DumpFormat;
  /** add name columns for enum values */
  names?: boolean;
  /** add a converted time column (needs the clock) */
  time?: TimeColumn;
  clock?: Clock | null;
}

interface Extra {
  name: string;
  /** text for row i, or null */
  value(t: Table, i: number): string | null;
  quoted: boolean;
}

function extras(table: TableName, o: FormatOptions): Extra[] {
  const out: Extra[] = [];
  if (o.time && o.time !== 'raw') {
    const clock = o.clock;
    if (!clock) throw new RangeError('--time needs a trace whose clock type can be converted (QPC, system time or CPU cycles)');
    const ns = o.time === 'ns';
    const convert = ns ? clock.toNanoseconds : clock.toFileTime;
    const perSecond = clock.ticksPerSecond;
    // every column of raw ticks (registry `time`): `timestamp` → timeNs / fileTime, others → <name>Ns /
    // <name>FileTime; differences of ticks (`duration`) → <name>Ns with --time ns
    for (const c of TABLES[table].columns) {
      if (c.time === null || (c.time === 'duration' && !ns)) continue;
      const name = c.name === 'timestamp' ? (ns ? 'timeNs' : 'fileTime') : c.name + (ns ? 'Ns' : 'FileTime');
      // a converted value outside the int64 range is null (as Arrow and Parquet store it)
      const text = (v: bigint) => (v < -(2n ** 63n) || v >= 2n ** 63n ? null : v.toString());
      const value =
        c.time === 'time'
          ? (t: Table, i: number) => (t.isNull(c.id, i) ? null : text(convert((t.columns[c.id] as BigInt64Array)[i]!)))
          : (t: Table, i: number) => (t.isNull(c.id, i) ? null : text(((t.columns[c.id] as BigInt64Array)[i]! * 1_000_000_000n) / perSecond));
      out.push({ name, value, quoted: false });
    }
  }
  if (o.names) {
    // a name column after the others for every column that holds an enumeration (registry `enum`)
    for (const c of TABLES[table].columns) {
      if (c.enum === null) continue;
      const names = ENUMS[c.enum]!;
      out.push({ name: c.name + 'Name', value: (t, i) => (t.isNull(c.id, i) ? null : nameOf(names, t.columns[c.id]![i] as number)), quoted: true });
    }
  }
  return out;
}

function visibleColumns(table: TableName) {
  return TABLE_COLUMNS[table].filter((c) => c.name !== 'valid');
}

export function headerLine(table: TableName, o: FormatOptions): string {
  if (o.format !== 'csv') return '';
  return [...visibleColumns(table).map((c) => c.name), ...extras(table, o).map((e) => e.name)].join(',') + '\n';
}

/** A CSV cell: quoted when it holds a comma, a quote or a line break. */
export function csvText(s: string): string {
  return /[",\r\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
}

export function formatRows(t: Table, o: FormatOptions): string {
  const specs = visibleColumns(t.name);
  const cols = specs.map((s) => t.columns[s.id]!);
  const text = specs.map((s) => s.type === 'str');
  // JSON: 64-bit columns are always decimal strings (JSON.parse and jq would round them past 2^53), so a
  // column's JSON type never changes from row to row; converted times are 64-bit too
  const wide = specs.map((s) => s.type === 'i64' || s.type === 'u64');
  const more = extras(t.name, o);
  const csv = o.format === 'csv';
  const parts: string[] = [];
  for (let i = 0; i < t.length; i++) {
    let line = csv ? '' : '{';
    for (let c = 0; c < specs.length; c++) {
      if (c) line += ',';
      const isNull = t.isNull(specs[c]!.id, i);
      const v = cols[c]![i];
      if (csv) {
        if (!isNull) line += text[c] ? csvText(v as string) : String(v);
      } else {
        line += `"${specs[c]!.name}":${isNull ? 'null' : text[c] ? JSON.stringify(v) : wide[c] ? `"${v}"` : String(v)}`;
      }
    }
    for (const e of more) {
      const v = e.value(t, i);
      if (csv) line += ',' + (v ?? '');
      else line += `,"${e.name}":${v === null ? 'null' : JSON.stringify(v)}`;
    }
    parts.push(csv ? line : line + '}');
  }
  return parts.join('\n') + '\n';
}
