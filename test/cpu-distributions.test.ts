// The ready and wait time distributions of the CPU analysis (src/analysis/distributions.ts, cpu.ts) against
// an exact oracle that sorts every value: the nearest-rank percentiles (rank ⌈p·n/100⌉) within the stated
// error (1 % of the exact value + ½ tick; exact below 50 ticks), the exact maximum and count — per thread,
// process and trace, for any values and groupings and on random traces of the writer; the N longest ready
// delays in their total order; a hand-made trace with known values; the CLI's --worst and percentiles.
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, test } from 'vitest';
import fc from 'fast-check';
import { analyzeCpu, cpuUsage, CpuAnalyzer, decodeSync, type Percentiles } from '../src/node.js';
import { BUCKETS, LogHistograms, LongestReady, PERCENTILES, percentileRank } from '../src/analysis/distributions.js';
import { simulateSchedule, writeTrace, type CSwitchSpec, type EventSpec } from '../src/writer/index.js';

const BIN = fileURLToPath(new URL('../bin/etw-decode.js', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'etw-distrib-'));

// ---- the oracle: the definition, by sorting

const cmp = (x: bigint, y: bigint) => (x < y ? -1 : x > y ? 1 : 0);
const abs = (x: bigint) => (x < 0n ? -x : x);

/** p50, p90, p99 (nearest rank) and max of the values; nulls when there are none. */
function exact(values: bigint[]): { count: number; percentiles: (bigint | null)[]; max: bigint | null } {
  const v = [...values].sort(cmp);
  const n = v.length;
  // rank ⌈p·n/100⌉ computed in bigints: no floating point in the oracle
  const rank = (p: number) => Number((BigInt(p) * BigInt(n) + 99n) / 100n);
  return { count: n, percentiles: PERCENTILES.map((p) => (n ? v[rank(p) - 1]! : null)), max: n ? v[n - 1]! : null };
}

/** The stated error: |estimate − exact| ≤ 1 % of |exact| + ½ tick (exact below 50), the floating log's ulps allowed. */
function withinBound(est: bigint | null, want: bigint | null): boolean {
  if (est === null || want === null) return est === want;
  const a = abs(want);
  if (a < 50n) return est === want;
  // 200·|e − x| ≤ 2·|x| + 100, plus a few ulps of the log's rounding (and 2^−53 relative beyond 2^53: the double)
  const slack = 1n + (a >> 30n) + (a >= 1n << 53n ? a >> 44n : 0n);
  return 200n * abs(est - want) <= 2n * a + 100n + slack;
}

function expectClose(got: Percentiles, want: ReturnType<typeof exact>, what: string): void {
  expect(got.count, what).toBe(want.count);
  expect(got.maxTicks, what).toBe(want.max);
  [got.p50Ticks, got.p90Ticks, got.p99Ticks].forEach((p, i) => {
    if (!withinBound(p, want.percentiles[i]!)) expect.fail(`${what} p${PERCENTILES[i]}: ${p} for ${want.percentiles[i]}`);
  });
}

const i64 = fc.oneof(
  fc.integer({ min: 0, max: 200 }).map(BigInt),
  fc.bigInt({ min: 0n, max: 1n << 40n }),
  fc.bigInt({ min: -(1n << 63n), max: (1n << 63n) - 1n }),
  fc.constantFrom(-(1n << 63n), (1n << 63n) - 1n, (1n << 53n) + 1n, (1n << 32n) - 1n, 1n << 32n, 49n, 50n, -1n, 0n, 1n),
);
const words = (x: bigint): [number, number] => [Number(BigInt.asIntN(32, x)), Number(BigInt.asIntN(32, x >> 32n))];

