// The `cpuUsage` table (WPA's CPU Usage (Precise); definitions: README "cpuUsage"): the one derivation,
// for a whole decode (cpuUsage() in src/analysis/cpu.ts) and while a trace streams by (the CLI's `cpu` and
// `dump`, convert, the page), with memory bounded by threads, CPUs, a reorder window and a hold — never by
// the file size. The independent oracles are in test/helpers/cpu-usage-oracle.ts.
//
// Rows arrive out of time order: each CPU's buffers flush on their own, compact rows come one switch late
// and a batch is logged after the ReadyThread events inside it. But on one CPU, a ReadyThread or Thread
// event of time r is always delivered before any switch of that CPU at or after r (both are logged in the
// CPU's own buffers, switches no earlier than their time). So events are held, sorted by time, and
// released up to the watermark = the least, over the CPUs seen, of the latest switch time delivered for
// that CPU: everything at or before it has arrived. A CPU that falls silent would hold the watermark back,
// so no more than `windowEvents` events are held between chunks: past that the earliest are released anyway, and
// an event that then arrives behind the released time is processed at once and counted as late. That
// machinery is the EventReorder of reorder.ts (shared with thread-states.ts); this file has the events'
// record layout and what applying them does.
//
// Released events of one timestamp are applied as one group, in this order: Thread events (lifetimes),
// ReadyThread events (readying thread = the last switch-in on their CPU at or before them), then the
// switches (each completes its CPU's previous row and opens its own), then the switch-outs of the group
// are recorded (lastSwitchOutTime is strictly before the switch-in).
//
// Process ids follow the rule of the `threads` table (the lifetime of the tid with the latest startTime <=
// the time, a null startTime = -infinity; tid 0 -> 0). Given that table (`threads`: a whole decode), the
// lifetimes are final and every row is emitted when it completes. Streaming, the lifetimes are those of the
// Thread events applied so far, and a thread known only from a later event (the end rundown's DCEnd, its
// own End, a SetName) has none yet: a row with a process id (new, old or readying) still unknown when it
// completes is held back (at most `holdRows`; stats.heldRows) and resolved at finish() against the final
// lifetimes; past the bound such rows are emitted as they are (stats.unresolvedRows).
//
// Row order: rows are emitted in completion order — a row completes when its CPU's next switch is applied,
// and at finish() each CPU's last row, in the order they were opened — except the held rows, which come
// last, at finish(), in their completion order. So per CPU the rows that were not held come in
// (switchInTime, arrival) order, late events aside.
//
// Costs: nothing is allocated per event or row, and the hot loops touch few arrays: an event is ES int32
// words of one store, a thread's state TSW words of another, a CPU's (its open row) CSW words of a third;
// a tick value is two 32-bit halves (hi signed, lo unsigned), kept as int32, compared and subtracted as
// such (exact, no BigInt, no double). Event order is (time, kind, cpu, arrival) (the reorder's sort:
// reorder.ts says its costs). Completed rows are staged row by row (RWS
// words each) and moved into the chunk's columns a block at a time, each row read once — or handed as
// they are to a StagedRowSink (CpuAnalyzer: the `cpu` command makes no columns) — or, for a CoreFoldSink
// (CpuAnalyzer without a selection or --worst), folded per thread inside the WebAssembly core and handed
// over once at finish(), so no row crosses to JS (assembly/derive/cpu-fold.ts); a consumer done with a
// chunk may give it back (recycle()) for its columns to be reused. A thread's state is one cache line,
// recent thread ids find their slot in a small direct-mapped cache before the index.
//
// Two cores do this: the WebAssembly one (assembly/derive/: the same records and rules with native i64
// times, about 2.3× faster), and its TypeScript twin, the class ReferenceCpuUsage below (`engine:
// 'reference'`): the differential tests (test/cpu-usage-wasm.test.ts) hold them to the same chunks and stats.
// The WebAssembly core also runs in two halves (options.split: the intake, which gives the slots and
// reorders, and the rest, for two threads: remote-cpu-fold.ts); the same tests chain the halves too.
import * as L from '../generated/layout.js';
import type { EngineKind } from '../engine/engine.js';
import { copyInput, deriveInstance, type DeriveExports } from '../engine/wasm/derive.js';
import { IdIndex } from './lifetimes.js';
import { E_HI, E_KEY, E_LO, EventReorder, type DeriverStats } from './reorder.js';
import { allocColumn, columnsOf, TABLE_COLUMNS, type TypedColumn } from '../tables/schema.js';
import { Table } from '../tables/table.js';

export interface CpuUsageOptions {
  /** most events held for reordering (default 262 144) */
  windowEvents?: number;
  /** rows per emitted chunk (default 65 536) */
  chunkRows?: number;
  /** most rows held back until finish() for a process id not known yet (default 65 536; see the file comment) */
  holdRows?: number;
  /**
   * the trace's `threads` table, when it is known before the rows (a whole decode): process ids come from
   * it, no row is held back, and the Thread events given to add() are not needed (they are ignored)
   */
  threads?: Table<'threads'>;
  /**
   * the core: 'wasm' (the default) or its TypeScript twin 'reference' (the differential tests run both)
   */
  engine?: EngineKind;
  /**
   * given a CoreFoldSink that asks for it, the WebAssembly core folds the rows itself (default true); false:
   * they are staged to its addStaged, as with the reference core
   */
  coreFold?: boolean;
  /**
   * one half of the WebAssembly core, for a derivation on two threads (remote-cpu-fold.ts): 'intake' takes the
   * chunks and reorders their events, which released() then gives out instead of applying them; 'apply' applies
   * what an intake deriver released (addReleased) and makes the rows
   */
  split?: 'intake' | 'apply';
}

/**
 * What an intake deriver released (CpuUsageDeriver.released): views of its core's memory, valid until its
 * next add() or finish().
 */
export interface ReleasedEvents {
  /** the event records (`count`, of the core's record layout), in the order they are applied */
  records: Uint8Array;
  count: number;
  /** the ends (in records) of the groups they are applied in */
  groupEnds: Int32Array;
  /** the idle threads' slots made: (slot, cpu or −1) pairs */
  idleSlots: Int32Array;
  /** the thread slots made so far */
  slots: number;
}

/**
 * Takes the rows of the derivation as they are staged (`n` rows of RWS int32 words, the R_ layout, the
 * table's valid bits; borrowed until it returns), in the order they would be emitted: for a consumer that
 * folds rows (CpuAnalyzer) and has no use for the columns.
 */
export interface StagedRowSink {
  addStaged(rows: Int32Array, n: number): void;
}

/**
 * A StagedRowSink that can have the WebAssembly core fold its rows instead (CpuAnalyzer): per
 * (newThreadId, newProcessId or null) slot as addStaged would, in the core's memory (assembly/derive/cpu-fold.ts),
 * so no row is staged; at finish() the sink takes the fold (addCoreFold) once. The reference core stages.
 */
export interface CoreFoldSink extends StagedRowSink {
  /** the fold it wants (asked once, when the deriver is made), or null: the rows staged to addStaged */
  coreFold(): CoreFoldRequest | null;
  /** the fold, at the deriver's finish() (views of the core's memory: the slots borrowed until it returns, the histograms its to keep) */
  addCoreFold(fold: CoreFold): void;
}

export interface CoreFoldRequest {
  /** the ready and wait histograms' bucket mapping (keyOf of analysis/distributions.ts), or null: no histograms */
  histograms: { lnGamma: number; maxIndex: number } | null;
}

/** The core's fold of the rows (CoreFoldSink). */
export interface CoreFold {
  /** rows folded */
  rows: number;
  /** n slots of FW int32 words (the F_ layout), in the order first seen */
  n: number;
  slots: Int32Array;
  /** per slot FHW words: the high 64 bits of its cpu, ready and wait sums (words of F_CPU, F_READY, F_WAIT the low ones) */
  high: Int32Array;
  /**
   * the ready and wait histograms (null: not asked for), each a table in LogHistograms' layout
   * (analysis/distributions.ts) whose groups are the slots, and its cells in use; the core is done with
   * them (no call after finish()), so the sink may keep them
   */
  histograms: [FoldedTable, FoldedTable] | null;
  /** the first and last time of the rows (over the times CpuAnalyzer's span() takes), the highest cpu + 1 */
  first: bigint;
  last: bigint;
  cpus: number;
}

