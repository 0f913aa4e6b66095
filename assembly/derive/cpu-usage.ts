// The cpuUsage derivation in WebAssembly (definitions: README "cpuUsage"; the streaming rules: the file
// comment of src/derive/cpu-usage.ts and docs/design/streaming.md): the core of the streaming
// CpuUsageDeriver, written to be read against its TypeScript twin, the class in src/derive/cpu-usage.ts,
// which the differential tests (test/cpu-usage-wasm.test.ts) hold it to. Times are native i64.
//
// Per chunk the JS side copies the columns the derivation reads into the input region (reserveInput,
// inputColumn) and calls add(); completed rows are staged in the output region (outPtr: RWS int32 words
// each, the R_ layout of src/derive/cpu-usage.ts) and handed to the import env.drain(n) a block of
// STAGE_ROWS at a time (the block stays in cache) and at the end of each call — or, after foldInit, folded
// per thread in this module (cpu-fold.ts) and never staged. finish() completes the CPUs' open rows, then
// the held ones. Memory: thread slots, lifetimes, CPUs, the reorder's window, the
// hold (at most holdRows rows), one block — never the trace.
//
// Split in two (splitInit; src/derive/remote-cpu-fold.ts runs the halves on two threads): an INTAKE instance
// takes the chunks, gives the threads their slots and reorders the events, but streams the released
// records out (streamCount, streamPtr: the records in the order they are applied, the ends of the groups
// apply() takes them in, the idle slots made) instead of applying them; an APPLY instance takes that stream
// (applyReserve, applyStream) and applies it as the whole core would — the same slots, rows and fold.
import * as R from '../generated/registry';
import { OPCODE_END, OPCODE_START } from '../layout';
import { idAdd, idCached, idGet, idInit, idRemember } from './ids';
import { LF_OPEN, LF_START, lifeAppend, LT, LT_FLAGS, LT_NEXT, LTB, pidOfLifetimes } from './lifelist';
import { col } from './input';
import { folding, foldRow } from './cpu-fold';
import { begin, commit, copyRecord, E, lateEvents, maxHeld, P, REC, RE_KEY, RE_TIME, regrow, releaseCut, releaseDone, reorderInit, switchAt, top } from './reorder';

const KIND_THREAD: i32 = 0;
const KIND_READY: i32 = 1;
const KIND_SWITCH: i32 = 2;

// Event record (REC bytes; RE_TIME, RE_KEY first): the E_ words of the twin.
const E_A: i32 = 12; // switch: newThreadId (if S_NEW_TID); ready, thread event: threadId
const E_B: i32 = 16; // switch: oldThreadId; thread event: processId
const E_SA: i32 = 20; // thread slot of E_A (switch: -1 when the new thread is unknown)
const E_SB: i32 = 24; // switch: the slot of the old thread's switch-outs; thread event: opcode
const E_SMALL: i32 = 28; // switch: newThreadPriority | oldThreadPriority << 8 | oldThreadState << 16 | oldThreadWaitReason << 24
const E_FLAGS: i32 = 32; // switch: previousCState | the S_ bits
const S_NEW_PRI: i32 = 1 << 8;
const S_OLD_PRI: i32 = 1 << 9;
const S_OLD_STATE: i32 = 1 << 10;
const S_OLD_WR: i32 = 1 << 11;
const S_CSTATE: i32 = 1 << 12;
const S_NEW_TID: i32 = 1 << 13;

// Thread state: TSB bytes per slot (one cache line).
const TSB: i32 = 64;
const T_FLAGS: i32 = 0;
const T_OUT_SMALL: i32 = 4;
const T_OUT: i32 = 8; // i64
const T_READY: i32 = 16; // i64
const T_READYING: i32 = 24;
const T_READYING_SLOT: i32 = 28;
const T_READYING_PID: i32 = 32;
const T_LIFE_HEAD: i32 = 36;
const T_LIFE_TAIL: i32 = 40;
const T_FIRST_PID: i32 = 44;
const T_FIRST_START: i32 = 48; // i64
const TF_OUT: i32 = 1;
const TF_READY: i32 = 2;
const TF_IDLE: i32 = 4;
const TF_READYING: i32 = 8;
const TF_READYING_PID: i32 = 16;
const TF_FIRST_START: i32 = 32;
const O_PRI: i32 = 1 << 24;
const O_STATE: i32 = 1 << 25;
const O_WR: i32 = 1 << 26;

// CPU state: CSB bytes per CPU.
const CSB: i32 = 128;
const C_FLAGS: i32 = 0;
const C_IDLE_SLOT: i32 = 4;
const C_CURRENT: i32 = 8;
const C_CURRENT_SLOT: i32 = 12;
const C_NEW_TID: i32 = 16;
const C_OLD_TID: i32 = 20;
const C_NEW_SLOT: i32 = 24;
const C_OLD_SLOT: i32 = 28;
const C_NEW_PID: i32 = 32;
const C_OLD_PID: i32 = 36;
const C_SMALL: i32 = 40;
const C_SFLAGS: i32 = 44;
const C_LAST_SMALL: i32 = 48;
const C_READYING: i32 = 52;
const C_READYING_SLOT: i32 = 56;
const C_READYING_PID: i32 = 60;
const C_IN_TID: i32 = 64;
const C_IN_SLOT: i32 = 68;
const C_TS: i32 = 72; // i64: the open row's switch-in
const C_LAST: i32 = 80; // i64
const C_READY: i32 = 88; // i64
const C_OPEN_SEQ: i32 = 96; // i64: when the open row was opened
const CF_OPEN: i32 = 1;
const CF_CURRENT: i32 = 2;
const CF_LAST: i32 = 8;
const CF_READY: i32 = 16;
const CF_READYING: i32 = 32;
const CF_READYING_PID: i32 = 64;
const CF_NEW_PID: i32 = 128;
const CF_OLD_PID: i32 = 256;

