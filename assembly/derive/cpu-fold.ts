// The `cpu` command's fold beside the rows (foldInit): the cpuUsage core's completed rows summed per
// (newThreadId, newProcessId or null) slot here instead of being staged to env.drain, so no row crosses
// to JS. The twin of CpuAnalyzer.addStaged (src/analysis/cpu.ts) without a selection or `--worst`: the
// switch-ins, the exact sums of cpuUsage (next − in), ready (in − readyTime) and waits (readyTime −
// lastSwitchOut) under the same valid bits (128-bit: a sum of i64 values never wraps), the span of the
// rows' times and the highest cpu + 1; with histograms, the ready and wait LogHistograms' tables
// (src/analysis/distributions.ts: the same bucket of a value, its maximum, the same table layout). Slots are made in the order
// rows are folded — the order the analyzer would see them staged — so its slots, ties included, come out
// the same. At finish the JS side reads the slots (foldSlotPtr: FSB bytes each, the F_ layout of
// src/derive/cpu-usage.ts) once and takes the histograms' tables (foldHistPtr) as they are; test/cpu-fold-wasm.test.ts holds the
// analysis to the staged one's.
import * as R from '../generated/registry';
import { regrow } from './reorder';

/** JS's Math.log: the bucket of a value whose log lands within 1e-9 of a bucket boundary is decided by it (the analyzer's keyOf uses it). */
// @ts-ignore: decorator
@external("Math", "log")
declare function jsLog(x: f64): f64;

/** the core's completed rows are folded here (foldInit), not staged */
export let folding: bool = false;
let histograms: bool = false;
let lnGamma: f64 = 0;
let maxIndex: i32 = 0;

// Slot record: FSB bytes, one cache line (the F_ layout of src/derive/cpu-usage.ts, as int32 words there).
// The sums' low 64 bits are here, their high 64 bits (which change only with a negative value or a carry)
// in FH: FHB bytes per slot, 0 cpu, 8 ready, 16 wait.
const FSB: i32 = 64;
const F_TID: i32 = 0;
const F_PID: i32 = 4;
const F_KNOWN: i32 = 8;
const F_SEEN: i32 = 12; // 1: a ready value came, 2: a wait value came
const F_IN: i32 = 16; // i64 switch-ins
const F_CPU: i32 = 24; // u64: the low 64 bits of the sum
const F_READY: i32 = 32;
const F_WAIT: i32 = 40;
const F_READY_MAX: i32 = 48; // i64
const F_WAIT_MAX: i32 = 56; // i64
const FHB: i32 = 24;

let FS: usize = 0;
let FH: usize = 0;
let fsCap: i32 = 0;
let nFold: i32 = 0;
/** per deriver thread slot (R_NEW_SLOT): the fold slot + 1 it had last (0: none) */
let bySlot: usize = 0;
let bySlotCap: i32 = 0;
/** fold slot + 1 per hash bucket (0: empty) */
let buckets: usize = 0;
let bucketCap: i32 = 0;
let bucketShift: i32 = 0;
let rows: f64 = 0;
let first: i64 = i64.MAX_VALUE;
let last: i64 = i64.MIN_VALUE;
let cpus: i32 = 0;

// Histograms: per distribution d (0 ready, 1 wait) a table laid out as LogHistograms' (distributions.ts),
// so that it takes the table as it is: slots of two f64, the cell g · BUCKETS + key + 1 (0: empty; g the
// fold slot) and its count, placed by the same hash of (g, key); it grows at 3/4 full (LogHistograms at 1/2:
// it rehashes on its next add). Its state: HS bytes at hs + d · HS.
const HS: i32 = 16;
const H_TABLE: i32 = 0; // usize
const H_CAP: i32 = 4; // slots, a power of 2
const H_SHIFT: i32 = 8; // 32 − log2(slots)
const H_N: i32 = 12; // cells in use
let hs: usize = 0;
let bucketsPerGroup: f64 = 0;

