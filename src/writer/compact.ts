// Compact context-switch batches (spec D): packs one processor's switches into PERFINFO_CCSWAP_BUFFER
// + packets exactly as the kernel would, and decides when a batch is logged (D.6).
//
// Decisions where the spec is uncertain (documented in index.ts as well):
// * the 0x400-byte batch limit includes the 0x58-byte PERFINFO_CCSWAP_BUFFER: packet area <= 0x3A8 bytes;
// * "fewer than 8 bytes left" is checked right after a packet is added: the batch is logged at once, so
//   its event timestamp is the timestamp of that (last) switch. A batch therefore holds packets while
//   at least 8 bytes were free before each one — the same partition as checking before the next switch;
// * the other conditions (TidTable full and a new thread comes, delta >= 2^30, more than 500 ticks since
//   FirstTimeStamp) are checked when the next switch arrives, before it is added: the batch is logged
//   with that switch's timestamp (>= its last switch) and the switch opens the next batch;
// * the first packet of a batch has TimeDelta 0 (measured from FirstTimeStamp = its own timestamp);
// * 500 ticks = 500 × TimerResolution × 100 ns, in session clock units (A.10):
//   QPC: 500·TR·PerfFreq/10^7, system time: 500·TR, CPU cycles: 500·TR·CpuSpeedInMHz/10 (integer division);
//   the batch is flushed when (switch time − FirstTimeStamp) > that limit;
// * the LITE priority increment is relative to ThreadBasePriority[idx] as stored in the batch (the base
//   priority at the thread's first appearance), since that is what a decoder adds it to.
// Browser-safe: no node imports.
import * as L from '../generated/layout.js';
import { checkInt, fieldName } from './events.js';
import type { CompactPacketInfo, CompactPacketKind, CompactSwitchSpec, PerfInfoKind } from './types.js';

/** packet area limit: 0x400 − 0x58 */
export const CCS_MAX_PACKET_BYTES = L.CCS_MAX_BATCH_BYTES - L.CCS_HEADER_SIZE;
/** a batch is logged once fewer than this many packet bytes remain (the largest packet) */
export const CCS_MIN_FREE = 8;
export const CCS_FULL_DELTA_LIMIT = 1 << L.CCS_FULL_DELTA_BITS; // 2^30
export const CCS_SHORT_DELTA_LIMIT = 1 << L.CCS_SHORT_DELTA_BITS; // 2^14
export const CCS_SMALL_DELTA_LIMIT = 1 << L.CCS_SMALL_DELTA_BITS; // 2^17
export const CCS_WAIT_TIME_MAX = (1 << L.CCS_WAIT_TIME_BITS) - 1;
export const CCS_PACKET_BYTES: readonly number[] = [2, 4, 4, 8];
export const CCS_KIND_NAMES: readonly CompactPacketKind[] = ['IDLE_SHORT', 'IDLE', 'LITE', 'FULL'];

/** Why a batch was logged (for tests and statistics). */
export type BatchFlushReason = 'tidTableFull' | 'deltaOverflow' | 'tickLimit' | 'full' | 'end';

/** The 500-tick limit of D.6 in session clock units. */
export function compactTickLimit(
  clockType: number,
  timerResolution: number,
  perfFreq: bigint,
  cpuSpeedInMHz: number,
): bigint {
  const tr = BigInt(timerResolution) * BigInt(L.CCS_BATCH_TICK_LIMIT);
  if (clockType === 2) return tr;
  if (clockType === 3) return (tr * BigInt(cpuSpeedInMHz)) / 10n;
  return (tr * perfFreq) / 10_000_000n;
}

/** OldThreadStateWr (D.5): wait reason when Waiting, else bias + state. */
export function stateWr(state: number, waitReason: number, bias: number): number {
  return state === L.THREAD_STATE_WAITING ? waitReason : bias + state;
}

