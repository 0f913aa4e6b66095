// The decode of one partition — a contiguous range of the decode order (docs/format.md §A.7) — by one
// WebAssembly engine, as a generator of I/O steps (steps.ts) like decode-steps.ts, run in a worker
// (worker.ts) or in the coordinator's thread (coordinator.ts). Three ways to start:
//
// - fresh: the first partition starts like the whole decode; its output is the single-thread output;
// - guessed: a later partition starts from the trace-wide state (logfile header) and the kinds of the
//   partitions the coordinator had merged when it handed this one out (the first, at least: the logfile
//   header is in it in practice), and every processor with a stand-in held switch (state.ts SENTINEL_*):
//   where the real held-back switch is emitted, a placeholder row comes out, which is found here right
//   away (at the next drain or the end of its buffer), with the time its check needs and the place of the
//   issue that check logged; the coordinator fills in or drops the row and keeps or drops the issue
//   (stitch.ts), and checks the guesses;
// - exact: the trace-wide state, held switches and kinds of everything before the partition are given
//   (the coordinator decodes a partition again so when a guess could make a difference): output as in
//   one thread.
//
// The issue log is moved out of the engine after every buffer, so that a placeholder's issue can be left
// out without taking the place of a real one in the engine's LOG_CAPACITY entries.
import * as L from '../generated/layout.js';
import type { IssueLogEntry, KindTally } from '../engine.js';
import { EtlError, hex } from '../errors.js';
import { planLoads, SINGLE } from '../ordering.js';
import { emptyChunk, perTable, TABLE_IDS, viewColumn, DECODED_TABLE_NAMES, type Chunks, type DecodedTableName } from '../schema.js';
import { load, prefetch, type Steps } from '../steps.js';
import type { WasmEngine } from '../wasm/engine.js';
import {
  exportsOf,
  readHeld,
  readTraceState,
  seedHeld,
  seedKinds,
  seedSentinels,
  SENTINEL_FILE_OFFSET,
  SENTINEL_TS,
  writeTraceState,
  type HeldList,
  type TraceState,
} from './state.js';

/** How a partition starts (see the file comment). */
export type PartitionStart =
  | { kind: 'fresh' }
  /** trace-wide state and kinds (first-seen order) of the partitions merged so far; placeholders for held switches */
  | { kind: 'guess'; trace: TraceState; kinds: BigUint64Array }
  /** what everything before the partition leaves */
  | { kind: 'exact'; trace: TraceState; held: HeldList; kinds: BigUint64Array };

export interface PartitionJob {
  /** place in the decode order (0 = the first partition) */
  partition: number;
  inputSize: number;
  /** the partition's buffers in file order */
  fileOffset: Float64Array;
  size: Uint32Array;
  cpu: Uint16Array;
  /** decode order: indices into the buffers above */
  order: Uint32Array;
  largest: number;
  anyCompressed: boolean;
  start: PartitionStart;
  bias?: number;
  windowBytes?: number;
  drainRows?: number;
  /** tables whose rows are handed on (the others are counted and dropped in the engine) */
  ship: readonly DecodedTableName[];
}

/** A placeholder row (see the file comment). */
export interface PlaceholderMark {
  /** row number in the partition's cswitch rows */
  row: number;
  cpu: number;
  /** time of the processor's first compact switch in the partition (what the held switch is checked against) */
  t: bigint;
  /** place of the placeholder's time-check issue among the partition's logged issues; -1 when not logged */
  logIndex: number;
  /** that issue's file offset (its batch's) */
  issueAt: number;
}

/** Where a placeholder's issue made the engine's log run full within one buffer (stitch.ts re-runs the partition when it matters). */
export interface LogOverflow {
  /** issues of the partition logged before that buffer */
  logIndex: number;
}

export interface PartitionOutcome {
  partition: number;
  /** rows each table produced (placeholders included) */
  rows: Record<DecodedTableName, number>;
  startTrace: TraceState;
  endTrace: TraceState;
  /** counters (placeholder checks taken back), the issues logged (at most LOG_CAPACITY), the kinds */
  counters: number[];
  log: IssueLogEntry[];
  kinds: KindTally[];
  /** the logfile header when this partition decoded it (its trace-wide state started unseen) */
  logfile: { payload: Uint8Array | null; length: number; pointerSize: number; timestamp: bigint } | null;
  headerExtension: Uint32Array | null;
  bias: number;
  /** the last held switch of every processor the partition touched (with placeholders) or holds (else) */
  held: HeldList;
  logOverflow: LogOverflow | null;
  /** the partition started with placeholders (a guessed start) */
  speculative: boolean;
  /** kinds entered before the partition's first buffer (its guessed or exact start's) */
  kindSeed: number;
  reads: { loads: number; singles: number; bytes: number };
}

/** Where the generator hands its side results; the runner reads them at each rows step. */
export interface PartitionSink {
  /** placeholders found since the last rows step */
  marks: PlaceholderMark[];
  /** called once the partition's starting trace-wide state is known, before any rows */
  started(trace: TraceState): void;
}

const CSW = TABLE_IDS.cswitch;

