// The `threadStates` table (WPA's thread states, Perfetto's thread_state; the rules: docs/design/streaming.md
// "threadStates"): one row per state interval of each thread other than the idle thread, from the cswitch
// and readythread rows and the thread lifetimes — derived while a trace streams by (ThreadStatesDeriver:
// `convert`, `dump`), or for a whole decode (threadStates(): the library, the page), with memory bounded by the threads,
// CPUs, a reorder window and a hold, never by the file size. Oracles: test/helpers/thread-states-oracle.ts
// (independent, objects and BigInts) and test/helpers/thread-states-whole.ts (the whole-trace walk).
//
// Events arrive in decode order, in time order per CPU only; they are held, sorted by time, and released
// below the watermark (the least, over the CPUs seen, of the latest switch delivered: cpu-usage.ts says why
// everything before it has arrived), at most `windowEvents` held between chunks (past that the earliest go
// anyway, and an event behind the released time is applied at once and counted as late): the EventReorder
// of reorder.ts, shared with cpu-usage.ts; events at the watermark's time wait here. Released events
// of one timestamp are applied as one group, in phases that give each thread its events in the order of
// the rules (Start, switch-out, ReadyThread, switch-in, End):
//   A. each switch, in (cpu, arrival) order: whether it ends its CPU's running thread (its old thread is the
//      CPU's current one: an exit, else a switch-out of its own), and the first of its CPU closes the CPU's
//      open run (its running row; the thread's state after it is the switch-out's);
//   B. Thread events (arrival order): the lifetimes (deriveThreads' rules), Starts;
//   C. switch-outs that end no run of the thread on that CPU;
//   D. ReadyThread events (arrival order): the readying thread is the CPU's current one after phase A;
//   E. switch-ins (cpu, arrival): a run opens, closed now by the CPU's next switch of this group, or later;
//   F. Ends.
// Per thread: its state (S_ value, attributes, start tc) and how many of its runs are open: while one is,
// the thread is inside a running interval and only switch-ins count. When its runs are all closed, its
// state is the exit of the run that ended last (ties: the run that began first, then by CPU). A thread's
// interval is emitted when the next event of the thread ends it; the last one, and runs still open, at
// finish(). Before a thread's first event it is unknown from the trace's start (the least time of the
// switches, readies, Starts and Ends), unless that event is a Start; a lifetime seen only in a rundown
// (no Start) makes it known from the trace's start.
//
// Process ids: the thread's lifetime with the latest start at or before the time (a null start counts as
// earliest; ties: the later lifetime), as cpuUsage. Given the `threads` table (a whole decode) the
// lifetimes are final; streaming, they are those of the Thread events applied so far, and a row whose
// thread (or readying thread) has no lifetime yet is held (at most `holdRows`) and resolved at finish().
// (So a thread id with two lifetimes without a Start — reused after a lost Start — takes, streamed, the
// lifetime applied by then where the whole decode takes the later one.) `cpus` puts every CPU of the trace
// in the watermark from the start.
//
// Row order: emission order (roughly by the time each interval ended; held rows last); threadStates()
// (`ordered`) orders the rows by (threadId, startTime) (ties: running rows first, by CPU, then the
// thread's state): a counting sort by thread and an insertion fix-up, as they come out nearly so.
//
// Costs: nothing is allocated per event or row: an event is ES int32 words of one store, a thread TSW
// words, a CPU CSW words; a tick value is two int32 words (hi signed, lo compared unsigned), exact; events
// are ordered by (time, kind, cpu, arrival) by the reorder's sort (reorder.ts; a whole decode's once, at
// finish()); a row is staged as RW words and moved into the columns with its chunk.
//
// Two cores do this: the WebAssembly one (assembly/derive/thread-states.ts: the same records and rules with
// native i64 times), and its TypeScript twin, the class ReferenceThreadStates below (`engine: 'reference'`);
// ThreadStatesDeriver is the front over them, and its RowOutput (the chunks, `ordered`) takes the staged
// rows of either. The differential tests (test/thread-states-wasm.test.ts) hold them to the same chunks and
// stats.
import * as L from '../generated/layout.js';
import type { EngineKind } from '../engine/engine.js';
import { copyInput, deriveInstance, type DeriveExports } from '../engine/wasm/derive.js';
import { allocColumn, columnsOf, concatChunks, TABLE_COLUMNS, type ColumnChunk, type TextCells, type TypedColumn } from '../tables/schema.js';
import { Table } from '../tables/table.js';
import { IdIndex } from './lifetimes.js';
import { E_HI, E_KEY, E_LO, EventReorder, type DeriverStats } from './reorder.js';

/** The values of the `state` column. */
export const THREAD_STATE_VALUES = ['unknown', 'running', 'ready', 'waiting'] as const;
export type ThreadStateValue = (typeof THREAD_STATE_VALUES)[number];

/** What threadStates() needs of a decode. */
export type ThreadStatesInput = { cswitch: Table<'cswitch'>; readythread: Table<'readythread'>; threads: Table<'threads'> };

export interface ThreadStatesOptions {
  /** most events held for reordering (default 262 144) */
  windowEvents?: number;
  /** rows per emitted chunk (default 65 536) */
  chunkRows?: number;
  /** most rows held back until finish() for a process id not known yet (default 65 536) */
  holdRows?: number;
  /**
   * the trace's processor count (TraceInfo.numberOfProcessors): each CPU holds the watermark back from the
   * start, not from its first switch — a CPU whose first buffer is written late (a quiet one) then delays
   * the release (within the window) rather than having its events come late
   */
  cpus?: number;
  /** every row kept until finish(), then emitted as one chunk ordered by (threadId, startTime) as threadStates() orders it (memory: the rows) */
  ordered?: boolean;
  /** the trace's `threads` table, when known before the rows (a whole decode): lifetimes, Starts and Ends from it; Thread events are not needed */
  threads?: Table<'threads'>;
  /** the core: 'wasm' (the default) or its TypeScript twin 'reference' (the differential tests run both) */
  engine?: EngineKind;
}

/** The run's figures (DeriverStats, reorder.ts). */
export type ThreadStatesStats = DeriverStats;

const S_UNKNOWN = 0;
const S_RUNNING = 1;
const S_READY = 2;
const S_WAITING = 3;
/** not alive: before its Start, after its End or a switch-out as Terminated (no row) */
const S_NONE = 4;

/** KTHREAD_STATE values (docs/format.md §C.5) */
const TERMINATED = 4;
const WAITING = 5;
/** a priority not known (a priority is an i8) */
const NO_PRIORITY = 1000;

const K_THREAD = 0;
const K_READY = 1;
const K_SWITCH = 2;

// Events: ES int32 words each; the first are the reorder's (reorder.ts): E_HI, E_LO (the time) and
// E_KEY = kind << 16 | cpu (switches; other kinds: cpu 0), the order at one time.
const ES = 10;
const E_A = 3; // switch: newThreadId (if its valid bit); ready, Thread event: threadId
const E_B = 4; // switch: oldThreadId; Thread event: processId
const E_C = 5; // switch: the cswitch valid bits; Thread event: opcode; ready: cpu
const E_OUT = 6; // switch: oldThreadState | oldThreadWaitReason << 8 | oldThreadWaitMode << 16 | oldThreadPriority << 24
const E_NEW_PRI = 7; // switch: newThreadPriority
const E_CPU = 8; // switch: cpu
const E_EXIT = 9; // switch: 1 when it ends its CPU's running thread (phase A)

