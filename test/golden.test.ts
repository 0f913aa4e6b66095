// Golden byte vectors: payloads written byte by byte from format-spec.md (C: CSwitch, D: compact batches,
// E: SpinLock) and docs/format.md §G (SampledProfile, image events) and §H (StackWalk, stack-key events) — never through src/writer or the layout constants — framed into a minimal trace by
// test/helpers/bytes.ts and decoded by both engines. Every expected row is written out in full, nulls included.
// The `valid` column is derived from the literal row: bit c is set exactly for the non-null columns.
//
// Framing used throughout (bytes.ts minimalTrace): a 0x400-byte header buffer, then 0x400-byte data buffers,
// so the first event of data buffer k (0-based) sits at file offset 0x400·(k+1) + 0x48: 0x448, 0x848, 0xC48.
import { describe, expect, test } from 'vitest';
import { decodeSync, type DecodeResult } from '../src/node.js';
import type { Table } from '../src/tables/table.js';
import { bufferHeader, concatBytes, hexBytes, kernelEvent, HT, minimalTrace, type TraceSpec } from './helpers/bytes.js';
import { splitBuffers, walkEvents } from './helpers/reader.js';

const ENGINES = ['wasm', 'reference'] as const;
type EngineName = (typeof ENGINES)[number];

type Row = Record<string, bigint | number | null>;

/** One data buffer (CPU 1, SequenceNumber 1) holding `events`, in a 64-bit (or 32-bit) trace of 2 CPUs. */
function trace(events: Uint8Array[], o: Partial<TraceSpec> = {}): Uint8Array {
  return minimalTrace({ numberOfProcessors: 2, buffers: [{ cpu: 1, sequenceNumber: 1, events }], ...o }).bytes;
}

function decode(bytes: Uint8Array, engine: EngineName): DecodeResult {
  const r = decodeSync(bytes, { engine });
  expect(r.summary.issues).toEqual([]);
  return r;
}

/** bit c for every column c whose expected value is not null (the valid column itself is always there) */
function validMask(names: readonly string[], row: Row): number {
  let m = 0;
  names.forEach((n, c) => {
    if (n === 'valid' || row[n] !== null) m |= 1 << c;
  });
  return m >>> 0;
}

function expectRows(table: Table, expected: Row[]): void {
  expect(table.length).toBe(expected.length);
  expected.forEach((e, i) => {
    // the rows of the stacked tables have a stackId, null without stack events (attached after the decode)
    const stacked = table.name === 'cswitch' || table.name === 'readythread' || table.name === 'samples';
    // samples rows also have their process and image (filled after the decode): null without thread and image lifetimes
    const filled: Row = table.name === 'samples' ? { processId: null, imageName: null, imageOffset: null } : {};
    const row: Row = stacked ? { stackId: null, ...filled, ...e } : e;
    const want = stacked ? { ...row, valid: validMask(table.columnNames, row) } : e;
    expect(table.get(i), `${table.name} row ${i}`).toEqual(want);
  });
}

/** A copy of `b` with byte `at` set to `v`. */
function withByte(b: Uint8Array, at: number, v: number): Uint8Array {
  const c = b.slice();
  c[at] = v;
  return c;
}

// ---------------------------------------------------------------------------------------------
// the framing helper itself

test('test/helpers/bytes.ts frames what the spec says (A.2, B.3, A.8)', () => {
  // WMI_BUFFER_HEADER, field by field (A.2)
  expect(
    bufferHeader({ bufferSize: 0x400, savedOffset: 0x90, timestamp: 0x1122334455667788n, sequenceNumber: 5, clientContext: 0x0103, loggerId: 0x1c, flags: 0x21, type: 4 }),
  ).toEqual(
    hexBytes(
      '00 04 00 00', // 0x00 BufferSize 0x400
      '90 00 00 00', // 0x04 SavedOffset 0x90
      '40 04 00 00', // 0x08 CurrentOffset (BufferSize + 0x40)
      '00 00 00 00', // 0x0C ReferenceCount
      '88 77 66 55 44 33 22 11', // 0x10 TimeStamp
      '05 00 00 00 00 00 00 00', // 0x18 SequenceNumber 5
      '00 00 00 00 00 00 00 00', // 0x20 ClockType/Frequency
      '03 01', // 0x28 ProcessorIndex 0x103
      '1c 00', // 0x2A LoggerId
      '03 00 00 00', // 0x2C State 3 (Flush)
      '90 00 00 00', // 0x30 Offset 0x90
      '21 00', // 0x34 BufferFlag FLUSH_MARKER | PROC_INDEX
      '04 00', // 0x36 BufferType 4 (HEADER)
      '00'.repeat(16), // 0x38 ReferenceTime
    ),
  );
  // PERFINFO64 header with a PEBS index and one PMC counter (B.1, B.3)
  expect(kernelEvent(HT.PERFINFO64, { version: 4, hookId: 0x0524, timestamp: 0x0102030405060708n, pebs: 9n, pmc: [10n] }, hexBytes('aa bb'))).toEqual(
    hexBytes(
      '04 81 11 c0', // marker: version 4 | PMC count 1 << 8 | PEBS 0x8000 | HeaderType 0x11 << 16 | 0xC0000000
      '22 00', // Size 0x22 = 0x10 + 8 + 8 + 2
      '24 05', // HookId 0x0524
      '08 07 06 05 04 03 02 01', // timestamp
      '09 00 00 00 00 00 00 00', // PEBS index
      '0a 00 00 00 00 00 00 00', // PMC counter 0
      'aa bb', // data
    ),
  );
  // SYSTEM32 header (B.3)
  expect(kernelEvent(HT.SYSTEM32, { version: 2, hookId: 0x0529, timestamp: 7n, threadId: 1, processId: 2, kernelTime: 3, userTime: 4 }, new Uint8Array(0))).toEqual(
    hexBytes('02 00 01 c0', '20 00', '29 05', '01 00 00 00', '02 00 00 00', '07 00 00 00 00 00 00 00', '03 00 00 00', '04 00 00 00'),
  );
  // a minimal trace: header buffer (logfile header event + header extension), then the data buffer at 0x400
  for (const pointerSize of [4, 8] as const) {
    const bytes = minimalTrace({ pointerSize, build: 17763, numberOfProcessors: 2, buffers: [{ cpu: 1, sequenceNumber: 1, events: [] }] }).bytes;
    const { buffers, end } = splitBuffers(bytes);
    expect(end).toBe(0x800);
    expect(buffers.map((b) => [b.fileOffset, b.bufferSize, b.type, b.flags, b.sequenceNumber, b.processor])).toEqual([
      [0, 0x400, 4, 0x21, 0n, 0],
      [0x400, 0x400, 0, 0x20, 1n, 1],
    ]);
    const w = walkEvents(buffers[0]!.raw, buffers[0]!.offset);
    expect(w.stop).toBe('end');
    expect(w.events.map((e) => [e.marker.toString(16), e.hookId, e.size])).toEqual([
      // logfile header: SYSTEM32/64 v2 header + TRACE_LOGFILE_HEADER (0x110/0x118) + two empty UTF-16Z names
      [pointerSize === 8 ? 'c0020002' : 'c0010002', 0x0000, 0x20 + (pointerSize === 8 ? 0x118 : 0x110) + 4],
      [pointerSize === 8 ? 'c0020002' : 'c0010002', 0x0005, 0x20 + 0x24],
    ]);
    const lfh = w.events[0]!.data;
    expect(hexOf(lfh.subarray(0, 0x10))).toBe('00040000' + '0a000105' + '63450000' + '02000000'); // BufferSize 0x400, 10.0 layout 1.5, build 17763, 2 CPUs
  }
});

function hexOf(b: Uint8Array): string {
  return [...b].map((x) => x.toString(16).padStart(2, '0')).join('');
}

// ---------------------------------------------------------------------------------------------
// C: WMI_CONTEXTSWAP (HookId 0x0524)

/** The header of a CSwitch event: PERFINFO64 (or 32) marker with the version, Size, HookId, timestamp. */
const CSWITCH_V1_EVENT = hexBytes(
  '01 00 11 c0', // marker: event version 1, HeaderType 0x11 (PERFINFO64), flags 0xC0
  '20 00', // Size 0x20 = 0x10 header + 0x10 data
  '24 05', // HookId 0x0524 (CSwitch)
  'ab 89 67 45 23 01 00 00', // timestamp 0x0123456789AB = 1250999896491
  // WMI_CONTEXTSWAP, 5.1–5.2 layout (0x10 bytes)
  '44 33 22 11', // 0x00 NewThreadId 0x11223344 = 287454020
  '04 00 00 00', // 0x04 OldThreadId 4
  '0f', // 0x08 NewThreadPriority 15
  'fe', // 0x09 OldThreadPriority -2
  'fa', // 0x0A NewThreadQuantum -6 (v1)
  '06', // 0x0B OldThreadQuantum 6 (v1)
  '0d', // 0x0C OldThreadWaitReason 13 (WrUserRequest)
  '01', // 0x0D OldThreadWaitMode 1 (UserMode)
  '05', // 0x0E OldThreadState 5 (Waiting)
  '03', // 0x0F OldThreadIdealProcessor 3
);

