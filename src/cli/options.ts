// The command line's options, each declared once with its parser and help text (`option.x()` makes a
// fresh commander Option: commands pick the ones they take), and what the decoding options ask of the
// decode (decodeOptions). Where a command gives an option its own meaning (`--top` of spin locks has no
// "0 = all", convert's `--threads` spreads files too), the declaration takes it as a parameter.
import { InvalidArgumentError, Option, type Command } from 'commander';
import type { DecodeOptions } from '../options.js';
import type { SelectionOptions } from '../select/selection.js';
import { parseTimeSpec } from '../time.js';
import { AUTO_MIN_BYTES, AUTO_MIN_BYTES_ROWS } from '../parallel/run.js';
import { TABLE_NAMES, type TableName } from '../tables/schema.js';

// ---- parsers (commander calls them with the option's text; InvalidArgumentError is a usage error, exit 2)

/** a whole number, 0 included; `zero`: what 0 means */
const parseCount =
  (zero: string) =>
  (v: string): number => {
    const n = Number(v);
    if (!Number.isInteger(n) || n < 0) throw new InvalidArgumentError(`expected a whole number (0 = ${zero})`);
    return n;
  };

/** digits only, at least 1 */
function parsePositive(v: string): number {
  const n = Number(v);
  if (!/^\d+$/.test(v) || !Number.isSafeInteger(n) || n < 1) throw new InvalidArgumentError('expected a positive integer');
  return n;
}

function parseBias(v: string): number {
  const n = Number(v);
  if (!Number.isInteger(n) || n < 1 || n > 63) throw new InvalidArgumentError('expected an integer MaximumWaitReason in 1..63 (e.g. 40 for Windows 10 2004+)');
  return n;
}

function parseThreads(v: string): number {
  const n = Number(v);
  if (!Number.isInteger(n) || n < 1 || n > 1024) throw new InvalidArgumentError('expected a whole number of threads from 1 to 1024');
  return n;
}

/** --table accepts the registry names and a few spellings people type (cpu-usage). */
function tableAlias(v: string): string {
  const alias: Record<string, string> = { 'cpu-usage': 'cpuUsage', cpuusage: 'cpuUsage', 'thread-states': 'threadStates', threadstates: 'threadStates', 'thread-events': 'threadEvents', 'process-events': 'processEvents' };
  const name = alias[v.toLowerCase()] ?? v;
  if (![...TABLE_NAMES, 'events'].includes(name)) {
    throw new InvalidArgumentError(`Allowed choices are ${[...TABLE_NAMES, 'events'].join(', ')}.`);
  }
  return name;
}

function parseTables(v: string): TableName[] {
  const names = v.split(',').map((s) => s.trim()).filter(Boolean);
  for (const n of names) {
    if (!(TABLE_NAMES as readonly string[]).includes(n)) throw new InvalidArgumentError(`unknown table '${n}' (tables: ${TABLE_NAMES.join(', ')})`);
  }
  return names as TableName[];
}

/** 805306368 -> '768 MiB', 2147483648 -> '2 GiB' */
const sizeText = (bytes: number): string => (bytes >= 2 ** 30 && bytes % 2 ** 30 === 0 ? `${bytes / 2 ** 30} GiB` : `${bytes / 2 ** 20} MiB`);

/** a time of --from/--to, checked now (converted with the trace's clock later) */
function parseTime(v: string): string {
  try {
    parseTimeSpec(v);
  } catch (e) {
    throw new InvalidArgumentError(e instanceof Error ? e.message.replace(/^time \S+: /, '') : String(e));
  }
  return v;
}

/** comma-separated ids (0 to 4294967295), 0x for hex */
function parseIds(v: string): number[] {
  return v.split(',').map((x) => {
    const t = x.trim();
    const n = /^(0x[0-9a-f]+|\d+)$/i.test(t) ? Number(t) : NaN;
    if (!Number.isSafeInteger(n) || n > 0xffffffff) throw new InvalidArgumentError(`expected comma-separated ids (decimal or 0x hex), got '${t}'`);
    return n;
  });
}

function parseNames(v: string): string[] {
  const names = v.split(',').map((x) => x.trim()).filter(Boolean);
  if (!names.length) throw new InvalidArgumentError('expected comma-separated image names, e.g. chrome.exe,svchost');
  return names;
}

