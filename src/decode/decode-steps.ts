// The whole decode as a generator of I/O steps (steps.ts), run over any input by runners.ts:
// 1. frame the input into buffers (framing.ts);
// 2. order them by SequenceNumber and plan the reads (ordering.ts, docs/format.md §A.7): chunks of whole
//    buffers loaded into two window slots (the next one read ahead while this one is decoded), buffers
//    far from the others read on their own — each byte read a bounded number of times whatever the order;
// 3. decode each buffer in place and hand the rows of every table to the consumer in chunks (copied,
//    borrowed or discarded).
import * as L from '../generated/layout.js';
import type { BufferList } from '../framing/buffers.js';
import type { Engine, EngineState } from '../engine/engine.js';
import { frameBuffers, type FramingIssue } from '../framing/framing.js';
import { decodeOrder, planLoads } from '../framing/ordering.js';
import { DECODED_TABLE_NAMES, perTable, TABLE_IDS, type DecodedTableName } from '../tables/schema.js';
import { PlanReader } from '../input/plan-reads.js';
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
  /**
   * The tables whose rows the consumer wants (default: all). Rows of the others are counted and dropped, and
   * a drain that leaves none of these tables with rows needs no 'rows' step at all.
   */
  ship?: readonly DecodedTableName[];
  /** buffer headers per batched read while framing (default 64; sources whose reads are round trips ask for more) */
  headerBatch?: number;
  /**
   * Whether to yield a 'turn' step every TURN_BYTES (default true): only a runner over a source that reads
   * while this thread gives other tasks a turn (AsyncSource.turns) acts on them; the others pass false.
   */
  turns?: boolean;
  /** Whether to yield 'progress' steps while decoding (default true; a runner with no progress handler passes false). */
  progress?: boolean;
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

/**
 * A drain that has no rows for the consumer — none in the tables of `ship` (table ids; none when rows are
 * discarded) — done: its rows counted and dropped (true). false when it has rows for the consumer.
 */
function drainQuietly(engine: Engine, ship: readonly number[], counts: Record<DecodedTableName, number>): boolean {
  for (const id of ship) if (engine.rowCount(id) > 0) return false;
  for (const t of DECODED_TABLE_NAMES) counts[t] += engine.rowCount(TABLE_IDS[t]);
  engine.resetRows();
  return true;
}

/**
 * Hands the engine's pending rows to the consumer in the chosen mode (when a table of `ship` has some),
 * counts them and empties the output.
 */
function* emitRows(engine: Engine, mode: RowMode, counts: Record<DecodedTableName, number>, ship: readonly number[]): Steps<void> {
  if (drainQuietly(engine, ship, counts)) return;
  for (const t of DECODED_TABLE_NAMES) counts[t] += engine.rowCount(TABLE_IDS[t]);
  if (mode === 'copy') {
    yield { kind: 'rows', chunks: engine.drain() };
    return;
  }
  yield { kind: 'rows', chunks: engine.peekRows() }; // borrowed: the consumer is done when we resume
  engine.resetRows();
}

/** BufferLoop.status when buffer i is not decoded yet. */
export const NOT_DECODED = -1;

/** What BufferLoop.quiet asks of the decode it serves. */
export interface QuietSink {
  /** Whether the buffer of record `r` goes to the generator even if it needs no step (a partition's watched processor). */
  leaves(r: number): boolean;
  /** Does a drain that needs no step (no rows for the consumer): true; false if the drain is a step. */
  drainQuietly(): boolean;
}

/**
 * The decode order walked buffer by buffer: `quiet()` decodes the buffers that need no step, a generator
 * takes the steps (decodeSteps here, a partition's decodeBuffers in src/parallel/partition.ts). Most
 * buffers need none, and a plain method for them keeps V8's optimizing compiler off the generator, which
 * then resumes a few hundred times per 516 MiB instead of once or more per buffer: compiling decodeSteps
 * (which took a turn step every 256 KiB, and a rows step for every drain even when the consumer wanted none
 * of its tables) took 19–28 ms of a background thread per run, which on 2 cores delayed the reads ahead that
 * the decode then waited for (docs/performance.md "End to end").
 */
export class BufferLoop {
  /** the decode position */
  i = 0;
  bytesDone = 0;
  /** bytes decoded since the last turn step */
  sinceTurn = 0;
  /** the engine's status for buffer i when quiet() decoded it and stopped for a step due after it, else NOT_DECODED */
  status = NOT_DECODED;

