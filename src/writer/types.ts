// Public types of the ETL writer (src/writer). Spec: docs/format.md parts A–F.
// Browser-safe: no node imports.

export type HeaderKind =
  | 'SYSTEM32'
  | 'SYSTEM64'
  | 'COMPACT32'
  | 'COMPACT64'
  | 'PERFINFO32'
  | 'PERFINFO64'
  | 'FULL_HEADER32'
  | 'FULL_HEADER64'
  | 'INSTANCE32'
  | 'INSTANCE64'
  | 'EVENT_HEADER32'
  | 'EVENT_HEADER64'
  | 'MESSAGE';

export type PerfInfoKind = 'PERFINFO32' | 'PERFINFO64';

/** Everything about a trace except its events (the session parameters, spec A.8/A.9). */
export interface TraceOptions {
  /** default 8: logfile header 64-bit form, SYSTEM64/PERFINFO64 headers by default */
  pointerSize?: 4 | 8;
  /** TRACE_LOGFILE_HEADER.ProviderVersion (Windows build), default 19041; also picks the compact bias (D.5) */
  build?: number;
  /** default [10, 0]; layout version bytes are 1.5 (2.0 when compress) */
  osVersion?: [number, number];
  /** default 2 */
  numberOfProcessors?: number;
  /** default 0x10000; every data buffer has this size (uncompressed) */
  bufferSize?: number;
  /** default 10_000_000n */
  perfFreq?: bigint;
  /** ReservedFlags, default 1 (QPC) */
  clockType?: 1 | 2 | 3;
  /** default 3000 */
  cpuSpeedInMHz?: number;
  /** default 156250 (100-ns units) */
  timerResolution?: number;
  /** FILETIMEs. startTime default 133_000_000_000_000_000n; bootTime default startTime − 1 h;
   *  endTime default startTime + (last event timestamp − headerTimestamp) converted with the clock (A.10) */
  startTime?: bigint;
  endTime?: bigint;
  bootTime?: bigint;
  /** raw timestamp of the WMI_LOG_TYPE_HEADER event (T0), default 1_000_000n */
  headerTimestamp?: bigint;
  /** default 'NT Kernel Logger' */
  loggerName?: string;
  /** default 'C:\\Windows\\Temp\\etw-decode.etl' */
  logFileName?: string;
  /** default EVENT_TRACE_FILE_MODE_SEQUENTIAL (1), | EVENT_TRACE_COMPRESSED_MODE (0x04000000) when compress */
  logFileMode?: number;
  eventsLost?: number;
  buffersLost?: number;
  /** 8 u32 for the HEADER_EXTENSION (0x0005) event; default: Masks[1] = CSWITCH|COMPACT_CSWITCH|SPINLOCK bits */
  groupMasks?: number[];
  /** ETW_KERNEL_HEADER_EXTENSION.Version, default 0x46 */
  kernelEventVersion?: number;
  /** default true: BufferFlag 0x20 and u16 processor; false: u8 processor, no 0x20 */
  procIndex?: boolean;
  /** default true: file order of buffers is not SequenceNumber order (1,3,2,4,5,7,6,8,…) */
  outOfOrder?: boolean;
  /** default false: every data buffer compressed (BufferFlag 0x40); the header buffer never is */
  compress?: boolean;
  /** extension: WMI_BUFFER_HEADER LoggerId (u16 at 0x2A), default 0x1C */
  loggerId?: number;
  /** extension: MaximumWaitReason used as the OldThreadStateWr bias (D.5); default maxWaitReasonForBuild(build) */
  compactBias?: number;
}

export interface TraceDescription extends TraceOptions {
  events: EventSpec[];
}

export type EventSpec =
  | CSwitchSpec
  | SpinLockSpec
  | CompactSwitchSpec
  | RawEventSpec
  | ThreadSpec
  | ProcessSpec
  | SetThreadNameSpec
  | ReadyThreadSpec
  | SampledProfileSpec
  | ImageSpec
  | StackWalkSpec
  | SampleIntervalSpec;

