// The cpuUsage table: the derivation (src/derive/cpu-usage.ts, through cpuUsage() and streaming) equals the
// sort-everything oracle (test/helpers/cpu-usage-oracle.ts) row for row, and both equal a computation from
// the writer simulation's ground truth written here from the definitions (README "cpuUsage").
import { describe, expect, test } from 'vitest';
import { cpuUsage, CpuUsageDeriver, decodeSync, streamFile, type CpuUsageRow, type DecodeResult, type Table } from '../src/node.js';
import * as L from '../src/generated/layout.js';
import { deriveThreads } from '../src/derive/lifetimes.js';
import type { TypedColumn } from '../src/tables/schema.js';
import { Table as TableCtor } from '../src/tables/table.js';
import fc from 'fast-check';
import { cpuUsageBySorting, CpuUsageDeriverOracle } from './helpers/cpu-usage-oracle.js';
import { simulateSchedule, writeTrace, type ScheduleOptions, type SimulatedSchedule } from '../src/writer/index.js';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const CASES: [string, Partial<ScheduleOptions>][] = [
  ['compact', { seed: 11, switchMode: 'compact' }],
  ['CSwitch', { seed: 12, switchMode: 'cswitch', cswitchVersions: [2, 3, 4] }],
  ['mixed per CPU', { seed: 13, switchMode: 'mixed', cpus: 6 }],
];

function rows(t: Table<'cpuUsage'>): CpuUsageRow[] {
  return Array.from({ length: t.length }, (_, i) => t.get(i));
}

/** cpuUsage from the ground truth: switches (true new threads), readies (true readying threads), lifetimes. */
function fromTruth(sim: SimulatedSchedule) {
  const sw = sim.switches; // sorted by (cpu, timestamp)
  const pidOf = (tid: number, t: bigint): number | null => {
    if (tid === 0) return 0;
    let best: { start: bigint | null; processId: number } | null = null;
    for (const l of sim.threads) {
      if (l.threadId !== tid || (l.startTime !== null && l.startTime > t)) continue;
      if (!best || (l.startTime ?? -1n) >= (best.start ?? -1n)) best = { start: l.startTime, processId: l.processId };
    }
    return best?.processId ?? null;
  };
  // the decoder cannot know the new thread of the last compact switch of a CPU
  const lastOfCpu = new Map<number, number>();
  sw.forEach((s, i) => lastOfCpu.set(s.cpu, i));
  const out = [];
  for (let i = 0; i < sw.length; i++) {
    const s = sw[i]!;
    if (s.encoding === 'compact' && lastOfCpu.get(s.cpu) === i) continue;
    const next = sw[i + 1]?.cpu === s.cpu ? sw[i + 1]! : null;
    const t = s.timestamp;
    const tid = s.newThreadId;
    let lastOut: (typeof sw)[number] | null = null;
    for (const o of sw) if (o.oldThreadId === tid && (tid !== 0 || o.cpu === s.cpu) && o.timestamp < t && (!lastOut || o.timestamp >= lastOut.timestamp)) lastOut = o;
    let ready: (typeof sim.readies)[number] | null = null;
    for (const r of sim.readies) if (r.threadId === tid && r.timestamp <= t && (!lastOut || r.timestamp > lastOut.timestamp)) ready = r;
    out.push({
      cpu: s.cpu,
      switchInTime: t,
      nextSwitchOutTime: next?.timestamp ?? null,
      newThreadId: tid,
      oldThreadId: s.oldThreadId,
      newProcessId: pidOf(tid, t),
      oldProcessId: pidOf(s.oldThreadId, t),
      lastSwitchOutTime: lastOut?.timestamp ?? null,
      readyTime: ready?.timestamp ?? null,
      readyingThreadId: ready ? ready.readyingThreadId : null,
      readyingProcessId: ready ? pidOf(ready.readyingThreadId, ready.timestamp) : null,
      cpuUsage: next ? next.timestamp - t : null,
      ready: ready ? t - ready.timestamp : null,
      waits: ready && lastOut ? ready.timestamp - lastOut.timestamp : null,
    });
  }
  return out;
}

