// The decode API (browser-safe: no node: imports): init, decodeSync, decode, decodeStream, and the types
// and helpers every consumer needs. The entries (index.ts, node.ts) add the output writers and register
// where decoding workers come from (parallel/host.ts); the CLI imports this module directly so that it
// does not load what only some commands use (apache-arrow). Importing it registers nothing.
import { blobSource } from '../input/blob-source.js';
import { decodeSteps, type DriverOptions } from './decode-steps.js';
import { createEngine, createEngineAsync, loadEngine, releaseEngine } from '../engine/engines.js';
import type { EngineKind } from '../engine/engine.js';
import { EtlError } from '../errors.js';
import { checkOptions, configureEngine, type DecodeOptions } from '../options.js';
import { bytesSource, runAsync, runSync, type AsyncSource, type SyncSource } from './runners.js';
import { concatChunks, DECODED_TABLE_NAMES, perTable, type Chunks, type ColumnChunk, type DecodedTableName } from '../tables/schema.js';
import { attachWholeStacks } from '../derive/stacks.js';
import { buildResult, type DecodeResult, type StreamResult } from '../result/summary.js';
import { fillWholeSampleLifetimes, LifetimeCollector, loadThreadsCore } from '../derive/lifetimes.js';
import { Table, type DecodedTables } from '../tables/table.js';
import { parallelHost } from '../parallel/host.js';
import { decodeInParallel, LIFETIME_TABLES, threadsFor } from '../parallel/run.js';

export type { DecodeOptions } from '../options.js';
export type { DecodeResult, StreamResult, TraceSummary, BiasInfo } from '../result/summary.js';
export type { KindRow } from '../result/event-kinds.js';
export type { TraceInfo, GroupMasks } from '../result/logfile.js';
export type { Clock } from '../time.js';
export type { CpuUsageRow, ThreadStateRow, CSwitchRow, SpinLockRow, ReadyThreadRow, ThreadEventRow, ProcessEventRow, SampleRow, ImageEventRow, ImageRow, ThreadRow, ProcessRow, Tables, DecodedTables } from '../tables/table.js';
export type { ColumnChunk, ColumnSpec, TableName, DecodedTableName, TypedColumn, RowOf } from '../tables/schema.js';
export type { ColumnArray, ColumnName, TableColumns } from '../tables/schema.js';
export type { Issue, Severity, DiagnosticCounters, CounterSpec } from '../result/diagnostics.js';
export type { EngineKind } from '../engine/engine.js';
export type { BufferRef } from '../framing/buffers.js';
export { BufferList } from '../framing/buffers.js';
export type { AsyncSource } from './runners.js';
export { Table } from '../tables/table.js';
export { EtlError } from '../errors.js';
export { TABLE_COLUMNS, TABLE_NAMES, DECODED_TABLE_NAMES } from '../tables/schema.js';
export { COUNTERS } from '../result/diagnostics.js';
export { createClock } from '../time.js';
export { guidText, HEADER_TYPE_NAMES } from '../result/event-kinds.js';
export * from '../tables/enums.js';
export type { CpuAnalysis, CpuAnalyzerOptions, CpuResultContext, CpuWarning, CpuTotals, Percentiles, ProcessCpu, ReadyDelay, ThreadCpu, CpuUsageOptions, CpuUsageStats } from '../analysis/cpu.js';

/**
 * Collects the row chunks of a decode into whole tables (one copy per column at the end), and fills the
 * columns of the rows that are known only after the decode: the stackId column when the trace has stacks
 * (attachWholeStacks, src/derive/stacks.ts) and the samples' processId, imageName and imageOffset
 * (fillWholeSampleLifetimes, src/derive/lifetimes.ts). A whole decode's result carries them.
 */
export class TableCollector {
  private readonly chunks = perTable((): ColumnChunk[] => []);

  /** Keeps a set of chunks (they must be the collector's to keep: copied rows). */
  add = (chunks: Chunks): void => {
    for (const t of DECODED_TABLE_NAMES) if (chunks[t].length) this.chunks[t].push(chunks[t]);
  };

