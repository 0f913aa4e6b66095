// The threadStates derivation in WebAssembly (the rules: docs/design/streaming.md "threadStates" and the
// file comment of src/derive/thread-states.ts): the core of the ThreadStatesDeriver, written to be read
// against its TypeScript twin, the class ReferenceThreadStates of src/derive/thread-states.ts, which the
// differential tests (test/thread-states-wasm.test.ts) hold it to. Times are native i64.
//
// The same machinery as the cpuUsage core (cpu-usage.ts) beside it in this module — an instance serves
// one deriver — over the same reorder (reorder.ts, here with the events at the watermark's time waiting),
// id index (ids.ts) and input region (input.ts): per chunk the JS side copies the columns into the input
// region and calls tsAdd(); released events of one timestamp are applied as a group in the phases A–F of
// the twin; rows are staged in the output region (tsOutPtr: RW int32 words each, the R_ layout of the
// twin) and handed to env.drain(n) a block of STAGE_ROWS at a time and at the end of each call. tsFinish()
// emits each thread's last interval, the runs still open, then the held rows. Memory: thread slots,
// lifetimes, CPUs, the reorder's window, the hold (at most holdRows rows), one block — never the trace.
// (The rows of `ordered` are ordered by the front, from the staged rows, for either core.)
import * as R from '../generated/registry';
import { OPCODE_END, OPCODE_START } from '../layout';
import { idAdd, idCached, idGet, idInit, idRemember } from './ids';
import { col } from './input';
import { LF_START, lifeAppend, pidOfLifetimes } from './lifelist';
import { begin, commit, E, hold, lateEvents, maxHeld, P, REC, RE_KEY, RE_TIME, regrow, releaseCut, releaseDone, reorderInit, switchAt, top, watchCpus } from './reorder';

/** Takes the n rows staged at tsOutPtr() (borrowed until it returns). */
// @ts-ignore: decorator
@external("env", "drain")
declare function drain(n: i32): void;

const S_UNKNOWN: i32 = 0;
const S_RUNNING: i32 = 1;
const S_READY: i32 = 2;
const S_WAITING: i32 = 3;
/** not alive: before its Start, after its End or a switch-out as Terminated (no row) */
const S_NONE: i32 = 4;

/** KTHREAD_STATE values (docs/format.md §C.5) */
const TERMINATED: i32 = 4;
const WAITING: i32 = 5;
/** a priority not known (a priority is an i8) */
const NO_PRIORITY: i32 = 1000;

const K_THREAD: i32 = 0;
const K_READY: i32 = 1;
const K_SWITCH: i32 = 2;

// items of a thread (item())
const K_START_ITEM: i32 = 0;
const K_OUT_ITEM: i32 = 1;
const K_READY_ITEM: i32 = 2;
const K_RUN_ITEM: i32 = 3;
const K_END_ITEM: i32 = 4;

// Event record (REC bytes; RE_TIME, RE_KEY first): the E_ words of the twin.
const E_A: i32 = 12; // switch: newThreadId (if its valid bit); ready, Thread event: threadId
const E_B: i32 = 16; // switch: oldThreadId; Thread event: processId
const E_C: i32 = 20; // switch: the cswitch valid bits; Thread event: opcode; ready: cpu
const E_OUT: i32 = 24; // switch: oldThreadState | oldThreadWaitReason << 8 | oldThreadWaitMode << 16 | oldThreadPriority << 24
const E_NEW_PRI: i32 = 28; // switch: newThreadPriority
const E_CPU: i32 = 32; // switch: cpu
const E_EXIT: i32 = 36; // switch: 1 when it ends its CPU's running thread (phase A)

// Threads: TSB bytes per slot.
const TSB: i32 = 104;
const T_TID: i32 = 0;
const T_FLAGS: i32 = 4;
const T_S: i32 = 8; // the state (S_)
const T_CPU: i32 = 12; // its attributes (-1: null)
const T_TC: i32 = 16; // i64: when it began (a thread inside a running interval: when the last closed run ended)
const T_GOV: i32 = 24; // i64: the run whose exit gives the state (TF_GOV): its start and cpu
const T_FIRST: i32 = 32; // i64: the Start it began with (TF_BEGAN_START)
const T_RTID: i32 = 40; // (RK_RTID)
const T_RPID: i32 = 44; // (RK_RPID; RK_RPID_LATER: to look up at finish())
const T_WR: i32 = 48;
const T_WM: i32 = 52;
const T_OLD: i32 = 56;
const T_PRI: i32 = 60; // NO_PRIORITY: null
const T_PEND: i32 = 64; // its runs still open
const T_GOV_CPU: i32 = 68;
const T_LIFE_HEAD: i32 = 72; // its lifetimes, a list (index + 1; 0: none)
const T_LIFE_TAIL: i32 = 76;
const T_LIFE_OPEN: i32 = 80; // its open lifetime (index + 1; 0: none), as deriveThreads keeps it
const T_RK: i32 = 84; // which of T_RTID, T_RPID hold a value (RK_ bits)
const T_FIRST_PID: i32 = 88; // its first lifetime, copied (pidOf of a thread of one lifetime reads no list): its process, its start (TF_FIRST_START)
const T_FIRST_START: i32 = 96; // i64
const RK_RTID: i32 = 1;
const RK_RPID: i32 = 2;
const RK_RPID_LATER: i32 = 4;
/** (held rows) the row has an end */
const RK_END: i32 = 8;
const TF_EXISTS: i32 = 1; // it has a state
const TF_SEEN: i32 = 2; // a lifetime without a Start: known from the trace's start
const TF_BEGAN_START: i32 = 4; // its first event was a Start (no row before it)
const TF_GOV: i32 = 8;
const TF_FIRST_START: i32 = 16;


