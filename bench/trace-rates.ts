// What a trace is made of, per MiB of file: events of each kind group (Thread Start/End and SetName, the
// rundowns, SampledProfile, provider events and their distinct kinds, ReadyThread, SpinLock, switches, …)
// from a summary's eventsByKind and row counts. bench/e2e.ts prints it for each trace it measures; run alone
// it writes the realistic trace of the writer (generateRealisticTraceChunks) and states its rates:
//   node dist-bench/bench/trace-rates.js [--bytes 64MiB] [--seed N] [--cpus 4] [FILE]
// (after `npm run build && npx tsc -p tsconfig.bench.json`). FILE: the rates of that trace instead.
import { closeSync, openSync, rmSync, statSync, writeSync } from 'node:fs';
import os from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { COUNTERS, streamFile } from '../src/node.js';
import type { KindRow } from '../src/result/event-kinds.js';
import { generateRealisticTraceChunks } from '../src/writer/index.js';
import { textTable } from './report.js';

/** The part of a summary (TraceSummary, or `summary --json`) the rates need. */
export interface RatesInput {
  events: number;
  eventsByKind: KindRow[];
  cswitch: number;
  readythread: number;
  spinlock: number;
  threads: number;
  processes: number;
  compact: { batches: number };
}

const MiB = 2 ** 20;

/** a name for the kind group of a row: hook names, `PERFINFO64 0x0F2E`, or the header type of provider events */
function group(k: KindRow): string {
  if (k.name) return k.name;
  if (k.hookId === 0x0f2e) return 'SampledProfile (0x0F2E)';
  if (k.hookId !== undefined) return `${k.headerType} 0x${k.hookId.toString(16).toUpperCase().padStart(4, '0')}`;
  return k.headerType;
}

/** Rows (kind group, events, per MiB, % of bytes, distinct kinds) of every kind group, the largest first,
 *  then the row counts of the tables. */
export function rateRows(s: RatesInput, fileBytes: number): string[][] {
  const mib = fileBytes / MiB;
  const groups = new Map<string, { count: number; bytes: number; kinds: number }>();
  for (const k of s.eventsByKind) {
    const name = group(k);
    const g = groups.get(name) ?? { count: 0, bytes: 0, kinds: 0 };
    g.count += k.count;
    g.bytes += k.bytes;
    g.kinds++;
    groups.set(name, g);
  }
  const per = (n: number) => (n / mib).toFixed(n / mib < 10 ? 1 : 0);
  const rows = [...groups]
    .sort((a, b) => b[1].count - a[1].count)
    .map(([name, g]) => [name, String(g.count), per(g.count), ((100 * g.bytes) / fileBytes).toFixed(1), String(g.kinds)]);
  const thread = ['Thread/Start', 'Thread/End', 'Thread/SetName'].reduce((n, x) => n + (groups.get(x)?.count ?? 0), 0);
  rows.push(
    ['(all events)', String(s.events), per(s.events), '', String(s.eventsByKind.length)],
    ['(Thread Start + End + SetName)', String(thread), per(thread), '', ''],
    ['(cswitch rows: switches)', String(s.cswitch), per(s.cswitch), '', ''],
    ['(readythread rows)', String(s.readythread), per(s.readythread), '', ''],
    ['(spinlock rows)', String(s.spinlock), per(s.spinlock), '', ''],
    ['(thread lifetimes)', String(s.threads), per(s.threads), '', ''],
    ['(process lifetimes)', String(s.processes), per(s.processes), '', ''],
  );
  return rows;
}

export const RATE_HEADER = ['kind', 'events', 'per MiB', '% bytes', 'kinds'];

export function parseSize(text: string): number {
  const m = /^(\d+(?:\.\d+)?)\s*(k|m|g)?i?b?$/i.exec(text.trim());
  if (!m) throw new Error(`cannot parse the size ${text}`);
  const unit = { k: 2 ** 10, m: 2 ** 20, g: 2 ** 30 }[(m[2] ?? '').toLowerCase() as 'k' | 'm' | 'g'] ?? 1;
  return Math.round(Number(m[1]) * unit);
}

async function main(): Promise<void> {
  const { values, positionals } = parseArgs({
    allowPositionals: true,
    options: { bytes: { type: 'string', default: '64MiB' }, seed: { type: 'string', default: String(0x5eed) }, cpus: { type: 'string', default: '4' } },
  });
  let file = positionals[0] ? resolve(positionals[0]) : '';
  const generated = !file;
  if (generated) {
    file = join(os.tmpdir(), `etw-decode-rates-${process.pid}.etl`);
    const fd = openSync(file, 'w');
    try {
      for (const c of generateRealisticTraceChunks({ seed: Number(values.seed), targetBytes: parseSize(values.bytes!), cpus: Number(values.cpus) })) writeSync(fd, c);
    } finally {
      closeSync(fd);
    }
  }
  try {
    const bytes = statSync(file).size;
    const r = await streamFile(file, { threads: 1 });
    const lost = COUNTERS.filter((c) => c.severity !== 'info' && r.summary.diagnostics[c.name]).map((c) => [c.name, r.summary.diagnostics[c.name]]);
    console.log(`${generated ? `realistic trace (seed ${values.seed}, ${values.cpus} CPUs)` : file}: ${(bytes / MiB).toFixed(1)} MiB`);
    console.log(textTable(RATE_HEADER, rateRows(r.summary, bytes), 1));
    console.log(lost.length ? `problems: ${lost.map(([k, v]) => `${k} ${v}`).join(', ')}` : 'no problem counters');
  } finally {
    if (generated) rmSync(file, { force: true });
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  main().catch((e: unknown) => {
    console.error(e instanceof Error ? (e.stack ?? e.message) : String(e));
    process.exit(2);
  });
}