// Threads: TSW int32 words per slot.
const TSW = 22;
const T_TID = 0;
const T_FLAGS = 1;
const T_S = 2; // the state (S_)
const T_TC_HI = 3; // when it began (a thread inside a running interval: when the last closed run ended)
const T_TC_LO = 4;
const T_CPU = 5; // its attributes (-1: null)
const T_RTID = 6; // (RK_RTID)
const T_RPID = 7; // (RK_RPID; RK_RPID_LATER: to look up at finish())
const T_WR = 8;
const T_WM = 9;
const T_OLD = 10;
const T_PRI = 11; // NO_PRIORITY: null
const T_PEND = 12; // its runs still open
const T_GOV_HI = 13; // the run whose exit gives the state (TF_GOV): its start and cpu
const T_GOV_LO = 14;
const T_GOV_CPU = 15;
const T_FIRST_HI = 16; // the Start it began with (TF_BEGAN_START)
const T_FIRST_LO = 17;
const T_LIFE_HEAD = 18; // its lifetimes, a list (index + 1; 0: none)
const T_LIFE_TAIL = 19;
const T_LIFE_OPEN = 20; // its open lifetime (index + 1; 0: none), as deriveThreads keeps it
const T_RK = 21; // which of T_RTID, T_RPID hold a value (RK_ bits)
const RK_RTID = 1;
const RK_RPID = 2;
const RK_RPID_LATER = 4;
/** (held rows) the row has an end */
const RK_END = 8;
const TF_EXISTS = 1; // it has a state
const TF_SEEN = 2; // a lifetime without a Start: known from the trace's start
const TF_BEGAN_START = 4; // its first event was a Start (no row before it)
const TF_GOV = 8;

// Lifetimes: LTW words each.
const LTW = 5;
const LT_FLAGS = 0; // 1: has a start
const LT_HI = 1;
const LT_LO = 2;
const LT_PID = 3;
const LT_NEXT = 4; // index + 1 (0: the last)

// CPUs: CSW words each.
const CSW = 7;
const C_FLAGS = 0;
const C_CUR = 1; // newThreadId of the latest switch applied (CF_CUR)
const C_RUN_SLOT = 2; // the open run (CF_RUN): its thread's slot, start, priority
const C_RUN_HI = 3;
const C_RUN_LO = 4;
const C_RUN_PRI = 5;
const C_GROUP = 6; // the group of the latest switch applied
const CF_CUR = 1;
const CF_RUN = 2;

// Held rows: HW words each.
const HW = 14; // slot, state, cpu, rtid, rpid, RK_ bits, wr, wm, old, pri, start (2 words), end (2 words)

// Rows, staged: RW int32 words each (a null cell: 0, the valid bits the table's), moved into the columns
// a chunk at a time (or, ordered by thread, at the end).
const RW = 12;
const R_TID = 0;
const R_PID = 1;
const R_STATE = 2;
const R_START_LO = 3;
const R_START_HI = 4;
const R_END_LO = 5;
const R_END_HI = 6;
const R_CPU = 7;
const R_RTID = 8;
const R_RPID = 9;
const R_SMALL = 10; // waitReason | waitMode << 8 | oldThreadState << 16 | priority << 24
const R_VALID = 11;

const MIN32 = -0x80000000;

/** (aHi, aLo) < (bHi, bLo) as signed 64-bit values (lo words compared as unsigned) */
function lt(aHi: number, aLo: number, bHi: number, bLo: number): boolean {
  return aHi < bHi || (aHi === bHi && (aLo ^ MIN32) < (bLo ^ MIN32));
}

function grown<T extends Int32Array | Uint32Array>(a: T, n: number): T {
  const b = new (a.constructor as new (n: number) => T)(n);
  b.set(a);
  return b;
}

/** The 64-bit column as 32-bit words (lo at 2i, hi at 2i + 1). */
function words(col: BigInt64Array): Int32Array {
  return new Int32Array(col.buffer, col.byteOffset, col.length * 2);
}

const STATE_COLUMN = TABLE_COLUMNS.threadStates.findIndex((c) => c.name === 'state');
const STATE_VALUES: string[] = [...THREAD_STATE_VALUES];

/**
 * The chunk of n staged rows (RW words each, from rec): every column written in sequence, every cell
 * (`reuse`: the columns of an emitted chunk given back, ThreadStatesDeriver.recycle), and the states'
 * codes.
 */
function columnsFrom(rec: Int32Array, n: number, reuse: TypedColumn[] | null, withCodes: boolean): ColumnChunk {
  const columns = reuse ?? TABLE_COLUMNS.threadStates.map((spec) => allocColumn(spec.type, n));
  // the states as codes too (a streamed chunk's): a message to a worker sends these (ColumnChunk.textCodes);
  // new for each chunk, as a message hands them over. A whole table keeps none (4 bytes a row for as long as
  // it lives).
  const codes = new Int32Array(withCodes ? n : 0);
  const v = columnsOf('threadStates', columns);
  const start = words(v.startTime);
  const end = words(v.endTime);
  const dur = words(v.duration);
  const small = (col: Uint8Array | Int8Array) => new Uint8Array(col.buffer, col.byteOffset, col.length);
  const wr = v.waitReason;
  const wm = v.waitMode;
  const old = v.oldThreadState;
  const pri = small(v.priority);
  for (let k = 0; k < n; k++) {
    const r = k * RW;
    const valid = rec[r + R_VALID]!;
    v.threadId[k] = rec[r + R_TID]!;
    v.processId[k] = rec[r + R_PID]!;
    const state = rec[r + R_STATE]!;
    v.state[k] = THREAD_STATE_VALUES[state]!;
    if (withCodes) codes[k] = state;
    const sLo = rec[r + R_START_LO]!;
    const sHi = rec[r + R_START_HI]!;
    start[2 * k] = sLo;
    start[2 * k + 1] = sHi;
    if ((valid >>> L.TS_END_TIME) & 1) {
      const eLo = rec[r + R_END_LO]!;
      const eHi = rec[r + R_END_HI]!;
      end[2 * k] = eLo;
      end[2 * k + 1] = eHi;
      dur[2 * k] = (eLo - sLo) | 0;
      dur[2 * k + 1] = (eHi - sHi - ((eLo ^ MIN32) < (sLo ^ MIN32) ? 1 : 0)) | 0;
    } else {
      end[2 * k] = 0;
      end[2 * k + 1] = 0;
      dur[2 * k] = 0;
      dur[2 * k + 1] = 0;
    }
    v.cpu[k] = rec[r + R_CPU]!;
    v.readyingThreadId[k] = rec[r + R_RTID]!;
    v.readyingProcessId[k] = rec[r + R_RPID]!;
    const b = rec[r + R_SMALL]!;
    wr[k] = b;
    wm[k] = b >>> 8;
    old[k] = b >>> 16;
    pri[k] = b >>> 24;
    v.valid[k] = valid;
  }
  if (!withCodes) return { length: n, columns };
  const textCodes: (TextCells | undefined)[] = [];
  textCodes[STATE_COLUMN] = { codes, values: STATE_VALUES };
  return { length: n, columns, textCodes };
}

