// PERFINFO_LOG_TYPE_CONTEXTSWAP_BATCH (HookId 0x0525, "CompCS"), docs/format.md §D.
//
// PERFINFO_CCSWAP_BUFFER (0x58 bytes): +0x00 i64 FirstTimeStamp, +0x08 u32 TidTable[16],
// +0x48 i8 ThreadBasePriority[16]; then byte-packed packets to the end of the event (D.4, LSB first):
//
//   IDLE_SHORT (2 B)  d: 0-1 type=0, 2-15 TimeDelta
//   IDLE       (4 B)  d: 0-1 type=1, 2-31 TimeDelta
//   LITE       (4 B)  d: 0-1 type=2, 2-5 OldThreadIdIndex, 6-8 OldThreadPriInc, 9-14 OldThreadStateWr, 15-31 TimeDelta
//   FULL       (8 B)  d0: 0-1 type=3, 2-31 TimeDelta
//                     d1: 0-3 OldThreadIdIndex, 4-9 OldThreadStateWr, 10-14 OldThreadPriority, 15-31 NewThreadWaitTime
//
// Each packet is a switch away from its old thread at FirstTimeStamp + the deltas so far (D.7). Its new
// thread is the old thread of the next switch on the same processor (D.8), so every switch is held back
// per processor until the next one arrives — across batches and buffers; finish() emits the last ones
// with newThreadId null. OldThreadStateWr is a wait reason below the bias (MaximumWaitReason), else the
// biased thread state (D.5).
import * as L from './layout';
import { countN, issue, count } from './diag';
import { col, pendingStart, PENDING_SLOT_SIZE, rows, setRows } from './memory';

// Per-processor held-back switch, PENDING_SLOT_SIZE bytes at pendingStart + cpu * PENDING_SLOT_SIZE.
const PEND_TIMESTAMP: i32 = 0; // i64 time of the switch
const PEND_FILE_OFFSET: i32 = 8; // f64 file offset of its batch event
const PEND_OLD_THREAD_ID: i32 = 16; // u32
const PEND_NEW_THREAD_WAIT_TIME: i32 = 20; // u32
const PEND_VALID: i32 = 24; // u32 column mask (without CS_NEW_THREAD_ID)
const PEND_BYTES: i32 = 28; // u32: OldThreadPriority | OldThreadState << 8 | OldThreadWaitReason << 16 | source << 24
const PEND_HELD: i32 = 32; // u32 1 = a switch is held back

const T: i32 = L.TABLE_CSWITCH;

/**
 * Writes a held-back switch as row `r` of the cswitch table: the one place compact rows are made.
 * `bytes` = OldThreadPriority | OldThreadState << 8 | OldThreadWaitReason << 16 | source << 24;
 * `valid` already says whether newThreadId is known.
 */
// @ts-ignore: decorator
@inline
function emitHeld(r: usize, cpu: i32, ts: i64, fileOffset: f64, newThreadId: u32, oldThreadId: u32, waitTime: u32, valid: u32, bytes: u32): void {
  store<i64>(col(T, L.CS_TIMESTAMP) + (r << 3), ts);
  store<u16>(col(T, L.CS_CPU) + (r << 1), <u16>cpu);
  store<u32>(col(T, L.CS_NEW_THREAD_ID) + (r << 2), newThreadId);
  store<u32>(col(T, L.CS_OLD_THREAD_ID) + (r << 2), oldThreadId);
  store<u8>(col(T, L.CS_OLD_THREAD_PRIORITY) + r, <u8>bytes);
  store<u8>(col(T, L.CS_OLD_THREAD_STATE) + r, <u8>(bytes >>> 8));
  store<u8>(col(T, L.CS_OLD_THREAD_WAIT_REASON) + r, <u8>(bytes >>> 16));
  store<u32>(col(T, L.CS_NEW_THREAD_WAIT_TIME) + (r << 2), waitTime);
  store<u8>(col(T, L.CS_NEW_THREAD_WAIT_TIME_AT_MOST_ONE_TICK) + r, u8((bytes >>> 24) == L.CS_SOURCE_LITE));
  store<u8>(col(T, L.CS_SOURCE) + r, <u8>(bytes >>> 24));
  store<u8>(col(T, L.CS_VERSION) + r, <u8>L.CCS_EVENT_VERSION);
  store<f64>(col(T, L.CS_FILE_OFFSET) + (r << 3), fileOffset);
  store<u32>(col(T, L.CS_VALID) + (r << 2), valid);
}