export interface FoldedTable {
  table: Float64Array;
  cells: number;
}

// A fold slot: FW int32 words (assembly/derive/cpu-fold.ts, F_ there in bytes); 64-bit values as (lo, hi)
// words. The sums are 128-bit: their low 64 bits here, their high ones in CoreFold.high.
export const FW = 16;
export const F_TID = 0;
export const F_PID = 1; // 0 when not known
export const F_KNOWN = 2;
export const F_SEEN = 3; // 1: a ready value came, 2: a wait value came (the maxima below)
export const F_IN = 4; // switch-ins (64-bit)
export const F_CPU = 6; // sum of cpuUsage (its low 64 bits)
export const F_READY = 8;
export const F_WAIT = 10;
export const F_READY_MAX = 12; // 64-bit
export const F_WAIT_MAX = 14;
/** CoreFold.high: words per slot (the high 64 bits of the cpu, ready and wait sums) */
export const FHW = 6;

/** The fold of a derivation module's instance (foldInit), as views of its memory. */
export function coreFoldOf(w: DeriveExports): CoreFold {
  const buf = w.memory.buffer;
  const n = w.foldSlots();
  const table = (d: number): FoldedTable => ({ table: new Float64Array(buf, w.foldHistPtr(d), 2 * w.foldHistSlots(d)), cells: w.foldHistCells(d) });
  return {
    rows: w.foldRows(),
    n,
    slots: new Int32Array(buf, w.foldSlotPtr(), n * FW),
    high: new Int32Array(buf, w.foldHighPtr(), n * FHW),
    histograms: w.foldHistPtr(0) === 0 ? null : [table(0), table(1)],
    first: w.foldSpan(0),
    last: w.foldSpan(1),
    cpus: Number(w.foldSpan(2)),
  };
}

function isCoreFoldSink(to: StagedRowSink): to is CoreFoldSink {
  return typeof (to as Partial<CoreFoldSink>).coreFold === 'function';
}

/** The run's figures (DeriverStats, reorder.ts). */
export type CpuUsageStats = DeriverStats;

const KIND_THREAD = 0;
const KIND_READY = 1;
const KIND_SWITCH = 2;

// Event store: ES int32 words per event, at position p * ES (Events below).
// Its first words are the reorder's (reorder.ts): E_HI, E_LO (the time), E_KEY = kind << 16 | cpu.
const ES = 9;
const E_A = 3; // switch: newThreadId (if S_NEW_TID); ready, thread event: threadId
const E_B = 4; // switch: oldThreadId; thread event: processId
const E_SA = 5; // thread slot of E_A (switch: -1 when the new thread is unknown)
const E_SB = 6; // switch: the slot of the old thread's switch-outs (the idle thread: its CPU's); thread event: opcode
const E_SMALL = 7; // switch: newThreadPriority | oldThreadPriority << 8 | oldThreadState << 16 | oldThreadWaitReason << 24
const E_FLAGS = 8; // switch: previousCState | the S_ bits (which values are present)
const S_NEW_PRI = 1 << 8;
const S_OLD_PRI = 1 << 9;
const S_OLD_STATE = 1 << 10;
const S_OLD_WR = 1 << 11;
const S_CSTATE = 1 << 12;
const S_NEW_TID = 1 << 13;

// Thread state: TSW words per thread slot (16: a slot is one 64-byte cache line).
const TSW = 16;
const T_FLAGS = 0; // TF_ bits
const T_OUT_HI = 1; // the latest switch-out: time
const T_OUT_LO = 2;
const T_OUT_SMALL = 3; // its oldThreadPriority | oldThreadState << 8 | oldThreadWaitReason << 16 | the O_ bits
const T_READY_HI = 4; // the latest ready: time
const T_READY_LO = 5;
const T_READYING = 6; // the readying thread (if TF_READYING), its slot and process (if TF_READYING_PID)
const T_READYING_SLOT = 7;
const T_READYING_PID = 8;
const T_LIFE_HEAD = 9; // the thread's lifetimes, a list (index + 1; 0: none): first and last
const T_LIFE_TAIL = 10;
const T_FIRST_START_HI = 11; // the first lifetime's start (if TF_FIRST_START) and process, copied: a thread
const T_FIRST_START_LO = 12; // with one lifetime has its process without a walk of the list
const T_FIRST_PID = 13;
const TF_OUT = 1;
const TF_READY = 2;
const TF_IDLE = 4; // the idle thread (tid 0, or a CPU's stand-in): its process is 0
const TF_READYING = 8;
const TF_READYING_PID = 16;
const TF_FIRST_START = 32;
const O_PRI = 1 << 24;
const O_STATE = 1 << 25;
const O_WR = 1 << 26;

// Lifetimes: LTW words each.
const LTW = 5;
const LT_FLAGS = 0; // 1: has a start; 2: open
const LT_START_HI = 1;
const LT_START_LO = 2;
const LT_PID = 3;
const LT_NEXT = 4; // the next lifetime of the thread (index + 1; 0: the last)

// CPU state: CSW words per CPU.
const CSW = 24;
const C_FLAGS = 0; // CF_ bits
const C_IDLE_SLOT = 1; // the slot of the idle thread's switch-outs on this CPU
const C_CURRENT = 2; // newThreadId of the last switch applied (if CF_CURRENT) and its slot
const C_CURRENT_SLOT = 3;
// the open row: a switch-in awaiting the CPU's next switch
const C_TS_HI = 4;
const C_TS_LO = 5;
const C_NEW_TID = 6;
const C_OLD_TID = 7;
const C_NEW_SLOT = 8;
const C_OLD_SLOT = 9;
const C_NEW_PID = 10; // if CF_NEW_PID
const C_OLD_PID = 11; // if CF_OLD_PID
const C_SMALL = 12; // E_SMALL and E_FLAGS of its switch
const C_SFLAGS = 13;
const C_LAST_HI = 14; // the new thread's latest switch-out (if CF_LAST), T_OUT_SMALL
const C_LAST_LO = 15;
const C_LAST_SMALL = 16;
const C_READY_HI = 17; // its ready (if CF_READY)
const C_READY_LO = 18;
const C_READYING = 19; // if CF_READYING
const C_READYING_SLOT = 20;
const C_READYING_PID = 21; // if CF_READYING_PID
const C_IN_TID = 22; // the new thread of the CPU's latest switch delivered, and its slot + 1 (0: none): its next switch's old thread, mostly
const C_IN_SLOT = 23;
const CF_OPEN = 1;
const CF_CURRENT = 2;
const CF_LAST = 8;
const CF_READY = 16;
const CF_READYING = 32;
const CF_READYING_PID = 64;
const CF_NEW_PID = 128;
const CF_OLD_PID = 256;

// Completed rows, staged row by row (RWS int32 words each; a null cell is 0, the valid bits are the
// table's) before they go into the columns — or, given a StagedRowSink, to it.
export const RWS = 20;
export const R_CPU = 0;
export const R_IN_HI = 1; // switchInTime
export const R_IN_LO = 2;
export const R_NEXT_HI = 3; // nextSwitchOutTime
export const R_NEXT_LO = 4;
export const R_NEW_TID = 5;
export const R_OLD_TID = 6;
export const R_NEW_PID = 7;
export const R_OLD_PID = 8;
export const R_LAST_HI = 9; // lastSwitchOutTime
export const R_LAST_LO = 10;
export const R_READY_HI = 11; // readyTime
export const R_READY_LO = 12;
export const R_READYING_TID = 13;
export const R_READYING_PID = 14;
export const R_SMALL_A = 15; // newInPri | newOutPri << 8 | newPrevOutPri << 16 | newPrevState << 24
export const R_SMALL_B = 16; // newPrevWaitReason | oldOutPri << 8 | oldState << 16 | oldWaitReason << 24
export const R_CSTATE = 17; // prevCState
export const R_VALID = 18;
/** the deriver's slot of the new thread (one per thread id: a consumer may key its own state by it) */
export const R_NEW_SLOT = 19;
/** log2 of the entries of the thread slot cache (4096: 32 KiB) */
const SLOT_CACHE_BITS = 12;
/** rows staged before they are moved into the columns (a block that stays in cache) */
const STAGE_ROWS = 2048;