/**
 * Folds the rows from now on instead of staging them; with histograms (`hist`), bucketed as keyOf of
 * distributions.ts does with its ln γ and MAX_INDEX (given by the JS side: the same doubles).
 */
export function foldInit(hist: bool, lnG: f64, maxIdx: i32): void {
  folding = true;
  histograms = hist;
  lnGamma = lnG;
  maxIndex = maxIdx;
  fsCap = 256;
  FS = lines(0, 0, <usize>fsCap * FSB);
  FH = regrow(0, 0, <usize>fsCap * FHB);
  bySlotCap = 256;
  bySlot = regrow(0, 0, <usize>bySlotCap << 2);
  bucketCap = 512;
  bucketShift = 32 - 9;
  buckets = regrow(0, 0, <usize>bucketCap << 2);
  if (hist) {
    bucketsPerGroup = <f64>(2 * (maxIdx + 1) + 1);
    hs = regrow(0, 0, <usize>(2 * HS));
    for (let d = 0; d < 2; d++) {
      const x = hs + <usize>(d * HS);
      store<usize>(x, regrow(0, 0, <usize>1024 << 4), H_TABLE);
      store<i32>(x, 1024, H_CAP);
      store<i32>(x, 22, H_SHIFT);
    }
  }
}

/** One completed row (its valid bits, cpu, times, new thread id, process id and deriver thread slot). */
export function foldRow(v: i32, cpu: i32, tIn: i64, tNext: i64, tReady: i64, tLast: i64, tid: i32, pid: i32, ds: i32): void {
  rows += 1;
  const known = (v >>> R.CU_NEW_PROCESS_ID) & 1;
  if (known == 0) pid = 0;
  const s = slotOfRow(ds, tid, pid, known);
  const x = FS + <usize>s * FSB;
  const hx = FH + <usize>s * FHB;
  store<i64>(x, load<i64>(x, F_IN) + 1, F_IN);
  widen(tIn);
  if (cpu >= cpus) cpus = cpu + 1;
  if ((v >>> R.CU_CPU_USAGE) & 1) {
    widen(tNext);
    add128(x + F_CPU, hx, tNext - tIn);
  }
  if (((v >>> R.CU_READY) & 1) == 0) {
    if ((v >>> R.CU_WAITS) & 1) widen(tLast);
    return;
  }
  widen(tReady);
  const ready = tIn - tReady;
  add128(x + F_READY, hx + 8, ready);
  if (histograms) count(x, s, 0, ready, F_READY_MAX);
  if ((v >>> R.CU_WAITS) & 1) {
    widen(tLast);
    const wait = tReady - tLast;
    add128(x + F_WAIT, hx + 16, wait);
    if (histograms) count(x, s, 1, wait, F_WAIT_MAX);
  }
}

// @ts-ignore: decorator
@inline function widen(t: i64): void {
  if (t < first) first = t;
  if (t > last) last = t;
}

/** Adds v (sign-extended) to the 128-bit sum of low 64 bits at p, high at hp. */
// @ts-ignore: decorator
@inline function add128(p: usize, hp: usize, v: i64): void {
  const lo = load<u64>(p);
  const sum = lo + <u64>v;
  store<u64>(p, sum);
  const d = (v >> 63) + (sum < lo ? 1 : 0);
  if (d != 0) store<i64>(hp, load<i64>(hp) + d);
}

/** A region of `bytes` aligned to a cache line, the first `keep` bytes of `old` copied, the rest zero (old is not freed). */
function lines(old: usize, keep: usize, bytes: usize): usize {
  const p = (heap.alloc(bytes + 63) + 63) & ~(<usize>63);
  if (keep > 0) memory.copy(p, old, keep);
  memory.fill(p + keep, 0, bytes - keep);
  return p;
}

