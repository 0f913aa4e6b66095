// Distributions of 64-bit durations folded row by row in bounded memory, for the CPU analysis (cpu.ts):
// - LogHistograms: percentiles per group (thread) from log-bucketed histograms, mergeable into any grouping
//   (process, whole trace) at the end;
// - LongestReady: the N longest ready delays, a bounded heap over typed arrays.
// Values come as (lo, hi) 32-bit words as int32 (the cpuUsage columns' and the deriver's staged words):
// neither folds an object, a BigInt or a closure per row.
//
// Why a sketch and not exact percentiles: exact ones need every value of every group (memory proportional
// to the switch-ins, unbounded for `cpu` on a large file). The histograms keep one counter per (group,
// bucket) in use — at most groups × 4,439 buckets (BUCKETS) whatever the number of rows — and stay exact to merge.
//
// Method (DDSketch's logarithmic mapping, relative accuracy α = 1 %): with γ = (1 + α) / (1 − α), a value
// x > 0 falls in bucket i = ⌈log_γ x⌉, which holds (γ^(i−1), γ^i]; negative values in the mirrored buckets
// of −x, 0 in a bucket of its own. The p-th percentile is the nearest-rank one — the value of rank ⌈p·n/100⌉
// (1-based) among the n values in order; the sketch walks its buckets in value order to the bucket of that
// rank and answers its representative 2γ^i / (γ + 1), rounded to a whole tick and kept ≤ the exact maximum.
// Error: every value in bucket i is within α of the representative, so |estimate − exact| ≤ 1 % of |exact|
// + ½ tick (the rounding); values below 50 ticks come out exact (their bucket's representative rounds to
// them); values beyond 2^53 ticks are mapped from their nearest double (2^−53 more). The maximum is exact.

export const RELATIVE_ACCURACY = 0.01;
const GAMMA = (1 + RELATIVE_ACCURACY) / (1 - RELATIVE_ACCURACY);
const LN_GAMMA = Math.log(GAMMA);
/** the bucket index of 2^64 (|x| ≤ 2^63 maps below it) */
const MAX_INDEX = Math.ceil((64 * Math.LN2) / LN_GAMMA);
/** key (value order): negative buckets MAX_INDEX − i, zero ZERO_KEY, positive ZERO_KEY + 1 + i */
const ZERO_KEY = MAX_INDEX + 1;
/** 2^32 */
const WORD = 4294967296;
/** x ^ MIN32 orders the int32 bits of u32 values as the u32 values */
const MIN32 = -0x80000000;

/** keyOf's mapping, for its twin in the WebAssembly fold (assembly/derive/cpu-fold.ts: the same doubles) */
export const KEY_MAPPING = { lnGamma: LN_GAMMA, maxIndex: MAX_INDEX } as const;

/** The bucket key of the 64-bit value (lo, hi) (int32 words; exported: the oracle of the WebAssembly fold's, test/cpu-fold-wasm.test.ts). */
export function keyOf(lo: number, hi: number): number {
  const x = hi * WORD + (lo >>> 0); // exact below 2^53, the nearest double above
  if (x === 0) return ZERO_KEY;
  const i = Math.min(MAX_INDEX, Math.max(0, Math.ceil(Math.log(Math.abs(x)) / LN_GAMMA)));
  return x > 0 ? ZERO_KEY + 1 + i : MAX_INDEX - i;
}

/** The representative value of a bucket key, a whole number of ticks (as a double). */
function valueOf(key: number): number {
  if (key === ZERO_KEY) return 0;
  const i = key > ZERO_KEY ? key - ZERO_KEY - 1 : MAX_INDEX - key;
  const v = Math.round((2 * GAMMA ** i) / (GAMMA + 1));
  return key > ZERO_KEY ? v : -v;
}

/** the buckets one group can use (negative, zero and positive values of 64 bits) */
export const BUCKETS = 2 * ZERO_KEY + 1;

