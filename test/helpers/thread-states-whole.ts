// The whole-trace threadStates derivation as it was before the table was streamed, kept as the oracle of
// the differential test (test/thread-states-stream.test.ts): every cswitch and readythread row of a decode
// and its `threads` lifetimes, each thread's events as items sorted by (threadId, time, kind) and walked
// thread by thread. The rules: docs/design/streaming.md "threadStates".
//
// Items — START / END (its lifetimes), OUT (a switch-out that ends no switch-in of it on that CPU), READY,
// RUN (a switch-in: running until the next cswitch row on its CPU, whose switch-out says the state after
// it), SEEN (a lifetime first seen in a rundown) — are columns of typed arrays, their times relative to
// the least time of the trace as two u32 words, ordered by the project's radix sort.
import * as L from '../../src/generated/layout.js';
import { cpuTimeOrder } from '../../src/convert/sort.js';
import { radixOrder, radixSort } from '../../src/order.js';
import { allocColumn, TABLE_COLUMNS, type TypedColumn } from '../../src/tables/schema.js';
import { Table } from '../../src/tables/table.js';

import { THREAD_STATE_VALUES, type ThreadStatesInput } from '../../src/derive/thread-states.js';

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


/** The whole threadStates table of a decoded trace, ordered by (threadId, startTime) (ties in derivation order). */
export function threadStatesWhole(r: ThreadStatesInput): Table<'threadStates'> {
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

// The cswitch rows in per-CPU order (cpu, time, decode order), SW int32 words per position: what the walk
// reads of a switch and of the next one on its CPU is one or two cache lines, not a miss per column.
const SW = 8;
const P_HI = 0; // relative time, high word
const P_LO = 1; // relative time, low word
const P_NEW = 2; // newThreadId
const P_OLD = 3; // oldThreadId
const P_CPU = 4;
const P_VALID = 5; // the row's valid bits
const P_OUT = 6; // oldThreadState | oldThreadWaitReason << 8 | oldThreadWaitMode << 16 | oldThreadPriority << 24
const P_NEW_PRI = 7; // newThreadPriority

class ThreadStatesWalk {
  /** the switches by position (SW words each) */
  private sw = new Int32Array(0);
  /** positions of each CPU's rows: [cpuStart[c], cpuStart[c + 1]) */
  private cpuStart = new Uint32Array(1);
  // lifetimes sorted by thread id (stable): their relative start times
  private thOrder: Uint32Array = new Uint32Array(0);
  private readonly thTid: Uint32Array;
  private readonly thPid: Uint32Array;
  private readonly thHasStart: Uint8Array;
  private readonly thHi: Uint32Array;
  private readonly thLo: Uint32Array;
  /** the walk's thread: the first position of its lifetimes in thOrder */
  private lifeAt = 0;
  /** per readythread row: the readying thread and its process (-1: unknown) */
  private rtReadying = new Int32Array(0);
  private rtReadyingPid = new Int32Array(0);
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
  private oState = new Uint8Array(0);
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
    this.positions(relHi, relLo);
    for (let i = 0; i < th.length; i++) {
      if (!hasStart(i)) continue;
      this.thHasStart[i] = 1;
      this.thHi[i] = relHi(thStartW, i);
      this.thLo[i] = relLo(thStartW, i);
    }
    // lifetimes by thread id
    this.thOrder = radixOrder([this.thTid], th.length);
    // each ready's readying thread and its process, by one merge of the readies and the switches per CPU
    this.readying(rt, rtW, relHi, relLo);

    // the items, generated kind by kind (each kind in its tie order)
    const cap = 2 * cs.length + rt.length + 3 * th.length;
    const iTid = new Uint32Array(cap);
    const iHi = new Uint32Array(cap);
    const iLo = new Uint32Array(cap);
    const iKind = new Uint32Array(cap);
    const iRef = new Uint32Array(cap); // START/END/SEEN: threads row; OUT/RUN: position in ord; READY: readythread row
    let m = 0;
    const sw = this.sw;
    const add = (tid: number, hi: number, lo: number, kind: number, ref: number) => {
      iTid[m] = tid;
      iHi[m] = hi;
      iLo[m] = lo;
      iKind[m] = kind;
      iRef[m++] = ref;
    };
    for (let i = 0; i < th.length; i++) if (this.thTid[i] !== 0 && hasStart(i)) add(this.thTid[i]!, this.thHi[i]!, this.thLo[i]!, K_START, i);
    for (let p = 0; p < cs.length; p++) {
      const w = p * SW;
      const old = sw[w + P_OLD]! >>> 0;
      if (old === 0) continue;
      // a switch-out that ends a switch-in of its thread on this CPU is that RUN's exit
      if (p > 0 && sw[w - SW + P_CPU] === sw[w + P_CPU] && this.hasNew(p - 1) && sw[w - SW + P_NEW]! >>> 0 === old) continue;
      add(old, sw[w + P_HI]! >>> 0, sw[w + P_LO]! >>> 0, K_OUT, p);
    }
    const rtTid = rt.column('threadId');
    for (let i = 0; i < rt.length; i++) if (rtTid[i] !== 0) add(rtTid[i]!, relHi(rtW, i), relLo(rtW, i), K_READY, i);
    for (let p = 0; p < cs.length; p++) {
      const w = p * SW;
      if (this.hasNew(p) && sw[w + P_NEW] !== 0) add(sw[w + P_NEW]! >>> 0, sw[w + P_HI]! >>> 0, sw[w + P_LO]! >>> 0, K_RUN, p);
    }
    for (let i = 0; i < th.length; i++) if (this.thTid[i] !== 0 && hasEnd(i)) add(this.thTid[i]!, relHi(thEndW, i), relLo(thEndW, i), K_END, i);
    if (any) for (let i = 0; i < th.length; i++) if (this.thTid[i] !== 0 && !hasStart(i)) add(this.thTid[i]!, 0, 0, K_SEEN, i);

    // the items by (thread id, time), ties in the order they were generated
    const [oLo, oHi, oTid, oKind, oRef] = radixSort([iLo, iHi, iTid], [iKind, iRef], m) as [Uint32Array, Uint32Array, Uint32Array, Uint32Array, Uint32Array];
    this.grow(Math.max(1024, m + (m >>> 3)));

    // the walk, thread by thread
    const rtCpu = rt.column('cpu');
    for (let a = 0; a < m; ) {
      const tid = oTid[a]!;
      let b = a + 1;
      while (b < m && oTid[b] === tid) b++;
      this.lifetimesOf(tid);
      this.set(oKind[a] === K_START ? S_NONE : S_UNKNOWN);
      let tcHi = 0; // the state's start (relative)
      let tcLo = 0;
      let open = false; // an open RUN covers the rest of the trace
      for (let q = a; q < b; q++) {
        const kind = oKind[q]!;
        const hi = oHi[q]!;
        const lo = oLo[q]!;
        const ref = oRef[q]!;
        const inside = open || hi < tcHi || (hi === tcHi && lo < tcLo);
        if (inside) {
          // inside a running interval: only other switch-ins count (a trace that lost events)
          if (kind !== K_RUN || open) {
            if (kind === K_RUN) this.running(tid, ref);
            continue;
          }
          const next = this.running(tid, ref);
          if (next < 0) open = true;
          else {
            const nHi = sw[next * SW + P_HI]! >>> 0;
            const nLo = sw[next * SW + P_LO]! >>> 0;
            if (nHi > tcHi || (nHi === tcHi && nLo > tcLo)) {
              this.exit(next, tid);
              tcHi = nHi;
              tcLo = nLo;
            }
          }
          continue;
        }
        if (this.s !== S_NONE && (hi !== tcHi || lo !== tcLo)) {
          // a ready interval of unknown priority ended by a switch-in: the priority it was switched in with
          if (kind === K_RUN && this.s === S_READY && this.sPri === NO_PRIORITY) {
            if ((sw[ref * SW + P_VALID]! >>> L.CS_NEW_THREAD_PRIORITY) & 1) this.sPri = sw[ref * SW + P_NEW_PRI]!;
          }
          this.row(tid, tcHi, tcLo, true, hi, lo);
        }
        switch (kind) {
          case K_RUN: {
            const next = this.running(tid, ref);
            if (next < 0) {
              open = true;
              continue;
            }
            this.exit(next, tid);
            tcHi = sw[next * SW + P_HI]! >>> 0;
            tcLo = sw[next * SW + P_LO]! >>> 0;
            continue;
          }
          case K_OUT:
            this.exit(ref, tid);
            break;
          case K_READY: {
            const i = ref;
            this.set(S_READY);
            this.sCpu = rtCpu[i]!;
            this.sReadying = this.rtReadying[i]!;
            if (this.sReadying >= 0) this.sReadyingPid = this.rtReadyingPid[i]!;
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

  /** The switches in per-CPU order, packed by position (sw), and each CPU's range of positions. */
  private positions(relHi: (w: Uint32Array, i: number) => number, relLo: (w: Uint32Array, i: number) => number): void {
    const cs = this.cswitch;
    const n = cs.length;
    const cpu = cs.column('cpu');
    const csW = words(cs.column('timestamp'));
    const newTid = cs.column('newThreadId');
    const oldTid = cs.column('oldThreadId');
    const valid = cs.column('valid');
    const oldState = cs.column('oldThreadState');
    const oldWr = cs.column('oldThreadWaitReason');
    const oldWm = cs.column('oldThreadWaitMode');
    const newPri = cs.column('newThreadPriority');
    const oldPri = cs.column('oldThreadPriority');
    const ord = cpuTimeOrder(cpu, cs.column('timestamp'), n) ?? iota(n);
    const sw = (this.sw = new Int32Array(n * SW));
    let maxCpu = 0;
    for (let p = 0; p < n; p++) {
      const k = ord[p]!;
      const w = p * SW;
      sw[w + P_HI] = relHi(csW, k);
      sw[w + P_LO] = relLo(csW, k);
      sw[w + P_NEW] = newTid[k]!;
      sw[w + P_OLD] = oldTid[k]!;
      sw[w + P_CPU] = cpu[k]!;
      sw[w + P_VALID] = valid[k]!;
      sw[w + P_OUT] = oldState[k]! | (oldWr[k]! << 8) | (oldWm[k]! << 16) | ((oldPri[k]! & 0xff) << 24);
      sw[w + P_NEW_PRI] = newPri[k]!;
      if (cpu[k]! > maxCpu) maxCpu = cpu[k]!;
    }
    this.cpuStart = new Uint32Array(maxCpu + 2);
    for (let i = 0; i < n; i++) this.cpuStart[cpu[i]! + 1]!++;
    for (let c = 1; c < this.cpuStart.length; c++) this.cpuStart[c]! += this.cpuStart[c - 1]!;
  }

  /** Whether the switch at position p has its new thread. */
  private hasNew(p: number): boolean {
    return ((this.sw[p * SW + P_VALID]! >>> L.CS_NEW_THREAD_ID) & 1) === 1;
  }

  private set(s: number): void {
    this.s = s;
    this.sCpu = this.sReadying = this.sReadyingPid = this.sWr = this.sWm = this.sOld = -1;
    this.sPri = NO_PRIORITY;
  }

  /** The state after the switch at position p switched thread `tid` out (unknown when it switched out another thread: lost events). */
  private exit(p: number, tid: number): void {
    const w = p * SW;
    const v = this.sw[w + P_VALID]!;
    if (this.sw[w + P_OLD]! >>> 0 !== tid || ((v >>> L.CS_OLD_THREAD_STATE) & 1) === 0) return this.set(S_UNKNOWN);
    const out = this.sw[w + P_OUT]!;
    const state = out & 0xff;
    if (state === TERMINATED) return this.set(S_NONE);
    const pri = (v >>> L.CS_OLD_THREAD_PRIORITY) & 1 ? out >> 24 : NO_PRIORITY;
    if (state === WAITING) {
      this.set(S_WAITING);
      if ((v >>> L.CS_OLD_THREAD_WAIT_REASON) & 1) this.sWr = (out >>> 8) & 0xff;
      if ((v >>> L.CS_OLD_THREAD_WAIT_MODE) & 1) this.sWm = (out >>> 16) & 0xff;
    } else {
      this.set(S_READY); // preempted
      this.sCpu = this.sw[w + P_CPU]!;
    }
    this.sOld = state;
    this.sPri = pri;
  }

  /** The running row of the switch-in at position p; returns the position of the CPU's next switch (-1: none). */
  private running(tid: number, p: number): number {
    const sw = this.sw;
    const w = p * SW;
    const cpu = sw[w + P_CPU]!;
    const next = p + 1 < this.cswitch.length && sw[w + SW + P_CPU] === cpu ? p + 1 : -1;
    // the walk's state stays as it is (a switch-in inside another running interval changes nothing else)
    const { s, sCpu, sReadying, sReadyingPid, sWr, sWm, sOld, sPri } = this;
    this.set(S_RUNNING);
    this.sCpu = cpu;
    if ((sw[w + P_VALID]! >>> L.CS_NEW_THREAD_PRIORITY) & 1) this.sPri = sw[w + P_NEW_PRI]!;
    this.row(tid, sw[w + P_HI]! >>> 0, sw[w + P_LO]! >>> 0, next >= 0, next >= 0 ? sw[w + SW + P_HI]! >>> 0 : 0, next >= 0 ? sw[w + SW + P_LO]! >>> 0 : 0);
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

  /**
   * Per readythread row: the thread running on its CPU at its time — the new thread of the CPU's latest
   * switch at or before it (-1: unknown) — and that thread's process then (-1: unknown). The readies are
   * taken in (cpu, time) order and each CPU's switches walked once beside them.
   */
  private readying(rt: Table<'readythread'>, rtW: Uint32Array, relHi: (w: Uint32Array, i: number) => number, relLo: (w: Uint32Array, i: number) => number): void {
    const n = rt.length;
    const rtCpu = rt.column('cpu');
    const rtOrd = cpuTimeOrder(rtCpu, rt.column('timestamp'), n) ?? iota(n);
    this.rtReadying = new Int32Array(n).fill(-1);
    this.rtReadyingPid = new Int32Array(n).fill(-1);
    const sw = this.sw;
    let cpu = -1;
    let p = 0; // the CPU's first switch position after the ready's time
    let end = 0;
    for (let q = 0; q < n; q++) {
      const i = rtOrd[q]!;
      const c = rtCpu[i]!;
      if (c + 1 >= this.cpuStart.length) continue;
      if (c !== cpu) {
        cpu = c;
        p = this.cpuStart[c]!;
        end = this.cpuStart[c + 1]!;
      }
      const hi = relHi(rtW, i);
      const lo = relLo(rtW, i);
      while (p < end) {
        const pHi = sw[p * SW + P_HI]! >>> 0;
        if (pHi < hi || (pHi === hi && sw[p * SW + P_LO]! >>> 0 <= lo)) p++;
        else break;
      }
      if (p === this.cpuStart[c]) continue;
      if (!this.hasNew(p - 1)) continue;
      const tid = sw[(p - 1) * SW + P_NEW]! >>> 0;
      this.rtReadying[i] = tid;
      this.rtReadyingPid[i] = this.pidOf(tid, hi, lo);
    }
  }

  /** The walk's thread: the first position in thOrder of its lifetimes (once per thread; row() reads it). */
  private lifetimesOf(tid: number): void {
    this.lifeAt = this.firstLifetime(tid);
  }

  /** The first position in thOrder with a thread id ≥ tid. */
  private firstLifetime(tid: number): number {
    const o = this.thOrder;
    let a = 0;
    let b = o.length;
    while (a < b) {
      const mid = (a + b) >>> 1;
      if (this.thTid[o[mid]!]! < tid) a = mid + 1;
      else b = mid;
    }
    return a;
  }

  /** The process of `tid` at relative time (hi, lo): the lifetime with the latest start at or before it (no start: the earliest; ties: the later row); -1: none. */
  private pidOf(tid: number, hi: number, lo: number): number {
    return tid === 0 ? 0 : this.pidFrom(this.firstLifetime(tid), tid, hi, lo);
  }

  /** pidOf, the lifetimes of `tid` starting at position a of thOrder. */
  private pidFrom(a: number, tid: number, hi: number, lo: number): number {
    const o = this.thOrder;
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
    const pid = tid === 0 ? 0 : this.pidFrom(this.lifeAt, tid, sHi, sLo);
    this.oPid[r] = pid < 0 ? 0 : pid;
    if (pid >= 0) v |= 1 << L.TS_PROCESS_ID;
    this.oState[r] = this.s;
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
    this.oState = u8(this.oState);
    const pri = new Int8Array(cap);
    pri.set(this.oPri);
    this.oPri = pri;
    this.oValid = u32(this.oValid);
    this.cap = cap;
  }

  private table(): Table<'threadStates'> {
    const n = this.n;
    // views of the grown columns (no copy: at most an eighth more rows than used were allocated)
    const i64 = (w: Uint32Array) => new BigInt64Array(w.buffer, 0, n);
    const state = new Array<string>(n);
    for (let r = 0; r < n; r++) state[r] = THREAD_STATE_VALUES[this.oState[r]!]!;
    const columns: TypedColumn[] = TABLE_COLUMNS.threadStates.map((c) => allocColumn(c.type, 0));
    columns[L.TS_THREAD_ID] = this.oTid.subarray(0, n);
    columns[L.TS_PROCESS_ID] = this.oPid.subarray(0, n);
    columns[L.TS_STATE] = state;
    columns[L.TS_START_TIME] = i64(this.oStart);
    columns[L.TS_END_TIME] = i64(this.oEnd);
    columns[L.TS_DURATION] = i64(this.oDur);
    columns[L.TS_CPU] = this.oCpu.subarray(0, n);
    columns[L.TS_READYING_THREAD_ID] = this.oRtid.subarray(0, n);
    columns[L.TS_READYING_PROCESS_ID] = this.oRpid.subarray(0, n);
    columns[L.TS_WAIT_REASON] = this.oWr.subarray(0, n);
    columns[L.TS_WAIT_MODE] = this.oWm.subarray(0, n);
    columns[L.TS_OLD_THREAD_STATE] = this.oOld.subarray(0, n);
    columns[L.TS_PRIORITY] = this.oPri.subarray(0, n);
    columns[L.TS_VALID] = this.oValid.subarray(0, n);
    return new Table('threadStates', { length: n, columns });
  }
}