export interface CSwitchSpec {
  kind: 'cswitch';
  cpu: number;
  timestamp: bigint;
  version: 1 | 2 | 3 | 4;
  /** default by pointerSize */
  header?: PerfInfoKind;
  newThreadId: number;
  oldThreadId: number;
  newThreadPriority: number;
  oldThreadPriority: number;
  /** byte 0x0A (v1: NewThreadQuantum) */
  previousCState: number;
  /** byte 0x0B (v1: OldThreadQuantum) */
  newThreadPriorityDecrement: number;
  oldThreadWaitReason: number;
  /** raw byte 0x0D (v3/v4: flags) */
  oldThreadWaitMode: number;
  oldThreadState: number;
  oldThreadIdealProcessor: number;
  /** v2+ only (v1 payload is 0x10 bytes, v2–4 0x18) */
  newThreadWaitTime?: number;
  oldThreadRemainingQuantum?: number;
  /** PERFINFO extended items (B.1): marker flags 0x8000 / count<<8, 8 bytes each, PEBS first */
  pebsIndex?: bigint;
  pmcCounters?: bigint[];
}

export interface SpinLockSpec {
  kind: 'spinlock';
  cpu: number;
  timestamp: bigint;
  header?: PerfInfoKind;
  /** default 2 */
  version?: number;
  spinLockAddress: bigint;
  callerAddress: bigint;
  acquireTime: bigint;
  releaseTime: bigint;
  waitTimeInCycles: number;
  spinCount: number;
  threadId: number;
  interruptCount: number;
  irql: number;
  acquireDepth: number;
  acquireMode: number;
  executeDpc: boolean;
  executeIsr: boolean;
  /** extension: PERFINFO extended items, as for CSwitch */
  pebsIndex?: bigint;
  pmcCounters?: bigint[];
}

/** One context switch, packed by the writer into 0x0525 batches (spec D). */
export interface CompactSwitchSpec {
  kind: 'compactSwitch';
  cpu: number;
  timestamp: bigint;
  /** 0 = idle thread */
  oldThreadId: number;
  oldThreadPriority: number;
  oldThreadBasePriority: number;
  oldThreadState: number;
  oldThreadWaitReason: number;
  newThreadWaitTime: number;
  /** header of the batch event; a batch takes the header of its first switch. Default by pointerSize */
  header?: PerfInfoKind;
}

export interface RawEventSpec {
  kind: 'raw';
  cpu: number;
  timestamp: bigint;
  headerType: HeaderKind;
  /** SYSTEM/COMPACT/PERFINFO HookId, default 0x0A10 */
  hookId?: number;
  /** SYSTEM/COMPACT/PERFINFO: marker version byte; FULL/INSTANCE: u16 Class.Version; EVENT_HEADER: descriptor Version */
  version?: number;
  /** GUID text, for FULL/INSTANCE/EVENT_HEADER; default all zero */
  provider?: string;
  /** EVENT_HEADER descriptor Id */
  eventId?: number;
  /** EVENT_HEADER descriptor Opcode */
  opcode?: number;
  /** EVENT_HEADER descriptor Task */
  task?: number;
  /** FULL/INSTANCE Class.Type (u8 at 4) */
  classType?: number;
  /** MESSAGE MessageNumber */
  messageNumber?: number;
  threadId?: number;
  processId?: number;
  payload: Uint8Array;
  /** PERFINFO and SYSTEM only (B.1) */
  pebsIndex?: bigint;
  pmcCounters?: bigint[];
  /** EVENT_HEADER only: items of 8-aligned size {u16 size, u16 ExtType, u16 Linkage, u16 DataSize, data} */
  extendedItems?: { extType: number; data: Uint8Array }[];
  // ---- extensions (all optional, default 0) ----
  /** FULL/INSTANCE Class.Level (u8 at 5), EVENT_HEADER descriptor Level */
  level?: number;
  /** EVENT_HEADER descriptor Channel */
  channel?: number;
  /** EVENT_HEADER descriptor Keyword */
  keyword?: bigint;
  /** EVENT_HEADER EventProperty (u16 at 6) */
  eventProperty?: number;
  /** EVENT_HEADER ActivityId GUID text */
  activityId?: string;
  /** INSTANCE InstanceId / ParentInstanceId / ParentGuid */
  instanceId?: number;
  parentInstanceId?: number;
  parentGuid?: string;
  /** SYSTEM KernelTime / UserTime (u32 at 0x18/0x1C) */
  kernelTime?: number;
  userTime?: number;
}

// ---------------------------------------------------------------------------------------------
// Part F events (docs/format.md §F): thread and process identity, SetName, ReadyThread

