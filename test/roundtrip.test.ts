// Writer → decoder round trips: every CSwitch version, both SpinLock layouts, both pointer sizes,
// compact batches for several builds and processor counts, compressed buffers — both engines.
import { describe, expect, test } from 'vitest';
import { decodeSync, type CSwitchRow, type DecodeResult } from '../src/node.js';
import { writeTrace, Rng, randomNoiseEvents, type CSwitchSpec, type SpinLockSpec, type CompactSwitchSpec } from '../src/writer/index.js';
import * as L from '../src/generated/layout.js';

const ENGINES = ['wasm', 'reference'] as const;

function byCpuThenTime<T extends { cpu: number; timestamp: bigint }>(rows: T[]): T[] {
  return rows
    .map((r, i) => ({ r, i }))
    .sort((a, b) => a.r.cpu - b.r.cpu || (a.r.timestamp < b.r.timestamp ? -1 : a.r.timestamp > b.r.timestamp ? 1 : a.i - b.i))
    .map((x) => x.r);
}

function cswitchSpecs(rng: Rng, n: number, version: 1 | 2 | 3 | 4, cpus: number, header: 'PERFINFO32' | 'PERFINFO64'): CSwitchSpec[] {
  const out: CSwitchSpec[] = [];
  let t = 2_000_000n;
  for (let i = 0; i < n; i++) {
    t += BigInt(rng.int(0, 5000));
    out.push({
      kind: 'cswitch',
      cpu: rng.int(0, cpus - 1),
      timestamp: t,
      version,
      header,
      newThreadId: rng.next(),
      oldThreadId: rng.next(),
      newThreadPriority: rng.int(-128, 127),
      oldThreadPriority: rng.int(-128, 127),
      previousCState: rng.int(0, 255),
      newThreadPriorityDecrement: rng.int(-128, 127),
      oldThreadWaitReason: rng.int(0, 255),
      oldThreadWaitMode: rng.int(0, 255),
      oldThreadState: rng.int(0, 255),
      oldThreadIdealProcessor: rng.int(0, 255),
      newThreadWaitTime: version === 1 ? undefined : rng.next(),
      oldThreadRemainingQuantum: version === 1 ? undefined : rng.next() | 0,
      pebsIndex: rng.int(0, 3) === 0 ? rng.bigint64() : undefined,
      pmcCounters: rng.int(0, 3) === 0 ? [rng.bigint64(), rng.bigint64()] : undefined,
    });
  }
  return out;
}

function expectCSwitch(row: CSwitchRow, s: CSwitchSpec): void {
  const v = s.version;
  const b = s.oldThreadWaitMode;
  const i8 = (x: number) => (x << 24) >> 24;
  expect(row).toMatchObject({
    timestamp: s.timestamp,
    cpu: s.cpu,
    newThreadId: s.newThreadId >>> 0,
    oldThreadId: s.oldThreadId >>> 0,
    newThreadPriority: i8(s.newThreadPriority),
    oldThreadPriority: i8(s.oldThreadPriority),
    previousCState: v === 1 ? null : s.previousCState,
    newThreadPriorityDecrement: v === 1 ? null : i8(s.newThreadPriorityDecrement),
    newThreadQuantum: v === 1 ? i8(s.previousCState) : null,
    oldThreadQuantum: v === 1 ? i8(s.newThreadPriorityDecrement) : null,
    oldThreadWaitReason: s.oldThreadWaitReason,
    oldThreadWaitMode: v <= 2 ? b : b & 1,
    threadFlags: v >= 3 ? b : null,
    oldThreadBamEppImportant: v === 3 ? (b >> 1) & 1 : null,
    newThreadBamEppImportant: v === 3 ? (b >> 2) & 1 : null,
    oldThreadBamQosLevel: v === 4 ? (b >> 1) & 7 : null,
    newThreadBamQosLevel: v === 4 ? (b >> 4) & 7 : null,
    oldThreadState: s.oldThreadState,
    oldThreadIdealProcessor: s.oldThreadIdealProcessor,
    newThreadWaitTime: v === 1 ? null : s.newThreadWaitTime! >>> 0,
    oldThreadRemainingQuantum: v === 1 ? null : s.oldThreadRemainingQuantum! | 0,
    newThreadWaitTimeAtMostOneTick: 0,
    source: L.CS_SOURCE_CSWITCH,
    version: v,
  });
}

