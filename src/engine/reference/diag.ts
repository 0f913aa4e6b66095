// Diagnostics of the reference decoder, the twin of assembly/diag.ts: the D_* counters (declared in
// schema/stats.mjs) and the issue log of the first LOG_CAPACITY problems with their file offsets.
import * as L from '../../generated/layout.js';
import type { Arena } from './memory.js';

/** counters[code] += n */
export function count(a: Arena, code: number, n = 1): void {
  a.counters[code]! += n;
}

/** Counts `code` and logs it with `detail` and `fileOffset` while the log has room. */
export function issue(a: Arena, code: number, detail: number, fileOffset: number): void {
  a.counters[code]!++;
  if (a.log.length < L.LOG_CAPACITY) a.log.push({ code, detail: detail >>> 0, fileOffset });
}
