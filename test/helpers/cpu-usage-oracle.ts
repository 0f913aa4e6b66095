// The independent oracles of the cpuUsage derivation (src/derive/cpu-usage.ts, README "cpuUsage"):
// - cpuUsageBySorting: the definition computed by the simplest correct method, sorting everything and
//   searching (the whole table, ordered by (cpu, switchInTime, decode order));
// - CpuUsageDeriverOracle: the streaming derivation written with objects and BigInts per event and row, the
//   same rows, chunks and statistics as the typed-array one for any chunking, window and hold.
//
// The streaming one: rows arrive out of time order: each CPU's buffers flush on their own, compact rows
// come one switch late and a batch is logged after the ReadyThread events inside it. But on one CPU, a
// ReadyThread or Thread event of time r is always delivered before any switch of that CPU at or after r.
// So events are held, sorted by time, and released up to the watermark = the least, over the CPUs seen, of
// the latest switch time delivered for that CPU. No more than `windowEvents` events are held between
// chunks: past that the earliest are released anyway, and an event that then arrives behind the released
// time is processed at once and counted as late.
//
// Released events of one timestamp are applied as one group, in this order: Thread events (lifetimes),
// ReadyThread events (readying thread = the last switch-in on their CPU at or before them), then the
// switches (each completes its CPU's previous row and opens its own), then the switch-outs of the group
// are recorded (lastSwitchOutTime is strictly before the switch-in). Process ids come from the lifetimes so
// far (or from a given threads table); a completed row with one still unknown waits, up to `holdRows`,
// and is emitted at finish() with the final lifetimes, after every other row.
import * as L from '../../src/generated/layout.js';
import { allocColumn, TABLE_COLUMNS, type TypedColumn } from '../../src/tables/schema.js';
import { Table } from '../../src/tables/table.js';
import type { CpuUsageOptions, CpuUsageStats } from '../../src/derive/cpu-usage.js';
import { DerivedRows } from './derived-rows.js';

const KIND_THREAD = 0;
const KIND_READY = 1;
const KIND_SWITCH = 2;

interface Ev {
  ts: bigint;
  /** Number(ts): orders like ts where it differs (rounding is monotonic); ties are settled by ts */
  tn: number;
  kind: number;
  cpu: number;
  seq: number;
  // switch: a = newThreadId (NONE = unknown), b = oldThreadId, priorities/state/reason/previousCState (NONE = null)
  // ready: a = threadId; thread event: a = threadId, b = processId, c = opcode
  a: number;
  b: number;
  c: number;
  newPri: number;
  oldPri: number;
  oldState: number;
  oldWr: number;
  cstate: number;
}

/** Event order: (ts, kind, cpu, seq). */
function compareEvents(x: Ev, y: Ev): number {
  if (x.tn !== y.tn) return x.tn < y.tn ? -1 : 1;
  if (x.ts !== y.ts) return x.ts < y.ts ? -1 : 1;
  return x.kind - y.kind || x.cpu - y.cpu || x.seq - y.seq;
}

interface SwitchOut {
  ts: bigint;
  pri: number;
  state: number;
  wr: number;
}
interface Ready {
  ts: bigint;
  readying: number; // -1 = unknown
  readyingPid: number | null;
}
/** A row awaiting its CPU's next switch (-1 / null = a null cell). */
interface OpenRow {
  cpu: number;
  ts: bigint;
  newThreadId: number;
  oldThreadId: number;
  newPid: number | null;
  oldPid: number | null;
  newInPri: number;
  oldOutPri: number;
  oldState: number;
  oldWr: number;
  cstate: number;
  last: SwitchOut | null; // a copy of the switch-out
  readyTs: bigint | null;
  readying: number;
  readyingPid: number | null;
}

/** a null cell among the small values of an event (any real value, negative i8 ones included, differs) */
const NONE = -0x100000;

/** Writes a small (u8/i8) cell unless it is null (NONE); returns its valid bit. */
function small(col: TypedColumn, row: number, value: number, column: number): number {
  if (value === NONE) return 0;
  (col as Uint8Array)[row] = value;
  return 1 << column;
}

