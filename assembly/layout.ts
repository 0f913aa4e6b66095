// Layout: every offset, size, enum value and shared rule of the format, defined once.
// Format: docs/format.md parts A (WMI_BUFFER_HEADER, TRACE_LOGFILE_HEADER), B (trace headers),
// C (WMI_CONTEXTSWAP), D (PERFINFO_CCSWAP_BUFFER and packets), E (WMI_SPINLOCK), F (thread, process,
// ReadyThread), G (SampledProfile, image events), H (StackWalk and stack-key events).
//
// This file is the single source of truth for both decoders. The AssemblyScript engine imports it
// directly; `scripts/gen.mjs` copies it to `src/generated/layout.ts` (prefixing TypeScript aliases for
// i32/u32/…) so the pure-TS reference decoder uses the very same numbers and functions. Keep it to
// `export const NAME: type = literal;` lines and small pure functions valid in both languages.
// The tables (column ids, widths), the HookIds with their decoder ids and the diagnostic counters are
// declared in schema/ and generated into ./generated/registry.ts, re-exported here.
export * from './generated/registry';
import * as R from './generated/registry';

// ---------------------------------------------------------------------------------------------
// A.2 WMI_BUFFER_HEADER (0x48 bytes)
export const WMI_BUFFER_HEADER_SIZE: i32 = 0x48;
export const BUF_BUFFER_SIZE: i32 = 0x00; // u32 BufferSize (stride to the next buffer in a file)
export const BUF_SAVED_OFFSET: i32 = 0x04; // u32 SavedOffset
export const BUF_CURRENT_OFFSET: i32 = 0x08; // u32 CurrentOffset (not trusted)
export const BUF_TIMESTAMP: i32 = 0x10; // i64 TimeStamp (flush time)
export const BUF_SEQUENCE_NUMBER: i32 = 0x18; // i64 SequenceNumber
export const BUF_CLIENT_CONTEXT: i32 = 0x28; // u8 ProcessorNumber / u16 ProcessorIndex, u16 LoggerId @+2
export const BUF_STATE: i32 = 0x2c; // u32 ETW_BUFFER_STATE
export const BUF_OFFSET: i32 = 0x30; // u32 Offset (filled size)
export const BUF_BUFFER_FLAG: i32 = 0x34; // u16 BufferFlag
export const BUF_BUFFER_TYPE: i32 = 0x36; // u16 BufferType

// A.4 BufferFlag bits
export const BUFFER_FLAG_FLUSH_MARKER: i32 = 0x0001;
export const BUFFER_FLAG_EVENTS_LOST: i32 = 0x0002;
export const BUFFER_FLAG_BUFFER_LOST: i32 = 0x0004;
export const BUFFER_FLAG_RTBACKUP_CORRUPT: i32 = 0x0008;
export const BUFFER_FLAG_RTBACKUP: i32 = 0x0010;
export const BUFFER_FLAG_PROC_INDEX: i32 = 0x0020;
export const BUFFER_FLAG_COMPRESSED: i32 = 0x0040;
export const BUFFER_FLAG_KNOWN_MASK: i32 = 0x007f;
export const PROCESSOR_INDEX_MASK: i32 = 0x07ff; // A.3, ETW_PROCESSOR_INDEX_MASK
export const MAX_PROCESSORS: i32 = 0x800; // per-CPU state slots (11-bit processor index)

// A.4 BufferType values
export const BUFFER_TYPE_GENERIC: i32 = 0;
export const BUFFER_TYPE_HEADER: i32 = 4;
export const BUFFER_TYPE_EMPTY_MARKER: i32 = 6;
export const BUFFER_TYPE_DBG_INFO: i32 = 7;
export const BUFFER_TYPE_MAXIMUM: i32 = 8;

// Limits of what this decoder accepts as a buffer (policy, spec A.5/A.6).
export const MAX_BUFFER_SIZE: i32 = 0x4000000; // 64 MiB: larger BufferSize/SavedOffset = corrupt
// The largest BufferSize an ETW session accepts (16 MiB from Windows 8, 1 MiB before; EVENT_TRACE_PROPERTIES).
// A compressed buffer never decompresses past the logger's BufferSize (TRACE_LOGFILE_HEADER, A.8), nor
// past this when the logfile header gives none (spec A.6 policy).
export const MAX_LOGGER_BUFFER_SIZE: i32 = 0x1000000;
/** The largest SavedOffset of a compressed buffer, given the logfile header's BufferSize. */
export function compressedLimitFor(loggerBufferSize: u32): u32 {
  if (loggerBufferSize < <u32>WMI_BUFFER_HEADER_SIZE || loggerBufferSize > <u32>MAX_LOGGER_BUFFER_SIZE) return <u32>MAX_LOGGER_BUFFER_SIZE;
  return loggerBufferSize;
}
// A.6 policy: a compressed buffer is decompressed only if SavedOffset - 0x48 <= XPRESS_MAX_RATIO x
// (BufferSize - 0x48). 77 = 279 bytes per 29 bits, the best ratio of MS-XCA matches whose length needs at
// most the one-byte extension (docs/format.md §A.6 derives it; longer forms reach ~4.5e8 : 1).
export const XPRESS_MAX_RATIO: i32 = 77;
// A.6: input an XPRESS stream may leave unread once its output is complete: the final flag word the
// encoder opens when the last one is full (real files: 0 or 4 bytes). More is counted (compressedTrailingData).
export const XPRESS_FINAL_FLAG_BYTES: i32 = 4;
export const END_OF_BUFFER_MARKER: u32 = 0xffffffff; // A.5 padding dword

