// `etw-decode cpu FILE`: CPU time, ready time and waits by process or thread (WPA's CPU Usage (Precise)),
// with the percentiles of ready and wait times and, with --worst N, the N longest ready delays; the cpuUsage rows derived while the trace streams by (derive/cpu-usage.ts) and folded as they come
// (analysis/cpu.ts); text: cpu-text.ts, loaded with the command as the analysis is.
import type { Command } from 'commander';
import { streamFile } from '../decode/files.js';
import { emptyTableText, jsonReplacer } from '../output/summary-text.js';
import { dataLossText } from '../result/diagnostics.js';
import { CliError, EXIT, note, stdoutOutput, type CommandContext } from './io.js';
import { addDecoding, addSelection, decodeOptions, option, type DecodingOpts, type SelectionOpts } from './options.js';

export function addCpuCommand(program: Command, { input }: CommandContext): void {
  addDecoding(
    addSelection(program.command('cpu'))
      .description('CPU time, ready time and waits by process or thread (WPA CPU Usage (Precise)), from CSwitch or compact switches')
      .argument('<file>', 'ETL file; - (or a FIFO) reads the trace from a pipe')
      .addOption(option.by('what', 'group rows by (module, address: with --sampled)', ['process', 'thread', 'module', 'address']))
      .addOption(option.sampled())
      .addOption(option.waits())
      .addOption(option.pprof())
      .addOption(option.top('rows to show (0 = all)', true))
      .addOption(option.worst())
      .addOption(option.json('64-bit values as decimal strings')),
  ).action(async (file: string, o: DecodingOpts & SelectionOpts & { by: 'process' | 'thread' | 'module' | 'address'; top: number; worst: number; json?: boolean; sampled?: boolean; waits?: boolean; pprof?: string }) => {
    if ((o.by === 'module' || o.by === 'address') && !o.sampled) throw new CliError(`--by ${o.by} needs --sampled (modules and addresses come from the sampled instruction pointers)`, EXIT.usage);
    if (o.pprof !== undefined && !o.sampled && !o.waits) throw new CliError('--pprof needs --sampled (a profile of the SampledProfile events) or --waits (of the blocked time)', EXIT.usage);
    const inp = await input(file);
    if (o.sampled && o.waits) throw new CliError('--sampled and --waits are two analyses: give one', EXIT.usage);
    if (o.sampled) return (await import('./cpu-sampled.js')).sampled(inp, file, o);
    if (o.waits) return (await import('./cpu-waits.js')).waits(inp, file, o);
    const { commandSelection } = await import('./selection.js');
    const [{ CpuAnalyzer, CpuUsageDeriver }, { renderCpu }, { decodedTablesFor }] = await Promise.all([import('../analysis/cpu.js'), import('./cpu-text.js'), import('../tables/sources.js')]);
    // every row carries its process: the lifetimes are needed only to resolve process names
    const selection = await commandSelection(inp.path, inp.name, o, decodeOptions(o), false);
    // percentiles only where they are shown: by thread and in --json (the by-process text has none)
    const analyzer = new CpuAnalyzer({ worst: o.worst, selection: selection ?? undefined, percentiles: o.json === true || o.by === 'thread' });
    // rows folded as they complete, no columns made (--engine reference: the TypeScript core too); on a large
    // input with a core to spare, by the WebAssembly core on a worker while this thread decodes
    const request = o.engine === 'reference' ? null : analyzer.coreFold();
    const { RemoteCpuFold, remoteFoldPays } = await import('../derive/remote-cpu-fold.js');
    const remote = request !== null && remoteFoldPays(inp.path, o.threads) ? new RemoteCpuFold(analyzer, request) : null;
    const deriver = remote ?? new CpuUsageDeriver(analyzer, { engine: o.engine });
    const res = await streamFile(inp.path, {
      ...decodeOptions(o),
      rows: 'borrow',
      tables: decodedTablesFor(['cpuUsage', 'threads', 'processes']), // the rows and the names: nothing else is decoded
      onRows: (rows) => deriver.add(rows.cswitch, rows.readythread, rows.threadEvents),
    }).catch(async (e: unknown) => {
      await remote?.close();
      throw e;
    });
    const stats = await deriver.finish();
    const a = analyzer.result(res, { dataLoss: dataLossText(res.summary.diagnostics), stats });
    const out = stdoutOutput();
    if (o.json) {
      const list = o.by === 'thread' ? a.threads : a.processes;
      await out.write(JSON.stringify({ file, by: o.by, ticksPerSecond: a.ticksPerSecond, total: a.total, selection: a.selection, warnings: a.warnings, rows: o.top ? list.slice(0, o.top) : list, worst: a.worst, cpuUsage: stats }, jsonReplacer, 2) + '\n');
    } else {
      await out.write(renderCpu(inp.name, a, o.by === 'thread' ? 'thread' : 'process', o.top, stats));
    }
    await out.commit();
    for (const w of a.warnings) note(w.message);
    if (res.summary.cswitch === 0) note(emptyTableText('cswitch', res.summary));
  });
}