  /** The whole tables; `lifetimes`: the decode's threads and images (else derived from its event rows). */
  tables(lifetimes?: Pick<StreamResult, 'threads' | 'images'>): DecodedTables {
    const tables = perTable(<T extends DecodedTableName>(t: T) => new Table(t, concatChunks(t, this.chunks[t]))) as DecodedTables;
    attachWholeStacks(tables);
    fillWholeSampleLifetimes(tables, lifetimes);
    return tables;
  }
}

/**
 * Prepares an engine for decodeSync: compiles the WebAssembly module (default), or loads the reference
 * engine with `{ engine: 'reference' }`. Later calls reuse what was loaded.
 */
export async function init(options: { engine?: EngineKind } = {}): Promise<void> {
  await loadDecode(options.engine ?? 'wasm');
}

/** Loads what a decode by `kind` needs: the engine, and with the wasm engine the `threads` core's module. */
async function loadDecode(kind: EngineKind): Promise<void> {
  await loadEngine(kind);
  if (kind === 'wasm') await loadThreadsCore();
}

function asBytes(input: Uint8Array | ArrayBuffer): Uint8Array {
  return input instanceof Uint8Array ? input : new Uint8Array(input);
}

/** Decodes a whole trace held in memory. Synchronous; in browsers call `await init()` first. */
export function decodeSync(input: Uint8Array | ArrayBuffer, options: DecodeOptions = {}): DecodeResult {
  checkOptions(options);
  const bytes = asBytes(input);
  const kind = options.engine ?? 'wasm';
  const engine = createEngine(kind);
  try {
    configureEngine(engine, options);
    const collector = new TableCollector();
    const lifetimes = new LifetimeCollector(kind);
    const onChunks = (chunks: Chunks) => {
      collector.add(chunks);
      lifetimes.add(chunks, false);
    };
    const source = bytesSource(bytes);
    const result = runSync(source, decodeSteps(bytes.length, engine, driverOptions(options, source, { turns: false })), onChunks, options.onProgress);
    const built = buildResult(result, lifetimes, kind, options.bias, options.sourcePath ?? null);
    return { ...built, ...collector.tables(built) };
  } finally {
    releaseEngine(engine);
  }
}

/** Decodes a whole trace from bytes or a Blob/File. */
export async function decode(input: Uint8Array | ArrayBuffer | Blob, options: DecodeOptions = {}): Promise<DecodeResult> {
  if (input instanceof Uint8Array || input instanceof ArrayBuffer) {
    checkOptions(options);
    const bytes = asBytes(input);
    if (threadsFor(options, bytes.length, { workersRead: false, rows: true }) === 1) {
      await loadDecode(options.engine ?? 'wasm');
      return decodeSync(bytes, options);
    }
    input = bytes;
  }
  const collector = new TableCollector();
  // every row is kept: the threads need not wait for the consumer
  const out = await decodeChunks(input, { ...options, parallel: { aheadBytes: Infinity, ...options.parallel } }, 'copy', collector.add);
  return { ...out, ...collector.tables(out) };
}

export interface StreamOptions extends DecodeOptions {
  /**
   * Receives the rows in chunks, one Table per registry entry (rows in decode order: see the README's
   * "Row order"). Without it no rows are produced for the caller at all (a summary-only decode).
   */
  onRows?: (rows: DecodedTables) => void | Promise<void>;
  /**
   * 'copy' (default): each chunk is the callee's to keep. 'borrow': the chunk's columns are views into
   * the decoder's memory, valid only until onRows returns (or its promise settles) — no copy, for
   * consumers that aggregate or serialize each chunk at once.
   */
  rows?: 'copy' | 'borrow';
  /**
   * Only these decoded tables (default: all): a first pass over a few tables (src/derive/stack-pass.ts), a
   * command that needs a few (decodedTablesFor, src/tables/sources.ts: what a table is made of).
   * A one-thread decode decodes only their events (Engine.keepTables): the other tables' events are tallied
   * by kind only, so the result counts none of their rows and none of their diagnostics, and its threads,
   * processes and images come from the lifetimes' tables named here only. A parallel decode decodes every
   * table and ships only these and the lifetimes'. A drain holding none of them (nor of the lifetimes'
   * tables) is dropped uncopied; the other tables' chunks come empty.
   */
  tables?: readonly DecodedTableName[];
}

