// Event encoders: every trace header kind (spec B.2/B.3), WMI_CONTEXTSWAP (C.2), WMI_SPINLOCK (E.2).
// Each kind has a `measure*` function that validates the spec and returns the event Size (header +
// extended items + data, excluding alignment padding), and an `encode*` function that writes the event
// at a given offset of a zero-initialised buffer (padding bytes are left as they are, i.e. zero).
// Browser-safe: no node imports.
import * as L from '../generated/layout.js';
import type { CSwitchSpec, HeaderKind, PerfInfoKind, RawEventSpec, SpinLockSpec } from './types.js';

// ---------------------------------------------------------------------------------------------
// validation helpers: errors name the event index and the field

export function fieldName(index: number, field: string): string {
  return index < 0 ? field : `events[${index}].${field}`;
}

export function checkInt(v: unknown, lo: number, hi: number, index: number, field: string): number {
  if (typeof v !== 'number' || !Number.isInteger(v) || v < lo || v > hi) {
    throw new RangeError(`${fieldName(index, field)}: ${String(v)} is not an integer in [${lo}, ${hi}]`);
  }
  return v;
}

export function checkOptInt(v: unknown, lo: number, hi: number, index: number, field: string, dflt: number): number {
  return v === undefined ? dflt : checkInt(v, lo, hi, index, field);
}

const U64_MAX = 0xffffffffffffffffn;
const I64_MIN = -0x8000000000000000n;
const I64_MAX = 0x7fffffffffffffffn;

export function checkBig(v: unknown, lo: bigint, hi: bigint, index: number, field: string): bigint {
  if (typeof v !== 'bigint' || v < lo || v > hi) {
    throw new RangeError(`${fieldName(index, field)}: ${String(v)} is not a bigint in [${lo}, ${hi}]`);
  }
  return v;
}

export function checkU64(v: unknown, index: number, field: string): bigint {
  return checkBig(v, 0n, U64_MAX, index, field);
}

/** event timestamps: non-negative i64 */
export function checkTimestamp(v: unknown, index: number, field = 'timestamp'): bigint {
  return checkBig(v, 0n, I64_MAX, index, field);
}

export { I64_MIN, I64_MAX, U64_MAX };

// ---------------------------------------------------------------------------------------------
// header kinds

/** HeaderType byte (B.2) of each kind */
export const HEADER_TYPE: Readonly<Record<HeaderKind, number>> = {
  SYSTEM32: L.HT_SYSTEM32,
  SYSTEM64: L.HT_SYSTEM64,
  COMPACT32: L.HT_COMPACT32,
  COMPACT64: L.HT_COMPACT64,
  PERFINFO32: L.HT_PERFINFO32,
  PERFINFO64: L.HT_PERFINFO64,
  FULL_HEADER32: L.HT_FULL_HEADER32,
  FULL_HEADER64: L.HT_FULL_HEADER64,
  INSTANCE32: L.HT_INSTANCE32,
  INSTANCE64: L.HT_INSTANCE64,
  EVENT_HEADER32: L.HT_EVENT_HEADER32,
  EVENT_HEADER64: L.HT_EVENT_HEADER64,
  MESSAGE: L.HT_MESSAGE,
};

/** fixed header size of each kind (without PERFINFO/SYSTEM extended items or EVENT_HEADER items) */
export const HEADER_SIZE: Readonly<Record<HeaderKind, number>> = {
  SYSTEM32: L.SYSTEM_HEADER_SIZE,
  SYSTEM64: L.SYSTEM_HEADER_SIZE,
  COMPACT32: L.COMPACT_HEADER_SIZE,
  COMPACT64: L.COMPACT_HEADER_SIZE,
  PERFINFO32: L.PERFINFO_HEADER_SIZE,
  PERFINFO64: L.PERFINFO_HEADER_SIZE,
  FULL_HEADER32: L.FULL_HEADER_SIZE,
  FULL_HEADER64: L.FULL_HEADER_SIZE,
  INSTANCE32: L.INSTANCE_HEADER_SIZE,
  INSTANCE64: L.INSTANCE_HEADER_SIZE,
  EVENT_HEADER32: L.EVENT_HEADER_SIZE,
  EVENT_HEADER64: L.EVENT_HEADER_SIZE,
  MESSAGE: L.MESSAGE_HEADER_SIZE,
};

