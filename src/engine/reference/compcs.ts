// PERFINFO_LOG_TYPE_CONTEXTSWAP_BATCH (HookId 0x0525, "CompCS"), docs/format.md §D: the twin of
// assembly/compcs.ts (packet bit layouts drawn there), written one packet field at a time.
//
// Each packet is a switch away from its old thread at FirstTimeStamp + the deltas so far (§D.7). Its new
// thread is the old thread of the next switch on the same processor (§D.8), so every switch is held back
// per processor until the next one arrives — across batches and buffers; flushHeldSwitches() emits the
// last ones with newThreadId null. The held switches live in the arena (memory.ts PendingSwitches), as in
// assembly/memory.ts.
import * as L from '../../generated/layout.js';
import { count, issue } from './diag.js';
import type { Arena } from './memory.js';

/** The packet counter of each DataType (the packets that become rows). */
const PACKET_COUNTERS = [L.D_COMPCS_PACKETS_IDLE_SHORT, L.D_COMPCS_PACKETS_IDLE, L.D_COMPCS_PACKETS_LITE, L.D_COMPCS_PACKETS_FULL];

/** Expands one batch event: payload at `data` of `n` bytes of `d`; `bias` = MaximumWaitReason (§D.5). */
export function compactBatch(
  a: Arena,
  d: DataView,
  data: number,
  n: number,
  version: number,
  cpu: number,
  tsAt: number,
  fileOffset: number,
  bias: number,
): void {
  if (version !== L.CCS_EVENT_VERSION) {
    count(a, L.D_COMPCS_SKIPPED_VERSION);
    return;
  }
  if (n < L.CCS_HEADER_SIZE) {
    issue(a, L.D_COMPCS_SKIPPED_SHORT, n, fileOffset);
    return;
  }
  count(a, L.D_COMPCS_BATCHES);
  if (n > L.CCS_MAX_BATCH_BYTES) issue(a, L.D_COMPCS_OVERSIZE, n, fileOffset);
  const pend = a.pending;
  let tLo = d.getUint32(data + L.CCS_FIRST_TIMESTAMP, true);
  let tHi = d.getInt32(data + L.CCS_FIRST_TIMESTAMP + 4, true);
  let highestIndex = -1;
  let wrapped = false; // the time ran past INT64_MAX
  let overflowed = 0; // packets dropped for it
  const firstPacket = data + L.CCS_HEADER_SIZE;
  const end = data + n;
  let p = firstPacket;
  while (p < end) {
    const type = d.getUint8(p) & 3;
    const need = L.packetBytes(type);
    if (p + need > end) {
      issue(a, L.D_COMPCS_TRUNCATED_PACKET, p - data, fileOffset);
      break;
    }
    let delta: number;
    let index = -1; // TidTable slot of LITE/FULL packets; idle packets switch away from the idle thread
    let priority = 0;
    let stateWr = 0;
    let waitTime = 0;
    let valid = L.CCS_IDLE_VALID;
    if (type === L.CCS_TYPE_IDLE_SHORT) {
      delta = d.getUint16(p, true) >>> 2;
    } else if (type === L.CCS_TYPE_IDLE) {
      delta = d.getUint32(p, true) >>> 2;
    } else if (type === L.CCS_TYPE_LITE) {
      const w = d.getUint32(p, true);
      index = (w >>> 2) & 0xf;
      stateWr = (w >>> 9) & 0x3f;
      delta = w >>> 15;
      priority = d.getInt8(data + L.CCS_THREAD_BASE_PRIORITY + index) + ((w >>> 6) & 0x7);
    } else {
      const w0 = d.getUint32(p, true);
      const w1 = d.getUint32(p + 4, true);
      delta = w0 >>> 2;
      index = w1 & 0xf;
      stateWr = (w1 >>> 4) & 0x3f;
      priority = (w1 >>> 10) & 0x1f;
      waitTime = w1 >>> 15;
      valid |= L.CCS_FULL_VALID;
    }
    let oldThreadId = 0;
    let state = 0;
    let waitReason = 0;
    if (index >= 0) {
      valid |= L.CCS_BUSY_VALID;
      oldThreadId = d.getUint32(data + L.CCS_TID_TABLE + 4 * index, true);
      if (index > highestIndex + 1 || oldThreadId === 0) issue(a, L.D_COMPCS_BAD_TID_INDEX, index, fileOffset);
      if (index > highestIndex) highestIndex = index;
      if (stateWr < bias) {
        state = L.THREAD_STATE_WAITING;
        waitReason = stateWr;
        valid |= L.CCS_WAITING_VALID;
      } else {
        state = stateWr - bias;
        if (state === L.THREAD_STATE_WAITING || state >= L.THREAD_STATE_COUNT) issue(a, L.D_COMPCS_STATE_OUT_OF_RANGE, stateWr, fileOffset);
      }
    }
    // timestamp += delta (64-bit, as lo/hi words)
    tLo += delta;
    if (tLo > 0xffffffff) {
      tLo -= 0x100000000;
      if (tHi === 0x7fffffff) wrapped = true;
      tHi = (tHi + 1) | 0;
    }
    if (wrapped) {
      // past INT64_MAX: counted and dropped, not wrapped; the switch held back still learns its new thread
      if (overflowed++ === 0) issue(a, L.D_COMPCS_TIME_OVERFLOW, p - data, fileOffset);
      else count(a, L.D_COMPCS_TIME_OVERFLOW);
      if (pend.held[cpu]) emitHeld(a, cpu, oldThreadId, L.CCS_NEXT_VALID);
      pend.held[cpu] = 0;
      p += need;
      continue;
    }
    count(a, PACKET_COUNTERS[type]!);
    // §D.7 self-check: the first switch of a batch must not precede the last switch before it on this CPU
    if (p === firstPacket && pend.held[cpu] && compare64(tHi, tLo, pend.tsHi[cpu]!, pend.tsLo[cpu]!) < 0) {
      issue(a, L.D_COMPCS_TIME_MISMATCH, L.TIME_BEFORE_PREVIOUS, fileOffset);
    }
    if (pend.held[cpu]) emitHeld(a, cpu, oldThreadId, L.CCS_NEXT_VALID);
    pend.held[cpu] = 1;
    pend.tsLo[cpu] = tLo;
    pend.tsHi[cpu] = tHi;
    pend.oldThreadId[cpu] = oldThreadId;
    pend.oldThreadPriority[cpu] = priority;
    pend.oldThreadState[cpu] = state;
    pend.oldThreadWaitReason[cpu] = waitReason;
    pend.newThreadWaitTime[cpu] = waitTime;
    pend.source[cpu] = L.CS_SOURCE_IDLE_SHORT + type;
    pend.valid[cpu] = valid;
    pend.fileOffset[cpu] = fileOffset;
    p += need;
  }
  if (wrapped || compare64(tHi, tLo, d.getInt32(tsAt + 4, true), d.getUint32(tsAt, true)) > 0) {
    issue(a, L.D_COMPCS_TIME_MISMATCH, L.TIME_AFTER_EVENT, fileOffset);
  }
}

