// The table registry: every decoded table, its columns (id = position), types and meaning, declared
// once. `npm run gen` (scripts/gen.mjs) turns it into
//   - assembly/generated/registry.ts: TABLE_* ids, <PREFIX>_<COLUMN> column ids, column counts, widths,
//     always-valid masks and row reserves for the WebAssembly engine, and
//   - src/generated/registry.ts: the same constants for TypeScript plus `TABLES`, an `as const` schema
//     from which the row types, the CLI's --table choices and every output format are derived.
//
// Column type: i64 u64 f64 u32 i32 u16 u8 i8, or str (text: in the WebAssembly engine a u32 reference
// into its string heap, in TypeScript a string); a trailing '?' marks a nullable column. A table with
// nullable columns ends with `valid` (u32): bit c set = column c is present. Decoded tables come first
// (their ids index the engines' arenas); derived tables are computed in TypeScript from them.
// `kernelFlags` names the kernel flag(s) that record the table's events (the CLI names them when a
// table comes out empty). A decoded table's `decoders` name the HookIds whose events make its rows and
// the decoder function of each: the HOOK_* constants, both engines' routing of HookIds (a byte table
// by HookId, a switch on the decoder id) and the names of the event kinds in summaries are generated
// from them. Adding a decoded table: CONTRIBUTING.md, "Adding a decoded table".

/** @typedef {[name: string, type: string, description: string, kind?: string]} Column
 *  kind: the column holds values of a named enumeration (src/tables/enums.ts ENUMS): outputs can add a
 *  `<column>Name` text column for it; or 'time' (raw session-clock ticks: `--time` converts it) or
 *  'duration' (a difference of ticks: `--time ns` converts it); or 'address' (a u64 address: hex text,
 *  0x and lowercase digits, in CSV and JSON lines; unsigned 64-bit in Arrow and Parquet). */
/** @typedef {[name: string, hookId: number, windowsName: string]} Hook
 *  a HookId (docs/format.md §B.5; group << 8 | type): the generated constant HOOK_<name> = hookId, and the
 *  name of its events in `summary.eventsByKind` (the Windows PERFINFO_LOG_TYPE_/WMI_LOG_TYPE_ name, or
 *  Group/Opcode) */
/**
 * @typedef {object} DecoderDecl
 * @property {string} file   the decoder is assembly/<file>.ts and its twin src/engine/reference/<file>.ts;
 *                           DEC_<FILE> is its generated decoder id
 * @property {string} fn     the function of both files that decodes one event
 * @property {string[]} args what the generated dispatch passes it, by name, in order: data (address of
 *   the payload), n (payload bytes), version, pointerSize (4 or 8), opcode (the HookId's low byte), cpu,
 *   tsAt (address of the header's timestamp), fileOffset, bias (MaximumWaitReason, §D.5). The reference
 *   twin takes (a: Arena, d: DataView) first.
 * @property {Hook[]} hooks  the HookIds routed to it
 */
/**
 * @typedef {object} TableDecl
 * @property {string} name      table name (public, lower camelCase)
 * @property {string} prefix    prefix of the generated column constants
 * @property {number} [reserve] rows that must be free before one event is walked (worst case of one event);
 *                              absent for derived tables
 * @property {boolean} [derived] computed in TypeScript from decoded tables (no engine columns)
 * @property {string} description
 * @property {[name: string, groupMask: number][]} kernelFlags
 *   the kernel flags that record this table's events: the xperf/WPR name (shown when a trace has no rows
 *   for the table) and its PERF_* group-mask constant (top 3 bits = index into the header extension's
 *   Masks[], low 29 bits = the bits; docs/format.md §A.9), by which a trace shows whether it was on.
 *   Any one listed flag records them.
 * @property {DecoderDecl[]} [decoders] the decoders of the events that make its rows (decoded tables)
 * @property {string} [rowsOf] a decoded child table without decoders of its own: the decoders of the table
 *   named here write its rows too (stackEventFrames: the frames of stackEvents rows)
 * @property {Column[]} columns
 */

/**
 * HookIds of the logfile's own events (no table rows): `walk` marks the ones that assembly/walk.ts and
 * src/engine/reference/walk.ts decode themselves (trace-wide state; decoder id DEC_<name>); the others
 * are only named.
 * @type {(Hook | [...Hook, 'walk'])[]}
 */
export const TRACE_HOOKS = [
  ['HEADER', 0x0000, 'WMI_LOG_TYPE_HEADER', 'walk'], // §A.8 TRACE_LOGFILE_HEADER
  ['HEADER_EXTENSION', 0x0005, 'WMI_LOG_TYPE_HEADER_EXTENSION', 'walk'], // §A.9 ETW_KERNEL_HEADER_EXTENSION
  ['GROUP_MASKS_END', 0x0020, 'WMI_LOG_TYPE_GROUP_MASKS_END'],
];

