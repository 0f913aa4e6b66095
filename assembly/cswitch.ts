// WMI_CONTEXTSWAP (HookId 0x0524, "CSwitch"), docs/format.md §C: one cswitch row per event.
//
//  +0x00 u32 NewThreadId            +0x0A u8 PreviousCState | OldThreadRank (v1: i8 NewThreadQuantum)
//  +0x04 u32 OldThreadId            +0x0B i8 NewThreadPriorityDecrement (v1: i8 OldThreadQuantum)
//  +0x08 i8  NewThreadPriority      +0x0C u8 OldThreadWaitReason
//  +0x09 i8  OldThreadPriority      +0x0D u8 OldThreadWaitMode (v3/v4: flags byte, C.3)
//  +0x0E u8  OldThreadState         +0x0F u8 OldThreadIdealProcessor
//  +0x10 u32 NewThreadWaitTime      +0x14 i32 OldThreadRemainingQuantum   (v2+, if Size allows)
//
// Columns not written stay zero: resetRows() zeroes them (memory.ts rewrittenColumns: the columns every
// row stores are not zeroed).
import * as L from './layout';
import { count, issue } from './diag';
import { addRow, block } from './memory';

// @ts-ignore: decorator
@inline
function bit(c: i32): u32 {
  return <u32>1 << <u32>c;
}

/** Decodes one CSwitch event: payload `data` of `n` bytes; the row space was checked by the walker. Inlined into
 *  the walker's loop: a call there for every event makes the compiled loop keep its values on the stack. */
// @ts-ignore: decorator
@inline
export function cswitchEvent(data: usize, n: i32, version: i32, cpu: i32, tsAt: usize, fileOffset: f64): void {
  if (version < 1 || version > 4) {
    count(L.D_CSWITCH_SKIPPED_VERSION);
    return;
  }
  if (n < L.CSW_SIZE_V1) {
    issue(L.D_CSWITCH_SKIPPED_SHORT, <u32>n, fileOffset);
    return;
  }
  putCswitch(data, n, version, cpu, tsAt, fileOffset);
}