/** v2 data (0x18 bytes) */
const CSWITCH_V2_DATA = hexBytes(
  '34 12 00 00', // 0x00 NewThreadId 0x1234 = 4660
  '78 56 00 00', // 0x04 OldThreadId 0x5678 = 22136
  '09', // 0x08 NewThreadPriority 9
  '08', // 0x09 OldThreadPriority 8
  '02', // 0x0A PreviousCState 2
  'ff', // 0x0B NewThreadPriorityDecrement -1
  '06', // 0x0C OldThreadWaitReason 6 (UserRequest)
  '01', // 0x0D OldThreadWaitMode 1 (v2: the whole byte)
  '05', // 0x0E OldThreadState 5
  '07', // 0x0F OldThreadIdealProcessor 7
  '01 00 00 80', // 0x10 NewThreadWaitTime 0x80000001 = 2147483649
  '85 ff ff ff', // 0x14 OldThreadRemainingQuantum 0xFFFFFF85 = -123
);

/** PERFINFO header of a CSwitch event of the given version and data size, at `timestamp` (hex of 8 bytes). */
function cswitchHeader(is64: boolean, version: number, dataSize: number, timestampHex: string): Uint8Array {
  return hexBytes(
    version.toString(16).padStart(2, '0') + ' 00', // marker low word: event version, no extended items
    is64 ? '11' : '10', // HeaderType PERFINFO64 / PERFINFO32
    'c0', // TRACE_HEADER_FLAG | TRACE_HEADER_EVENT_TRACE
    (0x10 + dataSize).toString(16).padStart(2, '0') + ' 00', // Size
    '24 05', // HookId 0x0524
    timestampHex,
  );
}

/** The row of CSWITCH_V2_DATA for event version `v` at the given length (everything a v2+ event carries) */
function v2Row(timestamp: bigint, version: number, fileOffset: number): Row {
  return {
    timestamp, cpu: 1, newThreadId: 4660, oldThreadId: 22136, newThreadPriority: 9, oldThreadPriority: 8,
    previousCState: 2, newThreadPriorityDecrement: -1, oldThreadWaitReason: 6, oldThreadWaitMode: 1, oldThreadState: 5,
    oldThreadIdealProcessor: 7, newThreadWaitTime: 2147483649, oldThreadRemainingQuantum: -123,
    newThreadQuantum: null, oldThreadQuantum: null, threadFlags: null,
    oldThreadBamEppImportant: null, newThreadBamEppImportant: null, oldThreadBamQosLevel: null, newThreadBamQosLevel: null,
    newThreadWaitTimeAtMostOneTick: 0, source: 0, version, fileOffset,
  };
}

