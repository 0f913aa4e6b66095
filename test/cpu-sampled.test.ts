// CPU Usage (Sampled) (src/analysis/samples.ts, `cpu --sampled`): every SampledProfile row counted once by
// process, thread and module, against an independent BigInt oracle — a sample's process from its thread's
// lifetime with the latest start at or before its time (the threads rule), its module and module!offset from the image loaded
// at that time, found from the image events alone (process 0's for a kernel-space address) — on simulated
// traces with samples and images, and on the real corpus.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, test } from 'vitest';
import { analyzeSamples } from '../src/analysis/samples.js';
import { SampleInterval } from '../src/analysis/sample-interval.js';
import { DerivedRows } from './helpers/derived-rows.js';
import * as L from '../src/generated/layout.js';
import { decodeSync, resolveSelection, type DecodeResult } from '../src/node.js';
import { simulateSchedule, writeTrace } from '../src/writer/index.js';
import { corpusTestsEnabled, readCorpus } from './helpers/corpus.js';

const BIN = fileURLToPath(new URL('../bin/etw-decode.js', import.meta.url));

type ImageEvent = DecodeResult['imageEvents'] extends { toArray(): (infer R)[] } ? R : never;

/**
 * The image holding `ip` in process `owner` at time t, from the image events alone: at each base whose
 * range holds it, the image is loaded at t when the last event at or before t is not an Unload, or, with
 * none before t, when the first one after is not a Load (a rundown or an Unload says it was loaded before).
 */
function imageAt(byOwner: Map<number, Map<bigint, ImageEvent[]>>, owner: number, ip: bigint, t: bigint): ImageEvent | null {
  let found: ImageEvent | null = null;
  let foundAt = -1n;
  for (const evs of byOwner.get(owner)?.values() ?? []) {
    const inRange = evs.filter((e) => e.imageBase <= ip && ip < e.imageBase + e.imageSize);
    if (!inRange.length) continue;
    const before = inRange.filter((e) => e.timestamp <= t).at(-1);
    const after = inRange.find((e) => e.timestamp > t);
    const loaded = before ? before.opcode !== 2 : after !== undefined && after.opcode !== 10;
    const at = before?.timestamp ?? -1n;
    if (loaded && (found === null || at > foundAt)) [found, foundAt] = [before ?? after!, at];
  }
  return found;
}

function oracle(r: DecodeResult, keep: (s: { timestamp: bigint; threadId: number }) => boolean = () => true) {
  const lifetimes = r.threads.toArray();
  const byOwner = new Map<number, Map<bigint, ImageEvent[]>>();
  const events = r.imageEvents.toArray().map((e, i) => [e, i] as const).sort(([a, i], [b, j]) => (a.timestamp < b.timestamp ? -1 : a.timestamp > b.timestamp ? 1 : i - j));
  for (const [e] of events) {
    const m = byOwner.get(e.processId) ?? byOwner.set(e.processId, new Map()).get(e.processId)!;
    (m.get(e.imageBase) ?? m.set(e.imageBase, []).get(e.imageBase)!).push(e);
  }
  const proc = new Map<number | null, number>();
  const mod = new Map<string | null, number>();
  const addr = new Map<string, number>();
  for (const s of r.samples.toArray()) {
    if (!keep(s)) continue;
    // the thread's lifetime with the latest start at or before the time (null start: the earliest; a tie: the later row)
    const started = lifetimes.filter((l) => l.threadId === s.threadId && (l.startTime === null || l.startTime <= s.timestamp));
    const latest = started.reduce<(typeof started)[number] | null>((b, l) => (b === null || b.startTime === null || (l.startTime !== null && l.startTime >= b.startTime) ? l : b), null);
    const pid = s.threadId === 0 ? 0 : (latest?.processId ?? null);
    proc.set(pid, (proc.get(pid) ?? 0) + s.count);
    const kernel = s.pointerSize === 4 ? s.instructionPointer >= 0x80000000n : s.instructionPointer >= 0x8000000000000000n;
    // a kernel address: the kernel's images (process 0), then the process's own
    const im = (kernel ? imageAt(byOwner, 0, s.instructionPointer, s.timestamp) : null) ?? (pid === null || (kernel && pid === 0) ? null : imageAt(byOwner, pid, s.instructionPointer, s.timestamp));
    const name = im ? (im.fileName ?? '').split('\\').at(-1) || '(no name)' : null;
    mod.set(name, (mod.get(name) ?? 0) + s.count);
    const a = im ? `${name}!0x${(s.instructionPointer - im.imageBase).toString(16)}` : `0x${s.instructionPointer.toString(16)}`;
    addr.set(a, (addr.get(a) ?? 0) + s.count);
  }
  return { proc, mod, addr };
}

