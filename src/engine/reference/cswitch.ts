// WMI_CONTEXTSWAP (HookId 0x0524, "CSwitch"), docs/format.md §C: one cswitch row per event.
// The twin of assembly/cswitch.ts (payload layout drawn there).
import * as L from '../../generated/layout.js';
import { count, issue } from './diag.js';
import type { Arena } from './memory.js';

const BIT = (c: number): number => (1 << c) >>> 0;

/** Decodes one CSwitch event: payload at `data` of `n` bytes of `d`. */
export function cswitchEvent(a: Arena, d: DataView, data: number, n: number, version: number, cpu: number, tsAt: number, fileOffset: number): void {
  if (version < 1 || version > 4) {
    count(a, L.D_CSWITCH_SKIPPED_VERSION);
    return;
  }
  if (n < L.CSW_SIZE_V1) {
    issue(a, L.D_CSWITCH_SKIPPED_SHORT, n, fileOffset);
    return;
  }
  count(a, L.D_CSWITCH_DECODED);
  const b = a.builders.cswitch;
  const r = b.add();
  const c = b.view;
  const ts = b.words[L.CS_TIMESTAMP]!;
  ts[2 * r] = d.getUint32(tsAt, true);
  ts[2 * r + 1] = d.getUint32(tsAt + 4, true);
  c.cpu[r] = cpu;
  c.newThreadId[r] = d.getUint32(data + L.CSW_NEW_THREAD_ID, true);
  c.oldThreadId[r] = d.getUint32(data + L.CSW_OLD_THREAD_ID, true);
  c.newThreadPriority[r] = d.getInt8(data + L.CSW_NEW_THREAD_PRIORITY);
  c.oldThreadPriority[r] = d.getInt8(data + L.CSW_OLD_THREAD_PRIORITY);
  c.oldThreadWaitReason[r] = d.getUint8(data + L.CSW_OLD_THREAD_WAIT_REASON);
  c.oldThreadState[r] = d.getUint8(data + L.CSW_OLD_THREAD_STATE);
  c.oldThreadIdealProcessor[r] = d.getUint8(data + L.CSW_OLD_THREAD_IDEAL_PROCESSOR);
  let mask = L.CSW_EVENT_VALID;
  const byte0a = d.getUint8(data + L.CSW_PREVIOUS_CSTATE);
  const byte0b = d.getInt8(data + L.CSW_NEW_THREAD_PRIORITY_DECREMENT);
  const byte0d = d.getUint8(data + L.CSW_OLD_THREAD_WAIT_MODE);
  if (version === 1) {
    c.newThreadQuantum[r] = byte0a;
    c.oldThreadQuantum[r] = byte0b;
    mask |= BIT(L.CS_NEW_THREAD_QUANTUM) | BIT(L.CS_OLD_THREAD_QUANTUM);
  } else {
    c.previousCState[r] = byte0a;
    c.newThreadPriorityDecrement[r] = byte0b;
    mask |= BIT(L.CS_PREVIOUS_CSTATE) | BIT(L.CS_NEW_THREAD_PRIORITY_DECREMENT);
  }
  if (version <= 2) {
    c.oldThreadWaitMode[r] = byte0d;
  } else {
    // §C.3: the byte is a flags byte whose bit 0 is the wait mode
    c.oldThreadWaitMode[r] = byte0d & 1;
    c.threadFlags[r] = byte0d;
    mask |= BIT(L.CS_THREAD_FLAGS);
    if (version === 3) {
      c.oldThreadBamEppImportant[r] = (byte0d >>> 1) & 1;
      c.newThreadBamEppImportant[r] = (byte0d >>> 2) & 1;
      mask |= BIT(L.CS_OLD_THREAD_BAM_EPP_IMPORTANT) | BIT(L.CS_NEW_THREAD_BAM_EPP_IMPORTANT);
    } else {
      c.oldThreadBamQosLevel[r] = (byte0d >>> 1) & 7;
      c.newThreadBamQosLevel[r] = (byte0d >>> 4) & 7;
      mask |= BIT(L.CS_OLD_THREAD_BAM_QOS_LEVEL) | BIT(L.CS_NEW_THREAD_BAM_QOS_LEVEL);
    }
  }
  if (n >= L.CSW_NEW_THREAD_WAIT_TIME + 4) {
    c.newThreadWaitTime[r] = d.getUint32(data + L.CSW_NEW_THREAD_WAIT_TIME, true);
    mask |= BIT(L.CS_NEW_THREAD_WAIT_TIME);
  }
  if (n >= L.CSW_OLD_THREAD_REMAINING_QUANTUM + 4) {
    c.oldThreadRemainingQuantum[r] = d.getInt32(data + L.CSW_OLD_THREAD_REMAINING_QUANTUM, true);
    mask |= BIT(L.CS_OLD_THREAD_REMAINING_QUANTUM);
  }
  c.source[r] = L.CS_SOURCE_CSWITCH;
  c.version[r] = version;
  c.fileOffset[r] = fileOffset;
  c.valid[r] = mask >>> 0;
}
