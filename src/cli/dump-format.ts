// Where `dump` formats its rows: in this thread (TextTableWriter straight to the output), or, for a large
// input on a machine with a core to spare, in worker threads (dump-format-worker.ts) while this thread
// decodes and derives the next chunks — the CSV or JSON text costs about as much as the decode and the
// derivations together. The bytes are the same either way: each chunk is formatted whole by one worker and
// written in chunk order. Memory: at most `inFlight` chunks are being formatted or waiting to be written
// (each the chunk's columns handed over to the worker — a copy of a borrowed chunk; a derivation's own chunk
// goes uncopied and comes back for its deriver to reuse — text columns as codes, and its text handed back).
import { existsSync, statSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import type { TraceInfo } from '../result/logfile.js';
import type { TableName, TypedColumn } from '../tables/schema.js';
import { chunkMessage, type ChunkMessage } from '../tables/chunk-message.js';
import type { Table } from '../tables/table.js';
import { TextTableWriter, type FormatOptions } from '../output/text.js';
import { CliError, EXIT } from './io.js';

/** What every worker formats with (its clock made from `info`). */
export interface FormatSetup {
  table: TableName;
  format: Omit<FormatOptions, 'clock'>;
  info: TraceInfo | null;
  bufferBytes: number;
}
/** A chunk to format (its text columns as codes: src/tables/chunk-message.ts). */
export interface FormatJob {
  id: number;
  chunk: ChunkMessage;
  /** send the chunk's numeric columns back with the text (they were handed over, not copied) */
  giveBack: boolean;
}
/** A worker's reply: the chunk's text (and, when asked, its numeric columns: null for text), or why it failed. */
export type FormatDone = { id: number; bytes: Uint8Array[]; columns?: (TypedColumn | null)[] } | { id: number; error: string };

/** Formats a table's chunks into `write`, in the order given. */
export interface ChunkFormatter {
  writeHeader(): Promise<void>;
  /**
   * The chunk's rows are read before the promise settles (a borrowed chunk may be reused after). With
   * `giveBack` the chunk is the caller's to give: its columns are handed to a worker uncopied and given back
   * once its text is made (at once in this thread), for the caller to reuse.
   */
  write(t: Table, giveBack?: (columns: TypedColumn[]) => void): Promise<void>;
  /** everything formatted and written; the workers stopped */
  end(): Promise<void>;
  /** stops the workers (after a failure) */
  close(): Promise<void>;
}

const WORKER_URL = new URL('./dump-format-worker.js', import.meta.url);
/** Inputs smaller than this are formatted in this thread: a worker's start costs more than it saves. */
export const FORMAT_WORKERS_MIN_BYTES = 16 << 20;

/** The formatting workers worth starting for the input file at `path` with `threads` (the --threads option) given: 0 = this thread. */
export function formatWorkersFor(path: string, threads: number | undefined): number {
  const cores = threads ?? availableParallelism();
  if (cores < 2 || (statSync(path, { throwIfNoEntry: false })?.size ?? 0) < FORMAT_WORKERS_MIN_BYTES || !existsSync(fileURLToPath(WORKER_URL))) return 0;
  return Math.min(cores - 1, 3);
}

/** The formatter: in this thread (workers = 0) or on `workers` threads. */
export function chunkFormatter(setup: FormatSetup & { clock: FormatOptions['clock'] }, write: (bytes: Uint8Array) => Promise<void>, workers: number): ChunkFormatter {
  const header = new TextTableWriter(setup.table, { ...setup.format, clock: setup.clock }, write, setup.bufferBytes);
  if (workers === 0) {
    return {
      writeHeader: async () => header.writeHeader(),
      write: async (t, giveBack) => {
        await header.write(t);
        giveBack?.(t.columns as TypedColumn[]);
      },
      end: async () => header.end(),
      close: async () => {},
    };
  }
  const { clock: _clock, ...shared } = setup;
  const pool = Array.from({ length: workers }, () => new Worker(WORKER_URL, { workerData: shared satisfies FormatSetup }));
  const inFlight = 2 * workers;
  // replies by id; the chunks are written in id order
  const waiting = new Map<number, { resolve: (bytes: Uint8Array[]) => void; reject: (e: Error) => void; giveBack?: (columns: TypedColumn[]) => void; columns: readonly TypedColumn[] }>();
  const replies: Promise<Uint8Array[]>[] = [];
  let nextId = 0;
  let failure: Error | null = null;
  const fail = (e: Error) => {
    failure ??= e;
    for (const w of waiting.values()) w.reject(failure);
    waiting.clear();
  };
  for (const w of pool) {
    w.on('message', (m: FormatDone) => {
      const p = waiting.get(m.id);
      waiting.delete(m.id);
      if ('error' in m) p?.reject(new CliError(`formatting the rows failed: ${m.error}`, EXIT.internal));
      else {
        // the columns back: the numeric ones from the worker, the text ones the caller's own
        if (p?.giveBack && m.columns) p.giveBack(m.columns.map((c, i) => c ?? p.columns[i]!));
        p?.resolve(m.bytes);
      }
    });
    w.on('error', (e) => fail(new CliError(`a formatting worker failed: ${e.message}`, EXIT.internal)));
  }
  /** writes the oldest chunk's text */
  const writeOldest = async () => {
    for (const b of await replies.shift()!) await write(b);
  };
  return {
    async writeHeader() {
      await header.writeHeader();
      await header.end(); // the header row goes out before the workers' text
    },
    async write(t, giveBack) {
      if (failure) throw failure;
      if (t.length === 0) return;
      const id = nextId++;
      const columns = t.columns as TypedColumn[];
      const reply = new Promise<Uint8Array[]>((resolve, reject) => waiting.set(id, { resolve, reject, giveBack, columns }));
      reply.catch(() => undefined); // awaited in order, later
      replies.push(reply);
      // the columns handed over — a copy of each unless the caller gives them — text as codes
      const m = chunkMessage({ length: t.length, columns, textCodes: t.textCodes }, giveBack !== undefined);
      pool[id % workers]!.postMessage({ id, chunk: m.chunk, giveBack: giveBack !== undefined } satisfies FormatJob, m.transfer);
      while (replies.length > inFlight) await writeOldest();
    },
    async end() {
      try {
        while (replies.length > 0) await writeOldest();
      } finally {
        await this.close();
      }
    },
    async close() {
      await Promise.all(pool.map((w) => w.terminate()));
    },
  };
}
