// The thread lifetimes in WebAssembly (docs/format.md §F.1-F.2, §F.5; the rules: the file comment of
// src/derive/lifetimes.ts): the core of the `threads` table of a whole decode, written to be read against
// its TypeScript twin, deriveThreads (src/derive/lifetimes.ts), which the differential tests
// (test/lifetimes-wasm.test.ts) hold it to. Times are native i64.
//
// Input: the JS side appends each chunk of Thread events to the input blocks (ltReserve, ltColumn,
// ltCommit): their numeric columns — the names stay strings on the JS side; the cpu column goes to a
// scratch region that every piece reuses, as ltCommit keeps only its runs (stretches of one CPU's events,
// linked per CPU) and whether the events are in time order, all of them and each CPU's. A block holds
// BLOCK events, its columns one after another (each staggered by a cache line), so the input grows
// without being moved. Fresh memory costs a page fault per 4 KiB touched, so every byte kept per event
// counts: 27 bytes.
//
// ltThreads() applies the events, a step of them per call, in the order of timeOrder (src/order.ts) — time,
// ties in row order; with native i64 times each path below gives that one order, as the twin's paths do:
// the rows as they are when they are in time order already; else the CPUs' stretches merged (a tournament
// of the CPUs' next events, replayed without branches); else (a CPU out of time order) a stable LSD radix
// sort. It applies them by deriveThreads' rules — each thread id's open row in a map (IdIndex's), the
// rows' columns written in place (ltOut). A row's name is an event index, the last event with a name
// (TE_NAME) applied to it; each such event links the one before it (ltNamePrev, kept in its processId cell
// once it is applied), so that the JS side, which holds the strings, skips empty names.
// Memory: the Thread events and the rows — an instance derives one table.
import { radixReset, radixSortPairs } from './radix';
import * as R from '../generated/registry';
import { OPCODE_END, OPCODE_START } from '../layout';

// ---- the input blocks

const BLOCK_BITS: i32 = 16;
const BLOCK: i32 = 1 << BLOCK_BITS;
const BLOCK_MASK: i32 = BLOCK - 1;
const GAP: usize = 64;
// the columns of a block: at COL_x, BLOCK values each
const COL_TS: usize = 0; // timestamp (i64)
const COL_ADDR: usize = COL_TS + (<usize>BLOCK << 3) + GAP; // win32StartAddr (u64)
const COL_TID: usize = COL_ADDR + (<usize>BLOCK << 3) + GAP; // threadId (u32)
const COL_PID: usize = COL_TID + (<usize>BLOCK << 2) + GAP; // processId (u32); once applied, a named event's name link
const COL_OPCODE: usize = COL_PID + (<usize>BLOCK << 2) + GAP; // opcode (u8)
const COL_VALID: usize = COL_OPCODE + <usize>BLOCK + GAP; // valid (its low byte: TE_ bits 0-7, those read here)
const COL_PRIO: usize = COL_VALID + <usize>BLOCK + GAP; // basePriority (u8)
const BLOCK_BYTES: usize = COL_PRIO + <usize>BLOCK + GAP;

/** the blocks' addresses (usize each), room for `blockCap` */
let blocks: usize = 0;
let blockCap: i32 = 0;
let nBlocks: i32 = 0;
/** events appended */
let count: i32 = 0;
/** the cpu column of the piece being appended (u16 × BLOCK) */
let cpuScratch: usize = 0;

// @ts-ignore: decorator
@inline function cell(i: i32, column: usize, shift: i32): usize {
  return load<usize>(blocks + (<usize>(i >>> BLOCK_BITS) << 2)) + column + (<usize>(i & BLOCK_MASK) << shift);
}

// @ts-ignore: decorator
@inline function timeOf(i: i32): i64 {
  return load<i64>(cell(i, COL_TS, 3));
}

