// Messages between the coordinator (coordinator.ts) and a decoding worker (worker.ts). Rows travel as
// typed arrays whose buffers are transferred, never copied; everything else is small.
import { EtlError, type EtlErrorCode } from '../errors.js';
import type { Chunks } from '../tables/schema.js';
import type { PartitionJob, PartitionOutcome, PlaceholderMark } from './partition.js';
import type { TraceState } from './state.js';

/** Where a worker reads its partitions: the file itself (Node: by path), or through the coordinator. */
export type WorkerSource = { kind: 'file'; path: string } | { kind: 'remote' };

export type ToWorker =
  /** first message: the compiled decoder (one WebAssembly.Module shared by every worker) */
  | { t: 'init'; module: WebAssembly.Module }
  /** decode a partition; `budget`: most bytes of rows sent and not yet credited back before the worker waits */
  | { t: 'job'; job: number; spec: PartitionJob; source: WorkerSource; budget: number }
  /** rows of `job` were consumed: `bytes` of the budget are free again */
  | { t: 'credit'; job: number; bytes: number }
  /** stop `job` (its outcome is not wanted) */
  | { t: 'cancel'; job: number }
  /** the answer to a 'read' (remote source) */
  | { t: 'data'; id: number; bytes: Uint8Array | null; error: SerializedError | null };

export interface SerializedError {
  name: string;
  message: string;
  stack?: string;
  code?: string;
  fileOffset?: number;
  expected?: string;
  found?: string;
}

export type FromWorker =
  | { t: 'ready' }
  | { t: 'started'; job: number; trace: TraceState }
  | { t: 'rows'; job: number; chunks: Chunks; marks: PlaceholderMark[]; bytes: number }
  | { t: 'progress'; job: number; done: number }
  | { t: 'read'; job: number; id: number; position: number; length: number }
  | { t: 'done'; job: number; outcome: PartitionOutcome }
  | { t: 'error'; job: number; error: SerializedError }
  /** the worker cannot run at all (no module, instantiation failed) */
  | { t: 'fatal'; error: SerializedError };

/** The buffers of a set of chunks, to transfer them. */
export function chunkBuffers(chunks: Chunks): ArrayBuffer[] {
  const out: ArrayBuffer[] = [];
  for (const c of Object.values(chunks)) {
    for (const col of c.columns) if (!Array.isArray(col) && col.byteLength > 0) out.push(col.buffer as ArrayBuffer);
  }
  return out;
}

/** Bytes a set of chunks holds (strings counted at 2 bytes a character plus a reference). */
export function chunkBytes(chunks: Chunks): number {
  let n = 0;
  for (const c of Object.values(chunks)) {
    for (const col of c.columns) {
      if (Array.isArray(col)) for (const s of col) n += 8 + 2 * s.length;
      else n += col.byteLength;
    }
  }
  return n;
}

export function serializeError(e: unknown): SerializedError {
  if (e instanceof EtlError) {
    return { name: e.name, message: e.message, stack: e.stack, code: e.code, fileOffset: e.fileOffset, expected: e.expected, found: e.found };
  }
  if (e instanceof Error) return { name: e.name, message: e.message, stack: e.stack };
  return { name: 'Error', message: String(e) };
}

/** The error a worker reported: an EtlError as it was thrown, anything else an Error saying where it came from. */
export function deserializeError(e: SerializedError, where = 'a decoding worker'): Error {
  if (e.name === 'EtlError' && e.code) {
    return new EtlError(e.code as EtlErrorCode, e.message, e.fileOffset, e.expected, e.found);
  }
  const err = new Error(`${where} failed: ${e.message}`);
  if (e.stack) err.stack = `${err.message}\n${where}: ${e.stack}`;
  return err;
}
