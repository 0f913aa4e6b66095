// One selection everywhere (src/select, docs/selection.md): time texts parsed exactly; the clock's inverse
// conversions; tables selected on columns against a row-by-row oracle in BigInt; the CPU analysis clipped to
// a range and filtered by thread and process, against an independent clipping of every cpuUsage row — by
// both its paths (a whole table, and the rows staged while the trace streams) and against the Running time
// of threadStates; the CLI's --from/--to/--pid/--process/--tid on cpu, dump, spinlocks, convert and summary.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import fc from 'fast-check';
import { describe, expect, test } from 'vitest';
import {
  analyzeCpu,
  CpuAnalyzer,
  CpuUsageDeriver,
  cpuUsage,
  decodeSync,
  parseTimeSpec,
  resolveSelection,
  Selection,
  selectTable,
  threadStates,
  stacksOfTrace,
  type DecodeResult,
  type Table,
  TABLE_NAMES,
  type SelectionOptions,
} from '../src/node.js';
import { createClock, FILETIME_UNIX_EPOCH } from '../src/time.js';
import { simulateSchedule, writeTrace } from '../src/writer/index.js';
import { DerivedRows } from './helpers/derived-rows.js';
import * as L from '../src/generated/layout.js';

const BIN = fileURLToPath(new URL('../bin/etw-decode.js', import.meta.url));
const SAMPLE = fileURLToPath(new URL('../samples/sample.etl', import.meta.url));

describe('time texts', () => {
  test.each([
    ['1.5s', 1_500_000_000n],
    ['250ms', 250_000_000n],
    ['40us', 40_000n],
    ['40µs', 40_000n],
    ['1200ns', 1200n],
    ['2', 2_000_000_000n],
    ['0.000000001', 1n],
    ['1.500000000', 1_500_000_000n],
    ['-1s', -1_000_000_000n],
    [' 3 ms ', 3_000_000n],
    [0.25, 250_000_000n],
  ] as const)('%s is %s ns since the start', (text, ns) => {
    expect(parseTimeSpec(text)).toEqual({ ns });
  });

  test('ISO wall-clock times with their zone are FILETIMEs, exact to 100 ns', () => {
    const unix = BigInt(Date.UTC(2022, 5, 18, 4, 26, 40)) * 10_000n + FILETIME_UNIX_EPOCH;
    expect(parseTimeSpec('2022-06-18T04:26:40Z')).toEqual({ fileTime: unix });
    expect(parseTimeSpec('2022-06-18T04:26:40.1234567Z')).toEqual({ fileTime: unix + 1_234_567n });
    expect(parseTimeSpec('2022-06-18T06:26:40.5+02:00')).toEqual({ fileTime: unix + 5_000_000n });
    expect(parseTimeSpec('2022-06-18 01:26:40.5-0300')).toEqual({ fileTime: unix + 5_000_000n });
  });

  test.each([
    ['1.0000000001s', /finer than a nanosecond/],
    ['1.5ns', /finer than a nanosecond/],
    ['2022-06-18T04:26:40', /needs its zone/],
    ['2022-02-30T00:00Z', /not a valid date/],
    ['2022-06-18T04:26:40.12345678Z', /finer than 100 ns/],
    ['soon', /expected a time since the trace start/],
    ['1.5 h', /expected a time/],
  ] as const)('%s is refused: %s', (text, why) => {
    expect(() => parseTimeSpec(text)).toThrow(why);
  });

  test('the clock finds the first tick at or after a time, for any frequency and anchor', () => {
    fc.assert(
      fc.property(
        fc.bigInt({ min: 1n, max: 10n ** 10n }),
        fc.bigInt({ min: -(2n ** 40n), max: 2n ** 40n }),
        fc.bigInt({ min: -(10n ** 12n), max: 10n ** 12n }),
        fc.bigInt({ min: 0n, max: 2n ** 62n }),
        (perfFreq, headerTimestamp, ns, startTime) => {
          const clock = createClock({ clockType: 1, perfFreq, cpuSpeedInMHz: 0, headerTimestamp, startTime });
          const t = clock.fromNanoseconds(ns);
          expect(clock.toNanoseconds(t) >= ns && clock.toNanoseconds(t - 1n) < ns).toBe(true);
          const ft = startTime + ns / 100n;
          const u = clock.fromFileTime(ft);
          expect(clock.toFileTime(u) >= ft && clock.toFileTime(u - 1n) < ft).toBe(true);
        },
      ),
      { numRuns: 300 },
    );
  });
});