describe.each(CASES)('%s', (_, options) => {
  const sim = simulateSchedule({ seed: 1, cpus: 4, duration: 2_000_000, ...options });
  const bytes = writeTrace(sim.description).bytes;

  test.each(['wasm', 'reference'] as const)('%s engine: streaming = reference = ground truth', (engine) => {
    const r = decodeSync(bytes, { engine });
    const got = cpuUsage(r);
    const ref = cpuUsageBySorting(r.cswitch, r.readythread, r.threads);
    expect(got.length).toBe(r.summary.cpuUsage);
    expect(got.length).toBeGreaterThan(500);
    got.columns.forEach((col, i) => expect(col, got.specs[i]!.name).toEqual(ref.columns[i]));
    const truth = fromTruth(sim);
    const mine = rows(got).map((x) => ({
      cpu: x.cpu,
      switchInTime: x.switchInTime,
      nextSwitchOutTime: x.nextSwitchOutTime,
      newThreadId: x.newThreadId,
      oldThreadId: x.oldThreadId,
      newProcessId: x.newProcessId,
      oldProcessId: x.oldProcessId,
      lastSwitchOutTime: x.lastSwitchOutTime,
      readyTime: x.readyTime,
      readyingThreadId: x.readyingThreadId,
      readyingProcessId: x.readyingProcessId,
      cpuUsage: x.cpuUsage,
      ready: x.ready,
      waits: x.waits,
    }));
    expect(mine).toEqual(truth);
    // waiting threads were readied before they ran again; some rows have all three durations
    expect(mine.filter((x) => x.ready !== null && x.waits !== null && x.cpuUsage !== null).length).toBeGreaterThan(50);
  });

  test('through streamFile in small windows, chunk by chunk: the same rows, bounded holding', async () => {
    const path = join(mkdtempSync(join(tmpdir(), 'etw-cpu-')), 't.etl');
    writeFileSync(path, bytes);
    const chunks: Table<'cpuUsage'>[] = [];
    const d = new CpuUsageDeriver((t) => chunks.push(t), { chunkRows: 100 });
    await streamFile(path, { windowBytes: 0x4000, rows: 'borrow', onRows: (t) => d.add(t.cswitch, t.readythread, t.threadEvents) });
    const stats = d.finish();
    const whole = cpuUsage(decodeSync(bytes));
    expect(stats.rows).toBe(whole.length);
    expect(stats.lateEvents).toBe(0);
    expect(chunks.length).toBeGreaterThan(3);
    // streamed rows are in completion order; per CPU that is switchInTime order
    const streamed = chunks.flatMap(rows).sort((a, b) => a.cpu - b.cpu || (a.switchInTime < b.switchInTime ? -1 : a.switchInTime > b.switchInTime ? 1 : 0));
    expect(streamed).toEqual(rows(whole));
  });

  test('chunks given back (recycle) are reused: the same rows, every cell rewritten (null durations 0 again)', () => {
    const r = decodeSync(bytes);
    const plain: Table<'cpuUsage'>[] = [];
    const d1 = new CpuUsageDeriver((t) => plain.push(t), { chunkRows: 64 });
    d1.add(r.cswitch, r.readythread, r.threadEvents);
    d1.finish();
    const copies: Table<'cpuUsage'>[] = [];
    const columns = new Set<unknown>();
    const d2 = new CpuUsageDeriver(
      (t) => {
        copies.push(new TableCtor('cpuUsage', { length: t.length, columns: t.columns.map((c) => c.slice()) }));
        columns.add(t.columns[0]);
        // garbage in every cell before the columns are given back: the next chunk must rewrite them all
        for (const c of t.columns) new Uint8Array((c as Uint8Array).buffer, (c as Uint8Array).byteOffset, (c as Uint8Array).byteLength).fill(0xa5);
        d2.recycle(t);
      },
      { chunkRows: 64 },
    );
    d2.add(r.cswitch, r.readythread, r.threadEvents);
    d2.finish();
    expect(plain.length).toBeGreaterThan(5);
    expect(columns.size).toBeLessThan(plain.length); // reused
    expect(copies.map((t) => t.length)).toEqual(plain.map((t) => t.length));
    copies.forEach((t, k) => t.columns.forEach((col, c) => expect(col, `chunk ${k} column ${t.specs[c]!.name}`).toEqual(plain[k]!.columns[c])));
  });

  test('a reorder window bounds what is held; what arrives behind it is counted, not lost', () => {
    const r = decodeSync(bytes);
    const d = new CpuUsageDeriver(() => {}, { windowEvents: 256 });
    d.add(r.cswitch, r.readythread, r.threadEvents);
    const stats = d.finish();
    expect(stats.maxHeld).toBeLessThanOrEqual(257);
    expect(stats.rows).toBe(r.summary.cpuUsage);
    expect(stats.threads).toBeGreaterThan(10);
  });
});

