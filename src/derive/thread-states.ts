// The `threadStates` table (WPA's thread states, Perfetto's thread_state; the rules: docs/design/streaming.md
// "threadStates"): one row per state interval of each thread other than the idle thread, from the cswitch
// and readythread rows and the `threads` lifetimes of a whole decode. Its independent oracle is
// test/helpers/thread-states-oracle.ts.
//
// Each thread's events become items — START / END (its lifetimes), OUT (a switch-out that ends no
// switch-in of it on that CPU), READY, RUN (a switch-in: running until the next cswitch row on its CPU,
// whose switch-out says the state after it), SEEN (a lifetime first seen in a rundown) — sorted by
// (threadId, time, kind, then CPU order or row order) and walked: each item ends the interval of the state
// before it and begins its own. Running rows are exactly the cpuUsage rows of the thread.
//
// Costs: no object per event or row. Items are columns of typed arrays, their times relative to the least
// time of the trace as two u32 words (exact 64-bit values, no BigInt, no double); they are ordered by a
// stable LSD radix sort (16-bit digits: the time's words, then the thread id, each pass skipped when one
// digit holds every item). Rows go into typed columns grown by doubling.
import * as L from '../generated/layout.js';
import { cpuTimeOrder } from '../convert/sort.js';
import { allocColumn, TABLE_COLUMNS, type TypedColumn } from '../tables/schema.js';
import { Table } from '../tables/table.js';

/** The values of the `state` column. */
export const THREAD_STATE_VALUES = ['unknown', 'running', 'ready', 'waiting'] as const;
export type ThreadStateValue = (typeof THREAD_STATE_VALUES)[number];

const S_UNKNOWN = 0;
const S_RUNNING = 1;
const S_READY = 2;
const S_WAITING = 3;
/** not alive: before its Start, after its End or a switch-out as Terminated (no row) */
const S_NONE = 4;

// item kinds, in their order at equal times
const K_START = 0;
const K_OUT = 1;
const K_READY = 2;
const K_RUN = 3;
const K_END = 4;
const K_SEEN = 5;

/** KTHREAD_STATE values (docs/format.md §C.5) */
const TERMINATED = 4;
const WAITING = 5;
/** sPri when the priority is not known (a priority is an i8) */
const NO_PRIORITY = 1000;

/** What threadStates() needs of a decode. */
export type ThreadStatesInput = { cswitch: Table<'cswitch'>; readythread: Table<'readythread'>; threads: Table<'threads'> };

/**
 * The whole threadStates table of a decoded trace, ordered by (threadId, startTime) (ties in derivation
 * order). Whole-trace only: it needs every cswitch and readythread row (no streaming form yet).
 */
export function threadStates(r: ThreadStatesInput): Table<'threadStates'> {
  return new ThreadStatesWalk(r.cswitch, r.readythread, r.threads).run();
}

/** The 64-bit column as u32 words (lo at 2i, hi at 2i + 1). */
function words(col: BigInt64Array): Uint32Array {
  return new Uint32Array(col.buffer, col.byteOffset, col.length * 2);
}

/** 0, 1, …, n - 1 */
function iota(n: number): Uint32Array {
  const a = new Uint32Array(n);
  for (let i = 0; i < n; i++) a[i] = i;
  return a;
}

/** Stable LSD radix pass by 16 bits of key[x] at `shift`: src → dst; false (nothing moved) when one digit holds all. */
function radixPass(src: Uint32Array, dst: Uint32Array, n: number, key: Uint32Array, shift: number, counts: Uint32Array): boolean {
  counts.fill(0);
  for (let i = 0; i < n; i++) counts[(key[src[i]!]! >>> shift) & 0xffff]!++;
  if (counts[(key[src[0]!]! >>> shift) & 0xffff] === n) return false;
  let sum = 0;
  for (let d = 0; d < 0x10000; d++) {
    const c = counts[d]!;
    counts[d] = sum;
    sum += c;
  }
  for (let i = 0; i < n; i++) {
    const x = src[i]!;
    dst[counts[(key[x]! >>> shift) & 0xffff]!++] = x;
  }
  return true;
}

