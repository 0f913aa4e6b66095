// Where a conversion's part files are written: in this thread (one part at a time, each awaited), or by
// worker threads (part-worker.ts) while this thread goes on decoding and deriving — the Parquet and Arrow
// encoders cost several times the decode, so on a machine with cores to spare one file's conversion runs
// its encoding beside its decode. Parts are written whole and independently (a part is one Parquet row
// group), so the files are the same either way. Memory: at most `inFlight` parts are queued or being
// written (partRows rows each, handed over to the worker, or copied when the caller keeps them); write()
// waits for room.
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import { EtlError } from '../errors.js';
import type { TraceInfo } from '../result/logfile.js';
import type { ColumnChunk, TableName } from '../tables/schema.js';
import { Table } from '../tables/table.js';
import type { DatasetFormat, DatasetWriter, FormatContext } from './formats.js';

/** A part for a worker to write. */
export interface PartJob {
  id: number;
  path: string;
  table: TableName;
  chunk: ColumnChunk;
  format: DatasetFormat;
  partRows: number;
  names: boolean;
  /** the trace's clock facts (the worker makes its Clock from them), or null */
  info: TraceInfo | null;
}

/** A worker's reply: the part's size, or why it failed. */
export type PartDone = { id: number; bytes: number } | { id: number; error: string; code?: string };

/** A part handed to the writers: its size once written. */
export interface PartWrite {
  size: Promise<number>;
}

/** Writes part files; `write` resolves once the part is queued (room permitting). */
export interface PartWriters {
  /** `owned`: the chunk's arrays are the caller's alone and not used after (a worker may take them over) */
  write(path: string, table: TableName, chunk: ColumnChunk, owned: boolean): Promise<PartWrite>;
  /** stops the workers (after every write has settled) */
  close(): Promise<void>;
}

const WORKER_URL = new URL('./part-worker.js', import.meta.url);

/**
 * The chunk as a message and the buffers it can hand over rather than copy: arrays the caller owns, and
 * copies of views into larger buffers (a message would clone a view's whole buffer).
 */
function message(chunk: ColumnChunk, owned: boolean): { chunk: ColumnChunk; transfer: ArrayBuffer[] } {
  const transfer: ArrayBuffer[] = [];
  const columns = chunk.columns.map((c) => {
    if (Array.isArray(c)) return c;
    const whole = c.byteOffset === 0 && c.byteLength === c.buffer.byteLength;
    if (whole && !owned) return c;
    const own = whole ? c : c.slice();
    if (own.buffer instanceof ArrayBuffer && !transfer.includes(own.buffer)) transfer.push(own.buffer);
    return own;
  }) as ColumnChunk['columns'];
  return { chunk: { length: chunk.length, columns }, transfer };
}

/** Whether part workers can run here (the compiled worker script exists: not when tests run the TypeScript sources). */
export function partWorkersAvailable(): boolean {
  return existsSync(fileURLToPath(WORKER_URL));
}

/** Parts written in this thread, one at a time. */
export function inThreadParts(writer: DatasetWriter, ctx: FormatContext): PartWriters {
  return {
    async write(path, table, chunk) {
      const part = await writer.openPart(path, table, ctx);
      let bytes: number;
      try {
        await part.write(new Table(table, chunk));
      } finally {
        bytes = await part.close();
      }
      return { size: Promise.resolve(bytes) };
    },
    async close() {},
  };
}

/** Parts written by `count` worker threads, at most `inFlight` (default one more than the workers) at once. */
export function workerParts(count: number, job: Omit<PartJob, 'id' | 'path' | 'table' | 'chunk'>, inFlight = count + 1): PartWriters {
  const workers = Array.from({ length: count }, () => new Worker(WORKER_URL));
  const busy = new Array<number>(count).fill(0);
  const pending = new Map<number, { resolve: (bytes: number) => void; reject: (e: Error) => void; worker: number }>();
  let nextId = 0;
  let failure: Error | null = null;
  let room: (() => void) | null = null;
  const settle = (id: number, outcome: number | Error) => {
    const p = pending.get(id);
    if (!p) return;
    pending.delete(id);
    busy[p.worker]!--;
    if (typeof outcome === 'number') p.resolve(outcome);
    else p.reject(outcome);
    room?.();
  };
  workers.forEach((w, i) => {
    w.on('message', (m: PartDone) => settle(m.id, 'error' in m ? new EtlError('WRITE_FAILED', m.error) : m.bytes));
    w.on('error', (e) => {
      failure ??= new EtlError('WRITE_FAILED', `a part-writing worker failed: ${e.message}`);
      for (const [id, p] of pending) if (p.worker === i) settle(id, failure);
    });
  });
  return {
    async write(path, table, chunk, owned) {
      while (pending.size >= inFlight && failure === null) await new Promise<void>((r) => (room = r));
      if (failure) throw failure;
      const id = nextId++;
      let worker = 0;
      for (let i = 1; i < count; i++) if (busy[i]! < busy[worker]!) worker = i;
      busy[worker]!++;
      const size = new Promise<number>((resolve, reject) => pending.set(id, { resolve, reject, worker }));
      size.catch(() => undefined); // the caller awaits it later: no unhandled rejection meanwhile
      const m = message(chunk, owned);
      workers[worker]!.postMessage({ ...job, id, path, table, chunk: m.chunk } satisfies PartJob, m.transfer);
      return { size };
    },
    async close() {
      await Promise.all(workers.map((w) => w.terminate()));
    },
  };
}
