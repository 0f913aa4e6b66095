// Collects the row chunks of a decode into whole tables (one copy per column at the end).
import { concatChunks, perTable, TABLE_NAMES, type Chunks, type ColumnChunk, type TableName } from './schema.js';
import { Table, type Tables } from './table.js';

export class TableCollector {
  private readonly chunks = perTable((): ColumnChunk[] => []);

  /** Keeps a set of chunks (they must be the collector's to keep: copied rows). */
  add = (chunks: Chunks): void => {
    for (const t of TABLE_NAMES) if (chunks[t].length) this.chunks[t].push(chunks[t]);
  };

  tables(): Tables {
    return perTable(<T extends TableName>(t: T) => new Table(t, concatChunks(t, this.chunks[t]))) as Tables;
  }
}
