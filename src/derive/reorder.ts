// The time reorder of the streaming derivations (CpuUsageDeriver, ThreadStatesDeriver): the one
// implementation. Decoded events arrive in decode order, in time order per CPU only (docs/format.md §A.7);
// a deriver stores each as a record of its own layout in this store, and the reorder holds them, sorts them
// by (time, key, arrival) and hands them back to the deriver's apply in that order up to the watermark —
// the least, over the CPUs seen, of the latest switch time delivered for that CPU (cpu-usage.ts says why
// everything before it has arrived). A CPU that falls silent would hold the watermark back, so no more than
// `window` events are held between chunks: past that the earliest groups go anyway, and an event that then
// arrives behind the released time is applied at once and counted as late.
//
// A record is `words` int32 words: it begins with its time (E_HI signed, E_LO unsigned, kept as int32) and
// its order at one time (E_KEY: kind << 16 | cpu, compared as int32), the deriver's own words after them.
// The deriver writes a record at position `top` of E and commits it; an add() of a chunk is begin(n), the
// records, then release() (or hold(): kept unsorted until the next release).
//
// Costs: nothing is allocated per event, and no closure or BigInt either; the deriver's apply is called once
// per release (and once per late event). The held records are moved to the front of the one store at each
// begin() (through a spare of its size), so the store stays in cache. The sort is a stable LSD radix sort of
// the positions on the time less the least (13-bit digits, those that are the same for every event skipped:
// two passes for a chunk's span of time, mostly), then each run of one time (rare) by the key, by insertion;
// the watermark cut is a binary search. Each hot loop is a function of its own (see sortEvents).

/** Words of every record: time high word (signed), low word (unsigned, as int32), the order at one time. */
export const E_HI = 0;
export const E_LO = 1;
export const E_KEY = 2;

/** Applies the records at positions order[from, to) (borrowed until it returns), sorted, in that order. */
export type ApplyEvents = (order: Int32Array, from: number, to: number) => void;

/** What a streaming deriver over the reorder (cpuUsage, threadStates) says of a run: `finish()`'s result. */
export interface DeriverStats {
  /** rows emitted */
  rows: number;
  /** events that arrived behind the released time (applied at once) */
  lateEvents: number;
  /** most events held at once */
  maxHeld: number;
  /** threads the deriver kept a state or lifetimes for */
  threads: number;
  /** rows held back until finish() for a process id no Thread event had given yet (then resolved) */
  heldRows: number;
  /** rows emitted before finish() with a process id still unknown, the hold being full: their process ids may be missing */
  unresolvedRows: number;
}

export interface ReorderOptions {
  /** int32 words per record (at least 3: E_HI, E_LO, E_KEY, then the deriver's) */
  words: number;
  /** most events held between chunks */
  window: number;
  /** whether the events at the watermark's time go too (true), or only those before it */
  atWatermark: boolean;
  /** the deriver's apply (called once per release, and once per late event) */
  apply: ApplyEvents;
}

/** x ^ MIN32 orders the int32 bits of u32 values as the u32 values (every time word stays an int32: no double) */
const MIN32 = -0x80000000;

/** (aHi, aLo) < (bHi, bLo) as signed 64-bit values (the words as int32: lo compared as unsigned) */
function lt(aHi: number, aLo: number, bHi: number, bLo: number): boolean {
  return aHi < bHi || (aHi === bHi && (aLo ^ MIN32) < (bLo ^ MIN32));
}

/** The events of a chunk, held and released in time order (see the file comment). */
export class EventReorder {
  /** the record store: the deriver writes a record at words top * words … then commit()s it */
  E: Int32Array = new Int32Array(0);
  /** the position of the next record */
  top = 0;
  /** events that arrived behind the released time (applied at once) */
  lateEvents = 0;
  /** most events held at once after a release */
  maxHeld = 0;
  /** the time of the last released group: 1 (none yet: 0), hi, lo (a typed array: lo is a u32) */
  readonly released = new Int32Array(3);
  private E2: Int32Array = new Int32Array(0);
  /** positions: the held ones (sorted up to nSorted), then those committed since begin() */
  private P: Int32Array = new Int32Array(1024);
  private end = 0;
  private nHeld = 0;
  private nSorted = 0;
  private readonly scratch = new SortScratch();
  /** a one-event order (late events) */
  private readonly single = new Int32Array(1);
  /** per CPU: 1 when it is in the watermark, then its latest switch time (hi, lo) */
  private W: Int32Array = new Int32Array(0);
  private cpuCap = 0;
  /** CPUs in the watermark */
  private readonly seen: number[] = [];
  private readonly words: number;
  private readonly window: number;
  private readonly atWatermark: boolean;
  private readonly apply: ApplyEvents;

