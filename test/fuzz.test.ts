// The fuzz harness in CI: a short fixed-seed run of `npm run fuzz` (fuzz/), and every minimised failure it
// ever wrote (test/fixtures/fuzz/*.etl) decoded again by both engines, in memory and streamed, with the
// invariants checked.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect, test } from 'vitest';
import { checkInput } from '../fuzz/check.js';
import { allSeeds, fuzz, inputRng } from '../fuzz/fuzz.js';
import { mutate } from '../fuzz/mutate.js';
import { analyse, stackSeeds, writerSeeds } from '../fuzz/seeds.js';
import { decodeSync } from '../src/node.js';
import { corpusTestsEnabled, readCorpus } from './helpers/corpus.js';

const here = dirname(fileURLToPath(import.meta.url));
const FIXTURES = join(here, 'fixtures/fuzz');

test('regression fixtures from the fuzzer: engines agree, streamed = in memory, invariants hold', async () => {
  const files = existsSync(FIXTURES) ? readdirSync(FIXTURES).filter((f) => f.endsWith('.etl')) : [];
  for (const f of files) {
    const bytes = new Uint8Array(readFileSync(join(FIXTURES, f)));
    for (const windowBytes of [0x1000, 0x3000]) {
      const failure = await checkInput(bytes, { windowBytes, streamReference: true });
      expect(failure, `${f}: ${failure?.message}`).toBeNull();
    }
  }
});

// found by `npm run fuzz -- --seed 28 --from 505872 --count 1`: a claim of the bytes up to the end of the
// input, below the usual size, hid the last buffer (the seed's buffer at 0x1C09, intact at 0x1CD1)
test.runIf(corpusTestsEnabled())('invariant-fcf5ba79e1: the seed buffers intact in the fixture are all framed, with the claim counted', async () => {
  const seed = analyse('corpus/perfview-SelfDescribingSingleEvent.etl', readCorpus('perfview-SelfDescribingSingleEvent.etl'));
  const bytes = new Uint8Array(readFileSync(join(FIXTURES, 'invariant-fcf5ba79e1.etl')));
  expect(await checkInput(bytes, { windowBytes: 0x3000, streamReference: true }, seed)).toBeNull();
  const r = decodeSync(bytes);
  expect([...r.buffers.fileOffset]).toContain(0x1cd1);
  expect(r.summary.issues).toContainEqual(expect.objectContaining({ counter: 'buffersSizeCorrected', fileOffset: 0x1c09, detail: 426 }));
});

// found by `npm run fuzz -- --seed 28 --from 514107 --count 1`: 51 bytes missing inside the buffer at 0x18000
// led framing 51 bytes into the next one, where a shifted copy of its header (BufferFlag 0x0020 after a zero
// byte: BufferSize 0x2000, garbage flags) was taken for a buffer; the real ones at 0x19FCD and 0x1BFCD vanished
test.runIf(corpusTestsEnabled())('invariant-d06a39feab: input 514107 of seed 28 and its fixture — the buffers behind a shifted copy of a header are framed at their offsets', async () => {
  const stats = await fuzz({ seed: 28, from: 514107, count: 1, root: join(here, '..'), minimize: false });
  expect(stats.distinct.map((d) => d.failure.message)).toEqual([]);
  const input = mutate(allSeeds(join(here, '..')), inputRng(28, 514107));
  expect(input.from.name).toBe('corpus/krabsetw-powershell.etl');
  const r = decodeSync(input.bytes);
  expect([...r.buffers.fileOffset].slice(-4)).toEqual([0x18000, 0x19fcd, 0x1bfcd, 0x1dfcd]);
  expect(r.summary.issues).toContainEqual(expect.objectContaining({ counter: 'buffersSizeCorrected', fileOffset: 0x18000, detail: 0x2000 }));
  const fixture = new Uint8Array(readFileSync(join(FIXTURES, 'invariant-d06a39feab.etl')));
  expect(await checkInput(fixture, { windowBytes: 0x1000, streamReference: true, parallelCuts: [1, 3] }, input.from)).toBeNull();
});