describe.each(ENGINES)('%s engine', (engine) => {
  describe.each([4, 8] as const)('pointer size %d', (pointerSize) => {
    test.each([1, 2, 3, 4] as const)('CSwitch v%d', (version) => {
      const rng = new Rng(version * 31 + pointerSize);
      const header = pointerSize === 4 ? 'PERFINFO32' : 'PERFINFO64';
      const specs = cswitchSpecs(rng, 3000, version, 4, header);
      const noise = randomNoiseEvents(rng, 500, { cpus: 4, startTimestamp: 2_000_000n, pointerSize });
      const trace = writeTrace({ pointerSize, numberOfProcessors: 4, bufferSize: 0x4000, events: [...specs, ...noise] });
      const res = decodeSync(trace.bytes, { engine });
      expect(res.summary.diagnostics['cswitchDecoded']).toBe(specs.length);
      expect(res.summary.events).toBe(trace.events);
      expect(res.summary.buffers).toBe(trace.buffers.length);
      expect(res.summary.issues).toEqual([]);
      const rows = byCpuThenTime(res.cswitch.toArray());
      const want = byCpuThenTime(specs);
      expect(rows.length).toBe(want.length);
      rows.forEach((r, i) => expectCSwitch(r, want[i]!));
      expect(res.info!.pointerSize).toBe(pointerSize);
    });

    test('SpinLock', () => {
      const rng = new Rng(77 + pointerSize);
      const header = pointerSize === 4 ? 'PERFINFO32' : 'PERFINFO64';
      const mask = pointerSize === 4 ? 0xffffffffn : 0xffffffffffffffffn;
      const specs: SpinLockSpec[] = [];
      let t = 5_000_000n;
      for (let i = 0; i < 2000; i++) {
        t += BigInt(rng.int(1, 999));
        specs.push({
          kind: 'spinlock',
          cpu: rng.int(0, 2),
          timestamp: t,
          header,
          spinLockAddress: BigInt.asUintN(64, rng.bigint64()) & mask,
          callerAddress: BigInt.asUintN(64, rng.bigint64()) & mask,
          acquireTime: BigInt.asUintN(64, rng.bigint64()),
          releaseTime: BigInt.asUintN(64, rng.bigint64()),
          waitTimeInCycles: rng.next(),
          spinCount: rng.next(),
          threadId: rng.next(),
          interruptCount: rng.next(),
          irql: rng.int(0, 255),
          acquireDepth: rng.int(0, 255),
          acquireMode: rng.int(0, 63),
          executeDpc: rng.int(0, 1) === 1,
          executeIsr: rng.int(0, 1) === 1,
        });
      }
      const trace = writeTrace({ pointerSize, numberOfProcessors: 3, bufferSize: 0x2000, events: specs });
      const res = decodeSync(trace.bytes, { engine });
      expect(res.summary.spinlock).toBe(specs.length);
      const rows = byCpuThenTime(res.spinlock.toArray());
      const want = byCpuThenTime(specs);
      rows.forEach((r, i) => {
        const s = want[i]!;
        expect(r).toMatchObject({
          timestamp: s.timestamp,
          cpu: s.cpu,
          spinLockAddress: s.spinLockAddress,
          callerAddress: s.callerAddress,
          acquireTime: s.acquireTime,
          releaseTime: s.releaseTime,
          waitTimeInCycles: s.waitTimeInCycles >>> 0,
          spinCount: s.spinCount >>> 0,
          threadId: s.threadId >>> 0,
          interruptCount: s.interruptCount >>> 0,
          irql: s.irql,
          acquireDepth: s.acquireDepth,
          acquireMode: s.acquireMode,
          executeDpc: s.executeDpc ? 1 : 0,
          executeIsr: s.executeIsr ? 1 : 0,
          pointerSize,
          version: 2,
        });
      });
    });
  });

  // Compact batches: builds with different MaximumWaitReason, several processor counts, compressed or not.
  test.each([
    [14393, 2, false],
    [19041, 4, false],
    [22631, 3, true],
    [26100, 1, false],
  ] as const)('compact switches, build %d, %d CPUs, compressed %s', (build, cpus, compress) => {
    const rng = new Rng(build + cpus);
    const bias = L.maxWaitReasonForBuild(build);
    const specs: CompactSwitchSpec[] = [];
    const threads = Array.from({ length: 40 }, (_, i) => (i === 0 ? 0 : 1000 + i * 4));
    for (let cpu = 0; cpu < cpus; cpu++) {
      let t = 3_000_000n + BigInt(cpu);
      for (let i = 0; i < 4000; i++) {
        const r = rng.int(0, 99);
        // deltas: mostly short, some long (forcing IDLE / FULL and 30-bit overflow flushes)
        t += BigInt(r < 70 ? rng.int(0, 3000) : r < 95 ? rng.int(3000, 200_000) : r < 99 ? rng.int(200_000, 50_000_000) : 2 ** 30 + rng.int(0, 1000));
        const oldThreadId = rng.pick(threads);
        const base = rng.int(1, 15);
        const waiting = rng.int(0, 2) === 0;
        specs.push({
          kind: 'compactSwitch',
          cpu,
          timestamp: t,
          oldThreadId,
          oldThreadBasePriority: base,
          oldThreadPriority: Math.min(31, base + rng.int(0, 9)),
          oldThreadState: waiting ? 5 : rng.pick([0, 1, 2, 3, 4, 6, 7, 8, 9]),
          oldThreadWaitReason: waiting ? rng.int(0, bias - 1) : 0,
          newThreadWaitTime: rng.int(0, 3) === 0 ? rng.int(0, 1) : rng.int(0, 300_000),
        });
      }
    }
    const noise = randomNoiseEvents(rng, 800, { cpus, startTimestamp: 3_000_000n, pointerSize: 8 });
    const trace = writeTrace({ build, numberOfProcessors: cpus, compress, bufferSize: 0x8000, events: [...specs, ...noise] });
    const res: DecodeResult = decodeSync(trace.bytes, { engine });
    const s = res.summary;
    expect(s.bias).toMatchObject({ value: bias, source: 'build' });
    expect(s.compact.batches).toBe(trace.compactBatches);
    expect(s.diagnostics['compactStateOutOfRange']).toBe(0);
    expect(s.diagnostics['compactBadTidIndex']).toBe(0);
    expect(s.diagnostics['compactTimeMismatch']).toBe(0);
    expect(s.diagnostics['compactTruncatedPacket']).toBe(0);
    expect(s.diagnostics['compactNewThreadUnknown']).toBe(cpus);
    expect(s.issues).toEqual([]);
    if (compress) expect(s.diagnostics['buffersCompressed']).toBe(trace.buffers.filter((b) => b.compressed).length);
    const kinds = { IDLE_SHORT: 0, IDLE: 0, LITE: 0, FULL: 0 };
    for (const p of trace.compactPackets) kinds[p.kind]++;
    expect(s.compact.packets).toEqual({ idleShort: kinds.IDLE_SHORT, idle: kinds.IDLE, lite: kinds.LITE, full: kinds.FULL });
    expect(kinds.IDLE_SHORT * kinds.IDLE * kinds.LITE * kinds.FULL).toBeGreaterThan(0);

    const rows = res.cswitch.toArray();
    expect(rows.length).toBe(specs.length);
    for (let cpu = 0; cpu < cpus; cpu++) {
      const got = rows.filter((r) => r.cpu === cpu); // per-CPU output order is time order
      const want = specs.filter((x) => x.cpu === cpu);
      const packets = trace.compactPackets.filter((p) => p.cpu === cpu);
      expect(got.length).toBe(want.length);
      got.forEach((r, i) => {
        const w = want[i]!;
        const kind = packets[i]!.kind;
        const idle = w.oldThreadId === 0;
        const waiting = w.oldThreadState === 5;
        expect(r).toMatchObject({
          timestamp: w.timestamp,
          oldThreadId: w.oldThreadId,
          newThreadId: i + 1 < want.length ? want[i + 1]!.oldThreadId : null,
          source: L.CS_SOURCE_IDLE_SHORT + ['IDLE_SHORT', 'IDLE', 'LITE', 'FULL'].indexOf(kind),
          oldThreadPriority: idle ? null : w.oldThreadPriority,
          oldThreadState: idle ? null : w.oldThreadState,
          oldThreadWaitReason: idle || !waiting ? null : w.oldThreadWaitReason,
          newThreadWaitTime: kind === 'FULL' ? Math.min(w.newThreadWaitTime, 2 ** 17 - 1) : null,
          newThreadWaitTimeAtMostOneTick: kind === 'LITE' ? 1 : 0,
          newThreadPriority: null,
          previousCState: null,
          oldThreadWaitMode: null,
          oldThreadRemainingQuantum: null,
          version: 2,
        });
        if (kind === 'LITE') expect(w.newThreadWaitTime).toBeLessThanOrEqual(1);
      });
    }
  });
});

