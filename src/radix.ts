// The one stable LSD radix sort of the project: rows ordered by keys of 32-bit unsigned words, least
// significant key first (a 64-bit value is two keys: its low word, then its high word). Digits of 11 bits
// (a 2,048-entry count table stays in the L1 cache and the scatter has 2,048 write heads), three passes per
// word; a pass whose digit is the same for every row moves nothing and is skipped. Every column — the keys
// and the payload the caller wants in the new order — moves with each pass, so a pass reads its arrays in
// order: no per-element indirection through a permutation (a cache miss each on large inputs), no
// comparator, no allocation per element.

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
  let cur: Uint32Array[] = [...keys, ...payload].map((c) => c.slice(0, n));
  if (n < 2) return cur;
  let next: Uint32Array[] = cur.map(() => new Uint32Array(n));
  const counts = new Uint32Array(DIGITS);
  const heads = new Uint32Array(DIGITS);
  for (let j = 0; j < keys.length; j++) {
    for (const shift of SHIFTS) {
      const key = cur[j]!;
      counts.fill(0);
      for (let i = 0; i < n; i++) counts[(key[i]! >>> shift) & MASK]!++;
      if (counts[(key[0]! >>> shift) & MASK] === n) continue;
      let sum = 0;
      for (let d = 0; d < DIGITS; d++) {
        const c = counts[d]!;
        counts[d] = sum;
        sum += c;
      }
      for (let k = 0; k < cur.length; k++) {
        heads.set(counts);
        scatter(key, shift, heads, cur[k]!, next[k]!, n);
      }
      [cur, next] = [next, cur];
    }
  }
  return cur;
}

/** The stable permutation of rows 0 … n − 1 ordered by `keys` (as radixSort). */
export function radixOrder(keys: readonly Uint32Array[], n: number): Uint32Array {
  const rows = new Uint32Array(n);
  for (let i = 0; i < n; i++) rows[i] = i;
  return radixSort(keys, [rows], n)[keys.length]!;
}

/** dst[heads[digit of key[i]]++] = src[i] for i < n. */
function scatter(key: Uint32Array, shift: number, heads: Uint32Array, src: Uint32Array, dst: Uint32Array, n: number): void {
  for (let i = 0; i < n; i++) dst[heads[(key[i]! >>> shift) & MASK]!++] = src[i]!;
}