describe('LogHistograms', () => {
  test('percentiles within 1 % + ½ tick of the sorted values, exact max and count, per group and merged', () => {
    fc.assert(
      fc.property(fc.array(fc.tuple(fc.integer({ min: 0, max: 5 }), i64), { maxLength: 400 }), fc.integer({ min: 1, max: 3 }), (values, targets) => {
        const h = new LogHistograms();
        h.growGroups(6);
        for (const [g, x] of values) h.add(g, ...words(x));
        // each group alone, then groups merged into `targets` (g mod targets; group 5 in none)
        const alone = h.summarize(Int32Array.from({ length: 6 }, (_, g) => g), 6);
        const into = Int32Array.from({ length: 6 }, (_, g) => (g === 5 ? -1 : g % targets));
        const merged = h.summarize(into, targets);
        const check = (got: (typeof alone)[number], want: ReturnType<typeof exact>, what: string) => {
          expect(got.count, what).toBe(want.count);
          expect(got.max, what).toBe(want.max);
          got.percentiles.forEach((p, i) => {
            if (!withinBound(p, want.percentiles[i]!)) expect.fail(`${what} p${PERCENTILES[i]}: ${p} for ${want.percentiles[i]}`);
          });
        };
        for (let g = 0; g < 6; g++) check(alone[g]!, exact(values.filter(([x]) => x === g).map(([, v]) => v)), `group ${g}`);
        for (let t = 0; t < targets; t++) check(merged[t]!, exact(values.filter(([x]) => x !== 5 && x % targets === t).map(([, v]) => v)), `target ${t}`);
      }),
      { numRuns: 300 },
    );
  });

  test('every value 0 … ±20000 and powers of two to 2^62 alone: exact below 50, else within 1 % + ½ tick', () => {
    const values = [...Array.from({ length: 20001 }, (_, i) => BigInt(i)), ...Array.from({ length: 63 }, (_, k) => 1n << BigInt(k))];
    const all = [...values, ...values.map((x) => -x)];
    const h = new LogHistograms();
    h.growGroups(all.length);
    all.forEach((x, g) => h.add(g, ...words(x)));
    const got = h.summarize(Int32Array.from({ length: all.length }, (_, g) => g), all.length);
    all.forEach((x, g) => {
      const [p50, p90, p99] = got[g]!.percentiles;
      if (p50 !== p90 || p90 !== p99 || !withinBound(p50!, x)) expect.fail(`${x}: ${p50}`);
    });
  });

  test('the rank is ⌈p·n/100⌉ without floating point (0.29·100 is not 29 in doubles)', () => {
    for (let n = 1; n <= 1000; n++) for (const p of [29, 50, 90, 99]) expect(percentileRank(p, n)).toBe(Math.max(1, Number((BigInt(p) * BigInt(n) + 99n) / 100n)));
  });

  test('memory: counters per (group, bucket) used, not per value', () => {
    const h = new LogHistograms();
    h.growGroups(3);
    let x = 12345;
    for (let i = 0; i < 300_000; i++) {
      x = (Math.imul(x, 1103515245) + 12345) >>> 0;
      h.add(i % 3, x, i & 0xff); // up to 2^40
    }
    expect(h.size).toBeLessThanOrEqual(3 * BUCKETS);
    expect(h.size).toBeLessThan(3 * 1500);
  });
});

describe('LongestReady', () => {
  test('the N longest of any values in the total order, whatever the order they come in', () => {
    const entry = fc.record({ ready: i64, at: fc.bigInt({ min: 0n, max: 50n }), cpu: fc.integer({ min: 0, max: 2 }), tid: fc.integer({ min: 0, max: 3 }) });
    fc.assert(
      fc.property(fc.array(entry, { maxLength: 200 }), fc.integer({ min: 0, max: 30 }), (rows, n) => {
        const heap = new LongestReady(n);
        for (const r of rows) heap.offer(...words(r.ready), ...words(r.at), r.cpu, r.tid, 7, 0, 0, 1);
        const want = [...rows].sort((x, y) => cmp(y.ready, x.ready) || cmp(x.at, y.at) || x.cpu - y.cpu || x.tid - y.tid).slice(0, n);
        expect(heap.list().map((w) => [w.ready, w.switchInTime, w.cpu, w.threadId, w.processId, w.readyingThreadId])).toEqual(want.map((r) => [r.ready, r.at, r.cpu, r.tid, 7, null]));
      }),
      { numRuns: 300 },
    );
  });
});

