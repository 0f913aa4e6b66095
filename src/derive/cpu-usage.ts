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
// an event that then arrives behind the released time is processed at once and counted as late.
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
// Costs: nothing is allocated per event or row. Events live in typed-array slots (a free list recycles
// them) and are ordered by index; a tick value is two 32-bit halves (hi signed, lo unsigned), compared and
// subtracted as such (exact, no BigInt); the state of a CPU (its open row) and of a thread (its latest
// switch-out and ready) are typed-array slots too, and so are the held rows. Event order is (time, kind,
// cpu, arrival): a stable natural merge sort of what came in (runs: each buffer's events), merged with
// what is held.
import * as L from '../generated/layout.js';
import { allocColumn, TABLE_COLUMNS, type TypedColumn } from '../tables/schema.js';
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
  /** rows held back until finish() for a process id no Thread event applied before them gave (then resolved) */
  heldRows: number;
  /** rows emitted before finish() with a process id still unknown, `holdRows` rows being held already: their process ids may be missing */
  unresolvedRows: number;
}

const KIND_THREAD = 0;
const KIND_READY = 1;
const KIND_SWITCH = 2;

/** a null cell among the small values of an event (any real value, negative i8 ones included, differs) */
const NONE = -0x100000;
/** a null thread or process id (real ones are u32) */
const NO_ID = -1;

/** (aHi, aLo) < (bHi, bLo) as signed 64-bit values */
function lt(aHi: number, aLo: number, bHi: number, bLo: number): boolean {
  return aHi < bHi || (aHi === bHi && aLo < bLo);
}

function growU32(a: Uint32Array, n: number) {
  const b = new Uint32Array(n);
  b.set(a);
  return b;
}

/**
 * Grows every typed-array field of a state object (its slots) to `cap` elements, keeping the values; new
 * elements are 0. One place, so that no field added later can be forgotten.
 */
function growSlots(state: object, cap: number): void {
  const fields = state as Record<string, unknown>;
  for (const key of Object.keys(fields)) {
    const a = fields[key];
    if (!ArrayBuffer.isView(a) || a instanceof DataView) continue;
    const Ctor = a.constructor as new (n: number) => Uint8Array;
    const grown = new Ctor(cap);
    grown.set(a as Uint8Array);
    fields[key] = grown;
  }
}

/** Event slots: one event per index, recycled through a free list once applied. */
class Events {
  cap = 0;
  hi = new Int32Array(0);
  lo = new Uint32Array(0);
  /** kind << 16 | cpu: the order's second key */
  kc = new Int32Array(0);
  /** switch: newThreadId (NONE: unknown); ready, thread event: threadId */
  a = new Float64Array(0);
  /** switch: oldThreadId; thread event: processId */
  b = new Float64Array(0);
  /** thread slot (Threads) of `a` (-1: unknown) */
  sa = new Int32Array(0);
  /** switch: the slot of the old thread's switch-outs (the idle thread: its CPU's) */
  sb = new Int32Array(0);
  /** thread event: opcode; switch: newThreadPriority (NONE: null) */
  c = new Int32Array(0);
  oldPri = new Int32Array(0);
  oldState = new Int32Array(0);
  oldWr = new Int32Array(0);
  cstate = new Int32Array(0);
  private free = new Uint32Array(0);
  private nFree = 0;

  alloc(): number {
    if (this.nFree === 0) this.grow();
    return this.free[--this.nFree]!;
  }
  release(e: number): void {
    this.free[this.nFree++] = e;
  }
  private grow(): void {
    const old = this.cap;
    const cap = Math.max(1024, old * 2);
    growSlots(this, cap);
    for (let e = cap - 1; e >= old; e--) this.free[this.nFree++] = e;
    this.cap = cap;
  }

  /** x before y in (time, kind, cpu) — arrival breaks ties, by the stability of the sorts */
  before(x: number, y: number): boolean {
    const hx = this.hi[x]!;
    const hy = this.hi[y]!;
    if (hx !== hy) return hx < hy;
    const lx = this.lo[x]!;
    const ly = this.lo[y]!;
    if (lx !== ly) return lx < ly;
    return this.kc[x]! < this.kc[y]!;
  }
}

/** A growable list of event indices. */
class IndexList {
  items = new Uint32Array(1024);
  length = 0;
  push(e: number): void {
    if (this.length === this.items.length) this.items = growU32(this.items, this.items.length * 2);
    this.items[this.length++] = e;
  }
  reserve(n: number): void {
    if (n > this.items.length) this.items = growU32(this.items, Math.max(n, this.items.length * 2));
  }
}

/**
 * Sorts list[0, n) by ev.before, stably: natural merge sort (ascending runs found, then merged pairwise
 * through `tmp`); close to linear on input made of a few long runs. Returns the array holding the result.
 */
function sortStable(ev: Events, list: Uint32Array, tmp: Uint32Array, n: number, runs: IndexList): Uint32Array {
  runs.length = 0;
  runs.push(0);
  for (let i = 1; i < n; i++) if (ev.before(list[i]!, list[i - 1]!)) runs.push(i);
  runs.push(n);
  let src = list;
  let dst = tmp;
  while (runs.length > 2) {
    const bounds = runs.items;
    let w = 1; // runs after this pass: bounds[0..w]
    let r = 0;
    for (; r + 2 < runs.length; r += 2) {
      const a = bounds[r]!;
      const m = bounds[r + 1]!;
      const b = bounds[r + 2]!;
      let i = a;
      let j = m;
      let k = a;
      while (i < m && j < b) dst[k++] = ev.before(src[j]!, src[i]!) ? src[j++]! : src[i++]!;
      while (i < m) dst[k++] = src[i++]!;
      while (j < b) dst[k++] = src[j++]!;
      bounds[w++] = b;
    }
    if (r + 1 < runs.length) {
      // an odd run left: copied as it is
      const a = bounds[r]!;
      const b = bounds[r + 1]!;
      for (let k = a; k < b; k++) dst[k] = src[k]!;
      bounds[w++] = b;
    }
    runs.length = w;
    const t = src;
    src = dst;
    dst = t;
  }
  return src;
}