export class CpuUsageDeriverOracle {
  /** events held for reordering, sorted (compareEvents) after each add() */
  private held: Ev[] = [];
  /** events of the add() in progress */
  private incoming: Ev[] = [];
  private readonly window: number;
  private readonly chunkRows: number;
  private seq = 0;
  private released: bigint | null = null; // time of the last released group
  private readonly lastSwitchTs = new Map<number, bigint>(); // per cpu: latest switch delivered
  private readonly current = new Map<number, number>(); // per cpu: newThreadId of the last switch (-1 unknown)
  private readonly pending = new Map<number, OpenRow>(); // per cpu: the row awaiting its next switch
  private readonly lastOut = new Map<number, SwitchOut>(); // tid → latest switch-out
  private readonly lastIdleOut = new Map<number, SwitchOut>(); // idle thread (one per cpu): cpu → latest switch-out
  private readonly lastReady = new Map<number, Ready>(); // tid → latest ready
  private readonly lifetimes = new Map<number, { start: bigint | null; pid: number; open: boolean }[]>();
  /** lifetimes from a given threads table: final, no row waits */
  private readonly final: boolean;
  private readonly holdRows: number;
  /** completed rows waiting for a process id until finish() */
  private readonly waiting: { o: OpenRow; next: bigint | null; nextOldPri: number }[] = [];
  private cols: TypedColumn[] = [];
  private n = 0; // rows in `cols`
  private readonly stats: CpuUsageStats = { rows: 0, lateEvents: 0, maxHeld: 0, threads: 0, heldRows: 0, unresolvedRows: 0 };

  constructor(
    private readonly onRows: (rows: Table<'cpuUsage'>) => void,
    options: CpuUsageOptions = {},
  ) {
    this.window = options.windowEvents ?? 1 << 18;
    this.chunkRows = options.chunkRows ?? 1 << 16;
    this.holdRows = options.holdRows ?? 1 << 16;
    this.final = options.threads !== undefined;
    for (const t of options.threads ?? []) {
      const list = this.lifetimes.get(t.threadId) ?? [];
      list.push({ start: t.startTime, pid: t.processId, open: false });
      this.lifetimes.set(t.threadId, list);
    }
    this.newChunk();
  }

  private newChunk(): void {
    this.cols = TABLE_COLUMNS.cpuUsage.map((c) => allocColumn(c.type, this.chunkRows));
    this.n = 0;
  }

  /** Takes the rows of one chunk of the decode (borrowed views are fine: values are copied). */
  add(cswitch: Table<'cswitch'>, readythread: Table<'readythread'>, threadEvents: Table<'threadEvents'>): void {
    const te = threadEvents.columns;
    for (let i = 0; i < (this.final ? 0 : threadEvents.length); i++) {
      this.hold(this.event((te[L.TE_TIMESTAMP] as BigInt64Array)[i]!, KIND_THREAD, (te[L.TE_CPU] as Uint16Array)[i]!,
        (te[L.TE_THREAD_ID] as Uint32Array)[i]!, (te[L.TE_PROCESS_ID] as Uint32Array)[i]!, (te[L.TE_OPCODE] as Uint8Array)[i]!));
    }
    const rt = readythread.columns;
    for (let i = 0; i < readythread.length; i++) {
      this.hold(this.event((rt[L.RT_TIMESTAMP] as BigInt64Array)[i]!, KIND_READY, (rt[L.RT_CPU] as Uint16Array)[i]!, (rt[L.RT_THREAD_ID] as Uint32Array)[i]!, 0, 0));
    }
    const cs = cswitch.columns;
    const ts = cs[L.CS_TIMESTAMP] as BigInt64Array;
    const cpu = cs[L.CS_CPU] as Uint16Array;
    const valid = cs[L.CS_VALID] as Uint32Array;
    const field = (c: number, i: number): number => (((valid[i]! >>> c) & 1) === 0 ? NONE : (cs[c] as Uint8Array | Int8Array | Uint32Array)[i]!);
    for (let i = 0; i < cswitch.length; i++) {
      const e = this.event(ts[i]!, KIND_SWITCH, cpu[i]!, field(L.CS_NEW_THREAD_ID, i), (cs[L.CS_OLD_THREAD_ID] as Uint32Array)[i]!, 0);
      e.newPri = field(L.CS_NEW_THREAD_PRIORITY, i);
      e.oldPri = field(L.CS_OLD_THREAD_PRIORITY, i);
      e.oldState = field(L.CS_OLD_THREAD_STATE, i);
      e.oldWr = field(L.CS_OLD_THREAD_WAIT_REASON, i);
      e.cstate = field(L.CS_PREVIOUS_CSTATE, i);
      const last = this.lastSwitchTs.get(e.cpu);
      if (last === undefined || e.ts > last) this.lastSwitchTs.set(e.cpu, e.ts);
      this.hold(e);
    }
    this.release(false);
  }