/** The nearest-rank percentiles asked of every distribution. */
export const PERCENTILES = [50, 90, 99] as const;

/** The rank (1-based) of the p-th percentile of n values: ⌈p·n/100⌉ in integers (no rounding of p/100). */
export function percentileRank(p: number, n: number): number {
  return Math.max(1, Math.floor((p * n + 99) / 100));
}

/** A summarized distribution: its count, the PERCENTILES' estimates and the exact maximum (null: no value). */
export interface DistributionTicks {
  count: number;
  percentiles: (bigint | null)[];
  max: bigint | null;
}

/**
 * Log-bucketed histograms of 64-bit values, one per group (a small integer the caller assigns, e.g. a
 * thread slot): one open-addressing table of (group, key) → count, and each group's exact maximum.
 * A slot of the table is two doubles side by side — the cell g · BUCKETS + key + 1 (0: empty; exact below
 * 2^53, so up to 2^40 groups) and its count — so a value costs one cache line in the common case.
 */
export class LogHistograms {
  private n = 0;
  /** slot s: [2s] the cell + 1 (0: empty), [2s + 1] its count */
  private table: Float64Array = new Float64Array(2 * 1024);
  private mask = 1023;
  /** 32 − log2(slots): a hash's top bits pick the slot */
  private shift = 22;
  /** per group: the maximum's words, and 1 once a value came */
  private maxHi = new Int32Array(0);
  private maxLo = new Int32Array(0);
  private seen = new Uint8Array(0);

  /** @param enabled false: add() keeps nothing (a caller that does not want the distributions) */
  constructor(readonly enabled = true) {}

  /** (group, bucket) counters held: at most groups × BUCKETS, whatever the number of values */
  get size(): number {
    return this.n;
  }

  /** Room for groups 0 … cap − 1. */
  growGroups(cap: number): void {
    if (cap <= this.seen.length) return;
    const maxHi = new Int32Array(cap);
    const maxLo = new Int32Array(cap);
    const seen = new Uint8Array(cap);
    maxHi.set(this.maxHi);
    maxLo.set(this.maxLo);
    seen.set(this.seen);
    this.maxHi = maxHi;
    this.maxLo = maxLo;
    this.seen = seen;
  }

  /** Adds the value (lo, hi) (int32 words) to group g (below the growGroups capacity). */
  add(g: number, lo: number, hi: number): void {
    if (!this.enabled) return;
    this.addMax(g, lo, hi);
    this.addCount(g, keyOf(lo, hi), 1);
  }

  /** Group g's maximum, at least the value (lo, hi) (int32 words). */
  addMax(g: number, lo: number, hi: number): void {
    if (this.seen[g] === 0 || hi > this.maxHi[g]! || (hi === this.maxHi[g] && (lo ^ MIN32) > (this.maxLo[g]! ^ MIN32))) {
      this.seen[g] = 1;
      this.maxHi[g] = hi;
      this.maxLo[g] = lo;
    }
  }

  /** c more values of bucket key k in group g (add(), or a fold's counters: the WebAssembly one's). */
  addCount(g: number, k: number, count: number): void {
    const cell = g * BUCKETS + k + 1;
    const table = this.table;
    const mask = this.mask;
    let h = Math.imul(Math.imul(g, 0x9e3779b1) ^ k, 0x85ebca6b) >>> this.shift;
    for (; ; h = (h + 1) & mask) {
      const c = table[2 * h]!;
      if (c === cell) {
        table[2 * h + 1]! += count;
        return;
      }
      if (c === 0) break;
    }
    table[2 * h] = cell;
    table[2 * h + 1] = count;
    if (2 * ++this.n > mask + 1) this.rehash();
  }

