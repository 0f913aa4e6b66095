// Arena: every region the decoder writes, laid out once by init() with a bump allocator over linear
// memory (memory.grow when the top passes the end). Decode paths never allocate, except that the
// decompression scratch (docs/format.md §A.6) and the input window may be replaced by larger regions.
//
// Regions: input window (+16 bytes slack), the output columns of every table of the registry
// (schema/tables.mjs; one block per table, see MAX_ROWS; 16-byte aligned so JS can view them as typed arrays),
// issue log, per-CPU held-back compact switch (§D.8), a copy of the TRACE_LOGFILE_HEADER payload (§A.8), the
// ETW_KERNEL_HEADER_EXTENSION (§A.9) and the scratch. Static blocks, at addresses the compiled code holds as
// constants (no global to load, no register to keep for them on the hot path): the column directory
// (pointer of every column), the row counts and limits of the tables, the drain flag, the diagnostic
// counters (u64, schema/stats.mjs), the per-kind tally table, its hash index and its SYSTEM/COMPACT/PERFINFO
// kind cache (§B.2).
import * as L from './layout';
/** first size of the decompression scratch */
const SCRATCH_INITIAL: i32 = 1 << 20;
/** bytes after the input window and the scratch that are allocated but never part of a buffer */
const SLACK: i32 = 16;
/** bytes of one per-processor held-back switch (layout in compcs.ts) */
export const PENDING_SLOT_SIZE: usize = 40;
/**
 * Every decoded table is one block of columns: column c at block + L.<PREFIX>_<COLUMN>_AT, room for
 * L.ENGINE_MAX_ROWS rows, then L.ENGINE_COLUMN_GAP bytes (both in schema generation, scripts/gen.mjs). The
 * offsets are constants, so a row writer stores every cell with one instruction: store<T>(block + (row <<
 * shift), value, L.X_AT). The gap: column sizes are multiples of a large power of two, so without it row r
 * of every same-width column sits at the same address modulo 4 KiB (and 64 KiB), and the 26 column streams
 * of the cswitch table compete for one L1 set and one L2 set, evicting each other on every row; one cache
 * line per column staggers them (decode/cswitch kernel time -40 % on this VM).
 */
const MAX_ROWS: i32 = L.ENGINE_MAX_ROWS;
const COLUMN_GAP: i32 = L.ENGINE_COLUMN_GAP;
/** column directory slots per table */
const DIR_SLOTS: i32 = L.MAX_COLUMNS;

/** column directory: u32 pointer of column c of table t at COLUMN_DIR + 4 * (t * DIR_SLOTS + c) */
const COLUMN_DIR: usize = memory.data(L.TABLE_COUNT * DIR_SLOTS * 4, 16);
/** u32 start of table t's block of columns at TABLE_BLOCKS + 4 * t */
const TABLE_BLOCKS: usize = memory.data(L.TABLE_COUNT * 4, 16);
/** i32 rows written to table t since the last drain, at ROW_COUNTS + 4 * t */
const ROW_COUNTS: usize = memory.data(L.TABLE_COUNT * 4, 16);
/** i32 most rows table t may hold before a drain is wanted: rowCap - rowReserve(t) */
const ROW_LIMITS: usize = memory.data(L.TABLE_COUNT * 4, 16);

let heapTop: usize = 0;
/** layoutArena's first pass: alloc() only counts, so memory grows once for the whole arena */
let planning: bool = false;
let initialized: bool = false;
let allocFailed: bool = false;

export let inputStart: usize = 0;
export let inputCapacity: i32 = 0;
export let scratchStart: usize = 0;
export let scratchCapacity: i32 = 0;
export let rowCap: i32 = 0;
/** u32, not 0: some table passed its row limit, or the string heap its reserve; the walker drains before
 *  the next event (drainWanted()) */
const DRAIN_WANTED: usize = memory.data(4, 4);
/** the D_* counters, u64 each */
export const countersStart: usize = memory.data(L.D_COUNTER_COUNT << 3, 16);
export let logStart: usize = 0;
/** the per-kind tally table (kinds.ts) */
export const kindsStart: usize = memory.data(L.KIND_CAPACITY * L.KIND_ENTRY_SIZE, 16);
/** slots of the kind hash index (kinds.ts): u32 each, a power of two, ~5× KIND_MAX_DISTINCT so that
 *  lookups of kinds not in the table (a full table) stop after one or two probes */
