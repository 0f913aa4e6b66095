// The nullable stackId column of cswitch, readythread and samples rows (docs/design/stacks.md): the engines
// leave it null, and it is filled here, after the decode, by StackAttacher (src/derive/stacks.ts, the one
// attachment): over whole tables for a whole decode (TableCollector), or chunk by chunk after a first pass
// over the stack tables (src/convert/stack-pass.ts: convert, dump). One typed-array store per row, no
// allocation per row.
import { StackAttacher, type StackedTableName } from './stacks.js';
import type { Table } from '../tables/table.js';

/** The stacked tables, in the order a whole decode meets their rows. */
export const STACKED_TABLES = ['samples', 'cswitch', 'readythread'] as const satisfies readonly StackedTableName[];

/** Rows of the stacked tables: a whole decode's tables, or one streamed chunk of each. */
export type StackedRows = { readonly [T in StackedTableName]?: Table<T> };

/**
 * Writes the stack ids of the rows of `rows` (met after those of the earlier calls) into their stackId
 * column, setting its valid bit where a stack was attached and clearing it elsewhere.
 */
export function fillStackIds(attacher: StackAttacher, rows: StackedRows): void {
  for (const name of STACKED_TABLES) {
    const t = rows[name];
    if (!t || t.length === 0) continue;
    writeStackIds(t, attacher.attach(name, t));
  }
}

/** Fills the stackId column of a whole decode's tables when it has stack events; returns the attacher (null: none). */
export function attachWholeStacks(tables: StackedRows & { stackEvents: Table<'stackEvents'>; stackEventFrames: Table<'stackEventFrames'> }): StackAttacher | null {
  if (tables.stackEvents.length === 0) return null;
  const attacher = new StackAttacher(tables.stackEvents, tables.stackEventFrames);
  if (!attacher.empty) fillStackIds(attacher, tables);
  return attacher;
}

function writeStackIds(t: Table<StackedTableName>, ids: Int32Array): void {
  const bit = t.specs.findIndex((s) => s.name === 'stackId');
  const stackId = t.columns[bit] as Uint32Array;
  const valid = t.columns[t.specs.findIndex((s) => s.name === 'valid')] as Uint32Array;
  const set = 1 << bit;
  for (let r = 0; r < ids.length; r++) {
    const id = ids[r]!;
    if (id >= 0) {
      stackId[r] = id;
      valid[r] = valid[r]! | set;
    } else {
      stackId[r] = 0;
      valid[r] = valid[r]! & ~set;
    }
  }
}
