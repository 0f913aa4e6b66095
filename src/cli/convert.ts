// `etw-decode convert FILE… --to parquet|arrow|csv|jsonl|perfetto --out DIR`: many traces into one
// dataset (src/convert/dataset.ts) — files in parallel (worker threads), progress on a terminal, a failed
// file reported without stopping the others (exit 1 then), traces already in DIR skipped unless --force.
import { InvalidArgumentError, Option, type Command } from 'commander';
import os from 'node:os';
import { resolve } from 'node:path';
import { CONVERT_FORMATS, type ConvertFormat } from '../convert/format-names.js';
import type { FileOutcome } from '../convert/pool.js';
import { atSignal, CliError, EXIT } from './io.js';
import { TABLE_NAMES, type TableName } from '../tables/schema.js';

function parsePositive(v: string): number {
  const n = Number(v);
  if (!/^\d+$/.test(v) || !Number.isSafeInteger(n) || n < 1) throw new InvalidArgumentError('expected a positive integer');
  return n;
}

function parseTables(v: string): TableName[] {
  const names = v.split(',').map((s) => s.trim()).filter(Boolean);
  for (const n of names) {
    if (!(TABLE_NAMES as readonly string[]).includes(n)) throw new InvalidArgumentError(`unknown table '${n}' (tables: ${TABLE_NAMES.join(', ')})`);
  }
  return names as TableName[];
}

function mib(n: number): string {
  return (n / 2 ** 20).toFixed(0);
}

interface ConvertCliOptions {
  to: ConvertFormat;
  out: string;
  tables?: TableName[];
  threads?: number;
  partRows?: number;
  force?: boolean;
  names?: boolean;
  engine: 'wasm' | 'reference';
  bias?: number;
  progress?: boolean;
}

/** Adds the `convert` command; `setExit` raises the exit code when some file failed. */
export function registerConvertCommand(program: Command, setExit: (code: number) => void): void {
  program
    .command('convert')
    .description('convert traces into one dataset (Parquet, Arrow IPC, CSV or JSON lines; Hive-style trace= partitions) or Perfetto timelines')
    .argument('<files...>', 'ETL files')
    .addOption(new Option('--to <format>', 'output format').choices([...CONVERT_FORMATS]).default('parquet'))
    .requiredOption('--out <dir>', 'dataset directory (created when missing; shared by many runs)')
    .option('--tables <list>', `comma-separated tables to write (default: all: ${TABLE_NAMES.join(',')})`, parseTables)
    .option('--threads <n>', 'threads to use (default: available cores): several files are converted side by side, one file is decoded on all of them (default: on as many as pay, see README "All cores")', parsePositive)
    .option('--part-rows <n>', 'rows per part file, sorted by (cpu, time) (default 1048576: one Parquet row group)', parsePositive)
    .option('--names', 'add name columns for enumerations (wait reason, thread state, …)')
    .option('--force', 'convert traces that are in the dataset already (default: skip them)')
    .addOption(new Option('--engine <engine>', 'decoder to use').choices(['wasm', 'reference']).default('wasm'))
    .option('--bias <n>', 'MaximumWaitReason for compact OldThreadStateWr (default: from the trace build)', parsePositive)
    .option('--progress', 'show progress on stderr (default: when stderr is a terminal)')
    .option('--no-progress', 'never show progress')
    .action(async (files: string[], o: ConvertCliOptions) => {
      if (files.includes('-')) throw new CliError("convert reads trace files, not standard input ('-'): save the stream to a file first (a file named - is ./-)", EXIT.usage);
      const out = resolve(o.out);
      const showProgress = o.progress ?? process.stderr.isTTY === true;
      let last = 0;
      const started = Date.now();
      // loaded here, not with the CLI: the dataset writers (Arrow, Parquet, Perfetto) cost every other command ~100 ms to load
      const { convertFiles, removeOwnRunFiles } = await import('../convert/pool.js');
      // SIGINT/SIGTERM/SIGHUP: this run's staging files and trace locks go with it
      atSignal(() => removeOwnRunFiles(out));
      const outcomes = await convertFiles(files, {
        to: o.to,
        outDir: out,
        tables: o.tables,
        // several files: one per core; one file: decode's automatic choice unless --threads says
        threads: o.threads ?? (files.length > 1 ? Math.max(1, os.availableParallelism()) : undefined),
        partRows: o.partRows,
        force: o.force,
        names: o.names,
        engine: o.engine,
        bias: o.bias,
        onFile: (f) => {
          if (showProgress) process.stderr.write('\r\x1b[K');
          process.stderr.write(fileLine(f) + '\n');
        },
        onProgress: showProgress
          ? (s) => {
              const now = Date.now();
              if (now - last < 250 && s.filesDone < s.filesTotal) return;
              last = now;
              const secs = (now - started) / 1000;
              const rate = secs > 0 ? s.bytesDone / 2 ** 20 / secs : 0;
              process.stderr.write(
                `\r\x1b[Kconverting: ${s.filesDone}/${s.filesTotal} files, ${mib(s.bytesDone)} of ${mib(s.bytesTotal)} MiB, ${rate.toFixed(0)} MiB/s` +
                  (s.failed ? `, ${s.failed} failed` : ''),
              );
              if (s.filesDone === s.filesTotal) process.stderr.write('\r\x1b[K');
            }
          : undefined,
      });
      const failed = outcomes.filter((f) => !f.ok).length;
      const converted = outcomes.filter((f) => f.ok && f.result.status === 'converted').length;
      const skipped = outcomes.length - failed - converted;
      const secs = ((Date.now() - started) / 1000).toFixed(1);
      process.stderr.write(
        `etw-decode: ${converted} converted, ${skipped} skipped${skipped ? ` (already in ${o.out}; --force converts them again)` : ''}, ${failed} failed, in ${secs} s → ${o.to === 'perfetto' ? out : `${out}/<table>/trace=<id>/`}\n`,
      );
      if (failed) setExit(EXIT.error);
    });
}

function fileLine(f: FileOutcome): string {
  if (!f.ok) return `etw-decode: ${f.path}: failed: ${f.error}`;
  const r = f.result;
  if (r.sameAs) return `etw-decode: ${f.path}: skipped (the same trace as ${r.sameAs}: trace=${r.id})`;
  if (r.status === 'skipped') return `etw-decode: ${f.path}: skipped (trace=${r.id} is in the dataset)`;
  const rows = Object.entries(r.rows)
    .filter(([t]) => t !== 'traces')
    .map(([t, n]) => `${t} ${n}`)
    .join(', ');
  const loss = r.dataLoss ? ` — data lost: ${r.dataLoss}` : '';
  return `etw-decode: ${f.path} → trace=${r.id}: ${rows} (${r.files} files, ${mib(r.bytes)} MiB)${loss}`;
}
