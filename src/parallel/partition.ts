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
import { BufferLoop, DRAIN_ROWS, NOT_DECODED, WINDOW_BYTES, type QuietSink } from '../decode/decode-steps.js';
import * as L from '../generated/layout.js';
import type { IssueLogEntry, KindTally } from '../engine/engine.js';
import { EtlError } from '../errors.js';
import { planLoads, type LoadPlan } from '../framing/ordering.js';
import { NO_ROWS, perTable, TABLE_IDS, viewColumn, DECODED_TABLE_NAMES, type Chunks, type DecodedTableName } from '../tables/schema.js';
import { PlanReader } from '../input/plan-reads.js';
import { TURN, TURN_BYTES, type Steps } from '../decode/steps.js';
import type { WasmEngine } from '../engine/wasm/engine.js';
import {
  exportsOf,
  readCounters,
  readHeaderState,
  readHeld,
  readKinds,
  readTraceState,
  seedHeld,
  seedKinds,
  seedSentinels,
  SENTINEL_FILE_OFFSET,
  SENTINEL_TS,
  writeTraceState,
  type Exports,
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
  /** the buffer the input ends in (framing's cut buffer), as an index into the buffers above, or -1 */
  cutRecord: number;
  start: PartitionStart;
  bias?: number;
  windowBytes?: number;
  drainRows?: number;
  /** yield a 'turn' step every TURN_BYTES (default true): only for sources that read while this thread gives other tasks a turn */
  turns?: boolean;
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
  /** counters (placeholder checks taken back), the issues logged (at most LOG_CAPACITY) */
  counters: number[];
  log: IssueLogEntry[];
  /** events and bytes of the kinds it was seeded with (in their order), and the kinds it added */
  seededCounts: Float64Array;
  seededBytes: Float64Array;
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

/** The decode of one partition (see the file comment). The engine is reset first. */
export function* partitionSteps(engine: WasmEngine, job: PartitionJob, sink: PartitionSink): Steps<PartitionOutcome> {
  const x = exportsOf(engine);
  const speculative = job.start.kind === 'guess';
  const window = Math.max(Math.min(job.windowBytes ?? WINDOW_BYTES, job.inputSize), job.largest);
  const plan = planLoads({ count: job.fileOffset.length, fileOffset: job.fileOffset, size: job.size }, job.order, window);
  engine.reset();
  engine.reserveInput(plan.slotsUsed * plan.window + plan.largestSingle);

  // ---- the starting state
  engine.setBiasOverride(job.bias);
  const st0 = job.start;
  let kindSeed = 0;
  // the processors of the partition's buffers, ascending (only they can emit or hold a switch in it)
  const present = new Uint8Array(L.MAX_PROCESSORS);
  for (let i = 0; i < job.cpu.length; i++) present[job.cpu[i]!] = 1;
  const cpus: number[] = [];
  for (let c = 0; c < L.MAX_PROCESSORS; c++) if (present[c]) cpus.push(c);
  if (st0.kind !== 'fresh') {
    writeTraceState(x, st0.trace);
    if (st0.kind === 'exact') seedHeld(x, st0.held);
    else seedSentinels(x, cpus);
    seedKinds(engine, st0.kinds);
    kindSeed = x.kindCount();
  }
  const startTrace = readTraceState(x);
  sink.started(startTrace);

  // ---- the buffers
  const run = new PartitionRun(engine, job, sink, speculative ? cpus : []);
  const reads = yield* decodeBuffers(run, engine, job, plan);
  if (engine.mostPendingRows() > 0) yield* run.emit();
  yield { kind: 'progress', phase: 'decode', done: run.bytesDone, total: job.inputSize };
  run.takeLog();

  const counters = readCounters(x);
  for (let i = 0; i < counters.length; i++) counters[i]! += run.counterFix[i]!;
  const kinds = readKinds(x, kindSeed);
  const header = readHeaderState(x);
  const endTrace = readTraceState(x);
  return {
    partition: job.partition,
    rows: run.rows,
    startTrace,
    endTrace,
    counters,
    log: run.log,
    seededCounts: kinds.counts,
    seededBytes: kinds.bytes,
    kinds: kinds.added,
    logfile: !startTrace.seen && endTrace.seen ? header.logfile : null,
    headerExtension: header.headerExtension,
    bias: header.bias,
    held: speculative ? readHeld(x, cpus.filter((c) => run.untouched[c] === 0)) : readHeld(x, exactHeldCpus(job, cpus)),
    logOverflow: run.logOverflow,
    speculative,
    kindSeed,
    reads,
  };
}

/**
 * The buffers of a partition in its decode order (as decode-steps.ts: plan-reads.ts's two window slots,
 * read-ahead, single reads), with the placeholders found and the issues moved out as they come (PartitionRun). Its own small
 * function, so that the engine compiles it once for every partition. The buffers that need no step are
 * decoded by decode-steps.ts's BufferLoop.quiet, this generator takes the steps.
 */
function* decodeBuffers(run: PartitionRun, engine: WasmEngine, job: PartitionJob, plan: LoadPlan): Steps<PartitionOutcome['reads']> {
  const reader = new PlanReader(plan, () => engine.inputView(), job.fileOffset, job.size, job.anyCompressed);
  const order = job.order;
  const off = job.fileOffset;
  const sizes = job.size;
  const cpuOf = job.cpu;
  const untouched = run.untouched;
  const drainRows = job.drainRows ?? DRAIN_ROWS;
  const loop = new BufferLoop(engine, reader, order, off, sizes, job.cutRecord, drainRows, job.turns === false ? Infinity : TURN_BYTES, true, run);
  for (const n = order.length; ; ) {
    loop.quiet();
    const i = loop.i;
    if (i >= n) break;
    // buffer i needs a step, or is a watched processor's (the loop leaves those): the steps
    const r = order[i]!;
    const cpu = cpuOf[r]!;
    let status = loop.status;
    // a processor still on its stand-in: did this buffer decode a compact batch (that may have replaced it)?
    let batches = -1;
    if (status === NOT_DECODED) {
      let place = reader.at(i, r);
      if (place < 0) place = yield* reader.place(i, r);
      batches = untouched[cpu] !== 0 ? run.beforeBuffer() : -1;
      status = engine.decodeBuffer(place, sizes[r]!, off[r]!, r === job.cutRecord);
    }
    while (status === L.STATUS_NEED_DRAIN) {
      if (batches >= 0) run.inspectIfBatch(cpu, batches, false);
      yield* run.emit();
      status = engine.resume();
    }
    if (batches >= 0) run.inspectIfBatch(cpu, batches, true);
    if (engine.mostPendingRows() >= drainRows) yield* run.emit();
    if (reader.aheadDue(i)) yield* reader.ahead();
    loop.bytesDone += sizes[r]!;
    if ((loop.sinceTurn += sizes[r]!) >= loop.turnBytes) {
      loop.sinceTurn = 0;
      yield TURN;
    }
    if ((i & 63) === 63) yield { kind: 'progress', phase: 'decode', done: loop.bytesDone, total: job.inputSize };
    loop.i = i + 1;
  }
  run.bytesDone = loop.bytesDone;
  return reader.reads;
}

/** The state of a partition's decode between buffers: rows out, placeholders found, issues moved out. */
class PartitionRun implements QuietSink {
  readonly rows = perTable(() => 0);
  readonly counterFix = new Array<number>(L.D_COUNTER_COUNT).fill(0);
  readonly log: IssueLogEntry[] = [];
  logOverflow: LogOverflow | null = null;
  /** processors still holding their stand-in (speculative partitions) */
  readonly untouched = new Uint8Array(L.MAX_PROCESSORS);
  /** input decoded (set when the buffers are done) */
  bytesDone = 0;
  private readonly x: Exports;
  private readonly ship: Set<DecodedTableName>;
  private readonly shipIds: readonly number[];
  /** cswitch rows in the engine's output when the current buffer started (0 after a drain) */
  private bufferRowStart = 0;
  /** the engine's log entries when the current (watched) buffer started */
  private bufferLogStart = 0;
  /** index in the engine's log of the current buffer's placeholder issue, or -1 */
  private skipLog = -1;
  // the engine's row counts, log count and compact batch counter, read in its memory: no call per buffer
  private m32: Int32Array;
  private readonly rowCountAt: number;
  private readonly logCountAt: number;
  private readonly batchesAt: number;

  constructor(
    private readonly engine: WasmEngine,
    private readonly job: PartitionJob,
    private readonly sink: PartitionSink,
    watched: readonly number[],
  ) {
    const x = (this.x = exportsOf(engine));
    this.ship = new Set(job.ship);
    this.shipIds = job.ship.map((t) => TABLE_IDS[t]);
    for (const c of watched) this.untouched[c] = 1;
    this.m32 = new Int32Array(x.memory.buffer);
    this.rowCountAt = (x.rowCountsPtr() >>> 0) >> 2;
    this.logCountAt = (x.logCountPtr() >>> 0) >> 2;
    this.batchesAt = ((x.countersPtr() >>> 0) + 8 * L.D_COMPCS_BATCHES) >> 2; // low word of the u64
  }

  /** A view of the engine's memory (memory.grow detaches the old buffer: its views have length 0). */
  private mem(): Int32Array {
    if (this.m32.length === 0) this.m32 = new Int32Array(this.x.memory.buffer);
    return this.m32;
  }

  /** Before a buffer of a processor on its stand-in: where its rows and issues start; the batch counter. */
  beforeBuffer(): number {
    const m = this.mem();
    this.bufferRowStart = m[this.rowCountAt + CSW]!;
    this.bufferLogStart = m[this.logCountAt]!;
    return m[this.batchesAt]! >>> 0;
  }

  /** After (part of) such a buffer: if it decoded a compact batch, look for the placeholder (`end`: of the buffer). */
  inspectIfBatch(cpu: number, batches: number, end: boolean): void {
    if (this.mem()[this.batchesAt]! >>> 0 === batches) return;
    this.inspect(cpu);
    if (end && this.untouched[cpu] === 0) this.takeLog();
  }

  /** The buffers of processors still on their stand-in go to decodeBuffers' steps (placeholders are looked for there). */
  leaves(r: number): boolean {
    return this.untouched[this.job.cpu[r]!] !== 0;
  }

  /**
   * emit() when it takes no step — no shipped table has rows and no placeholder marks wait — done here
   * (true); false when it needs the step (then emit()).
   */
  drainQuietly(): boolean {
    if (this.sink.marks.length) return false;
    const m = this.mem();
    for (const id of this.shipIds) if (m[this.rowCountAt + id]! > 0) return false;
    for (const t of DECODED_TABLE_NAMES) this.rows[t] += m[this.rowCountAt + TABLE_IDS[t]]!;
    this.engine.resetRows();
    this.bufferRowStart = 0;
    return true;
  }

  *emit(): Steps<void> {
    // rows per table, from the engine's memory; the rows themselves only when a shipped table has some
    const m = this.mem();
    let shipped = false;
    for (const t of DECODED_TABLE_NAMES) {
      const n = m[this.rowCountAt + TABLE_IDS[t]]!;
      this.rows[t] += n;
      if (n > 0 && this.ship.has(t)) shipped = true;
    }
    let out = NO_ROWS;
    if (shipped) {
      const chunks = this.engine.peekRows();
      out = perTable((t): Chunks[typeof t] => {
        const c = chunks[t];
        if (!this.ship.has(t) || c.length === 0) return NO_ROWS[t];
        return { length: c.length, columns: c.columns.map((col) => (Array.isArray(col) ? col : col.slice())) };
      });
    }
    this.engine.resetRows();
    this.bufferRowStart = 0;
    if (shipped || this.sink.marks.length) yield { kind: 'rows', chunks: out };
  }

  /** Did the first compact switch of processor `cpu` replace its stand-in? Then its placeholder is found. */
  private inspect(cpu: number): void {
    const x = this.x;
    if (this.untouched[cpu] === 0 || x.pendingFileOffset(cpu) === SENTINEL_FILE_OFFSET) return;
    this.untouched[cpu] = 0;
    const buffer = x.memory.buffer;
    const count = this.engine.rowCount(CSW);
    const fo = viewColumn('f64', buffer, x.columnPtr(CSW, L.CS_FILE_OFFSET) >>> 0, count) as Float64Array;
    let p = this.bufferRowStart;
    while (p < count && fo[p] !== SENTINEL_FILE_OFFSET) p++;
    if (p === count) {
      // the buffers' processors are not those framing read
      throw new EtlError('READ_FAILED', `processor ${cpu}'s buffers are not what was read before (did the file change while it was read?)`);
    }
    // the first switch of the processor: the next compact row (all rows after p are this buffer's), or still held
    const source = viewColumn('u8', buffer, x.columnPtr(CSW, L.CS_SOURCE) >>> 0, count) as Uint8Array;
    let q = p + 1;
    while (q < count && source[q] === L.CS_SOURCE_CSWITCH) q++;
    const t = q < count ? (viewColumn('i64', buffer, x.columnPtr(CSW, L.CS_TIMESTAMP) >>> 0, count) as BigInt64Array)[q]! : x.pendingTimestamp(cpu);
    let logIndex = -1;
    let issueAt = -1;
    if (t < SENTINEL_TS) {
      // the check against the stand-in logged an issue (unless the log was full): the first of its kind in this buffer
      this.counterFix[L.D_COMPCS_TIME_MISMATCH]! -= 1;
      const dv = new DataView(buffer);
      const at = x.logPtr() >>> 0;
      for (let j = this.bufferLogStart, m = x.logCount(); j < m; j++) {
        const e = at + j * L.LOG_ENTRY_SIZE;
        if (dv.getUint32(e, true) === L.D_COMPCS_TIME_MISMATCH && dv.getUint32(e + 4, true) === L.TIME_BEFORE_PREVIOUS) {
          this.skipLog = j;
          logIndex = this.log.length + j;
          issueAt = dv.getFloat64(e + 8, true);
          break;
        }
      }
    }
    this.sink.marks.push({ row: this.rows.cswitch + p, cpu, t, logIndex, issueAt });
  }

  /**
   * Moves the engine's issues to `log`, leaving out the placeholder's: after a buffer where a placeholder
   * came out, and at the end (the engine's log holds the issues since the last call).
   */
  takeLog(): void {
    const x = this.x;
    const m = x.logCount();
    if (m === 0) return;
    // the placeholder's issue took a place in a full log: a real one after it may be missing
    if (this.skipLog >= 0 && m === L.LOG_CAPACITY && this.logOverflow === null) this.logOverflow = { logIndex: this.log.length + this.bufferLogStart };
    const dv = new DataView(x.memory.buffer);
    const at = x.logPtr() >>> 0;
    for (let j = 0; j < m && this.log.length < L.LOG_CAPACITY; j++) {
      if (j === this.skipLog) continue;
      const e = at + j * L.LOG_ENTRY_SIZE;
      this.log.push({ code: dv.getUint32(e, true), detail: dv.getUint32(e + 4, true), fileOffset: dv.getFloat64(e + 8, true) });
    }
    x.setLogCount(0);
    this.skipLog = -1;
  }
}

/** The processors that may hold a switch at the end of a fresh or exact partition: its own and those it started with. */
function exactHeldCpus(job: PartitionJob, cpus: number[]): number[] {
  if (job.start.kind !== 'exact') return cpus;
  return [...new Set([...cpus, ...job.start.held.cpu])].sort((a, b) => a - b);
}