export const KIND_INDEX_SLOTS: i32 = 16384;
export const kindIndexStart: usize = memory.data(KIND_INDEX_SLOTS << 2, 16);
/** the SYSTEM/COMPACT/PERFINFO kind cache (kinds.ts tallyPerfinfo): 1 << HOOK_CACHE_BITS u16 slots */
export const HOOK_CACHE_BITS: i32 = 12;
const HOOK_CACHE_SLOTS: i32 = 1 << HOOK_CACHE_BITS;
export const hookCacheStart: usize = memory.data(HOOK_CACHE_SLOTS << 1, 16);

/** A drain is wanted before the next event. */
// @ts-ignore: decorator
@inline
export function drainWanted(): bool {
  return load<u32>(DRAIN_WANTED) != 0;
}

/** Zeroes the static blocks a decode writes: the counters, the kind table, its index and its cache. */
function clearStatics(): void {
  memory.fill(countersStart, 0, <usize>L.D_COUNTER_COUNT << 3);
  memory.fill(kindsStart, 0, <usize>(L.KIND_CAPACITY * L.KIND_ENTRY_SIZE));
  memory.fill(kindIndexStart, 0, <usize>KIND_INDEX_SLOTS << 2);
  memory.fill(hookCacheStart, 0, <usize>HOOK_CACHE_SLOTS << 1);
}
export let pendingStart: usize = 0;
/** string heap of the `str` columns (layout.ts STR_*): HEAP_CAPACITY bytes, emptied with the rows */
export const HEAP_CAPACITY: i32 = 1 << 20;
/** a drain is wanted once fewer bytes than this are free: the strings of one event (<= 0xFFFF bytes) fit */
const HEAP_RESERVE: i32 = 0x10000 + 64;
export let heapStart: usize = 0;
export let heapUsed: i32 = 0;
/** counts the heap's emptyings (strings.ts forgets its interned entries when it changes) */
export let heapGeneration: u32 = 0;
export let logfileStart: usize = 0;
export let headerExtensionStart: usize = 0;

/** Bump-allocates `size` bytes, 16-byte aligned, growing memory as needed; 0 if memory cannot grow. */
function alloc(size: usize): usize {
  const ptr = (heapTop + 15) & ~(<usize>15);
  const top = ptr + size;
  const have = <usize>memory.size() << 16;
  if (top > have && !planning) {
    const pages = <i32>((top - have + 0xffff) >>> 16);
    if (memory.grow(pages) < 0) {
      allocFailed = true;
      return 0;
    }
  }
  heapTop = top;
  return ptr;
}

/** Lays out every region (see the file comment), all zero. Calling it again starts over. */
export function layoutArena(inputBytes: i32, rowCapacity: i32): void {
  if (initialized) {
    memory.fill(__heap_base, 0, (<usize>memory.size() << 16) - __heap_base);
    clearStatics();
  }
  initialized = true;
  // one memory.grow for the whole arena (growing region by region costs a grow per region)
  planning = true;
  placeRegions(inputBytes, rowCapacity);
  planning = false;
  const have = <usize>memory.size() << 16;
  if (heapTop > have) memory.grow(<i32>((heapTop - have + 0xffff) >>> 16)); // on failure alloc() reports it below
  placeRegions(inputBytes, rowCapacity);
}