/** Validates a compact switch against the field widths and the bias. */
export function checkCompactSwitch(s: CompactSwitchSpec, index: number, bias: number): void {
  checkInt(s.oldThreadId, 0, 0xffffffff, index, 'oldThreadId');
  if (s.header !== undefined && s.header !== 'PERFINFO32' && s.header !== 'PERFINFO64') {
    throw new RangeError(`${fieldName(index, 'header')}: ${String(s.header)} is not PERFINFO32 or PERFINFO64`);
  }
  if (s.oldThreadId === 0) return; // idle: nothing else is recorded
  checkInt(s.oldThreadPriority, 0, 31, index, 'oldThreadPriority');
  checkInt(s.oldThreadBasePriority, -128, 127, index, 'oldThreadBasePriority');
  checkInt(s.oldThreadState, 0, L.THREAD_STATE_COUNT - 1, index, 'oldThreadState');
  if (s.oldThreadState === L.THREAD_STATE_WAITING) {
    checkInt(s.oldThreadWaitReason, 0, bias - 1, index, 'oldThreadWaitReason');
  } else {
    checkInt(s.oldThreadWaitReason, 0, 255, index, 'oldThreadWaitReason');
  }
  checkInt(s.newThreadWaitTime, 0, 0xffffffff, index, 'newThreadWaitTime');
}

/** Called when a batch is logged: `data` = PERFINFO_CCSWAP_BUFFER + packets (a view, valid until the next add). */
export type BatchEmitter = (
  batcher: CompactBatcher,
  timestamp: bigint,
  data: Uint8Array,
  reason: BatchFlushReason,
) => void;

/** One processor's open batch. */
export class CompactBatcher {
  readonly cpu: number;
  private readonly bias: number;
  private readonly tickLimit: bigint;
  private readonly bytes = new Uint8Array(L.CCS_MAX_BATCH_BYTES);
  private readonly dv = new DataView(this.bytes.buffer);
  private readonly tids = new Uint32Array(L.CCS_MAX_TID);
  private readonly basePri = new Int8Array(L.CCS_MAX_TID);
  private tidCount = 0;
  /** packet bytes used */
  private used = 0;
  /** switches in the open batch */
  count = 0;
  private firstTs = 0n;
  private prevTs = 0n;
  /** header of the open batch (that of its first switch) */
  header: PerfInfoKind | undefined;
  /** packet infos of the open batch (only when collecting) */
  private infos: CompactPacketInfo[] | null;

  constructor(cpu: number, bias: number, tickLimit: bigint, collect: boolean) {
    this.cpu = cpu;
    this.bias = bias;
    this.tickLimit = tickLimit;
    this.infos = collect ? [] : null;
  }

  /** event data size of the open batch (0x58 + packets) */
  dataSize(): number {
    return L.CCS_HEADER_SIZE + this.used;
  }

  get lastTimestamp(): bigint {
    return this.prevTs;
  }

  /** packet infos of the batch just emitted (valid inside the emitter callback) */
  takeInfos(): CompactPacketInfo[] | null {
    const i = this.infos;
    if (i) this.infos = [];
    return i;
  }

