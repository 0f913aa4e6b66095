// `etw-decode dump FILE --table T`: a table as CSV or JSON lines (output/text.ts), streamed: decoded rows
// are formatted chunk by chunk as they come; cpuUsage and threadStates are derived while the trace streams by
// (threadStates' rows as their intervals end, as convert writes them: memory bounded, no whole table); the
// derived tables (threads, processes, traces) are written at the end; `events` is the counts by event kind.
// cswitch, readythread and samples rows get their stackId, and stacks / stackFrames their rows, from a
// first pass over the stack tables (convert/stack-pass.ts).
import type { Command } from 'commander';
import { readTraceInfo, streamFile } from '../decode/files.js';
import { createClock } from '../time.js';
import { EtlError } from '../errors.js';
import type { TraceSummary } from '../result/summary.js';
import { DECODED_TABLE_NAMES, WHOLE_TRACE_TABLE_NAMES, type DecodedTableName, type SummaryTableName, type TableName, type TypedColumn } from '../tables/schema.js';
import type { DumpFormat, FormatOptions, TimeColumn } from '../output/text.js';
import type { ChunkFormatter } from './dump-format.js';
import { Table } from '../tables/table.js';
import { emptyTableText } from '../output/summary-text.js';
import { dataLossText } from '../result/diagnostics.js';
import { fileOutput, note, stdoutOutput, type CommandContext, type Output } from './io.js';
import { addDecoding, addSelection, decodeOptions, option, type DecodingOpts, type SelectionOpts } from './options.js';

