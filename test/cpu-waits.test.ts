// Wait analysis (src/analysis/waits.ts, `etw-decode cpu --waits`): the blocked time of every switch-in by the
// stack where the thread waited (its switch-in's cswitch stack) and by its readying thread's stack (the
// ReadyThread row's), against an oracle that joins the rows with BigInt keys in Maps — simulated schedules
// with CSwitch and ReadyThread stacks, a selection, the CLI's JSON and text.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { gunzipSync } from 'node:zlib';
import protobuf from 'protobufjs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, test } from 'vitest';
import { analyzeWaits, WaitStackJoin, WaitTotals } from '../src/analysis/waits.js';
import { CpuUsageDeriver } from '../src/derive/cpu-usage.js';
import { StackAttacher } from '../src/derive/stacks.js';
import { cpuUsage, decodeStream, decodeSync, resolveSelection, selectTable, type DecodeResult, type Table } from '../src/node.js';
import { resolveStacks } from '../src/derive/stacks.js';
import { simulateSchedule, writeTrace } from '../src/writer/index.js';

const BIN = fileURLToPath(new URL('../bin/etw-decode.js', import.meta.url));

// perftools.profiles (github.com/google/pprof proto/profile.proto): only the fields read here
const i64 = { type: 'int64' };
const u64 = { type: 'uint64' };
const Profile = protobuf.Root.fromJSON({
  nested: {
    Profile: { fields: { sampleType: { type: 'ValueType', id: 1, rule: 'repeated' }, sample: { type: 'Sample', id: 2, rule: 'repeated' }, location: { type: 'Location', id: 4, rule: 'repeated' }, function: { type: 'Function', id: 5, rule: 'repeated' }, stringTable: { type: 'string', id: 6, rule: 'repeated' } } },
    ValueType: { fields: { type: { ...i64, id: 1 }, unit: { ...i64, id: 2 } } },
    Sample: { fields: { locationId: { ...u64, id: 1, rule: 'repeated' }, value: { ...i64, id: 2, rule: 'repeated' } } },
    Location: { fields: { id: { ...u64, id: 1 }, line: { type: 'Line', id: 4, rule: 'repeated' } } },
    Line: { fields: { functionId: { ...u64, id: 1 } } },
    Function: { fields: { id: { ...u64, id: 1 }, name: { ...i64, id: 2 } } },
  },
}).lookupType('Profile');

/** The profile's value types and samples (values, and function names leaf first). */
function readProfile(bytes: Uint8Array) {
  const m = Profile.toObject(Profile.decode(bytes), { longs: String, defaults: true }) as {
    sampleType: { type: string; unit: string }[];
    sample: { locationId: string[]; value: string[] }[];
    location: { id: string; line: { functionId: string }[] }[];
    function: { id: string; name: string }[];
    stringTable: string[];
  };
  const str = (i: string) => m.stringTable[Number(i)]!;
  const fn = new Map(m.function.map((f) => [f.id, str(f.name)]));
  const loc = new Map(m.location.map((l) => [l.id, fn.get(l.line[0]!.functionId)!]));
  return {
    sampleType: m.sampleType.map((t) => [str(t.type), str(t.unit)]),
    samples: m.sample.map((s) => ({ values: s.value.map(BigInt), functions: s.locationId.map((l) => loc.get(l)!) })),
  };
}

function trace(seed: number): { bytes: Uint8Array; r: DecodeResult } {
  const bytes = writeTrace(simulateSchedule({ seed, cpus: 3, duration: 1_500_000, switchMode: 'mixed', profileInterval: 1_000, images: true, stacks: true }).description).bytes;
  return { bytes, r: decodeSync(bytes) };
}

/** blocked ticks and waits by stack id (-1: none), wait side and ready side, by the simplest joins */
function oracle(r: DecodeResult, usage = cpuUsage(r)) {
  const st = resolveStacks(r);
  const cs = new Map<string, number>();
  r.cswitch.toArray().forEach((row, i) => cs.set(`${row.timestamp}/${row.newThreadId}`, st.stackIdOf.cswitch[i]!));
  const rt = new Map<string, number>();
  r.readythread.toArray().forEach((row, i) => rt.set(`${row.timestamp}/${row.threadId}`, st.stackIdOf.readythread[i]!));
  const wait = new Map<number, [number, bigint]>();
  const ready = new Map<number, [number, bigint]>();
  const add = (m: Map<number, [number, bigint]>, k: number, t: bigint) => {
    const v = m.get(k) ?? [0, 0n];
    m.set(k, [v[0] + 1, v[1] + t]);
  };
  let total = 0n;
  for (const u of usage.toArray()) {
    if (u.waits === null) continue;
    total += u.waits;
    add(wait, cs.get(`${u.switchInTime}/${u.newThreadId}`) ?? -1, u.waits);
    add(ready, u.readyTime === null ? -1 : (rt.get(`${u.readyTime}/${u.newThreadId}`) ?? -1), u.waits);
  }
  return { total, wait, ready, st };
}

const asMap = (list: { stackId: number; waits: number; waitTicks: bigint }[]) => new Map(list.map((s) => [s.stackId, [s.waits, s.waitTicks] as [number, bigint]]));

