// Decoding a Blob/File: the same result as the bytes in memory, with a few large slices instead of a
// slice per buffer header (src/input/blob-source.ts), and framing of buffers whose sizes vary (compressed
// buffers) from contiguous reads instead of batches whose guesses fail (src/framing/framing.ts).
import { describe, expect, test } from 'vitest';
import { mkdtempSync, openAsBlob, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { decode, decodeStream, decodeSync, type DecodeResult } from '../src/node.js';
import { blobSource, ReadCache, SLICES, type SliceProfile } from '../src/input/blob-source.js';
import { runAsync, TURN_MS, type AsyncSource } from '../src/decode/runners.js';
import { load, prefetch, TURN, type Steps } from '../src/decode/steps.js';
import { generateMixedTrace } from '../src/writer/index.js';
import { corpusTestsEnabled, readCorpus } from './helpers/corpus.js';
import { bytesCounting, decodeCountedAsync } from './helpers/counting.js';

/** What must agree between two decodes of the same bytes. */
function digest(r: DecodeResult) {
  return {
    summary: JSON.stringify(r.summary, (_, v: unknown) => (typeof v === 'bigint' ? String(v) : v)),
    cswitch: r.cswitch.length,
    spinlock: r.spinlock.length,
    ts: Array.from((r.cswitch.column('timestamp') as BigInt64Array).subarray(0, 1000), String),
    tid: Array.from(r.cswitch.column('oldThreadId') as Uint32Array),
    buffers: Array.from(r.buffers.fileOffset),
  };
}

/** Slices a decode of `blob` makes (through blobSource). */
async function slicesOf(
  blob: Blob,
  gapBytes?: number,
  wholeMax = 0,
  cacheBytes?: number,
  profile?: SliceProfile,
): Promise<{ slices: [number, number][]; result: Awaited<ReturnType<typeof decodeStream>> }> {
  const slices: [number, number][] = [];
  const result = await decodeStream(blobSource(blob, { gapBytes, wholeMax, cacheBytes, profile, onSlice: (a, b) => slices.push([a, b]) }), {});
  return { slices, result };
}

/** a Blob holding `bytes` */
const blobOf = (bytes: Uint8Array): Blob => new Blob([bytes as Uint8Array<ArrayBuffer>]);

const corpus = corpusTestsEnabled();
/** the real file of the two corpus suites below (empty when they are skipped) */
const perfview = corpus ? readCorpus('perfview-net.4.5.2.x64.etl') : new Uint8Array(0);

describe.skipIf(!corpus)('perfview-net.4.5.2.x64.etl (359 compressed buffers of varying sizes)', () => {
  test('a File-backed Blob (fs.openAsBlob) decodes as the bytes do', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'etw-blob-'));
    const path = join(dir, 'perfview-net.etl');
    writeFileSync(path, perfview);
    const blob = await openAsBlob(path);
    expect(digest(await decode(blob))).toEqual(digest(decodeSync(perfview)));
  });

  test('is read in a few large slices, not one per buffer header', async () => {
    const { slices, result } = await slicesOf(blobOf(perfview));
    expect(result.summary.buffers).toBe(360);
    // it was 8339 slices of 72 bytes; now a handful: the header, framing reads of 256 KiB-1 MiB, the decode's window in parts
    expect(slices.length).toBeLessThanOrEqual(16);
    const bytes = slices.reduce((n, [a, b]) => n + (b - a), 0);
    expect(bytes).toBeLessThanOrEqual(2.2 * perfview.length); // framing reads the file once, the decode once
  });

  test('framing reads varying buffer sizes contiguously (any source)', async () => {
    const src = bytesCounting(perfview);
    const r = await decodeCountedAsync(src, 'wasm');
    expect(r.buffers.length).toBe(360);
    // batches of guessed headers would cost a read per buffer plus the wasted guesses (23 k positions);
    // the decode's own loads (one per input window) come on top
    expect(src.counts.calls - r.reads.loads - r.reads.singles).toBeLessThan(30);
    expect(r.reads.loads).toBeLessThanOrEqual(Math.ceil(perfview.length / (2 << 20)) + 1);
  });
});