  constructor(options: ReorderOptions) {
    this.words = options.words;
    this.window = options.window;
    this.atWatermark = options.atWatermark;
    this.apply = options.apply;
  }

  /**
   * Room for n more records from `top` (E may be a new array after it): the held events moved to the front
   * of the store (positions 0 …), the new ones after them — one store reused by every chunk.
   */
  begin(n: number): void {
    const held = this.nHeld;
    if (this.top > held || (held + n) * this.words > this.E.length) this.compact(n);
    if (held + n > this.P.length) this.P = grown(this.P, Math.max(held + n, 2 * this.P.length));
    this.end = held;
  }

  /** Moves the held events to the front of the store, with room for n more: into a bigger store when it has no room, else through the spare E2. */
  private compact(n: number): void {
    const held = this.nHeld;
    const es = this.words;
    const E = this.E;
    const need = (held + n) * es;
    if (need > E.length) {
      const to = new Int32Array(Math.max(need, 2 * E.length));
      gather(E, this.P, held, to, es);
      this.E = to;
    } else {
      if (this.E2.length < held * es) this.E2 = new Int32Array(E.length);
      gather(E, this.P, held, this.E2, es);
      E.set(this.E2.subarray(0, held * es));
    }
    this.top = held;
  }

  /** The record at position `top` is written: held, or (behind the released time) applied at once and counted late. */
  commit(): void {
    const p = this.top;
    if (this.released[0] === 1) {
      const e = p * this.words;
      if (lt(this.E[e + E_HI]!, this.E[e + E_LO]!, this.released[1]!, this.released[2]!)) {
        this.late(p);
        return;
      }
    }
    this.P[this.end++] = p;
    this.top = p + 1;
  }

  /** A late event: applied alone; its position is free again. */
  private late(p: number): void {
    this.lateEvents++;
    this.single[0] = p;
    this.apply(this.single, 0, 1);
  }

  /** A switch of `cpu` at (hi, lo) was delivered: the CPU joins the watermark, which is at least that time for it. */
  switchAt(cpu: number, hi: number, lo: number): void {
    if (cpu >= this.cpuCap) this.growCpus(cpu);
    const W = this.W;
    const x = cpu * 3;
    if (W[x] === 0) {
      W[x] = 1;
      W[x + 1] = hi;
      W[x + 2] = lo;
      this.seen.push(cpu);
    } else if (lt(W[x + 1]!, W[x + 2]!, hi, lo)) {
      W[x + 1] = hi;
      W[x + 2] = lo;
    }
  }

  /** CPUs 0 … count − 1 in the watermark from the start (at the least time: nothing released before each CPU's first switch). */
  watchCpus(count: number): void {
    if (count > 0) this.growCpus(count - 1);
    for (let c = 0; c < count; c++) {
      if (this.W[c * 3] === 1) continue;
      this.W[c * 3] = 1;
      this.W[c * 3 + 1] = MIN32;
      this.W[c * 3 + 2] = 0;
      this.seen.push(c);
    }
  }

  private growCpus(cpu: number): void {
    let cap = Math.max(8, this.cpuCap);
    while (cap <= cpu) cap *= 2;
    this.W = grown(this.W, cap * 3);
    this.cpuCap = cap;
  }

  /** The events committed since begin() stay held with the others, unsorted, until the next release (memory: every one). */
  hold(): void {
    this.nHeld = this.end;
  }

  /**
   * Sorts the held events and those committed since begin(), and applies them up to the watermark — all of
   * them when `all` (the end of the trace), and never fewer than needed to keep at most `window` held.
   */
  release(all: boolean): void {
    const n = this.end;
    const es = this.words;
    if (n > this.nSorted) sortEvents(this.E, this.P, n, this.scratch, es);
    const E = this.E;
    const P = this.P;
    let cut = n;
    if (!all) {
      cut = this.watermarkCut(n);
      // …or, past the window, the first group after the events that must go
      const mustGo = n - this.window;
      if (cut < mustGo) {
        cut = mustGo;
        while (cut < n && E[P[cut]! * es + E_LO] === E[P[cut - 1]! * es + E_LO] && E[P[cut]! * es + E_HI] === E[P[cut - 1]! * es + E_HI]) cut++;
      }
    }
    if (cut > 0) {
      this.apply(P, 0, cut);
      const last = P[cut - 1]! * es;
      this.released[0] = 1;
      this.released[1] = this.E[last + E_HI]!;
      this.released[2] = this.E[last + E_LO]!;
      this.P.copyWithin(0, cut, n);
    }
    this.nHeld = this.nSorted = this.end = n - cut;
    if (this.nHeld > this.maxHeld) this.maxHeld = this.nHeld;
  }

