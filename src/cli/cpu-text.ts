// Text rendering of a CPU analysis (the CLI's `cpu` without --json): an aligned table per process or
// thread (by thread also the ready time's p50/p90/p99/max), times in milliseconds when the trace's clock
// converts (raw ticks otherwise), then the longest ready delays when asked (--worst).
import { selectionText } from '../select/selection.js';
import type { CpuAnalysis, CpuTotals, Percentiles } from '../analysis/cpu.js';
import type { CpuUsageStats } from '../derive/cpu-usage.js';

/** Right-aligns every column but the text ones (left-aligned), two spaces apart. */
export function alignedTable(header: string[], rows: string[][], left: ReadonlySet<number>): string[] {
  // a loop, not Math.max(...cells): a table can have a row per distinct address (millions)
  const widths = header.map((h) => h.length);
  for (const r of rows) for (let c = 0; c < widths.length; c++) if (r[c]!.length > widths[c]!) widths[c] = r[c]!.length;
  const line = (cells: string[]) => cells.map((v, c) => (left.has(c) ? v.padEnd(widths[c]!) : v.padStart(widths[c]!))).join('  ').trimEnd();
  return [line(header), ...rows.map(line)];
}

export function renderCpu(file: string, a: CpuAnalysis, by: 'process' | 'thread', top: number, stats: CpuUsageStats): string {
  const ms = a.ticksPerSecond !== null;
  const unit = ms ? 'ms' : 'ticks';
  const time = (t: CpuTotals, k: 'cpu' | 'ready' | 'wait'): string =>
    ms ? (t[`${k}Ms`] as number).toFixed(3) : String(t[`${k}Ticks`]);
  const pct = (t: CpuTotals): string => (a.total.cpuTicks > 0n ? `${(Number((t.cpuTicks * 100_000n) / a.total.cpuTicks) / 1000).toFixed(1)}%` : '-');
  const lines = [
    `${file}: CPU usage by ${by} (CPU Usage (Precise)): ${a.total.switchIns} switch-ins, ${time(a.total, 'cpu')} ${unit} of CPU time in total` +
      (ms ? '' : ' (the clock does not convert: raw ticks)'),
  ];
  if (a.selection) lines.push(selectionText(a.selection));
  const list = by === 'process' ? a.processes : a.threads;
  const shown = top ? list.slice(0, top) : list;
  const pTime = (p: Percentiles | null, k: 'p50' | 'p90' | 'p99' | 'max'): string =>
    p === null || p[`${k}Ticks`] === null ? '-' : ms ? (p[`${k}Ms`] as number).toFixed(3) : String(p[`${k}Ticks`]);
  const name = (s: string | null, pid: number | null) => s ?? (pid === 0 ? 'Idle' : pid === null ? '(unknown)' : '?');
  if (by === 'process') {
    const rows = a.processes.slice(0, shown.length).map((p) => [
      name(p.imageFileName, p.processId),
      p.processId === null ? '-' : String(p.processId),
      String(p.threads),
      String(p.switchIns),
      time(p, 'cpu'),
      pct(p),
      time(p, 'ready'),
      time(p, 'wait'),
    ]);
    lines.push(...alignedTable(['process', 'pid', 'threads', 'switch-ins', `CPU ${unit}`, 'CPU %', `ready ${unit}`, `waits ${unit}`], rows, new Set([0])));
  } else {
    const rows = a.threads.slice(0, shown.length).map((t) => [
      String(t.threadId),
      t.name ?? '',
      name(t.imageFileName, t.processId),
      t.processId === null ? '-' : String(t.processId),
      String(t.switchIns),
      time(t, 'cpu'),
      pct(t),
      time(t, 'ready'),
      time(t, 'wait'),
      pTime(t.readyPercentiles, 'p50'),
      pTime(t.readyPercentiles, 'p90'),
      pTime(t.readyPercentiles, 'p99'),
      pTime(t.readyPercentiles, 'max'),
    ]);
    const head = ['tid', 'thread', 'process', 'pid', 'switch-ins', `CPU ${unit}`, 'CPU %', `ready ${unit}`, `waits ${unit}`];
    lines.push(...alignedTable([...head, `ready p50 ${unit}`, `p90 ${unit}`, `p99 ${unit}`, `max ${unit}`], rows, new Set([1, 2])));
  }
  if (shown.length < list.length) lines.push(`… ${list.length - shown.length} more (--top 0 shows all)`);
  if (a.worst.length) {
    lines.push('', `the ${a.worst.length} longest ready delays (switchInTime − readyTime):`);
    const at = ms ? 'switch-in ns' : 'switch-in ticks';
    const rows = a.worst.map((w) => [
      ms ? (w.readyMs as number).toFixed(3) : String(w.readyTicks),
      String(w.threadId),
      w.name ?? '',
      name(w.imageFileName, w.processId),
      w.processId === null ? '-' : String(w.processId),
      String(w.cpu),
      String(w.switchInNs ?? w.switchInTime),
      w.readyingThreadId === null ? '-' : String(w.readyingThreadId),
      w.readyingThreadId === null ? '' : name(w.readyingImageFileName, w.readyingProcessId),
      w.readyingProcessId === null ? '-' : String(w.readyingProcessId),
    ]);
    lines.push(...alignedTable([`ready ${unit}`, 'tid', 'thread', 'process', 'pid', 'cpu', at, 'readied by tid', 'process', 'pid'], rows, new Set([2, 3, 8])));
  }
  if (stats.lateEvents) lines.push(`note: ${stats.lateEvents} events arrived behind the reorder window (ready times or process ids may be missing)`);
  if (stats.unresolvedRows) lines.push(`note: ${stats.unresolvedRows} switch-ins were counted before their thread's process was known (more were waiting than the hold keeps): they may count as (unknown)`);
  return lines.join('\n') + '\n';
}