// ---- the oracle: each row of cpuUsage clipped in BigInt

type Sums = { switchIns: number; cpu: bigint; ready: bigint; wait: bigint };

function overlap(a: bigint, b: bigint, from: bigint | null, to: bigint | null): bigint {
  const s = from !== null && a < from ? from : a;
  const e = to !== null && b > to ? to : b;
  return e > s ? e - s : 0n;
}

function oracle(r: DecodeResult, from: bigint | null, to: bigint | null, tids: Set<number> | null, pids: Set<number> | null): Map<string, Sums> {
  const out = new Map<string, Sums>();
  for (const row of cpuUsage(r).toArray()) {
    if (tids && !tids.has(row.newThreadId)) continue;
    if (pids && (row.newProcessId === null || !pids.has(row.newProcessId))) continue;
    const key = `${row.newThreadId}/${row.newProcessId}`;
    const s = out.get(key) ?? { switchIns: 0, cpu: 0n, ready: 0n, wait: 0n };
    if ((from === null || row.switchInTime >= from) && (to === null || row.switchInTime < to)) s.switchIns++;
    if (row.cpuUsage !== null) s.cpu += overlap(row.switchInTime, row.nextSwitchOutTime!, from, to);
    if (row.ready !== null) s.ready += overlap(row.readyTime!, row.switchInTime, from, to);
    if (row.waits !== null) s.wait += overlap(row.lastSwitchOutTime!, row.readyTime!, from, to);
    out.set(key, s);
  }
  for (const [k, s] of out) if (s.switchIns === 0 && s.cpu === 0n && s.ready === 0n && s.wait === 0n) out.delete(k);
  return out;
}

const traces = [1, 2, 3].map((seed) => decodeSync(writeTrace(simulateSchedule({ seed, cpus: 2 + (seed % 3), duration: 300_000 + 50_000 * seed, switchMode: seed === 2 ? 'compact' : 'mixed' }).description).bytes));

function bounds(r: DecodeResult): [bigint, bigint] {
  const ts = r.cswitch.column('timestamp');
  return [ts.reduce((a, b) => (b < a ? b : a)), ts.reduce((a, b) => (b > a ? b : a))];
}