/** Header kinds of the part F events. SYSTEM headers carry a ThreadId/ProcessId of their own (B.3), PERFINFO
 *  headers none. The `32` kinds give the payload 4-byte pointers, the `64` kinds 8-byte ones (B.2). */
export type IdentityHeaderKind = 'SYSTEM32' | 'SYSTEM64' | 'PERFINFO32' | 'PERFINFO64';

/** Fields shared by the part F specs. */
export interface IdentityEventBase {
  cpu: number;
  timestamp: bigint;
  /** header kind; the default depends on the event (see each spec) and on the trace's pointerSize */
  header?: IdentityHeaderKind;
  /** SYSTEM headers only: the header's own ThreadId / ProcessId (for Thread Start, the creating thread).
   *  Default: the payload's threadId / processId XOR 4 — deliberately never the payload's ids, so a decoder
   *  that takes ids from the header instead of the payload (F.1) fails. Ignored with PERFINFO headers. */
  headerThreadId?: number;
  headerProcessId?: number;
}

export type ThreadOpcode = 'start' | 'end' | 'dcStart' | 'dcEnd';

/**
 * Thread_TypeGroup1 (F.2): HookId 0x0501 start, 0x0502 end, 0x0503 dcStart, 0x0504 dcEnd. Default header
 * SYSTEM64 (SYSTEM32 when the trace's pointerSize is 4), as in real files (F.1). Fields a version does not
 * have are ignored (basePriority…threadFlags and name need v3+). Pointer fields must fit the header's
 * pointer size.
 */
export interface ThreadSpec extends IdentityEventBase {
  kind: 'thread';
  opcode: ThreadOpcode;
  /** event version 2 | 3 | 4, default 3 (the version of every real file examined, 7601…26100) */
  version?: 2 | 3 | 4;
  processId: number;
  threadId: number;
  /** pointers, default 0 */
  stackBase?: bigint;
  stackLimit?: bigint;
  userStackBase?: bigint;
  userStackLimit?: bigint;
  /** v2: StartAddr; v3/v4: the same slot is Affinity. `affinity` wins when both are given. Default 0 */
  startAddr?: bigint;
  affinity?: bigint;
  win32StartAddr?: bigint;
  tebBase?: bigint;
  /** u32, default 0 */
  subProcessTag?: number;
  /** u8 each, v3+; defaults 8, 5, 2, 0 (values of real files) */
  basePriority?: number;
  pagePriority?: number;
  ioPriority?: number;
  threadFlags?: number;
  /** ThreadName, UTF-16Z. v3: written only if given (an empty string writes the 2-byte terminator, as real
   *  18362 files do); v4: always written (omitted = empty); v2: ignored. Must not contain U+0000 */
  name?: string;
}

export type ProcessOpcode = 'start' | 'end' | 'dcStart' | 'dcEnd' | 'defunct';

/**
 * Process_TypeGroup1 (F.3): HookId 0x0301 start, 0x0302 end, 0x0303 dcStart, 0x0304 dcEnd, 0x0327 defunct.
 * Default header as in Win10 files (F.1, B.2): SYSTEM for start and end, PERFINFO for dcStart, dcEnd and
 * defunct (the 32 or 64 form by the trace's pointerSize). Fields a version does not have are ignored
 * (directoryTableBase v3+, flags/packageFullName/applicationId v4+, exitTime v5).
 */
export interface ProcessSpec extends IdentityEventBase {
  kind: 'process';
  opcode: ProcessOpcode;
  /** event version 2 | 3 | 4 | 5, default 4 (v5 = v4 + a u64 exit FILETIME, seen on Defunct) */
  version?: 2 | 3 | 4 | 5;
  /** pointer, default 0 */
  uniqueProcessKey?: bigint;
  processId: number;
  /** u32, default 0 */
  parentId?: number;
  /** u32, default 0 */
  sessionId?: number;
  /** i32 (u32 values up to 0xFFFFFFFF are accepted and stored as their bits). Default 259 (STILL_ACTIVE)
   *  for start/dcStart/dcEnd, 0 for end/defunct */
  exitStatus?: number;
  /** pointer, v3+, default 0 */
  directoryTableBase?: bigint;
  /** u32, v4+, default 0 */
  flags?: number;
  /** UserSID (F.3). Omitted: the non-zero TOKEN_USER form of real files with SID S-1-5-18 (LocalSystem);
   *  a string 'S-1-…' or the SID's bytes: that SID in the TOKEN_USER form; null: the 4-byte zero form */
  userSid?: string | Uint8Array | null;
  /** the TOKEN_USER block before the SID: two pointer-sized values (Sid pointer; Attributes + padding).
   *  Default [a kernel address, 0]; the first must be non-zero (a zero u32 there means the zero form) */
  userSidPointers?: [bigint, bigint];
  /** ANSI (bytes 0x01…0xFF), NUL-terminated; default '' */
  imageFileName?: string;
  /** UTF-16Z, default '' (present in every supported version) */
  commandLine?: string;
  /** UTF-16Z, v4+, default '' */
  packageFullName?: string;
  applicationId?: string;
  /** u64 FILETIME, v5 only, default 0 */
  exitTime?: bigint;
}

