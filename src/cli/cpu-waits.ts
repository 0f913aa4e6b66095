// `etw-decode cpu FILE --waits`: the blocked time of the switch-ins by the stack where threads waited and by
// the stack of the thread that readied them (src/analysis/waits.ts; PerfView's Thread Time with ReadyThread),
// as an aligned table or JSON, or with --pprof a gzipped pprof profile of it (output/pprof.ts WaitsPprof).
// Two passes, as a streamed dump with stacks (src/derive/stack-pass.ts): the first decodes the stack tables
// and the thread and image lifetimes (a stack key can be defined at the trace's end), the second streams the
// switches and ReadyThread events: their stacked rows join the waits (WaitStackJoin keeps only those) and
// the cpuUsage rows derived from them are summed as they come. Memory grows with the stacks and threads,
// never with the switches. Loaded by cpu.ts only with --waits.
import type { WaitAnalysis, WaitStack } from '../analysis/waits.js';
import { selectionText } from '../select/selection.js';
import { streamFile } from '../decode/files.js';
import { decodedTablesFor } from '../tables/sources.js';
import type { Table } from '../tables/table.js';
import { emptyTableText, jsonReplacer } from '../output/summary-text.js';
import { alignedTable } from './cpu-text.js';
import { note, stdoutOutput, writeWhole } from './io.js';
import { decodeOptions, type DecodingOpts, type SelectionOpts } from './options.js';

export async function waits(inp: { path: string; name: string }, file: string, o: DecodingOpts & SelectionOpts & { top: number; json?: boolean; pprof?: string }): Promise<void> {
  const [{ commandSelection }, { WaitStackJoin, WaitTotals }, { CpuUsageDeriver }, { selectTable }, { stackPass }] = await Promise.all([
    import('./selection.js'),
    import('../analysis/waits.js'),
    import('../analysis/cpu.js'),
    import('../select/tables.js'),
    import('../convert/stack-pass.js'),
  ]);
  const selection = await commandSelection(inp.path, inp.name, o, decodeOptions(o), false);
  // the first pass: the stacks, the lifetimes every cpuUsage row takes its processes from (as a whole decode's)
  // and, for the profile, the processes' names
  const pass = await stackPass(inp.path, { ...decodeOptions(o), onProgress: undefined }, ['cpuUsage'], { threads: true, processes: o.pprof !== undefined });
  const stacks = pass.resolved();
  const join = new WaitStackJoin();
  const pprof = o.pprof !== undefined ? new (await import('../output/pprof.js')).WaitsPprof({ images: pass.images, processes: pass.processes, stackEvents: pass.stackEvents, stacks, clock: pass.clock }) : null;
  const totals = pprof ? null : new WaitTotals(stacks);
  const onUsage = (rows: Table<'cpuUsage'>) => {
    const u = selection?.active ? selectTable(rows, selection) : rows;
    const rs = join.rows(u);
    if (pprof) pprof.add(u, rs);
    else totals!.add(u, rs);
    deriver.recycle(rows);
  };
  const deriver = new CpuUsageDeriver(onUsage, { engine: o.engine, threads: pass.threads! });
  const res = await streamFile(inp.path, {
    ...decodeOptions(o),
    rows: 'borrow',
    tables: decodedTablesFor(['cpuUsage']),
    onRows: (rows) => {
      // the stacked rows first: the rows derived from this chunk look them up
      join.add(rows.cswitch, pass.stackIdsOf('cswitch', rows.cswitch), rows.readythread, pass.stackIdsOf('readythread', rows.readythread));
      deriver.add(rows.cswitch, rows.readythread, rows.threadEvents);
    },
  });
  deriver.finish();
  if (pprof) {
    const [{ gzipSync }, { VERSION }] = await Promise.all([import('node:zlib'), import('../version.js')]);
    const comment = `etw-decode ${VERSION}: blocked time of ${inp.name}: the readying thread's stack, READIED BY, the stack where the thread waited; frames are module!0xoffset (no symbols)`;
    await writeWhole(o.pprof!, gzipSync(pprof.finish(comment)));
    if (res.summary.cswitch === 0) note(emptyTableText('cswitch', res.summary));
    return;
  }
  const a = totals!.result({ images: pass.images, stackEvents: pass.stackEvents, ticksPerSecond: res.clock?.ticksPerSecond ?? null }, { top: o.top });
  const out = stdoutOutput();
  if (o.json) await out.write(JSON.stringify({ file, ...a, selection: selection?.describe(res.clock) ?? null }, jsonReplacer, 2) + '\n');
  else await out.write((selection ? selectionText(selection.describe(res.clock)) + '\n' : '') + renderWaits(inp.name, a, o.top));
  await out.commit();
  if (res.summary.cswitch === 0) note(emptyTableText('cswitch', res.summary));
  else if (pass.stackEvents.length === 0) note('the trace has no stack events: every wait is under "(no stack)" (record CSwitch and ReadyThread stacks: xperf -stackwalk CSwitch+ReadyThread, or a WPR profile with them)');
}

const FRAMES_SHOWN = 6;

function stackText(s: WaitStack): string {
  if (s.stackId < 0) return '(no stack)';
  const shown = s.frames.slice(0, FRAMES_SHOWN).join(' ← ');
  return s.frames.length > FRAMES_SHOWN ? `${shown} ← … (${s.frames.length} frames)` : shown;
}

/** The text: a line of totals, then the top stacks where threads waited and that readied them. */
export function renderWaits(name: string, a: WaitAnalysis, top: number): string {
  const ms = a.waitMs !== null;
  const unit = ms ? 'ms' : 'ticks';
  const amount = (x: { waitTicks: bigint; waitMs: number | null }) => (x.waitMs !== null ? x.waitMs.toFixed(3) : String(x.waitTicks));
  const pct = (x: { waitTicks: bigint }) => (a.waitTicks === 0n ? '-' : ((100 * Number(x.waitTicks)) / Number(a.waitTicks)).toFixed(1) + '%');
  const rows = (list: WaitStack[]) => list.map((s) => [amount(s), pct(s), String(s.waits), s.processId === null ? '-' : String(s.processId), stackText(s)]);
  const head = [`blocked ${unit}`, '%', 'waits', 'pid', 'stack (leaf first)'];
  const left = new Set([4]);
  return [
    `${name}: ${a.waits} waits, ${amount(a)} ${unit} blocked; ${a.withWaitStack} with the stack where the thread waited, ${a.withReadyStack} with the stack of the thread that readied it`,
    `where threads waited${top ? ` (top ${top})` : ''}:`,
    ...alignedTable(head, rows(a.byWaitStack), left),
    `readied by${top ? ` (top ${top})` : ''}:`,
    ...alignedTable(head, rows(a.byReadyStack), left),
  ].join('\n') + '\n';
}
