// etw-decode — browser-safe entry (no node: imports). Node users get the same API plus file helpers
// from the package's node entry (src/node.ts).
import type { ColumnChunk } from './schema.js';
import { bytesSource, decodeSteps, runAsync, runSync, type AsyncSource, type BufferRef } from './driver.js';
import {
  clockOf,
  createEngine,
  createEngineAsync,
  prepareEngine,
  summarize,
  TableCollector,
  traceInfo,
  type DecodeOptions,
  type DecodeResult,
  type TraceSummary,
} from './decode.js';
import { Table } from './table.js';
import { EtlError } from './errors.js';
import type { TraceInfo } from './logfile.js';
import type { Clock } from './time.js';
import { loadWasmModule } from './wasm/instance.js';

export type { DecodeOptions, DecodeResult, TraceSummary, KindRow, BiasInfo } from './decode.js';
export type { TraceInfo, GroupMasks } from './logfile.js';
export type { Clock } from './time.js';
export type { CSwitchRow, SpinLockRow, RowOf } from './table.js';
export type { ColumnChunk, ColumnSpec, TableName, TypedColumn } from './schema.js';
export type { Issue, Severity, DiagnosticCounters, CounterSpec } from './diagnostics.js';
export type { EngineKind } from './engine.js';
export type { BufferRef, AsyncSource } from './driver.js';
export { Table } from './table.js';
export { EtlError } from './errors.js';
export { CSWITCH_COLUMNS, SPINLOCK_COLUMNS, TABLE_COLUMNS } from './schema.js';
export { COUNTERS } from './diagnostics.js';
export { createClock } from './time.js';
export { guidText, HEADER_TYPE_NAMES } from './decode.js';
export * from './enums.js';

/** Compiles the WebAssembly module (once; later calls reuse it). Call before decodeSync in browsers. */
export async function init(): Promise<void> {
  await loadWasmModule();
}

function asBytes(input: Uint8Array | ArrayBuffer): Uint8Array {
  return input instanceof Uint8Array ? input : new Uint8Array(input);
}

/** Decodes a whole trace held in memory. Synchronous; in browsers call `await init()` first. */
export function decodeSync(input: Uint8Array | ArrayBuffer, options: DecodeOptions = {}): DecodeResult {
  const bytes = asBytes(input);
  const kind = options.engine ?? 'wasm';
  const engine = prepareEngine(createEngine(kind), options);
  const collector = new TableCollector();
  const result = runSync(
    bytesSource(bytes),
    decodeSteps(bytes.length, engine, options),
    (cswitch, spinlock) => collector.add({ cswitch, spinlock }),
    options.onProgress,
  );
  const info = traceInfo(result);
  return { summary: summarize(result, kind, options.bias), buffers: result.buffers, info, clock: clockOf(info), ...collector.tables() };
}

/** Decodes a whole trace from bytes or a Blob/File. */
export async function decode(input: Uint8Array | ArrayBuffer | Blob, options: DecodeOptions = {}): Promise<DecodeResult> {
  if (input instanceof Uint8Array || input instanceof ArrayBuffer) {
    await createEngineAsync(options.engine ?? 'wasm');
    return decodeSync(input, options);
  }
  const collector = new TableCollector();
  const out = await decodeStream(input, { ...options, onRows: collector.add });
  return { ...out, ...collector.tables() };
}

export interface StreamOptions extends DecodeOptions {
  /**
   * Receives the rows in chunks (per-CPU time order within each CPU). Without it no rows are produced
   * for the caller at all (a summary-only decode).
   */
  onRows?: (rows: { cswitch: Table<'cswitch'>; spinlock: Table<'spinlock'> }) => void | Promise<void>;
  /**
   * 'copy' (default): each chunk is the callee's to keep. 'borrow': the chunk's columns are views into
   * the decoder's memory, valid only until onRows returns (or its promise settles) — no copy, for
   * consumers that aggregate or serialize each chunk at once.
   */
  rows?: 'copy' | 'borrow';
}

export interface StreamResult {
  summary: TraceSummary;
  /** every buffer framed in the input, in file order */
  buffers: readonly BufferRef[];
  info: TraceInfo | null;
  clock: Clock | null;
}

/** Decodes a trace with bounded memory, handing rows to `onRows` chunk by chunk. */
export async function decodeStream(input: Blob | Uint8Array | AsyncSource, options: StreamOptions): Promise<StreamResult> {
  const kind = options.engine ?? 'wasm';
  const engine = prepareEngine(await createEngineAsync(kind), options);
  const source = toSource(input);
  const onRows = options.onRows;
  const rows = onRows ? (options.rows ?? 'copy') : 'discard';
  if (rows !== 'copy' && rows !== 'borrow' && rows !== 'discard') {
    throw new EtlError('BAD_OPTION', `rows must be 'copy' or 'borrow', got '${String(options.rows)}'`);
  }
  const result = await runAsync(
    source,
    decodeSteps(source.size, engine, { ...options, rows }),
    (cs: ColumnChunk, sl: ColumnChunk) => onRows?.({ cswitch: new Table('cswitch', cs), spinlock: new Table('spinlock', sl) }),
    options.onProgress,
  );
  const info = traceInfo(result);
  return { summary: summarize(result, kind, options.bias), buffers: result.buffers, info, clock: clockOf(info) };
}

function toSource(input: Blob | Uint8Array | AsyncSource): AsyncSource {
  if (input instanceof Uint8Array) {
    const sync = bytesSource(input);
    return { size: sync.size, read: async (p, n) => sync.read(p, n), readInto: async (p, t) => sync.readInto(p, t) };
  }
  if (typeof Blob !== 'undefined' && input instanceof Blob) {
    const slice = async (position: number, length: number) => new Uint8Array(await input.slice(position, position + length).arrayBuffer());
    return {
      size: input.size,
      read: slice,
      readInto: async (position, target) => {
        const b = await slice(position, target.length);
        target.set(b);
        return b.length;
      },
    };
  }
  return input as AsyncSource;
}