/** @type {TableDecl[]} */
export const TABLES = [
  {
    name: 'cswitch',
    prefix: 'CS',
    // one compact batch of a 0xFFFF-byte event yields at most ~32 700 rows (2-byte packets)
    reserve: 32770,
    description: 'one row per context switch: CSwitch events (0x0524) and compact context-switch packets (0x0525)',
    // PERF_CONTEXT_SWITCH; COMPACT_CSWITCH (0x20000100) only changes their encoding, together with it
    kernelFlags: [['CSWITCH', 0x20000004]],
    decoders: [
      { file: 'cswitch', fn: 'cswitchEvent', args: ['data', 'n', 'version', 'cpu', 'tsAt', 'fileOffset'], hooks: [['CSWITCH', 0x0524, 'PERFINFO_LOG_TYPE_CONTEXTSWAP']] },
      {
        file: 'compcs',
        fn: 'compactBatch',
        args: ['data', 'n', 'version', 'cpu', 'tsAt', 'fileOffset', 'bias'],
        hooks: [['COMPCS', 0x0525, 'PERFINFO_LOG_TYPE_CONTEXTSWAP_BATCH']],
      },
    ],
    columns: [
      ['timestamp', 'i64', 'raw session-clock ticks of the switch (compact: FirstTimeStamp + running sum of TimeDelta)', 'time'],
      ['cpu', 'u16', 'processor of the buffer holding the event'],
      ['newThreadId', 'u32?', 'thread switched in (compact rows: the old thread of the next switch on this CPU; null for the last one)'],
      ['oldThreadId', 'u32', 'thread switched out (0 = idle)'],
      ['newThreadPriority', 'i8?', 'NewThreadPriority'],
      ['oldThreadPriority', 'i8?', 'OldThreadPriority (compact: FULL absolute, LITE base priority + increment)'],
      ['previousCState', 'u8?', 'byte 0x0A of v2+: union of PreviousCState and OldThreadRank (ntwmi.h)'],
      ['newThreadPriorityDecrement', 'i8?', 'NewThreadPriorityDecrement (v2+)'],
      ['oldThreadWaitReason', 'u8?', 'KWAIT_REASON (compact: only when the state is Waiting)', 'waitReason'],
      ['oldThreadWaitMode', 'u8?', 'KPROCESSOR_MODE (bit 0 of byte 0x0D from v3)', 'waitMode'],
      ['oldThreadState', 'u8?', 'KTHREAD_STATE (compact: unbiased with the build\'s MaximumWaitReason)', 'threadState'],
      ['oldThreadIdealProcessor', 'u8?', 'OldThreadIdealProcessor'],
      ['newThreadWaitTime', 'u32?', 'NewThreadWaitTime in clock-interrupt ticks (compact FULL: 17 bits, saturates)'],
      ['oldThreadRemainingQuantum', 'i32?', 'OldThreadRemainingQuantum (v2+)'],
      ['newThreadQuantum', 'i8?', 'NewThreadQuantum (v1 only, byte 0x0A)'],
      ['oldThreadQuantum', 'i8?', 'OldThreadQuantum (v1 only, byte 0x0B)'],
      ['threadFlags', 'u8?', 'raw byte 0x0D of v3/v4 events'],
      ['oldThreadBamEppImportant', 'u8?', 'v3 flag bit 1'],
      ['newThreadBamEppImportant', 'u8?', 'v3 flag bit 2'],
      ['oldThreadBamQosLevel', 'u8?', 'v4 flag bits 1-3'],
      ['newThreadBamQosLevel', 'u8?', 'v4 flag bits 4-6'],
      ['newThreadWaitTimeAtMostOneTick', 'u8', '1 for compact LITE packets: the new thread waited at most one tick (the wait time itself is not recorded)'],
      ['source', 'u8', '0 CSwitch event, 1 IDLE_SHORT, 2 IDLE, 3 LITE, 4 FULL compact packet', 'rowSource'],
      ['version', 'u8', 'event version'],
      ['fileOffset', 'f64', 'file offset of the event (compressed buffers: buffer offset + 0x48 + offset in the decompressed payload)'],
      ['stackId', 'u32?', 'the stack walked on the thread switched in (WPA\'s NewThreadStack: where it waited), a stacks row; null where the trace has none for the row (attached after the decode: docs/design/stacks.md)'],
      ['valid', 'u32', 'bit mask of present columns (bit = column id)'],
    ],
  },
  {
    name: 'spinlock',
    prefix: 'SL',
    reserve: 1,
    description: 'one row per released spin lock: SpinLock events (0x0529), 32- and 64-bit layouts',
    kernelFlags: [['SPINLOCK', 0x20010000]], // PERF_SPINLOCK
    decoders: [
      {
        file: 'spinlock',
        fn: 'spinlockEvent',
        args: ['data', 'n', 'version', 'pointerSize', 'cpu', 'tsAt', 'fileOffset'],
        hooks: [['SPINLOCK', 0x0529, 'PERFINFO_LOG_TYPE_SPINLOCK']],
      },
    ],
    columns: [
      ['timestamp', 'i64', 'raw session-clock ticks of the event', 'time'],
      ['cpu', 'u16', 'processor of the buffer'],
      ['spinLockAddress', 'u64', 'SpinLockAddress', 'address'],
      ['callerAddress', 'u64', 'CallerAddress', 'address'],
      ['acquireTime', 'u64', 'AcquireTime (rdtsc cycles)'],
      ['releaseTime', 'u64', 'ReleaseTime (rdtsc cycles)'],
      ['waitTimeInCycles', 'u32', 'WaitTimeInCycles'],
      ['spinCount', 'u32', 'SpinCount'],
      ['threadId', 'u32', 'ThreadId'],
      ['interruptCount', 'u32', 'InterruptCount'],
      ['irql', 'u8', 'Irql'],
      ['acquireDepth', 'u8', 'AcquireDepth'],
      ['acquireMode', 'u8', 'AcquireMode (flags bits 0-5)', 'acquireMode'],
      ['executeDpc', 'u8', 'ExecuteDpc (flags bit 6)'],
      ['executeIsr', 'u8', 'ExecuteIsr (flags bit 7)'],
      ['pointerSize', 'u8', '4 (x86 layout) or 8 (x64 layout)'],
      ['version', 'u8', 'event version'],
      ['fileOffset', 'f64', 'file offset of the event'],
    ],
  },
  {
    name: 'readythread',
    prefix: 'RT',
    reserve: 1,
    kernelFlags: [['DISPATCHER', 0x20000200]], // PERF_DISPATCHER
    description: 'one row per ReadyThread event (0x0532): a thread made ready to run',
    decoders: [
      {
        file: 'readythread',
        fn: 'readyThreadEvent',
        args: ['data', 'n', 'version', 'cpu', 'tsAt', 'fileOffset'],
        hooks: [['READY_THREAD', 0x0532, 'PERFINFO_LOG_TYPE_READY_THREAD']], // §F.4
      },
    ],
    columns: [
      ['timestamp', 'i64', 'raw session-clock ticks of the event', 'time'],
      ['cpu', 'u16', 'processor of the buffer (where the readying thread runs)'],
      ['threadId', 'u32', 'TThreadId: the thread made ready'],
      ['adjustReason', 'u8', 'AdjustReason: 0 None, 1 Unwait, 2 Boost', 'adjustReason'],
      ['adjustIncrement', 'i8', 'AdjustIncrement (priority boost)'],
      ['flags', 'u8', 'bit 0 ExecutingDpc, 1 KernelStackNotResident, 2 ProcessOutOfMemory, 3 DirectSwitchAttempt'],
      ['version', 'u8', 'event version'],
      ['fileOffset', 'f64', 'file offset of the event'],
      ['stackId', 'u32?', 'the stack of the readying thread (WPA\'s ReadyThreadStack: the code that woke the thread), a stacks row; null where the trace has none for the row (attached after the decode: docs/design/stacks.md)'],
      ['valid', 'u32', 'bit mask of present columns (bit = column id)'],
    ],
  },
  {
    name: 'threadEvents',
    prefix: 'TE',
    reserve: 1,
    kernelFlags: [['PROC_THREAD', 0x00000002]], // PERF_THREAD (Masks[0])
    description: 'one row per Thread event: Start (0x0501), End (0x0502), DCStart (0x0503), DCEnd (0x0504) and SetName (0x0548)',
    decoders: [
      {
        file: 'thread',
        fn: 'threadEvent',
        args: ['data', 'n', 'version', 'pointerSize', 'opcode', 'cpu', 'tsAt', 'fileOffset'],
        // §F.1: HookId = group << 8 | opcode
        hooks: [
          ['THREAD_START', 0x0501, 'Thread/Start'],
          ['THREAD_END', 0x0502, 'Thread/End'],
          ['THREAD_DC_START', 0x0503, 'Thread/DCStart'],
          ['THREAD_DC_END', 0x0504, 'Thread/DCEnd'],
          ['THREAD_SET_NAME', 0x0548, 'Thread/SetName'], // §F.5
        ],
      },
    ],
    columns: [
      ['timestamp', 'i64', 'raw session-clock ticks of the event', 'time'],
      ['cpu', 'u16', 'processor of the buffer'],
      ['opcode', 'u8', '1 Start, 2 End, 3 DCStart, 4 DCEnd, 72 SetName (the low byte of the HookId)', 'threadEvent'],
      ['threadId', 'u32', 'TThreadId (from the payload, never the header)'],
      ['processId', 'u32', 'ProcessId'],
      ['win32StartAddr', 'u64?', 'Win32StartAddr (Start/End/DCStart/DCEnd)', 'address'],
      ['basePriority', 'u8?', 'BasePriority (v3+)'],
      ['name', 'str?', 'ThreadName (v4; v3 when present) or the SetName name'],
      ['version', 'u8', 'event version'],
      ['fileOffset', 'f64', 'file offset of the event'],
      ['valid', 'u32', 'bit mask of present columns (bit = column id)'],
    ],
  },
  {
    name: 'processEvents',
    prefix: 'PE',
    reserve: 1,
    kernelFlags: [['PROC_THREAD', 0x00000001]], // PERF_PROCESS (Masks[0])
    description: 'one row per Process event: Start (0x0301), End (0x0302), DCStart (0x0303), DCEnd (0x0304) and Defunct (0x0327)',
    decoders: [
      {
        file: 'process',
        fn: 'processEvent',
        args: ['data', 'n', 'version', 'pointerSize', 'opcode', 'cpu', 'tsAt', 'fileOffset'],
        hooks: [
          ['PROCESS_START', 0x0301, 'Process/Start'],
          ['PROCESS_END', 0x0302, 'Process/End'],
          ['PROCESS_DC_START', 0x0303, 'Process/DCStart'],
          ['PROCESS_DC_END', 0x0304, 'Process/DCEnd'],
          ['PROCESS_DEFUNCT', 0x0327, 'Process/Defunct'],
        ],
      },
    ],
    columns: [
      ['timestamp', 'i64', 'raw session-clock ticks of the event', 'time'],
      ['cpu', 'u16', 'processor of the buffer'],
      ['opcode', 'u8', '1 Start, 2 End, 3 DCStart, 4 DCEnd, 39 Defunct (the low byte of the HookId)', 'processEvent'],
      ['processId', 'u32', 'ProcessId'],
      ['parentId', 'u32', 'ParentId'],
      ['sessionId', 'u32', 'SessionId (4294967295 for Idle and System)'],
      ['exitStatus', 'i32', 'ExitStatus (259 STILL_ACTIVE in rundowns)'],
      ['uniqueProcessKey', 'u64', 'UniqueProcessKey', 'address'],
      ['imageFileName', 'str', 'ImageFileName (ANSI)'],
      ['commandLine', 'str?', 'CommandLine (v2+)'],
      ['packageFullName', 'str?', 'PackageFullName (v4+)'],
      ['exitTime', 'i64?', 'exit FILETIME (v5)'],
      ['version', 'u8', 'event version'],
      ['fileOffset', 'f64', 'file offset of the event'],
      ['valid', 'u32', 'bit mask of present columns (bit = column id)'],
    ],
  },
  {
    name: 'samples',
    prefix: 'SP',
    reserve: 1,
    kernelFlags: [['PROFILE', 0x20000002]], // PERF_PROFILE (Masks[1]; EVENT_TRACE_FLAG_PROFILE 0x01000000 is its Masks[0] alias)
    description: 'one row per SampledProfile event (0x0F2E): the instruction pointer of the thread a profile interrupt found running',
    decoders: [
      {
        file: 'sample',
        fn: 'sampledProfileEvent',
        args: ['data', 'n', 'version', 'pointerSize', 'cpu', 'tsAt', 'fileOffset'],
        hooks: [['SAMPLED_PROFILE', 0x0f2e, 'PERFINFO_LOG_TYPE_SAMPLED_PROFILE']], // §G.1
      },
    ],
    columns: [
      ['timestamp', 'i64', 'raw session-clock ticks of the sample', 'time'],
      ['cpu', 'u16', 'processor of the buffer (the processor sampled)'],
      ['threadId', 'u32', 'ThreadId: the thread running when the processor was sampled (0 = idle)'],
      ['instructionPointer', 'u64', 'InstructionPointer', 'address'],
      ['count', 'u16', 'Count: samples this event stands for'],
      ['flags', 'u8', 'byte 0x0E of the payload (ntwmi.h: bit 0 ExecutingDpc, 1 ExecutingIsr, 3-7 Priority)'],
      ['executingDpc', 'u8', 'ExecutingDpc (flags bit 0)'],
      ['executingIsr', 'u8', 'ExecutingIsr (flags bit 1)'],
      ['priority', 'u8', 'Priority (flags bits 3-7)'],
      ['rank', 'u8', 'Rank (byte 0x0F of the payload)'],
      ['pointerSize', 'u8', '4 (x86 layout) or 8 (x64 layout)'],
      ['version', 'u8', 'event version'],
      ['fileOffset', 'f64', 'file offset of the event'],
      ['stackId', 'u32?', 'the stack of the sampled thread, a stacks row; null where the trace has none for the row (attached after the decode: docs/design/stacks.md)'],
      ['processId', 'u32?', 'the process of threadId at the sample\'s time: its threads lifetime with the latest startTime <= the time (null startTime = -infinity); tid 0 -> 0; null if the thread has none (filled after the decode: docs/design/stacks.md)'],
      ['imageName', 'str?', 'name of the image holding instructionPointer at the sample\'s time (the `name` of its images row, e.g. ntdll.dll): kernel-space addresses among the images of process 0 first, then those of processId; null outside any image (filled after the decode)'],
      ['imageOffset', 'u64?', 'instructionPointer - imageBase of that image (module!offset); null outside any image', 'address'],
      ['valid', 'u32', 'bit mask of present columns (bit = column id)'],
    ],
  },
  {
    name: 'imageEvents',
    prefix: 'IE',
    reserve: 1,
    kernelFlags: [['LOADER', 0x00000004]], // PERF_LOADER (Masks[0])
    description: 'one row per Image event: Load (0x030A), Unload (0x1402), DCStart (0x1403) and DCEnd (0x1404)',
    decoders: [
      {
        file: 'image',
        fn: 'imageEvent',
        args: ['data', 'n', 'version', 'pointerSize', 'opcode', 'cpu', 'tsAt', 'fileOffset'],
        // §G.2: a load is logged in the process group (WMI_LOG_TYPE_PROCESS_LOAD_IMAGE), the rest in the image group
        hooks: [
          ['IMAGE_LOAD', 0x030a, 'Image/Load'],
          ['IMAGE_UNLOAD', 0x1402, 'Image/Unload'],
          ['IMAGE_DC_START', 0x1403, 'Image/DCStart'],
          ['IMAGE_DC_END', 0x1404, 'Image/DCEnd'],
        ],
      },
    ],
    columns: [
      ['timestamp', 'i64', 'raw session-clock ticks of the event', 'time'],
      ['cpu', 'u16', 'processor of the buffer'],
      ['opcode', 'u8', '10 Load, 2 Unload, 3 DCStart, 4 DCEnd (the low byte of the HookId)', 'imageEvent'],
      ['processId', 'u32', 'ProcessId (0 for kernel-mode images)'],
      ['imageBase', 'u64', 'ImageBase', 'address'],
      ['imageSize', 'u64', 'ImageSize (bytes)'],
      ['imageChecksum', 'u32', 'ImageChecksum (of the PE header)'],
      ['timeDateStamp', 'u32', 'TimeDateStamp (of the PE header, seconds since 1970)'],
      ['signatureLevel', 'u8?', 'SignatureLevel (v3; in v2 the byte is part of Reserved0)'],
      ['signatureType', 'u8?', 'SignatureType (v3)'],
      ['defaultBase', 'u64', 'DefaultBase (the preferred base of the PE header)', 'address'],
      ['fileName', 'str?', 'FileName (UTF-16, the kernel path as written, e.g. \\Device\\HarddiskVolume2\\Windows\\System32\\ntdll.dll); null when the payload ends at the fixed part'],
      ['pointerSize', 'u8', '4 (x86 layout) or 8 (x64 layout)'],
      ['version', 'u8', 'event version'],
      ['fileOffset', 'f64', 'file offset of the event'],
      ['valid', 'u32', 'bit mask of present columns (bit = column id)'],
    ],
  },
  {
    name: 'stackEvents',
    prefix: 'SE',
    reserve: 1,
    // stacks are asked for per event kind (xperf -stackwalk), not by a group-mask flag: they come with the events of these
    kernelFlags: [['PROFILE', 0x20000002], ['CSWITCH', 0x20000004], ['DISPATCHER', 0x20000200]],
    description:
      'one row per StackWalk event (0x1820: the frames of one half of the stack of an event) and stack-key event (0x1822-0x1824: a key and its frames; 0x1825/0x1826: an event whose kernel or user half is the stack of a key); frames in stackEventFrames; logged only for the event kinds a session asks stacks for (xperf -stackwalk, WPR profiles); resolveStacks turns them into stack ids',
    decoders: [
      {
        file: 'stackwalk',
        fn: 'stackWalkEvent',
        args: ['data', 'n', 'version', 'pointerSize', 'opcode', 'cpu', 'tsAt', 'fileOffset'],
        // §H.1: HookId = EVENT_TRACE_GROUP_STACKWALK (0x1800) | opcode
        hooks: [
          ['STACKWALK', 0x1820, 'PERFINFO_LOG_TYPE_STACKWALK'],
          ['STACKTRACE_CREATE', 0x1822, 'PERFINFO_LOG_TYPE_STACKTRACE_CREATE'],
          ['STACKTRACE_DELETE', 0x1823, 'PERFINFO_LOG_TYPE_STACKTRACE_DELETE'],
          ['STACKTRACE_RUNDOWN', 0x1824, 'PERFINFO_LOG_TYPE_STACKTRACE_RUNDOWN'],
          ['STACKTRACE_KEY_KERNEL', 0x1825, 'PERFINFO_LOG_TYPE_STACKTRACE_KEY_KERNEL'],
          ['STACKTRACE_KEY_USER', 0x1826, 'PERFINFO_LOG_TYPE_STACKTRACE_KEY_USER'],
        ],
      },
    ],
    columns: [
      ['timestamp', 'i64', 'raw session-clock ticks of the stack event itself', 'time'],
      ['cpu', 'u16', 'processor of the buffer'],
      ['opcode', 'u8', '32 Stack, 34 KeyCreate, 35 KeyDelete, 36 KeyRundown, 37 StackKeyKernel, 38 StackKeyUser (the low byte of the HookId)', 'stackEvent'],
      ['eventTimestamp', 'i64?', 'EventTimeStamp: the timestamp of the event the stack belongs to (Stack, StackKeyKernel, StackKeyUser)', 'time'],
      ['processId', 'u32?', 'StackProcess: the process of that event'],
      ['threadId', 'u32?', 'StackThread: the thread of that event'],
      ['stackKey', 'u64?', 'StackKey: the cached stack a key event names or defines (KeyCreate/KeyDelete/KeyRundown/StackKeyKernel/StackKeyUser)', 'address'],
      ['frameCount', 'u16', 'frames of the event (Stack, KeyCreate/KeyDelete/KeyRundown; 0 for StackKeyKernel/StackKeyUser): its rows of stackEventFrames are the frameCount rows after those of the rows before it'],
      ['pointerSize', 'u8', '4 (x86 layout) or 8 (x64 layout)'],
      ['version', 'u8', 'event version'],
      ['fileOffset', 'f64', 'file offset of the event'],
      ['valid', 'u32', 'bit mask of present columns (bit = column id)'],
    ],
  },
  {
    name: 'stackEventFrames',
    prefix: 'SF',
    // the most frames one event can hold: (0xFFFF - 0x10 header - 0x10 fixed part) / 4, rounded up
    reserve: 16384,
    rowsOf: 'stackEvents', // written by the stackEvents decoder (assembly/stackwalk.ts)
    kernelFlags: [['PROFILE', 0x20000002], ['CSWITCH', 0x20000004], ['DISPATCHER', 0x20000200]],
    description:
      'one row per frame of a StackWalk or key-definition event, in the order of stackEvents (the frames of its n-th row follow those of the rows before it), innermost frame first',
    columns: [
      ['timestamp', 'i64', 'timestamp of its stackEvents row (the stack event)', 'time'],
      ['depth', 'u16', 'index of the frame in its event: 0 = Stack1, the innermost frame (the instruction pointer of the event)'],
      ['address', 'u64', 'the frame address (Stack<n>; a 32-bit pointer zero-extended)', 'address'],
    ],
  },
  {
    name: 'sampleIntervals',
    prefix: 'SI',
    reserve: 1,
    kernelFlags: [['PROFILE', 0x20000002]], // logged with SampledProfile (§G.4)
    description: 'one row per sample-interval event (SampledProfileInterval): SetInterval (0x0F48), DCStart (0x0F49) and DCEnd (0x0F4A), the profile interval of a sample source',
    decoders: [
      {
        file: 'sampleinterval',
        fn: 'sampleIntervalEvent',
        args: ['data', 'n', 'version', 'opcode', 'cpu', 'tsAt', 'fileOffset'],
        // §G.4: PERFINFO_LOG_TYPE_SAMPLED_PROFILE_SET_INTERVAL / _DC_START / _DC_END
        hooks: [
          ['SAMPLED_PROFILE_SET_INTERVAL', 0x0f48, 'PERFINFO_LOG_TYPE_SAMPLED_PROFILE_SET_INTERVAL'],
          ['SAMPLED_PROFILE_DC_START', 0x0f49, 'PERFINFO_LOG_TYPE_SAMPLED_PROFILE_DC_START'],
          ['SAMPLED_PROFILE_DC_END', 0x0f4a, 'PERFINFO_LOG_TYPE_SAMPLED_PROFILE_DC_END'],
        ],
      },
    ],
    columns: [
      ['timestamp', 'i64', 'raw session-clock ticks of the event', 'time'],
      ['cpu', 'u16', 'processor of the buffer'],
      ['opcode', 'u8', '72 SetInterval, 73 DCStart (the interval when the trace starts), 74 DCEnd (when it ends) (the low byte of the HookId)', 'sampleIntervalEvent'],
      ['source', 'u32', 'Source: the KPROFILE_SOURCE (0 ProfileTime, the timer of SampledProfile)'],
      ['newInterval', 'u32', 'NewInterval: the interval, in 100 ns units (10000 = 1 ms)'],
      ['oldInterval', 'u32', 'OldInterval: the interval before, in 100 ns units'],
      ['sourceName', 'str?', 'SourceName (v3, UTF-16, e.g. Timer); null for v2'],
      ['version', 'u8', 'event version'],
      ['fileOffset', 'f64', 'file offset of the event'],
      ['valid', 'u32', 'bit mask of present columns (bit = column id)'],
    ],
  },
  {
    name: 'threads',
    prefix: 'TH',
    derived: true,
    kernelFlags: [['PROC_THREAD', 0x00000002]],
    description: 'one row per thread lifetime, from threadEvents applied in timestamp order',
    columns: [
      ['threadId', 'u32', 'thread id (0 = the idle thread)'],
      ['processId', 'u32', 'process id (first non-null value of the lifetime)'],
      ['startTime', 'i64?', 'timestamp of its Start event; null when first seen in a rundown or its End', 'time'],
      ['endTime', 'i64?', 'timestamp of its End event; null when it has none (DCEnd does not end a thread)', 'time'],
      ['name', 'str?', 'the last non-empty name (ThreadName of v4/v3 events, SetName)'],
      ['win32StartAddr', 'u64?', 'Win32StartAddr (first non-null value)', 'address'],
      ['basePriority', 'u8?', 'BasePriority (first non-null value)'],
      ['valid', 'u32', 'bit mask of present columns (bit = column id)'],
    ],
  },
  {
    name: 'processes',
    prefix: 'PR',
    derived: true,
    kernelFlags: [['PROC_THREAD', 0x00000001]],
    description: 'one row per process lifetime, from processEvents applied in timestamp order',
    columns: [
      ['processId', 'u32', 'process id (0 Idle, 4 System)'],
      ['parentId', 'u32', 'ParentId (first value of the lifetime)'],
      ['sessionId', 'u32', 'SessionId (first value of the lifetime)'],
      ['imageFileName', 'str?', 'ImageFileName'],
      ['commandLine', 'str?', 'CommandLine (null for versions without it)'],
      ['startTime', 'i64?', 'timestamp of its Start event; null when first seen in a rundown, its End or Defunct', 'time'],
      ['endTime', 'i64?', 'timestamp of its End event; null when it has none', 'time'],
      ['exitStatus', 'i32?', 'ExitStatus of its End event (rundowns carry 259, STILL_ACTIVE, and are not used)'],
      ['valid', 'u32', 'bit mask of present columns (bit = column id)'],
    ],
  },
  {
    name: 'cpuUsage',
    prefix: 'CU',
    derived: true,
    kernelFlags: [['CSWITCH', 0x20000004]],
    description:
      "one row per context switch whose new thread is known (WPA's CPU Usage (Precise)), ordered by (cpu, switchInTime); times in raw ticks",
    columns: [
      ['cpu', 'u16', 'processor of the switch'],
      ['switchInTime', 'i64', 'timestamp of the switch (the new thread starts running)', 'time'],
      ['nextSwitchOutTime', 'i64?', 'timestamp of the next cswitch row on the same cpu; null for the last', 'time'],
      ['newThreadId', 'u32', 'thread switched in'],
      ['oldThreadId', 'u32', 'thread switched out'],
      ['newProcessId', 'u32?', 'process of the new thread at switchInTime (threads lifetime with the latest startTime <= the time; tid 0 -> 0)'],
      ['oldProcessId', 'u32?', 'process of the old thread at switchInTime'],
      ['newInPri', 'i8?', "the row's newThreadPriority"],
      ['newOutPri', 'i8?', 'oldThreadPriority of the next cswitch row on the same cpu'],
      ['lastSwitchOutTime', 'i64?', 'latest switch-out of the new thread before switchInTime (any cpu; tid 0: the same cpu)', 'time'],
      ['newPrevOutPri', 'i8?', 'oldThreadPriority of that switch-out'],
      ['newPrevState', 'u8?', 'oldThreadState of that switch-out', 'threadState'],
      ['newPrevWaitReason', 'u8?', 'oldThreadWaitReason of that switch-out', 'waitReason'],
      ['readyTime', 'i64?', 'latest readythread of the new thread with lastSwitchOutTime < t <= switchInTime', 'time'],
      ['readyingThreadId', 'u32?', 'the thread running on the ready event\'s cpu at its time'],
      ['readyingProcessId', 'u32?', 'its process at the ready event\'s time'],
      ['oldOutPri', 'i8?', "the row's oldThreadPriority"],
      ['oldState', 'u8?', "the row's oldThreadState", 'threadState'],
      ['oldWaitReason', 'u8?', "the row's oldThreadWaitReason", 'waitReason'],
      ['prevCState', 'u8?', "the row's previousCState"],
      ['cpuUsage', 'i64?', 'nextSwitchOutTime - switchInTime (ticks)', 'duration'],
      ['ready', 'i64?', 'switchInTime - readyTime (ticks)', 'duration'],
      ['waits', 'i64?', 'readyTime - lastSwitchOutTime (ticks)', 'duration'],
      ['valid', 'u32', 'bit mask of present columns (bit = column id)'],
    ],
  },
  {
    name: 'threadStates',
    prefix: 'TS',
    derived: true,
    kernelFlags: [['CSWITCH', 0x20000004]],
    description:
      "one row per state interval of each thread other than the idle thread (WPA's thread states, Perfetto's thread_state), from cswitch, readythread and the thread lifetimes (rules: docs/design/streaming.md); threadStates() of a whole decode orders it by (threadId, startTime), streamed (convert's parts, dump) the rows come as their intervals end, each thread's in time order; times in raw ticks",
    columns: [
      ['threadId', 'u32', 'the thread'],
      ['processId', 'u32?', 'its process at startTime (threads lifetime with the latest startTime <= the time, as cpuUsage resolves it)'],
      ['state', 'str', 'running, ready, waiting, or unknown where the trace does not say (before its first event, after a switch-out with no state or one that was lost, after a Start); no row while the thread is not alive (before its Start, after its End or a switch-out as Terminated)'],
      ['startTime', 'i64', 'start of the interval: the event that began it (unknown before the first event: the start of the trace)', 'time'],
      ['endTime', 'i64?', 'the event that ended it; null for an interval still open at the end of the trace', 'time'],
      ['duration', 'i64?', 'endTime - startTime (ticks)', 'duration'],
      ['cpu', 'u16?', 'running: the processor; ready: the ReadyThread event\'s processor, or that of the switch-out that preempted it'],
      ['readyingThreadId', 'u32?', 'ready from a ReadyThread event: the thread running on its processor at its time (as cpuUsage\'s readyingThreadId)'],
      ['readyingProcessId', 'u32?', 'its process at that time'],
      ['waitReason', 'u8?', 'waiting: oldThreadWaitReason of the switch-out', 'waitReason'],
      ['waitMode', 'u8?', 'waiting: oldThreadWaitMode of the switch-out', 'waitMode'],
      ['oldThreadState', 'u8?', 'the oldThreadState of the switch-out that began the interval (waiting: 5; ready by preemption: 1 Ready, 3 Standby, …)', 'threadState'],
      ['priority', 'i8?', 'running: newThreadPriority of its switch-in; after a switch-out (waiting, ready by preemption): its oldThreadPriority; a ready interval whose priority is not known so: newThreadPriority of the switch-in that ends it'],
      ['valid', 'u32', 'bit mask of present columns (bit = column id)'],
    ],
  },
  {
    name: 'traces',
    prefix: 'TR',
    derived: true,
    kernelFlags: [],
    description:
      'one row per trace: where it came from, what recorded it, its clock and what was lost; the `trace` partition of a converted dataset joins every other table to it',
    columns: [
      ['sourcePath', 'str?', 'path of the .etl file as given to the decoder (absolute for `convert`; null for bytes in memory)'],
      ['fileSize', 'u64', 'bytes of the .etl file'],
      ['loggerName', 'str?', 'LoggerName of the logfile header (e.g. NT Kernel Logger)'],
      ['logFileName', 'str?', 'LogFileName of the logfile header (the path the session wrote)'],
      ['osVersion', 'str?', 'Windows major.minor of the logfile header'],
      ['build', 'u32?', 'Windows build number (ProviderVersion)'],
      ['numberOfProcessors', 'u32?', 'processors of the traced machine'],
      ['pointerSize', 'u8?', 'pointer size of the traced kernel, bytes'],
      ['clockType', 'u8?', 'ReservedFlags: 1 QPC, 2 system time, 3 CPU cycles'],
      ['ticksPerSecond', 'i64?', 'raw timestamp ticks per second (QPC: PerfFreq); null when the clock cannot be converted'],
      ['cpuSpeedInMHz', 'u32?', 'CpuSpeedInMHz of the logfile header: SpinLock cycles × 1000 / cpuSpeedInMHz = nanoseconds'],
      ['anchorTicks', 'i64?', 'raw timestamp of the logfile header event: `timeNs` columns count nanoseconds from it'],
      ['anchorFileTime', 'i64?', 'FILETIME (100 ns since 1601-01-01 UTC) at anchorTicks'],
      ['anchorUtc', 'str?', 'anchorFileTime as ISO 8601 UTC with 100 ns digits: absolute time = anchorUtc + timeNs'],
      ['endFileTime', 'i64?', 'EndTime of the logfile header (FILETIME; 0 when the session did not record it)'],
      ['eventsLost', 'u32', 'EventsLost of the logfile header'],
      ['buffersLost', 'u32', 'BuffersLost of the logfile header'],
      ['buffers', 'u32', 'buffers framed in the file'],
      ['buffersCorrupt', 'u32', 'buffers skipped as corrupt (see `etw-decode summary`)'],
      ['events', 'u64', 'events walked, every kind'],
      ['dataLoss', 'str?', 'what was not decoded, as `etw-decode summary` says it (null when nothing was lost)'],
      ['decoder', 'str', 'etw-decode version that wrote the row'],
      ['valid', 'u32', 'bit mask of present columns (bit = column id)'],
    ],
  },
  {
    name: 'images',
    prefix: 'IM',
    derived: true,
    kernelFlags: [['LOADER', 0x00000004]],
    description:
      'one row per image lifetime in a process (the kernel\'s images in process 0), from imageEvents applied in timestamp order with the rules of `threads`: a Load opens one, an Unload ends it, DCStart and DCEnd add to the open one of their (processId, imageBase)',
    columns: [
      ['processId', 'u32', 'process id (0 for kernel-mode images: drivers and the kernel)'],
      ['imageBase', 'u64', 'ImageBase (with processId, the key of a lifetime)', 'address'],
      ['imageSize', 'u64', 'ImageSize (bytes; first value of the lifetime)'],
      ['imageChecksum', 'u32', 'ImageChecksum (first value of the lifetime)'],
      ['timeDateStamp', 'u32', 'TimeDateStamp (first value of the lifetime)'],
      ['defaultBase', 'u64', 'DefaultBase (first value of the lifetime)', 'address'],
      ['fileName', 'str?', 'FileName, the kernel path as written (first non-null value), e.g. \\Device\\HarddiskVolume2\\Windows\\System32\\ntdll.dll'],
      ['name', 'str?', 'the file name without its folders (ntdll.dll); null when fileName is null or ends with a separator'],
      ['loadTime', 'i64?', 'timestamp of its Load event; null when first seen in a rundown or its Unload (loaded before the trace)', 'time'],
      ['unloadTime', 'i64?', 'timestamp of its Unload event; null when it has none (DCEnd does not unload an image)', 'time'],
      ['valid', 'u32', 'bit mask of present columns (bit = column id)'],
    ],
  },
  {
    name: 'stacks',
    prefix: 'ST',
    derived: true,
    kernelFlags: [['PROFILE', 0x20000002], ['CSWITCH', 0x20000004], ['DISPATCHER', 0x20000200]],
    description:
      'one row per distinct stack (resolveStacks: the kernel and user halves of an event joined, stack keys resolved), by stackId; the stackId of cswitch, readythread and samples rows; its frames in stackFrames (a whole trace: docs/design/stacks.md)',
    columns: [
      ['stackId', 'u32', 'the stack: 0, 1, … in the order of first use'],
      ['processId', 'u32?', 'the process of its user frames (user addresses mean something only there); null for a kernel-only stack, shared by every process'],
      ['frameCount', 'u32', 'its frames (rows of stackFrames)'],
      ['kernelFrameCount', 'u32', 'how many of its first frames are kernel frames (the rest are user frames)'],
      ['valid', 'u32', 'bit mask of present columns (bit = column id)'],
    ],
  },
  {
    name: 'stackFrames',
    prefix: 'SK',
    derived: true,
    kernelFlags: [['PROFILE', 0x20000002], ['CSWITCH', 0x20000004], ['DISPATCHER', 0x20000200]],
    description:
      'one row per frame of each distinct stack, innermost first, ordered by (stackId, depth); the address named through the image lifetimes (images) of its process, at the time of the first event of the stack',
    columns: [
      ['stackId', 'u32', 'its stacks row'],
      ['depth', 'u16', 'index of the frame in its stack: 0 the innermost (kernel frames first, then the user frames)'],
      ['address', 'u64', 'the frame address', 'address'],
      ['imageName', 'str?', 'name of the image holding the address (the `name` of its images row, e.g. ntdll.dll): kernel-space addresses among the images of process 0 first, then those of the stack\'s process; null outside any image'],
      ['imageOffset', 'u64?', 'address - imageBase of that image (module!offset); null outside any image', 'address'],
      ['valid', 'u32', 'bit mask of present columns (bit = column id)'],
    ],
  },
];
