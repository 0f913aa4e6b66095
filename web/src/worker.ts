// The page's decoding worker: streams the File (never the whole file in memory) through decodeStream
// with borrowed rows, and keeps only what the page shows — the cpuUsage rows folded into per-process and
// per-thread totals and into the bounded timeline (the rows that waited for their thread's process come
// at the deriver's end), spin locks folded by lock and caller. It stays alive with the trace's clock and
// lifetimes: a selected time range is resolved by the library (resolveSelection) and the CPU usage
// (CpuAnalyzer with that selection, as analyzeCpu) and spin locks (selectTable) are streamed again for it.
// The per-thread lanes come on demand, from a whole decode (threadStates needs every switch: memory
// grows with the trace, so only when asked). The flame graph's rows (samples, sample intervals and the stack
// events, copied from the first pass) are kept for it: resolved once (FlameSource: processes, stacks), its
// tree is built for each selection and search. The wait-time flame graph needs every switch and ready row
// with their stacks: asked for once, a whole decode gives its cpuUsage rows and the stacks joined to them
// (WaitFlameSource), kept for the next selections, the rest dropped. Cancelling is terminating this worker. (Downloads run in export-worker.ts, loaded only when one is asked for.)
import {
  cpuUsage,
  CpuAnalyzer,
  CpuUsageDeriver,
  decode,
  decodeStream,
  threadStates,
  resolveSelection,
  selectTable,
  SpinlockAnalyzer,
  Table,
  type Selection,
  type StreamResult,
} from '../../src/index.js';
import { concatChunks, type ColumnChunk, type TableName } from '../../src/tables/schema.js';
import { emptyTableText } from '../../src/output/summary-text.js';
import { dataLossText } from '../../src/result/diagnostics.js';
import type { PageRange, PageResult, ToWorker } from './protocol.js';
import { TimelineBuilder, timelineBuffers } from './timeline-data.js';
import { packThreadLanes, threadLanesBuffers } from './thread-lanes-data.js';
import { FlameSource, flameBuffers, WaitFlameSource, type FlameInput } from './flame-data.js';

import { fail, post, progress } from './worker-common.js';

/**
 * the trace decoded last: what a selection needs; the sampled flame graph's rows (then their resolution), null
 * without samples; the wait-time flame graph's source once asked for (null without context switches)
 */
let decoded: {
  file: Blob;
  res: StreamResult;
  baseTicks: bigint;
  last: number;
  flame: FlameInput | FlameSource | null;
  waits: Promise<WaitFlameSource | null> | null;
} | null = null;

/** the tables the flame graph keeps */
const FLAME_TABLES = ['samples', 'sampleIntervals', 'stackEvents', 'stackEventFrames'] as const;
type FlameTable = (typeof FLAME_TABLES)[number];

/** A copy of a borrowed chunk of rows (its columns are views the decoder reuses). */
function copyRows(t: Table): ColumnChunk {
  return { length: t.length, columns: t.columns.map((c) => c.slice()) as ColumnChunk['columns'] };
}

/** One streamed pass: CPU usage and spin locks (for `selection`, if any), the timeline and the flame graph's rows when given. */
async function analyze(
  file: Blob,
  selection: Selection | null,
  timeline: TimelineBuilder | null,
  onProgress?: (phase: string, done: number, total: number) => void,
  keep?: Record<FlameTable, ColumnChunk[]>,
) {
  const cpu = new CpuAnalyzer(selection ? { selection } : {});
  const spin = new SpinlockAnalyzer();
  const deriver = new CpuUsageDeriver((rows) => {
    cpu.add(rows);
    timeline?.add(rows);
  });
  const res = await decodeStream(file, {
    rows: 'borrow', // the consumers fold each chunk before onRows returns
    onProgress,
    onRows: (t) => {
      deriver.add(t.cswitch, t.readythread, t.threadEvents);
      spin.add(selection ? selectTable(t.spinlock, selection) : t.spinlock);
      if (keep) for (const name of FLAME_TABLES) if (t[name].length) keep[name].push(copyRows(t[name]));
    },
  });
  const stats = deriver.finish();
  return { res, stats, cpu: cpu.result(res), spin: spin.result(res.info) };
}

