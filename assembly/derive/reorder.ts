// The time reorder of the WebAssembly derivations (cpuUsage, threadStates; docs/design/streaming.md): the
// twin of src/derive/reorder.ts (EventReorder), with native i64 times. Events are records of REC bytes
// in one store (the time at RE_TIME, the order at one time at RE_KEY: kind << 16 | cpu, the deriver's
// words after them), held, sorted by (time, key, arrival) and released up to the watermark — the least,
// over the CPUs seen, of the latest switch time delivered for that CPU — within a window; an event that
// arrives behind the released time is late (the deriver applies it at once).
//
// A chunk is begin(n), the records (written at `top`, then commit()), then releaseCut() — the deriver
// applies order[0, cut) — and releaseDone(cut); or hold() (a whole decode: kept unsorted until the next
// release). The sort is a stable LSD radix sort of the positions on
// the time less the least (radix.ts), then each run of one time by the key, by insertion: the order of the
// TS twin exactly. Memory: regions of the bump heap
// (runtime stub), replaced by twice larger ones when full (memory stays within twice the peak).

import { radixSortPairs } from './radix';

/** bytes of one record */
export const REC: i32 = 40;
/** the time (i64) and the key (i32) of a record */
export const RE_TIME: i32 = 0;
export const RE_KEY: i32 = 8;

/** Copies the record at src to dst (five words: memory.copy is a call per record). */
// @ts-ignore: decorator
@inline export function copyRecord(dst: usize, src: usize): void {
  store<u64>(dst, load<u64>(src));
  store<u64>(dst, load<u64>(src, 8), 8);
  store<u64>(dst, load<u64>(src, 16), 16);
  store<u64>(dst, load<u64>(src, 24), 24);
  store<u64>(dst, load<u64>(src, 32), 32);
}

/** A region of `bytes` bytes (zeroed), the old one's first `keep` bytes copied into it and the old one freed. */
export function regrow(old: usize, keep: usize, bytes: usize): usize {
  const p = heap.alloc(bytes);
  if (keep > 0) memory.copy(p, old, keep);
  memory.fill(p + keep, 0, bytes - keep);
  if (old != 0) heap.free(old);
  return p;
}

/** the record store, its room in records, the position of the next record */
export let E: usize = 0;
let eCap: i32 = 0;
export let top: i32 = 0;
/** a spare store (compaction target, swapped with E) */
let E2: usize = 0;
let e2Cap: i32 = 0;
/** positions (i32): the held ones (sorted up to nSorted), then those committed since begin() */
export let P: usize = 0;
let pCap: i32 = 0;
let end: i32 = 0;
let nHeld: i32 = 0;
let nSorted: i32 = 0;
/** events that arrived behind the released time; most events held at once */
export let lateEvents: i32 = 0;
export let maxHeld: i32 = 0;
let hasReleased: bool = false;
let releasedTime: i64 = 0;
/** per CPU: its latest switch time (i64) and whether it is in the watermark (u8); the CPUs in it (i32) */
let W: usize = 0;
let Wseen: usize = 0;
let cpuCap: i32 = 0;
let seen: usize = 0;
let nSeen: i32 = 0;
/** most events held between chunks */
let window: i32 = 1 << 18;
/** whether the events at the watermark's time go too (cpuUsage), or only those before it (threadStates) */
let atWatermark: bool = true;

/** The reorder's window and watermark rule (once per instance). */
export function reorderInit(windowEvents: i32, inclusive: bool): void {
  window = windowEvents;
  atWatermark = inclusive;
}

// @ts-ignore: decorator
@inline function timeAt(p: i32): i64 {
  return load<i64>(E + <usize>p * REC, RE_TIME);
}

// @ts-ignore: decorator
@inline function posAt(i: i32): i32 {
  return load<i32>(P + (<usize>i << 2));
}

