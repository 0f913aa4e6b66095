// ReadyThread (HookId 0x0532, PERFINFO_LOG_TYPE_READY_THREAD), docs/format.md §F.4: one readythread row
// per event. Payload (8 bytes): +0 u32 TThreadId (the thread made ready), +4 u8 AdjustReason,
// +5 i8 AdjustIncrement, +6 u8 Flags, +7 spare. One layout is known, so every version is decoded and
// the version kept (decoder policy). src/reference/readythread.ts is its twin.
import * as L from './layout';
import { count, issue } from './diag';
import { addRow, col } from './memory';

/** Decodes one ReadyThread event: payload `data` of `n` bytes; the row space was checked by the walker. */
export function readyThreadEvent(data: usize, n: i32, version: i32, cpu: i32, tsAt: usize, fileOffset: f64): void {
  if (n < L.RDY_SIZE) {
    issue(L.D_READYTHREAD_SKIPPED_SHORT, <u32>n, fileOffset);
    return;
  }
  count(L.D_READYTHREAD_DECODED);
  const T = L.TABLE_READYTHREAD;
  const r = addRow(T);
  store<i64>(col(T, L.RT_TIMESTAMP) + (r << 3), load<i64>(tsAt));
  store<u16>(col(T, L.RT_CPU) + (r << 1), <u16>cpu);
  store<u32>(col(T, L.RT_THREAD_ID) + (r << 2), load<u32>(data, L.RDY_THREAD_ID));
  store<u8>(col(T, L.RT_ADJUST_REASON) + r, load<u8>(data, L.RDY_ADJUST_REASON));
  store<u8>(col(T, L.RT_ADJUST_INCREMENT) + r, load<u8>(data, L.RDY_ADJUST_INCREMENT));
  store<u8>(col(T, L.RT_FLAGS) + r, load<u8>(data, L.RDY_FLAGS));
  store<u8>(col(T, L.RT_VERSION) + r, <u8>version);
  store<f64>(col(T, L.RT_FILE_OFFSET) + (r << 3), fileOffset);
}
