// End to end: the command line as users run it, on large traces, each command against `summary` of the same
// file and against the native C decoder of the shared bench (../shared/bench/cdecode.c, built by native.ts)
// on the same file. One process per run; in each round every command, `summary` and native run once, in an
// order that rotates from round to round; the ratios are the medians over the rounds of the ratios within a
// round (a round runs back to back, so the machine's load weighs about the same on both sides).
//
// Traces (without FILE arguments): the writer's realistic trace (generateRealisticTraceChunks: compact
// switches, ReadyThread, thread churn with SetName, rundowns, SampledProfile, SpinLock, hundreds of provider
// event kinds; rates in bench/README.md) and the mixed trace of the former bench (generateTraceChunks with
// compact 4 : SpinLock 1 : noise 1 by events), written to os.tmpdir() and deleted afterwards (--keep keeps
// them). Per command: median wall seconds, median CPU seconds, × summary, × native, MB/s of input, peak RSS,
// and for `convert` the bytes written. Then what each table of a decodeFile result costs per row
// (bench/memory.ts, in a process of its own).
//
// Usage (after `npm run build && npx tsc -p tsconfig.bench.json`; `npm run bench:e2e -- …` builds first):
//   node dist-bench/bench/e2e.js [FILE…] [--traces realistic,mixed] [--bytes N] [--realistic-bytes 300MiB]
//        [--mixed-bytes 516MiB] [--commands LIST] [--runs 3] [--no-native] [--cold] [--rates] [--keep] [--out FILE]
// --commands: summary,spinlocks,dump-cswitch,cpu,dump-cpuusage,dump-threadstates,cpu-sampled,cpu-waits,convert-parquet,convert-arrow,convert-csv,memory
// (default all; `summary`, the baseline, always runs). --bytes sets both generated sizes.
// Peak RSS and CPU seconds come from /usr/bin/time (GNU time, `-f %e %U %S %M`) when it is there; without it
// from the commands themselves (bench/rss-preload.ts: VmHWM at exit, all threads' CPU time) and, for the
// native decoder, VmHWM read from /proc while it runs (no CPU figure).
import { spawn, spawnSync } from 'node:child_process';
import { closeSync, existsSync, mkdirSync, mkdtempSync, openSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync, writeSync } from 'node:fs';
import os from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { generateRealisticTraceChunks, generateTraceChunks } from '../src/writer/index.js';
import { describeMachine, gitInfo, machineInfo } from './machine.js';
import { memoryText, type MemoryResult } from './memory.js';
import { buildNative } from './native.js';
import { dropFromCache, residentBytes } from './page-cache.js';
import { textTable } from './report.js';
import { parseSize, RATE_HEADER, rateRows, type RatesInput } from './trace-rates.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const DEV_NULL = openSync('/dev/null', 'w');
const CLI = join(ROOT, 'bin', 'etw-decode.js');
const PRELOAD = new URL('./rss-preload.js', import.meta.url).href;
const MEMORY = fileURLToPath(new URL('./memory.js', import.meta.url));
const SEED = 0x5eed;
const MIX = { cswitch: 0, compact: 4, spinlock: 1, noise: 1 };
const NUL = process.platform === 'win32' ? 'NUL' : '/dev/null';
/** GNU time; ETW_BENCH_NO_TIME=1 takes the fallback (the commands' own figures) */
const GNU_TIME = process.env.ETW_BENCH_NO_TIME ? '' : '/usr/bin/time';
const MiB = 2 ** 20;

interface Run {
  wall: number;
  /** user + system CPU seconds (null: unknown) */
  cpu: number | null;
  /** peak RSS in bytes (null: unknown) */
  rss: number | null;
  /** bytes the command wrote to its output directory (convert) */
  outBytes?: number;
}

interface CommandSpec {
  id: string;
  label: string;
  /** arguments after the CLI script; `out` is a fresh directory for commands that write one */
  args(file: string, out: string): string[];
  writesDir?: boolean;
}