describe.each(ENGINES)('%s engine', (engine) => {
  test('CSwitch v1 (0x10 bytes): bytes 0x0A/0x0B are New/OldThreadQuantum; no wait time, no remaining quantum', () => {
    const r = decode(trace([CSWITCH_V1_EVENT]), engine);
    expect(r.summary.diagnostics['cswitchDecoded']).toBe(1);
    expectRows(r.cswitch, [
      {
        timestamp: 1250999896491n, cpu: 1, newThreadId: 287454020, oldThreadId: 4, newThreadPriority: 15, oldThreadPriority: -2,
        previousCState: null, newThreadPriorityDecrement: null, oldThreadWaitReason: 13, oldThreadWaitMode: 1, oldThreadState: 5,
        oldThreadIdealProcessor: 3, newThreadWaitTime: null, oldThreadRemainingQuantum: null,
        newThreadQuantum: -6, oldThreadQuantum: 6, threadFlags: null,
        oldThreadBamEppImportant: null, newThreadBamEppImportant: null, oldThreadBamQosLevel: null, newThreadBamQosLevel: null,
        newThreadWaitTimeAtMostOneTick: 0, source: 0, version: 1, fileOffset: 0x448,
      },
    ]);
  });

  test('CSwitch v1 with 0x14 bytes (TE-MOF CSwitch_V1): the event Size wins, NewThreadWaitTime is read', () => {
    const ev = concatBytes(
      cswitchHeader(false, 1, 0x14, '10 00 00 00 00 00 00 00'), // PERFINFO32 v1, Size 0x24, timestamp 16
      CSWITCH_V1_EVENT.subarray(0x10), // the 0x10 data bytes above
      hexBytes('2a 00 00 00'), // 0x10 NewThreadWaitTime 42
    );
    const r = decode(trace([ev]), engine);
    expectRows(r.cswitch, [
      {
        timestamp: 16n, cpu: 1, newThreadId: 287454020, oldThreadId: 4, newThreadPriority: 15, oldThreadPriority: -2,
        previousCState: null, newThreadPriorityDecrement: null, oldThreadWaitReason: 13, oldThreadWaitMode: 1, oldThreadState: 5,
        oldThreadIdealProcessor: 3, newThreadWaitTime: 42, oldThreadRemainingQuantum: null,
        newThreadQuantum: -6, oldThreadQuantum: 6, threadFlags: null,
        oldThreadBamEppImportant: null, newThreadBamEppImportant: null, oldThreadBamQosLevel: null, newThreadBamQosLevel: null,
        newThreadWaitTimeAtMostOneTick: 0, source: 0, version: 1, fileOffset: 0x448,
      },
    ]);
  });

  test('CSwitch v2 (0x18 bytes): PreviousCState, NewThreadPriorityDecrement, wait mode byte, wait time, remaining quantum', () => {
    const ev = concatBytes(cswitchHeader(true, 2, 0x18, '00 01 00 00 00 00 00 00'), CSWITCH_V2_DATA); // timestamp 256
    const r = decode(trace([ev]), engine);
    expectRows(r.cswitch, [v2Row(256n, 2, 0x448)]);
  });

  test('CSwitch v2 payloads of 0x10 and 0x14 bytes: the dwords that are not there are null', () => {
    const ev10 = concatBytes(cswitchHeader(true, 2, 0x10, '01 00 00 00 00 00 00 00'), CSWITCH_V2_DATA.subarray(0, 0x10));
    const ev14 = concatBytes(cswitchHeader(true, 2, 0x14, '02 00 00 00 00 00 00 00'), CSWITCH_V2_DATA.subarray(0, 0x14));
    // ev10 is 0x20 bytes at 0x448; ev14 is 0x24 bytes at 0x468
    const r = decode(trace([ev10, ev14]), engine);
    expectRows(r.cswitch, [
      { ...v2Row(1n, 2, 0x448), newThreadWaitTime: null, oldThreadRemainingQuantum: null },
      { ...v2Row(2n, 2, 0x468), oldThreadRemainingQuantum: null },
    ]);
  });

  test('CSwitch v3: byte 0x0D is flags — OldThreadWaitMode bit 0, Old/NewThreadBamEppImportant bits 1/2', () => {
    // the v2 data with byte 0x0D = 0x05 (0b0000_0101) and = 0xFA (0b1111_1010: reserved bits 3-7 set)
    const a = concatBytes(cswitchHeader(true, 3, 0x18, '03 00 00 00 00 00 00 00'), withByte(CSWITCH_V2_DATA, 0x0d, 0x05));
    const b = concatBytes(cswitchHeader(true, 3, 0x18, '04 00 00 00 00 00 00 00'), withByte(CSWITCH_V2_DATA, 0x0d, 0xfa));
    const r = decode(trace([a, b]), engine); // a at 0x448 (0x28 bytes), b at 0x470
    expectRows(r.cswitch, [
      { ...v2Row(3n, 3, 0x448), oldThreadWaitMode: 1, threadFlags: 0x05, oldThreadBamEppImportant: 0, newThreadBamEppImportant: 1 },
      { ...v2Row(4n, 3, 0x470), oldThreadWaitMode: 0, threadFlags: 0xfa, oldThreadBamEppImportant: 1, newThreadBamEppImportant: 0 },
    ]);
  });

  test('CSwitch v4: byte 0x0D is flags — OldThreadWaitMode bit 0, OldThreadBamQosLevel bits 1-3, NewThreadBamQosLevel bits 4-6', () => {
    // 0x3B = 0b0011_1011: wait mode 1, old QoS 0b101 = 5, new QoS 0b011 = 3
    // 0xC6 = 0b1100_0110: wait mode 0, old QoS 0b011 = 3, new QoS 0b100 = 4, reserved bit 7 set
    const a = concatBytes(cswitchHeader(true, 4, 0x18, '05 00 00 00 00 00 00 00'), withByte(CSWITCH_V2_DATA, 0x0d, 0x3b));
    const b = concatBytes(cswitchHeader(false, 4, 0x18, '06 00 00 00 00 00 00 00'), withByte(CSWITCH_V2_DATA, 0x0d, 0xc6));
    const r = decode(trace([a, b]), engine);
    expectRows(r.cswitch, [
      { ...v2Row(5n, 4, 0x448), oldThreadWaitMode: 1, threadFlags: 0x3b, oldThreadBamQosLevel: 5, newThreadBamQosLevel: 3 },
      { ...v2Row(6n, 4, 0x470), oldThreadWaitMode: 0, threadFlags: 0xc6, oldThreadBamQosLevel: 3, newThreadBamQosLevel: 4 },
    ]);
  });

  test('CSwitch v4 behind a PEBS index and two PMC counters (B.1): the data starts 0x18 bytes later', () => {
    const ev = concatBytes(
      hexBytes(
        '04 82 11 c0', // marker: version 4 | 2 PMC counters (0x0200) | PEBS (0x8000), PERFINFO64
        '40 00', // Size 0x40 = 0x10 + 0x18 extended items + 0x18 data
        '24 05', // HookId 0x0524
        '07 00 00 00 00 00 00 00', // timestamp 7
        '24 05 11 c0 24 05 11 c0', // PEBS index (bytes that look like a header, must be skipped)
        'ff ff ff ff ff ff ff ff', // PMC counter 0
        '01 00 00 00 00 00 00 00', // PMC counter 1
      ),
      withByte(CSWITCH_V2_DATA, 0x0d, 0x3b),
    );
    const r = decode(trace([ev]), engine);
    expectRows(r.cswitch, [{ ...v2Row(7n, 4, 0x448), oldThreadWaitMode: 1, threadFlags: 0x3b, oldThreadBamQosLevel: 5, newThreadBamQosLevel: 3 }]);
  });

  test('real CSwitch v2 payloads (Chrome catapult ETW importer tests): 32-bit trace, PERFINFO32; 64-bit trace, PERFINFO64', () => {
    const ev32 = concatBytes(cswitchHeader(false, 2, 0x18, 'e8 03 00 00 00 00 00 00'), hexBytes('000000002c11000000090000170001001200000026480000'));
    const r32 = decode(trace([ev32], { pointerSize: 4 }), engine);
    expect(r32.info!.pointerSize).toBe(4);
    expectRows(r32.cswitch, [
      {
        timestamp: 1000n, cpu: 1, newThreadId: 0, oldThreadId: 4396, newThreadPriority: 0, oldThreadPriority: 9,
        previousCState: 0, newThreadPriorityDecrement: 0, oldThreadWaitReason: 23, oldThreadWaitMode: 0, oldThreadState: 1,
        oldThreadIdealProcessor: 0, newThreadWaitTime: 18, oldThreadRemainingQuantum: 18470,
        newThreadQuantum: null, oldThreadQuantum: null, threadFlags: null,
        oldThreadBamEppImportant: null, newThreadBamEppImportant: null, oldThreadBamQosLevel: null, newThreadBamQosLevel: null,
        newThreadWaitTimeAtMostOneTick: 0, source: 0, version: 2, fileOffset: 0x448,
      },
    ]);
    const ev64 = concatBytes(cswitchHeader(true, 2, 0x18, 'e9 03 00 00 00 00 00 00'), hexBytes('cc08000000000000080001000000020401000000876d8834'));
    const r64 = decode(trace([ev64], { pointerSize: 8 }), engine);
    expect(r64.info!.pointerSize).toBe(8);
    expectRows(r64.cswitch, [
      {
        timestamp: 1001n, cpu: 1, newThreadId: 2252, oldThreadId: 0, newThreadPriority: 8, oldThreadPriority: 0,
        previousCState: 1, newThreadPriorityDecrement: 0, oldThreadWaitReason: 0, oldThreadWaitMode: 0, oldThreadState: 2,
        oldThreadIdealProcessor: 4, newThreadWaitTime: 1, oldThreadRemainingQuantum: 881356167,
        newThreadQuantum: null, oldThreadQuantum: null, threadFlags: null,
        oldThreadBamEppImportant: null, newThreadBamEppImportant: null, oldThreadBamQosLevel: null, newThreadBamQosLevel: null,
        newThreadWaitTimeAtMostOneTick: 0, source: 0, version: 2, fileOffset: 0x448,
      },
    ]);
  });

  // -------------------------------------------------------------------------------------------
  // E: WMI_SPINLOCK (HookId 0x0529)

  test('SpinLock v2, x64 layout (PERFINFO64, 0x38 bytes): addresses and times above 2^53 exact; flags byte', () => {
    const ev = hexBytes(
      '02 00 11 c0', // marker: version 2, PERFINFO64
      '48 00', // Size 0x48 = 0x10 + 0x38
      '29 05', // HookId 0x0529 (SpinLock)
      '00 10 00 00 00 00 00 00', // timestamp 4096
      '78 56 34 12 03 f8 ff ff', // 0x00 SpinLockAddress 0xFFFFF80312345678
      '09 21 43 65 07 f8 ff ff', // 0x08 CallerAddress 0xFFFFF80765432109
      'ef cd ab 89 67 45 23 01', // 0x10 AcquireTime 0x0123456789ABCDEF
      '10 32 54 76 98 ba dc fe', // 0x18 ReleaseTime 0xFEDCBA9876543210
      '98 ba dc fe', // 0x20 WaitTimeInCycles 0xFEDCBA98 = 4275878552
      '02 01 00 00', // 0x24 SpinCount 258
      '2c 1a 00 00', // 0x28 ThreadId 6700
      '03 00 00 00', // 0x2C InterruptCount 3
      '02', // 0x30 Irql 2
      '01', // 0x31 AcquireDepth 1
      '83', // 0x32 Flags 0b1000_0011: AcquireMode 3, ExecuteDpc 0, ExecuteIsr 1
      'aa aa aa aa aa', // 0x33 Reserved (ignored)
    );
    // the same event with other flags bytes: 0x44 = mode 4 + ExecuteDpc; 0xFF = mode 63 + both; 0x00
    const flags = [0x83, 0x44, 0xff, 0x00];
    const events = flags.map((f, i) => withByte(withByte(ev, 0x08, i), 0x10 + 0x32, f)); // timestamps 0x1000 + i (low byte)
    const r = decode(trace(events), engine);
    expect(r.summary.spinlock).toBe(4);
    const row = (i: number, acquireMode: number, executeDpc: number, executeIsr: number): Row => ({
      timestamp: 4096n + BigInt(i), cpu: 1,
      spinLockAddress: 18446735290806851192n, callerAddress: 18446735309380198665n,
      acquireTime: 81985529216486895n, releaseTime: 18364758544493064720n,
      waitTimeInCycles: 4275878552, spinCount: 258, threadId: 6700, interruptCount: 3, irql: 2, acquireDepth: 1,
      acquireMode, executeDpc, executeIsr, pointerSize: 8, version: 2, fileOffset: 0x448 + 0x48 * i,
    });
    expectRows(r.spinlock, [row(0, 3, 0, 1), row(1, 4, 1, 0), row(2, 63, 1, 1), row(3, 0, 0, 0)]);
  });

  test('SpinLock v2, x86 layout (0x30 bytes) under PERFINFO32 and SYSTEM32 headers: 32-bit addresses', () => {
    const data = hexBytes(
      '5d 4c 3b 8a', // 0x00 SpinLockAddress 0x8A3B4C5D = 2319141981
      '67 45 23 81', // 0x04 CallerAddress 0x81234567 = 2166572391
      'fe ff ff ff ff ff ff ff', // 0x08 AcquireTime 2^64 - 2
      'ff ff ff ff ff ff ff ff', // 0x10 ReleaseTime 2^64 - 1
      '00 00 00 80', // 0x18 WaitTimeInCycles 2^31
      'ff ff ff ff', // 0x1C SpinCount 2^32 - 1
      '08 00 00 00', // 0x20 ThreadId 8
      '00 00 00 00', // 0x24 InterruptCount 0
      '0c', // 0x28 Irql 12
      '08', // 0x29 AcquireDepth 8
      '44', // 0x2A Flags 0b0100_0100: AcquireMode 4, ExecuteDpc 1, ExecuteIsr 0
      '00 00 00 00 00', // 0x2B Reserved
    );
    const perfinfo32 = concatBytes(
      hexBytes('02 00 10 c0', '40 00', '29 05', '11 00 00 00 00 00 00 00'), // PERFINFO32 v2, Size 0x40, timestamp 17
      data,
    );
    const system32 = concatBytes(
      hexBytes(
        '02 00 01 c0', // marker: version 2, SYSTEM32
        '50 00', // Size 0x50 = 0x20 + 0x30
        '29 05', // HookId
        '08 00 00 00', // ThreadId
        '04 00 00 00', // ProcessId
        '12 00 00 00 00 00 00 00', // timestamp 18
        '00 00 00 00 00 00 00 00', // KernelTime, UserTime
      ),
      data,
    );
    const r = decode(trace([perfinfo32, system32], { pointerSize: 4 }), engine);
    const row = (timestamp: bigint, fileOffset: number): Row => ({
      timestamp, cpu: 1, spinLockAddress: 2319141981n, callerAddress: 2166572391n,
      acquireTime: 18446744073709551614n, releaseTime: 18446744073709551615n,
      waitTimeInCycles: 2147483648, spinCount: 4294967295, threadId: 8, interruptCount: 0, irql: 12, acquireDepth: 8,
      acquireMode: 4, executeDpc: 1, executeIsr: 0, pointerSize: 4, version: 2, fileOffset,
    });
    expectRows(r.spinlock, [row(17n, 0x448), row(18n, 0x488)]);
  });
});

