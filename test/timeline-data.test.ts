// The web page's timeline data (web/src/timeline-data.ts): one entry per switch-in of a non-idle thread
// from the streaming cpuUsage rows, with the state its thread left the CPU in; past the bound, coalesced
// with every switch and every tick of busy time accounted for.
import { describe, expect, test } from 'vitest';
import { cpuUsage, CpuUsageDeriver, decodeSync, type Table } from '../src/node.js';
import { simulateSchedule, writeTrace } from '../src/writer/index.js';
import { TimelineBuilder, UNKNOWN, firstEndingAfter, type TimelineData } from '../web/src/timeline-data.js';

const bytes = writeTrace(simulateSchedule({ seed: 1111, cpus: 4, threads: 60, processes: 8, switchMode: 'mixed', duration: 4_000_000 }).description).bytes;
const r = decodeSync(bytes);
const usage = cpuUsage(r);

/** Feeds the rows in chunks, as the page's worker gets them from CpuUsageDeriver. */
function build(rows: Table<'cpuUsage'>, maxEntries?: number, chunk = 997): TimelineData {
  const b = new TimelineBuilder(maxEntries);
  // cpuUsage() is ordered by (cpu, time); chunks of it keep each CPU's rows in time order
  for (let i = 0; i < rows.length; i += chunk) {
    const end = Math.min(rows.length, i + chunk);
    const columns = rows.columns.map((c) => c.slice(i, end)) as typeof rows.columns;
    b.add(new (rows.constructor as typeof Table)('cpuUsage', { length: end - i, columns: [...columns] }) as Table<'cpuUsage'>);
  }
  return b.finish();
}

describe('full resolution', () => {
  const t = build(usage);

  test('an entry per non-idle switch-in, with its times, thread and process', () => {
    expect(usage.length).toBeGreaterThan(1000);
    const rows = usage.toArray();
    const nonIdle = rows.filter((x) => x.newThreadId !== 0);
    expect(t.switches).toBe(rows.length);
    expect(t.entries).toBe(nonIdle.length);
    expect(t.bucket).toBe(0);
    expect(t.lanes.map((l) => l.cpu)).toEqual([0, 1, 2, 3]);
    for (const l of t.lanes) {
      const mine = nonIdle.filter((x) => x.cpu === l.cpu);
      expect(l.n).toBe(mine.length);
      mine.forEach((x, i) => {
        expect(l.start[i]).toBe(Number(x.switchInTime - t.baseTicks));
        expect(l.end[i]).toBe(Number((x.nextSwitchOutTime ?? x.switchInTime) - t.baseTicks));
        expect(l.tid[i]).toBe(x.newThreadId);
        expect(t.pids[l.proc[i]!]).toBe(x.newProcessId);
      });
      // ends ascend: the binary search of the drawing and the hover holds
      for (let i = 1; i < l.n; i++) expect(l.end[i]!).toBeGreaterThanOrEqual(l.end[i - 1]!);
      expect(firstEndingAfter(l, l.end[0]!)).toBe(1);
    }
  });

  test('the state and wait reason come from the next switch on the same CPU', () => {
    const rows = usage.toArray();
    let checked = 0;
    for (const l of t.lanes) {
      const all = rows.filter((x) => x.cpu === l.cpu);
      let k = 0;
      for (let j = 0; j < all.length; j++) {
        if (all[j]!.newThreadId === 0) continue;
        const next = all[j + 1];
        const want = next && next.oldThreadId === all[j]!.newThreadId ? (next.oldState ?? UNKNOWN) : UNKNOWN;
        expect(l.outState[k]).toBe(want);
        if (want === 5) expect(l.outWait[k]).toBe(next!.oldWaitReason ?? UNKNOWN);
        if (want !== UNKNOWN) checked++;
        k++;
      }
    }
    expect(checked).toBeGreaterThan(1000);
  });
});