// ---------------------------------------------------------------------------------------------
// B.1 marker dword
export const TRACE_HEADER_FLAG: u32 = 0x80000000;
export const TRACE_HEADER_EVENT_TRACE: u32 = 0x40000000;
export const EXT_PEBS_INDEX_FLAG: i32 = 0x8000;
export const EXT_PMC_COUNTERS_MASK: i32 = 0x0700;
export const EXT_PMC_COUNTERS_SHIFT: i32 = 8;

// B.2 HeaderType (byte 2 of the marker)
export const HT_SYSTEM32: i32 = 0x01;
export const HT_SYSTEM64: i32 = 0x02;
export const HT_COMPACT32: i32 = 0x03;
export const HT_COMPACT64: i32 = 0x04;
export const HT_FULL_HEADER32: i32 = 0x0a;
export const HT_INSTANCE32: i32 = 0x0b;
export const HT_TIMED: i32 = 0x0c;
export const HT_ERROR: i32 = 0x0d;
export const HT_WNODE_HEADER: i32 = 0x0e;
export const HT_MESSAGE: i32 = 0x0f;
export const HT_PERFINFO32: i32 = 0x10;
export const HT_PERFINFO64: i32 = 0x11;
export const HT_EVENT_HEADER32: i32 = 0x12;
export const HT_EVENT_HEADER64: i32 = 0x13;
export const HT_FULL_HEADER64: i32 = 0x14;
export const HT_INSTANCE64: i32 = 0x15;

// B.2 header classes: what the walker needs to know about a HeaderType
export const HC_NONE: i32 = 0; // TIMED, WNODE, unknown: not walkable
export const HC_PERFINFO: i32 = 1; // SYSTEM32/64, COMPACT32/64, PERFINFO32/64: Size at +4, HookId at +6
export const HC_TRACE: i32 = 2; // FULL_HEADER32/64, INSTANCE32/64 (EVENT_TRACE_HEADER)
export const HC_EVENT: i32 = 3; // EVENT_HEADER32/64
export const HC_ERROR: i32 = 4; // ERROR: walked by Size only
export const HC_MESSAGE: i32 = 5; // MESSAGE_TRACE_HEADER (recognised by the marker's top byte, B.1)
export const HEADER_TYPE_COUNT: i32 = 0x16; // HeaderType values below this are known

// B.3 fixed header sizes
export const SYSTEM_HEADER_SIZE: i32 = 0x20;
export const COMPACT_HEADER_SIZE: i32 = 0x18;
export const PERFINFO_HEADER_SIZE: i32 = 0x10;
export const FULL_HEADER_SIZE: i32 = 0x30;
export const INSTANCE_HEADER_SIZE: i32 = 0x48;
export const EVENT_HEADER_SIZE: i32 = 0x50;
export const MESSAGE_HEADER_SIZE: i32 = 0x08;
export const ERROR_HEADER_SIZE: i32 = 0x08; // layout unclear (B.2 [U]): walked by Size only

// SYSTEM/COMPACT/PERFINFO field offsets
export const TH_SIZE: i32 = 0x04; // u16 Size (SYSTEM/COMPACT/PERFINFO)
export const TH_HOOK_ID: i32 = 0x06; // u16 HookId
export const SYSTEM_TIMESTAMP: i32 = 0x10; // i64 SystemTime (SYSTEM/COMPACT)
export const PERFINFO_TIMESTAMP: i32 = 0x08; // i64 TS (PERFINFO)
/** B.2/B.3: class << 4 | (fixed header bytes >> 3) of a HeaderType; 0 = not walkable by HeaderType
 *  (MESSAGE is recognised by the marker instead). PERFINFO-class sizes exclude extended items (B.1). */
