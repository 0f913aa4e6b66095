// The decode driver, shared by both engines and by every input kind (bytes in memory, Node files, Blobs).
//
// 1. Frame (format-spec A.1, A.5): buffers follow each other at BufferSize strides. Only the 0x48-byte
//    headers are read. A header whose BufferSize is impossible is counted as a corrupt buffer and the
//    driver scans forward for the next plausible header (resync), counting the skipped bytes.
// 2. Order (A.7): buffers are decoded in SequenceNumber order (stable by file offset), which is time
//    order per processor — required to chain compact switches across buffers (D.8).
// 3. Decode: buffers are loaded into the engine's input window in large file-order chunks (so reads
//    stay nearly sequential), decoded in place, and rows are drained to the consumer in chunks.
//
// The driver is a generator of I/O requests ("read these bytes", "load this range into the window")
// so the same code runs synchronously over a Uint8Array and asynchronously over a file or Blob.
import * as L from './generated/layout.js';
import type { Engine, EngineState } from './engine.js';
import { EtlError, hex } from './errors.js';
import type { ColumnChunk } from './schema.js';

export interface BufferRef {
  /** position in file order */
  index: number;
  fileOffset: number;
  size: number;
  sequenceNumber: bigint;
  cpu: number;
  flags: number;
  type: number;
}

export interface PlannerIssue {
  code: number;
  detail: number;
  fileOffset: number;
}

export type Step =
  | { kind: 'read'; position: number; length: number } // answer: Uint8Array (shorter at end of input)
  | { kind: 'readMany'; positions: number[]; length: number } // answer: Uint8Array[], one per position
  | { kind: 'load'; position: number; target: Uint8Array } // answer: number of bytes placed in target
  // start reading into target and answer at once; the 'load' of the same position and target gets the
  // bytes. Answer: true if the runner reads ahead (async runners), false if it ignores the step.
  | { kind: 'prefetch'; position: number; target: Uint8Array }
  | { kind: 'rows'; cswitch: ColumnChunk; spinlock: ColumnChunk } // answer: nothing
  | { kind: 'progress'; phase: 'frame' | 'decode'; done: number; total: number }; // answer: nothing

export type RowMode = 'copy' | 'borrow' | 'discard';

export interface DriverOptions {
  /** bytes of input window per load (default 8 MiB; raised to the largest buffer) */
  windowBytes?: number;
  /** drain rows to the consumer once this many are pending (default 65536) */
  drainRows?: number;
  /**
   * How rows reach the consumer: 'copy' (default; chunks the consumer owns), 'borrow' (views into the
   * engine's output, valid only until the consumer returns — no copy), 'discard' (no rows at all).
   */
  rows?: RowMode;
}

export interface DriverResult {
  size: number;
  buffers: BufferRef[];
  plannerIssues: PlannerIssue[];
  plannerCounters: number[];
  engine: EngineState;
}

const HEADER = L.WMI_BUFFER_HEADER_SIZE;
const SCAN_CHUNK = 1 << 20;
/** buffer headers requested at once while framing (see frameBuffers) */
const HEADER_BATCH = 64;

/** What the first bytes look like, when they are a well-known container rather than a trace. */
function hint(h: Uint8Array): string {
  const ascii = String.fromCharCode(...h.subarray(0, 8));
  if (ascii.startsWith('PK\x03\x04')) return ' — this looks like a ZIP archive: extract the .etl file from it first';
  if (ascii.startsWith('MSCF')) return ' — this looks like a CAB archive: extract the .etl file from it first';
  if (h[0] === 0x1f && h[1] === 0x8b) return ' — this looks like gzip data: decompress it first';
  if (/^[\t\n\r\x20-\x7e]{8}$/.test(ascii)) return ' — the file starts with text: is it an ETL trace (.etl) written by WPR, xperf or an ETW session?';
  return ' — is it an ETL trace (.etl) written by WPR, xperf or an ETW session?';
}

