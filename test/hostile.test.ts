// Resource attacks (issue 13): crafted files that make a decoder work or allocate in proportion to what a
// header claims. Work and memory must stay proportional to the input's real content. The limits are
// asserted on work done — bytes and calls read, chunks loaded, buffers read on their own, rows made —
// never on time. The full-size versions are the `hostile/*` cases of `npm run bench`.
// Issue 28: a BufferSize claim never hides intact buffers (docs/format.md §A.1 "size claims"), a claim of
// the logfile header never buys decompression work (§A.6: at most 77 times the input), and the logfile
// header's facts hold for every data buffer whatever the order (§A.7) — examples and property tests over
// random claims on random writer traces, in both engines (and in partitions for the order).
import fc from 'fast-check';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, test } from 'vitest';
import { BUFFER_RECORD_BYTES } from '../src/framing/buffers.js';
import type { DriverResult } from '../src/decode/decode-steps.js';
import * as L from '../src/generated/layout.js';
import { decodeStream, decodeSync, DECODED_TABLE_NAMES, EtlError, Table, TABLE_COLUMNS, type DecodeResult, type DecodedTableName } from '../src/node.js';
import { concatChunks, type ColumnChunk } from '../src/tables/schema.js';
import { generateMixedTrace, type MixedTraceOptions } from '../src/writer/index.js';
import { checkInput, resultDifference, vanishedBuffer } from '../fuzz/check.js';
import { analyse, corpusSeeds, type Seed, type SeedBuffer } from '../fuzz/seeds.js';
import { corpusTestsEnabled } from './helpers/corpus.js';
import { SINGLE_READ_COST } from '../src/framing/ordering.js';
import { bytesCounting, countingSource, decodeCountedAsync, decodeCountedSync } from './helpers/counting.js';
import { claimingHeader, compactBatch, compressedBombs, headerClaimBombs, template, tinyBuffers, TINY_BUFFER_BYTES, type TinyOrder } from './helpers/hostile.js';

const ENGINES = ['wasm', 'reference'] as const;
const here = dirname(fileURLToPath(import.meta.url));

const bytesOf = (x: unknown): Uint8Array => {
  const a = x as ArrayBufferView;
  return new Uint8Array(a.buffer, a.byteOffset, a.byteLength);
};

/** The rows of a whole decode and its summary, minus what legitimately differs between engines. */
function outcome(bytes: Uint8Array, engine: 'wasm' | 'reference', windowBytes?: number) {
  const r = decodeSync(bytes, { engine, windowBytes });
  return { summary: { ...r.summary, engine: '' }, cswitch: r.cswitch.columns, spinlock: r.spinlock.columns };
}

/** A diagnostic counter (D_* constant name) of a finished drive: engine + framing. */
function counter(r: DriverResult, name: string): number {
  const id = (L as unknown as Record<string, number>)[name]!;
  return r.engine.counters[id]! + r.framingCounters[id]!;
}

describe('SequenceNumber orders: each buffer is read a bounded number of times, never a window per buffer', () => {
  const N = 6000;
  const WINDOW = 0x4000; // small windows: many chunks, so a plan that reloads shows
  test.each<TinyOrder>(['ascending', 'descending', 'alternating'])('%s', async (order) => {
    const bytes = tinyBuffers(N, order);
    for (const engine of ENGINES) {
      const src = bytesCounting(bytes);
      const r = decodeCountedSync(src, engine, { windowBytes: WINDOW });
      expect(r.rows.cswitch).toBe(N);
      expect(r.buffers.length).toBe(N + 1);
      // every chunk loaded once (the header buffer's chunk maybe twice), nothing read on its own
      expect(r.reads.singles).toBe(0);
      expect(r.reads.bytes).toBeLessThanOrEqual(bytes.length + 2 * WINDOW);
      expect(r.reads.loads).toBeLessThanOrEqual(Math.ceil(bytes.length / (WINDOW - TINY_BUFFER_BYTES)) + 1);
      // framing reads the small buffers' headers from contiguous reads: about the file once more
      expect(src.counts.bytes).toBeLessThanOrEqual(2 * bytes.length + 0x10000);
      // the async path (read-ahead) reads the same
      const asrc = bytesCounting(bytes);
      const a = await decodeCountedAsync(asrc, engine, { windowBytes: WINDOW });
      expect(a.reads).toEqual(r.reads);
      expect(asrc.counts.bytes).toBeLessThanOrEqual(2 * bytes.length + 0x10000);
    }
    // rows in SequenceNumber order, identical across engines and window sizes
    const w = outcome(bytes, 'wasm');
    expect(outcome(bytes, 'reference')).toEqual(w);
    expect(outcome(bytes, 'wasm', WINDOW)).toEqual(w);
  });

  test('shuffled: buffers far from their neighbours are read on their own, each once', () => {
    const bytes = tinyBuffers(N, 'ascending');
    // a random permutation of the SequenceNumbers
    const dv = new DataView(bytes.buffer);
    const header = template().header.length;
    const seqs = Array.from({ length: N }, (_, i) => i + 1);
    let x = 12345;
    for (let i = N - 1; i > 0; i--) {
      x = (Math.imul(x, 1103515245) + 12345) >>> 0;
      const j = x % (i + 1);
      [seqs[i], seqs[j]] = [seqs[j]!, seqs[i]!];
    }
    seqs.forEach((s, i) => dv.setBigInt64(header + i * TINY_BUFFER_BYTES + L.BUF_SEQUENCE_NUMBER, BigInt(s), true));
    for (const engine of ENGINES) {
      const r = decodeCountedSync(bytesCounting(bytes), engine, { windowBytes: 0x4000 });
      expect(r.rows.cswitch).toBe(N);
      // each byte loaded is paid for by a quarter of a chunk decoded from that load (ordering.ts):
      // bytes <= 4 x (file + buffers x SINGLE_READ_COST), and every buffer read on its own at most once
      expect(r.reads.singles).toBeLessThanOrEqual(N + 1);
      expect(r.reads.singles).toBeGreaterThan(N / 2);
      expect(r.reads.bytes).toBeLessThanOrEqual(4 * (bytes.length + (N + 1) * SINGLE_READ_COST));
    }
    expect(outcome(bytes, 'reference', 0x4000)).toEqual(outcome(bytes, 'wasm'));
  });
});

