// Buffer walk, docs/format.md §A.2-A.6 (WMI_BUFFER_HEADER, data extent, XPRESS-compressed payloads)
// and §B.4 (events back to back, 8-byte aligned, each framed by its trace header's Size); every event
// is tallied by kind (§B.2) and SYSTEM/COMPACT/PERFINFO events are routed by HookId (§B.5; the routing is
// generated from schema/tables.mjs into generated/dispatch.ts) to the
// decoders of the logfile header (§A.8), the header extension (§A.9), CSwitch (§C), CompCS (§D),
// SpinLock (§E), ReadyThread (§F.4), Thread (§F.2, §F.5) and Process (§F.3) events.
// src/engine/reference/walk.ts is its twin.
//
// Output rows are bounded by the arena: a table that passes its row limit (the arena's rows minus the
// worst case of one event, schema/tables.mjs `reserve`) asks for a drain; the walker then saves its
// position before the next event and returns STATUS_NEED_DRAIN, and resume() continues at that very
// event once the rows were drained.
import * as L from './layout';
import { decodeTableEvent, fillHookDecoders } from './generated/dispatch';
import { flushHeldSwitches } from './compcs';
import { putCswitch } from './cswitch';
import { count, countN, issue, resetDiag } from './diag';
import { cachedPerfinfoKind, countKind, kindTableFull, knownOtherKind, perfinfoKind, resetKinds, tally } from './kinds';
import {
  clearArena,
  drainWanted,
  headerExtensionStart,
  inputCapacity,
  inputStart,
  layoutArena,
  logfileStart,
  reserveScratch,
  rowCap,
  rows,
  scratchStart,
} from './memory';
import { putSpinlock } from './spinlock';
import { xpressDecompress, xpressInputRead } from './xpress';

/** decodeBuffer with an offset/length outside the input window (API misuse; nothing is counted) */
const STATUS_BAD_ARGS: i32 = -1;

/**
 * B.1/B.2 by the marker's top 16 bits (marker flags byte, HeaderType), u16 each: L.headerInfo() of the
 * HeaderType (class << 4 | fixed header bytes >> 3) where those bits make a SYSTEM/COMPACT/PERFINFO/FULL/
 * INSTANCE/EVENT/ERROR marker (top two bits set), 0 for everything else (MESSAGE markers, bad markers,
 * padding: walkOther sorts them out); for SYSTEM/COMPACT/PERFINFO also MI_POINTER_4 and MI_TIMESTAMP_8.
 * Filled by init: one load classifies an event.
 */
const MARKER_INFO: usize = memory.data(0x20000);
/** the 32-bit payload layout (B.2: SYSTEM32, COMPACT32, PERFINFO32) */
const MI_POINTER_4: i32 = 0x100;
/** the timestamp at +8 (B.3: PERFINFO32/64), else at +0x10 */
const MI_TIMESTAMP_8: i32 = 0x200;

/** B.1: bytes of the extended items (PEBS index, PMC counters) a SYSTEM/COMPACT/PERFINFO marker's bits 8-15
 *  announce, u8 by those bits (L.extendedItemBytes; filled by init) */
const EXT_ITEM_BYTES: usize = memory.data(0x100);

/** B.1: bytes of the fixed header and the extended items of a SYSTEM/COMPACT/PERFINFO event (marker `m`,
 *  MARKER_INFO `info`): what its Size counts before the payload */
// @ts-ignore: decorator
@inline
function perfinfoHeaderSize(m: u32, info: i32): i32 {
  return ((info & 0xf) << 3) + <i32>load<u8>(EXT_ITEM_BYTES + <usize>((m >>> 8) & 0xff));
}

/** MARKER_INFO of the event whose marker is `m` */
// @ts-ignore: decorator
@inline
function markerInfo(m: u32): i32 {
  return <i32>load<u16>(MARKER_INFO + (<usize>(m >>> 16) << 1));
}

/** B.5: the decoder id (L.DEC_*) of each HookId, one byte per HookId: filled by init from the registry
 *  (generated/dispatch.ts fillHookDecoders) */
const HOOK_DECODERS: usize = memory.data(0x10000);

