// Writer-side layout constants of the part F and G events (docs/format.md §F, §G): Thread_TypeGroup1 (F.2),
// Process_TypeGroup1 (F.3), ReadyThread (F.4), Thread SetName (F.5), SampledProfile (G.1) and Image_Load
// (G.2), StackWalk and stack-key events (H.1), as literal 32/64-bit offsets.
// Deliberately a second reading of the format, independent of assembly/layout.ts (which the decoders
// use): round trips through the writer then check the decoders' layout instead of sharing it.
// Plain TypeScript numbers. Browser-safe.

// ---------------------------------------------------------------------------------------------
// B.5 / F.1 HookIds (Group << 8 | Type)
export const HOOK_PROCESS_START = 0x0301;
export const HOOK_PROCESS_END = 0x0302;
export const HOOK_PROCESS_DC_START = 0x0303;
export const HOOK_PROCESS_DC_END = 0x0304;
export const HOOK_PROCESS_DEFUNCT = 0x0327;
export const HOOK_THREAD_START = 0x0501;
export const HOOK_THREAD_END = 0x0502;
export const HOOK_THREAD_DC_START = 0x0503;
export const HOOK_THREAD_DC_END = 0x0504;
export const HOOK_READY_THREAD = 0x0532; // PERFINFO_LOG_TYPE_READY_THREAD
export const HOOK_THREAD_SET_NAME = 0x0548;
export const HOOK_SAMPLED_PROFILE = 0x0f2e; // PERFINFO_LOG_TYPE_SAMPLED_PROFILE
export const HOOK_IMAGE_LOAD = 0x030a; // WMI_LOG_TYPE_PROCESS_LOAD_IMAGE: a load is logged in the process group
export const HOOK_IMAGE_UNLOAD = 0x1402; // WMI_LOG_TYPE_IMAGE_UNLOAD
export const HOOK_IMAGE_DC_START = 0x1403;
export const HOOK_IMAGE_DC_END = 0x1404;
export const HOOK_SAMPLED_PROFILE_SET_INTERVAL = 0x0f48; // PERFINFO_LOG_TYPE_SAMPLED_PROFILE_SET_INTERVAL
export const HOOK_SAMPLED_PROFILE_DC_START = 0x0f49;
export const HOOK_SAMPLED_PROFILE_DC_END = 0x0f4a;

// ---------------------------------------------------------------------------------------------
// F.2 Thread_TypeGroup1, versions 2-4 (P = pointer size: 4 for ...32 headers, 8 for ...64)
export const THR_PROCESS_ID = 0x00; // u32
export const THR_THREAD_ID = 0x04; // u32 TThreadId
export const THR_STACK_BASE = 0x08; // ptr, the first of 7 pointers (8 + k*P)
export const THR32_STACK_LIMIT = 0x0c;
export const THR64_STACK_LIMIT = 0x10;
export const THR32_USER_STACK_BASE = 0x10;
export const THR64_USER_STACK_BASE = 0x18;
export const THR32_USER_STACK_LIMIT = 0x14;
export const THR64_USER_STACK_LIMIT = 0x20;
export const THR32_START_ADDR = 0x18; // v3+: Affinity (union with StartAddr)
export const THR64_START_ADDR = 0x28;
export const THR32_WIN32_START_ADDR = 0x1c;
export const THR64_WIN32_START_ADDR = 0x30;
export const THR32_TEB_BASE = 0x20;
export const THR64_TEB_BASE = 0x38;
export const THR32_SUB_PROCESS_TAG = 0x24; // u32
export const THR64_SUB_PROCESS_TAG = 0x40;
export const THR32_BASE_PRIORITY = 0x28; // u8, v3+
export const THR64_BASE_PRIORITY = 0x44;
export const THR32_PAGE_PRIORITY = 0x29;
export const THR64_PAGE_PRIORITY = 0x45;
export const THR32_IO_PRIORITY = 0x2a;
export const THR64_IO_PRIORITY = 0x46;
export const THR32_THREAD_FLAGS = 0x2b;
export const THR64_THREAD_FLAGS = 0x47;
export const THR32_THREAD_NAME = 0x2c; // UTF-16Z; v3: only if bytes remain, v4: always
export const THR64_THREAD_NAME = 0x48;
export const THR32_SIZE_V2 = 0x28; // 40
export const THR64_SIZE_V2 = 0x44; // 68
export const THR32_SIZE_V3 = 0x2c; // 44, without a name
export const THR64_SIZE_V3 = 0x48; // 72, without a name

