// `etw-decode cpu FILE --waits`: the blocked time of the switch-ins by the stack where threads waited and by
// the stack of the thread that readied them (src/analysis/waits.ts; PerfView's Thread Time with ReadyThread),
// as an aligned table or JSON, or with --pprof a gzipped pprof profile of it (output/pprof.ts waitsToPprof). Stacks need the whole trace (a stack key can be defined at its end), so the
// switch, ready, thread and stack rows are kept until the decode ends. Loaded by cpu.ts only with --waits.
import type { WaitAnalysis, WaitStack } from '../analysis/waits.js';
import { selectionText } from '../select/selection.js';
import { streamFile } from '../decode/files.js';
import { decodedTablesFor } from '../tables/sources.js';
import { concatChunks, type ColumnChunk, type DecodedTableName } from '../tables/schema.js';
import { Table } from '../tables/table.js';
import { emptyTableText, jsonReplacer } from '../output/summary-text.js';
import { alignedTable } from './cpu-text.js';
import { note, stdoutOutput, writeWhole } from './io.js';
import { decodeOptions, type DecodingOpts, type SelectionOpts } from './options.js';

const KEPT = ['cswitch', 'readythread', 'threadEvents', 'stackEvents', 'stackEventFrames'] as const satisfies readonly DecodedTableName[];

export async function waits(inp: { path: string; name: string }, file: string, o: DecodingOpts & SelectionOpts & { top: number; json?: boolean; pprof?: string }): Promise<void> {
  const [{ commandSelection }, { analyzeWaits }, { cpuUsage }, { selectTable }] = await Promise.all([
    import('./selection.js'),
    import('../analysis/waits.js'),
    import('../analysis/cpu.js'),
    import('../select/tables.js'),
  ]);
  const selection = await commandSelection(inp.path, inp.name, o, decodeOptions(o), false);
  const chunks = Object.fromEntries(KEPT.map((t) => [t, [] as ColumnChunk[]])) as Record<(typeof KEPT)[number], ColumnChunk[]>;
  const res = await streamFile(inp.path, {
    ...decodeOptions(o),
    rows: 'copy',
    tables: decodedTablesFor([...KEPT, 'threads', 'processes', 'images']),
    onRows: (rows) => {
      for (const t of KEPT) if (rows[t].length) chunks[t].push(rows[t]);
    },
  });
  const table = <T extends (typeof KEPT)[number]>(t: T) => new Table(t, concatChunks(t, chunks[t].splice(0)));
  const cswitch = table('cswitch');
  const readythread = table('readythread');
  const usage = cpuUsage({ cswitch, readythread, threadEvents: table('threadEvents'), threads: res.threads } as Parameters<typeof cpuUsage>[0]);
  const selected = selection ? selectTable(usage, selection) : usage;
  const stackEvents = table('stackEvents');
  const stackEventFrames = table('stackEventFrames');
  if (o.pprof !== undefined) {
    const [{ waitsToPprof }, { gzipSync }, { VERSION }] = await Promise.all([import('../output/pprof.js'), import('node:zlib'), import('../version.js')]);
    const comment = `etw-decode ${VERSION}: blocked time of ${inp.name}: the readying thread's stack, READIED BY, the stack where the thread waited; frames are module!0xoffset (no symbols)`;
    const profile = gzipSync(waitsToPprof({ cpuUsage: selected, cswitch, readythread, stackEvents, stackEventFrames, images: res.images, processes: res.processes, clock: res.clock }, { comment }));
    await writeWhole(o.pprof, profile);
    if (res.summary.cswitch === 0) note(emptyTableText('cswitch', res.summary));
    return;
  }
  const a = analyzeWaits(
    {
      cpuUsage: selected,
      cswitch,
      readythread,
      stackEvents,
      stackEventFrames,
      images: res.images,
      ticksPerSecond: res.clock?.ticksPerSecond ?? null,
    },
    { top: o.top },
  );
  const out = stdoutOutput();
  if (o.json) await out.write(JSON.stringify({ file, ...a, selection: selection?.describe(res.clock) ?? null }, jsonReplacer, 2) + '\n');
  else await out.write((selection ? selectionText(selection.describe(res.clock)) + '\n' : '') + renderWaits(inp.name, a, o.top));
  await out.commit();
  if (res.summary.cswitch === 0) note(emptyTableText('cswitch', res.summary));
  else if (res.summary.stackEvents === 0) note('the trace has no stack events: every wait is under "(no stack)" (record CSwitch and ReadyThread stacks: xperf -stackwalk CSwitch+ReadyThread, or a WPR profile with them)');
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