/**
 * Where staged rows go (RW words each, from either core): into chunks of `chunkRows` rows handed to onRows
 * when full and at flush(), or (ordered) all kept until flush(), then ordered by thread; `rows` counts them.
 */
class RowOutput {
  rows = 0;
  /** staged rows (RW words each): those of the chunk being filled, or (ordered) every row */
  rec = new Int32Array(0);
  n = 0;
  /** the columns of a chunk given back (recycle()), for the next one */
  private spare: TypedColumn[] | null = null;

  constructor(
    private readonly onRows: (rows: Table<'threadStates'>) => void,
    private readonly chunkRows: number,
    private readonly ordered: boolean,
  ) {}

  /** Room in `rec` for k more rows. */
  reserve(k: number): Int32Array {
    const need = (this.n + k) * RW;
    if (need > this.rec.length) this.rec = grown(this.rec, Math.max(need, Math.max(this.ordered ? 1 << 16 : Math.min(this.chunkRows, 1 << 16), 2 * (this.rec.length / RW)) * RW));
    return this.rec;
  }

  /** The row written at rec[n * RW …] (reserve(1)) is staged: the chunk goes when full. */
  commit(): void {
    this.n++;
    this.rows++;
    if (this.n === this.chunkRows && !this.ordered) this.flush();
  }

  /** Takes n staged rows (S, from row 0; borrowed until it returns). */
  put(S: Int32Array, n: number): void {
    for (let s = 0; s < n; ) {
      const k = this.ordered ? n - s : Math.min(n - s, this.chunkRows - this.n);
      this.reserve(k).set(S.subarray(s * RW, (s + k) * RW), this.n * RW);
      this.n += k;
      this.rows += k;
      s += k;
      if (this.n === this.chunkRows && !this.ordered) this.flush();
    }
  }

  /** Emits the staged rows as a chunk (ordered: by thread). */
  flush(): void {
    const n = this.n;
    if (n === 0) return;
    this.n = 0;
    const reuse = this.spare !== null && n === this.chunkRows ? this.spare : null;
    this.spare = null;
    const chunk = columnsFrom(this.ordered ? threadOrder(this.rec, n) : this.rec, n, reuse, !this.ordered);
    if (this.ordered) this.rec = new Int32Array(0);
    this.onRows(new Table('threadStates', chunk));
  }

  /** A chunk given back (ThreadStatesDeriver.recycle). */
  recycle(rows: Table<'threadStates'>): void {
    if (rows.length === this.chunkRows && rows.columns[0]!.length === this.chunkRows) this.spare = rows.columns as TypedColumn[];
  }
}

/**
 * Derives threadStates from the rows of a decode, chunk by chunk (see the file comment): by the WebAssembly
 * core, or its TypeScript twin when asked (`engine: 'reference'`).
 */
export class ThreadStatesDeriver {
  private readonly core: ReferenceThreadStates | WasmThreadStates;
  private readonly output: RowOutput;

  constructor(onRows: (rows: Table<'threadStates'>) => void, options: ThreadStatesOptions = {}) {
    this.output = new RowOutput(onRows, options.chunkRows ?? 1 << 16, options.ordered === true);
    this.core = options.engine === 'reference' ? new ReferenceThreadStates(this.output, options) : new WasmThreadStates(this.output, options);
  }

  /** Takes the rows of one chunk of the decode (values are copied: borrowed chunks are fine). Thread events are not needed given `threads`. */
  add(cswitch: Table<'cswitch'>, readythread: Table<'readythread'>, threadEvents?: Table<'threadEvents'>): void {
    this.core.add(cswitch, readythread, threadEvents);
  }

  /**
   * Gives back a chunk this deriver emitted that the caller is done with (nothing reads it any more): its
   * columns are reused for a later chunk, saving their allocation. Chunks of another size are ignored.
   */
  recycle(rows: Table<'threadStates'>): void {
    this.output.recycle(rows);
  }

  /** End of the trace: releases everything, emits each thread's last interval and the runs still open, then the held rows. */
  finish(): ThreadStatesStats {
    return this.core.finish();
  }
}

/**
 * The WebAssembly core (assembly/derive/thread-states.ts): per chunk the columns it reads are copied into
 * its memory; its rows come back staged (env.drain) and go to the output as they are.
 */
class WasmThreadStates {
  private readonly w: DeriveExports;
  /** the lifetimes are the trace's final ones (options.threads): Thread events are not needed */
  private readonly final: boolean;

  constructor(
    private readonly output: RowOutput,
    options: ThreadStatesOptions,
  ) {
    this.w = deriveInstance((n) => this.output.put(new Int32Array(this.w.memory.buffer, this.w.tsOutPtr(), n * RW), n));
    this.final = options.threads !== undefined;
    this.w.tsInit(options.windowEvents ?? 1 << 18, options.holdRows ?? 1 << 16, options.cpus ?? 0, this.final);
    if (options.threads) this.fromThreads(options.threads);
  }

  /** The `threads` table in the input region (assembly/derive/thread-states.ts tsThreads says where). */
  private fromThreads(th: Table<'threads'>): void {
    const w = this.w;
    const n = th.length;
    w.reserveInput(n, n, 0);
    const buf = w.memory.buffer;
    new BigInt64Array(buf, w.inputColumn(0), n).set(th.column('startTime').subarray(0, n));
    new Uint32Array(buf, w.inputColumn(2), n).set(th.column('threadId').subarray(0, n));
    new Uint32Array(buf, w.inputColumn(3), n).set(th.column('processId').subarray(0, n));
    new BigInt64Array(buf, w.inputColumn(5), n).set(th.column('endTime').subarray(0, n));
    const has = new Uint8Array(buf, w.inputColumn(4), n);
    const valid = th.column('valid');
    for (let i = 0; i < n; i++) has[i] = ((valid[i]! >>> L.TH_START_TIME) & 1) | (((valid[i]! >>> L.TH_END_TIME) & 1) << 1);
    w.tsThreads(n);
  }

  add(cswitch: Table<'cswitch'>, readythread: Table<'readythread'>, threadEvents?: Table<'threadEvents'>): void {
    const w = this.w;
    const nT = this.final || !threadEvents ? 0 : threadEvents.length;
    copyInput(w, cswitch, readythread, threadEvents, nT);
    w.tsAdd(nT, readythread.length, cswitch.length);
  }

  finish(): ThreadStatesStats {
    const w = this.w;
    w.tsFinish();
    this.output.flush();
    return { rows: this.output.rows, lateEvents: w.tsStat(1), maxHeld: w.tsStat(2), threads: w.tsStat(3), heldRows: w.tsStat(4), unresolvedRows: w.tsStat(5) };
  }
}