describe('uniform 64 KiB buffers', () => {
  const bytes = generateMixedTrace({ seed: 77, targetBytes: 6 << 20, cpus: 4, bufferSize: 0x10000 }).bytes;
  const buffers = decodeSync(bytes).summary.buffers;

  test('a Blob decodes as the bytes do, whatever the coalescing gap', async () => {
    const expected = digest(decodeSync(bytes));
    expect(digest(await decode(blobOf(bytes)))).toEqual(expected);
    for (const gap of [0, 1 << 20]) {
      const { result } = await slicesOf(blobOf(bytes), gap);
      expect(result.summary.buffers).toBe(buffers);
      expect(result.summary.cswitch).toBe(expected.cswitch);
    }
  });

  test('headers close together are one slice per batch; far apart, one slice each (in parallel)', async () => {
    expect(buffers).toBeGreaterThan(90);
    const near = await slicesOf(blobOf(bytes), 1 << 20);
    const headerSlices = (s: [number, number][]) => s.filter(([a, b]) => b - a === 72).length;
    // batches of 16, 32, 64, 128, 256 headers: a slice each (the first buffer's header is read alone), and
    // the last buffer's bytes after its data (its claim is checked at the end of the input, §A.1)
    expect(near.slices.length).toBeLessThanOrEqual(14);
    expect(headerSlices(near.slices)).toBeLessThanOrEqual(2);
    const far = await slicesOf(blobOf(bytes), 0);
    expect(headerSlices(far.slices)).toBeGreaterThanOrEqual(buffers - 2);
  });

  test("a window is read as a few parts of at least 1 MiB (when framing's reads are not kept)", async () => {
    const { slices } = await slicesOf(blobOf(bytes), 1 << 20, 0, 0);
    const big = slices.filter(([a, b]) => b - a >= 1 << 20);
    expect(big.length).toBeGreaterThanOrEqual(4);
    expect(big.length).toBeLessThanOrEqual(8);
  });

  test('coalesced header runs are slices of at most 2 MiB (Node reads those fastest)', async () => {
    const { slices } = await slicesOf(blobOf(bytes), 1 << 20, 0, 0);
    expect(Math.max(...slices.map(([a, b]) => b - a))).toBeLessThanOrEqual(2 << 20);
  });

  test("the decode's windows come from framing's reads: each byte is read once", async () => {
    const sum = (s: [number, number][]) => s.reduce((n, [a, b]) => n + (b - a), 0);
    const twice = await slicesOf(blobOf(bytes), 1 << 20, 0, 0);
    expect(sum(twice.slices)).toBeGreaterThan(1.8 * bytes.length); // framing reads the file, then the decode
    const once = await slicesOf(blobOf(bytes), 1 << 20, 0);
    expect(sum(once.slices)).toBeLessThanOrEqual(1.05 * bytes.length);
    expect(once.result.summary.cswitch).toBe(twice.result.summary.cswitch);
    expect(digest(await decode(blobSource(blobOf(bytes), { wholeMax: 0, gapBytes: 1 << 20 }) as never))).toEqual(digest(decodeSync(bytes)));
  });
});

describe('slice sizes of a browser (SLICES.browser: fewer, larger slices, 32 MiB windows)', () => {
  const bytes = generateMixedTrace({ seed: 78, targetBytes: 40 << 20, cpus: 4, bufferSize: 0x10000 }).bytes;

  test('the same result as the bytes; framing runs up to 8 MiB, windows of 32 MiB read as 4 slices of 8 MiB', async () => {
    const browser = await slicesOf(blobOf(bytes), 1 << 20, 0, 0, 'browser');
    const node = await slicesOf(blobOf(bytes), 1 << 20, 0, 0, 'node');
    const expected = decodeSync(bytes).summary;
    for (const r of [browser, node]) {
      expect(r.result.summary.events).toBe(expected.events);
      expect(r.result.summary.cswitch).toBe(expected.cswitch);
      expect(r.result.summary.spinlock).toBe(expected.spinlock);
    }
    const largest = (s: [number, number][]) => Math.max(...s.map(([a, b]) => b - a));
    expect(largest(node.slices)).toBeLessThanOrEqual(SLICES.node.runMax);
    expect(largest(browser.slices)).toBeGreaterThan(SLICES.node.runMax);
    expect(largest(browser.slices)).toBeLessThanOrEqual(SLICES.browser.runMax);
    // the decode's windows: 8 MiB parts of 32 MiB windows (a browser) against 2 MiB parts of 8 MiB (Node)
    const parts = (s: [number, number][], n: number) => s.filter(([a, b]) => b - a === n).length;
    expect(parts(browser.slices, 8 << 20)).toBeGreaterThanOrEqual(4);
    expect(parts(node.slices, 2 << 20)).toBeGreaterThanOrEqual(16);
    expect(browser.slices.length).toBeLessThan(node.slices.length / 2);
  });

  test('the source tells the decode its window and header batch', () => {
    const b = blobSource(blobOf(bytes), { profile: 'browser', wholeMax: 0 });
    expect([b.windowBytes, b.headerBatch, b.turns]).toEqual([32 << 20, 1024, true]);
    const n = blobSource(blobOf(bytes), { profile: 'node', wholeMax: 0 });
    expect([n.windowBytes, n.headerBatch, n.turns]).toEqual([8 << 20, 256, true]);
  });
});