/** Sorts the positions order[0, n) stably by the u32 keys in turn (the last one most significant); returns the sorted array. */
function radixSort(order: Uint32Array, n: number, keys: Uint32Array[]): Uint32Array {
  if (n < 2) return order;
  const counts = new Uint32Array(0x10000);
  let a: Uint32Array = order;
  let b: Uint32Array = new Uint32Array(order.length);
  for (const key of keys) {
    for (const shift of [0, 16]) {
      if (radixPass(a, b, n, key, shift, counts)) {
        const t = a;
        a = b;
        b = t;
      }
    }
  }
  return a;
}

class ThreadStatesWalk {
  // cswitch rows: per-CPU order (cpu, time, decode order), relative times by row
  private readonly ord: Uint32Array;
  private readonly csHi: Uint32Array;
  private readonly csLo: Uint32Array;
  private readonly csCpu: Uint16Array;
  private readonly newTid: Uint32Array;
  private readonly oldTid: Uint32Array;
  private readonly csValid: Uint32Array;
  private readonly oldState: Uint8Array;
  private readonly oldWr: Uint8Array;
  private readonly oldWm: Uint8Array;
  private readonly newPri: Int8Array;
  private readonly oldPri: Int8Array;
  /** positions in `ord` of each CPU's rows: [cpuStart[c], cpuStart[c + 1]) */
  private cpuStart = new Uint32Array(1);
  // lifetimes sorted by thread id (stable): their relative start times
  private thOrder: Uint32Array = new Uint32Array(0);
  private readonly thTid: Uint32Array;
  private readonly thPid: Uint32Array;
  private readonly thHasStart: Uint8Array;
  private readonly thHi: Uint32Array;
  private readonly thLo: Uint32Array;
  /** the least time (absolute words) */
  private minHi = 0;
  private minLo = 0;
  // the walk's state: S_ value and its attributes (-1: null)
  private s = S_UNKNOWN;
  private sCpu = -1;
  private sReadying = -1;
  private sReadyingPid = -1;
  private sWr = -1;
  private sWm = -1;
  private sOld = -1;
  /** the state's priority (NO_PRIORITY: unknown) */
  private sPri = NO_PRIORITY;
  // the output, grown by doubling
  private cap = 0;
  private n = 0;
  private oTid = new Uint32Array(0);
  private oPid = new Uint32Array(0);
  private oState: string[] = [];
  private oStart = new Uint32Array(0);
  private oEnd = new Uint32Array(0);
  private oDur = new Uint32Array(0);
  private oCpu = new Uint16Array(0);
  private oRtid = new Uint32Array(0);
  private oRpid = new Uint32Array(0);
  private oWr = new Uint8Array(0);
  private oWm = new Uint8Array(0);
  private oOld = new Uint8Array(0);
  private oPri = new Int8Array(0);
  private oValid = new Uint32Array(0);

  constructor(
    private readonly cswitch: Table<'cswitch'>,
    private readonly readythread: Table<'readythread'>,
    private readonly threads: Table<'threads'>,
  ) {
    const n = cswitch.length;
    this.csCpu = cswitch.column('cpu');
    this.newTid = cswitch.column('newThreadId');
    this.oldTid = cswitch.column('oldThreadId');
    this.csValid = cswitch.column('valid');
    this.oldState = cswitch.column('oldThreadState');
    this.oldWr = cswitch.column('oldThreadWaitReason');
    this.oldWm = cswitch.column('oldThreadWaitMode');
    this.newPri = cswitch.column('newThreadPriority');
    this.oldPri = cswitch.column('oldThreadPriority');
    this.ord = cpuTimeOrder(this.csCpu, cswitch.column('timestamp'), n) ?? iota(n);
    this.csHi = new Uint32Array(n);
    this.csLo = new Uint32Array(n);
    this.thTid = threads.column('threadId');
    this.thPid = threads.column('processId');
    this.thHasStart = new Uint8Array(threads.length);
    this.thHi = new Uint32Array(threads.length);
    this.thLo = new Uint32Array(threads.length);
  }

