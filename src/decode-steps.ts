// The whole decode as a generator of I/O steps (steps.ts), run over any input by runners.ts:
// 1. frame the input into buffers (framing.ts);
// 2. order them by SequenceNumber (ordering.ts, docs/format.md §A.7);
// 3. load them into the engine's input window in large file-order chunks, decode each buffer in place
//    and hand the rows of every table to the consumer in chunks (copied, borrowed or discarded).
import * as L from './generated/layout.js';
import type { Engine, EngineState } from './engine.js';
import { EtlError, hex } from './errors.js';
import { frameBuffers, type BufferRef, type FramingIssue } from './framing.js';
import { decodeOrder, planWindows } from './ordering.js';
import { DECODED_TABLE_NAMES, perTable, TABLE_IDS, type DecodedTableName } from './schema.js';
import { load, prefetch, type Steps } from './steps.js';

export type RowMode = 'copy' | 'borrow' | 'discard';

export interface DriverOptions {
  /** bytes of input window per load (default 8 MiB; raised to the largest buffer) */
  windowBytes?: number;
  /** drain rows to the consumer once a table has this many pending (default 65536) */
  drainRows?: number;
  /**
   * How rows reach the consumer: 'copy' (default; chunks the consumer owns), 'borrow' (views into the
   * engine's output, valid only until the consumer returns — no copy), 'discard' (no rows at all).
   */
  rows?: RowMode;
}

export interface DriverResult {
  size: number;
  /** rows each table produced (whatever the row mode) */
  rows: Record<DecodedTableName, number>;
  buffers: BufferRef[];
  framingIssues: FramingIssue[];
  framingCounters: number[];
  engine: EngineState;
}

const TABLE_ID_LIST = DECODED_TABLE_NAMES.map((t) => TABLE_IDS[t]);

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
  const refs = yield* frameBuffers(size, framingIssues, framingCounters);
  const order = decodeOrder(refs);
  const largest = refs.reduce((m, r) => Math.max(m, r.size), 0);
  const windowBytes = Math.max(options.windowBytes ?? 8 << 20, largest);
  const drainRows = options.drainRows ?? 65536;
  const rowMode = options.rows ?? 'copy';
  const rows = perTable(() => 0);
  const plan = planWindows(order, windowBytes, size);
  // Read-ahead: with two windows, an async runner reads the next window while this one is decoded
  // (file reads run off the main thread). Not when a buffer is compressed: decompression may grow the
  // engine's memory, which must not happen while a read into it is in flight.
  let readAhead = plan.length > 1 && !refs.some((r) => r.flags & L.BUFFER_FLAG_COMPRESSED);
  engine.reserveInput(readAhead ? windowBytes + plan.reduce((m, l, i) => (i ? Math.max(m, l.length) : m), 0) : windowBytes);
  let chunkStart = 0;
  let chunkEnd = 0;
  let chunkBase = 0; // where the current window starts in the engine's input
  let half = 0; // which of the two windows the next load goes to
  let loads = 0;
  let done = 0;
  let bytesDone = 0;
  for (const ref of order) {
    if (!(ref.fileOffset >= chunkStart && ref.fileOffset + ref.size <= chunkEnd)) {
      const length = Math.min(windowBytes, size - ref.fileOffset);
      const base = half * windowBytes;
      const got = yield* load(ref.fileOffset, engine.inputView().subarray(base, base + length));
      if (got < ref.size) {
        throw new EtlError(
          'READ_FAILED',
          `could not read buffer at ${hex(ref.fileOffset)}: expected ${ref.size} bytes, got ${got} (did the file change while it was read?)`,
          ref.fileOffset,
          `${ref.size} bytes`,
          `${got} bytes`,
        );
      }
      chunkStart = ref.fileOffset;
      chunkEnd = ref.fileOffset + got;
      chunkBase = base;
      // the plan holds while every load is where and as long as planned
      if (readAhead && (plan[loads]?.position !== ref.fileOffset || got !== length)) readAhead = false;
      loads++;
      const next = plan[loads];
      if (readAhead && next) {
        const otherBase = (half ^ 1) * windowBytes;
        readAhead = yield* prefetch(next.position, engine.inputView().subarray(otherBase, otherBase + next.length));
        if (readAhead) half ^= 1;
      }
    }
    let status = engine.decodeBuffer(chunkBase + ref.fileOffset - chunkStart, ref.size, ref.fileOffset);
    while (status === L.STATUS_NEED_DRAIN) {
      yield* emitRows(engine, rowMode, rows);
      status = engine.resume();
    }
    if (mostPendingRows(engine) >= drainRows) yield* emitRows(engine, rowMode, rows);
    done++;
    bytesDone += ref.size;
    if ((done & 63) === 0) yield { kind: 'progress', phase: 'decode', done: bytesDone, total: size };
  }
  if (mostPendingRows(engine) > 0) yield* emitRows(engine, rowMode, rows);
  let status = engine.finish();
  while (status === L.STATUS_NEED_DRAIN) {
    yield* emitRows(engine, rowMode, rows);
    status = engine.finish();
  }
  if (mostPendingRows(engine) > 0) yield* emitRows(engine, rowMode, rows);
  yield { kind: 'progress', phase: 'decode', done: size, total: size };
  return { size, rows, buffers: refs, framingIssues, framingCounters, engine: engine.state() };
}
