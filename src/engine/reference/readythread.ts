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
  const b = a.builders.readythread;
  const r = b.add();
  const c = b.view;
  copy64(d, tsAt, b.words[L.RT_TIMESTAMP]!, r);
  c.cpu[r] = cpu;
  c.threadId[r] = d.getUint32(data + L.RDY_THREAD_ID, true);
  c.adjustReason[r] = d.getUint8(data + L.RDY_ADJUST_REASON);
  c.adjustIncrement[r] = d.getInt8(data + L.RDY_ADJUST_INCREMENT);
  c.flags[r] = d.getUint8(data + L.RDY_FLAGS);
  c.version[r] = version;
  c.fileOffset[r] = fileOffset;
  c.valid[r] = L.RT_ALWAYS_VALID; // stackId: null (attached after the decode)
}