  /** (hi, lo) < the least so far, as signed 64-bit values: it becomes the least. */
  private least(hi: number, lo: number, first: boolean): void {
    if (first || (hi | 0) < (this.minHi | 0) || ((hi | 0) === (this.minHi | 0) && lo < this.minLo)) {
      this.minHi = hi;
      this.minLo = lo;
    }
  }

  run(): Table<'threadStates'> {
    const cs = this.cswitch;
    const rt = this.readythread;
    const th = this.threads;
    const csW = words(cs.column('timestamp'));
    const rtW = words(rt.column('timestamp'));
    const thStartW = words(th.column('startTime'));
    const thEndW = words(th.column('endTime'));
    const thValid = th.column('valid');
    const hasStart = (i: number) => ((thValid[i]! >>> L.TH_START_TIME) & 1) === 1;
    const hasEnd = (i: number) => ((thValid[i]! >>> L.TH_END_TIME) & 1) === 1;
    // the least time of the trace: cswitch, readythread, lifetimes' starts and ends
    let any = false;
    for (let i = 0; i < cs.length; i++, any = true) this.least(csW[2 * i + 1]!, csW[2 * i]!, !any);
    for (let i = 0; i < rt.length; i++, any = true) this.least(rtW[2 * i + 1]!, rtW[2 * i]!, !any);
    for (let i = 0; i < th.length; i++) {
      if (hasStart(i)) this.least(thStartW[2 * i + 1]!, thStartW[2 * i]!, !any), (any = true);
      if (hasEnd(i)) this.least(thEndW[2 * i + 1]!, thEndW[2 * i]!, !any), (any = true);
    }
    const mHi = this.minHi;
    const mLo = this.minLo;
    // relative time (u64 words) of absolute words at w[2i]
    const relLo = (w: Uint32Array, i: number) => (w[2 * i]! - mLo) >>> 0;
    const relHi = (w: Uint32Array, i: number) => (w[2 * i + 1]! - mHi - (w[2 * i]! < mLo ? 1 : 0)) >>> 0;
    for (let i = 0; i < cs.length; i++) {
      this.csHi[i] = relHi(csW, i);
      this.csLo[i] = relLo(csW, i);
    }
    for (let i = 0; i < th.length; i++) {
      if (!hasStart(i)) continue;
      this.thHasStart[i] = 1;
      this.thHi[i] = relHi(thStartW, i);
      this.thLo[i] = relLo(thStartW, i);
    }
    // lifetimes by thread id
    this.thOrder = radixSort(iota(th.length), th.length, [this.thTid]);
    // each CPU's range of positions in ord
    let maxCpu = 0;
    for (let i = 0; i < cs.length; i++) if (this.csCpu[i]! > maxCpu) maxCpu = this.csCpu[i]!;
    this.cpuStart = new Uint32Array(maxCpu + 2);
    for (let i = 0; i < cs.length; i++) this.cpuStart[this.csCpu[i]! + 1]!++;
    for (let c = 1; c < this.cpuStart.length; c++) this.cpuStart[c]! += this.cpuStart[c - 1]!;

    // the items, generated kind by kind (each kind in its tie order)
    const cap = 2 * cs.length + rt.length + 3 * th.length;
    const iTid = new Uint32Array(cap);
    const iHi = new Uint32Array(cap);
    const iLo = new Uint32Array(cap);
    const iKind = new Uint8Array(cap);
    const iRef = new Uint32Array(cap); // START/END/SEEN: threads row; OUT/RUN: position in ord; READY: readythread row
    let m = 0;
    const ord = this.ord;
    const add = (tid: number, hi: number, lo: number, kind: number, ref: number) => {
      iTid[m] = tid;
      iHi[m] = hi;
      iLo[m] = lo;
      iKind[m] = kind;
      iRef[m++] = ref;
    };
    for (let i = 0; i < th.length; i++) if (this.thTid[i] !== 0 && hasStart(i)) add(this.thTid[i]!, this.thHi[i]!, this.thLo[i]!, K_START, i);
    for (let p = 0; p < cs.length; p++) {
      const k = ord[p]!;
      const old = this.oldTid[k]!;
      if (old === 0) continue;
      // a switch-out that ends a switch-in of its thread on this CPU is that RUN's exit
      const prev = p > 0 && this.csCpu[ord[p - 1]!] === this.csCpu[k] ? ord[p - 1]! : -1;
      if (prev >= 0 && this.hasNew(prev) && this.newTid[prev] === old) continue;
      add(old, this.csHi[k]!, this.csLo[k]!, K_OUT, p);
    }
    const rtTid = rt.column('threadId');
    for (let i = 0; i < rt.length; i++) if (rtTid[i] !== 0) add(rtTid[i]!, relHi(rtW, i), relLo(rtW, i), K_READY, i);
    for (let p = 0; p < cs.length; p++) {
      const k = ord[p]!;
      if (this.hasNew(k) && this.newTid[k] !== 0) add(this.newTid[k]!, this.csHi[k]!, this.csLo[k]!, K_RUN, p);
    }
    for (let i = 0; i < th.length; i++) if (this.thTid[i] !== 0 && hasEnd(i)) add(this.thTid[i]!, relHi(thEndW, i), relLo(thEndW, i), K_END, i);
    if (any) for (let i = 0; i < th.length; i++) if (this.thTid[i] !== 0 && !hasStart(i)) add(this.thTid[i]!, 0, 0, K_SEEN, i);

    const order = radixSort(iota(m), m, [iLo, iHi, iTid]);
    this.grow(Math.max(1024, m + (m >>> 1)));

    // the walk, thread by thread
    const rtCpu = rt.column('cpu');
    for (let a = 0; a < m; ) {
      const tid = iTid[order[a]!]!;
      let b = a + 1;
      while (b < m && iTid[order[b]!] === tid) b++;
      this.set(iKind[order[a]!] === K_START ? S_NONE : S_UNKNOWN);
      let tcHi = 0; // the state's start (relative)
      let tcLo = 0;
      let open = false; // an open RUN covers the rest of the trace
      for (let q = a; q < b; q++) {
        const x = order[q]!;
        const kind = iKind[x]!;
        const hi = iHi[x]!;
        const lo = iLo[x]!;
        const inside = open || hi < tcHi || (hi === tcHi && lo < tcLo);
        if (inside) {
          // inside a running interval: only other switch-ins count (a trace that lost events)
          if (kind !== K_RUN || open) {
            if (kind === K_RUN) this.running(tid, iRef[x]!);
            continue;
          }
          const next = this.running(tid, iRef[x]!);
          if (next < 0) open = true;
          else if (this.csHi[next]! > tcHi || (this.csHi[next] === tcHi && this.csLo[next]! > tcLo)) {
            this.exit(next, tid);
            tcHi = this.csHi[next]!;
            tcLo = this.csLo[next]!;
          }
          continue;
        }
        if (this.s !== S_NONE && (hi !== tcHi || lo !== tcLo)) {
          // a ready interval of unknown priority ended by a switch-in: the priority it was switched in with
          if (kind === K_RUN && this.s === S_READY && this.sPri === NO_PRIORITY) {
            const k = this.ord[iRef[x]!]!;
            if ((this.csValid[k]! >>> L.CS_NEW_THREAD_PRIORITY) & 1) this.sPri = this.newPri[k]!;
          }
          this.row(tid, tcHi, tcLo, true, hi, lo);
        }
        switch (kind) {
          case K_RUN: {
            const next = this.running(tid, iRef[x]!);
            if (next < 0) {
              open = true;
              continue;
            }
            this.exit(next, tid);
            tcHi = this.csHi[next]!;
            tcLo = this.csLo[next]!;
            continue;
          }
          case K_OUT:
            this.exit(ord[iRef[x]!]!, tid);
            break;
          case K_READY: {
            const i = iRef[x]!;
            this.set(S_READY);
            this.sCpu = rtCpu[i]!;
            this.sReadying = this.readyingOf(rtCpu[i]!, hi, lo);
            if (this.sReadying >= 0) this.sReadyingPid = this.pidOf(this.sReadying, hi, lo);
            break;
          }
          case K_START:
            this.set(S_UNKNOWN);
            break;
          case K_END:
            this.set(S_NONE);
            break;
          case K_SEEN:
            continue;
        }
        tcHi = hi;
        tcLo = lo;
      }
      if (!open && this.s !== S_NONE) this.row(tid, tcHi, tcLo, false, 0, 0);
      a = b;
    }
    return this.table();
  }