  /**
   * Adds the counts of a table in this layout (`cells` in use; the WebAssembly fold's, assembly/derive/cpu-fold.ts),
   * its group g counted in group to[g] — or, with `to` null and nothing here yet, takes the table itself.
   */
  merge(table: Float64Array, cells: number, to: Int32Array | null): void {
    if (!this.enabled) return;
    if (to === null && this.n === 0) {
      const slots = table.length / 2;
      this.table = table;
      this.mask = slots - 1;
      this.shift = 32 - Math.log2(slots);
      this.n = cells;
      return;
    }
    for (let s = 0; s < table.length; s += 2) {
      const cell = table[s]!;
      if (cell === 0) continue;
      const g = Math.floor((cell - 1) / BUCKETS);
      this.addCount(to === null ? g : to[g]!, cell - 1 - g * BUCKETS, table[s + 1]!);
    }
  }

  private rehash(): void {
    const old = this.table;
    const size = 2 * (this.mask + 1);
    const table = new Float64Array(2 * size);
    const mask = size - 1;
    const shift = this.shift - 1;
    for (let s = 0; s < old.length; s += 2) {
      const cell = old[s]!;
      if (cell === 0) continue;
      const g = Math.floor((cell - 1) / BUCKETS);
      const k = cell - 1 - g * BUCKETS;
      let h = Math.imul(Math.imul(g, 0x9e3779b1) ^ k, 0x85ebca6b) >>> shift;
      while (table[2 * h] !== 0) h = (h + 1) & mask;
      table[2 * h] = cell;
      table[2 * h + 1] = old[s + 1]!;
    }
    this.table = table;
    this.mask = mask;
    this.shift = shift;
  }

  /** The exact maximum of group g (null: no value). */
  private maxOf(g: number): bigint | null {
    return this.seen[g] === 1 ? BigInt.asIntN(64, (BigInt(this.maxHi[g]!) << 32n) | BigInt(this.maxLo[g]! >>> 0)) : null;
  }

  /**
   * The distributions of `targets` merged groups: group g counts in target into[g] (−1: in none). Merging
   * adds the groups' bucket counts (the sketch of the union is the union of the sketches: no error added).
   * The counters are ordered by (target, key) with two counting sorts — by key, then stably by target — in
   * time proportional to the counters held, BUCKETS and targets.
   */
  summarize(into: Int32Array, targets: number): DistributionTicks[] {
    const out: DistributionTicks[] = [];
    const max: (bigint | null)[] = new Array(targets).fill(null);
    for (let g = 0; g < into.length; g++) {
      const t = into[g]!;
      const m = t < 0 ? null : this.maxOf(g);
      if (m !== null && (max[t] === null || m > max[t]!)) max[t] = m;
    }
    // the counters of the targets: their key, target and count, in table order
    const table = this.table;
    const keyAt = new Int32Array(this.n);
    const targetAt = new Int32Array(this.n);
    const countAt = new Float64Array(this.n);
    let m = 0;
    for (let s = 0; s < table.length; s += 2) {
      const cell = table[s]!;
      if (cell === 0) continue;
      const g = Math.floor((cell - 1) / BUCKETS);
      const t = g < into.length ? into[g]! : -1;
      if (t < 0) continue;
      keyAt[m] = cell - 1 - g * BUCKETS;
      targetAt[m] = t;
      countAt[m++] = table[s + 1]!;
    }
    const byKey = countingOrder(keyAt, m, BUCKETS, null);
    const order = countingOrder(targetAt, m, targets, byKey);
    let at = 0;
    for (let t = 0; t < targets; t++) {
      const from = at;
      let n = 0;
      while (at < m && targetAt[order[at]!] === t) n += countAt[order[at++]!]!;
      const percentiles: (bigint | null)[] = [];
      for (const p of PERCENTILES) {
        if (n === 0) {
          percentiles.push(null);
          continue;
        }
        const rank = percentileRank(p, n);
        let seen = 0;
        let e = from;
        // merged entries of one key follow each other: the rank falls in the key whose counts reach it
        while (seen + countAt[order[e]!]! < rank) seen += countAt[order[e++]!]!;
        const v = BigInt(valueOf(keyAt[order[e]!]!));
        percentiles.push(v > max[t]! ? max[t]! : v);
      }
      out.push({ count: n, percentiles, max: max[t]! });
    }
    return out;
  }
}