// Staged rows: RWS int32 words, the R_ layout of src/derive/cpu-usage.ts (byte offsets here).
const RWS: i32 = 20;
const RB: i32 = RWS * 4;
const R_CPU: i32 = 0;
const R_IN_HI: i32 = 4;
const R_IN_LO: i32 = 8;
const R_NEXT_HI: i32 = 12;
const R_NEXT_LO: i32 = 16;
const R_NEW_TID: i32 = 20;
const R_OLD_TID: i32 = 24;
const R_NEW_PID: i32 = 28;
const R_OLD_PID: i32 = 32;
const R_LAST_HI: i32 = 36;
const R_LAST_LO: i32 = 40;
const R_READY_HI: i32 = 44;
const R_READY_LO: i32 = 48;
const R_READYING_TID: i32 = 52;
const R_READYING_PID: i32 = 56;
const R_SMALL_A: i32 = 60;
const R_SMALL_B: i32 = 64;
const R_CSTATE: i32 = 68;
const R_VALID: i32 = 72;
const R_NEW_SLOT: i32 = 76;

// A held row: the staged row, then the slots its process ids are looked up by at finish().
const HRB: i32 = RB + 8;
const H_OLD_SLOT: i32 = RB;
const H_READYING_SLOT: i32 = RB + 4;

// What an instance does of the derivation (splitInit).
const WHOLE: i32 = 0;
const INTAKE: i32 = 1;
const APPLY: i32 = 2;

const ALWAYS: i32 = (1 << R.CU_VALID) | (1 << R.CU_CPU) | (1 << R.CU_SWITCH_IN_TIME) | (1 << R.CU_NEW_THREAD_ID) | (1 << R.CU_OLD_THREAD_ID);
/** rows staged before they go to the JS side */
const STAGE_ROWS: i32 = 2048;

/** Takes the n rows staged at outPtr() (borrowed until it returns). */
// @ts-ignore: decorator
@external("env", "drain")
declare function drain(n: i32): void;

// thread slots, lifetimes, CPUs
let TS: usize = 0;
let tsCap: i32 = 0;
let nSlots: i32 = 0;
let threadsWithLifetimes: i32 = 0;
let CS: usize = 0;
let cpuCap: i32 = 0;
let opened: i64 = 0;
// rows: the output of the current call, and the hold
let OUT: usize = 0;
let nOut: i32 = 0;
let HOLD: usize = 0;
let holdCap: i32 = 0;
let nHold: i32 = 0;
let holdRows: i32 = 0;
/** the lifetimes are the trace's final ones (lifetimes()): no row waits for a process id */
let final: bool = false;
let heldRows: i32 = 0;
let unresolvedRows: i32 = 0;
/** the one-event order of a late event */
let single: usize = 0;
let mode: i32 = WHOLE;
// the stream between the halves (INTAKE: written; APPLY: read): the records (in the reorder's store E when
// applying), the ends of the groups apply() takes them in (i32), the idle slots made (slot, cpu or -1: i32 pairs)
let SREC: usize = 0;
let sRecCap: i32 = 0;
let nSRec: i32 = 0;
let SEND: usize = 0;
let sEndCap: i32 = 0;
let nSEnd: i32 = 0;
let SIDLE: usize = 0;
let sIdleCap: i32 = 0;
let nSIdle: i32 = 0;

/** Starts the derivation (once per instance: an instance is one deriver's): the reorder's window, the hold's bound, the first regions. */
export function init(windowEvents: i32, holdRowsMax: i32): void {
  reorderInit(windowEvents, true);
  holdRows = holdRowsMax;
  single = heap.alloc(4);
  OUT = heap.alloc(<usize>STAGE_ROWS * RB);
  idInit();
  tsCap = 256;
  TS = regrow(0, 0, <usize>tsCap * TSB);
}

// ---- slots, lifetimes, CPUs

/** The slot of thread `tid` (made if new): from the cache of recent ids, else the index. */
// @ts-ignore: decorator
@inline function slotOf(tid: i32): i32 {
  const s = idCached(tid);
  return s >= 0 ? s : slotOfMiss(tid);
}

function slotOfMiss(tid: i32): i32 {
  let s = idGet(tid);
  if (s >= 0) idRemember(tid, s);
  else {
    s = newSlot(tid == 0, -1);
    idAdd(tid, s);
  }
  return s;
}

