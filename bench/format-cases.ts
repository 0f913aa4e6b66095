// format cases (issue 10): CSV and JSON lines of every table, MB/s of output. The two columns of the table:
//   wasm       the byte encoder `dump` uses (src/output/text.ts TextTableWriter: its WebAssembly row loop,
//              src/output/text-wasm.ts; the notes give each table's figure beside its TypeScript twin's)
//   reference  the former string formatter (test/helpers/format-oracle.ts) + UTF-8 encoding, as `dump` did
// Input: every table of the decode/sched trace (cswitch, readythread, thread and process events, threads,
// processes, cpuUsage), the spinlock rows of the decode/mixed trace and the samples, images, intervals and
// stacks of a profiled schedule, each cut or repeated to the same
// row count, so that small tables measure rows, not per-call costs. One iteration formats them all.
import { concatChunks, TABLE_NAMES, type TableName } from '../src/tables/schema.js';
import { Table } from '../src/tables/table.js';
import { cpuUsage, decodeSync, threadStates, TextTableWriter, wholeTraceTable, type FormatOptions } from '../src/node.js';
import { formatRows, headerLine } from '../test/helpers/format-oracle.js';
import { chunkMessage, chunkOf } from '../src/tables/chunk-message.js';
import { textWasmSettings } from '../src/output/text-wasm.js';
import type { BenchCase, CaseSettings, PreparedCase } from './cases.js';
import { scheduleFixture, traceFixture } from './fixtures.js';
import { simulateSchedule, writeTrace } from '../src/writer/index.js';

/** rows per table in one iteration (the reference formatter runs at ~10 MB/s: this keeps it to seconds) */
const ROWS = { full: 40_000, quick: 10_000 };

const tableSets = new Map<number, { tables: Table[]; note: string | null; clock: FormatOptions['clock'] }>();

/** Every table with exactly `rows` rows (cut, or repeated whole), and the schedule's clock. */
function benchTables(s: CaseSettings, rows: number) {
  let set = tableSets.get(s.fixtureBytes);
  if (set) return set;
  const r = decodeSync(scheduleFixture(s.fixtureBytes));
  // the same fixture as decode/mixed (cases.ts MIXED), for its SpinLock rows
  const mixed = decodeSync(traceFixture('mixed', { seed: 0x5eed, cpus: 4, targetBytes: s.fixtureBytes }).bytes);
  // and a schedule with SampledProfile, image, interval and stack events, for those tables' rows
  const profiled = decodeSync(writeTrace(simulateSchedule({ seed: 0x5eed, cpus: 4, duration: 400_000, switchMode: 'mixed', profileInterval: 500, images: true, stacks: true }).description).bytes);
  const PROFILED: readonly TableName[] = ['samples', 'imageEvents', 'images', 'sampleIntervals', 'stackEvents', 'stackEventFrames'];
  const source = (name: TableName): Table =>
    name === 'cpuUsage' ? cpuUsage(r) : name === 'threadStates' ? threadStates(r) : name === 'stacks' || name === 'stackFrames' ? wholeTraceTable(profiled, name) : name === 'spinlock' ? mixed.spinlock : (PROFILED.includes(name) ? profiled : r)[name];
  const counts: string[] = [];
  const tables = TABLE_NAMES.map((name) => {
    const t = source(name);
    if (t.length === 0) throw new Error(`format bench: the fixture has no ${name} rows`);
    counts.push(`${name} ${t.length}`);
    const chunk = { length: t.length, columns: t.columns };
    const all = t.length >= rows ? chunk : concatChunks(name, Array.from({ length: Math.ceil(rows / t.length) }, () => chunk));
    // as a formatting worker gets it (chunkMessage → chunkOf): its text columns with their codes
    const cut = { length: rows, columns: all.columns.map((c) => c.slice(0, rows)) as typeof all.columns };
    return new Table(name, chunkOf(chunkMessage(cut, true).chunk));
  });
  set = { tables, clock: r.clock, note: `format/*: ${rows} rows of each table, cut or repeated from: ${counts.join(', ')}` };
  tableSets.set(s.fixtureBytes, set);
  return set;
}

