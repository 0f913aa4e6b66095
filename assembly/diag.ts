// Diagnostics: the D_* counters (u64 slots, declared in schema/stats.mjs) and the issue log of the
// first LOG_CAPACITY problems {u32 code, u32 detail, f64 fileOffset} (docs/format.md §A.5/A.6 corrupt
// buffers, §B.4 abandoned walks, §C/D/E skipped or suspicious events; docs/stats.md lists them all).
// Corruption never traps: it is counted here. src/engine/reference/diag.ts is its twin.
import * as L from './layout';
import { countersStart, logStart } from './memory';

let logEntries: i32 = 0;
/** logEntries, also in memory: partitioned decodes (src/parallel) read it without a call */
const LOG_COUNT: usize = memory.data(4);

/** counters[code] += 1 */
// @ts-ignore: decorator
@inline
export function count(code: i32): void {
  const a = countersStart + (<usize>code << 3);
  store<u64>(a, load<u64>(a) + 1);
}

/** counters[code] += n */
// @ts-ignore: decorator
@inline
export function countN(code: i32, n: u64): void {
  const a = countersStart + (<usize>code << 3);
  store<u64>(a, load<u64>(a) + n);
}

/** Counts `code` and logs it with `detail` and `fileOffset` while the log has room (cold path). */
export function issue(code: i32, detail: u32, fileOffset: f64): void {
  count(code);
  if (logEntries < L.LOG_CAPACITY) {
    const e = logStart + <usize>(logEntries * L.LOG_ENTRY_SIZE);
    store<u32>(e, <u32>code, 0);
    store<u32>(e, detail, 4);
    store<f64>(e, fileOffset, 8);
    logEntries++;
    store<i32>(LOG_COUNT, logEntries);
  }
}

/** Empties the log (init). */
export function resetDiag(): void {
  logEntries = 0;
  store<i32>(LOG_COUNT, 0);
}

export function logCount(): i32 {
  return logEntries;
}

/** Keeps the first `n` entries of the log (partitioned decodes move the entries out after each buffer). */
export function setLogCount(n: i32): void {
  if (n >= 0 && n < logEntries) logEntries = n;
  store<i32>(LOG_COUNT, logEntries);
}

/** Address of the i32 copy of logCount(). */
export function logCountPtr(): usize {
  return LOG_COUNT;
}