describe('coalesced past the bound', () => {
  const max = 400;
  const t = build(usage, max);
  const full = build(usage);

  test('entries stay bounded; every switch and every tick of busy time is accounted for', () => {
    expect(t.bucket).toBeGreaterThan(0);
    expect(t.entries).toBeLessThanOrEqual(max);
    for (const l of t.lanes) {
      const f = full.lanes.find((x) => x.cpu === l.cpu)!;
      let count = 0;
      let busy = 0;
      for (let i = 0; i < l.n; i++) {
        count += l.count![i]!;
        busy += l.busy![i]!;
        if (i) expect(l.start[i]!).toBeGreaterThanOrEqual(l.end[i - 1]! - 1e-9 * Math.abs(l.end[i - 1]!)); // no overlap
      }
      let fullBusy = 0;
      for (let i = 0; i < f.n; i++) fullBusy += f.end[i]! - f.start[i]!;
      expect(count).toBe(f.n);
      expect(busy / fullBusy).toBeCloseTo(1, 4); // float32 sums
      expect(l.start[0]).toBe(f.start[0]);
      expect(l.end[l.n - 1]).toBe(f.end[f.n - 1]);
    }
  });

  test('a coalesced entry is named after its longest switch', () => {
    const l = t.lanes[0]!;
    const f = full.lanes[0]!;
    let j = 0;
    for (let i = 0; i < l.n; i++) {
      let longest = -1;
      let tid = -1;
      for (let k = 0; k < l.count![i]!; k++, j++) {
        const d = f.end[j]! - f.start[j]!;
        if (d > longest) [longest, tid] = [d, f.tid[j]!];
      }
      expect(l.tid[i]).toBe(tid);
    }
  });
});

describe('rows that waited for their process (they come last from the deriver)', () => {
  // a trace without its start rundown: the deriver holds the rows of most threads until its end
  const sim = simulateSchedule({ seed: 1111, cpus: 4, threads: 60, processes: 8, switchMode: 'mixed', duration: 4_000_000 });
  const events = sim.description.events.filter((e) => !(e.kind === 'thread' && e.opcode === 'dcStart'));
  const late = decodeSync(writeTrace({ ...sim.description, events }).bytes);
  const streamed = (): { chunks: Table<'cpuUsage'>[]; heldRows: number } => {
    const chunks: Table<'cpuUsage'>[] = [];
    const d = new CpuUsageDeriver((t) => chunks.push(t), { chunkRows: 997 });
    d.add(late.cswitch, late.readythread, late.threadEvents);
    return { chunks, heldRows: d.finish().heldRows };
  };
  const feed = (chunks: Table<'cpuUsage'>[], maxEntries?: number) => {
    const b = new TimelineBuilder(maxEntries);
    for (const t of chunks) b.add(t);
    return b.finish();
  };

  test('full resolution: the entries of the rows in (cpu, time) order; only states next to a waiting row may be unknown', () => {
    const { chunks, heldRows } = streamed();
    expect(heldRows).toBeGreaterThan(100);
    const t = feed(chunks);
    const want = build(cpuUsage(late));
    expect(t.entries).toBe(want.entries);
    let unknown = 0;
    const shift = Number(t.baseTicks - want.baseTicks); // the first row given differs
    t.lanes.forEach((l, k) => {
      const w = want.lanes[k]!;
      expect(l.cpu).toBe(w.cpu);
      expect([...l.start].map((x) => x + shift)).toEqual([...w.start]);
      expect([...l.end].map((x) => x + shift)).toEqual([...w.end]);
      expect([...l.tid]).toEqual([...w.tid]);
      expect([...l.proc].map((p) => t.pids[p])).toEqual([...w.proc].map((p) => want.pids[p]));
      for (let i = 0; i < l.n; i++) {
        if (l.outState[i] === w.outState[i]) continue;
        expect(l.outState[i]).toBe(UNKNOWN);
        unknown++;
      }
      for (let i = 1; i < l.n; i++) expect(l.end[i]!).toBeGreaterThanOrEqual(l.end[i - 1]!);
    });
    expect(unknown).toBeLessThanOrEqual(2 * heldRows);
  });

  test('coalesced: bounded, time-ordered, every switch and tick of busy time accounted for', () => {
    const max = 400;
    const t = feed(streamed().chunks, max);
    const full = build(cpuUsage(late));
    expect(t.bucket).toBeGreaterThan(0);
    expect(t.entries).toBeLessThanOrEqual(max);
    t.lanes.forEach((l, k) => {
      const f = full.lanes[k]!;
      let count = 0;
      let busy = 0;
      for (let i = 0; i < l.n; i++) {
        count += l.count![i]!;
        busy += l.busy![i]!;
        if (i) expect(l.start[i]!).toBeGreaterThanOrEqual(l.end[i - 1]! - 1e-9 * Math.abs(l.end[i - 1]!));
      }
      let fullBusy = 0;
      for (let i = 0; i < f.n; i++) fullBusy += f.end[i]! - f.start[i]!;
      expect(count).toBe(f.n);
      expect(busy / fullBusy).toBeCloseTo(1, 4);
    });
  });
});