/** Expands one batch event: payload `data` of `n` bytes; the row space was checked by the walker. */
export function compactBatch(data: usize, n: i32, version: i32, cpu: i32, tsAt: usize, fileOffset: f64, bias: i32): void {
  if (version != L.CCS_EVENT_VERSION) {
    count(L.D_COMPCS_SKIPPED_VERSION);
    return;
  }
  if (n < L.CCS_HEADER_SIZE) {
    issue(L.D_COMPCS_SKIPPED_SHORT, <u32>n, fileOffset);
    return;
  }
  count(L.D_COMPCS_BATCHES);
  if (n > L.CCS_MAX_BATCH_BYTES) issue(L.D_COMPCS_OVERSIZE, <u32>n, fileOffset);

  // the held-back switch of this processor, in locals for the whole batch
  const slot = pendingStart + <usize>cpu * PENDING_SLOT_SIZE;
  let held = load<u32>(slot, PEND_HELD) != 0;
  let heldTs = load<i64>(slot, PEND_TIMESTAMP);
  let heldFileOffset = load<f64>(slot, PEND_FILE_OFFSET);
  let heldOldThreadId = load<u32>(slot, PEND_OLD_THREAD_ID);
  let heldWaitTime = load<u32>(slot, PEND_NEW_THREAD_WAIT_TIME);
  let heldValid = load<u32>(slot, PEND_VALID);
  let heldBytes = load<u32>(slot, PEND_BYTES);

  let t = load<i64>(data, L.CCS_FIRST_TIMESTAMP);

  let r = <usize>rows(T);

  const tidTable = data + L.CCS_TID_TABLE;
  const basePriority = data + L.CCS_THREAD_BASE_PRIORITY;
  let highestIndex: i32 = -1;
  let packets: u64 = 0; // packets per DataType, 16 bits each
  const firstPacket = data + L.CCS_HEADER_SIZE;
  let p = firstPacket;
  const end = data + <usize>n;
  while (p < end) {
    // one load of up to 8 bytes, never past the event
    const rem = <i32>(end - p);
    let w: u64;
    if (rem >= 8) w = load<u64>(p);
    else if (rem >= 4) w = <u64>load<u32>(p);
    else if (rem >= 2) w = <u64>load<u16>(p);
    else w = <u64>load<u8>(p);
    const lo = <u32>w;
    const type = lo & 3;
    const need = L.packetBytes(type);
    if (<i32>need > rem) {
      issue(L.D_COMPCS_TRUNCATED_PACKET, <u32>(p - data), fileOffset);
      break;
    }
    const hi = <u32>(w >>> 32);
    const full = type == <u32>L.CCS_TYPE_FULL;
    const busy = type >= <u32>L.CCS_TYPE_LITE; // LITE/FULL name a TidTable thread; IDLE* the idle thread
    const delta = select<u32>(lo >>> 15, select<u32>(lo, lo & 0xffff, type != 0) >>> 2, type == <u32>L.CCS_TYPE_LITE);
    // fields of LITE/FULL (read for idle packets too, from inside the header, then discarded)
    const index = select<u32>(hi, lo >>> 2, full) & 0xf;
    const stateWr = select<u32>(hi >>> 4, lo >>> 9, full) & 0x3f;
    const tid = load<u32>(tidTable + (<usize>index << 2));
    const litePriority = <u32>(<i32>load<i8>(basePriority + <usize>index) + <i32>((lo >>> 6) & 7));
    const waiting = <i32>stateWr < bias;
    const biasedState = stateWr - <u32>bias;
    const oldThreadId = select<u32>(tid, 0, busy);
    const priority = select<u32>(select<u32>((hi >>> 10) & 0x1f, litePriority, full), 0, busy);
    const state = select<u32>(select<u32>(L.THREAD_STATE_WAITING, biasedState, waiting), 0, busy);
    const waitReason = select<u32>(stateWr, 0, (i32(busy) & i32(waiting)) != 0);
    const waitTime = select<u32>(hi >>> 15, 0, full);
    const valid =
      L.CCS_IDLE_VALID |
      select<u32>(L.CCS_BUSY_VALID | select<u32>(L.CCS_WAITING_VALID, 0, waiting), 0, busy) |
      select<u32>(L.CCS_FULL_VALID, 0, full);
    // D.8 checks: index jumps past highest+1 or names an empty slot; biased state 5 or >= 10. Computed
    // without branches (idle packets make them random), then one branch that is almost never taken.
    const badIndex = i32(<i32>index > highestIndex + 1) | i32(tid == 0);
    const badState = i32(!waiting) & (i32(biasedState == L.THREAD_STATE_WAITING) | i32(biasedState >= <u32>L.THREAD_STATE_COUNT));
    if ((i32(busy) & (badIndex | badState)) != 0) packetIssues(badIndex != 0, index, badState != 0, stateWr, fileOffset);
    highestIndex = select<i32>(max<i32>(highestIndex, <i32>index), highestIndex, busy);

    t += <i64>delta;
    // D.7 self-check: the first switch of a batch must not precede the last switch before it on this CPU
    if (p == firstPacket && held && t < heldTs) issue(L.D_COMPCS_TIME_MISMATCH, L.TIME_BEFORE_PREVIOUS, fileOffset);
    if (held) {
      emitHeld(r, cpu, heldTs, heldFileOffset, oldThreadId, heldOldThreadId, heldWaitTime, heldValid | L.CCS_NEXT_VALID, heldBytes);
      r++;
    }
    held = true;
    heldTs = t;
    heldFileOffset = fileOffset;
    heldOldThreadId = oldThreadId;
    heldWaitTime = waitTime;
    heldValid = valid;
    heldBytes = (priority & 0xff) | ((state & 0xff) << 8) | (waitReason << 16) | ((type + L.CS_SOURCE_IDLE_SHORT) << 24);
    packets += <u64>1 << (<u64>type << 4);
    p += <usize>need;
  }

  setRows(T, <i32>r);
  store<u32>(slot, u32(held), PEND_HELD);
  store<i64>(slot, heldTs, PEND_TIMESTAMP);
  store<f64>(slot, heldFileOffset, PEND_FILE_OFFSET);
  store<u32>(slot, heldOldThreadId, PEND_OLD_THREAD_ID);
  store<u32>(slot, heldWaitTime, PEND_NEW_THREAD_WAIT_TIME);
  store<u32>(slot, heldValid, PEND_VALID);
  store<u32>(slot, heldBytes, PEND_BYTES);
  countN(L.D_COMPCS_PACKETS_IDLE_SHORT, packets & 0xffff);
  countN(L.D_COMPCS_PACKETS_IDLE, (packets >>> 16) & 0xffff);
  countN(L.D_COMPCS_PACKETS_LITE, (packets >>> 32) & 0xffff);
  countN(L.D_COMPCS_PACKETS_FULL, packets >>> 48);
  if (t > load<i64>(tsAt)) issue(L.D_COMPCS_TIME_MISMATCH, L.TIME_AFTER_EVENT, fileOffset);
}

