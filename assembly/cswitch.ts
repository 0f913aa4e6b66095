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
import { addRow, col } from './memory';

// @ts-ignore: decorator
@inline
function bit(c: i32): u32 {
  return <u32>1 << <u32>c;
}

/** Decodes one CSwitch event: payload `data` of `n` bytes; the row space was checked by the walker. */
export function cswitchEvent(data: usize, n: i32, version: i32, cpu: i32, tsAt: usize, fileOffset: f64): void {
  if (version < 1 || version > 4) {
    count(L.D_CSWITCH_SKIPPED_VERSION);
    return;
  }
  if (n < L.CSW_SIZE_V1) {
    issue(L.D_CSWITCH_SKIPPED_SHORT, <u32>n, fileOffset);
    return;
  }
  count(L.D_CSWITCH_DECODED);
  const T = L.TABLE_CSWITCH;
  const r = addRow(T);
  const ids = load<u64>(data, L.CSW_NEW_THREAD_ID); // NewThreadId, OldThreadId
  const b = load<u64>(data, L.CSW_NEW_THREAD_PRIORITY); // bytes 0x08..0x0F
  store<i64>(col(T, L.CS_TIMESTAMP) + (r << 3), load<i64>(tsAt));
  store<u16>(col(T, L.CS_CPU) + (r << 1), <u16>cpu);
  store<u32>(col(T, L.CS_NEW_THREAD_ID) + (r << 2), <u32>ids);
  store<u32>(col(T, L.CS_OLD_THREAD_ID) + (r << 2), <u32>(ids >>> 32));
  store<u8>(col(T, L.CS_NEW_THREAD_PRIORITY) + r, <u8>b);
  store<u8>(col(T, L.CS_OLD_THREAD_PRIORITY) + r, <u8>(b >>> 8));
  store<u8>(col(T, L.CS_OLD_THREAD_WAIT_REASON) + r, <u8>(b >>> 32));
  store<u8>(col(T, L.CS_OLD_THREAD_STATE) + r, <u8>(b >>> 48));
  store<u8>(col(T, L.CS_OLD_THREAD_IDEAL_PROCESSOR) + r, <u8>(b >>> 56));
  const byte0a = <u8>(b >>> 16);
  const byte0b = <u8>(b >>> 24);
  const byte0d = <u32>(b >>> 40) & 0xff;
  let mask = L.CSW_EVENT_VALID;
  if (version == 1) {
    store<u8>(col(T, L.CS_NEW_THREAD_QUANTUM) + r, byte0a);
    store<u8>(col(T, L.CS_OLD_THREAD_QUANTUM) + r, byte0b);
    mask |= bit(L.CS_NEW_THREAD_QUANTUM) | bit(L.CS_OLD_THREAD_QUANTUM);
  } else {
    store<u8>(col(T, L.CS_PREVIOUS_CSTATE) + r, byte0a);
    store<u8>(col(T, L.CS_NEW_THREAD_PRIORITY_DECREMENT) + r, byte0b);
    mask |= bit(L.CS_PREVIOUS_CSTATE) | bit(L.CS_NEW_THREAD_PRIORITY_DECREMENT);
  }
  if (version <= 2) {
    store<u8>(col(T, L.CS_OLD_THREAD_WAIT_MODE) + r, <u8>byte0d);
  } else {
    // C.3: the byte is a flags byte whose bit 0 is the wait mode
    store<u8>(col(T, L.CS_OLD_THREAD_WAIT_MODE) + r, <u8>(byte0d & 1));
    store<u8>(col(T, L.CS_THREAD_FLAGS) + r, <u8>byte0d);
    mask |= bit(L.CS_THREAD_FLAGS);
    if (version == 3) {
      store<u8>(col(T, L.CS_OLD_THREAD_BAM_EPP_IMPORTANT) + r, <u8>((byte0d >>> 1) & 1));
      store<u8>(col(T, L.CS_NEW_THREAD_BAM_EPP_IMPORTANT) + r, <u8>((byte0d >>> 2) & 1));
      mask |= bit(L.CS_OLD_THREAD_BAM_EPP_IMPORTANT) | bit(L.CS_NEW_THREAD_BAM_EPP_IMPORTANT);
    } else {
      store<u8>(col(T, L.CS_OLD_THREAD_BAM_QOS_LEVEL) + r, <u8>((byte0d >>> 1) & 7));
      store<u8>(col(T, L.CS_NEW_THREAD_BAM_QOS_LEVEL) + r, <u8>((byte0d >>> 4) & 7));
      mask |= bit(L.CS_OLD_THREAD_BAM_QOS_LEVEL) | bit(L.CS_NEW_THREAD_BAM_QOS_LEVEL);
    }
  }
  // every row stores newThreadWaitTime, its at-most-one-tick flag and source (memory.ts rewrittenColumns)
  let waitTime: u32 = 0;
  if (n >= L.CSW_NEW_THREAD_WAIT_TIME + 4) {
    waitTime = load<u32>(data, L.CSW_NEW_THREAD_WAIT_TIME);
    mask |= bit(L.CS_NEW_THREAD_WAIT_TIME);
  }
  store<u32>(col(T, L.CS_NEW_THREAD_WAIT_TIME) + (r << 2), waitTime);
  store<u8>(col(T, L.CS_NEW_THREAD_WAIT_TIME_AT_MOST_ONE_TICK) + r, 0);
  store<u8>(col(T, L.CS_SOURCE) + r, <u8>L.CS_SOURCE_CSWITCH);
  if (n >= L.CSW_OLD_THREAD_REMAINING_QUANTUM + 4) {
    store<i32>(col(T, L.CS_OLD_THREAD_REMAINING_QUANTUM) + (r << 2), load<i32>(data, L.CSW_OLD_THREAD_REMAINING_QUANTUM));
    mask |= bit(L.CS_OLD_THREAD_REMAINING_QUANTUM);
  }
  store<u8>(col(T, L.CS_VERSION) + r, <u8>version);
  store<f64>(col(T, L.CS_FILE_OFFSET) + (r << 3), fileOffset);
  store<u32>(col(T, L.CS_VALID) + (r << 2), mask);
}