/** Thread ids (u32) to slot numbers: open addressing, linear probing, at most half full. */
class TidIndex {
  private keys = new Uint32Array(1024);
  /** slot + 1 (0: empty) */
  private vals = new Int32Array(1024);
  /** 32 - log2(capacity): the hash is the top bits of a Fibonacci product */
  private shift = 22;
  private n = 0;

  /** The slot of `tid`, or -1. */
  find(tid: number): number {
    const mask = this.keys.length - 1;
    for (let h = Math.imul(tid, 0x9e3779b1) >>> this.shift; ; h = (h + 1) & mask) {
      const v = this.vals[h]!;
      if (v === 0) return -1;
      if (this.keys[h] === tid) return v - 1;
    }
  }
  /** Records tid → slot (tid not present). */
  insert(tid: number, slot: number): void {
    if (2 * (this.n + 1) > this.keys.length) this.rehash(this.keys.length * 2);
    this.place(tid, slot + 1);
    this.n++;
  }
  private place(tid: number, v: number): void {
    const mask = this.keys.length - 1;
    let h = Math.imul(tid, 0x9e3779b1) >>> this.shift;
    while (this.vals[h] !== 0) h = (h + 1) & mask;
    this.keys[h] = tid;
    this.vals[h] = v;
  }
  private rehash(cap: number): void {
    const keys = this.keys;
    const vals = this.vals;
    this.keys = new Uint32Array(cap);
    this.vals = new Int32Array(cap);
    this.shift = 32 - Math.log2(cap);
    for (let h = 0; h < keys.length; h++) if (vals[h] !== 0) this.place(keys[h]!, vals[h]!);
  }
}

/**
 * Per-thread state in slots: the latest switch-out, the latest ready and the lifetimes (Thread events;
 * process ids). A thread id has one slot (TidIndex); the idle thread (tid 0) is one per CPU: its
 * switch-outs are kept in a slot of its CPU's (Cpus.idleSlot), its readies and lifetimes in the slot of
 * tid 0. Slots are never freed: their number is that of the threads seen.
 */
class Threads {
  readonly index = new TidIndex();
  cap = 0;
  n = 0;
  /** 1: the idle thread's slot (tid 0, or a CPU's stand-in): its process is 0 */
  idle = new Uint8Array(0);
  hasOut = new Uint8Array(0);
  outHi = new Int32Array(0);
  outLo = new Uint32Array(0);
  outPri = new Int32Array(0);
  outState = new Int32Array(0);
  outWr = new Int32Array(0);
  hasReady = new Uint8Array(0);
  readyHi = new Int32Array(0);
  readyLo = new Uint32Array(0);
  /** the readying thread (NO_ID or NONE: unknown), its slot (-1: unknown) and its process (NO_ID: null) */
  readying = new Float64Array(0);
  readyingSlot = new Int32Array(0);
  readyingPid = new Float64Array(0);
  /** the thread's lifetimes, a list in Lifetimes: first and last (index + 1; 0: none) */
  lifeHead = new Int32Array(0);
  lifeTail = new Int32Array(0);

  /** The slot of `tid` (made if new). */
  slot(tid: number): number {
    const s = this.index.find(tid);
    if (s >= 0) return s;
    const made = this.make(tid === 0);
    this.index.insert(tid, made);
    return made;
  }
  /** A new slot (not indexed: the idle thread's stand-in on a CPU). */
  make(idle: boolean): number {
    if (this.n === this.cap) this.grow();
    const s = this.n++;
    this.idle[s] = idle ? 1 : 0;
    return s;
  }
  private grow(): void {
    const cap = Math.max(256, this.cap * 2);
    growSlots(this, cap);
    this.cap = cap;
  }
}

/**
 * Thread lifetimes (Thread events, or the rows of a given `threads` table): process id from the start
 * (no start: from the beginning); each thread's in a list, oldest first (next: index + 1; 0: the last).
 */
class Lifetimes {
  cap = 0;
  n = 0;
  hasStart = new Uint8Array(0);
  startHi = new Int32Array(0);
  startLo = new Uint32Array(0);
  pid = new Float64Array(0);
  open = new Uint8Array(0);
  next = new Int32Array(0);

  /** Adds a lifetime at the end of the list of thread slot s. */
  push(th: Threads, s: number, hasStart: boolean, startHi: number, startLo: number, pid: number, open: boolean): void {
    if (this.n === this.cap) {
      this.cap = Math.max(256, this.cap * 2);
      growSlots(this, this.cap);
    }
    const l = this.n++;
    this.hasStart[l] = hasStart ? 1 : 0;
    this.startHi[l] = startHi;
    this.startLo[l] = startLo;
    this.pid[l] = pid;
    this.open[l] = open ? 1 : 0;
    this.next[l] = 0;
    const tail = th.lifeTail[s]!;
    if (tail === 0) th.lifeHead[s] = l + 1;
    else this.next[tail - 1] = l + 1;
    th.lifeTail[s] = l + 1;
  }
}

