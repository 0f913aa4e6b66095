// `etw-decode spinlocks FILE`: which spin locks are most contended, by lock or by caller address
// (src/analysis/spinlocks.ts), from a streaming decode with borrowed rows (memory: one accumulator per
// distinct lock and caller). Text: an aligned table like `summary`; --json: one object, 64-bit values as
// strings (addresses in hex, the rest decimal).
import type { Command } from 'commander';
import { streamFile } from '../decode/files.js';
import type { SpinlockAnalysis, SpinlockStats } from '../analysis/spinlocks.js';
import { note, stdoutOutput, type CommandContext } from './io.js';
import { addDecoding, addSelection, decodeOptions, option, type DecodingOpts, type SelectionOpts } from './options.js';
import { emptyTableText, jsonReplacer } from '../output/summary-text.js';
import { dataLossText } from '../result/diagnostics.js';

export type SpinlocksBy = 'lock' | 'caller';

export function addSpinlocksCommand(program: Command, { input }: CommandContext): void {
  addDecoding(
    addSelection(program.command('spinlocks'))
      .description('which spin locks are most contended: rows, contended rows, spin counts, wait and hold cycles by lock or caller address')
      .argument('<file>', 'ETL file; - (or a FIFO) reads the trace from a pipe')
      .addOption(option.by('key', 'group by spin lock address or by caller address', ['lock', 'caller']))
      .addOption(option.top('show the first N locks or callers', false))
      .addOption(option.json('64-bit values as strings: addresses in hex, the rest decimal')),
  ).action(async (file: string, o: DecodingOpts & SelectionOpts & { by: SpinlocksBy; top: number; json?: boolean }) => {
    const inp = await input(file);
    const { commandSelection, selectTable, selectionText } = await import('./selection.js');
    const { SpinlockAnalyzer } = await import('../analysis/spinlocks.js');
    const analyzer = new SpinlockAnalyzer();
    // spinlock rows carry a thread: processes are matched through the lifetimes (a first decode)
    const selection = await commandSelection(inp.path, inp.name, o, decodeOptions(o), true);
    const res = await streamFile(inp.path, {
      ...decodeOptions(o),
      rows: 'borrow', // aggregated before onRows returns; nothing of a chunk is kept
      tables: ['spinlock'], // nothing else is decoded
      onRows: ({ spinlock }) => analyzer.add(selection ? selectTable(spinlock, selection) : spinlock),
    });
    // only the rows shown are built (a trace can have millions of distinct locks)
    const analysis = analyzer.result(res.info, { top: o.top });
    const out = stdoutOutput();
    if (o.json) await out.write(JSON.stringify({ ...spinlocksJson(file, analysis, o.by, o.top), ...(selection ? { selection: selection.describe(res.clock) } : {}) }, jsonReplacer, 2) + '\n');
    else if (analysis.totals.rows > 0) await out.write((selection ? selectionText(selection.describe(res.clock)) + '\n' : '') + renderSpinlocks(inp.name, analysis, o.by, o.top));
    await out.commit();
    const lost = dataLossText(res.summary.diagnostics);
    if (lost) note(`${lost} — see \`etw-decode summary\``);
    if (analysis.totals.rows === 0) note(selection && res.summary.spinlock > 0 ? `no spinlock rows in the ${selectionText(selection.describe(res.clock))}; the trace has ${res.summary.spinlock}` : emptyTableText('spinlock', res.summary));
  });
}

/** An address as JSON and table text: 0x and lowercase hex digits, no padding. */
export function addressText(a: bigint): string {
  return '0x' + a.toString(16);
}

const big = (v: bigint | null): string | null => (v === null ? null : v.toString());

/** The --json object: the analysis for `by`, its first `top` rows; bigints as strings. */
export function spinlocksJson(file: string, a: SpinlockAnalysis, by: SpinlocksBy, top: number): object {
  const rows = (by === 'lock' ? a.byLock : a.byCaller).slice(0, top);
  return {
    file,
    by,
    cpuSpeedInMHz: a.cpuSpeedInMHz,
    totals: a.totals,
    top: rows.map((s) => ({
      address: addressText(s.address),
      count: s.count,
      contended: s.contended,
      spinCountSum: big(s.spinCountSum),
      spinCountMax: s.spinCountMax,
      waitTimeInCyclesSum: big(s.waitTimeInCyclesSum),
      waitTimeInCyclesMax: s.waitTimeInCyclesMax,
      holdCyclesSum: big(s.holdCyclesSum),
      holdCyclesMax: big(s.holdCyclesMax),
      inconsistent: s.inconsistent,
      waitNsSum: big(s.waitNsSum),
      waitNsMax: big(s.waitNsMax),
      holdNsSum: big(s.holdNsSum),
      holdNsMax: big(s.holdNsMax),
    })),
  };
}

const percent = (part: number, whole: number): string => (whole === 0 ? '-' : ((100 * part) / whole).toFixed(1));