/** Checks that the input starts like an ETL file; throws the one clear error otherwise. */
function checkFirstBuffer(h: Uint8Array, size: number): void {
  if (size === 0) throw new EtlError('EMPTY', 'input is empty (0 bytes): expected an ETL file', 0, 'a WMI_BUFFER_HEADER', 'end of input');
  if (h.length < HEADER + 8) {
    throw new EtlError(
      'NOT_ETL',
      `not an ETL file: ${size} bytes is too short for a trace buffer (a WMI_BUFFER_HEADER of 0x48 bytes followed by the logfile header event)${hint(h)}`,
      0,
      '>= 0x50 bytes',
      `${size} bytes`,
    );
  }
  const v = new DataView(h.buffer, h.byteOffset, h.byteLength);
  const bufferSize = v.getUint32(L.BUF_BUFFER_SIZE, true);
  if (bufferSize < HEADER || bufferSize > L.MAX_BUFFER_SIZE || bufferSize > size) {
    throw new EtlError(
      'NOT_ETL',
      `not an ETL file: at offset 0x0 expected a WMI_BUFFER_HEADER whose BufferSize is between 0x48 and ${hex(Math.min(size, L.MAX_BUFFER_SIZE))}, found BufferSize ${hex(bufferSize)}${hint(h)}`,
      0,
      `BufferSize in [0x48, ${hex(Math.min(size, L.MAX_BUFFER_SIZE))}]`,
      hex(bufferSize),
    );
  }
  const marker = v.getUint32(HEADER, true);
  const hookId = v.getUint16(HEADER + L.TH_HOOK_ID, true);
  const kind = marker >>> 16;
  if ((kind !== 0xc001 && kind !== 0xc002) || hookId !== L.HOOK_HEADER) {
    throw new EtlError(
      'NOT_ETL',
      `not an ETL file: at offset 0x48 expected the WMI_LOG_TYPE_HEADER event (marker 0xC002xxxx or 0xC001xxxx, HookId 0x0000), found marker ${hex(marker, 8)} HookId ${hex(hookId, 4)}${hint(h)}`,
      HEADER,
      'marker 0xC0020002/0xC0010002, HookId 0x0000',
      `marker ${hex(marker, 8)}, HookId ${hex(hookId, 4)}`,
    );
  }
}

/** Is there a plausible WMI_BUFFER_HEADER at `at` of `b` (which holds file bytes from `base`)? */
function plausibleHeader(v: DataView, at: number, fileOffset: number, size: number): boolean {
  const bufferSize = v.getUint32(at + L.BUF_BUFFER_SIZE, true);
  if (bufferSize < HEADER || bufferSize > L.MAX_BUFFER_SIZE || fileOffset + bufferSize > size) return false;
  const flags = v.getUint16(at + L.BUF_BUFFER_FLAG, true);
  const type = v.getUint16(at + L.BUF_BUFFER_TYPE, true);
  if ((flags & ~L.BUFFER_FLAG_KNOWN_MASK) !== 0 || type >= L.BUFFER_TYPE_MAXIMUM) return false;
  const saved = v.getUint32(at + L.BUF_SAVED_OFFSET, true);
  if (flags & L.BUFFER_FLAG_COMPRESSED) return saved >= HEADER && saved <= L.MAX_BUFFER_SIZE;
  const filled = v.getUint32(at + L.BUF_OFFSET, true);
  const extentOk = (filled >= HEADER && filled <= bufferSize) || (saved >= HEADER && saved <= bufferSize);
  if (!extentOk) return false;
  const marker = v.getUint32(at + HEADER, true);
  return (marker & L.TRACE_HEADER_FLAG) !== 0;
}