/** Per-CPU state: latest switch delivered, current thread, the open row. */
class Cpus {
  cap = 0;
  /** CPUs with a switch delivered (their latest switch time sets the watermark) */
  readonly seen: number[] = [];
  hasSwitch = new Uint8Array(0);
  switchHi = new Int32Array(0);
  switchLo = new Uint32Array(0);
  /** the idle thread's switch-outs on this CPU: its thread slot + 1 (0: none yet) */
  idleSlot = new Int32Array(0);
  /** newThreadId of the last switch applied (-1: none yet; NONE: unknown) and its slot (-1: none) */
  current = new Float64Array(0);
  currentSlot = new Int32Array(0);
  // the open row: a switch-in awaiting the CPU's next switch
  open = new Uint8Array(0);
  openSeq = new Float64Array(0);
  tsHi = new Int32Array(0);
  tsLo = new Uint32Array(0);
  newThreadId = new Float64Array(0);
  oldThreadId = new Float64Array(0);
  /** thread slots of the new and old threads (process ids resolved later) */
  newSlot = new Int32Array(0);
  oldSlot = new Int32Array(0);
  newPid = new Float64Array(0);
  oldPid = new Float64Array(0);
  newInPri = new Int32Array(0);
  oldOutPri = new Int32Array(0);
  oldState = new Int32Array(0);
  oldWr = new Int32Array(0);
  cstate = new Int32Array(0);
  hasLast = new Uint8Array(0);
  lastHi = new Int32Array(0);
  lastLo = new Uint32Array(0);
  lastPri = new Int32Array(0);
  lastState = new Int32Array(0);
  lastWr = new Int32Array(0);
  hasReady = new Uint8Array(0);
  readyHi = new Int32Array(0);
  readyLo = new Uint32Array(0);
  readying = new Float64Array(0);
  readyingSlot = new Int32Array(0);
  readyingPid = new Float64Array(0);

  ensure(cpu: number): void {
    if (cpu < this.cap) return;
    let cap = Math.max(8, this.cap);
    while (cap <= cpu) cap *= 2;
    const old = this.cap;
    growSlots(this, cap);
    this.current.fill(-1, old); // no switch yet
    this.currentSlot.fill(-1, old);
    this.cap = cap;
  }
}

/** The output chunk: its columns, with 32-bit views of the 64-bit ones and byte views of the small ones. */
class OutChunk {
  readonly columns: TypedColumn[];
  readonly rows: number;
  readonly cpu: Uint16Array;
  readonly newThreadId: Uint32Array;
  readonly oldThreadId: Uint32Array;
  readonly newProcessId: Uint32Array;
  readonly oldProcessId: Uint32Array;
  readonly readyingThreadId: Uint32Array;
  readonly readyingProcessId: Uint32Array;
  readonly valid: Uint32Array;
  /** 64-bit columns as (lo, hi) word pairs */
  readonly switchInTime: Uint32Array;
  readonly nextSwitchOutTime: Uint32Array;
  readonly lastSwitchOutTime: Uint32Array;
  readonly readyTime: Uint32Array;
  readonly cpuUsage: Uint32Array;
  readonly ready: Uint32Array;
  readonly waits: Uint32Array;
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

  constructor(rows: number) {
    this.rows = rows;
    const c = (this.columns = TABLE_COLUMNS.cpuUsage.map((spec) => allocColumn(spec.type, rows)));
    const words = (i: number) => {
      const col = c[i] as BigInt64Array;
      return new Uint32Array(col.buffer, col.byteOffset, col.length * 2);
    };
    const bytes = (i: number) => {
      const col = c[i] as Uint8Array | Int8Array;
      return new Uint8Array(col.buffer, col.byteOffset, col.length);
    };
    this.cpu = c[L.CU_CPU] as Uint16Array;
    this.newThreadId = c[L.CU_NEW_THREAD_ID] as Uint32Array;
    this.oldThreadId = c[L.CU_OLD_THREAD_ID] as Uint32Array;
    this.newProcessId = c[L.CU_NEW_PROCESS_ID] as Uint32Array;
    this.oldProcessId = c[L.CU_OLD_PROCESS_ID] as Uint32Array;
    this.readyingThreadId = c[L.CU_READYING_THREAD_ID] as Uint32Array;
    this.readyingProcessId = c[L.CU_READYING_PROCESS_ID] as Uint32Array;
    this.valid = c[L.CU_VALID] as Uint32Array;
    this.switchInTime = words(L.CU_SWITCH_IN_TIME);
    this.nextSwitchOutTime = words(L.CU_NEXT_SWITCH_OUT_TIME);
    this.lastSwitchOutTime = words(L.CU_LAST_SWITCH_OUT_TIME);
    this.readyTime = words(L.CU_READY_TIME);
    this.cpuUsage = words(L.CU_CPU_USAGE);
    this.ready = words(L.CU_READY);
    this.waits = words(L.CU_WAITS);
    this.newInPri = bytes(L.CU_NEW_IN_PRI);
    this.newOutPri = bytes(L.CU_NEW_OUT_PRI);
    this.newPrevOutPri = bytes(L.CU_NEW_PREV_OUT_PRI);
    this.newPrevState = bytes(L.CU_NEW_PREV_STATE);
    this.newPrevWaitReason = bytes(L.CU_NEW_PREV_WAIT_REASON);
    this.oldOutPri = bytes(L.CU_OLD_OUT_PRI);
    this.oldState = bytes(L.CU_OLD_STATE);
    this.oldWaitReason = bytes(L.CU_OLD_WAIT_REASON);
    this.prevCState = bytes(L.CU_PREV_CSTATE);
  }
}

/** Writes (hi, lo) at row r of a 64-bit column seen as words. */
function put64(words: Uint32Array, r: number, hi: number, lo: number): void {
  words[2 * r] = lo;
  words[2 * r + 1] = hi;
}
/** Writes (aHi, aLo) − (bHi, bLo), wrapping like a 64-bit store, at row r. */
function putDiff(words: Uint32Array, r: number, aHi: number, aLo: number, bHi: number, bLo: number): void {
  words[2 * r] = aLo - bLo; // stored mod 2^32
  words[2 * r + 1] = aHi - bHi - (aLo < bLo ? 1 : 0);
}
/** Writes a small (u8/i8) cell unless it is null (NONE); returns its valid bit. */
function small(col: Uint8Array, r: number, value: number, column: number): number {
  if (value === NONE) return 0;
  col[r] = value;
  return 1 << column;
}

const ALWAYS = (1 << L.CU_VALID) | (1 << L.CU_CPU) | (1 << L.CU_SWITCH_IN_TIME) | (1 << L.CU_NEW_THREAD_ID) | (1 << L.CU_OLD_THREAD_ID);