/** The TypeScript core: the twin of the WebAssembly one (see the file comment). */
class ReferenceThreadStates {
  /** the events (ES words each, in its store), held and released in time order to apply() (a whole decode's: all at finish()) */
  private readonly R: EventReorder;
  // threads
  private readonly tids = new IdIndex();
  private TS = new Int32Array(256 * TSW);
  private nSlots = 0;
  private LT = new Int32Array(256 * LTW);
  private nLifetimes = 0;
  // CPUs
  private CS = new Int32Array(0);
  private cpuCap = 0;
  private group = 0;
  /** the trace's start: (set, hi, lo); threads known before it is, waiting for it */
  private readonly t0 = new Int32Array(3);
  private atT0: number[] = [];
  private readonly final: boolean;
  private readonly holdRows: number;
  private hold = new Int32Array(0);
  private nHold = 0;
  private readonly stats: ThreadStatesStats = { rows: 0, lateEvents: 0, maxHeld: 0, threads: 0, heldRows: 0, unresolvedRows: 0 };

  constructor(
    private readonly output: RowOutput,
    options: ThreadStatesOptions,
  ) {
    this.R = new EventReorder({ words: ES, window: options.windowEvents ?? 1 << 18, atWatermark: false, apply: (order, from, to) => this.apply(order, from, to) });
    this.holdRows = options.holdRows ?? 1 << 16;
    this.final = options.threads !== undefined;
    if (options.cpus) {
      this.ensureCpu(options.cpus - 1);
      this.R.watchCpus(options.cpus);
    }
    if (options.threads) this.fromThreads(options.threads);
  }

  /** The lifetimes of a `threads` table, its Starts and Ends as events, its lifetimes without a Start seen. */
  private fromThreads(th: Table<'threads'>): void {
    const tid = th.column('threadId');
    const pid = th.column('processId');
    const start = words(th.column('startTime'));
    const end = words(th.column('endTime'));
    const valid = th.column('valid');
    const n = th.length;
    let starts = 0;
    let ends = 0;
    for (let i = 0; i < n; i++) {
      const s = this.slotOf(tid[i]!);
      const hasStart = ((valid[i]! >>> L.TH_START_TIME) & 1) === 1;
      this.addLifetime(s, hasStart, start[2 * i + 1]!, start[2 * i]!, pid[i]!);
      if (hasStart) starts++;
      else if (tid[i] !== 0) this.markSeen(s);
      if ((valid[i]! >>> L.TH_END_TIME) & 1) ends++;
    }
    const R = this.R;
    R.begin(starts + ends);
    for (let pass = 0; pass < 2; pass++) {
      const bit = pass === 0 ? L.TH_START_TIME : L.TH_END_TIME;
      const w = pass === 0 ? start : end;
      for (let i = 0; i < n; i++) {
        if (((valid[i]! >>> bit) & 1) === 0) continue;
        const E = R.E;
        const e = R.top * ES;
        E[e + E_HI] = w[2 * i + 1]!;
        E[e + E_LO] = w[2 * i]!;
        E[e + E_KEY] = K_THREAD << 16;
        E[e + E_A] = tid[i]!;
        E[e + E_B] = pid[i]!;
        E[e + E_C] = pass === 0 ? L.OPCODE_START : L.OPCODE_END;
        R.commit();
      }
    }
    R.hold();
  }

  /** The slot of thread `tid` (made if new). */
  private slotOf(tid: number): number {
    const s = this.tids.get(tid);
    if (s >= 0) return s;
    const made = this.nSlots++;
    if (this.nSlots * TSW > this.TS.length) this.TS = grown(this.TS, 2 * this.TS.length);
    this.TS.fill(0, made * TSW, made * TSW + TSW);
    this.TS[made * TSW + T_TID] = tid;
    this.tids.set(tid, made);
    return made;
  }

  private addLifetime(s: number, hasStart: boolean, hi: number, lo: number, pid: number): number {
    const l = this.nLifetimes++;
    if (this.nLifetimes * LTW > this.LT.length) this.LT = grown(this.LT, 2 * this.LT.length);
    const x = l * LTW;
    this.LT[x + LT_FLAGS] = hasStart ? 1 : 0;
    this.LT[x + LT_HI] = hi;
    this.LT[x + LT_LO] = lo;
    this.LT[x + LT_PID] = pid;
    this.LT[x + LT_NEXT] = 0;
    const t = s * TSW;
    const tail = this.TS[t + T_LIFE_TAIL]!;
    if (tail === 0) this.TS[t + T_LIFE_HEAD] = l + 1;
    else this.LT[(tail - 1) * LTW + LT_NEXT] = l + 1;
    this.TS[t + T_LIFE_TAIL] = l + 1;
    return l;
  }

  /** The process of slot s at (hi, lo): the lifetime with the latest start at or before it (no start: earliest; ties: the later); -1: none. */
  private pidOf(s: number, hi: number, lo: number): number {
    const TS = this.TS;
    if (TS[s * TSW + T_TID] === 0) return 0;
    const LT = this.LT;
    let best = -1;
    for (let l = TS[s * TSW + T_LIFE_HEAD]! - 1; l >= 0; l = LT[l * LTW + LT_NEXT]! - 1) {
      const x = l * LTW;
      if (LT[x + LT_FLAGS]! & 1) {
        const sHi = LT[x + LT_HI]!;
        const sLo = LT[x + LT_LO]!;
        if (lt(hi, lo, sHi, sLo)) continue;
        if (best < 0 || (LT[best + LT_FLAGS]! & 1) === 0 || !lt(sHi, sLo, LT[best + LT_HI]!, LT[best + LT_LO]!)) best = x;
      } else if (best < 0 || (LT[best + LT_FLAGS]! & 1) === 0) best = x;
    }
    return best < 0 ? -1 : LT[best + LT_PID]! >>> 0;
  }

  private ensureCpu(cpu: number): void {
    if (cpu < this.cpuCap) return;
    let cap = Math.max(8, this.cpuCap);
    while (cap <= cpu) cap *= 2;
    this.CS = grown(this.CS, cap * CSW);
    for (let c = this.cpuCap; c < cap; c++) this.CS[c * CSW + C_GROUP] = -1;
    this.cpuCap = cap;
  }

