// Thread and process lifetimes (docs/format.md §F.1-F.3): the derived `threads` and `processes` tables,
// built from the decoded threadEvents / processEvents rows applied in timestamp order (ties: decode
// order) — buffers of different CPUs interleave, so file order is not time order.
//
// Ids are reused, so a table has one row per lifetime: a Start always opens a new one; End closes the
// open one (or makes a closed row of its own when the id was never seen); DCStart, DCEnd and SetName add
// to the open lifetime of their id or open one with startTime null; Defunct adds to an open process
// lifetime and never opens one. Fields take the first non-null value (later events only fill nulls),
// except the thread name (the last non-empty one) and the process exit status (its End event's).
// Memory is proportional to the number of thread and process events, never to the file size.
import * as L from '../generated/layout.js';
import { DerivedRows } from '../tables/derived-rows.js';
import { concatChunks, type Chunks, type ColumnChunk, type TypedColumn } from '../tables/schema.js';
import { Table } from '../tables/table.js';

const THREAD_TABLES = ['threadEvents', 'processEvents'] as const;

/** Keeps the thread and process event rows of a decode (copies of borrowed chunks). */
export class LifetimeCollector {
  private readonly chunks = { threadEvents: [] as ColumnChunk[], processEvents: [] as ColumnChunk[] };

  add(chunks: Chunks, borrowed: boolean): void {
    for (const t of THREAD_TABLES) {
      const c = chunks[t];
      if (c.length === 0) continue;
      this.chunks[t].push(borrowed ? { length: c.length, columns: c.columns.map((col) => col.slice() as TypedColumn) } : c);
    }
  }

  threads(): Table<'threads'> {
    return deriveThreads(new Table('threadEvents', concatChunks('threadEvents', this.chunks.threadEvents)));
  }

  processes(): Table<'processes'> {
    return deriveProcesses(new Table('processEvents', concatChunks('processEvents', this.chunks.processEvents)));
  }
}

/** Row indices of `ts` in timestamp order, ties in row order. */
function timeOrder(ts: BigInt64Array): number[] {
  const order = Array.from({ length: ts.length }, (_, i) => i);
  return order.sort((a, b) => (ts[a]! < ts[b]! ? -1 : ts[a]! > ts[b]! ? 1 : a - b));
}

/** The `threads` table from threadEvents rows. */
export function deriveThreads(ev: Table<'threadEvents'>): Table<'threads'> {
  const out = new DerivedRows('threads');
  const ts = ev.column('timestamp');
  const opcode = ev.column('opcode');
  const tid = ev.column('threadId');
  const pid = ev.column('processId');
  const addr = ev.column('win32StartAddr');
  const prio = ev.column('basePriority');
  const name = ev.column('name');
  const open = new Map<number, number>(); // tid → row of its open lifetime
  for (const i of timeOrder(ts)) {
    const id = tid[i]!;
    const op = opcode[i]!;
    let row = open.get(id);
    if (op === L.OPCODE_START || row === undefined) {
      row = out.add();
      out.set(row, L.TH_THREAD_ID, id);
      open.set(id, row);
      if (op === L.OPCODE_START) out.set(row, L.TH_START_TIME, ts[i]);
    }
    out.fill(row, L.TH_PROCESS_ID, pid[i]);
    if (!ev.isNull(L.TE_WIN32_START_ADDR, i)) out.fill(row, L.TH_WIN32_START_ADDR, addr[i]);
    if (!ev.isNull(L.TE_BASE_PRIORITY, i)) out.fill(row, L.TH_BASE_PRIORITY, prio[i]);
    if (!ev.isNull(L.TE_NAME, i) && name[i] !== '') out.set(row, L.TH_NAME, name[i]);
    if (op === L.OPCODE_END) {
      out.set(row, L.TH_END_TIME, ts[i]);
      open.delete(id);
    }
  }
  return out.take();
}

/** The `processes` table from processEvents rows. */
export function deriveProcesses(ev: Table<'processEvents'>): Table<'processes'> {
  const out = new DerivedRows('processes');
  const ts = ev.column('timestamp');
  const opcode = ev.column('opcode');
  const pid = ev.column('processId');
  const parent = ev.column('parentId');
  const session = ev.column('sessionId');
  const exitStatus = ev.column('exitStatus');
  const image = ev.column('imageFileName');
  const commandLine = ev.column('commandLine');
  const open = new Map<number, number>(); // pid → row of its open lifetime
  for (const i of timeOrder(ts)) {
    const id = pid[i]!;
    const op = opcode[i]!;
    let row = open.get(id);
    if (op === L.OPCODE_PROCESS_DEFUNCT && row === undefined) continue; // Defunct never opens a lifetime
    if (op === L.OPCODE_START || row === undefined) {
      row = out.add();
      out.set(row, L.PR_PROCESS_ID, id);
      open.set(id, row);
      if (op === L.OPCODE_START) out.set(row, L.PR_START_TIME, ts[i]);
    }
    out.fill(row, L.PR_PARENT_ID, parent[i]);
    out.fill(row, L.PR_SESSION_ID, session[i]);
    out.fill(row, L.PR_IMAGE_FILE_NAME, image[i]);
    if (!ev.isNull(L.PE_COMMAND_LINE, i)) out.fill(row, L.PR_COMMAND_LINE, commandLine[i]);
    if (op === L.OPCODE_END) {
      out.set(row, L.PR_END_TIME, ts[i]);
      out.set(row, L.PR_EXIT_STATUS, exitStatus[i]);
      open.delete(id);
    }
  }
  return out.take();
}