// ---- trace-wide state (A.8, A.9, D.5)
let numberOfProcessors: u32 = 0;
let biasValue: i32 = 0;
let biasOverridden: bool = false;
let logfileSeen: bool = false;
let logfileLength: i32 = 0;
let logfilePtrSize: i32 = 0;
let logfileTs: i64 = 0;
let headerExtensionFound: bool = false;
/** A.6 policy: the largest SavedOffset a compressed buffer may have (the logger's BufferSize) */
let compressedLimit: u32 = <u32>L.MAX_LOGGER_BUFFER_SIZE;

// ---- the walk saved by STATUS_NEED_DRAIN
let walkPending: bool = false;
let walkP: usize = 0;
let walkEnd: usize = 0;
let walkBase: usize = 0;
let walkFileBase: f64 = 0;
let walkCpu: i32 = 0;
/** the buffer being walked is cut short by the end of the input (an event running past its end is the cut) */
let walkCut: bool = false;

/** Lays out the arena (memory.ts) and starts with empty state. */
export function init(inputBytes: i32, rowCapacity: i32): void {
  layoutArena(inputBytes, rowCapacity);
  // (both tables start zero; only the entries that are not are written)
  for (let flags: i32 = 0xc0; flags <= 0xff; flags++) {
    for (let headerType: i32 = 0; headerType < L.HEADER_TYPE_COUNT; headerType++) {
      let info = L.headerInfo(headerType);
      if (info >> 4 == L.HC_PERFINFO) {
        if (L.pointerSizeOf(headerType) == 4) info |= MI_POINTER_4;
        if (L.timestampOffset(headerType) == L.PERFINFO_TIMESTAMP) info |= MI_TIMESTAMP_8;
      }
      store<u16>(MARKER_INFO + (<usize>(flags << 8 | headerType) << 1), <u16>info);
    }
  }
  for (let bits: u32 = 0; bits < 0x100; bits++) store<u8>(EXT_ITEM_BYTES + <usize>bits, <u8>L.extendedItemBytes(bits << 8));
  fillHookDecoders(HOOK_DECODERS, ALL_TABLES);
  resetState();
}

/**
 * Starts a new decode in the same arena (a pooled instance): zeroes what the last decode wrote — state
 * regions and the rows it left — in time proportional to that, not to the arena; keeps the layout, the
 * input window and the scratch.
 */
export function reset(): void {
  clearArena();
  resetState();
}

const ALL_TABLES: u32 = 0xffffffff;
/** the tables whose events are decoded (bit = table id), as keepTables() last set it */
let keptTables: u32 = ALL_TABLES;

/**
 * Decodes only the events of the tables whose bit (table id) is set in `kept`: the other tables' HookIds
 * route to no decoder, so their events are walked and tallied by kind, and write no row and no counter (a
 * first pass that needs a few tables: src/derive/stack-pass.ts). reset() decodes every table again.
 */
export function keepTables(kept: u32): void {
  memory.fill(HOOK_DECODERS, 0, 0x10000);
  fillHookDecoders(HOOK_DECODERS, kept);
  keptTables = kept;
}

function resetState(): void {
  resetDiag();
  resetKinds();
  numberOfProcessors = 0;
  biasValue = L.maxWaitReasonForBuild(0xffffffff);
  biasOverridden = false;
  logfileSeen = false;
  logfileLength = 0;
  logfilePtrSize = 0;
  logfileTs = 0;
  headerExtensionFound = false;
  compressedLimit = <u32>L.MAX_LOGGER_BUFFER_SIZE;
  walkPending = false;
  walkCut = false;
  if (keptTables != ALL_TABLES) keepTables(ALL_TABLES);
}

/** MaximumWaitReason for compact packets; -1 = none (from the trace's build, the default). */
export function setBiasOverride(bias: i32): void {
  biasOverridden = bias != -1;
  if (biasOverridden) biasValue = bias;
}

/**
 * A.2-A.6: decodes the buffer at inputPtr() + offset, `length` bytes of the window: the buffer as framing
 * found it; fileOffset = its place in the file. A BufferSize above `length` is a buffer the input ends in
 * when `cut` (a truncated file: it is counted and the events that fit are walked), else a BufferSize that
 * framing corrected (A.1: the buffer ends where the next one starts). Returns STATUS_OK or
 * STATUS_NEED_DRAIN (then drain and call resume()).
 */