export function headerInfo(headerType: i32): i32 {
  switch (headerType) {
    case HT_SYSTEM32:
    case HT_SYSTEM64:
      return (HC_PERFINFO << 4) | (SYSTEM_HEADER_SIZE >> 3);
    case HT_COMPACT32:
    case HT_COMPACT64:
      return (HC_PERFINFO << 4) | (COMPACT_HEADER_SIZE >> 3);
    case HT_PERFINFO32:
    case HT_PERFINFO64:
      return (HC_PERFINFO << 4) | (PERFINFO_HEADER_SIZE >> 3);
    case HT_FULL_HEADER32:
    case HT_FULL_HEADER64:
      return (HC_TRACE << 4) | (FULL_HEADER_SIZE >> 3);
    case HT_INSTANCE32:
    case HT_INSTANCE64:
      return (HC_TRACE << 4) | (INSTANCE_HEADER_SIZE >> 3);
    case HT_EVENT_HEADER32:
    case HT_EVENT_HEADER64:
      return (HC_EVENT << 4) | (EVENT_HEADER_SIZE >> 3);
    case HT_ERROR:
      return (HC_ERROR << 4) | (ERROR_HEADER_SIZE >> 3);
    default:
      return 0;
  }
}

/** B.1: bytes of extended items (PEBS index, PMC counters) after a SYSTEM/COMPACT/PERFINFO header, counted in Size. */
export function extendedItemBytes(marker: u32): i32 {
  return (marker & EXT_PEBS_INDEX_FLAG ? 8 : 0) + 8 * <i32>((marker & EXT_PMC_COUNTERS_MASK) >>> EXT_PMC_COUNTERS_SHIFT);
}

/** B.2: pointer size of the payload of a SYSTEM/COMPACT/PERFINFO event: 4 for the 32-bit header types. */
export function pointerSizeOf(headerType: i32): i32 {
  return headerType == HT_SYSTEM32 || headerType == HT_COMPACT32 || headerType == HT_PERFINFO32 ? 4 : 8;
}

/** B.3: offset of the timestamp in a SYSTEM/COMPACT/PERFINFO header. */
export function timestampOffset(headerType: i32): i32 {
  return headerType == HT_PERFINFO32 || headerType == HT_PERFINFO64 ? PERFINFO_TIMESTAMP : SYSTEM_TIMESTAMP;
}
// FULL/INSTANCE (EVENT_TRACE_HEADER) field offsets
export const ETH_SIZE: i32 = 0x00; // u16 Size
export const ETH_TYPE: i32 = 0x04; // u8 Class.Type
export const ETH_VERSION: i32 = 0x06; // u16 Class.Version
export const ETH_TIMESTAMP: i32 = 0x10;
export const ETH_GUID: i32 = 0x18;
// EVENT_HEADER field offsets
export const EH_SIZE: i32 = 0x00;
export const EH_FLAGS: i32 = 0x04; // u16 Flags; bit 0 = EXTENDED_INFO
export const EH_TIMESTAMP: i32 = 0x10;
export const EH_PROVIDER_ID: i32 = 0x18; // GUID
export const EH_EVENT_ID: i32 = 0x28; // u16 Id
export const EH_VERSION: i32 = 0x2a; // u8 Version
export const EH_OPCODE: i32 = 0x2d; // u8 Opcode
export const EH_TASK: i32 = 0x2e; // u16 Task
export const EH_FLAG_EXTENDED_INFO: i32 = 0x0001;
// MESSAGE_TRACE_HEADER
export const MTH_MESSAGE_NUMBER: i32 = 0x04; // u16

// B.5 HookIds (HOOK_HEADER, HOOK_CSWITCH, …): declared with the decoder of each in schema/tables.mjs,
// generated into ./generated/registry.ts (re-exported above).
// F.1 opcodes (the low byte of the Process and Thread HookIds): the `opcode` column of threadEvents / processEvents
export const OPCODE_START: i32 = 1;
export const OPCODE_END: i32 = 2;
export const OPCODE_DC_START: i32 = 3;
export const OPCODE_DC_END: i32 = 4;
export const OPCODE_PROCESS_DEFUNCT: i32 = 39;
export const OPCODE_THREAD_SET_NAME: i32 = 72;

