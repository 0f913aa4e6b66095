// Where a conversion's part files are sorted by (cpu, time) and written: in this thread (one part at a
// time, each awaited), or by worker threads (part-worker.ts) while this thread goes on decoding and
// deriving — the Parquet and Arrow encoders cost several times the decode, so on a machine with cores to
// spare one file's conversion runs its encoding (and the parts' sort) beside its decode. Parts are written
// whole and independently (a part is one Parquet row group), so the files are the same either way.
// Memory: at most `inFlight` parts are queued or being written (partRows rows each, handed over to the
// worker, or copied when the caller keeps them); write() waits for room. A part's column buffers that were
// handed over come back with the worker's reply, for the caller to reuse (`giveBack`): the converting
// thread allocates no columns per part. A part goes to a worker when the worker has none: the parts wait
// here, so none waits behind another while a worker idles.
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import { EtlError } from '../errors.js';
import type { TraceInfo } from '../result/logfile.js';
import type { ColumnChunk, TableName, TypedColumn } from '../tables/schema.js';
import { Table } from '../tables/table.js';
import type { DatasetFormat, DatasetWriter, FormatContext } from './formats.js';
import { CpuTimeSorter, sortByCpuTime } from './sort.js';
import { chunkMessage, type ChunkMessage } from '../tables/chunk-message.js';

/** A part for a worker to write. */
export interface PartJob {
  id: number;
  path: string;
  table: TableName;
  chunk: ChunkMessage;
  format: DatasetFormat;
  partRows: number;
  names: boolean;
  /** the trace's clock facts (the worker makes its Clock from them), or null */
  info: TraceInfo | null;
  /** send the chunk's numeric columns back with the reply (their buffers handed back) */
  giveBack?: boolean;
}

/** A worker's reply: the part's size (and the chunk's numeric columns when asked back; null for the others), or why it failed. */
export type PartDone = { id: number; bytes: number; columns?: (TypedColumn | null)[] } | { id: number; error: string; code?: string };

/** A part handed to the writers: its size once written. */
export interface PartWrite {
  size: Promise<number>;
}

/** Writes part files; `write` resolves once the part is queued (room permitting). */
export interface PartWriters {
  /**
   * The part file holds the chunk's rows in (cpu, time) order (sort.ts), whatever their order here.
   * `owned`: the buffers of the chunk's arrays are the caller's alone and not used after (a worker takes
   * them over, whole, even where a column is a view of part of its buffer; the rows are sorted in them).
   * `giveBack` (owned chunks):
   * called once the part is written with the chunk's columns usable again (numeric ones as views of the
   * same buffers, handed back by the worker; text columns as they were sent) — not when the write failed.
   */
  write(path: string, table: TableName, chunk: ColumnChunk, owned: boolean, giveBack?: (columns: readonly TypedColumn[]) => void): Promise<PartWrite>;
  /** stops the workers (after every write has settled) */
  close(): Promise<void>;
}

const WORKER_URL = new URL('./part-worker.js', import.meta.url);

/** Whether part workers can run here (the compiled worker script exists: not when tests run the TypeScript sources). */
export function partWorkersAvailable(): boolean {
  return existsSync(fileURLToPath(WORKER_URL));
}

/** Parts written in this thread, one at a time. */
export function inThreadParts(writer: DatasetWriter, ctx: FormatContext): PartWriters {
  const sorter = new CpuTimeSorter();
  return {
    async write(path, table, chunk, owned, giveBack) {
      if (owned) sorter.sortInPlace(table, chunk.columns, chunk.length);
      else chunk = sortByCpuTime(table, chunk);
      const part = await writer.openPart(path, table, ctx);
      let bytes: number;
      try {
        // (the columns alone: a producer's text codes no longer match a text column sorted in place)
        await part.write(new Table(table, { length: chunk.length, columns: chunk.columns }));
      } finally {
        bytes = await part.close();
      }
      if (owned) giveBack?.(chunk.columns);
      return { size: Promise.resolve(bytes) };
    },
    async close() {},
  };
}

/** Parts written by `count` worker threads, at most `inFlight` (default one more than the workers) at once. */
export function workerParts(count: number, job: Omit<PartJob, 'id' | 'path' | 'table' | 'chunk'>, inFlight = count + 1): PartWriters {
  const workers = Array.from({ length: count }, () => new Worker(WORKER_URL));
  // a part goes to a worker when it has none (parts differ a hundredfold — a million-row cswitch part beside
  // a few rows — so a part queued behind another on a busy worker could wait while the other worker idles);
  // until then it waits here, its message ready
  const running = new Array<number>(count).fill(-1);
  const queue: { id: number; message: PartJob; transfer: ArrayBuffer[] }[] = [];
  const pending = new Map<number, { resolve: (bytes: number) => void; reject: (e: Error) => void; worker: number; chunk: ColumnChunk; giveBack?: (columns: readonly TypedColumn[]) => void }>();
  let nextId = 0;
  let failure: Error | null = null;
  let room: (() => void) | null = null;
  const dispatch = () => {
    for (let i = 0; i < count && queue.length > 0; i++) {
      if (running[i] !== -1) continue;
      const q = queue.shift()!;
      running[i] = q.id;
      pending.get(q.id)!.worker = i;
      workers[i]!.postMessage(q.message, q.transfer);
    }
  };
  const settle = (id: number, outcome: number | Error, columns?: (TypedColumn | null)[]) => {
    const p = pending.get(id);
    if (!p) return;
    pending.delete(id);
    if (p.worker >= 0 && running[p.worker] === id) running[p.worker] = -1;
    if (columns && p.giveBack) p.giveBack(columns.map((c, i) => c ?? p.chunk.columns[i]!));
    if (typeof outcome === 'number') p.resolve(outcome);
    else p.reject(outcome);
    if (failure === null) dispatch();
    room?.();
  };
  workers.forEach((w, i) => {
    w.on('message', (m: PartDone) => ('error' in m ? settle(m.id, new EtlError('WRITE_FAILED', m.error)) : settle(m.id, m.bytes, m.columns)));
    w.on('error', (e) => {
      failure ??= new EtlError('WRITE_FAILED', `a part-writing worker failed: ${e.message}`);
      for (const [id, p] of pending) if (p.worker === i) settle(id, failure);
      for (const q of queue.splice(0)) settle(q.id, failure);
    });
  });
  return {
    async write(path, table, chunk, owned, giveBack) {
      while (pending.size >= inFlight && failure === null) await new Promise<void>((r) => (room = r));
      if (failure) throw failure;
      const id = nextId++;
      const back = owned ? giveBack : undefined;
      const size = new Promise<number>((resolve, reject) => pending.set(id, { resolve, reject, worker: -1, chunk, giveBack: back }));
      size.catch(() => undefined); // the caller awaits it later: no unhandled rejection meanwhile
      const m = chunkMessage(chunk, owned);
      queue.push({ id, message: { ...job, id, path, table, chunk: m.chunk, giveBack: back !== undefined }, transfer: m.transfer });
      dispatch();
      return { size };
    },
    async close() {
      await Promise.all(workers.map((w) => w.terminate()));
    },
  };
}