export const HEADER_KINDS: readonly HeaderKind[] = Object.keys(HEADER_TYPE) as HeaderKind[];

/** marker byte 3 of every header except MESSAGE: TRACE_HEADER_FLAG | TRACE_HEADER_EVENT_TRACE */
const MARKER_FLAGS = 0xc0;
/** MESSAGE marker byte 3: TRACE_HEADER_FLAG | TRACE_MESSAGE ((b & 0xD0) == 0x90) */
export const MESSAGE_MARKER_FLAGS = 0x90;
/** largest event Size (u16) */
export const MAX_EVENT_SIZE = 0xffff;

export function align8(n: number): number {
  return (n + 7) & ~7;
}

// ---------------------------------------------------------------------------------------------
// GUIDs

const GUID_RE = /^\{?([0-9a-fA-F]{8})-([0-9a-fA-F]{4})-([0-9a-fA-F]{4})-([0-9a-fA-F]{4})-([0-9a-fA-F]{12})\}?$/;
const guidCache = new Map<string, Uint8Array>();

/** Windows GUID layout: Data1 u32 LE, Data2 u16 LE, Data3 u16 LE, Data4 8 bytes in text order. */
export function guidToBytes(guid: string): Uint8Array {
  const m = typeof guid === 'string' ? GUID_RE.exec(guid) : null;
  if (!m) throw new RangeError(`guid: ${String(guid)} is not a GUID (xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx)`);
  const out = new Uint8Array(16);
  const d1 = parseInt(m[1], 16);
  const d2 = parseInt(m[2], 16);
  const d3 = parseInt(m[3], 16);
  out[0] = d1 & 0xff;
  out[1] = (d1 >>> 8) & 0xff;
  out[2] = (d1 >>> 16) & 0xff;
  out[3] = d1 >>> 24;
  out[4] = d2 & 0xff;
  out[5] = d2 >>> 8;
  out[6] = d3 & 0xff;
  out[7] = d3 >>> 8;
  const d4 = m[4] + m[5];
  for (let i = 0; i < 8; i++) out[8 + i] = parseInt(d4.substr(i * 2, 2), 16);
  return out;
}

/** inverse of guidToBytes (lower-case text) */
export function bytesToGuid(b: Uint8Array, off = 0): string {
  const h = (i: number): string => b[off + i].toString(16).padStart(2, '0');
  return (
    h(3) + h(2) + h(1) + h(0) + '-' + h(5) + h(4) + '-' + h(7) + h(6) + '-' + h(8) + h(9) + '-' +
    h(10) + h(11) + h(12) + h(13) + h(14) + h(15)
  );
}

function cachedGuid(guid: string | undefined, index: number, field: string): Uint8Array | null {
  if (guid === undefined) return null;
  let g = guidCache.get(guid);
  if (!g) {
    try {
      g = guidToBytes(guid);
    } catch {
      throw new RangeError(`${fieldName(index, field)}: ${String(guid)} is not a GUID`);
    }
    if (guidCache.size > 4096) guidCache.clear();
    guidCache.set(guid, g);
  }
  return g;
}

// ---------------------------------------------------------------------------------------------
// PERFINFO / SYSTEM extended items (B.1)

export function extItemsSize(pebsIndex: bigint | undefined, pmcCounters: bigint[] | undefined): number {
  return (pebsIndex !== undefined ? 8 : 0) + (pmcCounters ? 8 * pmcCounters.length : 0);
}