export function decodeBuffer(offset: i32, length: i32, fileOffset: f64, cut: bool): i32 {
  walkPending = false;
  walkCut = false;
  if (offset < 0 || length < 0 || <i64>offset + <i64>length > <i64>inputCapacity) return STATUS_BAD_ARGS;
  if (length < L.WMI_BUFFER_HEADER_SIZE) {
    issue(L.D_BUFFERS_CORRUPT, L.CORRUPT_HEADER_SHORT, fileOffset);
    return L.STATUS_OK;
  }
  const buf = inputStart + <usize>offset;
  const bufferSize = load<u32>(buf, L.BUF_BUFFER_SIZE);
  const flags = <i32>load<u16>(buf, L.BUF_BUFFER_FLAG);
  const type = <i32>load<u16>(buf, L.BUF_BUFFER_TYPE);
  if (bufferSize < <u32>L.WMI_BUFFER_HEADER_SIZE) {
    issue(L.D_BUFFERS_CORRUPT, L.CORRUPT_BUFFER_SIZE, fileOffset);
    return L.STATUS_OK;
  }
  // the bytes of the buffer: its BufferSize, or fewer (the input ends in it, or framing corrected it)
  const short = bufferSize > <u32>length;
  const extent: u32 = short ? <u32>length : bufferSize;
  cut = cut && short;
  if (cut) issue(L.D_BUFFERS_TRUNCATED, bufferSize - <u32>length, fileOffset);
  if (flags & L.BUFFER_FLAG_EVENTS_LOST) count(L.D_BUFFERS_EVENTS_LOST_FLAG);
  if (flags & L.BUFFER_FLAG_BUFFER_LOST) count(L.D_BUFFERS_BUFFER_LOST_FLAG);
  const cpu =
    flags & L.BUFFER_FLAG_PROC_INDEX
      ? <i32>load<u16>(buf, L.BUF_CLIENT_CONTEXT) & L.PROCESSOR_INDEX_MASK
      : <i32>load<u8>(buf, L.BUF_CLIENT_CONTEXT);
  if (flags & L.BUFFER_FLAG_COMPRESSED) count(L.D_BUFFERS_COMPRESSED);
  if (type >= L.BUFFER_TYPE_EMPTY_MARKER) {
    count(L.D_BUFFERS_NOT_WALKED);
    return L.STATUS_OK;
  }
  const savedOffset = load<u32>(buf, L.BUF_SAVED_OFFSET);
  let start: usize;
  let end: usize;
  let base: usize; // what the event pointers count from for their file offsets
  let fileBase: f64; // file offset of `base`
  if (flags & L.BUFFER_FLAG_COMPRESSED) {
    // A.6: XPRESS input [0x48, extent), output exactly SavedOffset - 0x48 bytes, at most the logger's
    // BufferSize and XPRESS_MAX_RATIO times the input; a cut stream cannot be decompressed
    if (cut) return L.STATUS_OK;
    if (savedOffset < <u32>L.WMI_BUFFER_HEADER_SIZE || savedOffset > <u32>L.MAX_BUFFER_SIZE) {
      issue(L.D_BUFFERS_CORRUPT, L.CORRUPT_COMPRESSED_EXTENT, fileOffset);
      return L.STATUS_OK;
    }
    if (savedOffset > compressedLimit) {
      issue(L.D_BUFFERS_CORRUPT, L.CORRUPT_COMPRESSED_TOO_LARGE, fileOffset);
      return L.STATUS_OK;
    }
    const outLength = <i32>savedOffset - L.WMI_BUFFER_HEADER_SIZE;
    const inLength = <i32>extent - L.WMI_BUFFER_HEADER_SIZE;
    if (<i64>outLength > <i64>inLength * <i64>L.XPRESS_MAX_RATIO) {
      issue(L.D_BUFFERS_COMPRESSED_REFUSED, <u32>outLength, fileOffset);
      return L.STATUS_OK;
    }
    if (!reserveScratch(outLength)) {
      issue(L.D_BUFFERS_COMPRESSED_UNDECODED, <u32>L.UNDECODED_NO_MEMORY, fileOffset);
      return L.STATUS_OK;
    }
    const written = xpressDecompress(buf + L.WMI_BUFFER_HEADER_SIZE, inLength, scratchStart, outLength);
    if (written != outLength) {
      issue(L.D_BUFFERS_COMPRESSED_UNDECODED, <u32>written, fileOffset);
      return L.STATUS_OK;
    }
    const trailing = inLength - xpressInputRead();
    if (trailing > L.XPRESS_FINAL_FLAG_BYTES) issue(L.D_COMPRESSED_TRAILING_DATA, <u32>trailing, fileOffset);
    start = scratchStart;
    end = scratchStart + <usize>outLength;
    base = scratchStart;
    fileBase = fileOffset + <f64>L.WMI_BUFFER_HEADER_SIZE;
  } else {
    // A.5: the data ends at Offset, or at SavedOffset when Offset is out of range
    const filledOffset = load<u32>(buf, L.BUF_OFFSET);
    let filled: u32;
    if (filledOffset >= <u32>L.WMI_BUFFER_HEADER_SIZE && filledOffset <= bufferSize) filled = filledOffset;
    else if (savedOffset >= <u32>L.WMI_BUFFER_HEADER_SIZE && savedOffset <= bufferSize) filled = savedOffset;
    else {
      issue(L.D_BUFFERS_CORRUPT, L.CORRUPT_DATA_END, fileOffset);
      return L.STATUS_OK;
    }
    if (filled > extent) filled = extent;
    start = buf + L.WMI_BUFFER_HEADER_SIZE;
    end = buf + <usize>filled;
    base = inputStart;
    fileBase = fileOffset - <f64>offset;
  }
  count(L.D_BUFFERS);
  if (numberOfProcessors > 0 && <u32>cpu >= numberOfProcessors) issue(L.D_PROCESSOR_OUT_OF_RANGE, <u32>cpu, fileOffset);
  walkCut = cut;
  return walkEvents(start, end, base, fileBase, cpu);
}

