// decodeSync and decodeStream reuse one pooled WebAssembly instance (src/engine/engines.ts): a decode that was
// aborted half-way (a consumer that throws) must leave nothing behind for the next one.
import { expect, test } from 'vitest';
import { createEngine, idleEngines, releaseEngine } from '../src/engine/engines.js';
import { decodeStream, decodeSync } from '../src/node.js';
import { generateMixedTrace } from '../src/writer/index.js';

const a = generateMixedTrace({ seed: 31, targetBytes: 400_000, cpus: 3, bufferSize: 0x2000 }).bytes;
const b = generateMixedTrace({ seed: 32, targetBytes: 200_000, cpus: 2, bufferSize: 0x1000, compress: true }).bytes;

const bytesOf = (x: unknown): Uint8Array => {
  const v = x as ArrayBufferView;
  return new Uint8Array(v.buffer, v.byteOffset, v.byteLength);
};

function same(x: ReturnType<typeof decodeSync>, y: ReturnType<typeof decodeSync>): void {
  expect(x.summary).toEqual(y.summary);
  for (const t of ['cswitch', 'spinlock'] as const) {
    expect(x[t].length).toBe(y[t].length);
    x[t].columns.forEach((c, i) => expect(Buffer.compare(bytesOf(c), bytesOf(y[t].columns[i]!))).toBe(0));
  }
}

test('one instance serves many decodes', () => {
  const e = createEngine('wasm');
  releaseEngine(e);
  expect(createEngine('wasm')).toBe(e); // the pooled one
  releaseEngine(e);
});

test('repeated and interleaved decodes give the same results as the first', () => {
  const first = decodeSync(a);
  const firstB = decodeSync(b, { bias: 40 });
  for (let k = 0; k < 3; k++) {
    same(decodeSync(a), first);
    same(decodeSync(b, { bias: 40 }), firstB);
  }
  expect(decodeSync(b).summary.bias.source).toBe('build'); // the override of the last decode is gone
});

test('a decode aborted by its consumer leaves nothing behind', async () => {
  const expected = decodeSync(a);
  await expect(
    decodeStream(a, {
      windowBytes: 0x4000,
      rows: 'borrow', // the rows stay in the engine when the consumer throws
      onRows: () => {
        throw new Error('consumer gave up');
      },
    }),
  ).rejects.toThrow('consumer gave up');
  same(decodeSync(a), expected);
});

test('decoders in partitions in this thread take their instances from the pool and give them back', async () => {
  const expected = decodeSync(a);
  const drained: ReturnType<typeof createEngine>[] = [];
  while (idleEngines() > 0) drained.push(createEngine('wasm'));
  const r = await decodeStream(a, { threads: 3, parallel: { inThread: true, minBytes: 0, cuts: [4, 9] }, onRows: () => {} });
  expect(r.summary).toEqual({ ...expected.summary, engine: r.summary.engine });
  // the three partitions' decoders gave their instances back: the next decodes reuse them
  expect(idleEngines()).toBeGreaterThanOrEqual(2);
  for (const e of drained) releaseEngine(e);
  expect(idleEngines()).toBeLessThanOrEqual(4);
});