describe('the CPU analysis of a selection', () => {
  test('per thread: switch-ins in the range, CPU, ready and wait time clipped to it, as the oracle; both paths agree; Running time of threadStates agrees', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 0, max: 2 }),
        fc.double({ min: -0.1, max: 1.1, noNaN: true }),
        fc.double({ min: 0, max: 1.2, noNaN: true }),
        fc.boolean(),
        fc.boolean(),
        fc.integer({ min: 0, max: 1000 }),
        async (k, a, len, withFrom, withTo, pick) => {
          const r = traces[k]!;
          const [lo, hi] = bounds(r);
          const span = Number(hi - lo);
          const from = withFrom ? lo + BigInt(Math.floor(a * span)) : null;
          const to = withTo ? (from ?? lo) + BigInt(Math.floor(len * span)) : null;
          // one process and one thread of the trace, by the draw, for some runs
          const rows = cpuUsage(r).toArray();
          const some = rows[pick % rows.length]!;
          const tids = pick % 3 === 1 ? new Set([some.newThreadId]) : null;
          const pids = pick % 3 === 2 && some.newProcessId !== null ? new Set([some.newProcessId]) : null;
          const spec: SelectionOptions = {
            ...(from !== null ? { from: { ticks: from } } : {}),
            ...(to !== null ? { to: { ticks: to } } : {}),
            ...(tids ? { threadIds: [...tids] } : {}),
            ...(pids ? { processIds: [...pids] } : {}),
          };
          const selection = resolveSelection(spec, r.clock, r);
          const want = oracle(r, from, to, tids, pids);
          const got = analyzeCpu(r, { selection, worst: 5 });
          const seen = new Map(got.threads.map((t) => [`${t.threadId}/${t.processId}`, { switchIns: t.switchIns, cpu: t.cpuTicks, ready: t.readyTicks, wait: t.waitTicks }]));
          expect(seen).toEqual(want);
          // the totals add up, and the longest ready delays switched in inside the range
          expect(got.total.cpuTicks).toBe([...want.values()].reduce((n, s) => n + s.cpu, 0n));
          for (const w of got.worst) {
            expect(from === null || w.switchInTime >= from).toBe(true);
            expect(to === null || w.switchInTime < to).toBe(true);
          }
          // the rows staged while the trace streams give the same analysis
          const analyzer = new CpuAnalyzer({ selection, worst: 5 });
          const deriver = new CpuUsageDeriver(analyzer);
          deriver.add(r.cswitch, r.readythread, r.threadEvents);
          deriver.finish();
          const again = analyzer.result(r);
          expect(again.threads).toEqual(got.threads);
          expect(again.worst).toEqual(got.worst);
          // Running time per thread in threadStates, selected, is the CPU time per thread
          const states = selectTable(threadStates(r), selection).toArray();
          const running = new Map<string, bigint>();
          for (const s of states) if (s.state === 'running' && s.duration !== null) running.set(`${s.threadId}/${s.processId}`, (running.get(`${s.threadId}/${s.processId}`) ?? 0n) + s.duration);
          // (the idle thread has no thread states)
          for (const [key, s] of want) if (s.cpu > 0n && !key.startsWith("0/")) expect(running.get(key), key).toBe(s.cpu);
        },
      ),
      { numRuns: 40 },
    );
  });

  test('process names resolve through the lifetimes; an empty range selects nothing', () => {
    const r = traces[0]!;
    const procs = r.processes.toArray().filter((p) => p.imageFileName);
    const target = procs[procs.length - 1]!;
    const byName = analyzeCpu(r, { selection: resolveSelection({ processNames: [target.imageFileName!.toUpperCase()] }, r.clock, r) });
    const byId = analyzeCpu(r, { selection: resolveSelection({ processIds: procs.filter((p) => p.imageFileName === target.imageFileName).map((p) => p.processId) }, r.clock, r) });
    expect(byName.processes.length).toBeGreaterThan(0);
    expect(byName.processes).toEqual(byId.processes);
    expect(byName.selection!.processIds).toEqual([...new Set(procs.filter((p) => p.imageFileName === target.imageFileName).map((p) => p.processId))].sort((a, b) => a - b));
    const [lo] = bounds(r);
    const none = analyzeCpu(r, { selection: resolveSelection({ from: { ticks: lo + 10n }, to: { ticks: lo + 10n } }, r.clock, r) });
    expect(none.threads).toEqual([]);
    expect(none.total.switchIns).toBe(0);
  });
});

