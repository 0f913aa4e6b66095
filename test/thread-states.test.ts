// The threadStates table (src/derive/thread-states.ts; rules: docs/design/streaming.md "threadStates"):
// hand-made cases for each state and each unknown; on random writer traces (the scheduler simulation,
// CSwitch events and compact switches) it equals the independent oracle (test/helpers/thread-states-oracle.ts)
// row for row, each thread's Running time is its CPU time in cpuUsage, and its intervals do not overlap;
// `dump --table threadStates` and convert write it.
import { describe, expect, test } from 'vitest';
import fc from 'fast-check';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as L from '../src/generated/layout.js';
import { cpuUsage, decodeSync, threadStates, ThreadStatesDeriver, toCsv, type Table, type ThreadStateRow } from '../src/node.js';
import { DerivedRows } from './helpers/derived-rows.js';
import { generateRealisticTrace, simulateSchedule, writeTrace, type ScheduleOptions } from '../src/writer/index.js';
import { threadStatesOracle } from './helpers/thread-states-oracle.js';
import { corpusFiles, corpusTestsEnabled, readCorpus } from './helpers/corpus.js';

interface Sw {
  t: number | bigint;
  cpu: number;
  new: number | null;
  old: number;
  state?: number | null;
  wr?: number;
  wm?: number;
  /** newThreadPriority, oldThreadPriority */
  np?: number;
  op?: number;
}

function cswitch(rows: Sw[]): Table<'cswitch'> {
  const out = new DerivedRows('cswitch');
  for (const s of rows) {
    const r = out.add();
    out.set(r, L.CS_TIMESTAMP, BigInt(s.t));
    out.set(r, L.CS_CPU, s.cpu);
    out.maybe(r, L.CS_NEW_THREAD_ID, s.new);
    out.set(r, L.CS_OLD_THREAD_ID, s.old);
    out.maybe(r, L.CS_OLD_THREAD_STATE, s.state === undefined ? 2 : s.state);
    out.maybe(r, L.CS_OLD_THREAD_WAIT_REASON, s.wr);
    out.maybe(r, L.CS_OLD_THREAD_WAIT_MODE, s.wm);
    out.maybe(r, L.CS_NEW_THREAD_PRIORITY, s.np);
    out.maybe(r, L.CS_OLD_THREAD_PRIORITY, s.op);
  }
  return out.take();
}

function readythread(rows: { t: number | bigint; cpu: number; tid: number }[]): Table<'readythread'> {
  const out = new DerivedRows('readythread');
  for (const x of rows) {
    const r = out.add();
    out.set(r, L.RT_TIMESTAMP, BigInt(x.t));
    out.set(r, L.RT_CPU, x.cpu);
    out.set(r, L.RT_THREAD_ID, x.tid);
  }
  return out.take();
}

function lifetimes(rows: { tid: number; pid: number; start?: number; end?: number }[]): Table<'threads'> {
  const out = new DerivedRows('threads');
  for (const x of rows) {
    const r = out.add();
    out.set(r, L.TH_THREAD_ID, x.tid);
    out.set(r, L.TH_PROCESS_ID, x.pid);
    if (x.start !== undefined) out.set(r, L.TH_START_TIME, BigInt(x.start));
    if (x.end !== undefined) out.set(r, L.TH_END_TIME, BigInt(x.end));
  }
  return out.take();
}

function rowsOf(t: Table<'threadStates'>): ThreadStateRow[] {
  return Array.from({ length: t.length }, (_, i) => t.get(i));
}

/** The derivation (threadStates(): the WebAssembly core; and the TypeScript core, `engine: 'reference'`) and the oracle agree column for column; the rows. */
function derive(cs: Table<'cswitch'>, rt: Table<'readythread'>, th: Table<'threads'>): ThreadStateRow[] {
  const got = threadStates({ cswitch: cs, readythread: rt, threads: th });
  const want = threadStatesOracle(cs, rt, th);
  got.columns.forEach((col, i) => expect(col, got.specs[i]!.name).toEqual(want.columns[i]));
  expect(got.length).toBe(want.length);
  const ref: Table<'threadStates'>[] = [];
  const d = new ThreadStatesDeriver((t) => ref.push(t), { threads: th, ordered: true, engine: 'reference' });
  d.add(cs, rt);
  d.finish();
  expect(ref.reduce((n, t) => n + t.length, 0)).toBe(want.length);
  if (want.length > 0) ref[0]!.columns.forEach((col, i) => expect(col, `reference ${got.specs[i]!.name}`).toEqual(want.columns[i]));
  return rowsOf(got);
}

