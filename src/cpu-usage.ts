// The `cpuUsage` table (WPA's CPU Usage (Precise)) derived while a trace streams by, with memory bounded
// by threads, CPUs and a reorder window — never by the file size. Definitions: README "cpuUsage";
// src/reference/cpu-usage.ts computes the same table by sorting everything (the test oracle).
//
// Rows arrive out of time order: each CPU's buffers flush on their own, compact rows come one switch late
// and a batch is logged after the ReadyThread events inside it. But on one CPU, a ReadyThread or Thread
// event of time r is always delivered before any switch of that CPU at or after r (both are logged in the
// CPU's own buffers, switches no earlier than their time). So events are held in a min-heap by time and
// released up to the watermark = the least, over the CPUs seen, of the latest switch time delivered for
// that CPU: everything at or before it has arrived. A CPU that falls silent would hold the watermark back,
// so the heap never holds more than `windowEvents` events: past that the earliest are released anyway, and
// an event that then arrives behind the released time is processed at once and counted as late.
//
// Released events of one timestamp are applied as one group, in this order: Thread events (lifetimes),
// ReadyThread events (readying thread = the last switch-in on their CPU at or before them), then the
// switches (each completes its CPU's previous row and opens its own), then the switch-outs of the group
// are recorded (lastSwitchOutTime is strictly before the switch-in).
import * as L from './generated/layout.js';
import { DerivedRows } from './derived-rows.js';
import type { Table } from './table.js';

export interface CpuUsageOptions {
  /** most events held for reordering (default 262 144: about 30 MiB) */
  windowEvents?: number;
  /** rows per emitted chunk (default 65 536) */
  chunkRows?: number;
}

export interface CpuUsageStats {
  /** rows emitted */
  rows: number;
  /** events that arrived behind the released time (processed at once; see the file comment) */
  lateEvents: number;
  /** most events held at once */
  maxHeld: number;
  /** thread ids with lifetimes kept for process lookups */
  threads: number;
}

const KIND_THREAD = 0;
const KIND_READY = 1;
const KIND_SWITCH = 2;

interface Ev {
  ts: bigint;
  kind: number;
  cpu: number;
  seq: number;
  // switch: newThreadId (-1 = unknown), oldThreadId, priorities/state/reason (-1 = null), previousCState
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

function before(x: Ev, y: Ev): boolean {
  return x.ts < y.ts || (x.ts === y.ts && (x.kind < y.kind || (x.kind === y.kind && (x.cpu < y.cpu || (x.cpu === y.cpu && x.seq < y.seq)))));
}

/** A binary min-heap of events by (ts, kind, cpu, seq). */
class EventHeap {
  private readonly items: Ev[] = [];
  get size(): number {
    return this.items.length;
  }
  peek(): Ev | undefined {
    return this.items[0];
  }
  push(e: Ev): void {
    const h = this.items;
    h.push(e);
    let i = h.length - 1;
    while (i > 0) {
      const p = (i - 1) >> 1;
      if (!before(h[i]!, h[p]!)) break;
      [h[i], h[p]] = [h[p]!, h[i]!];
      i = p;
    }
  }
  pop(): Ev | undefined {
    const h = this.items;
    const top = h[0];
    const last = h.pop();
    if (h.length && last) {
      h[0] = last;
      let i = 0;
      for (;;) {
        const l = 2 * i + 1;
        const r = l + 1;
        let m = i;
        if (l < h.length && before(h[l]!, h[m]!)) m = l;
        if (r < h.length && before(h[r]!, h[m]!)) m = r;
        if (m === i) break;
        [h[i], h[m]] = [h[m]!, h[i]!];
        i = m;
      }
    }
    return top;
  }
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
/** A row awaiting its CPU's next switch: cells by column id (undefined = null). */
interface OpenRow {
  ts: bigint;
  cells: unknown[];
}

const opt = (v: number): number | null => (v < 0 ? null : v);

export class CpuUsageDeriver {
  private readonly heap = new EventHeap();
  private readonly window: number;
  private readonly chunkRows: number;
  private seq = 0;
  private released: bigint | null = null; // time of the last released group
  private readonly lastSwitchTs = new Map<number, bigint>(); // per cpu: latest switch delivered
  private readonly current = new Map<number, number>(); // per cpu: newThreadId of the last switch (-1 unknown)
  private readonly pending = new Map<number, OpenRow>(); // per cpu: the row awaiting its next switch
  private readonly lastOut = new Map<string, SwitchOut>(); // tid (idle: 0/cpu) → latest switch-out
  private readonly lastReady = new Map<number, Ready>(); // tid → latest ready
  private readonly lifetimes = new Map<number, { start: bigint | null; pid: number; open: boolean }[]>();
  private rows = new DerivedRows('cpuUsage');
  private readonly stats: CpuUsageStats = { rows: 0, lateEvents: 0, maxHeld: 0, threads: 0 };

  constructor(
    private readonly onRows: (rows: Table<'cpuUsage'>) => void,
    options: CpuUsageOptions = {},
  ) {
    this.window = options.windowEvents ?? 1 << 18;
    this.chunkRows = options.chunkRows ?? 1 << 16;
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
    const field = (c: number, i: number): number => (((valid[i]! >>> c) & 1) === 0 ? -1 : (cs[c] as Uint8Array | Int8Array | Uint32Array)[i]!);
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
    for (const open of this.pending.values()) this.closeRow(open, null, -1);
    this.pending.clear();
    this.flush();
    this.stats.threads = this.lifetimes.size;
    return { ...this.stats };
  }

  private event(ts: bigint, kind: number, cpu: number, a: number, b: number, c: number): Ev {
    return { ts, kind, cpu, seq: this.seq++, a, b, c, newPri: -1, oldPri: -1, oldState: -1, oldWr: -1, cstate: -1 };
  }