interface Column {
  /** label over a group of columns (right-aligned over the group), '' for none */
  group: string;
  head: string;
  cell: (s: SpinlockStats) => string;
  left?: boolean;
}

const text = (v: bigint | number | null): string => (v === null ? '-' : String(v));

/** The text output: a line of totals, a line naming what is shown, and an aligned table. */
export function renderSpinlocks(name: string, a: SpinlockAnalysis, by: SpinlocksBy, top: number): string {
  const t = a.totals;
  const all = by === 'lock' ? a.byLock : a.byCaller;
  const rows = all.slice(0, top);
  const cols: Column[] = [
    { group: '', head: by, cell: (s) => addressText(s.address), left: true },
    { group: '', head: 'count', cell: (s) => text(s.count) },
    { group: 'contended', head: 'rows', cell: (s) => text(s.contended) },
    { group: 'contended', head: '%', cell: (s) => percent(s.contended, s.count) },
    { group: 'spin count', head: 'sum', cell: (s) => text(s.spinCountSum) },
    { group: 'spin count', head: 'max', cell: (s) => text(s.spinCountMax) },
    { group: 'wait cycles', head: 'sum', cell: (s) => text(s.waitTimeInCyclesSum) },
    { group: 'wait cycles', head: 'max', cell: (s) => text(s.waitTimeInCyclesMax) },
    { group: 'hold cycles', head: 'sum', cell: (s) => text(s.holdCyclesSum) },
    { group: 'hold cycles', head: 'max', cell: (s) => text(s.holdCyclesMax) },
  ];
  if (t.inconsistent > 0) cols.push({ group: '', head: 'inconsistent', cell: (s) => text(s.inconsistent) });
  if (a.cpuSpeedInMHz !== null) {
    cols.push(
      { group: 'wait ns', head: 'sum', cell: (s) => text(s.waitNsSum) },
      { group: 'wait ns', head: 'max', cell: (s) => text(s.waitNsMax) },
      { group: 'hold ns', head: 'sum', cell: (s) => text(s.holdNsSum) },
      { group: 'hold ns', head: 'max', cell: (s) => text(s.holdNsMax) },
    );
  }
  const lines = [
    `${name}: ${t.rows} spin lock rows, ${t.contended} contended (${percent(t.contended, t.rows)}%), ${t.locks} locks, ${t.callers} callers` +
      (a.cpuSpeedInMHz !== null ? `; CPU ${a.cpuSpeedInMHz} MHz (ns = cycles × 1000 / MHz)` : '; CpuSpeedInMHz unknown: cycles only') +
      (t.inconsistent > 0 ? `; ${t.inconsistent} ${t.inconsistent === 1 ? 'row' : 'rows'} with releaseTime < acquireTime (inconsistent: not in hold)` : ''),
    `top ${rows.length} of ${by === 'lock' ? t.locks : t.callers} ${by === 'lock' ? 'locks' : 'callers'} by contended rows, then wait cycles:`,
    ...table(cols, rows),
  ];
  return lines.join('\n') + '\n';
}

/** Two header lines (group labels, column heads) and one line per row; columns two spaces apart. */
function table(cols: Column[], rows: SpinlockStats[]): string[] {
  const cells = rows.map((r) => cols.map((c) => c.cell(r)));
  // a loop, not Math.max(...cells): --top can ask for millions of rows
  const width = cols.map((c) => c.head.length);
  for (const r of cells) for (let i = 0; i < width.length; i++) if (r[i]!.length > width[i]!) width[i] = r[i]!.length;
  // a group label wider than its columns widens them, evenly
  for (let i = 0; i < cols.length; ) {
    let j = i;
    while (j + 1 < cols.length && cols[j + 1]!.group === cols[i]!.group && cols[i]!.group !== '') j++;
    const span = width.slice(i, j + 1).reduce((a, b) => a + b, 0) + 2 * (j - i);
    const extra = cols[i]!.group.length - span;
    for (let k = i; k <= j && extra > 0; k++) width[k]! += Math.floor(extra / (j - i + 1)) + (k - i < extra % (j - i + 1) ? 1 : 0);
    i = j + 1;
  }
  const line = (values: string[]) =>
    values
      .map((v, i) => (cols[i]!.left ? v.padEnd(width[i]!) : v.padStart(width[i]!)))
      .join('  ')
      .trimEnd();
  let groups = '';
  for (let i = 0; i < cols.length; ) {
    let j = i;
    while (j + 1 < cols.length && cols[j + 1]!.group === cols[i]!.group && cols[i]!.group !== '') j++;
    const span = width.slice(i, j + 1).reduce((a, b) => a + b, 0) + 2 * (j - i);
    groups += (i > 0 ? '  ' : '') + cols[i]!.group.padStart(span);
    i = j + 1;
  }
  return [groups.trimEnd(), line(cols.map((c) => c.head)), ...cells.map(line)];
}