describe('a corrupt header after every buffer: one pass over the bytes', () => {
  const N = 3000;
  const bytes = tinyBuffers(N, 'ascending', true);
  test.each(ENGINES)('%s', async (engine) => {
    const src = bytesCounting(bytes);
    const r = await decodeCountedAsync(src, engine);
    expect(r.rows.cswitch).toBe(N);
    expect(counter(r, 'D_BUFFERS_CORRUPT')).toBe(N);
    expect(counter(r, 'D_RESYNC_BYTES')).toBe(N * L.WMI_BUFFER_HEADER_SIZE);
    // framing + decode read the file about twice, not 1 MiB per corrupt header
    expect(src.counts.bytes).toBeLessThanOrEqual(3 * bytes.length);
    expect(src.counts.calls).toBeLessThan(100);
  });
});

describe('many tiny buffers: framing reads contiguously, each buffer costs a fixed record', () => {
  const N = 40_000;
  const bytes = tinyBuffers(N, 'ascending');
  test.each(ENGINES)('%s', async (engine) => {
    const src = bytesCounting(bytes);
    const r = await decodeCountedAsync(src, engine);
    expect(r.rows.cswitch).toBe(N);
    // headers come from 256 KiB reads, not a read per header
    expect(src.counts.calls).toBeLessThan((2 * bytes.length) / (256 << 10) + 20);
    // the public list: 26 bytes per buffer
    const b = r.buffers;
    const held = [b.fileOffset, b.size, b.sequenceNumber, b.cpu, b.flags, b.type].reduce((n, a) => n + a.buffer.byteLength, 0);
    expect(BUFFER_RECORD_BYTES).toBe(26);
    expect(held / b.length).toBeLessThanOrEqual(BUFFER_RECORD_BYTES * 1.125 + 1);
  });
});

describe('compressed buffers never decompress past the logger BufferSize', () => {
  const BS = 0x10000;
  test.each(ENGINES)('%s: SavedOffset past BufferSize is a corrupt buffer, not 64 MiB of output', (engine) => {
    const bytes = compressedBombs(20, (64 << 20) - 0x48, 'compact', BS);
    const r = decodeSync(bytes, { engine });
    expect(r.cswitch.length).toBe(0);
    expect(r.summary.diagnostics['buffersCorrupt']).toBe(20);
    const issues = r.summary.issues.filter((i) => i.counter === 'buffersCorrupt');
    expect(issues.length).toBe(20);
    expect(issues.every((i) => i.detail === L.CORRUPT_COMPRESSED_TOO_LARGE)).toBe(true);
    expect(issues[0]!.fileOffset).toBe(BS); // the first one, right after the header buffer
    expect(issues[0]!.message).toMatch(/BufferSize/);
  });

  test('up to BufferSize it decompresses; rows stay bounded by the real buffer size', () => {
    const bytes = compressedBombs(4, BS - 0x48, 'compact', BS);
    const [w, r] = ENGINES.map((engine) => decodeSync(bytes, { engine }));
    for (const x of [w!, r!]) {
      expect(x.summary.diagnostics['buffersCorrupt']).toBe(0);
      expect(x.summary.diagnostics['buffersCompressed']).toBe(4);
      expect(x.cswitch.length).toBeGreaterThan(1000);
      expect(x.cswitch.length).toBeLessThanOrEqual((4 * (BS - 0x48)) / 2);
    }
    expect({ ...w!.summary, engine: '' }).toEqual({ ...r!.summary, engine: '' });
    w!.cswitch.columns.forEach((c, i) => expect(Buffer.compare(bytesOf(c), bytesOf(r!.cswitch.columns[i]!))).toBe(0));
  });

  test.each(ENGINES)('%s: 1000 buffers of zeros claiming 64 MiB each: nothing decompressed', (engine) => {
    const bytes = compressedBombs(1000, (64 << 20) - 0x48, 'zeros', BS);
    const r = decodeSync(bytes, { engine });
    expect(r.summary.diagnostics['buffersCorrupt']).toBe(1000);
    expect(r.summary.events).toBe(2); // the header buffer's
  });

  test.each(ENGINES)('%s: a SequenceNumber below the header buffer\'s does not escape the logger BufferSize (the header buffer decodes first)', (engine) => {
    const bytes = compressedBombs(2, 0x48 + (16 << 20), 'zeros', BS);
    const dv = new DataView(bytes.buffer);
    const size = dv.getUint32(BS, true);
    // the first bomb sorts before the header buffer by SequenceNumber and claims just over 16 MiB; the
    // second, within BufferSize and the XPRESS ratio (768 bytes of zeros from an 11-byte stream), decodes
    dv.setBigInt64(BS + L.BUF_SEQUENCE_NUMBER, -1n, true);
    const second = new Uint8Array(compressedBombs(1, 0x300, 'zeros', BS).subarray(BS));
    const all = new Uint8Array(BS + size + second.length);
    all.set(bytes.subarray(0, BS + size));
    all.set(second, BS + size);
    const r = decodeSync(all, { engine });
    expect(r.summary.issues.filter((i) => i.detail === L.CORRUPT_COMPRESSED_TOO_LARGE).map((i) => i.fileOffset)).toEqual([BS]);
    expect(r.summary.diagnostics['buffersCompressed']).toBe(2);
    // the second decompressed (its zeros are no events: the walk stops at once)
    expect(r.summary.diagnostics['buffersTruncatedWalk']).toBe(1);
  });
});

