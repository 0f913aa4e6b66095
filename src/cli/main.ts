// etw-decode command line: `summary` and `dump`, streaming with bounded memory. Every expected failure
// is one line on stderr and an exit code (README § Command line); only a bug prints a stack trace.
import { Command, InvalidArgumentError, Option } from 'commander';
import { readTraceInfo, streamFile } from '../decode/files.js';
import { createClock } from '../time.js';
import { EtlError } from '../errors.js';
import type { TraceSummary } from '../result/summary.js';
import type { DecodeOptions } from '../options.js';
import { DECODED_TABLE_NAMES, TABLE_NAMES, type DecodedTableName, type TableName } from '../tables/schema.js';
import type { DumpFormat, FormatOptions, TimeColumn } from '../output/text.js';
import type { Table } from '../tables/table.js';
import { dataLossText, emptyTableText, jsonReplacer, renderSummary } from '../output/summary-text.js';
import { CliError, EXIT, fileOutput, maxSpoolOption, openInput, OutputClosed, prepareCommandLine, stdoutOutput, type Input, type Output } from './io.js';
import { registerSpinlocksCommand } from './spinlocks.js';
import { VERSION } from '../version.js';
import { registerConvertCommand } from './convert.js';
import { AUTO_MIN_BYTES, AUTO_MIN_BYTES_ROWS } from '../parallel/run.js';

/** 805306368 -> '768 MiB', 2147483648 -> '2 GiB' */
const sizeText = (bytes: number): string => (bytes >= 2 ** 30 && bytes % 2 ** 30 === 0 ? `${bytes / 2 ** 30} GiB` : `${bytes / 2 ** 20} MiB`);