  private hasNew(k: number): boolean {
    return ((this.csValid[k]! >>> L.CS_NEW_THREAD_ID) & 1) === 1;
  }

  private set(s: number): void {
    this.s = s;
    this.sCpu = this.sReadying = this.sReadyingPid = this.sWr = this.sWm = this.sOld = -1;
    this.sPri = NO_PRIORITY;
  }

  /** The state after cswitch row k switched thread `tid` out (unknown when the row switched out another thread: lost events). */
  private exit(k: number, tid: number): void {
    if (this.oldTid[k] !== tid || ((this.csValid[k]! >>> L.CS_OLD_THREAD_STATE) & 1) === 0) return this.set(S_UNKNOWN);
    const v = this.csValid[k]!;
    const state = this.oldState[k]!;
    if (state === TERMINATED) return this.set(S_NONE);
    const pri = (v >>> L.CS_OLD_THREAD_PRIORITY) & 1 ? this.oldPri[k]! : NO_PRIORITY;
    if (state === WAITING) {
      this.set(S_WAITING);
      if ((v >>> L.CS_OLD_THREAD_WAIT_REASON) & 1) this.sWr = this.oldWr[k]!;
      if ((v >>> L.CS_OLD_THREAD_WAIT_MODE) & 1) this.sWm = this.oldWm[k]!;
    } else {
      this.set(S_READY); // preempted
      this.sCpu = this.csCpu[k]!;
    }
    this.sOld = state;
    this.sPri = pri;
  }

