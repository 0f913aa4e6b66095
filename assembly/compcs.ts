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
import { block, pendingStart, PENDING_SLOT_SIZE, rows, setRows } from './memory';

// Per-processor held-back switch, PENDING_SLOT_SIZE bytes at pendingStart + cpu * PENDING_SLOT_SIZE.
const PEND_TIMESTAMP: i32 = 0; // i64 time of the switch
const PEND_FILE_OFFSET: i32 = 8; // f64 file offset of its batch event
const PEND_OLD_THREAD_ID: i32 = 16; // u32
const PEND_NEW_THREAD_WAIT_TIME: i32 = 20; // u32
const PEND_VALID: i32 = 24; // u32 column mask (without CS_NEW_THREAD_ID)
const PEND_BYTES: i32 = 28; // u32: OldThreadPriority | OldThreadState << 8 | OldThreadWaitReason << 16 | source << 24
const PEND_HELD: i32 = 32; // u32 1 = a switch is held back

const T: i32 = L.TABLE_CSWITCH;

// What fastBatch needs to know of a packet kind (D.4), PK_SIZE bytes per DataType: field positions in the 8 bytes
// read at the packet (FULL's second dword = bits 32-63) and masks for the fields it carries.
const PK_DELTA_MASK: i32 = 0; // u32 TimeDelta bits
const PK_DELTA_SHIFT: i32 = 8; // u8
const PK_INDEX_SHIFT: i32 = 9; // u8 OldThreadIdIndex
const PK_STATE_SHIFT: i32 = 10; // u8 OldThreadStateWr
const PK_BUSY: i32 = 12; // i8 -1: names a TidTable thread (LITE, FULL)
const PK_FULL: i32 = 13; // i8 -1: FULL
const PK_BYTES: i32 = 14; // u8 the packet's length (L.packetBytes)
const PK_COUNT: i32 = 16; // u64 1 << (DataType * 16): adds one to the DataType's 16 bits of a packet count
const PK_SIZE: i32 = 32; // bytes per DataType
/** filled by fillPacketKinds() (a constant address, so that the packet loop keeps no register for it) */
const PACKET_KINDS: usize = memory.data(4 * PK_SIZE, 16);
let packetKindsFilled = false;

// What fastBatch writes for a packet of DataType `type` and OldThreadStateWr `swr` (D.5: a wait reason below
// the bias, else the biased thread state), 8 bytes at SWR_TABLE + ((type << 6 | swr) << 3), for the bias
// in swrTableBias: u32 valid columns of its row (its next switch included), u8 OldThreadState, u8
// OldThreadWaitReason, u8 source, u8 flags (SWR_AT_MOST_ONE_TICK, SWR_BAD_STATE).
const SWR_STATE: i32 = 4;
const SWR_WAIT_REASON: i32 = 5;
const SWR_SOURCE: i32 = 6;
const SWR_FLAGS: i32 = 7;
const SWR_AT_MOST_ONE_TICK: u32 = 1; // LITE: the new thread waited at most one tick
const SWR_BAD_STATE: u32 = 0x80; // D.8: a biased state of 5 (Waiting) or past the last state: reported
const SWR_TABLE: usize = memory.data(4 * 64 * 8, 16);
let swrTableBias: i32 = -1;

/** Fills SWR_TABLE for `bias`. */
function fillSwrTable(bias: i32): void {
  for (let type: i32 = 0; type < 4; type++) {
    const busy = type >= L.CCS_TYPE_LITE;
    const full = type == L.CCS_TYPE_FULL;
    for (let swr: i32 = 0; swr < 64; swr++) {
      const e = SWR_TABLE + (<usize>(type << 6 | swr) << 3);
      const waiting = swr < bias;
      const biasedState = <u32>(swr - bias);
      let valid = L.CCS_IDLE_VALID | L.CCS_NEXT_VALID;
      let state: u32 = 0;
      let reason: u32 = 0;
      let flags: u32 = type == L.CCS_TYPE_LITE ? SWR_AT_MOST_ONE_TICK : 0;
      if (busy) {
        valid |= L.CCS_BUSY_VALID;
        if (waiting) {
          valid |= L.CCS_WAITING_VALID;
          state = L.THREAD_STATE_WAITING;
          reason = <u32>swr;
        } else {
          state = biasedState & 0xff;
          if (biasedState == L.THREAD_STATE_WAITING || biasedState >= <u32>L.THREAD_STATE_COUNT) flags |= SWR_BAD_STATE;
        }
      }
      if (full) valid |= L.CCS_FULL_VALID;
      store<u32>(e, valid);
      store<u8>(e, <u8>state, SWR_STATE);
      store<u8>(e, <u8>reason, SWR_WAIT_REASON);
      store<u8>(e, <u8>(type + L.CS_SOURCE_IDLE_SHORT), SWR_SOURCE);
      store<u8>(e, <u8>flags, SWR_FLAGS);
    }
  }
  swrTableBias = bias;
}