/** Frames the input into buffers. */
export function* frameBuffers(
  size: number,
  issues: PlannerIssue[],
  counters: number[],
): Generator<Step, BufferRef[], Uint8Array | Uint8Array[]> {
  const first = (yield { kind: 'read', position: 0, length: HEADER + 8 }) as Uint8Array;
  checkFirstBuffer(first, size);
  const refs: BufferRef[] = [];
  let pos = 0;
  let lastProgress = 0;
  // Headers are read ahead in batches, assuming the next buffers have the BufferSize of the last one
  // (they do in practice): one request for HEADER_BATCH headers instead of one round trip each, which
  // for files is most of the framing time. A header read ahead is used only if it sits exactly where the
  // previous buffer ends, so the result is the same as reading them one by one.
  let ahead: Uint8Array[] = [];
  let aheadAt: number[] = [];
  let aheadNext = 0;
  let stride = 0;
  while (pos < size) {
    if (size - pos < HEADER) {
      counters[L.D_TRUNCATED_TAIL_BYTES]! += size - pos;
      break;
    }
    let h: Uint8Array;
    if (aheadNext < aheadAt.length && aheadAt[aheadNext] === pos && ahead[aheadNext]!.length === HEADER) {
      h = ahead[aheadNext++]!;
    } else if (stride >= HEADER) {
      const positions: number[] = [];
      for (let at = pos; positions.length < HEADER_BATCH && at + HEADER <= size; at += stride) positions.push(at);
      ahead = (yield { kind: 'readMany', positions, length: HEADER }) as Uint8Array[];
      aheadAt = positions;
      aheadNext = 1;
      h = ahead[0]!;
    } else {
      h = (yield { kind: 'read', position: pos, length: HEADER }) as Uint8Array;
    }
    const v = new DataView(h.buffer, h.byteOffset, h.byteLength);
    const bufferSize = v.getUint32(L.BUF_BUFFER_SIZE, true);
    if (bufferSize >= HEADER && bufferSize <= L.MAX_BUFFER_SIZE && pos + bufferSize <= size) {
      const flags = v.getUint16(L.BUF_BUFFER_FLAG, true);
      refs.push({
        index: refs.length,
        fileOffset: pos,
        size: bufferSize,
        sequenceNumber: v.getBigInt64(L.BUF_SEQUENCE_NUMBER, true),
        cpu:
          flags & L.BUFFER_FLAG_PROC_INDEX
            ? v.getUint16(L.BUF_CLIENT_CONTEXT, true) & L.PROCESSOR_INDEX_MASK
            : v.getUint8(L.BUF_CLIENT_CONTEXT),
        flags,
        type: v.getUint16(L.BUF_BUFFER_TYPE, true),
      });
      pos += bufferSize;
      stride = bufferSize;
      if (pos - lastProgress >= 64 << 20) {
        lastProgress = pos;
        yield { kind: 'progress', phase: 'frame', done: pos, total: size };
      }
      continue;
    }
    stride = 0;
    const reason = bufferSize < HEADER ? 4 : bufferSize > L.MAX_BUFFER_SIZE ? 5 : 6;
    counters[L.D_BUFFERS_CORRUPT]!++;
    if (issues.length < L.LOG_CAPACITY) issues.push({ code: L.D_BUFFERS_CORRUPT, detail: reason, fileOffset: pos });
    // resync: scan forward byte by byte for the next plausible buffer header
    let next = -1;
    let scan = pos + 1;
    while (next < 0 && scan + HEADER + 4 <= size) {
      const chunk = (yield { kind: 'read', position: scan, length: SCAN_CHUNK + HEADER + 4 }) as Uint8Array;
      const cv = new DataView(chunk.buffer, chunk.byteOffset, chunk.byteLength);
      const limit = chunk.length - (HEADER + 4);
      for (let i = 0; i <= limit; i++) {
        if (plausibleHeader(cv, i, scan + i, size)) {
          next = scan + i;
          break;
        }
      }
      if (next < 0) scan += limit + 1;
    }
    const resumeAt = next < 0 ? size : next;
    counters[L.D_RESYNC_BYTES]! += resumeAt - pos;
    pos = resumeAt;
  }
  return refs;
}

/** SequenceNumber order (A.7), stable by file offset. */
export function decodeOrder(refs: readonly BufferRef[]): BufferRef[] {
  return refs.slice().sort((a, b) =>
    a.sequenceNumber < b.sequenceNumber ? -1 : a.sequenceNumber > b.sequenceNumber ? 1 : a.fileOffset - b.fileOffset,
  );
}