export class CpuUsageDeriver {
  private readonly ev = new Events();
  private readonly threads = new Threads();
  private readonly lifetimes = new Lifetimes();
  private readonly cpus = new Cpus();
  /** events held for reordering, sorted */
  private held = new IndexList();
  /** the next `held` (double buffer) */
  private spare = new IndexList();
  /** events of the add() in progress, in arrival order */
  private readonly incoming = new IndexList();
  /** scratch of the sort */
  private sortTmp = new Uint32Array(1024);
  private readonly runs = new IndexList();
  private readonly window: number;
  private readonly chunkRows: number;
  private hasReleased = false; // time of the last released group:
  private relHi = 0;
  private relLo = 0;
  /** thread ids with lifetimes */
  private threadsWithLifetimes = 0;
  /** the lifetimes are the trace's final ones (options.threads): no row waits for a process id */
  private readonly final: boolean;
  /** rows opened so far (the order open rows are closed in at the end) */
  private opened = 0;
  private out: OutChunk;
  private n = 0; // rows in `out`
  /** rows waiting for a process id until finish(), in completion order */
  private rowHold: OutChunk | null = null;
  private nRowHold = 0;
  private readonly holdRows: number;
  private readonly stats: CpuUsageStats = { rows: 0, lateEvents: 0, maxHeld: 0, threads: 0, heldRows: 0, unresolvedRows: 0 };

  constructor(
    private readonly onRows: (rows: Table<'cpuUsage'>) => void,
    options: CpuUsageOptions = {},
  ) {
    this.window = options.windowEvents ?? 1 << 18;
    this.chunkRows = options.chunkRows ?? 1 << 16;
    this.out = new OutChunk(this.chunkRows);
    this.holdRows = options.holdRows ?? 1 << 16;
    this.final = options.threads !== undefined;
    if (options.threads) this.lifetimesOf(options.threads);
  }

  /** The lifetimes of the `threads` table (its row order, as the Thread events would make them). */
  private lifetimesOf(threads: Table<'threads'>): void {
    const c = threads.columns;
    const tid = c[L.TH_THREAD_ID] as Uint32Array;
    const pid = c[L.TH_PROCESS_ID] as Uint32Array;
    const start = words(c[L.TH_START_TIME] as BigInt64Array);
    for (let i = 0; i < threads.length; i++) {
      this.addLifetime(this.threads.slot(tid[i]!), !threads.isNull(L.TH_START_TIME, i), start[2 * i + 1]! | 0, start[2 * i]!, pid[i]!, false);
    }
  }

  private addLifetime(s: number, hasStart: boolean, hi: number, lo: number, pid: number, open: boolean): void {
    if (this.threads.lifeHead[s] === 0) this.threadsWithLifetimes++;
    this.lifetimes.push(this.threads, s, hasStart, hi, lo, pid, open);
  }

  /** Takes the rows of one chunk of the decode (borrowed views are fine: values are copied). */
  add(cswitch: Table<'cswitch'>, readythread: Table<'readythread'>, threadEvents: Table<'threadEvents'>): void {
    const ev = this.ev;
    const th = this.threads;
    const te = threadEvents.columns;
    if (threadEvents.length > 0 && !this.final) {
      const ts = words(te[L.TE_TIMESTAMP] as BigInt64Array);
      const cpu = te[L.TE_CPU] as Uint16Array;
      const tid = te[L.TE_THREAD_ID] as Uint32Array;
      const pid = te[L.TE_PROCESS_ID] as Uint32Array;
      const op = te[L.TE_OPCODE] as Uint8Array;
      for (let i = 0; i < threadEvents.length; i++) {
        const e = this.event(ts[2 * i + 1]! | 0, ts[2 * i]!, KIND_THREAD, cpu[i]!, tid[i]!);
        ev.sa[e] = th.slot(tid[i]!);
        ev.b[e] = pid[i]!;
        ev.c[e] = op[i]!;
        this.hold(e);
      }
    }
    if (readythread.length > 0) {
      const rt = readythread.columns;
      const ts = words(rt[L.RT_TIMESTAMP] as BigInt64Array);
      const cpu = rt[L.RT_CPU] as Uint16Array;
      const tid = rt[L.RT_THREAD_ID] as Uint32Array;
      for (let i = 0; i < readythread.length; i++) {
        const e = this.event(ts[2 * i + 1]! | 0, ts[2 * i]!, KIND_READY, cpu[i]!, tid[i]!);
        ev.sa[e] = th.slot(tid[i]!);
        this.hold(e);
      }
    }
    if (cswitch.length > 0) {
      const cs = cswitch.columns;
      const ts = words(cs[L.CS_TIMESTAMP] as BigInt64Array);
      const cpu = cs[L.CS_CPU] as Uint16Array;
      const valid = cs[L.CS_VALID] as Uint32Array;
      const newTid = cs[L.CS_NEW_THREAD_ID] as Uint32Array;
      const oldTid = cs[L.CS_OLD_THREAD_ID] as Uint32Array;
      const newPri = cs[L.CS_NEW_THREAD_PRIORITY] as Int8Array;
      const oldPri = cs[L.CS_OLD_THREAD_PRIORITY] as Int8Array;
      const oldState = cs[L.CS_OLD_THREAD_STATE] as Uint8Array;
      const oldWr = cs[L.CS_OLD_THREAD_WAIT_REASON] as Uint8Array;
      const cstate = cs[L.CS_PREVIOUS_CSTATE] as Uint8Array;
      const cpus = this.cpus;
      for (let i = 0; i < cswitch.length; i++) {
        const v = valid[i]!;
        const hi = ts[2 * i + 1]! | 0;
        const lo = ts[2 * i]!;
        const c = cpu[i]!;
        cpus.ensure(c);
        const known = ((v >>> L.CS_NEW_THREAD_ID) & 1) === 1;
        const e = this.event(hi, lo, KIND_SWITCH, c, known ? newTid[i]! : NONE);
        ev.sa[e] = known ? th.slot(newTid[i]!) : -1;
        const old = oldTid[i]!;
        ev.b[e] = old;
        ev.sb[e] = old === 0 ? this.idleSlot(c) : th.slot(old);
        ev.c[e] = ((v >>> L.CS_NEW_THREAD_PRIORITY) & 1) === 0 ? NONE : newPri[i]!;
        ev.oldPri[e] = ((v >>> L.CS_OLD_THREAD_PRIORITY) & 1) === 0 ? NONE : oldPri[i]!;
        ev.oldState[e] = ((v >>> L.CS_OLD_THREAD_STATE) & 1) === 0 ? NONE : oldState[i]!;
        ev.oldWr[e] = ((v >>> L.CS_OLD_THREAD_WAIT_REASON) & 1) === 0 ? NONE : oldWr[i]!;
        ev.cstate[e] = ((v >>> L.CS_PREVIOUS_CSTATE) & 1) === 0 ? NONE : cstate[i]!;
        if (cpus.hasSwitch[c] === 0) {
          cpus.hasSwitch[c] = 1;
          cpus.seen.push(c);
          cpus.switchHi[c] = hi;
          cpus.switchLo[c] = lo;
        } else if (lt(cpus.switchHi[c]!, cpus.switchLo[c]!, hi, lo)) {
          cpus.switchHi[c] = hi;
          cpus.switchLo[c] = lo;
        }
        this.hold(e);
      }
    }
    this.release(false);
  }

