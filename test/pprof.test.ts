// pprof output (src/output/pprof.ts, `etw-decode cpu --sampled --pprof`): the profile read back with protobufjs against the
// perftools.profiles schema (field numbers of github.com/google/pprof proto/profile.proto, declared below),
// its structure checked (string_table[0] = '', ids unique and referenced, addresses inside their mapping) and
// its totals equal to analyzeSamples's — all samples, by process (pid label), by module!offset (function
// name) — on simulated traces, the real corpus and a selection; stacks of several frames through PprofBuilder.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gunzipSync } from 'node:zlib';
import protobuf from 'protobufjs';
import { describe, expect, test } from 'vitest';
import { analyzeSamples } from '../src/analysis/samples.js';
import { PprofBuilder, samplesToPprof } from '../src/output/pprof.js';
import { decodeSync, resolveSelection, type DecodeResult } from '../src/node.js';
import { resolveStacks } from '../src/derive/stacks.js';
import { simulateSchedule, writeTrace } from '../src/writer/index.js';
import { corpusTestsEnabled, readCorpus } from './helpers/corpus.js';

const BIN = fileURLToPath(new URL('../bin/etw-decode.js', import.meta.url));

const u64 = { type: 'uint64', id: 0 };
const i64 = { type: 'int64', id: 0 };
const f = (id: number, t: { type: string }, rule?: 'repeated') => ({ ...t, id, ...(rule ? { rule } : {}) });
const root = protobuf.Root.fromJSON({
  nested: {
    Profile: {
      fields: {
        sampleType: { type: 'ValueType', id: 1, rule: 'repeated' },
        sample: { type: 'Sample', id: 2, rule: 'repeated' },
        mapping: { type: 'Mapping', id: 3, rule: 'repeated' },
        location: { type: 'Location', id: 4, rule: 'repeated' },
        function: { type: 'Function', id: 5, rule: 'repeated' },
        stringTable: { type: 'string', id: 6, rule: 'repeated' },
        timeNanos: f(9, i64),
        durationNanos: f(10, i64),
        periodType: { type: 'ValueType', id: 11 },
        period: f(12, i64),
        comment: f(13, i64, 'repeated'),
        defaultSampleType: f(14, i64),
      },
    },
    ValueType: { fields: { type: f(1, i64), unit: f(2, i64) } },
    Sample: { fields: { locationId: f(1, u64, 'repeated'), value: f(2, i64, 'repeated'), label: { type: 'Label', id: 3, rule: 'repeated' } } },
    Label: { fields: { key: f(1, i64), str: f(2, i64), num: f(3, i64) } },
    Mapping: { fields: { id: f(1, u64), memoryStart: f(2, u64), memoryLimit: f(3, u64), fileOffset: f(4, u64), filename: f(5, i64), buildId: f(6, i64) } },
    Location: { fields: { id: f(1, u64), mappingId: f(2, u64), address: f(3, u64), line: { type: 'Line', id: 4, rule: 'repeated' } } },
    Line: { fields: { functionId: f(1, u64), line: f(2, i64) } },
    Function: { fields: { id: f(1, u64), name: f(2, i64), systemName: f(3, i64), filename: f(4, i64) } },
  },
});
const Profile = root.lookupType('Profile');

interface Read {
  strings: string[];
  sampleType: [string, string][];
  samples: { locations: bigint[]; values: bigint[]; labels: Map<string, string | bigint> }[];
  mappings: Map<bigint, { start: bigint; limit: bigint; file: string; buildId: string }>;
  locations: Map<bigint, { mapping: bigint; address: bigint; function: string }>;
  period: bigint;
  periodType: [string, string] | null;
  defaultSampleType: string;
  comment: string[];
  timeNanos: bigint;
  durationNanos: bigint;
}