  private hold(e: Ev): void {
    if (this.released !== null && e.ts < this.released) {
      this.stats.lateEvents++;
      this.applyGroup([e]);
      return;
    }
    this.heap.push(e);
    if (this.heap.size > this.stats.maxHeld) this.stats.maxHeld = this.heap.size;
    if (this.heap.size > this.window) this.release(false);
  }

  private release(all: boolean): void {
    let watermark: bigint | null = null;
    for (const t of this.lastSwitchTs.values()) if (watermark === null || t < watermark) watermark = t;
    for (;;) {
      const top = this.heap.peek();
      if (!top) break;
      if (!all && this.heap.size <= this.window && (watermark === null || top.ts > watermark)) break;
      const group: Ev[] = [];
      const t = top.ts;
      while (this.heap.peek()?.ts === t) group.push(this.heap.pop()!);
      this.released = t;
      this.applyGroup(group);
    }
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

  /** Applies the events of one timestamp (group sorted by kind, cpu, seq). */
  private applyGroup(group: Ev[]): void {
    const t = group[0]!.ts;
    const lastInGroup = new Map<number, number>(); // cpu → newThreadId of its last switch in the group
    for (const e of group) if (e.kind === KIND_SWITCH) lastInGroup.set(e.cpu, e.a);
    for (const e of group) {
      if (e.kind === KIND_THREAD) {
        const list = this.lifetimes.get(e.a) ?? [];
        const open = list.find((l) => l.open);
        if (e.c === L.OPCODE_START || !open) {
          if (open) open.open = false;
          list.push({ start: e.c === L.OPCODE_START ? e.ts : null, pid: e.b, open: e.c !== L.OPCODE_END });
          this.lifetimes.set(e.a, list);
        } else if (e.c === L.OPCODE_END) open.open = false;
      } else if (e.kind === KIND_READY) {
        const readying = lastInGroup.get(e.cpu) ?? this.current.get(e.cpu) ?? -1;
        this.lastReady.set(e.a, { ts: e.ts, readying, readyingPid: readying < 0 ? null : this.pidAt(readying, e.ts) });
      }
    }
    for (const e of group) {
      if (e.kind !== KIND_SWITCH) continue;
      const prev = this.pending.get(e.cpu);
      if (prev) this.closeRow(prev, t, e.oldPri);
      this.pending.delete(e.cpu);
      this.current.set(e.cpu, e.a);
      if (e.a >= 0) this.pending.set(e.cpu, this.openRow(e));
    }
    for (const e of group) {
      if (e.kind === KIND_SWITCH) this.lastOut.set(e.b === 0 ? `0/${e.cpu}` : String(e.b), { ts: t, pri: e.oldPri, state: e.oldState, wr: e.oldWr });
    }
  }

  private openRow(e: Ev): OpenRow {
    const cells = new Array<unknown>(L.CU_COLUMN_COUNT);
    const t = e.ts;
    const tid = e.a;
    cells[L.CU_CPU] = e.cpu;
    cells[L.CU_SWITCH_IN_TIME] = t;
    cells[L.CU_NEW_THREAD_ID] = tid;
    cells[L.CU_OLD_THREAD_ID] = e.b;
    cells[L.CU_NEW_PROCESS_ID] = this.pidAt(tid, t);
    cells[L.CU_OLD_PROCESS_ID] = this.pidAt(e.b, t);
    cells[L.CU_NEW_IN_PRI] = opt(e.newPri);
    cells[L.CU_OLD_OUT_PRI] = opt(e.oldPri);
    cells[L.CU_OLD_STATE] = opt(e.oldState);
    cells[L.CU_OLD_WAIT_REASON] = opt(e.oldWr);
    cells[L.CU_PREV_CSTATE] = opt(e.cstate);
    const last = this.lastOut.get(tid === 0 ? `0/${e.cpu}` : String(tid));
    if (last) {
      cells[L.CU_LAST_SWITCH_OUT_TIME] = last.ts;
      cells[L.CU_NEW_PREV_OUT_PRI] = opt(last.pri);
      cells[L.CU_NEW_PREV_STATE] = opt(last.state);
      cells[L.CU_NEW_PREV_WAIT_REASON] = opt(last.wr);
    }
    const ready = this.lastReady.get(tid);
    if (ready && (!last || ready.ts > last.ts)) {
      cells[L.CU_READY_TIME] = ready.ts;
      cells[L.CU_READY] = t - ready.ts;
      if (last) cells[L.CU_WAITS] = ready.ts - last.ts;
      if (ready.readying >= 0) {
        cells[L.CU_READYING_THREAD_ID] = ready.readying;
        cells[L.CU_READYING_PROCESS_ID] = ready.readyingPid;
      }
    }
    return { ts: t, cells };
  }

  /** Completes a row with its CPU's next switch (or none at the end) and adds it to the output. */
  private closeRow(open: OpenRow, next: bigint | null, nextOldPri: number): void {
    const cells = open.cells;
    if (next !== null) {
      cells[L.CU_NEXT_SWITCH_OUT_TIME] = next;
      cells[L.CU_NEW_OUT_PRI] = opt(nextOldPri);
      cells[L.CU_CPU_USAGE] = next - open.ts;
    }
    const out = this.rows;
    const r = out.add();
    for (let c = 0; c < L.CU_VALID; c++) out.maybe(r, c, cells[c]);
    if (out.length >= this.chunkRows) this.flush();
  }

  private flush(): void {
    if (this.rows.length === 0) return;
    this.stats.rows += this.rows.length;
    this.onRows(this.rows.take());
  }
}
