// Buffers are decoded in SequenceNumber order, not in file order (format-spec A.7): per processor that is time
// order, which compact batches need to chain switches (D.8) and which every table promises per CPU. Each trace
// here stores one processor's buffers out of SequenceNumber order; the rows must be the switches the trace
// describes, in SequenceNumber order — with both engines, in memory and from a file read in small windows.
import { afterAll, describe, expect, test } from 'vitest';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { decodeFile, decodeSync, type DecodeResult } from '../src/node.js';
import { writeTrace, type CompactSwitchSpec, type EventSpec, type SpinLockSpec } from '../src/writer/index.js';
import { ByteWriter, compactPayload, concatBytes, HOOK, HT, kernelEvent, minimalTrace, packetBytes, type PacketSpec } from './helpers/bytes.js';
import { splitBuffers } from './helpers/reader.js';

const ENGINES = ['wasm', 'reference'] as const;
type EngineName = (typeof ENGINES)[number];

const dir = mkdtempSync(join(tmpdir(), 'etw-order-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let files = 0;

/** [timestamp, oldThreadId, newThreadId] of the cswitch rows of one CPU, in output order */
type Switch = [bigint, number, number | null];
/** [timestamp, threadId] of the spinlock rows of one CPU */
type Spin = [bigint, number];

function switchesOf(r: DecodeResult, cpu: number): Switch[] {
  const out: Switch[] = [];
  for (const row of r.cswitch) if (row.cpu === cpu) out.push([row.timestamp, row.oldThreadId, row.newThreadId]);
  return out;
}
function spinsOf(r: DecodeResult, cpu: number): Spin[] {
  const out: Spin[] = [];
  for (const row of r.spinlock) if (row.cpu === cpu) out.push([row.timestamp, row.threadId]);
  return out;
}

/** Equal sequences; on a difference, says where it starts and how many rows differ (not a 10 000-row diff). */
function expectSameRows<T extends unknown[]>(got: T[], want: T[], label: string): void {
  const same = (a: T, b: T) => a.length === b.length && a.every((x, i) => x === b[i]);
  let first = -1;
  let differing = 0;
  for (let i = 0; i < Math.max(got.length, want.length); i++) {
    if (i < got.length && i < want.length && same(got[i]!, want[i]!)) continue;
    differing++;
    if (first < 0) first = i;
  }
  if (first >= 0) {
    const show = (x: T | undefined) => (x ? `[${x.map(String).join(', ')}]` : 'none');
    expect.fail(
      `${label}: ${differing} of ${want.length} rows differ (${got.length} decoded); first at row ${first}: got ${show(got[first])}, expected ${show(want[first])}`,
    );
  }
}

/** All the ways a trace is decoded here: in memory (default and 4 KiB windows) and from a file in small windows. */
async function decodeAllWays(bytes: Uint8Array, engine: EngineName, windows: number[]): Promise<[string, DecodeResult][]> {
  const path = join(dir, `t${files++}.etl`);
  writeFileSync(path, bytes);
  const out: [string, DecodeResult][] = [
    ['decodeSync', decodeSync(bytes, { engine })],
    ['decodeSync windowBytes 0x1000', decodeSync(bytes, { engine, windowBytes: 0x1000 })],
  ];
  for (const w of windows) out.push([`decodeFile windowBytes 0x${w.toString(16)}`, await decodeFile(path, { engine, windowBytes: w })]);
  return out;
}

/** file order of the SequenceNumbers of one CPU's buffers (checked with the independent reader) */
function fileOrderOf(bytes: Uint8Array, cpu: number): bigint[] {
  const { buffers, end } = splitBuffers(bytes);
  expect(end).toBe(bytes.length);
  return buffers.filter((b) => b.type !== 4 && b.processor === cpu).map((b) => b.sequenceNumber);
}
const isSorted = (xs: bigint[]) => xs.every((x, i) => i === 0 || xs[i - 1]! < x);

// ---------------------------------------------------------------------------------------------
// hand-framed traces (test/helpers/bytes.ts): one compact batch and one SpinLock per buffer

/** WMI_SPINLOCK x64 (E.2) with only ThreadId set */
function spinlockData(threadId: number): Uint8Array {
  return new ByteWriter().fill(0x28, 0).u32(threadId).fill(0x38 - 0x2c, 0).done();
}

/** a data buffer: a compact batch (FirstTimeStamp `first`, one thread `tid` in TidTable[0]) and a SpinLock after it */
function batchBuffer(cpu: number, sequenceNumber: bigint | number, first: bigint, tid: number, packets: Partial<PacketSpec>[], spinTs: bigint) {
  const batch = kernelEvent(HT.PERFINFO64, { version: 2, hookId: HOOK.COMPCS, timestamp: spinTs - 1n }, compactPayload(first, [tid], [8], packetBytes(packets)));
  const spin = kernelEvent(HT.PERFINFO64, { version: 2, hookId: HOOK.SPINLOCK, timestamp: spinTs }, spinlockData(tid));
  return { cpu, sequenceNumber, events: [batch, spin] };
}

const lite = (delta: number, stateWr = 5): Partial<PacketSpec> => ({ type: 2, index: 0, inc: 0, stateWr, delta });

describe.each(ENGINES)('%s engine', (engine) => {
  test('one CPU, buffers in file order 3, 1, 2: switches chain in SequenceNumber order', async () => {
    const bytes = minimalTrace({
      numberOfProcessors: 1,
      bufferSize: 0x1000, // windowBytes 0x1000: one buffer per window
      buffers: [
        // SequenceNumber 3: FULL, thread 300, StateWr 41, priority 9, wait 2, delta 5 → 1205
        batchBuffer(0, 3, 1200n, 300, [{ type: 3, index: 0, stateWr: 41, priority: 9, wait: 2, delta: 5 }], 1206n),
        // SequenceNumber 1: LITE thread 100 at 1000, IDLE_SHORT at 1010
        batchBuffer(0, 1, 1000n, 100, [lite(0), { type: 0, delta: 10 }], 1011n),
        // SequenceNumber 2: LITE thread 200 at 1100
        batchBuffer(0, 2, 1100n, 200, [lite(0)], 1101n),
      ],
    }).bytes;
    expect(fileOrderOf(bytes, 0)).toEqual([3n, 1n, 2n]);
    for (const [how, r] of await decodeAllWays(bytes, engine, [0x1000, 0x2000])) {
      expectSameRows(switchesOf(r, 0), [
        [1000n, 100, 0],
        [1010n, 0, 200],
        [1100n, 200, 300],
        [1205n, 300, null],
      ], `${how} cswitch`);
      expectSameRows(spinsOf(r, 0), [[1011n, 100], [1101n, 200], [1206n, 300]], `${how} spinlock`);
      expect(r.summary.diagnostics['compactTimeMismatch'], how).toBe(0);
      expect(r.summary.diagnostics['compactNewThreadUnknown'], how).toBe(1);
      expect(r.summary.issues, how).toEqual([]);
    }
  });

  test('two CPUs interleaved, file order 5, 2, 1, 6, 3, 4: each CPU chains in its own SequenceNumber order', async () => {
    // CPU 0: SequenceNumbers 1, 3, 5 (threads 10, 11, 12 at 2000, 2100, 2200); CPU 1: 2, 4, 6 (20, 21, 22 at 2050, 2150, 2250)
    const buf = (seq: number) => {
      const cpu = (seq + 1) % 2;
      const k = (seq - 1) >> 1;
      const first = 2000n + 50n * BigInt(cpu) + 100n * BigInt(k);
      return batchBuffer(cpu, seq, first, 10 * (cpu + 1) + k, [lite(0)], first + 10n);
    };
    const bytes = minimalTrace({ numberOfProcessors: 2, bufferSize: 0x1000, buffers: [5, 2, 1, 6, 3, 4].map(buf) }).bytes;
    expect(fileOrderOf(bytes, 0)).toEqual([5n, 1n, 3n]);
    expect(fileOrderOf(bytes, 1)).toEqual([2n, 6n, 4n]);
    for (const [how, r] of await decodeAllWays(bytes, engine, [0x1000, 0x3000])) {
      expectSameRows(switchesOf(r, 0), [[2000n, 10, 11], [2100n, 11, 12], [2200n, 12, null]], `${how} cpu 0`);
      expectSameRows(switchesOf(r, 1), [[2050n, 20, 21], [2150n, 21, 22], [2250n, 22, null]], `${how} cpu 1`);
      expectSameRows(spinsOf(r, 0), [[2010n, 10], [2110n, 11], [2210n, 12]], `${how} spinlock cpu 0`);
      expectSameRows(spinsOf(r, 1), [[2060n, 20], [2160n, 21], [2260n, 22]], `${how} spinlock cpu 1`);
      expect(r.summary.diagnostics['compactTimeMismatch'], how).toBe(0);
    }
  });

  test('SequenceNumbers are compared as 64-bit numbers: 0xFFFFFFFF < 0x1_00000001 < 0x1_00000002', async () => {
    const bytes = minimalTrace({
      numberOfProcessors: 1,
      bufferSize: 0x1000,
      buffers: [
        batchBuffer(0, 0x1_0000_0002n, 3200n, 32, [lite(0)], 3210n),
        batchBuffer(0, 0xffff_ffffn, 3000n, 30, [lite(0)], 3010n),
        batchBuffer(0, 0x1_0000_0001n, 3100n, 31, [lite(0)], 3110n),
      ],
    }).bytes;
    for (const [how, r] of await decodeAllWays(bytes, engine, [0x1000])) {
      expectSameRows(switchesOf(r, 0), [[3000n, 30, 31], [3100n, 31, 32], [3200n, 32, null]], how);
      expectSameRows(spinsOf(r, 0), [[3010n, 30], [3110n, 31], [3210n, 32]], `${how} spinlock`);
    }
  });
});

// ---------------------------------------------------------------------------------------------
// traces from the writer, written in SequenceNumber order and then shuffled buffer by buffer

/** Compact switches (all four packet kinds) and SpinLocks on `cpus` processors, strictly increasing times per CPU. */
function description(cpus: number, perCpu: number): { events: EventSpec[]; switches: CompactSwitchSpec[][]; spins: SpinLockSpec[][] } {
  let s = 12345;
  const rnd = (n: number): number => {
    s = (Math.imul(s, 1103515245) + 12345) >>> 0;
    return (s >>> 8) % n;
  };
  const events: EventSpec[] = [];
  const switches: CompactSwitchSpec[][] = [];
  const spins: SpinLockSpec[][] = [];
  for (let cpu = 0; cpu < cpus; cpu++) {
    const sw: CompactSwitchSpec[] = [];
    const sp: SpinLockSpec[] = [];
    let t = 2_000_000n + BigInt(cpu);
    for (let i = 0; i < perCpu; i++) {
      t += BigInt(1 + (rnd(10) === 0 ? rnd(200_000) : rnd(3000))); // short deltas, some long ones (IDLE / FULL)
      if (rnd(12) === 0) {
        sp.push({
          kind: 'spinlock', cpu, timestamp: t, spinLockAddress: 0xfffff80000001000n, callerAddress: 0xfffff80000002000n,
          acquireTime: 1n, releaseTime: 2n, waitTimeInCycles: 0, spinCount: 0, threadId: 100_000 + i, interruptCount: 0,
          irql: 2, acquireDepth: 1, acquireMode: 0, executeDpc: false, executeIsr: false,
        });
        continue;
      }
      const oldThreadId = rnd(5) === 0 ? 0 : 4 * (1 + rnd(40));
      const base = 8;
      sw.push({
        kind: 'compactSwitch', cpu, timestamp: t, oldThreadId, oldThreadBasePriority: base, oldThreadPriority: base + rnd(9),
        oldThreadState: 5, oldThreadWaitReason: rnd(30), newThreadWaitTime: rnd(3) === 0 ? 0 : rnd(1000),
      });
    }
    switches.push(sw);
    spins.push(sp);
    events.push(...sw, ...sp);
  }
  return { events, switches, spins };
}

/** The header buffer first, then the data buffers in the order `order` gives (indices into the data buffers). */
function reorder(bytes: Uint8Array, order: (n: number) => number[]): Uint8Array {
  const { buffers, end } = splitBuffers(bytes);
  expect(end).toBe(bytes.length);
  const [header, ...data] = buffers;
  const perm = order(data.length);
  expect([...perm].sort((a, b) => a - b)).toEqual(data.map((_, i) => i));
  return concatBytes(header!.raw, ...perm.map((i) => data[i]!.raw));
}

const reversed = (n: number) => Array.from({ length: n }, (_, i) => n - 1 - i);
/** a fixed shuffle (Fisher-Yates with a small LCG) */
const shuffled = (n: number) => {
  const a = Array.from({ length: n }, (_, i) => i);
  let s = 99;
  for (let i = n - 1; i > 0; i--) {
    s = (Math.imul(s, 1103515245) + 12345) >>> 0;
    const j = (s >>> 8) % (i + 1);
    [a[i], a[j]] = [a[j]!, a[i]!];
  }
  return a;
};

describe.each(ENGINES)('%s engine, writer traces with shuffled buffers', (engine) => {
  test.each([
    ['one CPU, buffers reversed', 1, reversed],
    ['one CPU, buffers shuffled', 1, shuffled],
    ['three CPUs, buffers shuffled', 3, shuffled],
  ] as const)('%s: every switch and SpinLock in SequenceNumber order', async (_label, cpus, order) => {
    const d = description(cpus, 4000);
    const written = writeTrace({ numberOfProcessors: cpus, bufferSize: 0x1000, outOfOrder: false, events: d.events });
    const kinds = new Set(written.compactPackets.map((k) => k.kind));
    expect([...kinds].sort()).toEqual(['FULL', 'IDLE', 'IDLE_SHORT', 'LITE']);
    const bytes = reorder(written.bytes, order);
    for (let cpu = 0; cpu < cpus; cpu++) {
      const seqs = fileOrderOf(bytes, cpu);
      expect(seqs.length).toBeGreaterThan(4);
      expect(isSorted(seqs)).toBe(false);
    }
    for (const [how, r] of await decodeAllWays(bytes, engine, [0x1000, 0x3000])) {
      for (let cpu = 0; cpu < cpus; cpu++) {
        const sw = d.switches[cpu]!;
        const want: Switch[] = sw.map((s, i) => [s.timestamp, s.oldThreadId, i + 1 < sw.length ? sw[i + 1]!.oldThreadId : null]);
        expectSameRows(switchesOf(r, cpu), want, `${how} cpu ${cpu} cswitch`);
        expectSameRows(spinsOf(r, cpu), d.spins[cpu]!.map((s): Spin => [s.timestamp, s.threadId]), `${how} cpu ${cpu} spinlock`);
      }
      expect(r.summary.diagnostics['compactTimeMismatch'], how).toBe(0);
      expect(r.summary.diagnostics['compactNewThreadUnknown'], how).toBe(cpus);
    }
  });
});