/** A row with the nulls filled in. */
function row(x: Partial<ThreadStateRow> & Pick<ThreadStateRow, 'threadId' | 'state' | 'startTime'>): ThreadStateRow {
  const endTime = x.endTime ?? null;
  return {
    processId: null,
    endTime,
    duration: endTime === null ? null : endTime - x.startTime,
    cpu: null,
    readyingThreadId: null,
    readyingProcessId: null,
    waitReason: null,
    waitMode: null,
    oldThreadState: null,
    priority: null,
    valid: 0,
    ...x,
  } as ThreadStateRow;
}

/** The rows of one thread without the valid column. */
function of(rows: ThreadStateRow[], tid: number) {
  return rows.filter((r) => r.threadId === tid).map(({ valid: _, ...r }) => r);
}
const strip = (rows: ThreadStateRow[]) => rows.map(({ valid: _, ...r }) => r);

describe('hand-made cases', () => {
  test('running, waiting (reason, mode), ready (readying thread and process, cpu), running, ready by preemption (open at the end); unknown before the first event', () => {
    const cs = cswitch([
      { t: 50, cpu: 1, new: 20, old: 0 },
      { t: 100, cpu: 0, new: 10, old: 0 },
      { t: 200, cpu: 0, new: 0, old: 10, state: 5, wr: 6, wm: 1 },
      { t: 400, cpu: 0, new: 10, old: 0 },
      { t: 500, cpu: 0, new: 0, old: 10, state: 1 },
    ]);
    const rt = readythread([{ t: 300, cpu: 1, tid: 10 }]);
    const th = lifetimes([
      { tid: 10, pid: 100 },
      { tid: 20, pid: 200 },
    ]);
    const rows = derive(cs, rt, th);
    expect(of(rows, 10)).toEqual(
      strip([
        row({ threadId: 10, processId: 100, state: 'unknown', startTime: 50n, endTime: 100n }),
        row({ threadId: 10, processId: 100, state: 'running', startTime: 100n, endTime: 200n, cpu: 0 }),
        row({ threadId: 10, processId: 100, state: 'waiting', startTime: 200n, endTime: 300n, waitReason: 6, waitMode: 1, oldThreadState: 5 }),
        row({ threadId: 10, processId: 100, state: 'ready', startTime: 300n, endTime: 400n, cpu: 1, readyingThreadId: 20, readyingProcessId: 200 }),
        row({ threadId: 10, processId: 100, state: 'running', startTime: 400n, endTime: 500n, cpu: 0 }),
        row({ threadId: 10, processId: 100, state: 'ready', startTime: 500n, cpu: 0, oldThreadState: 1 }),
      ]),
    );
    // its first event is at the start of the trace: no unknown row; running to the end: open
    expect(of(rows, 20)).toEqual(strip([row({ threadId: 20, processId: 200, state: 'running', startTime: 50n, cpu: 1 })]));
    // the idle thread has no rows
    expect(rows.some((r) => r.threadId === 0)).toBe(false);
  });

  test('priority: running from its switch-in, waiting and preempted from the switch-out, ready from a ReadyThread from the switch-in that ends it', () => {
    const cs = cswitch([
      { t: 100, cpu: 0, new: 10, old: 0, np: 9 },
      { t: 200, cpu: 0, new: 0, old: 10, state: 5, wr: 6, wm: 0, op: 8 },
      { t: 400, cpu: 0, new: 10, old: 0, np: 12 },
      { t: 500, cpu: 0, new: 11, old: 10, state: 1, op: 11 },
      { t: 600, cpu: 0, new: 10, old: 11, np: 10 },
    ]);
    const rt = readythread([{ t: 300, cpu: 0, tid: 10 }]);
    const rows = derive(cs, rt, lifetimes([{ tid: 10, pid: 100 }]));
    expect(of(rows, 10).map((r) => [r.state, r.startTime, r.priority])).toEqual([
      ['running', 100n, 9],
      ['waiting', 200n, 8],
      ['ready', 300n, 12], // readied by a ReadyThread: the priority it was switched in with
      ['running', 400n, 12],
      ['ready', 500n, 11], // preempted: the switch-out's
      ['running', 600n, 10],
    ]);
  });

  test('waiting until the switch-in when no ReadyThread was seen; the readying thread of a ready on a CPU not seen running is null', () => {
    const cs = cswitch([
      { t: 10, cpu: 0, new: 7, old: 0 },
      { t: 20, cpu: 0, new: 0, old: 7, state: 5, wr: 13 },
      { t: 60, cpu: 0, new: 7, old: 0 },
      { t: 70, cpu: 0, new: 0, old: 7, state: 5, wr: 13 },
      { t: 90, cpu: 0, new: 7, old: 0 },
    ]);
    const rt = readythread([{ t: 80, cpu: 3, tid: 7 }]);
    const rows = derive(cs, rt, lifetimes([]));
    expect(of(rows, 7)).toEqual(
      strip([
        row({ threadId: 7, state: 'running', startTime: 10n, endTime: 20n, cpu: 0 }),
        row({ threadId: 7, state: 'waiting', startTime: 20n, endTime: 60n, waitReason: 13, oldThreadState: 5 }),
        row({ threadId: 7, state: 'running', startTime: 60n, endTime: 70n, cpu: 0 }),
        row({ threadId: 7, state: 'waiting', startTime: 70n, endTime: 80n, waitReason: 13, oldThreadState: 5 }),
        row({ threadId: 7, state: 'ready', startTime: 80n, endTime: 90n, cpu: 3 }),
        row({ threadId: 7, state: 'running', startTime: 90n, cpu: 0 }),
      ]),
    );
  });

  test('unknown: after a switch-out with no state (compact rows\' missing fields stay null), after a switch-out that was lost, after a Start; no row before a Start or after Terminated or an End', () => {
    const cs = cswitch([
      { t: 100, cpu: 0, new: 5, old: 0 },
      { t: 110, cpu: 0, new: 6, old: 5, state: null }, // 5 out, state not recorded
      { t: 150, cpu: 0, new: 8, old: 9 }, // 6's switch-out lost (another thread switched out)
      { t: 170, cpu: 1, new: 5, old: 0 },
      { t: 180, cpu: 1, new: 0, old: 5, state: 5, wr: 0 }, // a compact row: no wait mode
      { t: 300, cpu: 1, new: 6, old: 0 },
      { t: 320, cpu: 1, new: 0, old: 6, state: 4 }, // Terminated
    ]);
    const rt = readythread([{ t: 210, cpu: 0, tid: 30 }]);
    const th = lifetimes([
      { tid: 5, pid: 50 },
      { tid: 6, pid: 60, end: 310 },
      { tid: 30, pid: 70, start: 200, end: 260 },
    ]);
    const rows = derive(cs, rt, th);
    expect(of(rows, 5)).toEqual(
      strip([
        row({ threadId: 5, processId: 50, state: 'running', startTime: 100n, endTime: 110n, cpu: 0 }),
        row({ threadId: 5, processId: 50, state: 'unknown', startTime: 110n, endTime: 170n }),
        row({ threadId: 5, processId: 50, state: 'running', startTime: 170n, endTime: 180n, cpu: 1 }),
        row({ threadId: 5, processId: 50, state: 'waiting', startTime: 180n, waitReason: 0, oldThreadState: 5 }),
      ]),
    );
    expect(of(rows, 6)).toEqual(
      strip([
        row({ threadId: 6, processId: 60, state: 'unknown', startTime: 100n, endTime: 110n }),
        row({ threadId: 6, processId: 60, state: 'running', startTime: 110n, endTime: 150n, cpu: 0 }),
        row({ threadId: 6, processId: 60, state: 'unknown', startTime: 150n, endTime: 300n }),
        // its End (310) falls inside the running interval; Terminated ends the thread
        row({ threadId: 6, processId: 60, state: 'running', startTime: 300n, endTime: 320n, cpu: 1 }),
      ]),
    );
    // started at 200: nothing before; unknown until its ready; ready (the thread running on cpu 0 then, 8, process unknown) until its End
    expect(of(rows, 30)).toEqual(
      strip([
        row({ threadId: 30, processId: 70, state: 'unknown', startTime: 200n, endTime: 210n }),
        row({ threadId: 30, processId: 70, state: 'ready', startTime: 210n, endTime: 260n, cpu: 0, readyingThreadId: 8 }),
      ]),
    );
    // 9 was running before the trace's first switch on cpu 0 that names it: unknown from the start of the trace to that switch-out, then running by the row's state (2: preempted → ready)
    expect(of(rows, 9)).toEqual(
      strip([
        row({ threadId: 9, state: 'unknown', startTime: 100n, endTime: 150n }),
        row({ threadId: 9, state: 'ready', startTime: 150n, cpu: 0, oldThreadState: 2 }),
      ]),
    );
  });

  test('a thread seen only in a rundown: one unknown row from the start of the trace, open; reused ids: one set of rows per lifetime, the process of each', () => {
    const cs = cswitch([
      { t: 1000, cpu: 0, new: 44, old: 0 },
      { t: 1100, cpu: 0, new: 0, old: 44, state: 4 },
      { t: 1300, cpu: 0, new: 44, old: 0 },
      { t: 1400, cpu: 0, new: 0, old: 44, state: 5, wr: 7, wm: 0 },
    ]);
    const th = lifetimes([
      { tid: 43, pid: 1 },
      { tid: 44, pid: 2, end: 1050 },
      { tid: 44, pid: 3, start: 1200 },
    ]);
    const rows = derive(cs, readythread([]), th);
    expect(of(rows, 43)).toEqual(strip([row({ threadId: 43, processId: 1, state: 'unknown', startTime: 1000n })]));
    expect(of(rows, 44)).toEqual(
      strip([
        row({ threadId: 44, processId: 2, state: 'running', startTime: 1000n, endTime: 1100n, cpu: 0 }),
        row({ threadId: 44, processId: 3, state: 'unknown', startTime: 1200n, endTime: 1300n }),
        row({ threadId: 44, processId: 3, state: 'running', startTime: 1300n, endTime: 1400n, cpu: 0 }),
        row({ threadId: 44, processId: 3, state: 'waiting', startTime: 1400n, waitReason: 7, waitMode: 0, oldThreadState: 5 }),
      ]),
    );
  });

  test('ties: a ReadyThread at the time of the switch-in, a switch-out and a switch-in elsewhere at one time, a run of no ticks; 64-bit times beyond 2^53 and negative', () => {
    const base = (1n << 60n) + 3n;
    const cs = cswitch([
      { t: base, cpu: 0, new: 3, old: 0 },
      { t: base + 5n, cpu: 0, new: 0, old: 3, state: 1 },
      { t: base + 5n, cpu: 1, new: 3, old: 0 },
      { t: base + 5n, cpu: 1, new: 0, old: 3, state: 5, wr: 2 },
      { t: base + 9n, cpu: 1, new: 3, old: 0 },
      { t: -7n, cpu: 2, new: 4, old: 0 },
    ]);
    const rt = readythread([{ t: base + 9n, cpu: 1, tid: 3 }]);
    const rows = derive(cs, rt, lifetimes([]));
    expect(of(rows, 3)).toEqual(
      strip([
        row({ threadId: 3, state: 'unknown', startTime: -7n, endTime: base }),
        row({ threadId: 3, state: 'running', startTime: base, endTime: base + 5n, cpu: 0 }),
        row({ threadId: 3, state: 'running', startTime: base + 5n, endTime: base + 5n, cpu: 1 }),
        row({ threadId: 3, state: 'waiting', startTime: base + 5n, endTime: base + 9n, waitReason: 2, oldThreadState: 5 }),
        row({ threadId: 3, state: 'running', startTime: base + 9n, cpu: 1 }),
      ]),
    );
    expect(of(rows, 4)).toEqual(strip([row({ threadId: 4, state: 'running', startTime: -7n, cpu: 2 })]));
  });

  test('no rows at all: an empty table', () => {
    expect(derive(cswitch([]), readythread([]), lifetimes([])).length).toBe(0);
  });
});