/** Hands the engine's pending rows to the consumer in the chosen mode and empties the output. */
function* emitRows(engine: Engine, mode: RowMode): Generator<Step, void, unknown> {
  if (mode === 'copy') {
    yield { kind: 'rows', ...engine.drain() };
    return;
  }
  if (mode === 'borrow') yield { kind: 'rows', ...engine.peekRows() }; // the consumer is done when we resume
  engine.resetRows();
}

function hasRows(engine: Engine): boolean {
  return engine.rowCount(L.TABLE_CSWITCH) > 0 || engine.rowCount(L.TABLE_SPINLOCK) > 0;
}

/** The whole decode as a generator of I/O steps. */
export function* decodeSteps(
  size: number,
  engine: Engine,
  options: DriverOptions = {},
): Generator<Step, DriverResult, unknown> {
  const plannerIssues: PlannerIssue[] = [];
  const plannerCounters = new Array<number>(L.D_COUNTER_COUNT).fill(0);
  const refs = (yield* frameBuffers(size, plannerIssues, plannerCounters) as Generator<Step, BufferRef[], unknown>) as BufferRef[];
  const order = decodeOrder(refs);
  const largest = refs.reduce((m, r) => Math.max(m, r.size), 0);
  const windowBytes = Math.max(options.windowBytes ?? 8 << 20, largest);
  const drainRows = options.drainRows ?? 65536;
  const rowMode = options.rows ?? 'copy';
  // The loads, in decode order: a window of windowBytes from the first buffer not in the last window.
  const plan: { position: number; length: number }[] = [];
  for (let i = 0, end = 0, start = 0; i < order.length; i++) {
    const ref = order[i]!;
    if (ref.fileOffset >= start && ref.fileOffset + ref.size <= end) continue;
    start = ref.fileOffset;
    end = start + Math.min(windowBytes, size - start);
    plan.push({ position: start, length: end - start });
  }
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
      const target = engine.inputView().subarray(base, base + length);
      const got = (yield { kind: 'load', position: ref.fileOffset, target }) as number;
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
        const ahead = engine.inputView().subarray(otherBase, otherBase + next.length);
        readAhead = (yield { kind: 'prefetch', position: next.position, target: ahead }) === true;
        if (readAhead) half ^= 1;
      }
    }
    let status = engine.decodeBuffer(chunkBase + ref.fileOffset - chunkStart, ref.size, ref.fileOffset);
    while (status === L.STATUS_NEED_DRAIN) {
      yield* emitRows(engine, rowMode);
      status = engine.resume();
    }
    if (engine.rowCount(L.TABLE_CSWITCH) >= drainRows || engine.rowCount(L.TABLE_SPINLOCK) >= drainRows) {
      yield* emitRows(engine, rowMode);
    }
    done++;
    bytesDone += ref.size;
    if ((done & 63) === 0) yield { kind: 'progress', phase: 'decode', done: bytesDone, total: size };
  }
  if (hasRows(engine)) yield* emitRows(engine, rowMode);
  let status = engine.finish();
  while (status === L.STATUS_NEED_DRAIN) {
    yield* emitRows(engine, rowMode);
    status = engine.finish();
  }
  if (hasRows(engine)) yield* emitRows(engine, rowMode);
  yield { kind: 'progress', phase: 'decode', done: size, total: size };
  return { size, buffers: refs, plannerIssues, plannerCounters, engine: engine.state() };
}

/** Random-access input read synchronously (bytes in memory). */
export interface SyncSource {
  readonly size: number;
  /** up to `length` bytes at `position` (fewer at the end of the input) */
  read(position: number, length: number): Uint8Array;
  /** copies up to target.length bytes at `position` into target; returns how many */
  readInto(position: number, target: Uint8Array): number;
}

/** Random-access input read asynchronously (files, Blobs). */
export interface AsyncSource {
  readonly size: number;
  read(position: number, length: number): Promise<Uint8Array>;
  readInto(position: number, target: Uint8Array): Promise<number>;
  /** optional: many small reads at once (buffer headers); default: `read` for each position */
  readMany?(positions: readonly number[], length: number): Promise<Uint8Array[]>;
}

