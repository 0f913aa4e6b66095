// The Perfetto timeline's callstack samples (src/output/perfetto-samples.ts via PerfettoWriter.samples and
// toPerfetto), read back with protobufjs against test/fixtures/perfetto/perfetto-etw.proto (Perfetto's
// TracePacket, InternedData, Mapping, Frame, Callstack, PerfSample field numbers). Every SampledProfile row is
// one perf_sample packet with its time, cpu, process and thread; its callstack's frame names are computed
// here from the images rows by a plain search (module!0xoffset), and its frames from the stacks as
// resolveStacks attaches them. The interning is checked as Perfetto reads it: ids defined once, before or in
// the packet that first refers to them, on the samples' own sequence.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import protobuf from 'protobufjs';
import { describe, expect, test } from 'vitest';
import { resolveStacks } from '../src/derive/stacks.js';
import { decodeSync, PerfettoWriter, toPerfetto, type DecodeResult } from '../src/node.js';
import { simulateSchedule, writeTrace } from '../src/writer/index.js';
import { corpusTestsEnabled, readCorpus } from './helpers/corpus.js';

const root = protobuf.loadSync(fileURLToPath(new URL('./fixtures/perfetto/perfetto-etw.proto', import.meta.url)));
const TraceType = root.lookupType('perfetto.protos.Trace');

/* eslint-disable @typescript-eslint/no-explicit-any */
type Obj = Record<string, any>;

interface Sample {
  timestamp: bigint;
  cpu: number;
  pid: number | undefined;
  tid: number;
  cpuMode: number;
  /** frame names, leaf first */
  names: string[];
  /** frames, leaf first: [mapping iid, rel_pc] or the address name alone */
  frames: Obj[];
}

interface Read {
  samples: Sample[];
  /** packets of the samples' sequence, their sequence_flags */
  flags: number[];
  sequences: Set<number>;
  interned: { functionNames: number; frames: number; callstacks: number; mappings: number; buildIds: number; mappingPaths: number };
  mappings: Map<number, { buildId: string; path: string; start: bigint; end: bigint }>;
  otherPackets: number;
}

/** The perf_sample packets of a trace, their interned entries resolved as Perfetto does (checking each reference). */
function readSamples(bytes: Uint8Array): Read {
  const { packet = [] } = TraceType.toObject(TraceType.decode(bytes), { longs: String, bytes: String }) as { packet: Obj[] };
  const dec = (b: string) => Buffer.from(b, 'base64').toString('utf8');
  const tables = {
    functionNames: new Map<number, string>(),
    buildIds: new Map<number, string>(),
    mappingPaths: new Map<number, string>(),
    mappings: new Map<number, Obj>(),
    frames: new Map<number, Obj>(),
    callstacks: new Map<number, number[]>(),
  };
  const define = <V>(m: Map<number, V>, iid: unknown, v: V) => {
    const id = Number(iid);
    expect(id).toBe(m.size + 1); // ids 1, 2, … in order of definition
    expect(m.has(id)).toBe(false); // each entry once
    m.set(id, v);
  };
  const need = <V>(m: Map<number, V>, iid: unknown): V => {
    const v = m.get(Number(iid));
    expect(v, `interned id ${String(iid)} is defined before its use`).toBeDefined();
    return v!;
  };
  const out: Read = { samples: [], flags: [], sequences: new Set(), interned: null as never, mappings: new Map(), otherPackets: 0 };
  for (const p of packet) {
    if (!p.perfSample) {
      expect(p.internedData).toBeUndefined();
      out.otherPackets++;
      continue;
    }
    out.sequences.add(p.trustedPacketSequenceId);
    out.flags.push(p.sequenceFlags);
    const d = p.internedData ?? {};
    // within one InternedData, strings first, then mappings, frames, callstacks (what refers to what)
    for (const s of d.functionNames ?? []) define(tables.functionNames, s.iid, dec(s.str));
    for (const s of d.buildIds ?? []) define(tables.buildIds, s.iid, dec(s.str));
    for (const s of d.mappingPaths ?? []) define(tables.mappingPaths, s.iid, dec(s.str));
    for (const m of d.mappings ?? []) {
      const v = { buildId: need(tables.buildIds, m.buildId), path: (m.pathStringIds ?? []).map((x: string) => need(tables.mappingPaths, x)).join('/'), start: BigInt(m.start), end: BigInt(m.end) };
      define(tables.mappings, m.iid, v);
    }
    for (const f of d.frames ?? []) {
      const name = need(tables.functionNames, f.functionNameId);
      if (f.mappingId !== undefined) need(tables.mappings, f.mappingId);
      define(tables.frames, f.iid, f.mappingId !== undefined ? { name, mapping: Number(f.mappingId), relPc: BigInt(f.relPc) } : { name });
    }
    for (const c of d.callstacks ?? []) {
      const ids = (c.frameIds ?? []).map(Number);
      for (const id of ids) need(tables.frames, id);
      define(tables.callstacks, c.iid, ids);
    }
    const s = p.perfSample;
    const frames = need(tables.callstacks, s.callstackIid).map((id) => tables.frames.get(id)!).reverse(); // written outermost first
    out.samples.push({ timestamp: BigInt(p.timestamp), cpu: s.cpu, pid: s.pid, tid: s.tid, cpuMode: s.cpuMode, names: frames.map((f) => f.name), frames });
  }
  out.interned = {
    functionNames: tables.functionNames.size,
    frames: tables.frames.size,
    callstacks: tables.callstacks.size,
    mappings: tables.mappings.size,
    buildIds: tables.buildIds.size,
    mappingPaths: tables.mappingPaths.size,
  };
  for (const [k, v] of tables.mappings) out.mappings.set(k, v as never);
  return out;
}