// ---------------------------------------------------------------------------------------------
// D: compact batches (HookId 0x0525, version 2)

/**
 * CPU 1, batch 1 (data buffer 0, SequenceNumber 1, event at 0x448):
 *   FirstTimeStamp 0xFFFFFFF0 = 4294967280; TidTable [2600, 8000, 100004]; ThreadBasePriority [8, 13, 15]
 *   packet                                   delta        time          old thread
 *   1 IDLE_SHORT                             32           4294967312    0 (idle; crosses 2^32)
 *   2 LITE  idx 0, PriInc 2, StateWr 5       1000         4294968312    2600, priority 8 + 2 = 10, Waiting / Suspended (5)
 *   3 FULL  idx 1, StateWr 41, pri 14,       74565        4295042877    8000, priority 14, 41 - 40 = Ready (1), no wait reason
 *           wait 109517
 *   4 IDLE                                   20000        4295062877    0
 *   5 LITE  idx 2, PriInc 0, StateWr 47      0            4295062877    100004, priority 15, 47 - 40 = DeferredReady (7)
 *   6 FULL  idx 0, StateWr 0, pri 31,        2^30 - 1     5368804700    2600, priority 31, Waiting / Executive (0), wait 2^17 - 1
 *           wait 0x1FFFF
 * CPU 0, batch (data buffer 1, SequenceNumber 2, event at 0x848):
 *   FirstTimeStamp 5000000000; TidTable [7777]; base [10]
 *   1 FULL  idx 0, StateWr 43, pri 12, wait 0  0          5000000000    7777, 43 - 40 = Standby (3)
 * CPU 1, batch 2 (data buffer 2, SequenceNumber 3, event at 0xC48):
 *   FirstTimeStamp 5368804750; TidTable [4444]; base [9]
 *   1 LITE  idx 0, PriInc 7, StateWr 42      3            5368804753    4444, priority 9 + 7 = 16, 42 - 40 = Running (2)
 *   2 IDLE_SHORT                             16383        5368821136    0
 * New threads: the old thread of the next switch on the same CPU (CPU 1 packet 6 → 4444 of batch 2); the last
 * switch of each CPU has none (null).
 */
const BATCH_1 = hexBytes(
  '02 00 11 c0', // marker: version 2, PERFINFO64
  '86 00', // Size 0x86 = 0x10 + 0x58 + 30 packet bytes
  '25 05', // HookId 0x0525
  'c0 75 01 40 01 00 00 00', // event timestamp 5368804800 (after the last switch)
  // PERFINFO_CCSWAP_BUFFER
  'f0 ff ff ff 00 00 00 00', // 0x00 FirstTimeStamp 0xFFFFFFF0
  '28 0a 00 00', // 0x08 TidTable[0] 2600
  '40 1f 00 00', // 0x0C TidTable[1] 8000
  'a4 86 01 00', // 0x10 TidTable[2] 100004
  '00 00 00 00'.repeat(13), // TidTable[3..15] unused
  '08 0d 0f', // 0x48 ThreadBasePriority[0..2] 8, 13, 15
  '00'.repeat(13), // ThreadBasePriority[3..15]
  // packets (0x58)
  '80 00', // IDLE_SHORT u16 0x0080: DataType 0 | TimeDelta 32 << 2
  '82 0a f4 01', // LITE u32 0x01F40A82: DataType 2 | idx 0 << 2 | PriInc 2 << 6 | StateWr 5 << 9 | TimeDelta 1000 << 15
  '17 8d 04 00', // FULL d0 0x00048D17: DataType 3 | TimeDelta 74565 << 2
  '91 ba e6 d5', // FULL d1 0xD5E6BA91: idx 1 | StateWr 41 << 4 | priority 14 << 10 | wait 109517 << 15
  '81 38 01 00', // IDLE u32 0x00013881: DataType 1 | TimeDelta 20000 << 2
  '0a 5e 00 00', // LITE u32 0x00005E0A: DataType 2 | idx 2 << 2 | PriInc 0 << 6 | StateWr 47 << 9 | TimeDelta 0
  'ff ff ff ff', // FULL d0 0xFFFFFFFF: DataType 3 | TimeDelta (2^30 - 1) << 2
  '00 fc ff ff', // FULL d1 0xFFFFFC00: idx 0 | StateWr 0 | priority 31 << 10 | wait 0x1FFFF << 15
);
const BATCH_CPU0 = hexBytes(
  '02 00 11 c0', // marker: version 2, PERFINFO64
  '70 00', // Size 0x70 = 0x10 + 0x58 + 8
  '25 05', // HookId 0x0525
  '05 f2 05 2a 01 00 00 00', // event timestamp 5000000005
  '00 f2 05 2a 01 00 00 00', // FirstTimeStamp 5000000000
  '61 1e 00 00', // TidTable[0] 7777
  '00 00 00 00'.repeat(15),
  '0a', // ThreadBasePriority[0] 10
  '00'.repeat(15),
  '03 00 00 00', // FULL d0: DataType 3 | TimeDelta 0
  'b0 32 00 00', // FULL d1 0x000032B0: idx 0 | StateWr 43 << 4 | priority 12 << 10 | wait 0
);
const BATCH_2 = hexBytes(
  '02 00 11 c0', // marker: version 2, PERFINFO64
  '6e 00', // Size 0x6E = 0x10 + 0x58 + 6
  '25 05', // HookId 0x0525
  '9a b5 01 40 01 00 00 00', // event timestamp 5368821146
  '8e 75 01 40 01 00 00 00', // FirstTimeStamp 5368804750
  '5c 11 00 00', // TidTable[0] 4444
  '00 00 00 00'.repeat(15),
  '09', // ThreadBasePriority[0] 9
  '00'.repeat(15),
  'c2 d5 01 00', // LITE u32 0x0001D5C2: DataType 2 | idx 0 | PriInc 7 << 6 | StateWr 42 << 9 | TimeDelta 3 << 15
  'fc ff', // IDLE_SHORT u16 0xFFFC: TimeDelta 16383 << 2
);

/** columns a compact packet never carries */
const NOT_IN_COMPACT = {
  newThreadPriority: null, previousCState: null, newThreadPriorityDecrement: null, oldThreadWaitMode: null,
  oldThreadIdealProcessor: null, oldThreadRemainingQuantum: null, newThreadQuantum: null, oldThreadQuantum: null,
  threadFlags: null, oldThreadBamEppImportant: null, newThreadBamEppImportant: null, oldThreadBamQosLevel: null,
  newThreadBamQosLevel: null,
} as const;

