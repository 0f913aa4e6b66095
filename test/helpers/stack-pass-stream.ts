// A streamed decode as convert and dump make it (src/convert/stack-pass.ts): the first pass, then each chunk's
// rows filled (stackId; the samples' processId, imageName, imageOffset) — the stacked tables kept whole.
import { stackPass } from '../../src/convert/stack-pass.js';
import { streamFile } from '../../src/decode/files.js';
import type { StackedTableName } from '../../src/derive/stacks.js';
import { concatChunks, type ColumnChunk, type TypedColumn } from '../../src/tables/schema.js';
import { Table } from '../../src/tables/table.js';

const STACKED = ['samples', 'cswitch', 'readythread'] as const satisfies readonly StackedTableName[];

/** The stacked tables of a streamed decode of `path` in windows of `windowBytes` (more than one thread: in this thread, whatever the size). */
export async function streamedFilled(path: string, windowBytes: number, threads = 1): Promise<{ [T in StackedTableName]: Table<T> }> {
  const parallel = threads > 1 ? { inThread: true, minBytes: 0 } : undefined;
  const pass = await stackPass(path, { windowBytes, threads, parallel });
  const kept = { samples: [] as ColumnChunk[], cswitch: [] as ColumnChunk[], readythread: [] as ColumnChunk[] };
  await streamFile(path, {
    windowBytes,
    threads,
    parallel,
    rows: 'borrow',
    onRows: (rows) => {
      pass.fill(rows);
      for (const t of STACKED) if (rows[t].length) kept[t].push({ length: rows[t].length, columns: rows[t].columns.map((c) => c.slice(0, rows[t].length) as TypedColumn) });
    },
  });
  return {
    samples: new Table('samples', concatChunks('samples', kept.samples)),
    cswitch: new Table('cswitch', concatChunks('cswitch', kept.cswitch)),
    readythread: new Table('readythread', concatChunks('readythread', kept.readythread)),
  };
}