describe('random writer traces (scheduler simulation): derivation = oracle, running time = cpuUsage, no overlaps', () => {
  const check = (options: Partial<ScheduleOptions>) => {
    const sim = simulateSchedule({ seed: 1, cpus: 4, duration: 300_000, ...options });
    const r = decodeSync(writeTrace(sim.description).bytes);
    const rows = derive(r.cswitch, r.readythread, r.threads);
    // Running time per thread = its CPU time in cpuUsage; one running row per cpuUsage row
    const usage = cpuUsage(r);
    const cpu = new Map<number, bigint>();
    let usageRows = 0;
    for (let i = 0; i < usage.length; i++) {
      const u = usage.get(i);
      if (u.newThreadId === 0) continue;
      usageRows++;
      cpu.set(u.newThreadId, (cpu.get(u.newThreadId) ?? 0n) + (u.cpuUsage ?? 0n));
    }
    const running = new Map<number, bigint>();
    for (const x of rows) if (x.state === 'running') running.set(x.threadId, (running.get(x.threadId) ?? 0n) + (x.duration ?? 0n));
    expect(running).toEqual(cpu);
    expect(rows.filter((x) => x.state === 'running').length).toBe(usageRows);
    // a simulated trace loses nothing: per thread the intervals follow one another
    const byThread = new Map<number, ThreadStateRow[]>();
    for (const x of rows) (byThread.get(x.threadId) ?? byThread.set(x.threadId, []).get(x.threadId)!).push(x);
    for (const list of byThread.values()) {
      for (let i = 1; i < list.length; i++) {
        expect(list[i - 1]!.endTime).not.toBeNull();
        expect(list[i]!.startTime).toBeGreaterThanOrEqual(list[i - 1]!.endTime!);
      }
    }
    return rows;
  };

  test('compact, CSwitch and mixed traces: every state occurs', () => {
    const rows = [
      ...check({ seed: 21, switchMode: 'compact' }),
      ...check({ seed: 22, switchMode: 'cswitch', cswitchVersions: [2, 3, 4] }),
      ...check({ seed: 23, switchMode: 'mixed', cpus: 6 }),
    ];
    for (const s of ['running', 'ready', 'waiting', 'unknown']) expect(rows.filter((x) => x.state === s).length, s).toBeGreaterThan(10);
    expect(rows.filter((x) => x.state === 'ready' && x.readyingThreadId !== null).length).toBeGreaterThan(10);
    expect(rows.filter((x) => x.state === 'ready' && x.oldThreadState !== null).length).toBeGreaterThan(10);
  });

  test('any seed, CPU count and switch encoding', () => {
    fc.assert(
      // (the simulation's scripted lifecycle needs 2 CPUs and some time to complete)
      fc.property(fc.integer({ min: 1, max: 1e6 }), fc.integer({ min: 2, max: 8 }), fc.constantFrom('compact', 'cswitch', 'mixed'), (seed, cpus, switchMode) => {
        check({ seed, cpus, switchMode: switchMode as ScheduleOptions['switchMode'], duration: 300_000 });
      }),
      { numRuns: 12 },
    );
  });
});