const ALWAYS = (1 << L.CU_VALID) | (1 << L.CU_CPU) | (1 << L.CU_SWITCH_IN_TIME) | (1 << L.CU_NEW_THREAD_ID) | (1 << L.CU_OLD_THREAD_ID);

/** x ^ MIN32 orders the int32 bits of u32 values as the u32 values (every time word stays an int32: no double) */
const MIN32 = -0x80000000;

/** (aHi, aLo) < (bHi, bLo) as signed 64-bit values (the words as int32: lo compared as unsigned) */
function lt(aHi: number, aLo: number, bHi: number, bLo: number): boolean {
  return aHi < bHi || (aHi === bHi && (aLo ^ MIN32) < (bLo ^ MIN32));
}

/** A copy of `a` with room for n elements. */
function grown<T extends Int32Array | Float64Array>(a: T, n: number): T {
  const b = new (a.constructor as new (n: number) => T)(n);
  b.set(a);
  return b;
}

/** The columns of one output chunk, with 32-bit views of the 64-bit ones and byte views of the small ones. */
class OutChunk {
  readonly columns: TypedColumn[];
  readonly cpu: Uint16Array;
  readonly newThreadId: Uint32Array;
  readonly oldThreadId: Uint32Array;
  readonly newProcessId: Uint32Array;
  readonly oldProcessId: Uint32Array;
  readonly readyingThreadId: Uint32Array;
  readonly readyingProcessId: Uint32Array;
  readonly valid: Uint32Array;
  /** 64-bit columns as (lo, hi) word pairs */
  readonly switchInTime: Int32Array;
  readonly nextSwitchOutTime: Int32Array;
  readonly lastSwitchOutTime: Int32Array;
  readonly readyTime: Int32Array;
  readonly cpuUsage: Int32Array;
  readonly ready: Int32Array;
  readonly waits: Int32Array;
  /** u8/i8 columns as bytes */
  readonly newInPri: Uint8Array;
  readonly newOutPri: Uint8Array;
  readonly newPrevOutPri: Uint8Array;
  readonly newPrevState: Uint8Array;
  readonly newPrevWaitReason: Uint8Array;
  readonly oldOutPri: Uint8Array;
  readonly oldState: Uint8Array;
  readonly oldWaitReason: Uint8Array;
  readonly prevCState: Uint8Array;

  /** `reuse`: the columns of an emitted chunk given back (CpuUsageDeriver.recycle), every cell rewritten by take() */
  constructor(rows: number, reuse: TypedColumn[] | null) {
    const c = (this.columns = reuse ?? TABLE_COLUMNS.cpuUsage.map((spec) => allocColumn(spec.type, rows)));
    const v = columnsOf('cpuUsage', c);
    const bytes = (col: Uint8Array | Int8Array) => new Uint8Array(col.buffer, col.byteOffset, col.length);
    this.cpu = v.cpu;
    this.newThreadId = v.newThreadId;
    this.oldThreadId = v.oldThreadId;
    this.newProcessId = v.newProcessId;
    this.oldProcessId = v.oldProcessId;
    this.readyingThreadId = v.readyingThreadId;
    this.readyingProcessId = v.readyingProcessId;
    this.valid = v.valid;
    this.switchInTime = words(v.switchInTime);
    this.nextSwitchOutTime = words(v.nextSwitchOutTime);
    this.lastSwitchOutTime = words(v.lastSwitchOutTime);
    this.readyTime = words(v.readyTime);
    this.cpuUsage = words(v.cpuUsage);
    this.ready = words(v.ready);
    this.waits = words(v.waits);
    this.newInPri = bytes(v.newInPri);
    this.newOutPri = bytes(v.newOutPri);
    this.newPrevOutPri = bytes(v.newPrevOutPri);
    this.newPrevState = bytes(v.newPrevState);
    this.newPrevWaitReason = bytes(v.newPrevWaitReason);
    this.oldOutPri = bytes(v.oldOutPri);
    this.oldState = bytes(v.oldState);
    this.oldWaitReason = bytes(v.oldWaitReason);
    this.prevCState = bytes(v.prevCState);
  }

  /** Moves n staged rows (S, from row 0) into rows [at, at + n): each row read once, its cells stored in every column. */
  take(S: Int32Array, n: number, at: number): void {
    const end = at + n;
    const cpu = this.cpu;
    const inT = this.switchInTime;
    const nextT = this.nextSwitchOutTime;
    const lastT = this.lastSwitchOutTime;
    const readyT = this.readyTime;
    const newTid = this.newThreadId;
    const oldTid = this.oldThreadId;
    const newPid = this.newProcessId;
    const oldPid = this.oldProcessId;
    const readyingTid = this.readyingThreadId;
    const readyingPid = this.readyingProcessId;
    const valid = this.valid;
    const newInPri = this.newInPri;
    const newOutPri = this.newOutPri;
    const newPrevOutPri = this.newPrevOutPri;
    const newPrevState = this.newPrevState;
    const newPrevWaitReason = this.newPrevWaitReason;
    const oldOutPri = this.oldOutPri;
    const oldState = this.oldState;
    const oldWaitReason = this.oldWaitReason;
    const prevCState = this.prevCState;
    const usage = this.cpuUsage;
    const ready = this.ready;
    const waits = this.waits;
    for (let r = at, s = 0; r < end; r++, s += RWS) {
      const v = S[s + R_VALID]!;
      const inHi = S[s + R_IN_HI]!;
      const inLo = S[s + R_IN_LO]!;
      const nHi = S[s + R_NEXT_HI]!;
      const nLo = S[s + R_NEXT_LO]!;
      const lHi = S[s + R_LAST_HI]!;
      const lLo = S[s + R_LAST_LO]!;
      const rHi = S[s + R_READY_HI]!;
      const rLo = S[s + R_READY_LO]!;
      const a = S[s + R_SMALL_A]!;
      const b = S[s + R_SMALL_B]!;
      cpu[r] = S[s + R_CPU]!;
      inT[2 * r] = inLo;
      inT[2 * r + 1] = inHi;
      nextT[2 * r] = nLo;
      nextT[2 * r + 1] = nHi;
      lastT[2 * r] = lLo;
      lastT[2 * r + 1] = lHi;
      readyT[2 * r] = rLo;
      readyT[2 * r + 1] = rHi;
      newTid[r] = S[s + R_NEW_TID]!;
      oldTid[r] = S[s + R_OLD_TID]!;
      newPid[r] = S[s + R_NEW_PID]!;
      oldPid[r] = S[s + R_OLD_PID]!;
      readyingTid[r] = S[s + R_READYING_TID]!;
      readyingPid[r] = S[s + R_READYING_PID]!;
      valid[r] = v;
      newInPri[r] = a;
      newOutPri[r] = a >>> 8;
      newPrevOutPri[r] = a >>> 16;
      newPrevState[r] = a >>> 24;
      newPrevWaitReason[r] = b;
      oldOutPri[r] = b >>> 8;
      oldState[r] = b >>> 16;
      oldWaitReason[r] = b >>> 24;
      prevCState[r] = S[s + R_CSTATE]!;
      // the durations (null: 0)
      if ((v >>> L.CU_CPU_USAGE) & 1) putDiff(usage, r, nHi, nLo, inHi, inLo);
      else putDiff(usage, r, 0, 0, 0, 0);
      if ((v >>> L.CU_READY) & 1) putDiff(ready, r, inHi, inLo, rHi, rLo);
      else putDiff(ready, r, 0, 0, 0, 0);
      if ((v >>> L.CU_WAITS) & 1) putDiff(waits, r, rHi, rLo, lHi, lLo);
      else putDiff(waits, r, 0, 0, 0, 0);
    }
  }
}

