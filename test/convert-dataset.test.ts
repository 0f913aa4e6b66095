// `etw-decode convert`'s bookkeeping of a dataset: `--names` on the bundled sample in every format (read
// back cell by cell); re-runs write what was asked and is not there (tables × format × options, from the
// trace's manifest); the trace id is a hash of the whole content (a same-size partial copy is another
// trace); staging of killed runs is removed by the next run and a run stopped by SIGINT/SIGTERM removes its
// own; concurrent converts of one trace both succeed (one waits for the other's lock); `convert -` says
// that convert does not read standard input.
import { describe, expect, test, beforeAll } from 'vitest';
import { tableFromIPC } from 'apache-arrow';
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { decodeSync, ThreadStatesDeriver, type DecodeResult } from '../src/node.js';
import { sortByCpuTime } from '../src/convert/sort.js';
import { concatChunks, TABLE_NAMES, type ColumnChunk } from '../src/tables/schema.js';
import { Table } from '../src/tables/table.js';
import { generateMixedTrace, simulateSchedule, writeTrace } from '../src/writer/index.js';
import { allTables, arrowDifference, firstDifference } from './helpers/columnar.js';
import { duck, duckRows } from './helpers/readers.js';

const BIN = fileURLToPath(new URL('../bin/etw-decode.js', import.meta.url));
const SAMPLE = fileURLToPath(new URL('../samples/sample.etl', import.meta.url));
const HOST = hostname().replace(/[^A-Za-z0-9.-]+/g, '_') || 'localhost';
const cli = (args: string[]) => spawnSync(process.execPath, [BIN, ...args], { encoding: 'utf8' });