export function extFlags(pebsIndex: bigint | undefined, pmcCounters: bigint[] | undefined): number {
  return (
    (pebsIndex !== undefined ? L.EXT_PEBS_INDEX_FLAG : 0) |
    (pmcCounters ? pmcCounters.length << L.EXT_PMC_COUNTERS_SHIFT : 0)
  );
}

function checkExt(pebsIndex: unknown, pmcCounters: unknown, index: number): void {
  if (pebsIndex !== undefined) checkU64(pebsIndex, index, 'pebsIndex');
  if (pmcCounters !== undefined) {
    if (!Array.isArray(pmcCounters) || pmcCounters.length > L.EXT_PMC_COUNTERS_MASK >> L.EXT_PMC_COUNTERS_SHIFT) {
      throw new RangeError(`${fieldName(index, 'pmcCounters')}: must be an array of at most 7 bigints`);
    }
    for (let i = 0; i < pmcCounters.length; i++) checkU64(pmcCounters[i], index, `pmcCounters[${i}]`);
  }
}

/** writes PEBS index then PMC counters at `off`; returns the bytes written */
function writeExt(dv: DataView, off: number, pebsIndex: bigint | undefined, pmcCounters: bigint[] | undefined): number {
  let p = off;
  if (pebsIndex !== undefined) {
    dv.setBigUint64(p, pebsIndex, true);
    p += 8;
  }
  if (pmcCounters) {
    for (let i = 0; i < pmcCounters.length; i++) {
      dv.setBigUint64(p, pmcCounters[i], true);
      p += 8;
    }
  }
  return p - off;
}

/** The first 8 bytes shared by SYSTEM/COMPACT/PERFINFO headers (B.3): marker (with ext flags), Size, HookId. */
function writeMarkerSizeHook(
  dv: DataView,
  off: number,
  headerType: number,
  version: number,
  hookId: number,
  size: number,
  pebsIndex?: bigint,
  pmcCounters?: bigint[],
): void {
  const marker = ((MARKER_FLAGS << 24) | (headerType << 16) | extFlags(pebsIndex, pmcCounters) | version) >>> 0;
  dv.setUint32(off, marker, true);
  dv.setUint16(off + L.TH_SIZE, size, true);
  dv.setUint16(off + L.TH_HOOK_ID, hookId, true);
}

/** PERFINFO_TRACE_HEADER (B.3): marker, Size, HookId, TS; returns the offset after the extended items */
export function writePerfInfoHeader(
  dv: DataView,
  off: number,
  headerType: number,
  version: number,
  hookId: number,
  size: number,
  timestamp: bigint,
  pebsIndex?: bigint,
  pmcCounters?: bigint[],
): number {
  writeMarkerSizeHook(dv, off, headerType, version, hookId, size, pebsIndex, pmcCounters);
  dv.setBigInt64(off + L.PERFINFO_TIMESTAMP, timestamp, true);
  const p = off + L.PERFINFO_HEADER_SIZE;
  return p + writeExt(dv, p, pebsIndex, pmcCounters);
}

/** SYSTEM_TRACE_HEADER (full 0x20 or compact 0x18); returns the offset after the header and extended items */
export function writeSystemHeader(
  dv: DataView,
  off: number,
  headerType: number,
  version: number,
  hookId: number,
  size: number,
  threadId: number,
  processId: number,
  timestamp: bigint,
  compact: boolean,
  kernelTime = 0,
  userTime = 0,
  pebsIndex?: bigint,
  pmcCounters?: bigint[],
): number {
  writeMarkerSizeHook(dv, off, headerType, version, hookId, size, pebsIndex, pmcCounters);
  dv.setUint32(off + 0x08, threadId >>> 0, true);
  dv.setUint32(off + 0x0c, processId >>> 0, true);
  dv.setBigInt64(off + L.SYSTEM_TIMESTAMP, timestamp, true);
  if (compact) return off + L.COMPACT_HEADER_SIZE;
  dv.setUint32(off + 0x18, kernelTime >>> 0, true);
  dv.setUint32(off + 0x1c, userTime >>> 0, true);
  const p = off + L.SYSTEM_HEADER_SIZE;
  return p + writeExt(dv, p, pebsIndex, pmcCounters);
}