  /** End of the trace: releases everything, completes the last row of every CPU, emits the rest, then the held rows. */
  finish(): CpuUsageStats {
    this.release(true);
    // the open rows, closed without a next switch, in the order they were opened
    const cpus = this.cpus;
    const open: number[] = [];
    for (let c = 0; c < cpus.cap; c++) if (cpus.open[c] === 1) open.push(c);
    open.sort((x, y) => cpus.openSeq[x]! - cpus.openSeq[y]!);
    for (const c of open) {
      this.closeRow(c, false, 0, 0, NONE);
      cpus.open[c] = 0;
    }
    this.emitRowHold();
    this.flush();
    this.stats.threads = this.threadsWithLifetimes;
    return { ...this.stats };
  }

  /** The slot of the idle thread's switch-outs on `cpu` (Cpus.ensure(cpu) done). */
  private idleSlot(cpu: number): number {
    const cpus = this.cpus;
    let s = cpus.idleSlot[cpu]! - 1;
    if (s < 0) {
      s = this.threads.make(true);
      cpus.idleSlot[cpu] = s + 1;
    }
    return s;
  }

  private event(hi: number, lo: number, kind: number, cpu: number, a: number): number {
    const ev = this.ev;
    const e = ev.alloc();
    ev.hi[e] = hi;
    ev.lo[e] = lo;
    ev.kc[e] = (kind << 16) | cpu;
    ev.a[e] = a;
    ev.b[e] = 0;
    ev.sb[e] = -1;
    ev.c[e] = 0;
    ev.oldPri[e] = NONE;
    ev.oldState[e] = NONE;
    ev.oldWr[e] = NONE;
    ev.cstate[e] = NONE;
    return e;
  }

  private hold(e: number): void {
    if (this.hasReleased && lt(this.ev.hi[e]!, this.ev.lo[e]!, this.relHi, this.relLo)) {
      this.stats.lateEvents++;
      this.applyOne(e);
      this.ev.release(e);
      return;
    }
    this.incoming.push(e);
  }

  /**
   * Sorts what came in (each CPU's events arrive in runs, so the natural merge sort is close to linear),
   * merges it with what is held, and applies the events up to the watermark — all of them at the end,
   * and never fewer than needed to keep at most `windowEvents` held.
   */
  private release(all: boolean): void {
    const ev = this.ev;
    let events = this.held;
    if (this.incoming.length > 0) {
      const n = this.incoming.length;
      if (this.sortTmp.length < n) this.sortTmp = new Uint32Array(Math.max(n, this.sortTmp.length * 2));
      const sorted = sortStable(ev, this.incoming.items, this.sortTmp, n, this.runs);
      // merge: on a tie in (time, kind, cpu) the held event (which arrived earlier) goes first
      const held = this.held;
      const into = this.spare;
      into.length = 0;
      into.reserve(held.length + n);
      const h = held.items;
      const o = into.items;
      let i = 0;
      let j = 0;
      let k = 0;
      while (i < held.length && j < n) o[k++] = ev.before(sorted[j]!, h[i]!) ? sorted[j++]! : h[i++]!;
      while (i < held.length) o[k++] = h[i++]!;
      while (j < n) o[k++] = sorted[j++]!;
      into.length = k;
      this.incoming.length = 0;
      this.spare = held;
      this.held = into;
      events = into;
    }
    const cpus = this.cpus;
    let hasW = false;
    let wHi = 0;
    let wLo = 0;
    for (const c of cpus.seen) {
      if (!hasW || lt(cpus.switchHi[c]!, cpus.switchLo[c]!, wHi, wLo)) {
        hasW = true;
        wHi = cpus.switchHi[c]!;
        wLo = cpus.switchLo[c]!;
      }
    }
    const list = events.items;
    const total = events.length;
    const mustGo = total - this.window; // events beyond the window go whatever the watermark
    const hi = ev.hi;
    const lo = ev.lo;
    let i = 0;
    while (i < total) {
      const e = list[i]!;
      const tHi = hi[e]!;
      const tLo = lo[e]!;
      if (!all && i >= mustGo && (!hasW || lt(wHi, wLo, tHi, tLo))) break;
      let j = i + 1;
      while (j < total && lo[list[j]!] === tLo && hi[list[j]!] === tHi) j++;
      this.hasReleased = true;
      this.relHi = tHi;
      this.relLo = tLo;
      if (j === i + 1) this.applyOne(e);
      else this.applyGroup(list, i, j);
      for (let k = i; k < j; k++) ev.release(list[k]!);
      i = j;
    }
    if (i > 0) {
      list.copyWithin(0, i, total);
      events.length = total - i;
    }
    if (events.length > this.stats.maxHeld) this.stats.maxHeld = events.length;
  }