/**
 * A stable counting sort of entries 0 … m − 1 by value[e] (0 … range − 1), taken in the order `after` gives
 * (null: 0 … m − 1): the entries in order of value, ties in the order they came.
 */
function countingOrder(value: Int32Array, m: number, range: number, after: Int32Array | null): Int32Array {
  const start = new Int32Array(range + 1);
  for (let e = 0; e < m; e++) start[value[e]! + 1]!++;
  for (let v = 0; v < range; v++) start[v + 1]! += start[v]!;
  const order = new Int32Array(m);
  for (let i = 0; i < m; i++) {
    const e = after === null ? i : after[i]!;
    order[start[value[e]!]!++] = e;
  }
  return order;
}

/**
 * The N longest ready delays: a min-heap of capacity N over typed arrays (its root the shortest kept), so
 * a row costs one comparison of its ready duration with the root's unless it is among the N longest so
 * far. Order (longest first): ready descending, then switchInTime, cpu, thread, process, readying thread
 * and process ascending — a total order, so the list does not depend on the order the rows come in.
 */
export class LongestReady {
  private size = 0;
  private cap = 0;
  // one field per array, entry `cap` a scratch for the candidate
  private readyHi = new Int32Array(1);
  private readyLo = new Int32Array(1);
  private inHi = new Int32Array(1);
  private inLo = new Int32Array(1);
  private cpu = new Int32Array(1);
  private tid = new Int32Array(1);
  private pid = new Int32Array(1);
  private readyingTid = new Int32Array(1);
  private readyingPid = new Int32Array(1);
  /** bit 0: pid known, 1: readying thread known, 2: readying process known */
  private known = new Int32Array(1);

  /** keeps the `limit` longest (0: none); the arrays grow with the rows kept, up to limit + 1 entries */
  constructor(readonly limit: number) {}

  /** Offers a row: ready (lo, hi), switch-in (lo, hi), cpu, ids as int32 bits, `known` bits as above. */
  offer(rLo: number, rHi: number, inLo: number, inHi: number, cpu: number, tid: number, pid: number, readyingTid: number, readyingPid: number, known: number): void {
    if (this.limit === 0) return;
    if (this.size === this.limit) {
      // fast reject: shorter than the shortest kept
      const h = this.readyHi[0]!;
      if (rHi < h || (rHi === h && (rLo ^ MIN32) < (this.readyLo[0]! ^ MIN32))) return;
    }
    if (this.size === this.cap && this.size < this.limit) this.grow();
    const full = this.size === this.limit;
    const c = full ? this.cap : this.size;
    this.readyHi[c] = rHi;
    this.readyLo[c] = rLo;
    this.inHi[c] = inHi;
    this.inLo[c] = inLo;
    this.cpu[c] = cpu;
    this.tid[c] = tid;
    // an unknown id is 0 (the cell may hold anything): the order stays the same whatever it held
    this.pid[c] = known & 1 ? pid : 0;
    this.readyingTid[c] = known & 2 ? readyingTid : 0;
    this.readyingPid[c] = known & 4 ? readyingPid : 0;
    this.known[c] = known;
    if (!full) {
      // room left: sift the new entry up
      let i = this.size++;
      while (i > 0) {
        const p = (i - 1) >> 1;
        if (!this.before(p, i)) break;
        this.swap(i, p);
        i = p;
      }
      return;
    }
    if (!this.before(c, 0)) return; // not longer than the root (tie order included)
    this.move(c, 0);
    let i = 0;
    for (;;) {
      const l = 2 * i + 1;
      if (l >= this.size) break;
      const r = l + 1;
      const m = r < this.size && this.before(l, r) ? r : l; // the child that ranks last
      if (!this.before(i, m)) break;
      this.swap(i, m);
      i = m;
    }
  }