/** The profile decoded by protobufjs (64-bit values as bigint), its references checked. */
function read(bytes: Uint8Array): Read {
  const m = Profile.toObject(Profile.decode(bytes), { longs: String, defaults: true, arrays: true }) as Record<string, unknown> & {
    stringTable: string[];
    sampleType: { type: string; unit: string }[];
    sample: { locationId: string[]; value: string[]; label: { key: string; str: string; num: string }[] }[];
    mapping: { id: string; memoryStart: string; memoryLimit: string; filename: string; buildId: string }[];
    location: { id: string; mappingId: string; address: string; line: { functionId: string }[] }[];
    function: { id: string; name: string; systemName: string }[];
    periodType: { type: string; unit: string } | null;
  };
  const s = m.stringTable;
  expect(s[0]).toBe('');
  const str = (i: string) => {
    const k = Number(i);
    expect(k >= 0 && k < s.length).toBe(true);
    return s[k]!;
  };
  const functions = new Map(m.function.map((x) => [BigInt(x.id), str(x.name)]));
  expect(functions.size).toBe(m.function.length);
  for (const x of m.function) expect(str(x.systemName)).toBe(str(x.name));
  const mappings = new Map(m.mapping.map((x) => [BigInt(x.id), { start: BigInt(x.memoryStart), limit: BigInt(x.memoryLimit), file: str(x.filename), buildId: str(x.buildId) }]));
  expect(mappings.size).toBe(m.mapping.length);
  const locations = new Map(
    m.location.map((x) => {
      expect(x.line.length).toBe(1);
      const fn = functions.get(BigInt(x.line[0]!.functionId));
      expect(fn).toBeDefined();
      return [BigInt(x.id), { mapping: BigInt(x.mappingId), address: BigInt(x.address), function: fn! }];
    }),
  );
  expect(locations.size).toBe(m.location.length);
  for (const [id, l] of locations) {
    expect(id).toBeGreaterThan(0n);
    if (l.mapping !== 0n) {
      const mp = mappings.get(l.mapping)!;
      expect(mp).toBeDefined();
      expect(l.address >= mp.start && l.address < mp.limit).toBe(true);
      // a frame in an image is named module!0xoffset
      expect(l.function).toBe(`${mp.file.split('\\').at(-1)}!0x${(l.address - mp.start).toString(16)}`);
    } else expect(l.function).toBe(`0x${l.address.toString(16)}`);
  }
  const samples = m.sample.map((x) => {
    for (const id of x.locationId) expect(locations.has(BigInt(id))).toBe(true);
    return {
      locations: x.locationId.map(BigInt),
      values: x.value.map(BigInt),
      labels: new Map(x.label.map((l) => [str(l.key), l.str !== '0' ? str(l.str) : BigInt(l.num)] as [string, string | bigint])),
    };
  });
  return {
    strings: s,
    sampleType: m.sampleType.map((v) => [str(v.type), str(v.unit)]),
    samples,
    mappings,
    locations,
    period: BigInt(m['period'] as string),
    periodType: m.periodType && m.periodType.type !== '0' ? [str(m.periodType.type), str(m.periodType.unit)] : null,
    defaultSampleType: str(m['defaultSampleType'] as string),
    comment: (m['comment'] as string[]).map(str),
    timeNanos: BigInt(m['timeNanos'] as string),
    durationNanos: BigInt(m['durationNanos'] as string),
  };
}

/** The profile's totals against analyzeSamples: all, by pid label, by function (module!0xoffset = byAddress). */
function checkTotals(p: Read, a: ReturnType<typeof analyzeSamples>) {
  const timed = a.cpuMs !== null;
  expect(p.sampleType).toEqual(timed ? [['samples', 'count'], ['cpu', 'nanoseconds']] : [['samples', 'count']]);
  const sum = (k: number) => p.samples.reduce((n, x) => n + x.values[k]!, 0n);
  expect(sum(0)).toBe(BigInt(a.weight));
  if (timed) expect(sum(1)).toBe(BigInt(Math.round(a.cpuMs! * 1e6)));
  const byPid = new Map<number | null, bigint>();
  const byFunction = new Map<string, bigint>();
  for (const x of p.samples) {
    const pid = x.labels.has('pid') ? Number(x.labels.get('pid')) : null;
    byPid.set(pid, (byPid.get(pid) ?? 0n) + x.values[0]!);
    const leaf = p.locations.get(x.locations[0]!)!.function;
    byFunction.set(leaf, (byFunction.get(leaf) ?? 0n) + x.values[0]!);
    expect(typeof x.labels.get('tid')).toBe('bigint');
  }
  expect(byPid).toEqual(new Map(a.byProcess.map((g) => [g.processId, BigInt(g.weight)])));
  expect(byFunction).toEqual(new Map(a.byAddress.map((g) => [g.address!, BigInt(g.weight)])));
}

