// SampledProfile (HookId 0x0F2E, PERFINFO_LOG_TYPE_SAMPLED_PROFILE), docs/format.md §G.1: one samples row
// per version-2 event. Payload PERFINFO_SAMPLED_PROFILE_INFORMATION, P = pointer size (by the header type):
//
//  x86  x64
//  0x00 0x00 ptr InstructionPointer
//  0x04 0x08 u32 ThreadId
//  0x08 0x0C u16 Count
//  0x0A 0x0E u8  Flags: bit 0 ExecutingDpc, bit 1 ExecutingIsr, bits 3-7 Priority
//  0x0B 0x0F u8  Rank
//
// src/engine/reference/sample.ts is its twin.
import * as L from './layout';
import { count, issue } from './diag';
import { addRow, block } from './memory';

/** Decodes one SampledProfile event: payload `data` of `n` bytes; the row space was checked by the walker. */
export function sampledProfileEvent(data: usize, n: i32, version: i32, pointerSize: i32, cpu: i32, tsAt: usize, fileOffset: f64): void {
  if (version != L.SMP_EVENT_VERSION) {
    count(L.D_SAMPLE_SKIPPED_VERSION);
    return;
  }
  if (n < pointerSize + L.SMP_P_SIZE) {
    issue(L.D_SAMPLE_SKIPPED_SHORT, <u32>n, fileOffset);
    return;
  }
  count(L.D_SAMPLE_DECODED);
  const T = L.TABLE_SAMPLES;
  const r = addRow(T);
  const blk = block(T); // columns at constant offsets (memory.ts)
  const p = data + <usize>pointerSize;
  const ip: u64 = pointerSize == 4 ? <u64>load<u32>(data, L.SMP_INSTRUCTION_POINTER) : load<u64>(data, L.SMP_INSTRUCTION_POINTER);
  const flags = <u32>load<u8>(p, L.SMP_P_FLAGS);
  store<i64>(blk + (r << 3), load<i64>(tsAt), L.SP_TIMESTAMP_AT);
  store<u16>(blk + (r << 1), <u16>cpu, L.SP_CPU_AT);
  store<u32>(blk + (r << 2), load<u32>(p, L.SMP_P_THREAD_ID), L.SP_THREAD_ID_AT);
  store<u64>(blk + (r << 3), ip, L.SP_INSTRUCTION_POINTER_AT);
  store<u16>(blk + (r << 1), load<u16>(p, L.SMP_P_COUNT), L.SP_COUNT_AT);
  store<u8>(blk + r, <u8>flags, L.SP_FLAGS_AT);
  store<u8>(blk + r, <u8>((flags >>> L.SMP_EXECUTING_DPC_BIT) & 1), L.SP_EXECUTING_DPC_AT);
  store<u8>(blk + r, <u8>((flags >>> L.SMP_EXECUTING_ISR_BIT) & 1), L.SP_EXECUTING_ISR_AT);
  store<u8>(blk + r, <u8>(flags >>> L.SMP_PRIORITY_SHIFT), L.SP_PRIORITY_AT);
  store<u8>(blk + r, load<u8>(p, L.SMP_P_RANK), L.SP_RANK_AT);
  store<u8>(blk + r, <u8>pointerSize, L.SP_POINTER_SIZE_AT);
  store<u8>(blk + r, <u8>version, L.SP_VERSION_AT);
  store<f64>(blk + (r << 3), fileOffset, L.SP_FILE_OFFSET_AT);
  store<u32>(blk + (r << 2), L.SP_ALWAYS_VALID, L.SP_VALID_AT); // stackId: null (attached after the decode)
}