/** A child process run to its end: exit code, signal, stderr. */
function run(args: string[]): { child: ReturnType<typeof spawn>; done: Promise<{ status: number | null; signal: NodeJS.Signals | null; stderr: string; ended: number }> } {
  const child = spawn(process.execPath, [BIN, ...args], { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr!.setEncoding('utf8').on('data', (d: string) => (stderr += d));
  const done = new Promise<{ status: number | null; signal: NodeJS.Signals | null; stderr: string; ended: number }>((resolve) =>
    child.on('close', (status, signal) => resolve({ status, signal, stderr, ended: Date.now() })),
  );
  return { child, done };
}

/** A pid that is not running (a process that has exited). */
function deadPid(): number {
  return spawnSync(process.execPath, ['-e', '']).pid!;
}

const dir = mkdtempSync(join(tmpdir(), 'etw-dataset-'));
const small = join(dir, 'small.etl');
const big = join(dir, 'big.etl');
let smallDecode: DecodeResult;
beforeAll(() => {
  writeFileSync(small, writeTrace(simulateSchedule({ seed: 17, cpus: 3, duration: 1_000_000, switchMode: 'mixed', threadVersion: 4 }).description).bytes);
  writeFileSync(big, generateMixedTrace({ seed: 5, targetBytes: 12_000_000, cpus: 4 }).bytes);
  smallDecode = decodeSync(readFileSync(small));
});

/** The only trace id of a dataset's table. */
function ids(out: string, table: string): string[] {
  return readdirSync(join(out, table)).map((p) => p.replace('trace=', ''));
}

/** Rows of every part of `table` for trace `id`, by DuckDB, in part order. */
async function parquetRows(out: string, table: string, id: string): Promise<Record<string, unknown>[]> {
  const p = join(out, table, `trace=${id}`);
  const files = readdirSync(p).filter((f) => f.endsWith('.parquet')).sort((x, y) => Number(x.match(/\d+/)![0]) - Number(y.match(/\d+/)![0]));
  const rows: Record<string, unknown>[] = [];
  for (const f of files) rows.push(...(await duckRows(join(p, f))));
  return rows;
}

/** The rows of a decoded table in the order convert writes them (sorted by (cpu, time) within a part). */
function convertOrder(t: Table): Table {
  return new Table(t.name, sortByCpuTime(t.name, { length: t.length, columns: t.columns }));
}

/** threadStates in the order convert writes it: streamed, as the intervals end (docs/design/streaming.md). */
function streamedThreadStates(r: DecodeResult): Table<'threadStates'> {
  const chunks: ColumnChunk[] = [];
  const d = new ThreadStatesDeriver((t) => chunks.push({ length: t.length, columns: t.columns }));
  d.add(r.cswitch, r.readythread, r.threadEvents);
  d.finish();
  return new Table('threadStates', concatChunks('threadStates', chunks));
}

describe('convert --names on the bundled sample (issue 28: Parquet failed with "failed to fill whole buffer")', () => {
  const sample = decodeSync(readFileSync(SAMPLE));
  const tables = allTables(sample);

  test.each(['parquet', 'arrow', 'csv', 'jsonl'] as const)('--to %s --names: exit 0, every table written', async (format) => {
    const out = join(dir, `sample-${format}`);
    const r = cli(['convert', SAMPLE, '--to', format, '--out', out, '--names', '--no-progress']);
    expect(r.stderr).not.toMatch(/failed:/);
    expect(r.status, r.stderr).toBe(0);
    expect(r.stderr).toMatch(/1 converted, 0 skipped, 0 failed, in \d+\.\d s, \d+\.\d MiB\/s of input →/);
    const [id] = ids(out, 'cswitch');
    const o = { names: true, clock: sample.clock };
    for (const name of TABLE_NAMES) {
      const want = name === 'traces' ? tables.traces : name === 'threadStates' ? streamedThreadStates(sample) : convertOrder(tables[name]);
      const file = join(out, name, `trace=${id}`, `part-0.${format}`);
      if (format === 'parquet') {
        const rows = await parquetRows(out, name, id!);
        if (name === 'traces') expect(rows.length).toBe(1);
        else expect(firstDifference(want, rows.length, (i, c) => rows[i]![c], o), name).toBeNull();
      } else if (format === 'arrow') {
        const a = tableFromIPC(readFileSync(file));
        if (name === 'traces') expect(a.numRows).toBe(1);
        else expect(arrowDifference(want, a, o), name).toBeNull();
      } else {
        const lines = readFileSync(file, 'utf8').split('\n').filter(Boolean);
        expect(lines.length - (format === 'csv' ? 1 : 0), name).toBe(want.length);
      }
    }
  });
});

describe('re-runs write what was asked and is not in the dataset', () => {
  test('--tables cswitch,traces, then every table: the others are written (not "skipped"), then a skip', () => {
    const out = join(dir, 'tables');
    expect(cli(['convert', small, '--to', 'csv', '--out', out, '--tables', 'cswitch,traces', '--no-progress']).status).toBe(0);
    expect(readdirSync(out).filter((f) => !f.startsWith('.')).sort()).toEqual(['cswitch', 'traces']);
    const all = cli(['convert', small, '--to', 'csv', '--out', out, '--no-progress']);
    expect(all.status, all.stderr).toBe(0);
    expect(all.stderr).toMatch(/1 converted, 0 skipped/);
    expect(readdirSync(out).filter((f) => !f.startsWith('.')).sort()).toEqual([...TABLE_NAMES].sort());
    // the tables already there were not written again; the new ones have every row
    expect(all.stderr).not.toMatch(/cswitch \d/);
    for (const t of ['spinlock', 'readythread', 'threadEvents', 'processEvents'] as const) {
      const lines = readFileSync(join(out, t, readdirSync(join(out, t))[0]!, 'part-0.csv'), 'utf8').split('\n').filter(Boolean);
      expect(lines.length - 1, t).toBe(smallDecode[t].length);
    }
    const again = cli(['convert', small, '--to', 'csv', '--out', out, '--no-progress']);
    expect(again.stderr).toMatch(/0 converted, 1 skipped/);
    expect(again.stderr).not.toMatch(/MiB\/s of input/); // nothing converted: no throughput
  });

  test('--to csv, then --to parquet: both formats in the partitions; each re-run skipped', async () => {
    const out = join(dir, 'formats');
    expect(cli(['convert', small, '--to', 'csv', '--out', out, '--no-progress']).status).toBe(0);
    const pq = cli(['convert', small, '--to', 'parquet', '--out', out, '--no-progress']);
    expect(pq.status, pq.stderr).toBe(0);
    expect(pq.stderr).toMatch(/1 converted, 0 skipped/);
    const [id] = ids(out, 'cswitch');
    expect(readdirSync(join(out, 'cswitch', `trace=${id}`)).sort()).toEqual(['part-0.csv', 'part-0.parquet']);
    expect((await parquetRows(out, 'cswitch', id!)).length).toBe(smallDecode.cswitch.length);
    for (const format of ['csv', 'parquet']) expect(cli(['convert', small, '--to', format, '--out', out, '--no-progress']).stderr, format).toMatch(/0 converted, 1 skipped/);
  });

  test('other options (--names, --part-rows, --bias) are another output: written again; a file removed by hand is written again', async () => {
    const out = join(dir, 'options');
    expect(cli(['convert', small, '--to', 'parquet', '--out', out, '--tables', 'cswitch', '--no-progress']).status).toBe(0);
    const named = cli(['convert', small, '--to', 'parquet', '--out', out, '--tables', 'cswitch', '--names', '--no-progress']);
    expect(named.stderr).toMatch(/1 converted, 0 skipped/);
    const [id] = ids(out, 'cswitch');
    expect(Object.keys((await parquetRows(out, 'cswitch', id!))[0]!)).toContain('oldThreadStateName');
    expect(cli(['convert', small, '--to', 'parquet', '--out', out, '--tables', 'cswitch', '--names', '--no-progress']).stderr).toMatch(/0 converted, 1 skipped/);
    // fewer rows per part: more parts, and none of the previous ones left over
    const parts = cli(['convert', small, '--to', 'parquet', '--out', out, '--tables', 'cswitch', '--names', '--part-rows', '100', '--no-progress']);
    expect(parts.stderr).toMatch(/1 converted, 0 skipped/);
    const files = readdirSync(join(out, 'cswitch', `trace=${id}`));
    expect(files.length).toBe(Math.ceil(smallDecode.cswitch.length / 100));
    expect((await parquetRows(out, 'cswitch', id!)).length).toBe(smallDecode.cswitch.length);
    expect(cli(['convert', small, '--to', 'parquet', '--out', out, '--tables', 'cswitch', '--names', '--part-rows', '100', '--bias', '40', '--no-progress']).stderr).toMatch(
      /1 converted, 0 skipped/,
    );
    expect(files.length).toBeGreaterThan(1);
    rmSync(join(out, 'cswitch', `trace=${id}`, `part-${files.length - 1}.parquet`));
    const repaired = cli(['convert', small, '--to', 'parquet', '--out', out, '--tables', 'cswitch', '--names', '--part-rows', '100', '--bias', '40', '--no-progress']);
    expect(repaired.stderr).toMatch(/1 converted, 0 skipped/);
    expect((await parquetRows(out, 'cswitch', id!)).length).toBe(smallDecode.cswitch.length);
  });

  test('--to perfetto: skipped when there, written again with another --bias', () => {
    const out = join(dir, 'perfetto');
    expect(cli(['convert', small, '--to', 'perfetto', '--out', out, '--no-progress']).status).toBe(0);
    expect(cli(['convert', small, '--to', 'perfetto', '--out', out, '--no-progress']).stderr).toMatch(/0 converted, 1 skipped/);
    expect(cli(['convert', small, '--to', 'perfetto', '--out', out, '--bias', '40', '--no-progress']).stderr).toMatch(/1 converted, 0 skipped/);
  });
});

describe('the trace id is the content', () => {
  /** the full trace and, beside it under the same name, a copy of the same size with some bytes not there yet */
  function copies(name: string, damage: (b: Uint8Array) => void): { full: string; partial: string } {
    const bytes = readFileSync(big);
    mkdirSync(join(dir, name, 'partial'), { recursive: true });
    const full = join(dir, name, 'big.etl');
    const partial = join(dir, name, 'partial', 'big.etl');
    writeFileSync(full, bytes);
    const copy = new Uint8Array(bytes);
    damage(copy);
    writeFileSync(partial, copy);
    return { full, partial };
  }

  test.each([
    ['the tail not copied yet (zeros)', (b: Uint8Array) => b.fill(0, Math.floor(b.length * 0.3))],
    ['a hole in the middle (first and last MiB there)', (b: Uint8Array) => b.fill(0, 2 << 20, 5 << 20)],
  ])('a same-size partial copy converted first does not shadow the full trace: %s', async (_, damage) => {
    const { full, partial } = copies(`partial-${damage.toString().length}`, damage);
    const out = join(dir, `ds-partial-${damage.toString().length}`);
    expect(cli(['convert', partial, '--to', 'parquet', '--out', out, '--tables', 'cswitch,traces', '--no-progress']).status).toBe(0);
    const r = cli(['convert', full, '--to', 'parquet', '--out', out, '--tables', 'cswitch,traces', '--no-progress']);
    expect(r.status, r.stderr).toBe(0);
    expect(r.stderr).toMatch(/1 converted, 0 skipped/);
    const id = /trace=(big-[0-9a-f]{8})/.exec(r.stderr)![1]!;
    expect(ids(out, 'cswitch')).toHaveLength(2);
    const c = await duck();
    const [row] = (await c.runAndReadAll(`SELECT count(*) AS n FROM read_parquet('${out}/cswitch/trace=${id}/*.parquet')`)).getRowObjects();
    expect(Number(row!.n)).toBe(decodeSync(readFileSync(full)).cswitch.length);
  });

  test('in one run: a same-size copy with a hole is not "the same trace" as the full one (both converted)', () => {
    const { full, partial } = copies('one-run', (b) => b.fill(0, 2 << 20, 5 << 20));
    const out = join(dir, 'ds-one-run');
    const r = cli(['convert', partial, full, '--to', 'csv', '--out', out, '--tables', 'traces', '--no-progress']);
    expect(r.status, r.stderr).toBe(0);
    expect(r.stderr).toMatch(/2 converted, 0 skipped/);
    expect(ids(out, 'traces')).toHaveLength(2);
  });

  test('another trace with the id in the dataset (a manifest of other content) is refused, with the reason', () => {
    const out = join(dir, 'collision');
    const first = cli(['convert', small, '--to', 'csv', '--out', out, '--tables', 'traces', '--no-progress']);
    const id = /trace=(small-[0-9a-f]{8})/.exec(first.stderr)![1]!;
    const path = join(out, '.manifests', `${id}.json`);
    const m = JSON.parse(readFileSync(path, 'utf8'));
    m.sha256 = 'f'.repeat(64);
    writeFileSync(path, JSON.stringify(m));
    const r = cli(['convert', small, '--to', 'csv', '--out', out, '--no-progress']);
    expect(r.status).toBe(1);
    expect(r.stderr).toMatch(new RegExp(`trace=${id} in .* is another trace \\(SHA-256 ffffffffffffffff…, this file [0-9a-f]{16}…\\) with the same name`));
  });
});

describe('staging of interrupted runs', () => {
  /** starts a conversion of the big trace and resolves once a part file is being written under .staging */
  async function startAndWaitForStaging(out: string) {
    const p = run(['convert', big, '--to', 'parquet', '--out', out, '--part-rows', '20000', '--no-progress']);
    const staging = join(out, '.staging');
    const t0 = Date.now();
    for (;;) {
      const trees = existsSync(staging) ? readdirSync(staging).filter((n) => !n.endsWith('.lock')) : [];
      const partial = trees.some((t) => readdirSync(join(staging, t), { recursive: true }).some((f) => String(f).endsWith('.parquet')));
      if (partial) break;
      if (Date.now() - t0 > 60_000) throw new Error('no staging file after 60 s');
      await new Promise((r) => setTimeout(r, 10));
    }
    return p;
  }

  test('SIGKILL leaves partial files; the next run into the dataset removes them', async () => {
    const out = join(dir, 'killed');
    const p = await startAndWaitForStaging(out);
    p.child.kill('SIGKILL');
    expect((await p.done).signal).toBe('SIGKILL');
    expect(readdirSync(join(out, '.staging')).length).toBeGreaterThan(0);
    const next = cli(['convert', small, '--to', 'csv', '--out', out, '--tables', 'traces', '--no-progress']);
    expect(next.status, next.stderr).toBe(0);
    expect(existsSync(join(out, '.staging'))).toBe(false);
    // the killed trace was never recorded: converting it now writes it
    const again = cli(['convert', big, '--to', 'parquet', '--out', out, '--tables', 'cswitch', '--no-progress']);
    expect(again.stderr).toMatch(/1 converted/);
  });

  test.each([
    ['SIGTERM', 143],
    ['SIGINT', 130],
  ] as const)('%s: exit %d, and the run removed its staging files and lock', async (signal, code) => {
    const out = join(dir, `stopped-${signal}`);
    const p = await startAndWaitForStaging(out);
    p.child.kill(signal);
    const r = await p.done;
    expect(r.status).toBe(code);
    expect(existsSync(join(out, '.staging')) ? readdirSync(join(out, '.staging')) : []).toEqual([]);
  });

  test("entries of live runs and of other hosts stay; dead runs' (and earlier versions') go", () => {
    const out = join(dir, 'mixed-staging');
    const staging = join(out, '.staging');
    const dead = deadPid();
    const keep = [`x-00000000@${HOST}@${process.pid}@0a0b0c0d`, `x-00000000@another-host@${dead}@0a0b0c0d`];
    const gone = [`x-00000000@${HOST}@${dead}@0a0b0c0d`, `x-00000000.${dead}.k3j9q2`, `x-00000000@${HOST}@${dead}@0a0b0c0d.manifest`];
    for (const n of [...keep, ...gone]) {
      if (n.endsWith('.manifest')) {
        mkdirSync(staging, { recursive: true });
        writeFileSync(join(staging, n), '{}');
      } else {
        mkdirSync(join(staging, n, 'cswitch', 'trace=x-00000000'), { recursive: true });
        writeFileSync(join(staging, n, 'cswitch', 'trace=x-00000000', 'part-0.parquet'), 'partial');
      }
    }
    writeFileSync(join(staging, 'y-00000000.lock'), JSON.stringify({ host: HOST, pid: dead }));
    const r = cli(['convert', small, '--to', 'csv', '--out', out, '--tables', 'traces', '--no-progress']);
    expect(r.status, r.stderr).toBe(0);
    expect(readdirSync(staging).sort()).toEqual(keep.sort());
  });
});

describe('concurrent converts of one trace', () => {
  test('a live run holding the trace is waited for, then its work is found done or done again', async () => {
    const out = join(dir, 'wait');
    mkdirSync(join(out, '.staging'), { recursive: true });
    // a stand-in for another conversion of this trace: a live process of this host holding its lock
    const id = /trace=(small-[0-9a-f]{8})/.exec(cli(['convert', small, '--to', 'csv', '--out', join(dir, 'probe'), '--tables', 'traces', '--no-progress']).stderr)![1]!;
    const holder = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 1500)']);
    const holderEnd = new Promise<number>((resolve) => holder.on('exit', () => resolve(Date.now())));
    writeFileSync(join(out, '.staging', `${id}.lock`), JSON.stringify({ host: HOST, pid: holder.pid }));
    const p = run(['convert', small, '--to', 'csv', '--out', out, '--no-progress']);
    const [r, ended] = await Promise.all([p.done, holderEnd]);
    expect(r.status, r.stderr).toBe(0);
    expect(r.stderr).toMatch(/1 converted/);
    expect(r.ended).toBeGreaterThanOrEqual(ended); // it waited for the holder
    expect(existsSync(join(out, '.staging'))).toBe(false);
  });

  test("another host's run holding the trace: a clear failure naming it", () => {
    const out = join(dir, 'remote');
    mkdirSync(join(out, '.staging'), { recursive: true });
    const id = /trace=(small-[0-9a-f]{8})/.exec(cli(['convert', small, '--to', 'csv', '--out', join(dir, 'probe2'), '--tables', 'traces', '--no-progress']).stderr)![1]!;
    writeFileSync(join(out, '.staging', `${id}.lock`), JSON.stringify({ host: 'build-7', pid: 4242 }));
    const r = cli(['convert', small, '--to', 'csv', '--out', out, '--no-progress']);
    expect(r.status).toBe(1);
    expect(r.stderr).toMatch(new RegExp(`small\\.etl: failed: trace=${id} is being converted into .* by process 4242 on host build-7 \\(.*${id}\\.lock; delete it if that run is gone\\)`));
  });

  test('four converts of one trace at once, three times: every one exits 0, one converts, the dataset is whole', async () => {
    for (let round = 0; round < 3; round++) {
      const out = join(dir, `race-${round}`);
      const results = await Promise.all(Array.from({ length: 4 }, () => run(['convert', small, '--to', 'csv', '--out', out, '--no-progress']).done));
      for (const r of results) expect(r.status, r.stderr).toBe(0);
      expect(results.filter((r) => /1 converted/.test(r.stderr))).toHaveLength(1);
      expect(results.filter((r) => /0 converted, 1 skipped/.test(r.stderr))).toHaveLength(3);
      expect(existsSync(join(out, '.staging'))).toBe(false);
      for (const t of ['cswitch', 'threadEvents'] as const) {
        const lines = readFileSync(join(out, t, readdirSync(join(out, t))[0]!, 'part-0.csv'), 'utf8').split('\n').filter(Boolean);
        expect(lines.length - 1).toBe(smallDecode[t].length);
      }
    }
  });
});

describe('errors in the project\'s words', () => {
  test('`convert -`: convert does not read standard input (usage, exit 2)', () => {
    const r = cli(['convert', '-', '--out', join(dir, 'stdin')]);
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(/^etw-decode: convert reads trace files, not standard input \('-'\)/);
    expect(existsSync(join(dir, 'stdin'))).toBe(false);
  });

  test('an output that cannot be written names the trace, the dataset and the reason', () => {
    const notDir = join(dir, 'a-file');
    writeFileSync(notDir, 'x');
    const r = cli(['convert', small, '--to', 'csv', '--out', notDir, '--no-progress']);
    expect(r.status).toBe(1);
    expect(r.stderr).toMatch(/small\.etl: failed: writing trace=small-[0-9a-f]{8} \(csv\) into .*a-file failed: ENOTDIR: not a directory/);
  });
});