/** Writes (aHi, aLo) − (bHi, bLo), wrapping like a 64-bit store, at row r (the words as int32). */
function putDiff(words: Int32Array, r: number, aHi: number, aLo: number, bHi: number, bLo: number): void {
  words[2 * r] = (aLo - bLo) | 0;
  words[2 * r + 1] = (aHi - bHi - ((aLo ^ MIN32) < (bLo ^ MIN32) ? 1 : 0)) | 0;
}

/**
 * Where staged rows go: to the StagedRowSink, or into chunks of `chunkRows` columns (OutChunk.take) handed
 * to onRows when full and at flush(); `rows` counts them.
 */
class RowOutput {
  rows = 0;
  private out: OutChunk | null = null;
  /** the columns of a chunk given back (recycle()), for the next one */
  private spare: TypedColumn[] | null = null;
  private n = 0; // rows in `out`
  private readonly onRows: ((rows: Table<'cpuUsage'>) => void) | null;
  private readonly sink: StagedRowSink | null;

  constructor(
    to: ((rows: Table<'cpuUsage'>) => void) | StagedRowSink,
    private readonly chunkRows: number,
  ) {
    this.onRows = typeof to === 'function' ? to : null;
    this.sink = typeof to === 'function' ? null : to;
  }

  /** Takes n staged rows (S, from row 0; borrowed until it returns). */
  put(S: Int32Array, n: number): void {
    if (this.sink !== null) {
      this.sink.addStaged(S, n);
      this.rows += n;
      return;
    }
    for (let s = 0; s < n; ) {
      if (this.out === null) {
        this.out = new OutChunk(this.chunkRows, this.spare);
        this.spare = null;
      }
      const k = Math.min(n - s, this.chunkRows - this.n);
      this.out.take(s === 0 ? S : S.subarray(s * RWS), k, this.n);
      this.n += k;
      s += k;
      if (this.n === this.chunkRows) this.flush();
    }
  }

  /** The rows so far out as a chunk (its columns cut to them). */
  flush(): void {
    const n = this.n;
    if (n === 0) return;
    this.rows += n;
    const columns = this.out!.columns.map((c) => (n === this.chunkRows ? c : c.slice(0, n)) as TypedColumn);
    this.out = null;
    this.n = 0;
    this.onRows!(new Table('cpuUsage', { length: n, columns }));
  }

  /** A chunk given back (CpuUsageDeriver.recycle). */
  recycle(rows: Table<'cpuUsage'>): void {
    if (rows.length === this.chunkRows && rows.columns[0]!.length === this.chunkRows) this.spare = rows.columns as TypedColumn[];
  }
}

/**
 * The rows of the `cpuUsage` table as chunks of a trace's decode are added (see the file comment): by the
 * WebAssembly core, or its TypeScript twin when asked (`engine: 'reference'`).
 */
export class CpuUsageDeriver {
  private readonly core: ReferenceCpuUsage | WasmCpuUsage;
  private readonly output: RowOutput;

  /** Rows go to `onRows` in chunks of columns, or to a StagedRowSink as they are staged (no columns made). */
  constructor(to: ((rows: Table<'cpuUsage'>) => void) | StagedRowSink, options: CpuUsageOptions = {}) {
    this.output = new RowOutput(to, options.chunkRows ?? 1 << 16);
    if (options.engine === 'reference') this.core = new ReferenceCpuUsage(this.output, options);
    else {
      const sink = typeof to !== 'function' && options.coreFold !== false && isCoreFoldSink(to) ? to : null;
      const request = sink?.coreFold() ?? null;
      this.core = new WasmCpuUsage(this.output, options, request === null ? null : sink, request);
    }
  }

  /** Takes the rows of one chunk of the decode (borrowed views are fine: values are copied). */
  add(cswitch: Table<'cswitch'>, readythread: Table<'readythread'>, threadEvents: Table<'threadEvents'>): void {
    this.core.add(cswitch, readythread, threadEvents);
  }

  /**
   * Gives back a chunk this deriver emitted that the caller is done with (nothing reads it any more): its
   * columns are reused for a later chunk, saving their allocation. Chunks of another size are ignored.
   */
  recycle(rows: Table<'cpuUsage'>): void {
    this.output.recycle(rows);
  }

  /** End of the trace: releases everything, completes the last row of every CPU, emits the rest, then the held rows. */
  finish(): CpuUsageStats {
    return this.core.finish();
  }

  /** split 'intake': the events the last add() or finish() released, for an apply deriver. */
  released(): ReleasedEvents {
    return this.wasmCore('intake').released();
  }

  /** split 'apply': applies what an intake deriver released. */
  addReleased(e: ReleasedEvents): void {
    this.wasmCore('apply').addReleased(e);
  }

  private wasmCore(split: 'intake' | 'apply'): WasmCpuUsage {
    if (!(this.core instanceof WasmCpuUsage) || this.core.split !== split) throw new Error(`not the ${split} half of the WebAssembly core (options.split)`);
    return this.core;
  }
}

/**
 * The WebAssembly core (assembly/derive/cpu-usage.ts): per chunk the columns it reads are copied into its
 * memory; its rows come back staged (env.drain) and go to the output as they are — or, for a CoreFoldSink
 * that asks, are folded in the core (assembly/derive/cpu-fold.ts), the fold handed to it at finish().
 */
class WasmCpuUsage {
  private readonly w: DeriveExports;
  readonly split: 'intake' | 'apply' | undefined;
  /** the lifetimes are the trace's final ones (options.threads): Thread events are not needed */
  private readonly final: boolean;

  /** fold: the sink the core folds the rows for (with `request`), or null: rows staged to the output */
  constructor(
    private readonly output: RowOutput,
    options: CpuUsageOptions,
    private readonly fold: CoreFoldSink | null = null,
    request: CoreFoldRequest | null = null,
  ) {
    this.w = deriveInstance((n) => this.output.put(new Int32Array(this.w.memory.buffer, this.w.outPtr(), n * RWS), n));
    this.w.init(options.windowEvents ?? 1 << 18, options.holdRows ?? 1 << 16);
    this.split = options.split;
    if (options.split !== undefined) this.w.splitInit(options.split === 'intake' ? 1 : 2);
    if (fold !== null) {
      const h = request?.histograms ?? null;
      this.w.foldInit(h !== null, h?.lnGamma ?? 0, h?.maxIndex ?? 0);
    }
    this.final = options.threads !== undefined;
    if (options.threads) this.lifetimesOf(options.threads);
  }

  /** The lifetimes of the `threads` table, as Thread event columns (the opcode column: 1 when startTime is not null). */
  private lifetimesOf(threads: Table<'threads'>): void {
    const w = this.w;
    const n = threads.length;
    w.reserveInput(n, 0, 0);
    const buf = w.memory.buffer;
    new BigInt64Array(buf, w.inputColumn(0), n).set(threads.column('startTime').subarray(0, n));
    new Uint32Array(buf, w.inputColumn(2), n).set(threads.column('threadId').subarray(0, n));
    new Uint32Array(buf, w.inputColumn(3), n).set(threads.column('processId').subarray(0, n));
    const has = new Uint8Array(buf, w.inputColumn(4), n);
    for (let i = 0; i < n; i++) has[i] = threads.isNull(L.TH_START_TIME, i) ? 0 : 1;
    w.lifetimes(n);
  }

  add(cswitch: Table<'cswitch'>, readythread: Table<'readythread'>, threadEvents: Table<'threadEvents'>): void {
    const w = this.w;
    const nT = this.final ? 0 : threadEvents.length;
    copyInput(w, cswitch, readythread, threadEvents, nT);
    w.add(nT, readythread.length, cswitch.length);
  }

  released(): ReleasedEvents {
    const w = this.w;
    const buf = w.memory.buffer;
    return {
      records: new Uint8Array(buf, w.streamPtr(0), w.streamCount(4)),
      count: w.streamCount(0),
      groupEnds: new Int32Array(buf, w.streamPtr(1), w.streamCount(1)),
      idleSlots: new Int32Array(buf, w.streamPtr(2), 2 * w.streamCount(2)),
      slots: w.streamCount(3),
    };
  }