describe('simulated traces', () => {
  test.each([1, 2, 3])('seed %i: totals as analyzeSamples; structure; a selection', (seed) => {
    const r = decodeSync(writeTrace(simulateSchedule({ seed, cpus: 2 + seed, duration: 400_000, switchMode: 'mixed', profileInterval: 1_000, images: true }).description).bytes);
    const p = read(samplesToPprof(r, { comment: 'test' }));
    checkTotals(p, analyzeSamples(r));
    expect([p.periodType, p.period, p.defaultSampleType, p.comment]).toEqual([['cpu', 'nanoseconds'], 100_000n, 'cpu', ['test']]);
    // the process label names the image
    expect(p.samples.some((x) => typeof x.labels.get('process') === 'string')).toBe(true);
    // time_nanos: the first sample's UTC time; duration: to the last one
    const ts = [...r.samples.column('timestamp')].sort((x, y) => (x < y ? -1 : 1));
    expect(p.durationNanos).toBe(r.clock!.toNanoseconds(ts.at(-1)!) - r.clock!.toNanoseconds(ts[0]!));
    expect(p.timeNanos).toBe((r.clock!.toFileTime(ts[0]!) - 116444736000000000n) * 100n);
    // a selection keeps the samples cpu --sampled counts
    const from = ts[Math.floor(ts.length / 3)]!;
    const selection = resolveSelection({ from: { ticks: from } }, r.clock, r);
    checkTotals(read(samplesToPprof(r, { selection })), analyzeSamples(r, { selection }));
  });

  test('no interval event: counts only, no period', () => {
    const r = decodeSync(writeTrace(simulateSchedule({ seed: 4, cpus: 2, duration: 200_000, switchMode: 'mixed', profileInterval: 1_000, images: true }).description).bytes);
    const without = { ...r, sampleIntervals: undefined };
    const p = read(samplesToPprof(without));
    checkTotals(p, analyzeSamples(without));
    expect([p.periodType, p.period, p.samples[0]!.values.length]).toEqual([null, 0n, 1]);
  });
});

describe('samplesToPprof with the trace\'s stacks', () => {
  test.each([7, 8])('seed %i: each sample with a stack has its instruction pointer then its callers; the totals stay those of analyzeSamples', (seed) => {
    const r = decodeSync(writeTrace(simulateSchedule({ seed, cpus: 2, duration: 400_000, switchMode: 'mixed', profileInterval: 1_000, images: true, stacks: true }).description).bytes);
    const st = resolveStacks(r);
    const stacked = st.stackIdOf.samples.filter((x) => x >= 0).length;
    expect(stacked).toBeGreaterThan(10);
    const withStacks = read(samplesToPprof(r, { stacks: r }));
    checkTotals(withStacks, analyzeSamples(r));
    // the expected location addresses of each sample (as a key), weighted by count
    const ip = r.samples.column('instructionPointer');
    const count = r.samples.column('count');
    const want = new Map<string, bigint>();
    for (let i = 0; i < r.samples.length; i++) {
      const frames = [ip[i]!];
      const s = st.stackIdOf.samples[i]!;
      if (s >= 0) {
        const from = st.stacks.firstFrame[s]!;
        const to = from + st.stacks.frameCount[s]!;
        const walk = Array.from(st.frames.address.subarray(from, to));
        frames.push(...(walk[0] === ip[i] ? walk.slice(1) : walk));
      }
      const key = frames.join(',');
      want.set(key, (want.get(key) ?? 0n) + BigInt(count[i]!));
    }
    const got = new Map<string, bigint>();
    for (const x of withStacks.samples) {
      const key = x.locations.map((l) => withStacks.locations.get(l)!.address).join(',');
      got.set(key, (got.get(key) ?? 0n) + x.values[0]!);
    }
    expect(got).toEqual(want);
    expect([...got.keys()].some((k) => k.split(',').length > 2)).toBe(true);
    // without the stacks: one location per sample
    expect(read(samplesToPprof(r)).samples.every((x) => x.locations.length === 1)).toBe(true);
  });
});