  /** The running row of the switch-in at position p of ord; returns the row of the CPU's next switch (-1: none). */
  private running(tid: number, p: number): number {
    const k = this.ord[p]!;
    const cpu = this.csCpu[k]!;
    const next = p + 1 < this.cswitch.length && this.csCpu[this.ord[p + 1]!] === cpu ? this.ord[p + 1]! : -1;
    // the walk's state stays as it is (a switch-in inside another running interval changes nothing else)
    const { s, sCpu, sReadying, sReadyingPid, sWr, sWm, sOld, sPri } = this;
    this.set(S_RUNNING);
    this.sCpu = cpu;
    if ((this.csValid[k]! >>> L.CS_NEW_THREAD_PRIORITY) & 1) this.sPri = this.newPri[k]!;
    this.row(tid, this.csHi[k]!, this.csLo[k]!, next >= 0, next >= 0 ? this.csHi[next]! : 0, next >= 0 ? this.csLo[next]! : 0);
    this.s = s;
    this.sCpu = sCpu;
    this.sReadying = sReadying;
    this.sReadyingPid = sReadyingPid;
    this.sWr = sWr;
    this.sWm = sWm;
    this.sOld = sOld;
    this.sPri = sPri;
    return next;
  }

  /** The thread running on `cpu` at relative time (hi, lo): the new thread of its latest switch at or before it (-1: unknown). */
  private readyingOf(cpu: number, hi: number, lo: number): number {
    if (cpu + 1 >= this.cpuStart.length) return -1;
    let a = this.cpuStart[cpu]!;
    let b = this.cpuStart[cpu + 1]!;
    // the first position whose time is after (hi, lo)
    while (a < b) {
      const mid = (a + b) >>> 1;
      const k = this.ord[mid]!;
      if (this.csHi[k]! < hi || (this.csHi[k] === hi && this.csLo[k]! <= lo)) a = mid + 1;
      else b = mid;
    }
    if (a === this.cpuStart[cpu]) return -1;
    const k = this.ord[a - 1]!;
    return this.hasNew(k) ? this.newTid[k]! : -1;
  }

