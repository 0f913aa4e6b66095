// WMI_SPINLOCK (HookId 0x0529, "SpinLock"), docs/format.md §E: one spinlock row per version-2 event.
//
//  x86  x64
//  0x00 0x00 ptr SpinLockAddress      then, at tail = 0x08 (x86) / 0x10 (x64):
//  0x04 0x08 ptr CallerAddress        +0x00 u64 AcquireTime   +0x18 u32 ThreadId
//                                     +0x08 u64 ReleaseTime   +0x1C u32 InterruptCount
//                                     +0x10 u32 WaitTimeInCycles  +0x20 u8 Irql  +0x21 u8 AcquireDepth
//                                     +0x14 u32 SpinCount     +0x22 u8 flags: AcquireMode 0-5, ExecuteDpc 6, ExecuteIsr 7
//
// The pointer width comes from the header type (x86 layout for SYSTEM32/COMPACT32/PERFINFO32).
import * as L from './layout';
import { count, issue } from './diag';
import { addRow, block } from './memory';

/** Decodes one SpinLock event: payload `data` of `n` bytes; the row space was checked by the walker. Inlined into
 *  the walker's loop: a call there for every event makes the compiled loop keep its values on the stack. */
// @ts-ignore: decorator
@inline
export function spinlockEvent(data: usize, n: i32, version: i32, pointerSize: i32, cpu: i32, tsAt: usize, fileOffset: f64): void {
  if (version != L.SPL_EVENT_VERSION) {
    count(L.D_SPINLOCK_SKIPPED_VERSION);
    return;
  }
  if (n < (pointerSize == 4 ? L.SPL32_SIZE : L.SPL64_SIZE)) {
    issue(L.D_SPINLOCK_SKIPPED_SHORT, <u32>n, fileOffset);
    return;
  }
  putSpinlock(data, version, pointerSize, cpu, tsAt, fileOffset);
}

/** The row of a SpinLock event that passed the checks (counted as decoded). */
// @ts-ignore: decorator
@inline
export function putSpinlock(data: usize, version: i32, pointerSize: i32, cpu: i32, tsAt: usize, fileOffset: f64): void {
  count(L.D_SPINLOCK_DECODED);
  const T = L.TABLE_SPINLOCK;
  const r = addRow(T);
  const blk = block(T); // columns at constant offsets (memory.ts)
  let tail: usize;
  let spinLockAddress: u64;
  let callerAddress: u64;
  if (pointerSize == 4) {
    spinLockAddress = <u64>load<u32>(data, L.SPL32_SPIN_LOCK_ADDRESS);
    callerAddress = <u64>load<u32>(data, L.SPL32_CALLER_ADDRESS);
    tail = data + L.SPL32_ACQUIRE_TIME;
  } else {
    spinLockAddress = load<u64>(data, L.SPL64_SPIN_LOCK_ADDRESS);
    callerAddress = load<u64>(data, L.SPL64_CALLER_ADDRESS);
    tail = data + L.SPL64_ACQUIRE_TIME;
  }
  store<i64>(blk + (r << 3), load<i64>(tsAt), L.SL_TIMESTAMP_AT);
  store<u16>(blk + (r << 1), <u16>cpu, L.SL_CPU_AT);
  store<u64>(blk + (r << 3), spinLockAddress, L.SL_SPIN_LOCK_ADDRESS_AT);
  store<u64>(blk + (r << 3), callerAddress, L.SL_CALLER_ADDRESS_AT);
  store<u64>(blk + (r << 3), load<u64>(tail, L.SPL_TAIL_ACQUIRE_TIME), L.SL_ACQUIRE_TIME_AT);
  store<u64>(blk + (r << 3), load<u64>(tail, L.SPL_TAIL_RELEASE_TIME), L.SL_RELEASE_TIME_AT);
  store<u32>(blk + (r << 2), load<u32>(tail, L.SPL_TAIL_WAIT_TIME_IN_CYCLES), L.SL_WAIT_TIME_IN_CYCLES_AT);
  store<u32>(blk + (r << 2), load<u32>(tail, L.SPL_TAIL_SPIN_COUNT), L.SL_SPIN_COUNT_AT);
  store<u32>(blk + (r << 2), load<u32>(tail, L.SPL_TAIL_THREAD_ID), L.SL_THREAD_ID_AT);
  store<u32>(blk + (r << 2), load<u32>(tail, L.SPL_TAIL_INTERRUPT_COUNT), L.SL_INTERRUPT_COUNT_AT);
  store<u8>(blk + r, load<u8>(tail, L.SPL_TAIL_IRQL), L.SL_IRQL_AT);
  store<u8>(blk + r, load<u8>(tail, L.SPL_TAIL_ACQUIRE_DEPTH), L.SL_ACQUIRE_DEPTH_AT);
  const flags = <u32>load<u8>(tail, L.SPL_TAIL_FLAGS);
  store<u8>(blk + r, <u8>(flags & L.SPL_ACQUIRE_MODE_MASK), L.SL_ACQUIRE_MODE_AT);
  store<u8>(blk + r, <u8>((flags >>> L.SPL_EXECUTE_DPC_BIT) & 1), L.SL_EXECUTE_DPC_AT);
  store<u8>(blk + r, <u8>((flags >>> L.SPL_EXECUTE_ISR_BIT) & 1), L.SL_EXECUTE_ISR_AT);
  store<u8>(blk + r, <u8>pointerSize, L.SL_POINTER_SIZE_AT);
  store<u8>(blk + r, <u8>version, L.SL_VERSION_AT);
  store<f64>(blk + (r << 3), fileOffset, L.SL_FILE_OFFSET_AT);
}