function placeRegions(inputBytes: i32, rowCapacity: i32): void {
  heapTop = __heap_base;
  allocFailed = false;
  if (inputBytes < 0) inputBytes = 0;
  for (let t: i32 = 0; t < L.TABLE_COUNT; t++) rowCapacity = max<i32>(rowCapacity, L.rowReserve(t));
  rowCapacity = min<i32>(rowCapacity, MAX_ROWS);
  inputStart = alloc(<usize>inputBytes + SLACK);
  inputCapacity = inputBytes;
  rowCap = rowCapacity;
  store<u32>(DRAIN_WANTED, 0);
  for (let t: i32 = 0; t < L.TABLE_COUNT; t++) {
    store<i32>(ROW_COUNTS + (<usize>t << 2), 0);
    store<i32>(ROW_LIMITS + (<usize>t << 2), rowCapacity - L.rowReserve(t));
    // the block: the columns at the offsets of the generated <PREFIX>_<COLUMN>_AT constants
    const n = L.columnCount(t);
    let bytes: usize = 0;
    for (let c: i32 = 0; c < n; c++) bytes += <usize>(L.columnWidth(t, c) * MAX_ROWS + COLUMN_GAP);
    const start = alloc(bytes);
    store<u32>(TABLE_BLOCKS + (<usize>t << 2), <u32>start);
    let at = start;
    for (let c: i32 = 0; c < n; c++) {
      store<u32>(COLUMN_DIR + <usize>((t * DIR_SLOTS + c) << 2), <u32>at);
      at += <usize>(L.columnWidth(t, c) * MAX_ROWS + COLUMN_GAP);
    }
  }
  logStart = alloc(<usize>(L.LOG_CAPACITY * L.LOG_ENTRY_SIZE));
  pendingStart = alloc(<usize>L.MAX_PROCESSORS * PENDING_SLOT_SIZE);
  logfileStart = alloc(<usize>L.LOGFILE_HEADER_COPY_MAX);
  headerExtensionStart = alloc(<usize>L.KHE_SIZE);
  // after the regions clearArena() zeroes: the string heap needs no zeroing (resetRows empties it)
  heapStart = alloc(<usize>HEAP_CAPACITY);
  heapUsed = 0;
  heapGeneration++;
  scratchStart = alloc(<usize>SCRATCH_INITIAL + SLACK);
  scratchCapacity = SCRATCH_INITIAL;
  if (allocFailed) {
    // memory could not grow: report no input window and no rows (the JS side refuses the instance)
    inputStart = 0;
    inputCapacity = 0;
    rowCap = 0;
  }
}

/**
 * Zeroes what a decode wrote outside the rows — counters, kind table, index and cache (static blocks), issue
 * log, held-back switches, logfile-header and header-extension copies (laid out back to back by
 * layoutArena) — and the rows still in the tables, so the arena is as layoutArena left it, without touching
 * the rest.
 */
export function clearArena(): void {
  clearStatics();
  memory.fill(logStart, 0, headerExtensionStart + <usize>L.KHE_SIZE - logStart);
  resetRows();
}

/** Makes the input window at least `bytes` long (contents are not kept) and returns it; 0 if memory
 *  cannot grow that far (the old window stays). */
export function reserveInput(bytes: i32): usize {
  if (bytes > inputCapacity) {
    const p = alloc(<usize>bytes + SLACK);
    if (p == 0) return 0;
    inputStart = p;
    inputCapacity = bytes;
  }
  return inputStart;
}

/** Makes the scratch at least `bytes` long; false if memory cannot grow that far. */
export function reserveScratch(bytes: i32): bool {
  if (bytes <= scratchCapacity) return true;
  let want = scratchCapacity;
  while (want < bytes) want <<= 1;
  if (want > L.MAX_BUFFER_SIZE) want = L.MAX_BUFFER_SIZE;
  if (want < bytes) want = bytes;
  const p = alloc(<usize>want + SLACK);
  if (p == 0) return false;
  scratchStart = p;
  scratchCapacity = want;
  return true;
}

/** Pointer of column `c` of table `t` (t, c constant in decode paths: one load from a fixed address). */
// @ts-ignore: decorator
@inline
export function col(t: i32, c: i32): usize {
  return <usize>load<u32>(COLUMN_DIR + <usize>((t * DIR_SLOTS + c) << 2));
}

/** Start of table `t`'s block of columns (t constant in decode paths: one load from a fixed address). */
// @ts-ignore: decorator
@inline
export function block(t: i32): usize {
  return <usize>load<u32>(TABLE_BLOCKS + (<usize>t << 2));
}

/** Rows written to table `t` since the last drain. */
// @ts-ignore: decorator
@inline
export function rows(t: i32): i32 {
  return load<i32>(ROW_COUNTS + (<usize>t << 2));
}

/** Sets the row count of table `t`; past its limit the walker drains before the next event. */
// @ts-ignore: decorator
@inline
export function setRows(t: i32, n: i32): void {
  store<i32>(ROW_COUNTS + (<usize>t << 2), n);
  if (n > load<i32>(ROW_LIMITS + (<usize>t << 2))) store<u32>(DRAIN_WANTED, 1);
}

/** Index of a new row of table `t` (its cells are zero, except in the columns every row overwrites). */
// @ts-ignore: decorator
@inline
export function addRow(t: i32): usize {
  const r = rows(t);
  setRows(t, r + 1);
  return <usize>r;
}

/**
 * Takes `bytes` of the string heap (the walker made sure one event's strings fit), rounded up to whole
 * 32-bit words so that every entry starts on one (layout.ts STR_*), and returns their offset.
 */