function fillPacketKinds(): void {
  const at = PACKET_KINDS;
  for (let type: i32 = 0; type < 4; type++) {
    const e = at + <usize>(type * PK_SIZE);
    const busy = type >= L.CCS_TYPE_LITE;
    const full = type == L.CCS_TYPE_FULL;
    const lite = type == L.CCS_TYPE_LITE;
    const bits = type == L.CCS_TYPE_IDLE_SHORT ? L.CCS_SHORT_DELTA_BITS : lite ? L.CCS_SMALL_DELTA_BITS : L.CCS_FULL_DELTA_BITS;
    store<u32>(e, (<u32>1 << <u32>bits) - 1, PK_DELTA_MASK);
    store<u8>(e, <u8>(lite ? 15 : 2), PK_DELTA_SHIFT);
    store<u8>(e, <u8>(full ? 32 : 2), PK_INDEX_SHIFT);
    store<u8>(e, <u8>(full ? 36 : 9), PK_STATE_SHIFT);
    store<i8>(e, busy ? -1 : 0, PK_BUSY);
    store<i8>(e, full ? -1 : 0, PK_FULL);
    store<u8>(e, <u8>L.packetBytes(<u32>type), PK_BYTES);
    store<u64>(e, <u64>1 << (<u64>type << 4), PK_COUNT);
  }
  packetKindsFilled = true;
}

/**
 * Writes a held-back switch as row `r` of the cswitch table: the one place compact rows are made.
 * `bytes` = OldThreadPriority | OldThreadState << 8 | OldThreadWaitReason << 16 | source << 24;
 * `valid` already says whether newThreadId is known.
 */
// @ts-ignore: decorator
@inline
function emitHeld(r: usize, cpu: i32, ts: i64, fileOffset: f64, newThreadId: u32, oldThreadId: u32, waitTime: u32, valid: u32, bytes: u32): void {
  const blk = block(T); // columns at constant offsets (memory.ts)
  store<i64>(blk + (r << 3), ts, L.CS_TIMESTAMP_AT);
  store<u16>(blk + (r << 1), <u16>cpu, L.CS_CPU_AT);
  store<u32>(blk + (r << 2), newThreadId, L.CS_NEW_THREAD_ID_AT);
  store<u32>(blk + (r << 2), oldThreadId, L.CS_OLD_THREAD_ID_AT);
  store<u8>(blk + r, <u8>bytes, L.CS_OLD_THREAD_PRIORITY_AT);
  store<u8>(blk + r, <u8>(bytes >>> 8), L.CS_OLD_THREAD_STATE_AT);
  store<u8>(blk + r, <u8>(bytes >>> 16), L.CS_OLD_THREAD_WAIT_REASON_AT);
  store<u32>(blk + (r << 2), waitTime, L.CS_NEW_THREAD_WAIT_TIME_AT);
  store<u8>(blk + r, u8((bytes >>> 24) == L.CS_SOURCE_LITE), L.CS_NEW_THREAD_WAIT_TIME_AT_MOST_ONE_TICK_AT);
  store<u8>(blk + r, <u8>(bytes >>> 24), L.CS_SOURCE_AT);
  store<u8>(blk + r, <u8>L.CCS_EVENT_VERSION, L.CS_VERSION_AT);
  store<f64>(blk + (r << 3), fileOffset, L.CS_FILE_OFFSET_AT);
  store<u32>(blk + (r << 2), valid, L.CS_VALID_AT);
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
  const slot = pendingStart + <usize>cpu * PENDING_SLOT_SIZE;
  if (!fastBatch(data, n, cpu, tsAt, fileOffset, bias, slot)) slowBatch(data, n, cpu, tsAt, fileOffset, bias, slot);
}

/**
 * The packets of a batch in the common case, where none is reported (D.7/D.8 checks) and none is cut
 * short: one tight loop writes a row per packet straight into the columns — the held-back switch of this
 * processor first — and the new threads are filled in afterwards by one copy (row i's newThreadId = row
 * i + 1's oldThreadId); the last packet's row becomes the held-back switch. Returns false when a packet
 * needs a report, having changed nothing but cells past the row count (always-rewritten columns only,
 * memory.ts rewrittenColumns): slowBatch then redoes the batch, reporting in packet order.
 */