// ---- the options

const DECODE_THREADS_HELP = `decoding threads (1 = one thread; inputs under 32 MiB use one; default: all cores for files where they pay — ${sizeText(AUTO_MIN_BYTES)} and more for summary, ${sizeText(AUTO_MIN_BYTES_ROWS)} for rows — else one)`;

const SIZE_UNITS: Record<string, number> = { '': 1, k: 2 ** 10, m: 2 ** 20, g: 2 ** 30, t: 2 ** 40 };

/** `--max-spool` values: bytes, or a number with K, M, G, T (binary: 1K = 1024), optionally followed by B or iB. */
export function parseSize(v: string): number {
  const m = /^(\d+(?:\.\d+)?)\s*([kmgt]?)(?:i?b)?$/i.exec(v.trim());
  const n = m ? Math.floor(Number(m[1]) * SIZE_UNITS[m[2]!.toLowerCase()]!) : NaN;
  if (!Number.isSafeInteger(n) || n < 1) throw new InvalidArgumentError('expected a size in bytes of at least 1, or with a unit: 64K, 512M, 4G (1K = 1024)');
  return n;
}

export const option = {
  // decoding (every command)
  engine: () => new Option('--engine <engine>', 'decoder to use (reference: the pure-TypeScript twins of the decoder and of the cpuUsage and threadStates derivations)').choices(['wasm', 'reference']).default('wasm'),
  bias: () => new Option('--bias <n>', 'MaximumWaitReason used to decode compact OldThreadStateWr (default: from the trace build)').argParser(parseBias),
  /** `help`: what the threads do where a command uses them for more than one decode (convert) */
  threads: (help = DECODE_THREADS_HELP) => new Option('--threads <n>', help).argParser(parseThreads),
  progress: () => new Option('--progress', 'show progress on stderr (default: when stderr is a terminal)'),
  noProgress: () => new Option('--no-progress', 'never show progress'),
  maxSpool: () =>
    new Option('--max-spool <size>', 'refuse a stream (- or a FIFO) larger than this: it is copied to a temporary file first (e.g. 512M, 4G; default: no limit)').argParser(parseSize),

  // what is shown
  /** `detail`: how the object writes what JSON cannot hold (64-bit values) */
  json: (detail?: string) => new Option('--json', detail ? `print one JSON object (${detail})` : 'print one JSON object'),
  /** `zeroShowsAll`: 0 is "all rows" (else the least is 1) */
  top: (help: string, zeroShowsAll: boolean) => new Option('--top <n>', help).argParser(zeroShowsAll ? parseCount('all rows') : parsePositive).default(20),
  by: <T extends string>(placeholder: string, help: string, choices: readonly [T, ...T[]]) =>
    new Option(`--by <${placeholder}>`, help).choices(choices).default(choices[0]),
  worst: () => new Option('--worst <n>', 'also list the N longest ready delays of the trace: who waited, on which cpu, when, readied by whom').argParser(parseCount('none')).default(0),
  waits: () => new Option('--waits', "blocked time by the stack where threads waited and by the stack of the thread that readied them (PerfView's Thread Time with ReadyThread; needs CSwitch and ReadyThread stacks)"),
  sampled: () => new Option('--sampled', "WPA's CPU Usage (Sampled): SampledProfile events by process, thread, module or address (--by) instead of the switches"),
  names: () => new Option('--names', 'add name columns for enum values (wait reason, wait mode, thread state, row source, acquire mode)'),

  // the selection (src/select)
  from: () => new Option('--from <time>', 'only from this time on: since the trace start (1.5s, 250ms, 40us, 1200ns; a bare number is seconds) or ISO wall-clock time with its zone (2026-11-27T07:01:25.5Z)').argParser(parseTime),
  /** `formats`: values also taken as themselves (convert's former `--to FORMAT`) */
  until: (formats: readonly string[] = []) =>
    new Option('--to <time>', `only before this time (same forms as --from); intervals across a bound are clipped to it${formats.length ? ` (${formats.join('|')}: the output format, as --format)` : ''}`).argParser(
      (v: string) => (formats.includes(v) ? v : parseTime(v)),
    ),
  pid: () => new Option('--pid <ids>', 'only these processes (comma-separated ids)').argParser(parseIds),
  process: () => new Option('--process <names>', 'only processes with these image names (comma-separated, case-insensitive; .exe optional)').argParser(parseNames),
  tid: () => new Option('--tid <ids>', 'only these threads (comma-separated ids)').argParser(parseIds),

  // dump
  table: () =>
    new Option('--table <table>', 'table to write (events = counts by event kind)').choices([...TABLE_NAMES, 'events']).default('cswitch').argParser(tableAlias),
  /** `choices`, `fallback`: the command's formats and default (none: the command decides) */
  format: (choices: readonly string[] = ['csv', 'jsonl'], fallback: string | null = 'csv') => {
    const o = new Option('--format <format>', fallback === null ? 'output format (default: parquet)' : 'output format').choices(choices);
    return fallback === null ? o : o.default(fallback);
  },
  time: () =>
    new Option('--time <unit>', 'add a converted time column per tick column: ns / s = nanoseconds / seconds (9 decimals) since the trace start, filetime = wall clock (100 ns since 1601), iso = UTC as 2026-11-27T07:01:25.1234567Z')
      .choices(['raw', 'ns', 's', 'filetime', 'iso'])
      .default('raw'),
  output: () => new Option('-o, --output <path>', 'output file (default: standard output)'),

  // convert
  out: () => new Option('--out <dir>', 'dataset directory (created when missing; shared by many runs)').makeOptionMandatory(),
  tables: () => new Option('--tables <list>', `comma-separated tables to write (default: all: ${TABLE_NAMES.join(',')})`).argParser(parseTables),
  partRows: () => new Option('--part-rows <n>', 'rows per part file, sorted by (cpu, time) (default 1048576: one Parquet row group)').argParser(parsePositive),
  force: () => new Option('--force', 'convert traces that are in the dataset already (default: skip them)'),

  // cpu --sampled
  pprof: () => new Option('--pprof <path>', 'with --sampled or --waits: write the samples, or the blocked time by stack, as a gzipped pprof profile (profile.proto; - = standard output) instead of the table'),
};