describe('tables of a selection', () => {
  test('events by time and thread (either thread of a switch), lifetimes that overlap, as the row-by-row oracle', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 2 }), fc.double({ min: 0, max: 1, noNaN: true }), fc.double({ min: 0, max: 0.5, noNaN: true }), fc.integer({ min: 0, max: 999 }), (k, a, len, pick) => {
        const r = traces[k]!;
        const [lo, hi] = bounds(r);
        const from = lo + BigInt(Math.floor(a * Number(hi - lo)));
        const to = from + BigInt(Math.floor(len * Number(hi - lo)));
        const cs = r.cswitch.toArray();
        const known = cs.filter((x) => x.newThreadId !== null && x.newThreadId !== 0);
        const tid = known[pick % known.length]!.newThreadId!;
        const sel = resolveSelection({ from: { ticks: from }, to: { ticks: to }, threadIds: pick % 2 ? [tid] : undefined }, r.clock, r);
        const inRange = (t: bigint) => t >= from && t < to;
        const keepTid = (t: number) => pick % 2 === 0 || t === tid;
        expect(selectTable(r.cswitch, sel).toArray()).toEqual(cs.filter((x) => inRange(x.timestamp) && (keepTid(x.newThreadId ?? -1) || keepTid(x.oldThreadId))));
        expect(selectTable(r.readythread, sel).toArray()).toEqual(r.readythread.toArray().filter((x) => inRange(x.timestamp) && keepTid(x.threadId)));
        expect(selectTable(r.threads, sel).toArray()).toEqual(
          r.threads.toArray().filter((x) => (x.startTime === null || x.startTime < to) && (x.endTime === null || x.endTime > from) && keepTid(x.threadId)),
        );
      }),
      { numRuns: 60 },
    );
  });

  test('every table has its rule: a range over all time keeps every row of every table', () => {
    const r = decodeSync(writeTrace(simulateSchedule({ seed: 5, cpus: 2, duration: 300_000, switchMode: 'mixed', spinlocks: 0.05, profileInterval: 2_000, images: true, stacks: true }).description).bytes);
    const all = resolveSelection({ from: { ticks: -(2n ** 63n) } }, r.clock, r);
    const tables = { ...r, cpuUsage: cpuUsage(r), threadStates: threadStates(r), ...stacksOfTrace(r) } as unknown as Record<(typeof TABLE_NAMES)[number], Table>;
    for (const name of TABLE_NAMES) {
      expect([name, selectTable(tables[name], all).length]).toEqual([name, tables[name].length]);
      expect([name, tables[name].length > 0]).toEqual([name, true]);
    }
  });

  test("a thread's process at a time: its lifetime with the latest start at or before it (kept after its End), none before the first; tid 0 → 0", () => {
    const th = new DerivedRows('threads');
    for (const [pid, start, end] of [[1, 100n, 200n], [2, 300n, 400n]] as const) {
      const i = th.add();
      th.set(i, L.TH_THREAD_ID, 5);
      th.set(i, L.TH_PROCESS_ID, pid);
      th.set(i, L.TH_START_TIME, start);
      th.set(i, L.TH_END_TIME, end);
    }
    const sel = new Selection(null, null, null, null, th.take());
    expect([150, 250, 350, 50, 500, 100, 300].map((t) => sel.processOf(5, 0, t))).toEqual([1, 1, 2, -1, 2, 1, 2]);
    expect(sel.processOf(6, 0, 150)).toBe(-1);
    expect(sel.processOf(0, 0, 150)).toBe(0);
  });

  test('switches by process: the process of either thread at the switch, from the lifetimes', () => {
    const r = traces[1]!;
    const pid = r.processes.toArray().find((p) => p.processId !== 0 && p.imageFileName)!.processId;
    const sel = resolveSelection({ processIds: [pid] }, r.clock, r);
    const threadsOf = new Set(r.threads.toArray().filter((t) => t.processId === pid).map((t) => t.threadId));
    const got = selectTable(r.cswitch, sel).toArray();
    expect(got.length).toBeGreaterThan(0);
    expect(got).toEqual(r.cswitch.toArray().filter((x) => threadsOf.has(x.newThreadId ?? -1) || threadsOf.has(x.oldThreadId)));
  });
});

function cli(...args: string[]): { status: number | null; stdout: string; stderr: string } {
  const p = spawnSync(process.execPath, [BIN, ...args], { encoding: 'utf8' });
  return { status: p.status, stdout: p.stdout, stderr: p.stderr };
}

