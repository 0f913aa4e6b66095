// The stackId column of cswitch, readythread and samples rows (fillStackIds, src/derive/stacks.ts; docs/design/stacks.md):
// filled by the one attachment (StackAttacher) after a whole decode and, chunk by chunk, after the first pass
// of a streamed one (src/convert/stack-pass.ts) — both equal to resolveStacks' stackIdOf and to the
// simulation's ground truth; null everywhere without stacks; carried by dump and by a converted dataset.
// The stacks and stackFrames tables: the distinct stacks, their frames named through the image lifetimes.
import { describe, expect, test } from 'vitest';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { resolveStacks, type StackedTableName } from '../src/derive/stacks.js';
import { stackPass } from '../src/convert/stack-pass.js';
import { decodeFile } from '../src/decode/files.js';
import { decodeSync, stacksOfTrace, type DecodeResult } from '../src/node.js';
import { Table } from '../src/tables/table.js';
import { simulateSchedule, writeTrace } from '../src/writer/index.js';
import { corpusPath, corpusTestsEnabled } from './helpers/corpus.js';
import { streamedFilled } from './helpers/stack-pass-stream.js';
import { duck } from './helpers/readers.js';

const STACKED = ['samples', 'cswitch', 'readythread'] as const satisfies readonly StackedTableName[];
const BIN = fileURLToPath(new URL('../bin/etw-decode.js', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'etw-stack-ids-'));

/** The stackId of every row of a table as resolveStacks gives it: -1 where null. */
function ids(t: Table<StackedTableName>): Int32Array {
  const out = new Int32Array(t.length);
  const col = t.column('stackId');
  const bit = t.specs.findIndex((s) => s.name === 'stackId');
  for (let i = 0; i < t.length; i++) out[i] = t.isNull(bit, i) ? -1 : col[i]!;
  return out;
}

function simulated(stacks: boolean, pointerSize: 4 | 8 = 8) {
  return simulateSchedule({ seed: 11, cpus: 4, duration: 400_000, profileInterval: 2_000, stacks, images: true, pointerSize, switchMode: 'mixed' });
}


describe.each(['wasm', 'reference'] as const)('%s engine', (engine) => {
  test.each([8, 4] as const)('a whole decode (pointer size %i): stackId = resolveStacks, the ground truth\'s frames', (pointerSize) => {
    const sim = simulated(true, pointerSize);
    const r = decodeSync(writeTrace(sim.description).bytes, { engine });
    const s = resolveStacks(r);
    for (const t of STACKED) expect(Array.from(ids(r[t])), t).toEqual(Array.from(s.stackIdOf[t]));
    // every stacked event of the simulation: its row's stackId names its frames in stacks / stackFrames
    const { stacks, stackFrames } = stacksOfTrace(r);
    const first = new Int32Array(stacks.length + 1);
    for (let i = 0; i < stacks.length; i++) first[i + 1] = first[i]! + stacks.column('frameCount')[i]!;
    expect(stackFrames.length).toBe(first[stacks.length]);
    const address = stackFrames.column('address');
    let n = 0;
    for (const truth of sim.stacks) {
      const t = r[truth.table] as Table<'samples'>;
      const row = t.column('timestamp').indexOf(truth.eventTimestamp);
      const id = t.get(row).stackId;
      expect(id, `${truth.table} at ${truth.eventTimestamp}`).not.toBeNull();
      expect(Array.from(address.subarray(first[id!]!, first[id! + 1]!))).toEqual([...truth.kernelFrames, ...truth.userFrames]);
      expect(stacks.get(id!)).toEqual({
        stackId: id,
        processId: truth.userFrames.length > 0 ? truth.processId : null,
        frameCount: truth.kernelFrames.length + truth.userFrames.length,
        kernelFrameCount: truth.kernelFrames.length,
        valid: expect.any(Number),
      });
      n++;
    }
    const attached = STACKED.reduce((k, t) => k + ids(r[t]).filter((v) => v >= 0).length, 0);
    expect(attached).toBe(n);
    expect(n).toBeGreaterThan(150);
  });

  test('a trace without stacks: every stackId null, no stacks', () => {
    const r = decodeSync(writeTrace(simulated(false).description).bytes, { engine });
    expect(r.stackEvents.length).toBe(0);
    for (const t of STACKED) {
      expect(r[t].length, t).toBeGreaterThan(0);
      expect(ids(r[t]).every((v) => v === -1), t).toBe(true);
    }
    const { stacks, stackFrames } = stacksOfTrace(r);
    expect([stacks.length, stackFrames.length]).toEqual([0, 0]);
  });
});

