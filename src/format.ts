// The former string API of CSV / JSON-lines rendering, kept for callers that want text: it now runs on
// the byte encoder of src/output/text.ts (TextTableWriter, toCsv, toJsonl), which is what `dump` uses.
import { TextTableWriter, type FormatOptions } from './output/text.js';
import type { TableName } from './tables/schema.js';
import type { Table } from './tables/table.js';

export { csvText } from './output/escape.js';
export type { DumpFormat, FormatOptions, TimeColumn } from './output/text.js';

const decoder = new TextDecoder();

function text(table: TableName, o: FormatOptions, write: (w: TextTableWriter) => void): string {
  let out = '';
  const w = new TextTableWriter(table, o, (b) => void (out += decoder.decode(b, { stream: true })), 1 << 20);
  write(w);
  w.end();
  return out + decoder.decode();
}

/** The CSV header row (column names and a line break); '' for JSON lines. */
export function headerLine(table: TableName, o: FormatOptions): string {
  return text(table, o, (w) => w.writeHeader());
}

/** The rows of a chunk, one line each ('\n' alone for an empty chunk, as this function always returned). */
export function formatRows(t: Table, o: FormatOptions): string {
  return t.length === 0 ? '\n' : text(t.name, o, (w) => w.write(t));
}