/** Decodes a trace with bounded memory, handing rows to `onRows` chunk by chunk. */
export async function decodeStream(input: Blob | Uint8Array | AsyncSource, options: StreamOptions): Promise<StreamResult> {
  const onRows = options.onRows;
  const rows = options.rows ?? 'copy';
  if (rows !== 'copy' && rows !== 'borrow') {
    throw new EtlError('BAD_OPTION', `rows must be 'copy' or 'borrow', got '${String(options.rows)}'`);
  }
  const bad = options.tables?.find((t) => !(DECODED_TABLE_NAMES as readonly string[]).includes(t));
  if (bad !== undefined) throw new EtlError('BAD_OPTION', `tables: '${String(bad)}' is not a decoded table (${DECODED_TABLE_NAMES.join(', ')})`);
  // without a consumer, rows are only borrowed for the lifetimes (no copy of the big tables)
  return decodeChunks(input, options, onRows ? rows : 'borrow', onRows ? (chunks) => onRows(perTable((t) => new Table(t, chunks[t])) as DecodedTables) : undefined, options.tables);
}

/** The streaming decode shared by decode() and decodeStream(): chunks of every decoded table to `onChunks`. */
async function decodeChunks(
  input: Blob | Uint8Array | AsyncSource,
  options: DecodeOptions,
  rows: 'copy' | 'borrow',
  onChunks: ((chunks: Chunks) => void | Promise<void>) | undefined,
  tables?: readonly DecodedTableName[],
): Promise<StreamResult> {
  // the tables shipped to onChunks: those asked for and the lifetimes' (every one when none are named)
  const ship = onChunks ? (tables ? [...new Set([...tables, ...LIFETIME_TABLES])] : undefined) : LIFETIME_TABLES;
  checkOptions(options);
  const kind = options.engine ?? 'wasm';
  const source = toSource(input);
  const threads = threadsFor(options, source.size, { workersRead: parallelHost()?.filePathOf(source) != null, rows: onChunks !== undefined });
  if (kind === 'wasm') await loadThreadsCore();
  if (threads > 1) {
    // src/parallel: rows come as copies the consumer owns; without a consumer only the lifetimes' tables travel
    const lifetimes = new LifetimeCollector(kind);
    const consume = (chunks: Chunks) => {
      lifetimes.add(chunks, false);
      return onChunks?.(chunks);
    };
    const result = await decodeInParallel(source, options, threads, ship ?? 'all', consume, options.onProgress);
    return buildResult(result, lifetimes, kind, options.bias, options.sourcePath ?? null);
  }
  const engine = await createEngineAsync(kind);
  try {
    configureEngine(engine, options);
    // tables named: the engine decodes only those (a parallel decode decodes all, ships those and the lifetimes')
    if (tables) engine.keepTables(tables);
    const lifetimes = new LifetimeCollector(kind);
    const consume = (chunks: Chunks) => {
      lifetimes.add(chunks, rows === 'borrow');
      return onChunks?.(chunks);
    };
    const result = await runAsync(source, decodeSteps(source.size, engine, driverOptions(options, source, { rows, ship, headerBatch: source.headerBatch, turns: source.turns === true })), consume, options.onProgress);
    return buildResult(result, lifetimes, kind, options.bias, options.sourcePath ?? null);
  } finally {
    releaseEngine(engine);
  }
}

/** What a one-thread decode of `source` asks of decodeSteps: the caller's options, the source's window, `more`. */
function driverOptions(options: DecodeOptions, source: SyncSource | AsyncSource, more: DriverOptions): DriverOptions {
  return { ...options, windowBytes: options.windowBytes ?? source.windowBytes, progress: options.onProgress !== undefined, ...more };
}

function toSource(input: Blob | Uint8Array | AsyncSource): AsyncSource {
  if (input instanceof Uint8Array) {
    const sync = bytesSource(input);
    return { size: sync.size, read: async (p, n) => sync.read(p, n), readInto: async (p, t) => sync.readInto(p, t), windowBytes: sync.windowBytes };
  }
  if (typeof Blob !== 'undefined' && input instanceof Blob) return blobSource(input);
  return input as AsyncSource;
}