  constructor(
    private readonly engine: Engine,
    private readonly reader: PlanReader,
    readonly order: Uint32Array,
    private readonly off: Float64Array,
    private readonly sizes: Uint32Array,
    /** the record of the buffer the input ends in (framing's cut buffer), or -1 */
    readonly cutRecord: number,
    private readonly drainRows: number,
    readonly turnBytes: number,
    /** a progress step every 64 buffers */
    readonly progress: boolean,
    private readonly sink: QuietSink,
  ) {}

  /**
   * Decodes buffers from position i on as long as none needs a step: each already in the engine's input,
   * not left to the generator, with no rows for the consumer due (fewer than drainRows pending, or a drain
   * the sink does quietly), no read ahead, turn or progress due after it. Stops at the first buffer that
   * needs one: not decoded if it needs a read first or is left, else decoded, with its status in `status`.
   */
  quiet(): void {
    const { engine, reader, order, off, sizes, cutRecord, drainRows, turnBytes, progress, sink } = this;
    let i = this.i;
    let bytesDone = this.bytesDone;
    let sinceTurn = this.sinceTurn;
    let status = NOT_DECODED;
    for (const n = order.length; i < n; i++) {
      const r = order[i]!;
      if (sink.leaves(r)) break;
      const place = reader.at(i, r);
      if (place < 0) break;
      const length = sizes[r]!;
      status = engine.decodeBuffer(place, length, off[r]!, r === cutRecord);
      while (status === L.STATUS_NEED_DRAIN && sink.drainQuietly()) status = engine.resume();
      if (status === L.STATUS_NEED_DRAIN) break;
      if (engine.mostPendingRows() >= drainRows && !sink.drainQuietly()) break;
      if (reader.aheadDue(i) || sinceTurn + length >= turnBytes || (progress && (i & 63) === 63)) break;
      status = NOT_DECODED;
      bytesDone += length;
      sinceTurn += length;
    }
    this.i = i;
    this.bytesDone = bytesDone;
    this.sinceTurn = sinceTurn;
    this.status = status;
  }
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
  const ship = rowMode === 'discard' ? [] : (options.ship ?? DECODED_TABLE_NAMES).map((t) => TABLE_IDS[t]);
  const progress = options.progress !== false;
  // a drain with no rows for the consumer is no step
  const sink: QuietSink = { leaves: () => false, drainQuietly: () => drainQuietly(engine, ship, rows) };
  const cutRecord = table.lastCut ? table.count - 1 : -1;
  const loop = new BufferLoop(engine, reader, order, off, sizes, cutRecord, drainRows, options.turns === false ? Infinity : TURN_BYTES, progress, sink);
  for (;;) {
    loop.quiet();
    const i = loop.i;
    if (i >= order.length) break;
    // buffer i needs a step: a read before it is decoded, or rows, a read ahead, a turn or progress after it
    const r = order[i]!;
    let status = loop.status;
    if (status === NOT_DECODED) {
      let place = reader.at(i, r);
      if (place < 0) place = yield* reader.place(i, r);
      status = engine.decodeBuffer(place, sizes[r]!, off[r]!, r === cutRecord);
    }
    while (status === L.STATUS_NEED_DRAIN) {
      yield* emitRows(engine, rowMode, rows, ship);
      status = engine.resume();
    }
    if (engine.mostPendingRows() >= drainRows) yield* emitRows(engine, rowMode, rows, ship);
    if (reader.aheadDue(i)) yield* reader.ahead();
    loop.bytesDone += sizes[r]!;
    if ((loop.sinceTurn += sizes[r]!) >= loop.turnBytes) {
      loop.sinceTurn = 0;
      yield TURN;
    }
    if (progress && (i & 63) === 63) yield { kind: 'progress', phase: 'decode', done: loop.bytesDone, total: size };
    loop.i = i + 1;
  }
  if (engine.mostPendingRows() > 0) yield* emitRows(engine, rowMode, rows, ship);
  let status = engine.finish();
  while (status === L.STATUS_NEED_DRAIN) {
    yield* emitRows(engine, rowMode, rows, ship);
    status = engine.finish();
  }
  if (engine.mostPendingRows() > 0) yield* emitRows(engine, rowMode, rows, ship);
  if (progress) yield { kind: 'progress', phase: 'decode', done: size, total: size };
  return { size, rows, buffers: table.list(), reads: reader.reads, framingIssues, framingCounters, engine: engine.state() };
}
