// ETL writer: synthesizes valid NT-Kernel-Logger trace files (docs/format.md parts A–G) from a description.
// Used to test the decoders by round trips and to generate benchmark traces. Browser-safe: no node imports.
//
// Decisions where the spec is uncertain:
// * Compact batches (D.6): the 0x400-byte limit includes the 0x58-byte PERFINFO_CCSWAP_BUFFER (packet
//   area <= 0x3A8). A batch that has fewer than 8 free packet bytes after a switch is logged at once,
//   timestamped with that switch. TidTable-full, delta >= 2^30 and "more than 500 ticks since
//   FirstTimeStamp" are checked when the next switch arrives, before it is packed: the batch is logged
//   with that switch's timestamp, and the switch opens the next batch (first delta 0). At the end of the
//   trace open batches are logged at the latest timestamp seen on their processor. A tick is
//   TimerResolution × 100 ns converted to session clock units (QPC: ·PerfFreq/10^7).
// * EVENT_HEADER extended items: the u16 item size holds the 8-aligned size (8 + DataSize rounded up), as
//   in real files (airbus-lxcore_kernel.etl); padding bytes are zero.
// * Buffer order (A.7): with outOfOrder, flush indices i, i+1 (i % 4 == 1) trade places, never moving the
//   last buffer, which carries FLUSH_MARKER. CurrentOffset = filled + bufferSize on every data buffer.
// * Part F events (sched-events.ts): the payload layout follows the event version and the pointer size of
//   the chosen header (…32 → 4, …64 → 8). Default headers as in Win10 files (F.1): Thread events SYSTEM,
//   Process start/end SYSTEM and dcStart/dcEnd/defunct PERFINFO, SetName and ReadyThread PERFINFO (the
//   ReadyThread header of real files is unknown). Default versions: Thread 3, Process 4, SetName 2,
//   ReadyThread 2 (MOF class ReadyThread : Thread_V2). SYSTEM header ids default to the payload ids XOR 4,
//   never the payload's own. Fields a version lacks are ignored; the v4 ThreadName is always written.
// * Part G events (sched-events.ts): SampledProfile PERFINFO, version 2; Image load/unload SYSTEM and
//   dcStart/dcEnd PERFINFO (as in real files, G.2), version 3.
// * Part H events (sched-events.ts): StackWalk and stack-key events PERFINFO, version 2 (H.1).
// * simulateSchedule (schedule.ts): distinct timestamps for all events; one switch encoding per CPU; see its
//   header comment for the rest.
export type {
  CompactPacketInfo,
  CompactPacketKind,
  CompactSwitchSpec,
  CSwitchSpec,
  EventSpec,
  HeaderKind,
  IdentityEventBase,
  IdentityHeaderKind,
  ImageOpcode,
  ImageSpec,
  PerfInfoKind,
  ProcessOpcode,
  ProcessSpec,
  RawEventSpec,
  ReadyThreadSpec,
  SampledProfileSpec,
  SampleIntervalOpcode,
  SampleIntervalSpec,
  SetThreadNameSpec,
  SpinLockSpec,
  StackWalkOpcode,
  StackWalkSpec,
  ThreadOpcode,
  ThreadSpec,
  TraceDescription,
  TraceOptions,
  WrittenBuffer,
  WrittenTrace,
} from './types.js';
export { Rng } from './random.js';
export * as schedLayout from './sched-layout.js';
export { IMAGE_HOOK_IDS, SAMPLE_INTERVAL_HOOK_IDS, PROCESS_HOOK_IDS, THREAD_HOOK_IDS, sidToBytes, DEFAULT_USER_SID } from './sched-events.js';
export { guidToBytes, bytesToGuid, HEADER_KINDS, HEADER_SIZE, HEADER_TYPE } from './events.js';
export {
  CCS_MAX_PACKET_BYTES,
  CCS_KIND_NAMES,
  compactTickLimit,
  stateWr,
} from './compact.js';
export type { BatchFlushReason } from './compact.js';
export { normalizeOptions, timestampToFiletime, DEFAULT_GROUP_MASK1 } from './logfile.js';
export type { NormalizedOptions } from './logfile.js';
export { writeTrace, TraceWriter, HEADER_EVENTS } from './writer.js';
export type { TraceWriterOptions, FlushReasonCounts } from './writer.js';
export {
  randomNoiseEvents,
  generateMixedTrace,
  generateTraceChunks,
  NOISE_HOOK_IDS,
} from './generate.js';
export type { MixedTraceOptions } from './generate.js';
export { generateRealisticTrace, generateRealisticTraceChunks } from './realistic.js';
export type { RealisticTraceOptions } from './realistic.js';
export { simulateSchedule } from './schedule.js';
export type {
  IdentityEventGroup,
  ProcessTruth,
  ReadyTruth,
  ScheduleOptions,
  SimulatedSchedule,
  SwitchEncoding,
  SwitchMode,
  SwitchTruth,
  ThreadTruth,
} from './schedule.js';
export { generateSampleTrace, SAMPLE_OPTIONS } from './sample.js';
export type { SampleTrace } from './sample.js';
