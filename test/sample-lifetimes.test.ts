// The samples' processId, imageName and imageOffset (SampleLifetimes, src/derive/lifetimes.ts;
// docs/design/stacks.md): left null by the engines, filled after the decode by the one fill — over a whole
// decode's tables (TableCollector) and, chunk by chunk, after the first pass of a streamed one
// (src/derive/stack-pass.ts) — equal to an independent BigInt oracle over the threads and images rows (the
// threads rule; the image lifetime holding the address at the time, process 0's first for kernel space), to
// the simulation's ground truth and to analyzeSamples' groups; carried by dump and by a converted dataset;
// checked on the real corpus.
import { describe, expect, test } from 'vitest';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { analyzeSamples } from '../src/analysis/samples.js';
import { decodeFile, streamFile } from '../src/decode/files.js';
import { decodeSync, type DecodeResult } from '../src/node.js';
import { Table } from '../src/tables/table.js';
import { simulateSchedule, writeTrace } from '../src/writer/index.js';
import { corpusPath, corpusTestsEnabled } from './helpers/corpus.js';
import { DerivedRows } from './helpers/derived-rows.js';
import * as L from '../src/generated/layout.js';
import { ThreadProcesses } from '../src/derive/lifetimes.js';
import { duck } from './helpers/readers.js';
import { streamedFilled } from './helpers/stack-pass-stream.js';

const BIN = fileURLToPath(new URL('../bin/etw-decode.js', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'etw-sample-lifetimes-'));

type Cells = [processId: number | null, imageName: string | null, imageOffset: bigint | null];

/** The three columns of every row. */
function cells(t: Table<'samples'>): Cells[] {
  return t.toArray().map((x) => [x.processId, x.imageName, x.imageOffset]);
}

/** The first rows (up to 5) where two tables' columns differ, with both values: [] when they agree (a short diff on failure). */
function differences(a: Table<'samples'>, b: Table<'samples'>): string[] {
  const [x, y] = [cells(a), cells(b)];
  const out: string[] = [];
  if (x.length !== y.length) out.push(`${x.length} / ${y.length} rows`);
  for (let i = 0; i < Math.min(x.length, y.length) && out.length < 5; i++) if (String(x[i]) !== String(y[i])) out.push(`row ${i}: ${String(x[i])} / ${String(y[i])}`);
  return out;
}

/** The oracle of row `s`: its thread's process by the threads rule, its image by a plain search of the images rows. */
function oracle(r: Pick<DecodeResult, 'threads' | 'images'>, s: { timestamp: bigint; threadId: number; instructionPointer: bigint; pointerSize: number }): Cells {
  const t = s.timestamp;
  let pid: number | null = s.threadId === 0 ? 0 : null;
  if (s.threadId !== 0) {
    // the lifetime with the latest start at or before t (a null start is the earliest; a tie: the later row)
    let best: { startTime: bigint | null; processId: number } | null = null;
    for (const l of r.threads) {
      if (l.threadId !== s.threadId || (l.startTime !== null && l.startTime > t)) continue;
      if (best === null || best.startTime === null || (l.startTime !== null && l.startTime >= best.startTime)) best = l;
    }
    pid = best?.processId ?? null;
  }
  const ip = s.instructionPointer;
  const kernel = s.pointerSize === 4 ? ip >= 0x80000000n : ip >= 0x8000000000000000n;
  const images = r.images.toArray();
  const holding = (p: number) => {
    const hits = images
      .map((im, row) => ({ im, row }))
      .filter(({ im }) => im.processId === p && im.imageBase <= ip && ip < im.imageBase + im.imageSize && (im.loadTime === null || im.loadTime <= t) && (im.unloadTime === null || t < im.unloadTime));
    // the latest loaded (null: the earliest), then the highest base, then the later row
    const key = (h: (typeof hits)[number]) => [h.im.loadTime ?? -(2n ** 64n), h.im.imageBase, BigInt(h.row)];
    hits.sort((a, b) => {
      const [x, y] = [key(a), key(b)];
      for (let k = 0; k < 3; k++) if (x[k] !== y[k]) return x[k]! < y[k]! ? -1 : 1;
      return 0;
    });
    return hits.at(-1)?.im ?? null;
  };
  const im = (kernel ? holding(0) : null) ?? (pid === null || (kernel && pid === 0) ? null : holding(pid));
  if (!im) return [pid, null, null];
  return [pid, im.name ?? im.fileName ?? null, ip - im.imageBase];
}