// found by `npm run fuzz -- --seed 31 --from 10857 --count 1`: 0x6F bytes inserted in a compressed buffer left
// the position its claim leads to in its stream, where a header that is not plausible (BufferFlag 0x1010)
// claimed the bytes up to the end of the input, hiding the last buffer (the seed's at 0x1C09, intact at 0x1C78)
test.runIf(corpusTestsEnabled())('invariant-8aef995e2c: input 10857 of seed 31 — the buffer inside the claim of a header that is not plausible is framed', async () => {
  const stats = await fuzz({ seed: 31, from: 10857, count: 1, root: join(here, '..'), minimize: false });
  expect(stats.distinct.map((d) => d.failure.message)).toEqual([]);
  const input = mutate(allSeeds(join(here, '..')), inputRng(31, 10857));
  expect(input.from.name).toBe('corpus/perfview-SelfDescribingSingleEvent.etl');
  const r = decodeSync(input.bytes);
  expect([...r.buffers.fileOffset]).toEqual([0, 0x400, 0x1c09, 0x1c78]);
  expect(r.summary.issues).toContainEqual(expect.objectContaining({ counter: 'buffersSizeCorrected', fileOffset: 0x1c09, detail: 337 }));
  const fixture = new Uint8Array(readFileSync(join(FIXTURES, 'invariant-8aef995e2c.etl')));
  expect(await checkInput(fixture, { windowBytes: 0x1000, streamReference: true, parallelCuts: [1, 2] }, input.from)).toBeNull();
});

// found by `npm run fuzz -- --seed 40 --from 566235 --count 1`: the buffer at 0x2000 claims three buffers
// (0x6000) whose two behind it are damaged, so nothing in its claim chained and the claim stood; it raised
// the usual size to 0x6000, and the same claim at 0x8000 was then not checked: the intact buffers at 0xA000
// and 0xC000 vanished as its padding, with no loss reported. Since then the damaged buffer one usual size
// on is taken too (the next test), so the rule is pinned here on headers damaged beyond plausibility.
test('a claim that stands does not raise the usual size past the logger\'s BufferSize', async () => {
  const seed = writerSeeds().find((s) => s.name === 'writer/mixed-8k-x86')!;
  const bytes = seed.bytes.slice();
  const v = new DataView(bytes.buffer);
  v.setUint32(0x2000, 0x6000, true); // claims its two neighbours
  v.setUint32(0x4000, 0x10, true); // which are damaged beyond a plausible header
  v.setUint32(0x6000, 0x10, true);
  v.setUint32(0x8000, 0x6000, true); // the same claim, over intact buffers
  expect(await checkInput(bytes, { windowBytes: 0x1000, streamReference: true }, seed)).toBeNull();
  const r = decodeSync(bytes);
  expect([...r.buffers.fileOffset]).toEqual([0, 0x2000, 0x8000, 0xa000, 0xc000, 0xe000]);
  expect([...r.buffers.size]).toEqual([0x2000, 0x6000, 0x2000, 0x2000, 0x2000, 0x2000]);
  expect(r.summary.issues).toContainEqual(expect.objectContaining({ counter: 'buffersSizeCorrected', fileOffset: 0x8000, detail: 0x6000 }));
});

// (the replays of input i of seed S need ../shared: inputs are made from the writer's and the corpus's seeds)
test.runIf(corpusTestsEnabled())('input 566235 of seed 40: a claim over damaged buffers ends one usual size on', async () => {
  const stats = await fuzz({ seed: 40, from: 566235, count: 1, root: join(here, '..'), minimize: false });
  expect(stats.distinct.map((d) => d.failure.message)).toEqual([]);
  const input = mutate(allSeeds(join(here, '..')), inputRng(40, 566235));
  expect(input.from.name).toBe('writer/mixed-8k-x86');
  const r = decodeSync(input.bytes);
  expect([...r.buffers.fileOffset]).toEqual([0, 0x2000, 0x4000, 0x6000, 0x8000, 0xa000, 0xc000, 0xe000]);
  expect(r.summary.issues).toContainEqual(expect.objectContaining({ counter: 'buffersSizeCorrected', fileOffset: 0x2000, detail: 0x6000 }));
  expect(r.summary.issues).toContainEqual(expect.objectContaining({ counter: 'buffersSizeCorrected', fileOffset: 0x8000, detail: 0x6000 }));
});

