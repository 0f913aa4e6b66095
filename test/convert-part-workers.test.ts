// Part files written by worker threads (src/convert/part-writers.ts) while the conversion decodes: the same
// files, byte for byte, as written in the converting thread, in every dataset format; a part that cannot be
// written fails the conversion with the reason. The workers run compiled JavaScript, so this test drives
// the built package (dist/, `npm run build`).
import { mkdtempSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { describe, expect, test } from 'vitest';
import { simulateSchedule, writeTrace } from '../src/writer/index.js';

const dist = (await import(new URL('../dist/convert/convert-file.js', import.meta.url).href)) as typeof import('../src/convert/convert-file.js');
const workers = (await import(new URL('../dist/convert/part-writers.js', import.meta.url).href)) as typeof import('../src/convert/part-writers.js');

function files(dir: string): Map<string, Buffer> {
  const out = new Map<string, Buffer>();
  const walk = (d: string) => {
    for (const f of readdirSync(d)) {
      const p = join(d, f);
      if (statSync(p).isDirectory()) walk(p);
      else out.set(relative(dir, p), readFileSync(p));
    }
  };
  walk(dir);
  return out;
}

describe('convert with part workers', () => {
  const dir = mkdtempSync(join(tmpdir(), 'etw-parts-'));
  const trace = join(dir, 'sched.etl');
  writeFileSync(trace, writeTrace(simulateSchedule({ seed: 23, cpus: 3, duration: 2_000_000, switchMode: 'mixed', threadVersion: 4, profileInterval: 20_000 }).description).bytes);

  test('the built package has the worker script', () => {
    expect(workers.partWorkersAvailable()).toBe(true);
  });

  for (const to of ['parquet', 'arrow', 'csv', 'jsonl'] as const) {
    test(`${to}: the same files as written in this thread (several parts per table)`, async () => {
      const a = await dist.convertFile(trace, { to, outDir: join(dir, `${to}-0`), partRows: 500, partWorkers: 0 });
      const b = await dist.convertFile(trace, { to, outDir: join(dir, `${to}-2`), partRows: 500, partWorkers: 2 });
      expect(b.rows).toEqual(a.rows);
      expect(b.files).toBe(a.files);
      expect(b.bytes).toBe(a.bytes);
      expect(a.files).toBeGreaterThan(12); // more parts than tables
      const fa = files(join(dir, `${to}-0`));
      const fb = files(join(dir, `${to}-2`));
      expect([...fb.keys()].sort()).toEqual([...fa.keys()].sort());
      for (const [k, v] of fa) expect(fb.get(k)!.equals(v), k).toBe(true);
    });
  }

  test('a part that cannot be written fails the conversion, saying why', async () => {
    const w = workers.workerParts(1, { format: 'csv', partRows: 10, names: false, info: null });
    try {
      const { size } = await w.write(join(dir, 'no-such-dir', 'part-0.csv'), 'cswitch', { length: 0, columns: [] }, false);
      await expect(size).rejects.toThrow(/no-such-dir/);
    } finally {
      await w.close();
    }
  });
});
