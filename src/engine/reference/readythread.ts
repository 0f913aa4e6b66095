// ReadyThread (HookId 0x0532), docs/format.md §F.4: one readythread row per event; the twin of
// assembly/readythread.ts (payload drawn there). Every version is decoded (one layout is known).
import * as L from '../../generated/layout.js';
import { count, issue } from './diag.js';
import { copy64, type Arena } from './memory.js';

/** Decodes one ReadyThread event: payload at `data` of `n` bytes of `d`. */
export function readyThreadEvent(a: Arena, d: DataView, data: number, n: number, version: number, cpu: number, tsAt: number, fileOffset: number): void {
  if (n < L.RDY_SIZE) {
    issue(a, L.D_READYTHREAD_SKIPPED_SHORT, n, fileOffset);
    return;
  }
  count(a, L.D_READYTHREAD_DECODED);
  const b = a.table(L.TABLE_READYTHREAD);
  const r = b.add();
  const c = b.cols;
  copy64(d, tsAt, b.words[L.RT_TIMESTAMP]!, r);
  (c[L.RT_CPU] as Uint16Array)[r] = cpu;
  (c[L.RT_THREAD_ID] as Uint32Array)[r] = d.getUint32(data + L.RDY_THREAD_ID, true);
  (c[L.RT_ADJUST_REASON] as Uint8Array)[r] = d.getUint8(data + L.RDY_ADJUST_REASON);
  (c[L.RT_ADJUST_INCREMENT] as Int8Array)[r] = d.getInt8(data + L.RDY_ADJUST_INCREMENT);
  (c[L.RT_FLAGS] as Uint8Array)[r] = d.getUint8(data + L.RDY_FLAGS);
  (c[L.RT_VERSION] as Uint8Array)[r] = version;
  (c[L.RT_FILE_OFFSET] as Float64Array)[r] = fileOffset;
}