/** Continues the buffer walk that returned STATUS_NEED_DRAIN (STATUS_OK if there is none). */
export function resume(): i32 {
  if (!walkPending) return L.STATUS_OK;
  walkPending = false;
  return walkEvents(walkP, walkEnd, walkBase, walkFileBase, walkCpu);
}

/** End of input: emits the held-back compact switch of every processor (D.8). */
export function finish(): i32 {
  if (rowCap - rows(L.TABLE_CSWITCH) < L.MAX_PROCESSORS) return L.STATUS_NEED_DRAIN;
  flushHeldSwitches();
  return L.STATUS_OK;
}

// the kind of the last SYSTEM/COMPACT/PERFINFO event walked (its first 8 bytes masked to headerType, version
// and HookId; 0 = none) and its tally entry: runs of one kind are counted without a lookup
let runLastKind: u64 = 0;
let runLastEntry: usize = 0;

/**
 * B.4, the common case: from `p`, the SYSTEM/COMPACT/PERFINFO events whose kind is in the kind cache and
 * whose decoding makes no call — tallied only, or a CSwitch or SpinLock row that passes its checks — which
 * are nearly all the events of a kernel trace but the compact batches, and the events of other header
 * kinds (tallied only) whose kind the tally already has. Returns where it stopped: at the
 * end, when a drain is wanted, or at any other event, which walkEvents handles. A function of its own,
 * with no call in it, so that V8 keeps its values in registers: wasm calls save no register, so a call
 * anywhere in a loop sends every value live across it to the stack on every iteration.
 */