  /** Takes the rows of one chunk of the decode (values are copied: borrowed chunks are fine). Thread events are not needed given `threads`. */
  add(cswitch: Table<'cswitch'>, readythread: Table<'readythread'>, threadEvents?: Table<'threadEvents'>): void {
    const nThread = this.final || !threadEvents ? 0 : threadEvents.length;
    const R = this.R;
    R.begin(nThread + readythread.length + cswitch.length);
    const E = R.E;
    if (nThread > 0) {
      const ts = words(threadEvents!.column('timestamp'));
      const tid = threadEvents!.column('threadId');
      const pid = threadEvents!.column('processId');
      const op = threadEvents!.column('opcode');
      for (let i = 0; i < nThread; i++) {
        const e = R.top * ES;
        E[e + E_HI] = ts[2 * i + 1]!;
        E[e + E_LO] = ts[2 * i]!;
        E[e + E_KEY] = K_THREAD << 16;
        E[e + E_A] = tid[i]!;
        E[e + E_B] = pid[i]!;
        E[e + E_C] = op[i]!;
        R.commit();
      }
    }
    if (readythread.length > 0) {
      const ts = words(readythread.column('timestamp'));
      const tid = readythread.column('threadId');
      const cpu = readythread.column('cpu');
      for (let i = 0; i < readythread.length; i++) {
        const e = R.top * ES;
        E[e + E_HI] = ts[2 * i + 1]!;
        E[e + E_LO] = ts[2 * i]!;
        E[e + E_KEY] = K_READY << 16;
        E[e + E_A] = tid[i]!;
        E[e + E_C] = cpu[i]!;
        R.commit();
      }
    }
    if (cswitch.length > 0) {
      const ts = words(cswitch.column('timestamp'));
      const cpu = cswitch.column('cpu');
      const valid = cswitch.column('valid');
      const newTid = cswitch.column('newThreadId');
      const oldTid = cswitch.column('oldThreadId');
      const oldState = cswitch.column('oldThreadState');
      const oldWr = cswitch.column('oldThreadWaitReason');
      const oldWm = cswitch.column('oldThreadWaitMode');
      const newPri = cswitch.column('newThreadPriority');
      const oldPri = cswitch.column('oldThreadPriority');
      for (let i = 0; i < cswitch.length; i++) {
        const c = cpu[i]!;
        if (c >= this.cpuCap) this.ensureCpu(c);
        const e = R.top * ES;
        const hi = ts[2 * i + 1]!;
        const lo = ts[2 * i]!;
        E[e + E_HI] = hi;
        E[e + E_LO] = lo;
        E[e + E_KEY] = (K_SWITCH << 16) | c;
        E[e + E_A] = newTid[i]!;
        E[e + E_B] = oldTid[i]!;
        E[e + E_C] = valid[i]!;
        E[e + E_OUT] = oldState[i]! | (oldWr[i]! << 8) | (oldWm[i]! << 16) | ((oldPri[i]! & 0xff) << 24);
        E[e + E_NEW_PRI] = newPri[i]!;
        E[e + E_CPU] = c;
        R.switchAt(c, hi, lo); // the CPU's latest switch delivered
        R.commit();
      }
    }
    if (this.final) R.hold();
    else R.release(false);
  }

  /** Applies the sorted events at positions order[from, to), a group of one timestamp at a time. */
  private apply(order: Int32Array, from: number, to: number): void {
    const E = this.R.E;
    let i = from;
    while (i < to) {
      const e0 = order[i]! * ES;
      const hi = E[e0 + E_HI]!;
      const lo = E[e0 + E_LO]!;
      let j = i + 1;
      while (j < to && E[order[j]! * ES + E_LO] === lo && E[order[j]! * ES + E_HI] === hi) j++;
      if (this.t0[0] === 0) this.startOfTrace(order, i, j, hi, lo);
      const g = ++this.group;
      if (j === i + 1) {
        // one event (the usual case): its phases
        const kind = E[e0 + E_KEY]! >>> 16;
        if (kind === K_SWITCH) {
          this.closing(e0, g, hi, lo);
          this.switchOut(e0, hi, lo);
          this.switchIn(e0, hi, lo, -1);
        } else if (kind === K_READY) this.ready(e0, hi, lo);
        else {
          this.thread(e0, hi, lo);
          this.end(e0, hi, lo);
        }
      } else this.applyGroup(order, i, j, hi, lo, g);
      i = j;
    }
  }

  /** The trace's start is the time of the first group with a switch, ready, Start or End. */
  private startOfTrace(order: Int32Array, a: number, b: number, hi: number, lo: number): void {
    const E = this.R.E;
    for (let k = a; k < b; k++) {
      const e = order[k]! * ES;
      if (E[e + E_KEY]! >>> 16 !== K_THREAD || E[e + E_C] === L.OPCODE_START || E[e + E_C] === L.OPCODE_END) {
        this.setT0(hi, lo);
        return;
      }
    }
  }

  /** The events order[a, b) of one timestamp (several), phase by phase (the file comment). */
  private applyGroup(order: Int32Array, a: number, b: number, hi: number, lo: number, g: number): void {
    const E = this.R.E;
    for (let k = a; k < b; k++) if (E[order[k]! * ES + E_KEY]! >>> 16 === K_SWITCH) this.closing(order[k]! * ES, g, hi, lo);
    for (let k = a; k < b; k++) if (E[order[k]! * ES + E_KEY]! >>> 16 === K_THREAD) this.thread(order[k]! * ES, hi, lo);
    for (let k = a; k < b; k++) if (E[order[k]! * ES + E_KEY]! >>> 16 === K_SWITCH) this.switchOut(order[k]! * ES, hi, lo);
    for (let k = a; k < b; k++) if (E[order[k]! * ES + E_KEY]! >>> 16 === K_READY) this.ready(order[k]! * ES, hi, lo);
    for (let k = a; k < b; k++) {
      const e = order[k]! * ES;
      if (E[e + E_KEY]! >>> 16 !== K_SWITCH) continue;
      // the CPU's next switch of this group closes the run at once
      this.switchIn(e, hi, lo, k + 1 < b && E[order[k + 1]! * ES + E_KEY] === E[e + E_KEY] ? order[k + 1]! * ES : -1);
    }
    for (let k = a; k < b; k++) if (E[order[k]! * ES + E_KEY]! >>> 16 === K_THREAD) this.end(order[k]! * ES, hi, lo);
  }

  /** Phase A, a switch at e: whether it ends its CPU's running thread; the first of its CPU in group g closes the CPU's open run. */
  private closing(e: number, g: number, hi: number, lo: number): void {
    const E = this.R.E;
    const CS = this.CS;
    const c = E[e + E_CPU]!;
    const x = c * CSW;
    const f = CS[x + C_FLAGS]!;
    E[e + E_EXIT] = f & CF_CUR && CS[x + C_CUR] === E[e + E_B] ? 1 : 0;
    if (CS[x + C_GROUP] !== g) {
      CS[x + C_GROUP] = g;
      if (f & CF_RUN) {
        CS[x + C_FLAGS]! &= ~CF_RUN;
        this.closeRun(CS[x + C_RUN_SLOT]!, CS[x + C_RUN_HI]!, CS[x + C_RUN_LO]!, c, CS[x + C_RUN_PRI]!, e, hi, lo);
      }
    }
    if ((E[e + E_C]! >>> L.CS_NEW_THREAD_ID) & 1) {
      CS[x + C_FLAGS]! |= CF_CUR;
      CS[x + C_CUR] = E[e + E_A]!;
    } else CS[x + C_FLAGS]! &= ~CF_CUR;
  }

  /** Phase B, a Thread event at e: the lifetimes (streaming), a Start. */
  private thread(e: number, hi: number, lo: number): void {
    const E = this.R.E;
    const tid = E[e + E_A]!;
    const op = E[e + E_C]!;
    const s = this.slotOf(tid);
    if (!this.final) this.applyLifetime(s, tid, op, E[e + E_B]!, hi, lo);
    if (tid !== 0 && op === L.OPCODE_START) this.item(s, K_START_ITEM, e, hi, lo, -1);
  }

