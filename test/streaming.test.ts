// The streaming paths: file decode with read-ahead across many windows = in-memory decode; borrowed and
// discarded rows; read errors surface as the error, with no read left running.
import { describe, expect, test, beforeAll } from 'vitest';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { decodeStream, decodeSync, streamFile, type DecodeResult } from '../src/node.js';
import { concatChunks, type ColumnChunk } from '../src/tables/schema.js';
import type { AsyncSource } from '../src/decode/runners.js';
import { generateMixedTrace } from '../src/writer/index.js';

const ENGINES = ['wasm', 'reference'] as const;
let bytes: Uint8Array;
let path: string;
let expected: Record<(typeof ENGINES)[number], DecodeResult>;

beforeAll(() => {
  bytes = generateMixedTrace({ seed: 21, targetBytes: 3 << 20, cpus: 4, bufferSize: 0x10000 }).bytes; // uncompressed: read-ahead is on
  path = join(mkdtempSync(join(tmpdir(), 'etw-stream-')), 'mixed.etl');
  writeFileSync(path, bytes);
  expected = { wasm: decodeSync(bytes, { engine: 'wasm' }), reference: decodeSync(bytes, { engine: 'reference' }) };
});

function collect() {
  const cs: ColumnChunk[] = [];
  const sl: ColumnChunk[] = [];
  return {
    cs,
    sl,
    tables: () => ({ cswitch: concatChunks('cswitch', cs), spinlock: concatChunks('spinlock', sl) }),
  };
}

describe.each(ENGINES)('%s engine', (engine) => {
  test.each([0x10000, 0x30000, 1 << 20])('streamFile with %d-byte windows (read-ahead) = decodeSync', async (windowBytes) => {
    const c = collect();
    const res = await streamFile(path, {
      engine,
      windowBytes,
      onRows: ({ cswitch, spinlock }) => {
        c.cs.push({ length: cswitch.length, columns: cswitch.columns });
        c.sl.push({ length: spinlock.length, columns: spinlock.columns });
      },
    });
    const exp = expected[engine];
    expect(res.summary).toEqual(exp.summary);
    const t = c.tables();
    expect(t.cswitch.length).toBe(exp.cswitch.length);
    t.cswitch.columns.forEach((col, i) => expect(col).toEqual(exp.cswitch.columns[i]));
    t.spinlock.columns.forEach((col, i) => expect(col).toEqual(exp.spinlock.columns[i]));
  });

  test("rows: 'borrow' hands views that hold the right rows while onRows runs", async () => {
    const c = collect();
    let views = 0;
    await decodeStream(bytes, {
      engine,
      rows: 'borrow',
      onRows: ({ cswitch, spinlock }) => {
        // a view into the engine's output, not a chunk of its own
        const ts = cswitch.columns[0] as BigInt64Array;
        if (cswitch.length && ts.buffer.byteLength > ts.byteLength) views++;
        c.cs.push({ length: cswitch.length, columns: cswitch.columns.map((x) => x.slice()) });
        c.sl.push({ length: spinlock.length, columns: spinlock.columns.map((x) => x.slice()) });
      },
    });
    const t = c.tables();
    expect(views).toBeGreaterThan(0);
    t.cswitch.columns.forEach((col, i) => expect(col).toEqual(expected[engine].cswitch.columns[i]));
    t.spinlock.columns.forEach((col, i) => expect(col).toEqual(expected[engine].spinlock.columns[i]));
  });

  test('without onRows: a summary-only decode, same summary', async () => {
    const res = await decodeStream(bytes, { engine });
    expect(res.summary).toEqual(expected[engine].summary);
  });
});

test('a read error during read-ahead rejects the decode with that error and leaves no read running', async () => {
  let loads = 0;
  let inFlight = 0;
  const source: AsyncSource = {
    size: bytes.length,
    read: async (position, length) => bytes.subarray(position, position + length),
    readInto: async (position, target) => {
      inFlight++;
      try {
        await new Promise((r) => setTimeout(r, 1));
        if (++loads === 3) throw new Error('disk on fire');
        const src = bytes.subarray(position, position + target.length);
        target.set(src);
        return src.length;
      } finally {
        inFlight--;
      }
    },
  };
  await expect(decodeStream(source, { windowBytes: 0x20000, onRows: () => {} })).rejects.toThrow('disk on fire');
  expect(inFlight).toBe(0);
});