// ---------------------------------------------------------------------------------------------
// A.8 TRACE_LOGFILE_HEADER (offsets common to both forms, then the 32/64-bit split)
export const LFH_BUFFER_SIZE: i32 = 0x00;
export const LFH_VERSION: i32 = 0x04; // u8 Major, Minor, SubVersion, SubMinorVersion
export const LFH_PROVIDER_VERSION: i32 = 0x08; // u32 build number
export const LFH_NUMBER_OF_PROCESSORS: i32 = 0x0c;
export const LFH_END_TIME: i32 = 0x10;
export const LFH_TIMER_RESOLUTION: i32 = 0x18;
export const LFH_MAXIMUM_FILE_SIZE: i32 = 0x1c;
export const LFH_LOG_FILE_MODE: i32 = 0x20;
export const LFH_BUFFERS_WRITTEN: i32 = 0x24;
export const LFH_START_BUFFERS: i32 = 0x28;
export const LFH_POINTER_SIZE: i32 = 0x2c;
export const LFH_EVENTS_LOST: i32 = 0x30;
export const LFH_CPU_SPEED_IN_MHZ: i32 = 0x34;
export const LFH_LOGGER_NAME: i32 = 0x38; // 6.1+: clock-interrupt timer source
export const LFH32_LOG_FILE_NAME: i32 = 0x3c;
export const LFH64_LOG_FILE_NAME: i32 = 0x40;
export const LFH32_TIME_ZONE: i32 = 0x40;
export const LFH64_TIME_ZONE: i32 = 0x48;
export const TIME_ZONE_SIZE: i32 = 0xac;
export const LFH32_BOOT_TIME: i32 = 0xf0;
export const LFH64_BOOT_TIME: i32 = 0xf8;
export const LFH32_PERF_FREQ: i32 = 0xf8;
export const LFH64_PERF_FREQ: i32 = 0x100;
export const LFH32_START_TIME: i32 = 0x100;
export const LFH64_START_TIME: i32 = 0x108;
export const LFH32_RESERVED_FLAGS: i32 = 0x108;
export const LFH64_RESERVED_FLAGS: i32 = 0x110;
export const LFH32_BUFFERS_LOST: i32 = 0x10c;
export const LFH64_BUFFERS_LOST: i32 = 0x114;
export const LFH32_SIZE: i32 = 0x110;
export const LFH64_SIZE: i32 = 0x118;
// A.9 ETW_KERNEL_HEADER_EXTENSION: 8 x u32 group masks + u32 Version
export const KHE_SIZE: i32 = 0x24;
export const LOGFILE_HEADER_COPY_MAX: i32 = 0x1000; // bytes of the header event payload kept for the facade

// ---------------------------------------------------------------------------------------------
// C.2 WMI_CONTEXTSWAP (byte 0x0A of v2+ is a union of PreviousCState and OldThreadRank, ntwmi.h)
export const CSW_NEW_THREAD_ID: i32 = 0x00;
export const CSW_OLD_THREAD_ID: i32 = 0x04;
export const CSW_NEW_THREAD_PRIORITY: i32 = 0x08;
export const CSW_OLD_THREAD_PRIORITY: i32 = 0x09;
export const CSW_PREVIOUS_CSTATE: i32 = 0x0a; // v1: NewThreadQuantum
export const CSW_NEW_THREAD_PRIORITY_DECREMENT: i32 = 0x0b; // v1: OldThreadQuantum
export const CSW_OLD_THREAD_WAIT_REASON: i32 = 0x0c;
export const CSW_OLD_THREAD_WAIT_MODE: i32 = 0x0d; // v3/v4: flags byte (C.3)
export const CSW_OLD_THREAD_STATE: i32 = 0x0e;
export const CSW_OLD_THREAD_IDEAL_PROCESSOR: i32 = 0x0f;
export const CSW_NEW_THREAD_WAIT_TIME: i32 = 0x10;
export const CSW_OLD_THREAD_REMAINING_QUANTUM: i32 = 0x14;
export const CSW_SIZE_V1: i32 = 0x10;
export const CSW_SIZE_V2: i32 = 0x18;
/** columns every decoded CSwitch event fills, whatever its version (C.2) */
export const CSW_EVENT_VALID: u32 =
  R.CS_ALWAYS_VALID |
  (<u32>1 << R.CS_NEW_THREAD_ID) |
  (<u32>1 << R.CS_NEW_THREAD_PRIORITY) |
  (<u32>1 << R.CS_OLD_THREAD_PRIORITY) |
  (<u32>1 << R.CS_OLD_THREAD_WAIT_REASON) |
  (<u32>1 << R.CS_OLD_THREAD_WAIT_MODE) |
  (<u32>1 << R.CS_OLD_THREAD_STATE) |
  (<u32>1 << R.CS_OLD_THREAD_IDEAL_PROCESSOR);

// ---------------------------------------------------------------------------------------------
// D.2 PERFINFO_CCSWAP_BUFFER and D.3/D.4 packets
export const CCS_FIRST_TIMESTAMP: i32 = 0x00;
export const CCS_TID_TABLE: i32 = 0x08; // u32[16]
export const CCS_THREAD_BASE_PRIORITY: i32 = 0x48; // i8[16]
export const CCS_HEADER_SIZE: i32 = 0x58;
export const CCS_MAX_TID: i32 = 16;
export const CCS_MAX_BATCH_BYTES: i32 = 0x400; // D.6: data size a kernel batch never exceeds
export const CCS_TYPE_IDLE_SHORT: i32 = 0;
export const CCS_TYPE_IDLE: i32 = 1;
export const CCS_TYPE_LITE: i32 = 2;
export const CCS_TYPE_FULL: i32 = 3;
export const CCS_PACKET_BYTES: u32 = 0x08040402; // bytes of a packet by DataType, one byte each: 2, 4, 4, 8
export const CCS_EVENT_VERSION: i32 = 2;
export const CCS_SHORT_DELTA_BITS: i32 = 14;
export const CCS_SMALL_DELTA_BITS: i32 = 17;
export const CCS_FULL_DELTA_BITS: i32 = 30;
export const CCS_WAIT_TIME_BITS: i32 = 17;
export const CCS_PRI_INC_MAX: i32 = 7;
export const CCS_BATCH_TICK_LIMIT: i32 = 500; // D.6 condition 2, in clock-interrupt ticks