// ---------------------------------------------------------------------------------------------
// F.3 Process_TypeGroup1, versions 2-5 (fixed part; the variable part follows at *_USER_SID_V*)
export const PRC_UNIQUE_PROCESS_KEY = 0x00; // ptr
export const PRC32_PROCESS_ID = 0x04; // u32
export const PRC64_PROCESS_ID = 0x08;
export const PRC32_PARENT_ID = 0x08;
export const PRC64_PARENT_ID = 0x0c;
export const PRC32_SESSION_ID = 0x0c;
export const PRC64_SESSION_ID = 0x10;
export const PRC32_EXIT_STATUS = 0x10; // i32
export const PRC64_EXIT_STATUS = 0x14;
export const PRC32_DIRECTORY_TABLE_BASE = 0x14; // ptr, v3+
export const PRC64_DIRECTORY_TABLE_BASE = 0x18;
export const PRC32_FLAGS = 0x18; // u32, v4+
export const PRC64_FLAGS = 0x20;
/** start of UserSID: P+0x10 (v2), 2P+0x10 (v3), 2P+0x14 (v4, v5) */
export const PRC32_USER_SID_V2 = 0x14;
export const PRC64_USER_SID_V2 = 0x18;
export const PRC32_USER_SID_V3 = 0x18;
export const PRC64_USER_SID_V3 = 0x20;
export const PRC32_USER_SID_V4 = 0x1c;
export const PRC64_USER_SID_V4 = 0x24;
/** UserSID: a u32 0 (4 bytes), or TOKEN_USER (2 pointers) + SID of 8 + 4 * SubAuthorityCount bytes */
export const PRC_SID_ZERO_SIZE = 4;
export const SID_SUB_AUTHORITY_COUNT = 0x01; // u8, byte 1 of a SID
export const SID_FIXED_SIZE = 8; // Revision, SubAuthorityCount, 6-byte IdentifierAuthority
export const SID_MAX_SUB_AUTHORITIES = 15;
/** version 5: the v4 layout plus one u64 FILETIME (exit time) after ApplicationId */
export const PRC_EXIT_TIME_SIZE = 8;
/** Flags (v4+) [S: PHNT-WMI] */
export const PROCESS_FLAG_APPLICATION_ID = 0x1;
export const PROCESS_FLAG_WOW64 = 0x2;
export const PROCESS_FLAG_PROTECTED = 0x4;
export const PROCESS_FLAG_PACKAGED = 0x8;
/** ExitStatus of rundown payloads (STILL_ACTIVE) */
export const STATUS_STILL_ACTIVE = 259;
/** SessionId of Idle and System */
export const SESSION_ID_NONE = 0xffffffff;

// ---------------------------------------------------------------------------------------------
// F.4 ETW_READY_THREAD_EVENT (8 bytes; MOF class ReadyThread : Thread_V2, so event version 2)
export const RDY_THREAD_ID = 0x00; // u32 TThreadId, the thread made ready
export const RDY_ADJUST_REASON = 0x04; // u8: 0 None, 1 Unwait, 2 Boost
export const RDY_ADJUST_INCREMENT = 0x05; // i8
export const RDY_FLAGS = 0x06; // u8
export const RDY_SPARE = 0x07; // u8
export const RDY_SIZE = 0x08;
export const RDY_EVENT_VERSION = 2;
export const READY_FLAG_EXECUTING_DPC = 0x1;
export const READY_FLAG_KERNEL_STACK_NOT_RESIDENT = 0x2;
export const READY_FLAG_PROCESS_OUT_OF_MEMORY = 0x4;
export const READY_FLAG_DIRECT_SWITCH_ATTEMPT = 0x8;
export const ADJUST_REASON_NONE = 0;
export const ADJUST_REASON_UNWAIT = 1;
export const ADJUST_REASON_BOOST = 2;