/** The slot of a row: the one its deriver thread slot had last when the key matches, else the hash's (made if new). */
function slotOfRow(ds: i32, tid: i32, pid: i32, known: i32): i32 {
  if (ds < 0) return slotOf(tid, pid, known); // a switch without its new thread id: no deriver slot
  if (ds >= bySlotCap) {
    let cap = bySlotCap * 2;
    while (cap <= ds) cap *= 2;
    bySlot = regrow(bySlot, <usize>bySlotCap << 2, <usize>cap << 2);
    bySlotCap = cap;
  }
  const at = bySlot + (<usize>ds << 2);
  const c = load<i32>(at) - 1;
  if (c >= 0) {
    const x = FS + <usize>c * FSB;
    if (load<i32>(x, F_TID) == tid && load<i32>(x, F_PID) == pid && load<i32>(x, F_KNOWN) == known) return c;
  }
  const s = slotOf(tid, pid, known);
  store<i32>(at, s + 1);
  return s;
}

// @ts-ignore: decorator
@inline function keyHash(tid: i32, pid: i32, known: i32): u32 {
  return <u32>(((tid * 0x9e3779b1) ^ pid ^ (known << 31)) * 0x85ebca6b);
}

/** The slot of (tid, pid, known), made if new (the next number: slots in the order first seen). */
function slotOf(tid: i32, pid: i32, known: i32): i32 {
  const mask = bucketCap - 1;
  let h = <i32>(keyHash(tid, pid, known) >> bucketShift);
  for (; ; h = (h + 1) & mask) {
    const b = load<i32>(buckets + (<usize>h << 2));
    if (b == 0) break;
    const x = FS + <usize>(b - 1) * FSB;
    if (load<i32>(x, F_TID) == tid && load<i32>(x, F_PID) == pid && load<i32>(x, F_KNOWN) == known) return b - 1;
  }
  const s = nFold++;
  if (nFold > fsCap) {
    FS = lines(FS, <usize>fsCap * FSB, <usize>(2 * fsCap) * FSB);
    FH = regrow(FH, <usize>fsCap * FHB, <usize>(2 * fsCap) * FHB);
    fsCap *= 2;
  }
  const x = FS + <usize>s * FSB;
  store<i32>(x, tid, F_TID);
  store<i32>(x, pid, F_PID);
  store<i32>(x, known, F_KNOWN);
  if (2 * nFold > bucketCap) rehashSlots();
  else store<i32>(buckets + (<usize>h << 2), s + 1);
  return s;
}

/** Buckets for twice the slots (every slot placed again, the last one made included). */
function rehashSlots(): void {
  const cap = bucketCap * 2;
  heap.free(buckets);
  buckets = regrow(0, 0, <usize>cap << 2);
  bucketCap = cap;
  bucketShift--;
  const mask = cap - 1;
  for (let s = 0; s < nFold; s++) {
    const x = FS + <usize>s * FSB;
    let h = <i32>(keyHash(load<i32>(x, F_TID), load<i32>(x, F_PID), load<i32>(x, F_KNOWN)) >> bucketShift);
    while (load<i32>(buckets + (<usize>h << 2)) != 0) h = (h + 1) & mask;
    store<i32>(buckets + (<usize>h << 2), s + 1);
  }
}

/** The bucket key of a value: keyOf of distributions.ts (ZERO_KEY = maxIndex + 1). */
function keyOf(value: i64): i32 {
  const x = <f64>value; // the nearest double, as hi · 2^32 + lo is there
  if (x == 0) return maxIndex + 1;
  const ax = abs(x);
  let q = Math.log(ax) / lnGamma;
  // this log and JS's may differ in the last bits: near a boundary, JS's decides
  const f = q - Math.floor(q);
  if (f < 1e-9 || f > 1 - 1e-9) q = jsLog(ax) / lnGamma;
  const i = <i32>min<f64>(<f64>maxIndex, max<f64>(0, Math.ceil(q)));
  return x > 0 ? maxIndex + 2 + i : maxIndex - i;
}