  addReleased(e: ReleasedEvents): void {
    const w = this.w;
    const n = e.count;
    const g = e.groupEnds.length;
    const k = e.idleSlots.length / 2;
    w.applyReserve(n, g, k);
    const buf = w.memory.buffer;
    new Uint8Array(buf, w.streamPtr(0), e.records.length).set(e.records);
    new Int32Array(buf, w.streamPtr(1), g).set(e.groupEnds);
    new Int32Array(buf, w.streamPtr(2), 2 * k).set(e.idleSlots);
    w.applyStream(n, g, k, e.slots);
  }

  finish(): CpuUsageStats {
    const w = this.w;
    w.finish();
    this.output.flush();
    let rows = this.output.rows;
    if (this.fold !== null) {
      this.fold.addCoreFold(coreFoldOf(w));
      rows += w.foldRows();
    }
    return { rows, lateEvents: w.stat(0), maxHeld: w.stat(1), threads: w.stat(2), heldRows: w.stat(3), unresolvedRows: w.stat(4) };
  }
}

/** The TypeScript core: the twin of the WebAssembly one (see the file comment). */
class ReferenceCpuUsage {
  /** the events (ES words each, in its store), held and released in time order to apply() */
  private readonly R: EventReorder;
  // Threads: TSW words per slot; a thread id has one slot (IdIndex), the idle thread (tid 0) is one per
  // CPU: its switch-outs are kept in a slot of its CPU's (C_IDLE_SLOT), its readies and lifetimes in the
  // slot of tid 0. Slots are never freed: their number is that of the threads seen.
  private readonly tids = new IdIndex();
  /** recent thread ids and their slots (+ 1; 0: none), direct-mapped: a hit stays in L1, where the index would miss the cache */
  private readonly slotCache = new Int32Array(2 << SLOT_CACHE_BITS);
  private TS = new Int32Array(256 * TSW);
  private nSlots = 0;
  private LT = new Int32Array(256 * LTW);
  private nLifetimes = 0;
  /** thread ids with lifetimes */
  private threadsWithLifetimes = 0;
  // CPUs: CSW words each
  private CS = new Int32Array(0);
  private cpuCap = 0;
  /** rows opened so far, and when each CPU's open row was (the order open rows are closed in at the end) */
  private opened = 0;
  private openSeq = new Float64Array(0);
  /** the lifetimes are the trace's final ones (options.threads): no row waits for a process id */
  private readonly final: boolean;
  // completed rows: staged (RWS words each), then put to the output
  private readonly stage = new Int32Array(STAGE_ROWS * RWS);
  private nStage = 0;
  /** rows waiting for a process id until finish(), staged, in completion order */
  private hold = new Int32Array(0);
  private nHold = 0;
  private readonly holdRows: number;
  private readonly stats: CpuUsageStats = { rows: 0, lateEvents: 0, maxHeld: 0, threads: 0, heldRows: 0, unresolvedRows: 0 };

  constructor(
    private readonly output: RowOutput,
    options: CpuUsageOptions,
  ) {
    this.R = new EventReorder({ words: ES, window: options.windowEvents ?? 1 << 18, atWatermark: true, apply: (order, from, to) => this.apply(order, from, to) });
    this.holdRows = options.holdRows ?? 1 << 16;
    this.final = options.threads !== undefined;
    if (options.threads) this.lifetimesOf(options.threads);
  }

  /** The lifetimes of the `threads` table (its row order, as the Thread events would make them). */
  private lifetimesOf(threads: Table<'threads'>): void {
    const c = threads.columns;
    const tid = threads.column('threadId');
    const pid = threads.column('processId');
    const start = words(threads.column('startTime'));
    for (let i = 0; i < threads.length; i++) {
      this.addLifetime(this.slotOf(tid[i]! | 0), !threads.isNull(L.TH_START_TIME, i), start[2 * i + 1]!, start[2 * i]!, pid[i]!, false);
    }
  }

  /** The slot of thread `tid` (as int32; made if new): from the small cache of recent ones, else the index. */
  private slotOf(tid: number): number {
    const C = this.slotCache;
    const h = (Math.imul(tid, 0x9e3779b1) >>> (32 - SLOT_CACHE_BITS)) << 1;
    if (C[h] === tid && C[h + 1] !== 0) return C[h + 1]! - 1;
    let s = this.tids.get(tid);
    if (s < 0) {
      s = this.newSlot(tid === 0);
      this.tids.set(tid, s);
    }
    C[h] = tid;
    C[h + 1] = s + 1;
    return s;
  }

  /** A new thread slot (`idle`: the idle thread's). */
  private newSlot(idle: boolean): number {
    const s = this.nSlots++;
    if (this.nSlots * TSW > this.TS.length) this.TS = grown(this.TS, 2 * this.TS.length);
    this.TS[s * TSW + T_FLAGS] = idle ? TF_IDLE : 0;
    return s;
  }

  /** Adds a lifetime at the end of the list of thread slot s. */
  private addLifetime(s: number, hasStart: boolean, hi: number, lo: number, pid: number, open: boolean): void {
    const TS = this.TS;
    const t = s * TSW;
    if (TS[t + T_LIFE_HEAD] === 0) this.threadsWithLifetimes++;
    const l = this.nLifetimes++;
    if (this.nLifetimes * LTW > this.LT.length) this.LT = grown(this.LT, 2 * this.LT.length);
    const LT = this.LT;
    const x = l * LTW;
    LT[x + LT_FLAGS] = (hasStart ? 1 : 0) | (open ? 2 : 0);
    LT[x + LT_START_HI] = hi;
    LT[x + LT_START_LO] = lo;
    LT[x + LT_PID] = pid;
    LT[x + LT_NEXT] = 0;
    const tail = TS[t + T_LIFE_TAIL]!;
    if (tail === 0) {
      TS[t + T_LIFE_HEAD] = l + 1;
      TS[t + T_FIRST_START_HI] = hi;
      TS[t + T_FIRST_START_LO] = lo;
      TS[t + T_FIRST_PID] = pid;
      if (hasStart) TS[t + T_FLAGS]! |= TF_FIRST_START;
    }
    else LT[(tail - 1) * LTW + LT_NEXT] = l + 1;
    TS[t + T_LIFE_TAIL] = l + 1;
  }

  /** Room for `cpu` in the CPU state; its idle thread's slot made when the CPU first shows. */
  private ensureCpu(cpu: number): void {
    if (cpu >= this.cpuCap) {
      let cap = Math.max(8, this.cpuCap);
      while (cap <= cpu) cap *= 2;
      const CS = new Int32Array(cap * CSW);
      CS.set(this.CS);
      for (let c = this.cpuCap; c < cap; c++) CS[c * CSW + C_IDLE_SLOT] = -1;
      this.CS = CS;
      this.openSeq = grown(this.openSeq, cap);
      this.cpuCap = cap;
    }
    if (this.CS[cpu * CSW + C_IDLE_SLOT] === -1) this.CS[cpu * CSW + C_IDLE_SLOT] = this.newSlot(true);
  }

  add(cswitch: Table<'cswitch'>, readythread: Table<'readythread'>, threadEvents: Table<'threadEvents'>): void {
    const nThread = this.final ? 0 : threadEvents.length;
    this.R.begin(nThread + readythread.length + cswitch.length);
    if (nThread > 0) this.addThreadEvents(threadEvents);
    if (readythread.length > 0) this.addReadies(readythread);
    if (cswitch.length > 0) this.addSwitches(cswitch);
    this.R.release(false);
  }

  /** Stores the Thread events in the reorder. */
  private addThreadEvents(threadEvents: Table<'threadEvents'>): void {
    const te = threadEvents.columns;
    const ts = words(threadEvents.column('timestamp'));
    const cpu = threadEvents.column('cpu');
    const tid = threadEvents.column('threadId');
    const pid = threadEvents.column('processId');
    const op = threadEvents.column('opcode');
    const R = this.R;
    const E = R.E;
    for (let i = 0; i < threadEvents.length; i++) {
      const e = R.top * ES;
      const hi = ts[2 * i + 1]!;
      const lo = ts[2 * i]!;
      E[e + E_HI] = hi;
      E[e + E_LO] = lo;
      E[e + E_KEY] = (KIND_THREAD << 16) | cpu[i]!;
      E[e + E_A] = tid[i]!;
      E[e + E_B] = pid[i]!;
      E[e + E_SA] = this.slotOf(tid[i]! | 0);
      E[e + E_SB] = op[i]!;
      R.commit();
    }
  }

