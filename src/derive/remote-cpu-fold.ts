// The `cpu` command's derivation on two threads: the WebAssembly core split in its two halves
// (CpuUsageOptions.split). This thread, beside the decode, runs the intake — each chunk's events given
// their thread slots and put in time order — and hands what it releases (the event records, in the order
// they are applied) to a worker (remote-cpu-fold-worker.ts), which applies them, makes the rows and folds
// them for the sink (CpuAnalyzer); at the end its fold comes back for the sink (addCoreFold), as the deriver
// in this thread would give it. On 2 cores the decode with the intake and the rows with their fold then run
// side by side, each about half of the work. Node only (worker_threads).
// Memory: at most MAX_IN_FLIGHT buffers of a chunk's records each, and the two halves' state.
import { existsSync, statSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import type { Table } from '../tables/table.js';
import { CpuUsageDeriver, type CoreFold, type CoreFoldRequest, type CoreFoldSink, type CpuUsageStats, type ReleasedEvents } from './cpu-usage.js';

/** The worker's setup. */
export interface RemoteFoldSetup {
  request: CoreFoldRequest;
  holdRows?: number;
}

/** To the worker: released events in one buffer (releasedIn(buffer, …)), or the end. */
export type RemoteFoldMessage = { kind: 'chunk'; buffer: ArrayBuffer; bytes: number; count: number; groups: number; idle: number; slots: number } | { kind: 'finish' };

/** From the worker: a chunk's buffer back, the fold and statistics at the end, or a failure. */
export type RemoteFoldReply =
  | { kind: 'added'; buffer: ArrayBuffer }
  | { kind: 'finished'; fold: CoreFold; stats: CpuUsageStats }
  | { kind: 'error'; message: string };

const WORKER_URL = new URL('./remote-cpu-fold-worker.js', import.meta.url);
/** Chunks sent and not yet given back before add() waits. */
const MAX_IN_FLIGHT = 16;
/** Inputs smaller than this derive in this thread: a worker's start costs more than it saves. */
export const REMOTE_FOLD_MIN_BYTES = 16 << 20;

/** The released events sent in `buffer`: the records' `bytes`, then `groups` group ends and `idle` idle slot pairs (i32). */
export function releasedIn(buffer: ArrayBuffer, bytes: number, count: number, groups: number, idle: number, slots: number): ReleasedEvents {
  return { records: new Uint8Array(buffer, 0, bytes), count, groupEnds: new Int32Array(buffer, bytes, groups), idleSlots: new Int32Array(buffer, bytes + 4 * groups, 2 * idle), slots };
}

/** Whether the derivation of the trace at `path` goes to a worker with `threads` (the --threads option) given: a core to spare, a large input, the compiled worker script. */
export function remoteFoldPays(path: string, threads: number | undefined): boolean {
  const cores = threads ?? availableParallelism();
  return cores >= 2 && (statSync(path, { throwIfNoEntry: false })?.size ?? 0) >= REMOTE_FOLD_MIN_BYTES && existsSync(fileURLToPath(WORKER_URL));
}

/** The WebAssembly core in two halves, the intake here and the rest on a worker, folding for `sink`: add() each chunk, then finish(). */
export class RemoteCpuFold {
  private readonly worker: Worker;
  private readonly intake: CpuUsageDeriver;
  private inFlight = 0;
  private readonly waiting: { resolve: () => void; reject: (e: Error) => void }[] = [];
  private readonly idle: ArrayBuffer[] = [];
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
    this.intake = new CpuUsageDeriver(
      () => {
        throw new Error('the intake half made rows');
      },
      { engine: 'wasm', split: 'intake', windowEvents: options.windowEvents },
    );
    this.worker = new Worker(WORKER_URL, { workerData: { request, holdRows: options.holdRows } satisfies RemoteFoldSetup });
    this.worker.on('message', (m: RemoteFoldReply) => {
      if (m.kind === 'added') {
        this.inFlight--;
        this.idle.push(m.buffer);
        this.waiting.shift()?.resolve();
      } else if (m.kind === 'finished') this.end?.resolve(m);
      else this.fail(new Error(`the cpuUsage derivation failed: ${m.message}`));
    });
    this.worker.on('error', (e) => this.fail(new Error(`the cpuUsage derivation's worker failed: ${e.message}`)));
    // a worker gone before its fold came back (stopped, out of memory): no wait is left hanging
    this.worker.on('exit', (code) => this.fail(new Error(`the cpuUsage derivation's worker stopped before the end (exit code ${code})`)));
  }

  /**
   * Takes a chunk's rows (a borrowed chunk is fine: the intake copies what it reads) and sends what they
   * release; the promise, when there is one, settles once fewer than MAX_IN_FLIGHT chunks are in flight.
   */
  add(cswitch: Table<'cswitch'>, readythread: Table<'readythread'>, threadEvents: Table<'threadEvents'>): Promise<void> | undefined {
    if (this.failure) throw this.failure;
    if (cswitch.length + readythread.length + threadEvents.length === 0) return undefined;
    this.intake.add(cswitch, readythread, threadEvents);
    this.send(this.intake.released());
    if (this.inFlight < MAX_IN_FLIGHT) return undefined;
    return new Promise((resolve, reject) => this.waiting.push({ resolve, reject }));
  }

  /** End of the trace: the intake releases the rest, the worker's half finishes, its fold goes to the sink; the worker stops. */
  async finish(): Promise<CpuUsageStats> {
    try {
      if (this.failure) throw this.failure;
      const intake = this.intake.finish();
      this.send(this.intake.released());
      const done = new Promise<{ fold: CoreFold; stats: CpuUsageStats }>((resolve, reject) => (this.end = { resolve, reject }));
      this.worker.postMessage({ kind: 'finish' } satisfies RemoteFoldMessage);
      const { fold, stats } = await done;
      this.finished = true;
      this.sink.addCoreFold(fold);
      // the reorder's figures are the intake's
      return { ...stats, lateEvents: intake.lateEvents, maxHeld: intake.maxHeld };
    } finally {
      await this.close();
    }
  }

  /** Stops the worker (after a failure, or when the decode failed). */
  async close(): Promise<void> {
    await this.worker.terminate();
  }

  /** The released events copied into a buffer (an idle one given back, or new) handed to the worker. */
  private send(e: ReleasedEvents): void {
    if (e.count === 0 && e.idleSlots.length === 0) return;
    const bytes = e.records.length;
    const need = bytes + 4 * (e.groupEnds.length + e.idleSlots.length);
    const k = this.idle.findIndex((b) => b.byteLength >= need);
    const buffer = k >= 0 ? this.idle.splice(k, 1)[0]! : new ArrayBuffer(Math.max(need, 1 << 20));
    const to = releasedIn(buffer, bytes, e.count, e.groupEnds.length, e.idleSlots.length / 2, e.slots);
    to.records.set(e.records);
    to.groupEnds.set(e.groupEnds);
    to.idleSlots.set(e.idleSlots);
    this.inFlight++;
    this.worker.postMessage({ kind: 'chunk', buffer, bytes, count: e.count, groups: e.groupEnds.length, idle: e.idleSlots.length / 2, slots: e.slots } satisfies RemoteFoldMessage, [buffer]);
  }

  private fail(e: Error): void {
    if (this.finished) return;
    this.failure ??= e;
    for (const w of this.waiting.splice(0)) w.reject(this.failure);
    this.end?.reject(this.failure);
  }
}
