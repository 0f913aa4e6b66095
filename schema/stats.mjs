// The stats table: every diagnostic counter, declared once, in the style of Perfetto's stats table
// (src/trace_processor/storage/stats.h): a constant, a public name, a severity and a description, plus
// what the detail value of its issue-log entries means. Decoding never aborts on bad input; it counts.
// `npm run gen` (scripts/gen.mjs) turns this into the D_* / detail constants of both engines
// (assembly/generated/registry.ts, src/generated/registry.ts), the `COUNTERS` list of the library and
// docs/stats.md.
//
// severity: 'info' (what was seen), 'dataLoss' (events or bytes that were not decoded), 'error' (decoded,
// but the data contradicts the format or the chosen bias).
// details: [CONSTANT, value, text] — value is a number or the constant of another counter (its id);
// detail: what a detail value not listed in `details` means.

/**
 * @typedef {object} StatDecl
 * @property {string} id          constant (D_…)
 * @property {string} name        public name in summary.diagnostics
 * @property {'info'|'dataLoss'|'error'} severity
 * @property {string} description
 * @property {string} [detail]    meaning of the detail value of its issues
 * @property {[string, number|string, string][]} [details]
 */

/** @type {StatDecl[]} */
export const STATS = [
  { id: 'D_BUFFERS', name: 'buffersWalked', severity: 'info', description: 'buffers whose header was valid and whose events were walked' },
  {
    id: 'D_BUFFERS_CORRUPT',
    name: 'buffersCorrupt',
    severity: 'dataLoss',
    description: 'buffers skipped because their header or data extent is invalid',
    details: [
      ['CORRUPT_HEADER_SHORT', 1, 'fewer than 0x48 bytes for the buffer header'],
      ['CORRUPT_BUFFER_SIZE', 2, 'BufferSize below 0x48'],
      ['CORRUPT_DATA_END', 3, 'no valid data end: Offset (0x30) and SavedOffset (0x04) are both out of range'],
      ['CORRUPT_FRAME_SIZE_SMALL', 4, 'BufferSize below 0x48: cannot find the next buffer'],
      ['CORRUPT_FRAME_SIZE_LARGE', 5, 'BufferSize above the 64 MiB limit'],
      ['CORRUPT_FRAME_PAST_END', 6, 'BufferSize runs past the end of the input, and the header is not that of a buffer the input was cut in (see buffersTruncated)'],
      ['CORRUPT_COMPRESSED_EXTENT', 7, 'compressed buffer whose SavedOffset is below 0x48 or above the 64 MiB limit'],
      [
        'CORRUPT_COMPRESSED_TOO_LARGE',
        8,
        "compressed buffer whose SavedOffset (its decompressed size) exceeds the logger's BufferSize from the logfile header (16 MiB, the largest ETW buffer, without one): not decompressed",
      ],
      [
        'CORRUPT_FRAME_CLAIM',
        9,
        'BufferSize above the usual size of its kind, in a header that is not plausible (BufferFlag, BufferType or data extent invalid): not trusted (docs/format.md §A.1)',
      ],
    ],
  },
  {
    id: 'D_BUFFERS_SIZE_CORRECTED',
    name: 'buffersSizeCorrected',
    severity: 'error',
    description:
      'buffers whose BufferSize runs over the header of a following buffer (a plausible header, found after the data of the buffer, whose own buffer ends at another header or at the end of the input): framed up to that header and decoded, and the buffers the claim covered framed too',
    detail: 'the BufferSize claimed',
  },
  {
    id: 'D_BUFFERS_TRUNCATED',
    name: 'buffersTruncated',
    severity: 'dataLoss',
    description: 'buffers cut short by the end of the input (a truncated file): the events that fit were decoded (a compressed one cannot be)',
    detail: 'bytes of the buffer missing',
  },
  { id: 'D_BUFFERS_COMPRESSED', name: 'buffersCompressed', severity: 'info', description: 'buffers stored compressed (BufferFlag 0x40)' },
  {
    id: 'D_BUFFERS_COMPRESSED_UNDECODED',
    name: 'buffersCompressedUndecoded',
    severity: 'dataLoss',
    description: 'compressed buffers that did not decompress to SavedOffset - 0x48 bytes',
    detail: 'bytes the decompressor produced',
    details: [
      ['XPRESS_E_INPUT_TRUNCATED', -1, 'XPRESS input ended before the output was complete'],
      ['XPRESS_E_BAD_OFFSET', -2, 'XPRESS match offset points before the start of the output'],
      ['XPRESS_E_OUTPUT_OVERFLOW', -3, 'XPRESS match runs past the expected output size'],
      ['XPRESS_E_BAD_LENGTH', -4, 'XPRESS explicit match length below 22 (forbidden by MS-XCA)'],
      ['XPRESS_E_BAD_ARGS', -5, 'XPRESS decompressor called with a negative length'],
      ['UNDECODED_NO_MEMORY', -100, 'no memory for the decompressed buffer'],
    ],
  },
  {
    id: 'D_BUFFERS_COMPRESSED_REFUSED',
    name: 'buffersCompressedRefused',
    severity: 'dataLoss',
    description:
      'compressed buffers not decompressed because SavedOffset - 0x48 is more than 77 times their compressed bytes (BufferSize - 0x48), the most that MS-XCA matches of lengths up to 279 give (docs/format.md §A.6)',
    detail: 'decompressed bytes claimed (SavedOffset - 0x48)',
  },
  {
    id: 'D_COMPRESSED_TRAILING_DATA',
    name: 'compressedTrailingData',
    severity: 'dataLoss',
    description:
      'compressed buffers whose BufferSize runs more than a final 4-byte flag word past the end of their XPRESS stream: the bytes after the stream (which may hold other buffers) are not decoded',
    detail: 'bytes after the stream',
  },
  { id: 'D_BUFFERS_NOT_WALKED', name: 'buffersNotWalked', severity: 'info', description: 'buffers of type EMPTY_MARKER, DBG_INFO or unknown: counted, not walked' },
  { id: 'D_BUFFERS_EVENTS_LOST_FLAG', name: 'buffersWithEventsLostFlag', severity: 'dataLoss', description: 'buffers flagged EVENTS_LOST by the kernel' },
  { id: 'D_BUFFERS_BUFFER_LOST_FLAG', name: 'buffersWithBufferLostFlag', severity: 'dataLoss', description: 'buffers flagged BUFFER_LOST by the kernel' },
  {
    id: 'D_BUFFERS_TRUNCATED_WALK',
    name: 'buffersTruncatedWalk',
    severity: 'dataLoss',
    description: 'buffers whose event walk stopped at an invalid event',
    details: [
      ['WALK_BAD_MARKER', 'D_EVENTS_BAD_MARKER', 'event marker is not a trace header'],
      ['WALK_BAD_SIZE', 'D_EVENTS_BAD_SIZE', 'event Size is invalid'],
    ],
  },
  { id: 'D_BYTES_ABANDONED', name: 'bytesAbandoned', severity: 'dataLoss', description: 'bytes of those buffers after the invalid event' },
  { id: 'D_EVENTS', name: 'events', severity: 'info', description: 'events walked, every header kind' },
  { id: 'D_EVENTS_BAD_MARKER', name: 'eventsBadMarker', severity: 'dataLoss', description: 'event marker is not a known trace header' },
  { id: 'D_EVENTS_BAD_SIZE', name: 'eventsBadSize', severity: 'dataLoss', description: 'event Size is below its header size or past the data end' },
  { id: 'D_CSWITCH_DECODED', name: 'cswitchDecoded', severity: 'info', description: 'CSwitch (0x0524) events decoded' },
  { id: 'D_CSWITCH_SKIPPED_VERSION', name: 'cswitchSkippedVersion', severity: 'dataLoss', description: 'CSwitch events of an unknown version (not 1-4)' },
  { id: 'D_CSWITCH_SKIPPED_SHORT', name: 'cswitchSkippedShort', severity: 'dataLoss', description: 'CSwitch events shorter than 0x10 bytes of payload', detail: 'payload bytes' },
  { id: 'D_SPINLOCK_DECODED', name: 'spinlockDecoded', severity: 'info', description: 'SpinLock (0x0529) events decoded' },
  { id: 'D_SPINLOCK_SKIPPED_VERSION', name: 'spinlockSkippedVersion', severity: 'dataLoss', description: 'SpinLock events of an unknown version (not 2)' },
  { id: 'D_SPINLOCK_SKIPPED_SHORT', name: 'spinlockSkippedShort', severity: 'dataLoss', description: 'SpinLock events shorter than their layout (0x30 / 0x38)', detail: 'payload bytes' },
  { id: 'D_COMPCS_BATCHES', name: 'compactBatches', severity: 'info', description: 'compact context-switch batches (0x0525) expanded' },
  { id: 'D_COMPCS_SKIPPED_VERSION', name: 'compactSkippedVersion', severity: 'dataLoss', description: 'batches of an unknown version (not 2)' },
  { id: 'D_COMPCS_SKIPPED_SHORT', name: 'compactSkippedShort', severity: 'dataLoss', description: 'batches shorter than PERFINFO_CCSWAP_BUFFER (0x58 bytes)', detail: 'payload bytes' },
  { id: 'D_COMPCS_PACKETS_IDLE_SHORT', name: 'compactPacketsIdleShort', severity: 'info', description: 'IDLE_SHORT packets (2 bytes)' },
  { id: 'D_COMPCS_PACKETS_IDLE', name: 'compactPacketsIdle', severity: 'info', description: 'IDLE packets (4 bytes)' },
  { id: 'D_COMPCS_PACKETS_LITE', name: 'compactPacketsLite', severity: 'info', description: 'LITE packets (4 bytes)' },
  { id: 'D_COMPCS_PACKETS_FULL', name: 'compactPacketsFull', severity: 'info', description: 'FULL packets (8 bytes)' },
  { id: 'D_COMPCS_OVERSIZE', name: 'compactOversize', severity: 'error', description: 'batches larger than the kernel limit of 0x400 bytes (decoded anyway)', detail: 'payload bytes' },
  { id: 'D_COMPCS_TRUNCATED_PACKET', name: 'compactTruncatedPacket', severity: 'dataLoss', description: 'a packet runs past the end of its batch event', detail: 'offset of the packet in the payload' },
  { id: 'D_COMPCS_BAD_TID_INDEX', name: 'compactBadTidIndex', severity: 'error', description: 'a packet names a TidTable slot past the next free one, or a zero slot', detail: 'TidTable index' },
  {
    id: 'D_COMPCS_TIME_MISMATCH',
    name: 'compactTimeMismatch',
    severity: 'error',
    description: 'switch times run past the batch event time, or a batch starts before the previous switch on its CPU',
    details: [
      ['TIME_AFTER_EVENT', 1, 'FirstTimeStamp + deltas is later than the batch event timestamp'],
      ['TIME_BEFORE_PREVIOUS', 2, 'the first switch of the batch precedes the previous switch on this processor'],
    ],
  },
  {
    id: 'D_COMPCS_TIME_OVERFLOW',
    name: 'compactTimeOverflow',
    severity: 'dataLoss',
    description:
      'compact switches dropped because FirstTimeStamp + the deltas so far runs past the largest 64-bit time (a corrupt FirstTimeStamp): not wrapped to negative times, not counted as packets of their kind (the switch before keeps its new thread)',
    detail: 'offset of the first such packet of the batch in the payload',
  },
  {
    id: 'D_COMPCS_STATE_OUT_OF_RANGE',
    name: 'compactStateOutOfRange',
    severity: 'error',
    description: 'a biased OldThreadStateWr decodes to state 5 or >= 10: the MaximumWaitReason bias is probably wrong',
    detail: 'OldThreadStateWr',
  },
  { id: 'D_COMPCS_NEW_THREAD_UNKNOWN', name: 'compactNewThreadUnknown', severity: 'info', description: 'last compact switch of a processor: its new thread is not recorded (newThreadId null)' },
  { id: 'D_READYTHREAD_DECODED', name: 'readyThreadDecoded', severity: 'info', description: 'ReadyThread (0x0532) events decoded' },
  { id: 'D_READYTHREAD_SKIPPED_SHORT', name: 'readyThreadSkippedShort', severity: 'dataLoss', description: 'ReadyThread events shorter than 8 bytes of payload', detail: 'payload bytes' },
  { id: 'D_THREAD_DECODED', name: 'threadEventsDecoded', severity: 'info', description: 'Thread Start/End/DCStart/DCEnd (0x0501-0x0504) and SetName (0x0548) events decoded' },
  { id: 'D_THREAD_SKIPPED_VERSION', name: 'threadEventsSkippedVersion', severity: 'dataLoss', description: 'Thread events of an unknown version (not 2-4)' },
  { id: 'D_THREAD_SKIPPED_SHORT', name: 'threadEventsSkippedShort', severity: 'dataLoss', description: 'Thread events shorter than their version\'s fixed layout (SetName: 8 bytes)', detail: 'payload bytes' },
  { id: 'D_PROCESS_DECODED', name: 'processEventsDecoded', severity: 'info', description: 'Process Start/End/DCStart/DCEnd/Defunct (0x0301-0x0304, 0x0327) events decoded' },
  { id: 'D_PROCESS_SKIPPED_VERSION', name: 'processEventsSkippedVersion', severity: 'dataLoss', description: 'Process events of an unknown version (not 2-5)' },
  {
    id: 'D_PROCESS_SKIPPED_SHORT',
    name: 'processEventsSkippedShort',
    severity: 'dataLoss',
    description: 'Process events whose fixed part, UserSID or ImageFileName runs past the payload',
    detail: 'payload bytes',
  },
  { id: 'D_SAMPLE_DECODED', name: 'samplesDecoded', severity: 'info', description: 'SampledProfile (0x0F2E) events decoded' },
  { id: 'D_SAMPLE_SKIPPED_VERSION', name: 'samplesSkippedVersion', severity: 'dataLoss', description: 'SampledProfile events of an unknown version (not 2)' },
  {
    id: 'D_SAMPLE_SKIPPED_SHORT',
    name: 'samplesSkippedShort',
    severity: 'dataLoss',
    description: 'SampledProfile events shorter than their layout (0x0C bytes x86, 0x10 x64)',
    detail: 'payload bytes',
  },
  { id: 'D_IMAGE_DECODED', name: 'imageEventsDecoded', severity: 'info', description: 'Image Load/Unload/DCStart/DCEnd (0x030A, 0x1402-0x1404) events decoded' },
  { id: 'D_IMAGE_SKIPPED_VERSION', name: 'imageEventsSkippedVersion', severity: 'dataLoss', description: 'Image events of an unknown version (not 2 or 3)' },
  {
    id: 'D_IMAGE_SKIPPED_SHORT',
    name: 'imageEventsSkippedShort',
    severity: 'dataLoss',
    description: 'Image events shorter than their fixed part (0x2C bytes x86, 0x38 x64)',
    detail: 'payload bytes',
  },
  {
    id: 'D_STRING_UNTERMINATED',
    name: 'stringUnterminated',
    severity: 'error',
    description: 'a NUL-terminated string of a Thread, Process or Image event runs to the end of its payload (taken as it is; later strings of the event are null)',
    detail: 'offset of the string in the payload',
  },
  { id: 'D_PROCESSOR_OUT_OF_RANGE', name: 'processorOutOfRange', severity: 'error', description: 'buffers whose processor is >= NumberOfProcessors of the logfile header', detail: 'processor' },
  { id: 'D_LOGFILE_HEADERS', name: 'logfileHeaders', severity: 'info', description: 'WMI_LOG_TYPE_HEADER events seen (the first one describes the trace)' },
  { id: 'D_KIND_TABLE_FULL', name: 'kindTableFull', severity: 'info', description: 'events not tallied by kind because more than 3072 distinct kinds were seen' },
  { id: 'D_RESYNC_BYTES', name: 'resyncBytes', severity: 'dataLoss', description: 'bytes skipped while looking for the next valid buffer header after a corrupt one' },
  {
    id: 'D_TRUNCATED_TAIL_BYTES',
    name: 'truncatedTailBytes',
    severity: 'dataLoss',
    description: 'bytes at the end of the input that are not a whole buffer: a buffer cut short by the end of the input (see buffersTruncated), or fewer than 0x48 bytes',
  },
  { id: 'D_STACK_DECODED', name: 'stackEventsDecoded', severity: 'info', description: 'StackWalk (0x1820) and stack-key (0x1822-0x1826) events decoded' },
  { id: 'D_STACK_SKIPPED_VERSION', name: 'stackEventsSkippedVersion', severity: 'dataLoss', description: 'StackWalk and stack-key events of an unknown version (not 2)' },
  {
    id: 'D_STACK_SKIPPED_SHORT',
    name: 'stackEventsSkippedShort',
    severity: 'dataLoss',
    description: 'StackWalk and stack-key events shorter than their fixed part (StackWalk 0x10 bytes; key definitions P; key references 0x10 + P)',
    detail: 'payload bytes',
  },
  { id: 'D_SAMPLE_INTERVAL_DECODED', name: 'sampleIntervalsDecoded', severity: 'info', description: 'SampledProfileInterval SetInterval/DCStart/DCEnd (0x0F48-0x0F4A) events decoded' },
  { id: 'D_SAMPLE_INTERVAL_SKIPPED_VERSION', name: 'sampleIntervalsSkippedVersion', severity: 'dataLoss', description: 'SampledProfileInterval events of an unknown version (not 2 or 3)' },
  {
    id: 'D_SAMPLE_INTERVAL_SKIPPED_SHORT',
    name: 'sampleIntervalsSkippedShort',
    severity: 'dataLoss',
    description: 'SampledProfileInterval events shorter than their fixed part (0x0C bytes)',
    detail: 'payload bytes',
  },
];