describe('turns: a read ahead whose data arrives through tasks of this thread', () => {
  /** a source whose reads complete after `hops` tasks of this thread (as a Blob's chunks do) */
  const taskSource = (turns: boolean, hops: number, done: Set<number>): AsyncSource => ({
    size: 1 << 20,
    turns,
    read: async () => new Uint8Array(0),
    readInto: (position, target) =>
      new Promise((resolve) => {
        let left = hops;
        const hop = () => {
          if (--left > 0) return void setImmediate(hop);
          done.add(position);
          resolve(target.length);
        };
        setImmediate(hop);
      }),
  });
  /** a prefetch, then a stand-in decode of `slices` pieces of just over TURN_MS, each followed by a turn step, then the load */
  function* steps(done: Set<number>, slices: number, seen: { before: boolean }): Steps<void> {
    const target = new Uint8Array(16);
    yield* prefetch(4096, target);
    for (let i = 0; i < slices; i++) {
      const until = performance.now() + TURN_MS * 1.2;
      while (performance.now() < until);
      yield TURN;
    }
    seen.before = done.has(4096);
    yield* load(4096, target);
  }

  test('with turns the read ahead completes during the decode; without, only once the decode waits for it', async () => {
    for (const turns of [true, false]) {
      const done = new Set<number>();
      const seen = { before: false };
      await runAsync(taskSource(turns, 8, done), steps(done, 24, seen), () => {});
      expect(done.has(4096)).toBe(true);
      expect(seen.before, `turns: ${turns}`).toBe(turns);
    }
  });

  test('no turn is taken once the read ahead has completed, nor without a read ahead', async () => {
    let immediates = 0;
    const counting = (turns: boolean): AsyncSource => ({
      size: 1 << 20,
      turns,
      read: async () => new Uint8Array(0),
      readInto: async (_p, t) => t.length, // completes at once
    });
    function* decode(withAhead: boolean): Steps<void> {
      const target = new Uint8Array(16);
      if (withAhead) yield* prefetch(0, target);
      for (let i = 0; i < 20; i++) {
        const until = performance.now() + TURN_MS * 1.2;
        while (performance.now() < until);
        yield TURN;
      }
      if (withAhead) yield* load(0, target);
    }
    const original = globalThis.setImmediate;
    globalThis.setImmediate = ((f: () => void) => {
      immediates++;
      return original(f);
    }) as typeof setImmediate;
    try {
      await runAsync(counting(true), decode(false), () => {});
      expect(immediates).toBe(0);
      await runAsync(counting(true), decode(true), () => {});
      expect(immediates).toBeLessThanOrEqual(1); // the first turn may come before the read's promise settled
    } finally {
      globalThis.setImmediate = original;
    }
  });
});

describe('compressed writer trace', () => {
  test('decodes from a Blob as from bytes', async () => {
    const bytes = generateMixedTrace({ seed: 5, targetBytes: 2 << 20, cpus: 4, compress: true }).bytes;
    expect(digest(await decode(blobOf(bytes)))).toEqual(digest(decodeSync(bytes)));
  });
});

describe.skipIf(!corpus)('small Blobs (up to 16 MiB) are read whole, once', () => {
  test('perfview-net: Node reads it as 4 concurrent slices that cover it, a browser as one; the same result', async () => {
    const { slices, result } = await slicesOf(blobOf(perfview), undefined, 16 << 20);
    const step = Math.ceil(perfview.length / 4);
    expect([...slices].sort((a, b) => a[0] - b[0])).toEqual([0, 1, 2, 3].map((k) => [k * step, Math.min(perfview.length, (k + 1) * step)]));
    expect(result.summary.events).toBe(decodeSync(perfview).summary.events);
    const browser = await slicesOf(blobOf(perfview), undefined, 16 << 20, undefined, 'browser');
    expect(browser.slices).toEqual([[0, perfview.length]]);
    expect(digest(await decode(blobSource(blobOf(perfview)) as never))).toEqual(digest(decodeSync(perfview)));
  });

  test('a Blob that is shorter than it says ends where the first short slice ends', async () => {
    // a Blob whose third quarter comes back short, as when the file shrank while it was read
    const real = blobOf(perfview);
    const short = {
      size: real.size,
      slice: (a: number, b: number) => real.slice(a, a >= real.size / 2 && a < (3 * real.size) / 4 ? Math.min(b, a + 1000) : b),
    } as unknown as Blob;
    const src = blobSource(short, { profile: 'node' });
    const step = Math.ceil(perfview.length / 4);
    const got = await src.read(0, perfview.length);
    expect(got.length).toBe(2 * step + 1000);
    expect(got).toEqual(perfview.subarray(0, 2 * step + 1000));
  });
});