/** A new thread slot; idle: the idle thread's (of `cpu`; -1: the slot of thread id 0), streamed by an INTAKE instance. */
function newSlot(idle: bool, cpu: i32): i32 {
  const s = nSlots++;
  if (mode != INTAKE) {
    growSlots(nSlots);
    store<i32>(TS + <usize>s * TSB, idle ? TF_IDLE : 0, T_FLAGS);
  } else if (idle) {
    // the slot is the APPLY instance's
    if (nSIdle == sIdleCap) {
      SIDLE = regrow(SIDLE, <usize>sIdleCap << 3, <usize>max(16, 2 * sIdleCap) << 3);
      sIdleCap = max(16, 2 * sIdleCap);
    }
    store<i32>(SIDLE + (<usize>nSIdle << 3), s);
    store<i32>(SIDLE + (<usize>nSIdle << 3), cpu, 4);
    nSIdle++;
  }
  return s;
}

/** Room for n thread slots. */
function growSlots(n: i32): void {
  if (n <= tsCap) return;
  let cap = tsCap;
  while (cap < n) cap *= 2;
  TS = regrow(TS, <usize>tsCap * TSB, <usize>cap * TSB);
  tsCap = cap;
}

function addLifetime(s: i32, hasStart: bool, t: i64, pid: i32, open: bool): void {
  const ts = TS + <usize>s * TSB;
  if (load<i32>(ts, T_LIFE_HEAD) == 0) threadsWithLifetimes++;
  const tail = load<i32>(ts, T_LIFE_TAIL);
  const l = lifeAppend(s, tail, (hasStart ? LF_START : 0) | (open ? LF_OPEN : 0), t, pid);
  if (tail == 0) {
    store<i32>(ts, l + 1, T_LIFE_HEAD);
    store<i64>(ts, t, T_FIRST_START);
    store<i32>(ts, pid, T_FIRST_PID);
    if (hasStart) store<i32>(ts, load<i32>(ts, T_FLAGS) | TF_FIRST_START, T_FLAGS);
  }
  store<i32>(ts, l + 1, T_LIFE_TAIL);
}

function ensureCpu(cpu: i32): void {
  growCpus(cpu);
  const c = CS + <usize>cpu * CSB;
  if (load<i32>(c, C_IDLE_SLOT) == -1) store<i32>(c, newSlot(true, cpu), C_IDLE_SLOT);
}

/** The state of CPUs up to `cpu` (new ones without an idle slot). */
function growCpus(cpu: i32): void {
  if (cpu < cpuCap) return;
  let cap = max(8, cpuCap);
  while (cap <= cpu) cap *= 2;
  CS = regrow(CS, <usize>cpuCap * CSB, <usize>cap * CSB);
  for (let c = cpuCap; c < cap; c++) store<i32>(CS + <usize>c * CSB, -1, C_IDLE_SLOT);
  cpuCap = cap;
}

/** The process of thread slot s at time t (-1: unknown; the idle thread: 0): a thread of one lifetime from the copy in its slot. */
// @ts-ignore: decorator
@inline function pidOf(s: i32, t: i64): i64 {
  const ts = TS + <usize>s * TSB;
  const tf = load<i32>(ts, T_FLAGS);
  if (tf & TF_IDLE) return 0;
  const l = load<i32>(ts, T_LIFE_HEAD) - 1;
  if (l < 0) return -1;
  if (l != load<i32>(ts, T_LIFE_TAIL) - 1) return pidOfLifetimes(s, l, t);
  if (tf & TF_FIRST_START && t < load<i64>(ts, T_FIRST_START)) return -1;
  return <i64>load<u32>(ts, T_FIRST_PID);
}

// ---- input (its region: input.ts)

/**
 * A whole decode: the lifetimes of its `threads` table (n rows in the input region as Thread events:
 * column 0 startTime, 2 threadId, 3 processId, 4 1 when startTime is not null), in its row order; they are
 * final (no row waits), and add() is then given no Thread events.
 */
export function lifetimes(n: i32): void {
  final = true;
  const ts = col(0);
  const tid = col(2);
  const pid = col(3);
  const has = col(4);
  for (let i = 0; i < n; i++) {
    addLifetime(slotOf(load<i32>(tid + (<usize>i << 2))), load<u8>(has + <usize>i) != 0, load<i64>(ts + (<usize>i << 3)), load<i32>(pid + (<usize>i << 2)), false);
  }
}

/** Takes one chunk (its columns in the input region): stores its events, releases those up to the watermark. */
export function add(nThread: i32, nReady: i32, nSwitch: i32): void {
  streamReset();
  begin(nThread + nReady + nSwitch);
  if (nThread > 0) addThreadEvents(nThread);
  if (nReady > 0) addReadies(nReady);
  if (nSwitch > 0) addSwitches(nSwitch);
  release(false);
  drainOut();
}

function release(all: bool): void {
  const cut = releaseCut(all);
  if (cut > 0) applyOrStream(P, 0, cut);
  releaseDone(cut);
}

/** The events at order[from, to) applied as one apply() call, or (INTAKE) streamed out as one. */
function applyOrStream(order: usize, from: i32, to: i32): void {
  if (mode != INTAKE) {
    apply(order, from, to);
    return;
  }
  const n = to - from;
  if (nSRec + n > sRecCap) {
    const cap = max(nSRec + n, max(1024, 2 * sRecCap));
    SREC = regrow(SREC, <usize>nSRec * REC, <usize>cap * REC);
    sRecCap = cap;
  }
  for (let i = from; i < to; i++) copyRecord(SREC + <usize>(nSRec++) * REC, rec(order, i));
  if (nSEnd == sEndCap) {
    SEND = regrow(SEND, <usize>sEndCap << 2, <usize>max(64, 2 * sEndCap) << 2);
    sEndCap = max(64, 2 * sEndCap);
  }
  store<i32>(SEND + (<usize>(nSEnd++) << 2), nSRec);
}