test('a realistic trace (thread churn, reused ids, both switch encodings): derivation = oracle, running time = cpuUsage', () => {
  const r = decodeSync(generateRealisticTrace({ seed: 7, targetBytes: 2 << 20, switches: 'mixed' }).bytes);
  const rows = derive(r.cswitch, r.readythread, r.threads);
  const usage = cpuUsage(r);
  let want = 0n;
  let n = 0;
  for (let i = 0; i < usage.length; i++) {
    const u = usage.get(i);
    if (u.newThreadId === 0) continue;
    want += u.cpuUsage ?? 0n;
    n++;
  }
  const running = rows.filter((x) => x.state === 'running');
  expect(running.length).toBe(n);
  expect(running.reduce((s, x) => s + (x.duration ?? 0n), 0n)).toBe(want);
  expect(n).toBeGreaterThan(1000);
});

describe('real traces (../shared/corpus/real): derivation = oracle, running time = cpuUsage', () => {
  const corpus = corpusTestsEnabled();
  test.skipIf(!corpus).each(corpusFiles())('%s', (name) => {
    const r = decodeSync(readCorpus(name));
    const rows = derive(r.cswitch, r.readythread, r.threads);
    const usage = cpuUsage(r);
    let want = 0n;
    for (let i = 0; i < usage.length; i++) if (usage.get(i).newThreadId !== 0) want += usage.get(i).cpuUsage ?? 0n;
    expect(rows.reduce((n, x) => n + (x.state === 'running' ? (x.duration ?? 0n) : 0n), 0n)).toBe(want);
  });
});

