// Who ran when, per CPU, kept compact for the timeline: one entry per switch-in of a non-idle thread
// (from the streaming cpuUsage rows), as typed arrays per CPU. Times are ticks since `baseTicks` (the
// first switch seen) in doubles: exact up to 2^53 ticks (28 years of a 10 MHz clock).
//
// The deriver emits each CPU's rows in time order, except the rows that waited for their thread's process
// (src/derive/cpu-usage.ts), which come at its end: a lane that got an entry before one it has is put in
// time order again (and coalesced again) before it is used.
//
// Memory bound: at most MAX_ENTRIES entries in all (full resolution below that: ~26 bytes each, ~55 MB
// at the bound). Past it the timeline is coalesced: entries that start in the same time bucket of a CPU
// become one, which keeps the thread that ran longest in it, the busy time and the number of switches;
// the bucket doubles each time the bound is reached again. The page says when it is coalesced.

/** entries kept in all before coalescing */
export const MAX_ENTRIES = 1 << 21;
/** outState / outWait when unknown */
export const UNKNOWN = 255;

export interface Lane {
  cpu: number;
  /** entries used */
  n: number;
  start: Float64Array;
  end: Float64Array;
  tid: Uint32Array;
  /** index into TimelineData.pids (the process), -1 if unknown */
  proc: Int32Array;
  /** thread state and wait reason when the thread was switched out (UNKNOWN if not known) */
  outState: Uint8Array;
  outWait: Uint8Array;
  /** coalesced timelines only: switches merged into the entry, ticks busy in it, ticks of its longest switch */
  count: Uint32Array | null;
  busy: Float32Array | null;
  longest: Float32Array | null;
}

export interface TimelineData {
  /** raw ticks of time 0 of the entries */
  baseTicks: bigint;
  lanes: Lane[];
  /** process ids by index (null: the process of the thread is unknown) */
  pids: (number | null)[];
  /** 0: every switch is an entry; else the bucket (ticks) of the coalesced timeline */
  bucket: number;
  /** switch-ins seen (idle included) and entries kept */
  switches: number;
  entries: number;
  /** earliest start and latest end (ticks since baseTicks) */
  first: number;
  last: number;
}

function newLane(cpu: number, capacity: number): Lane {
  return {
    cpu,
    n: 0,
    start: new Float64Array(capacity),
    end: new Float64Array(capacity),
    tid: new Uint32Array(capacity),
    proc: new Int32Array(capacity),
    outState: new Uint8Array(capacity),
    outWait: new Uint8Array(capacity),
    count: null,
    busy: null,
    longest: null,
  };
}

/** Gives a lane the columns of a coalesced timeline (each entry so far: one switch). */
function withTotals(l: Lane): void {
  if (l.count) return;
  const cap = l.start.length;
  l.count = new Uint32Array(cap).fill(1);
  l.busy = new Float32Array(cap);
  l.longest = new Float32Array(cap);
  for (let i = 0; i < l.n; i++) l.busy[i] = l.longest[i] = l.end[i]! - l.start[i]!;
}

function grow<T extends Float64Array | Float32Array | Uint32Array | Int32Array | Uint8Array>(a: T, capacity: number): T {
  const b = new (a.constructor as new (n: number) => T)(capacity);
  b.set(a);
  return b;
}

/** Column views of a cpuUsage chunk, by name (the public Table API). */
export interface CpuUsageChunk {
  length: number;
  column(name: string): ArrayLike<unknown>;
  isNull(columnId: number, row: number): boolean;
  columnNames: string[];
}

export class TimelineBuilder {
  private readonly lanes = new Map<number, Lane>();
  private readonly procIndex = new Map<number | null, number>();
  private readonly pids: (number | null)[] = [];
  /** per cpu: index of the entry that the next switch on that cpu ends (-1: the last row was idle or none) */
  private readonly open = new Map<number, number>();
  private base: bigint | null = null;
  private bucket = 0;
  private total = 0;
  private switches = 0;
  private first = Infinity;
  private last = -Infinity;
  /** lanes with an entry added before one they had (put in time order at finish() or before coalescing) */
  private readonly unsorted = new Set<Lane>();

  constructor(private readonly maxEntries = MAX_ENTRIES) {}

  private proc(pid: number | null): number {
    let i = this.procIndex.get(pid);
    if (i === undefined) {
      i = this.pids.length;
      this.pids.push(pid);
      this.procIndex.set(pid, i);
    }
    return i;
  }