// @ts-ignore: decorator
@inline function cellHash(g: i32, k: i32, shift: i32): i32 {
  return <i32>(<u32>(((g * 0x9e3779b1) ^ k) * 0x85ebca6b) >> shift);
}

/** One value of slot g (at x) in distribution d (its maximum at maxAt): the maximum, and its bucket's count. */
function count(x: usize, g: i32, d: i32, value: i64, maxAt: i32): void {
  const bit = 1 << d;
  const seen = load<i32>(x, F_SEEN);
  const m = x + <usize>maxAt;
  if ((seen & bit) == 0 || value > load<i64>(m)) {
    store<i32>(x, seen | bit, F_SEEN);
    store<i64>(m, value);
  }
  const k = keyOf(value);
  const cell = <f64>g * bucketsPerGroup + <f64>(k + 1);
  const st = hs + <usize>(d * HS);
  const table = load<usize>(st, H_TABLE);
  const mask = load<i32>(st, H_CAP) - 1;
  let h = cellHash(g, k, load<i32>(st, H_SHIFT));
  for (; ; h = (h + 1) & mask) {
    const e = table + (<usize>h << 4);
    const c = load<f64>(e);
    if (c == cell) {
      store<f64>(e, load<f64>(e, 8) + 1, 8);
      return;
    }
    if (c == 0) break;
  }
  const e = table + (<usize>h << 4);
  store<f64>(e, cell);
  store<f64>(e, 1, 8);
  const n = load<i32>(st, H_N) + 1;
  store<i32>(st, n, H_N);
  if (4 * n > 3 * (mask + 1)) rehashCells(st);
}

/** Distribution st's table to twice the slots (LogHistograms.rehash). */
function rehashCells(st: usize): void {
  const old = load<usize>(st, H_TABLE);
  const oldCap = load<i32>(st, H_CAP);
  const cap = oldCap * 2;
  const shift = load<i32>(st, H_SHIFT) - 1;
  const table = regrow(0, 0, <usize>cap << 4);
  const mask = cap - 1;
  for (let i = 0; i < oldCap; i++) {
    const o = old + (<usize>i << 4);
    const cell = load<f64>(o);
    if (cell == 0) continue;
    const g = Math.floor((cell - 1) / bucketsPerGroup);
    const k = <i32>(cell - 1 - g * bucketsPerGroup);
    let h = cellHash(<i32>g, k, shift);
    while (load<f64>(table + (<usize>h << 4)) != 0) h = (h + 1) & mask;
    memory.copy(table + (<usize>h << 4), o, 16);
  }
  heap.free(old);
  store<usize>(st, table, H_TABLE);
  store<i32>(st, cap, H_CAP);
  store<i32>(st, shift, H_SHIFT);
}

/** The slots folded (in the order first seen), at foldSlotPtr(). */
export function foldSlots(): i32 {
  return nFold;
}

export function foldSlotPtr(): usize {
  return FS;
}

/** The sums' high 64 bits (FHB bytes per slot). */
export function foldHighPtr(): usize {
  return FH;
}

/** Distribution d's table (0 ready, 1 wait; foldHistSlots(d) slots of two f64, LogHistograms' layout; 0: no histograms). */
export function foldHistPtr(d: i32): usize {
  return hs == 0 ? 0 : load<usize>(hs + <usize>(d * HS), H_TABLE);
}

export function foldHistSlots(d: i32): i32 {
  return hs == 0 ? 0 : load<i32>(hs + <usize>(d * HS), H_CAP);
}

/** Its cells in use. */
export function foldHistCells(d: i32): i32 {
  return hs == 0 ? 0 : load<i32>(hs + <usize>(d * HS), H_N);
}

/** The rows folded. */
export function foldRows(): f64 {
  return rows;
}

/** 0: the first time of the rows, 1: the last (i64; no row: i64 max, min); 2: the highest cpu + 1. */
export function foldSpan(i: i32): i64 {
  if (i == 0) return first;
  if (i == 1) return last;
  return cpus;
}