  /** End of the trace: releases everything, completes the last row of every CPU and emits the rest. */
  finish(): CpuUsageStats {
    this.release(true);
    for (const open of this.pending.values()) this.closeRow(open, null, NONE);
    this.pending.clear();
    for (const w of this.waiting) {
      const o = w.o;
      o.newPid ??= this.pidAt(o.newThreadId, o.ts);
      o.oldPid ??= this.pidAt(o.oldThreadId, o.ts);
      if (o.readyTs !== null && o.readying >= 0) o.readyingPid ??= this.pidAt(o.readying, o.readyTs);
      this.writeRow(o, w.next, w.nextOldPri);
    }
    this.waiting.length = 0;
    this.flush();
    this.stats.threads = this.lifetimes.size;
    return { ...this.stats };
  }

  private event(ts: bigint, kind: number, cpu: number, a: number, b: number, c: number): Ev {
    return { ts, tn: Number(ts), kind, cpu, seq: this.seq++, a, b, c, newPri: NONE, oldPri: NONE, oldState: NONE, oldWr: NONE, cstate: NONE };
  }

  private hold(e: Ev): void {
    if (this.released !== null && e.ts < this.released) {
      this.stats.lateEvents++;
      this.applyGroup([e], 0, 1);
      return;
    }
    this.incoming.push(e);
  }

  /**
   * Sorts what is held with what came in (each CPU's events arrive in runs, so the merge sort is close to
   * linear) and applies the events up to the watermark — all of them at the end, and never fewer than
   * needed to keep at most `windowEvents` held.
   */
  private release(all: boolean): void {
    let events = this.held;
    if (this.incoming.length) {
      events = events.concat(this.incoming);
      this.incoming = [];
      events.sort(compareEvents);
    }
    let watermark: bigint | null = null;
    for (const t of this.lastSwitchTs.values()) if (watermark === null || t < watermark) watermark = t;
    const mustGo = events.length - this.window; // events beyond the window go whatever the watermark
    let i = 0;
    while (i < events.length) {
      const t = events[i]!.ts;
      if (!all && i >= mustGo && (watermark === null || t > watermark)) break;
      let j = i + 1;
      while (j < events.length && events[j]!.ts === t) j++;
      this.released = t;
      this.applyGroup(events, i, j);
      i = j;
    }
    this.held = i === 0 ? events : events.slice(i);
    if (this.held.length > this.stats.maxHeld) this.stats.maxHeld = this.held.length;
  }

  private pidAt(tid: number, t: bigint): number | null {
    if (tid === 0) return 0;
    const list = this.lifetimes.get(tid);
    if (!list) return null;
    let best: { start: bigint | null; pid: number } | null = null;
    for (const l of list) {
      if (l.start !== null && l.start > t) continue;
      if (best === null || l.start === null ? best === null || best.start === null : best.start === null || l.start >= best.start) best = l;
    }
    return best ? best.pid : null;
  }