/** Room for up to n more events: returns how many fit at ltColumn() (the rest of the block; a new block when it is full). */
export function ltReserve(n: i32): i32 {
  if (cpuScratch == 0) cpuScratch = heap.alloc(<usize>BLOCK << 1);
  if (count >>> BLOCK_BITS == nBlocks) {
    if (nBlocks == blockCap) {
      blockCap = max(16, blockCap * 2);
      blocks = grown(blocks, <usize>nBlocks << 2, <usize>blockCap << 2);
    }
    store<usize>(blocks + (<usize>nBlocks << 2), heap.alloc(BLOCK_BYTES));
    nBlocks++;
  }
  return min(n, BLOCK - (count & BLOCK_MASK));
}

/** A region of `bytes` bytes holding the first `keep` bytes of `old` (then freed). */
function grown(old: usize, keep: usize, bytes: usize): usize {
  const p = heap.alloc(bytes);
  if (old != 0) {
    memory.copy(p, old, keep);
    heap.free(old);
  }
  return p;
}

/** Where the next rows of input column i go (after ltReserve): 0 timestamp, 1 cpu, 2 threadId, 3 processId, 4 opcode, 5 valid (its low byte), 6 win32StartAddr, 7 basePriority. */
export function ltColumn(i: i32): usize {
  switch (i) {
    case 0: return cell(count, COL_TS, 3);
    case 1: return cpuScratch;
    case 2: return cell(count, COL_TID, 2);
    case 3: return cell(count, COL_PID, 2);
    case 4: return cell(count, COL_OPCODE, 0);
    case 5: return cell(count, COL_VALID, 0);
    case 6: return cell(count, COL_ADDR, 3);
    default: return cell(count, COL_PRIO, 0);
  }
}

// The stretches: runs of one CPU's events in row order [stStart, stEnd), each linked to the CPU's next one.
let stStart: usize = 0;
let stEnd: usize = 0;
let stNext: usize = 0;
let stCap: i32 = 0;
let nStretches: i32 = 0;
/** the CPU of the last stretch (−1: none yet) */
let stretchCpu: i32 = -1;
// per CPU (room for cpuCap): its first and last stretch (−1: none), its last event's time
let cpuFirst: usize = 0;
let cpuLast: usize = 0;
let cpuTime: usize = 0;
let cpuCap: i32 = 0;
/** CPUs: the greatest seen + 1 */
let cpus: i32 = 0;
/** the events so far are in time order; each CPU's are */
let inOrder: bool = true;
let cpuInOrder: bool = true;
let lastTime: i64 = 0;

/** The n rows written at ltColumn() are appended: their CPUs' stretches and time order noted. */
export function ltCommit(n: i32): void {
  for (let k = 0; k < n; k++) {
    const i = count + k;
    const c = <i32>load<u16>(cpuScratch + (<usize>k << 1));
    const t = timeOf(i);
    if (i > 0 && t < lastTime) inOrder = false;
    lastTime = t;
    let seen = true;
    if (c != stretchCpu) {
      if (c >= cpuCap) growCpus(c);
      cpus = max(cpus, c + 1);
      seen = load<i32>(cpuLast + (<usize>c << 2)) >= 0;
      openStretch(c, i);
    }
    const at = cpuTime + (<usize>c << 3);
    if (seen && t < load<i64>(at)) cpuInOrder = false;
    store<i64>(at, t);
  }
  count += n;
  if (nStretches > 0) store<i32>(stEnd + (<usize>(nStretches - 1) << 2), count);
}

/** A new stretch of CPU c from event i (the last one ends there). */
function openStretch(c: i32, i: i32): void {
  if (nStretches == stCap) {
    const cap = max(1024, stCap * 2);
    stStart = grown(stStart, <usize>stCap << 2, <usize>cap << 2);
    stEnd = grown(stEnd, <usize>stCap << 2, <usize>cap << 2);
    stNext = grown(stNext, <usize>stCap << 2, <usize>cap << 2);
    stCap = cap;
  }
  if (nStretches > 0) store<i32>(stEnd + (<usize>(nStretches - 1) << 2), i);
  const s = nStretches++;
  store<i32>(stStart + (<usize>s << 2), i);
  store<i32>(stNext + (<usize>s << 2), -1);
  const last = load<i32>(cpuLast + (<usize>c << 2));
  if (last >= 0) store<i32>(stNext + (<usize>last << 2), s);
  else store<i32>(cpuFirst + (<usize>c << 2), s);
  store<i32>(cpuLast + (<usize>c << 2), s);
  stretchCpu = c;
}