/** The frames of each sample, leaf first: its instruction pointer, then the stack's frames after Stack1 when Stack1 is it. */
function expectedFrames(r: DecodeResult): bigint[][] {
  const st = r.stackEvents.length ? resolveStacks(r) : null;
  const ip = r.samples.column('instructionPointer');
  return Array.from({ length: r.samples.length }, (_, i) => {
    const frames = [ip[i]!];
    const s = st ? st.stackIdOf.samples[i]! : -1;
    if (s >= 0) {
      const from = st!.stacks.firstFrame[s]!;
      const walk = Array.from(st!.frames.address.subarray(from, from + st!.stacks.frameCount[s]!));
      frames.push(...(walk[0] === ip[i] ? walk.slice(1) : walk));
    }
    return frames;
  });
}

/** A frame's name by a plain search of the images rows: the lifetime of the process (kernel addresses: process 0 first) holding it at t. */
function nameOf(r: DecodeResult, pid: number, pointerSize: number, a: bigint, t: bigint): string {
  const kernel = pointerSize === 4 ? a >= 0x80000000n && a < 0x100000000n : a >= 0x8000000000000000n;
  const search = (p: number) => {
    let best: Obj | null = null;
    for (const im of r.images) {
      if (im.processId !== p || a < im.imageBase || a >= im.imageBase + im.imageSize) continue;
      if ((im.loadTime !== null && t < im.loadTime) || (im.unloadTime !== null && t >= im.unloadTime)) continue;
      const load = im.loadTime ?? -(2n ** 63n);
      const bestLoad = best ? (best.loadTime ?? -(2n ** 63n)) : 0n;
      if (!best || load > bestLoad || (load === bestLoad && im.imageBase > best.imageBase)) best = im;
    }
    return best;
  };
  const im = (kernel ? search(0) : null) ?? (kernel && pid === 0 ? null : search(pid));
  if (!im) return `0x${a.toString(16)}`;
  return `${im.name || im.fileName || '(no name)'}!0x${(a - im.imageBase).toString(16)}`;
}

/** A sample thread's process: the lifetime of the thread holding t (the idle thread's is 0). */
function processOf(r: DecodeResult, tid: number, t: bigint): number | undefined {
  if (tid === 0) return 0;
  const hits = [...r.threads].filter((x) => x.threadId === tid && (x.startTime === null || x.startTime <= t) && (x.endTime === null || t <= x.endTime));
  return hits.length ? hits[hits.length - 1]!.processId : undefined;
}

function simulated(seed: number, stacks: boolean) {
  const sim = simulateSchedule({ seed, cpus: 3, duration: 400_000, switchMode: 'mixed', profileInterval: 1_000, images: true, stacks });
  return decodeSync(writeTrace(sim.description).bytes);
}

