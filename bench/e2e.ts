// End to end (issue 12): the command line on a large trace file against the native C decoder of the shared
// bench, one process per run, the two alternating, median of N:
//   etw-decode summary FILE --json          vs  cdecode FILE --window-mb 8   (wall time; the ratio is the target)
//   etw-decode dump --table cswitch (CSV), dump --table cpuUsage, cpu FILE --json: throughput of the same machinery
//   from a cold page cache: etw-decode summary and a plain read of the file (cat), alternating
// Usage (after `npm run bench` or `npm run build && npx tsc -p tsconfig.bench.json`):
//   node dist-bench/bench/e2e.js [FILE] [--runs 5] [--bytes 516MiB] [--no-cold] [--no-others] [--others-runs 1]
//                                [--keep] [--out FILE]
// (`npm run bench:e2e -- …` builds first.) dump and cpu take minutes on the default file: one run each by default.
// Without FILE a mixed trace (compact 4 : SpinLock 1 : noise 1 by events, 4 processors) of --bytes is
// written to os.tmpdir() with the writer and deleted afterwards (unless --keep).
import { spawnSync } from 'node:child_process';
import { closeSync, existsSync, mkdirSync, openSync, readFileSync, rmSync, statSync, writeFileSync, writeSync } from 'node:fs';
import os from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { generateTraceChunks } from '../src/writer/index.js';
import { describeMachine, gitInfo, machineInfo } from './machine.js';
import { buildNative } from './native.js';
import { textTable } from './report.js';
import { dropFromCache, residentBytes } from './page-cache.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const CLI = join(ROOT, 'bin', 'etw-decode.js');
const SEED = 0x5eed;
const MIX = { cswitch: 0, compact: 4, spinlock: 1, noise: 1 };

interface Run {
  wall: number;
  /** user + system CPU seconds of the process (0 when unknown) */
  cpu: number;
}

interface Job {
  name: string;
  runs: Run[];
  /** median wall seconds */
  seconds: number;
  mbPerS: number;
}

const log = (line: string) => process.stderr.write(line + '\n');

function parseSize(text: string): number {
  const m = /^(\d+(?:\.\d+)?)\s*(k|m|g)?i?b?$/i.exec(text.trim());
  if (!m) throw new Error(`--bytes: cannot parse ${text}`);
  const unit = { k: 2 ** 10, m: 2 ** 20, g: 2 ** 30 }[(m[2] ?? '').toLowerCase() as 'k' | 'm' | 'g'] ?? 1;
  return Math.round(Number(m[1]) * unit);
}

function writeTrace(path: string, targetBytes: number): number {
  const fd = openSync(path, 'w');
  let total = 0;
  try {
    for (const chunk of generateTraceChunks({ seed: SEED, targetBytes, cpus: 4, mix: MIX })) {
      writeSync(fd, chunk);
      total += chunk.length;
    }
  } finally {
    closeSync(fd);
  }
  return total;
}

