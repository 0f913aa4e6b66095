// Collects the row chunks of a decode into whole tables (one copy per column at the end), and fills the
// rows' stackId column when the trace has stacks (src/derive/stack-ids.ts): a whole decode's result carries it.
import { concatChunks, DECODED_TABLE_NAMES, perTable, type Chunks, type ColumnChunk, type DecodedTableName } from '../tables/schema.js';
import { Table, type DecodedTables } from '../tables/table.js';
import { attachWholeStacks } from '../derive/stack-ids.js';

export class TableCollector {
  private readonly chunks = perTable((): ColumnChunk[] => []);

  /** Keeps a set of chunks (they must be the collector's to keep: copied rows). */
  add = (chunks: Chunks): void => {
    for (const t of DECODED_TABLE_NAMES) if (chunks[t].length) this.chunks[t].push(chunks[t]);
  };

  tables(): DecodedTables {
    const tables = perTable(<T extends DecodedTableName>(t: T) => new Table(t, concatChunks(t, this.chunks[t]))) as DecodedTables;
    attachWholeStacks(tables);
    return tables;
  }
}