/** The row of a CSwitch event that passed the checks (counted as decoded). */
// @ts-ignore: decorator
@inline
export function putCswitch(data: usize, n: i32, version: i32, cpu: i32, tsAt: usize, fileOffset: f64): void {
  count(L.D_CSWITCH_DECODED);
  const T = L.TABLE_CSWITCH;
  const r = addRow(T);
  const blk = block(T); // columns at constant offsets (memory.ts)
  // byte by byte: a load and a store per byte column (extracting them from one u64 takes a copy and a shift more)
  store<i64>(blk + (r << 3), load<i64>(tsAt), L.CS_TIMESTAMP_AT);
  store<u16>(blk + (r << 1), <u16>cpu, L.CS_CPU_AT);
  store<u32>(blk + (r << 2), load<u32>(data, L.CSW_NEW_THREAD_ID), L.CS_NEW_THREAD_ID_AT);
  store<u32>(blk + (r << 2), load<u32>(data, L.CSW_OLD_THREAD_ID), L.CS_OLD_THREAD_ID_AT);
  store<u8>(blk + r, load<u8>(data, L.CSW_NEW_THREAD_PRIORITY), L.CS_NEW_THREAD_PRIORITY_AT);
  store<u8>(blk + r, load<u8>(data, L.CSW_OLD_THREAD_PRIORITY), L.CS_OLD_THREAD_PRIORITY_AT);
  store<u8>(blk + r, load<u8>(data, L.CSW_OLD_THREAD_WAIT_REASON), L.CS_OLD_THREAD_WAIT_REASON_AT);
  store<u8>(blk + r, load<u8>(data, L.CSW_OLD_THREAD_STATE), L.CS_OLD_THREAD_STATE_AT);
  store<u8>(blk + r, load<u8>(data, L.CSW_OLD_THREAD_IDEAL_PROCESSOR), L.CS_OLD_THREAD_IDEAL_PROCESSOR_AT);
  const byte0a = load<u8>(data, L.CSW_PREVIOUS_CSTATE); // v1: NewThreadQuantum
  const byte0b = load<u8>(data, L.CSW_NEW_THREAD_PRIORITY_DECREMENT); // v1: OldThreadQuantum
  const byte0d = <u32>load<u8>(data, L.CSW_OLD_THREAD_WAIT_MODE);
  let mask = L.CSW_EVENT_VALID;
  if (version == 1) {
    store<u8>(blk + r, byte0a, L.CS_NEW_THREAD_QUANTUM_AT);
    store<u8>(blk + r, byte0b, L.CS_OLD_THREAD_QUANTUM_AT);
    mask |= bit(L.CS_NEW_THREAD_QUANTUM) | bit(L.CS_OLD_THREAD_QUANTUM);
  } else {
    store<u8>(blk + r, byte0a, L.CS_PREVIOUS_CSTATE_AT);
    store<u8>(blk + r, byte0b, L.CS_NEW_THREAD_PRIORITY_DECREMENT_AT);
    mask |= bit(L.CS_PREVIOUS_CSTATE) | bit(L.CS_NEW_THREAD_PRIORITY_DECREMENT);
  }
  if (version <= 2) {
    store<u8>(blk + r, <u8>byte0d, L.CS_OLD_THREAD_WAIT_MODE_AT);
  } else {
    // C.3: the byte is a flags byte whose bit 0 is the wait mode
    store<u8>(blk + r, <u8>(byte0d & 1), L.CS_OLD_THREAD_WAIT_MODE_AT);
    store<u8>(blk + r, <u8>byte0d, L.CS_THREAD_FLAGS_AT);
    mask |= bit(L.CS_THREAD_FLAGS);
    if (version == 3) {
      store<u8>(blk + r, <u8>((byte0d >>> 1) & 1), L.CS_OLD_THREAD_BAM_EPP_IMPORTANT_AT);
      store<u8>(blk + r, <u8>((byte0d >>> 2) & 1), L.CS_NEW_THREAD_BAM_EPP_IMPORTANT_AT);
      mask |= bit(L.CS_OLD_THREAD_BAM_EPP_IMPORTANT) | bit(L.CS_NEW_THREAD_BAM_EPP_IMPORTANT);
    } else {
      store<u8>(blk + r, <u8>((byte0d >>> 1) & 7), L.CS_OLD_THREAD_BAM_QOS_LEVEL_AT);
      store<u8>(blk + r, <u8>((byte0d >>> 4) & 7), L.CS_NEW_THREAD_BAM_QOS_LEVEL_AT);
      mask |= bit(L.CS_OLD_THREAD_BAM_QOS_LEVEL) | bit(L.CS_NEW_THREAD_BAM_QOS_LEVEL);
    }
  }
  // every row stores newThreadWaitTime, its at-most-one-tick flag and source (memory.ts rewrittenColumns)
  let waitTime: u32 = 0;
  if (n >= L.CSW_NEW_THREAD_WAIT_TIME + 4) {
    waitTime = load<u32>(data, L.CSW_NEW_THREAD_WAIT_TIME);
    mask |= bit(L.CS_NEW_THREAD_WAIT_TIME);
  }
  store<u32>(blk + (r << 2), waitTime, L.CS_NEW_THREAD_WAIT_TIME_AT);
  store<u8>(blk + r, 0, L.CS_NEW_THREAD_WAIT_TIME_AT_MOST_ONE_TICK_AT);
  store<u8>(blk + r, <u8>L.CS_SOURCE_CSWITCH, L.CS_SOURCE_AT);
  if (n >= L.CSW_OLD_THREAD_REMAINING_QUANTUM + 4) {
    store<i32>(blk + (r << 2), load<i32>(data, L.CSW_OLD_THREAD_REMAINING_QUANTUM), L.CS_OLD_THREAD_REMAINING_QUANTUM_AT);
    mask |= bit(L.CS_OLD_THREAD_REMAINING_QUANTUM);
  }
  store<u8>(blk + r, <u8>version, L.CS_VERSION_AT);
  store<f64>(blk + (r << 3), fileOffset, L.CS_FILE_OFFSET_AT);
  store<u32>(blk + (r << 2), mask, L.CS_VALID_AT);
}