// ---- on traces

type Row = ReturnType<ReturnType<typeof cpuUsage>['get']>;

/** The worst list by the definition: every row with a readyTime, longest first, the tie order of the docs. */
function worstBySorting(rows: Row[], n: number) {
  const id = (x: number | null) => (x === null ? -1 : x);
  return rows
    .filter((r) => r.ready !== null)
    .sort((x, y) => cmp(y.ready!, x.ready!) || cmp(x.switchInTime, y.switchInTime) || x.cpu - y.cpu || x.newThreadId - y.newThreadId || id(x.newProcessId) - id(y.newProcessId))
    .slice(0, n);
}

function checkTrace(bytes: Uint8Array, worst: number): void {
  const r = decodeSync(bytes);
  const a = analyzeCpu(r, { worst });
  const table = cpuUsage(r);
  const rows = [...table.rows()];
  const of = (keep: (x: Row) => boolean, k: 'ready' | 'waits') => exact(rows.filter((x) => keep(x) && x[k] !== null).map((x) => x[k]!));
  for (const t of a.threads) {
    const mine = (x: Row) => x.newThreadId === t.threadId && x.newProcessId === t.processId;
    expectClose(t.readyPercentiles!, of(mine, 'ready'), `thread ${t.threadId} ready`);
    expectClose(t.waitPercentiles!, of(mine, 'waits'), `thread ${t.threadId} waits`);
  }
  for (const p of a.processes) {
    expectClose(p.readyPercentiles!, of((x) => x.newProcessId === p.processId, 'ready'), `process ${p.processId} ready`);
    expectClose(p.waitPercentiles!, of((x) => x.newProcessId === p.processId, 'waits'), `process ${p.processId} waits`);
  }
  expectClose(a.total.readyPercentiles!, of(() => true, 'ready'), 'trace ready');
  expectClose(a.total.waitPercentiles!, of(() => true, 'waits'), 'trace waits');
  // milliseconds as the sums convert them
  const ms = (t: bigint | null) => (t === null ? null : Number((t * 1_000_000n) / a.ticksPerSecond!) / 1000);
  const tp = a.total.readyPercentiles!;
  expect([tp.p50Ms, tp.p90Ms, tp.p99Ms, tp.maxMs]).toEqual([ms(tp.p50Ticks), ms(tp.p90Ticks), ms(tp.p99Ticks), ms(tp.maxTicks)]);

  const image = new Map([...r.processes.rows()].map((p) => [p.processId, p.imageFileName]));
  expect(a.worst).toEqual(
    worstBySorting(rows, worst).map((x) => ({
      threadId: x.newThreadId,
      processId: x.newProcessId,
      imageFileName: x.newProcessId === null ? null : (image.get(x.newProcessId) ?? null),
      name: a.threads.find((t) => t.threadId === x.newThreadId && t.processId === x.newProcessId)!.name,
      cpu: x.cpu,
      switchInTime: x.switchInTime,
      switchInNs: r.clock!.toNanoseconds(x.switchInTime),
      readyTime: x.readyTime,
      readyingThreadId: x.readyingThreadId,
      readyingProcessId: x.readyingProcessId,
      readyingImageFileName: x.readyingProcessId === null ? null : (image.get(x.readyingProcessId) ?? null),
      readyTicks: x.ready,
      readyMs: ms(x.ready),
    })),
  );
}

