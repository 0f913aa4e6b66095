// Which decoded tables a table is made of: what a command that writes or analyses only some tables asks the
// decode for (StreamOptions.tables), so the engine decodes those events and walks the others, tallied by
// kind only (Engine.keepTables). The `traces` row holds the whole decode's diagnostics, and a stack pass
// (derive/stack-pass.ts) decodes its own tables.
import type { DecodedTableName, TableName } from './schema.js';
import { DECODED_TABLE_NAMES } from './schema.js';

/** The decoded tables each derived table is made of (null: every one). */
const MADE_OF: Record<Exclude<TableName, DecodedTableName>, readonly DecodedTableName[] | null> = {
  threads: ['threadEvents'],
  processes: ['processEvents'],
  images: ['imageEvents'],
  cpuUsage: ['cswitch', 'readythread', 'threadEvents'],
  threadStates: ['cswitch', 'readythread', 'threadEvents'],
  // from the stack pass, which decodes its own
  stacks: [],
  stackFrames: [],
  // the decode's diagnostics: every table's
  traces: null,
};

/**
 * The decoded tables to decode for `tables` — each decoded one itself, each derived one what it is made of
 * — in id order; undefined when that is every decoded table (or `traces` is among them).
 */
export function decodedTablesFor(tables: Iterable<TableName>): DecodedTableName[] | undefined {
  const need = new Set<DecodedTableName>();
  for (const t of tables) {
    if ((DECODED_TABLE_NAMES as readonly string[]).includes(t)) need.add(t as DecodedTableName);
    else {
      const of = MADE_OF[t as Exclude<TableName, DecodedTableName>];
      if (of === null) return undefined;
      for (const d of of) need.add(d);
    }
  }
  const list = DECODED_TABLE_NAMES.filter((t) => need.has(t));
  return list.length === DECODED_TABLE_NAMES.length ? undefined : list;
}