describe.each([
  ['with stacks', 31, true],
  ['with stacks, another seed', 32, true],
  ['without stacks', 33, false],
] as const)('toPerfetto: callstack samples, %s', (_, seed, stacks) => {
  const r = simulated(seed, stacks);
  const clock = r.clock!;
  const got = readSamples(toPerfetto(r));
  const frames = expectedFrames(r);

  test('every samples row is one perf_sample packet, in row order, with its time, cpu, process and thread', () => {
    expect(r.samples.length).toBeGreaterThan(500);
    expect(got.samples.length).toBe(r.samples.length);
    const rows = [...r.samples];
    got.samples.forEach((s, i) => {
      const row = rows[i]!;
      expect([s.timestamp, s.cpu, s.tid]).toEqual([clock.toNanoseconds(row.timestamp), row.cpu, row.threadId]);
      expect(s.pid).toBe(processOf(r, row.threadId, row.timestamp));
    });
    expect(got.samples.filter((s) => s.pid !== undefined && s.pid > 0).length).toBeGreaterThan(100);
  });

  test('each callstack: the instruction pointer then the callers, named module!0xoffset by the image lifetime holding them', () => {
    const rows = [...r.samples];
    got.samples.forEach((s, i) => {
      const row = rows[i]!;
      const pid = processOf(r, row.threadId, row.timestamp) ?? -1;
      expect(s.names).toEqual(frames[i]!.map((a) => nameOf(r, pid, row.pointerSize, a, row.timestamp)));
      const kernel = row.pointerSize === 4 ? row.instructionPointer >= 0x80000000n : row.instructionPointer >= 0x8000000000000000n;
      expect(s.cpuMode).toBe(kernel ? 1 : 2);
    });
    const deep = got.samples.filter((s) => s.names.length > 1).length;
    if (stacks) expect(deep).toBeGreaterThan(100);
    else expect(deep).toBe(0);
    expect(got.samples.filter((s) => s.names[0]!.includes('!')).length).toBeGreaterThan(100); // most in an image
  });

  test('frames in an image have its mapping (build id, path, range) and the offset as rel_pc', () => {
    let checked = 0;
    for (const s of got.samples) {
      for (const f of s.frames) {
        if (f.mapping === undefined) continue;
        const m = got.mappings.get(f.mapping)!;
        expect(f.name).toBe(`${m.path.split('/').pop()}!0x${f.relPc.toString(16)}`);
        expect(m.start + f.relPc < m.end).toBe(true);
        expect(m.buildId).toMatch(/^[0-9A-F]{9,}$/);
        checked++;
      }
    }
    expect(checked).toBeGreaterThan(100);
    expect(got.mappings.size).toBeGreaterThan(1);
    // the kernel path's components (Perfetto joins them with slashes), as the images rows have it
    const paths = new Set([...r.images].map((im) => im.fileName!.split('\\').filter((x) => x).join('/')));
    for (const m of got.mappings.values()) expect(paths.has(m.path)).toBe(true);
  });

  test('one sequence of its own; the first packet clears the incremental state, the others need it; entries interned once', () => {
    expect([...got.sequences]).toEqual([2]);
    expect(got.flags[0]).toBe(1);
    expect(got.flags.slice(1).every((f) => f === 2)).toBe(true);
    // distinct callstacks and frames, each once (readSamples checks each id is defined once, before its use)
    expect(got.interned.callstacks).toBe(new Set(got.samples.map((s) => s.names.join(','))).size);
    expect(got.interned.frames).toBeLessThan(got.samples.reduce((n, s) => n + s.names.length, 0));
  });
});