/** D.4/D.5: columns of compact rows. Every packet: the always-valid ones; LITE/FULL (a TidTable thread):
 *  + priority and state, + wait reason when the state is Waiting; FULL: + wait time; every row but the
 *  last of its processor: + newThreadId (D.8). */
export const CCS_IDLE_VALID: u32 = R.CS_ALWAYS_VALID;
export const CCS_BUSY_VALID: u32 = (<u32>1 << R.CS_OLD_THREAD_PRIORITY) | (<u32>1 << R.CS_OLD_THREAD_STATE);
export const CCS_WAITING_VALID: u32 = <u32>1 << R.CS_OLD_THREAD_WAIT_REASON;
export const CCS_FULL_VALID: u32 = <u32>1 << R.CS_NEW_THREAD_WAIT_TIME;
export const CCS_NEXT_VALID: u32 = <u32>1 << R.CS_NEW_THREAD_ID;

/** D.4: bytes of a packet of DataType `type` (0..3). */
export function packetBytes(type: u32): u32 {
  return (CCS_PACKET_BYTES >>> (type << 3)) & 0xff;
}

// ---------------------------------------------------------------------------------------------
// E.2 WMI_SPINLOCK (x86 / x64)
export const SPL32_SPIN_LOCK_ADDRESS: i32 = 0x00;
export const SPL32_CALLER_ADDRESS: i32 = 0x04;
export const SPL32_ACQUIRE_TIME: i32 = 0x08;
export const SPL64_SPIN_LOCK_ADDRESS: i32 = 0x00;
export const SPL64_CALLER_ADDRESS: i32 = 0x08;
export const SPL64_ACQUIRE_TIME: i32 = 0x10;
// from AcquireTime on the two layouts are identical, shifted by SPL_TAIL (0x08 on x86, 0x10 on x64)
export const SPL_TAIL_ACQUIRE_TIME: i32 = 0x00;
export const SPL_TAIL_RELEASE_TIME: i32 = 0x08;
export const SPL_TAIL_WAIT_TIME_IN_CYCLES: i32 = 0x10;
export const SPL_TAIL_SPIN_COUNT: i32 = 0x14;
export const SPL_TAIL_THREAD_ID: i32 = 0x18;
export const SPL_TAIL_INTERRUPT_COUNT: i32 = 0x1c;
export const SPL_TAIL_IRQL: i32 = 0x20;
export const SPL_TAIL_ACQUIRE_DEPTH: i32 = 0x21;
export const SPL_TAIL_FLAGS: i32 = 0x22;
export const SPL32_SIZE: i32 = 0x30;
export const SPL64_SIZE: i32 = 0x38;
export const SPL_EVENT_VERSION: i32 = 2;
export const SPL_ACQUIRE_MODE_MASK: i32 = 0x3f;
export const SPL_EXECUTE_DPC_BIT: i32 = 6;
export const SPL_EXECUTE_ISR_BIT: i32 = 7;

// ---------------------------------------------------------------------------------------------
// C.5 KTHREAD_STATE
export const THREAD_STATE_WAITING: i32 = 5;
export const THREAD_STATE_COUNT: i32 = 10; // 0..9 valid; 10 = MaximumThreadState

// C.7 MaximumWaitReason (the bias of OldThreadStateWr, D.5) by Windows build.
// Returns the bias; `maxWaitReasonCertain` says whether the row of the table is confirmed.
export function maxWaitReasonForBuild(build: u32): i32 {
  if (build < 6000) return 27; // XP / 2003
  if (build < 9200) return 37; // Vista, 7
  if (build < 10240) return 39; // 8, 8.1 (38 or 39 uncertain)
  if (build < 16299) return 39; // 10 1507..1703 (wdm.h 10240/14393, 1703 kernel symbols)
  if (build < 22000) return 40; // 10 1709..22H2 (wdm.h 16299 adds WrPhysicalFault), Server 2022
  if (build < 26100) return 42; // 11 21H2..23H2
  return 43; // 11 24H2+
}
export function maxWaitReasonCertain(build: u32): bool {
  // 10240..15063 = 39 and 16299..19045 = 40 are confirmed (wait reasons are only ever appended, so every
  // build between two confirmed builds with the same value has it too)
  if (build >= 10240 && build <= 19045) return true;
  if (build == 22621 || build == 22631) return true;
  return false;
}