export function perfInfoType(header: PerfInfoKind | undefined, pointerSize: 4 | 8, index: number): number {
  if (header === undefined) return pointerSize === 8 ? L.HT_PERFINFO64 : L.HT_PERFINFO32;
  if (header === 'PERFINFO64') return L.HT_PERFINFO64;
  if (header === 'PERFINFO32') return L.HT_PERFINFO32;
  throw new RangeError(`${fieldName(index, 'header')}: ${String(header)} is not PERFINFO32 or PERFINFO64`);
}

// ---------------------------------------------------------------------------------------------
// CSwitch (C.2)

export function measureCSwitch(s: CSwitchSpec, index: number): number {
  perfInfoType(s.header, 8, index);
  checkInt(s.version, 1, 4, index, 'version');
  checkInt(s.newThreadId, 0, 0xffffffff, index, 'newThreadId');
  checkInt(s.oldThreadId, 0, 0xffffffff, index, 'oldThreadId');
  checkInt(s.newThreadPriority, -128, 127, index, 'newThreadPriority');
  checkInt(s.oldThreadPriority, -128, 127, index, 'oldThreadPriority');
  checkInt(s.previousCState, -128, 255, index, 'previousCState');
  checkInt(s.newThreadPriorityDecrement, -128, 255, index, 'newThreadPriorityDecrement');
  checkInt(s.oldThreadWaitReason, 0, 255, index, 'oldThreadWaitReason');
  checkInt(s.oldThreadWaitMode, 0, 255, index, 'oldThreadWaitMode');
  checkInt(s.oldThreadState, 0, 255, index, 'oldThreadState');
  checkInt(s.oldThreadIdealProcessor, 0, 255, index, 'oldThreadIdealProcessor');
  if (s.version >= 2) {
    checkOptInt(s.newThreadWaitTime, 0, 0xffffffff, index, 'newThreadWaitTime', 0);
    checkOptInt(s.oldThreadRemainingQuantum, -0x80000000, 0x7fffffff, index, 'oldThreadRemainingQuantum', 0);
  }
  checkExt(s.pebsIndex, s.pmcCounters, index);
  return (
    L.PERFINFO_HEADER_SIZE + extItemsSize(s.pebsIndex, s.pmcCounters) + (s.version === 1 ? L.CSW_SIZE_V1 : L.CSW_SIZE_V2)
  );
}

export function encodeCSwitch(dv: DataView, off: number, s: CSwitchSpec, size: number, pointerSize: 4 | 8): void {
  const ht = perfInfoType(s.header, pointerSize, -1);
  const p = writePerfInfoHeader(dv, off, ht, s.version, L.HOOK_CSWITCH, size, s.timestamp, s.pebsIndex, s.pmcCounters);
  dv.setUint32(p + L.CSW_NEW_THREAD_ID, s.newThreadId, true);
  dv.setUint32(p + L.CSW_OLD_THREAD_ID, s.oldThreadId, true);
  dv.setUint8(p + L.CSW_NEW_THREAD_PRIORITY, s.newThreadPriority & 0xff);
  dv.setUint8(p + L.CSW_OLD_THREAD_PRIORITY, s.oldThreadPriority & 0xff);
  dv.setUint8(p + L.CSW_PREVIOUS_CSTATE, s.previousCState & 0xff);
  dv.setUint8(p + L.CSW_NEW_THREAD_PRIORITY_DECREMENT, s.newThreadPriorityDecrement & 0xff);
  dv.setUint8(p + L.CSW_OLD_THREAD_WAIT_REASON, s.oldThreadWaitReason);
  dv.setUint8(p + L.CSW_OLD_THREAD_WAIT_MODE, s.oldThreadWaitMode);
  dv.setUint8(p + L.CSW_OLD_THREAD_STATE, s.oldThreadState);
  dv.setUint8(p + L.CSW_OLD_THREAD_IDEAL_PROCESSOR, s.oldThreadIdealProcessor);
  if (s.version >= 2) {
    dv.setUint32(p + L.CSW_NEW_THREAD_WAIT_TIME, s.newThreadWaitTime ?? 0, true);
    dv.setInt32(p + L.CSW_OLD_THREAD_REMAINING_QUANTUM, s.oldThreadRemainingQuantum ?? 0, true);
  }
}