  /** Whether entry a ranks before entry b in the list (a longer delay, or the tie order). */
  private before(a: number, b: number): boolean {
    let d = this.readyHi[a]! - this.readyHi[b]!;
    if (d !== 0) return d > 0;
    d = (this.readyLo[a]! ^ MIN32) - (this.readyLo[b]! ^ MIN32);
    if (d !== 0) return d > 0;
    d = this.inHi[a]! - this.inHi[b]!;
    if (d === 0) d = (this.inLo[a]! ^ MIN32) - (this.inLo[b]! ^ MIN32);
    if (d === 0) d = this.cpu[a]! - this.cpu[b]!;
    if (d === 0) d = (this.tid[a]! ^ MIN32) - (this.tid[b]! ^ MIN32);
    if (d === 0) d = this.known[a]! - this.known[b]!;
    if (d === 0) d = (this.pid[a]! ^ MIN32) - (this.pid[b]! ^ MIN32);
    if (d === 0) d = (this.readyingTid[a]! ^ MIN32) - (this.readyingTid[b]! ^ MIN32);
    if (d === 0) d = (this.readyingPid[a]! ^ MIN32) - (this.readyingPid[b]! ^ MIN32);
    return d < 0;
  }

  private move(from: number, to: number): void {
    this.swap(from, to); // the scratch entry is not kept: swapping is moving
  }

  private swap(a: number, b: number): void {
    swap(this.readyHi, a, b);
    swap(this.readyLo, a, b);
    swap(this.inHi, a, b);
    swap(this.inLo, a, b);
    swap(this.cpu, a, b);
    swap(this.tid, a, b);
    swap(this.pid, a, b);
    swap(this.readyingTid, a, b);
    swap(this.readyingPid, a, b);
    swap(this.known, a, b);
  }

  /** Capacity doubled (up to the limit), the scratch entry after it. */
  private grow(): void {
    const cap = Math.min(this.limit, Math.max(16, 2 * this.cap));
    const grown = (f: Int32Array): Int32Array<ArrayBuffer> => {
      const g = new Int32Array(cap + 1);
      g.set(f.subarray(0, this.size));
      return g;
    };
    this.readyHi = grown(this.readyHi);
    this.readyLo = grown(this.readyLo);
    this.inHi = grown(this.inHi);
    this.inLo = grown(this.inLo);
    this.cpu = grown(this.cpu);
    this.tid = grown(this.tid);
    this.pid = grown(this.pid);
    this.readyingTid = grown(this.readyingTid);
    this.readyingPid = grown(this.readyingPid);
    this.known = grown(this.known);
    this.cap = cap;
  }

  /** The entries kept, longest first: 64-bit values as bigints, ids as u32 (null where not known). */
  list(): { ready: bigint; switchInTime: bigint; cpu: number; threadId: number; processId: number | null; readyingThreadId: number | null; readyingProcessId: number | null }[] {
    const idx = Array.from({ length: this.size }, (_, i) => i);
    idx.sort((a, b) => (this.before(a, b) ? -1 : this.before(b, a) ? 1 : 0));
    const i64 = (hi: number, lo: number) => BigInt.asIntN(64, (BigInt(hi) << 32n) | BigInt(lo >>> 0));
    return idx.map((i) => ({
      ready: i64(this.readyHi[i]!, this.readyLo[i]!),
      switchInTime: i64(this.inHi[i]!, this.inLo[i]!),
      cpu: this.cpu[i]!,
      threadId: this.tid[i]! >>> 0,
      processId: this.known[i]! & 1 ? this.pid[i]! >>> 0 : null,
      readyingThreadId: this.known[i]! & 2 ? this.readyingTid[i]! >>> 0 : null,
      readyingProcessId: this.known[i]! & 4 ? this.readyingPid[i]! >>> 0 : null,
    }));
  }
}

function swap(f: Int32Array, a: number, b: number): void {
  const t = f[a]!;
  f[a] = f[b]!;
  f[b] = t;
}
