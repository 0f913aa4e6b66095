// Row orders: the one stable LSD radix sort of the project, and the time order of rows that are in time
// order per CPU already (decoded events: docs/format.md §A.7), by merging the CPUs.
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
 * counting sort) and the CPUs' runs merged pairwise — log2(CPUs) linear passes; when a CPU's rows are not
 * in time order (a damaged trace), the radix sort.
 */
export function timeOrder(ts: Uint32Array, cpu: Uint16Array, n: number): Uint32Array {
  let sorted = true;
  for (let i = 1; i < n && sorted; i++) sorted = !before(ts, i, i - 1);
  let order = new Uint32Array(n);
  if (sorted) {
    for (let i = 0; i < n; i++) order[i] = i;
    return order;
  }
  // grouped by CPU, each group in row order
  let cpus = 0;
  for (let i = 0; i < n; i++) if (cpu[i]! >= cpus) cpus = cpu[i]! + 1;
  const start = new Uint32Array(cpus + 1);
  for (let i = 0; i < n; i++) start[cpu[i]! + 1]!++;
  for (let c = 0; c < cpus; c++) start[c + 1]! += start[c]!;
  const at = start.slice(0, cpus);
  for (let i = 0; i < n; i++) order[at[cpu[i]!]!++] = i;
  for (let k = 1; k < n; k++) {
    if (cpu[order[k]!] === cpu[order[k - 1]!] && before(ts, order[k]!, order[k - 1]!)) {
      // a CPU out of time order
      const lo = new Uint32Array(n);
      const hi = new Uint32Array(n);
      for (let i = 0; i < n; i++) {
        lo[i] = ts[2 * i]!;
        hi[i] = (ts[2 * i + 1]! ^ 0x80000000) >>> 0; // the sign bit flipped: negative times first
      }
      return radixOrder([lo, hi], n);
    }
  }
  // runs [bounds[r], bounds[r + 1]) merged pairwise until one is left
  let bounds: number[] = [];
  for (let c = 0; c < cpus; c++) if (start[c + 1]! > start[c]!) bounds.push(start[c]!);
  bounds.push(n);
  let other = new Uint32Array(n);
  while (bounds.length > 2) {
    const merged: number[] = [];
    for (let r = 0; r + 1 < bounds.length; r += 2) {
      const a = bounds[r]!;
      const m = bounds[r + 1]!;
      const b = r + 2 < bounds.length ? bounds[r + 2]! : m;
      merge(ts, order, other, a, m, b);
      merged.push(a);
    }
    merged.push(n);
    bounds = merged;
    [order, other] = [other, order];
  }
  return order;
}

/** Whether row x is before row y: an earlier time, or the same time and a lower row. */
function before(ts: Uint32Array, x: number, y: number): boolean {
  const hx = ts[2 * x + 1]! | 0;
  const hy = ts[2 * y + 1]! | 0;
  if (hx !== hy) return hx < hy;
  const lx = ts[2 * x]!;
  const ly = ts[2 * y]!;
  return lx !== ly ? lx < ly : x < y;
}

/** dst[a, b) = the merge of the ordered runs src[a, m) and src[m, b). */
function merge(ts: Uint32Array, src: Uint32Array, dst: Uint32Array, a: number, m: number, b: number): void {
  let i = a;
  let j = m;
  let k = a;
  while (i < m && j < b) dst[k++] = before(ts, src[j]!, src[i]!) ? src[j++]! : src[i++]!;
  while (i < m) dst[k++] = src[i++]!;
  while (j < b) dst[k++] = src[j++]!;
}