const COMPACT_CPU1: Row[] = [
  {
    timestamp: 4294967312n, cpu: 1, newThreadId: 2600, oldThreadId: 0, oldThreadPriority: null, oldThreadWaitReason: null,
    oldThreadState: null, newThreadWaitTime: null, newThreadWaitTimeAtMostOneTick: 0, source: 1, version: 2, fileOffset: 0x448, ...NOT_IN_COMPACT,
  },
  {
    timestamp: 4294968312n, cpu: 1, newThreadId: 8000, oldThreadId: 2600, oldThreadPriority: 10, oldThreadWaitReason: 5,
    oldThreadState: 5, newThreadWaitTime: null, newThreadWaitTimeAtMostOneTick: 1, source: 3, version: 2, fileOffset: 0x448, ...NOT_IN_COMPACT,
  },
  {
    timestamp: 4295042877n, cpu: 1, newThreadId: 0, oldThreadId: 8000, oldThreadPriority: 14, oldThreadWaitReason: null,
    oldThreadState: 1, newThreadWaitTime: 109517, newThreadWaitTimeAtMostOneTick: 0, source: 4, version: 2, fileOffset: 0x448, ...NOT_IN_COMPACT,
  },
  {
    timestamp: 4295062877n, cpu: 1, newThreadId: 100004, oldThreadId: 0, oldThreadPriority: null, oldThreadWaitReason: null,
    oldThreadState: null, newThreadWaitTime: null, newThreadWaitTimeAtMostOneTick: 0, source: 2, version: 2, fileOffset: 0x448, ...NOT_IN_COMPACT,
  },
  {
    timestamp: 4295062877n, cpu: 1, newThreadId: 2600, oldThreadId: 100004, oldThreadPriority: 15, oldThreadWaitReason: null,
    oldThreadState: 7, newThreadWaitTime: null, newThreadWaitTimeAtMostOneTick: 1, source: 3, version: 2, fileOffset: 0x448, ...NOT_IN_COMPACT,
  },
  {
    timestamp: 5368804700n, cpu: 1, newThreadId: 4444, oldThreadId: 2600, oldThreadPriority: 31, oldThreadWaitReason: 0,
    oldThreadState: 5, newThreadWaitTime: 131071, newThreadWaitTimeAtMostOneTick: 0, source: 4, version: 2, fileOffset: 0x448, ...NOT_IN_COMPACT,
  },
  {
    timestamp: 5368804753n, cpu: 1, newThreadId: 0, oldThreadId: 4444, oldThreadPriority: 16, oldThreadWaitReason: null,
    oldThreadState: 2, newThreadWaitTime: null, newThreadWaitTimeAtMostOneTick: 1, source: 3, version: 2, fileOffset: 0xc48, ...NOT_IN_COMPACT,
  },
  {
    timestamp: 5368821136n, cpu: 1, newThreadId: null, oldThreadId: 0, oldThreadPriority: null, oldThreadWaitReason: null,
    oldThreadState: null, newThreadWaitTime: null, newThreadWaitTimeAtMostOneTick: 0, source: 1, version: 2, fileOffset: 0xc48, ...NOT_IN_COMPACT,
  },
];
const COMPACT_CPU0: Row[] = [
  {
    timestamp: 5000000000n, cpu: 0, newThreadId: null, oldThreadId: 7777, oldThreadPriority: 12, oldThreadWaitReason: null,
    oldThreadState: 3, newThreadWaitTime: 0, newThreadWaitTimeAtMostOneTick: 0, source: 4, version: 2, fileOffset: 0x848, ...NOT_IN_COMPACT,
  },
];

/** rows of one CPU, in output order (which per CPU is time order) */
function rowsOfCpu(t: Table<'cswitch'>, cpu: number): Table<'cswitch'> {
  const keep: number[] = [];
  const cpus = t.column('cpu');
  for (let i = 0; i < t.length; i++) if (cpus[i] === cpu) keep.push(i);
  return { name: 'cswitch', length: keep.length, columnNames: t.columnNames, get: (i: number) => t.get(keep[i]!) } as unknown as Table<'cswitch'>;
}

function compactTrace(build: number): Uint8Array {
  return minimalTrace({
    build,
    numberOfProcessors: 2,
    buffers: [
      { cpu: 1, sequenceNumber: 1, events: [BATCH_1] },
      { cpu: 0, sequenceNumber: 2, events: [BATCH_CPU0] },
      { cpu: 1, sequenceNumber: 3, events: [BATCH_2] },
    ],
  }).bytes;
}

describe.each(ENGINES)('%s engine', (engine) => {
  // 17763 (Windows 10 1809) must use MaximumWaitReason 40 like every build from 16299 (spec C.7).
  test.each([19041, 17763])(
    'compact batches, build %d (bias 40): IDLE_SHORT, IDLE, LITE and FULL packets; the held-back switch chains into the next batch',
    (build) => {
      const r = decode(compactTrace(build), engine);
      expect(r.summary.bias.value).toBe(40);
      expect(r.summary.compact).toEqual({ batches: 3, packets: { idleShort: 2, idle: 1, lite: 3, full: 3 } });
      expect(r.summary.diagnostics['compactNewThreadUnknown']).toBe(2);
      expect(r.summary.diagnostics['compactTimeMismatch']).toBe(0);
      expect(r.summary.diagnostics['compactStateOutOfRange']).toBe(0);
      expect(r.summary.diagnostics['compactBadTidIndex']).toBe(0);
      expect(r.cswitch.length).toBe(9);
      expectRows(rowsOfCpu(r.cswitch, 1), COMPACT_CPU1);
      expectRows(rowsOfCpu(r.cswitch, 0), COMPACT_CPU0);
    },
  );

  // One FULL packet with OldThreadStateWr 39 and one LITE packet with 40: the two values that tell
  // MaximumWaitReason 39, 40 and 42 apart (D.5). Builds 16299-18363 take 40 (spec C.7).
  test.each([
    [15063, 39, { state: 0, wr: null }, { state: 1, wr: null }], // 1703: 39 = Initialized, 40 = Ready
    [16299, 40, { state: 5, wr: 39 }, { state: 0, wr: null }], // 1709: 39 = WrPhysicalFault, 40 = Initialized
    [17763, 40, { state: 5, wr: 39 }, { state: 0, wr: null }], // 1809
    [18363, 40, { state: 5, wr: 39 }, { state: 0, wr: null }], // 1909
    [19041, 40, { state: 5, wr: 39 }, { state: 0, wr: null }], // 2004
    [22631, 42, { state: 5, wr: 39 }, { state: 5, wr: 40 }], // 11 23H2: both are wait reasons (40 = WrIoRing)
  ] as const)('OldThreadStateWr 39 and 40 with build %d (MaximumWaitReason %d)', (build, bias, full, lite) => {
    const batch = hexBytes(
      '02 00 11 c0', // marker: version 2, PERFINFO64
      '74 00', // Size 0x74 = 0x10 + 0x58 + 12
      '25 05', // HookId 0x0525
      '64 00 00 00 00 00 00 00', // event timestamp 100
      '50 00 00 00 00 00 00 00', // FirstTimeStamp 80
      '39 30 00 00', // TidTable[0] 12345
      '00 00 00 00'.repeat(15),
      '0a', // ThreadBasePriority[0] 10
      '00'.repeat(15),
      '03 00 00 00', // FULL d0: DataType 3 | TimeDelta 0
      '70 2a 00 00', // FULL d1 0x00002A70: idx 0 | StateWr 39 << 4 | priority 10 << 10 | wait 0
      '42 d0 02 00', // LITE u32 0x0002D042: DataType 2 | idx 0 | PriInc 1 << 6 | StateWr 40 << 9 | TimeDelta 5 << 15
    );
    const r = decode(trace([batch], { build }), engine);
    expect(r.summary.bias.value).toBe(bias);
    expectRows(r.cswitch, [
      {
        timestamp: 80n, cpu: 1, newThreadId: 12345, oldThreadId: 12345, oldThreadPriority: 10, oldThreadWaitReason: full.wr,
        oldThreadState: full.state, newThreadWaitTime: 0, newThreadWaitTimeAtMostOneTick: 0, source: 4, version: 2, fileOffset: 0x448, ...NOT_IN_COMPACT,
      },
      {
        timestamp: 85n, cpu: 1, newThreadId: null, oldThreadId: 12345, oldThreadPriority: 11, oldThreadWaitReason: lite.wr,
        oldThreadState: lite.state, newThreadWaitTime: null, newThreadWaitTimeAtMostOneTick: 1, source: 3, version: 2, fileOffset: 0x448, ...NOT_IN_COMPACT,
      },
    ]);
  });
});

// ---------------------------------------------------------------------------------------------
// G: SampledProfile (HookId 0x0F2E) and image events (0x030A, 0x1402-0x1404), docs/format.md §G

/** 'name' as UTF-16LE hex with its 2-byte terminator (ASCII and Latin-1 only: one unit per character) */
function utf16z(name: string): string {
  return [...name].map((ch) => ch.charCodeAt(0).toString(16).padStart(2, '0') + ' 00').join(' ') + ' 00 00';
}

/** the imageEvents row of the literal `row` with its valid mask (bit c set exactly for the non-null columns) */
function imageRow(r: DecodeResult, row: Record<string, bigint | number | string | null>): Record<string, bigint | number | string | null> {
  return { ...row, valid: validMask(r.imageEvents.columnNames, row as Row) };
}

