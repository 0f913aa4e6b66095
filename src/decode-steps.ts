// The whole decode as a generator of I/O steps (steps.ts), run over any input by runners.ts:
// 1. frame the input into buffers (framing.ts);
// 2. order them by SequenceNumber and plan the reads (ordering.ts, docs/format.md §A.7): chunks of whole
//    buffers loaded into two window slots (the next one read ahead while this one is decoded), buffers
//    far from the others read on their own — each byte read a bounded number of times whatever the order;
// 3. decode each buffer in place and hand the rows of every table to the consumer in chunks (copied,
//    borrowed or discarded).
import * as L from './generated/layout.js';
import type { BufferList } from './buffers.js';
import type { Engine, EngineState } from './engine.js';
import { frameBuffers, type FramingIssue } from './framing.js';
import { decodeOrder, planLoads } from './ordering.js';
import { DECODED_TABLE_NAMES, perTable, TABLE_IDS, type DecodedTableName } from './schema.js';
import { PlanReader } from './plan-reads.js';
import { TURN, TURN_BYTES, type Steps } from './steps.js';

export type RowMode = 'copy' | 'borrow' | 'discard';

export interface DriverOptions {
  /** bytes of input window per load (default WINDOW_BYTES; at most the input size; raised to the largest buffer) */
  windowBytes?: number;
  /** drain rows to the consumer once a table has this many pending (default DRAIN_ROWS) */
  drainRows?: number;
  /**
   * How rows reach the consumer: 'copy' (default; chunks the consumer owns), 'borrow' (views into the
   * engine's output, valid only until the consumer returns — no copy), 'discard' (no rows at all).
   */
  rows?: RowMode;
  /** buffer headers per batched read while framing (default 64; sources whose reads are round trips ask for more) */
  headerBatch?: number;
}

export interface DriverResult {
  size: number;
  /** rows each table produced (whatever the row mode) */
  rows: Record<DecodedTableName, number>;
  buffers: BufferList;
  /** what the decode read: loads of chunks, buffers read on their own, bytes loaded into the engine */
  reads: { loads: number; singles: number; bytes: number };
  framingIssues: FramingIssue[];
  framingCounters: number[];
  engine: EngineState;
}

const TABLE_ID_LIST = DECODED_TABLE_NAMES.map((t) => TABLE_IDS[t]);

/**
 * Rows a table may have pending before they go to the consumer (a chunk ends at the first buffer boundary
 * past it; the engine's own limit, rowCapacity less one compact batch, cuts a chunk inside a buffer). Small
 * enough that the rows being written stay in the core's cache (16 384 CSwitch rows are ~1.1 MiB of
 * columns): against 65 536, the decode of the bench's mixed trace in memory took 23 ms instead of 28.5 ms
 * (median of 30, alternating; the engine alone 12.1 against 15.3 ms fastest). Compact batches drain most
 * often (a drain costs JS work): 59–62 ms either way; CSwitch and SpinLock unchanged within the noise.
 */
export const DRAIN_ROWS = 16384;

/**
 * The input window of a source that names none (files; bytes in memory use BYTES_WINDOW, Blobs their own):
 * a window is read into the engine, then walked while the next one is read. 2 MiB ones are walked mostly
 * from cache; against 8 MiB, `streamFile` without a consumer (what `summary` does) took 0.67–0.89 s
 * instead of 0.76–1.03 s on the 1 GiB bench trace, and 0.36–0.59 s instead of 0.39–0.61 s on a 516 MiB
 * one (8 alternating runs each, one thread, page cache), for 4 reads per 8 MiB instead of 1.
 */
export const WINDOW_BYTES = 2 << 20;

/** Hands the engine's pending rows to the consumer in the chosen mode, counts them and empties the output. */
function* emitRows(engine: Engine, mode: RowMode, counts: Record<DecodedTableName, number>): Steps<void> {
  for (const t of DECODED_TABLE_NAMES) counts[t] += engine.rowCount(TABLE_IDS[t]);
  if (mode === 'copy') {
    yield { kind: 'rows', chunks: engine.drain() };
    return;
  }
  if (mode === 'borrow') yield { kind: 'rows', chunks: engine.peekRows() }; // the consumer is done when we resume
  engine.resetRows();
}

function mostPendingRows(engine: Engine): number {
  let most = 0;
  for (const id of TABLE_ID_LIST) most = Math.max(most, engine.rowCount(id));
  return most;
}

/** The whole decode of an input of `size` bytes. */
export function* decodeSteps(size: number, engine: Engine, options: DriverOptions = {}): Steps<DriverResult> {
  const framingIssues: FramingIssue[] = [];
  const framingCounters = new Array<number>(L.D_COUNTER_COUNT).fill(0);
  const table = yield* frameBuffers(size, framingIssues, framingCounters, options.headerBatch);
  const order = decodeOrder(table);
  const drainRows = options.drainRows ?? DRAIN_ROWS;
  const rowMode = options.rows ?? 'copy';
  const rows = perTable(() => 0);
  const plan = planLoads(table, order, Math.max(Math.min(options.windowBytes ?? WINDOW_BYTES, size), table.largest));
  // Input regions: slot 0, slot 1, then the single-buffer region (plan-reads.ts).
  const reader = new PlanReader(plan, () => engine.inputView(), table.fileOffset, table.size, table.anyCompressed);
  engine.reserveInput(reader.inputBytes);
  const off = table.fileOffset;
  const sizes = table.size;
  let bytesDone = 0;
  let sinceTurn = 0;
  for (let i = 0; i < order.length; i++) {
    const r = order[i]!;
    let at = reader.at(i, r);
    if (at < 0) at = yield* reader.place(i, r);
    let status = engine.decodeBuffer(at, sizes[r]!, off[r]!);
    while (status === L.STATUS_NEED_DRAIN) {
      yield* emitRows(engine, rowMode, rows);
      status = engine.resume();
    }
    if (mostPendingRows(engine) >= drainRows) yield* emitRows(engine, rowMode, rows);
    if (reader.aheadDue(i)) yield* reader.ahead();
    bytesDone += sizes[r]!;
    if ((sinceTurn += sizes[r]!) >= TURN_BYTES) {
      sinceTurn = 0;
      yield TURN;
    }
    if ((i & 63) === 63) yield { kind: 'progress', phase: 'decode', done: bytesDone, total: size };
  }
  if (mostPendingRows(engine) > 0) yield* emitRows(engine, rowMode, rows);
  let status = engine.finish();
  while (status === L.STATUS_NEED_DRAIN) {
    yield* emitRows(engine, rowMode, rows);
    status = engine.finish();
  }
  if (mostPendingRows(engine) > 0) yield* emitRows(engine, rowMode, rows);
  yield { kind: 'progress', phase: 'decode', done: size, total: size };
  return { size, rows, buffers: table.list(), reads: reader.reads, framingIssues, framingCounters, engine: engine.state() };
}