  /** The process of thread slot s at time (hi, lo) from the lifetimes (NO_ID: unknown; the idle thread: 0). */
  private pidOf(s: number, hi: number, lo: number): number {
    const th = this.threads;
    if (th.idle[s] === 1) return 0;
    let l = th.lifeHead[s]! - 1;
    if (l < 0) return NO_ID;
    const lf = this.lifetimes;
    let best = -1;
    for (; l >= 0; l = lf.next[l]! - 1) {
      if (lf.hasStart[l] === 1) {
        const sHi = lf.startHi[l]!;
        const sLo = lf.startLo[l]!;
        if (lt(hi, lo, sHi, sLo)) continue;
        // the latest start wins (a null start is the earliest); on a tie the later lifetime
        if (best < 0 || lf.hasStart[best] === 0 || !lt(sHi, sLo, lf.startHi[best]!, lf.startLo[best]!)) best = l;
      } else if (best < 0 || lf.hasStart[best] === 0) best = l;
    }
    return best < 0 ? NO_ID : lf.pid[best]!;
  }

  /** The process of thread id `tid` at time (hi, lo) (NO_ID: unknown). */
  private pidOfTid(tid: number, hi: number, lo: number): number {
    if (tid === 0) return 0;
    const s = this.threads.index.find(tid);
    return s < 0 ? NO_ID : this.pidOf(s, hi, lo);
  }

  /** Applies a Thread event: a Start (or any event of a thread without an open lifetime) opens a lifetime, an End closes it. */
  private applyThread(e: number): void {
    const ev = this.ev;
    const lf = this.lifetimes;
    const s = ev.sa[e]!;
    const op = ev.c[e]!;
    let open = -1; // the last open lifetime of the thread
    for (let l = this.threads.lifeHead[s]! - 1; l >= 0; l = lf.next[l]! - 1) if (lf.open[l] === 1) open = l;
    if (op === L.OPCODE_START || open < 0) {
      if (open >= 0) lf.open[open] = 0;
      this.addLifetime(s, op === L.OPCODE_START, ev.hi[e]!, ev.lo[e]!, ev.b[e]!, op !== L.OPCODE_END);
    } else if (op === L.OPCODE_END) lf.open[open] = 0;
  }

  /** Applies a ReadyThread event, readied by thread `readying` (its slot rs; NO_ID or NONE: unknown). */
  private applyReady(e: number, readying: number, rs: number): void {
    const ev = this.ev;
    const th = this.threads;
    const s = ev.sa[e]!;
    const hi = ev.hi[e]!;
    const lo = ev.lo[e]!;
    th.hasReady[s] = 1;
    th.readyHi[s] = hi;
    th.readyLo[s] = lo;
    th.readying[s] = readying;
    th.readyingSlot[s] = rs;
    th.readyingPid[s] = readying < 0 ? NO_ID : this.pidOf(rs, hi, lo);
  }

  /** Applies switch e: completes its CPU's open row and opens its own (time (tHi, tLo) = e's). */
  private applySwitch(e: number, tHi: number, tLo: number): void {
    const ev = this.ev;
    const cpus = this.cpus;
    const cpu = ev.kc[e]! & 0xffff;
    if (cpus.open[cpu] === 1) {
      this.closeRow(cpu, true, tHi, tLo, ev.oldPri[e]!);
      cpus.open[cpu] = 0;
    }
    cpus.current[cpu] = ev.a[e]!;
    cpus.currentSlot[cpu] = ev.sa[e]!;
    if (ev.a[e]! >= 0) this.openRow(e, cpu);
  }

  /** Records the switch-out of switch e's old thread at (tHi, tLo). */
  private recordOut(e: number, tHi: number, tLo: number): void {
    const ev = this.ev;
    const th = this.threads;
    const s = ev.sb[e]!;
    th.hasOut[s] = 1;
    th.outHi[s] = tHi;
    th.outLo[s] = tLo;
    th.outPri[s] = ev.oldPri[e]!;
    th.outState[s] = ev.oldState[e]!;
    th.outWr[s] = ev.oldWr[e]!;
  }

  /** Applies one event alone: a group of one, or a late event. */
  private applyOne(e: number): void {
    const kind = this.ev.kc[e]! >>> 16;
    if (kind === KIND_SWITCH) {
      const tHi = this.ev.hi[e]!;
      const tLo = this.ev.lo[e]!;
      this.applySwitch(e, tHi, tLo);
      this.recordOut(e, tHi, tLo);
    } else if (kind === KIND_READY) {
      const cpu = this.ev.kc[e]! & 0xffff;
      const cpus = this.cpus;
      if (cpu < cpus.cap) this.applyReady(e, cpus.current[cpu]!, cpus.currentSlot[cpu]!);
      else this.applyReady(e, -1, -1);
    } else this.applyThread(e);
  }

  /** Applies the events list[from, to): one timestamp, sorted by kind, cpu, arrival. */
  private applyGroup(list: Uint32Array, from: number, to: number): void {
    const ev = this.ev;
    const cpus = this.cpus;
    const first = list[from]!;
    const tHi = ev.hi[first]!;
    const tLo = ev.lo[first]!;
    let k = from;
    for (; k < to; k++) {
      const e = list[k]!;
      const kind = ev.kc[e]! >>> 16;
      if (kind === KIND_SWITCH) break; // the switches come last
      if (kind === KIND_THREAD) this.applyThread(e);
      else {
        // the readying thread: the last switch-in on its cpu at or before it (this group's switches count)
        const cpu = ev.kc[e]! & 0xffff;
        let readying = cpu < cpus.cap ? cpus.current[cpu]! : -1;
        let rs = cpu < cpus.cap ? cpus.currentSlot[cpu]! : -1;
        for (let q = to - 1; q > k; q--) {
          const x = list[q]!;
          if (ev.kc[x]! >>> 16 !== KIND_SWITCH) break;
          if ((ev.kc[x]! & 0xffff) === cpu) {
            readying = ev.a[x]!;
            rs = ev.sa[x]!;
            break;
          }
        }
        this.applyReady(e, readying, rs);
      }
    }
    for (let q = k; q < to; q++) this.applySwitch(list[q]!, tHi, tLo);
    for (let q = k; q < to; q++) this.recordOut(list[q]!, tHi, tLo);
  }