describe.each(ENGINES)('%s engine: samples and images (§G)', (engine) => {
  test('SampledProfile v2, x64 (PERFINFO64, 0x10 bytes): IP above 2^53 exact; flags byte (DPC, ISR, priority) and rank', () => {
    const ev = hexBytes(
      '02 00 11 c0', // marker: version 2, PERFINFO64
      '20 00', // Size 0x20 = 0x10 + 0x10
      '2e 0f', // HookId 0x0F2E (SampledProfile)
      'e8 03 00 00 00 00 00 00', // timestamp 1000
      'd0 ff 66 42 02 f8 ff ff', // 0x00 InstructionPointer 0xFFFFF8024266FFD0
      '2c 1a 00 00', // 0x08 ThreadId 6700
      '03 00', // 0x0C Count 3
      '41', // 0x0E Flags 0b0100_0001: ExecutingDpc, Priority 8
      '07', // 0x0F Rank 7
    );
    // the same event with Flags 0x82 (ExecutingIsr, Priority 16: the idle thread's in real files) and ThreadId 0
    const idle = withByte(withByte(withByte(ev, 0x18, 0x00), 0x19, 0x00), 0x1e, 0x82);
    const r = decode(trace([ev, withByte(idle, 0x08, 0xe9)]), engine);
    expect(r.summary.diagnostics['samplesDecoded']).toBe(2);
    const ip = 18446735287320510416n;
    expectRows(r.samples, [
      { timestamp: 1000n, cpu: 1, threadId: 6700, instructionPointer: ip, count: 3, flags: 0x41, executingDpc: 1, executingIsr: 0, priority: 8, rank: 7, pointerSize: 8, version: 2, fileOffset: 0x448 },
      // the idle thread's process is 0 (a sample's processId: tid 0 → 0)
      { timestamp: 1001n, cpu: 1, threadId: 0, instructionPointer: ip, count: 3, flags: 0x82, executingDpc: 0, executingIsr: 1, priority: 16, rank: 7, pointerSize: 8, version: 2, fileOffset: 0x468, processId: 0 },
    ]);
  });

  test('SampledProfile v2, x86 layout (0x0C bytes) under PERFINFO32 and SYSTEM32 headers: 32-bit IP', () => {
    const data = hexBytes(
      'd0 ff 66 82', // 0x00 InstructionPointer 0x8266FFD0 = 2187788240
      '08 00 00 00', // 0x04 ThreadId 8
      'ff ff', // 0x08 Count 65535
      'f8', // 0x0A Flags 0xF8: Priority 31
      '00', // 0x0B Rank 0
    );
    const perfinfo32 = concatBytes(hexBytes('02 00 10 c0', '1c 00', '2e 0f', '11 00 00 00 00 00 00 00'), data); // Size 0x1C, timestamp 17
    const system32 = concatBytes(
      hexBytes('02 00 01 c0', '2c 00', '2e 0f', '09 00 00 00', '04 00 00 00', '12 00 00 00 00 00 00 00', '00 00 00 00 00 00 00 00'), // Size 0x2C, timestamp 18
      data,
    );
    const r = decode(trace([perfinfo32, system32], { pointerSize: 4 }), engine);
    const row = (timestamp: bigint, fileOffset: number): Row => ({
      timestamp, cpu: 1, threadId: 8, instructionPointer: 2187788240n, count: 65535, flags: 0xf8, executingDpc: 0, executingIsr: 0,
      priority: 31, rank: 0, pointerSize: 4, version: 2, fileOffset,
    });
    expectRows(r.samples, [row(17n, 0x448), row(18n, 0x468)]); // 0x448 + align8(0x1C)
  });

  test('SampledProfile: another version is skipped and counted; a payload shorter than P + 8 bytes is skipped with its size', () => {
    const v3 = hexBytes('03 00 11 c0', '20 00', '2e 0f', '01 00 00 00 00 00 00 00', '00'.repeat(16)); // version 3
    const short = hexBytes('02 00 11 c0', '1c 00', '2e 0f', '02 00 00 00 00 00 00 00', '00'.repeat(12)); // x64, 0x0C bytes (the x86 size)
    const r = decodeSync(trace([v3, short]), { engine });
    expect(r.samples.length).toBe(0);
    expect(r.summary.diagnostics['samplesDecoded']).toBe(0);
    expect(r.summary.diagnostics['samplesSkippedVersion']).toBe(1);
    expect(r.summary.diagnostics['samplesSkippedShort']).toBe(1);
    expect(r.summary.issues.map((i) => [i.counter, i.detail, i.fileOffset])).toEqual([['samplesSkippedShort', 12, 0x468]]);
  });

  test('Image v3 Load (0x030A, SYSTEM64) and v2 DCStart (0x1403, PERFINFO64), x64 layout: FileName at 0x38; v2 has no signature bytes', () => {
    const load = hexBytes(
      '03 00 02 c0', // marker: version 3, SYSTEM64
      '6e 00', // Size 0x6E = 0x20 + 0x38 + 22
      '0a 03', // HookId 0x030A (WMI_LOG_TYPE_PROCESS_LOAD_IMAGE)
      '10 00 00 00', // header ThreadId 16 (not read)
      '30 12 00 00', // header ProcessId 0x1230 (not read)
      'e8 03 00 00 00 00 00 00', // timestamp 1000
      '00 00 00 00 00 00 00 00', // KernelTime, UserTime
      '00 00 d0 45 fb 7f 00 00', // 0x00 ImageBase 0x7FFB45D00000
      '00 80 1f 00 00 00 00 00', // 0x08 ImageSize 0x1F8000 = 2064384
      '34 12 00 00', // 0x10 ProcessId 0x1234 = 4660
      '6c 9a 1f 00', // 0x14 ImageChecksum 0x1F9A6C = 2071148
      '1b 3a 9d 5e', // 0x18 TimeDateStamp 0x5E9D3A1B = 1587362331
      '0c', // 0x1C SignatureLevel 12
      '01', // 0x1D SignatureType 1
      'aa aa', // 0x1E Reserved0
      'f0 de bc 9a 78 56 34 12', // 0x20 DefaultBase 0x123456789ABCDEF0
      'bb'.repeat(16), // 0x28 Reserved1-4 (ignored)
      utf16z('\\ntdll.dll'), // 0x38 FileName
    );
    const dcStart = hexBytes(
      '02 00 11 c0', // marker: version 2, PERFINFO64
      '5a 00', // Size 0x5A = 0x10 + 0x38 + 18
      '03 14', // HookId 0x1403 (DCStart)
      'e9 03 00 00 00 00 00 00', // timestamp 1001
      '00 00 00 40 02 f8 ff ff', // 0x00 ImageBase 0xFFFFF80240000000
      '00 60 ab 00 00 00 00 00', // 0x08 ImageSize 0xAB6000 = 11231232
      '00 00 00 00', // 0x10 ProcessId 0
      'ff ff ff ff', // 0x14 ImageChecksum 2^32 - 1
      '00 00 00 00', // 0x18 TimeDateStamp 0
      'ff ff ff ff', // 0x1C Reserved0 (v2: no SignatureLevel/SignatureType)
      '00 00 00 40 02 f8 ff ff', // 0x20 DefaultBase
      '00'.repeat(16), // 0x28 Reserved1-4
      utf16z('C:\\\u00e9.sys'), // 0x38 FileName with é (U+00E9)
    );
    const r = decode(trace([load, dcStart]), engine);
    expect(r.summary.diagnostics['imageEventsDecoded']).toBe(2);
    expect(r.imageEvents.length).toBe(2);
    expect(r.imageEvents.get(0)).toEqual(imageRow(r, {
      timestamp: 1000n, cpu: 1, opcode: 10, processId: 4660, imageBase: 140717184778240n, imageSize: 2064384n, imageChecksum: 2071148,
      timeDateStamp: 1587362331, signatureLevel: 12, signatureType: 1, defaultBase: 1311768467463790320n, fileName: '\\ntdll.dll',
      pointerSize: 8, version: 3, fileOffset: 0x448,
    }));
    expect(r.imageEvents.get(1)).toEqual(imageRow(r, {
      timestamp: 1001n, cpu: 1, opcode: 3, processId: 0, imageBase: 18446735287280205824n, imageSize: 11231232n, imageChecksum: 4294967295,
      timeDateStamp: 0, signatureLevel: null, signatureType: null, defaultBase: 18446735287280205824n, fileName: 'C:\\\u00e9.sys',
      pointerSize: 8, version: 2, fileOffset: 0x448 + 0x70, // align8(0x6E)
    }));
  });

  test('Image v3 Unload (0x1402, SYSTEM32) and v2 DCEnd (0x1404, PERFINFO32), x86 layout: FileName at 0x2C; a payload that ends there has none', () => {
    const unload = hexBytes(
      '03 00 01 c0', // marker: version 3, SYSTEM32
      '58 00', // Size 0x58 = 0x20 + 0x2C + 12
      '02 14', // HookId 0x1402 (Unload)
      '10 00 00 00', '30 12 00 00', // header ThreadId, ProcessId (not read)
      '05 00 00 00 00 00 00 00', // timestamp 5
      '00 00 00 00 00 00 00 00', // KernelTime, UserTime
      '00 00 40 00', // 0x00 ImageBase 0x400000 = 4194304
      '00 d0 05 00', // 0x04 ImageSize 0x5D000 = 380928
      '78 56 00 00', // 0x08 ProcessId 0x5678 = 22136
      '01 00 00 00', // 0x0C ImageChecksum 1
      '02 00 00 00', // 0x10 TimeDateStamp 2
      '08', // 0x14 SignatureLevel 8
      '03', // 0x15 SignatureType 3
      '00 00', // 0x16 Reserved0
      '00 00 00 10', // 0x18 DefaultBase 0x10000000 = 268435456
      '00'.repeat(16), // 0x1C Reserved1-4
      utf16z('a.exe'), // 0x2C FileName
    );
    const dcEnd = hexBytes(
      '02 00 10 c0', // marker: version 2, PERFINFO32
      '3c 00', // Size 0x3C = 0x10 + 0x2C: no FileName
      '04 14', // HookId 0x1404 (DCEnd)
      '06 00 00 00 00 00 00 00', // timestamp 6
      'ff ff ff ff', // 0x00 ImageBase 0xFFFFFFFF
      '00 10 00 00', // 0x04 ImageSize 0x1000
      '04 00 00 00', // 0x08 ProcessId 4
      '00 00 00 00', '00 00 00 00', '00 00 00 00', // ImageChecksum, TimeDateStamp, Reserved0
      'ff ff ff ff', // 0x18 DefaultBase
      '00'.repeat(16), // 0x1C Reserved1-4
    );
    const r = decode(trace([unload, dcEnd], { pointerSize: 4 }), engine);
    expect(r.imageEvents.get(0)).toEqual(imageRow(r, {
      timestamp: 5n, cpu: 1, opcode: 2, processId: 22136, imageBase: 4194304n, imageSize: 380928n, imageChecksum: 1, timeDateStamp: 2,
      signatureLevel: 8, signatureType: 3, defaultBase: 268435456n, fileName: 'a.exe', pointerSize: 4, version: 3, fileOffset: 0x448,
    }));
    expect(r.imageEvents.get(1)).toEqual(imageRow(r, {
      timestamp: 6n, cpu: 1, opcode: 4, processId: 4, imageBase: 4294967295n, imageSize: 4096n, imageChecksum: 0, timeDateStamp: 0,
      signatureLevel: null, signatureType: null, defaultBase: 4294967295n, fileName: null, pointerSize: 4, version: 2, fileOffset: 0x448 + 0x58,
    }));
  });

  test('Image: versions other than 2 and 3 are skipped and counted; a fixed part cut short is skipped with its size; an unterminated FileName is kept and counted', () => {
    const fixed64 = (version: number, size: number, hookId: string, tail: string): Uint8Array =>
      hexBytes(`0${version} 00 11 c0`, size.toString(16).padStart(2, '0') + ' 00', hookId, '07 00 00 00 00 00 00 00', '00'.repeat(0x38), tail);
    const v4 = fixed64(4, 0x10 + 0x38 + 2, '03 14', '00 00');
    const v1 = fixed64(1, 0x10 + 0x38 + 2, '03 14', '00 00');
    const short = hexBytes('03 00 11 c0', '47 00', '03 14', '07 00 00 00 00 00 00 00', '00'.repeat(0x37)); // 0x37 bytes: one short of 0x38
    const open = fixed64(3, 0x10 + 0x38 + 4, '04 14', '41 00 42 00'); // FileName "AB" without its terminator
    const r = decodeSync(trace([v4, v1, short, open]), { engine });
    expect(r.summary.diagnostics['imageEventsSkippedVersion']).toBe(2);
    expect(r.summary.diagnostics['imageEventsSkippedShort']).toBe(1);
    expect(r.summary.diagnostics['imageEventsDecoded']).toBe(1);
    expect(r.summary.diagnostics['stringUnterminated']).toBe(1);
    expect(r.summary.issues.map((i) => [i.counter, i.detail, i.fileOffset])).toEqual([
      ['imageEventsSkippedShort', 0x37, 0x448 + 0x50 + 0x50],
      ['stringUnterminated', 0x38, 0x448 + 0x50 + 0x50 + 0x48],
    ]);
    expect(r.imageEvents.length).toBe(1);
    expect(r.imageEvents.get(0)!.fileName).toBe('AB');
    expect(r.imageEvents.get(0)!.opcode).toBe(4);
  });
});