describe('analyzeCpu distributions', () => {
  test('random writer traces: percentiles within the bound of the sorted cpuUsage values, the worst list by sorting', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 1_000_000 }),
        // (the simulation's scripted lifecycle may not complete on one CPU or in short runs: seed 10, 4 CPUs,
        // 100,000 ticks leaves the doomed process's last thread running; 300,000 ticks and more on 2+ CPUs do)
        fc.integer({ min: 2, max: 4 }),
        fc.integer({ min: 300_000, max: 700_000 }),
        fc.constantFrom('mixed' as const, 'cswitch' as const, 'compact' as const),
        fc.integer({ min: 0, max: 40 }),
        (seed, cpus, duration, switchMode, worst) => {
          checkTrace(writeTrace(simulateSchedule({ seed, cpus, duration, switchMode }).description).bytes, worst);
        },
      ),
      { numRuns: 12 },
    );
  });

  test('CpuAnalyzer rejects a worst that is not a whole number', () => {
    expect(() => new CpuAnalyzer({ worst: -1 })).toThrow(/worst/);
    expect(() => new CpuAnalyzer({ worst: 1.5 })).toThrow(/worst/);
  });
});

// ---- a hand-made trace with known values

const T1 = 0x104; // process 0x40 on cpu 0, readied by W1: ready 1 … 40 ticks (below 50: exact)
const W1 = 0x108;
const T2 = 0x204; // process 0x50 on cpu 1, readied by W2: ready 1000 … 100000 ticks (k · 1000)
const W2 = 0x208;
const T3 = 0x304; // process 0x60 on cpu 0 after T1: one ready of 100000 ticks, later than T2's (the tie order)
const PID: Record<number, number> = { [T1]: 0x40, [W1]: 0x44, [T2]: 0x50, [W2]: 0x54, [T3]: 0x60 };
const IMAGE: Record<number, string> = { 0x40: 'one.exe', 0x44: 'waker1.exe', 0x50: 'two.exe', 0x54: 'waker2.exe', 0x60: 'three.exe' };

const sw = (cpu: number, timestamp: bigint, newThreadId: number, oldThreadId: number): CSwitchSpec => ({
  kind: 'cswitch', cpu, timestamp, version: 2, newThreadId, oldThreadId, newThreadPriority: 8, oldThreadPriority: 8,
  previousCState: 0, newThreadPriorityDecrement: 0, oldThreadWaitReason: 6, oldThreadWaitMode: 0, oldThreadState: 5, oldThreadIdealProcessor: 0,
});

interface Delay {
  tid: number;
  cpu: number;
  waker: number;
  switchIn: bigint;
  ready: bigint;
}

/** T runs, is switched out (W in), readied 500 ticks later while W runs, switched in `d` later: ready d, waits 500. */
function cycles(cpu: number, T: number, W: number, start: bigint, delays: bigint[], events: EventSpec[], out: Delay[]): bigint {
  let t = start;
  events.push(sw(cpu, t, T, W)); // no readyTime: not in the distribution
  for (const d of delays) {
    events.push(sw(cpu, t + 100n, W, T));
    events.push({ kind: 'readyThread', cpu, timestamp: t + 600n, threadId: T });
    t += 600n + d;
    events.push(sw(cpu, t, T, W));
    out.push({ tid: T, cpu, waker: W, switchIn: t, ready: d });
  }
  events.push(sw(cpu, t + 100n, W, T));
  return t + 100n;
}

/** 1 … n in a fixed shuffled order (the worst list must not depend on time order) */
const shuffled = (n: number, scale: bigint) => Array.from({ length: n }, (_, i) => BigInt(((i * 37) % n) + 1) * scale);

const handEvents: EventSpec[] = [];
const delays: Delay[] = [];
for (const [tid, pid] of Object.entries(PID)) {
  handEvents.push({ kind: 'process', cpu: 0, timestamp: 1_000_000n, opcode: 'dcStart', processId: pid, imageFileName: IMAGE[pid]! });
  handEvents.push({ kind: 'thread', cpu: 0, timestamp: 1_000_000n, opcode: 'dcStart', processId: pid, threadId: Number(tid) });
}
const t1End = cycles(0, T1, W1, 2_000_000n, shuffled(40, 1n), handEvents, delays);
cycles(1, T2, W2, 2_000_000n, shuffled(100, 1000n), handEvents, delays);
cycles(0, T3, W1, t1End + 20_000_000n, [100_000n], handEvents, delays);
handEvents.sort((x, y) => (x.timestamp < y.timestamp ? -1 : x.timestamp > y.timestamp ? 1 : 0));
const handBytes = writeTrace({ numberOfProcessors: 2, events: handEvents }).bytes;
const handTrace = join(dir, 'hand.etl');
writeFileSync(handTrace, handBytes);