describe('zeros after the header buffer: the resync scan skips them in large reads', () => {
  test.each(ENGINES)('%s: 512 MiB of (virtual) zeros', async (engine) => {
    const head = template().header;
    const size = head.length + (512 << 20);
    const src = countingSource(size, (p, n) => {
      const out = new Uint8Array(n);
      if (p < head.length) out.set(head.subarray(p, Math.min(head.length, p + n)));
      return out;
    });
    const r = await decodeCountedAsync(src, engine);
    expect(counter(r, 'D_RESYNC_BYTES')).toBe(512 << 20);
    expect(counter(r, 'D_BUFFERS_CORRUPT')).toBe(1);
    expect(src.counts.bytes).toBeLessThanOrEqual(size + (8 << 20));
    expect(src.counts.calls).toBeLessThanOrEqual((512 << 20) / (4 << 20) + 20);
  });
});

test('decodeStream with small windows = decodeSync on a hostile order', async () => {
  const bytes = tinyBuffers(3000, 'alternating');
  const sync = decodeSync(bytes);
  let rows = 0;
  const s = await decodeStream(bytes, { windowBytes: 0x1000, onRows: ({ cswitch }) => void (rows += cswitch.length) });
  expect(rows).toBe(3000);
  expect(s.summary).toEqual(sync.summary);
});

// ---------------------------------------------------------------------------------------------
// Issue 28: nothing lost in silence, claims never buy work, trace-wide facts first.

const concat = (a: Uint8Array, b: Uint8Array): Uint8Array => {
  const out = new Uint8Array(a.length + b.length);
  out.set(a);
  out.set(b, a.length);
  return out;
};

/** A writer trace (generateMixedTrace) as a fuzz seed: its bytes and the map of its buffers. */
function writerSeed(o: MixedTraceOptions): Seed {
  return analyse(`writer/${o.seed}`, generateMixedTrace(o).bytes);
}

/** Two results the same: summary (less the engine's name), buffers and every column of every table. */
function expectSameResult(a: DecodeResult, b: DecodeResult, label = ''): void {
  expect(resultDifference(a, b), label).toBeNull();
}

/** Rows of all tables and bytes of all events a decode walked. */
function work(r: DecodeResult): { rows: number; bytes: number } {
  return {
    rows: DECODED_TABLE_NAMES.reduce((n, t) => n + r[t].length, 0),
    bytes: r.summary.eventsByKind.reduce((n, k) => n + k.bytes, 0),
  };
}

/**
 * The bound of docs/format.md §A.6: what is decoded is at most XPRESS_MAX_RATIO x the input (decompressed
 * or not), and rows are at most one per 2 bytes of it (an IDLE_SHORT compact packet) plus one held switch
 * per processor at the end.
 */
function expectBoundedWork(r: DecodeResult, input: number): void {
  const { rows, bytes } = work(r);
  expect(bytes).toBeLessThanOrEqual(L.XPRESS_MAX_RATIO * input);
  expect(rows).toBeLessThanOrEqual((L.XPRESS_MAX_RATIO * input) / 2 + L.MAX_PROCESSORS);
}

