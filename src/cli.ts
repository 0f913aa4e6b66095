// etw-decode command line: `summary` and `dump`, streaming with bounded memory.
import { createWriteStream, type WriteStream } from 'node:fs';
import { Command, InvalidArgumentError, Option } from 'commander';
import { readTraceInfo, streamFile, createClock, type TraceSummary, EtlError } from './node.js';
import type { DecodeOptions } from './options.js';
import { DECODED_TABLE_NAMES, TABLE_NAMES, type DecodedTableName, type TableName } from './schema.js';
import { formatRows, headerLine, type DumpFormat, type FormatOptions, type TimeColumn } from './format.js';
import { jsonReplacer, renderSummary } from './summary-text.js';

const VERSION = '0.1.0';

function parseBias(v: string): number {
  const n = Number(v);
  if (!Number.isInteger(n) || n < 1 || n > 63) throw new InvalidArgumentError('expected an integer MaximumWaitReason in 1..63 (e.g. 40 for Windows 10 2004+)');
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
}

function decodeOptions(o: CommonOpts): DecodeOptions {
  return {
    engine: o.engine,
    bias: o.bias,
    onProgress: progressReporter(o.progress ?? (process.stderr.isTTY === true)),
  };
}

function addCommon(cmd: Command): Command {
  return cmd
    .addOption(new Option('--engine <engine>', 'decoder to use').choices(['wasm', 'reference']).default('wasm'))
    .option('--bias <n>', 'MaximumWaitReason used to decode compact OldThreadStateWr (default: from the trace build)', parseBias)
    .option('--progress', 'show progress on stderr (default: when stderr is a terminal)')
    .option('--no-progress', 'never show progress');
}

async function writeChunk(out: WriteStream | NodeJS.WriteStream, text: string): Promise<void> {
  if (!out.write(text)) await new Promise<void>((resolve) => out.once('drain', () => resolve()));
}

export async function main(argv: string[]): Promise<number> {
  const program = new Command();
  program
    .name('etw-decode')
    .description('Decode Windows kernel scheduling traces (ETL): CSwitch, compact context switches and SpinLock events.')
    .version(VERSION)
    .showHelpAfterError('(run with --help for usage)')
    .exitOverride();

  let exitCode = 0;

  addCommon(
    program
      .command('summary')
      .description('print trace info, event counts by kind, table sizes and diagnostics')
      .argument('<file>', 'ETL file')
      .option('--json', 'print one JSON object'),
  ).action(async (file: string, o: CommonOpts & { json?: boolean }) => {
    const res = await streamFile(file, decodeOptions(o));
    if (o.json) process.stdout.write(JSON.stringify(summaryJson(file, res.summary), jsonReplacer, 2) + '\n');
    else process.stdout.write(renderSummary(file, res.summary, res.clock));
  });

  addCommon(
    program
      .command('dump')
      .description('write a table as CSV or JSON lines (64-bit values exact, empty cell for null)')
      .argument('<file>', 'ETL file')
      .addOption(new Option('--table <table>', 'table to write (events = counts by event kind)').choices([...TABLE_NAMES, 'events']).default('cswitch'))
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
    if (o.time !== 'raw') {
      const info = await readTraceInfo(file);
      if (!info) throw new EtlError('NO_CLOCK', `--time ${o.time}: ${file} has no logfile header to take the clock from; use --time raw`);
      fmt.clock = createClock(info);
    }
    const out = o.output ? createWriteStream(o.output) : process.stdout;
    if (table !== 'events') await writeChunk(out, headerLine(table, fmt));
    const decoded = isDecodedTable(table) ? table : null;
    const res = await streamFile(file, {
      ...decodeOptions(o),
      rows: 'borrow', // each chunk is formatted before onRows returns
      onRows: decoded
        ? async (rows) => {
            const t = rows[decoded];
            if (t.length) await writeChunk(out, formatRows(t, fmt));
          }
        : undefined,
    });
    // derived tables are complete only at the end of the decode
    if (table === 'threads' || table === 'processes') {
      if (res[table].length) await writeChunk(out, formatRows(res[table], fmt));
    }
    if (table === 'events') {
      const keys = ['headerType', 'hookId', 'name', 'provider', 'eventId', 'eventType', 'messageNumber', 'opcode', 'task', 'extended', 'version', 'count', 'bytes'] as const;
      if (o.format === 'csv') {
        let text = keys.join(',') + '\n';
        for (const k of res.summary.eventsByKind) text += keys.map((key) => csvCell(k[key])).join(',') + '\n';
        await writeChunk(out, text);
      } else {
        for (const k of res.summary.eventsByKind) await writeChunk(out, JSON.stringify(k) + '\n');
      }
    }
    if (o.output) await new Promise<void>((resolve, reject) => (out as WriteStream).end((e?: Error | null) => (e ? reject(e) : resolve())));
  });

  try {
    await program.parseAsync(argv, { from: 'user' });
  } catch (e) {
    const err = e as { code?: string; exitCode?: number; message?: string };
    if (typeof err.code === 'string' && err.code.startsWith('commander.')) {
      // commander already printed help/version/usage errors; usage errors exit 2 (commander would say 1)
      return err.code === 'commander.helpDisplayed' || err.code === 'commander.version' || err.code === 'commander.help' ? 0 : 2;
    }
    if (e instanceof EtlError) {
      process.stderr.write(`etw-decode: ${e.message}\n`);
      // an option that does not apply (a bad value, --time on a trace whose clock cannot be converted): 2
      return e.code === 'BAD_OPTION' || e.code === 'NO_CLOCK' ? 2 : 1;
    }
    process.stderr.write(`etw-decode: internal error: ${(e as Error).stack ?? String(e)}\n`);
    return 70;
  }
  return exitCode;
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