/** Commits the record at `top`; a late one is applied at once. */
// @ts-ignore: decorator
@inline function put(): void {
  if (!commit()) {
    store<i32>(single, top);
    applyOrStream(single, 0, 1);
  }
}

function addThreadEvents(n: i32): void {
  const ts = col(0);
  const cpu = col(1);
  const tid = col(2);
  const pid = col(3);
  const op = col(4);
  for (let i = 0; i < n; i++) {
    const e = E + <usize>top * REC;
    const id = load<i32>(tid + (<usize>i << 2));
    store<i64>(e, load<i64>(ts + (<usize>i << 3)), RE_TIME);
    store<i32>(e, (KIND_THREAD << 16) | <i32>load<u16>(cpu + (<usize>i << 1)), RE_KEY);
    store<i32>(e, id, E_A);
    store<i32>(e, load<i32>(pid + (<usize>i << 2)), E_B);
    store<i32>(e, slotOf(id), E_SA);
    store<i32>(e, <i32>load<u8>(op + <usize>i), E_SB);
    put();
  }
}

function addReadies(n: i32): void {
  const ts = col(5);
  const cpu = col(6);
  const tid = col(7);
  for (let i = 0; i < n; i++) {
    const e = E + <usize>top * REC;
    const id = load<i32>(tid + (<usize>i << 2));
    store<i64>(e, load<i64>(ts + (<usize>i << 3)), RE_TIME);
    store<i32>(e, (KIND_READY << 16) | <i32>load<u16>(cpu + (<usize>i << 1)), RE_KEY);
    store<i32>(e, id, E_A);
    store<i32>(e, slotOf(id), E_SA);
    put();
  }
}

function addSwitches(n: i32): void {
  const ts = col(8);
  const cpus = col(9);
  const valid = col(10);
  const newTid = col(11);
  const oldTid = col(12);
  const newPri = col(13);
  const oldPri = col(14);
  const oldState = col(15);
  const oldWr = col(16);
  const cstate = col(17);
  for (let i = 0; i < n; i++) {
    const c = <i32>load<u16>(cpus + (<usize>i << 1));
    if (c >= cpuCap || load<i32>(CS + <usize>c * CSB, C_IDLE_SLOT) == -1) ensureCpu(c);
    const e = E + <usize>top * REC;
    const v = load<u32>(valid + (<usize>i << 2));
    const t = load<i64>(ts + (<usize>i << 3));
    store<i64>(e, t, RE_TIME);
    store<i32>(e, (KIND_SWITCH << 16) | c, RE_KEY);
    const x = CS + <usize>c * CSB;
    const old = load<i32>(oldTid + (<usize>i << 2));
    store<i32>(e, old, E_B);
    const inSlot = load<i32>(x, C_IN_SLOT);
    store<i32>(e, old == 0 ? load<i32>(x, C_IDLE_SLOT) : inSlot != 0 && load<i32>(x, C_IN_TID) == old ? inSlot - 1 : slotOf(old), E_SB);
    let flags = ((v >> R.CS_PREVIOUS_CSTATE) & 1) == 0 ? 0 : S_CSTATE | <i32>load<u8>(cstate + <usize>i);
    if ((v >> R.CS_NEW_THREAD_ID) & 1) {
      const tid = load<i32>(newTid + (<usize>i << 2));
      const slot = slotOf(tid);
      store<i32>(e, tid, E_A);
      store<i32>(e, slot, E_SA);
      store<i32>(x, tid, C_IN_TID);
      store<i32>(x, slot + 1, C_IN_SLOT);
      flags |= S_NEW_TID;
    } else {
      store<i32>(e, 0, E_A);
      store<i32>(e, -1, E_SA);
    }
    let small = 0;
    if ((v >> R.CS_NEW_THREAD_PRIORITY) & 1) {
      small = <i32>load<u8>(newPri + <usize>i);
      flags |= S_NEW_PRI;
    }
    if ((v >> R.CS_OLD_THREAD_PRIORITY) & 1) {
      small |= <i32>load<u8>(oldPri + <usize>i) << 8;
      flags |= S_OLD_PRI;
    }
    if ((v >> R.CS_OLD_THREAD_STATE) & 1) {
      small |= <i32>load<u8>(oldState + <usize>i) << 16;
      flags |= S_OLD_STATE;
    }
    if ((v >> R.CS_OLD_THREAD_WAIT_REASON) & 1) {
      small |= <i32>load<u8>(oldWr + <usize>i) << 24;
      flags |= S_OLD_WR;
    }
    store<i32>(e, small, E_SMALL);
    store<i32>(e, flags, E_FLAGS);
    switchAt(c, t);
    put();
  }
}

// ---- applying events

// @ts-ignore: decorator
@inline function rec(order: usize, i: i32): usize {
  return E + <usize>load<i32>(order + (<usize>i << 2)) * REC;
}