describe('size claims: one BufferSize never hides the buffers behind it (issue 28, 1)', () => {
  // 64 KiB buffers of CSwitch events, 2 CPUs (the issue's case: its bit 17 or 18 flipped)
  const BS = 0x10000;
  const t = generateMixedTrace({ seed: 28, targetBytes: 1_200_000, cpus: 2, bufferSize: BS, mix: { cswitch: 1 } });
  const seed = analyse('writer/64k', t.bytes);
  const clean = decodeSync(t.bytes);
  const data = t.buffers.filter((b) => b.fileOffset > 0);

  test.each([
    ['0x30000 (bits 17 and 16 of 0x10000 flipped)', 2, () => 0x30000],
    ['0x50000 (bit 18)', 3, () => BS ^ (1 << 18)],
    ['the rest of the file, on the first data buffer', 0, (at: number) => t.bytes.length - at],
    ['a low bit flipped (bit 3)', 4, () => BS ^ 8],
    ['a low bit flipped (bit 12)', 5, () => BS ^ 0x1000],
    ['a low bit flipped (bit 15)', 6, () => BS ^ 0x8000],
  ] as const)('%s: every buffer framed and decoded, the claim counted', (_label, victim, claim) => {
    const at = data[victim]!.fileOffset;
    const bytes = t.bytes.slice();
    new DataView(bytes.buffer).setUint32(at + L.BUF_BUFFER_SIZE, claim(at), true);
    const [w, r] = ENGINES.map((engine) => decodeSync(bytes, { engine }));
    expectSameResult(w!, r!);
    for (const x of [w!, r!]) {
      expect([...x.buffers.fileOffset]).toEqual([...clean.buffers.fileOffset]);
      expect(x.summary.events).toBe(clean.summary.events);
      expect(x.cswitch.length).toBe(clean.cswitch.length);
      expect(x.summary.diagnostics['buffersCorrupt']).toBe(0);
      expect(x.summary.diagnostics['resyncBytes']).toBe(0);
      expect(x.summary.issues).toEqual([expect.objectContaining({ counter: 'buffersSizeCorrected', fileOffset: at, detail: claim(at) })]);
      expect(vanishedBuffer(seed, bytes, x)).toBeNull();
    }
  });

  test('property: random claims on random writer traces — every intact buffer framed, the rest counted, work bounded', () => {
    const traces = fc.record({
      seed: fc.integer({ min: 1, max: 1_000_000 }),
      targetBytes: fc.integer({ min: 20_000, max: 160_000 }),
      cpus: fc.integer({ min: 1, max: 4 }),
      bufferSize: fc.constantFrom(0x800, 0x1000, 0x2000, 0x4000),
      compress: fc.boolean(),
    });
    const claims = fc.oneof(
      fc.record({ kind: fc.constant('multiple' as const), n: fc.integer({ min: 2, max: 8 }) }),
      fc.record({ kind: fc.constant('rest' as const), n: fc.constant(0) }),
      fc.record({ kind: fc.constant('bit' as const), n: fc.integer({ min: 0, max: 31 }) }),
      fc.record({ kind: fc.constant('over next' as const), n: fc.integer({ min: 1, max: 3 }) }),
      fc.record({ kind: fc.constant('more' as const), n: fc.integer({ min: 1, max: 0x40000 }) }),
    );
    fc.assert(
      fc.property(traces, claims, fc.nat(), fc.option(fc.constantFrom(0, 0x48, 0x400, 0x10000, 16 << 20, 0x7fffffff)), (o, claim, pick, logger) => {
        const s = writerSeed(o);
        const x = s.buffers[pick % s.buffers.length]!;
        const bytes = s.bytes.slice();
        const dv = new DataView(bytes.buffer);
        const next = (k: number) => s.buffers.slice(s.buffers.indexOf(x) + 1, s.buffers.indexOf(x) + 1 + k).reduce((n, b) => n + b.size, 0);
        const value =
          claim.kind === 'multiple' ? x.size * claim.n
          : claim.kind === 'rest' ? bytes.length - x.at
          : claim.kind === 'bit' ? (x.size ^ (1 << claim.n)) >>> 0
          : claim.kind === 'over next' ? x.size + next(claim.n)
          : x.size + claim.n;
        dv.setUint32(x.at + L.BUF_BUFFER_SIZE, value, true);
        if (x.at === 0 && (value < L.WMI_BUFFER_HEADER_SIZE || value > L.MAX_BUFFER_SIZE)) {
          // no size at all in the first buffer: the input is not an ETL file (one clear error)
          expect(() => decodeSync(bytes)).toThrowError(EtlError);
          return;
        }
        // and now and then the logger's BufferSize in the logfile header claims something else too
        if (logger !== null) dv.setUint32(L.WMI_BUFFER_HEADER_SIZE + L.SYSTEM_HEADER_SIZE + L.LFH_BUFFER_SIZE, logger, true);
        const [w, r] = ENGINES.map((engine) => decodeSync(bytes, { engine }));
        expectSameResult(w!, r!);
        // every other buffer is intact: framed where it is — but for whole buffers a compressed buffer's claim
        // covers up to another header and within the usual size, which are counted when it is decompressed
        // (input after its stream), or a few bytes into the next header, whose shifted copy can pass for a
        // header (then its walk and the bytes after it are counted as lost) — and the claim's own buffer too,
        // unless its claim is no size at all: then it is a corrupt buffer, counted
        const framed = new Set(w!.buffers.fileOffset);
        const d = w!.summary.diagnostics;
        for (const b of s.buffers) {
          if (b === x || framed.has(b.at)) continue;
          expect(x.compressed, `buffer at ${b.at} under a claim of ${value} at ${x.at}`).toBe(true);
          expect(d['compressedTrailingData']! + d['buffersCorrupt']! + d['buffersTruncatedWalk']!).toBeGreaterThan(0);
        }
        if (!framed.has(x.at)) expect(w!.summary.diagnostics['buffersCorrupt']! + w!.summary.diagnostics['buffersTruncated']!).toBeGreaterThan(0);
        expect(vanishedBuffer(s, bytes, w!)).toBeNull();
        expectBoundedWork(w!, bytes.length);
      }),
      { numRuns: 60 },
    );
  });
});

