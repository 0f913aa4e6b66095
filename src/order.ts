// Row orders: the one stable LSD radix sort of columns, and the time order of rows that are in time
// order per CPU already (decoded events: docs/format.md §A.7), by merging the CPUs. (The streaming
// derivations' held events are sorted in src/derive/reorder.ts: positions into their record store, by time
// then kind and cpu, with scratch reused from chunk to chunk.)
//
// The radix sort: rows ordered by keys of 32-bit unsigned words, least
// significant key first (a 64-bit value is two keys: its low word, then its high word). Digits of 11 bits
// (a 2,048-entry count table stays in the L1 cache and the scatter has 2,048 write heads), three passes per
// word; a digit that is the same for every row (found from the bits that differ from the first row's) is
// skipped without a pass. The columns that are still needed move with each pass — the keys not yet sorted
// on, the payload, and with radixSort every key — so a pass reads its arrays in order: no per-element
// indirection through a permutation (a cache miss each on large inputs), no comparator, no allocation per
// element.

const DIGIT_BITS = 11;
const DIGITS = 1 << DIGIT_BITS;
const MASK = DIGITS - 1;
const SHIFTS = [0, 11, 22] as const;

/**
 * The columns `keys` then `payload` (each holding at least n words) with their first n rows in the stable
 * order of the keys (keys[0] least significant, words read as unsigned): new arrays of n words, in that
 * order; the arguments are not modified.
 */
export function radixSort(keys: readonly Uint32Array[], payload: readonly Uint32Array[], n: number): Uint32Array[] {
  return sortColumns(keys, payload, n, true);
}

/** The stable permutation of rows 0 … n − 1 ordered by `keys` (as radixSort). */
export function radixOrder(keys: readonly Uint32Array[], n: number): Uint32Array {
  const rows = new Uint32Array(n);
  for (let i = 0; i < n; i++) rows[i] = i;
  return sortColumns(keys, [rows], n, false)[keys.length]!;
}

/** radixSort; `allKeys` false: the keys already sorted on stop moving (their returned arrays are not in order). */
function sortColumns(keys: readonly Uint32Array[], payload: readonly Uint32Array[], n: number, allKeys: boolean): Uint32Array[] {
  let cur: Uint32Array[] = [...keys, ...payload].map((c) => c.slice(0, n));
  if (n < 2) return cur;
  let next: Uint32Array[] = cur.map(() => new Uint32Array(n));
  const counts = new Uint32Array(DIGITS);
  const heads = new Uint32Array(DIGITS);
  for (let j = 0; j < keys.length; j++) {
    // the bits in which some row differs from the first: digits without any are skipped
    let varies = 0;
    {
      const key = cur[j]!;
      const first = key[0]!;
      for (let i = 1; i < n; i++) varies |= key[i]! ^ first;
    }
    for (const shift of SHIFTS) {
      if (((varies >>> shift) & MASK) === 0) continue;
      const key = cur[j]!;
      counts.fill(0);
      for (let i = 0; i < n; i++) counts[(key[i]! >>> shift) & MASK]!++;
      let sum = 0;
      for (let d = 0; d < DIGITS; d++) {
        const c = counts[d]!;
        counts[d] = sum;
        sum += c;
      }
      for (let k = allKeys ? 0 : j; k < cur.length; k++) {
        heads.set(counts);
        scatter(key, shift, heads, cur[k]!, next[k]!, n);
        const t = cur[k]!;
        cur[k] = next[k]!;
        next[k] = t;
      }
    }
  }
  return cur;
}

/** dst[heads[digit of key[i]]++] = src[i] for i < n. */
function scatter(key: Uint32Array, shift: number, heads: Uint32Array, src: Uint32Array, dst: Uint32Array, n: number): void {
  for (let i = 0; i < n; i++) dst[heads[(key[i]! >>> shift) & MASK]!++] = src[i]!;
}

/**
 * Rows 0 … n − 1 in the order of their signed 64-bit times `ts` (words: lo at 2i, hi at 2i + 1), ties in
 * row order. Rows in decode order are in time order per CPU (§A.7), so the rows are grouped by CPU (a
 * counting sort) and the CPUs' runs merged pairwise — log2(CPUs) linear passes over (time, row) pairs, the
 * times as exact doubles relative to the least; when the times span 2^53 ticks or more, or a CPU's rows are
 * not in time order (a damaged trace), the radix sort.
 */