// ---------------------------------------------------------------------------------------------
// SpinLock (E.2)

export function measureSpinLock(s: SpinLockSpec, index: number, pointerSize: 4 | 8): number {
  const ht = perfInfoType(s.header, pointerSize, index);
  const ptrMax = ht === L.HT_PERFINFO64 ? U64_MAX : 0xffffffffn;
  checkOptInt(s.version, 0, 255, index, 'version', L.SPL_EVENT_VERSION);
  checkBig(s.spinLockAddress, 0n, ptrMax, index, 'spinLockAddress');
  checkBig(s.callerAddress, 0n, ptrMax, index, 'callerAddress');
  checkU64(s.acquireTime, index, 'acquireTime');
  checkU64(s.releaseTime, index, 'releaseTime');
  checkInt(s.waitTimeInCycles, 0, 0xffffffff, index, 'waitTimeInCycles');
  checkInt(s.spinCount, 0, 0xffffffff, index, 'spinCount');
  checkInt(s.threadId, 0, 0xffffffff, index, 'threadId');
  checkInt(s.interruptCount, 0, 0xffffffff, index, 'interruptCount');
  checkInt(s.irql, 0, 255, index, 'irql');
  checkInt(s.acquireDepth, 0, 255, index, 'acquireDepth');
  checkInt(s.acquireMode, 0, L.SPL_ACQUIRE_MODE_MASK, index, 'acquireMode');
  if (typeof s.executeDpc !== 'boolean') throw new RangeError(`${fieldName(index, 'executeDpc')}: must be a boolean`);
  if (typeof s.executeIsr !== 'boolean') throw new RangeError(`${fieldName(index, 'executeIsr')}: must be a boolean`);
  checkExt(s.pebsIndex, s.pmcCounters, index);
  return (
    L.PERFINFO_HEADER_SIZE +
    extItemsSize(s.pebsIndex, s.pmcCounters) +
    (ht === L.HT_PERFINFO64 ? L.SPL64_SIZE : L.SPL32_SIZE)
  );
}

export function encodeSpinLock(dv: DataView, off: number, s: SpinLockSpec, size: number, pointerSize: 4 | 8): void {
  const ht = perfInfoType(s.header, pointerSize, -1);
  const version = s.version ?? L.SPL_EVENT_VERSION;
  const p = writePerfInfoHeader(dv, off, ht, version, L.HOOK_SPINLOCK, size, s.timestamp, s.pebsIndex, s.pmcCounters);
  let t: number;
  if (ht === L.HT_PERFINFO64) {
    dv.setBigUint64(p + L.SPL64_SPIN_LOCK_ADDRESS, s.spinLockAddress, true);
    dv.setBigUint64(p + L.SPL64_CALLER_ADDRESS, s.callerAddress, true);
    t = p + L.SPL64_ACQUIRE_TIME;
  } else {
    dv.setUint32(p + L.SPL32_SPIN_LOCK_ADDRESS, Number(s.spinLockAddress), true);
    dv.setUint32(p + L.SPL32_CALLER_ADDRESS, Number(s.callerAddress), true);
    t = p + L.SPL32_ACQUIRE_TIME;
  }
  dv.setBigUint64(t + L.SPL_TAIL_ACQUIRE_TIME, s.acquireTime, true);
  dv.setBigUint64(t + L.SPL_TAIL_RELEASE_TIME, s.releaseTime, true);
  dv.setUint32(t + L.SPL_TAIL_WAIT_TIME_IN_CYCLES, s.waitTimeInCycles, true);
  dv.setUint32(t + L.SPL_TAIL_SPIN_COUNT, s.spinCount, true);
  dv.setUint32(t + L.SPL_TAIL_THREAD_ID, s.threadId, true);
  dv.setUint32(t + L.SPL_TAIL_INTERRUPT_COUNT, s.interruptCount, true);
  dv.setUint8(t + L.SPL_TAIL_IRQL, s.irql);
  dv.setUint8(t + L.SPL_TAIL_ACQUIRE_DEPTH, s.acquireDepth);
  dv.setUint8(
    t + L.SPL_TAIL_FLAGS,
    s.acquireMode | (s.executeDpc ? 1 << L.SPL_EXECUTE_DPC_BIT : 0) | (s.executeIsr ? 1 << L.SPL_EXECUTE_ISR_BIT : 0),
  );
  // the 5 reserved bytes after the flags stay zero
}

