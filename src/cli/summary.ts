// `etw-decode summary FILE`: trace info, event counts by kind, table sizes and diagnostics, from a decode
// that keeps no rows (text: output/summary-text.ts; --json: one object).
import type { Command } from 'commander';
import { streamFile } from '../decode/files.js';
import type { TraceSummary } from '../result/summary.js';
import { jsonReplacer, renderSummary } from '../output/summary-text.js';
import { stdoutOutput, type CommandContext } from './io.js';
import { addDecoding, decodeOptions, option, type DecodingOpts } from './options.js';

export function addSummaryCommand(program: Command, { input }: CommandContext): void {
  addDecoding(
    program
      .command('summary')
      .description('print trace info, event counts by kind, table sizes and diagnostics')
      .argument('<file>', 'ETL file; - (or a FIFO) reads the trace from a pipe')
      .addOption(option.json()),
  ).action(async (file: string, o: DecodingOpts & { json?: boolean }) => {
    const inp = await input(file);
    const res = await streamFile(inp.path, decodeOptions(o));
    const out = stdoutOutput();
    if (o.json) await out.write(JSON.stringify(summaryJson(file, res.summary), jsonReplacer, 2) + '\n');
    else await out.write(renderSummary(inp.name, res.summary, res.clock));
    await out.commit();
  });
}

export function summaryJson(file: string, s: TraceSummary): object {
  return { file, ...s };
}