function parseTop(v: string): number {
  const n = Number(v);
  if (!Number.isInteger(n) || n < 0) throw new InvalidArgumentError('expected a whole number (0 = all rows)');
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

interface CommonOpts {
  engine: 'wasm' | 'reference';
  bias?: number;
  progress?: boolean;
  threads?: number;
}

export function decodeOptions(o: CommonOpts): DecodeOptions {
  return {
    engine: o.engine,
    bias: o.bias,
    threads: o.threads,
    onProgress: progressReporter(o.progress ?? (process.stderr.isTTY === true)),
  };
}

export function addCommon(cmd: Command): Command {
  return cmd
    .addOption(new Option('--engine <engine>', 'decoder to use').choices(['wasm', 'reference']).default('wasm'))
    .option('--bias <n>', 'MaximumWaitReason used to decode compact OldThreadStateWr (default: from the trace build)', parseBias)
    .option(
      '--threads <n>',
      `decoding threads (1 = one thread; inputs under 32 MiB use one; default: all cores for files where they pay — ${sizeText(AUTO_MIN_BYTES)} and more for summary, ${sizeText(AUTO_MIN_BYTES_ROWS)} for rows — else one)`,
      parseThreads,
    )
    .option('--progress', 'show progress on stderr (default: when stderr is a terminal)')
    .option('--no-progress', 'never show progress')
    .addOption(maxSpoolOption());
}

/** A line on stderr; stderr's own failures (closed by its reader) are ignored: there is nowhere to report them. */
function note(text: string): void {
  process.stderr.write(`etw-decode: ${text}\n`);
}

let streamsGuarded = false;
/** An 'error' event nobody listens to crashes Node with a stack trace: listen (each Output checks its own). */
function guardStdStreams(): void {
  if (streamsGuarded) return;
  streamsGuarded = true;
  process.stdout.on('error', () => {});
  process.stderr.on('error', () => {});
}

export async function main(argv: string[]): Promise<number> {
  guardStdStreams();
  const program = new Command();
  program
    .name('etw-decode')
    .description('Decode Windows kernel scheduling traces (ETL): CSwitch, compact context switches and SpinLock events.')
    .version(VERSION)
    // commander's usage errors ("error: unknown command 'x'") in the form of every other error
    .configureOutput({ outputError: (text, write) => write(text.replace(/^error: /, 'etw-decode: ')) })
    .showHelpAfterError('(run with --help for usage)')
    .exitOverride();
  prepareCommandLine(program);

  const inputs: Input[] = [];
  const input = async (arg: string): Promise<Input> => {
    const i = await openInput(arg);
    inputs.push(i);
    return i;
  };

  addCommon(
    program
      .command('summary')
      .description('print trace info, event counts by kind, table sizes and diagnostics')
      .argument('<file>', 'ETL file; - (or a FIFO) reads the trace from a pipe')
      .option('--json', 'print one JSON object'),
  ).action(async (file: string, o: CommonOpts & { json?: boolean }) => {
    const inp = await input(file);
    const res = await streamFile(inp.path, decodeOptions(o));
    const out = stdoutOutput();
    if (o.json) await out.write(JSON.stringify(summaryJson(file, res.summary), jsonReplacer, 2) + '\n');
    else await out.write(renderSummary(inp.name, res.summary, res.clock));
    await out.commit();
  });

  addCommon(
    program
      .command('cpu')
      .description('CPU time, ready time and waits by process or thread (WPA CPU Usage (Precise)), from CSwitch or compact switches')
      .argument('<file>', 'ETL file; - (or a FIFO) reads the trace from a pipe')
      .addOption(new Option('--by <what>', 'group rows by').choices(['process', 'thread']).default('process'))
      .option('--top <n>', 'rows to show (0 = all)', parseTop, 20)
      .option('--json', 'print one JSON object (64-bit values as decimal strings)'),
  ).action(async (file: string, o: CommonOpts & { by: 'process' | 'thread'; top: number; json?: boolean }) => {
    const inp = await input(file);
    const [{ CpuAnalyzer, CpuUsageDeriver }, { renderCpu }] = await Promise.all([import('../analysis/cpu.js'), import('./cpu-text.js')]);
    const analyzer = new CpuAnalyzer();
    const deriver = new CpuUsageDeriver((t) => analyzer.add(t));
    const res = await streamFile(inp.path, {
      ...decodeOptions(o),
      rows: 'borrow',
      onRows: (rows) => deriver.add(rows.cswitch, rows.readythread, rows.threadEvents),
    });
    const stats = deriver.finish();
    const a = analyzer.result(res);
    const out = stdoutOutput();
    if (o.json) {
      const list = o.by === 'process' ? a.processes : a.threads;
      await out.write(JSON.stringify({ file, by: o.by, ticksPerSecond: a.ticksPerSecond, total: a.total, rows: o.top ? list.slice(0, o.top) : list, cpuUsage: stats }, jsonReplacer, 2) + '\n');
    } else {
      await out.write(renderCpu(inp.name, a, o.by, o.top, stats));
    }
    await out.commit();
    if (res.summary.cswitch === 0) note(emptyTableText('cswitch', res.summary));
  });

  addCommon(
    program
      .command('dump')
      .description('write a table as CSV or JSON lines (64-bit values exact, empty cell for null)')
      .argument('<file>', 'ETL file; - (or a FIFO) reads the trace from a pipe')
      .addOption(new Option('--table <table>', 'table to write (events = counts by event kind)').choices([...TABLE_NAMES, 'events']).default('cswitch').argParser(tableAlias))
      .addOption(new Option('--format <format>', 'output format').choices(['csv', 'jsonl']).default('csv'))
      .option('--names', 'add name columns for enum values (wait reason, wait mode, thread state, row source, acquire mode)')
      .addOption(
        new Option('--time <unit>', 'add a converted time column: ns = nanoseconds since the trace start, filetime = wall clock (100 ns since 1601)')
          .choices(['raw', 'ns', 'filetime'])
          .default('raw'),
      )
      .option('-o, --output <path>', 'output file (default: standard output)'),
  ).action(async (file: string, o: CommonOpts & { table: TableName | 'events'; format: DumpFormat; output?: string; names?: boolean; time: TimeColumn }) => {
    const table = o.table;
    const fmt: FormatOptions = { format: o.format, names: o.names, time: o.time };
    const inp = await input(file);
    // nothing is written before the input is known to be readable and to start like an ETL file
    const info = await readTraceInfo(inp.path);
    if (o.time !== 'raw') {
      if (!info) throw new EtlError('NO_CLOCK', `--time ${o.time}: ${inp.name} has no logfile header to take the clock from; use --time raw`);
      fmt.clock = createClock(info);
    }
    // the formatting and the cpuUsage derivation load with the command (the CLI starts without them)
    const [{ TextTableWriter }, { CpuUsageDeriver }] = await Promise.all([import('../output/text.js'), import('../analysis/cpu.js')]);
    const out: Output = o.output ? await fileOutput(o.output) : stdoutOutput();
    let summary: TraceSummary;
    try {
      // rows are formatted into 256 KiB byte buffers, each handed to the output (which owns it) when full
      const writer = table !== 'events' ? new TextTableWriter(table, fmt, (bytes) => out.write(bytes), 1 << 18) : null;
      await writer?.writeHeader();
      const decoded = isDecodedTable(table) ? table : null;
      // cpuUsage is derived while the trace streams by; its rows come out as each switch completes (the
      // deriver's chunks are ours to keep until they are written)
      const pending: Table<'cpuUsage'>[] = [];
      const deriver = table === 'cpuUsage' ? new CpuUsageDeriver((t) => pending.push(t)) : null;
      const res = await streamFile(inp.path, {
        ...decodeOptions(o),
        rows: 'borrow', // each chunk is formatted before onRows returns
        onRows: decoded
          ? async (rows) => {
              const t = rows[decoded];
              if (t.length) await writer!.write(t);
            }
          : deriver
            ? async (rows) => {
                deriver.add(rows.cswitch, rows.readythread, rows.threadEvents);
                for (const t of pending.splice(0)) await writer!.write(t);
              }
            : undefined,
      });
      if (deriver) {
        const stats = deriver.finish();
        for (const t of pending.splice(0)) await writer!.write(t);
        if (stats.lateEvents) note(`${stats.lateEvents} events arrived behind the cpuUsage reorder window: their rows may miss ready times or process ids`);
        if (stats.unresolvedRows) note(`${stats.unresolvedRows} cpuUsage rows were written before their thread's process was known (more were waiting than the hold keeps): their process ids may be missing`);
      }
      summary = res.summary;
      // derived tables are complete only at the end of the decode
      if (table === 'threads' || table === 'processes' || table === 'traces') {
        if (res[table].length) await writer!.write(res[table]);
      }
      await writer?.end();
      if (table === 'events') {
        const keys = ['headerType', 'hookId', 'name', 'provider', 'eventId', 'eventType', 'messageNumber', 'opcode', 'task', 'extended', 'version', 'count', 'bytes'] as const;
        if (o.format === 'csv') {
          let text = keys.join(',') + '\n';
          for (const k of summary.eventsByKind) text += keys.map((key) => csvCell(k[key])).join(',') + '\n';
          await out.write(text);
        } else {
          for (const k of summary.eventsByKind) await out.write(JSON.stringify(k) + '\n');
        }
      }
      await out.commit();
    } catch (e) {
      await out.abort();
      throw e;
    }
    // exit 0 all the same: the output holds everything that could be decoded
    const lost = dataLossText(summary.diagnostics);
    if (lost) note(`${lost} — see \`etw-decode summary\``);
    if (table !== 'events' && summary[table] === 0) note(emptyTableText(table, summary));
  });

  registerSpinlocksCommand(program, input);
  let exitCode: number = EXIT.ok;
  registerConvertCommand(program, (code) => (exitCode = code));

  try {
    await program.parseAsync(argv, { from: 'user' });
  } catch (e) {
    const err = e as { code?: string; exitCode?: number; message?: string };
    if (typeof err.code === 'string' && err.code.startsWith('commander.')) {
      // commander already printed help/version/usage errors; usage errors exit 2 (commander would say 1)
      return err.code === 'commander.helpDisplayed' || err.code === 'commander.version' || err.code === 'commander.help' ? EXIT.ok : EXIT.usage;
    }
    if (e instanceof OutputClosed) return EXIT.outputClosed; // quietly, as `cat file | head` does
    if (e instanceof CliError) {
      note(e.message);
      return e.exitCode;
    }
    if (e instanceof EtlError) {
      note(inputs.reduce((m, i) => i.describe(m), e.message));
      // an option that does not apply (a bad value, --time on a trace whose clock cannot be converted): 2
      return e.code === 'BAD_OPTION' || e.code === 'NO_CLOCK' ? EXIT.usage : EXIT.error;
    }
    note(`internal error: ${(e as Error).stack ?? String(e)}`);
    return EXIT.internal;
  } finally {
    for (const i of inputs) await i.dispose();
  }
  return exitCode;
}

/** --table accepts the registry names and a few spellings people type (cpu-usage). */
function tableAlias(v: string): string {
  const alias: Record<string, string> = { 'cpu-usage': 'cpuUsage', cpuusage: 'cpuUsage', 'thread-events': 'threadEvents', 'process-events': 'processEvents' };
  const name = alias[v.toLowerCase()] ?? v;
  if (![...TABLE_NAMES, 'events'].includes(name)) {
    throw new InvalidArgumentError(`Allowed choices are ${[...TABLE_NAMES, 'events'].join(', ')}.`);
  }
  return name;
}

function isDecodedTable(t: string): t is DecodedTableName {
  return (DECODED_TABLE_NAMES as readonly string[]).includes(t);
}

function csvCell(v: unknown): string {
  if (v === undefined || v === null) return '';
  const s = String(v);
  return /[",\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
}

export function summaryJson(file: string, s: TraceSummary): object {
  return { file, ...s };
}