function applyThread(e: usize): void {
  const s = load<i32>(e, E_SA);
  const op = load<i32>(e, E_SB);
  let open = -1;
  for (let l = load<i32>(TS + <usize>s * TSB, T_LIFE_HEAD) - 1; l >= 0; l = load<i32>(LT + <usize>l * LTB, LT_NEXT) - 1) {
    if (load<i32>(LT + <usize>l * LTB, LT_FLAGS) & LF_OPEN) open = l;
  }
  if (op == OPCODE_START || open < 0) {
    if (open >= 0) {
      const x = LT + <usize>open * LTB;
      store<i32>(x, load<i32>(x, LT_FLAGS) & ~LF_OPEN, LT_FLAGS);
    }
    addLifetime(s, op == OPCODE_START, load<i64>(e, RE_TIME), load<i32>(e, E_B), op != OPCODE_END);
  } else if (op == OPCODE_END) {
    const x = LT + <usize>open * LTB;
    store<i32>(x, load<i32>(x, LT_FLAGS) & ~LF_OPEN, LT_FLAGS);
  }
}

/** Applies the events at order[from, to), sorted, in groups of one timestamp (the twin's apply). */
function apply(order: usize, from: i32, to: i32): void {
  let i = from;
  while (i < to) {
    const t = load<i64>(rec(order, i), RE_TIME);
    let j = i + 1;
    while (j < to && load<i64>(rec(order, j), RE_TIME) == t) j++;
    // the Thread and ReadyThread events (they sort before the switches)
    let k = i;
    for (; k < j; k++) {
      const e = rec(order, k);
      const key = load<i32>(e, RE_KEY);
      const kind = key >>> 16;
      if (kind == KIND_SWITCH) break;
      if (kind == KIND_THREAD) {
        applyThread(e);
        continue;
      }
      // the readying thread: the last switch-in on its cpu at or before it (this group's switches count)
      const cpu = key & 0xffff;
      let known = false;
      let readying = 0;
      let rs = -1;
      if (cpu < cpuCap && load<i32>(CS + <usize>cpu * CSB, C_FLAGS) & CF_CURRENT) {
        known = true;
        readying = load<i32>(CS + <usize>cpu * CSB, C_CURRENT);
        rs = load<i32>(CS + <usize>cpu * CSB, C_CURRENT_SLOT);
      }
      for (let q = j - 1; q > k; q--) {
        const x = rec(order, q);
        const xk = load<i32>(x, RE_KEY);
        if (xk >>> 16 != KIND_SWITCH) break;
        if ((xk & 0xffff) == cpu) {
          known = (load<i32>(x, E_FLAGS) & S_NEW_TID) != 0;
          readying = load<i32>(x, E_A);
          rs = load<i32>(x, E_SA);
          break;
        }
      }
      const ts = TS + <usize>load<i32>(e, E_SA) * TSB;
      let f = (load<i32>(ts, T_FLAGS) & ~(TF_READYING | TF_READYING_PID)) | TF_READY;
      store<i64>(ts, t, T_READY);
      if (known) {
        f |= TF_READYING;
        store<i32>(ts, readying, T_READYING);
        store<i32>(ts, rs, T_READYING_SLOT);
        const pid = pidOf(rs, t);
        if (pid >= 0) {
          f |= TF_READYING_PID;
          store<i32>(ts, <i32>pid, T_READYING_PID);
        }
      }
      store<i32>(ts, f, T_FLAGS);
    }
    // the switches
    for (let q = k; q < j; q++) {
      const e = rec(order, q);
      const cpu = load<i32>(e, RE_KEY) & 0xffff;
      const c = CS + <usize>cpu * CSB;
      const sflags = load<i32>(e, E_FLAGS);
      if (load<i32>(c, C_FLAGS) & CF_OPEN) {
        closeRow(cpu, true, t, load<i32>(e, E_SMALL), sflags);
        store<i32>(c, load<i32>(c, C_FLAGS) & ~CF_OPEN, C_FLAGS);
      }
      if (sflags & S_NEW_TID) {
        store<i32>(c, load<i32>(c, C_FLAGS) | CF_CURRENT, C_FLAGS);
        store<i32>(c, load<i32>(e, E_A), C_CURRENT);
        store<i32>(c, load<i32>(e, E_SA), C_CURRENT_SLOT);
        openRow(e, cpu);
      } else store<i32>(c, load<i32>(c, C_FLAGS) & ~CF_CURRENT, C_FLAGS);
    }
    // their switch-outs
    for (let q = k; q < j; q++) {
      const e = rec(order, q);
      const ts = TS + <usize>load<i32>(e, E_SB) * TSB;
      store<i32>(ts, load<i32>(ts, T_FLAGS) | TF_OUT, T_FLAGS);
      store<i64>(ts, t, T_OUT);
      store<i32>(ts, ((load<i32>(e, E_SMALL) >>> 8) & 0xffffff) | ((load<i32>(e, E_FLAGS) & (S_OLD_PRI | S_OLD_STATE | S_OLD_WR)) << 15), T_OUT_SMALL);
    }
    i = j;
  }
}