const COMMANDS: readonly CommandSpec[] = [
  { id: 'summary', label: 'summary --json', args: (f) => ['summary', f, '--json'] },
  { id: 'spinlocks', label: 'spinlocks', args: (f) => ['spinlocks', f] },
  { id: 'dump-cswitch', label: 'dump --table cswitch (CSV)', args: (f) => ['dump', f, '--table', 'cswitch', '-o', NUL] },
  { id: 'cpu', label: 'cpu', args: (f) => ['cpu', f] },
  { id: 'dump-cpuusage', label: 'dump --table cpuUsage --names --time ns', args: (f) => ['dump', f, '--table', 'cpuUsage', '--names', '--time', 'ns', '-o', NUL] },
  { id: 'dump-threadstates', label: 'dump --table threadStates', args: (f) => ['dump', f, '--table', 'threadStates', '-o', NUL] },
  { id: 'cpu-sampled', label: 'cpu --sampled', args: (f) => ['cpu', f, '--sampled'] },
  { id: 'cpu-waits', label: 'cpu --waits', args: (f) => ['cpu', f, '--waits'] },
  { id: 'convert-parquet', label: 'convert --to parquet', args: (f, o) => ['convert', f, '--to', 'parquet', '--out', o, '--no-progress'], writesDir: true },
  { id: 'convert-arrow', label: 'convert --to arrow', args: (f, o) => ['convert', f, '--to', 'arrow', '--out', o, '--no-progress'], writesDir: true },
  { id: 'convert-csv', label: 'convert --to csv', args: (f, o) => ['convert', f, '--to', 'csv', '--out', o, '--no-progress'], writesDir: true },
];
const ALL_COMMANDS = [...COMMANDS.map((c) => c.id), 'memory'];

interface Trace {
  name: string;
  path: string;
  bytes: number;
  generated: boolean;
}

interface JobResult {
  id: string;
  label: string;
  runs: Run[];
  /** median wall seconds */
  seconds: number;
  cpu: number | null;
  /** the largest peak RSS of the runs */
  peakRss: number | null;
  /** medians over the rounds of this job's wall ÷ summary's / native's in the same round */
  xSummary: number | null;
  xNative: number | null;
  mbPerS: number;
  outBytes: number | null;
}

interface TraceResult {
  trace: Trace;
  description: string;
  rates: string[][] | null;
  jobs: JobResult[];
  memory: MemoryResult | null;
  cold: { read: Run[]; summary: Run[] } | null;
  notes: string[];
}

const log = (line: string) => process.stderr.write(line + '\n');
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[xs.length >> 1]!;

function writeChunks(path: string, chunks: Iterable<Uint8Array>): void {
  const fd = openSync(path, 'w');
  try {
    for (const c of chunks) writeSync(fd, c);
  } finally {
    closeSync(fd);
  }
}

function dirBytes(dir: string): number {
  let n = 0;
  for (const e of readdirSync(dir, { withFileTypes: true, recursive: true })) {
    if (e.isFile()) n += statSync(join(e.parentPath, e.name)).size;
  }
  return n;
}

function vmHwmOf(pid: number): number | null {
  try {
    const m = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) * 1024 : null;
  } catch {
    return null;
  }
}

/**
 * Runs a command once (stdout discarded): wall seconds from spawn to exit, CPU seconds and peak RSS (see the
 * file comment for where they come from). `node`: the command is a Node script (the preload can be used).
 */
function timed(exe: string, args: string[], node: boolean): Promise<Run> {
  const useTime = GNU_TIME !== '' && existsSync(GNU_TIME);
  const tfile = join(os.tmpdir(), `etw-e2e-time-${process.pid}`);
  rmSync(tfile, { force: true });
  let cmd = exe;
  let argv = args;
  const env = { ...process.env };
  if (useTime) {
    cmd = GNU_TIME;
    argv = ['-o', tfile, '-f', '%e %U %S %M', exe, ...args];
  } else if (node) {
    argv = ['--import', PRELOAD, ...args];
    env.ETW_BENCH_RSS_OUT = tfile;
  }
  return new Promise((done, fail) => {
    const t0 = performance.now();
    // standard output to /dev/null opened write-only: a read-write /dev/null (stdio 'ignore') is how Node
    // shows a closed descriptor, which the CLI refuses (README § Input and output)
    const child = spawn(cmd, argv, { stdio: ['ignore', DEV_NULL, 'pipe'], env });
    let stderr = '';
    child.stderr!.on('data', (d: Buffer) => {
      stderr = (stderr + d.toString()).slice(-2000);
    });
    let polled: number | null = null;
    const poll = !useTime && !node ? setInterval(() => (polled = vmHwmOf(child.pid!) ?? polled), 5) : null;
    child.on('error', fail);
    child.on('close', (code) => {
      const wall = (performance.now() - t0) / 1000;
      if (poll) clearInterval(poll);
      if (code !== 0) {
        fail(new Error(`${exe} ${args.join(' ')} failed (${code}): ${stderr.slice(-400)}`));
        return;
      }
      let cpu: number | null = null;
      let rss: number | null = polled;
      if (existsSync(tfile)) {
        const text = readFileSync(tfile, 'utf8').trim();
        rmSync(tfile, { force: true });
        if (useTime) {
          // the last line (GNU time writes "Command exited with non-zero status" lines before it)
          const f = text.split('\n').pop()!.split(/\s+/).map(Number);
          cpu = (f[1] ?? 0) + (f[2] ?? 0);
          rss = (f[3] ?? 0) * 1024;
        } else {
          const j = JSON.parse(text) as { rss: number; cpu: number };
          cpu = j.cpu;
          rss = j.rss;
        }
      }
      done({ wall, cpu, rss });
    });
  });
}