  /** Stores the ReadyThread events in the reorder. */
  private addReadies(readythread: Table<'readythread'>): void {
    const rt = readythread.columns;
    const ts = words(readythread.column('timestamp'));
    const cpu = readythread.column('cpu');
    const tid = readythread.column('threadId');
    const R = this.R;
    const E = R.E;
    for (let i = 0; i < readythread.length; i++) {
      const e = R.top * ES;
      const hi = ts[2 * i + 1]!;
      const lo = ts[2 * i]!;
      E[e + E_HI] = hi;
      E[e + E_LO] = lo;
      E[e + E_KEY] = (KIND_READY << 16) | cpu[i]!;
      E[e + E_A] = tid[i]!;
      E[e + E_SA] = this.slotOf(tid[i]! | 0);
      R.commit();
    }
  }

  /** Stores the switches in the reorder, and each CPU's latest switch. */
  private addSwitches(cswitch: Table<'cswitch'>): void {
    const cs = cswitch.columns;
    const ts = words(cswitch.column('timestamp'));
    const cpu = cswitch.column('cpu');
    const valid = cswitch.column('valid');
    const newTid = cswitch.column('newThreadId');
    const oldTid = cswitch.column('oldThreadId');
    const newPri = cswitch.column('newThreadPriority');
    const oldPri = cswitch.column('oldThreadPriority');
    const oldState = cswitch.column('oldThreadState');
    const oldWr = cswitch.column('oldThreadWaitReason');
    const cstate = cswitch.column('previousCState');
    const R = this.R;
    const E = R.E;
    for (let i = 0; i < cswitch.length; i++) {
      const c = cpu[i]!;
      if (c >= this.cpuCap || this.CS[c * CSW + C_IDLE_SLOT] === -1) this.ensureCpu(c);
      const e = R.top * ES;
      const v = valid[i]!;
      const hi = ts[2 * i + 1]!;
      const lo = ts[2 * i]!;
      E[e + E_HI] = hi;
      E[e + E_LO] = lo;
      E[e + E_KEY] = (KIND_SWITCH << 16) | c;
      const CS = this.CS;
      const x = c * CSW;
      const old = oldTid[i]! | 0;
      E[e + E_B] = old;
      E[e + E_SB] = old === 0 ? CS[x + C_IDLE_SLOT]! : CS[x + C_IN_SLOT] !== 0 && CS[x + C_IN_TID] === old ? CS[x + C_IN_SLOT]! - 1 : this.slotOf(old);
      // the present values, as bytes, and which are present (the cswitch valid bits moved to the S_ bits)
      let flags = ((v >>> L.CS_PREVIOUS_CSTATE) & 1) === 0 ? 0 : S_CSTATE | cstate[i]!;
      if ((v >>> L.CS_NEW_THREAD_ID) & 1) {
        const tid = newTid[i]! | 0;
        const slot = this.slotOf(tid);
        E[e + E_A] = tid;
        E[e + E_SA] = slot;
        CS[x + C_IN_TID] = tid;
        CS[x + C_IN_SLOT] = slot + 1;
        flags |= S_NEW_TID;
      } else {
        E[e + E_A] = 0;
        E[e + E_SA] = -1;
      }
      let small = 0;
      if ((v >>> L.CS_NEW_THREAD_PRIORITY) & 1) {
        small = newPri[i]! & 0xff;
        flags |= S_NEW_PRI;
      }
      if ((v >>> L.CS_OLD_THREAD_PRIORITY) & 1) {
        small |= (oldPri[i]! & 0xff) << 8;
        flags |= S_OLD_PRI;
      }
      if ((v >>> L.CS_OLD_THREAD_STATE) & 1) {
        small |= oldState[i]! << 16;
        flags |= S_OLD_STATE;
      }
      if ((v >>> L.CS_OLD_THREAD_WAIT_REASON) & 1) {
        small |= oldWr[i]! << 24;
        flags |= S_OLD_WR;
      }
      E[e + E_SMALL] = small;
      E[e + E_FLAGS] = flags;
      R.switchAt(c, hi, lo); // the CPU's latest switch delivered
      R.commit();
    }
  }

  finish(): CpuUsageStats {
    this.R.release(true);
    // the open rows, closed without a next switch, in the order they were opened
    const open: number[] = [];
    for (let c = 0; c < this.cpuCap; c++) if (this.CS[c * CSW + C_FLAGS]! & CF_OPEN) open.push(c);
    open.sort((x, y) => this.openSeq[x]! - this.openSeq[y]!);
    for (const c of open) {
      this.closeRow(c, false, 0, 0, 0, 0);
      this.CS[c * CSW + C_FLAGS]! &= ~CF_OPEN;
    }
    this.emitHold();
    this.drain();
    this.output.flush();
    this.stats.rows = this.output.rows;
    this.stats.threads = this.threadsWithLifetimes;
    this.stats.lateEvents = this.R.lateEvents;
    this.stats.maxHeld = this.R.maxHeld;
    return { ...this.stats };
  }

  /** The process of thread slot s at time (hi, lo) from the lifetimes (-1: unknown; the idle thread: 0). */
  private pidOf(s: number, hi: number, lo: number): number {
    const TS = this.TS;
    const t = s * TSW;
    const tf = TS[t + T_FLAGS]!;
    if (tf & TF_IDLE) return 0;
    let l = TS[t + T_LIFE_HEAD]! - 1;
    if (l < 0) return -1;
    if (l === TS[t + T_LIFE_TAIL]! - 1) {
      // one lifetime: from the copy in the slot
      if (tf & TF_FIRST_START && lt(hi, lo, TS[t + T_FIRST_START_HI]!, TS[t + T_FIRST_START_LO]!)) return -1;
      return TS[t + T_FIRST_PID]! >>> 0;
    }
    const LT = this.LT;
    let best = -1;
    for (; l >= 0; l = LT[l * LTW + LT_NEXT]! - 1) {
      const x = l * LTW;
      if (LT[x + LT_FLAGS]! & 1) {
        const sHi = LT[x + LT_START_HI]!;
        const sLo = LT[x + LT_START_LO]!;
        if (lt(hi, lo, sHi, sLo)) continue;
        // the latest start wins (a null start is the earliest); on a tie the later lifetime
        if (best < 0 || (LT[best + LT_FLAGS]! & 1) === 0 || !lt(sHi, sLo, LT[best + LT_START_HI]!, LT[best + LT_START_LO]!)) best = x;
      } else if (best < 0 || (LT[best + LT_FLAGS]! & 1) === 0) best = x;
    }
    return best < 0 ? -1 : LT[best + LT_PID]! >>> 0;
  }

  /** The process of thread id `tid` (as int32) at time (hi, lo) (-1: unknown). */
  private pidOfTid(tid: number, hi: number, lo: number): number {
    if (tid === 0) return 0;
    const s = this.tids.get(tid);
    return s < 0 ? -1 : this.pidOf(s, hi, lo);
  }

  /** Applies a Thread event (at word e of E): a Start, or any event of a thread without an open lifetime, opens a lifetime; an End closes it. */
  private applyThread(e: number): void {
    const E = this.R.E;
    const LT = this.LT;
    const s = E[e + E_SA]!;
    const op = E[e + E_SB]!;
    let open = -1; // the last open lifetime of the thread
    for (let l = this.TS[s * TSW + T_LIFE_HEAD]! - 1; l >= 0; l = LT[l * LTW + LT_NEXT]! - 1) if (LT[l * LTW + LT_FLAGS]! & 2) open = l;
    if (op === L.OPCODE_START || open < 0) {
      if (open >= 0) LT[open * LTW + LT_FLAGS]! &= ~2;
      this.addLifetime(s, op === L.OPCODE_START, E[e + E_HI]!, E[e + E_LO]!, E[e + E_B]!, op !== L.OPCODE_END);
    } else if (op === L.OPCODE_END) LT[open * LTW + LT_FLAGS]! &= ~2;
  }