/** Opens the row of switch e on `cpu`: the switch-in with what is known of its thread now. */
function openRow(e: usize, cpu: i32): void {
  const c = CS + <usize>cpu * CSB;
  const t = load<i64>(e, RE_TIME);
  const tid = load<i32>(e, E_A);
  const ns = load<i32>(e, E_SA);
  const os = load<i32>(e, E_SB);
  let f = (load<i32>(c, C_FLAGS) & CF_CURRENT) | CF_OPEN;
  store<i64>(c, opened++, C_OPEN_SEQ);
  store<i64>(c, t, C_TS);
  store<i32>(c, tid, C_NEW_TID);
  store<i32>(c, load<i32>(e, E_B), C_OLD_TID);
  store<i32>(c, ns, C_NEW_SLOT);
  store<i32>(c, os, C_OLD_SLOT);
  store<i32>(c, load<i32>(e, E_SMALL), C_SMALL);
  store<i32>(c, load<i32>(e, E_FLAGS), C_SFLAGS);
  const newPid = pidOf(ns, t);
  if (newPid >= 0) {
    f |= CF_NEW_PID;
    store<i32>(c, <i32>newPid, C_NEW_PID);
  }
  const oldPid = pidOf(os, t);
  if (oldPid >= 0) {
    f |= CF_OLD_PID;
    store<i32>(c, <i32>oldPid, C_OLD_PID);
  }
  // the thread's latest switch-out (the idle thread: one per cpu) and ready, copied
  const o = TS + <usize>(tid == 0 ? load<i32>(c, C_IDLE_SLOT) : ns) * TSB;
  const hasLast = (load<i32>(o, T_FLAGS) & TF_OUT) != 0;
  const last = load<i64>(o, T_OUT);
  if (hasLast) {
    f |= CF_LAST;
    store<i64>(c, last, C_LAST);
    store<i32>(c, load<i32>(o, T_OUT_SMALL), C_LAST_SMALL);
  }
  const ts = TS + <usize>ns * TSB;
  const tf = load<i32>(ts, T_FLAGS);
  if (tf & TF_READY && (!hasLast || last < load<i64>(ts, T_READY))) {
    f |= CF_READY;
    store<i64>(c, load<i64>(ts, T_READY), C_READY);
    if (tf & TF_READYING) {
      f |= CF_READYING;
      store<i32>(c, load<i32>(ts, T_READYING), C_READYING);
      store<i32>(c, load<i32>(ts, T_READYING_SLOT), C_READYING_SLOT);
      if (tf & TF_READYING_PID) {
        f |= CF_READYING_PID;
        store<i32>(c, load<i32>(ts, T_READYING_PID), C_READYING_PID);
      }
    }
  }
  store<i32>(c, f, C_FLAGS);
}

// @ts-ignore: decorator
@inline function putTime(r: usize, t: i64, hiAt: i32): void {
  store<i32>(r + <usize>hiAt, <i32>(t >> 32));
  store<i32>(r + <usize>hiAt + 4, <i32>t);
}