/** The samples' Count by module!0xoffset (0x<address> outside any image) and by process, from the columns. */
function groups(t: Table<'samples'>): { address: Map<string, number>; process: Map<number | null, number> } {
  const address = new Map<string, number>();
  const process = new Map<number | null, number>();
  for (const x of t) {
    const a = x.imageOffset !== null ? `${x.imageName}!0x${x.imageOffset.toString(16)}` : `0x${x.instructionPointer.toString(16)}`;
    address.set(a, (address.get(a) ?? 0) + x.count);
    process.set(x.processId, (process.get(x.processId) ?? 0) + x.count);
  }
  return { address, process };
}

/** The columns say what analyzeSamples counts: the same groups by module!offset and by process. */
function sameAsAnalysis(r: DecodeResult): void {
  const a = analyzeSamples(r);
  const g = groups(r.samples);
  expect(g.address).toEqual(new Map(a.byAddress.map((x) => [x.address!, x.weight])));
  expect(g.process).toEqual(new Map(a.byProcess.map((x) => [x.processId, x.weight])));
}

function simulated(o: { images: boolean; stacks?: boolean; pointerSize?: 4 | 8; seed?: number }) {
  return simulateSchedule({ seed: o.seed ?? 13, cpus: 4, duration: 400_000, profileInterval: 2_000, images: o.images, stacks: o.stacks ?? true, pointerSize: o.pointerSize ?? 8, switchMode: 'mixed' });
}

test('a thread\'s process: the lifetime with the latest start at or before the time, whatever the row order; a tie: the later row; a null start the earliest', () => {
  const th = new DerivedRows('threads');
  for (const [tid, pid, start] of [[5, 2, 300n], [5, 1, 100n], [6, 3, 100n], [6, 4, 100n], [7, 8, null], [7, 9, 200n]] as const) {
    const i = th.add();
    th.set(i, L.TH_THREAD_ID, tid);
    th.set(i, L.TH_PROCESS_ID, pid);
    if (start !== null) th.set(i, L.TH_START_TIME, start);
  }
  const p = new ThreadProcesses(th.take());
  expect([50, 150, 350].map((t) => p.at(5, 0, t))).toEqual([-1, 1, 2]);
  expect(p.at(6, 0, 100)).toBe(4);
  expect([0, 199, 200].map((t) => p.at(7, 0, t))).toEqual([8, 8, 9]);
  expect([p.at(0, 0, 0), p.at(8, 0, 500)]).toEqual([0, -1]);
});

describe.each(['wasm', 'reference'] as const)('%s engine, a whole decode', (engine) => {
  test.each([8, 4] as const)('pointer size %i: every row as the oracle, its process the ground truth, the groups of analyzeSamples', (pointerSize) => {
    const sim = simulated({ images: true, pointerSize });
    const r = decodeSync(writeTrace(sim.description).bytes, { engine });
    expect(r.samples.length).toBe(sim.samples.length);
    expect(cells(r.samples)).toEqual(r.samples.toArray().map((s) => oracle(r, s)));
    const truth = new Map(sim.samples.map((s) => [`${s.timestamp}:${s.cpu}`, s.processId]));
    expect(r.samples.toArray().map((s) => s.processId)).toEqual(r.samples.toArray().map((s) => truth.get(`${s.timestamp}:${s.cpu}`)));
    const named = r.samples.toArray().filter((s) => s.imageName !== null).length;
    expect(named).toBeGreaterThan(r.samples.length / 4);
    sameAsAnalysis(r);
  });

  test('a trace without images: every imageName and imageOffset null, every processId the ground truth', () => {
    const sim = simulated({ images: false, stacks: false });
    const r = decodeSync(writeTrace(sim.description).bytes, { engine });
    expect(r.images.length).toBe(0);
    expect(r.samples.length).toBeGreaterThan(0);
    const truth = new Map(sim.samples.map((s) => [`${s.timestamp}:${s.cpu}`, s.processId]));
    for (const s of r.samples) {
      expect([s.imageName, s.imageOffset]).toEqual([null, null]);
      expect(s.processId).toBe(truth.get(`${s.timestamp}:${s.cpu}`));
    }
  });
});

