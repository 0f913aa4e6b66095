// The cpuUsage table: the streaming derivation (src/cpu-usage.ts) equals the sort-everything reference
// (src/reference/cpu-usage.ts) row for row, and both equal a computation from the writer simulation's
// ground truth written here from the definitions (README "cpuUsage").
import { describe, expect, test } from 'vitest';
import { cpuUsage, CpuUsageDeriver, decodeSync, streamFile, type CpuUsageRow, type Table } from '../src/node.js';
import { cpuUsageReference } from '../src/reference/index.js';
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
    const ref = cpuUsageReference(r.cswitch, r.readythread, r.threads);
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
