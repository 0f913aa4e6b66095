// The derivations' time order (assembly/derive/: the reorder's sort, reorder.ts; the `threads` lifetimes'
// order, lifetimes.ts): a stable LSD radix sort of (key, value) pairs — u64 keys (times less the least), i32
// values (positions, rows) — with 13-bit digits (two passes for a span below 2^26 ticks: a chunk's, mostly), a digit the same for every key skipped, every digit position counted in one pass. Its TypeScript
// twins sort the same keys as 32-bit words (src/order.ts radixTimeOrder, src/derive/reorder.ts sortEvents).

const DIGIT: u64 = 13;
const DIGITS: i32 = 1 << <i32>DIGIT;
const MASK: u64 = <u64>DIGITS - 1;
/** digit positions of a u64 key */
const PLACES: i32 = 5;
/** the counts of every digit position (allocated on first use): all counted in one pass over the keys */
let counts: usize = 0;

/** The heap is reset (lifetimes.ts ltReset): the counts' region is gone. */
export function radixReset(): void {
  counts = 0;
}

/**
 * Sorts the n pairs (keys at k: u64; values at v: i32) by key, stably, with k2 and v2 (room for n each) as the
 * other buffers; `varies`: the bits in which some keys differ (the OR of every key XOR the first). Returns
 * false when the sorted pairs are in (k, v), true when in (k2, v2).
 */
export function radixSortPairs(k: usize, v: usize, k2: usize, v2: usize, n: i32, varies: u64): bool {
  if (counts == 0) counts = heap.alloc(<usize>(PLACES * DIGITS) << 2);
  // the digit positions where keys differ: counted at once
  let places = 0;
  for (let d = 0; d < PLACES; d++) if (((varies >> (<u64>d * DIGIT)) & MASK) != 0) places |= 1 << d;
  if (places == 0) return false;
  for (let d = 0; d < PLACES; d++) if ((places >> d) & 1) memory.fill(counts + (<usize>(d * DIGITS) << 2), 0, <usize>DIGITS << 2);
  for (let i = 0; i < n; i++) {
    const key = load<u64>(k + (<usize>i << 3));
    for (let d = 0, m = places; m != 0; d++, m >>= 1) {
      if ((m & 1) == 0) continue;
      const a = counts + ((<usize>(d * DIGITS) + <usize>((key >> (<u64>d * DIGIT)) & MASK)) << 2);
      store<i32>(a, load<i32>(a) + 1);
    }
  }
  let other = false;
  for (let d = 0; d < PLACES; d++) {
    if (((places >> d) & 1) == 0) continue;
    const c = counts + (<usize>(d * DIGITS) << 2);
    let sum = 0;
    for (let x = 0; x < DIGITS; x++) {
      const a = c + (<usize>x << 2);
      const m = load<i32>(a);
      store<i32>(a, sum);
      sum += m;
    }
    const shift = <u64>d * DIGIT;
    for (let i = 0; i < n; i++) {
      const key = load<u64>(k + (<usize>i << 3));
      const a = c + (<usize>((key >> shift) & MASK) << 2);
      const to = load<i32>(a);
      store<i32>(a, to + 1);
      store<u64>(k2 + (<usize>to << 3), key);
      store<i32>(v2 + (<usize>to << 2), load<i32>(v + (<usize>i << 2)));
    }
    const tk = k;
    k = k2;
    k2 = tk;
    const tv = v;
    v = v2;
    v2 = tv;
    other = !other;
  }
  return other;
}