/** Room for n more records from `top`: the held ones moved to the front of the store (positions 0 …). */
export function begin(n: i32): void {
  const held = nHeld;
  if (top > held || held + n > eCap) compact(n);
  if (held + n > pCap) {
    const cap = max(held + n, max(1024, 2 * pCap));
    P = regrow(P, <usize>pCap << 2, <usize>cap << 2);
    pCap = cap;
  }
  end = held;
}

/** The held records to positions 0 … of a store with room for n more (a bigger one when needed), P renumbered. */
function compact(n: i32): void {
  const held = nHeld;
  const need = held + n;
  let cap = eCap;
  if (need > cap) cap = max(need, 2 * cap);
  if (e2Cap < cap) {
    if (E2 != 0) heap.free(E2);
    E2 = heap.alloc(<usize>cap * REC);
    e2Cap = cap;
  }
  for (let i = 0; i < held; i++) {
    copyRecord(E2 + <usize>i * REC, E + <usize>posAt(i) * REC);
    store<i32>(P + (<usize>i << 2), i);
  }
  const t = E;
  E = E2;
  E2 = t;
  const tc = eCap;
  eCap = e2Cap;
  e2Cap = tc;
  top = held;
}

/** The record at `top` is written: held (true), or behind the released time (false: late, its position free again). */
export function commit(): bool {
  const p = top;
  if (hasReleased && timeAt(p) < releasedTime) {
    lateEvents++;
    return false;
  }
  store<i32>(P + (<usize>end << 2), p);
  end++;
  top = p + 1;
  return true;
}

/** A switch of `cpu` at `t` was delivered: the CPU joins the watermark, which is at least t for it. */
// @ts-ignore: decorator
@inline export function switchAt(cpu: i32, t: i64): void {
  if (cpu >= cpuCap) growCpus(cpu);
  const w = W + (<usize>cpu << 3);
  if (load<u8>(Wseen + <usize>cpu) == 0) {
    store<u8>(Wseen + <usize>cpu, 1);
    store<i64>(w, t);
    store<i32>(seen + (<usize>nSeen << 2), cpu);
    nSeen++;
  } else if (load<i64>(w) < t) store<i64>(w, t);
}

/** CPUs 0 … count − 1 in the watermark from the start (at the least time: nothing released before each CPU's first switch). */
export function watchCpus(count: i32): void {
  if (count > 0 && count - 1 >= cpuCap) growCpus(count - 1);
  for (let c = 0; c < count; c++) {
    if (load<u8>(Wseen + <usize>c) != 0) continue;
    store<u8>(Wseen + <usize>c, 1);
    store<i64>(W + (<usize>c << 3), i64.MIN_VALUE);
    store<i32>(seen + (<usize>nSeen << 2), c);
    nSeen++;
  }
}

function growCpus(cpu: i32): void {
  let cap = max(8, cpuCap);
  while (cap <= cpu) cap *= 2;
  W = regrow(W, <usize>cpuCap << 3, <usize>cap << 3);
  Wseen = regrow(Wseen, <usize>cpuCap, <usize>cap);
  seen = regrow(seen, <usize>cpuCap << 2, <usize>cap << 2);
  cpuCap = cap;
}

/** The records committed since begin() stay held with the others, unsorted, until the next release (memory: every one). */
export function hold(): void {
  nHeld = end;
}

/**
 * Sorts the held events and those committed since begin(); returns how many go (order P[0, cut)): up to
 * the watermark, all when `all`, never fewer than keep at most `window` held.
 */
export function releaseCut(all: bool): i32 {
  const n = end;
  if (n > nSorted) sortEvents(n);
  let cut = n;
  if (!all) {
    cut = watermarkCut(n);
    const mustGo = n - window;
    if (cut < mustGo) {
      cut = mustGo;
      while (cut < n && timeAt(posAt(cut)) == timeAt(posAt(cut - 1))) cut++;
    }
  }
  return cut;
}