function walkRun(p: usize, end: usize, base: usize, fileBase: f64, cpu: i32): usize {
  let events: i32 = 0;
  let lastKind = runLastKind;
  let lastEntry = runLastEntry;
  while (p + 8 <= end && !drainWanted()) {
    const m = load<u32>(p);
    const info = markerInfo(m);
    const cls = (info >> 4) & 0xf;
    if (cls != L.HC_PERFINFO) {
      // B.2: a FULL/INSTANCE, EVENT_HEADER or MESSAGE event — Size in the marker's low 16 bits — of a kind
      // the tally has, as walkOther() frames and tallies it
      let headerType = <i32>((m >>> 16) & 0xff);
      let otherCls = cls;
      let headerSize = (info & 0xf) << 3;
      if (info == 0) {
        if (((m >>> 24) & 0xd0) != 0x90) break; // not MESSAGE either: walkOther sorts it out
        headerType = L.HT_MESSAGE;
        otherCls = L.HC_MESSAGE;
        headerSize = L.MESSAGE_HEADER_SIZE;
      } else if (cls != L.HC_TRACE && cls != L.HC_EVENT) {
        break;
      }
      const size = <i32>(m & 0xffff);
      if (size < headerSize || p + <usize>size > end) break;
      const e = knownOtherKind(p, headerType, otherCls);
      if (e != 0) countKind(e, size);
      else if (kindTableFull()) count(L.D_KIND_TABLE_FULL); // as tally() would count it
      else break; // a new kind: walkOther() enters it
      events++;
      p += <usize>((size + 7) & ~7);
      continue;
    }
    const headerSize = perfinfoHeaderSize(m, info);
    const w = load<u64>(p); // marker, Size, HookId
    const size = <i32>(<u32>(w >>> 32) & 0xffff);
    if (size < headerSize || p + <usize>size > end) break;
    const kind = w & 0xffff0000_00ff00ff;
    let e = lastEntry;
    if (kind != lastKind) {
      e = cachedPerfinfoKind(w, <i32>((m >>> 16) & 0xff));
      if (e == 0) break;
      lastKind = kind;
      lastEntry = e;
    }
    const decoder = <i32>load<u8>(HOOK_DECODERS + <usize>(w >>> 48));
    if (decoder != L.DEC_NONE) {
      const version = <i32>(m & 0xff);
      const data = p + <usize>headerSize;
      const n = size - headerSize;
      const tsAt = p + <usize>(L.SYSTEM_TIMESTAMP - ((info >> 6) & 8));
      if (decoder == L.DEC_CSWITCH) {
        if (<u32>(version - 1) > 3 || n < L.CSW_SIZE_V1) break; // versions 1-4
        putCswitch(data, n, version, cpu, tsAt, fileBase + <f64>(p - base));
      } else if (decoder == L.DEC_SPINLOCK) {
        const pointerSize = 8 - ((info >> 6) & 4);
        if (version != L.SPL_EVENT_VERSION || n < (pointerSize == 4 ? L.SPL32_SIZE : L.SPL64_SIZE)) break;
        putSpinlock(data, version, pointerSize, cpu, tsAt, fileBase + <f64>(p - base));
      } else {
        break;
      }
    }
    countKind(e, size);
    events++;
    p += <usize>((size + 7) & ~7);
  }
  runLastKind = lastKind;
  runLastEntry = lastEntry;
  countN(L.D_EVENTS, <u64>events);
  return p;
}

/**
 * B.4: the events in [p, end); an event's file offset is fileBase + (its pointer - base).
 *
 * walkRun() takes the common case, event after event; this loop takes the one event it stops at and hands
 * back to it: a SYSTEM/COMPACT/PERFINFO event is recognised by one load from MARKER_INFO (its header class
 * and size from the marker's top 16 bits), checked, tallied and dispatched (compact batches, Thread, Process,
 * ReadyThread and header events, a kind to look up, a CSwitch or SpinLock event that fails its checks).
 * Every other event — other header kinds, bad markers and sizes, the end-of-buffer padding — goes to
 * walkOther().
 */