export function timeOrder(ts: Uint32Array, cpu: Uint16Array, n: number): Uint32Array {
  let order = new Uint32Array(n);
  if (n === 0) return order;
  // the times relative to the least, as doubles (exact below 2^53)
  let minHi = ts[1]! | 0;
  let maxHi = minHi;
  for (let i = 1; i < n; i++) {
    const h = ts[2 * i + 1]! | 0;
    if (h < minHi) minHi = h;
    if (h > maxHi) maxHi = h;
  }
  if (maxHi - minHi >= 0x1fffff) return radixTimeOrder(ts, n);
  const rel = new Float64Array(n);
  let sorted = true;
  for (let i = 0; i < n; i++) {
    const v = ((ts[2 * i + 1]! | 0) - minHi) * 4294967296 + ts[2 * i]!;
    rel[i] = v;
    if (i > 0 && v < rel[i - 1]!) sorted = false;
  }
  if (sorted) {
    for (let i = 0; i < n; i++) order[i] = i;
    return order;
  }
  // grouped by CPU, each group in row order, the times beside the rows
  let cpus = 0;
  for (let i = 0; i < n; i++) if (cpu[i]! >= cpus) cpus = cpu[i]! + 1;
  const start = new Uint32Array(cpus + 1);
  for (let i = 0; i < n; i++) start[cpu[i]! + 1]!++;
  for (let c = 0; c < cpus; c++) start[c + 1]! += start[c]!;
  const at = start.slice(0, cpus);
  let key = new Float64Array(n);
  for (let i = 0; i < n; i++) {
    const k = at[cpu[i]!]!++;
    order[k] = i;
    key[k] = rel[i]!;
  }
  for (let c = 0; c < cpus; c++) {
    for (let k = start[c]! + 1; k < start[c + 1]!; k++) if (key[k]! < key[k - 1]!) return radixTimeOrder(ts, n); // a CPU out of time order
  }
  // runs [bounds[r], bounds[r + 1]) merged pairwise until one is left
  let bounds: number[] = [];
  for (let c = 0; c < cpus; c++) if (start[c + 1]! > start[c]!) bounds.push(start[c]!);
  bounds.push(n);
  let otherOrder = new Uint32Array(n);
  let otherKey = new Float64Array(n);
  while (bounds.length > 2) {
    const merged: number[] = [];
    for (let r = 0; r + 1 < bounds.length; r += 2) {
      const a = bounds[r]!;
      const m = bounds[r + 1]!;
      const b = r + 2 < bounds.length ? bounds[r + 2]! : m;
      merge(key, order, otherKey, otherOrder, a, m, b);
      merged.push(a);
    }
    merged.push(n);
    bounds = merged;
    [order, otherOrder] = [otherOrder, order];
    [key, otherKey] = [otherKey, key];
  }
  return order;
}

/** timeOrder by the radix sort (any input). */
function radixTimeOrder(ts: Uint32Array, n: number): Uint32Array {
  const lo = new Uint32Array(n);
  const hi = new Uint32Array(n);
  for (let i = 0; i < n; i++) {
    lo[i] = ts[2 * i]!;
    hi[i] = (ts[2 * i + 1]! ^ 0x80000000) >>> 0; // the sign bit flipped: negative times first
  }
  return radixOrder([lo, hi], n);
}

/** (dKey, dRow)[a, b) = the merge of the runs [a, m) and [m, b) of (key, row), ordered by (key, row). */
function merge(key: Float64Array, row: Uint32Array, dKey: Float64Array, dRow: Uint32Array, a: number, m: number, b: number): void {
  let i = a;
  let j = m;
  let k = a;
  while (i < m && j < b) {
    const ki = key[i]!;
    const kj = key[j]!;
    if (kj < ki || (kj === ki && row[j]! < row[i]!)) {
      dKey[k] = kj;
      dRow[k++] = row[j++]!;
    } else {
      dKey[k] = ki;
      dRow[k++] = row[i++]!;
    }
  }
  for (; i < m; i++, k++) {
    dKey[k] = key[i]!;
    dRow[k] = row[i]!;
  }
  for (; j < b; j++, k++) {
    dKey[k] = key[j]!;
    dRow[k] = row[j]!;
  }
}