/** The CLI once with its stdout captured (summary --json for the trace's description). */
function captureJson(args: string[]): unknown {
  const r = spawnSync(process.execPath, [CLI, ...args], { encoding: 'utf8', maxBuffer: 256 * MiB });
  if (r.status !== 0) throw new Error(`etw-decode ${args.join(' ')} failed (${r.status}): ${r.stderr.slice(-400)}`);
  return JSON.parse(r.stdout);
}

function describe(s: RatesInput, bytes: number): string {
  const mib = bytes / MiB;
  const count = (pred: (k: RatesInput['eventsByKind'][number]) => boolean) => s.eventsByKind.filter(pred).reduce((n, k) => n + k.count, 0);
  const thread = count((k) => k.name === 'Thread/Start' || k.name === 'Thread/End' || k.name === 'Thread/SetName');
  const samples = count((k) => k.hookId === 0x0f2e && k.headerType.startsWith('PERFINFO'));
  const providers = s.eventsByKind.filter((k) => k.headerType.startsWith('EVENT_HEADER'));
  const per = (n: number) => (n / mib).toFixed(0);
  return (
    `${(s.events / 1e6).toFixed(2)} M events (${per(s.events)}/MiB), ${per(s.cswitch)} switches, ${per(s.readythread)} ReadyThread, ` +
    `${per(thread)} Thread Start/End/SetName, ${per(samples)} SampledProfile, ${per(providers.reduce((n, k) => n + k.count, 0))} provider events ` +
    `(${providers.length} kinds), ${per(s.spinlock)} SpinLock per MiB; ${s.threads} thread and ${s.processes} process lifetimes`
  );
}

function jobResult(id: string, label: string, runs: Run[], bytes: number, rounds: Map<string, number>[], native: boolean): JobResult {
  const seconds = median(runs.map((r) => r.wall));
  const cpus = runs.map((r) => r.cpu).filter((x): x is number => x !== null);
  const rss = runs.map((r) => r.rss).filter((x): x is number => x !== null);
  const ratio = (base: string) => {
    const xs = rounds.filter((r) => r.has(id) && r.has(base)).map((r) => r.get(id)! / r.get(base)!);
    return xs.length ? median(xs) : null;
  };
  const outs = runs.map((r) => r.outBytes).filter((x): x is number => x !== undefined);
  return {
    id,
    label,
    runs,
    seconds,
    cpu: cpus.length ? median(cpus) : null,
    peakRss: rss.length ? Math.max(...rss) : null,
    xSummary: ratio('summary'),
    xNative: native ? ratio('native') : null,
    mbPerS: bytes / 1e6 / seconds,
    outBytes: outs.length ? median(outs) : null,
  };
}