  private lane(cpu: number): Lane {
    let l = this.lanes.get(cpu);
    if (!l) {
      this.lanes.set(cpu, (l = newLane(cpu, 1024)));
      if (this.bucket > 0) withTotals(l);
    }
    return l;
  }

  /** Adds a chunk of cpuUsage rows (rows of one CPU in time order, as the deriver emits them). */
  add(t: CpuUsageChunk): void {
    if (t.length === 0) return;
    const names = t.columnNames;
    const id = (n: string) => names.indexOf(n);
    const cpu = t.column('cpu') as Uint16Array;
    const tin = t.column('switchInTime') as BigInt64Array;
    const tout = t.column('nextSwitchOutTime') as BigInt64Array;
    const newTid = t.column('newThreadId') as Uint32Array;
    const oldTid = t.column('oldThreadId') as Uint32Array;
    const pid = t.column('newProcessId') as Uint32Array;
    const oldState = t.column('oldState') as Uint8Array;
    const oldWait = t.column('oldWaitReason') as Uint8Array;
    const outCol = id('nextSwitchOutTime');
    const pidCol = id('newProcessId');
    const stateCol = id('oldState');
    const waitCol = id('oldWaitReason');
    if (this.base === null) this.base = tin[0]!;
    const base = this.base;
    for (let i = 0; i < t.length; i++) {
      this.switches++;
      const c = cpu[i]!;
      const l = this.lane(c);
      // this switch ends the CPU's open entry (the one ending at its time): its thread's state and wait reason at the switch-out
      const s = Number(tin[i]! - base);
      const o = this.open.get(c) ?? -1;
      if (o >= 0 && o < l.n && l.tid[o] === oldTid[i] && l.end[o] === s && (l.count === null || l.count[o] === 1)) {
        l.outState[o] = t.isNull(stateCol, i) ? UNKNOWN : oldState[i]!;
        l.outWait[o] = t.isNull(waitCol, i) ? UNKNOWN : oldWait[i]!;
      }
      const tid = newTid[i]!;
      if (tid === 0) {
        this.open.set(c, -1); // the idle thread: not drawn
        continue;
      }
      const e = t.isNull(outCol, i) ? s : Number(tout[i]! - base);
      const p = this.proc(t.isNull(pidCol, i) ? null : pid[i]!);
      if (s < this.first) this.first = s;
      if (e > this.last) this.last = e;
      this.open.set(c, this.push(l, s, e, tid, p));
      if (this.total > this.maxEntries) this.coalesce();
    }
  }

  /** Appends (or, coalesced, merges) an entry; returns its index. */
  private push(l: Lane, s: number, e: number, tid: number, p: number): number {
    const k = l.n;
    if (k > 0 && s < l.start[k - 1]!) this.unsorted.add(l);
    if (this.bucket > 0 && k > 0 && Math.floor(l.start[k - 1]! / this.bucket) === Math.floor(s / this.bucket)) {
      this.mergeInto(l, k - 1, s, e, tid, p, 1, e - s, e - s, UNKNOWN, UNKNOWN);
      return k - 1;
    }
    if (k === l.start.length) {
      const cap = k * 2;
      l.start = grow(l.start, cap);
      l.end = grow(l.end, cap);
      l.tid = grow(l.tid, cap);
      l.proc = grow(l.proc, cap);
      l.outState = grow(l.outState, cap);
      l.outWait = grow(l.outWait, cap);
      if (l.count) l.count = grow(l.count, cap);
      if (l.busy) l.busy = grow(l.busy, cap);
      if (l.longest) l.longest = grow(l.longest, cap);
    }
    l.start[k] = s;
    l.end[k] = e;
    l.tid[k] = tid;
    l.proc[k] = p;
    l.outState[k] = UNKNOWN;
    l.outWait[k] = UNKNOWN;
    if (l.count) {
      l.count[k] = 1;
      l.busy![k] = e - s;
      l.longest![k] = e - s;
    }
    l.n++;
    this.total++;
    return k;
  }

  /** Merges a (possibly merged) entry into entry `k`: the longest switch names it. */
  private mergeInto(l: Lane, k: number, s: number, e: number, tid: number, p: number, count: number, busy: number, longest: number, st: number, wr: number): void {
    if (e > l.end[k]!) l.end[k] = e;
    if (s < l.start[k]!) l.start[k] = s;
    l.count![k]! += count;
    l.busy![k]! += busy;
    if (longest > l.longest![k]!) {
      l.longest![k] = longest;
      l.tid[k] = tid;
      l.proc[k] = p;
      l.outState[k] = st;
      l.outWait[k] = wr;
    }
  }