  /** Applies the events [from, to) of `events`: one timestamp, sorted by kind, cpu, seq. */
  private applyGroup(events: readonly Ev[], from: number, to: number): void {
    const t = events[from]!.ts;
    for (let k = from; k < to; k++) {
      const e = events[k]!;
      if (e.kind === KIND_THREAD) {
        const list = this.lifetimes.get(e.a) ?? [];
        const open = list.find((l) => l.open);
        if (e.c === L.OPCODE_START || !open) {
          if (open) open.open = false;
          list.push({ start: e.c === L.OPCODE_START ? e.ts : null, pid: e.b, open: e.c !== L.OPCODE_END });
          this.lifetimes.set(e.a, list);
        } else if (e.c === L.OPCODE_END) open.open = false;
      } else if (e.kind === KIND_READY) {
        // the readying thread: the last switch-in on its cpu at or before it (this group's switches count)
        let readying = this.current.get(e.cpu) ?? -1;
        for (let q = to - 1; q > k; q--) {
          const x = events[q]!;
          if (x.kind !== KIND_SWITCH) break;
          if (x.cpu === e.cpu) {
            readying = x.a;
            break;
          }
        }
        this.lastReady.set(e.a, { ts: e.ts, readying, readyingPid: readying < 0 ? null : this.pidAt(readying, e.ts) });
      }
    }
    for (let k = from; k < to; k++) {
      const e = events[k]!;
      if (e.kind !== KIND_SWITCH) continue;
      const prev = this.pending.get(e.cpu);
      if (prev) this.closeRow(prev, t, e.oldPri);
      this.pending.delete(e.cpu);
      this.current.set(e.cpu, e.a);
      if (e.a >= 0) this.pending.set(e.cpu, this.openRow(e));
    }
    for (let k = from; k < to; k++) {
      const e = events[k]!;
      if (e.kind !== KIND_SWITCH) continue;
      const out = { ts: t, pri: e.oldPri, state: e.oldState, wr: e.oldWr };
      if (e.b === 0) this.lastIdleOut.set(e.cpu, out);
      else this.lastOut.set(e.b, out);
    }
  }

  private openRow(e: Ev): OpenRow {
    const t = e.ts;
    const tid = e.a;
    const lastOut = tid === 0 ? this.lastIdleOut.get(e.cpu) : this.lastOut.get(tid);
    const last = lastOut ?? null; // switch-out records are replaced, never changed: no copy needed
    const ready = this.lastReady.get(tid);
    const hasReady = ready !== undefined && (!last || ready.ts > last.ts);
    return {
      cpu: e.cpu,
      ts: t,
      newThreadId: tid,
      oldThreadId: e.b,
      newPid: this.pidAt(tid, t),
      oldPid: this.pidAt(e.b, t),
      newInPri: e.newPri,
      oldOutPri: e.oldPri,
      oldState: e.oldState,
      oldWr: e.oldWr,
      cstate: e.cstate,
      last,
      readyTs: hasReady ? ready.ts : null,
      readying: hasReady ? ready.readying : -1,
      readyingPid: hasReady ? ready.readyingPid : null,
    };
  }

  /** Completes a row with its CPU's next switch (or none at the end): to the output, or to wait for a process id. */
  private closeRow(o: OpenRow, next: bigint | null, nextOldPri: number): void {
    if (!this.final) {
      const readyingKnown = o.readyTs !== null && o.readying >= 0;
      o.newPid ??= this.pidAt(o.newThreadId, o.ts);
      o.oldPid ??= this.pidAt(o.oldThreadId, o.ts);
      if (readyingKnown) o.readyingPid ??= this.pidAt(o.readying, o.readyTs!);
      if (o.newPid === null || o.oldPid === null || (readyingKnown && o.readyingPid === null)) {
        if (this.waiting.length < this.holdRows) {
          this.waiting.push({ o, next, nextOldPri });
          this.stats.heldRows++;
          return;
        }
        this.stats.unresolvedRows++;
      }
    }
    this.writeRow(o, next, nextOldPri);
  }