describe('blobSource reads', () => {
  const bytes = new Uint8Array(5 << 20);
  for (let i = 0; i < bytes.length; i++) bytes[i] = (i * 7 + (i >>> 16)) & 0xff;
  const same = (a: Uint8Array, b: Uint8Array) => Buffer.compare(a, b) === 0;
  const blob = blobOf(bytes);

  test('readInto in parts fills the target exactly; short at the end of the Blob', async () => {
    const src = blobSource(blob, { wholeMax: 0 });
    const t = new Uint8Array(3 << 20);
    expect(await src.readInto(12345, t)).toBe(t.length);
    expect(same(t, bytes.subarray(12345, 12345 + t.length))).toBe(true);
    const tail = new Uint8Array(4 << 20);
    expect(await src.readInto(bytes.length - (1 << 20), tail)).toBe(1 << 20);
    expect(same(tail.subarray(0, 1 << 20), bytes.subarray(bytes.length - (1 << 20)))).toBe(true);
  });

  test('readInto takes what framing read from the kept reads, and reads only the rest', async () => {
    const slices: [number, number][] = [];
    const src = blobSource(blob, { gapBytes: 0, wholeMax: 0, onSlice: (a, b) => slices.push([a, b]) });
    await src.read(1 << 20, 1 << 20); // kept: [1 MiB, 2 MiB)
    await src.read(100, 1000); // too small to keep
    slices.length = 0;
    const t = new Uint8Array(2 << 20);
    expect(await src.readInto(512 << 10, t)).toBe(t.length);
    expect(same(t, bytes.subarray(512 << 10, (512 << 10) + t.length))).toBe(true);
    expect(slices).toEqual([
      [512 << 10, 1 << 20],
      [2 << 20, (2 << 20) + (512 << 10)],
    ]);
  });

  test('readMany returns each position, clipped at the end', async () => {
    const src = blobSource(blob, { gapBytes: 4096, wholeMax: 0 });
    const positions = [0, 100, 5000, 1 << 20, bytes.length - 10];
    const got = await src.readMany!(positions, 72);
    expect(got.map((g) => g.length)).toEqual([72, 72, 72, 72, 10]);
    positions.forEach((p, i) => expect(same(got[i]!, bytes.subarray(p, p + 72))).toBe(true));
  });
});

describe('ReadCache', () => {
  const run = (start: number, length: number) => {
    const b = new Uint8Array(length);
    for (let i = 0; i < length; i++) b[i] = (start + i) & 0xff;
    return b;
  };
  const K = 256 << 10;
  // (Buffer.compare: toEqual on 256 KiB arrays is slow)

  test('keeps large reads while there is room, never more than its capacity', () => {
    const c = new ReadCache(3 * K);
    c.keep(0, run(0, K));
    c.keep(K, run(K, 1000)); // small: not kept
    c.keep(2 * K, run(2 * K, 2 * K));
    c.keep(4 * K, run(4 * K, K)); // no room
    expect(c.bytes).toBe(3 * K);
    const t = new Uint8Array(5 * K);
    expect(c.take(0, t)).toEqual([K, 2 * K, 4 * K, 5 * K]);
    expect(Buffer.compare(t.subarray(0, K), run(0, K))).toBe(0);
    expect(Buffer.compare(t.subarray(2 * K, 4 * K), run(2 * K, 2 * K))).toBe(0);
  });

  test('a read is dropped once each of its bytes was used', () => {
    const c = new ReadCache(4 * K);
    c.keep(K, run(K, 2 * K));
    c.keep(0, run(0, K)); // out of order: kept by start
    expect(c.take(K / 2, new Uint8Array(K))).toEqual([]);
    expect(c.bytes).toBe(3 * K);
    expect(c.take(0, new Uint8Array(K / 2))).toEqual([]);
    expect(c.bytes).toBe(2 * K); // [0, K) used up
    const t = new Uint8Array(2 * K);
    expect(c.take(3 * K / 2, t)).toEqual([3 * K, 7 * K / 2]);
    expect(Buffer.compare(t.subarray(0, 3 * K / 2), run(3 * K / 2, 3 * K / 2))).toBe(0);
    expect(c.bytes).toBe(0);
    c.keep(0, run(0, 4 * K)); // room again
    expect(c.bytes).toBe(4 * K);
  });
});