/** Thread SetName (F.5), HookId 0x0548. Default header PERFINFO64/PERFINFO32 by pointerSize, version 2. */
export interface SetThreadNameSpec extends IdentityEventBase {
  kind: 'setThreadName';
  /** default 2 */
  version?: number;
  processId: number;
  threadId: number;
  /** UTF-16Z; may be empty; must not contain U+0000 */
  name: string;
}

/**
 * ReadyThread (F.4), HookId 0x0532, 8-byte payload. Default header PERFINFO64/PERFINFO32 by pointerSize
 * (the header kind of real files is unknown, F.4 [U]; a PERFINFO header has no thread id, matching
 * TraceEvent's inability to name the readying thread). Default version 2 (MOF class ReadyThread : Thread_V2).
 */
export interface ReadyThreadSpec extends IdentityEventBase {
  kind: 'readyThread';
  /** default 2 */
  version?: number;
  /** TThreadId: the thread made ready */
  threadId: number;
  /** u8: 0 None, 1 Unwait, 2 Boost; default 0 */
  adjustReason?: number;
  /** i8, default 0 */
  adjustIncrement?: number;
  /** u8: bit 0 ExecutingDpc, 1 KernelStackNotResident, 2 ProcessOutOfMemory, 3 DirectSwitchAttempt; default 0 */
  flags?: number;
  /** u8 at 7, default 0 */
  spare?: number;
}

// ---------------------------------------------------------------------------------------------
// Part G events (docs/format.md §G): SampledProfile and image events

/**
 * SampledProfile (G.1), HookId 0x0F2E, payload P + 8 bytes. Default header PERFINFO64/PERFINFO32 by
 * pointerSize (real files: PERFINFO64), version 2.
 */
export interface SampledProfileSpec extends IdentityEventBase {
  kind: 'sampledProfile';
  /** default 2 */
  version?: number;
  /** pointer; must fit the header's pointer size */
  instructionPointer: bigint;
  /** the thread running when the processor was sampled (0 = idle) */
  threadId: number;
  /** u16, default 1 */
  count?: number;
  /** u8 at P + 6: bit 0 ExecutingDpc, bit 1 ExecutingIsr, bits 3-7 Priority; default 0 */
  flags?: number;
  /** u8 at P + 7, default 0 */
  rank?: number;
}

export type ImageOpcode = 'load' | 'unload' | 'dcStart' | 'dcEnd';

/**
 * Image_Load (G.2): HookId 0x030A load (logged in the process group), 0x1402 unload, 0x1403 dcStart,
 * 0x1404 dcEnd. Default header as in real files: SYSTEM for load and unload, PERFINFO for dcStart and
 * dcEnd (the 32 or 64 form by the trace's pointerSize). Version 2 or 3 (default 3); v2 writes the
 * signature bytes' place as a u32 Reserved0 of 0.
 */
export interface ImageSpec extends IdentityEventBase {
  kind: 'image';
  opcode: ImageOpcode;
  /** 2 | 3, default 3 */
  version?: 2 | 3;
  processId: number;
  /** pointers; must fit the header's pointer size */
  imageBase: bigint;
  imageSize: bigint;
  /** u32 each, default 0 */
  imageChecksum?: number;
  timeDateStamp?: number;
  /** u8 each, v3 only, default 0 */
  signatureLevel?: number;
  signatureType?: number;
  /** pointer, default imageBase */
  defaultBase?: bigint;
  /** FileName, UTF-16Z (the kernel path, e.g. \\Device\\HarddiskVolume3\\Windows\\System32\\ntdll.dll); must not contain U+0000 */
  fileName: string;
}

