// Names, severities and descriptions of the diagnostic counters (ids in assembly/layout.ts, D_*).
// Modelled on Perfetto's stats table: corruption never aborts a decode, it increments a named counter.
import * as L from './generated/layout.js';
import type { IssueLogEntry } from './engine.js';
import { hex } from './errors.js';

export type Severity = 'info' | 'dataLoss' | 'error';
export interface CounterSpec {
  readonly id: number;
  readonly name: string;
  readonly severity: Severity;
  readonly description: string;
}

const c = (id: number, name: string, severity: Severity, description: string): CounterSpec => ({ id, name, severity, description });

export const COUNTERS: readonly CounterSpec[] = [
  c(L.D_BUFFERS, 'buffersWalked', 'info', 'buffers whose header was valid and whose events were walked'),
  c(L.D_BUFFERS_CORRUPT, 'buffersCorrupt', 'dataLoss', 'buffers skipped because their header or data extent is invalid'),
  c(L.D_BUFFERS_COMPRESSED, 'buffersCompressed', 'info', 'buffers stored compressed (BufferFlag 0x40)'),
  c(L.D_BUFFERS_COMPRESSED_UNDECODED, 'buffersCompressedUndecoded', 'dataLoss', 'compressed buffers that did not decompress to SavedOffset - 0x48 bytes'),
  c(L.D_BUFFERS_NOT_WALKED, 'buffersNotWalked', 'info', 'buffers of type EMPTY_MARKER, DBG_INFO or unknown: counted, not walked'),
  c(L.D_BUFFERS_EVENTS_LOST_FLAG, 'buffersWithEventsLostFlag', 'dataLoss', 'buffers flagged EVENTS_LOST by the kernel'),
  c(L.D_BUFFERS_BUFFER_LOST_FLAG, 'buffersWithBufferLostFlag', 'dataLoss', 'buffers flagged BUFFER_LOST by the kernel'),
  c(L.D_BUFFERS_TRUNCATED_WALK, 'buffersTruncatedWalk', 'dataLoss', 'buffers whose event walk stopped at an invalid event'),
  c(L.D_BYTES_ABANDONED, 'bytesAbandoned', 'dataLoss', 'bytes of those buffers after the invalid event'),
  c(L.D_EVENTS, 'events', 'info', 'events walked, every header kind'),
  c(L.D_EVENTS_BAD_MARKER, 'eventsBadMarker', 'dataLoss', 'event marker is not a known trace header'),
  c(L.D_EVENTS_BAD_SIZE, 'eventsBadSize', 'dataLoss', 'event Size is below its header size or past the data end'),
  c(L.D_CSWITCH_DECODED, 'cswitchDecoded', 'info', 'CSwitch (0x0524) events decoded'),
  c(L.D_CSWITCH_SKIPPED_VERSION, 'cswitchSkippedVersion', 'dataLoss', 'CSwitch events of an unknown version (not 1-4)'),
  c(L.D_CSWITCH_SKIPPED_SHORT, 'cswitchSkippedShort', 'dataLoss', 'CSwitch events shorter than 0x10 bytes of payload'),
  c(L.D_SPINLOCK_DECODED, 'spinlockDecoded', 'info', 'SpinLock (0x0529) events decoded'),
  c(L.D_SPINLOCK_SKIPPED_VERSION, 'spinlockSkippedVersion', 'dataLoss', 'SpinLock events of an unknown version (not 2)'),
  c(L.D_SPINLOCK_SKIPPED_SHORT, 'spinlockSkippedShort', 'dataLoss', 'SpinLock events shorter than their layout (0x30 / 0x38)'),
  c(L.D_COMPCS_BATCHES, 'compactBatches', 'info', 'compact context-switch batches (0x0525) expanded'),
  c(L.D_COMPCS_SKIPPED_VERSION, 'compactSkippedVersion', 'dataLoss', 'batches of an unknown version (not 2)'),
  c(L.D_COMPCS_SKIPPED_SHORT, 'compactSkippedShort', 'dataLoss', 'batches shorter than PERFINFO_CCSWAP_BUFFER (0x58 bytes)'),
  c(L.D_COMPCS_PACKETS_IDLE_SHORT, 'compactPacketsIdleShort', 'info', 'IDLE_SHORT packets (2 bytes)'),
  c(L.D_COMPCS_PACKETS_IDLE, 'compactPacketsIdle', 'info', 'IDLE packets (4 bytes)'),
  c(L.D_COMPCS_PACKETS_LITE, 'compactPacketsLite', 'info', 'LITE packets (4 bytes)'),
  c(L.D_COMPCS_PACKETS_FULL, 'compactPacketsFull', 'info', 'FULL packets (8 bytes)'),
  c(L.D_COMPCS_OVERSIZE, 'compactOversize', 'error', 'batches larger than the kernel limit of 0x400 bytes (decoded anyway)'),
  c(L.D_COMPCS_TRUNCATED_PACKET, 'compactTruncatedPacket', 'dataLoss', 'a packet runs past the end of its batch event'),
  c(L.D_COMPCS_BAD_TID_INDEX, 'compactBadTidIndex', 'error', 'a packet names a TidTable slot past the next free one, or a zero slot'),
  c(L.D_COMPCS_TIME_MISMATCH, 'compactTimeMismatch', 'error', 'switch times run past the batch event time, or a batch starts before the previous switch on its CPU'),
  c(L.D_COMPCS_STATE_OUT_OF_RANGE, 'compactStateOutOfRange', 'error', 'a biased OldThreadStateWr decodes to state 5 or >= 10: the MaximumWaitReason bias is probably wrong'),
  c(L.D_COMPCS_NEW_THREAD_UNKNOWN, 'compactNewThreadUnknown', 'info', 'last compact switch of a processor: its new thread is not recorded (newThreadId null)'),
  c(L.D_PROCESSOR_OUT_OF_RANGE, 'processorOutOfRange', 'error', 'buffers whose processor is >= NumberOfProcessors of the logfile header'),
  c(L.D_LOGFILE_HEADERS, 'logfileHeaders', 'info', 'WMI_LOG_TYPE_HEADER events seen (the first one describes the trace)'),
  c(L.D_KIND_TABLE_FULL, 'kindTableFull', 'info', 'events not tallied by kind because more than 3072 distinct kinds were seen'),
  c(L.D_RESYNC_BYTES, 'resyncBytes', 'dataLoss', 'bytes skipped while looking for the next valid buffer header after a corrupt one'),
  c(L.D_TRUNCATED_TAIL_BYTES, 'truncatedTailBytes', 'dataLoss', 'bytes at the end of the input too short to hold a buffer header'),
];