  /** Phase C, a switch at e: the switch-out of its old thread, unless it ends that thread's run on this CPU. */
  private switchOut(e: number, hi: number, lo: number): void {
    const E = this.R.E;
    if (E[e + E_EXIT] === 1 || E[e + E_B] === 0) return;
    this.item(this.slotOf(E[e + E_B]!), K_OUT_ITEM, e, hi, lo, -1);
  }

  /** Phase D, a ReadyThread event at e. */
  private ready(e: number, hi: number, lo: number): void {
    if (this.R.E[e + E_A] === 0) return;
    this.item(this.slotOf(this.R.E[e + E_A]!), K_READY_ITEM, e, hi, lo, -1);
  }

  /** Phase E, a switch at e: the switch-in of its new thread (`next`: the CPU's next switch of this group, or -1). */
  private switchIn(e: number, hi: number, lo: number, next: number): void {
    const E = this.R.E;
    if (((E[e + E_C]! >>> L.CS_NEW_THREAD_ID) & 1) === 0 || E[e + E_A] === 0) return;
    this.item(this.slotOf(E[e + E_A]!), K_RUN_ITEM, e, hi, lo, next);
  }

  /** Phase F, a Thread event at e: an End. */
  private end(e: number, hi: number, lo: number): void {
    const E = this.R.E;
    if (E[e + E_C] !== L.OPCODE_END || E[e + E_A] === 0) return;
    this.item(this.slotOf(E[e + E_A]!), K_END_ITEM, e, hi, lo, -1);
  }

  /** The trace's start is known: the threads known before it begin there. */
  private setT0(hi: number, lo: number): void {
    this.t0[0] = 1;
    this.t0[1] = hi;
    this.t0[2] = lo;
    for (const s of this.atT0) {
      this.TS[s * TSW + T_TC_HI] = hi;
      this.TS[s * TSW + T_TC_LO] = lo;
    }
    this.atT0 = [];
  }

  /** A Thread event of slot s, as deriveThreads applies it: a Start, or any event without an open lifetime, opens one; an End closes it. */
  private applyLifetime(s: number, tid: number, op: number, pid: number, hi: number, lo: number): void {
    const t = s * TSW;
    if (op === L.OPCODE_START || this.TS[t + T_LIFE_OPEN] === 0) {
      const l = this.addLifetime(s, op === L.OPCODE_START, hi, lo, pid);
      this.TS[t + T_LIFE_OPEN] = l + 1;
      if (op !== L.OPCODE_START && tid !== 0) this.markSeen(s);
    }
    if (op === L.OPCODE_END) this.TS[t + T_LIFE_OPEN] = 0;
  }

  /** A lifetime of slot s without a Start: the thread is known from the trace's start. */
  private markSeen(s: number): void {
    const t = s * TSW;
    const TS = this.TS;
    const f = TS[t + T_FLAGS]!;
    if (f & TF_SEEN) return;
    TS[t + T_FLAGS] = f | TF_SEEN;
    if ((f & TF_EXISTS) === 0) {
      this.create(s, S_UNKNOWN);
      return;
    }
    // it began with a Start: unknown from the trace's start until then
    if (f & TF_BEGAN_START && this.t0[0] === 1 && (TS[t + T_FIRST_HI] !== this.t0[1] || TS[t + T_FIRST_LO] !== this.t0[2])) {
      this.emit(s, S_UNKNOWN, -1, 0, 0, 0, -1, -1, -1, NO_PRIORITY, this.t0[1]!, this.t0[2]!, true, TS[t + T_FIRST_HI]!, TS[t + T_FIRST_LO]!);
    }
  }

  /** Slot s gets a state, from the trace's start. */
  private create(s: number, state: number): void {
    const t = s * TSW;
    const TS = this.TS;
    TS[t + T_FLAGS]! |= TF_EXISTS;
    this.set(s, state);
    TS[t + T_PEND] = 0;
    if (this.t0[0] === 1) {
      TS[t + T_TC_HI] = this.t0[1]!;
      TS[t + T_TC_LO] = this.t0[2]!;
    } else this.atT0.push(s);
  }

  private set(s: number, state: number): void {
    const t = s * TSW;
    const TS = this.TS;
    TS[t + T_S] = state;
    TS[t + T_CPU] = TS[t + T_WR] = TS[t + T_WM] = TS[t + T_OLD] = -1;
    TS[t + T_RK] = 0;
    TS[t + T_PRI] = NO_PRIORITY;
  }

  /**
   * One event of thread slot s at (hi, lo): a Start, a switch-out (switch at e), a ReadyThread (at e), a
   * switch-in (at e; `next`: the CPU's next switch in this group, or -1), an End.
   */
  private item(s: number, kind: number, e: number, hi: number, lo: number, next: number): void {
    const t = s * TSW;
    const TS = this.TS;
    const E = this.R.E;
    if ((TS[t + T_FLAGS]! & TF_EXISTS) === 0) {
      this.create(s, kind === K_START_ITEM ? S_NONE : S_UNKNOWN);
      if (kind === K_START_ITEM) {
        TS[t + T_FLAGS]! |= TF_BEGAN_START;
        TS[t + T_FIRST_HI] = hi;
        TS[t + T_FIRST_LO] = lo;
      }
    }
    if (TS[t + T_PEND]! > 0) {
      // inside a running interval: only switch-ins count
      if (kind === K_RUN_ITEM) this.openRun(s, e, hi, lo, next);
      return;
    }
    // the state before ends here (unless it lasted no tick)
    const st = TS[t + T_S]!;
    if (st !== S_NONE && (hi !== TS[t + T_TC_HI] || lo !== TS[t + T_TC_LO])) {
      // a ready interval of unknown priority ended by a switch-in: the priority it was switched in with
      if (kind === K_RUN_ITEM && st === S_READY && TS[t + T_PRI] === NO_PRIORITY && (E[e + E_C]! >>> L.CS_NEW_THREAD_PRIORITY) & 1) TS[t + T_PRI] = E[e + E_NEW_PRI]!;
      this.emitState(s, true, hi, lo);
    }
    switch (kind) {
      case K_RUN_ITEM:
        TS[t + T_FLAGS]! &= ~TF_GOV; // a new running interval
        this.openRun(s, e, hi, lo, next);
        return;
      case K_OUT_ITEM:
        this.exit(s, e);
        break;
      case K_READY_ITEM: {
        this.set(s, S_READY);
        const c = E[e + E_C]!;
        TS[t + T_CPU] = c;
        const x = c * CSW;
        if (c < this.cpuCap && this.CS[x + C_FLAGS]! & CF_CUR) {
          const r = this.CS[x + C_CUR]!;
          TS[t + T_RTID] = r;
          const rs = this.tids.get(r);
          const pid = r === 0 ? 0 : rs < 0 ? -1 : this.pidOf(rs, hi, lo);
          TS[t + T_RPID] = pid;
          TS[t + T_RK] = RK_RTID | (pid >= 0 ? RK_RPID : this.final ? 0 : RK_RPID_LATER);
        }
        break;
      }
      case K_START_ITEM:
        this.set(s, S_UNKNOWN);
        break;
      case K_END_ITEM:
        this.set(s, S_NONE);
        break;
    }
    TS[t + T_TC_HI] = hi;
    TS[t + T_TC_LO] = lo;
  }

