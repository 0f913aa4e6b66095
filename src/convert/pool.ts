// Converts many files at once: a pool of worker threads (one compiled WebAssembly module, handed to
// every worker), each converting one file at a time. A file that fails is reported and the others go
// on. With one thread, one file, or when the worker script is not compiled JavaScript (tests run the
// TypeScript sources), files are converted one after the other in this thread.
import { existsSync } from 'node:fs';
import { stat } from 'node:fs/promises';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import { EtlError } from '../errors.js';
import { loadWasmModule } from '../engine/wasm/instance.js';
import { convertFile, type ConvertOptions, type ConvertResult } from './convert-file.js';
import { contentOf, quickKey, traceId } from './dataset.js';
import { notRegularInput } from './inputs.js';
export { removeOwnRunFiles } from './runs.js';

export type FileOutcome = { path: string; ok: true; result: ConvertResult } | { path: string; ok: false; error: string; code?: string };

export interface PoolOptions extends Omit<ConvertOptions, 'onProgress'> {
  /** files converted at once (default 1); one file alone is decoded on this many threads (default: decode's automatic choice) */
  threads?: number;
  /** bytes done over all files, and files finished */
  onProgress?: (state: { bytesDone: number; bytesTotal: number; filesDone: number; filesTotal: number; failed: number }) => void;
  /** each file when it is finished (converted, skipped or failed), in completion order */
  onFile?: (outcome: FileOutcome) => void;
}

/** Messages between the pool and its workers (worker.ts). */
export type ToWorker = { type: 'file'; index: number; path: string };
export type FromWorker =
  | { type: 'progress'; index: number; done: number; total: number }
  | { type: 'done'; index: number; result: ConvertResult }
  | { type: 'failed'; index: number; error: string; code?: string };

const WORKER_URL = new URL('./worker.js', import.meta.url);

function describe(e: unknown): { error: string; code?: string } {
  if (e instanceof EtlError) return { error: e.message, code: e.code };
  const err = e as NodeJS.ErrnoException;
  return { error: err?.message ?? String(e), code: err?.code };
}

/** Converts `files`; resolves with one outcome per file, in the order given. */
export async function convertFiles(files: readonly string[], options: PoolOptions): Promise<FileOutcome[]> {
  const stats = await Promise.all(files.map((f) => stat(f).catch(() => null)));
  const sizes = stats.map((s) => (s?.isFile() ? s.size : 0));
  const bytesTotal = sizes.reduce((a, b) => a + b, 0);
  const done = new Array<number>(files.length).fill(0);
  const outcomes = new Array<FileOutcome>(files.length);
  let filesDone = 0;
  let failed = 0;
  const report = () =>
    options.onProgress?.({ bytesDone: done.reduce((a, b) => a + b, 0), bytesTotal, filesDone, filesTotal: files.length, failed });
  const finish = (index: number, outcome: FileOutcome) => {
    outcomes[index] = outcome;
    done[index] = sizes[index]!;
    filesDone++;
    if (!outcome.ok) failed++;
    options.onFile?.(outcome);
    report();
  };
  // a FIFO or device: refused from its stat before any conversion starts, never opened (a FIFO's open waits for a writer)
  const refused = files.map((f, i) => notRegularInput(f, stats[i]!));
  for (let i = 0; i < files.length; i++) if (refused[i]) finish(i, { path: files[i]!, ok: false, ...describe(refused[i]) });
  // the same trace twice in one run (a copy, a link): converted once, the other copies skipped. Only
  // files that share a quick key (size, first and last MiB) can be; their SHA-256 decides.
  const keys = await Promise.all(files.map((f, i) => (refused[i] ? null : quickKey(f).catch(() => null))));
  const ids = new Array<string | null>(files.length).fill(null);
  const byKey = new Map<string, number[]>();
  keys.forEach((k, i) => k !== null && (byKey.get(k) ?? byKey.set(k, []).get(k)!).push(i));
  for (const group of byKey.values()) {
    if (group.length < 2) continue;
    await Promise.all(group.map(async (i) => (ids[i] = await contentOf(files[i]!).then((c) => traceId(resolve(files[i]!), c), () => null))));
  }
  const first = new Map<string, number>();
  const todo: number[] = [];
  for (let i = 0; i < files.length; i++) {
    if (refused[i]) continue;
    const id = ids[i];
    const seen = id === null || id === undefined ? undefined : first.get(id);
    if (seen === undefined) {
      if (id) first.set(id, i);
      todo.push(i);
    } else {
      finish(i, { path: files[i]!, ok: true, result: { id: id!, source: files[i]!, status: 'skipped', rows: {}, files: 0, bytes: 0, dataLoss: null, sameAs: files[seen]! } });
    }
  }
  const { threads: _t, onProgress: _p, onFile: _f, ...convertOptions } = options;
  const threads = Math.max(1, Math.min(options.threads ?? 1, todo.length));
  // `threads` is the whole budget: one file decodes on all of them (unset: on as many as pay, decode's
  // automatic choice), several files take one each
  convertOptions.decodeThreads = todo.length === 1 ? options.threads : 1;
  const workerScript = fileURLToPath(WORKER_URL);
  if (threads === 1 || !existsSync(workerScript)) {
    for (const i of todo) {
      try {
        const result = await convertFile(files[i]!, {
          ...convertOptions,
          onProgress: (d) => {
            done[i] = d;
            report();
          },
        });
        finish(i, { path: files[i]!, ok: true, result });
      } catch (e) {
        finish(i, { path: files[i]!, ok: false, ...describe(e) });
      }
    }
    return outcomes;
  }
  const wasmModule = await loadWasmModule();
  let next = 0;
  await Promise.all(
    Array.from({ length: threads }, () =>
      new Promise<void>((resolveWorker, rejectWorker) => {
        const worker = new Worker(WORKER_URL, { workerData: { wasmModule, options: convertOptions } });
        let current = -1;
        const feed = () => {
          if (next >= todo.length) {
            current = -1;
            void worker.terminate();
            return;
          }
          current = todo[next++]!;
          worker.postMessage({ type: 'file', index: current, path: files[current]! } satisfies ToWorker);
        };
        worker.on('message', (m: FromWorker) => {
          if (m.type === 'progress') {
            done[m.index] = m.done;
            report();
          } else if (m.type === 'done') {
            finish(m.index, { path: files[m.index]!, ok: true, result: m.result });
            feed();
          } else {
            finish(m.index, { path: files[m.index]!, ok: false, error: m.error, code: m.code });
            feed();
          }
        });
        worker.on('error', (e) => {
          // a worker that died takes only its file with it; the others go on in the remaining workers
          if (current >= 0) finish(current, { path: files[current]!, ok: false, error: `worker failed: ${e.message}` });
          current = -1;
          rejectWorker(e);
        });
        worker.on('exit', () => resolveWorker());
        feed();
      }).catch(() => undefined),
    ),
  );
  // files a dead worker never got to
  for (let i = 0; i < files.length; i++) {
    if (!outcomes[i]) {
      try {
        finish(i, { path: files[i]!, ok: true, result: await convertFile(files[i]!, convertOptions) });
      } catch (e) {
        finish(i, { path: files[i]!, ok: false, ...describe(e) });
      }
    }
  }
  return outcomes;
}