  /** Opens the row of switch e on its cpu: the switch-in with what is known of its thread now. */
  private openRow(e: number, cpu: number): void {
    const ev = this.ev;
    const cpus = this.cpus;
    const th = this.threads;
    const tHi = ev.hi[e]!;
    const tLo = ev.lo[e]!;
    const tid = ev.a[e]!;
    const ns = ev.sa[e]!;
    const os = ev.sb[e]!;
    cpus.open[cpu] = 1;
    cpus.openSeq[cpu] = this.opened++;
    cpus.tsHi[cpu] = tHi;
    cpus.tsLo[cpu] = tLo;
    cpus.newThreadId[cpu] = tid;
    cpus.oldThreadId[cpu] = ev.b[e]!;
    cpus.newSlot[cpu] = ns;
    cpus.oldSlot[cpu] = os;
    cpus.newPid[cpu] = this.pidOf(ns, tHi, tLo);
    cpus.oldPid[cpu] = this.pidOf(os, tHi, tLo);
    cpus.newInPri[cpu] = ev.c[e]!;
    cpus.oldOutPri[cpu] = ev.oldPri[e]!;
    cpus.oldState[cpu] = ev.oldState[e]!;
    cpus.oldWr[cpu] = ev.oldWr[e]!;
    cpus.cstate[cpu] = ev.cstate[e]!;
    // the thread's latest switch-out (the idle thread: one per cpu) and ready, copied
    const o = tid === 0 ? this.idleSlot(cpu) : ns;
    const hasLast = th.hasOut[o] === 1;
    const lastHi = th.outHi[o]!;
    const lastLo = th.outLo[o]!;
    cpus.hasLast[cpu] = hasLast ? 1 : 0;
    if (hasLast) {
      cpus.lastHi[cpu] = lastHi;
      cpus.lastLo[cpu] = lastLo;
      cpus.lastPri[cpu] = th.outPri[o]!;
      cpus.lastState[cpu] = th.outState[o]!;
      cpus.lastWr[cpu] = th.outWr[o]!;
    }
    const hasReady = th.hasReady[ns] === 1 && (!hasLast || lt(lastHi, lastLo, th.readyHi[ns]!, th.readyLo[ns]!));
    cpus.hasReady[cpu] = hasReady ? 1 : 0;
    if (hasReady) {
      cpus.readyHi[cpu] = th.readyHi[ns]!;
      cpus.readyLo[cpu] = th.readyLo[ns]!;
      cpus.readying[cpu] = th.readying[ns]!;
      cpus.readyingSlot[cpu] = th.readyingSlot[ns]!;
      cpus.readyingPid[cpu] = th.readyingPid[ns]!;
    }
  }

