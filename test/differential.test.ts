// WASM engine = reference decoder, column for column and counter for counter, on generated traces,
// on corrupted and truncated traces, and on the real corpus. Bad input never crashes either engine.
import { describe, expect, test } from 'vitest';
import fc from 'fast-check';
import { cpuUsage, decodeSync, EtlError, isWholeTraceTable, TABLE_NAMES, wholeTraceTable, type DecodeResult, type Table } from '../src/node.js';
import { writeTrace, Rng, randomNoiseEvents, generateMixedTrace, simulateSchedule } from '../src/writer/index.js';
import { corpusFiles, corpusTestsEnabled, readCorpus } from './helpers/corpus.js';

const corpus = corpusTestsEnabled();

type Outcome = { ok: true; result: DecodeResult } | { ok: false; error: EtlError };

function run(bytes: Uint8Array, engine: 'wasm' | 'reference', windowBytes?: number): Outcome {
  try {
    return { ok: true, result: decodeSync(bytes, { engine, windowBytes }) };
  } catch (e) {
    if (e instanceof EtlError) return { ok: false, error: e };
    throw e; // anything else is a bug
  }
}

function expectSame(a: Outcome, b: Outcome): void {
  expect(a.ok).toBe(b.ok);
  if (!a.ok || !b.ok) {
    expect((a as { error: EtlError }).error.message).toBe((b as { error: EtlError }).error.message);
    return;
  }
  const x = a.result;
  const y = b.result;
  expect({ ...x.summary, engine: '' }).toEqual({ ...y.summary, engine: '' });
  for (const t of TABLE_NAMES) {
    const [p, q]: Table[] = t === 'cpuUsage' ? [cpuUsage(x), cpuUsage(y)] : isWholeTraceTable(t) ? [wholeTraceTable(x, t), wholeTraceTable(y, t)] : [x[t], y[t]];
    expect(p!.length).toBe(q!.length);
    p!.columns.forEach((col, i) => expect(col, `${t}.${p!.specs[i]!.name}`).toEqual(q!.columns[i]));
  }
}

function mutate(bytes: Uint8Array, edits: { at: number; value: number }[], cut: number | null): Uint8Array {
  const out = bytes.slice(0, cut === null ? bytes.length : Math.min(bytes.length, cut));
  for (const e of edits) if (out.length) out[e.at % out.length] = e.value;
  return out;
}

const mixed = generateMixedTrace({ seed: 7, targetBytes: 600_000, cpus: 3, bufferSize: 0x4000 });
const mixedCompressed = generateMixedTrace({ seed: 8, targetBytes: 300_000, cpus: 2, compress: true, bufferSize: 0x4000 });