// found by `npm run fuzz -- --seed 41 --from 26203 --count 1`: the full buffer at 0x7000 claims 0x801000; the
// buffer one usual size on (0x8000) is intact, but the one after it has its first event zeroed, so 0x8000 did
// not chain and the claim was framed up to 0xA000, the next header that chains: 0x8000 vanished unreported
test.runIf(corpusTestsEnabled())('input 26203 of seed 41: a plausible header one usual size on, at the data end, ends the claim', async () => {
  const stats = await fuzz({ seed: 41, from: 26203, count: 1, root: join(here, '..'), minimize: false });
  expect(stats.distinct.map((d) => d.failure.message)).toEqual([]);
  const input = mutate(allSeeds(join(here, '..')), inputRng(41, 26203));
  expect(input.from.name).toBe('writer/spinlock');
  const r = decodeSync(input.bytes);
  expect([...r.buffers.fileOffset].slice(6, 10)).toEqual([0x6000, 0x7000, 0x8000, 0x9000]);
  expect(r.summary.issues).toContainEqual(expect.objectContaining({ counter: 'buffersSizeCorrected', fileOffset: 0x7000, detail: 0x801000 }));
});

// found by `npm run fuzz -- --seed 42 --from 6817 --count 1`: the header buffer claims 0x10000 and the
// logfile header's BufferSize (the usual size) is damaged too: the plausible header one (wrong) usual size on
// was taken over the real next buffer at 0x2000, whose header chains
test.runIf(corpusTestsEnabled())('input 6817 of seed 42: a header that chains before the one a usual size on ends the claim', async () => {
  const stats = await fuzz({ seed: 42, from: 6817, count: 1, root: join(here, '..'), minimize: false });
  expect(stats.distinct.map((d) => d.failure.message)).toEqual([]);
  const input = mutate(allSeeds(join(here, '..')), inputRng(42, 6817));
  expect(input.from.name).toBe('writer/noise');
  const r = decodeSync(input.bytes);
  expect([...r.buffers.fileOffset].slice(0, 2)).toEqual([0, 0x2000]);
  expect(r.summary.issues).toContainEqual(expect.objectContaining({ counter: 'buffersSizeCorrected', fileOffset: 0, detail: 0x10000 }));
});

// found by `npm run fuzz -- --seed 43 --from 267886 --count 1`: 62 bytes inserted before the buffer at
// 0x2000 left bytes of no buffer (BufferFlag 0xFFFF) where framing expected a header; their claim was scanned
// from 0x48 bytes on, past the real header 0x3E bytes later, which vanished in the claim
test.runIf(corpusTestsEnabled())('input 267886 of seed 43: the claim of bytes that are no header is scanned from their second byte', async () => {
  const stats = await fuzz({ seed: 43, from: 267886, count: 1, root: join(here, '..'), minimize: false });
  expect(stats.distinct.map((d) => d.failure.message)).toEqual([]);
  const input = mutate(allSeeds(join(here, '..')), inputRng(43, 267886));
  expect(input.from.name).toBe('corpus/airbus-lxcore_kernel.etl');
  const r = decodeSync(input.bytes);
  expect([...r.buffers.fileOffset].slice(0, 3)).toEqual([0, 0x2000, 0x203e]);
});

test('fuzz smoke: 1000 inputs of seed 1, no failure (npm run fuzz runs more)', { timeout: 240_000 }, async () => {
  const stats = await fuzz({ seed: 1, count: 1000, root: join(here, '..') });
  expect(stats.inputs).toBe(1000);
  expect(stats.distinct.map((d) => `${d.signature} (input ${d.index}: ${d.failure.message.slice(0, 500)})`)).toEqual([]);
  // every mutation ran
  expect(Object.keys(stats.byOp).length).toBeGreaterThanOrEqual(11);
});

test('fuzz smoke with stacks: 300 inputs of seed 2 from the stack seeds, no failure', { timeout: 240_000 }, async () => {
  const stats = await fuzz({ seed: 2, count: 300, root: join(here, '..'), seeds: stackSeeds(), minimize: false });
  expect(stats.inputs).toBe(300);
  expect(stats.distinct.map((d) => `${d.signature} (input ${d.index}: ${d.failure.message.slice(0, 500)})`)).toEqual([]);
});