/** The D.8 issues of one LITE/FULL packet, in the reference's order. */
function packetIssues(badIndex: bool, index: u32, badState: bool, stateWr: u32, fileOffset: f64): void {
  if (badIndex) issue(L.D_COMPCS_BAD_TID_INDEX, index, fileOffset);
  if (badState) issue(L.D_COMPCS_STATE_OUT_OF_RANGE, stateWr, fileOffset);
}

/** End of input: emits every processor's held-back switch with an unknown new thread. The caller
 *  made sure MAX_PROCESSORS rows are free. */
export function flushHeldSwitches(): void {
  let r = <usize>rows(T);
  for (let cpu: i32 = 0; cpu < L.MAX_PROCESSORS; cpu++) {
    const slot = pendingStart + <usize>cpu * PENDING_SLOT_SIZE;
    if (load<u32>(slot, PEND_HELD) == 0) continue;
    emitHeld(
      r,
      cpu,
      load<i64>(slot, PEND_TIMESTAMP),
      load<f64>(slot, PEND_FILE_OFFSET),
      0,
      load<u32>(slot, PEND_OLD_THREAD_ID),
      load<u32>(slot, PEND_NEW_THREAD_WAIT_TIME),
      load<u32>(slot, PEND_VALID),
      load<u32>(slot, PEND_BYTES),
    );
    store<u32>(slot, 0, PEND_HELD);
    r++;
    count(L.D_COMPCS_NEW_THREAD_UNKNOWN);
  }
  setRows(T, <i32>r);
}