  /** The process of `tid` at relative time (hi, lo): the lifetime with the latest start at or before it (no start: the earliest; ties: the later row); -1: none. */
  private pidOf(tid: number, hi: number, lo: number): number {
    if (tid === 0) return 0;
    const o = this.thOrder;
    let a = 0;
    let b = o.length;
    while (a < b) {
      const mid = (a + b) >>> 1;
      if (this.thTid[o[mid]!]! < tid) a = mid + 1;
      else b = mid;
    }
    let best = -1;
    for (; a < o.length && this.thTid[o[a]!] === tid; a++) {
      const i = o[a]!;
      if (!this.thHasStart[i]) {
        if (best < 0 || !this.thHasStart[best]) best = i;
        continue;
      }
      const sHi = this.thHi[i]!;
      const sLo = this.thLo[i]!;
      if (sHi > hi || (sHi === hi && sLo > lo)) continue;
      if (best < 0 || !this.thHasStart[best] || sHi > this.thHi[best]! || (sHi === this.thHi[best] && sLo >= this.thLo[best]!)) best = i;
    }
    return best < 0 ? -1 : this.thPid[best]!;
  }

  /** Appends a row of the current state from relative (sHi, sLo) to (eHi, eLo) (or open); returns its index. */
  private row(tid: number, sHi: number, sLo: number, hasEnd: boolean, eHi: number, eLo: number): number {
    if (this.n === this.cap) this.grow(2 * this.cap);
    const r = this.n++;
    let v = (1 << L.TS_THREAD_ID) | (1 << L.TS_STATE) | (1 << L.TS_START_TIME) | (1 << L.TS_VALID);
    this.oTid[r] = tid;
    const pid = this.pidOf(tid, sHi, sLo);
    this.oPid[r] = pid < 0 ? 0 : pid;
    if (pid >= 0) v |= 1 << L.TS_PROCESS_ID;
    this.oState[r] = THREAD_STATE_VALUES[this.s]!;
    this.absolute(this.oStart, r, sHi, sLo);
    if (hasEnd) {
      this.absolute(this.oEnd, r, eHi, eLo);
      const dLo = (eLo - sLo) >>> 0;
      this.oDur[2 * r] = dLo;
      this.oDur[2 * r + 1] = (eHi - sHi - (eLo < sLo ? 1 : 0)) >>> 0;
      v |= (1 << L.TS_END_TIME) | (1 << L.TS_DURATION);
    } else {
      this.oEnd[2 * r] = this.oEnd[2 * r + 1] = this.oDur[2 * r] = this.oDur[2 * r + 1] = 0;
    }
    this.oCpu[r] = this.sCpu < 0 ? 0 : this.sCpu;
    if (this.sCpu >= 0) v |= 1 << L.TS_CPU;
    this.oRtid[r] = this.sReadying < 0 ? 0 : this.sReadying;
    if (this.sReadying >= 0) v |= 1 << L.TS_READYING_THREAD_ID;
    this.oRpid[r] = this.sReadyingPid < 0 ? 0 : this.sReadyingPid;
    if (this.sReadyingPid >= 0) v |= 1 << L.TS_READYING_PROCESS_ID;
    this.oWr[r] = this.sWr < 0 ? 0 : this.sWr;
    if (this.sWr >= 0) v |= 1 << L.TS_WAIT_REASON;
    this.oWm[r] = this.sWm < 0 ? 0 : this.sWm;
    if (this.sWm >= 0) v |= 1 << L.TS_WAIT_MODE;
    this.oOld[r] = this.sOld < 0 ? 0 : this.sOld;
    if (this.sOld >= 0) v |= 1 << L.TS_OLD_THREAD_STATE;
    this.oPri[r] = this.sPri === NO_PRIORITY ? 0 : this.sPri;
    if (this.sPri !== NO_PRIORITY) v |= 1 << L.TS_PRIORITY;
    this.oValid[r] = v >>> 0;
    return r;
  }