// ---------------------------------------------------------------------------------------------
// F.5 Thread SetName (PERFINFO64 v2 in real files)
export const SETNAME_PROCESS_ID = 0x00; // u32
export const SETNAME_THREAD_ID = 0x04; // u32
export const SETNAME_THREAD_NAME = 0x08; // UTF-16Z
export const SETNAME_EVENT_VERSION = 2;

// ---------------------------------------------------------------------------------------------
// G.1 PERFINFO_SAMPLED_PROFILE_INFORMATION (SampledProfile, PERFINFO64 v2 in real files)
export const SMP_INSTRUCTION_POINTER = 0x00; // ptr
export const SMP32_THREAD_ID = 0x04; // u32
export const SMP64_THREAD_ID = 0x08;
export const SMP32_COUNT = 0x08; // u16
export const SMP64_COUNT = 0x0c;
export const SMP32_FLAGS = 0x0a; // u8: bit 0 ExecutingDpc, bit 1 ExecutingIsr, bits 3-7 Priority
export const SMP64_FLAGS = 0x0e;
export const SMP32_RANK = 0x0b; // u8
export const SMP64_RANK = 0x0f;
export const SMP32_SIZE = 0x0c;
export const SMP64_SIZE = 0x10;
export const SMP_EVENT_VERSION = 2;

// ---------------------------------------------------------------------------------------------
// G.2 WMI_IMAGELOAD_INFORMATION (Image_Load v2/v3; v2 has a u32 Reserved0 where v3 has the signature bytes)
export const IMG_IMAGE_BASE = 0x00; // ptr
export const IMG32_IMAGE_SIZE = 0x04; // ptr
export const IMG64_IMAGE_SIZE = 0x08;
export const IMG32_PROCESS_ID = 0x08; // u32
export const IMG64_PROCESS_ID = 0x10;
export const IMG32_IMAGE_CHECKSUM = 0x0c; // u32
export const IMG64_IMAGE_CHECKSUM = 0x14;
export const IMG32_TIME_DATE_STAMP = 0x10; // u32
export const IMG64_TIME_DATE_STAMP = 0x18;
export const IMG32_SIGNATURE_LEVEL = 0x14; // u8 (v3)
export const IMG64_SIGNATURE_LEVEL = 0x1c;
export const IMG32_SIGNATURE_TYPE = 0x15; // u8 (v3), then u16 Reserved0
export const IMG64_SIGNATURE_TYPE = 0x1d;
export const IMG32_DEFAULT_BASE = 0x18; // ptr
export const IMG64_DEFAULT_BASE = 0x20;
export const IMG32_FILE_NAME = 0x2c; // UTF-16Z, after Reserved1-4
export const IMG64_FILE_NAME = 0x38;
export const IMG_EVENT_VERSION = 3;

// ---------------------------------------------------------------------------------------------
// H.1 StackWalk group (EVENT_TRACE_GROUP_STACKWALK 0x1800 | opcode), version 2, PERFINFO64 in real files
export const HOOK_STACKWALK = 0x1820; // StackWalk_Event
export const HOOK_STACK_KEY_CREATE = 0x1822;
export const HOOK_STACK_KEY_DELETE = 0x1823;
export const HOOK_STACK_KEY_RUNDOWN = 0x1824;
export const HOOK_STACK_KEY_KERNEL = 0x1825;
export const HOOK_STACK_KEY_USER = 0x1826;
export const STW_EVENT_TIMESTAMP = 0x00; // u64
export const STW_STACK_PROCESS = 0x08; // u32
export const STW_STACK_THREAD = 0x0c; // u32
export const STW_FRAMES = 0x10; // ptr Stack1..StackN (stack)
export const STW_REF_KEY = 0x10; // ptr StackKey (keyKernel, keyUser): the payload is 0x14 (x86) or 0x18 (x64)
export const STW_DEF_KEY = 0x00; // ptr StackKey (key definitions), then the frames from P
export const STW_EVENT_VERSION = 2;
// G.4 PERFINFO_SAMPLED_PROFILE_CONFIG (SampledProfileInterval v2/v3; no pointer-sized field)
export const SPI_SOURCE = 0x00; // u32
export const SPI_NEW_INTERVAL = 0x04; // u32
export const SPI_OLD_INTERVAL = 0x08; // u32
export const SPI_SOURCE_NAME = 0x0c; // UTF-16Z (v3)
export const SPI_EVENT_VERSION = 3;