async function decodeForPage(file: Blob, name: string): Promise<PageResult> {
  const t0 = performance.now();
  const timeline = new TimelineBuilder();
  const keep: Record<FlameTable, ColumnChunk[]> = { samples: [], sampleIntervals: [], stackEvents: [], stackEventFrames: [] };
  const { res, stats, cpu, spin } = await analyze(file, null, timeline, progress(), keep);
  const s = res.summary;
  const tl = timeline.finish();
  const table = <T extends FlameTable>(name: T) => new Table(name as TableName, concatChunks(name, keep[name].splice(0))) as unknown as Table<T>;
  const flame: FlameInput | null = keep.samples.length
    ? { ...res, samples: table('samples'), sampleIntervals: table('sampleIntervals'), stackEvents: table('stackEvents'), stackEventFrames: table('stackEventFrames') }
    : null;
  decoded = { file, res, baseTicks: tl.baseTicks, last: tl.last, flame, waits: null };
  const info = res.info;
  const processNames: [number, string][] = [];
  for (const p of res.processes) if (p.imageFileName) processNames.push([p.processId, p.imageFileName]);
  const threadNames = [];
  for (const t of res.threads) if (t.name) threadNames.push({ threadId: t.threadId, processId: t.processId, name: t.name });
  return {
    fileName: name,
    summary: s,
    ticksPerSecond: res.clock ? Number(res.clock.ticksPerSecond) : null,
    startTicks: info?.headerTimestamp ?? tl.baseTicks,
    switchSpanTicks: tl.last - tl.first,
    dataLoss: dataLossText(s.diagnostics),
    noSwitches: s.cswitch === 0 ? emptyTableText('cswitch', s) : null,
    noSpinlocks: s.spinlock === 0 ? emptyTableText('spinlock', s) : null,
    noSamples: flame ? null : emptyTableText('samples', s),
    noStacks: s.stackEvents === 0 ? `the trace has no StackWalk events${dataLossText(s.diagnostics) === null ? '' : ' that could be decoded'}` : null,
    cpu,
    spin,
    timeline: tl,
    processNames,
    threadNames,
    lateEvents: stats.lateEvents,
    unresolvedRows: stats.unresolvedRows,
    decodeMs: performance.now() - t0,
  };
}

/** The CPU usage and spin locks of the decoded trace for `range` (null: the whole trace). */
async function select(range: PageRange | null) {
  if (!decoded) throw new Error('no trace decoded');
  const { file, res } = decoded;
  const selection = range ? resolveSelection({ from: range.from, to: range.to }, res.clock, res) : null;
  const { cpu, spin } = await analyze(file, selection, null);
  return { cpu, spin };
}

/** The flame graph of the decoded trace's samples for `range` (null: the whole trace) and `search`; null without samples. */
function flameGraph(range: PageRange | null, search: string) {
  if (!decoded) throw new Error('no trace decoded');
  const d = decoded;
  if (!d.flame) return null;
  if (!(d.flame instanceof FlameSource)) d.flame = new FlameSource(d.flame); // once: the raw stack events are dropped
  const selection = range ? resolveSelection({ from: range.from, to: range.to }, d.res.clock, d.res) : null;
  return d.flame.build(selection, search);
}

/** The wait-time flame graph of the decoded trace for `range` and `search`; null without context switches. */
async function waitFlameGraph(range: PageRange | null, search: string) {
  if (!decoded) throw new Error('no trace decoded');
  const d = decoded;
  d.waits ??= d.res.summary.cswitch === 0 ? Promise.resolve(null) : decode(d.file).then(
    (whole) => new WaitFlameSource({ ...whole, cpuUsage: cpuUsage(whole) }),
    (e) => {
      d.waits = null; // asked again, it decodes again
      throw e;
    },
  );
  const source = await d.waits;
  if (!source) return null;
  const selection = range ? resolveSelection({ from: range.from, to: range.to }, d.res.clock, d.res) : null;
  return source.build(selection, search);
}

/** The per-thread lanes of the decoded trace: its threadStates, from a whole decode. */
async function threadLanes() {
  if (!decoded) throw new Error('no trace decoded');
  const whole = await decode(decoded.file);
  return packThreadLanes(threadStates(whole), decoded.baseTicks, decoded.last);
}

self.onmessage = (ev: MessageEvent<ToWorker>) => {
  const m = ev.data;
  if (m.type === 'decode') {
    decodeForPage(m.file, m.name).then((result) => post({ type: 'result', result }, timelineBuffers(result.timeline)), fail);
  } else if (m.type === 'select') {
    select(m.range).then((x) => post({ type: 'selected', seq: m.seq, ...x }), (e) => fail(e, 'select'));
  } else if (m.type === 'flame') {
    const done = (flame: ReturnType<typeof flameGraph>) => post({ type: 'flame', seq: m.seq, of: m.of, flame }, flame ? flameBuffers(flame) : []);
    if (m.of === 'waits') waitFlameGraph(m.range, m.search).then(done, (e) => fail(e, 'flame'));
    else {
      try {
        done(flameGraph(m.range, m.search));
      } catch (e) {
        fail(e, 'flame');
      }
    }
  } else if (m.type === 'threads') {
    threadLanes().then((lanes) => post({ type: 'threads', lanes }, threadLanesBuffers(lanes)), (e) => fail(e, 'threads'));
  }
};