async function measureTrace(trace: Trace, o: { runs: number; commands: string[]; nativeExe: string | null; cold: boolean; rates: boolean }): Promise<TraceResult> {
  const notes: string[] = [];
  const file = trace.path;
  log(`${trace.name}: ${file} (${(trace.bytes / MiB).toFixed(0)} MiB)`);
  // warm the page cache (and the kernel's caches) once, and describe the trace
  spawnSync('cat', [file], { stdio: 'ignore' });
  const s = captureJson(['summary', file, '--json']) as RatesInput & { diagnostics: Record<string, number> };
  const description = describe(s, trace.bytes);
  log(`  ${description}`);

  const selected = COMMANDS.filter((c) => c.id === 'summary' || o.commands.includes(c.id));
  const jobs: string[] = [...selected.map((c) => c.id)];
  if (o.nativeExe) jobs.splice(1, 0, 'native');
  const runs = new Map<string, Run[]>(jobs.map((j) => [j, []]));
  const rounds: Map<string, number>[] = [];
  for (let r = 0; r < o.runs; r++) {
    const k = r % jobs.length;
    const order = [...jobs.slice(k), ...jobs.slice(0, k)];
    const round = new Map<string, number>();
    for (const id of order) {
      let run: Run;
      if (id === 'native') run = await timed(o.nativeExe!, [file, '--window-mb', '8'], false);
      else {
        const c = COMMANDS.find((x) => x.id === id)!;
        const out = c.writesDir ? mkdtempSync(join(os.tmpdir(), 'etw-e2e-out-')) : '';
        try {
          run = await timed(process.execPath, [CLI, ...c.args(file, out)], true);
          if (c.writesDir) run.outBytes = dirBytes(out);
        } finally {
          if (out) rmSync(out, { recursive: true, force: true });
        }
      }
      runs.get(id)!.push(run);
      round.set(id, run.wall);
      log(`  round ${r + 1}/${o.runs} ${id}: ${run.wall.toFixed(3)} s${run.rss !== null ? `, ${(run.rss / MiB).toFixed(0)} MiB` : ''}`);
    }
    rounds.push(round);
  }
  const results = jobs.map((id) =>
    jobResult(id, id === 'native' ? 'native cdecode --window-mb 8' : COMMANDS.find((c) => c.id === id)!.label, runs.get(id)!, trace.bytes, rounds, o.nativeExe !== null),
  );

  let memory: MemoryResult | null = null;
  if (o.commands.includes('memory')) {
    log('  memory: decodeFile in a process of its own');
    const r = spawnSync(process.execPath, ['--expose-gc', MEMORY, file, '--json'], { encoding: 'utf8', maxBuffer: 64 * MiB });
    if (r.status === 0) memory = JSON.parse(r.stdout) as MemoryResult;
    else notes.push(`memory: failed (${r.status}): ${r.stderr.slice(-300)}`);
  }

  let cold: TraceResult['cold'] = null;
  if (o.cold) {
    if (!dropFromCache(file)) notes.push('cold runs skipped: cannot drop the file from the page cache here (Linux with GNU dd needed)');
    else {
      cold = { read: [], summary: [] };
      for (let i = 0; i < Math.min(o.runs, 3); i++) {
        const cached = (what: string) => {
          const left = residentBytes(file);
          if (left !== null && left > trace.bytes / 100) notes.push(`cold ${i + 1}, ${what}: ${(left / MiB).toFixed(0)} MiB of the file were still in the page cache`);
        };
        dropFromCache(file);
        cached('read');
        cold.read.push(await timed('cat', [file], false));
        dropFromCache(file);
        cached('summary');
        cold.summary.push(await timed(process.execPath, [CLI, 'summary', file, '--json'], true));
      }
    }
  }
  return { trace, description, rates: o.rates ? rateRows(s, trace.bytes) : null, jobs: results, memory, cold, notes };
}

function reportTrace(t: TraceResult): string {
  const x = (v: number | null) => (v === null ? '-' : `${v.toFixed(2)}×`);
  const rows = t.jobs.map((j) => [
    j.label,
    j.seconds.toFixed(3),
    j.cpu === null ? '-' : j.cpu.toFixed(2),
    x(j.xSummary),
    x(j.xNative),
    j.mbPerS.toFixed(0),
    j.peakRss === null ? '-' : (j.peakRss / MiB).toFixed(0),
    j.outBytes === null ? '' : (j.outBytes / 1e6).toFixed(0),
    j.runs.map((r) => r.wall.toFixed(2)).join(' '),
  ]);
  const out = [
    '',
    `== ${t.trace.name}: ${t.trace.path} (${(t.trace.bytes / MiB).toFixed(0)} MiB)`,
    t.description,
    '',
    textTable(['command', 'median s', 'CPU s', '× summary', '× native', 'MB/s', 'peak RSS MiB', 'out MB', 'runs (wall s)'], rows, 1, true),
  ];
  if (t.rates) out.push('', textTable(RATE_HEADER, t.rates, 1));
  if (t.memory) out.push('', 'memory of a decodeFile result, per table:', memoryText(t.memory));
  if (t.cold) {
    const r = median(t.cold.read.map((x) => x.wall));
    const s = median(t.cold.summary.map((x) => x.wall));
    out.push('', `cold page cache: plain read (cat) ${r.toFixed(3)} s, summary --json ${s.toFixed(3)} s: summary at ${((100 * r) / s).toFixed(0)} % of the read's MB/s`);
  }
  if (t.notes.length) out.push('', 'notes:', ...t.notes.map((n) => `  ${n}`));
  return out.join('\n');
}