// ---------------------------------------------------------------------------------------------
// Part H events (docs/format.md §H): StackWalk and stack-key events

export type StackWalkOpcode = 'stack' | 'keyCreate' | 'keyDelete' | 'keyRundown' | 'keyKernel' | 'keyUser';

/**
 * StackWalk group (H.1): HookId 0x1820 stack (EventTimeStamp, StackProcess, StackThread, frames), 0x1822
 * keyCreate / 0x1823 keyDelete / 0x1824 keyRundown (StackKey, frames), 0x1825 keyKernel / 0x1826 keyUser
 * (EventTimeStamp, StackProcess, StackThread, StackKey). Default header PERFINFO64/PERFINFO32 by pointerSize
 * (real files: PERFINFO64), version 2. Fields an opcode does not have are ignored.
 */
export interface StackWalkSpec extends IdentityEventBase {
  kind: 'stackWalk';
  opcode: StackWalkOpcode;
  /** default 2 */
  version?: number;
  /** stack, keyKernel, keyUser: the timestamp of the event the stack belongs to; default 0 */
  eventTimestamp?: bigint;
  /** u32 each (stack, keyKernel, keyUser), default 0 */
  processId?: number;
  threadId?: number;
  /** pointer (key events), default 0 */
  stackKey?: bigint;
  /** pointers (stack and key definitions), innermost first; default none */
  frames?: readonly bigint[];
}

export type SampleIntervalOpcode = 'setInterval' | 'dcStart' | 'dcEnd';

/**
 * SampledProfileInterval (G.4): HookId 0x0F48 setInterval, 0x0F49 dcStart, 0x0F4A dcEnd; payload
 * PERFINFO_SAMPLED_PROFILE_CONFIG (u32 Source, NewInterval, OldInterval; v3: UTF-16Z SourceName), the same
 * for both pointer sizes. Default header SYSTEM (the 32 or 64 form by the trace's pointerSize), as in real
 * files; version 2 or 3 (default 3).
 */
export interface SampleIntervalSpec extends IdentityEventBase {
  kind: 'sampleInterval';
  opcode: SampleIntervalOpcode;
  /** 2 | 3, default 3 */
  version?: 2 | 3;
  /** u32 KPROFILE_SOURCE, default 0 (ProfileTime) */
  source?: number;
  /** u32, 100 ns units (10000 = 1 ms) */
  newInterval: number;
  /** u32, default newInterval */
  oldInterval?: number;
  /** v3 only, default 'Timer'; must not contain U+0000 */
  sourceName?: string;
}

export interface WrittenBuffer {
  fileOffset: number;
  /** on-disk size (BufferSize field) */
  size: number;
  cpu: number;
  sequenceNumber: number;
  compressed: boolean;
  events: number;
  /** extension: uncompressed filled size (Offset = SavedOffset) */
  filled: number;
  /** extension: WMI_BUFFER_HEADER.TimeStamp */
  timestamp: bigint;
}

export type CompactPacketKind = 'IDLE_SHORT' | 'IDLE' | 'LITE' | 'FULL';

export interface CompactPacketInfo {
  cpu: number;
  timestamp: bigint;
  kind: CompactPacketKind;
  oldThreadId: number;
  /** global batch number: 0-based index of the batch event in write (flush) order */
  batch: number;
  // ---- extensions ----
  /** TimeDelta stored in the packet */
  timeDelta: number;
  /** TidTable index (LITE/FULL), -1 for idle packets */
  tidIndex: number;
  /** OldThreadStateWr (LITE/FULL), -1 for idle packets */
  stateWr: number;
  /** stored priority field: PriInc for LITE, absolute priority for FULL, -1 for idle */
  priorityField: number;
  /** stored NewThreadWaitTime (FULL, saturated), -1 otherwise */
  waitTimeField: number;
}

export interface WrittenTrace {
  bytes: Uint8Array;
  /** in file order; the header buffer first */
  buffers: WrittenBuffer[];
  /** total events written incl. the two header events; a compact batch counts as one event */
  events: number;
  compactBatches: number;
  /** one per compactSwitch, sorted by cpu, then in that CPU's time order (= input order among equal timestamps) */
  compactPackets: CompactPacketInfo[];
  /** OldThreadStateWr bias used (D.5) */
  bias: number;
}
