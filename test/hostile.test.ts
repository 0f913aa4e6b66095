// Resource attacks (issue 13): crafted files that make a decoder work or allocate in proportion to what a
// header claims. Work and memory must stay proportional to the input's real content. The limits are
// asserted on work done — bytes and calls read, chunks loaded, buffers read on their own, rows made —
// never on time. The full-size versions are the `hostile/*` cases of `npm run bench`.
import { describe, expect, test } from 'vitest';
import { BUFFER_RECORD_BYTES } from '../src/framing/buffers.js';
import type { DriverResult } from '../src/decode/decode-steps.js';
import * as L from '../src/generated/layout.js';
import { decodeStream, decodeSync } from '../src/node.js';
import { SINGLE_READ_COST } from '../src/framing/ordering.js';
import { bytesCounting, countingSource, decodeCountedAsync, decodeCountedSync } from './helpers/counting.js';
import { compressedBombs, template, tinyBuffers, TINY_BUFFER_BYTES, type TinyOrder } from './helpers/hostile.js';

const ENGINES = ['wasm', 'reference'] as const;

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