export function addDumpCommand(program: Command, { input }: CommandContext): void {
  addDecoding(
    addSelection(program.command('dump'))
      .description('write a table as CSV or JSON lines (64-bit values exact, empty cell for null)')
      .argument('<file>', 'ETL file; - (or a FIFO) reads the trace from a pipe')
      .addOption(option.table())
      .addOption(option.format())
      .addOption(option.names())
      .addOption(option.time())
      .addOption(option.output()),
  ).action(async (file: string, o: DecodingOpts & SelectionOpts & { table: TableName | 'events'; format: DumpFormat; output?: string; names?: boolean; time: TimeColumn }) => {
    const table = o.table;
    const fmt: FormatOptions = { format: o.format, names: o.names, time: o.time };
    const inp = await input(file);
    const { commandSelection, selectTable, selectionText, clockOf } = await import('./selection.js');
    // nothing is written before the input is known to be readable and to start like an ETL file
    const info = await readTraceInfo(inp.path);
    // rows that carry a thread and no process (cswitch, readythread, spinlock), and process rows under a
    // thread filter, are matched through the lifetimes (a first decode)
    const selection = table === 'events' || table === 'traces' ? null : await commandSelection(inp.path, inp.name, o, decodeOptions(o), true);
    const pick = <T extends TableName>(t: Table<T>): Table<T> => (selection ? selectTable(t, selection) : t);
    if (o.time !== 'raw') {
      if (!info) throw new EtlError('NO_CLOCK', `--time ${o.time}: ${inp.name} has no logfile header to take the clock from; use --time raw`);
      fmt.clock = createClock(info);
    }
    // the formatting and the cpuUsage derivation load with the command (the CLI starts without them)
    const [{ chunkFormatter, formatWorkersFor }, { CpuUsageDeriver }, { csvText }, { decodedTablesFor }] = await Promise.all([import('./dump-format.js'), import('../analysis/cpu.js'), import('../output/escape.js'), import('../tables/sources.js')]);
    const out: Output = o.output ? await fileOutput(o.output) : stdoutOutput();
    let summary: TraceSummary;
    let written = 0; // rows written
    let writer: ChunkFormatter | null = null;
    try {
      // rows are formatted into 256 KiB byte buffers, each handed to the output (which owns it) when full —
      // by worker threads for a large input (dump-format.ts), a chunk each, written in order
      const { clock, ...format } = fmt;
      const workers = table === 'events' ? 0 : formatWorkersFor(inp.path, o.threads);
      writer = table !== 'events' ? chunkFormatter({ table, format, clock, info, bufferBytes: 1 << 18 }, (bytes) => out.write(bytes), workers) : null;
      await writer?.writeHeader();
      const write = async (t: Table, giveBack?: (columns: TypedColumn[]) => void) => {
        written += t.length;
        await writer!.write(t, giveBack);
      };
      /** a derived chunk (the deriver's to reuse once written: its columns go to a formatting worker uncopied and come back) */
      const writeDerived = async <T extends 'cpuUsage' | 'threadStates'>(t: Table<T>, recycle: (t: Table<T>) => void) => {
        const p = pick(t);
        if (p !== t) {
          await write(p);
          recycle(t);
        } else await write(t, (columns) => recycle(new Table(t.name as T, { length: t.length, columns })));
      };
      const decoded = isDecodedTable(table) ? table : null;
      // cpuUsage is derived while the trace streams by; its rows come out as each switch completes (the
      // deriver's chunks are ours to keep until they are written)
      const pending: Table<'cpuUsage'>[] = [];
      const deriver = table === 'cpuUsage' ? new CpuUsageDeriver((t) => pending.push(t), { engine: o.engine }) : null;
      // threadStates: streamed too, each CPU in the watermark from the start
      const states: Table<'threadStates'>[] = [];
      const stateDeriver = table === 'threadStates' ? new (await import('../derive/thread-states.js')).ThreadStatesDeriver((t) => states.push(t), { cpus: info?.numberOfProcessors ?? 0, engine: o.engine }) : null;
      const { needsStackPass, stackPass } = await import('../convert/stack-pass.js');
      const stacks = needsStackPass([table as TableName]) ? await stackPass(inp.path, decodeOptions(o), [table as TableName]) : null;
      const res = await streamFile(inp.path, {
        ...decodeOptions(o),
        rows: 'borrow', // each chunk is formatted (or derived from) before onRows returns
        tables: table === 'events' ? undefined : decodedTablesFor([table]), // what the table is made of: nothing else is decoded
        onRows: decoded
          ? async (rows) => {
              stacks?.fill(rows);
              const t = pick(rows[decoded]);
              if (t.length) await write(t);
            }
          : deriver
            ? async (rows) => {
                deriver.add(rows.cswitch, rows.readythread, rows.threadEvents);
                for (const t of pending.splice(0)) await writeDerived(t, (r) => deriver.recycle(r)); // written: its columns serve the next chunk
              }
            : stateDeriver
              ? async (rows) => {
                  stateDeriver.add(rows.cswitch, rows.readythread, rows.threadEvents);
                  for (const t of states.splice(0)) await writeDerived(t, (r) => stateDeriver.recycle(r)); // written: its columns serve the next chunk
                }
              : undefined,
      });
      if (deriver) {
        const stats = deriver.finish();
        for (const t of pending.splice(0)) await write(pick(t));
        if (stats.lateEvents) note(`${stats.lateEvents} events arrived behind the cpuUsage reorder window: their rows may miss ready times or process ids`);
        if (stats.unresolvedRows) note(`${stats.unresolvedRows} cpuUsage rows were written before their thread's process was known (more were waiting than the hold keeps): their process ids may be missing`);
      }
      summary = res.summary;
      // derived tables are complete only at the end of the decode
      if (table === 'threads' || table === 'processes' || table === 'images' || table === 'traces') {
        const t = pick(res[table]);
        if (t.length) await write(t);
      }
      if (table === 'stacks' || table === 'stackFrames') {
        const t = pick(stacks!.tables()[table]);
        if (t.length) await write(t);
      }
      if (stateDeriver) {
        const stats = stateDeriver.finish();
        for (const t of states.splice(0)) await write(pick(t));
        if (stats.lateEvents) note(`${stats.lateEvents} events arrived behind the threadStates reorder window: they were applied out of time order, so the intervals around them may be wrong`);
        if (stats.unresolvedRows) note(`${stats.unresolvedRows} threadStates rows were written before their thread's process was known (more were waiting than the hold keeps): their process ids may be missing`);
      }
      await writer?.end();
      if (table === 'events') {
        const keys = ['headerType', 'hookId', 'name', 'provider', 'eventId', 'eventType', 'messageNumber', 'opcode', 'task', 'extended', 'version', 'count', 'bytes'] as const;
        if (o.format === 'csv') {
          let text = keys.join(',') + '\n';
          for (const k of summary.eventsByKind) text += keys.map((key) => csvText(String(k[key] ?? ''))).join(',') + '\n';
          await out.write(text);
        } else {
          for (const k of summary.eventsByKind) await out.write(JSON.stringify(k) + '\n');
        }
      }
      await out.commit();
    } catch (e) {
      await writer?.close();
      await out.abort();
      throw e;
    }
    // exit 0 all the same: the output holds everything that could be decoded
    const lost = dataLossText(summary.diagnostics);
    if (lost) note(`${lost} — see \`etw-decode summary\``);
    if (table !== 'events' && written === 0) {
      const inTrace = (WHOLE_TRACE_TABLE_NAMES as readonly string[]).includes(table) ? null : summary[table as SummaryTableName];
      note(selection && inTrace !== 0 ? `no ${table} rows in the selection (${selectionText(selection.describe(clockOf(info))).replace(/^selection: /, '')})${inTrace ? `; the trace has ${inTrace}` : ''}` : emptyTableText(table, summary));
    }
  });
}

function isDecodedTable(t: string): t is DecodedTableName {
  return (DECODED_TABLE_NAMES as readonly string[]).includes(t);
}