// ---------------------------------------------------------------------------------------------
// G.4: SampledProfileInterval (HookIds 0x0F48-0x0F4A), docs/format.md §G.4

describe.each(ENGINES)('%s engine: sample intervals (§G.4)', (engine) => {
  const row = (r: DecodeResult, x: Record<string, bigint | number | string | null>) => ({ ...x, valid: validMask(r.sampleIntervals.columnNames, x as Row) });

  test('v3 DCStart (0x0F49, SYSTEM64) as in perfview-net, v2 SetInterval (0x0F48, PERFINFO32), v3 DCEnd (0x0F4A) under SYSTEM32: the same layout for both pointer sizes', () => {
    const dcStart = hexBytes(
      '03 00 02 c0', // marker: version 3, SYSTEM64
      '38 00', // Size 0x38 = 0x20 + 0x0C + 12
      '49 0f', // HookId 0x0F49 (PERFINFO_LOG_TYPE_SAMPLED_PROFILE_DC_START)
      'ff ff ff ff', 'ff ff ff ff', // header ThreadId, ProcessId (not read)
      'e8 03 00 00 00 00 00 00', // timestamp 1000
      '00 00 00 00 00 00 00 00', // KernelTime, UserTime
      '00 00 00 00', // 0x00 Source 0 (ProfileTime)
      '10 27 00 00', // 0x04 NewInterval 10000 (1 ms)
      '10 27 00 00', // 0x08 OldInterval 10000
      utf16z('Timer'), // 0x0C SourceName
    );
    const setInterval = hexBytes(
      '02 00 10 c0', // marker: version 2, PERFINFO32
      '1c 00', // Size 0x1C = 0x10 + 0x0C
      '48 0f', // HookId 0x0F48 (SetInterval)
      'e9 03 00 00 00 00 00 00', // timestamp 1001
      '00 00 00 00', // Source 0
      '88 13 00 00', // NewInterval 5000 (0.5 ms)
      '10 27 00 00', // OldInterval 10000
    );
    const dcEnd = hexBytes(
      '03 00 01 c0', // marker: version 3, SYSTEM32
      '2e 00', // Size 0x2E = 0x20 + 0x0C + 2
      '4a 0f', // HookId 0x0F4A (DCEnd)
      '00 00 00 00', '00 00 00 00', // header ThreadId, ProcessId
      'ea 03 00 00 00 00 00 00', // timestamp 1002
      '00 00 00 00 00 00 00 00', // KernelTime, UserTime
      '02 00 00 00', // Source 2 (ProfileTotalIssues)
      'ff ff ff ff', // NewInterval 2^32 - 1
      '88 13 00 00', // OldInterval 5000
      '00 00', // SourceName '' (its terminator only)
    );
    const r = decode(trace([dcStart, setInterval, dcEnd], { pointerSize: 4 }), engine);
    expect(r.summary.diagnostics['sampleIntervalsDecoded']).toBe(3);
    expect(r.sampleIntervals.toArray()).toEqual([
      row(r, { timestamp: 1000n, cpu: 1, opcode: 73, source: 0, newInterval: 10000, oldInterval: 10000, sourceName: 'Timer', version: 3, fileOffset: 0x448 }),
      row(r, { timestamp: 1001n, cpu: 1, opcode: 72, source: 0, newInterval: 5000, oldInterval: 10000, sourceName: null, version: 2, fileOffset: 0x448 + 0x38 }),
      row(r, { timestamp: 1002n, cpu: 1, opcode: 74, source: 2, newInterval: 4294967295, oldInterval: 5000, sourceName: '', version: 3, fileOffset: 0x448 + 0x38 + 0x20 }),
    ]);
  });

  test('another version is skipped and counted; a payload shorter than 0x0C bytes is skipped with its size; v3 without a SourceName has it null', () => {
    const v4 = hexBytes('04 00 10 c0', '1c 00', '48 0f', '01 00 00 00 00 00 00 00', '00'.repeat(12));
    const short = hexBytes('02 00 10 c0', '18 00', '48 0f', '02 00 00 00 00 00 00 00', '00'.repeat(8)); // 8 bytes
    const bare = hexBytes('03 00 10 c0', '1c 00', '49 0f', '03 00 00 00 00 00 00 00', '00 00 00 00', '10 27 00 00', '10 27 00 00'); // v3, no name
    const r = decodeSync(trace([v4, short, bare], { pointerSize: 4 }), { engine });
    expect(r.summary.diagnostics['sampleIntervalsSkippedVersion']).toBe(1);
    expect(r.summary.diagnostics['sampleIntervalsSkippedShort']).toBe(1);
    expect(r.summary.issues.map((i) => [i.counter, i.detail, i.fileOffset])).toEqual([['sampleIntervalsSkippedShort', 8, 0x468]]);
    expect(r.sampleIntervals.toArray().map((x) => [x.opcode, x.newInterval, x.sourceName, x.version])).toEqual([[73, 10000, null, 3]]);
  });
});

// ---------------------------------------------------------------------------------------------
// H: StackWalk (HookId 0x1820) and stack-key events (0x1822-0x1826), docs/format.md §H.1