  /** Adds one switch (already validated; timestamps non-decreasing), logging batches as needed. */
  add(s: CompactSwitchSpec, emit: BatchEmitter): void {
    const ts = s.timestamp;
    const tid = s.oldThreadId >>> 0;
    let idx = -1;
    if (tid !== 0) {
      for (let i = 0; i < this.tidCount; i++) {
        if (this.tids[i] === tid) {
          idx = i;
          break;
        }
      }
    }
    if (this.count > 0) {
      let reason: BatchFlushReason | null = null;
      if (ts - this.prevTs >= BigInt(CCS_FULL_DELTA_LIMIT)) reason = 'deltaOverflow';
      else if (ts - this.firstTs > this.tickLimit) reason = 'tickLimit';
      else if (tid !== 0 && idx < 0 && this.tidCount === L.CCS_MAX_TID) reason = 'tidTableFull';
      if (reason !== null) {
        this.emitAndReset(ts, reason, emit);
        idx = -1;
      }
    }
    if (this.count === 0) {
      this.firstTs = ts;
      this.prevTs = ts;
      this.header = s.header;
      this.dv.setBigInt64(L.CCS_FIRST_TIMESTAMP, ts, true);
    }
    const delta = Number(ts - this.prevTs);
    this.prevTs = ts;
    const p = L.CCS_HEADER_SIZE + this.used;
    const dv = this.dv;
    let type: number;
    let wr = -1;
    let priField = -1;
    let waitField = -1;
    if (tid === 0) {
      if (delta < CCS_SHORT_DELTA_LIMIT) {
        type = L.CCS_TYPE_IDLE_SHORT;
        dv.setUint16(p, delta * 4 + L.CCS_TYPE_IDLE_SHORT, true);
      } else {
        type = L.CCS_TYPE_IDLE;
        dv.setUint32(p, delta * 4 + L.CCS_TYPE_IDLE, true);
      }
    } else {
      if (idx < 0) {
        idx = this.tidCount++;
        this.tids[idx] = tid;
        this.basePri[idx] = s.oldThreadBasePriority;
        dv.setUint32(L.CCS_TID_TABLE + 4 * idx, tid, true);
        dv.setInt8(L.CCS_THREAD_BASE_PRIORITY + idx, s.oldThreadBasePriority);
      }
      wr = stateWr(s.oldThreadState, s.oldThreadWaitReason, this.bias);
      const inc = s.oldThreadPriority - this.basePri[idx];
      if (s.newThreadWaitTime <= 1 && delta < CCS_SMALL_DELTA_LIMIT && inc >= 0 && inc <= L.CCS_PRI_INC_MAX) {
        type = L.CCS_TYPE_LITE;
        priField = inc;
        dv.setUint32(p, L.CCS_TYPE_LITE + (idx << 2) + (inc << 6) + (wr << 9) + delta * 32768, true);
      } else {
        type = L.CCS_TYPE_FULL;
        priField = s.oldThreadPriority;
        waitField = s.newThreadWaitTime > CCS_WAIT_TIME_MAX ? CCS_WAIT_TIME_MAX : s.newThreadWaitTime;
        dv.setUint32(p, delta * 4 + L.CCS_TYPE_FULL, true);
        dv.setUint32(p + 4, idx + (wr << 4) + (priField << 10) + waitField * 32768, true);
      }
    }
    this.used += CCS_PACKET_BYTES[type];
    this.count++;
    if (this.infos) {
      this.infos.push({
        cpu: this.cpu,
        timestamp: ts,
        kind: CCS_KIND_NAMES[type],
        oldThreadId: tid,
        batch: -1,
        timeDelta: delta,
        tidIndex: tid === 0 ? -1 : idx,
        stateWr: wr,
        priorityField: priField,
        waitTimeField: waitField,
      });
    }
    if (CCS_MAX_PACKET_BYTES - this.used < CCS_MIN_FREE) this.emitAndReset(ts, 'full', emit);
  }

  /** Logs the open batch (if any) at `ts` (must be >= its last switch). */
  flush(ts: bigint, reason: BatchFlushReason, emit: BatchEmitter): void {
    if (this.count > 0) this.emitAndReset(ts < this.prevTs ? this.prevTs : ts, reason, emit);
  }

  private emitAndReset(ts: bigint, reason: BatchFlushReason, emit: BatchEmitter): void {
    emit(this, ts, this.bytes.subarray(0, L.CCS_HEADER_SIZE + this.used), reason);
    this.bytes.fill(0, 0, L.CCS_HEADER_SIZE + this.used);
    this.tids.fill(0);
    this.basePri.fill(0);
    this.tidCount = 0;
    this.used = 0;
    this.count = 0;
  }
}