// ---------------------------------------------------------------------------------------------
// F.2 Thread_TypeGroup1 (versions 2-4). P = pointer size; pointer fields from 0x08, one every P bytes.
export const THR_PROCESS_ID: i32 = 0x00; // u32
export const THR_THREAD_ID: i32 = 0x04; // u32 TThreadId
export const THR_POINTERS: i32 = 0x08; // StackBase, StackLimit, UserStackBase, UserStackLimit, StartAddr, Win32StartAddr, TebBase
export const THR_WIN32_START_ADDR_INDEX: i32 = 5; // pointer number of Win32StartAddr
export const THR_POINTER_COUNT: i32 = 7; // then at THR_POINTERS + 7P the tail:
export const THR_TAIL_SUB_PROCESS_TAG: i32 = 0x00; // u32
export const THR_TAIL_BASE_PRIORITY: i32 = 0x04; // u8 (v3+), then PagePriority, IoPriority, ThreadFlags
export const THR_TAIL_NAME: i32 = 0x08; // UTF-16Z ThreadName (v4; v3 only if bytes remain)
export const THR_TAIL_SIZE_V2: i32 = 0x04;
export const THR_TAIL_SIZE_V3: i32 = 0x08;
/** F.2: offset of the tail (SubProcessTag) of a Thread event for pointer size `p` */
export function threadTail(p: i32): i32 {
  return THR_POINTERS + THR_POINTER_COUNT * p;
}
// F.5 Thread SetName
export const SETNAME_PROCESS_ID: i32 = 0x00;
export const SETNAME_THREAD_ID: i32 = 0x04;
export const SETNAME_NAME: i32 = 0x08; // UTF-16Z

// F.3 Process_TypeGroup1 (versions 2-5). P = pointer size.
export const PROC_UNIQUE_PROCESS_KEY: i32 = 0x00; // ptr
// then, from P:
export const PROC_P_PROCESS_ID: i32 = 0x00; // u32
export const PROC_P_PARENT_ID: i32 = 0x04; // u32
export const PROC_P_SESSION_ID: i32 = 0x08; // u32
export const PROC_P_EXIT_STATUS: i32 = 0x0c; // i32
export const PROC_P_DIRECTORY_TABLE_BASE: i32 = 0x10; // ptr (v3+)
export const PROC_FLAGS_AFTER_DTB: i32 = 0x10; // u32 Flags at 2P + 0x10 (v4+)
/** F.3: offset of the UserSID of a Process event of `version` for pointer size `p` */
export function processSidOffset(version: i32, p: i32): i32 {
  if (version <= 2) return p + PROC_P_DIRECTORY_TABLE_BASE;
  if (version == 3) return 2 * p + PROC_FLAGS_AFTER_DTB;
  return 2 * p + PROC_FLAGS_AFTER_DTB + 4;
}
/** F.3 UserSID: a zero u32 alone, or two pointers (TOKEN_USER) then a SID of 8 + 4 × SubAuthorityCount bytes */
export const SID_NULL_SIZE: i32 = 4;
export const SID_HEADER_SIZE: i32 = 8;
export const SID_SUB_AUTHORITY_COUNT: i32 = 1; // byte offset in the SID
export const PROC_EXIT_TIME_SIZE: i32 = 8; // v5: u64 FILETIME after ApplicationId

// F.4 ReadyThread
export const RDY_THREAD_ID: i32 = 0x00; // u32 TThreadId
export const RDY_ADJUST_REASON: i32 = 0x04; // u8
export const RDY_ADJUST_INCREMENT: i32 = 0x05; // i8
export const RDY_FLAGS: i32 = 0x06; // u8
export const RDY_SIZE: i32 = 0x08;

// G.1 PERFINFO_SAMPLED_PROFILE_INFORMATION (SampledProfile 0x0F2E, version 2). P = pointer size.
export const SMP_INSTRUCTION_POINTER: i32 = 0x00; // ptr
// then, from P:
export const SMP_P_THREAD_ID: i32 = 0x00; // u32
export const SMP_P_COUNT: i32 = 0x04; // u16
export const SMP_P_FLAGS: i32 = 0x06; // u8: bit 0 ExecutingDpc, bit 1 ExecutingIsr, bits 3-7 Priority
export const SMP_P_RANK: i32 = 0x07; // u8
export const SMP_P_SIZE: i32 = 0x08; // the payload is P + 8 bytes (0x0C x86, 0x10 x64)
export const SMP_EVENT_VERSION: i32 = 2;
export const SMP_EXECUTING_DPC_BIT: i32 = 0;
export const SMP_EXECUTING_ISR_BIT: i32 = 1;
export const SMP_PRIORITY_SHIFT: i32 = 3;