function walkEvents(p: usize, end: usize, base: usize, fileBase: f64, cpu: i32): i32 {
  let events: i32 = 0;
  runLastKind = 0;
  runLastEntry = 0;
  for (;;) {
    p = walkRun(p, end, base, fileBase, cpu);
    if (p + 4 > end) break;
    if (drainWanted()) {
      walkPending = true;
      walkP = p;
      walkEnd = end;
      walkBase = base;
      walkFileBase = fileBase;
      walkCpu = cpu;
      countN(L.D_EVENTS, <u64>events);
      return L.STATUS_NEED_DRAIN;
    }
    // one event the run loop left: any SYSTEM/COMPACT/PERFINFO event (decoded by dispatch), any other
    // header kind, a bad marker or size, the end-of-buffer padding (walkOther)
    const m = load<u32>(p);
    const info = markerInfo(m);
    if (((info >> 4) & 0xf) == L.HC_PERFINFO && p + 8 <= end) {
      // B.1/B.3: SYSTEM/COMPACT/PERFINFO: Size at +4 counts the fixed header and the extended items
      const headerSize = perfinfoHeaderSize(m, info);
      const w = load<u64>(p); // marker, Size, HookId
      const size = <i32>(<u32>(w >>> 32) & 0xffff);
      if (size >= headerSize && p + <usize>size <= end) {
        events++;
        const headerType = <i32>((m >>> 16) & 0xff);
        const kind = w & 0xffff0000_00ff00ff;
        if (kind != runLastKind) {
          const e = perfinfoKind(w, headerType);
          if (e != 0) {
            runLastKind = kind;
            runLastEntry = e;
          }
        }
        if (kind == runLastKind) countKind(runLastEntry, size);
        dispatch(p, m, info, headerSize, size, cpu, fileBase + <f64>(p - base));
        p += <usize>((size + 7) & ~7);
        continue;
      }
    }
    const step = walkOther(p, end, base, fileBase);
    if (step <= 0) break;
    events++;
    p += <usize>step;
  }
  countN(L.D_EVENTS, <u64>events);
  return L.STATUS_OK;
}

/**
 * B.1/B.2 for an event the fast path of walkEvents did not take: the end-of-buffer padding (0: stop), a
 * walkable event of another header kind (tallied; returns its aligned size), or an event that cannot be
 * framed — then the rest of the buffer is abandoned (counted; 0: stop). A SYSTEM/COMPACT/PERFINFO event
 * only arrives here when its Size does not fit, so nothing valid is left undispatched.
 */
function walkOther(p: usize, end: usize, base: usize, fileBase: f64): i32 {
  const m = load<u32>(p);
  if (m == L.END_OF_BUFFER_MARKER) return 0;
  let headerType: i32 = 0;
  let cls: i32 = L.HC_NONE;
  let headerSize: i32 = 0;
  let size: i32 = 0;
  let abandon: i32 = 0; // 0 ok, else the counter to charge
  if ((m & L.TRACE_HEADER_FLAG) == 0) {
    abandon = L.D_EVENTS_BAD_MARKER;
  } else if (((m >>> 24) & 0xd0) == 0x90) {
    headerType = L.HT_MESSAGE;
    cls = L.HC_MESSAGE;
    size = <i32>(m & 0xffff);
    headerSize = L.MESSAGE_HEADER_SIZE;
  } else if (m >>> 30 == 3) {
    headerType = <i32>((m >>> 16) & 0xff);
    const info = headerType < L.HEADER_TYPE_COUNT ? markerInfo(m) & 0xff : 0;
    cls = info >> 4;
    if (info == 0) {
      abandon = L.D_EVENTS_BAD_MARKER;
    } else if (p + 8 > end) {
      abandon = L.D_EVENTS_BAD_SIZE;
    } else if (cls == L.HC_PERFINFO) {
      headerSize = perfinfoHeaderSize(m, info);
      size = <i32>load<u16>(p, L.TH_SIZE);
    } else {
      headerSize = (info & 0xf) << 3;
      size = <i32>load<u16>(p);
    }
  } else {
    abandon = L.D_EVENTS_BAD_MARKER;
  }
  if (abandon == 0 && (size < headerSize || p + <usize>size > end)) abandon = L.D_EVENTS_BAD_SIZE;
  if (abandon != 0) {
    // a cut buffer ends inside an event: that is the truncation (buffersTruncated), not a bad event
    if (walkCut && abandon == L.D_EVENTS_BAD_SIZE && (p + 8 > end || size >= headerSize)) return 0;
    // the rest of this buffer cannot be framed
    count(abandon);
    issue(L.D_BUFFERS_TRUNCATED_WALK, <u32>(abandon == L.D_EVENTS_BAD_MARKER ? L.WALK_BAD_MARKER : L.WALK_BAD_SIZE), fileBase + <f64>(p - base));
    countN(L.D_BYTES_ABANDONED, <u64>(end - p));
    return 0;
  }
  tally(p, headerType, cls, size);
  return (size + 7) & ~7;
}