  /** Doubles the bucket (or sets the first one) and merges every lane with it. */
  private coalesce(): void {
    const span = Math.max(1, this.last - this.first);
    const lanes = Math.max(1, this.lanes.size);
    // buckets for about half the bound over the span seen so far, at least twice the last bucket
    this.bucket = Math.max(2 * this.bucket, Math.ceil((2 * lanes * span) / this.maxEntries));
    const b = this.bucket;
    let total = 0;
    this.sortLanes();
    for (const l of this.lanes.values()) {
      withTotals(l);
      this.mergeBuckets(l, b);
      this.open.set(l.cpu, -1);
      total += l.n;
    }
    this.total = total;
  }

  /** Merges the entries of a lane (in time order) that start in the same bucket. */
  private mergeBuckets(l: Lane, b: number): void {
    const count = l.count!;
    let w = -1;
    for (let i = 0; i < l.n; i++) {
      if (w >= 0 && Math.floor(l.start[w]! / b) === Math.floor(l.start[i]! / b)) {
        this.mergeInto(l, w, l.start[i]!, l.end[i]!, l.tid[i]!, l.proc[i]!, count[i]!, l.busy![i]!, l.longest![i]!, l.outState[i]!, l.outWait[i]!);
        continue;
      }
      w++;
      if (w !== i) {
        l.start[w] = l.start[i]!;
        l.end[w] = l.end[i]!;
        l.tid[w] = l.tid[i]!;
        l.proc[w] = l.proc[i]!;
        l.outState[w] = l.outState[i]!;
        l.outWait[w] = l.outWait[i]!;
        count[w] = count[i]!;
        l.busy![w] = l.busy![i]!;
        l.longest![w] = l.longest![i]!;
      }
    }
    l.n = w + 1;
  }

  /** Puts the entries of the unsorted lanes in time order (stable), coalesced again if the timeline is. */
  private sortLanes(): void {
    for (const l of this.unsorted) {
      const order = Array.from({ length: l.n }, (_, i) => i).sort((x, y) => l.start[x]! - l.start[y]! || x - y);
      const arrays = [l.start, l.end, l.tid, l.proc, l.outState, l.outWait, l.count, l.busy, l.longest];
      for (const a of arrays) {
        if (!a) continue;
        const was = a.slice(0, l.n);
        for (let i = 0; i < l.n; i++) a[i] = was[order[i]!]!;
      }
      this.open.set(l.cpu, -1);
      if (this.bucket > 0) {
        withTotals(l);
        const before = l.n;
        this.mergeBuckets(l, this.bucket);
        this.total -= before - l.n;
      }
    }
    this.unsorted.clear();
  }

  /** The timeline (lanes by CPU number); its arrays are trimmed to their entries (transferable). */
  finish(): TimelineData {
    this.sortLanes();
    const trim = <T extends Float64Array | Float32Array | Uint32Array | Int32Array | Uint8Array>(a: T, n: number): T => a.slice(0, n) as T;
    const lanes = [...this.lanes.values()]
      .sort((a, b) => a.cpu - b.cpu)
      .map((l) => ({
        ...l,
        start: trim(l.start, l.n),
        end: trim(l.end, l.n),
        tid: trim(l.tid, l.n),
        proc: trim(l.proc, l.n),
        outState: trim(l.outState, l.n),
        outWait: trim(l.outWait, l.n),
        count: l.count && trim(l.count, l.n),
        busy: l.busy && trim(l.busy, l.n),
        longest: l.longest && trim(l.longest, l.n),
      }));
    return {
      baseTicks: this.base ?? 0n,
      lanes,
      pids: this.pids,
      bucket: this.bucket,
      switches: this.switches,
      entries: this.total,
      first: Number.isFinite(this.first) ? this.first : 0,
      last: Number.isFinite(this.last) ? this.last : 0,
    };
  }
}

/** The buffers of a timeline, to transfer it to another thread without a copy. */
export function timelineBuffers(t: TimelineData): ArrayBuffer[] {
  const out: ArrayBuffer[] = [];
  for (const l of t.lanes) {
    for (const a of [l.start, l.end, l.tid, l.proc, l.outState, l.outWait, l.count, l.busy, l.longest]) if (a) out.push(a.buffer as ArrayBuffer);
  }
  return out;
}

/** Index of the first entry of `l` whose end is after `t` (binary search; ends are ascending per lane). */
export function firstEndingAfter(l: Lane, t: number): number {
  let lo = 0;
  let hi = l.n;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (l.end[mid]! <= t) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}