  /** Completes the open row of `cpu` with its next switch at (nHi, nLo) (or none at the end) and adds it to the output. */
  private closeRow(cpu: number, hasNext: boolean, nHi: number, nLo: number, nextOldPri: number): void {
    const cpus = this.cpus;
    const tsHi = cpus.tsHi[cpu]!;
    const tsLo = cpus.tsLo[cpu]!;
    let newPid = cpus.newPid[cpu]!;
    let oldPid = cpus.oldPid[cpu]!;
    const hasReady = cpus.hasReady[cpu] === 1;
    const readying = hasReady ? cpus.readying[cpu]! : -1;
    let readyingPid = readying >= 0 ? cpus.readyingPid[cpu]! : NO_ID;
    let wait = false;
    if (!this.final && (newPid === NO_ID || oldPid === NO_ID || (readying >= 0 && readyingPid === NO_ID))) {
      // a Thread event applied since may know the thread now; if not, the row waits for finish()
      if (newPid === NO_ID) newPid = this.pidOf(cpus.newSlot[cpu]!, tsHi, tsLo);
      if (oldPid === NO_ID) oldPid = this.pidOf(cpus.oldSlot[cpu]!, tsHi, tsLo);
      if (readying >= 0 && readyingPid === NO_ID) readyingPid = this.pidOf(cpus.readyingSlot[cpu]!, cpus.readyHi[cpu]!, cpus.readyLo[cpu]!);
      if (newPid === NO_ID || oldPid === NO_ID || (readying >= 0 && readyingPid === NO_ID)) {
        if (this.nRowHold < this.holdRows) wait = true;
        else this.stats.unresolvedRows++;
      }
    }
    const o = wait ? this.rowHoldRoom() : this.out;
    const r = wait ? this.nRowHold++ : this.n++;
    let v = ALWAYS;
    o.cpu[r] = cpu;
    put64(o.switchInTime, r, tsHi, tsLo);
    o.newThreadId[r] = cpus.newThreadId[cpu]!;
    o.oldThreadId[r] = cpus.oldThreadId[cpu]!;
    if (hasNext) {
      put64(o.nextSwitchOutTime, r, nHi, nLo);
      putDiff(o.cpuUsage, r, nHi, nLo, tsHi, tsLo);
      v |= (1 << L.CU_NEXT_SWITCH_OUT_TIME) | (1 << L.CU_CPU_USAGE);
      v |= small(o.newOutPri, r, nextOldPri, L.CU_NEW_OUT_PRI);
    }
    if (newPid !== NO_ID) {
      o.newProcessId[r] = newPid;
      v |= 1 << L.CU_NEW_PROCESS_ID;
    }
    if (oldPid !== NO_ID) {
      o.oldProcessId[r] = oldPid;
      v |= 1 << L.CU_OLD_PROCESS_ID;
    }
    v |= small(o.newInPri, r, cpus.newInPri[cpu]!, L.CU_NEW_IN_PRI);
    v |= small(o.oldOutPri, r, cpus.oldOutPri[cpu]!, L.CU_OLD_OUT_PRI);
    v |= small(o.oldState, r, cpus.oldState[cpu]!, L.CU_OLD_STATE);
    v |= small(o.oldWaitReason, r, cpus.oldWr[cpu]!, L.CU_OLD_WAIT_REASON);
    v |= small(o.prevCState, r, cpus.cstate[cpu]!, L.CU_PREV_CSTATE);
    const hasLast = cpus.hasLast[cpu] === 1;
    if (hasLast) {
      put64(o.lastSwitchOutTime, r, cpus.lastHi[cpu]!, cpus.lastLo[cpu]!);
      v |= 1 << L.CU_LAST_SWITCH_OUT_TIME;
      v |= small(o.newPrevOutPri, r, cpus.lastPri[cpu]!, L.CU_NEW_PREV_OUT_PRI);
      v |= small(o.newPrevState, r, cpus.lastState[cpu]!, L.CU_NEW_PREV_STATE);
      v |= small(o.newPrevWaitReason, r, cpus.lastWr[cpu]!, L.CU_NEW_PREV_WAIT_REASON);
    }
    if (hasReady) {
      const rHi = cpus.readyHi[cpu]!;
      const rLo = cpus.readyLo[cpu]!;
      put64(o.readyTime, r, rHi, rLo);
      putDiff(o.ready, r, tsHi, tsLo, rHi, rLo);
      v |= (1 << L.CU_READY_TIME) | (1 << L.CU_READY);
      if (hasLast) {
        putDiff(o.waits, r, rHi, rLo, cpus.lastHi[cpu]!, cpus.lastLo[cpu]!);
        v |= 1 << L.CU_WAITS;
      }
      if (readying >= 0) {
        o.readyingThreadId[r] = readying;
        v |= 1 << L.CU_READYING_THREAD_ID;
        if (readyingPid !== NO_ID) {
          o.readyingProcessId[r] = readyingPid;
          v |= 1 << L.CU_READYING_PROCESS_ID;
        }
      }
    }
    o.valid[r] = v >>> 0;
    if (wait) this.stats.heldRows++;
    else if (this.n >= this.chunkRows) this.flush();
  }

  /** The hold, with room for one more row (it grows by doubling up to holdRows). */
  private rowHoldRoom(): OutChunk {
    const h = this.rowHold;
    if (h !== null && this.nRowHold < h.rows) return h;
    const grown = new OutChunk(Math.min(this.holdRows, Math.max(1024, 2 * (h?.rows ?? 0))));
    if (h !== null) grown.columns.forEach((col, c) => (col as Uint8Array).set(h.columns[c] as Uint8Array));
    return (this.rowHold = grown);
  }

  /**
   * finish(): the held rows' process ids that are still null, from the final lifetimes (those of threads
   * that never had one stay null), then the rows into the output in their completion order.
   */
  private emitRowHold(): void {
    const h = this.rowHold;
    if (h === null) return;
    const nHold = this.nRowHold;
    for (let r = 0; r < nHold; r++) {
      let v = h.valid[r]!;
      const inHi = h.switchInTime[2 * r + 1]! | 0;
      const inLo = h.switchInTime[2 * r]!;
      if (((v >>> L.CU_NEW_PROCESS_ID) & 1) === 0) {
        const pid = this.pidOfTid(h.newThreadId[r]!, inHi, inLo);
        if (pid !== NO_ID) {
          h.newProcessId[r] = pid;
          v |= 1 << L.CU_NEW_PROCESS_ID;
        }
      }
      if (((v >>> L.CU_OLD_PROCESS_ID) & 1) === 0) {
        const pid = this.pidOfTid(h.oldThreadId[r]!, inHi, inLo);
        if (pid !== NO_ID) {
          h.oldProcessId[r] = pid;
          v |= 1 << L.CU_OLD_PROCESS_ID;
        }
      }
      if (((v >>> L.CU_READYING_THREAD_ID) & 1) === 1 && ((v >>> L.CU_READYING_PROCESS_ID) & 1) === 0) {
        const pid = this.pidOfTid(h.readyingThreadId[r]!, h.readyTime[2 * r + 1]! | 0, h.readyTime[2 * r]!);
        if (pid !== NO_ID) {
          h.readyingProcessId[r] = pid;
          v |= 1 << L.CU_READYING_PROCESS_ID;
        }
      }
      h.valid[r] = v >>> 0;
    }
    for (let i = 0; i < nHold; ) {
      const k = Math.min(this.chunkRows - this.n, nHold - i);
      const out = this.out;
      for (let c = 0; c < out.columns.length; c++) (out.columns[c] as Uint8Array).set((h.columns[c] as Uint8Array).subarray(i, i + k), this.n);
      this.n += k;
      i += k;
      if (this.n >= this.chunkRows) this.flush();
    }
    this.rowHold = null;
    this.nRowHold = 0;
  }

  private flush(): void {
    const n = this.n;
    if (n === 0) return;
    this.stats.rows += n;
    const columns = this.out.columns.map((c) => (n === this.chunkRows ? c : c.slice(0, n)) as TypedColumn);
    this.out = new OutChunk(this.chunkRows);
    this.n = 0;
    this.onRows(new Table('cpuUsage', { length: n, columns }));
  }
}

/** The 64-bit column as (lo, hi) 32-bit words. */
function words(col: BigInt64Array): Uint32Array {
  return new Uint32Array(col.buffer, col.byteOffset, col.length * 2);
}