// CPUs: CSB bytes each.
const CSB: i32 = 40;
const C_FLAGS: i32 = 0;
const C_CUR: i32 = 4; // newThreadId of the latest switch applied (CF_CUR)
const C_RUN_SLOT: i32 = 8; // the open run (CF_RUN): its thread's slot, start, priority
const C_RUN_PRI: i32 = 12;
const C_RUN: i32 = 16; // i64
const C_GROUP: i32 = 24; // i64: the group of the latest switch applied
const CF_CUR: i32 = 1;
const CF_RUN: i32 = 2;

// Held rows: HB bytes each.
const HB: i32 = 56;
const H_SLOT: i32 = 0;
const H_STATE: i32 = 4;
const H_CPU: i32 = 8;
const H_RTID: i32 = 12;
const H_RPID: i32 = 16;
const H_RK: i32 = 20;
const H_WR: i32 = 24;
const H_WM: i32 = 28;
const H_OLD: i32 = 32;
const H_PRI: i32 = 36;
const H_START: i32 = 40; // i64
const H_END: i32 = 48; // i64

// Staged rows: RW int32 words, the R_ layout of src/derive/thread-states.ts (byte offsets here; a time's lo word first).
const RW: i32 = 12;
const RB: i32 = RW * 4;
const R_TID: i32 = 0;
const R_PID: i32 = 4;
const R_STATE: i32 = 8;
const R_START: i32 = 12; // i64 (lo, hi)
const R_END: i32 = 20; // i64 (lo, hi)
const R_CPU: i32 = 28;
const R_RTID: i32 = 32;
const R_RPID: i32 = 36;
const R_SMALL: i32 = 40; // waitReason | waitMode << 8 | oldThreadState << 16 | priority << 24
const R_VALID: i32 = 44;

/** rows staged before they go to the JS side */
const STAGE_ROWS: i32 = 2048;

// threads, lifetimes, CPUs
let TS: usize = 0;
let tsCap: i32 = 0;
let nSlots: i32 = 0;
let CS: usize = 0;
let cpuCap: i32 = 0;
let group: i64 = 0;
/** the trace's start; threads known before it is, waiting for it (slots, i32) */
let hasT0: bool = false;
let t0: i64 = 0;
let atT0: usize = 0;
let atT0Cap: i32 = 0;
let nAtT0: i32 = 0;
/** the lifetimes are the trace's final ones (tsThreads()): no row waits for a process id */
let final: bool = false;
// rows: the output of the current call, and the hold
let OUT: usize = 0;
let nOut: i32 = 0;
let HOLD: usize = 0;
let holdCap: i32 = 0;
let nHold: i32 = 0;
let holdRows: i32 = 0;
let rows: i32 = 0;
let heldRows: i32 = 0;
let unresolvedRows: i32 = 0;
/** the one-event order of a late event */
let single: usize = 0;

/**
 * Starts the derivation (once per instance: an instance is one deriver's): the reorder's window, the hold's
 * bound, the CPUs in the watermark from the start (`cpus`, 0: none), whether the lifetimes will be final.
 */
export function tsInit(windowEvents: i32, holdRowsMax: i32, cpus: i32, isFinal: bool): void {
  reorderInit(windowEvents, false);
  holdRows = holdRowsMax;
  final = isFinal;
  single = heap.alloc(4);
  OUT = heap.alloc(<usize>STAGE_ROWS * RB);
  idInit();
  tsCap = 256;
  TS = regrow(0, 0, <usize>tsCap * TSB);
  if (cpus > 0) {
    ensureCpu(cpus - 1);
    watchCpus(cpus);
  }
}

// ---- slots, lifetimes, CPUs

/** The slot of thread `tid` (made if new). */
function slotOf(tid: i32): i32 {
  const c = idCached(tid);
  if (c >= 0) return c;
  const s = idGet(tid);
  if (s >= 0) {
    idRemember(tid, s);
    return s;
  }
  const made = nSlots++;
  if (nSlots > tsCap) {
    TS = regrow(TS, <usize>tsCap * TSB, <usize>(2 * tsCap) * TSB);
    tsCap *= 2;
  }
  const t = TS + <usize>made * TSB;
  memory.fill(t, 0, TSB);
  store<i32>(t, tid, T_TID);
  idAdd(tid, made);
  return made;
}