describe('the CLI', () => {
  const r = decodeSync(new Uint8Array(readFileSync(SAMPLE)));

  test('cpu --from --to --process: the library result for the same selection', () => {
    const p = cli('cpu', SAMPLE, '--from', '0.1s', '--to', '350ms', '--process', 'svchost', '--by', 'thread', '--top', '0', '--json');
    expect(p.status).toBe(0);
    const json = JSON.parse(p.stdout);
    const want = analyzeCpu(r, { selection: resolveSelection({ from: '0.1s', to: '350ms', processNames: ['svchost'] }, r.clock, r) });
    expect(json.rows.map((t: { threadId: number; cpuTicks: string }) => [t.threadId, t.cpuTicks])).toEqual(want.threads.map((t) => [t.threadId, String(t.cpuTicks)]));
    expect(json.selection.fromNs).toBe('100000000');
    expect(json.selection.toNs).toBe('350000000');
    expect(want.threads.length).toBeGreaterThan(0);
  });

  test('dump --tid --from --to: the rows selectTable keeps; an ISO time is the same instant as its offset', () => {
    const anchor = r.clock!.anchorFileTime;
    const iso = new Date(Number((anchor - FILETIME_UNIX_EPOCH) / 10_000n) + 200).toISOString(); // +0.2 s (the anchor is whole ms)
    expect((anchor - FILETIME_UNIX_EPOCH) % 10_000n).toBe(0n);
    const p = cli('dump', SAMPLE, '--table', 'cswitch', '--from', iso, '--to', '0.4s', '--tid', '21304');
    expect(p.status).toBe(0);
    const want = selectTable(r.cswitch, resolveSelection({ from: '0.2s', to: '0.4s', threadIds: [21304] }, r.clock, r));
    expect(p.stdout.trim().split('\n').length - 1).toBe(want.length);
    expect(want.length).toBeGreaterThan(0);
    const empty = cli('dump', SAMPLE, '--table', 'cswitch', '--from', '100s');
    expect(empty.status).toBe(0);
    expect(empty.stderr).toMatch(/no cswitch rows in the selection \(100\.000000000 s to end since the trace start\); the trace has 2532/);
  });

  test('spinlocks --from --to counts the spin lock rows in the range', () => {
    const p = cli('spinlocks', SAMPLE, '--from', '0.2s', '--to', '0.3s', '--json');
    expect(p.status).toBe(0);
    const want = selectTable(r.spinlock, resolveSelection({ from: '0.2s', to: '0.3s' }, r.clock, r));
    expect(JSON.parse(p.stdout).totals.rows).toBe(want.length);
    expect(want.length).toBeGreaterThan(0);
    expect(want.length).toBeLessThan(r.spinlock.length);
  });

  test('convert --from --to --tid writes the selected rows; another selection converts again; --to FORMAT still names the format', () => {
    const out = mkdtempSync(join(tmpdir(), 'etw-select-'));
    const rows = (table: string) => {
      const dir = join(out, table);
      const part = readdirSync(dir)[0]!;
      const f = readdirSync(join(dir, part)).find((x) => x.endsWith('.csv'))!;
      return readFileSync(join(dir, part, f), 'utf8').trim().split('\n').length - 1;
    };
    const a = cli('convert', SAMPLE, '--format', 'csv', '--from', '0.2s', '--to', '0.4s', '--tid', '21304', '--out', out, '--no-progress');
    expect(a.status, a.stderr).toBe(0);
    const sel = resolveSelection({ from: '0.2s', to: '0.4s', threadIds: [21304] }, r.clock, r);
    expect(rows('cswitch')).toBe(selectTable(r.cswitch, sel).length);
    expect(rows('threadStates')).toBe(selectTable(threadStates(r), sel).length);
    expect(rows('cpuUsage')).toBe(selectTable(cpuUsage(r), sel).length);
    const b = cli('convert', SAMPLE, '--to', 'csv', '--from', '0.2s', '--out', out, '--no-progress');
    expect(b.stderr).toMatch(/1 converted, 0 skipped/);
    expect(rows('cswitch')).toBe(selectTable(r.cswitch, resolveSelection({ from: '0.2s' }, r.clock, r)).length);
    expect(cli('convert', SAMPLE, '--to', 'csv', '--from', '0.2s', '--out', out, '--no-progress').stderr).toMatch(/0 converted, 1 skipped/);
    expect(cli('convert', SAMPLE, '--format', 'arrow', '--to', 'csv', '--out', out).status).toBe(2);
  });

  test('summary --from --to --process: the summary of the file, and the rows of each table in the selection', () => {
    const p = cli('summary', SAMPLE, '--from', '0.2s', '--to', '0.3s', '--process', 'svchost', '--json');
    expect(p.status).toBe(0);
    const json = JSON.parse(p.stdout);
    const sel = resolveSelection({ from: '0.2s', to: '0.3s', processNames: ['svchost'] }, r.clock, r);
    expect(json.cswitch).toBe(r.cswitch.length); // the file's figures stay the file's
    expect(json.selection.rows.cswitch).toBe(selectTable(r.cswitch, sel).length);
    expect(json.selection.rows.spinlock).toBe(selectTable(r.spinlock, sel).length);
    expect(json.selection.rows.readythread).toBe(selectTable(r.readythread, sel).length);
    expect(json.selection.rows.cswitch).toBeGreaterThan(0);
    const text = cli('summary', SAMPLE, '--from', '0.2s', '--to', '0.3s', '--process', 'svchost');
    expect(text.stdout).toContain(`rows in it: cswitch ${json.selection.rows.cswitch} of ${r.cswitch.length}, spinlock ${json.selection.rows.spinlock} of ${r.spinlock.length}`);
  });

  test('a time that is not one is a usage error naming the forms', () => {
    const p = cli('cpu', SAMPLE, '--from', 'soon');
    expect(p.status).toBe(2);
    expect(p.stderr).toMatch(/--from <time>.*expected a time since the trace start/);
    const q = cli('dump', SAMPLE, '--pid', '12,x');
    expect(q.status).toBe(2);
    expect(q.stderr).toMatch(/expected comma-separated ids/);
  });
});