  /** A switch-in of slot s (switch at e): closed now by `next` (the CPU's next switch, same time), or the CPU's open run. */
  private openRun(s: number, e: number, hi: number, lo: number, next: number): void {
    const E = this.R.E;
    this.TS[s * TSW + T_PEND]!++;
    const c = E[e + E_CPU]!;
    const pri = (E[e + E_C]! >>> L.CS_NEW_THREAD_PRIORITY) & 1 ? E[e + E_NEW_PRI]! : NO_PRIORITY;
    if (next >= 0) {
      this.closeRun(s, hi, lo, c, pri, next, hi, lo);
      return;
    }
    const x = c * CSW;
    this.CS[x + C_FLAGS]! |= CF_RUN;
    this.CS[x + C_RUN_SLOT] = s;
    this.CS[x + C_RUN_HI] = hi;
    this.CS[x + C_RUN_LO] = lo;
    this.CS[x + C_RUN_PRI] = pri;
  }

  /**
   * The run of slot s from (sHi, sLo) on cpu ends at (eHi, eLo) with the switch at e: its running row; the
   * thread's state after its running interval is that switch's exit when this run ends last (ties: the
   * run that began first, then by CPU).
   */
  private closeRun(s: number, sHi: number, sLo: number, cpu: number, pri: number, e: number, eHi: number, eLo: number): void {
    this.emit(s, S_RUNNING, cpu, 0, 0, 0, -1, -1, -1, pri, sHi, sLo, true, eHi, eLo);
    const t = s * TSW;
    const TS = this.TS;
    TS[t + T_PEND]!--;
    const tcHi = TS[t + T_TC_HI]!;
    const tcLo = TS[t + T_TC_LO]!;
    if (TS[t + T_FLAGS]! & TF_GOV) {
      if (lt(eHi, eLo, tcHi, tcLo)) return;
      if (eHi === tcHi && eLo === tcLo) {
        const gHi = TS[t + T_GOV_HI]!;
        const gLo = TS[t + T_GOV_LO]!;
        if (!(lt(sHi, sLo, gHi, gLo) || (sHi === gHi && sLo === gLo && cpu < TS[t + T_GOV_CPU]!))) return;
      }
    }
    TS[t + T_FLAGS]! |= TF_GOV;
    TS[t + T_GOV_HI] = sHi;
    TS[t + T_GOV_LO] = sLo;
    TS[t + T_GOV_CPU] = cpu;
    this.exit(s, e);
    TS[t + T_TC_HI] = eHi;
    TS[t + T_TC_LO] = eLo;
  }

  /** The state of slot s after the switch at e switched it out (unknown when it switched out another thread: lost events). */
  private exit(s: number, e: number): void {
    const E = this.R.E;
    const TS = this.TS;
    const t = s * TSW;
    const v = E[e + E_C]!;
    if (E[e + E_B] !== TS[t + T_TID] || ((v >>> L.CS_OLD_THREAD_STATE) & 1) === 0) return this.set(s, S_UNKNOWN);
    const out = E[e + E_OUT]!;
    const state = out & 0xff;
    if (state === TERMINATED) return this.set(s, S_NONE);
    if (state === WAITING) {
      this.set(s, S_WAITING);
      if ((v >>> L.CS_OLD_THREAD_WAIT_REASON) & 1) TS[t + T_WR] = (out >>> 8) & 0xff;
      if ((v >>> L.CS_OLD_THREAD_WAIT_MODE) & 1) TS[t + T_WM] = (out >>> 16) & 0xff;
    } else {
      this.set(s, S_READY); // preempted
      TS[t + T_CPU] = E[e + E_CPU]!;
    }
    TS[t + T_OLD] = state;
    if ((v >>> L.CS_OLD_THREAD_PRIORITY) & 1) TS[t + T_PRI] = out >> 24;
  }

  /** The row of slot s's state, from its start to (eHi, eLo) (or open). */
  private emitState(s: number, hasEnd: boolean, eHi: number, eLo: number): void {
    const t = s * TSW;
    const TS = this.TS;
    this.emit(s, TS[t + T_S]!, TS[t + T_CPU]!, TS[t + T_RK]!, TS[t + T_RTID]!, TS[t + T_RPID]!, TS[t + T_WR]!, TS[t + T_WM]!, TS[t + T_OLD]!, TS[t + T_PRI]!, TS[t + T_TC_HI]!, TS[t + T_TC_LO]!, hasEnd, eHi, eLo);
  }

  /**
   * A row of slot s (its process looked up at the start; rk: which of rtid, rpid hold a value, as int32
   * bits); held when a process id is not known yet.
   */
  private emit(s: number, state: number, cpu: number, rk: number, rtid: number, rpid: number, wr: number, wm: number, old: number, pri: number, sHi: number, sLo: number, hasEnd: boolean, eHi: number, eLo: number): void {
    const pid = this.pidOf(s, sHi, sLo);
    if (!this.final && (pid < 0 || rk & RK_RPID_LATER)) {
      if (this.nHold < this.holdRows) {
        if ((this.nHold + 1) * HW > this.hold.length) this.hold = grown(this.hold, Math.max(1024 * HW, 2 * this.hold.length));
        const H = this.hold;
        const h = this.nHold++ * HW;
        H[h] = s;
        H[h + 1] = state;
        H[h + 2] = cpu;
        H[h + 3] = rtid;
        H[h + 4] = rpid;
        H[h + 5] = rk | (hasEnd ? RK_END : 0);
        H[h + 6] = wr;
        H[h + 7] = wm;
        H[h + 8] = old;
        H[h + 9] = pri;
        H[h + 10] = sHi;
        H[h + 11] = sLo;
        H[h + 12] = eHi;
        H[h + 13] = eLo;
        this.stats.heldRows++;
        return;
      }
      this.stats.unresolvedRows++;
    }
    this.put(this.TS[s * TSW + T_TID]!, pid, state, cpu, rk & RK_RTID ? rtid >>> 0 : -1, rk & RK_RPID ? rpid >>> 0 : -1, wr, wm, old, pri, sHi, sLo, hasEnd, eHi, eLo);
  }

  /** Stages a row (-1: null), emitting the chunk when full. */
  private put(tid: number, pid: number, state: number, cpu: number, rtid: number, rpid: number, wr: number, wm: number, old: number, pri: number, sHi: number, sLo: number, hasEnd: boolean, eHi: number, eLo: number): void {
    const R = this.output.reserve(1);
    const r = this.output.n * RW;
    let v = (1 << L.TS_THREAD_ID) | (1 << L.TS_STATE) | (1 << L.TS_START_TIME) | (1 << L.TS_VALID);
    R[r + R_TID] = tid;
    R[r + R_STATE] = state;
    R[r + R_START_LO] = sLo;
    R[r + R_START_HI] = sHi;
    if (pid >= 0) v |= 1 << L.TS_PROCESS_ID;
    R[r + R_PID] = pid >= 0 ? pid : 0;
    if (hasEnd) v |= (1 << L.TS_END_TIME) | (1 << L.TS_DURATION);
    R[r + R_END_LO] = hasEnd ? eLo : 0;
    R[r + R_END_HI] = hasEnd ? eHi : 0;
    if (cpu >= 0) v |= 1 << L.TS_CPU;
    R[r + R_CPU] = cpu >= 0 ? cpu : 0;
    if (rtid >= 0) v |= 1 << L.TS_READYING_THREAD_ID;
    R[r + R_RTID] = rtid >= 0 ? rtid : 0;
    if (rpid >= 0) v |= 1 << L.TS_READYING_PROCESS_ID;
    R[r + R_RPID] = rpid >= 0 ? rpid : 0;
    let b = 0;
    if (wr >= 0) {
      b = wr;
      v |= 1 << L.TS_WAIT_REASON;
    }
    if (wm >= 0) {
      b |= wm << 8;
      v |= 1 << L.TS_WAIT_MODE;
    }
    if (old >= 0) {
      b |= old << 16;
      v |= 1 << L.TS_OLD_THREAD_STATE;
    }
    if (pri !== NO_PRIORITY) {
      b |= (pri & 0xff) << 24;
      v |= 1 << L.TS_PRIORITY;
    }
    R[r + R_SMALL] = b;
    R[r + R_VALID] = v;
    this.output.commit();
  }

