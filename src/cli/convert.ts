// `etw-decode convert FILE… --to parquet|arrow|csv|jsonl|perfetto --out DIR`: many traces into one
// dataset (src/convert/dataset.ts) — files in parallel (worker threads), progress on a terminal, a failed
// file reported without stopping the others (exit 1 then), traces already in DIR skipped unless --force.
import type { Command } from 'commander';
import { stat } from 'node:fs/promises';
import os from 'node:os';
import { resolve } from 'node:path';
import type { FileOutcome } from '../convert/pool.js';
import { atSignal, CliError, EXIT, type CommandContext } from './io.js';
import type { TableName } from '../tables/schema.js';
import { addSelection, option, selectionOptions, showProgress, type DecodingOpts, type SelectionOpts } from './options.js';
import { CONVERT_FORMATS, type ConvertFormat } from '../convert/format-names.js';

function mib(n: number): string {
  return (n / 2 ** 20).toFixed(0);
}

interface ConvertCliOptions extends DecodingOpts, SelectionOpts {
  format?: ConvertFormat;
  out: string;
  tables?: TableName[];
  partRows?: number;
  force?: boolean;
  names?: boolean;
}

/** Adds the `convert` command; it raises the exit code (setExit) when some file failed. */
export function addConvertCommand(program: Command, { setExit }: CommandContext): void {
  addSelection(
    program
      .command('convert')
      .description('convert traces into one dataset (Parquet, Arrow IPC, CSV or JSON lines; Hive-style trace= partitions) or Perfetto timelines')
      .argument('<files...>', 'ETL files')
      .addOption(option.format(CONVERT_FORMATS, null)),
    CONVERT_FORMATS,
  )
    .addOption(option.out())
    .addOption(option.tables())
    .addOption(
      option.threads('threads to use (default: available cores): several files are converted side by side, one file is decoded on all of them (default: on as many as pay, see README "All cores")'),
    )
    .addOption(option.partRows())
    .addOption(option.names())
    .addOption(option.force())
    .addOption(option.engine())
    .addOption(option.bias())
    .addOption(option.progress())
    .addOption(option.noProgress())
    .action(async (files: string[], o: ConvertCliOptions) => {
      if (files.includes('-')) throw new CliError("convert reads trace files, not standard input ('-'): save the stream to a file first (a file named - is ./-)", EXIT.usage);
      // `--to FORMAT` names the format, as it did before --to became the end of the time range
      const legacy = o.to !== undefined && (CONVERT_FORMATS as readonly string[]).includes(o.to) ? (o.to as ConvertFormat) : undefined;
      if (legacy && o.format && legacy !== o.format) throw new CliError(`--format ${o.format} and --to ${legacy}: give the output format once (--format)`, EXIT.usage);
      const format: ConvertFormat = o.format ?? legacy ?? 'parquet';
      const selection = selectionOptions({ ...o, to: legacy ? undefined : o.to });
      const out = resolve(o.out);
      const progress = showProgress(o);
      let last = 0;
      const started = Date.now();
      // loaded here, not with the CLI: the dataset writers (Arrow, Parquet, Perfetto) cost every other command ~100 ms to load
      const { convertFiles, removeOwnRunFiles } = await import('../convert/pool.js');
      // SIGINT/SIGTERM/SIGHUP: this run's staging files and trace locks go with it
      atSignal(() => removeOwnRunFiles(out));
      const outcomes = await convertFiles(files, {
        to: format,
        selection: Object.values(selection).some((v) => v !== undefined) ? selection : undefined,
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
          if (progress) process.stderr.write('\r\x1b[K');
          process.stderr.write(fileLine(f) + '\n');
        },
        onProgress: progress
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
      const elapsed = (Date.now() - started) / 1000;
      // throughput: the bytes of the traces converted (not those skipped or failed) per second of the run
      const inputBytes = (await Promise.all(outcomes.map((f) => (f.ok && f.result.status === 'converted' ? stat(f.path).then((x) => x.size, () => 0) : 0)))).reduce((a, b) => a + b, 0);
      const rate = converted && elapsed > 0 ? `, ${(inputBytes / 2 ** 20 / elapsed).toFixed(1)} MiB/s of input` : '';
      process.stderr.write(
        `etw-decode: ${converted} converted, ${skipped} skipped${skipped ? ` (already in ${o.out}; --force converts them again)` : ''}, ${failed} failed, in ${elapsed.toFixed(1)} s${rate} → ${format === 'perfetto' ? out : `${out}/<table>/trace=<id>/`}\n`,
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
