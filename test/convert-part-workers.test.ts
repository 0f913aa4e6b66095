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

  test('owned columns are handed over and given back: reused for the next part, neither file changes', async () => {
    const { TABLE_COLUMNS, allocColumn } = await import('../src/tables/schema.js');
    const w = workers.workerParts(1, { format: 'csv', partRows: 4, names: false, info: null });
    const specs = TABLE_COLUMNS.threadEvents;
    const fill = (cols: ReturnType<typeof allocColumn>[], k: number) =>
      specs.forEach((s, c) => {
        const col = cols[c]!;
        for (let i = 0; i < 4; i++) {
          if (Array.isArray(col)) col[i] = `name${k}-${i}`;
          else if (col instanceof BigInt64Array || col instanceof BigUint64Array) col[i] = BigInt(k * 100 + i) << 33n;
          else if (s.name === 'valid') (col as Uint32Array)[i] = 0xffffffff;
          else (col as Uint8Array)[i] = k * 10 + i;
        }
      });
    try {
      const first = specs.map((s) => allocColumn(s.type, 6)); // 6 cells, 4 rows: whole buffers go, views of 4 rows are written
      fill(first, 1);
      let back: readonly unknown[] | null = null;
      const a = await w.write(join(dir, 'given-0.csv'), 'threadEvents', { length: 4, columns: first.map((c) => (Array.isArray(c) ? c.slice(0, 4) : c.subarray(0, 4))) }, true, (cols) => (back = cols));
      expect(first[0]!.length).toBe(0); // handed over: detached here
      await a.size;
      expect(back).not.toBeNull();
      const again = back! as ReturnType<typeof allocColumn>[];
      expect(again.map((c) => c.length)).toEqual(specs.map(() => 4));
      expect((again[specs.findIndex((s) => s.name === 'timestamp')] as BigInt64Array).buffer.byteLength).toBe(6 * 8); // the same buffers
      fill(again, 2);
      const b = await w.write(join(dir, 'given-1.csv'), 'threadEvents', { length: 4, columns: again }, true);
      await b.size;
      const lines = (f: string) => readFileSync(join(dir, f), 'utf8').split('\n').filter(Boolean);
      expect(lines('given-0.csv').slice(1).map((l) => l.match(/name\d-\d/)![0])).toEqual(['name1-0', 'name1-1', 'name1-2', 'name1-3']);
      expect(lines('given-1.csv').slice(1).map((l) => l.match(/name\d-\d/)![0])).toEqual(['name2-0', 'name2-1', 'name2-2', 'name2-3']);
      expect(lines('given-0.csv')[1]).toContain(String(100n << 33n));
      expect(lines('given-1.csv')[1]).toContain(String(200n << 33n));
    } finally {
      await w.close();
    }
  });

  test('parts wait for a free worker; a part the caller keeps is copied when handed over (changing it after does not change the file)', async () => {
    const { TABLE_COLUMNS, allocColumn } = await import('../src/tables/schema.js');
    const w = workers.workerParts(1, { format: 'csv', partRows: 1000, names: false, info: null });
    const specs = TABLE_COLUMNS.readythread;
    const tid = specs.findIndex((s) => s.name === 'threadId');
    const make = (v: number) => specs.map((s) => (s.name === 'threadId' ? new Uint32Array(1000).fill(v) : allocColumn(s.type, 1000)));
    try {
      const sizes: Promise<number>[] = [];
      const kept = [make(7), make(8), make(9)];
      for (const [k, cols] of kept.entries()) sizes.push((await w.write(join(dir, `kept-${k}.csv`), 'readythread', { length: 1000, columns: cols }, false)).size);
      for (const cols of kept) (cols[tid] as Uint32Array).fill(0); // the caller reuses its columns at once
      await Promise.all(sizes);
      for (const k of [0, 1, 2]) {
        const rows = readFileSync(join(dir, `kept-${k}.csv`), 'utf8').split('\n').filter(Boolean).slice(1);
        expect(rows.length).toBe(1000);
        expect(new Set(rows.map((l) => l.split(',')[2]))).toEqual(new Set([String(7 + k)]));
      }
    } finally {
      await w.close();
    }
  });

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