  /** The first of the sorted events P[0, n) after the watermark (at its time, unless atWatermark); 0 before any CPU is in it. */
  private watermarkCut(n: number): number {
    const W = this.W;
    let hasW = false;
    let wHi = 0;
    let wLo = 0;
    for (const c of this.seen) {
      const x = c * 3;
      if (!hasW || lt(W[x + 1]!, W[x + 2]!, wHi, wLo)) {
        hasW = true;
        wHi = W[x + 1]!;
        wLo = W[x + 2]!;
      }
    }
    if (!hasW) return 0;
    // P is in time order: a binary search
    const E = this.E;
    const P = this.P;
    const es = this.words;
    const inclusive = this.atWatermark;
    let cut = 0;
    let hiEnd = n;
    while (cut < hiEnd) {
      const mid = (cut + hiEnd) >>> 1;
      const e = P[mid]! * es;
      const tHi = E[e + E_HI]!;
      const tLo = E[e + E_LO]!;
      if (inclusive ? lt(wHi, wLo, tHi, tLo) : !lt(tHi, tLo, wHi, wLo)) hiEnd = mid;
      else cut = mid + 1;
    }
    return cut;
  }
}

/** A copy of `a` with room for n elements. */
function grown(a: Int32Array, n: number): Int32Array {
  const b = new Int32Array(n);
  b.set(a);
  return b;
}

/** The records at positions P[0, n) of E (es words each) into positions 0 … n − 1 of `to` (P renumbered). */
function gather(E: Int32Array, P: Int32Array, n: number, to: Int32Array, es: number): void {
  for (let i = 0; i < n; i++) {
    const a = P[i]! * es;
    const b = i * es;
    for (let w = 0; w < es; w++) to[b + w] = E[a + w]!;
    P[i] = i;
  }
}

/** radix digits of the sort: 13 bits (two passes for a span below 2^26 ticks: a chunk's, mostly) */
const DIGIT = 13;
const DIGITS = 1 << DIGIT;

/** The sort's scratch: positions, the times relative to the least (words), the digit counts. */
class SortScratch {
  p = new Int32Array(0);
  lo = new Int32Array(0);
  hi = new Int32Array(0);
  p2 = new Int32Array(0);
  lo2 = new Int32Array(0);
  hi2 = new Int32Array(0);
  readonly counts = new Int32Array(DIGITS);
  reserve(n: number): void {
    if (n <= this.p.length) return;
    const cap = Math.max(n, 2 * this.p.length, 1024);
    this.p = new Int32Array(cap);
    this.lo = new Int32Array(cap);
    this.hi = new Int32Array(cap);
    this.p2 = new Int32Array(cap);
    this.lo2 = new Int32Array(cap);
    this.hi2 = new Int32Array(cap);
  }
}

/**
 * Sorts the record positions P[0, n) by (time, E_KEY), stably (so the order in P breaks ties: the held
 * events, then arrival): an LSD radix sort on the time less the least (exact 64-bit words; 13-bit digits,
 * those that are the same for every event skipped), then each run of one time by E_KEY, by insertion.
 * P is sorted in place.
 *
 * Each loop is a function of its own that returns right after it: V8 compiles a long loop on the stack
 * (OSR) before the code after it has run, and reuses that code on every later call — which would leave
 * the function at every call where that code first needs type feedback (a deoptimization per chunk).
 */
function sortEvents(E: Int32Array, P: Int32Array, n: number, t: SortScratch, es: number): void {
  if (n < 2) return;
  t.reserve(n);
  const least = P[leastAt(E, P, n, es)]! * es;
  const counts = t.counts;
  counts.fill(0);
  // the times relative to the least, and which bits they use; the first digit counted
  const orLo = relativeTimes(E, P, n, E[least + E_HI]!, E[least + E_LO]!, t.p, t.lo, t.hi, counts, es);
  const orHi = orOf(t.hi, n);
  let p = t.p;
  let lo = t.lo;
  let hi = t.hi;
  let p2 = t.p2;
  let lo2 = t.lo2;
  let hi2 = t.hi2;
  const passes = orHi === 0 ? 3 : 6;
  for (let pass = 0; pass < passes; pass++) {
    const word = pass < 3 ? lo : hi;
    const shift = (pass % 3) * DIGIT;
    if ((pass < 3 ? orLo : orHi) >>> shift === 0) {
      pass = pass < 3 ? 2 : 5; // the higher digits of this word are all 0
      continue;
    }
    if (pass > 0) {
      counts.fill(0);
      countDigits(word, shift, n, counts);
    }
    if (counts[(word[0]! >>> shift) & (DIGITS - 1)] === n) continue; // one digit for all
    digitStarts(counts);
    if (orHi === 0) scatter2(word, shift, n, counts, p, lo, p2, lo2); // the high words are all 0: they stay
    else {
      scatter3(word, shift, n, counts, p, lo, hi, p2, lo2, hi2);
      const th = hi;
      hi = hi2;
      hi2 = th;
    }
    const tp = p;
    p = p2;
    p2 = tp;
    const tl = lo;
    lo = lo2;
    lo2 = tl;
  }
  t.p = p;
  t.lo = lo;
  t.hi = hi;
  t.p2 = p2;
  t.lo2 = lo2;
  t.hi2 = hi2;
  orderTies(E, P, n, p, lo, hi, es);
}