if (COUNTERS.length !== L.D_COUNTER_COUNT || COUNTERS.some((s, i) => s.id !== i)) {
  throw new Error('diagnostics: COUNTERS does not match the D_* ids of assembly/layout.ts');
}

export type DiagnosticCounters = Record<string, number>;

export interface Issue {
  counter: string;
  severity: Severity;
  fileOffset: number;
  /** fileOffset as hex text */
  at: string;
  detail: number;
  message: string;
}

const REASONS: Record<number, Record<number, string>> = {
  [L.D_BUFFERS_CORRUPT]: {
    1: 'fewer than 0x48 bytes for the buffer header',
    2: 'BufferSize below 0x48 or beyond the buffer',
    3: 'no valid data end: Offset (0x30) and SavedOffset (0x04) are both out of range',
    4: 'BufferSize below 0x48: cannot find the next buffer',
    5: 'BufferSize above the 64 MiB limit',
    6: 'BufferSize runs past the end of the input (truncated file?)',
  },
  [L.D_BUFFERS_TRUNCATED_WALK]: {
    [L.D_EVENTS_BAD_MARKER]: 'event marker is not a trace header',
    [L.D_EVENTS_BAD_SIZE]: 'event Size is invalid',
  },
  [L.D_COMPCS_TIME_MISMATCH]: {
    1: 'FirstTimeStamp + deltas is later than the batch event timestamp',
    2: 'the first switch of the batch precedes the previous switch on this processor',
  },
};

export function describeIssue(e: IssueLogEntry): Issue {
  const spec = COUNTERS[e.code]!;
  const reason = REASONS[e.code]?.[e.detail];
  return {
    counter: spec.name,
    severity: spec.severity,
    fileOffset: e.fileOffset,
    at: hex(e.fileOffset),
    detail: e.detail,
    message: reason ?? `${spec.description} (detail ${e.detail})`,
  };
}

export function namedCounters(values: readonly number[]): DiagnosticCounters {
  const out: DiagnosticCounters = {};
  for (const s of COUNTERS) out[s.name] = values[s.id] ?? 0;
  return out;
}