  private writeRow(o: OpenRow, next: bigint | null, nextOldPri: number): void {
    const r = this.n++;
    const c = this.cols;
    let v = (1 << L.CU_VALID) | (1 << L.CU_CPU) | (1 << L.CU_SWITCH_IN_TIME) | (1 << L.CU_NEW_THREAD_ID) | (1 << L.CU_OLD_THREAD_ID);
    (c[L.CU_CPU] as Uint16Array)[r] = o.cpu;
    (c[L.CU_SWITCH_IN_TIME] as BigInt64Array)[r] = o.ts;
    (c[L.CU_NEW_THREAD_ID] as Uint32Array)[r] = o.newThreadId;
    (c[L.CU_OLD_THREAD_ID] as Uint32Array)[r] = o.oldThreadId;
    if (next !== null) {
      (c[L.CU_NEXT_SWITCH_OUT_TIME] as BigInt64Array)[r] = next;
      (c[L.CU_CPU_USAGE] as BigInt64Array)[r] = next - o.ts;
      v |= (1 << L.CU_NEXT_SWITCH_OUT_TIME) | (1 << L.CU_CPU_USAGE);
      if (nextOldPri !== NONE) {
        (c[L.CU_NEW_OUT_PRI] as Int8Array)[r] = nextOldPri;
        v |= 1 << L.CU_NEW_OUT_PRI;
      }
    }
    if (o.newPid !== null) {
      (c[L.CU_NEW_PROCESS_ID] as Uint32Array)[r] = o.newPid;
      v |= 1 << L.CU_NEW_PROCESS_ID;
    }
    if (o.oldPid !== null) {
      (c[L.CU_OLD_PROCESS_ID] as Uint32Array)[r] = o.oldPid;
      v |= 1 << L.CU_OLD_PROCESS_ID;
    }
    v |= small(c[L.CU_NEW_IN_PRI]!, r, o.newInPri, L.CU_NEW_IN_PRI);
    v |= small(c[L.CU_OLD_OUT_PRI]!, r, o.oldOutPri, L.CU_OLD_OUT_PRI);
    v |= small(c[L.CU_OLD_STATE]!, r, o.oldState, L.CU_OLD_STATE);
    v |= small(c[L.CU_OLD_WAIT_REASON]!, r, o.oldWr, L.CU_OLD_WAIT_REASON);
    v |= small(c[L.CU_PREV_CSTATE]!, r, o.cstate, L.CU_PREV_CSTATE);
    const last = o.last;
    if (last) {
      (c[L.CU_LAST_SWITCH_OUT_TIME] as BigInt64Array)[r] = last.ts;
      v |= 1 << L.CU_LAST_SWITCH_OUT_TIME;
      v |= small(c[L.CU_NEW_PREV_OUT_PRI]!, r, last.pri, L.CU_NEW_PREV_OUT_PRI);
      v |= small(c[L.CU_NEW_PREV_STATE]!, r, last.state, L.CU_NEW_PREV_STATE);
      v |= small(c[L.CU_NEW_PREV_WAIT_REASON]!, r, last.wr, L.CU_NEW_PREV_WAIT_REASON);
    }
    if (o.readyTs !== null) {
      (c[L.CU_READY_TIME] as BigInt64Array)[r] = o.readyTs;
      (c[L.CU_READY] as BigInt64Array)[r] = o.ts - o.readyTs;
      v |= (1 << L.CU_READY_TIME) | (1 << L.CU_READY);
      if (last) {
        (c[L.CU_WAITS] as BigInt64Array)[r] = o.readyTs - last.ts;
        v |= 1 << L.CU_WAITS;
      }
      if (o.readying >= 0) {
        (c[L.CU_READYING_THREAD_ID] as Uint32Array)[r] = o.readying;
        v |= 1 << L.CU_READYING_THREAD_ID;
        if (o.readyingPid !== null) {
          (c[L.CU_READYING_PROCESS_ID] as Uint32Array)[r] = o.readyingPid;
          v |= 1 << L.CU_READYING_PROCESS_ID;
        }
      }
    }
    (c[L.CU_VALID] as Uint32Array)[r] = v >>> 0;
    if (this.n >= this.chunkRows) this.flush();
  }

  private flush(): void {
    const n = this.n;
    if (n === 0) return;
    this.stats.rows += n;
    const columns = this.cols.map((c) => (n === this.chunkRows ? c : c.slice(0, n)) as TypedColumn);
    this.newChunk();
    this.onRows(new Table('cpuUsage', { length: n, columns }));
  }
}