describe.each(ENGINES)('%s engine: stack events (§H.1)', (engine) => {
  test('x64 (PERFINFO64): a StackWalk with 3 frames, a StackKeyUser reference and the KeyRundown of its key', () => {
    const walk = hexBytes(
      '02 00 11 c0', // marker: version 2, PERFINFO64
      '38 00', // Size 0x38 = 0x10 + 0x10 + 3 × 8
      '20 18', // HookId 0x1820 (PERFINFO_LOG_TYPE_STACKWALK)
      'e8 03 00 00 00 00 00 00', // timestamp 1000
      'e7 03 00 00 00 00 00 00', // 0x00 EventTimeStamp 999
      '34 12 00 00', // 0x08 StackProcess 0x1234
      '78 56 00 00', // 0x0C StackThread 0x5678
      'd0 ff 66 42 02 f8 ff ff', // 0x10 Stack1 0xFFFFF8024266FFD0 (above 2^53: exact)
      '34 12 00 40 02 f8 ff ff', // 0x18 Stack2 0xFFFFF80240001234
      '00 10 d0 45 fb 7f 00 00', // 0x20 Stack3 0x7FFB45D01000
    );
    const ref = hexBytes(
      '02 00 11 c0', // marker: version 2, PERFINFO64
      '28 00', // Size 0x28 = 0x10 + 0x18
      '26 18', // HookId 0x1826 (PERFINFO_LOG_TYPE_STACKTRACE_KEY_USER)
      'e9 03 00 00 00 00 00 00', // timestamp 1001
      'e7 03 00 00 00 00 00 00', // 0x00 EventTimeStamp 999
      '34 12 00 00', // 0x08 StackProcess
      '78 56 00 00', // 0x0C StackThread
      '00 01 00 03 80 fa ff ff', // 0x10 StackKey 0xFFFFFA8003000100
    );
    const rundown = hexBytes(
      '02 00 11 c0', // marker: version 2, PERFINFO64
      '28 00', // Size 0x28 = 0x10 + 8 + 2 × 8
      '24 18', // HookId 0x1824 (PERFINFO_LOG_TYPE_STACKTRACE_RUNDOWN)
      'ea 03 00 00 00 00 00 00', // timestamp 1002
      '00 01 00 03 80 fa ff ff', // 0x00 StackKey 0xFFFFFA8003000100
      '00 10 d0 45 fb 7f 00 00', // 0x08 Stack1 0x7FFB45D01000
      '08 00 d0 45 fb 7f 00 00', // 0x10 Stack2 0x7FFB45D00008
    );
    const r = decode(trace([walk, ref, rundown]), engine);
    expect(r.summary.diagnostics['stackEventsDecoded']).toBe(3);
    const key = 18446738026445930752n;
    const row = (o: Row): Row => ({ ...o, valid: validMask(r.stackEvents.columnNames, o) });
    expectRows(r.stackEvents, [
      row({ timestamp: 1000n, cpu: 1, opcode: 32, eventTimestamp: 999n, processId: 4660, threadId: 22136, stackKey: null, frameCount: 3, pointerSize: 8, version: 2, fileOffset: 0x448 }),
      row({ timestamp: 1001n, cpu: 1, opcode: 38, eventTimestamp: 999n, processId: 4660, threadId: 22136, stackKey: key, frameCount: 0, pointerSize: 8, version: 2, fileOffset: 0x480 }),
      row({ timestamp: 1002n, cpu: 1, opcode: 36, eventTimestamp: null, processId: null, threadId: null, stackKey: key, frameCount: 2, pointerSize: 8, version: 2, fileOffset: 0x4a8 }),
    ]);
    expectRows(r.stackEventFrames, [
      { timestamp: 1000n, depth: 0, address: 18446735287320510416n },
      { timestamp: 1000n, depth: 1, address: 18446735287280210484n },
      { timestamp: 1000n, depth: 2, address: 140717184782336n },
      { timestamp: 1002n, depth: 0, address: 140717184782336n },
      { timestamp: 1002n, depth: 1, address: 140717184778248n },
    ]);
  });

  test('x86 (PERFINFO32): 32-bit frames and keys; a payload that is not whole pointers keeps its whole ones', () => {
    const walk = hexBytes(
      '02 00 10 c0', // marker: version 2, PERFINFO32
      '2b 00', // Size 0x2B = 0x10 + 0x10 + 2 × 4 + 3 stray bytes
      '20 18', // HookId 0x1820
      '11 00 00 00 00 00 00 00', // timestamp 17
      '10 00 00 00 00 00 00 00', // 0x00 EventTimeStamp 16
      '04 00 00 00', // 0x08 StackProcess 4
      '08 00 00 00', // 0x0C StackThread 8
      'd0 ff 66 82', // 0x10 Stack1 0x8266FFD0
      '00 10 40 77', // 0x14 Stack2 0x77401000
      'aa bb cc', // not a whole pointer: ignored
      '00 00 00 00 00', // padding to the next 8-byte boundary (not in Size)
    );
    const del = hexBytes(
      '02 00 10 c0', // marker: version 2, PERFINFO32
      '18 00', // Size 0x18 = 0x10 + 4 + 4
      '23 18', // HookId 0x1823 (PERFINFO_LOG_TYPE_STACKTRACE_DELETE)
      '12 00 00 00 00 00 00 00', // timestamp 18
      '00 01 00 83', // 0x00 StackKey 0x83000100
      '34 12 40 82', // 0x04 Stack1 0x82401234
    );
    const ref = hexBytes(
      '02 00 10 c0', // marker: version 2, PERFINFO32
      '24 00', // Size 0x24 = 0x10 + 0x14
      '25 18', // HookId 0x1825 (PERFINFO_LOG_TYPE_STACKTRACE_KEY_KERNEL)
      '13 00 00 00 00 00 00 00', // timestamp 19
      'ff ff ff ff ff ff ff 7f', // 0x00 EventTimeStamp 2^63 - 1
      'ff ff ff ff', // 0x08 StackProcess 2^32 - 1
      '00 00 00 00', // 0x0C StackThread 0
      '00 01 00 83', // 0x10 StackKey 0x83000100
    );
    const r = decode(trace([walk, del, ref], { pointerSize: 4 }), engine);
    const row = (o: Row): Row => ({ ...o, valid: validMask(r.stackEvents.columnNames, o) });
    expectRows(r.stackEvents, [
      row({ timestamp: 17n, cpu: 1, opcode: 32, eventTimestamp: 16n, processId: 4, threadId: 8, stackKey: null, frameCount: 2, pointerSize: 4, version: 2, fileOffset: 0x448 }),
      row({ timestamp: 18n, cpu: 1, opcode: 35, eventTimestamp: null, processId: null, threadId: null, stackKey: 0x83000100n, frameCount: 1, pointerSize: 4, version: 2, fileOffset: 0x478 }), // 0x448 + align8(0x2B)
      row({ timestamp: 19n, cpu: 1, opcode: 37, eventTimestamp: 9223372036854775807n, processId: 4294967295, threadId: 0, stackKey: 0x83000100n, frameCount: 0, pointerSize: 4, version: 2, fileOffset: 0x490 }),
    ]);
    expectRows(r.stackEventFrames, [
      { timestamp: 17n, depth: 0, address: 0x8266ffd0n },
      { timestamp: 17n, depth: 1, address: 0x77401000n },
      { timestamp: 18n, depth: 0, address: 0x82401234n },
    ]);
  });

  test('another version is skipped and counted; payloads shorter than the fixed part are skipped with their size', () => {
    const v1 = hexBytes('01 00 11 c0', '20 00', '20 18', '01 00 00 00 00 00 00 00', '00'.repeat(16)); // StackWalk version 1
    const shortWalk = hexBytes('02 00 11 c0', '1c 00', '20 18', '02 00 00 00 00 00 00 00', '00'.repeat(12)); // 0x0C < 0x10
    const shortRef = hexBytes('02 00 11 c0', '24 00', '26 18', '03 00 00 00 00 00 00 00', '00'.repeat(20)); // x64 reference of 0x14 < 0x18
    const shortDef = hexBytes('02 00 11 c0', '14 00', '24 18', '04 00 00 00 00 00 00 00', '00'.repeat(4)); // x64 definition of 4 < 8
    const emptyWalk = hexBytes('02 00 11 c0', '20 00', '20 18', '05 00 00 00 00 00 00 00', '00'.repeat(16)); // 0x10: no frames, decoded
    const r = decodeSync(trace([v1, shortWalk, shortRef, shortDef, emptyWalk]), { engine });
    const d = r.summary.diagnostics;
    expect([d['stackEventsDecoded'], d['stackEventsSkippedVersion'], d['stackEventsSkippedShort']]).toEqual([1, 1, 3]);
    expect(r.summary.issues.map((i) => [i.counter, i.detail, i.fileOffset])).toEqual([
      ['stackEventsSkippedShort', 12, 0x468],
      ['stackEventsSkippedShort', 20, 0x488],
      ['stackEventsSkippedShort', 4, 0x4b0],
    ]);
    expect(r.stackEvents.length).toBe(1);
    expect(r.stackEvents.get(0).frameCount).toBe(0);
    expect(r.stackEventFrames.length).toBe(0);
  });
});
