// CSV / JSON-lines rendering of table chunks: one header row of column names, decimal integers
// (64-bit values exact), empty cell (CSV) or null (JSON) for null. The internal `valid` mask is not written.
import { TABLE_COLUMNS, type TableName } from './schema.js';
import type { Table } from './table.js';

export type DumpFormat = 'csv' | 'jsonl';

function visibleColumns(table: TableName) {
  return TABLE_COLUMNS[table].filter((c) => c.name !== 'valid');
}

export function headerLine(table: TableName, format: DumpFormat): string {
  return format === 'csv' ? visibleColumns(table).map((c) => c.name).join(',') + '\n' : '';
}

export function formatRows(t: Table, format: DumpFormat): string {
  const specs = visibleColumns(t.name);
  const cols = specs.map((s) => t.columns[s.id]!);
  const parts: string[] = [];
  for (let i = 0; i < t.length; i++) {
    if (format === 'csv') {
      let line = '';
      for (let c = 0; c < specs.length; c++) {
        if (c) line += ',';
        if (!t.isNull(specs[c]!.id, i)) line += String(cols[c]![i]);
      }
      parts.push(line);
    } else {
      let line = '{';
      for (let c = 0; c < specs.length; c++) {
        if (c) line += ',';
        const v = t.isNull(specs[c]!.id, i) ? 'null' : String(cols[c]![i]);
        line += `"${specs[c]!.name}":${v}`;
      }
      parts.push(line + '}');
    }
  }
  return parts.join('\n') + '\n';
}
