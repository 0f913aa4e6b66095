// ReadyThread (HookId 0x0532, PERFINFO_LOG_TYPE_READY_THREAD), docs/format.md §F.4: one readythread row
// per event. Payload (8 bytes): +0 u32 TThreadId (the thread made ready), +4 u8 AdjustReason,
// +5 i8 AdjustIncrement, +6 u8 Flags, +7 spare. One layout is known, so every version is decoded and
// the version kept (decoder policy). src/engine/reference/readythread.ts is its twin.
import * as L from './layout';
import { count, issue } from './diag';
import { addRow, block } from './memory';

/** Decodes one ReadyThread event: payload `data` of `n` bytes; the row space was checked by the walker. */
export function readyThreadEvent(data: usize, n: i32, version: i32, cpu: i32, tsAt: usize, fileOffset: f64): void {
  if (n < L.RDY_SIZE) {
    issue(L.D_READYTHREAD_SKIPPED_SHORT, <u32>n, fileOffset);
    return;
  }
  count(L.D_READYTHREAD_DECODED);
  const T = L.TABLE_READYTHREAD;
  const r = addRow(T);
  const blk = block(T); // columns at constant offsets (memory.ts)
  store<i64>(blk + (r << 3), load<i64>(tsAt), L.RT_TIMESTAMP_AT);
  store<u16>(blk + (r << 1), <u16>cpu, L.RT_CPU_AT);
  store<u32>(blk + (r << 2), load<u32>(data, L.RDY_THREAD_ID), L.RT_THREAD_ID_AT);
  store<u8>(blk + r, load<u8>(data, L.RDY_ADJUST_REASON), L.RT_ADJUST_REASON_AT);
  store<u8>(blk + r, load<u8>(data, L.RDY_ADJUST_INCREMENT), L.RT_ADJUST_INCREMENT_AT);
  store<u8>(blk + r, load<u8>(data, L.RDY_FLAGS), L.RT_FLAGS_AT);
  store<u8>(blk + r, <u8>version, L.RT_VERSION_AT);
  store<f64>(blk + (r << 3), fileOffset, L.RT_FILE_OFFSET_AT);
  store<u32>(blk + (r << 2), L.RT_ALWAYS_VALID, L.RT_VALID_AT); // stackId: null (attached after the decode)
}