  /**
   * Applies the events at positions order[from, to), sorted, in groups of one timestamp: the Thread events,
   * the ReadyThread events, then the switches (each completes its CPU's open row and opens its own), then
   * the switch-outs of the group.
   */
  private apply(order: Int32Array, from: number, to: number): void {
    const E = this.R.E;
    const TS = this.TS;
    const CS = this.CS;
    let i = from;
    while (i < to) {
      const first = order[i]! * ES;
      const tHi = E[first + E_HI]!;
      const tLo = E[first + E_LO]!;
      let j = i + 1;
      while (j < to && E[order[j]! * ES + E_LO] === tLo && E[order[j]! * ES + E_HI] === tHi) j++;
      // the Thread and ReadyThread events (they sort before the switches)
      let k = i;
      for (; k < j; k++) {
        const e = order[k]! * ES;
        const kind = E[e + E_KEY]! >>> 16;
        if (kind === KIND_SWITCH) break;
        if (kind === KIND_THREAD) {
          this.applyThread(e);
          continue;
        }
        // the readying thread: the last switch-in on its cpu at or before it (this group's switches count)
        const cpu = E[e + E_KEY]! & 0xffff;
        let known = false;
        let readying = 0;
        let rs = -1;
        if (cpu < this.cpuCap && CS[cpu * CSW + C_FLAGS]! & CF_CURRENT) {
          known = true;
          readying = CS[cpu * CSW + C_CURRENT]!;
          rs = CS[cpu * CSW + C_CURRENT_SLOT]!;
        }
        for (let q = j - 1; q > k; q--) {
          const x = order[q]! * ES;
          if (E[x + E_KEY]! >>> 16 !== KIND_SWITCH) break;
          if ((E[x + E_KEY]! & 0xffff) === cpu) {
            known = (E[x + E_FLAGS]! & S_NEW_TID) !== 0;
            readying = E[x + E_A]!;
            rs = E[x + E_SA]!;
            break;
          }
        }
        const t = E[e + E_SA]! * TSW;
        let f = (TS[t + T_FLAGS]! & ~(TF_READYING | TF_READYING_PID)) | TF_READY;
        TS[t + T_READY_HI] = tHi;
        TS[t + T_READY_LO] = tLo;
        if (known) {
          f |= TF_READYING;
          TS[t + T_READYING] = readying;
          TS[t + T_READYING_SLOT] = rs;
          const pid = this.pidOf(rs, tHi, tLo);
          if (pid >= 0) {
            f |= TF_READYING_PID;
            TS[t + T_READYING_PID] = pid;
          }
        }
        TS[t + T_FLAGS] = f;
      }
      // the switches
      for (let q = k; q < j; q++) {
        const e = order[q]! * ES;
        const cpu = E[e + E_KEY]! & 0xffff;
        const c = cpu * CSW;
        if (CS[c + C_FLAGS]! & CF_OPEN) {
          this.closeRow(cpu, true, tHi, tLo, E[e + E_SMALL]!, E[e + E_FLAGS]!);
          CS[c + C_FLAGS]! &= ~CF_OPEN;
        }
        if (E[e + E_FLAGS]! & S_NEW_TID) {
          CS[c + C_FLAGS]! |= CF_CURRENT;
          CS[c + C_CURRENT] = E[e + E_A]!;
          CS[c + C_CURRENT_SLOT] = E[e + E_SA]!;
          this.openRow(e, cpu);
        } else CS[c + C_FLAGS]! &= ~CF_CURRENT;
      }
      // their switch-outs
      for (let q = k; q < j; q++) {
        const e = order[q]! * ES;
        const t = E[e + E_SB]! * TSW;
        TS[t + T_FLAGS]! |= TF_OUT;
        TS[t + T_OUT_HI] = tHi;
        TS[t + T_OUT_LO] = tLo;
        TS[t + T_OUT_SMALL] = ((E[e + E_SMALL]! >>> 8) & 0xffffff) | ((E[e + E_FLAGS]! & (S_OLD_PRI | S_OLD_STATE | S_OLD_WR)) << 15);
      }
      i = j;
    }
  }

  /** Opens the row of switch (at word e) on `cpu`: the switch-in with what is known of its thread now. */
  private openRow(e: number, cpu: number): void {
    const E = this.R.E;
    const CS = this.CS;
    const TS = this.TS;
    const c = cpu * CSW;
    const tHi = E[e + E_HI]!;
    const tLo = E[e + E_LO]!;
    const tid = E[e + E_A]!;
    const ns = E[e + E_SA]!;
    const os = E[e + E_SB]!;
    let f = (CS[c + C_FLAGS]! & CF_CURRENT) | CF_OPEN;
    this.openSeq[cpu] = this.opened++;
    CS[c + C_TS_HI] = tHi;
    CS[c + C_TS_LO] = tLo;
    CS[c + C_NEW_TID] = tid;
    CS[c + C_OLD_TID] = E[e + E_B]!;
    CS[c + C_NEW_SLOT] = ns;
    CS[c + C_OLD_SLOT] = os;
    CS[c + C_SMALL] = E[e + E_SMALL]!;
    CS[c + C_SFLAGS] = E[e + E_FLAGS]!;
    const newPid = this.pidOf(ns, tHi, tLo);
    if (newPid >= 0) {
      f |= CF_NEW_PID;
      CS[c + C_NEW_PID] = newPid;
    }
    const oldPid = this.pidOf(os, tHi, tLo);
    if (oldPid >= 0) {
      f |= CF_OLD_PID;
      CS[c + C_OLD_PID] = oldPid;
    }
    // the thread's latest switch-out (the idle thread: one per cpu) and ready, copied
    const o = (tid === 0 ? CS[c + C_IDLE_SLOT]! : ns) * TSW;
    const hasLast = (TS[o + T_FLAGS]! & TF_OUT) !== 0;
    const lastHi = TS[o + T_OUT_HI]!;
    const lastLo = TS[o + T_OUT_LO]!;
    if (hasLast) {
      f |= CF_LAST;
      CS[c + C_LAST_HI] = lastHi;
      CS[c + C_LAST_LO] = lastLo;
      CS[c + C_LAST_SMALL] = TS[o + T_OUT_SMALL]!;
    }
    const t = ns * TSW;
    const tf = TS[t + T_FLAGS]!;
    if (tf & TF_READY && (!hasLast || lt(lastHi, lastLo, TS[t + T_READY_HI]!, TS[t + T_READY_LO]!))) {
      f |= CF_READY;
      CS[c + C_READY_HI] = TS[t + T_READY_HI]!;
      CS[c + C_READY_LO] = TS[t + T_READY_LO]!;
      if (tf & TF_READYING) {
        f |= CF_READYING;
        CS[c + C_READYING] = TS[t + T_READYING]!;
        CS[c + C_READYING_SLOT] = TS[t + T_READYING_SLOT]!;
        if (tf & TF_READYING_PID) {
          f |= CF_READYING_PID;
          CS[c + C_READYING_PID] = TS[t + T_READYING_PID]!;
        }
      }
    }
    CS[c + C_FLAGS] = f;
  }

