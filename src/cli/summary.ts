// `etw-decode summary FILE`: trace info, event counts by kind, table sizes and diagnostics, from a decode
// that keeps no rows (text: output/summary-text.ts; --json: one object).
import type { Command } from 'commander';
import { streamFile } from '../decode/files.js';
import type { TraceSummary } from '../result/summary.js';
import { jsonReplacer, renderSummary } from '../output/summary-text.js';
import { stdoutOutput, type CommandContext } from './io.js';
import { addDecoding, addSelection, decodeOptions, option, selectionOptions, type DecodingOpts, type SelectionOpts } from './options.js';
import { DECODED_TABLE_NAMES, type DecodedTableName } from '../tables/schema.js';
import type { DecodedTables } from '../tables/table.js';

export function addSummaryCommand(program: Command, { input }: CommandContext): void {
  addDecoding(
    addSelection(program.command('summary'))
      .description('print trace info, event counts by kind, table sizes and diagnostics')
      .argument('<file>', 'ETL file; - (or a FIFO) reads the trace from a pipe')
      .addOption(option.json()),
  ).action(async (file: string, o: DecodingOpts & SelectionOpts & { json?: boolean }) => {
    const inp = await input(file);
    // with a selection: the file's summary as without one, and the rows of each decoded table in it
    const sel = await (async () => {
      if (!Object.values(selectionOptions(o)).some((v) => v !== undefined)) return null;
      const { commandSelection, selectTable, selectionText } = await import('./selection.js');
      return { selection: (await commandSelection(inp.path, inp.name, o, decodeOptions(o), true))!, selectTable, selectionText };
    })();
    const selected: Partial<Record<DecodedTableName, number>> = {};
    const res = await streamFile(inp.path, {
      ...decodeOptions(o),
      ...(sel
        ? {
            rows: 'borrow' as const,
            onRows: (rows: DecodedTables) => {
              for (const t of DECODED_TABLE_NAMES) if (rows[t].length) selected[t] = (selected[t] ?? 0) + sel.selectTable(rows[t], sel.selection).length;
            },
          }
        : {}),
    });
    const inSelection = sel ? { ...sel.selection.describe(res.clock), rows: Object.fromEntries(DECODED_TABLE_NAMES.map((t) => [t, selected[t] ?? 0])) } : null;
    const out = stdoutOutput();
    if (o.json) await out.write(JSON.stringify({ ...summaryJson(file, res.summary), ...(inSelection ? { selection: inSelection } : {}) }, jsonReplacer, 2) + '\n');
    else {
      await out.write(renderSummary(inp.name, res.summary, res.clock));
      if (sel && inSelection) {
        const counts = DECODED_TABLE_NAMES.filter((t) => res.summary[t] > 0).map((t) => `${t} ${inSelection.rows[t]} of ${res.summary[t]}`);
        await out.write(`${sel.selectionText(sel.selection.describe(res.clock))}\nrows in it: ${counts.join(', ') || 'none'}\n`);
      }
    }
    await out.commit();
  });
}

export function summaryJson(file: string, s: TraceSummary): object {
  return { file, ...s };
}