describe('analyzeWaits', () => {
  test.each([3, 4])('seed %i: blocked time by wait stack and by ready stack, as the oracle; frames of each stack; most blocked first', (seed) => {
    const { r } = trace(seed);
    const usage = cpuUsage(r);
    const a = analyzeWaits({ cpuUsage: usage, cswitch: r.cswitch, readythread: r.readythread, stackEvents: r.stackEvents, stackEventFrames: r.stackEventFrames, images: r.images, ticksPerSecond: r.clock!.ticksPerSecond });
    const o = oracle(r, usage);
    expect(a.waitTicks).toBe(o.total);
    expect(asMap(a.byWaitStack)).toEqual(o.wait);
    expect(asMap(a.byReadyStack)).toEqual(o.ready);
    expect(a.withWaitStack).toBeGreaterThan(0);
    expect(a.withReadyStack).toBeGreaterThan(0);
    for (const s of [...a.byWaitStack, ...a.byReadyStack]) {
      expect(s.frames.length).toBe(s.stackId < 0 ? 0 : o.st.stacks.frameCount[s.stackId]!);
      expect(s.waitMs).toBeCloseTo((Number(s.waitTicks) * 1000) / Number(r.clock!.ticksPerSecond), 6);
    }
    for (let i = 1; i < a.byWaitStack.length; i++) expect(a.byWaitStack[i - 1]!.waitTicks >= a.byWaitStack[i]!.waitTicks).toBe(true);
    // top: the head of the list
    const top = analyzeWaits({ cpuUsage: usage, cswitch: r.cswitch, readythread: r.readythread, stackEvents: r.stackEvents, stackEventFrames: r.stackEventFrames, images: r.images, ticksPerSecond: null }, { top: 3 });
    expect(top.byWaitStack.map((s) => s.stackId)).toEqual(a.byWaitStack.slice(0, 3).map((s) => s.stackId));
    expect(top.waitMs).toBeNull();
  });

  test('a selection: the waits of the selected switch-ins', () => {
    const { r } = trace(5);
    const usage = cpuUsage(r);
    const tid = usage.get(usage.length >> 1).newThreadId;
    const sel = resolveSelection({ threadIds: [tid] }, r.clock, r);
    const picked = selectTable(usage, sel);
    const a = analyzeWaits({ cpuUsage: picked, cswitch: r.cswitch, readythread: r.readythread, stackEvents: r.stackEvents, stackEventFrames: r.stackEventFrames, images: r.images, ticksPerSecond: null });
    const o = oracle(r, picked);
    expect(a.waitTicks).toBe(o.total);
    expect(asMap(a.byWaitStack)).toEqual(o.wait);
    expect(a.waits).toBeLessThan(analyzeWaits({ cpuUsage: usage, cswitch: r.cswitch, readythread: r.readythread, stackEvents: r.stackEvents, stackEventFrames: r.stackEventFrames, images: r.images, ticksPerSecond: null }).waits);
  });
});

describe('streamed: WaitStackJoin and WaitTotals over chunks', () => {
  // what `cpu --waits` does: the stream's chunks met in order (their stack ids from one StackAttacher), the
  // stacked rows joined, the cpuUsage rows summed as a streaming deriver emits them
  test.each([3, 7])('seed %i: the analysis of the whole tables', async (seed) => {
    const bytes = writeTrace(simulateSchedule({ seed, cpus: 3, duration: 10_000_000, switchMode: 'mixed', profileInterval: 1_000, images: true, stacks: true }).description).bytes;
    const r = decodeSync(bytes);
    const whole = analyzeWaits({ cpuUsage: cpuUsage(r), cswitch: r.cswitch, readythread: r.readythread, stackEvents: r.stackEvents, stackEventFrames: r.stackEventFrames, images: r.images, ticksPerSecond: r.clock!.ticksPerSecond });
    const attacher = new StackAttacher(r.stackEvents, r.stackEventFrames);
    const none = new Int32Array(0);
    const totals = new WaitTotals(attacher.result({ cswitch: none, readythread: none, samples: none }));
    const join = new WaitStackJoin();
    let emitted = 0;
    const deriver = new CpuUsageDeriver(
      (u: Table<'cpuUsage'>) => {
        emitted += u.length;
        totals.add(u, join.rows(u));
      },
      { threads: r.threads, chunkRows: 97 },
    );
    let stacked = 0;
    let chunks = 0;
    await decodeStream(bytes, {
      rows: 'borrow',
      // every table (the samples fill drains: several chunks of switches from a small trace)
      onRows: (rows) => {
        if (rows.cswitch.length === 0 && rows.readythread.length === 0) return;
        chunks++;
        const csIds = attacher.attach('cswitch', rows.cswitch);
        const rtIds = attacher.attach('readythread', rows.readythread);
        stacked += csIds.filter((x) => x >= 0).length + rtIds.filter((x) => x >= 0).length;
        join.add(rows.cswitch, csIds, rows.readythread, rtIds);
        deriver.add(rows.cswitch, rows.readythread, rows.threadEvents);
      },
    });
    deriver.finish();
    expect(chunks).toBeGreaterThan(2);
    expect(emitted).toBe(cpuUsage(r).length);
    expect(whole.withWaitStack).toBeGreaterThan(0);
    expect(totals.result({ images: r.images, stackEvents: r.stackEvents, ticksPerSecond: r.clock!.ticksPerSecond })).toEqual(whole);
    // only the stacked rows are kept, not every switch and ReadyThread row
    expect(stacked).toBeGreaterThan(0);
    expect(stacked).toBeLessThan(r.cswitch.length + r.readythread.length);
    expect(join.kept).toBe(stacked);
  });
});

