// etw-decode benchmarks: `npm run bench -- [regex …] [--quick] [--engine wasm|reference]
//                                        [--compare BASELINE.json] [--threshold 15] [--out FILE]`
// Runs the named cases of cases.ts (each on both engines, tinybench, seeded in-memory fixtures) and the
// scale case of scale.ts, prints one table plus machine info, writes the results as JSON and optionally
// compares them with a baseline (exit code 1 when a case is slower by more than the threshold).
// See bench/README.md.
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { Bench } from 'tinybench';
import { CASES, CASE_NAMES, ENGINES, SCALE_CASE, SCALE_DESCRIPTION, type BenchCase, type EngineName } from './cases.js';
import { compareResults, DEFAULT_THRESHOLD, readResults } from './compare.js';
import { describeMachine, gitInfo, machineInfo } from './machine.js';
import { buildNative, runNativeBytes, type NativeDecoder } from './native.js';
import { nativeRatiosOf, ratiosOf, resultsTable, scaleTable, type CaseResult, type ResultFile } from './report.js';
import { GIB, runScale } from './scale.js';
import { PARALLEL_CASE, PARALLEL_DESCRIPTION, parallelTable, runParallel, type ParallelResult } from './parallel.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const RESULTS_DIR = join(ROOT, 'bench', 'results');

const USAGE = `usage: npm run bench -- [regex …] [options]

  regex …              run only the cases whose name matches one of the regexes (case-insensitive)
  --quick              small fixtures, short runs, no scale case (well under a minute)
  --engine E           only wasm or only reference (ratios need both)
  --compare FILE       compare with a baseline result file; exit 1 if a case is slower by more than the threshold
  --threshold PCT      regression threshold in percent (default ${DEFAULT_THRESHOLD})
  --out FILE           also write the results to FILE (e.g. bench/baseline.json)
  --time MS            time budget per case and engine (default 3000, quick 500)
  --scale-bytes N      minimum size of the scale trace (default 1 GiB; accepts 512MiB, 2GiB, …)
  --rounds N           alternating rounds of the parallel case (default 5)
  --threads LIST       thread counts of the parallel case, the first the baseline (default 1,2)
  --trace FILE         the parallel case decodes FILE instead of writing its trace
  --list               list the cases and exit
  --no-native          do not build and run the native C decoder (../shared/bench/cdecode.c) next to the cases

The native decoder runs when gcc and cdecode.c are there (ETW_BENCH_NATIVE=0 turns it off, CC and
ETW_BENCH_NATIVE_CFLAGS choose the compiler and its flags, default -O2): on the bytes of every walk/decode/
tables case, its decode_s printed as the 'native' engine and the ratio wasm time / native time per case.

cases: ${[...CASE_NAMES, PARALLEL_CASE].join(', ')}`;

function parseSize(text: string): number {
  const m = /^(\d+(?:\.\d+)?)\s*(k|m|g)?i?b?$/i.exec(text.trim());
  if (!m) throw new Error(`--scale-bytes: cannot parse ${text}`);
  const unit = { k: 2 ** 10, m: 2 ** 20, g: 2 ** 30 }[(m[2] ?? '').toLowerCase() as 'k' | 'm' | 'g'] ?? 1;
  return Math.round(Number(m[1]) * unit);
}

const log = (line: string) => process.stderr.write(line + '\n');