function check(r: DecodeResult, a: ReturnType<typeof analyzeSamples>, keep?: (s: { timestamp: bigint; threadId: number }) => boolean) {
  const want = oracle(r, keep);
  expect(new Map(a.byProcess.map((g) => [g.processId, g.weight]))).toEqual(want.proc);
  expect(new Map(a.byModule.map((g) => [g.module, g.weight]))).toEqual(want.mod);
  expect(new Map(a.byAddress.map((g) => [g.address, g.weight]))).toEqual(want.addr);
  expect(a.byAddress.filter((g) => g.module === null).reduce((n, g) => n + g.samples, 0)).toBe(a.unresolvedModule);
  expect(a.byThread.reduce((n, g) => n + g.weight, 0)).toBe(a.weight);
}

describe('simulated traces with samples and images', () => {
  for (const seed of [1, 2, 3]) {
    test(`seed ${seed}: by process and module as the oracle; a range`, () => {
      const sim = simulateSchedule({ seed, cpus: 2 + seed, duration: 400_000, switchMode: 'mixed', profileInterval: 1_000, images: true });
      const r = decodeSync(writeTrace(sim.description).bytes);
      expect(r.samples.length).toBeGreaterThan(100);
      expect(r.imageEvents.length).toBeGreaterThan(0);
      const a = analyzeSamples(r);
      expect(a.samples).toBe(r.samples.length);
      check(r, a);
      expect(a.unresolvedModule).toBeLessThan(a.samples / 2);
      // the trace's interval (the schedule's rundowns: 1000 ticks = 0.1 ms): CPU time = Count × interval
      expect(a.intervalsMs).toEqual([0.1]);
      expect(a.cpuMs).toBeCloseTo(a.weight * 0.1, 9);
      for (const g of [...a.byProcess, ...a.byModule, ...a.byAddress]) expect(g.cpuMs).toBeCloseTo(g.weight * 0.1, 9);
      // by module and by address are made on first use, yet are fields as any other (JSON, keys, the same array each read)
      expect(Object.keys(a)).toEqual(expect.arrayContaining(['byProcess', 'byThread', 'byModule', 'byAddress']));
      expect(a.byAddress).toBe(a.byAddress);
      const json = JSON.parse(JSON.stringify(a)) as typeof a;
      expect(json.byModule).toEqual(a.byModule);
      expect(json.byAddress.length).toBe(a.byAddress.length);
      expect(a.byModule.reduce((n, g) => n + g.weight, 0)).toBe(a.weight);
      expect(a.byAddress.reduce((n, g) => n + g.samples, 0)).toBe(a.samples);
      // the reused process id's first process ran its image at a base where the next one loads another:
      // its samples are the first image's (by time), not the image seen last at that base
      const pid = sim.reusedProcessIds[0]!;
      const [first, later] = sim.images.filter((e) => e.processId === pid && e.imageBase === sim.images.find((f) => f.processId === pid)!.imageBase && (e.opcode === 'dcStart' || e.opcode === 'load'));
      expect(first!.fileName).not.toBe(later!.fileName);
      const name = first!.fileName.split('\\').at(-1)!;
      const ofFirst = r.samples.toArray().filter((x) => x.instructionPointer >= first!.imageBase && x.instructionPointer < first!.imageBase + first!.imageSize && x.timestamp < later!.timestamp);
      const before = ofFirst.filter((x) => r.threads.toArray().some((t) => t.threadId === x.threadId && t.processId === pid && (t.endTime === null || x.timestamp < t.endTime) && (t.startTime === null || t.startTime <= x.timestamp)));
      expect(before.length).toBeGreaterThan(0);
      expect(a.byModule.find((g) => g.module === name)!.samples).toBeGreaterThanOrEqual(before.length);
      const ts = r.samples.column('timestamp');
      const from = ts[Math.floor(ts.length / 3)]!;
      const to = ts[Math.floor((2 * ts.length) / 3)]!;
      const ranged = analyzeSamples(r, { selection: resolveSelection({ from: { ticks: from }, to: { ticks: to } }, r.clock, r) });
      check(r, ranged, (s) => s.timestamp >= from && s.timestamp < to);
      expect(ranged.samples).toBeLessThan(a.samples);
    });
  }
});