/** The events P[0, cut) were applied: the rest stay held. */
export function releaseDone(cut: i32): void {
  const n = end;
  if (cut > 0) {
    hasReleased = true;
    releasedTime = timeAt(posAt(cut - 1));
    memory.copy(P, P + (<usize>cut << 2), <usize>(n - cut) << 2);
  }
  nHeld = nSorted = end = n - cut;
  if (nHeld > maxHeld) maxHeld = nHeld;
}

/** The first of the sorted events P[0, n) after the watermark (at its time, unless atWatermark); 0 before any CPU is in it. */
function watermarkCut(n: i32): i32 {
  if (nSeen == 0) return 0;
  let w = load<i64>(W + (<usize>load<i32>(seen) << 3));
  for (let i = 1; i < nSeen; i++) {
    const t = load<i64>(W + (<usize>load<i32>(seen + (<usize>i << 2)) << 3));
    if (t < w) w = t;
  }
  let cut = 0;
  let hiEnd = n;
  while (cut < hiEnd) {
    const mid = (cut + hiEnd) >>> 1;
    const t = timeAt(posAt(mid));
    if (atWatermark ? w < t : t >= w) hiEnd = mid;
    else cut = mid + 1;
  }
  return cut;
}

/** sort scratch: positions (i32) and relative times (u64), twice */
let sp: usize = 0;
let sk: usize = 0;
let sp2: usize = 0;
let sk2: usize = 0;
let sCap: i32 = 0;

function reserve(n: i32): void {
  if (n <= sCap) return;
  const cap = max(n, max(2 * sCap, 1024));
  if (sp != 0) {
    heap.free(sp);
    heap.free(sk);
    heap.free(sp2);
    heap.free(sk2);
  }
  sp = heap.alloc(<usize>cap << 2);
  sk = heap.alloc(<usize>cap << 3);
  sp2 = heap.alloc(<usize>cap << 2);
  sk2 = heap.alloc(<usize>cap << 3);
  sCap = cap;
}

/** Sorts P[0, n) by (time, key), stably (see the file comment). */
function sortEvents(n: i32): void {
  if (n < 2) return;
  reserve(n);
  let least = timeAt(posAt(0));
  for (let i = 1; i < n; i++) {
    const t = timeAt(posAt(i));
    if (t < least) least = t;
  }
  const other = radixSortPairs(sk, sp, sk2, sp2, n, relativeTimes(n, least));
  orderTies(n, other ? sp2 : sp, other ? sk2 : sk);
}

/** sp, sk [0, n): the positions of P and their times less `least`; returns the bits in which the times differ. */
function relativeTimes(n: i32, least: i64): u64 {
  const first = <u64>(timeAt(posAt(0)) - least);
  let varies: u64 = 0;
  for (let i = 0; i < n; i++) {
    const x = posAt(i);
    const r = <u64>(timeAt(x) - least);
    store<i32>(sp + (<usize>i << 2), x);
    store<u64>(sk + (<usize>i << 3), r);
    varies |= r ^ first;
  }
  return varies;
}

/** P[0, n) from the sorted positions p (times k), each run of one time ordered by the key (stably, by insertion). */
function orderTies(n: i32, p: usize, k: usize): void {
  store<i32>(P, load<i32>(p));
  for (let i = 1; i < n; i++) {
    const x = load<i32>(p + (<usize>i << 2));
    const t = load<u64>(k + (<usize>i << 3));
    if (t != load<u64>(k + (<usize>(i - 1) << 3))) {
      store<i32>(P + (<usize>i << 2), x);
      continue;
    }
    const key = load<i32>(E + <usize>x * REC, RE_KEY);
    let j = i;
    while (j > 0 && load<u64>(k + (<usize>(j - 1) << 3)) == t && load<i32>(E + <usize>posAt(j - 1) * REC, RE_KEY) > key) {
      store<i32>(P + (<usize>j << 2), posAt(j - 1));
      j--;
    }
    store<i32>(P + (<usize>j << 2), x);
  }
}