describe('the input window of bytes in memory', () => {
  test('a decode of bytes reserves BYTES_WINDOW-sized windows, not the 2 MiB of files, and decodes the same', async () => {
    const { createEngine, releaseEngine } = await import('../src/engine/engines.js');
    const { BYTES_WINDOW } = await import('../src/decode/runners.js');
    const bytes = generateMixedTrace({ seed: 77, cpus: 4, targetBytes: 6 << 20 }).bytes;
    /** the input window a decode of `bytes` reserved in a new instance */
    const reserved = (windowBytes?: number): [number, DecodeResult] => {
      createEngine('wasm'); // take the idle instance away, so that the decode lays out a new one
      const result = decodeSync(bytes, { windowBytes });
      const engine = createEngine('wasm'); // the instance that decode used, back from the pool
      const length = engine.inputView().length;
      releaseEngine(engine);
      return [length, result];
    };
    const [small, bySmall] = reserved();
    const [large, byLarge] = reserved(8 << 20);
    expect(BYTES_WINDOW).toBe(512 << 10);
    // an 8 MiB window holds the whole input (6 MiB); 512 KiB ones fit the instance's first layout
    expect(large).toBeGreaterThanOrEqual(bytes.length);
    expect(small).toBeLessThanOrEqual(4 << 20);
    expect(bySmall.summary).toEqual(byLarge.summary);
    expect(bySmall.cswitch.columns).toEqual(byLarge.cswitch.columns);
    expect(bySmall.spinlock.columns).toEqual(byLarge.spinlock.columns);
  });

  test('a decode of a file reserves WINDOW_BYTES-sized windows and decodes the same', async () => {
    const { createEngine, releaseEngine } = await import('../src/engine/engines.js');
    const { WINDOW_BYTES } = await import('../src/decode/decode-steps.js');
    expect(WINDOW_BYTES).toBe(2 << 20);
    const big = generateMixedTrace({ seed: 78, cpus: 4, targetBytes: 12 << 20 }).bytes;
    const file = join(mkdtempSync(join(tmpdir(), 'etw-window-')), 'big.etl');
    writeFileSync(file, big);
    createEngine('wasm'); // take the idle instance away, so that the decode lays out a new one
    const res = await streamFile(file, { threads: 1 });
    const engine = createEngine('wasm'); // the instance that decode used, back from the pool
    const reserved = engine.inputView().length;
    releaseEngine(engine);
    // two windows (the one walked, the one read ahead) and a buffer read on its own: not 2 x 8 MiB
    expect(reserved).toBeGreaterThanOrEqual(2 * WINDOW_BYTES);
    expect(reserved).toBeLessThan(2 * WINDOW_BYTES + (1 << 20));
    expect(res.summary).toEqual(decodeSync(big).summary);
  });
});

describe('chunks of rows', () => {
  test('rows reach the consumer about DRAIN_ROWS per table at a time, and the same rows as one decode', async () => {
    const { DRAIN_ROWS } = await import('../src/decode/decode-steps.js');
    expect(DRAIN_ROWS).toBe(16384);
    const big = generateMixedTrace({ seed: 5, targetBytes: 8 << 20, cpus: 4 }).bytes;
    const whole = decodeSync(big);
    const lengths: number[] = [];
    const c = collect();
    await decodeStream(big, {
      onRows: ({ cswitch, spinlock }) => {
        lengths.push(cswitch.length);
        c.cs.push({ length: cswitch.length, columns: cswitch.columns });
        c.sl.push({ length: spinlock.length, columns: spinlock.columns });
      },
    });
    expect(lengths.reduce((a, b) => a + b, 0)).toBe(whole.cswitch.length);
    expect(whole.cswitch.length).toBeGreaterThan(3 * DRAIN_ROWS);
    // a chunk ends at the first buffer boundary past DRAIN_ROWS pending (one buffer adds far fewer rows)
    expect(Math.max(...lengths)).toBeLessThan(1.5 * DRAIN_ROWS);
    // (a chunk also ends when another table reaches DRAIN_ROWS)
    expect(lengths.length).toBeGreaterThanOrEqual(3);
    expect(c.tables().cswitch.columns).toEqual(whole.cswitch.columns);
    expect(c.tables().spinlock.columns).toEqual(whole.spinlock.columns);
  });
});
