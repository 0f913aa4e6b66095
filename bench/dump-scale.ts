// `etw-decode dump` of the 1 GiB scale trace, end to end (issue 10): wall time, CPU time and MB/s of output
// for csv and jsonl, plain and with --names --time ns, against `etw-decode summary` (decode alone) of the
// same file. Not part of `npm run bench` (minutes per run):
//
//   npm run build && npx tsc -p tsconfig.bench.json
//   node dist-bench/bench/dump-scale.js [--bytes 1GiB] [--runs 3] [--file trace.etl] [--table cswitch] [--old DIR]
//
// The trace is the scale case's (bench/scale.ts, seed 0x5eed, 4 CPUs), written to os.tmpdir() and deleted
// afterwards unless --file names an existing one. Each job is one `node bin/etw-decode.js …` process with
// `-o /dev/null`, timed from outside (wall) and by /usr/bin/time (user + system CPU, peak RSS); output bytes
// are counted once per option set through `| wc -c`. --old DIR also times the same commands with the CLI
// of another checkout (e.g. a worktree of the commit before this encoder), for the before/after figure.
import { spawnSync } from 'node:child_process';
import { existsSync, openSync, statSync, unlinkSync } from 'node:fs';
import os from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { GIB, writeTraceFile } from './scale.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

interface Job {
  label: string;
  wallS: number[];
  cpuS: number[];
  rssMiB: number[];
  outputBytes: number;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[xs.length >> 1]!;

/** Runs `node BIN args` under /usr/bin/time; wall seconds from here, CPU seconds and peak RSS from time(1). */
function timed(bin: string, args: string[]): { wall: number; cpu: number; rssMiB: number } {
  const t0 = performance.now();
  const r = spawnSync('/usr/bin/time', ['-f', 'TIME %U %S %M', process.execPath, bin, ...args], { encoding: 'utf8', stdio: ['ignore', openSync('/dev/null', 'w'), 'pipe'] });
  const wall = (performance.now() - t0) / 1000;
  if (r.status !== 0) throw new Error(`${args.join(' ')}: exit ${r.status}: ${r.stderr}`);
  const m = /TIME ([\d.]+) ([\d.]+) (\d+)/.exec(r.stderr);
  if (!m) throw new Error(`no /usr/bin/time line in ${JSON.stringify(r.stderr)}`);
  return { wall, cpu: Number(m[1]) + Number(m[2]), rssMiB: Number(m[3]) / 1024 };
}

function outputBytes(bin: string, args: string[]): number {
  const quoted = [process.execPath, bin, ...args].map((a) => `'${a.replace(/'/g, `'\\''`)}'`).join(' ');
  const r = spawnSync('sh', ['-c', `${quoted} | wc -c`], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`${args.join(' ')} | wc -c: ${r.stderr}`);
  return Number(r.stdout.trim());
}

function main(): void {
  const { values } = parseArgs({
    options: {
      bytes: { type: 'string', default: '1GiB' },
      runs: { type: 'string', default: '3' },
      file: { type: 'string' },
      table: { type: 'string', default: 'cswitch' },
      old: { type: 'string' },
    },
  });
  const m = /^(\d+(?:\.\d+)?)\s*(m|g)?i?b?$/i.exec(values.bytes!);
  if (!m) throw new Error(`--bytes: cannot parse ${values.bytes}`);
  const minBytes = Math.round(Number(m[1]) * ({ m: 2 ** 20, g: GIB }[(m[2] ?? '').toLowerCase() as 'm' | 'g'] ?? 1));
  const runs = Number(values.runs);
  let path = values.file ? resolve(values.file) : join(os.tmpdir(), `etw-decode-dump-${process.pid}.etl`);
  const made = !values.file || !existsSync(path);
  if (made) {
    if (values.file) path = resolve(values.file);
    process.stderr.write(`writing a mixed trace of at least ${(minBytes / 2 ** 20).toFixed(0)} MiB to ${path} …\n`);
    writeTraceFile(path, Math.ceil(minBytes * 1.02) + 0x10000);
  }
  const size = statSync(path).size;
  const bins: [string, string][] = [['new', join(ROOT, 'bin', 'etw-decode.js')]];
  if (values.old) bins.push(['old', join(resolve(values.old), 'bin', 'etw-decode.js')]);
  const sets: [string, string[]][] = [
    ['csv', ['--format', 'csv']],
    ['csv --names --time ns', ['--format', 'csv', '--names', '--time', 'ns']],
    ['jsonl', ['--format', 'jsonl']],
    ['jsonl --names --time ns', ['--format', 'jsonl', '--names', '--time', 'ns']],
  ];
  const jobs: Job[] = [];
  try {
    for (const [which, bin] of bins) {
      const decode: Job = { label: `${which}: summary (decode only)`, wallS: [], cpuS: [], rssMiB: [], outputBytes: 0 };
      for (let i = 0; i < runs; i++) {
        const t = timed(bin, ['summary', path]);
        decode.wallS.push(t.wall);
        decode.cpuS.push(t.cpu);
        decode.rssMiB.push(t.rssMiB);
      }
      jobs.push(decode);
      // the former formatter takes minutes per job: only the two figures of the issue (csv, csv --names --time)
      for (const [label, args] of which === 'old' ? sets.filter(([l]) => l.startsWith('csv')) : sets) {
        const dumpArgs = ['dump', path, '--table', values.table!, ...args];
        const job: Job = { label: `${which}: dump --table ${values.table} ${label}`, wallS: [], cpuS: [], rssMiB: [], outputBytes: outputBytes(bin, dumpArgs) };
        // the former formatter takes minutes per run: one run is enough to see it
        for (let i = 0; i < (which === 'old' ? 1 : runs); i++) {
          const t = timed(bin, [...dumpArgs, '-o', '/dev/null']);
          job.wallS.push(t.wall);
          job.cpuS.push(t.cpu);
          job.rssMiB.push(t.rssMiB);
          process.stderr.write(`${job.label}: ${t.wall.toFixed(1)} s wall, ${t.cpu.toFixed(1)} s CPU\n`);
        }
        jobs.push(job);
      }
    }
  } finally {
    if (made && !values.file) unlinkSync(path);
  }
  const rows = jobs.map((j) => {
    const wall = median(j.wallS);
    const mb = j.outputBytes / 1e6;
    return [
      j.label,
      `${j.wallS.length}`,
      wall.toFixed(1),
      median(j.cpuS).toFixed(1),
      j.outputBytes ? (mb / 1000).toFixed(2) : '-',
      j.outputBytes ? (mb / wall).toFixed(0) : '-',
      (size / 1e6 / wall).toFixed(0),
      median(j.rssMiB).toFixed(0),
      j.wallS.map((w) => w.toFixed(1)).join(' '),
    ];
  });
  const header = ['job', 'runs', 'wall s (median)', 'CPU s', 'output GB', 'output MB/s', 'trace MB/s', 'peak RSS MiB', 'wall s (each)'];
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (r: string[]) => r.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('  ');
  console.log(`trace ${(size / 2 ** 30).toFixed(2)} GiB (${path}); load average ${os.loadavg().map((l) => l.toFixed(1)).join(' ')}; ${os.cpus().length} CPUs`);
  console.log([line(header), ...rows.map(line)].join('\n'));
}

main();