describe('size claims within the usual size: where buffers are smaller than the header buffer (issue 28, 1)', () => {
  // the header buffer (0x1000) sets the usual size; the data buffers are 0x70 bytes, so a claim of a few of
  // them is below it, and one running to the end of the input has no header after it (found by npm run fuzz)
  const N = 8;
  const clean = tinyBuffers(N);
  const seed = analyse('tiny', clean);
  test('property: a claim of m buffers on any data buffer, up to the end of the input — every buffer framed and decoded, the claim counted', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: N - 2 }), fc.integer({ min: 2, max: N }), (victim, m) => {
        const covers = Math.min(m, N - victim);
        fc.pre(covers >= 2);
        const bytes = clean.slice();
        const at = 0x1000 + victim * TINY_BUFFER_BYTES;
        new DataView(bytes.buffer).setUint32(at + L.BUF_BUFFER_SIZE, covers * TINY_BUFFER_BYTES, true);
        const [w, r] = ENGINES.map((engine) => decodeSync(bytes, { engine }));
        expectSameResult(w!, r!);
        expect(w!.cswitch.length).toBe(N);
        expect(w!.buffers.length).toBe(N + 1);
        expect(w!.summary.issues).toEqual([expect.objectContaining({ counter: 'buffersSizeCorrected', fileOffset: at, detail: covers * TINY_BUFFER_BYTES })]);
        expect(vanishedBuffer(seed, bytes, w!)).toBeNull();
      }),
      { numRuns: 40 },
    );
  });
  test('a compressed buffer claiming 3 bytes more, where those bytes pass for a header cut short: the buffer behind it is framed', () => {
    // found by the property above: the "header" 3 bytes into the next one claimed 481,280 bytes, past the
    // end, and was taken for a cut buffer, so the claim before it was never checked
    const s = writerSeed({ seed: 1, targetBytes: 20_000, cpus: 1, bufferSize: 2048, compress: true });
    const x = s.buffers[1]!;
    const bytes = s.bytes.slice();
    new DataView(bytes.buffer).setUint32(x.at + L.BUF_BUFFER_SIZE, x.size + 3, true);
    const [w, r] = ENGINES.map((engine) => decodeSync(bytes, { engine }));
    expectSameResult(w!, r!);
    expect([...w!.buffers.fileOffset]).toEqual(s.buffers.map((b) => b.at));
    expect(w!.summary.issues).toEqual([expect.objectContaining({ counter: 'buffersSizeCorrected', fileOffset: x.at, detail: x.size + 3 })]);
    expect(vanishedBuffer(s, bytes, w!)).toBeNull();
  });
  test('buffers of one size are not checked (the claim is the stride): framing reads headers only', () => {
    const r = decodeSync(clean);
    expect(r.summary.diagnostics['buffersSizeCorrected']).toBe(0);
    expect(r.cswitch.length).toBe(N);
  });
});