// ---------------------------------------------------------------------------------------------------
// The definition by sorting everything. For each cswitch row with a known newThreadId, ordered by (cpu,
// switchInTime, decode order):
// - next = the next cswitch row on the same cpu (nextSwitchOutTime, newOutPri);
// - a switch-out of N = a cswitch row whose oldThreadId is N; lastSwitchOut = the latest one before
//   switchInTime (any cpu; tid 0, one idle thread per cpu: the same cpu), ties: the last in
//   (timestamp, cpu, decode order);
// - readyTime = the latest readythread row of N with lastSwitchOutTime < t <= switchInTime;
// - readyingThreadId = newThreadId of the latest cswitch row on the ready event's cpu with timestamp <=
//   the ready event's; process ids from the threads lifetimes (latest startTime <= the time, null
//   startTime = -infinity; tid 0 -> 0).

interface Sw {
  i: number; // row in the cswitch table
  ts: bigint;
  cpu: number;
}

/** The last index of `xs` (sorted by key) whose key satisfies `ok` (a prefix property), or -1. */
function lastWhere<T>(xs: readonly T[], ok: (x: T) => boolean): number {
  let lo = 0;
  let hi = xs.length; // ok holds for [0, lo), fails from hi
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (ok(xs[mid]!)) lo = mid + 1;
    else hi = mid;
  }
  return lo - 1;
}

const byTime = (a: Sw, b: Sw): number => (a.ts < b.ts ? -1 : a.ts > b.ts ? 1 : a.cpu - b.cpu || a.i - b.i);

/** Process of `tid` at time `t` from the threads table (lifetimes of a tid by startTime). */
function processResolver(threads: Table<'threads'>): (tid: number, t: bigint) => number | null {
  const byTid = new Map<number, { start: bigint | null; pid: number }[]>();
  for (let i = 0; i < threads.length; i++) {
    const r = threads.get(i);
    const list = byTid.get(r.threadId) ?? [];
    list.push({ start: r.startTime, pid: r.processId });
    byTid.set(r.threadId, list);
  }
  for (const list of byTid.values()) list.sort((a, b) => (a.start === b.start ? 0 : a.start === null ? -1 : b.start === null ? 1 : a.start < b.start ? -1 : 1));
  return (tid, t) => {
    if (tid === 0) return 0;
    const list = byTid.get(tid);
    if (!list) return null;
    const k = lastWhere(list, (x) => x.start === null || x.start <= t);
    return k < 0 ? null : list[k]!.pid;
  };
}

