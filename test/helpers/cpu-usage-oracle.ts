// The former streaming cpuUsage derivation (objects and BigInts per event), kept as the oracle of the
// typed-array one in src/derive/cpu-usage.ts: the same rows and the same statistics for any chunking and window.

// The `cpuUsage` table (WPA's CPU Usage (Precise)) derived while a trace streams by, with memory bounded
// by threads, CPUs and a reorder window — never by the file size. Definitions: README "cpuUsage";
// src/derive/cpu-usage-reference.ts computes the same table by sorting everything (the test oracle).
//
// Rows arrive out of time order: each CPU's buffers flush on their own, compact rows come one switch late
// and a batch is logged after the ReadyThread events inside it. But on one CPU, a ReadyThread or Thread
// event of time r is always delivered before any switch of that CPU at or after r (both are logged in the
// CPU's own buffers, switches no earlier than their time). So events are held, sorted by time, and
// released up to the watermark = the least, over the CPUs seen, of the latest switch time delivered for
// that CPU: everything at or before it has arrived. A CPU that falls silent would hold the watermark back,
// so no more than `windowEvents` events are held between chunks: past that the earliest are released anyway, and
// an event that then arrives behind the released time is processed at once and counted as late.
//
// Released events of one timestamp are applied as one group, in this order: Thread events (lifetimes),
// ReadyThread events (readying thread = the last switch-in on their CPU at or before them), then the
// switches (each completes its CPU's previous row and opens its own), then the switch-outs of the group
// are recorded (lastSwitchOutTime is strictly before the switch-in).
import * as L from '../../src/generated/layout.js';
import { allocColumn, TABLE_COLUMNS, type TypedColumn } from '../../src/tables/schema.js';
import { Table } from '../../src/tables/table.js';
import type { CpuUsageOptions, CpuUsageStats } from '../../src/derive/cpu-usage.js';

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
  private cols: TypedColumn[] = [];
  private n = 0; // rows in `cols`
  private readonly stats: CpuUsageStats = { rows: 0, lateEvents: 0, maxHeld: 0, threads: 0 };

  constructor(
    private readonly onRows: (rows: Table<'cpuUsage'>) => void,
    options: CpuUsageOptions = {},
  ) {
    this.window = options.windowEvents ?? 1 << 18;
    this.chunkRows = options.chunkRows ?? 1 << 16;
    this.newChunk();
  }

  private newChunk(): void {
    this.cols = TABLE_COLUMNS.cpuUsage.map((c) => allocColumn(c.type, this.chunkRows));
    this.n = 0;
  }

  /** Takes the rows of one chunk of the decode (borrowed views are fine: values are copied). */
  add(cswitch: Table<'cswitch'>, readythread: Table<'readythread'>, threadEvents: Table<'threadEvents'>): void {
    const te = threadEvents.columns;
    for (let i = 0; i < threadEvents.length; i++) {
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

  /** Completes a row with its CPU's next switch (or none at the end) and adds it to the output. */
  private closeRow(o: OpenRow, next: bigint | null, nextOldPri: number): void {
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