// ---------------------------------------------------------------------------------------------
// Raw events of every header kind (B.3)

/** Size of the EVENT_HEADER extended items: each {u16 size, u16 ExtType, u16 Linkage, u16 DataSize, data},
 *  8-aligned; the size field holds the aligned item size (as in real files, e.g. airbus-lxcore_kernel.etl). */
export function eventHeaderItemsSize(items: { extType: number; data: Uint8Array }[] | undefined): number {
  if (!items) return 0;
  let n = 0;
  for (const it of items) n += align8(8 + it.data.length);
  return n;
}

export function measureRaw(s: RawEventSpec, index: number): number {
  const kind = s.headerType;
  const hsize = HEADER_SIZE[kind];
  if (hsize === undefined) throw new RangeError(`${fieldName(index, 'headerType')}: ${String(kind)} is not a header kind`);
  if (!(s.payload instanceof Uint8Array)) throw new RangeError(`${fieldName(index, 'payload')}: must be a Uint8Array`);
  checkOptInt(s.threadId, 0, 0xffffffff, index, 'threadId', 0);
  checkOptInt(s.processId, 0, 0xffffffff, index, 'processId', 0);
  let extra = 0;
  const hasExt = s.pebsIndex !== undefined || (s.pmcCounters !== undefined && s.pmcCounters.length > 0);
  switch (kind) {
    case 'SYSTEM32':
    case 'SYSTEM64':
    case 'PERFINFO32':
    case 'PERFINFO64':
    case 'COMPACT32':
    case 'COMPACT64':
      if (kind === 'COMPACT32' || kind === 'COMPACT64') {
        if (hasExt) {
          throw new RangeError(`${fieldName(index, 'pebsIndex')}: extended items are only allowed on SYSTEM/PERFINFO headers`);
        }
      } else {
        checkExt(s.pebsIndex, s.pmcCounters, index);
        extra = extItemsSize(s.pebsIndex, s.pmcCounters);
      }
      checkOptInt(s.hookId, 0, 0xffff, index, 'hookId', 0);
      checkOptInt(s.version, 0, 255, index, 'version', 0);
      checkOptInt(s.kernelTime, 0, 0xffffffff, index, 'kernelTime', 0);
      checkOptInt(s.userTime, 0, 0xffffffff, index, 'userTime', 0);
      break;
    case 'FULL_HEADER32':
    case 'FULL_HEADER64':
    case 'INSTANCE32':
    case 'INSTANCE64':
      checkOptInt(s.version, 0, 0xffff, index, 'version', 0);
      checkOptInt(s.classType, 0, 255, index, 'classType', 0);
      checkOptInt(s.level, 0, 255, index, 'level', 0);
      cachedGuid(s.provider, index, 'provider');
      if (kind === 'INSTANCE32' || kind === 'INSTANCE64') {
        checkOptInt(s.instanceId, 0, 0xffffffff, index, 'instanceId', 0);
        checkOptInt(s.parentInstanceId, 0, 0xffffffff, index, 'parentInstanceId', 0);
        cachedGuid(s.parentGuid, index, 'parentGuid');
      }
      break;
    case 'EVENT_HEADER32':
    case 'EVENT_HEADER64':
      checkOptInt(s.version, 0, 255, index, 'version', 0);
      checkOptInt(s.eventId, 0, 0xffff, index, 'eventId', 0);
      checkOptInt(s.opcode, 0, 255, index, 'opcode', 0);
      checkOptInt(s.task, 0, 0xffff, index, 'task', 0);
      checkOptInt(s.level, 0, 255, index, 'level', 0);
      checkOptInt(s.channel, 0, 255, index, 'channel', 0);
      checkOptInt(s.eventProperty, 0, 0xffff, index, 'eventProperty', 0);
      if (s.keyword !== undefined) checkU64(s.keyword, index, 'keyword');
      cachedGuid(s.provider, index, 'provider');
      cachedGuid(s.activityId, index, 'activityId');
      if (s.extendedItems !== undefined) {
        if (!Array.isArray(s.extendedItems)) throw new RangeError(`${fieldName(index, 'extendedItems')}: must be an array`);
        s.extendedItems.forEach((it, i) => {
          checkInt(it.extType, 0, 0xffff, index, `extendedItems[${i}].extType`);
          if (!(it.data instanceof Uint8Array) || align8(8 + it.data.length) > MAX_EVENT_SIZE) {
            throw new RangeError(`${fieldName(index, `extendedItems[${i}].data`)}: must be a Uint8Array that fits a u16 item`);
          }
        });
      }
      extra = eventHeaderItemsSize(s.extendedItems);
      break;
    case 'MESSAGE':
      checkOptInt(s.messageNumber, 0, 0xffff, index, 'messageNumber', 0);
      break;
  }
  if (s.extendedItems !== undefined && s.extendedItems.length > 0 && kind !== 'EVENT_HEADER32' && kind !== 'EVENT_HEADER64') {
    throw new RangeError(`${fieldName(index, 'extendedItems')}: only allowed on EVENT_HEADER32/64`);
  }
  if (hasExt && extra === 0) {
    throw new RangeError(`${fieldName(index, 'pebsIndex')}: PEBS/PMC items are only allowed on SYSTEM/PERFINFO headers`);
  }
  const size = hsize + extra + s.payload.length;
  if (size > MAX_EVENT_SIZE) {
    throw new RangeError(`${fieldName(index, 'payload')}: event size ${size} does not fit the u16 Size field`);
  }
  return size;
}