test('an explicit bias overrides the build and a wrong bias is visible in the diagnostics', () => {
  const specs: CompactSwitchSpec[] = [];
  let t = 1_000_000n;
  for (let i = 0; i < 500; i++) {
    t += 100n;
    specs.push({ kind: 'compactSwitch', cpu: 0, timestamp: t, oldThreadId: 100 + (i % 5) * 4, oldThreadBasePriority: 8, oldThreadPriority: 9, oldThreadState: 1, oldThreadWaitReason: 0, newThreadWaitTime: 5 });
  }
  const trace = writeTrace({ build: 22631, numberOfProcessors: 1, events: specs });
  for (const engine of ENGINES) {
    const right = decodeSync(trace.bytes, { engine });
    expect(right.summary.bias).toEqual({ value: 42, source: 'build', certain: true });
    expect(right.cswitch.get(0).oldThreadState).toBe(1);
    const wrong = decodeSync(trace.bytes, { engine, bias: 37 });
    expect(wrong.summary.bias).toEqual({ value: 37, source: 'override', certain: true });
    expect(wrong.cswitch.get(0).oldThreadState).toBe(6); // 43 - 37: plausible-looking, so it is flagged below
    const bad = decodeSync(
      writeTrace({ build: 22631, numberOfProcessors: 1, events: specs.map((s) => ({ ...s, oldThreadState: 7 })) }).bytes,
      { engine, bias: 37 },
    );
    expect(bad.summary.diagnostics['compactStateOutOfRange']).toBe(500); // 42 + 7 - 37 = 12 >= 10
  }
});