async function main(): Promise<number> {
  const { values, positionals } = parseArgs({
    allowPositionals: true,
    options: {
      quick: { type: 'boolean', default: false },
      engine: { type: 'string' },
      compare: { type: 'string' },
      threshold: { type: 'string' },
      out: { type: 'string' },
      time: { type: 'string' },
      'scale-bytes': { type: 'string' },
      rounds: { type: 'string' },
      threads: { type: 'string' },
      trace: { type: 'string' },
      list: { type: 'boolean', default: false },
      'no-native': { type: 'boolean', default: false },
      help: { type: 'boolean', short: 'h', default: false },
    },
  });
  if (values.help) {
    console.log(USAGE);
    return 0;
  }
  if (values.list) {
    for (const c of CASES) console.log(`${c.name.padEnd(22)} ${c.description}`);
    console.log(`${SCALE_CASE.padEnd(22)} ${SCALE_DESCRIPTION} (not in --quick)`);
    console.log(`${PARALLEL_CASE.padEnd(22)} ${PARALLEL_DESCRIPTION} (not in --quick)`);
    return 0;
  }
  const engines: readonly EngineName[] =
    values.engine === undefined ? ENGINES : values.engine === 'wasm' || values.engine === 'reference' ? [values.engine] : [];
  if (!engines.length) throw new Error(`--engine: expected wasm or reference, got ${values.engine}`);
  const threshold = values.threshold === undefined ? DEFAULT_THRESHOLD : Number(values.threshold);
  if (!(threshold > 0)) throw new Error(`--threshold: expected a positive percentage, got ${values.threshold}`);
  const baseline = values.compare ? readResults(resolve(values.compare)) : null; // fail early on a bad path

  const quick = values.quick!;
  const filters = positionals.map((p) => new RegExp(p, 'i'));
  const selected = (name: string) => filters.length === 0 || filters.some((r) => r.test(name));
  const cases = CASES.filter((c) => selected(c.name));
  const runScaleCase = !quick && selected(SCALE_CASE);
  const runParallelCase = !quick && selected(PARALLEL_CASE);
  if (!cases.length && !runScaleCase && !runParallelCase) {
    console.error(`no case matches ${positionals.join(' ')}${quick && selected(SCALE_CASE) ? ' (the scale case is skipped in --quick)' : ''}\n\n${USAGE}`);
    return 2;
  }
  const settings = {
    fixtureBytes: quick ? 8 << 20 : 32 << 20,
    timeMs: values.time ? Number(values.time) : quick ? 500 : 3000,
    iterations: quick ? 3 : 5,
    warmupMs: quick ? 100 : 500,
  };
  const machine = machineInfo();
  const git = gitInfo(ROOT);
  log(`etw-decode bench${quick ? ' (quick)' : ''}: ${describeMachine(machine)}`);
  log(`git ${git.commit ?? '?'}${git.dirty ? ' + uncommitted changes' : ''}; fixtures ${settings.fixtureBytes / 2 ** 20} MiB, ${settings.timeMs} ms per case and engine`);

  const results: CaseResult[] = [];
  const notes: string[] = [];
  const wantsNative = !values['no-native'] && engines.includes('wasm') && cases.some((c) => NATIVE_GROUPS.has(c.group));
  const built = wantsNative ? buildNative(ROOT) : null;
  const native = built && 'exe' in built ? built : null;
  if (built && 'skipped' in built) {
    notes.push(`native: not run: ${built.skipped}`);
    log(`native decoder: not run (${built.skipped})`);
  } else if (native) log(`native decoder: ${native.source} built with gcc ${native.flags.join(' ')}`);
  try {
    for (const c of cases) {
      const r = await runCase(c, engines, settings, notes, native);
      results.push(...r);
    }
  } finally {
    native?.dispose();
  }
  let scale: ResultFile['scale'];
  if (runScaleCase) {
    const minBytes = values['scale-bytes'] ? parseSize(values['scale-bytes']) : GIB;
    if (minBytes < GIB) notes.push(`${SCALE_CASE}: run with --scale-bytes ${minBytes} (below 1 GiB)`);
    scale = await runScale({ minBytes, engines, log });
    for (const j of scale.jobs) {
      results.push({
        name: SCALE_CASE,
        group: 'scale',
        engine: j.engine,
        inputBytes: j.bytes,
        outputBytes: 0,
        throughputOf: 'input',
        events: j.events ?? 0,
        rows: j.rows ?? 0,
        latencyMs: { p50: j.seconds * 1000, mean: j.seconds * 1000, min: j.seconds * 1000, max: j.seconds * 1000, rme: 0 },
        samples: 1,
        mbPerS: j.mbPerS,
        meventsPerS: (j.events ?? 0) / 1e6 / j.seconds,
        mrowsPerS: (j.rows ?? 0) / 1e6 / j.seconds,
        nsPerEvent: j.events ? (j.seconds * 1e9) / j.events : 0,
        nsPerRow: j.rows ? (j.seconds * 1e9) / j.rows : 0,
        peakRssBytes: j.peakRssBytes,
        rssStartBytes: j.rssStartBytes,
      });
    }
  }

  let parallel: ParallelResult | undefined;
  if (runParallelCase) {
    const minBytes = values['scale-bytes'] ? parseSize(values['scale-bytes']) : GIB;
    const threads = (values.threads ?? '1,2').split(',').map(Number);
    if (threads.some((t) => !Number.isInteger(t) || t < 1)) throw new Error(`--threads: expected a list of thread counts, got ${values.threads}`);
    const rounds = values.rounds === undefined ? 5 : Number(values.rounds);
    if (!Number.isInteger(rounds) || rounds < 1) throw new Error(`--rounds: expected a whole number, got ${values.rounds}`);
    // the native decoder again (the cases' build is gone): the machine's own scaling, for comparison
    const nativeBuilt = values['no-native'] ? null : buildNative(ROOT);
    const nativeExe = nativeBuilt && 'exe' in nativeBuilt ? nativeBuilt : null;
    try {
      parallel = await runParallel({ minBytes, threads, rounds, file: values.trace, log, nativeExe: nativeExe?.exe });
    } finally {
      nativeExe?.dispose();
    }
    for (const s of parallel.summaries.filter((x) => x.kind === 'library')) {
      const seconds = s.median;
      results.push({
        name: PARALLEL_CASE,
        group: 'scale',
        engine: `wasm threads=${s.threads}`,
        inputBytes: parallel.file.bytes,
        outputBytes: 0,
        throughputOf: 'input',
        events: parallel.jobs.find((j) => j.events)?.events ?? 0,
        rows: 0,
        latencyMs: { p50: seconds * 1000, mean: seconds * 1000, min: s.min * 1000, max: s.max * 1000, rme: 0 },
        samples: rounds,
        mbPerS: parallel.file.bytes / 1e6 / seconds,
        meventsPerS: (parallel.jobs.find((j) => j.events)?.events ?? 0) / 1e6 / seconds,
        mrowsPerS: 0,
        nsPerEvent: 0,
        nsPerRow: 0,
        peakRssBytes: s.maxRssBytes,
      });
    }
  }

  const ratios = ratiosOf(results);
  const nativeRatios = nativeRatiosOf(results);
  const file: ResultFile = {
    schema: 1,
    date: new Date().toISOString(),
    quick,
    filter: positionals,
    machine,
    git,
    settings,
    cases: results,
    ratios,
    nativeRatios,
    native: native ? { source: native.source, flags: native.flags } : built && 'skipped' in built ? { skipped: built.skipped } : undefined,
    scale,
    parallel,
    notes,
  };

  // the report
  const inMemory = results.filter((r) => r.group !== 'scale');
  const out: string[] = [];
  out.push('', `machine: ${describeMachine(machine)}`, `code:    git ${git.commit ?? '?'}${git.dirty ? ' + uncommitted changes' : ''}`, '');
  if (inMemory.length) {
    out.push(resultsTable(inMemory, ratios, nativeRatios));
    out.push(
      '',
      'MB/s = 10^6 bytes/s of trace input from the median iteration (xpress: of decompressed output, "out"); ±% = relative margin of error of the mean.',
    );
    if (Object.keys(nativeRatios).length) {
      out.push(
        "native = cdecode.c on the same bytes, --window-mb 8: median over 3 processes of each one's best decode_s of 5 (n = processes); " +
          'wasm time/native = wasm median ms ÷ native decode_s (1.00× = native speed); best/best = the fastest wasm iteration ÷ the fastest native decode (steadier on a busy machine).',
      );
    }
  }
  const scaleRows = results.filter((r) => r.group === 'scale' && r.name !== PARALLEL_CASE);
  if (scaleRows.length) out.push('', scaleTable(scaleRows));
  if (parallel) out.push('', parallelTable(parallel));
  out.push('', ...targets(results, ratios, quick));
  if (notes.length) out.push('', 'notes:', ...notes.map((n) => `  ${n}`));
  console.log(out.join('\n'));

  mkdirSync(RESULTS_DIR, { recursive: true });
  const stamp = file.date.replace(/[:.]/g, '-');
  const written = [join(RESULTS_DIR, `${stamp}.local.json`), join(RESULTS_DIR, 'latest.local.json')];
  if (values.out) written.push(resolve(values.out));
  for (const p of written) {
    mkdirSync(dirname(p), { recursive: true });
    writeFileSync(p, JSON.stringify(file, null, 2) + '\n');
  }
  console.log(`\nresults: ${written.map((p) => p.replace(ROOT, '')).join(', ')}`);

  if (baseline) {
    const cmp = compareResults(baseline, file, threshold);
    console.log(`\ncomparison with ${values.compare}:\n${cmp.text}`);
    if (cmp.regressions.length) return 1;
  }
  return 0;
}

