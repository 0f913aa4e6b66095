// The `cpu` command's derivation on a worker (src/derive/remote-cpu-fold.ts): the analysis from the worker's
// fold equals the one from the deriver in this thread — totals, processes, threads, percentiles, warnings and
// the statistics — on realistic and simulated traces streamed chunk by chunk (borrowed views reused after
// each call), percentiles on and off; the column buffers come back and are reused; a failure in the worker is
// one error. Runs the built package (dist/, `npm run build`): the worker is the compiled script.
import { describe, expect, test } from 'vitest';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { generateRealisticTrace, simulateSchedule, writeTrace } from '../src/writer/index.js';

const dist = {
  remote: (await import(new URL('../dist/derive/remote-cpu-fold.js', import.meta.url).href)) as typeof import('../src/derive/remote-cpu-fold.js'),
  cpu: (await import(new URL('../dist/analysis/cpu.js', import.meta.url).href)) as typeof import('../src/analysis/cpu.js'),
  files: (await import(new URL('../dist/decode/files.js', import.meta.url).href)) as typeof import('../src/decode/files.js'),
  sources: (await import(new URL('../dist/tables/sources.js', import.meta.url).href)) as typeof import('../src/tables/sources.js'),
};

const dir = mkdtempSync(join(tmpdir(), 'etw-remote-fold-'));
const traces: [string, Uint8Array][] = [
  ['realistic, 64-bit', generateRealisticTrace({ seed: 51, targetBytes: 12 << 20, cpus: 4 }).bytes],
  ['realistic mixed, 32-bit', generateRealisticTrace({ seed: 52, targetBytes: 2 << 20, cpus: 8, switches: 'mixed', pointerSize: 4 }).bytes],
  ['simulated', writeTrace(simulateSchedule({ seed: 53, cpus: 3, duration: 4_000_000, switchMode: 'mixed' }).description).bytes],
];

/** The analysis of the trace at `path` with the deriver here or on a worker (the cpu command's streaming decode). */
async function analysis(path: string, remote: boolean, percentiles: boolean) {
  const analyzer = new dist.cpu.CpuAnalyzer({ percentiles });
  const request = analyzer.coreFold();
  expect(request).not.toBeNull();
  const deriver = remote ? new dist.remote.RemoteCpuFold(analyzer, request!) : new dist.cpu.CpuUsageDeriver(analyzer);
  let chunks = 0;
  const res = await dist.files.streamFile(path, {
    rows: 'borrow',
    tables: dist.sources.decodedTablesFor(['cpuUsage', 'threads', 'processes']),
    onRows: (rows) => {
      chunks++;
      return deriver.add(rows.cswitch, rows.readythread, rows.threadEvents);
    },
  });
  const stats = await deriver.finish();
  const a = analyzer.result(res, { stats });
  return { a: { ...a, threads: a.threads }, stats, chunks };
}

describe('the cpu derivation on a worker', () => {
  test.each(traces)('%s: the analysis and statistics of the deriver in this thread', async (name, bytes) => {
    const path = join(dir, `${name.replace(/\W+/g, '-')}.etl`);
    writeFileSync(path, bytes);
    for (const percentiles of [false, true]) {
      const here = await analysis(path, false, percentiles);
      const there = await analysis(path, true, percentiles);
      expect(there.chunks).toBeGreaterThan(name === 'realistic, 64-bit' ? MAX_IN_FLIGHT_SEEN : 1);
      expect(here.stats.rows).toBeGreaterThan(1000);
      expect(there.stats).toEqual(here.stats);
      expect(there.a).toEqual(here.a);
    }
  });

  test('a worker gone before the end is one error, not a wait without end', async () => {
    const analyzer = new dist.cpu.CpuAnalyzer({ percentiles: false });
    const remote = new dist.remote.RemoteCpuFold(analyzer, analyzer.coreFold()!);
    await remote.close();
    await expect(remote.finish()).rejects.toThrow(/the cpuUsage derivation's worker stopped before the end/);
  });

  test('remote only for inputs of 16 MiB and more, with a core to spare', () => {
    const small = join(dir, 'small.etl');
    writeFileSync(small, traces[2]![1]);
    const big = join(dir, 'big.etl');
    writeFileSync(big, new Uint8Array(dist.remote.REMOTE_FOLD_MIN_BYTES));
    expect(dist.remote.remoteFoldPays(small, 4)).toBe(false);
    expect(dist.remote.remoteFoldPays(big, 1)).toBe(false);
    expect(dist.remote.remoteFoldPays(big, 2)).toBe(true);
  });
});

/** more chunks than may be in flight at once: the buffers come back and are reused */
const MAX_IN_FLIGHT_SEEN = 4;