describe('generated traces', () => {
  test('mixed trace: identical, and non-trivial', () => {
    const w = run(mixed.bytes, 'wasm');
    expectSame(w, run(mixed.bytes, 'reference'));
    const r = (w as { result: DecodeResult }).result;
    expect(r.cswitch.length).toBeGreaterThan(1000);
    expect(r.spinlock.length).toBeGreaterThan(100);
    expect(r.summary.compact.batches).toBeGreaterThan(10);
  });

  test('compressed mixed trace: identical', () => {
    const w = run(mixedCompressed.bytes, 'wasm');
    expectSame(w, run(mixedCompressed.bytes, 'reference'));
    expect((w as { result: DecodeResult }).result.summary.diagnostics['buffersCompressed']).toBeGreaterThan(0);
  });

  test('small windows and many drains change nothing', () => {
    expectSame(run(mixed.bytes, 'wasm', 0x4000), run(mixed.bytes, 'reference'));
  });

  test('property: random descriptions, random corruption and truncation', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 2 ** 31 - 1 }),
        fc.array(fc.record({ at: fc.nat(), value: fc.integer({ min: 0, max: 255 }) }), { maxLength: 40 }),
        fc.option(fc.nat(), { nil: null }),
        fc.boolean(),
        (seed, edits, cut, compress) => {
          const base = generateMixedTrace({ seed, targetBytes: 40_000, cpus: 1 + (seed % 4), compress, bufferSize: 0x1000 });
          // keep the first buffer's first 0x60 bytes intact in half the cases so the walk goes deep
          const safe = seed % 2 === 0 ? edits.map((e) => ({ at: 0x60 + (e.at % Math.max(1, base.bytes.length - 0x60)), value: e.value })) : edits;
          const bytes = mutate(base.bytes, safe, cut === null ? null : cut % (base.bytes.length + 1));
          expectSame(run(bytes, 'wasm'), run(bytes, 'reference'));
        },
      ),
      { numRuns: 120 },
    );
  });

  test('property: simulated schedules (Thread, Process, SetName, ReadyThread, SampledProfile, Image, stacks, both switch kinds), corrupted', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 2 ** 31 - 1 }),
        fc.array(fc.record({ at: fc.nat(), value: fc.integer({ min: 0, max: 255 }) }), { maxLength: 40 }),
        fc.option(fc.nat(), { nil: null }),
        fc.constantFrom(4 as const, 8 as const),
        (seed, edits, cut, pointerSize) => {
          const sim = simulateSchedule({
            seed,
            // 2-4 CPUs: the simulation's scripted lifecycle (reused ids, ends) does not always fit one CPU
            cpus: 2 + (seed % 3),
            duration: 300_000,
            switchMode: (['cswitch', 'compact', 'mixed'] as const)[seed % 3],
            pointerSize,
            threadVersion: ([2, 3, 4] as const)[seed % 3],
            processVersion: ([2, 3, 4, 5] as const)[seed % 4],
            bufferSize: 0x1000,
            profileInterval: seed % 2 === 0 ? 3_000 : 0,
            images: seed % 5 !== 0,
            imageVersion: seed % 2 === 0 ? 3 : 2,
            stacks: seed % 3 !== 1,
          });
          const base = writeTrace(sim.description).bytes;
          const safe = edits.map((e) => ({ at: 0x60 + (e.at % Math.max(1, base.length - 0x60)), value: e.value }));
          const bytes = mutate(base, safe, cut === null ? null : cut % (base.length + 1));
          expectSame(run(bytes, 'wasm'), run(bytes, 'reference'));
        },
      ),
      { numRuns: 60 },
    );
  });

  test('property: corrupted compact batches and events in otherwise valid buffers', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 1e9 }), fc.array(fc.nat(), { minLength: 1, maxLength: 30 }), (seed, positions) => {
        const rng = new Rng(seed);
        const base = generateMixedTrace({ seed, targetBytes: 30_000, cpus: 2, bufferSize: 0x2000, mix: { compact: 5, cswitch: 1, spinlock: 1, noise: 1 } });
        const bytes = base.bytes.slice();
        // corrupt only inside data buffers' event areas (not the headers)
        const data = base.buffers.filter((b) => b.sequenceNumber !== 0);
        for (const p of positions) {
          const b = data[p % data.length]!;
          bytes[b.fileOffset + 0x48 + (rng.next() % (b.size - 0x48))] = rng.int(0, 255);
        }
        expectSame(run(bytes, 'wasm'), run(bytes, 'reference'));
      }),
      { numRuns: 150 },
    );
  });

  test('random bytes and random buffers', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 3000 }), fc.boolean(), (junk, prefixed) => {
        // optionally put a valid header buffer in front so the walk reaches the junk
        const head = writeTrace({ events: randomNoiseEvents(new Rng(junk.length), 3, { cpus: 1, startTimestamp: 10n, pointerSize: 8 }), bufferSize: 0x400 }).bytes;
        const bytes = prefixed ? new Uint8Array([...head, ...junk]) : junk;
        expectSame(run(bytes, 'wasm'), run(bytes, 'reference'));
      }),
      { numRuns: 200 },
    );
  });
});

test.skipIf(!corpus).each(corpusFiles())('real file %s: identical', (name) => {
  const bytes = readCorpus(name);
  expectSame(run(bytes, 'wasm'), run(bytes, 'reference'));
});