function writeGuidAt(u8: Uint8Array, off: number, g: Uint8Array | null): void {
  if (g) u8.set(g, off);
}

export function encodeRaw(u8: Uint8Array, dv: DataView, off: number, s: RawEventSpec, size: number): void {
  const kind = s.headerType;
  const ht = HEADER_TYPE[kind];
  const tid = s.threadId ?? 0;
  const pid = s.processId ?? 0;
  let p: number;
  switch (kind) {
    case 'SYSTEM32':
    case 'SYSTEM64':
    case 'COMPACT32':
    case 'COMPACT64': {
      const compact = kind === 'COMPACT32' || kind === 'COMPACT64';
      p = writeSystemHeader(
        dv, off, ht, s.version ?? 0, s.hookId ?? 0, size, tid, pid, s.timestamp, compact,
        s.kernelTime ?? 0, s.userTime ?? 0, s.pebsIndex, s.pmcCounters,
      );
      break;
    }
    case 'PERFINFO32':
    case 'PERFINFO64':
      p = writePerfInfoHeader(dv, off, ht, s.version ?? 0, s.hookId ?? 0, size, s.timestamp, s.pebsIndex, s.pmcCounters);
      break;
    case 'FULL_HEADER32':
    case 'FULL_HEADER64':
    case 'INSTANCE32':
    case 'INSTANCE64': {
      dv.setUint16(off + L.ETH_SIZE, size, true);
      u8[off + 2] = ht;
      u8[off + 3] = MARKER_FLAGS;
      u8[off + L.ETH_TYPE] = s.classType ?? 0;
      u8[off + L.ETH_TYPE + 1] = s.level ?? 0;
      dv.setUint16(off + L.ETH_VERSION, s.version ?? 0, true);
      dv.setUint32(off + 0x08, tid, true);
      dv.setUint32(off + 0x0c, pid, true);
      dv.setBigInt64(off + L.ETH_TIMESTAMP, s.timestamp, true);
      writeGuidAt(u8, off + L.ETH_GUID, cachedGuid(s.provider, -1, 'provider'));
      // 0x28: KernelTime/UserTime (or ClientContext/Flags) left zero
      if (kind === 'INSTANCE32' || kind === 'INSTANCE64') {
        dv.setUint32(off + 0x30, s.instanceId ?? 0, true);
        dv.setUint32(off + 0x34, s.parentInstanceId ?? 0, true);
        writeGuidAt(u8, off + 0x38, cachedGuid(s.parentGuid, -1, 'parentGuid'));
        p = off + L.INSTANCE_HEADER_SIZE;
      } else {
        p = off + L.FULL_HEADER_SIZE;
      }
      break;
    }
    case 'EVENT_HEADER32':
    case 'EVENT_HEADER64': {
      const items = s.extendedItems;
      const hasItems = items !== undefined && items.length > 0;
      dv.setUint16(off + L.EH_SIZE, size, true);
      u8[off + 2] = ht;
      u8[off + 3] = MARKER_FLAGS;
      dv.setUint16(off + L.EH_FLAGS, hasItems ? L.EH_FLAG_EXTENDED_INFO : 0, true);
      dv.setUint16(off + 0x06, s.eventProperty ?? 0, true);
      dv.setUint32(off + 0x08, tid, true);
      dv.setUint32(off + 0x0c, pid, true);
      dv.setBigInt64(off + L.EH_TIMESTAMP, s.timestamp, true);
      writeGuidAt(u8, off + L.EH_PROVIDER_ID, cachedGuid(s.provider, -1, 'provider'));
      dv.setUint16(off + L.EH_EVENT_ID, s.eventId ?? 0, true);
      u8[off + L.EH_VERSION] = s.version ?? 0;
      u8[off + 0x2b] = s.channel ?? 0;
      u8[off + 0x2c] = s.level ?? 0;
      u8[off + L.EH_OPCODE] = s.opcode ?? 0;
      dv.setUint16(off + L.EH_TASK, s.task ?? 0, true);
      dv.setBigUint64(off + 0x30, s.keyword ?? 0n, true);
      // 0x38: KernelTime/UserTime left zero
      writeGuidAt(u8, off + 0x40, cachedGuid(s.activityId, -1, 'activityId'));
      p = off + L.EVENT_HEADER_SIZE;
      if (hasItems) {
        for (let i = 0; i < items.length; i++) {
          const it = items[i];
          const isz = align8(8 + it.data.length);
          dv.setUint16(p, isz, true);
          dv.setUint16(p + 2, it.extType, true);
          dv.setUint16(p + 4, i + 1 < items.length ? 1 : 0, true);
          dv.setUint16(p + 6, it.data.length, true);
          u8.set(it.data, p + 8);
          p += isz;
        }
      }
      break;
    }
    case 'MESSAGE':
      dv.setUint16(off, size, true);
      u8[off + 2] = 0;
      u8[off + 3] = MESSAGE_MARKER_FLAGS;
      dv.setUint16(off + L.MTH_MESSAGE_NUMBER, s.messageNumber ?? 0, true);
      dv.setUint16(off + 6, 0, true); // OptionFlags: no optional items
      p = off + L.MESSAGE_HEADER_SIZE;
      break;
    default:
      throw new RangeError(`headerType: ${String(kind)} is not a header kind`);
  }
  u8.set(s.payload, p);
}