/** The tables of `r` as if its start rundown (Thread DCStart) was not logged: most threads are known only from the end rundown. */
function withoutStartRundown(r: DecodeResult): Pick<DecodeResult, 'cswitch' | 'readythread' | 'threadEvents' | 'threads'> {
  const op = r.threadEvents.columns[L.TE_OPCODE] as Uint8Array;
  const keep = Array.from(op, (o) => o !== L.OPCODE_DC_START);
  const threadEvents = new TableCtor('threadEvents', { length: keep.filter(Boolean).length, columns: r.threadEvents.columns.map((c) => (c as Uint8Array).filter((_, i) => keep[i])) as TypedColumn[] });
  return { cswitch: r.cswitch, readythread: r.readythread, threadEvents, threads: deriveThreads(threadEvents) };
}

describe('the typed-array derivation equals the former object-per-event one (test/helpers/cpu-usage-oracle.ts)', () => {
  const traces = [
    decodeSync(writeTrace(simulateSchedule({ seed: 21, cpus: 3, duration: 600_000, switchMode: 'mixed' }).description).bytes),
    decodeSync(writeTrace(simulateSchedule({ seed: 22, cpus: 5, duration: 600_000, switchMode: 'compact' }).description).bytes),
  ].flatMap((r) => [r, withoutStartRundown(r)]);

  const sliceOf = <T extends 'cswitch' | 'readythread' | 'threadEvents'>(t: Table<T>, a: number, b: number): Table<T> =>
    new TableCtor(t.name, { length: b - a, columns: t.columns.map((c) => c.slice(a, b)) }) as unknown as Table<T>;

  /** the rows of `t` cut into chunks at the given fractions (sorted, in [0, 1]) */
  function cuts<T extends 'cswitch' | 'readythread' | 'threadEvents'>(t: Table<T>, at: number[]): Table<T>[] {
    const bounds = [0, ...at.map((f) => Math.floor(f * t.length)), t.length];
    return bounds.slice(1).map((b, k) => sliceOf(t, bounds[k]!, b));
  }

  test('same rows, chunks and statistics for any chunking, window, chunk size and hold, streaming (either core) or given the threads table', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: traces.length - 1 }),
        fc.array(fc.double({ min: 0, max: 1, noNaN: true }), { maxLength: 12 }),
        fc.array(fc.double({ min: 0, max: 1, noNaN: true }), { maxLength: 12 }),
        fc.constantFrom(1, 7, 64, 1000, 1 << 18),
        fc.constantFrom(1, 3, 100, 65536),
        fc.constantFrom(0, 1, 5, 1 << 16),
        fc.boolean(),
        fc.constantFrom('wasm' as const, 'reference' as const),
        (which, a, b, windowEvents, chunkRows, holdRows, given, engine) => {
          const r = traces[which]!;
          const at = [...a].sort((x, y) => x - y);
          const at2 = [...b].sort((x, y) => x - y);
          const cs = cuts(r.cswitch, at);
          const rt = cuts(r.readythread, at);
          // thread events cut elsewhere: some arrive before, some after the switches they matter to
          const te = cuts(r.threadEvents, at2.slice(0, at.length).concat(new Array(Math.max(0, at.length - at2.length)).fill(1)));
          const got: Table<'cpuUsage'>[] = [];
          const want: Table<'cpuUsage'>[] = [];
          const options = { windowEvents, chunkRows, holdRows, threads: given ? r.threads : undefined };
          const d = new CpuUsageDeriver((t) => got.push(t), { ...options, engine }); // the WebAssembly core or its twin
          const o = new CpuUsageDeriverOracle((t) => want.push(t), options);
          for (let k = 0; k < cs.length; k++) {
            d.add(cs[k]!, rt[k]!, te[k]!);
            o.add(cs[k]!, rt[k]!, te[k]!);
          }
          expect(d.finish()).toEqual(o.finish());
          expect(got.map((t) => t.length)).toEqual(want.map((t) => t.length));
          got.forEach((t, k) => t.columns.forEach((col, c) => expect(col, `chunk ${k} column ${t.specs[c]!.name}`).toEqual(want[k]!.columns[c])));
        },
      ),
      { numRuns: 80 },
    );
  });

  test('late events and a full window happen in these runs (the comparison covers them)', () => {
    const r = traces[0]!;
    const d = new CpuUsageDeriver(() => {}, { windowEvents: 7 });
    for (const [a, b] of [[0.5, 1], [0, 0.5]] as const) {
      d.add(sliceOf(r.cswitch, Math.floor(a * r.cswitch.length), Math.floor(b * r.cswitch.length)), sliceOf(r.readythread, 0, 0), sliceOf(r.threadEvents, 0, 0));
    }
    const stats = d.finish();
    expect(stats.lateEvents).toBeGreaterThan(100);
    expect(stats.maxHeld).toBeLessThanOrEqual(8);
  });

  test('rows wait for a process id in these runs, and past the hold are counted (the comparison covers them)', () => {
    const r = traces[1]!;
    const run = (holdRows?: number) => {
      const d = new CpuUsageDeriver(() => {}, { holdRows });
      d.add(r.cswitch, r.readythread, r.threadEvents);
      return d.finish();
    };
    const all = run();
    expect(all.heldRows).toBeGreaterThan(50);
    expect(all.unresolvedRows).toBe(0);
    const few = run(5);
    expect([few.heldRows, few.unresolvedRows]).toEqual([5, all.heldRows - 5]);
    expect(run(0).unresolvedRows).toBe(all.heldRows);
  });

  test('threads known only from the end rundown: the streamed rows are cpuUsage() and the definition, those that waited last', async () => {
    // a trace written without its start rundown (Thread DCStart)
    const sim = simulateSchedule({ seed: 23, cpus: 4, duration: 1_000_000, switchMode: 'mixed' });
    const events = sim.description.events.filter((e) => !(e.kind === 'thread' && e.opcode === 'dcStart'));
    const bytes = writeTrace({ ...sim.description, events }).bytes;
    const r = decodeSync(bytes);
    const want = cpuUsageBySorting(r.cswitch, r.readythread, r.threads);
    const whole = cpuUsage(r);
    whole.columns.forEach((col, c) => expect(col, whole.specs[c]!.name).toEqual(want.columns[c]));
    const path = join(mkdtempSync(join(tmpdir(), 'etw-cpu-')), 't.etl');
    writeFileSync(path, bytes);
    for (const windowBytes of [0x4000, 0x10000, 1 << 22]) {
      const chunks: Table<'cpuUsage'>[] = [];
      const d = new CpuUsageDeriver((t) => chunks.push(t), { chunkRows: 7 });
      await streamFile(path, { windowBytes, rows: 'borrow', onRows: (t) => d.add(t.cswitch, t.readythread, t.threadEvents) });
      const stats = d.finish();
      expect([stats.lateEvents, stats.unresolvedRows]).toEqual([0, 0]);
      expect(stats.heldRows).toBeGreaterThan(50);
      const streamed = chunks.flatMap(rows);
      expect(streamed.length).toBe(want.length);
      // per CPU, the rows that did not wait come in switchInTime order, then those that waited, in that order too
      const inOrder = (xs: CpuUsageRow[]) => {
        const last = new Map<number, bigint>();
        return xs.every((x) => (last.get(x.cpu) ?? -(2n ** 63n)) <= x.switchInTime && last.set(x.cpu, x.switchInTime));
      };
      const cut = streamed.length - stats.heldRows;
      expect(inOrder(streamed.slice(0, cut))).toBe(true);
      expect(inOrder(streamed.slice(cut))).toBe(true);
      expect(streamed.slice(cut).every((x) => x.newProcessId !== null && x.oldProcessId !== null)).toBe(true);
      streamed.sort((a, b) => a.cpu - b.cpu || (a.switchInTime < b.switchInTime ? -1 : a.switchInTime > b.switchInTime ? 1 : 0));
      expect(streamed).toEqual(rows(want));
    }
  });

  test('64-bit times beyond 2^53 and negative ones: durations exact', () => {
    for (const r of traces.slice(0, 2)) {
      for (const shift of [2n ** 60n, -(2n ** 62n), 2n ** 53n - 3n]) {
        const moved = <T extends 'cswitch' | 'readythread' | 'threadEvents'>(t: Table<T>, col: number): Table<T> => {
          const c = t.columns.slice();
          c[col] = (t.columns[col] as BigInt64Array).map((x) => x + shift);
          return new TableCtor(t.name, { length: t.length, columns: c }) as Table<T>;
        };
        const got: Table<'cpuUsage'>[] = [];
        const want: Table<'cpuUsage'>[] = [];
        const d = new CpuUsageDeriver((t) => got.push(t));
        const o = new CpuUsageDeriverOracle((t) => want.push(t));
        const args = [moved(r.cswitch, 0), moved(r.readythread, 0), moved(r.threadEvents, 0)] as const;
        d.add(...args);
        o.add(...args);
        expect(d.finish()).toEqual(o.finish());
        got.forEach((t, k) => t.columns.forEach((col, c) => expect(col).toEqual(want[k]!.columns[c])));
        expect(got.reduce((n, t) => n + t.length, 0)).toBeGreaterThan(100);
      }
    }
  });

  test('the order of events whatever their times: spans past 2^32 ticks in one sort, and many events of one time (kinds, CPUs, arrival)', () => {
    for (const r of traces.slice(0, 2)) {
      const cases: [string, (t: bigint, i: number, n: number) => bigint][] = [
        // the later half 2^40 ticks on: the radix sort's passes over the high words
        ['span', (t, i, n) => (i < n / 2 ? t : t + (1n << 40n))],
        ['span across 0', (t, i, n) => (i % 3 === 0 ? t - (1n << 45n) : t) - (BigInt(n) << 20n)],
        // times coarsened to multiples of 5000 ticks: groups of one time with every kind and many CPUs
        ['ties', (t) => (t / 5000n) * 5000n],
      ];
      for (const [, move] of cases) {
        const moved = <T extends 'cswitch' | 'readythread' | 'threadEvents'>(t: Table<T>, col: number): Table<T> => {
          const c = t.columns.slice();
          c[col] = (t.columns[col] as BigInt64Array).map((x, i) => move(x, i, t.length));
          return new TableCtor(t.name, { length: t.length, columns: c }) as Table<T>;
        };
        for (const windowEvents of [7, 1 << 18]) {
          const got: Table<'cpuUsage'>[] = [];
          const want: Table<'cpuUsage'>[] = [];
          const d = new CpuUsageDeriver((t) => got.push(t), { windowEvents });
          const o = new CpuUsageDeriverOracle((t) => want.push(t), { windowEvents });
          const args = [moved(r.cswitch, 0), moved(r.readythread, 0), moved(r.threadEvents, 0)] as const;
          for (const [a, b] of [[0, 0.4], [0.4, 1]] as const) {
            const part = <T extends 'cswitch' | 'readythread' | 'threadEvents'>(t: Table<T>) => sliceOf(t, Math.floor(a * t.length), Math.floor(b * t.length));
            d.add(part(args[0]), part(args[1]), part(args[2]));
            o.add(part(args[0]), part(args[1]), part(args[2]));
          }
          expect(d.finish()).toEqual(o.finish());
          expect(got.length).toBe(want.length);
          got.forEach((t, k) => t.columns.forEach((col, c) => expect(col).toEqual(want[k]!.columns[c])));
        }
      }
    }
  });
});