/** Room for CPU c in the per-CPU arrays. */
function growCpus(c: i32): void {
  let cap = max(64, cpuCap);
  while (cap <= c) cap *= 2;
  cpuFirst = grown(cpuFirst, <usize>cpuCap << 2, <usize>cap << 2);
  cpuLast = grown(cpuLast, <usize>cpuCap << 2, <usize>cap << 2);
  cpuTime = grown(cpuTime, <usize>cpuCap << 3, <usize>cap << 3);
  memory.fill(cpuFirst + (<usize>cpuCap << 2), 0xff, <usize>(cap - cpuCap) << 2);
  memory.fill(cpuLast + (<usize>cpuCap << 2), 0xff, <usize>(cap - cpuCap) << 2);
  cpuCap = cap;
}

/** The name event applied to the same row before event i (−1: none), after ltThreads. */
export function ltNamePrev(i: i32): i32 {
  return load<i32>(cell(i, COL_PID, 2));
}

// ---- the open lifetimes: thread id → its open row

// IdIndex's map (src/derive/lifetimes.ts; ids.ts is its id → slot form) with a bucket of 8 bytes, the key
// beside its value (a lookup reads one cache line): open addressing, linear probing, at most half full,
// the hash the top bits of a Fibonacci product; value row + 1 (0: empty bucket; −1: the id has no open
// row, the bucket stays).
let mBuckets: usize = 0;
let mCap: i32 = 0;
let mShift: i32 = 0;
let mCount: i32 = 0;

function mapInit(cap: i32): void {
  mCap = cap;
  mShift = 32 - <i32>ctz(cap);
  mBuckets = heap.alloc(<usize>cap << 3);
  memory.fill(mBuckets, 0, <usize>cap << 3);
  mCount = 0;
}

/** The bucket of `id`: its own, or the empty one where it goes. */
// @ts-ignore: decorator
@inline function mapFind(id: i32): usize {
  const mask = mCap - 1;
  let h = <i32>(<u32>(id * 0x9e3779b1) >> mShift);
  for (;;) {
    const b = mBuckets + (<usize>h << 3);
    if (load<i32>(b, 4) == 0 || load<i32>(b) == id) return b;
    h = (h + 1) & mask;
  }
  return 0;
}

/** A new key in the empty bucket b (from mapFind); the map grown first when half full. */
function mapAdd(b: usize, id: i32, value: i32): void {
  if (2 * (mCount + 1) > mCap) {
    const old = mBuckets;
    const oldCap = mCap;
    const n = mCount;
    mapInit(oldCap * 2);
    for (let k = 0; k < oldCap; k++) {
      const o = old + (<usize>k << 3);
      if (load<i32>(o, 4) != 0) store<i64>(mapFind(load<i32>(o)), load<i64>(o));
    }
    heap.free(old);
    mCount = n;
    b = mapFind(id);
  }
  store<i32>(b, id);
  store<i32>(b, value, 4);
  mCount++;
}

// ---- the rows (deriveThreads)

// The rows' columns (room for rowCap): threadId, processId, startTime, endTime, win32StartAddr,
// basePriority, and per row two i32: its valid bits (the TH_ bits of the fields set) and its name event.
let oTid: usize = 0;
let oPid: usize = 0;
let oStart: usize = 0;
let oEnd: usize = 0;
let oAddr: usize = 0;
let oPrio: usize = 0;
let oValidName: usize = 0;
let rowCap: i32 = 0;
let rows: i32 = 0;