// G.2 WMI_IMAGELOAD_INFORMATION (Image_Load, versions 2 and 3). P = pointer size.
export const IMG_IMAGE_BASE: i32 = 0x00; // ptr
export const IMG_IMAGE_SIZE_INDEX: i32 = 1; // ptr ImageSize: pointer number 1, at P
// then, from 2P:
export const IMG_2P_PROCESS_ID: i32 = 0x00; // u32
export const IMG_2P_IMAGE_CHECKSUM: i32 = 0x04; // u32
export const IMG_2P_TIME_DATE_STAMP: i32 = 0x08; // u32
export const IMG_2P_SIGNATURE_LEVEL: i32 = 0x0c; // u8 (v3; v2: u32 Reserved0)
export const IMG_2P_SIGNATURE_TYPE: i32 = 0x0d; // u8 (v3), then u16 Reserved0
export const IMG_2P_DEFAULT_BASE: i32 = 0x10; // ptr, then u32 Reserved1-4
export const IMG_RESERVED_SIZE: i32 = 0x10; // Reserved1-4 after DefaultBase
export const IMG_VERSION_MIN: i32 = 2;
export const IMG_VERSION_MAX: i32 = 3;
/** G.2: offset of FileName (UTF-16Z), the end of the fixed part: 3P + 0x20 (0x2C x86, 0x38 x64) */
export function imageFileNameOffset(p: i32): i32 {
  return 3 * p + IMG_2P_DEFAULT_BASE + IMG_RESERVED_SIZE;
}
export const OPCODE_IMAGE_LOAD: i32 = 10; // the low byte of 0x030A (the other image opcodes are F.1's End/DCStart/DCEnd)

// String heap entries (WebAssembly engine): u32 byteLength | unit << 16, then the bytes (no terminator);
// unit 1 = ANSI (windows-1252), 2 = UTF-16LE. `str` columns hold the entry's offset in the heap. Entries
// start on 32-bit words and their last word is padded with zero bytes, so a reader hashes and compares words.
export const STR_ENTRY_HEADER: i32 = 4;
export const STR_UNIT_ANSI: i32 = 1;
export const STR_UNIT_UTF16: i32 = 2;

// ---------------------------------------------------------------------------------------------
// Row sources of the cswitch table (column `source`)
export const CS_SOURCE_CSWITCH: i32 = 0; // a 0x0524 event
export const CS_SOURCE_IDLE_SHORT: i32 = 1; // compact packets: 1 + DataType
export const CS_SOURCE_IDLE: i32 = 2;
export const CS_SOURCE_LITE: i32 = 3;
export const CS_SOURCE_FULL: i32 = 4;

// ---------------------------------------------------------------------------------------------
// Issue log (first LOG_CAPACITY entries kept; the counters stay exact): {u32 code, u32 detail, f64 fileOffset}
export const LOG_ENTRY_SIZE: i32 = 16;
export const LOG_CAPACITY: i32 = 1024;

// Per-kind tally table: open addressing, KIND_CAPACITY entries of KIND_ENTRY_SIZE bytes.
// key: +0 u8 headerType, +1 u8 flags (bit0 EVENT_HEADER extended info), +2 u16 version,
//      +4 u16 id (HookId / EventId / Class.Type / MessageNumber), +6 u16 task, +8 u8 opcode, +9 u8 used,
//      +16 GUID (16 bytes, zero for SYSTEM/COMPACT/PERFINFO/MESSAGE)
// value: +32 u64 count, +40 u64 bytes (sum of Size)
export const KIND_ENTRY_SIZE: i32 = 48;
export const KIND_CAPACITY: i32 = 4096; // power of two
export const KIND_MAX_DISTINCT: i32 = 3072; // distinct kinds tallied; later new kinds count in D_KIND_TABLE_FULL
export const KIND_HEADER_TYPE: i32 = 0;
export const KIND_FLAGS: i32 = 1;
export const KIND_VERSION: i32 = 2;
export const KIND_ID: i32 = 4;
export const KIND_TASK: i32 = 6;
export const KIND_OPCODE: i32 = 8;
export const KIND_USED: i32 = 9;
export const KIND_GUID: i32 = 16;
export const KIND_COUNT: i32 = 32;
export const KIND_BYTES: i32 = 40;

// decodeBuffer status codes
export const STATUS_OK: i32 = 0; // buffer fully handled (walked, or skipped and counted)
export const STATUS_NEED_DRAIN: i32 = 1; // output columns full: drain rows, then call resume()