describe('a shifted copy of a header: bytes missing or inserted inside a buffer, or a claim a few bytes long (issue 28, 1)', () => {
  // k bytes missing inside a buffer (or its BufferSize k bytes too long) put the position its claim leads to k
  // bytes into the next buffer, where a shifted copy of its header can pass for one (fuzz input 514107 of seed
  // 28: BufferFlag 0x0020 after a zero byte read as BufferSize 0x2000): the next buffer must still be framed
  // at its real offset, or its loss counted (vanishedBuffer)
  const seeds = [
    ...[0x800, 0x1000, 0x2000, 0x8000].flatMap((bufferSize, i) =>
      [false, true].map((compress) => writerSeed({ seed: 2800 + 2 * i + Number(compress), targetBytes: bufferSize > 0x2000 ? 30 * bufferSize : 60_000, cpus: 2, bufferSize, compress })),
    ),
    ...(corpusTestsEnabled() ? corpusSeeds(join(here, '..')) : []),
  ];
  test('large buffers (headers read in batches): an implausible header at the stride gets the claim before it checked, as in the loop', () => {
    // 0x60 bytes missing from the unused tail of a 32 KiB buffer; where its claim leads, 0x18 bytes into the
    // first event of the next buffer, a copy of a header with the stride as BufferSize and no BufferFlag
    // (0xFF00) was planted: the batch, which takes headers of the stride, must not take it
    const BS = 0x8000;
    const K = 0x60;
    const s = writerSeed({ seed: 2831, targetBytes: 12 * BS, cpus: 2, bufferSize: BS });
    const dv = new DataView(s.bytes.buffer, s.bytes.byteOffset);
    const i = s.buffers.findIndex((b, j) => j >= 3 && j + 2 < s.buffers.length && dv.getUint32(b.at + L.BUF_OFFSET, true) <= BS - K);
    expect(i).toBeGreaterThan(0);
    const x = s.buffers[i]!;
    const bytes = new Uint8Array(s.bytes.length - K);
    bytes.set(s.bytes.subarray(0, x.at + BS - K));
    bytes.set(s.bytes.subarray(x.at + BS), x.at + BS - K);
    const planted = new DataView(bytes.buffer);
    planted.setUint32(x.at + BS + L.BUF_BUFFER_SIZE, BS, true);
    planted.setUint16(x.at + BS + L.BUF_BUFFER_FLAG, 0xff00, true);
    const [w, r] = ENGINES.map((engine) => decodeSync(bytes, { engine }));
    expectSameResult(w!, r!);
    expect([...w!.buffers.fileOffset]).toEqual(s.buffers.map((b) => (b.at > x.at ? b.at - K : b.at)));
    expect(w!.summary.issues).toContainEqual(expect.objectContaining({ counter: 'buffersSizeCorrected', fileOffset: x.at, detail: BS }));
    expect(vanishedBuffer(s, bytes, w!)).toBeNull();
  });
  test.each([
    ['BufferFlag 0x1010, claiming the bytes up to the end of the next buffer', 0x1010, (x: SeedBuffer, next: SeedBuffer) => 0x80 + next.size],
    ['BufferFlag 0x1010, claiming the size of the buffer before it (the stride)', 0x1010, (x: SeedBuffer) => x.size],
  ] as const)('bytes inserted inside a buffer, then a header that is not plausible (%s): its claim is checked over all its bytes', (_label, flags, claim) => {
    // found by `npm run fuzz -- --seed 31 --from 10857 --count 1` (corpus): 0x6F bytes inserted in a compressed
    // buffer left the position its claim leads to in its stream, where event bytes with BufferFlag 0x1010 and
    // BufferType 0x7700 claimed the bytes up to the end of the next buffer, which vanished (not walked, not counted)
    const K = 0x80;
    const s = writerSeed({ seed: 2832, targetBytes: 40_000, cpus: 2, bufferSize: 0x1000, compress: true });
    const x = s.buffers[3]!;
    const next = s.buffers[4]!;
    // K bytes inserted 8 bytes before the buffer's end; where its claim leads, 8 bytes into them, a header
    // that is not plausible claims bytes over the next buffer
    const at = x.at + x.size - 8;
    const bytes = new Uint8Array(s.bytes.length + K);
    bytes.set(s.bytes.subarray(0, at));
    for (let j = 0; j < K; j++) bytes[at + j] = 0x5a ^ j;
    bytes.set(s.bytes.subarray(at), at + K);
    const planted = new DataView(bytes.buffer, x.at + x.size);
    planted.setUint32(L.BUF_BUFFER_SIZE, claim(x, next), true);
    planted.setUint16(L.BUF_BUFFER_FLAG, flags, true);
    planted.setUint16(L.BUF_BUFFER_TYPE, 0x7700, true);
    const [w, r] = ENGINES.map((engine) => decodeSync(bytes, { engine }));
    expectSameResult(w!, r!);
    expect([...w!.buffers.fileOffset]).toContain(next.at + K);
    expect(w!.summary.issues).toContainEqual(expect.objectContaining({ counter: 'buffersSizeCorrected', fileOffset: x.at + x.size, detail: claim(x, next) }));
    expect(vanishedBuffer(s, bytes, w!)).toBeNull();
  });
  /**
   * Seed `which` with k bytes deleted inside one of its data buffers (at `where`), or k bytes inserted there
   * (of a pattern from `where`), or that buffer claiming k bytes more.
   */
  const shifted = (which: number, pick: number, k: number, mode: 'delete' | 'insert' | 'claim', where: number) => {
    const s = seeds[which % seeds.length]!;
    const data = s.buffers.filter((b) => b.at > 0 && b.size > k);
    if (!data.length) return null;
    const x = data[pick % data.length]!;
    let bytes: Uint8Array;
    if (mode === 'delete') {
      const at = x.at + (where % (x.size - k + 1));
      bytes = new Uint8Array(s.bytes.length - k);
      bytes.set(s.bytes.subarray(0, at));
      bytes.set(s.bytes.subarray(at + k), at);
    } else if (mode === 'insert') {
      const at = x.at + 1 + (where % (x.size - 1));
      bytes = new Uint8Array(s.bytes.length + k);
      bytes.set(s.bytes.subarray(0, at));
      for (let j = 0; j < k; j++) bytes[at + j] = where & 1 ? 0 : Math.imul(where + j, 0x9e3779b1) >>> 24;
      bytes.set(s.bytes.subarray(at), at + k);
    } else {
      bytes = s.bytes.slice();
      new DataView(bytes.buffer).setUint32(x.at + L.BUF_BUFFER_SIZE, x.size + k, true);
    }
    return { s, bytes, label: `${s.name}: ${mode} ${k} bytes in the buffer at ${x.at}` };
  };
  const cases = [fc.nat(), fc.nat(), fc.integer({ min: 1, max: 200 }), fc.constantFrom('delete' as const, 'insert' as const, 'claim' as const), fc.nat()] as const;
  test('property: k in 1..200 bytes deleted or inserted inside a buffer, or claimed more — every intact buffer framed or its loss counted, engines agree, work bounded', () => {
    fc.assert(
      fc.property(...cases, (which, pick, k, mode, where) => {
        const c = shifted(which, pick, k, mode, where);
        fc.pre(c !== null);
        const { s, bytes, label } = c!;
        const [w, r] = ENGINES.map((engine) => decodeSync(bytes, { engine }));
        expectSameResult(w!, r!, label);
        expect(vanishedBuffer(s, bytes, w!), label).toBeNull();
        expectBoundedWork(w!, bytes.length);
      }),
      // pinned: 3 bytes missing in a full 0x1000-byte buffer; the shifted copy of the next header claims 782,336 bytes, whose check covered the two buffers behind it
      { numRuns: 400, examples: [[2, 389198287, 3, 'delete', 78]] },
    );
  });
  test('property: the same inputs streamed through small windows and decoded in partitions (the fuzz oracle)', { timeout: 120_000 }, async () => {
    await fc.assert(
      fc.asyncProperty(...cases, fc.integer({ min: 1, max: 12 }), async (which, pick, k, mode, where, cut) => {
        const c = shifted(which, pick, k, mode, where);
        fc.pre(c !== null);
        const failure = await checkInput(c!.bytes, { windowBytes: 0x1000, streamReference: false, parallelCuts: [cut, cut + 2] }, c!.s);
        expect(failure, `${c!.label}: ${failure?.message}`).toBeNull();
      }),
      { numRuns: 40, examples: [[2, 389198287, 3, 'delete', 78, 9]] },
    );
  });
});