export function bytesSource(bytes: Uint8Array): SyncSource {
  return {
    size: bytes.length,
    read: (position, length) => bytes.subarray(position, Math.min(bytes.length, position + length)),
    readInto: (position, target) => {
      const src = bytes.subarray(position, Math.min(bytes.length, position + target.length));
      target.set(src);
      return src.length;
    },
  };
}

type RowsHandler = (cswitch: ColumnChunk, spinlock: ColumnChunk) => void | Promise<void>;
type ProgressHandler = (phase: string, done: number, total: number) => void;

/** Rows and progress steps: hands them on; returns what the consumer returned (maybe a promise). */
function deliver(step: Step, onRows: RowsHandler, onProgress?: ProgressHandler): void | Promise<void> {
  if (step.kind === 'rows') return onRows(step.cswitch, step.spinlock);
  if (step.kind === 'progress') onProgress?.(step.phase, step.done, step.total);
}

/** Runs the steps synchronously. */
export function runSync(
  source: SyncSource,
  steps: Generator<Step, DriverResult, unknown>,
  onRows: (cswitch: ColumnChunk, spinlock: ColumnChunk) => void,
  onProgress?: ProgressHandler,
): DriverResult {
  let answer: unknown = undefined;
  for (;;) {
    const it = steps.next(answer);
    if (it.done) return it.value;
    const step = it.value;
    if (step.kind === 'read') answer = source.read(step.position, step.length);
    else if (step.kind === 'readMany') answer = step.positions.map((p) => source.read(p, step.length));
    else if (step.kind === 'load') answer = source.readInto(step.position, step.target);
    else if (step.kind === 'prefetch') answer = false;
    else answer = deliver(step, onRows, onProgress);
  }
}

/** Runs the steps asynchronously (awaiting reads and the rows consumer, for backpressure). */
export async function runAsync(
  source: AsyncSource,
  steps: Generator<Step, DriverResult, unknown>,
  onRows: RowsHandler,
  onProgress?: ProgressHandler,
): Promise<DriverResult> {
  // one read ahead in flight at most (a 'prefetch' step); its outcome is kept so it never goes unhandled
  let ahead: { position: number; target: Uint8Array; result: Promise<{ n: number } | { error: unknown }> } | null = null;
  const settle = async (): Promise<{ n: number } | { error: unknown } | null> => {
    const a = ahead;
    ahead = null;
    return a ? a.result : null;
  };
  try {
    let answer: unknown = undefined;
    for (;;) {
      const it = steps.next(answer);
      if (it.done) return it.value;
      const step = it.value;
      if (step.kind === 'read') answer = await source.read(step.position, Math.min(step.length, source.size - step.position));
      else if (step.kind === 'readMany') {
        answer = source.readMany
          ? await source.readMany(step.positions, step.length)
          : await Promise.all(step.positions.map((p) => source.read(p, Math.min(step.length, source.size - p))));
      }
      else if (step.kind === 'prefetch') {
        await settle();
        let result: Promise<{ n: number } | { error: unknown }>;
        try {
          result = source.readInto(step.position, step.target).then((n) => ({ n }), (error: unknown) => ({ error }));
        } catch (error) {
          result = Promise.resolve({ error });
        }
        ahead = { position: step.position, target: step.target, result };
        answer = true;
      } else if (step.kind === 'load') {
        const a = ahead;
        const same = a !== null && a.position === step.position && a.target.buffer === step.target.buffer &&
          a.target.byteOffset === step.target.byteOffset && a.target.length === step.target.length;
        const r = await settle(); // never two reads into the engine's memory at once
        if (same && r && 'n' in r) answer = r.n;
        else if (same && r && 'error' in r) throw r.error;
        else answer = await source.readInto(step.position, step.target);
      } else answer = await deliver(step, onRows, onProgress);
    }
  } finally {
    await settle(); // no read may still write into the engine once we return
  }
}