describe('PerfettoWriter.samples', () => {
  const r = simulated(34, true);

  test('an async sink and small flushes give the same bytes as one call with a sync sink; stats count what is written', async () => {
    const whole: Uint8Array[] = [];
    const a = new PerfettoWriter((b) => void whole.push(b), { clock: r.clock });
    a.samples({ ...r, stacks: r });
    a.close();
    const parts: Uint8Array[] = [];
    let calls = 0;
    const b = new PerfettoWriter(
      async (x) => {
        calls++;
        await new Promise((res) => setTimeout(res, 0));
        parts.push(x);
      },
      { clock: r.clock, flushBytes: 512 },
    );
    await b.samples({ ...r, stacks: r });
    await b.close();
    expect(calls).toBeGreaterThan(10);
    expect(Buffer.concat(parts).equals(Buffer.concat(whole))).toBe(true);
    const stats = b.getStats();
    const got = readSamples(Buffer.concat(parts));
    expect(stats.perfSamples).toBe(r.samples.length);
    expect(stats.samplesWithStack).toBe(resolveStacks(r).stackIdOf.samples.filter((s) => s >= 0).length);
    expect(stats.samplesWithStack).toBeGreaterThanOrEqual(got.samples.filter((s) => s.names.length > 1).length);
    expect(stats.samplesNoProcess).toBe(got.samples.filter((s) => s.pid === undefined).length);
    expect([stats.callstacks, stats.frames, stats.mappings, stats.functionNames]).toEqual([got.interned.callstacks, got.interned.frames, got.interned.mappings, got.interned.functionNames]);
    expect(() => b.samples({ ...r })).toThrow(/closed/);
  });

  test('samples() is called once (interned ids of a sequence are never redefined); samplesSequenceId sets the sequence', () => {
    const w = new PerfettoWriter(() => {}, { clock: r.clock, samplesSequenceId: 7 });
    w.samples({ ...r });
    expect(() => w.samples({ ...r })).toThrow(/already/);
    const parts: Uint8Array[] = [];
    const v = new PerfettoWriter((b) => void parts.push(b), { clock: r.clock, sequenceId: 4 });
    v.samples({ ...r });
    v.close();
    expect([...readSamples(Buffer.concat(parts)).sequences]).toEqual([5]);
  });
});

describe('etw-decode convert --to perfetto (dist/)', () => {
  test('the timeline has the samples with their callstacks, as toPerfetto writes them', () => {
    const sim = simulateSchedule({ seed: 35, cpus: 2, duration: 300_000, switchMode: 'mixed', profileInterval: 1_000, images: true, stacks: true });
    const bytes = writeTrace(sim.description).bytes;
    const dir = mkdtempSync(join(tmpdir(), 'etw-perfetto-samples-'));
    try {
      writeFileSync(join(dir, 'trace.etl'), bytes);
      const bin = fileURLToPath(new URL('../bin/etw-decode.js', import.meta.url));
      const run = spawnSync(process.execPath, [bin, 'convert', join(dir, 'trace.etl'), '--to', 'perfetto', '--out', join(dir, 'out'), '--no-progress'], { encoding: 'utf8' });
      expect(run.status, run.stderr).toBe(0);
      const file = readdirSync(join(dir, 'out')).find((f) => f.endsWith('.perfetto-trace'))!;
      const got = readSamples(readFileSync(join(dir, 'out', file)));
      const want = readSamples(toPerfetto(decodeSync(bytes)));
      expect(got.samples.length).toBeGreaterThan(300);
      expect(got.samples).toEqual(want.samples);
      expect(got.samples.some((s) => s.names.length > 2)).toBe(true);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

const corpus = corpusTestsEnabled();

describe.skipIf(!corpus)('perfview-net.4.5.2.x64.etl', () => {
  test('79 528 perf_sample packets, 6 318 of them with a stack; every interned id referenced exists', () => {
    const r = decodeSync(readCorpus('perfview-net.4.5.2.x64.etl'));
    const parts: Uint8Array[] = [];
    const w = new PerfettoWriter((b) => void parts.push(b), { clock: r.clock });
    w.samples({ ...r, stacks: r });
    w.close();
    expect(w.getStats().samplesWithStack).toBe(6_318);
    const got = readSamples(toPerfetto(r));
    expect(got.samples.length).toBe(79_528);
    expect(r.samples.length).toBe(79_528);
    const st = resolveStacks(r);
    expect(st.stackIdOf.samples.filter((s) => s >= 0).length).toBe(6_318);
    const frames = expectedFrames(r);
    expect(got.samples.filter((s) => s.names.length > 1).length).toBe(frames.filter((f) => f.length > 1).length);
    got.samples.forEach((s, i) => expect(s.names.length).toBe(frames[i]!.length));
    const clock = r.clock!;
    const ts = r.samples.column('timestamp');
    const tid = r.samples.column('threadId');
    expect(got.samples.every((s, i) => s.timestamp === clock.toNanoseconds(ts[i]!) && s.tid === tid[i])).toBe(true);
    expect(got.samples.filter((s) => s.names[0]!.includes('!')).length).toBeGreaterThan(70_000);
  });
});