function addLifetime(s: i32, hasStart: bool, time: i64, pid: i32): i32 {
  const t = TS + <usize>s * TSB;
  const tail = load<i32>(t, T_LIFE_TAIL);
  const l = lifeAppend(s, tail, hasStart ? LF_START : 0, time, pid);
  if (tail == 0) {
    store<i32>(t, l + 1, T_LIFE_HEAD);
    store<i32>(t, pid, T_FIRST_PID);
    store<i64>(t, time, T_FIRST_START);
    if (hasStart) store<i32>(t, load<i32>(t, T_FLAGS) | TF_FIRST_START, T_FLAGS);
  }
  store<i32>(t, l + 1, T_LIFE_TAIL);
  return l;
}

/** The process of slot s at `time`: the lifetime with the latest start at or before it (no start: earliest; ties: the later); -1: none. */
function pidOf(s: i32, time: i64): i64 {
  const t = TS + <usize>s * TSB;
  if (load<i32>(t, T_TID) == 0) return 0;
  const head = load<i32>(t, T_LIFE_HEAD);
  if (head == load<i32>(t, T_LIFE_TAIL)) {
    // none, or one lifetime: its copy in the slot
    if (head == 0 || (load<i32>(t, T_FLAGS) & TF_FIRST_START && time < load<i64>(t, T_FIRST_START))) return -1;
    return <i64>load<u32>(t, T_FIRST_PID);
  }
  return pidOfLifetimes(s, head - 1, time);
}

function ensureCpu(cpu: i32): void {
  if (cpu < cpuCap) return;
  let cap = max(8, cpuCap);
  while (cap <= cpu) cap *= 2;
  CS = regrow(CS, <usize>cpuCap * CSB, <usize>cap * CSB);
  for (let c = cpuCap; c < cap; c++) store<i64>(CS + <usize>c * CSB, -1, C_GROUP);
  cpuCap = cap;
}

// ---- input (its region: input.ts)

/**
 * A whole decode: its `threads` table (n rows in the input region: column 0 startTime, 2 threadId,
 * 3 processId, 4 1 when startTime is not null | 2 when endTime is not null, 5 endTime): the lifetimes (final: no row waits, and tsAdd() is then given
 * no Thread events), the lifetimes without a Start seen, the Starts and Ends as events.
 */
export function tsThreads(n: i32): void {
  const start = col(0);
  const tid = col(2);
  const pid = col(3);
  const has = col(4);
  const end = col(5);
  let starts = 0;
  let ends = 0;
  for (let i = 0; i < n; i++) {
    const id = load<i32>(tid + (<usize>i << 2));
    const v = <i32>load<u8>(has + <usize>i);
    const s = slotOf(id);
    const hasStart = (v & 1) != 0;
    addLifetime(s, hasStart, load<i64>(start + (<usize>i << 3)), load<i32>(pid + (<usize>i << 2)));
    if (hasStart) starts++;
    else if (id != 0) markSeen(s);
    if (v & 2) ends++;
  }
  begin(starts + ends);
  for (let pass = 0; pass < 2; pass++) {
    const bit = pass == 0 ? 1 : 2;
    const w = pass == 0 ? start : end;
    for (let i = 0; i < n; i++) {
      if ((<i32>load<u8>(has + <usize>i) & bit) == 0) continue;
      const e = E + <usize>top * REC;
      store<i64>(e, load<i64>(w + (<usize>i << 3)), RE_TIME);
      store<i32>(e, K_THREAD << 16, RE_KEY);
      store<i32>(e, load<i32>(tid + (<usize>i << 2)), E_A);
      store<i32>(e, load<i32>(pid + (<usize>i << 2)), E_B);
      store<i32>(e, pass == 0 ? OPCODE_START : OPCODE_END, E_C);
      put();
    }
  }
  hold();
}

/** Takes one chunk (its columns in the input region): stores its events, releases those before the watermark (a whole decode: holds them). */
export function tsAdd(nThread: i32, nReady: i32, nSwitch: i32): void {
  if (final) nThread = 0;
  begin(nThread + nReady + nSwitch);
  if (nThread > 0) addThreadEvents(nThread);
  if (nReady > 0) addReadies(nReady);
  if (nSwitch > 0) addSwitches(nSwitch);
  if (final) hold();
  else release(false);
  drainOut();
}

function release(all: bool): void {
  const cut = releaseCut(all);
  if (cut > 0) apply(P, 0, cut);
  releaseDone(cut);
}

/** Commits the record at `top`; a late one is applied at once. */
// @ts-ignore: decorator
@inline function put(): void {
  if (!commit()) {
    store<i32>(single, top);
    apply(single, 0, 1);
  }
}