describe('dump and convert', () => {
  const BIN = fileURLToPath(new URL('../bin/etw-decode.js', import.meta.url));
  const dir = mkdtempSync(join(tmpdir(), 'etw-tstates-'));
  const file = join(dir, 't.etl');
  const bytes = writeTrace(simulateSchedule({ seed: 5, cpus: 3, duration: 200_000, switchMode: 'mixed' }).description).bytes;
  writeFileSync(file, bytes);
  const want = threadStates(decodeSync(bytes));

  test('dump --table threadStates writes the rows of threadStates(), streamed: each thread in time order', () => {
    const csv = execFileSync(process.execPath, [BIN, 'dump', file, '--table', 'threadStates'], { encoding: 'utf8' }).trimEnd().split('\n');
    expect(csv[0]).toBe('threadId,processId,state,startTime,endTime,duration,cpu,readyingThreadId,readyingProcessId,waitReason,waitMode,oldThreadState,priority');
    expect(csv.length - 1).toBe(want.length);
    const lines = new TextDecoder().decode(toCsv(want)).trimEnd().split('\n');
    expect(csv.slice(1).sort()).toEqual(lines.slice(1).sort());
    // in the order the intervals end (not threadStates()'): each thread's rows by startTime
    expect(csv.slice(1)).not.toEqual(lines.slice(1));
    const last = new Map<string, bigint>();
    for (const line of csv.slice(1)) {
      const [tid, , , start] = line.split(',');
      if (start === '') continue;
      expect(BigInt(start!) >= (last.get(tid!) ?? -1n), line).toBe(true);
      last.set(tid!, BigInt(start!));
    }
    // the spelling people type
    expect(execFileSync(process.execPath, [BIN, 'dump', file, '--table', 'thread-states'], { encoding: 'utf8' }).trimEnd().split('\n')).toEqual(csv);
  });

  test('convert --tables threadStates writes a partition with its ns columns', () => {
    const out = join(dir, 'ds');
    execFileSync(process.execPath, [BIN, 'convert', file, '--to', 'csv', '--tables', 'threadStates', '--out', out], { encoding: 'utf8' });
    const part = join(out, 'threadStates');
    const files: string[] = [];
    const walk = (d: string) => {
      for (const e of readdirSync(d, { withFileTypes: true })) e.isDirectory() ? walk(join(d, e.name)) : files.push(join(d, e.name));
    };
    walk(part);
    const lines = files.flatMap((f) => readFileSync(f, 'utf8').trimEnd().split('\n'));
    expect(lines[0]).toBe('threadId,processId,state,startTime,endTime,duration,cpu,readyingThreadId,readyingProcessId,waitReason,waitMode,oldThreadState,priority,startTimeNs,endTimeNs,durationNs');
    expect(lines.length - files.length).toBe(want.length);
  });
});