describe('decompression bombs through a header claim (issue 28, 3)', () => {
  test.each(ENGINES)('%s: a 16 MiB logger BufferSize buys nothing: 9 KB and 54 KB of compressed buffers claiming it are refused, counted', (engine) => {
    for (const count of [7, 43]) {
      const bytes = headerClaimBombs(count);
      expect(bytes.length).toBeLessThan(count === 7 ? 9500 : 55_000);
      const r = decodeSync(bytes, { engine });
      expect(r.cswitch.length).toBe(0);
      expect(r.summary.diagnostics['buffersCompressedRefused']).toBe(count);
      const refused = r.summary.issues.filter((i) => i.counter === 'buffersCompressedRefused');
      expect(refused.length).toBe(count);
      expect(refused[0]!.fileOffset).toBe(claimingHeader(16 << 20).length);
      expect(refused[0]!.detail).toBe((16 << 20) - L.WMI_BUFFER_HEADER_SIZE - (((16 << 20) - L.WMI_BUFFER_HEADER_SIZE) % compactBatch().length));
      expectBoundedWork(r, bytes.length);
    }
  });

  test('up to 77 times the stream it decompresses, the same in both engines', () => {
    const stream = headerClaimBombs(1).length - claimingHeader(16 << 20).length - L.WMI_BUFFER_HEADER_SIZE;
    const bytes = headerClaimBombs(3, 16 << 20, L.XPRESS_MAX_RATIO * stream);
    const [w, r] = ENGINES.map((engine) => decodeSync(bytes, { engine }));
    expectSameResult(w!, r!);
    expect(w!.summary.diagnostics['buffersCompressedRefused']).toBe(0);
    expect(w!.cswitch.length).toBeGreaterThan(1000);
    expectBoundedWork(w!, bytes.length);
  });

  test('property: random logger BufferSize, expansion, content and stream — work at most 77 times the input, every buffer decoded or counted', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0x2000, max: 16 << 20 }),
        fc.integer({ min: 1, max: 6 }),
        fc.integer({ min: 0x200, max: 4 << 20 }),
        fc.constantFrom('compact' as const, 'zeros' as const),
        (logger, count, expandTo, content) => {
          // the zeros: compressedBombs' buffers after a header buffer claiming `logger`
          const bytes =
            content === 'compact'
              ? headerClaimBombs(count, logger, Math.max(4 * compactBatch().length, Math.min(expandTo, logger - 0x48)))
              : concat(claimingHeader(logger), compressedBombs(count, Math.max(0x200, Math.min(expandTo, logger - 0x48)), 'zeros').subarray(template(0x10000).header.length));
          const [w, r] = ENGINES.map((engine) => decodeSync(bytes, { engine }));
          expectSameResult(w!, r!);
          const d = w!.summary.diagnostics;
          // each compressed buffer: walked, or counted as not decompressed
          expect(d['buffersWalked']! - 1 + d['buffersCompressedRefused']! + d['buffersCorrupt']! + d['buffersCompressedUndecoded']!).toBe(count);
          expectBoundedWork(w!, bytes.length);
        },
      ),
      { numRuns: 40 },
    );
  });

  test('property: SavedOffset claims on random compressed writer traces — work bounded, intact buffers kept', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 1_000_000 }), fc.nat(), fc.integer({ min: 0x48, max: 64 << 20 }), (seedNo, pick, saved) => {
        const s = writerSeed({ seed: seedNo, targetBytes: 60_000, cpus: 2, bufferSize: 0x2000, compress: true });
        const comp = s.buffers.filter((b) => b.compressed);
        const x = comp[pick % comp.length]!;
        const bytes = s.bytes.slice();
        new DataView(bytes.buffer).setUint32(x.at + L.BUF_SAVED_OFFSET, saved, true);
        const [w, r] = ENGINES.map((engine) => decodeSync(bytes, { engine }));
        expectSameResult(w!, r!);
        expect(vanishedBuffer(s, bytes, w!)).toBeNull();
        expectBoundedWork(w!, bytes.length);
      }),
      { numRuns: 30 },
    );
  });
});