  /** End of the trace: releases everything, emits each thread's last interval and the runs still open, then the held rows. */
  finish(): ThreadStatesStats {
    this.R.release(true);
    const TS = this.TS;
    if (this.t0[0] === 1) {
      for (let s = 0; s < this.nSlots; s++) {
        const t = s * TSW;
        if ((TS[t + T_FLAGS]! & TF_EXISTS) === 0 || TS[t + T_PEND]! > 0 || TS[t + T_S] === S_NONE) continue;
        this.emitState(s, false, 0, 0);
      }
    }
    for (let c = 0; c < this.cpuCap; c++) {
      const x = c * CSW;
      if ((this.CS[x + C_FLAGS]! & CF_RUN) === 0) continue;
      this.CS[x + C_FLAGS]! &= ~CF_RUN;
      this.emit(this.CS[x + C_RUN_SLOT]!, S_RUNNING, c, 0, 0, 0, -1, -1, -1, this.CS[x + C_RUN_PRI]!, this.CS[x + C_RUN_HI]!, this.CS[x + C_RUN_LO]!, false, 0, 0);
    }
    // the held rows, their process ids from the final lifetimes
    const H = this.hold;
    for (let h = 0; h < this.nHold * HW; h += HW) {
      const s = H[h]!;
      const rk = H[h + 5]!;
      const rtid = rk & RK_RTID ? H[h + 3]! >>> 0 : -1;
      let rpid = rk & RK_RPID ? H[h + 4]! >>> 0 : -1;
      if (rk & RK_RPID_LATER) {
        const rs = this.tids.get(H[h + 3]!);
        rpid = rs < 0 ? -1 : this.pidOf(rs, H[h + 10]!, H[h + 11]!);
      }
      this.put(TS[s * TSW + T_TID]!, this.pidOf(s, H[h + 10]!, H[h + 11]!), H[h + 1]!, H[h + 2]!, rtid, rpid, H[h + 6]!, H[h + 7]!, H[h + 8]!, H[h + 9]!, H[h + 10]!, H[h + 11]!, (rk & RK_END) !== 0, H[h + 12]!, H[h + 13]!);
    }
    this.nHold = 0;
    this.output.flush();
    this.stats.rows = this.output.rows;
    this.stats.threads = this.nSlots;
    this.stats.lateEvents = this.R.lateEvents;
    this.stats.maxHeld = this.R.maxHeld;
    return { ...this.stats };
  }
}

// items of a thread (item())
const K_START_ITEM = 0;
const K_OUT_ITEM = 1;
const K_READY_ITEM = 2;
const K_RUN_ITEM = 3;
const K_END_ITEM = 4;

/**
 * The whole threadStates table of a decoded trace, ordered by (threadId, startTime) (ties: running rows
 * first, by CPU, then the thread's state): the deriver given every row at once and the final lifetimes.
 */
export function threadStates(r: ThreadStatesInput): Table<'threadStates'> {
  let out: Table<'threadStates'> | null = null;
  const d = new ThreadStatesDeriver((t) => (out = t), { threads: r.threads, ordered: true });
  d.add(r.cswitch, r.readythread);
  d.finish();
  return out ?? new Table('threadStates', concatChunks('threadStates', []));
}

/** Whether the record at a[x] comes before the one at b[y] in one thread's order: (startTime, running first by cpu, then the others). */
function precedes(a: Int32Array, x: number, b: Int32Array, y: number): boolean {
  if (a[x + R_TID] !== b[y + R_TID]) return false;
  const hx = a[x + R_START_HI]!;
  const hy = b[y + R_START_HI]!;
  if (hx !== hy) return hx < hy;
  const lx = a[x + R_START_LO]! ^ MIN32;
  const ly = b[y + R_START_LO]! ^ MIN32;
  if (lx !== ly) return lx < ly;
  const tx = (a[x + R_STATE] === S_RUNNING ? 0 : 0x10000) | a[x + R_CPU]!;
  const ty = (b[y + R_STATE] === S_RUNNING ? 0 : 0x10000) | b[y + R_CPU]!;
  return tx < ty;
}

/**
 * The staged rows rec[0, n) (emission order) in (threadId, startTime) order, ties: running rows (by cpu),
 * then the others, then emission order — as a new array of records. A thread's rows are emitted nearly in
 * that order (each when its interval ends), so: a stable counting sort by thread (the distinct ids sorted),
 * each record read in sequence and written to its place, then per thread an insertion sort, which moves
 * only the few records out of place.
 */
function threadOrder(rec: Int32Array, n: number): Int32Array {
  const ids = new IdIndex();
  const distinct: number[] = [];
  const dense = new Uint32Array(n);
  for (let i = 0; i < n; i++) {
    const t = rec[i * RW + R_TID]!;
    let k = ids.get(t);
    if (k < 0) {
      k = distinct.length;
      ids.set(t, k);
      distinct.push(t >>> 0);
    }
    dense[i] = k;
  }
  const byId = distinct.map((_, k) => k).sort((a, b) => distinct[a]! - distinct[b]!);
  const at = new Uint32Array(distinct.length);
  for (let i = 0; i < n; i++) at[dense[i]!]!++;
  // at[k]: the next position of id k's rows, in id order
  let sum = 0;
  for (const k of byId) {
    const c = at[k]!;
    at[k] = sum;
    sum += c;
  }
  const out = new Int32Array(n * RW);
  for (let i = 0; i < n; i++) {
    const to = at[dense[i]!]!++ * RW;
    for (let w = 0, from = i * RW; w < RW; w++) out[to + w] = rec[from + w]!;
  }
  // per thread: insertion by (startTime, tie)
  const held = new Int32Array(RW);
  for (let k = 1; k < n; k++) {
    if (!precedes(out, k * RW, out, (k - 1) * RW)) continue;
    for (let w = 0; w < RW; w++) held[w] = out[k * RW + w]!;
    let j = k;
    for (; j > 0 && precedes(held, 0, out, (j - 1) * RW); j--) out.copyWithin(j * RW, (j - 1) * RW, j * RW);
    out.set(held, j * RW);
  }
  return out;
}
