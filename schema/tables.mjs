// The table registry: every decoded table, its columns (id = position), types and meaning, declared
// once. `npm run gen` (scripts/gen.mjs) turns it into
//   - assembly/generated/registry.ts: TABLE_* ids, <PREFIX>_<COLUMN> column ids, column counts, widths,
//     always-valid masks and row reserves for the WebAssembly engine, and
//   - src/generated/registry.ts: the same constants for TypeScript plus `TABLES`, an `as const` schema
//     from which the row types, the CLI's --table choices and every output format are derived.
//
// Column type: i64 u64 f64 u32 i32 u16 u8 i8; a trailing '?' marks a nullable column. A table with
// nullable columns ends with `valid` (u32): bit c set = column c is present. `kernelFlags` names the
// kernel flag(s) that record the table's events (the CLI names them when a table comes out empty).
// Adding a decoded table means: an entry here, one assembly/ decoder file, its src/reference/ twin, its dispatch line in
// walk.ts (both twins), tests and docs.

/** @typedef {[name: string, type: string, description: string, enumName?: string]} Column
 *  enumName: the column holds values of a named enumeration (src/enums.ts ENUMS); outputs can add a
 *  `<column>Name` text column for it. */
/**
 * @typedef {object} TableDecl
 * @property {string} name      table name (public, lower camelCase)
 * @property {string} prefix    prefix of the generated column constants
 * @property {number} reserve   rows that must be free before one event is walked (worst case of one event)
 * @property {string} description
 * @property {[name: string, groupMask: number][]} kernelFlags
 *   the kernel flags that record this table's events: the xperf/WPR name (shown when a trace has no rows
 *   for the table) and its PERF_* group-mask constant (top 3 bits = index into the header extension's
 *   Masks[], low 29 bits = the bits; docs/format.md §A.9), by which a trace shows whether it was on.
 *   Any one listed flag records them.
 * @property {Column[]} columns
 */

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
    columns: [
      ['timestamp', 'i64', 'raw session-clock ticks of the switch (compact: FirstTimeStamp + running sum of TimeDelta)'],
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
      ['valid', 'u32', 'bit mask of present columns (bit = column id)'],
    ],
  },
  {
    name: 'spinlock',
    prefix: 'SL',
    reserve: 1,
    description: 'one row per released spin lock: SpinLock events (0x0529), 32- and 64-bit layouts',
    kernelFlags: [['SPINLOCK', 0x20010000]], // PERF_SPINLOCK
    columns: [
      ['timestamp', 'i64', 'raw session-clock ticks of the event'],
      ['cpu', 'u16', 'processor of the buffer'],
      ['spinLockAddress', 'u64', 'SpinLockAddress'],
      ['callerAddress', 'u64', 'CallerAddress'],
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
];