// ---- partitioned decodes (src/parallel): each processor's held-back switch, read at the end of one
// partition and set at the start of the next. Out-of-range processors read as nothing held.
// @ts-ignore: decorator
@inline
function pendingSlot(cpu: i32): usize {
  return pendingStart + <usize>cpu * PENDING_SLOT_SIZE;
}
// @ts-ignore: decorator
@inline
function cpuInRange(cpu: i32): bool {
  return cpu >= 0 && cpu < L.MAX_PROCESSORS;
}
export function pendingHeld(cpu: i32): i32 {
  return cpuInRange(cpu) ? <i32>load<u32>(pendingSlot(cpu), PEND_HELD) : 0;
}
export function pendingTimestamp(cpu: i32): i64 {
  return cpuInRange(cpu) ? load<i64>(pendingSlot(cpu), PEND_TIMESTAMP) : 0;
}
export function pendingFileOffset(cpu: i32): f64 {
  return cpuInRange(cpu) ? load<f64>(pendingSlot(cpu), PEND_FILE_OFFSET) : 0;
}
export function pendingOldThreadId(cpu: i32): u32 {
  return cpuInRange(cpu) ? load<u32>(pendingSlot(cpu), PEND_OLD_THREAD_ID) : 0;
}
export function pendingWaitTime(cpu: i32): u32 {
  return cpuInRange(cpu) ? load<u32>(pendingSlot(cpu), PEND_NEW_THREAD_WAIT_TIME) : 0;
}
export function pendingValid(cpu: i32): u32 {
  return cpuInRange(cpu) ? load<u32>(pendingSlot(cpu), PEND_VALID) : 0;
}
/** OldThreadPriority | OldThreadState << 8 | OldThreadWaitReason << 16 | source << 24 */
export function pendingBytes(cpu: i32): u32 {
  return cpuInRange(cpu) ? load<u32>(pendingSlot(cpu), PEND_BYTES) : 0;
}
/** Sets a processor's held-back switch (held = 0: none; the other fields are stored all the same). */
export function setPending(cpu: i32, held: i32, ts: i64, fileOffset: f64, oldThreadId: u32, waitTime: u32, valid: u32, bytes: u32): void {
  if (!cpuInRange(cpu)) return;
  const slot = pendingSlot(cpu);
  store<u32>(slot, u32(held != 0), PEND_HELD);
  store<i64>(slot, ts, PEND_TIMESTAMP);
  store<f64>(slot, fileOffset, PEND_FILE_OFFSET);
  store<u32>(slot, oldThreadId, PEND_OLD_THREAD_ID);
  store<u32>(slot, waitTime, PEND_NEW_THREAD_WAIT_TIME);
  store<u32>(slot, valid, PEND_VALID);
  store<u32>(slot, bytes, PEND_BYTES);
}