interface Settings {
  fixtureBytes: number;
  timeMs: number;
  iterations: number;
  warmupMs: number;
}

/** groups whose cases the native decoder can do too (walk and decode the same trace bytes) */
const NATIVE_GROUPS = new Set(['walk', 'decode', 'tables']);

async function runCase(c: BenchCase, engines: readonly EngineName[], s: Settings, notes: string[], native: NativeDecoder | null): Promise<CaseResult[]> {
  const t0 = performance.now();
  const prepared = c.prepare({ fixtureBytes: s.fixtureBytes, root: ROOT });
  if ('skipped' in prepared) {
    notes.push(`${c.name}: skipped: ${prepared.skipped}`);
    log(`${c.name}: skipped (${prepared.skipped})`);
    return [];
  }
  notes.push(...prepared.notes);
  const gc = (globalThis as { gc?: () => void }).gc;
  const bench = new Bench({
    name: c.name,
    time: s.timeMs,
    iterations: s.iterations,
    warmupTime: s.warmupMs,
    warmupIterations: 1,
    throws: true,
    setup: () => gc?.(),
  });
  // (a collection before every iteration was tried: it shrinks the young generation and slows the
  // allocation-heavy reference by up to 3×, so only one per task, in `setup`)
  for (const e of engines) bench.add(e, prepared.run[e]);
  try {
    await bench.run();
  } finally {
    prepared.cleanup?.();
  }
  const w = prepared.work;
  const out: CaseResult[] = [];
  for (const task of bench.tasks) {
    const r = task.result;
    if (r.state !== 'completed' && r.state !== 'aborted-with-statistics') throw new Error(`${c.name} [${task.name}]: ${r.state}`);
    const p50 = r.latency.p50;
    const sec = p50 / 1000;
    const bytes = w.throughputOf === 'output' ? w.outputBytes : w.inputBytes;
    out.push({
      name: c.name,
      group: c.group,
      engine: task.name as EngineName,
      inputBytes: w.inputBytes,
      outputBytes: w.outputBytes,
      throughputOf: w.throughputOf,
      events: w.events,
      rows: w.rows,
      latencyMs: { p50, mean: r.latency.mean, min: r.latency.min, max: r.latency.max, rme: r.latency.rme },
      samples: r.latency.samplesCount,
      mbPerS: bytes / 1e6 / sec,
      meventsPerS: w.events / 1e6 / sec,
      mrowsPerS: w.rows / 1e6 / sec,
      nsPerEvent: w.events ? (sec * 1e9) / w.events : 0,
      nsPerRow: w.rows ? (sec * 1e9) / w.rows : 0,
    });
  }
  if (native && prepared.nativeInput && NATIVE_GROUPS.has(c.group) && engines.includes('wasm')) {
    const n = runNativeBytes(native, c.name, prepared.nativeInput);
    const sec = n.decodeSeconds;
    if (n.events !== w.events) notes.push(`${c.name}: the native decoder walked ${n.events} events, etw-decode ${w.events}`);
    if (n.problems) notes.push(`${c.name}: the native decoder reported ${n.problems} problems`);
    out.push({
      name: c.name,
      group: c.group,
      engine: 'native',
      inputBytes: w.inputBytes,
      outputBytes: 0,
      throughputOf: 'input',
      events: n.events,
      rows: n.rows,
      latencyMs: { p50: sec * 1000, mean: sec * 1000, min: Math.min(...n.samples) * 1000, max: Math.max(...n.samples) * 1000, rme: 0 },
      samples: n.samples.length,
      mbPerS: w.inputBytes / 1e6 / sec,
      meventsPerS: n.events / 1e6 / sec,
      mrowsPerS: n.rows / 1e6 / sec,
      nsPerEvent: n.events ? (sec * 1e9) / n.events : 0,
      nsPerRow: n.rows ? (sec * 1e9) / n.rows : 0,
    });
  }
  const summary = out.map((o) => `${o.engine} ${o.mbPerS.toFixed(1)} MB/s`).join(', ');
  log(`${c.name}: ${summary} (${((performance.now() - t0) / 1000).toFixed(1)} s)`);
  return out;
}

