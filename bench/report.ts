// Result records (the JSON written to bench/results/) and the printed table.
import type { ParallelResult } from './parallel.js';
import type { CaseGroup, EngineName } from './cases.js';
import type { GitInfo, MachineInfo } from './machine.js';
import type { ScaleEngine, ScaleResult } from './scale.js';

export interface CaseResult {
  name: string;
  group: CaseGroup;
  /** scale case only: 'read-only' = plain fs reads, '… cold' = after dropping the file from the page cache;
   *  'native': the C decoder of the shared bench on the same bytes (bench/native.ts), latency = its decode_s */
  engine: EngineName | ScaleEngine | `wasm threads=${number}` | 'native';
  inputBytes: number;
  outputBytes: number;
  throughputOf: 'input' | 'output';
  events: number;
  rows: number;
  /** per iteration, milliseconds */
  latencyMs: { p50: number; mean: number; min: number; max: number; rme: number };
  samples: number;
  /** MB/s (10^6 bytes) of input (decode, scale) or output (xpress), from the median iteration */
  mbPerS: number;
  meventsPerS: number;
  mrowsPerS: number;
  nsPerEvent: number;
  nsPerRow: number;
  /** scale case only */
  peakRssBytes?: number;
  rssStartBytes?: number;
}

export interface ResultFile {
  schema: 1;
  date: string;
  quick: boolean;
  filter: string[];
  machine: MachineInfo;
  git: GitInfo;
  settings: { fixtureBytes: number; timeMs: number; iterations: number; warmupMs: number };
  cases: CaseResult[];
  /** wasm MB/s ÷ reference MB/s per case (cases measured on both) */
  ratios: Record<string, number>;
  /** wasm median time ÷ native decode_s per case (cases the native decoder ran; absent in older files) */
  nativeRatios?: Record<string, number>;
  /** how the native decoder was built, or why it did not run */
  native?: { source: string; flags: string[] } | { skipped: string };
  scale?: ScaleResult;
  /** the parallel case (bench/parallel.ts) */
  parallel?: ParallelResult;
  notes: string[];
}

/** wasm time ÷ native time per case (> 1: the WebAssembly engine is slower). */
export function nativeRatiosOf(cases: readonly CaseResult[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const c of cases) {
    if (c.engine !== 'wasm') continue;
    const nat = cases.find((r) => r.name === c.name && r.engine === 'native');
    if (nat && nat.latencyMs.p50 > 0) out[c.name] = c.latencyMs.p50 / nat.latencyMs.p50;
  }
  return out;
}

export function ratiosOf(cases: readonly CaseResult[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const c of cases) {
    if (c.engine !== 'wasm') continue;
    const ref = cases.find((r) => r.name === c.name && r.engine === 'reference');
    if (ref && ref.mbPerS > 0) out[c.name] = c.mbPerS / ref.mbPerS;
  }
  return out;
}

function fmt(n: number, digits: number): string {
  if (!Number.isFinite(n) || n === 0) return '-';
  return n.toFixed(digits);
}

function sig(n: number): string {
  if (!Number.isFinite(n) || n === 0) return '-';
  return n >= 100 ? n.toFixed(0) : n >= 10 ? n.toFixed(1) : n.toFixed(2);
}

/** Renders rows as an aligned text table (the first `leftColumns` and the `leftLast` column left-aligned,
 *  the others right-aligned). */
export function textTable(header: string[], rows: string[][], leftColumns = 2, leftLast = false): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const left = (i: number) => i < leftColumns || (leftLast && i === header.length - 1);
  const line = (r: string[]) => r.map((cell, i) => (left(i) ? cell.padEnd(widths[i]!) : cell.padStart(widths[i]!))).join('  ').trimEnd();
  const rule = widths.map((w) => '-'.repeat(w)).join('  ');
  return [line(header), rule, ...rows.map(line)].join('\n');
}

export function resultsTable(cases: readonly CaseResult[], ratios: Record<string, number>, nativeRatios: Record<string, number> = {}): string {
  const withNative = Object.keys(nativeRatios).length > 0;
  const header = ['case', 'engine', 'MB/s', 'Mev/s', 'Mrows/s', 'ns/event', 'ns/row', 'median ms', '±%', 'n', 'wasm/ref'];
  if (withNative) header.push('wasm time/native');
  const rows = cases.map((c) => {
    const ratio = c.engine === 'wasm' && ratios[c.name] !== undefined ? `${ratios[c.name]!.toFixed(2)}×` : '';
    const nat = c.engine === 'wasm' && nativeRatios[c.name] !== undefined ? `${nativeRatios[c.name]!.toFixed(2)}×` : '';
    const mb = `${sig(c.mbPerS)}${c.throughputOf === 'output' ? ' out' : ''}`;
    return [
      c.name,
      c.engine,
      mb,
      c.group === 'xpress' ? '-' : sig(c.meventsPerS),
      c.group === 'xpress' ? '-' : sig(c.mrowsPerS),
      c.group === 'xpress' ? '-' : fmt(c.nsPerEvent, 1),
      c.group === 'xpress' ? '-' : fmt(c.nsPerRow, 1),
      c.latencyMs.p50 >= 100 ? c.latencyMs.p50.toFixed(0) : c.latencyMs.p50.toFixed(2),
      fmt(c.latencyMs.rme, 1),
      c.engine === 'native' ? `${c.samples} proc` : String(c.samples),
      ratio,
      ...(withNative ? [nat] : []),
    ];
  });
  return textTable(header, rows);
}

export function scaleTable(cases: readonly CaseResult[]): string {
  const gib = (n: number) => (n / 2 ** 30).toFixed(2);
  const mib = (n: number | undefined) => (!n ? '-' : (n / 2 ** 20).toFixed(0));
  const header = ['case', 'engine', 'file GiB', 'seconds', 'MB/s', 'Mev/s', 'Mrows/s', 'peak RSS MiB', 'RSS at start MiB', 'peak RSS / file'];
  const rows = cases.map((c) => [
    c.name,
    c.engine,
    gib(c.inputBytes),
    (c.latencyMs.p50 / 1000).toFixed(1),
    sig(c.mbPerS),
    c.events ? sig(c.meventsPerS) : '-',
    c.rows ? sig(c.mrowsPerS) : '-',
    mib(c.peakRssBytes),
    mib(c.rssStartBytes),
    c.peakRssBytes ? `${((100 * c.peakRssBytes) / c.inputBytes).toFixed(1)} %` : '-',
  ]);
  return textTable(header, rows);
}