describe('a hand-made trace', () => {
  const r = decodeSync(handBytes);
  const a = analyzeCpu(r, { worst: 4 });
  const thread = (tid: number) => a.threads.find((t) => t.threadId === tid)!;

  test('T1: ready 1 … 40 ticks, every percentile exact (p50 = 20, p90 = 36, p99 = 40, max 40); waits 500', () => {
    const p = thread(T1).readyPercentiles!;
    expect([p.count, p.p50Ticks, p.p90Ticks, p.p99Ticks, p.maxTicks]).toEqual([40, 20n, 36n, 40n, 40n]);
    const w = thread(T1).waitPercentiles!;
    expect([w.count, w.maxTicks]).toEqual([40, 500n]);
    expect(withinBound(w.p50Ticks, 500n) && withinBound(w.p99Ticks, 500n)).toBe(true);
  });

  test('T2: ready 1000 … 100000 ticks: p50 ≈ 50000, p90 ≈ 90000, p99 ≈ 99000 within 1 % + ½, max exactly 100000', () => {
    const p = thread(T2).readyPercentiles!;
    expect([p.count, p.maxTicks]).toEqual([100, 100_000n]);
    expect(withinBound(p.p50Ticks, 50_000n) && withinBound(p.p90Ticks, 90_000n) && withinBound(p.p99Ticks, 99_000n)).toBe(true);
    expect(p.p50Ticks).not.toBe(50_000n); // a sketch: the bucket's representative, not the value
  });

  test('the process and the trace merge their threads; wakers that were never readied have no percentiles', () => {
    const proc = a.processes.find((p) => p.processId === PID[T2])!;
    expect(proc.readyPercentiles!).toEqual(thread(T2).readyPercentiles!);
    expect(a.total.readyPercentiles!.count).toBe(141);
    expect(a.total.readyPercentiles!.maxTicks).toBe(100_000n);
    expect(withinBound(a.total.readyPercentiles!.p50Ticks, exact(delays.map((d) => d.ready)).percentiles[0]!)).toBe(true);
    const w = thread(W1).readyPercentiles!;
    expect([w.count, w.p50Ticks, w.maxTicks, w.p50Ms]).toEqual([0, null, null, null]);
  });

  test('worst 4: T2 at 100000 then T3 at 100000 (later switch-in), then 99000, 98000; who, where, when, readied by whom', () => {
    const want = [...delays].sort((x, y) => cmp(y.ready, x.ready) || cmp(x.switchIn, y.switchIn)).slice(0, 4);
    expect(want.map((d) => [d.tid, d.ready])).toEqual([[T2, 100_000n], [T3, 100_000n], [T2, 99_000n], [T2, 98_000n]]);
    expect(a.worst.map((w) => [w.threadId, w.processId, w.imageFileName, w.cpu, w.switchInTime, w.readyTime, w.readyTicks, w.readyingThreadId, w.readyingProcessId, w.readyingImageFileName])).toEqual(
      want.map((d) => [d.tid, PID[d.tid], IMAGE[PID[d.tid]!], d.cpu, d.switchIn, d.switchIn - d.ready, d.ready, d.waker, PID[d.waker], IMAGE[PID[d.waker]!]]),
    );
    expect(a.worst.map((w) => w.switchInNs)).toEqual(want.map((d) => r.clock!.toNanoseconds(d.switchIn)));
    expect(a.worst.map((w) => w.readyMs)).toEqual(want.map((d) => Number(d.ready) / 10_000)); // 10 MHz
    expect(analyzeCpu(r).worst).toEqual([]);
  });

  const run = (args: string[]) => execFileSync(process.execPath, [BIN, ...args], { encoding: 'utf8' });

  test('cpu --json --worst: the library numbers while streaming, 64-bit values as strings', () => {
    const out = JSON.parse(run(['cpu', handTrace, '--json', '--by', 'thread', '--top', '0', '--worst', '4']));
    const str = (x: unknown) => JSON.parse(JSON.stringify(x, (_k, v: unknown) => (typeof v === 'bigint' ? v.toString() : v)));
    expect(out.worst).toEqual(str(a.worst));
    expect(out.total.readyPercentiles!).toEqual(str(a.total.readyPercentiles!));
    expect(out.rows).toEqual(str(a.threads));
    expect(JSON.parse(run(['cpu', handTrace, '--json'])).worst).toEqual([]);
  });

  test('cpu text: --by thread shows ready p50/p90/p99/max; --worst N lists the delays after the table', () => {
    const lines = run(['cpu', handTrace, '--by', 'thread', '--worst', '4']).trimEnd().split('\n');
    expect(lines[1]).toMatch(/\bready ms\s+waits ms\s+ready p50 ms\s+p90 ms\s+p99 ms\s+max ms$/);
    const t1 = lines.find((l) => l.startsWith(`${T1} `) || l.trimStart().startsWith(`${T1} `))!;
    expect(t1.trim().split(/\s+/).slice(-4)).toEqual(['0.002', '0.003', '0.004', '0.004']); // 20, 36, 40, 40 ticks at 10 MHz (µs floored, as the sums)
    const at = lines.indexOf('the 4 longest ready delays (switchInTime − readyTime):');
    expect(at).toBeGreaterThan(0);
    expect(lines[at + 1]).toMatch(/^ready ms\s+tid\s+thread\s+process\s+pid\s+cpu\s+switch-in ns\s+readied by tid\s+process\s+pid$/);
    expect(lines[at + 2]!.trim().split(/\s+/)).toEqual(['10.000', String(T2), 'two.exe', String(PID[T2]), '1', String(a.worst[0]!.switchInNs), String(W2), 'waker2.exe', String(PID[W2])]);
    expect(lines.length).toBe(at + 6);
    expect(run(['cpu', handTrace])).not.toMatch(/longest/);
  });

  test('cpu --worst: usage errors exit 2', () => {
    expect(spawnSync(process.execPath, [BIN, 'cpu', handTrace, '--worst', '-1']).status).toBe(2);
    expect(spawnSync(process.execPath, [BIN, 'cpu', handTrace, '--worst', 'x']).status).toBe(2);
  });
});