/** The decoding options' values (commander's camelCase keys). */
export interface DecodingOpts {
  engine: 'wasm' | 'reference';
  bias?: number;
  progress?: boolean;
  threads?: number;
}

/** Adds the decoding options every command of one trace takes (engine, bias, threads, progress). */
export function addDecoding(cmd: Command): Command {
  return cmd.addOption(option.engine()).addOption(option.bias()).addOption(option.threads()).addOption(option.progress()).addOption(option.noProgress()).addOption(option.maxSpool());
}

/** The selection options' values. */
export interface SelectionOpts {
  from?: string;
  to?: string;
  pid?: number[];
  process?: string[];
  tid?: number[];
}

/** Adds the selection options (time range, processes, threads); `formats`: see option.until. */
export function addSelection(cmd: Command, formats?: readonly string[]): Command {
  return cmd.addOption(option.from()).addOption(option.until(formats)).addOption(option.pid()).addOption(option.process()).addOption(option.tid());
}

/** What the selection options ask for (src/select). */
export function selectionOptions(o: SelectionOpts): SelectionOptions {
  return { from: o.from, to: o.to, processIds: o.pid, processNames: o.process, threadIds: o.tid };
}

/** --progress's answer: given, or whether stderr is a terminal. */
export function showProgress(o: { progress?: boolean }): boolean {
  return o.progress ?? process.stderr.isTTY === true;
}

/** What the decoding options ask of the decode. */
export function decodeOptions(o: DecodingOpts): DecodeOptions {
  return {
    engine: o.engine,
    bias: o.bias,
    threads: o.threads,
    onProgress: progressReporter(showProgress(o)),
  };
}

function progressReporter(enabled: boolean): DecodeOptions['onProgress'] {
  if (!enabled) return undefined;
  let last = 0;
  return (phase, done, total) => {
    const now = Date.now();
    if (now - last < 500 && done < total) return;
    last = now;
    const pct = total ? ((100 * done) / total).toFixed(1) : '100';
    process.stderr.write(`\r${phase === 'frame' ? 'indexing buffers' : 'decoding'} ${pct}% (${(done / 2 ** 20).toFixed(0)} of ${(total / 2 ** 20).toFixed(0)} MiB)   `);
    if (done >= total && phase === 'decode') process.stderr.write('\n');
  };
}