describe('PprofBuilder: stacks', () => {
  test('frames leaf first, shared locations, one sample per (stack, process, thread) with the values summed', () => {
    const r = decodeSync(writeTrace(simulateSchedule({ seed: 5, cpus: 2, duration: 200_000, switchMode: 'mixed', profileInterval: 1_000, images: true }).description).bytes);
    const b = new PprofBuilder(r);
    const im = r.images.toArray().find((x) => x.processId !== 0 && x.loadTime === null && x.unloadTime === null)!;
    const words = (...a: bigint[]) => Uint32Array.from(a.flatMap((x) => [Number(x & 0xffffffffn), Number(x >> 32n)]));
    const leaf = im.imageBase + 0x10n;
    const mid = im.imageBase + 0x20n;
    const outer = 0x1234n; // in no image
    b.add(words(leaf, mid, outer), 3, 8, im.processId, 77, 0, 0, 1);
    b.add(words(leaf, mid, outer), 3, 8, im.processId, 77, 0, 1, 2); // the same stack, process and thread: summed
    b.add(words(mid, outer), 2, 8, im.processId, 77, 0, 2, 1); // a suffix of it: another sample, the same locations
    b.add(words(leaf, mid, outer), 3, 8, im.processId, 78, 0, 3, 1); // another thread
    const p = read(b.finish(r.clock));
    const name = im.fileName!.split('\\').at(-1)!;
    const stacks = p.samples.map((x) => [x.locations.map((l) => p.locations.get(l)!.function), x.values[0], x.labels.get('tid')]);
    expect(stacks).toEqual([
      [[`${name}!0x10`, `${name}!0x20`, '0x1234'], 3n, 77n],
      [[`${name}!0x20`, '0x1234'], 1n, 77n],
      [[`${name}!0x10`, `${name}!0x20`, '0x1234'], 1n, 78n],
    ]);
    expect(p.locations.size).toBe(3);
    expect([...p.mappings.values()].map((m) => [m.start, m.limit, m.file])).toEqual([[im.imageBase, im.imageBase + im.imageSize, im.fileName]]);
    // the PE key: TimeDateStamp as 8 hex digits, then the size
    expect([...p.mappings.values()][0]!.buildId).toBe(im.timeDateStamp.toString(16).toUpperCase().padStart(8, '0') + im.imageSize.toString(16).toUpperCase());
  });
});

test.runIf(corpusTestsEnabled())('perfview-net.4.5.2.x64.etl: cpu --sampled --pprof writes a gzipped profile with the totals of cpu --sampled; --pid selects; --pprof needs --sampled', () => {
  const bytes = readCorpus('perfview-net.4.5.2.x64.etl');
  const r: DecodeResult = decodeSync(bytes);
  const a = analyzeSamples(r);
  const dir = mkdtempSync(join(tmpdir(), 'etw-pprof-'));
  const file = join(dir, 'net.etl');
  writeFileSync(file, bytes);
  const run = (...args: string[]) => {
    const out = join(dir, `${args.join('_') || 'all'}.pb.gz`);
    const res = spawnSync(process.execPath, [BIN, 'cpu', file, '--sampled', '--pprof', out, ...args], { encoding: 'utf8' });
    expect(res.status, res.stderr).toBe(0);
    return read(gunzipSync(readFileSync(out)));
  };
  const p = run();
  checkTotals(p, a);
  // the samples with a stack (resolveStacks: 6318 of them in this file) have their callers in the profile
  const stackedWeight = resolveStacks(r).stackIdOf.samples.reduce((n, s, i) => n + (s >= 0 ? r.samples.column('count')[i]! : 0), 0);
  expect(stackedWeight).toBeGreaterThan(6000);
  const deep = p.samples.filter((x) => x.locations.length > 1).reduce((n, x) => n + x.values[0]!, 0n);
  expect(deep).toBeGreaterThan(0n);
  expect(deep).toBeLessThanOrEqual(BigInt(stackedWeight));
  expect([p.period, p.sampleType.length]).toEqual([1_000_000n, 2]);
  // the idle loop of the kernel: ntoskrnl.exe's mapping, a kernel path
  const top = [...p.samples].sort((x, y) => Number(y.values[0]! - x.values[0]!))[0]!;
  const loc = p.locations.get(top.locations[0]!)!;
  expect([loc.function, p.mappings.get(loc.mapping)!.file, top.labels.get('process')]).toEqual(['ntoskrnl.exe!0xa6552', '\\SystemRoot\\system32\\ntoskrnl.exe', 'Idle']);
  const selection = resolveSelection({ processIds: [3676] }, r.clock, r);
  checkTotals(run('--pid', '3676'), analyzeSamples(r, { selection }));
  const usage = spawnSync(process.execPath, [BIN, 'cpu', file, '--pprof', join(dir, 'x.pb.gz')], { encoding: 'utf8' });
  expect([usage.status, usage.stderr]).toEqual([2, expect.stringMatching(/--pprof needs --sampled/)]);
  // - writes the profile to standard output
  const piped = spawnSync(process.execPath, [BIN, 'cpu', file, '--sampled', '--pprof', '-', '--pid', '3676']);
  expect(piped.status).toBe(0);
  checkTotals(read(gunzipSync(piped.stdout)), analyzeSamples(r, { selection }));
});