  /**
   * Completes the open row of `cpu` with its next switch at (nHi, nLo) — its E_SMALL and E_FLAGS given —
   * or none at the end, and stages it for the output (or the hold).
   */
  private closeRow(cpu: number, hasNext: boolean, nHi: number, nLo: number, nSmall: number, nFlags: number): void {
    const CS = this.CS;
    const c = cpu * CSW;
    const f = CS[c + C_FLAGS]!;
    const tsHi = CS[c + C_TS_HI]!;
    const tsLo = CS[c + C_TS_LO]!;
    let newPid = f & CF_NEW_PID ? CS[c + C_NEW_PID]! >>> 0 : -1;
    let oldPid = f & CF_OLD_PID ? CS[c + C_OLD_PID]! >>> 0 : -1;
    const hasReady = (f & CF_READY) !== 0;
    const readying = hasReady && (f & CF_READYING) !== 0;
    let readyingPid = readying && f & CF_READYING_PID ? CS[c + C_READYING_PID]! >>> 0 : -1;
    let wait = false;
    if (!this.final && (newPid < 0 || oldPid < 0 || (readying && readyingPid < 0))) {
      // a Thread event applied since may know the thread now; if not, the row waits for finish()
      if (newPid < 0) newPid = this.pidOf(CS[c + C_NEW_SLOT]!, tsHi, tsLo);
      if (oldPid < 0) oldPid = this.pidOf(CS[c + C_OLD_SLOT]!, tsHi, tsLo);
      if (readying && readyingPid < 0) readyingPid = this.pidOf(CS[c + C_READYING_SLOT]!, CS[c + C_READY_HI]!, CS[c + C_READY_LO]!);
      if (newPid < 0 || oldPid < 0 || (readying && readyingPid < 0)) {
        if (this.nHold < this.holdRows) wait = true;
        else this.stats.unresolvedRows++;
      }
    }
    let R: Int32Array;
    let r: number;
    if (wait) {
      if ((this.nHold + 1) * RWS > this.hold.length) this.hold = grown(this.hold, Math.min(this.holdRows, Math.max(1024, 2 * (this.hold.length / RWS))) * RWS);
      R = this.hold;
      r = this.nHold++ * RWS;
      this.stats.heldRows++;
    } else {
      R = this.stage;
      r = this.nStage++ * RWS;
    }
    let v = ALWAYS;
    R[r + R_CPU] = cpu;
    R[r + R_IN_HI] = tsHi;
    R[r + R_IN_LO] = tsLo;
    R[r + R_NEW_TID] = CS[c + C_NEW_TID]!;
    R[r + R_NEW_SLOT] = CS[c + C_NEW_SLOT]!;
    R[r + R_OLD_TID] = CS[c + C_OLD_TID]!;
    let smallA = 0;
    if (hasNext) {
      R[r + R_NEXT_HI] = nHi;
      R[r + R_NEXT_LO] = nLo;
      v |= (1 << L.CU_NEXT_SWITCH_OUT_TIME) | (1 << L.CU_CPU_USAGE);
      if (nFlags & S_OLD_PRI) {
        smallA = nSmall & 0xff00; // newOutPri
        v |= 1 << L.CU_NEW_OUT_PRI;
      }
    } else {
      R[r + R_NEXT_HI] = 0;
      R[r + R_NEXT_LO] = 0;
    }
    R[r + R_NEW_PID] = newPid < 0 ? 0 : newPid;
    if (newPid >= 0) v |= 1 << L.CU_NEW_PROCESS_ID;
    R[r + R_OLD_PID] = oldPid < 0 ? 0 : oldPid;
    if (oldPid >= 0) v |= 1 << L.CU_OLD_PROCESS_ID;
    // the row's own switch: newInPri, oldOutPri, oldState, oldWaitReason, prevCState
    const sm = CS[c + C_SMALL]!;
    const sf = CS[c + C_SFLAGS]!;
    let smallB = 0;
    if (sf & S_NEW_PRI) {
      smallA |= sm & 0xff;
      v |= 1 << L.CU_NEW_IN_PRI;
    }
    if (sf & S_OLD_PRI) {
      smallB |= sm & 0xff00;
      v |= 1 << L.CU_OLD_OUT_PRI;
    }
    if (sf & S_OLD_STATE) {
      smallB |= sm & 0xff0000;
      v |= 1 << L.CU_OLD_STATE;
    }
    if (sf & S_OLD_WR) {
      smallB |= sm & 0xff000000;
      v |= 1 << L.CU_OLD_WAIT_REASON;
    }
    if (sf & S_CSTATE) {
      R[r + R_CSTATE] = sf & 0xff;
      v |= 1 << L.CU_PREV_CSTATE;
    } else R[r + R_CSTATE] = 0;
    if (f & CF_LAST) {
      const ls = CS[c + C_LAST_SMALL]!;
      R[r + R_LAST_HI] = CS[c + C_LAST_HI]!;
      R[r + R_LAST_LO] = CS[c + C_LAST_LO]!;
      v |= 1 << L.CU_LAST_SWITCH_OUT_TIME;
      if (ls & O_PRI) {
        smallA |= (ls & 0xff) << 16;
        v |= 1 << L.CU_NEW_PREV_OUT_PRI;
      }
      if (ls & O_STATE) {
        smallA |= ((ls >>> 8) & 0xff) << 24;
        v |= 1 << L.CU_NEW_PREV_STATE;
      }
      if (ls & O_WR) {
        smallB |= (ls >>> 16) & 0xff;
        v |= 1 << L.CU_NEW_PREV_WAIT_REASON;
      }
    } else {
      R[r + R_LAST_HI] = 0;
      R[r + R_LAST_LO] = 0;
    }
    R[r + R_SMALL_A] = smallA;
    R[r + R_SMALL_B] = smallB;
    R[r + R_READYING_TID] = 0;
    R[r + R_READYING_PID] = 0;
    if (hasReady) {
      R[r + R_READY_HI] = CS[c + C_READY_HI]!;
      R[r + R_READY_LO] = CS[c + C_READY_LO]!;
      v |= (1 << L.CU_READY_TIME) | (1 << L.CU_READY);
      if (f & CF_LAST) v |= 1 << L.CU_WAITS;
      if (readying) {
        R[r + R_READYING_TID] = CS[c + C_READYING]!;
        v |= 1 << L.CU_READYING_THREAD_ID;
        if (readyingPid >= 0) {
          R[r + R_READYING_PID] = readyingPid;
          v |= 1 << L.CU_READYING_PROCESS_ID;
        }
      }
    } else {
      R[r + R_READY_HI] = 0;
      R[r + R_READY_LO] = 0;
    }
    R[r + R_VALID] = v;
    if (!wait && this.nStage === STAGE_ROWS) this.drain();
  }

  /** The staged rows to the output. */
  private drain(): void {
    if (this.nStage === 0) return;
    this.output.put(this.stage, this.nStage);
    this.nStage = 0;
  }

  /**
   * finish(): the held rows' process ids that are still null, from the final lifetimes (those of threads
   * that never had one stay null), then the rows into the output in their completion order.
   */
  private emitHold(): void {
    const H = this.hold;
    const nHold = this.nHold;
    for (let r = 0; r < nHold * RWS; r += RWS) {
      let v = H[r + R_VALID]!;
      const inHi = H[r + R_IN_HI]!;
      const inLo = H[r + R_IN_LO]!;
      if (((v >>> L.CU_NEW_PROCESS_ID) & 1) === 0) {
        const pid = this.pidOfTid(H[r + R_NEW_TID]!, inHi, inLo);
        if (pid >= 0) {
          H[r + R_NEW_PID] = pid;
          v |= 1 << L.CU_NEW_PROCESS_ID;
        }
      }
      if (((v >>> L.CU_OLD_PROCESS_ID) & 1) === 0) {
        const pid = this.pidOfTid(H[r + R_OLD_TID]!, inHi, inLo);
        if (pid >= 0) {
          H[r + R_OLD_PID] = pid;
          v |= 1 << L.CU_OLD_PROCESS_ID;
        }
      }
      if (((v >>> L.CU_READYING_THREAD_ID) & 1) === 1 && ((v >>> L.CU_READYING_PROCESS_ID) & 1) === 0) {
        const pid = this.pidOfTid(H[r + R_READYING_TID]!, H[r + R_READY_HI]!, H[r + R_READY_LO]!);
        if (pid >= 0) {
          H[r + R_READYING_PID] = pid;
          v |= 1 << L.CU_READYING_PROCESS_ID;
        }
      }
      H[r + R_VALID] = v;
      const S = this.stage;
      for (let w = 0, at = this.nStage++ * RWS; w < RWS; w++) S[at + w] = H[r + w]!;
      if (this.nStage === STAGE_ROWS) this.drain();
    }
    this.hold = new Int32Array(0);
    this.nHold = 0;
  }
}

/** The 64-bit column as (lo, hi) 32-bit words, as int32. */
function words(col: BigInt64Array): Int32Array {
  return new Int32Array(col.buffer, col.byteOffset, col.length * 2);
}