/** End of input: emits every processor's held-back switch with an unknown new thread. */
export function flushHeldSwitches(a: Arena): void {
  const pend = a.pending;
  for (let cpu = 0; cpu < L.MAX_PROCESSORS; cpu++) {
    if (!pend.held[cpu]) continue;
    emitHeld(a, cpu, 0, 0);
    pend.held[cpu] = 0;
    count(a, L.D_COMPCS_NEW_THREAD_UNKNOWN);
  }
}

/** Writes the held-back switch of `cpu` as a cswitch row: the one place compact rows are made. */
function emitHeld(a: Arena, cpu: number, newThreadId: number, extraValid: number): void {
  const pend = a.pending;
  const b = a.builders.cswitch;
  const r = b.add();
  const c = b.view;
  const ts = b.words[L.CS_TIMESTAMP]!;
  ts[2 * r] = pend.tsLo[cpu]!;
  ts[2 * r + 1] = pend.tsHi[cpu]!;
  c.cpu[r] = cpu;
  c.newThreadId[r] = newThreadId;
  c.oldThreadId[r] = pend.oldThreadId[cpu]!;
  c.oldThreadPriority[r] = pend.oldThreadPriority[cpu]!;
  c.oldThreadState[r] = pend.oldThreadState[cpu]!;
  c.oldThreadWaitReason[r] = pend.oldThreadWaitReason[cpu]!;
  c.newThreadWaitTime[r] = pend.newThreadWaitTime[cpu]!;
  const source = pend.source[cpu]!;
  c.newThreadWaitTimeAtMostOneTick[r] = source === L.CS_SOURCE_LITE ? 1 : 0;
  c.source[r] = source;
  c.version[r] = L.CCS_EVENT_VERSION;
  c.fileOffset[r] = pend.fileOffset[cpu]!;
  c.valid[r] = (pend.valid[cpu]! | extraValid) >>> 0;
}

/** Signed 64-bit compare of (hi, lo) pairs: -1, 0, 1. */
function compare64(aHi: number, aLo: number, bHi: number, bLo: number): number {
  if (aHi !== bHi) return aHi < bHi ? -1 : 1;
  return aLo === bLo ? 0 : aLo < bLo ? -1 : 1;
}