// ---------------------------------------------------------------------------------------------
// H.1 StackWalk events (group EVENT_TRACE_GROUP_STACKWALK 0x18; opcode = the HookId's low byte), version 2.
// P = pointer size. StackWalk_Event (0x1820): EventTimeStamp, StackProcess, StackThread, then frames.
export const STK_EVENT_TIMESTAMP: i32 = 0x00; // u64 EventTimeStamp (the stacked event's header timestamp)
export const STK_PROCESS_ID: i32 = 0x08; // u32 StackProcess
export const STK_THREAD_ID: i32 = 0x0c; // u32 StackThread
export const STK_FRAMES: i32 = 0x10; // ptr Stack1 .. StackN: N = (payload - 0x10) / P
// StackWalk_Key (0x1825 StackKeyKernel, 0x1826 StackKeyUser): the same three fields, then ptr StackKey at 0x10
export const STK_KEY: i32 = 0x10;
// StackWalk_KeyDefinition (0x1822 KeyCreate, 0x1823 KeyDelete, 0x1824 KeyRundown): ptr StackKey at 0, frames from P
export const STK_DEF_KEY: i32 = 0x00;
export const STK_EVENT_VERSION: i32 = 2;
export const STK_OPCODE_STACK: i32 = 0x20;
export const STK_OPCODE_KEY_CREATE: i32 = 0x22;
export const STK_OPCODE_KEY_DELETE: i32 = 0x23;
export const STK_OPCODE_KEY_RUNDOWN: i32 = 0x24;
export const STK_OPCODE_KEY_KERNEL: i32 = 0x25;
export const STK_OPCODE_KEY_USER: i32 = 0x26;

// G.4 PERFINFO_SAMPLED_PROFILE_CONFIG (SampledProfileInterval: SetInterval 0x0F48, DCStart 0x0F49, DCEnd 0x0F4A;
// versions 2 and 3; the same on x86 and x64)
export const SPI_SOURCE: i32 = 0x00; // u32 KPROFILE_SOURCE
export const SPI_NEW_INTERVAL: i32 = 0x04; // u32, 100 ns units
export const SPI_OLD_INTERVAL: i32 = 0x08; // u32
export const SPI_SOURCE_NAME: i32 = 0x0c; // UTF-16Z (v3)
export const SPI_SIZE: i32 = 0x0c; // the fixed part
export const SPI_VERSION_MIN: i32 = 2;
export const SPI_VERSION_MAX: i32 = 3;

// ---- Text output (not a trace layout): the cells of the CSV / JSON-lines row loops, src/output/row-loop.ts
// (the kinds) and assembly/text/index.ts with src/output/text-wasm.ts (the module's cell records)
export const TXT_K_U8: i32 = 0;
export const TXT_K_U16: i32 = 1;
export const TXT_K_U32: i32 = 2;
export const TXT_K_I8: i32 = 3;
export const TXT_K_I32: i32 = 4;
export const TXT_K_F64: i32 = 5;
export const TXT_K_I64: i32 = 6;
export const TXT_K_U64: i32 = 7;
export const TXT_K_STR: i32 = 8;
export const TXT_K_NAME: i32 = 9;
export const TXT_K_TICKS: i32 = 10;
/** a u64 address: hex text (0x…) */
export const TXT_K_ADDR: i32 = 11;
// a cell record of the module: TXT_CELL_BYTES, its i32 fields at
export const TXT_CELL_BYTES: i32 = 32;
export const TXT_C_KIND: i32 = 0;
/** bit of the row's valid mask that says the value is present, or −1 */
export const TXT_C_NULL_BIT: i32 = 4;
/** where the chunk's values of its column are */
export const TXT_C_COLUMN: i32 = 8;
/** JSON: the bytes before the cell (`{"name":`, `,"name":`), zero-padded to whole words, and their count */
export const TXT_C_PREFIX: i32 = 12;
export const TXT_C_PREFIX_LENGTH: i32 = 16;
/**
 * names: the packed names (TXT_C_NAME_WORDS words per value); ticks: the conversion (TXT_T_); text (its
 * column the rows' codes, i32): the distinct values' encoded bytes as (address, length) i32 pairs
 */
export const TXT_C_TABLE: i32 = 20;
/** names: words per value; text: the count of distinct values */
export const TXT_C_NAME_WORDS: i32 = 24;
/** names: their lengths, a byte per value (0: none) */
export const TXT_C_NAME_LENGTH: i32 = 28;
// a tick conversion (src/time.ts TickConverter's number path): i64 fields at
export const TXT_T_ANCHOR: i32 = 0;
export const TXT_T_NUM: i32 = 8;
export const TXT_T_DEN: i32 = 16;
export const TXT_T_BASE: i32 = 24;
/** largest |quotient| of the number path (qLimit) */
export const TXT_T_Q_LIMIT: i32 = 32;
/** i32: 1 a duration (truncated toward 0), 0 a time (floored) */
export const TXT_T_TRUNC: i32 = 40;
export const TXT_TICK_BYTES: i32 = 48;
/** the number path's bound on the ticks' high words less the anchor's (src/time.ts HI_LIMIT) */
export const TXT_HI_LIMIT: i32 = 0x100000;
// why the module's rows() stopped: the chunk's end or the output's limit (the row it returns is the next to
// write), or a row left to the TypeScript loop (then rows() goes on from the next)
export const TXT_STOP_FULL: i32 = 0;
export const TXT_STOP_ROW: i32 = 1;