/** Bytes of `t` through TextTableWriter (the sink only counts: the figure is formatting). */
function encode(t: Table, o: FormatOptions): number {
  let bytes = 0;
  const w = new TextTableWriter(t.name, o, (b) => {
    bytes += b.length;
  });
  w.writeHeader();
  w.write(t);
  w.end();
  return bytes;
}

/** Bytes of `t` through the former formatter, encoded as `dump` wrote it. */
function encodeReference(t: Table, o: FormatOptions): number {
  return Buffer.byteLength(headerLine(t.name, o)) + Buffer.from(formatRows(t, o), 'utf8').length;
}

/** Median MB/s of output of `run` over about `ms` milliseconds (at least 5 runs). */
function medianMBps(run: () => number, ms: number): number {
  const times: number[] = [];
  let bytes = 0;
  const end = performance.now() + ms;
  while (times.length < 5 || performance.now() < end) {
    const t0 = performance.now();
    bytes = run();
    times.push(performance.now() - t0);
  }
  times.sort((a, b) => a - b);
  return bytes / 1e3 / times[times.length >> 1]!;
}

function formatCase(format: FormatOptions['format'], extras: boolean): BenchCase {
  const label = `${format}${extras ? ' --names --time ns' : ''}`;
  return {
    name: `format/${format}${extras ? '-names-time' : ''}`,
    group: 'format',
    description: `every table as ${label}: "wasm" = the byte encoder of dump (TextTableWriter: its WebAssembly row loop, src/output/text-wasm.ts, text columns from their codes as a worker's chunk has them), "reference" = the former string formatter; MB/s of output`,
    prepare(s): PreparedCase {
      const quick = s.fixtureBytes < 32 << 20;
      const { tables, clock } = benchTables(s, quick ? ROWS.quick : ROWS.full);
      const o: FormatOptions = extras ? { format, names: true, time: 'ns', clock } : { format };
      // the encoders agree on every table (a real check: the test suite has the thorough one)
      const set = benchTables(s, quick ? ROWS.quick : ROWS.full);
      const notes: string[] = set.note ? [set.note] : [];
      set.note = null; // once per run
      let outputBytes = 0;
      for (const t of tables) {
        const n = encode(t, o);
        if (n !== encodeReference(t, o)) notes.push(`format/${label}: ${t.name}: the encoders write different byte counts (run test/text-output.test.ts)`);
        outputBytes += n;
      }
      // per table, the byte encoder alone (median of repeated runs): its WebAssembly row loop, and its TypeScript twin
      const twin = (t: Table) => {
        textWasmSettings.enabled = false;
        try {
          return encode(t, o);
        } finally {
          textWasmSettings.enabled = true;
        }
      };
      const per = tables.map((t) => `${t.name} ${medianMBps(() => encode(t, o), quick ? 60 : 250).toFixed(0)}/${medianMBps(() => twin(t), quick ? 60 : 250).toFixed(0)}`);
      notes.push(`format/${label}: MB/s of output per table (median), WebAssembly row loop / TypeScript row loop: ${per.join(', ')}`);
      const rows = tables.reduce((n, t) => n + t.length, 0);
      return {
        work: { inputBytes: 0, outputBytes, throughputOf: 'output', events: 0, rows },
        run: {
          wasm: () => tables.reduce((n, t) => n + encode(t, o), 0),
          reference: () => tables.reduce((n, t) => n + encodeReference(t, o), 0),
        },
        notes,
      };
    },
  };
}

export const FORMAT_CASES: readonly BenchCase[] = [formatCase('csv', false), formatCase('jsonl', false), formatCase('csv', true), formatCase('jsonl', true)];