/** The performance targets (reported, never asserted). */
function targets(results: readonly CaseResult[], ratios: Record<string, number>, quick: boolean): string[] {
  const out = [quick ? 'targets (quick run, small fixtures: indicative only, judge them on a full run):' : 'targets:'];
  const mark = (ok: boolean) => (ok ? 'met   ' : 'MISSED');
  for (const name of ['decode/compact', 'decode/mixed']) {
    const r = ratios[name];
    out.push(r === undefined ? `  -       ${name}: wasm ≥ 2.5× reference (not measured)` : `  ${mark(r >= 2.5)}  ${name}: wasm ≥ 2.5× reference: ${r.toFixed(2)}×`);
  }
  const blobNet = ratios['blob/perfview-net'];
  out.push(
    blobNet === undefined
      ? '  -       blob/perfview-net: a Blob within 2× of the bytes in memory (not measured)'
      : `  ${mark(blobNet >= 0.5)}  blob/perfview-net: a Blob within 2× of the bytes in memory: ${(1 / blobNet).toFixed(2)}× the in-memory time`,
  );
  const lifetimes = results.find((r) => r.name === 'derive/lifetimes' && r.engine === 'wasm');
  out.push(
    lifetimes
      ? `  ${mark(1000 / lifetimes.meventsPerS <= 50)}  derive/lifetimes: ≤ 50 ns per Thread/Process event: ${(1000 / lifetimes.meventsPerS).toFixed(1)} ns`
      : '  -       derive/lifetimes: ≤ 50 ns per Thread/Process event (not measured)',
  );
  for (const r of results.filter((x) => x.group === 'format' && x.engine === 'wasm')) {
    out.push(`  ${mark(r.mbPerS >= 100)}  ${r.name}: ≥ 100 MB/s of output (every table; per table in the notes): ${r.mbPerS.toFixed(0)} MB/s`);
  }
  const find = (engine: string) => results.find((r) => r.name === SCALE_CASE && r.engine === engine);
  const dec = find('wasm');
  const read = find('read-only');
  const decCold = find('wasm cold');
  const readCold = find('read-only cold');
  if (dec && read) {
    if (decCold && readCold) {
      const share = decCold.mbPerS / readCold.mbPerS;
      out.push(
        `  ${mark(share >= 0.8)}  ${SCALE_CASE}: whole-file decode limited by reading the file (from the disk: decode ≥ 80 % of plain-read MB/s): ` +
          `decode ${decCold.mbPerS.toFixed(0)} MB/s = ${(100 * share).toFixed(0)} % of read ${readCold.mbPerS.toFixed(0)} MB/s`,
      );
    }
    const share = dec.mbPerS / read.mbPerS;
    out.push(
      `  ${mark(share >= 0.8)}  ${SCALE_CASE}: the same with the file in the page cache: ` +
        `decode ${dec.mbPerS.toFixed(0)} MB/s = ${(100 * share).toFixed(0)} % of read ${read.mbPerS.toFixed(0)} MB/s`,
    );
    const blob = find('wasm blob');
    if (blob) {
      const slower = dec.mbPerS / blob.mbPerS;
      out.push(`  ${mark(slower <= 1.5)}  ${SCALE_CASE}: from a Blob (fs.openAsBlob) within 1.5× of the file path: ${slower.toFixed(2)}× its time`);
    }
    const rss = dec.peakRssBytes ?? 0;
    out.push(
      `  ${mark(rss < dec.inputBytes / 4)}  ${SCALE_CASE}: peak RSS bounded (< 25 % of the file): ` +
        `${(rss / 2 ** 20).toFixed(0)} MiB for a ${(dec.inputBytes / 2 ** 30).toFixed(2)} GiB file`,
    );
  } else out.push(`  -       ${SCALE_CASE}: not run`);
  return out;
}

main().then(
  (code) => process.exit(code),
  (e: unknown) => {
    console.error(e instanceof Error ? (e.stack ?? e.message) : String(e));
    process.exit(2);
  },
);
