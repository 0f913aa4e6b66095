// Thread, process and image lifetimes (docs/format.md §F.1-F.3, §G.2): the derived `threads`,
// `processes` and `images` tables, built from the decoded threadEvents / processEvents / imageEvents rows
// applied in timestamp order (ties: decode order) — buffers of different CPUs interleave, so file order
// is not time order.
//
// Ids are reused, so a table has one row per lifetime: a Start (an image's Load) always opens a new one;
// End (Unload) closes the open one (or makes a closed row of its own when the id was never seen);
// DCStart, DCEnd and SetName add to the open lifetime of their id or open one with startTime (loadTime)
// null; Defunct adds to an open process lifetime and never opens one. An image's id is its (processId,
// imageBase). Fields take the first non-null value (later events only fill nulls), except the thread name
// (the last non-empty one) and the process exit status (its End event's).
// Memory is proportional to the number of thread, process and image events, never to the file size.
import * as L from '../generated/layout.js';
import { DerivedRows } from '../tables/derived-rows.js';
import { concatChunks, type Chunks, type ColumnChunk, type TypedColumn } from '../tables/schema.js';
import { Table } from '../tables/table.js';

const LIFETIME_EVENT_TABLES = ['threadEvents', 'processEvents', 'imageEvents'] as const;

/** Keeps the thread, process and image event rows of a decode (copies of borrowed chunks). */
export class LifetimeCollector {
  private readonly chunks = { threadEvents: [] as ColumnChunk[], processEvents: [] as ColumnChunk[], imageEvents: [] as ColumnChunk[] };

  add(chunks: Chunks, borrowed: boolean): void {
    for (const t of LIFETIME_EVENT_TABLES) {
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

  images(): Table<'images'> {
    return deriveImages(new Table('imageEvents', concatChunks('imageEvents', this.chunks.imageEvents)));
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

/** The file name of a kernel path without its folders (\Device\HarddiskVolume2\Windows\System32\ntdll.dll → ntdll.dll); null when nothing follows the last separator. */
export function imageName(fileName: string): string | null {
  const name = fileName.slice(Math.max(fileName.lastIndexOf('\\'), fileName.lastIndexOf('/')) + 1);
  return name === '' ? null : name;
}

/** The `images` table from imageEvents rows: a lifetime per (processId, imageBase), as threads per id. */
export function deriveImages(ev: Table<'imageEvents'>): Table<'images'> {
  const out = new DerivedRows('images');
  const ts = ev.column('timestamp');
  const opcode = ev.column('opcode');
  const pid = ev.column('processId');
  const base = ev.column('imageBase');
  const size = ev.column('imageSize');
  const checksum = ev.column('imageChecksum');
  const stamp = ev.column('timeDateStamp');
  const defaultBase = ev.column('defaultBase');
  const file = ev.column('fileName');
  const open = new Map<string, number>(); // `${processId}:${imageBase}` → row of its open lifetime
  for (const i of timeOrder(ts)) {
    const key = `${pid[i]!}:${base[i]!}`;
    const op = opcode[i]!;
    let row = open.get(key);
    if (op === L.OPCODE_IMAGE_LOAD || row === undefined) {
      row = out.add();
      out.set(row, L.IM_PROCESS_ID, pid[i]);
      out.set(row, L.IM_IMAGE_BASE, base[i]);
      open.set(key, row);
      if (op === L.OPCODE_IMAGE_LOAD) out.set(row, L.IM_LOAD_TIME, ts[i]);
    }
    out.fill(row, L.IM_IMAGE_SIZE, size[i]);
    out.fill(row, L.IM_IMAGE_CHECKSUM, checksum[i]);
    out.fill(row, L.IM_TIME_DATE_STAMP, stamp[i]);
    out.fill(row, L.IM_DEFAULT_BASE, defaultBase[i]);
    if (!ev.isNull(L.IE_FILE_NAME, i) && !out.has(row, L.IM_FILE_NAME)) {
      out.set(row, L.IM_FILE_NAME, file[i]);
      out.maybe(row, L.IM_NAME, imageName(file[i]!));
    }
    if (op === L.OPCODE_END) {
      out.set(row, L.IM_UNLOAD_TIME, ts[i]);
      open.delete(key);
    }
  }
  return out.take();
}
