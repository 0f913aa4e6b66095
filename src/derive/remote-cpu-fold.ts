// The `cpu` command's derivation on a worker thread (remote-cpu-fold-worker.ts) while this thread decodes:
// for a CoreFoldSink (CpuAnalyzer) whose rows the WebAssembly core folds (cpu-usage.ts), each chunk's input
// columns — what the derivation reads of it (INPUT_COLUMNS) — are copied into a buffer handed to the
// worker, which runs the CpuUsageDeriver on them and gives the buffer back for the next chunks; at the end its
// fold comes back for the sink (addCoreFold), as the deriver in this thread would give it. On 2 cores the
// derivation (most of `cpu`'s time) and the decode then run side by side. Node only (worker_threads).
// Memory: at most MAX_IN_FLIGHT column sets of a chunk each, and the worker's derivation.
import { existsSync, statSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import { INPUT_COLUMNS } from '../engine/wasm/derive.js';
import { bytesOf, TABLE_COLUMNS, viewColumn, type NumericColumn, type NumericColumnType } from '../tables/schema.js';
import type { Table } from '../tables/table.js';
import type { CoreFold, CoreFoldRequest, CoreFoldSink, CpuUsageStats } from './cpu-usage.js';

/** The worker's setup. */
export interface RemoteFoldSetup {
  request: CoreFoldRequest;
  windowEvents?: number;
  holdRows?: number;
}

/** To the worker: a chunk's input columns in one buffer (inputColumns(buffer, cells)), or the end. */
export type RemoteFoldMessage = { kind: 'chunk'; nT: number; nR: number; nS: number; buffer: ArrayBuffer; cells: number } | { kind: 'finish' };

/** From the worker: a chunk's buffer back, the fold and statistics at the end, or a failure. */
export type RemoteFoldReply =
  | { kind: 'added'; buffer: ArrayBuffer; cells: number }
  | { kind: 'finished'; fold: CoreFold; stats: CpuUsageStats }
  | { kind: 'error'; message: string };

const WORKER_URL = new URL('./remote-cpu-fold-worker.js', import.meta.url);
/** Chunks sent and not yet given back before add() waits. */
const MAX_IN_FLIGHT = 4;
/** Inputs smaller than this derive in this thread: a worker's start costs more than it saves. */
export const REMOTE_FOLD_MIN_BYTES = 16 << 20;

/** The types of the input columns. */
const TYPES = INPUT_COLUMNS.map(([t, c]) => TABLE_COLUMNS[t].find((x) => x.name === c)!.type as NumericColumnType);

/** Where each input column of a set of `cells` cells starts in its one buffer (8-byte aligned), then the buffer's bytes. */
function setLayout(cells: number): number[] {
  const at = [0];
  for (const type of TYPES) at.push(at[at.length - 1]! + Math.ceil((cells * bytesOf(type)) / 8) * 8);
  return at;
}

/** The input columns of a set (`cells` cells each) in `buffer`, in INPUT_COLUMNS order. */
export function inputColumns(buffer: ArrayBuffer, cells: number): NumericColumn[] {
  const at = setLayout(cells);
  return TYPES.map((type, i) => viewColumn(type, buffer, at[i]!, cells) as NumericColumn);
}

/** Whether the derivation of the trace at `path` goes to a worker with `threads` (the --threads option) given: a core to spare, a large input, the compiled worker script. */
export function remoteFoldPays(path: string, threads: number | undefined): boolean {
  const cores = threads ?? availableParallelism();
  return cores >= 2 && (statSync(path, { throwIfNoEntry: false })?.size ?? 0) >= REMOTE_FOLD_MIN_BYTES && existsSync(fileURLToPath(WORKER_URL));
}

/** A CpuUsageDeriver (WebAssembly core) on a worker, folding for `sink`: add() each chunk, then finish(). */
export class RemoteCpuFold {
  private readonly worker: Worker;
  private inFlight = 0;
  private readonly waiting: { resolve: () => void; reject: (e: Error) => void }[] = [];
  private readonly idle: { buffer: ArrayBuffer; cells: number }[] = [];
  private end: { resolve: (r: { fold: CoreFold; stats: CpuUsageStats }) => void; reject: (e: Error) => void } | null = null;
  private failure: Error | null = null;
  /** the fold came back: the worker's exit is expected */
  private finished = false;

  /** `request`: what the sink asked of the fold (its coreFold()). */
  constructor(
    private readonly sink: CoreFoldSink,
    request: CoreFoldRequest,
    options: { windowEvents?: number; holdRows?: number } = {},
  ) {
    this.worker = new Worker(WORKER_URL, { workerData: { request, ...options } satisfies RemoteFoldSetup });
    this.worker.on('message', (m: RemoteFoldReply) => {
      if (m.kind === 'added') {
        this.inFlight--;
        this.idle.push(m);
        this.waiting.shift()?.resolve();
      } else if (m.kind === 'finished') this.end?.resolve(m);
      else this.fail(new Error(`the cpuUsage derivation failed: ${m.message}`));
    });
    this.worker.on('error', (e) => this.fail(new Error(`the cpuUsage derivation's worker failed: ${e.message}`)));
    // a worker gone before its fold came back (stopped, out of memory): no wait is left hanging
    this.worker.on('exit', (code) => this.fail(new Error(`the cpuUsage derivation's worker stopped before the end (exit code ${code})`)));
  }

  /**
   * Sends a chunk's rows (copied now: a borrowed chunk is fine); the promise, when there is one, settles once
   * fewer than MAX_IN_FLIGHT chunks are in flight.
   */
  add(cswitch: Table<'cswitch'>, readythread: Table<'readythread'>, threadEvents: Table<'threadEvents'>): Promise<void> | undefined {
    if (this.failure) throw this.failure;
    const tables = { cswitch, readythread, threadEvents };
    const nT = threadEvents.length;
    const nR = readythread.length;
    const nS = cswitch.length;
    if (nT + nR + nS === 0) return undefined;
    const { buffer, cells } = this.columnSet(Math.max(nT, nR, nS));
    const columns = inputColumns(buffer, cells);
    for (let i = 0; i < INPUT_COLUMNS.length; i++) {
      const [t, c] = INPUT_COLUMNS[i]!;
      const n = t === 'cswitch' ? nS : t === 'readythread' ? nR : nT;
      if (n > 0) columns[i]!.set(((tables[t] as Table).column(c as never) as NumericColumn).subarray(0, n) as never);
    }
    this.inFlight++;
    this.worker.postMessage({ kind: 'chunk', nT, nR, nS, buffer, cells } satisfies RemoteFoldMessage, [buffer]);
    if (this.inFlight < MAX_IN_FLIGHT) return undefined;
    return new Promise((resolve, reject) => this.waiting.push({ resolve, reject }));
  }

  /** End of the trace: the worker's deriver finishes, its fold goes to the sink; the worker stops. */
  async finish(): Promise<CpuUsageStats> {
    try {
      if (this.failure) throw this.failure;
      const done = new Promise<{ fold: CoreFold; stats: CpuUsageStats }>((resolve, reject) => (this.end = { resolve, reject }));
      this.worker.postMessage({ kind: 'finish' } satisfies RemoteFoldMessage);
      const { fold, stats } = await done;
      this.finished = true;
      this.sink.addCoreFold(fold);
      return stats;
    } finally {
      await this.close();
    }
  }

  /** Stops the worker (after a failure, or when the decode failed). */
  async close(): Promise<void> {
    await this.worker.terminate();
  }

  /** A buffer of input columns of at least `rows` cells: an idle one given back, or new. */
  private columnSet(rows: number): { buffer: ArrayBuffer; cells: number } {
    const k = this.idle.findIndex((s) => s.cells >= rows);
    if (k >= 0) return this.idle.splice(k, 1)[0]!;
    const cells = Math.max(rows, 1 << 14);
    return { buffer: new ArrayBuffer(setLayout(cells)[TYPES.length]!), cells };
  }

  private fail(e: Error): void {
    if (this.finished) return;
    this.failure ??= e;
    for (const w of this.waiting.splice(0)) w.reject(this.failure);
    this.end?.reject(this.failure);
  }
}
