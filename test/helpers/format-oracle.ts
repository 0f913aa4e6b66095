// The string-based CSV / JSON-lines formatter that `dump` used before src/output/text.ts (kept verbatim as
// the test oracle: the byte encoder must produce exactly these strings, UTF-8 encoded). One header row of
// column names, decimal integers (64-bit values exact), empty cell (CSV) or null (JSON) for null.
import { TABLES } from '../../src/generated/registry.js';
import { TABLE_COLUMNS, type TableName } from '../../src/tables/schema.js';
import type { Table } from '../../src/tables/table.js';
import type { Clock } from '../../src/time.js';
import { ENUMS, nameOf } from '../../src/tables/enums.js';

export type DumpFormat = 'csv' | 'jsonl';
export type TimeColumn = 'raw' | 'ns' | 's' | 'filetime' | 'iso';

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
    const since = o.time === 'ns' || o.time === 's';
    const convert = since ? clock.toNanoseconds : clock.toFileTime;
    const perSecond = clock.ticksPerSecond;
    const suffix = { ns: 'Ns', s: 'Seconds', filetime: 'FileTime', iso: 'Utc' }[o.time];
    // the oracle's own texts: seconds from the BigInt by string slicing; ISO from Date (ms) and the last 4
    // digits of the 100 ns count
    const asSeconds = (v: bigint) => {
      const a = (v < 0n ? -v : v).toString().padStart(10, '0');
      return `${v < 0n ? '-' : ''}${a.slice(0, -9)}.${a.slice(-9)}`;
    };
    const asIso = (ft: bigint) => {
      const unix100 = ft - 116444736000000000n;
      const ms = unix100 / 10_000n - (unix100 % 10_000n < 0n ? 1n : 0n);
      const d = new Date(Number(ms));
      const year = d.getUTCFullYear();
      if (Number.isNaN(d.getTime()) || year < 0 || year > 9999) return null;
      const frac = (unix100 - ms * 10_000n).toString().padStart(4, '0');
      return `${d.toISOString().slice(0, 23)}${frac.slice(-4)}Z`;
    };
    const style = o.time === 's' ? asSeconds : o.time === 'iso' ? asIso : (v: bigint) => v.toString();
    // every column of raw ticks (registry `time`): `timestamp` → time<Suffix> (fileTime), others →
    // <name><Suffix>; differences of ticks (`duration`) → <name>Ns / <name>Seconds with ns and s
    for (const c of TABLES[table].columns) {
      if (c.time === null || (c.time === 'duration' && !since)) continue;
      const name = c.name === 'timestamp' ? (o.time === 'filetime' ? 'fileTime' : 'time' + suffix) : c.name + suffix;
      // a converted value outside the int64 range is null (as Arrow and Parquet store it)
      const text = (v: bigint) => (v < -(2n ** 63n) || v >= 2n ** 63n ? null : style(v));
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
  // addresses: 0x and lowercase hex digits (a string in JSON)
  const address = specs.map((s) => TABLES[t.name].columns[s.id]!.address);
  const more = extras(t.name, o);
  const csv = o.format === 'csv';
  const parts: string[] = [];
  for (let i = 0; i < t.length; i++) {
    let line = csv ? '' : '{';
    for (let c = 0; c < specs.length; c++) {
      if (c) line += ',';
      const isNull = t.isNull(specs[c]!.id, i);
      const v = address[c] ? `0x${(cols[c]![i] as bigint).toString(16)}` : cols[c]![i];
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