function readFailed(position: number, wanted: number, got: number): EtlError {
  return new EtlError(
    'READ_FAILED',
    `could not read ${wanted} bytes at ${hex(position)}: got ${got} (did the file change while it was read?)`,
    position,
    `${wanted} bytes`,
    `${got} bytes`,
  );
}

/** The decode of one partition (see the file comment). The engine is reset first. */
export function* partitionSteps(engine: WasmEngine, job: PartitionJob, sink: PartitionSink): Steps<PartitionOutcome> {
  const x = exportsOf(engine);
  const n = job.order.length;
  const speculative = job.start.kind === 'guess';
  const window = Math.max(Math.min(job.windowBytes ?? 8 << 20, job.inputSize), job.largest);
  const plan = planLoads({ count: job.fileOffset.length, fileOffset: job.fileOffset, size: job.size }, job.order, window);
  const W = plan.window;
  const singleBase = plan.slotsUsed * W;
  engine.reset();
  engine.reserveInput(singleBase + plan.largestSingle);
  const reads = { loads: 0, singles: 0, bytes: 0 };

  // ---- the starting state
  engine.setBiasOverride(job.bias);
  const st0 = job.start;
  let kindSeed = 0;
  // the processors of the partition's buffers, ascending (only they can emit or hold a switch in it)
  const cpus = [...new Set(job.cpu)].sort((a, b) => a - b);
  if (st0.kind !== 'fresh') {
    writeTraceState(x, st0.trace);
    if (st0.kind === 'exact') seedHeld(x, st0.held);
    else seedSentinels(x, cpus);
    seedKinds(engine, st0.kinds);
    kindSeed = x.kindCount();
  }
  const startTrace = readTraceState(x);
  sink.started(startTrace);

  // ---- rows out, placeholders found, issues moved out of the engine
  const ship = new Set(job.ship);
  const rows = perTable(() => 0);
  const drainRows = job.drainRows ?? 65536;
  const counterFix = new Array<number>(L.D_COUNTER_COUNT).fill(0);
  const log: IssueLogEntry[] = [];
  let logOverflow: LogOverflow | null = null;
  /** processors still holding their stand-in (speculative partitions) */
  const untouched = new Uint8Array(L.MAX_PROCESSORS);
  if (speculative) for (const c of cpus) untouched[c] = 1;
  /** cswitch rows in the engine's output when the current buffer started (0 after a drain) */
  let bufferRowStart = 0;
  /** index in the engine's log of the current buffer's placeholder issue, or -1 */
  let skipLog = -1;

  function* emit(): Steps<void> {
    const chunks = engine.peekRows();
    for (const t of DECODED_TABLE_NAMES) rows[t] += chunks[t].length;
    const out = perTable((t): Chunks[typeof t] => {
      const c = chunks[t];
      if (!ship.has(t) || c.length === 0) return emptyChunk(t);
      return { length: c.length, columns: c.columns.map((col) => (Array.isArray(col) ? col : col.slice())) };
    });
    engine.resetRows();
    bufferRowStart = 0;
    yield { kind: 'rows', chunks: out };
  }

  function mostPending(): number {
    let most = 0;
    for (const t of DECODED_TABLE_NAMES) most = Math.max(most, engine.rowCount(TABLE_IDS[t]));
    return most;
  }

  /** After (part of) a buffer of processor `cpu`: did its first compact switch replace the stand-in? */
  function inspect(cpu: number): void {
    if (untouched[cpu] === 0 || x.pendingFileOffset(cpu) === SENTINEL_FILE_OFFSET) return;
    untouched[cpu] = 0;
    const buffer = x.memory.buffer;
    const count = engine.rowCount(CSW);
    const fo = viewColumn('f64', buffer, x.columnPtr(CSW, L.CS_FILE_OFFSET) >>> 0, count) as Float64Array;
    let p = bufferRowStart;
    while (p < count && fo[p] !== SENTINEL_FILE_OFFSET) p++;
    if (p === count) throw new Error(`partition ${job.partition}: processor ${cpu} left its stand-in without a placeholder row`);
    // the first switch of the processor: the next compact row (all rows after p are this buffer's), or still held
    const source = viewColumn('u8', buffer, x.columnPtr(CSW, L.CS_SOURCE) >>> 0, count) as Uint8Array;
    let q = p + 1;
    while (q < count && source[q] === L.CS_SOURCE_CSWITCH) q++;
    const t = q < count ? (viewColumn('i64', buffer, x.columnPtr(CSW, L.CS_TIMESTAMP) >>> 0, count) as BigInt64Array)[q]! : x.pendingTimestamp(cpu);
    let logIndex = -1;
    let issueAt = -1;
    if (t < SENTINEL_TS) {
      // the check against the stand-in logged an issue (unless the log was full): the first of its kind in this buffer
      counterFix[L.D_COMPCS_TIME_MISMATCH]! -= 1;
      const dv = new DataView(buffer);
      const at = x.logPtr() >>> 0;
      for (let j = 0, m = x.logCount(); j < m; j++) {
        const e = at + j * L.LOG_ENTRY_SIZE;
        if (dv.getUint32(e, true) === L.D_COMPCS_TIME_MISMATCH && dv.getUint32(e + 4, true) === L.TIME_BEFORE_PREVIOUS) {
          skipLog = j;
          logIndex = log.length + j;
          issueAt = dv.getFloat64(e + 8, true);
          break;
        }
      }
    }
    sink.marks.push({ row: rows.cswitch + p, cpu, t, logIndex, issueAt });
  }

  /** Moves the engine's issues (this buffer's) to `log`, leaving out the placeholder's. */
  function takeLog(): void {
    const m = x.logCount();
    if (m === 0) return;
    if (skipLog >= 0 && m === L.LOG_CAPACITY && logOverflow === null) logOverflow = { logIndex: log.length };
    const dv = new DataView(x.memory.buffer);
    const at = x.logPtr() >>> 0;
    for (let j = 0; j < m && log.length < L.LOG_CAPACITY; j++) {
      if (j === skipLog) continue;
      const e = at + j * L.LOG_ENTRY_SIZE;
      log.push({ code: dv.getUint32(e, true), detail: dv.getUint32(e + 4, true), fileOffset: dv.getFloat64(e + 8, true) });
    }
    x.setLogCount(0);
    skipLog = -1;
  }

  // ---- the buffers (as decode-steps.ts: two window slots, read-ahead, single reads)
  let readAhead = plan.loads > 1 && !job.anyCompressed;
  const off = job.fileOffset;
  const sizes = job.size;
  const slotStart = [0, 0];
  let nextLoad = 0;
  let prefetched = -1;
  let bytesDone = 0;
  const slotView = (k: number): Uint8Array => {
    const c = plan.loadChunk[k]!;
    const base = plan.loadSlot[k]! * W;
    return engine.inputView().subarray(base, base + (plan.chunkEnd[c]! - plan.chunkStart[c]!));
  };
  for (let i = 0; i < n; i++) {
    const r = job.order[i]!;
    if (nextLoad < plan.loads && plan.loadAt[nextLoad] === i) {
      const c = plan.loadChunk[nextLoad]!;
      const target = slotView(nextLoad);
      const got = yield* load(plan.chunkStart[c]!, target);
      if (got < target.length) throw readFailed(plan.chunkStart[c]!, target.length, got);
      slotStart[plan.loadSlot[nextLoad]!] = plan.chunkStart[c]!;
      reads.loads++;
      reads.bytes += got;
      nextLoad++;
    }
    const s = plan.slot[i]!;
    let at: number;
    if (s === SINGLE) {
      const target = engine.inputView().subarray(singleBase, singleBase + sizes[r]!);
      const got = yield* load(off[r]!, target);
      if (got < target.length) throw readFailed(off[r]!, target.length, got);
      reads.singles++;
      reads.bytes += got;
      at = singleBase;
    } else {
      at = s * W + off[r]! - slotStart[s]!;
    }
    const cpu = job.cpu[r]!;
    const watch = untouched[cpu] !== 0;
    bufferRowStart = engine.rowCount(CSW);
    let status = engine.decodeBuffer(at, sizes[r]!, off[r]!);
    while (status === L.STATUS_NEED_DRAIN) {
      if (watch) inspect(cpu);
      yield* emit();
      status = engine.resume();
    }
    if (watch) inspect(cpu);
    takeLog();
    if (mostPending() >= drainRows) yield* emit();
    if (readAhead && nextLoad < plan.loads && prefetched !== nextLoad && plan.loadAfter[nextLoad]! <= i) {
      prefetched = nextLoad;
      readAhead = yield* prefetch(plan.chunkStart[plan.loadChunk[nextLoad]!]!, slotView(nextLoad));
    }
    bytesDone += sizes[r]!;
    if ((i & 63) === 63) yield { kind: 'progress', phase: 'decode', done: bytesDone, total: job.inputSize };
  }
  if (mostPending() > 0) yield* emit();
  yield { kind: 'progress', phase: 'decode', done: bytesDone, total: job.inputSize };

  const st = engine.state();
  const counters = st.counters.map((v, i) => v + counterFix[i]!);
  const endTrace = readTraceState(x);
  return {
    partition: job.partition,
    rows,
    startTrace,
    endTrace,
    counters,
    log,
    kinds: st.kinds,
    logfile: !startTrace.seen && endTrace.seen
      ? { payload: st.logfilePayload, length: st.logfilePayloadLength, pointerSize: st.logfilePointerSize, timestamp: st.logfileTimestamp }
      : null,
    headerExtension: st.headerExtension,
    bias: st.bias,
    held: speculative ? readHeld(x, cpus.filter((c) => untouched[c] === 0)) : readHeld(x, exactHeldCpus(job, cpus)),
    logOverflow,
    speculative,
    kindSeed,
    reads,
  };
}

/** The processors that may hold a switch at the end of a fresh or exact partition: its own and those it started with. */
function exactHeldCpus(job: PartitionJob, cpus: number[]): number[] {
  if (job.start.kind !== 'exact') return cpus;
  return [...new Set([...cpus, ...job.start.held.cpu])].sort((a, b) => a - b);
}