/** Completes the open row of `cpu` with its next switch at nt (its E_SMALL, E_FLAGS given), or none at the end; stages it (output or hold). */
function closeRow(cpu: i32, hasNext: bool, nt: i64, nSmall: i32, nFlags: i32): void {
  const c = CS + <usize>cpu * CSB;
  const f = load<i32>(c, C_FLAGS);
  const tsIn = load<i64>(c, C_TS);
  let newPid: i64 = f & CF_NEW_PID ? <i64>load<u32>(c, C_NEW_PID) : -1;
  let oldPid: i64 = f & CF_OLD_PID ? <i64>load<u32>(c, C_OLD_PID) : -1;
  const hasReady = (f & CF_READY) != 0;
  const readying = hasReady && (f & CF_READYING) != 0;
  let readyingPid: i64 = readying && f & CF_READYING_PID ? <i64>load<u32>(c, C_READYING_PID) : -1;
  let wait = false;
  if (!final && (newPid < 0 || oldPid < 0 || (readying && readyingPid < 0))) {
    // a Thread event applied since may know the thread now; if not, the row waits for finish()
    if (newPid < 0) newPid = pidOf(load<i32>(c, C_NEW_SLOT), tsIn);
    if (oldPid < 0) oldPid = pidOf(load<i32>(c, C_OLD_SLOT), tsIn);
    if (readying && readyingPid < 0) readyingPid = pidOf(load<i32>(c, C_READYING_SLOT), load<i64>(c, C_READY));
    if (newPid < 0 || oldPid < 0 || (readying && readyingPid < 0)) {
      if (nHold < holdRows) wait = true;
      else unresolvedRows++;
    }
  }
  let r: usize;
  if (wait) {
    if (nHold == holdCap) {
      const cap = min(holdRows, max(1024, 2 * holdCap));
      HOLD = regrow(HOLD, <usize>holdCap * HRB, <usize>cap * HRB);
      holdCap = cap;
    }
    r = HOLD + <usize>nHold * HRB;
    nHold++;
    heldRows++;
    store<i32>(r, load<i32>(c, C_OLD_SLOT), H_OLD_SLOT);
    store<i32>(r, load<i32>(c, C_READYING_SLOT), H_READYING_SLOT);
  } else r = folding ? OUT : outRow(); // folding: OUT is the row's scratch
  let v = ALWAYS;
  store<i32>(r, cpu, R_CPU);
  putTime(r, tsIn, R_IN_HI);
  store<i32>(r, load<i32>(c, C_NEW_TID), R_NEW_TID);
  store<i32>(r, load<i32>(c, C_NEW_SLOT), R_NEW_SLOT);
  store<i32>(r, load<i32>(c, C_OLD_TID), R_OLD_TID);
  let smallA = 0;
  if (hasNext) {
    putTime(r, nt, R_NEXT_HI);
    v |= (1 << R.CU_NEXT_SWITCH_OUT_TIME) | (1 << R.CU_CPU_USAGE);
    if (nFlags & S_OLD_PRI) {
      smallA = nSmall & 0xff00; // newOutPri
      v |= 1 << R.CU_NEW_OUT_PRI;
    }
  } else putTime(r, 0, R_NEXT_HI);
  store<i32>(r, newPid < 0 ? 0 : <i32>newPid, R_NEW_PID);
  if (newPid >= 0) v |= 1 << R.CU_NEW_PROCESS_ID;
  store<i32>(r, oldPid < 0 ? 0 : <i32>oldPid, R_OLD_PID);
  if (oldPid >= 0) v |= 1 << R.CU_OLD_PROCESS_ID;
  // the row's own switch: newInPri, oldOutPri, oldState, oldWaitReason, prevCState
  const sm = load<i32>(c, C_SMALL);
  const sf = load<i32>(c, C_SFLAGS);
  let smallB = 0;
  if (sf & S_NEW_PRI) {
    smallA |= sm & 0xff;
    v |= 1 << R.CU_NEW_IN_PRI;
  }
  if (sf & S_OLD_PRI) {
    smallB |= sm & 0xff00;
    v |= 1 << R.CU_OLD_OUT_PRI;
  }
  if (sf & S_OLD_STATE) {
    smallB |= sm & 0xff0000;
    v |= 1 << R.CU_OLD_STATE;
  }
  if (sf & S_OLD_WR) {
    smallB |= sm & 0xff000000;
    v |= 1 << R.CU_OLD_WAIT_REASON;
  }
  if (sf & S_CSTATE) {
    store<i32>(r, sf & 0xff, R_CSTATE);
    v |= 1 << R.CU_PREV_CSTATE;
  } else store<i32>(r, 0, R_CSTATE);
  if (f & CF_LAST) {
    const ls = load<i32>(c, C_LAST_SMALL);
    putTime(r, load<i64>(c, C_LAST), R_LAST_HI);
    v |= 1 << R.CU_LAST_SWITCH_OUT_TIME;
    if (ls & O_PRI) {
      smallA |= (ls & 0xff) << 16;
      v |= 1 << R.CU_NEW_PREV_OUT_PRI;
    }
    if (ls & O_STATE) {
      smallA |= ((ls >>> 8) & 0xff) << 24;
      v |= 1 << R.CU_NEW_PREV_STATE;
    }
    if (ls & O_WR) {
      smallB |= (ls >>> 16) & 0xff;
      v |= 1 << R.CU_NEW_PREV_WAIT_REASON;
    }
  } else putTime(r, 0, R_LAST_HI);
  store<i32>(r, smallA, R_SMALL_A);
  store<i32>(r, smallB, R_SMALL_B);
  store<i32>(r, 0, R_READYING_TID);
  store<i32>(r, 0, R_READYING_PID);
  if (hasReady) {
    putTime(r, load<i64>(c, C_READY), R_READY_HI);
    v |= (1 << R.CU_READY_TIME) | (1 << R.CU_READY);
    if (f & CF_LAST) v |= 1 << R.CU_WAITS;
    if (readying) {
      store<i32>(r, load<i32>(c, C_READYING), R_READYING_TID);
      v |= 1 << R.CU_READYING_THREAD_ID;
      if (readyingPid >= 0) {
        store<i32>(r, <i32>readyingPid, R_READYING_PID);
        v |= 1 << R.CU_READYING_PROCESS_ID;
      }
    }
  } else putTime(r, 0, R_READY_HI);
  store<i32>(r, v, R_VALID);
  if (folding && !wait) fold(r);
}

// @ts-ignore: decorator
@inline function timeAt(r: usize, hiAt: i32): i64 {
  return (<i64>load<i32>(r + <usize>hiAt) << 32) | <i64>load<u32>(r + <usize>hiAt + 4);
}

/** A completed row (staged at r) into the fold (cpu-fold.ts). */
// @ts-ignore: decorator
@inline function fold(r: usize): void {
  foldRow(
    load<i32>(r, R_VALID),
    load<i32>(r, R_CPU),
    timeAt(r, R_IN_HI),
    timeAt(r, R_NEXT_HI),
    timeAt(r, R_READY_HI),
    timeAt(r, R_LAST_HI),
    load<i32>(r, R_NEW_TID),
    load<i32>(r, R_NEW_PID),
    load<i32>(r, R_NEW_SLOT),
  );
}

/** The next row of the output region (a full one drained first). */
// @ts-ignore: decorator
@inline function outRow(): usize {
  if (nOut == STAGE_ROWS) drainOut();
  const r = OUT + <usize>nOut * RB;
  nOut++;
  return r;
}