describe('CpuAnalyzer percentiles option', () => {
  test('false: the same totals, no histogram kept, percentiles null', () => {
    const r = decodeSync(writeTrace(simulateSchedule({ seed: 91, cpus: 2, duration: 20_000_000, switchMode: 'cswitch' }).description).bytes);
    const on = new CpuAnalyzer();
    const off = new CpuAnalyzer({ percentiles: false });
    const rows = cpuUsage(r);
    on.add(rows);
    off.add(rows);
    const a = on.result(r);
    const b = off.result(r);
    expect(a.total.readyPercentiles!.count).toBeGreaterThan(0);
    expect(b.total.readyPercentiles).toBeNull();
    expect(b.threads.every((t) => t.readyPercentiles === null && t.waitPercentiles === null)).toBe(true);
    const strip = (x: typeof a) => JSON.stringify({ ...x, total: { ...x.total, readyPercentiles: null, waitPercentiles: null }, processes: x.processes.map((p) => ({ ...p, readyPercentiles: null, waitPercentiles: null })), threads: x.threads.map((t) => ({ ...t, readyPercentiles: null, waitPercentiles: null })) }, (_k, v: unknown) => (typeof v === 'bigint' ? String(v) : v));
    expect(strip(b)).toBe(strip(a));
  });
});
