// Runners: carry out the steps of a decode (steps.ts) over an input — synchronously over bytes in
// memory, asynchronously over files and Blobs (reads awaited, one read-ahead in flight at most, the
// rows consumer awaited for backpressure).
import type { Chunks } from '../tables/schema.js';
import type { Step, Steps } from './steps.js';

/** Random-access input read synchronously (bytes in memory). */
export interface SyncSource {
  readonly size: number;
  /** up to `length` bytes at `position` (fewer at the end of the input) */
  read(position: number, length: number): Uint8Array;
  /** copies up to target.length bytes at `position` into target; returns how many */
  readInto(position: number, target: Uint8Array): number;
  /** optional: the input window that reads best from it (the caller's windowBytes wins) */
  readonly windowBytes?: number;
}

/** Random-access input read asynchronously (files, Blobs). */
export interface AsyncSource {
  readonly size: number;
  read(position: number, length: number): Promise<Uint8Array>;
  readInto(position: number, target: Uint8Array): Promise<number>;
  /** optional: many small reads at once (buffer headers); default: `read` for each position */
  readMany?(positions: readonly number[], length: number): Promise<Uint8Array[]>;
  /** optional: how many positions readMany should get at once (default 64) */
  readonly headerBatch?: number;
  /**
   * optional: its reads make progress only while this thread lets other tasks run (a Blob's data reaches
   * this thread in tasks: a chunk per task in Node, a data pipe drained by tasks in Chromium): the decode
   * then gives other tasks a turn every TURN_MS while a read ahead is in flight ('turn' steps), or the read
   * ahead would wait for the decode of a whole window
   */
  readonly turns?: boolean;
  /** optional: the input window that reads best from it (default WINDOW_BYTES, 2 MiB; the caller's windowBytes wins) */
  readonly windowBytes?: number;
  /**
   * optional: the path of the file it reads, which decoding workers may open themselves (set by Node's file
   * source, files.ts; a host whose workers cannot open files ignores it: ParallelHost.filePathOf)
   */
  readonly path?: string;
}

/** ms of decoding between two turns given to other tasks while a read ahead of a `turns` source is in flight */
export const TURN_MS = 1;

/**
 * Lets other tasks (I/O callbacks) run, then resolves: setImmediate in Node; a MessageChannel message in
 * browsers (setTimeout(0) is clamped to 4 ms once nested); setTimeout elsewhere.
 */
export function macrotask(): Promise<void> {
  if (typeof setImmediate === 'function') return new Promise((resolve) => setImmediate(resolve));
  if (typeof MessageChannel === 'function') {
    if (!turnChannel) {
      const channel = new MessageChannel();
      channel.port1.onmessage = () => turnWaiting.shift()?.();
      turnChannel = channel;
    }
    const channel = turnChannel;
    return new Promise((resolve) => {
      turnWaiting.push(resolve);
      channel.port2.postMessage(0);
    });
  }
  return new Promise((resolve) => setTimeout(resolve, 0));
}
let turnChannel: MessageChannel | null = null;
const turnWaiting: (() => void)[] = [];

/**
 * The input window of bytes in memory: each window is copied into the engine and walked right after, so a
 * window that stays in the core's cache is walked from there (32 MiB decodes measured 10–25 % faster with
 * 256–512 KiB windows than with 8 MiB ones, alternating runs of the bench fixtures).
 */
export const BYTES_WINDOW = 512 << 10;

export function bytesSource(bytes: Uint8Array): SyncSource {
  return {
    size: bytes.length,
    windowBytes: BYTES_WINDOW,
    read: (position, length) => bytes.subarray(position, Math.min(bytes.length, position + length)),
    readInto: (position, target) => {
      const src = bytes.subarray(position, Math.min(bytes.length, position + target.length));
      target.set(src);
      return src.length;
    },
  };
}

export type RowsHandler = (chunks: Chunks) => void | Promise<void>;
export type ProgressHandler = (phase: string, done: number, total: number) => void;

/** Rows and progress steps: hands them on; returns what the consumer returned (maybe a promise). */
function deliver(step: Step, onRows: RowsHandler, onProgress?: ProgressHandler): void | Promise<void> {
  if (step.kind === 'rows') return onRows(step.chunks);
  if (step.kind === 'progress') onProgress?.(step.phase, step.done, step.total);
}

/** Runs the steps synchronously. */
export function runSync<R>(source: SyncSource, steps: Steps<R>, onRows: (chunks: Chunks) => void, onProgress?: ProgressHandler): R {
  for (;;) {
    const it = steps.next();
    if (it.done) return it.value;
    const step = it.value;
    if (step.kind === 'read') step.result = source.read(step.position, step.length);
    else if (step.kind === 'readMany') step.result = step.positions.map((p) => source.read(p, step.length));
    else if (step.kind === 'load') step.result = source.readInto(step.position, step.target);
    else if (step.kind === 'prefetch') step.result = false;
    else if (step.kind !== 'turn') deliver(step, onRows, onProgress);
  }
}

type Outcome = { n: number } | { error: unknown };

/** Runs the steps asynchronously (awaiting reads and the rows consumer, for backpressure). */
export async function runAsync<R>(source: AsyncSource, steps: Steps<R>, onRows: RowsHandler, onProgress?: ProgressHandler): Promise<R> {
  // one read ahead in flight at most (a 'prefetch' step); its outcome is kept so it never goes unhandled
  let ahead: { position: number; target: Uint8Array; result: Promise<Outcome>; pending: boolean } | null = null;
  const settle = async (): Promise<Outcome | null> => {
    const a = ahead;
    ahead = null;
    return a ? a.result : null;
  };
  const turns = source.turns === true;
  let lastTurn = turns ? performance.now() : 0;
  try {
    for (;;) {
      const it = steps.next();
      if (it.done) return it.value;
      const step = it.value;
      if (step.kind === 'turn') {
        if (turns && ahead?.pending && performance.now() - lastTurn >= TURN_MS) {
          await macrotask();
          lastTurn = performance.now();
        }
      } else if (step.kind === 'read') {
        step.result = await source.read(step.position, Math.min(step.length, source.size - step.position));
      } else if (step.kind === 'readMany') {
        step.result = source.readMany
          ? await source.readMany(step.positions, step.length)
          : await Promise.all(step.positions.map((p) => source.read(p, Math.min(step.length, source.size - p))));
      } else if (step.kind === 'prefetch') {
        await settle();
        let result: Promise<Outcome>;
        try {
          result = source.readInto(step.position, step.target).then(
            (n) => ({ n }),
            (error: unknown) => ({ error }),
          );
        } catch (error) {
          result = Promise.resolve({ error });
        }
        const a = { position: step.position, target: step.target, result, pending: true };
        void result.then(() => (a.pending = false));
        ahead = a;
        step.result = true;
      } else if (step.kind === 'load') {
        const a = ahead;
        const same =
          a !== null &&
          a.position === step.position &&
          a.target.buffer === step.target.buffer &&
          a.target.byteOffset === step.target.byteOffset &&
          a.target.length === step.target.length;
        const r = await settle(); // never two reads into the engine's memory at once
        if (same && r && 'n' in r) step.result = r.n;
        else if (same && r && 'error' in r) throw r.error;
        else step.result = await source.readInto(step.position, step.target);
      } else await deliver(step, onRows, onProgress);
    }
  } finally {
    await settle(); // no read may still write into the engine once we return
  }
}