test.runIf(corpusTestsEnabled())('perfview-net.4.5.2.x64.etl: 79,528 samples by process and module as the oracle; cpu --sampled --json says the same', () => {
  const bytes = readCorpus('perfview-net.4.5.2.x64.etl');
  const r = decodeSync(bytes);
  const a = analyzeSamples(r);
  expect(a.samples).toBe(79_528);
  check(r, a);
  // the DCStart/DCEnd rundowns say 1 ms (10000 × 100 ns): WPA's Weight
  expect([a.intervalsMs, a.cpuMs]).toEqual([[1], 79_528]);
  expect(a.unresolvedProcess).toBe(0);
  // the idle loop in the kernel, then the test program (its JIT-compiled code is in no image)
  expect(a.byProcess.slice(0, 2).map((g) => [g.processId, g.imageFileName])).toEqual([
    [0, 'Idle'],
    [3676, 'Test.x64.exe'],
  ]);
  expect(a.byModule[0]!.module).toBe('ntoskrnl.exe');
  const dir = mkdtempSync(join(tmpdir(), 'etw-sampled-'));
  const file = join(dir, 'net.etl');
  writeFileSync(file, bytes);
  const p = spawnSync(process.execPath, [BIN, 'cpu', file, '--sampled', '--by', 'module', '--top', '0', '--json'], { encoding: 'utf8' });
  expect(p.status, p.stderr).toBe(0);
  const json = JSON.parse(p.stdout);
  expect(json.rows.map((g: { module: string | null; weight: number }) => [g.module, g.weight])).toEqual(a.byModule.map((g) => [g.module, g.weight]));
  expect([json.cpuMs, json.intervalsMs, json.rows[0].cpuMs]).toEqual([79_528, [1], a.byModule[0]!.cpuMs]);
  expect(spawnSync(process.execPath, [BIN, 'cpu', file, '--by', 'module'], { encoding: 'utf8' }).status).toBe(2);
  expect(spawnSync(process.execPath, [BIN, 'cpu', file, '--by', 'address'], { encoding: 'utf8' }).status).toBe(2);
  // module!offset: the finest grain, the kernel's idle loop first
  expect(a.byAddress[0]).toMatchObject({ module: 'ntoskrnl.exe', address: 'ntoskrnl.exe!0xa6552', samples: 72_805 });
  expect(a.byAddress.reduce((n, g) => n + g.samples, 0)).toBe(a.samples);
  const byAddress = spawnSync(process.execPath, [BIN, 'cpu', file, '--sampled', '--by', 'address', '--top', '3'], { encoding: 'utf8' });
  expect(byAddress.status, byAddress.stderr).toBe(0);
  expect(byAddress.stdout.split('\n').slice(0, 3)).toEqual([
    expect.stringMatching(/: CPU usage by address \(CPU Usage \(Sampled\)\): 79528 samples, weight 79528, CPU time 79528\.000 ms \(interval 1 ms\)$/),
    expect.stringMatching(/^address +samples +weight +cpu ms +%$/),
    expect.stringMatching(/^ntoskrnl\.exe!0xa6552 +72805 +72805 +72805\.000 +91\.5$/),
  ]);
});