/** The index in P[0, n) of the event of the least time (the first of them). */
function leastAt(E: Int32Array, P: Int32Array, n: number, es: number): number {
  let at = 0;
  let minHi = E[P[0]! * es + E_HI]!;
  let minLo = E[P[0]! * es + E_LO]!;
  for (let i = 1; i < n; i++) {
    const e = P[i]! * es;
    const hi = E[e + E_HI]!;
    const lo = E[e + E_LO]!;
    if (hi < minHi || (hi === minHi && (lo ^ MIN32) < (minLo ^ MIN32))) {
      minHi = hi;
      minLo = lo;
      at = i;
    }
  }
  return at;
}

/** p, lo, hi [0, n): the positions of P and their times less (minHi, minLo); the first digits counted; returns the OR of the low words. */
function relativeTimes(E: Int32Array, P: Int32Array, n: number, minHi: number, minLo: number, p: Int32Array, lo: Int32Array, hi: Int32Array, counts: Int32Array, es: number): number {
  let orLo = 0;
  for (let i = 0; i < n; i++) {
    const x = P[i]!;
    const e = x * es;
    const l = E[e + E_LO]!;
    const rl = (l - minLo) | 0;
    p[i] = x;
    lo[i] = rl;
    hi[i] = (E[e + E_HI]! - minHi - ((l ^ MIN32) < (minLo ^ MIN32) ? 1 : 0)) | 0;
    orLo |= rl;
    counts[rl & (DIGITS - 1)]!++;
  }
  return orLo;
}

/** The OR of a[0, n). */
function orOf(a: Int32Array, n: number): number {
  let or = 0;
  for (let i = 0; i < n; i++) or |= a[i]!;
  return or;
}

function countDigits(word: Int32Array, shift: number, n: number, counts: Int32Array): void {
  for (let i = 0; i < n; i++) counts[(word[i]! >>> shift) & (DIGITS - 1)]!++;
}

/** The counts of each digit into the position of its first event. */
function digitStarts(counts: Int32Array): void {
  let sum = 0;
  for (let d = 0; d < DIGITS; d++) {
    const c = counts[d]!;
    counts[d] = sum;
    sum += c;
  }
}

function scatter2(word: Int32Array, shift: number, n: number, counts: Int32Array, p: Int32Array, lo: Int32Array, p2: Int32Array, lo2: Int32Array): void {
  for (let i = 0; i < n; i++) {
    const k = counts[(word[i]! >>> shift) & (DIGITS - 1)]!++;
    p2[k] = p[i]!;
    lo2[k] = lo[i]!;
  }
}

function scatter3(word: Int32Array, shift: number, n: number, counts: Int32Array, p: Int32Array, lo: Int32Array, hi: Int32Array, p2: Int32Array, lo2: Int32Array, hi2: Int32Array): void {
  for (let i = 0; i < n; i++) {
    const k = counts[(word[i]! >>> shift) & (DIGITS - 1)]!++;
    p2[k] = p[i]!;
    lo2[k] = lo[i]!;
    hi2[k] = hi[i]!;
  }
}

/** P[0, n) from the sorted positions p (times lo, hi), each run of one time ordered by E_KEY (stably, by insertion). */
function orderTies(E: Int32Array, P: Int32Array, n: number, p: Int32Array, lo: Int32Array, hi: Int32Array, es: number): void {
  P[0] = p[0]!;
  for (let i = 1; i < n; i++) {
    const x = p[i]!;
    if (lo[i] !== lo[i - 1] || hi[i] !== hi[i - 1]) {
      P[i] = x;
      continue;
    }
    const key = E[x * es + E_KEY]!;
    let j = i;
    // within the run of this time (equal times are adjacent), after every event of a lower or equal key
    while (j > 0 && lo[j - 1] === lo[i] && hi[j - 1] === hi[i] && E[P[j - 1]! * es + E_KEY]! > key) {
      P[j] = P[j - 1]!;
      j--;
    }
    P[j] = x;
  }
}