function fastBatch(data: usize, n: i32, cpu: i32, tsAt: usize, fileOffset: f64, bias: i32, slot: usize): bool {
  const held = load<u32>(slot, PEND_HELD) != 0;
  const r0 = <usize>rows(T);
  const first = r0 + (held ? 1 : 0); // row of the first packet
  let r = first;
  const blk = block(T); // columns at constant offsets (memory.ts)
  if (bias != swrTableBias) fillSwrTable(bias);
  if (!packetKindsFilled) fillPacketKinds();
  let t = load<i64>(data, L.CCS_FIRST_TIMESTAMP);
  let p = data + L.CCS_HEADER_SIZE;
  const end = data + <usize>n;
  let highestIndex: i32 = -1;
  let bad: u32 = 0;
  let packets: u64 = 0; // 16 bits per DataType
  while (p < end) {
    // 8 bytes whatever the packet's length: the bytes past a packet only feed fields that are then masked
    // out, and at most 7 bytes past the event are read, inside the buffer or the input's slack
    const w = load<u64>(p);
    const type = <u32>w & 3;
    const e = PACKET_KINDS + <usize>(type * PK_SIZE);
    const need = <usize>load<u8>(e, PK_BYTES);
    if (need > end - p) return false; // truncated packet: reported by slowBatch
    const busy = <u32>load<i8>(e, PK_BUSY); // all ones for LITE/FULL (a TidTable thread), else 0
    const index = <u32>(w >>> <u64>load<u8>(e, PK_INDEX_SHIFT)) & 0xf;
    const swr = <u32>(w >>> <u64>load<u8>(e, PK_STATE_SHIFT)) & 0x3f;
    const tid = load<u32>(data + (<usize>index << 2), L.CCS_TID_TABLE);
    const out = load<u64>(SWR_TABLE + (<usize>(type << 6 | swr) << 3));
    // D.8 checks, for LITE/FULL: index past highest + 1, an empty TidTable slot; the state (SWR_BAD_STATE)
    bad |= (busy & (u32(<i32>index > highestIndex + 1) | u32(tid == 0))) | <u32>(out >>> 63);
    highestIndex = select<i32>(max<i32>(highestIndex, <i32>index), highestIndex, busy != 0);
    t += <i64>((<u32>w >>> <u32>load<u8>(e, PK_DELTA_SHIFT)) & load<u32>(e, PK_DELTA_MASK));
    const priority = select<u32>(
      <u32>(w >>> 42) & 0x1f,
      <u32>(<i32>load<i8>(data + <usize>index, L.CCS_THREAD_BASE_PRIORITY) + <i32>((<u32>w >>> 6) & 7)),
      type == <u32>L.CCS_TYPE_FULL,
    );
    store<i64>(blk + (r << 3), t, L.CS_TIMESTAMP_AT);
    store<u32>(blk + (r << 2), tid & busy, L.CS_OLD_THREAD_ID_AT);
    store<u8>(blk + r, <u8>(priority & busy), L.CS_OLD_THREAD_PRIORITY_AT);
    store<u32>(blk + (r << 2), <u32>(w >>> 47) & <u32>load<i8>(e, PK_FULL), L.CS_NEW_THREAD_WAIT_TIME_AT);
    // every packet row has a next switch but the last, which becomes the held-back one (valid without it)
    store<u32>(blk + (r << 2), <u32>out, L.CS_VALID_AT);
    store<u8>(blk + r, <u8>(out >>> 32), L.CS_OLD_THREAD_STATE_AT);
    store<u8>(blk + r, <u8>(out >>> 40), L.CS_OLD_THREAD_WAIT_REASON_AT);
    store<u8>(blk + r, <u8>(out >>> 48), L.CS_SOURCE_AT);
    store<u8>(blk + r, <u8>(out >>> 56) & <u8>SWR_AT_MOST_ONE_TICK, L.CS_NEW_THREAD_WAIT_TIME_AT_MOST_ONE_TICK_AT);
    packets += load<u64>(e, PK_COUNT);
    r++;
    p += need;
  }
  // a time that wrapped past INT64_MAX (the deltas of a batch sum far below 2^63: it wraps at most once)
  bad |= u32(t < load<i64>(data, L.CCS_FIRST_TIMESTAMP));
  if (bad != 0) return false;
  // the columns that are the same for every row of the batch, 8 rows at a time: the last 8 may run up to
  // 7 rows past the batch's, into rows not made yet (every maker of a row writes these columns, memory.ts
  // rewrittenColumns) or the gap after the column (at most 56 bytes: ENGINE_COLUMN_GAP is 64)
  const cpus = i16x8.splat(<i16>cpu);
  const versions: u64 = <u64>L.CCS_EVENT_VERSION * 0x0101010101010101;
  const fileOffsets = f64x2.splat(fileOffset);
  for (let i = first; i < r; i += 8) {
    v128.store(blk + (i << 1), cpus, L.CS_CPU_AT);
    store<u64>(blk + i, versions, L.CS_VERSION_AT);
    const at = blk + (i << 3);
    v128.store(at, fileOffsets, L.CS_FILE_OFFSET_AT);
    v128.store(at, fileOffsets, L.CS_FILE_OFFSET_AT + 16);
    v128.store(at, fileOffsets, L.CS_FILE_OFFSET_AT + 32);
    v128.store(at, fileOffsets, L.CS_FILE_OFFSET_AT + 48);
  }
  const k = r - first; // packets
  // D.7 self-check: the first switch of a batch must not precede the last switch before it on this CPU
  if (k != 0 && held && load<i64>(blk + (first << 3), L.CS_TIMESTAMP_AT) < load<i64>(slot, PEND_TIMESTAMP)) return false;
  if (k != 0) {
    if (held) {
      emitHeld(
        r0,
        cpu,
        load<i64>(slot, PEND_TIMESTAMP),
        load<f64>(slot, PEND_FILE_OFFSET),
        load<u32>(blk + (first << 2), L.CS_OLD_THREAD_ID_AT),
        load<u32>(slot, PEND_OLD_THREAD_ID),
        load<u32>(slot, PEND_NEW_THREAD_WAIT_TIME),
        load<u32>(slot, PEND_VALID) | L.CCS_NEXT_VALID,
        load<u32>(slot, PEND_BYTES),
      );
    }
    // D.8: the new thread of a switch is the old thread of the next one
    memory.copy(blk + L.CS_NEW_THREAD_ID_AT + (first << 2), blk + L.CS_OLD_THREAD_ID_AT + ((first + 1) << 2), (k - 1) << 2);
    // the last packet is held back until the next switch of this processor
    const last = r - 1;
    store<u32>(slot, 1, PEND_HELD);
    store<i64>(slot, load<i64>(blk + (last << 3), L.CS_TIMESTAMP_AT), PEND_TIMESTAMP);
    store<f64>(slot, fileOffset, PEND_FILE_OFFSET);
    store<u32>(slot, load<u32>(blk + (last << 2), L.CS_OLD_THREAD_ID_AT), PEND_OLD_THREAD_ID);
    store<u32>(slot, load<u32>(blk + (last << 2), L.CS_NEW_THREAD_WAIT_TIME_AT), PEND_NEW_THREAD_WAIT_TIME);
    store<u32>(slot, load<u32>(blk + (last << 2), L.CS_VALID_AT) & ~L.CCS_NEXT_VALID, PEND_VALID);
    store<u32>(
      slot,
      <u32>load<u8>(blk + last, L.CS_OLD_THREAD_PRIORITY_AT) |
        (<u32>load<u8>(blk + last, L.CS_OLD_THREAD_STATE_AT) << 8) |
        (<u32>load<u8>(blk + last, L.CS_OLD_THREAD_WAIT_REASON_AT) << 16) |
        (<u32>load<u8>(blk + last, L.CS_SOURCE_AT) << 24),
      PEND_BYTES,
    );
    setRows(T, <i32>last);
  }
  countN(L.D_COMPCS_PACKETS_IDLE_SHORT, packets & 0xffff);
  countN(L.D_COMPCS_PACKETS_IDLE, (packets >>> 16) & 0xffff);
  countN(L.D_COMPCS_PACKETS_LITE, (packets >>> 32) & 0xffff);
  countN(L.D_COMPCS_PACKETS_FULL, packets >>> 48);
  if (t > load<i64>(tsAt)) issue(L.D_COMPCS_TIME_MISMATCH, L.TIME_AFTER_EVENT, fileOffset);
  return true;
}

/** A batch with a packet to report: packet by packet, the held-back switch in locals, reports in order. */
function slowBatch(data: usize, n: i32, cpu: i32, tsAt: usize, fileOffset: f64, bias: i32, slot: usize): void {
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
  let overflowed: u32 = 0; // packets whose time ran past INT64_MAX: dropped
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

    const before = t;
    t += <i64>delta;
    if (t < before || overflowed != 0) {
      // past INT64_MAX: counted and dropped, not wrapped; the switch held back still learns its new thread
      if (overflowed++ == 0) issue(L.D_COMPCS_TIME_OVERFLOW, <u32>(p - data), fileOffset);
      else count(L.D_COMPCS_TIME_OVERFLOW);
      if (held) {
        emitHeld(r, cpu, heldTs, heldFileOffset, oldThreadId, heldOldThreadId, heldWaitTime, heldValid | L.CCS_NEXT_VALID, heldBytes);
        r++;
        held = false;
      }
      p += <usize>need;
      continue;
    }
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
  if (overflowed != 0 || t > load<i64>(tsAt)) issue(L.D_COMPCS_TIME_MISMATCH, L.TIME_AFTER_EVENT, fileOffset);
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