  /** Writes relative (hi, lo) + the least time as absolute words at row r of `w`. */
  private absolute(w: Uint32Array, r: number, hi: number, lo: number): void {
    const l = (lo + this.minLo) >>> 0;
    w[2 * r] = l;
    w[2 * r + 1] = (hi + this.minHi + (l < lo ? 1 : 0)) >>> 0;
  }

  private grow(cap: number): void {
    const u32 = (a: Uint32Array, k = 1) => {
      const b = new Uint32Array(cap * k);
      b.set(a);
      return b;
    };
    const u16 = (a: Uint16Array) => {
      const b = new Uint16Array(cap);
      b.set(a);
      return b;
    };
    const u8 = (a: Uint8Array) => {
      const b = new Uint8Array(cap);
      b.set(a);
      return b;
    };
    this.oTid = u32(this.oTid);
    this.oPid = u32(this.oPid);
    this.oStart = u32(this.oStart, 2);
    this.oEnd = u32(this.oEnd, 2);
    this.oDur = u32(this.oDur, 2);
    this.oCpu = u16(this.oCpu);
    this.oRtid = u32(this.oRtid);
    this.oRpid = u32(this.oRpid);
    this.oWr = u8(this.oWr);
    this.oWm = u8(this.oWm);
    this.oOld = u8(this.oOld);
    const pri = new Int8Array(cap);
    pri.set(this.oPri);
    this.oPri = pri;
    this.oValid = u32(this.oValid);
    this.cap = cap;
  }

  private table(): Table<'threadStates'> {
    const n = this.n;
    const i64 = (w: Uint32Array) => new BigInt64Array(w.buffer.slice(0, 8 * n));
    const columns: TypedColumn[] = TABLE_COLUMNS.threadStates.map((c) => allocColumn(c.type, 0));
    columns[L.TS_THREAD_ID] = this.oTid.slice(0, n);
    columns[L.TS_PROCESS_ID] = this.oPid.slice(0, n);
    columns[L.TS_STATE] = this.oState.slice(0, n);
    columns[L.TS_START_TIME] = i64(this.oStart);
    columns[L.TS_END_TIME] = i64(this.oEnd);
    columns[L.TS_DURATION] = i64(this.oDur);
    columns[L.TS_CPU] = this.oCpu.slice(0, n);
    columns[L.TS_READYING_THREAD_ID] = this.oRtid.slice(0, n);
    columns[L.TS_READYING_PROCESS_ID] = this.oRpid.slice(0, n);
    columns[L.TS_WAIT_REASON] = this.oWr.slice(0, n);
    columns[L.TS_WAIT_MODE] = this.oWm.slice(0, n);
    columns[L.TS_OLD_THREAD_STATE] = this.oOld.slice(0, n);
    columns[L.TS_PRIORITY] = this.oPri.slice(0, n);
    columns[L.TS_VALID] = this.oValid.slice(0, n);
    return new Table('threadStates', { length: n, columns });
  }
}
