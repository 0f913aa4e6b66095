// The scale case: a mixed trace of at least 1 GiB is streamed to a file in os.tmpdir() by
// generateTraceChunks (bounded memory), then decoded through the streaming file API (streamFile) in a
// child process per job, so each job's peak RSS is its own. The same file is also read with plain
// fs reads (8 MiB at a time, like the decoder's window) to tell whether reading or decoding limits the
// whole-file decode. The file is deleted afterwards.
import { spawn, spawnSync } from 'node:child_process';
import { closeSync, openSync, statSync, unlinkSync, writeSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { generateTraceChunks } from '../src/writer/index.js';
import type { EngineName } from './cases.js';
import type { WorkerReport } from './scale-worker.js';
import { dropFromCache } from './page-cache.js';

export const GIB = 2 ** 30;

export interface ScaleOptions {
  /** minimum file size (default 1 GiB) */
  minBytes: number;
  engines: readonly EngineName[];
  log: (line: string) => void;
}

/** wasm, reference: streamFile, file in the page cache; wasm blob: decodeStream of fs.openAsBlob(file)
 *  (the path of a File in browsers); read-only: plain reads of the cached file;
 *  `… cold`: the same after the file's pages were dropped from the page cache (read from the disk) */
export type ScaleEngine = EngineName | 'read-only' | 'wasm cold' | 'read-only cold' | 'wasm blob';

export interface ScaleJob {
  engine: ScaleEngine;
  bytes: number;
  seconds: number;
  mbPerS: number;
  peakRssBytes: number;
  rssStartBytes: number;
  events?: number;
  rows?: number;
  buffers?: number;
}

export interface ScaleResult {
  file: { bytes: number; generateSeconds: number; writeMBPerS: number };
  jobs: ScaleJob[];
}

const here = fileURLToPath(new URL('.', import.meta.url));
const SEED = 0x5eed;

/** Writes the trace in 8 MiB batches; returns its size. */
export function writeTraceFile(path: string, targetBytes: number): number {
  const fd = openSync(path, 'w');
  const batch = new Uint8Array(8 << 20);
  let used = 0;
  let total = 0;
  try {
    for (const chunk of generateTraceChunks({ seed: SEED, targetBytes, cpus: 4 })) {
      if (used + chunk.length > batch.length) {
        writeSync(fd, batch, 0, used);
        used = 0;
      }
      if (chunk.length > batch.length) writeSync(fd, chunk);
      else {
        batch.set(chunk, used);
        used += chunk.length;
      }
      total += chunk.length;
    }
    if (used) writeSync(fd, batch, 0, used);
  } finally {
    closeSync(fd);
  }
  return total;
}

function runWorker(args: string[]): Promise<WorkerReport> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [join(here, 'scale-worker.js'), ...args], { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.setEncoding('utf8');
    child.stdout.on('data', (d: string) => (out += d));
    child.on('error', reject);
    child.on('close', (code) => {
      if (code !== 0) return reject(new Error(`scale worker ${args.join(' ')} exited with code ${code}`));
      try {
        resolve(JSON.parse(out.trim().split('\n').pop()!) as WorkerReport);
      } catch (e) {
        reject(new Error(`scale worker ${args.join(' ')}: bad report ${JSON.stringify(out)}: ${(e as Error).message}`));
      }
    });
  });
}

function job(r: WorkerReport, engine: ScaleJob['engine']): ScaleJob {
  return {
    engine,
    bytes: r.bytes,
    seconds: r.seconds,
    mbPerS: r.bytes / 1e6 / r.seconds,
    peakRssBytes: Math.max(r.maxRssBytes, r.rssSampledPeakBytes),
    rssStartBytes: r.rssStartBytes,
    events: r.events,
    rows: r.rows,
    buffers: r.buffers,
  };
}

export async function runScale(o: ScaleOptions): Promise<ScaleResult> {
  const path = join(os.tmpdir(), `etw-decode-bench-${process.pid}.etl`);
  const mib = (n: number) => `${(n / 2 ** 20).toFixed(0)} MiB`;
  const removeFile = () => {
    try {
      unlinkSync(path);
    } catch {
      /* not there (yet) */
    }
  };
  // Ctrl-C while the big file exists: remove it before leaving
  const onSignal = (signal: NodeJS.Signals) => {
    removeFile();
    process.kill(process.pid, signal);
  };
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  try {
    o.log(`scale: writing a mixed trace of at least ${mib(o.minBytes)} to ${path} …`);
    const t0 = performance.now();
    // the writer hits targetBytes only approximately: aim 2 % + 1 buffer over the minimum
    const bytes = writeTraceFile(path, Math.ceil(o.minBytes * 1.02) + 0x10000);
    const generateSeconds = (performance.now() - t0) / 1000;
    if (statSync(path).size !== bytes) throw new Error('scale: file size differs from the bytes written');
    if (bytes < o.minBytes) throw new Error(`scale: generated ${bytes} bytes, fewer than ${o.minBytes}`);
    o.log(`scale: ${mib(bytes)} written in ${generateSeconds.toFixed(1)} s; decoding …`);
    const jobs: ScaleJob[] = [];
    const reads: ScaleJob[] = [];
    reads.push(job(await runWorker(['read', path]), 'read-only'));
    for (const engine of o.engines) {
      const j = job(await runWorker(['decode', path, engine]), engine);
      o.log(`scale: ${engine}: ${j.mbPerS.toFixed(0)} MB/s, peak RSS ${mib(j.peakRssBytes)}`);
      jobs.push(j);
    }
    if (o.engines.includes('wasm')) {
      const j = job(await runWorker(['blob', path, 'wasm']), 'wasm blob');
      o.log(`scale: wasm from a Blob (fs.openAsBlob): ${j.mbPerS.toFixed(0)} MB/s, peak RSS ${mib(j.peakRssBytes)}`);
      jobs.push(j);
    }
    reads.push(job(await runWorker(['read', path]), 'read-only'));
    // plain reads: the faster of one run before and one after the decodes (page cache warm in both)
    jobs.push(reads.reduce((a, b) => (b.mbPerS > a.mbPerS ? b : a)));
    // the same from the disk: a plain read and a wasm decode, each after dropping the file from the cache
    if (o.engines.includes('wasm') && dropFromCache(path)) {
      const cold = job(await runWorker(['read', path]), 'read-only cold');
      if (dropFromCache(path)) {
        const dec = job(await runWorker(['decode', path, 'wasm']), 'wasm cold');
        o.log(`scale: from the disk: read ${cold.mbPerS.toFixed(0)} MB/s, wasm decode ${dec.mbPerS.toFixed(0)} MB/s`);
        jobs.push(dec, cold);
      }
    }
    return { file: { bytes, generateSeconds, writeMBPerS: bytes / 1e6 / generateSeconds }, jobs };
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
    removeFile();
  }
}
