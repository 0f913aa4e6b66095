// CPU Usage (Sampled) (src/analysis/samples.ts, `cpu --sampled`): every SampledProfile row counted once by
// process, thread and module, against an independent BigInt oracle — a sample's process from its thread's
// lifetime holding its time (else the thread's latest), its module from the images of its process (process
// 0's for a kernel-space address) — on simulated traces with samples and images, and on the real corpus.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, test } from 'vitest';
import { analyzeSamples } from '../src/analysis/samples.js';
import { decodeSync, resolveSelection, type DecodeResult } from '../src/node.js';
import { simulateSchedule, writeTrace } from '../src/writer/index.js';
import { corpusTestsEnabled, readCorpus } from './helpers/corpus.js';

const BIN = fileURLToPath(new URL('../bin/etw-decode.js', import.meta.url));

function oracle(r: DecodeResult, keep: (s: { timestamp: bigint; threadId: number }) => boolean = () => true) {
  const lifetimes = r.threads.toArray();
  const images = r.imageEvents.toArray();
  const proc = new Map<number | null, number>();
  const mod = new Map<string | null, number>();
  for (const s of r.samples.toArray()) {
    if (!keep(s)) continue;
    const own = lifetimes.filter((l) => l.threadId === s.threadId);
    const holding = own.filter((l) => (l.startTime === null || l.startTime <= s.timestamp) && (l.endTime === null || s.timestamp < l.endTime));
    const pid = s.threadId === 0 ? 0 : (holding.at(-1) ?? own.at(-1))?.processId ?? null;
    proc.set(pid, (proc.get(pid) ?? 0) + s.count);
    const kernel = s.pointerSize === 4 ? s.instructionPointer >= 0x80000000n : s.instructionPointer >= 0x8000000000000000n;
    const owner = kernel ? 0 : pid;
    // the last image seen at each base of the process
    const bases = new Map<bigint, { end: bigint; name: string }>();
    for (const im of images) if (im.processId === owner) bases.set(im.imageBase, { end: im.imageBase + im.imageSize, name: (im.fileName ?? '').split('\\').at(-1) || '(no name)' });
    let name: string | null = null;
    let best = -1n;
    for (const [base, { end, name: n }] of bases) if (base <= s.instructionPointer && base > best) [best, name] = [base, s.instructionPointer < end ? n : null];
    mod.set(name, (mod.get(name) ?? 0) + s.count);
  }
  return { proc, mod };
}

function check(r: DecodeResult, a: ReturnType<typeof analyzeSamples>, keep?: (s: { timestamp: bigint; threadId: number }) => boolean) {
  const want = oracle(r, keep);
  expect(new Map(a.byProcess.map((g) => [g.processId, g.weight]))).toEqual(want.proc);
  expect(new Map(a.byModule.map((g) => [g.module, g.weight]))).toEqual(want.mod);
  expect(a.byThread.reduce((n, g) => n + g.weight, 0)).toBe(a.weight);
}

describe('simulated traces with samples and images', () => {
  for (const seed of [1, 2, 3]) {
    test(`seed ${seed}: by process and module as the oracle; a range`, () => {
      const r = decodeSync(writeTrace(simulateSchedule({ seed, cpus: 2 + seed, duration: 400_000, switchMode: 'mixed', profileInterval: 1_000, images: true }).description).bytes);
      expect(r.samples.length).toBeGreaterThan(100);
      expect(r.imageEvents.length).toBeGreaterThan(0);
      const a = analyzeSamples(r);
      expect(a.samples).toBe(r.samples.length);
      check(r, a);
      const ts = r.samples.column('timestamp');
      const from = ts[Math.floor(ts.length / 3)]!;
      const to = ts[Math.floor((2 * ts.length) / 3)]!;
      const ranged = analyzeSamples(r, { selection: resolveSelection({ from: { ticks: from }, to: { ticks: to } }, r.clock, r) });
      check(r, ranged, (s) => s.timestamp >= from && s.timestamp < to);
      expect(ranged.samples).toBeLessThan(a.samples);
    });
  }
});

test.runIf(corpusTestsEnabled())('perfview-net.4.5.2.x64.etl: 79,528 samples by process and module as the oracle; cpu --sampled --json says the same', () => {
  const bytes = readCorpus('perfview-net.4.5.2.x64.etl');
  const r = decodeSync(bytes);
  const a = analyzeSamples(r);
  expect(a.samples).toBe(79_528);
  check(r, a);
  expect(a.unresolvedProcess).toBe(0);
  // the idle loop in the kernel, then the test program (its JIT-compiled code is in no image)
  expect(a.byProcess.slice(0, 2).map((g) => [g.processId, g.imageFileName])).toEqual([
    [0, 'Idle'],
    [3676, 'Test.x64.exe'],
  ]);
  expect(a.byModule[0]!.module).toBe('ntoskrnl.exe');
  const dir = mkdtempSync(join(tmpdir(), 'etw-sampled-'));
  const file = join(dir, 'net.etl');
  writeFileSync(file, bytes);
  const p = spawnSync(process.execPath, [BIN, 'cpu', file, '--sampled', '--by', 'module', '--top', '0', '--json'], { encoding: 'utf8' });
  expect(p.status, p.stderr).toBe(0);
  const json = JSON.parse(p.stdout);
  expect(json.rows.map((g: { module: string | null; weight: number }) => [g.module, g.weight])).toEqual(a.byModule.map((g) => [g.module, g.weight]));
  expect(spawnSync(process.execPath, [BIN, 'cpu', file, '--by', 'module'], { encoding: 'utf8' }).status).toBe(2);
});