/** Runs a command once (stdout discarded); wall seconds and, through /usr/bin/time when present, CPU seconds. */
function timed(cmd: string, args: string[]): Run {
  const useTime = existsSync('/usr/bin/time');
  const tfile = join(os.tmpdir(), `etw-e2e-time-${process.pid}`);
  const t0 = performance.now();
  const r = useTime
    ? spawnSync('/usr/bin/time', ['-o', tfile, '-f', '%U %S', cmd, ...args], { stdio: ['ignore', 'ignore', 'pipe'] })
    : spawnSync(cmd, args, { stdio: ['ignore', 'ignore', 'pipe'] });
  const wall = (performance.now() - t0) / 1000;
  if (r.status !== 0) throw new Error(`${cmd} ${args.join(' ')} failed (${r.status}): ${String(r.stderr).slice(0, 400)}`);
  let cpu = 0;
  if (useTime) {
    const f = readFileSync(tfile, 'utf8').trim().split(/\s+/).map(Number);
    cpu = (f[0] ?? 0) + (f[1] ?? 0);
    rmSync(tfile, { force: true });
  }
  return { wall, cpu };
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[xs.length >> 1]!;

function job(name: string, runs: Run[], bytes: number): Job {
  const seconds = median(runs.map((r) => r.wall));
  return { name, runs, seconds, mbPerS: bytes / 1e6 / seconds };
}

async function main(): Promise<number> {
  const { values, positionals } = parseArgs({
    allowPositionals: true,
    options: {
      runs: { type: 'string', default: '5' },
      bytes: { type: 'string', default: '516MiB' },
      'no-cold': { type: 'boolean', default: false },
      'no-others': { type: 'boolean', default: false },
      'others-runs': { type: 'string', default: '1' },
      keep: { type: 'boolean', default: false },
      out: { type: 'string' },
    },
  });
  const runs = Math.max(1, Number(values.runs));
  const machine = machineInfo();
  const git = gitInfo(ROOT);
  log(`etw-decode end to end: ${describeMachine(machine)}; git ${git.commit ?? '?'}${git.dirty ? ' + uncommitted changes' : ''}`);
  if (!existsSync(join(ROOT, 'dist', 'cli', 'main.js'))) throw new Error('dist/cli/main.js is missing: run npm run build first');

  let file = positionals[0] ? resolve(positionals[0]) : '';
  let generated = false;
  if (!file) {
    const target = parseSize(values.bytes!);
    file = join(os.tmpdir(), `etw-decode-e2e-${process.pid}.etl`);
    log(`writing a mixed trace (compact 4 : SpinLock 1 : noise 1) of ${(target / 2 ** 20).toFixed(0)} MiB to ${file} …`);
    writeTrace(file, target);
    generated = true;
  }
  const bytes = statSync(file).size;
  const native = buildNative(ROOT);
  const notes: string[] = [];
  const jobs: Job[] = [];
  try {
    if ('skipped' in native) notes.push(`native decoder not run: ${native.skipped}`);
    // warm the page cache (and V8's and the kernel's caches) once
    timed('cat', [file]);
    timed(process.execPath, [CLI, 'summary', file, '--json']);

    // summary vs cdecode, alternating
    const ours: Run[] = [];
    const theirs: Run[] = [];
    for (let i = 0; i < runs; i++) {
      ours.push(timed(process.execPath, [CLI, 'summary', file, '--json']));
      if ('exe' in native) theirs.push(timed(native.exe, [file, '--window-mb', '8']));
      log(`run ${i + 1}/${runs}: summary ${ours[i]!.wall.toFixed(3)} s${'exe' in native ? `, cdecode ${theirs[i]!.wall.toFixed(3)} s` : ''}`);
    }
    jobs.push(job('etw-decode summary --json', ours, bytes));
    if (theirs.length) jobs.push(job('cdecode --window-mb 8', theirs, bytes));

    if (!values['no-others']) {
      const nul = process.platform === 'win32' ? 'NUL' : '/dev/null';
      const others: [string, string[]][] = [
        ['etw-decode dump --table cswitch (CSV)', ['dump', file, '--table', 'cswitch', '-o', nul]],
        ['etw-decode dump --table cpuUsage (CSV)', ['dump', file, '--table', 'cpuUsage', '-o', nul]],
        ['etw-decode cpu --json', ['cpu', file, '--json']],
      ];
      for (const [name, args] of others) {
        const rs: Run[] = [];
        for (let i = 0; i < Math.max(1, Number(values['others-runs'])); i++) rs.push(timed(process.execPath, [CLI, ...args]));
        jobs.push(job(name, rs, bytes));
        log(`${name}: ${median(rs.map((r) => r.wall)).toFixed(3)} s`);
      }
    }

    if (!values['no-cold']) {
      if (!dropFromCache(file)) notes.push('cold runs skipped: cannot drop the file from the page cache here (Linux with GNU dd needed)');
      else {
        const cold: Run[] = [];
        const read: Run[] = [];
        for (let i = 0; i < Math.min(runs, 3); i++) {
          const cached = (what: string) => {
            const left = residentBytes(file);
            if (left !== null && left > bytes / 100) notes.push(`cold ${i + 1}, ${what}: ${(left / 2 ** 20).toFixed(0)} MiB of the file were still in the page cache`);
          };
          dropFromCache(file);
          cached('read');
          read.push(timed('cat', [file]));
          dropFromCache(file);
          cached('summary');
          cold.push(timed(process.execPath, [CLI, 'summary', file, '--json']));
          log(`cold ${i + 1}: read ${read[i]!.wall.toFixed(3)} s, summary ${cold[i]!.wall.toFixed(3)} s`);
        }
        jobs.push(job('cold: plain read (cat)', read, bytes), job('cold: etw-decode summary --json', cold, bytes));
      }
    }
  } finally {
    if ('exe' in native) native.dispose();
    if (generated && !values.keep) rmSync(file, { force: true });
  }

  const find = (name: string) => jobs.find((j) => j.name === name);
  const s = find('etw-decode summary --json');
  const c = find('cdecode --window-mb 8');
  const rows = jobs.map((j) => [
    j.name,
    j.seconds.toFixed(3),
    j.mbPerS.toFixed(0),
    j.runs.some((r) => r.cpu) ? median(j.runs.map((r) => r.cpu)).toFixed(2) : '-',
    j.runs.map((r) => r.wall.toFixed(3)).join(' '),
  ]);
  const out = [
    '',
    `file: ${file} (${(bytes / 2 ** 20).toFixed(0)} MiB)`,
    `machine: ${describeMachine(machine)}`,
    '',
    textTable(['job', 'median s', 'MB/s', 'CPU s (median)', 'runs (wall s)'], rows, 1),
  ];
  if (s && c) out.push('', `summary / cdecode (median wall): ${(s.seconds / c.seconds).toFixed(2)}× (target ≤ 1.25×)`);
  const cr = find('cold: plain read (cat)');
  const cs = find('cold: etw-decode summary --json');
  if (cr && cs) out.push(`cold: summary at ${((100 * cs.mbPerS) / cr.mbPerS).toFixed(0)} % of the plain-read MB/s (target ≥ 80 %)`);
  if (notes.length) out.push('', 'notes:', ...notes.map((n) => `  ${n}`));
  console.log(out.join('\n'));

  const result = { schema: 1, kind: 'e2e', date: new Date().toISOString(), machine, git, file: { path: file, bytes, generated }, runs, jobs, notes };
  const dir = join(ROOT, 'bench', 'results');
  mkdirSync(dir, { recursive: true });
  const paths = [join(dir, 'e2e-latest.local.json')];
  if (values.out) paths.push(resolve(values.out));
  for (const p of paths) {
    mkdirSync(dirname(p), { recursive: true });
    writeFileSync(p, JSON.stringify(result, null, 2) + '\n');
  }
  console.log(`\nresults: ${paths.map((p) => p.replace(ROOT, '')).join(', ')}`);
  return 0;
}

main().then(
  (code) => process.exit(code),
  (e: unknown) => {
    console.error(e instanceof Error ? (e.stack ?? e.message) : String(e));
    process.exit(2);
  },
);