// @ts-ignore: decorator
@inline
export function heapTake(bytes: i32): i32 {
  const at = heapUsed;
  heapUsed = at + ((bytes + 3) & ~3);
  if (heapUsed > HEAP_CAPACITY - HEAP_RESERVE) store<u32>(DRAIN_WANTED, 1);
  return at;
}

/** Gives back the heap's last entry, taken at `at` (strings.ts: a string already interned). */
// @ts-ignore: decorator
@inline
export function heapGiveBack(at: i32): void {
  heapUsed = at;
}

/** the cswitch columns both of its row writers (cswitch.ts and compcs.ts emitHeld) store in every row */
const CS_REWRITTEN: u32 =
  (<u32>1 << L.CS_TIMESTAMP) |
  (<u32>1 << L.CS_CPU) |
  (<u32>1 << L.CS_NEW_THREAD_ID) |
  (<u32>1 << L.CS_OLD_THREAD_ID) |
  (<u32>1 << L.CS_OLD_THREAD_PRIORITY) |
  (<u32>1 << L.CS_OLD_THREAD_WAIT_REASON) |
  (<u32>1 << L.CS_OLD_THREAD_STATE) |
  (<u32>1 << L.CS_NEW_THREAD_WAIT_TIME) |
  (<u32>1 << L.CS_NEW_THREAD_WAIT_TIME_AT_MOST_ONE_TICK) |
  (<u32>1 << L.CS_SOURCE) |
  (<u32>1 << L.CS_VERSION) |
  (<u32>1 << L.CS_FILE_OFFSET) |
  (<u32>1 << L.CS_VALID);

/**
 * Columns (bit = column) that every row writer of table `t` stores in every row it adds, whatever the
 * event: resetRows need not zero them, the next rows overwrite them. Null cells must still read 0, so a
 * column some writer leaves alone in some rows is zeroed. Kept true by cswitch.ts, compcs.ts (emitHeld),
 * spinlock.ts and readythread.ts; test/kernel-rows.test.ts poisons the columns to check it.
 */
function rewrittenColumns(t: i32): u32 {
  if (t == L.TABLE_CSWITCH) return CS_REWRITTEN;
  if (t == L.TABLE_SPINLOCK) return (<u32>1 << <u32>L.columnCount(t)) - 1;
  // readythread's stackId is filled after the decode (fillStackIds, src/derive/stacks.ts), never by the engine
  if (t == L.TABLE_READYTHREAD) return ((<u32>1 << <u32>L.columnCount(t)) - 1) & ~(<u32>1 << L.RT_STACK_ID);
  return 0;
}

/**
 * Empties the tables, zeroing the rows handed out so far in the columns that the next rows do not always
 * overwrite (rewrittenColumns): the rest of the arena is as layoutArena left it, so a new row's cells are
 * zero unless written.
 */
export function resetRows(): void {
  for (let t: i32 = 0; t < L.TABLE_COUNT; t++) {
    const used = <usize>rows(t);
    if (used != 0) {
      const keep = rewrittenColumns(t);
      const n = L.columnCount(t);
      for (let c: i32 = 0; c < n; c++) {
        if (((keep >>> <u32>c) & 1) == 0) memory.fill(col(t, c), 0, used * <usize>L.columnWidth(t, c));
      }
    }
    store<i32>(ROW_COUNTS + (<usize>t << 2), 0);
  }
  heapUsed = 0;
  heapGeneration++;
  store<u32>(DRAIN_WANTED, 0);
}

// ---- accessors exported through index.ts
export function inputPtr(): usize {
  return inputStart;
}
export function rowCount(table: i32): i32 {
  return table >= 0 && table < L.TABLE_COUNT ? rows(table) : 0;
}
export function rowCapacity(): i32 {
  return rowCap;
}
export function columnPtr(table: i32, column: i32): usize {
  if (table < 0 || table >= L.TABLE_COUNT || column < 0 || column >= L.columnCount(table)) return 0;
  return col(table, column);
}
export function countersPtr(): usize {
  return countersStart;
}
export function logPtr(): usize {
  return logStart;
}
export function kindsPtr(): usize {
  return kindsStart;
}
export function logfilePtr(): usize {
  return logfileStart;
}
export function headerExtensionPtr(): usize {
  return headerExtensionStart;
}
export function heapPtr(): usize {
  return heapStart;
}
export function heapSize(): i32 {
  return heapUsed;
}

/** Address of the i32 row counts, one per table (partitioned decodes read them without a call). */
export function rowCountsPtr(): usize {
  return ROW_COUNTS;
}