/** Room for twice the rows (the columns moved). */
function growRows(): void {
  const cap = max(1024, rowCap * 2);
  const r = <usize>rows;
  oTid = grown(oTid, r << 2, <usize>cap << 2);
  oPid = grown(oPid, r << 2, <usize>cap << 2);
  oStart = grown(oStart, r << 3, <usize>cap << 3);
  oEnd = grown(oEnd, r << 3, <usize>cap << 3);
  oAddr = grown(oAddr, r << 3, <usize>cap << 3);
  oPrio = grown(oPrio, r, <usize>cap);
  oValidName = grown(oValidName, r << 3, <usize>cap << 3);
  rowCap = cap;
}

/** Event i applied (deriveThreads' loop body). */
// @ts-ignore: decorator
@inline function apply(i: i32): void {
  const id = load<i32>(cell(i, COL_TID, 2));
  const op = <i32>load<u8>(cell(i, COL_OPCODE, 0));
  const v = <u32>load<u8>(cell(i, COL_VALID, 0));
  const b = mapFind(id);
  const open = load<i32>(b, 4);
  let row: i32;
  let w: u32;
  if (op == OPCODE_START || open <= 0) {
    if (rows == rowCap) growRows();
    row = rows++;
    const q = <usize>row;
    store<i32>(oTid + (q << 2), id);
    store<i32>(oPid + (q << 2), 0);
    store<i64>(oStart + (q << 3), 0);
    store<i64>(oEnd + (q << 3), 0);
    store<i64>(oAddr + (q << 3), 0);
    store<u8>(oPrio + q, 0);
    store<i32>(oValidName + (q << 3), -1, 4);
    w = (1 << R.TH_THREAD_ID) | (1 << R.TH_VALID);
    if (open == 0) mapAdd(b, id, row + 1);
    else store<i32>(b, row + 1, 4);
    if (op == OPCODE_START) {
      store<i64>(oStart + (q << 3), timeOf(i));
      w |= 1 << R.TH_START_TIME;
    }
  } else {
    row = open - 1;
    w = load<u32>(oValidName + (<usize>row << 3));
  }
  const q = <usize>row;
  // fields take the first value, except the name (the last non-empty one: the JS side skips empty ones)
  if (((w >> R.TH_PROCESS_ID) & 1) == 0) {
    store<i32>(oPid + (q << 2), load<i32>(cell(i, COL_PID, 2)));
    w |= 1 << R.TH_PROCESS_ID;
  }
  if ((v >> R.TE_WIN32_START_ADDR) & 1 && ((w >> R.TH_WIN32_START_ADDR) & 1) == 0) {
    store<i64>(oAddr + (q << 3), load<i64>(cell(i, COL_ADDR, 3)));
    w |= 1 << R.TH_WIN32_START_ADDR;
  }
  if ((v >> R.TE_BASE_PRIORITY) & 1 && ((w >> R.TH_BASE_PRIORITY) & 1) == 0) {
    store<u8>(oPrio + q, load<u8>(cell(i, COL_PRIO, 0)));
    w |= 1 << R.TH_BASE_PRIORITY;
  }
  if ((v >> R.TE_NAME) & 1) {
    // (the processId cell is read above only, so it keeps the name link from here on)
    store<i32>(cell(i, COL_PID, 2), load<i32>(oValidName + (q << 3), 4));
    store<i32>(oValidName + (q << 3), i, 4);
    w |= 1 << R.TH_NAME;
  }
  if (op == OPCODE_END) {
    store<i64>(oEnd + (q << 3), timeOf(i));
    w |= 1 << R.TH_END_TIME;
    store<i32>(mapFind(id), -1, 4); // (its bucket now: mapAdd may have moved it)
  }
  store<u32>(oValidName + (q << 3), w);
}

/** the order ltThreads() applied the events in: 0 as they are (in time order), 1 the CPUs' merged, 2 the radix sort's */
let path: i32 = 0;

export function ltPath(): i32 {
  return path;
}

/**
 * The `threads` rows of the events appended, in steps: each call applies up to `step` more events (the
 * first sets up) and returns −1 until all are, then the number of rows, their columns at ltOut(). (Steps,
 * so that the engine's optimizing tier, which a long-running call never reaches, takes over after the
 * first few.) Once per instance.
 */