/** B.5: routes a SYSTEM/COMPACT/PERFINFO event by HookId: the logfile header and its extension here, the
 *  events of decoded tables to their decoders (generated/dispatch.ts, from schema/tables.mjs). */
// @ts-ignore: decorator
@inline
function dispatch(p: usize, m: u32, info: i32, headerSize: i32, size: i32, cpu: i32, fileOffset: f64): void {
  const version = <i32>(m & 0xff);
  // B.3 timestamp at +8 (PERFINFO) or +0x10; B.2 pointer size 4 or 8 (MARKER_INFO)
  const tsAt = p + <usize>(L.SYSTEM_TIMESTAMP - ((info >> 6) & 8));
  const pointerSize = 8 - ((info >> 6) & 4);
  const data = p + <usize>headerSize;
  const n = size - headerSize;
  const hookId = <i32>load<u16>(p, L.TH_HOOK_ID);
  const decoder = <i32>load<u8>(HOOK_DECODERS + <usize>hookId);
  switch (decoder) {
    case L.DEC_HEADER:
      logfileHeader(data, n, pointerSize, tsAt);
      break;
    case L.DEC_HEADER_EXTENSION:
      // A.9 ETW_KERNEL_HEADER_EXTENSION: the last one wins
      if (n >= L.KHE_SIZE) {
        memory.copy(headerExtensionStart, data, <usize>L.KHE_SIZE);
        headerExtensionFound = true;
      }
      break;
    default:
      decodeTableEvent(decoder, data, n, version, pointerSize, hookId, cpu, tsAt, fileOffset, biasValue);
      break;
  }
}

/** A.8: the first WMI_LOG_TYPE_HEADER is the trace's logfile header. */
function logfileHeader(data: usize, n: i32, pointerSize: i32, tsAt: usize): void {
  count(L.D_LOGFILE_HEADERS);
  if (logfileSeen) return;
  logfileSeen = true;
  memory.copy(logfileStart, data, <usize>min<i32>(n, L.LOGFILE_HEADER_COPY_MAX));
  logfileLength = n;
  logfilePtrSize = pointerSize;
  logfileTs = load<i64>(tsAt);
  if (n >= L.LFH_NUMBER_OF_PROCESSORS + 4) numberOfProcessors = load<u32>(data, L.LFH_NUMBER_OF_PROCESSORS);
  if (!biasOverridden && n >= L.LFH_PROVIDER_VERSION + 4) biasValue = L.maxWaitReasonForBuild(load<u32>(data, L.LFH_PROVIDER_VERSION));
  if (n >= L.LFH_BUFFER_SIZE + 4) compressedLimit = L.compressedLimitFor(load<u32>(data, L.LFH_BUFFER_SIZE));
}

// ---- accessors exported through index.ts
export function logfileCopied(): i32 {
  return <i32>logfileSeen;
}
export function logfilePayloadLength(): i32 {
  return logfileLength;
}
export function logfilePointerSize(): i32 {
  return logfilePtrSize;
}
export function logfileTimestamp(): i64 {
  return logfileTs;
}
export function headerExtensionSeen(): i32 {
  return <i32>headerExtensionFound;
}
export function bias(): i32 {
  return biasValue;
}

// ---- partitioned decodes (src/parallel): the trace-wide state that the decode of a buffer depends on
// (whether the logfile header was seen, and what it set), read at the end of one partition and set at
// the start of the next.
export function processorCount(): u32 {
  return numberOfProcessors;
}
export function compressedLimitValue(): u32 {
  return compressedLimit;
}
/** Continues a decode as if a logfile header had (seen != 0) or had not been decoded, with what it set
 *  (the bias only when it is not overridden). The header's copy is not restored: logfileCopied() says
 *  `seen`, but the copy is the one of the decode that saw it. */
export function setTraceState(seen: i32, processors: u32, biasIn: i32, limit: u32): void {
  logfileSeen = seen != 0;
  numberOfProcessors = processors;
  if (!biasOverridden) biasValue = biasIn;
  compressedLimit = limit;
}