export function cpuUsageBySorting(cswitch: Table<'cswitch'>, readythread: Table<'readythread'>, threads: Table<'threads'>): Table<'cpuUsage'> {
  const cs = cswitch.columns;
  const ts = cs[L.CS_TIMESTAMP] as BigInt64Array;
  const cpuCol = cs[L.CS_CPU] as Uint16Array;
  const newTid = cs[L.CS_NEW_THREAD_ID] as Uint32Array;
  const oldTid = cs[L.CS_OLD_THREAD_ID] as Uint32Array;
  const all: Sw[] = Array.from({ length: cswitch.length }, (_, i) => ({ i, ts: ts[i]!, cpu: cpuCol[i]! }));
  // per cpu in time order (decode order within equal times)
  const perCpu = new Map<number, Sw[]>();
  for (const s of all) (perCpu.get(s.cpu) ?? perCpu.set(s.cpu, []).get(s.cpu)!).push(s);
  for (const list of perCpu.values()) list.sort((a, b) => (a.ts < b.ts ? -1 : a.ts > b.ts ? 1 : a.i - b.i));
  // switch-outs by thread (idle: by cpu), in (time, cpu, decode order)
  const outs = new Map<string, Sw[]>();
  for (const s of [...all].sort(byTime)) {
    const key = oldTid[s.i] === 0 ? `0/${s.cpu}` : String(oldTid[s.i]);
    (outs.get(key) ?? outs.set(key, []).get(key)!).push(s);
  }
  // ready events by thread, in time order
  const rts = readythread.columns[L.RT_TIMESTAMP] as BigInt64Array;
  const readies = new Map<number, number[]>();
  const readyOrder = Array.from({ length: readythread.length }, (_, i) => i).sort((a, b) => (rts[a]! < rts[b]! ? -1 : rts[a]! > rts[b]! ? 1 : a - b));
  for (const k of readyOrder) {
    const tid = (readythread.columns[L.RT_THREAD_ID] as Uint32Array)[k]!;
    (readies.get(tid) ?? readies.set(tid, []).get(tid)!).push(k);
  }
  const pidOf = processResolver(threads);
  const out = new DerivedRows('cpuUsage');
  const cpus = [...perCpu.keys()].sort((a, b) => a - b);
  for (const cpu of cpus) {
    const list = perCpu.get(cpu)!;
    list.forEach((s, k) => {
      if (cswitch.isNull(L.CS_NEW_THREAD_ID, s.i)) return;
      const t = s.ts;
      const tid = newTid[s.i]!;
      const r = out.add();
      const row = cswitch.get(s.i);
      out.set(r, L.CU_CPU, cpu);
      out.set(r, L.CU_SWITCH_IN_TIME, t);
      out.set(r, L.CU_NEW_THREAD_ID, tid);
      out.set(r, L.CU_OLD_THREAD_ID, oldTid[s.i]);
      out.maybe(r, L.CU_NEW_PROCESS_ID, pidOf(tid, t));
      out.maybe(r, L.CU_OLD_PROCESS_ID, pidOf(oldTid[s.i]!, t));
      out.maybe(r, L.CU_NEW_IN_PRI, row.newThreadPriority);
      out.maybe(r, L.CU_OLD_OUT_PRI, row.oldThreadPriority);
      out.maybe(r, L.CU_OLD_STATE, row.oldThreadState);
      out.maybe(r, L.CU_OLD_WAIT_REASON, row.oldThreadWaitReason);
      out.maybe(r, L.CU_PREV_CSTATE, row.previousCState);
      const next = list[k + 1];
      if (next) {
        out.set(r, L.CU_NEXT_SWITCH_OUT_TIME, next.ts);
        out.maybe(r, L.CU_NEW_OUT_PRI, cswitch.get(next.i).oldThreadPriority);
        out.set(r, L.CU_CPU_USAGE, next.ts - t);
      }
      const myOuts = outs.get(tid === 0 ? `0/${cpu}` : String(tid)) ?? [];
      const o = lastWhere(myOuts, (x) => x.ts < t);
      const last = o >= 0 ? myOuts[o]! : null;
      if (last) {
        const lr = cswitch.get(last.i);
        out.set(r, L.CU_LAST_SWITCH_OUT_TIME, last.ts);
        out.maybe(r, L.CU_NEW_PREV_OUT_PRI, lr.oldThreadPriority);
        out.maybe(r, L.CU_NEW_PREV_STATE, lr.oldThreadState);
        out.maybe(r, L.CU_NEW_PREV_WAIT_REASON, lr.oldThreadWaitReason);
      }
      const myReadies = readies.get(tid) ?? [];
      const q = lastWhere(myReadies, (x) => rts[x]! <= t);
      if (q >= 0 && (last === null || rts[myReadies[q]!]! > last.ts)) {
        const ready = myReadies[q]!;
        const rt = rts[ready]!;
        out.set(r, L.CU_READY_TIME, rt);
        out.set(r, L.CU_READY, t - rt);
        if (last) out.set(r, L.CU_WAITS, rt - last.ts);
        const onCpu = perCpu.get((readythread.columns[L.RT_CPU] as Uint16Array)[ready]!) ?? [];
        const w = lastWhere(onCpu, (x) => x.ts <= rt);
        if (w >= 0 && !cswitch.isNull(L.CS_NEW_THREAD_ID, onCpu[w]!.i)) {
          const readying = newTid[onCpu[w]!.i]!;
          out.set(r, L.CU_READYING_THREAD_ID, readying);
          out.maybe(r, L.CU_READYING_PROCESS_ID, pidOf(readying, rt));
        }
      }
    });
  }
  return out.take();
}