describe('the profile interval (sampleIntervals, docs/format.md §G.4)', () => {
  // rows: [timestamp, opcode, source, newInterval, oldInterval]
  function intervals(rows: [bigint, number, number, number, number][]) {
    const b = new DerivedRows('sampleIntervals');
    for (const [ts, op, source, next, prev] of rows) {
      const r = b.add();
      b.set(r, L.SI_TIMESTAMP, ts);
      b.set(r, L.SI_OPCODE, op);
      b.set(r, L.SI_SOURCE, source);
      b.set(r, L.SI_NEW_INTERVAL, next);
      b.set(r, L.SI_OLD_INTERVAL, prev);
    }
    return b.take();
  }
  const at = (i: SampleInterval, t: bigint) => i.at(Number(t >> 32n), Number(t & 0xffffffffn));

  test('the latest event at or before the time; before the first, the interval it started from; other sources ignored; row order not time order', () => {
    const i = new SampleInterval(intervals([
      [2n ** 33n, 72, 0, 2500, 5000], // SetInterval 0.25 ms, at 2^33 (high word 2)
      [100n, 72, 0, 5000, 10000], // SetInterval 0.5 ms at 100 (from 1 ms)
      [150n, 72, 1, 1, 5000], // another source
    ]));
    expect([at(i, 0n), at(i, 99n), at(i, 100n), at(i, 2n ** 33n - 1n), at(i, 2n ** 33n), at(i, 2n ** 40n)]).toEqual([10000, 10000, 5000, 5000, 2500, 2500]);
    expect([i.known, i.intervals]).toEqual([true, [10000, 5000, 2500]]);
    const rundown = new SampleInterval(intervals([[50n, 73, 0, 10000, 10000]]));
    expect([at(rundown, 0n), at(rundown, 60n), rundown.intervals]).toEqual([10000, 10000, [10000]]);
    const none = new SampleInterval(intervals([[50n, 73, 2, 10000, 10000]]));
    expect([none.known, at(none, 60n), none.intervals]).toEqual([false, -1, []]);
  });

  test('CPU time: a sample\'s Count × the interval at its time (an interval changed in the middle), as a BigInt oracle; none: counts only', () => {
    const sim = simulateSchedule({ seed: 7, cpus: 3, duration: 300_000, switchMode: 'mixed', profileInterval: 1_000, images: true });
    const r = decodeSync(writeTrace(sim.description).bytes);
    const ts = r.samples.column('timestamp');
    const mid = ts[Math.floor(ts.length / 2)]!;
    const table = intervals([[mid, 72, 0, 2_500, 10_000]]);
    const a = analyzeSamples({ ...r, sampleIntervals: table });
    let want = 0n;
    const byPid = new Map<number | null, bigint>();
    const pidOf = new Map(a.byThread.map((g) => [g.threadId, g.processId]));
    for (const x of r.samples) {
      const t = BigInt(x.count) * (x.timestamp < mid ? 10_000n : 2_500n);
      want += t;
      const p = pidOf.get(x.threadId) ?? null;
      byPid.set(p, (byPid.get(p) ?? 0n) + t);
    }
    expect(a.cpuMs).toBe(Number(want) / 10_000);
    expect(a.intervalsMs).toEqual([1, 0.25]);
    // by process (each thread of the schedule in one process)
    if (a.byThread.length === new Set(a.byThread.map((g) => g.threadId)).size) {
      expect(new Map(a.byProcess.map((g) => [g.processId, g.cpuMs]))).toEqual(new Map([...byPid].map(([p, t]) => [p, Number(t) / 10_000])));
    }
    const without = analyzeSamples({ ...r, sampleIntervals: intervals([]) });
    expect([without.cpuMs, without.intervalsMs, without.byProcess[0]!.cpuMs]).toEqual([null, [], null]);
    expect(analyzeSamples({ samples: r.samples, images: r.images, threads: r.threads, processes: r.processes, clock: r.clock }).cpuMs).toBeNull();
  });
});
