// When a decode runs in parallel, and how (the glue between the entry points and coordinator.ts).
import type { DriverResult } from '../decode/decode-steps.js';
import type { DecodeOptions } from '../options.js';
import type { AsyncSource, ProgressHandler } from '../decode/runners.js';
import { DECODED_TABLE_NAMES, type Chunks, type DecodedTableName } from '../tables/schema.js';
import { parallelHost, spawnWorkers } from './host.js';

/** Inputs smaller than this decode in one thread: starting workers costs more than it saves. */
export const PARALLEL_MIN_BYTES = 32 << 20;
/** Each thread gets at least this much input: no more threads than that leaves work for (a worker costs ~60 MB). */
export const THREAD_MIN_BYTES = 16 << 20;
/** Rows a decoder may send ahead of a streaming consumer (its memory bound besides its engine). */
export const AHEAD_BYTES = 64 << 20;
/**
 * With `threads` not given, workers are used only where they were not measured to lose (README "All cores"):
 * a file the workers read themselves, of at least AUTO_MIN_BYTES without a rows consumer (summary, cpu: at
 * 1 GiB on 2 cores 0.94-1.22x over the runs of 2026-11-23, about even, with more cores to gain; at 516 MiB one
 * thread is faster, 0.82 s against 0.93 s for the CLI summary) and AUTO_MIN_BYTES_ROWS with one (every row
 * copied out of a worker: no faster than one thread at 1 GiB, 1.5x slower at 516 MiB). Inputs in memory and
 * Blobs are read for the workers by this thread: slower than one thread at every size measured (516 MiB in
 * memory: 0.54 s against 0.42 s; a 1 GiB Blob: 5.9 s against 4.9 s), so only an explicit `threads` splits them.
 */
export const AUTO_MIN_BYTES = 768 << 20;
export const AUTO_MIN_BYTES_ROWS = 2 * 2 ** 30;

/** What decides whether an automatic decode (no `threads`) uses workers. */
export interface AutoInput {
  /** workers read the input themselves (a file: Node's FileSource), not through this thread */
  workersRead: boolean;
  /** the caller consumes rows (every row of the big tables travels from the workers) */
  rows: boolean;
}

/** The threads a decode of `size` bytes uses (1: the one-thread path, decode-steps.ts). */
export function threadsFor(options: DecodeOptions, size: number, input: AutoInput): number {
  if ((options.engine ?? 'wasm') !== 'wasm') return 1;
  const tuning = options.parallel ?? {};
  const host = tuning.inThread ? null : parallelHost();
  if (!host && !tuning.inThread) return 1;
  const auto = options.threads === undefined && tuning.minBytes === undefined;
  const threads = options.threads ?? host?.defaultThreads() ?? 1;
  const minBytes = auto ? autoMinBytes(input) : (tuning.minBytes ?? PARALLEL_MIN_BYTES);
  if (threads <= 1 || size < minBytes) return 1;
  // not more threads than there is input for (unless a test asks for small inputs in parallel)
  return minBytes === 0 ? threads : Math.max(1, Math.min(threads, Math.floor(size / THREAD_MIN_BYTES)));
}

/** The smallest input an automatic decode splits (Infinity: never). */
export function autoMinBytes(input: AutoInput): number {
  if (!input.workersRead) return Infinity;
  return input.rows ? AUTO_MIN_BYTES_ROWS : AUTO_MIN_BYTES;
}

/** Tables a consumer of `ship` gets: all of them, or only those the lifetimes need (no consumer). */
export const LIFETIME_TABLES: readonly DecodedTableName[] = ['threadEvents', 'processEvents', 'imageEvents'];

/** The parallel decode of `source` with `threads` decoders; rows of `ship` to `onChunks` (owned copies). */
export async function decodeInParallel(
  source: AsyncSource,
  options: DecodeOptions,
  threads: number,
  ship: readonly DecodedTableName[] | 'all',
  onChunks: (chunks: Chunks) => void | Promise<void>,
  onProgress?: ProgressHandler,
): Promise<DriverResult> {
  const tuning = options.parallel ?? {};
  const host = tuning.inThread ? null : parallelHost();
  // the workers start first: their scripts load while this thread loads the coordinator and the
  // WebAssembly module, then frames (on the 1 GiB bench trace a worker was ready 45-66 ms into the decode
  // instead of ~97 ms; on 2 cores the total did not change, this thread's framing then sharing the cores)
  const spawned = host ? spawnWorkers(host, host.mainThreadDecodes ? threads - 1 : threads) : [];
  try {
    // loaded on first use: a one-thread decode (and the CLI's start) does without its two dozen modules
    const { decodeParallel } = await import('./coordinator.js');
    return await decodeParallel({
      source,
      threads,
      host,
      spawned,
      bias: options.bias,
      windowBytes: options.windowBytes,
      ship: ship === 'all' ? DECODED_TABLE_NAMES : ship,
      budget: tuning.aheadBytes ?? AHEAD_BYTES,
      partitions: tuning.partitions,
      cuts: tuning.cuts,
      onChunks,
      onProgress,
      log: tuning.log,
    });
  } finally {
    // the coordinator ends the workers it took; these are the ones it never took (it failed before)
    for (const port of spawned) if (!(port instanceof Error)) port.terminate();
  }
}