describe('cpu --waits', () => {
  const dir = mkdtempSync(join(tmpdir(), 'etw-waits-'));
  const { bytes, r } = trace(6);
  const file = join(dir, 'stk.etl');
  writeFileSync(file, bytes);
  const run = (...args: string[]) => spawnSync(process.execPath, [BIN, 'cpu', file, '--waits', ...args], { encoding: 'utf8' });

  test('--json: the library analysis; text: totals and both lists', () => {
    const j = run('--json', '--top', '0');
    expect(j.status, j.stderr).toBe(0);
    const got = JSON.parse(j.stdout);
    const o = oracle(r);
    expect(BigInt(got.waitTicks)).toBe(o.total);
    expect(new Map(got.byWaitStack.map((s: { stackId: number; waits: number; waitTicks: string }) => [s.stackId, [s.waits, BigInt(s.waitTicks)]]))).toEqual(o.wait);
    const t = run('--top', '4');
    expect(t.status, t.stderr).toBe(0);
    const lines = t.stdout.trim().split('\n');
    expect(lines[0]).toMatch(new RegExp(`stk\\.etl: ${got.waits} waits, [\\d.]+ ms blocked; ${got.withWaitStack} with the stack where the thread waited`));
    expect(lines[1]).toBe('where threads waited (top 4):');
    expect(lines.filter((l) => l.includes(' ← ')).length).toBeGreaterThan(2);
    expect(lines).toContain('readied by (top 4):');
  });

  test('--pprof: one sample per wait, its nanoseconds summing to the blocked time; stacks leaf first: readying stack, READIED BY, waiting stack', () => {
    const out = join(dir, 'waits.pb.gz');
    const x = run('--pprof', out);
    expect(x.status, x.stderr).toBe(0);
    const p = readProfile(gunzipSync(readFileSync(out)));
    expect(p.sampleType).toEqual([['waits', 'count'], ['wait', 'nanoseconds']]);
    const usage = cpuUsage(r).toArray().filter((u) => u.waits !== null);
    expect(p.samples.reduce((n, s) => n + s.values[0]!, 0n)).toBe(BigInt(usage.length));
    const wantNs = usage.reduce((n, u) => n + (u.waits! * 1_000_000_000n) / r.clock!.ticksPerSecond, 0n);
    expect(p.samples.reduce((n, s) => n + s.values[1]!, 0n)).toBe(wantNs);
    const o = oracle(r);
    // the waits with a readying thread known have the marker; with both stacks: frames on both sides of it
    const marked = p.samples.filter((s) => s.functions.some((f) => f.startsWith('READIED BY ')));
    expect(marked.length).toBeGreaterThan(0);
    const both = marked.filter((s) => s.functions[0] !== s.functions.find((f) => f.startsWith('READIED BY ')) && !s.functions.at(-1)!.startsWith('READIED BY '));
    expect(both.length).toBeGreaterThan(0);
    // a stack's frames appear as the frames of its stack id (count check against the oracle's stacks)
    const maxFrames = Math.max(...Array.from(o.st.stacks.frameCount));
    expect(Math.max(...p.samples.map((s) => s.functions.length))).toBeLessThanOrEqual(2 * maxFrames + 1);
  });

  test('a selection (--tid): the waits of its switch-ins, as the library over the selected rows', () => {
    const usage = cpuUsage(r);
    const tid = usage.get(usage.length >> 1).newThreadId;
    const x = run('--json', '--top', '0', '--tid', String(tid));
    expect(x.status, x.stderr).toBe(0);
    const got = JSON.parse(x.stdout);
    const o = oracle(r, selectTable(usage, resolveSelection({ threadIds: [tid] }, r.clock, r)));
    expect(got.waits).toBeGreaterThan(0);
    expect(BigInt(got.waitTicks)).toBe(o.total);
    expect(new Map(got.byWaitStack.map((s: { stackId: number; waits: number; waitTicks: string }) => [s.stackId, [s.waits, BigInt(s.waitTicks)]]))).toEqual(o.wait);
    expect(new Map(got.byReadyStack.map((s: { stackId: number; waits: number; waitTicks: string }) => [s.stackId, [s.waits, BigInt(s.waitTicks)]]))).toEqual(o.ready);
    expect(got.selection.threadIds).toEqual([tid]);
  });

  test('--sampled and --waits together are refused', () => {
    const x = run('--sampled');
    expect(x.status).toBe(2);
    expect(x.stderr).toMatch(/--sampled and --waits/);
  });
});