/** End of the trace: everything released, the CPUs' open rows completed in the order they were opened, then the held rows resolved against the final lifetimes. */
export function finish(): void {
  streamReset();
  release(true);
  if (mode == INTAKE) return;
  for (;;) {
    // the open row opened first (few CPUs: a scan per row)
    let first = -1;
    let seq: i64 = 0;
    for (let c = 0; c < cpuCap; c++) {
      const x = CS + <usize>c * CSB;
      if ((load<i32>(x, C_FLAGS) & CF_OPEN) == 0) continue;
      if (first < 0 || load<i64>(x, C_OPEN_SEQ) < seq) {
        first = c;
        seq = load<i64>(x, C_OPEN_SEQ);
      }
    }
    if (first < 0) break;
    closeRow(first, false, 0, 0, 0);
    const x = CS + <usize>first * CSB;
    store<i32>(x, load<i32>(x, C_FLAGS) & ~CF_OPEN, C_FLAGS);
  }
  for (let i = 0; i < nHold; i++) {
    const h = HOLD + <usize>i * HRB;
    let v = load<i32>(h, R_VALID);
    const tIn = (<i64>load<i32>(h, R_IN_HI) << 32) | <i64>load<u32>(h, R_IN_LO);
    if (((v >>> R.CU_NEW_PROCESS_ID) & 1) == 0) {
      const pid = pidOf(load<i32>(h, R_NEW_SLOT), tIn);
      if (pid >= 0) {
        store<i32>(h, <i32>pid, R_NEW_PID);
        v |= 1 << R.CU_NEW_PROCESS_ID;
      }
    }
    if (((v >>> R.CU_OLD_PROCESS_ID) & 1) == 0) {
      const pid = pidOf(load<i32>(h, H_OLD_SLOT), tIn);
      if (pid >= 0) {
        store<i32>(h, <i32>pid, R_OLD_PID);
        v |= 1 << R.CU_OLD_PROCESS_ID;
      }
    }
    if (((v >>> R.CU_READYING_THREAD_ID) & 1) == 1 && ((v >>> R.CU_READYING_PROCESS_ID) & 1) == 0) {
      const tr = (<i64>load<i32>(h, R_READY_HI) << 32) | <i64>load<u32>(h, R_READY_LO);
      const pid = pidOf(load<i32>(h, H_READYING_SLOT), tr);
      if (pid >= 0) {
        store<i32>(h, <i32>pid, R_READYING_PID);
        v |= 1 << R.CU_READYING_PROCESS_ID;
      }
    }
    store<i32>(h, v, R_VALID);
    if (folding) fold(h);
    else memory.copy(outRow(), h, RB);
  }
  nHold = 0;
  drainOut();
}

function drainOut(): void {
  if (nOut > 0) drain(nOut);
  nOut = 0;
}

/** Where the rows are staged for env.drain. */
export function outPtr(): usize {
  return OUT;
}

/** The run's figures: 0 lateEvents, 1 maxHeld, 2 threads, 3 heldRows, 4 unresolvedRows. */
export function stat(i: i32): i32 {
  if (i == 0) return lateEvents;
  if (i == 1) return maxHeld;
  if (i == 2) return threadsWithLifetimes;
  if (i == 3) return heldRows;
  return unresolvedRows;
}

// ---- the two halves (see the file comment)

/** This instance from now on: 0 the whole derivation, 1 INTAKE, 2 APPLY (after init). */
export function splitInit(m: i32): void {
  mode = m;
}

function streamReset(): void {
  nSRec = 0;
  nSEnd = 0;
  nSIdle = 0;
}

/** INTAKE, after add() or finish(): 0 the records streamed, 1 the groups, 2 the idle slots made, 3 the thread slots, 4 the records' bytes. */
export function streamCount(i: i32): i32 {
  if (i == 0) return nSRec;
  if (i == 1) return nSEnd;
  if (i == 2) return nSIdle;
  if (i == 3) return nSlots;
  return nSRec * REC;
}

/** INTAKE: where the records (0), group ends (1) and idle slots (2) are; APPLY: where applyStream reads them, after applyReserve. */
export function streamPtr(i: i32): usize {
  if (i == 0) return mode == APPLY ? E : SREC;
  return i == 1 ? SEND : SIDLE;
}

/** APPLY: room for a stream of n records, g groups and k idle slots (written at streamPtr). */
export function applyReserve(n: i32, g: i32, k: i32): void {
  begin(n);
  if (g > sEndCap) {
    SEND = regrow(SEND, 0, <usize>g << 2);
    sEndCap = g;
  }
  if (k > sIdleCap) {
    SIDLE = regrow(SIDLE, 0, <usize>k << 3);
    sIdleCap = k;
  }
}

/** APPLY: the stream written at streamPtr (n records, g groups, k idle slots; `slots` thread slots in all) applied. */
export function applyStream(n: i32, g: i32, k: i32, slots: i32): void {
  if (slots > nSlots) {
    growSlots(slots);
    nSlots = slots;
  }
  for (let i = 0; i < k; i++) {
    const s = load<i32>(SIDLE + (<usize>i << 3));
    const cpu = load<i32>(SIDLE + (<usize>i << 3), 4);
    store<i32>(TS + <usize>s * TSB, TF_IDLE, T_FLAGS);
    if (cpu >= 0) {
      growCpus(cpu);
      store<i32>(CS + <usize>cpu * CSB, s, C_IDLE_SLOT);
    }
  }
  for (let i = 0; i < n; i++) store<i32>(P + (<usize>i << 2), i);
  let from = 0;
  for (let i = 0; i < g; i++) {
    const to = load<i32>(SEND + (<usize>i << 2));
    if (to > from && to <= n) apply(P, from, to);
    from = to;
  }
  drainOut();
}