export function ltThreads(step: i32): i32 {
  const n = count;
  if (!begun) begin(n);
  const end = applied + min(step, n - applied);
  if (path == 0) for (let i = applied; i < end; i++) apply(i);
  else if (path == 1) applyMerged(end - applied);
  else for (let k = applied; k < end; k++) apply(load<i32>(order + (<usize>k << 2)));
  applied = end;
  return applied == n ? rows : -1;
}

let begun: bool = false;
/** events applied */
let applied: i32 = 0;
/** the radix sort's order (path 2) */
let order: usize = 0;
// the tournament (path 1): leaves, and per leaf its CPU's next event (time; row, i32.MAX_VALUE with time
// i64.MAX_VALUE when it has none), the stretch it is in and where that ends; per node its winner (a leaf)
let tLeaves: i32 = 0;
let tTime: usize = 0;
let tRow: usize = 0;
let tStretch: usize = 0;
let tEnd: usize = 0;
let tWin: usize = 0;

/** The map, the rows, the order path and its set-up. */
function begin(n: i32): void {
  begun = true;
  // the map's first size: a bucket per 4 events (at most 2^18), the rows' a row per 8 events (1,024 or more)
  let cap = 1024;
  while (cap < min(n >> 2, 1 << 18)) cap <<= 1;
  mapInit(cap);
  rows = 0;
  while (rowCap < (n >> 3)) growRows();
  if (rowCap == 0) growRows();
  path = inOrder ? 0 : cpuInOrder ? 1 : 2;
  if (n == 0) return;
  if (path == 2) order = radixTimeOrder(n);
  if (path != 1) return;
  tLeaves = 2;
  while (tLeaves < cpus) tLeaves <<= 1;
  tTime = heap.alloc(<usize>tLeaves << 3);
  tRow = heap.alloc(<usize>tLeaves << 2);
  tStretch = heap.alloc(<usize>tLeaves << 2);
  tEnd = heap.alloc(<usize>tLeaves << 2);
  tWin = heap.alloc(<usize>tLeaves << 3);
  for (let c = 0; c < tLeaves; c++) {
    const s = c < cpus ? load<i32>(cpuFirst + (<usize>c << 2)) : -1;
    const i = s >= 0 ? load<i32>(stStart + (<usize>s << 2)) : i32.MAX_VALUE;
    store<i64>(tTime + (<usize>c << 3), s >= 0 ? timeOf(i) : i64.MAX_VALUE);
    store<i32>(tRow + (<usize>c << 2), i);
    store<i32>(tStretch + (<usize>c << 2), s);
    store<i32>(tEnd + (<usize>c << 2), s >= 0 ? load<i32>(stEnd + (<usize>s << 2)) : 0);
    store<i32>(tWin + (<usize>(tLeaves + c) << 2), c);
  }
  for (let p = tLeaves - 1; p >= 1; p--) play(tWin, tTime, tRow, p);
}

/**
 * The next m events applied, the CPUs' stretches merged by (time, row): a tournament of the CPUs' next
 * events (a leaf per CPU; each node the winner of its two children), replayed without branches from the
 * winner's leaf to the root — the CPUs take turns every event or two, so a comparison's outcome is not
 * predictable.
 */
function applyMerged(m: i32): void {
  const leaves = tLeaves;
  const lTime = tTime;
  const lRow = tRow;
  const lStretch = tStretch;
  const lEnd = tEnd;
  const win = tWin;
  for (let k = 0; k < m; k++) {
    const c = load<i32>(win, 4);
    const lc = <usize>c << 2;
    let i = load<i32>(lRow + lc);
    apply(i);
    // the leaf's next event
    let t: i64 = 0;
    if (++i == load<i32>(lEnd + lc)) {
      const s = load<i32>(stNext + (<usize>load<i32>(lStretch + lc) << 2));
      store<i32>(lStretch + lc, s);
      if (s >= 0) {
        i = load<i32>(stStart + (<usize>s << 2));
        store<i32>(lEnd + lc, load<i32>(stEnd + (<usize>s << 2)));
        t = timeOf(i);
      } else {
        i = i32.MAX_VALUE;
        t = i64.MAX_VALUE;
      }
    } else t = timeOf(i);
    store<i64>(lTime + (<usize>c << 3), t);
    store<i32>(lRow + lc, i);
    for (let p = (leaves + c) >> 1; p >= 1; p >>= 1) play(win, lTime, lRow, p);
  }
}