describe('streamed: a first pass over the stack tables, then each chunk filled', () => {
  const sim = simulated(true);
  const bytes = writeTrace(sim.description).bytes;
  const file = join(dir, 'stacks.etl');
  writeFileSync(file, bytes);
  const whole = decodeSync(bytes);

  test.each([[64 << 10, 1], [256 << 10, 1], [64 << 10, 2]] as const)('windows of %i bytes, %i thread(s): the stack ids of the whole decode', async (windowBytes, threads) => {
    const s = await streamedFilled(file, windowBytes, threads);
    for (const t of STACKED) {
      expect(s[t].length, t).toBe(whole[t].length);
      expect(Array.from(ids(s[t])), t).toEqual(Array.from(ids(whole[t])));
    }
  });

  test('the first pass keeps only the stack tables, and its stacks tables equal the whole decode\'s', async () => {
    const pass = await stackPass(file, {});
    const want = stacksOfTrace(whole);
    const got = pass.tables();
    for (const t of ['stacks', 'stackFrames'] as const) {
      expect(got[t].length, t).toBe(want[t].length);
      got[t].columns.forEach((c, i) => expect(c, `${t}.${got[t].specs[i]!.name}`).toEqual(want[t].columns[i]));
    }
  });

  test('a trace without stacks: the first pass finds none, the rows stay null', async () => {
    const plain = join(dir, 'plain.etl');
    writeFileSync(plain, writeTrace(simulated(false).description).bytes);
    const s = await streamedFilled(plain, 64 << 10);
    for (const t of STACKED) expect(ids(s[t]).every((v) => v === -1), t).toBe(true);
  });

  test('etw-decode convert: the Parquet dataset carries stackId, stacks and stackFrames', async () => {
    const out = join(dir, 'ds');
    const r = spawnSync(process.execPath, [BIN, 'convert', file, '--to', 'parquet', '--out', out, '--no-progress'], { encoding: 'utf8' });
    expect(r.status, r.stderr).toBe(0);
    const c = await duck();
    const q = async (sql: string) => (await c.runAndReadAll(sql)).getRowObjects();
    const glob = (t: string) => `read_parquet('${out}/${t}/*/*.parquet')`;
    for (const t of STACKED) {
      const got = (await q(`SELECT timestamp, cpu, fileOffset, stackId FROM ${glob(t)}`)).map((x) => `${x.timestamp}:${x.cpu}:${x.fileOffset}:${x.stackId}`).sort();
      const want = whole[t].toArray().map((x) => `${x.timestamp}:${x.cpu}:${x.fileOffset}:${x.stackId}`).sort();
      expect(got, t).toEqual(want);
    }
    const stacks = stacksOfTrace(whole);
    const [s] = await q(`SELECT count(*) AS n, sum(frameCount) AS f FROM ${glob('stacks')}`);
    expect([Number(s!.n), Number(s!.f)]).toEqual([stacks.stacks.length, stacks.stackFrames.length]);
    const frames = await q(`SELECT stackId, depth, address, imageName, imageOffset FROM ${glob('stackFrames')} ORDER BY stackId, depth`);
    expect(frames.map((f) => [Number(f.stackId), Number(f.depth), BigInt(f.address as bigint), f.imageName, f.imageOffset === null ? null : BigInt(f.imageOffset as bigint)])).toEqual(
      stacks.stackFrames.toArray().map((f) => [f.stackId, f.depth, f.address, f.imageName, f.imageOffset]),
    );
    expect(readdirSync(out)).toEqual(expect.arrayContaining(['stacks', 'stackFrames', 'samples']));
  });

  test('etw-decode dump --table samples / stacks: the whole decode\'s stack ids and stacks', () => {
    const dump = (table: string) => spawnSync(process.execPath, [BIN, 'dump', file, '--table', table, '--format', 'jsonl'], { encoding: 'utf8', maxBuffer: 1 << 28 });
    const samples = dump('samples').stdout.trim().split('\n').map((l) => JSON.parse(l) as { stackId: number | null });
    expect(samples.map((x) => x.stackId)).toEqual(whole.samples.toArray().map((x) => x.stackId));
    const stacks = dump('stacks').stdout.trim().split('\n');
    expect(stacks.length).toBe(stacksOfTrace(whole).stacks.length);
  });
});

describe.skipIf(!corpusTestsEnabled())('perfview-net (real corpus)', () => {
  const NET = 'perfview-net.4.5.2.x64.etl';
  let decoded: Promise<DecodeResult> | null = null;
  const net = () => (decoded ??= decodeFile(corpusPath(NET)));
  test('a whole decode: 6,318 samples get a stackId, those resolveStacks attaches', async () => {
    const whole = await net();
    const s = resolveStacks(whole);
    for (const t of STACKED) expect(Array.from(ids(whole[t])), t).toEqual(Array.from(s.stackIdOf[t]));
    expect(ids(whole.samples).filter((v) => v >= 0).length).toBe(6318);
  });
  test('streamed (first pass, then chunks): the same stack ids', async () => {
    const whole = await net();
    const s = await streamedFilled(corpusPath(NET), 256 << 10);
    for (const t of STACKED) expect(Array.from(ids(s[t])), t).toEqual(Array.from(ids(whole[t])));
  });
  test('stackFrames name their addresses through the image lifetimes (module!offset)', async () => {
    const whole = await net();
    const { stackFrames } = stacksOfTrace(whole);
    expect(stackFrames.length).toBeGreaterThan(0);
    const named = stackFrames.toArray().filter((f) => f.imageName !== null);
    expect(named.length).toBeGreaterThan(0);
    for (const f of named.slice(0, 500)) {
      const image = whole.images.toArray().find((im) => (im.name ?? im.fileName) === f.imageName && f.address >= im.imageBase && f.address < im.imageBase + im.imageSize);
      expect(image, `${f.imageName}+${f.imageOffset}`).toBeDefined();
      expect(f.imageOffset).toBe(f.address - image!.imageBase);
    }
    for (const f of stackFrames.toArray()) if (f.imageName === null) expect(f.imageOffset).toBeNull();
  });

});
