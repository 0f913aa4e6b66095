// WMI_SPINLOCK (HookId 0x0529, "SpinLock"), docs/format.md §E: one spinlock row per version-2 event.
// The twin of assembly/spinlock.ts (both layouts drawn there). The pointer width comes from the header type.
import * as L from '../../generated/layout.js';
import { count, issue } from './diag.js';
import { copy64, type Arena } from './memory.js';

/** Decodes one SpinLock event: payload at `data` of `n` bytes of `d`. */
export function spinlockEvent(
  a: Arena,
  d: DataView,
  data: number,
  n: number,
  version: number,
  pointerSize: number,
  cpu: number,
  tsAt: number,
  fileOffset: number,
): void {
  if (version !== L.SPL_EVENT_VERSION) {
    count(a, L.D_SPINLOCK_SKIPPED_VERSION);
    return;
  }
  if (n < (pointerSize === 4 ? L.SPL32_SIZE : L.SPL64_SIZE)) {
    issue(a, L.D_SPINLOCK_SKIPPED_SHORT, n, fileOffset);
    return;
  }
  count(a, L.D_SPINLOCK_DECODED);
  const b = a.builders.spinlock;
  const r = b.add();
  const c = b.view;
  const w = b.words;
  copy64(d, tsAt, w[L.SL_TIMESTAMP]!, r);
  c.cpu[r] = cpu;
  let tail: number;
  if (pointerSize === 4) {
    w[L.SL_SPIN_LOCK_ADDRESS]![2 * r] = d.getUint32(data + L.SPL32_SPIN_LOCK_ADDRESS, true);
    w[L.SL_CALLER_ADDRESS]![2 * r] = d.getUint32(data + L.SPL32_CALLER_ADDRESS, true);
    tail = data + L.SPL32_ACQUIRE_TIME;
  } else {
    copy64(d, data + L.SPL64_SPIN_LOCK_ADDRESS, w[L.SL_SPIN_LOCK_ADDRESS]!, r);
    copy64(d, data + L.SPL64_CALLER_ADDRESS, w[L.SL_CALLER_ADDRESS]!, r);
    tail = data + L.SPL64_ACQUIRE_TIME;
  }
  copy64(d, tail + L.SPL_TAIL_ACQUIRE_TIME, w[L.SL_ACQUIRE_TIME]!, r);
  copy64(d, tail + L.SPL_TAIL_RELEASE_TIME, w[L.SL_RELEASE_TIME]!, r);
  c.waitTimeInCycles[r] = d.getUint32(tail + L.SPL_TAIL_WAIT_TIME_IN_CYCLES, true);
  c.spinCount[r] = d.getUint32(tail + L.SPL_TAIL_SPIN_COUNT, true);
  c.threadId[r] = d.getUint32(tail + L.SPL_TAIL_THREAD_ID, true);
  c.interruptCount[r] = d.getUint32(tail + L.SPL_TAIL_INTERRUPT_COUNT, true);
  c.irql[r] = d.getUint8(tail + L.SPL_TAIL_IRQL);
  c.acquireDepth[r] = d.getUint8(tail + L.SPL_TAIL_ACQUIRE_DEPTH);
  const flags = d.getUint8(tail + L.SPL_TAIL_FLAGS);
  c.acquireMode[r] = flags & L.SPL_ACQUIRE_MODE_MASK;
  c.executeDpc[r] = (flags >>> L.SPL_EXECUTE_DPC_BIT) & 1;
  c.executeIsr[r] = (flags >>> L.SPL_EXECUTE_ISR_BIT) & 1;
  c.pointerSize[r] = pointerSize;
  c.version[r] = version;
  c.fileOffset[r] = fileOffset;
}