function addThreadEvents(n: i32): void {
  const ts = col(0);
  const tid = col(2);
  const pid = col(3);
  const op = col(4);
  for (let i = 0; i < n; i++) {
    const e = E + <usize>top * REC;
    store<i64>(e, load<i64>(ts + (<usize>i << 3)), RE_TIME);
    store<i32>(e, K_THREAD << 16, RE_KEY);
    store<i32>(e, load<i32>(tid + (<usize>i << 2)), E_A);
    store<i32>(e, load<i32>(pid + (<usize>i << 2)), E_B);
    store<i32>(e, <i32>load<u8>(op + <usize>i), E_C);
    put();
  }
}

function addReadies(n: i32): void {
  const ts = col(5);
  const cpu = col(6);
  const tid = col(7);
  for (let i = 0; i < n; i++) {
    const e = E + <usize>top * REC;
    store<i64>(e, load<i64>(ts + (<usize>i << 3)), RE_TIME);
    store<i32>(e, K_READY << 16, RE_KEY);
    store<i32>(e, load<i32>(tid + (<usize>i << 2)), E_A);
    store<i32>(e, <i32>load<u16>(cpu + (<usize>i << 1)), E_C);
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
  const oldWm = col(18);
  for (let i = 0; i < n; i++) {
    const c = <i32>load<u16>(cpus + (<usize>i << 1));
    if (c >= cpuCap) ensureCpu(c);
    const e = E + <usize>top * REC;
    const t = load<i64>(ts + (<usize>i << 3));
    store<i64>(e, t, RE_TIME);
    store<i32>(e, (K_SWITCH << 16) | c, RE_KEY);
    store<i32>(e, load<i32>(newTid + (<usize>i << 2)), E_A);
    store<i32>(e, load<i32>(oldTid + (<usize>i << 2)), E_B);
    store<i32>(e, load<i32>(valid + (<usize>i << 2)), E_C);
    store<i32>(
      e,
      <i32>load<u8>(oldState + <usize>i) | (<i32>load<u8>(oldWr + <usize>i) << 8) | (<i32>load<u8>(oldWm + <usize>i) << 16) | (<i32>load<u8>(oldPri + <usize>i) << 24),
      E_OUT,
    );
    store<i32>(e, <i32>load<i8>(newPri + <usize>i), E_NEW_PRI);
    store<i32>(e, c, E_CPU);
    switchAt(c, t); // the CPU's latest switch delivered
    put();
  }
}

// ---- applying events

// @ts-ignore: decorator
@inline function rec(order: usize, i: i32): usize {
  return E + <usize>load<i32>(order + (<usize>i << 2)) * REC;
}

// @ts-ignore: decorator
@inline function kindOf(e: usize): i32 {
  return load<i32>(e, RE_KEY) >>> 16;
}

/** Applies the sorted events at order[from, to), a group of one timestamp at a time. */
function apply(order: usize, from: i32, to: i32): void {
  let i = from;
  while (i < to) {
    const e0 = rec(order, i);
    const t = load<i64>(e0, RE_TIME);
    let j = i + 1;
    while (j < to && load<i64>(rec(order, j), RE_TIME) == t) j++;
    if (!hasT0) startOfTrace(order, i, j, t);
    const g = ++group;
    if (j == i + 1) {
      // one event (the usual case): its phases
      const kind = kindOf(e0);
      if (kind == K_SWITCH) {
        closing(e0, g, t);
        switchOut(e0, t);
        switchIn(e0, t, 0);
      } else if (kind == K_READY) ready(e0, t);
      else {
        thread(e0, t);
        endOf(e0, t);
      }
    } else applyGroup(order, i, j, t, g);
    i = j;
  }
}

/** The trace's start is the time of the first group with a switch, ready, Start or End. */
function startOfTrace(order: usize, a: i32, b: i32, t: i64): void {
  for (let k = a; k < b; k++) {
    const e = rec(order, k);
    if (kindOf(e) != K_THREAD || load<i32>(e, E_C) == OPCODE_START || load<i32>(e, E_C) == OPCODE_END) {
      setT0(t);
      return;
    }
  }
}

/** The events order[a, b) of one timestamp (several), phase by phase (the twin's file comment). */
function applyGroup(order: usize, a: i32, b: i32, t: i64, g: i64): void {
  for (let k = a; k < b; k++) if (kindOf(rec(order, k)) == K_SWITCH) closing(rec(order, k), g, t);
  for (let k = a; k < b; k++) if (kindOf(rec(order, k)) == K_THREAD) thread(rec(order, k), t);
  for (let k = a; k < b; k++) if (kindOf(rec(order, k)) == K_SWITCH) switchOut(rec(order, k), t);
  for (let k = a; k < b; k++) if (kindOf(rec(order, k)) == K_READY) ready(rec(order, k), t);
  for (let k = a; k < b; k++) {
    const e = rec(order, k);
    if (kindOf(e) != K_SWITCH) continue;
    // the CPU's next switch of this group closes the run at once
    switchIn(e, t, k + 1 < b && load<i32>(rec(order, k + 1), RE_KEY) == load<i32>(e, RE_KEY) ? rec(order, k + 1) : 0);
  }
  for (let k = a; k < b; k++) if (kindOf(rec(order, k)) == K_THREAD) endOf(rec(order, k), t);
}

/** Phase A, a switch at e: whether it ends its CPU's running thread; the first of its CPU in group g closes the CPU's open run. */
function closing(e: usize, g: i64, t: i64): void {
  const c = load<i32>(e, E_CPU);
  const x = CS + <usize>c * CSB;
  const f = load<i32>(x, C_FLAGS);
  store<i32>(e, f & CF_CUR && load<i32>(x, C_CUR) == load<i32>(e, E_B) ? 1 : 0, E_EXIT);
  if (load<i64>(x, C_GROUP) != g) {
    store<i64>(x, g, C_GROUP);
    if (f & CF_RUN) {
      store<i32>(x, load<i32>(x, C_FLAGS) & ~CF_RUN, C_FLAGS);
      closeRun(load<i32>(x, C_RUN_SLOT), load<i64>(x, C_RUN), c, load<i32>(x, C_RUN_PRI), e, t);
    }
  }
  if ((load<i32>(e, E_C) >>> R.CS_NEW_THREAD_ID) & 1) {
    store<i32>(x, load<i32>(x, C_FLAGS) | CF_CUR, C_FLAGS);
    store<i32>(x, load<i32>(e, E_A), C_CUR);
  } else store<i32>(x, load<i32>(x, C_FLAGS) & ~CF_CUR, C_FLAGS);
}

/** Phase B, a Thread event at e: the lifetimes (streaming), a Start. */
function thread(e: usize, t: i64): void {
  const tid = load<i32>(e, E_A);
  const op = load<i32>(e, E_C);
  const s = slotOf(tid);
  if (!final) applyLifetime(s, tid, op, load<i32>(e, E_B), t);
  if (tid != 0 && op == OPCODE_START) item(s, K_START_ITEM, e, t, 0);
}

/** Phase C, a switch at e: the switch-out of its old thread, unless it ends that thread's run on this CPU. */
function switchOut(e: usize, t: i64): void {
  if (load<i32>(e, E_EXIT) == 1 || load<i32>(e, E_B) == 0) return;
  item(slotOf(load<i32>(e, E_B)), K_OUT_ITEM, e, t, 0);
}

/** Phase D, a ReadyThread event at e. */
function ready(e: usize, t: i64): void {
  if (load<i32>(e, E_A) == 0) return;
  item(slotOf(load<i32>(e, E_A)), K_READY_ITEM, e, t, 0);
}

/** Phase E, a switch at e: the switch-in of its new thread (`next`: the CPU's next switch of this group, or 0). */
function switchIn(e: usize, t: i64, next: usize): void {
  if (((load<i32>(e, E_C) >>> R.CS_NEW_THREAD_ID) & 1) == 0 || load<i32>(e, E_A) == 0) return;
  item(slotOf(load<i32>(e, E_A)), K_RUN_ITEM, e, t, next);
}

/** Phase F, a Thread event at e: an End. */
function endOf(e: usize, t: i64): void {
  if (load<i32>(e, E_C) != OPCODE_END || load<i32>(e, E_A) == 0) return;
  item(slotOf(load<i32>(e, E_A)), K_END_ITEM, e, t, 0);
}

/** The trace's start is known: the threads known before it begin there. */
function setT0(t: i64): void {
  hasT0 = true;
  t0 = t;
  for (let k = 0; k < nAtT0; k++) store<i64>(TS + <usize>load<i32>(atT0 + (<usize>k << 2)) * TSB, t, T_TC);
  nAtT0 = 0;
}

/** A Thread event of slot s, as deriveThreads applies it: a Start, or any event without an open lifetime, opens one; an End closes it. */
function applyLifetime(s: i32, tid: i32, op: i32, pid: i32, t: i64): void {
  const x = TS + <usize>s * TSB;
  if (op == OPCODE_START || load<i32>(x, T_LIFE_OPEN) == 0) {
    const l = addLifetime(s, op == OPCODE_START, t, pid);
    store<i32>(x, l + 1, T_LIFE_OPEN);
    if (op != OPCODE_START && tid != 0) markSeen(s);
  }
  if (op == OPCODE_END) store<i32>(x, 0, T_LIFE_OPEN);
}

/** A lifetime of slot s without a Start: the thread is known from the trace's start. */
function markSeen(s: i32): void {
  const x = TS + <usize>s * TSB;
  const f = load<i32>(x, T_FLAGS);
  if (f & TF_SEEN) return;
  store<i32>(x, f | TF_SEEN, T_FLAGS);
  if ((f & TF_EXISTS) == 0) {
    create(s, S_UNKNOWN);
    return;
  }
  // it began with a Start: unknown from the trace's start until then
  if (f & TF_BEGAN_START && hasT0 && load<i64>(x, T_FIRST) != t0) {
    emit(s, S_UNKNOWN, -1, 0, 0, 0, -1, -1, -1, NO_PRIORITY, t0, true, load<i64>(x, T_FIRST));
  }
}

/** Slot s gets a state, from the trace's start. */
function create(s: i32, state: i32): void {
  const x = TS + <usize>s * TSB;
  store<i32>(x, load<i32>(x, T_FLAGS) | TF_EXISTS, T_FLAGS);
  set(s, state);
  store<i32>(x, 0, T_PEND);
  if (hasT0) store<i64>(x, t0, T_TC);
  else {
    if (nAtT0 == atT0Cap) {
      const cap = max(64, 2 * atT0Cap);
      atT0 = regrow(atT0, <usize>atT0Cap << 2, <usize>cap << 2);
      atT0Cap = cap;
    }
    store<i32>(atT0 + (<usize>nAtT0 << 2), s);
    nAtT0++;
  }
}

function set(s: i32, state: i32): void {
  const x = TS + <usize>s * TSB;
  store<i32>(x, state, T_S);
  store<i32>(x, -1, T_CPU);
  store<i32>(x, -1, T_WR);
  store<i32>(x, -1, T_WM);
  store<i32>(x, -1, T_OLD);
  store<i32>(x, 0, T_RK);
  store<i32>(x, NO_PRIORITY, T_PRI);
}

/**
 * One event of thread slot s at t: a Start, a switch-out (switch at e), a ReadyThread (at e), a switch-in
 * (at e; `next`: the CPU's next switch in this group, or 0), an End.
 */
function item(s: i32, kind: i32, e: usize, t: i64, next: usize): void {
  const x = TS + <usize>s * TSB;
  if ((load<i32>(x, T_FLAGS) & TF_EXISTS) == 0) {
    create(s, kind == K_START_ITEM ? S_NONE : S_UNKNOWN);
    if (kind == K_START_ITEM) {
      store<i32>(x, load<i32>(x, T_FLAGS) | TF_BEGAN_START, T_FLAGS);
      store<i64>(x, t, T_FIRST);
    }
  }
  if (load<i32>(x, T_PEND) > 0) {
    // inside a running interval: only switch-ins count
    if (kind == K_RUN_ITEM) openRun(s, e, t, next);
    return;
  }
  // the state before ends here (unless it lasted no tick)
  const st = load<i32>(x, T_S);
  if (st != S_NONE && t != load<i64>(x, T_TC)) {
    // a ready interval of unknown priority ended by a switch-in: the priority it was switched in with
    if (kind == K_RUN_ITEM && st == S_READY && load<i32>(x, T_PRI) == NO_PRIORITY && (load<i32>(e, E_C) >>> R.CS_NEW_THREAD_PRIORITY) & 1) store<i32>(x, load<i32>(e, E_NEW_PRI), T_PRI);
    emitState(s, true, t);
  }
  switch (kind) {
    case K_RUN_ITEM:
      store<i32>(x, load<i32>(x, T_FLAGS) & ~TF_GOV, T_FLAGS); // a new running interval
      openRun(s, e, t, next);
      return;
    case K_OUT_ITEM:
      exitOf(s, e);
      break;
    case K_READY_ITEM: {
      set(s, S_READY);
      const c = load<i32>(e, E_C);
      store<i32>(x, c, T_CPU);
      if (c < cpuCap && load<i32>(CS + <usize>c * CSB, C_FLAGS) & CF_CUR) {
        const r = load<i32>(CS + <usize>c * CSB, C_CUR);
        store<i32>(x, r, T_RTID);
        const rs = idGet(r);
        const pid: i64 = r == 0 ? 0 : rs < 0 ? -1 : pidOf(rs, t);
        store<i32>(x, <i32>pid, T_RPID);
        store<i32>(x, RK_RTID | (pid >= 0 ? RK_RPID : final ? 0 : RK_RPID_LATER), T_RK);
      }
      break;
    }
    case K_START_ITEM:
      set(s, S_UNKNOWN);
      break;
    case K_END_ITEM:
      set(s, S_NONE);
      break;
  }
  store<i64>(x, t, T_TC);
}

/** A switch-in of slot s (switch at e): closed now by `next` (the CPU's next switch, same time), or the CPU's open run. */
function openRun(s: i32, e: usize, t: i64, next: usize): void {
  const x = TS + <usize>s * TSB;
  store<i32>(x, load<i32>(x, T_PEND) + 1, T_PEND);
  const c = load<i32>(e, E_CPU);
  const pri = (load<i32>(e, E_C) >>> R.CS_NEW_THREAD_PRIORITY) & 1 ? load<i32>(e, E_NEW_PRI) : NO_PRIORITY;
  if (next != 0) {
    closeRun(s, t, c, pri, next, t);
    return;
  }
  const y = CS + <usize>c * CSB;
  store<i32>(y, load<i32>(y, C_FLAGS) | CF_RUN, C_FLAGS);
  store<i32>(y, s, C_RUN_SLOT);
  store<i64>(y, t, C_RUN);
  store<i32>(y, pri, C_RUN_PRI);
}

/**
 * The run of slot s from `start` on cpu ends at `end` with the switch at e: its running row; the thread's
 * state after its running interval is that switch's exit when this run ends last (ties: the run that
 * began first, then by CPU).
 */
function closeRun(s: i32, start: i64, cpu: i32, pri: i32, e: usize, end: i64): void {
  emit(s, S_RUNNING, cpu, 0, 0, 0, -1, -1, -1, pri, start, true, end);
  const x = TS + <usize>s * TSB;
  store<i32>(x, load<i32>(x, T_PEND) - 1, T_PEND);
  const tc = load<i64>(x, T_TC);
  if (load<i32>(x, T_FLAGS) & TF_GOV) {
    if (end < tc) return;
    if (end == tc) {
      const gov = load<i64>(x, T_GOV);
      if (!(start < gov || (start == gov && cpu < load<i32>(x, T_GOV_CPU)))) return;
    }
  }
  store<i32>(x, load<i32>(x, T_FLAGS) | TF_GOV, T_FLAGS);
  store<i64>(x, start, T_GOV);
  store<i32>(x, cpu, T_GOV_CPU);
  exitOf(s, e);
  store<i64>(x, end, T_TC);
}

/** The state of slot s after the switch at e switched it out (unknown when it switched out another thread: lost events). */
function exitOf(s: i32, e: usize): void {
  const x = TS + <usize>s * TSB;
  const v = load<i32>(e, E_C);
  if (load<i32>(e, E_B) != load<i32>(x, T_TID) || ((v >>> R.CS_OLD_THREAD_STATE) & 1) == 0) {
    set(s, S_UNKNOWN);
    return;
  }
  const out = load<i32>(e, E_OUT);
  const state = out & 0xff;
  if (state == TERMINATED) {
    set(s, S_NONE);
    return;
  }
  if (state == WAITING) {
    set(s, S_WAITING);
    if ((v >>> R.CS_OLD_THREAD_WAIT_REASON) & 1) store<i32>(x, (out >>> 8) & 0xff, T_WR);
    if ((v >>> R.CS_OLD_THREAD_WAIT_MODE) & 1) store<i32>(x, (out >>> 16) & 0xff, T_WM);
  } else {
    set(s, S_READY); // preempted
    store<i32>(x, load<i32>(e, E_CPU), T_CPU);
  }
  store<i32>(x, state, T_OLD);
  if ((v >>> R.CS_OLD_THREAD_PRIORITY) & 1) store<i32>(x, out >> 24, T_PRI);
}

/** The row of slot s's state, from its start to `end` (or open). */
function emitState(s: i32, hasEnd: bool, end: i64): void {
  const x = TS + <usize>s * TSB;
  emit(
    s,
    load<i32>(x, T_S),
    load<i32>(x, T_CPU),
    load<i32>(x, T_RK),
    load<i32>(x, T_RTID),
    load<i32>(x, T_RPID),
    load<i32>(x, T_WR),
    load<i32>(x, T_WM),
    load<i32>(x, T_OLD),
    load<i32>(x, T_PRI),
    load<i64>(x, T_TC),
    hasEnd,
    end,
  );
}

/**
 * A row of slot s (its process looked up at the start; rk: which of rtid, rpid hold a value, as int32
 * bits); held when a process id is not known yet.
 */
function emit(s: i32, state: i32, cpu: i32, rk: i32, rtid: i32, rpid: i32, wr: i32, wm: i32, old: i32, pri: i32, start: i64, hasEnd: bool, end: i64): void {
  const pid = pidOf(s, start);
  if (!final && (pid < 0 || rk & RK_RPID_LATER)) {
    if (nHold < holdRows) {
      if (nHold == holdCap) {
        const cap = min(holdRows, max(1024, 2 * holdCap));
        HOLD = regrow(HOLD, <usize>holdCap * HB, <usize>cap * HB);
        holdCap = cap;
      }
      const h = HOLD + <usize>nHold * HB;
      nHold++;
      store<i32>(h, s, H_SLOT);
      store<i32>(h, state, H_STATE);
      store<i32>(h, cpu, H_CPU);
      store<i32>(h, rtid, H_RTID);
      store<i32>(h, rpid, H_RPID);
      store<i32>(h, rk | (hasEnd ? RK_END : 0), H_RK);
      store<i32>(h, wr, H_WR);
      store<i32>(h, wm, H_WM);
      store<i32>(h, old, H_OLD);
      store<i32>(h, pri, H_PRI);
      store<i64>(h, start, H_START);
      store<i64>(h, end, H_END);
      heldRows++;
      return;
    }
    unresolvedRows++;
  }
  putRow(
    load<i32>(TS + <usize>s * TSB, T_TID),
    pid,
    state,
    cpu,
    rk & RK_RTID ? <i64>(<u32>rtid) : -1,
    rk & RK_RPID ? <i64>(<u32>rpid) : -1,
    wr,
    wm,
    old,
    pri,
    start,
    hasEnd,
    end,
  );
}

/** Stages a row (-1: null), handing the block to the JS side when full. */
function putRow(tid: i32, pid: i64, state: i32, cpu: i32, rtid: i64, rpid: i64, wr: i32, wm: i32, old: i32, pri: i32, start: i64, hasEnd: bool, end: i64): void {
  if (nOut == STAGE_ROWS) drainOut();
  const r = OUT + <usize>nOut * RB;
  nOut++;
  let v = (1 << R.TS_THREAD_ID) | (1 << R.TS_STATE) | (1 << R.TS_START_TIME) | (1 << R.TS_VALID);
  store<i32>(r, tid, R_TID);
  store<i32>(r, state, R_STATE);
  store<i64>(r, start, R_START);
  if (pid >= 0) v |= 1 << R.TS_PROCESS_ID;
  store<i32>(r, pid >= 0 ? <i32>pid : 0, R_PID);
  if (hasEnd) v |= (1 << R.TS_END_TIME) | (1 << R.TS_DURATION);
  store<i64>(r, hasEnd ? end : 0, R_END);
  if (cpu >= 0) v |= 1 << R.TS_CPU;
  store<i32>(r, cpu >= 0 ? cpu : 0, R_CPU);
  if (rtid >= 0) v |= 1 << R.TS_READYING_THREAD_ID;
  store<i32>(r, rtid >= 0 ? <i32>rtid : 0, R_RTID);
  if (rpid >= 0) v |= 1 << R.TS_READYING_PROCESS_ID;
  store<i32>(r, rpid >= 0 ? <i32>rpid : 0, R_RPID);
  let b = 0;
  if (wr >= 0) {
    b = wr;
    v |= 1 << R.TS_WAIT_REASON;
  }
  if (wm >= 0) {
    b |= wm << 8;
    v |= 1 << R.TS_WAIT_MODE;
  }
  if (old >= 0) {
    b |= old << 16;
    v |= 1 << R.TS_OLD_THREAD_STATE;
  }
  if (pri != NO_PRIORITY) {
    b |= (pri & 0xff) << 24;
    v |= 1 << R.TS_PRIORITY;
  }
  store<i32>(r, b, R_SMALL);
  store<i32>(r, v, R_VALID);
  rows++;
}

function drainOut(): void {
  if (nOut > 0) drain(nOut);
  nOut = 0;
}

/** End of the trace: releases everything, emits each thread's last interval and the runs still open, then the held rows. */
export function tsFinish(): void {
  release(true);
  if (hasT0) {
    for (let s = 0; s < nSlots; s++) {
      const x = TS + <usize>s * TSB;
      if ((load<i32>(x, T_FLAGS) & TF_EXISTS) == 0 || load<i32>(x, T_PEND) > 0 || load<i32>(x, T_S) == S_NONE) continue;
      emitState(s, false, 0);
    }
  }
  for (let c = 0; c < cpuCap; c++) {
    const y = CS + <usize>c * CSB;
    if ((load<i32>(y, C_FLAGS) & CF_RUN) == 0) continue;
    store<i32>(y, load<i32>(y, C_FLAGS) & ~CF_RUN, C_FLAGS);
    emit(load<i32>(y, C_RUN_SLOT), S_RUNNING, c, 0, 0, 0, -1, -1, -1, load<i32>(y, C_RUN_PRI), load<i64>(y, C_RUN), false, 0);
  }
  // the held rows, their process ids from the final lifetimes
  for (let i = 0; i < nHold; i++) {
    const h = HOLD + <usize>i * HB;
    const s = load<i32>(h, H_SLOT);
    const rk = load<i32>(h, H_RK);
    const start = load<i64>(h, H_START);
    const rtid: i64 = rk & RK_RTID ? <i64>load<u32>(h, H_RTID) : -1;
    let rpid: i64 = rk & RK_RPID ? <i64>load<u32>(h, H_RPID) : -1;
    if (rk & RK_RPID_LATER) {
      const rs = idGet(load<i32>(h, H_RTID));
      rpid = rs < 0 ? -1 : pidOf(rs, start);
    }
    putRow(
      load<i32>(TS + <usize>s * TSB, T_TID),
      pidOf(s, start),
      load<i32>(h, H_STATE),
      load<i32>(h, H_CPU),
      rtid,
      rpid,
      load<i32>(h, H_WR),
      load<i32>(h, H_WM),
      load<i32>(h, H_OLD),
      load<i32>(h, H_PRI),
      start,
      (rk & RK_END) != 0,
      load<i64>(h, H_END),
    );
  }
  nHold = 0;
  drainOut();
}

/** Where the rows are staged for env.drain. */
export function tsOutPtr(): usize {
  return OUT;
}

/** The run's figures: 0 rows, 1 lateEvents, 2 maxHeld, 3 threads, 4 heldRows, 5 unresolvedRows. */
export function tsStat(i: i32): i32 {
  if (i == 0) return rows;
  if (i == 1) return lateEvents;
  if (i == 2) return maxHeld;
  if (i == 3) return nSlots;
  if (i == 4) return heldRows;
  return unresolvedRows;
}