/** Node p of the tournament: the winner of its children, the lesser (time, row). */
// @ts-ignore: decorator
@inline function play(win: usize, lTime: usize, lRow: usize, p: i32): void {
  const a = load<i32>(win + (<usize>(2 * p) << 2));
  const b = load<i32>(win + (<usize>(2 * p + 1) << 2));
  const ta = load<i64>(lTime + (<usize>a << 3));
  const tb = load<i64>(lTime + (<usize>b << 3));
  const bFirst = i32(tb < ta) | (i32(tb == ta) & i32(load<i32>(lRow + (<usize>b << 2)) < load<i32>(lRow + (<usize>a << 2))));
  store<i32>(win + (<usize>p << 2), select<i32>(b, a, bFirst != 0));
}

/** The events in time order (any input; radixTimeOrder of src/order.ts): the times less the least, radix-sorted. */
function radixTimeOrder(n: i32): usize {
  let least = timeOf(0);
  for (let i = 1; i < n; i++) least = min(least, timeOf(i));
  const key = heap.alloc(<usize>n << 3);
  const key2 = heap.alloc(<usize>n << 3);
  const row = heap.alloc(<usize>n << 2);
  const row2 = heap.alloc(<usize>n << 2);
  const first = <u64>(timeOf(0) - least);
  let varies: u64 = 0;
  for (let i = 0; i < n; i++) {
    const k = <u64>(timeOf(i) - least);
    varies |= k ^ first;
    store<u64>(key + (<usize>i << 3), k);
    store<i32>(row + (<usize>i << 2), i);
  }
  return radixSortPairs(key, row, key2, row2, n, varies) ? row2 : row;
}

/** The address of output column i (after ltThreads): 0 threadId (u32), 1 processId (u32), 2 startTime (i64), 3 endTime (i64), 4 win32StartAddr (u64), 5 basePriority (u8), 6 per row its valid bits (u32) and its name event (i32, −1: none). */
export function ltOut(i: i32): usize {
  switch (i) {
    case 0: return oTid;
    case 1: return oPid;
    case 2: return oStart;
    case 3: return oEnd;
    case 4: return oAddr;
    case 5: return oPrio;
    default: return oValidName;
  }
}

/**
 * The instance ready for the next derivation: every region dropped (the heap reset; its memory, already
 * touched, is used again — no region is read before it is written, but for those filled) and the state
 * cleared.
 */
export function ltReset(): void {
  radixReset();
  // @ts-ignore: the stub runtime's global (its bump heap back to the start)
  __reset();
  blocks = 0;
  blockCap = 0;
  nBlocks = 0;
  count = 0;
  cpuScratch = 0;
  stStart = 0;
  stEnd = 0;
  stNext = 0;
  stCap = 0;
  nStretches = 0;
  stretchCpu = -1;
  cpuFirst = 0;
  cpuLast = 0;
  cpuTime = 0;
  cpuCap = 0;
  cpus = 0;
  inOrder = true;
  cpuInOrder = true;
  lastTime = 0;
  mBuckets = 0;
  mCap = 0;
  mShift = 0;
  mCount = 0;
  oTid = 0;
  oPid = 0;
  oStart = 0;
  oEnd = 0;
  oAddr = 0;
  oPrio = 0;
  oValidName = 0;
  rowCap = 0;
  rows = 0;
  path = 0;
  begun = false;
  applied = 0;
  order = 0;
  tLeaves = 0;
  tTime = 0;
  tRow = 0;
  tStretch = 0;
  tEnd = 0;
  tWin = 0;
}