describe('trace-wide facts before any data buffer (issue 28, 4)', () => {
  /** The trace with its header buffer's SequenceNumber `header` and every data buffer's moved by `shift`. */
  function reordered(bytes: Uint8Array, header: bigint, shift: bigint): Uint8Array {
    const b = bytes.slice();
    const dv = new DataView(b.buffer);
    for (const s of analyse('t', bytes).buffers) {
      const at = s.at + L.BUF_SEQUENCE_NUMBER;
      dv.setBigInt64(at, s.at === 0 ? header : dv.getBigInt64(at, true) + shift, true);
    }
    return b;
  }

  async function inPartitions(bytes: Uint8Array, cuts: number[]): Promise<DecodeResult> {
    const chunks = Object.fromEntries(DECODED_TABLE_NAMES.map((t) => [t, [] as ColumnChunk[]])) as Record<DecodedTableName, ColumnChunk[]>;
    const r = await decodeStream(bytes, {
      engine: 'wasm',
      threads: 3,
      parallel: { inThread: true, minBytes: 0, cuts },
      onRows: (tables) => {
        for (const t of DECODED_TABLE_NAMES) if (tables[t].length) chunks[t].push({ length: tables[t].length, columns: tables[t].columns });
      },
    });
    return { ...r, ...Object.fromEntries(DECODED_TABLE_NAMES.map((t) => [t, new Table(t, concatChunks(t, chunks[t]))])) } as DecodeResult;
  }

  const compact = generateMixedTrace({ seed: 3, targetBytes: 300_000, cpus: 2, bufferSize: 0x1000, mix: { compact: 1 } });

  test("data buffers sorting before the header buffer decode with the build's bias (40), in both engines and in partitions", async () => {
    const clean = decodeSync(compact.bytes);
    expect(clean.summary.bias).toMatchObject({ value: 40, source: 'build' });
    const bytes = reordered(compact.bytes, 1000n, -100_000n);
    const rows = (r: DecodeResult) => r.cswitch.columns;
    for (const engine of ENGINES) {
      const r = decodeSync(bytes, { engine });
      expect(r.summary.bias).toMatchObject({ value: 40, source: 'build', certain: true });
      expect(r.summary.diagnostics['compactStateOutOfRange']).toBe(clean.summary.diagnostics['compactStateOutOfRange']);
      rows(r).forEach((c, i) => expect(Buffer.compare(bytesOf(c), bytesOf(rows(clean)[i]!)), TABLE_COLUMNS.cswitch[i]!.name).toBe(0));
    }
    const p = await inPartitions(bytes, [5, 17, 40]);
    rows(p).forEach((c, i) => expect(Buffer.compare(bytesOf(c), bytesOf(rows(clean)[i]!)), TABLE_COLUMNS.cswitch[i]!.name).toBe(0));
  });

  test('property: wherever the header buffer sorts, the rows are those of the trace in order', async () => {
    const small = generateMixedTrace({ seed: 4, targetBytes: 60_000, cpus: 2, bufferSize: 0x1000, mix: { compact: 3, cswitch: 1 } });
    const clean = decodeSync(small.bytes);
    const n = clean.buffers.length;
    await fc.assert(
      fc.asyncProperty(fc.bigInt({ min: -(1n << 62n), max: 1n << 62n }), fc.bigInt({ min: -(1n << 40n), max: 1n << 40n }), fc.integer({ min: 1, max: n - 1 }), async (header, shift, cut) => {
        const bytes = reordered(small.bytes, header, shift);
        // the same rows and summary, the same buffers but for their SequenceNumbers
        const same = (r: DecodeResult) => {
          expect([...r.buffers.fileOffset]).toEqual([...clean.buffers.fileOffset]);
          expect(resultDifference({ ...r, buffers: clean.buffers } as DecodeResult, clean)).toBeNull();
        };
        for (const engine of ENGINES) same(decodeSync(bytes, { engine }));
        same(await inPartitions(bytes, [cut]));
      }),
      { numRuns: 20 },
    );
  });
});