async function main(): Promise<number> {
  const { values, positionals } = parseArgs({
    allowPositionals: true,
    options: {
      traces: { type: 'string', default: 'realistic,mixed' },
      bytes: { type: 'string' },
      'realistic-bytes': { type: 'string', default: '300MiB' },
      'mixed-bytes': { type: 'string', default: '516MiB' },
      commands: { type: 'string', default: ALL_COMMANDS.join(',') },
      runs: { type: 'string', default: '3' },
      'no-native': { type: 'boolean', default: false },
      cold: { type: 'boolean', default: false },
      rates: { type: 'boolean', default: false },
      keep: { type: 'boolean', default: false },
      out: { type: 'string' },
    },
  });
  const runs = Math.max(1, Math.trunc(Number(values.runs)));
  const commands = values.commands!.split(',').map((c) => c.trim()).filter(Boolean);
  for (const c of commands) if (!ALL_COMMANDS.includes(c)) throw new Error(`--commands: ${c} is not one of ${ALL_COMMANDS.join(', ')}`);
  const machine = machineInfo();
  const git = gitInfo(ROOT);
  log(`etw-decode end to end: ${describeMachine(machine)}; git ${git.commit ?? '?'}${git.dirty ? ' + uncommitted changes' : ''}`);
  if (!existsSync(join(ROOT, 'dist', 'cli', 'main.js'))) throw new Error('dist/cli/main.js is missing: run npm run build first');
  if (GNU_TIME === '' || !existsSync(GNU_TIME)) log(`/usr/bin/time is missing or not used (Debian: apt-get install -y time): peak RSS and CPU seconds come from the commands themselves`);

  const traces: Trace[] = [];
  if (positionals.length) {
    for (const p of positionals) traces.push({ name: 'file', path: resolve(p), bytes: statSync(resolve(p)).size, generated: false });
  } else {
    for (const name of values.traces!.split(',').map((t) => t.trim())) {
      if (name !== 'realistic' && name !== 'mixed') throw new Error(`--traces: ${name} is not realistic or mixed`);
      const target = parseSize(values.bytes ?? (name === 'realistic' ? values['realistic-bytes']! : values['mixed-bytes']!));
      const path = join(os.tmpdir(), `etw-decode-e2e-${process.pid}-${name}.etl`);
      log(`writing the ${name} trace of ${(target / MiB).toFixed(0)} MiB to ${path} …`);
      writeChunks(path, name === 'realistic' ? generateRealisticTraceChunks({ seed: SEED, targetBytes: target, cpus: 4 }) : generateTraceChunks({ seed: SEED, targetBytes: target, cpus: 4, mix: MIX }));
      traces.push({ name, path, bytes: statSync(path).size, generated: true });
    }
  }
  const native = values['no-native'] ? { skipped: '--no-native' } : buildNative(ROOT);
  const globalNotes: string[] = [];
  if ('skipped' in native) globalNotes.push(`native decoder not run: ${native.skipped}`);
  const results: TraceResult[] = [];
  try {
    for (const t of traces) {
      results.push(await measureTrace(t, { runs, commands, nativeExe: 'exe' in native ? native.exe : null, cold: values.cold!, rates: values.rates! }));
    }
  } finally {
    if ('exe' in native) native.dispose();
    if (!values.keep) for (const t of traces) if (t.generated) rmSync(t.path, { force: true });
  }

  const out = [`machine: ${describeMachine(machine)}, load average ${os.loadavg().map((x) => x.toFixed(2)).join(' ')}; ${runs} rounds`];
  for (const r of results) out.push(reportTrace(r));
  if (globalNotes.length) out.push('', 'notes:', ...globalNotes.map((n) => `  ${n}`));
  if (values.keep) out.push('', `kept: ${traces.filter((t) => t.generated).map((t) => t.path).join(', ')}`);
  console.log(out.join('\n'));

  const result = { schema: 2, kind: 'e2e', date: new Date().toISOString(), machine, git, runs, commands, traces: results, notes: globalNotes };
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