describe('streamed: the first pass keeps the lifetimes, then each chunk is filled', () => {
  const sim = simulated({ images: true, seed: 17 });
  const bytes = writeTrace(sim.description).bytes;
  const file = join(dir, 'samples.etl');
  writeFileSync(file, bytes);
  const whole = decodeSync(bytes);

  test('the engines leave the columns null: a stream without the fill', async () => {
    const kept: Cells[] = [];
    await streamFile(file, { windowBytes: 64 << 10, onRows: (rows) => void kept.push(...cells(rows.samples)) });
    expect(kept.length).toBe(whole.samples.length);
    expect(kept.every((c) => c[0] === null && c[1] === null && c[2] === null)).toBe(true);
  });

  test.each([[64 << 10, 1], [256 << 10, 1], [64 << 10, 2]] as const)('windows of %i bytes, %i thread(s): the columns of the whole decode', async (windowBytes, threads) => {
    expect(differences((await streamedFilled(file, windowBytes, threads)).samples, whole.samples)).toEqual([]);
  });

  test('etw-decode convert: the Parquet dataset carries processId, imageName and imageOffset', async () => {
    const out = join(dir, 'ds');
    const r = spawnSync(process.execPath, [BIN, 'convert', file, '--to', 'parquet', '--tables', 'samples', '--out', out, '--no-progress'], { encoding: 'utf8' });
    expect(r.status, r.stderr).toBe(0);
    const c = await duck();
    const rows = (await c.runAndReadAll(`SELECT timestamp, cpu, fileOffset, processId, imageName, imageOffset FROM read_parquet('${out}/samples/*/*.parquet')`)).getRowObjects();
    const key = (x: Record<string, unknown>) => `${x.timestamp}:${x.cpu}:${x.fileOffset}:${x.processId}:${x.imageName}:${x.imageOffset}`;
    expect(rows.map(key).sort()).toEqual(whole.samples.toArray().map((x) => key(x as unknown as Record<string, unknown>)).sort());
    expect(rows.filter((x) => x.imageName !== null).length).toBeGreaterThan(0);
  });

  test('etw-decode dump --table samples: the columns of the whole decode', () => {
    const d = spawnSync(process.execPath, [BIN, 'dump', file, '--table', 'samples', '--format', 'jsonl'], { encoding: 'utf8', maxBuffer: 1 << 28 });
    expect(d.status, d.stderr).toBe(0);
    const got = d.stdout.trim().split('\n').map((l) => JSON.parse(l) as { processId: number | null; imageName: string | null; imageOffset: string | null });
    expect(got.map((x) => [x.processId, x.imageName, x.imageOffset === null ? null : BigInt(x.imageOffset)])).toEqual(cells(whole.samples));
  });
});

describe.skipIf(!corpusTestsEnabled())('perfview-net (real corpus)', () => {
  const NET = 'perfview-net.4.5.2.x64.etl';
  let decoded: Promise<DecodeResult> | null = null;
  const net = () => (decoded ??= decodeFile(corpusPath(NET)));

  test('all 79,528 samples get a process, 74,850 an image; as the oracle (every 40th row) and analyzeSamples', async () => {
    const r = await net();
    const all = cells(r.samples);
    expect(all.length).toBe(79_528);
    expect(all.filter((c) => c[0] !== null).length).toBe(79_528);
    expect(all.filter((c) => c[1] !== null).length).toBe(74_850);
    expect(all.filter((c) => c[2] !== null).length).toBe(74_850);
    const rows = r.samples.toArray();
    for (let i = 0; i < rows.length; i += 40) expect(all[i], `row ${i}`).toEqual(oracle(r, rows[i]!));
    sameAsAnalysis(r);
  });

  test('rows checked by hand against the threads and images rows', async () => {
    const r = await net();
    const row = (i: number) => {
      const x = r.samples.get(i);
      return [x.threadId, x.instructionPointer, x.processId, x.imageName, x.imageOffset];
    };
    // tid 544 of the System process (4), a kernel address: hal.dll of process 0, based at 0xfffff8002141d000
    expect(row(143)).toEqual([544, 0xfffff80021434313n, 4, 'hal.dll', 0xfffff80021434313n - 0xfffff8002141d000n]);
    // tid 960 of process 944, a user address: that process's ntdll.dll (0x7f9d02f0000, 1,826,816 bytes)
    expect(row(145)).toEqual([960, 0x7f9d02f1f50n, 944, 'ntdll.dll', 0x1f50n]);
    // tid 1068 of process 3988 (32-bit code of a 64-bit trace): its d3d10warp.dll at 0x73900000
    expect(row(975)).toEqual([1068, 0x7392327an, 3988, 'd3d10warp.dll', 0x7392327an - 0x73900000n]);
    // tid 3204 of process 980: an address in none of its images (JIT-compiled code)
    expect(row(1516)).toEqual([3204, 0x7f769131331n, 980, null, null]);
    const images = r.images.toArray();
    expect(images.some((im) => im.processId === 980 && im.imageBase <= 0x7f769131331n && 0x7f769131331n < im.imageBase + im.imageSize)).toBe(false);
    expect(r.threads.toArray().filter((t) => t.threadId === 960).map((t) => t.processId)).toEqual([944]);
  });

  test('streamed in 256 KiB windows: the columns of the whole decode', async () => {
    const r = await net();
    expect(differences((await streamedFilled(corpusPath(NET), 256 << 10)).samples, r.samples)).toEqual([]);
  });
});
