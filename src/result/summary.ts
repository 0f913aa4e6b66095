// The public result of a decode: the summary (counts, trace info, bias, diagnostics, issues), the trace
// info and its clock, built from a finished drive (decode-steps.ts).
import * as L from '../generated/layout.js';
import type { EngineKind } from '../engine/engine.js';
import type { DriverResult } from '../decode/decode-steps.js';
import type { BufferList } from '../framing/buffers.js';
import { dataLossText, describeIssue, namedCounters, type DiagnosticCounters, type Issue } from './diagnostics.js';
import { kindRows, type KindRow } from './event-kinds.js';
import { parseLogfileHeader, type TraceInfo } from './logfile.js';
import { SUMMARY_TABLE_NAMES, type SummaryTableName } from '../tables/schema.js';
import type { DecodedTables, Table } from '../tables/table.js';
import type { LifetimeCollector } from '../derive/lifetimes.js';
import { clockUnavailable, createClock, type Clock } from '../time.js';
import { traceRow } from './trace-row.js';

export interface BiasInfo {
  value: number;
  source: 'build' | 'override' | 'default';
  /** false when the build falls in an uncertain row of docs/format.md §C.7 */
  certain: boolean;
}

export type TraceSummary = {
  engine: EngineKind;
  fileSize: number;
  /** buffers framed in the input */
  buffers: number;
  /** events walked, every header kind */
  events: number;
  eventsByKind: KindRow[];
  compact: { batches: number; packets: { idleShort: number; idle: number; lite: number; full: number } };
  bias: BiasInfo;
  trace: TraceInfo | null;
  diagnostics: DiagnosticCounters;
  /** the first 1024 problems with their file offsets (the counters stay exact) */
  issues: Issue[];
} & {
  /** rows of each table (`cswitch`, `spinlock`, …, `threads`, `processes`, `images`); not `threadStates`, derived after a decode */
  [T in SummaryTableName]: number;
};

/** What every decode returns besides the rows of the decoded tables. */
export interface StreamResult {
  /** thread lifetimes (derived from the Thread events; memory grows with the number of threads) */
  threads: Table<'threads'>;
  /** process lifetimes (derived from the Process events) */
  processes: Table<'processes'>;
  /** image lifetimes per process (derived from the Image events; process 0: the kernel's images) */
  images: Table<'images'>;
  /** one row describing the trace: source, machine, clock anchor, what was lost (schema/tables.mjs `traces`) */
  traces: Table<'traces'>;
  summary: TraceSummary;
  /**
   * every whole buffer framed in the input, in file order, as columns (26 bytes per buffer): fileOffset,
   * size, sequenceNumber, cpu, flags, type; `get(i)` or iteration for objects
   */
  buffers: BufferList;
  info: TraceInfo | null;
  /** tick conversions; null when the trace has no logfile header or its clock type has no known conversion */
  clock: Clock | null;
}

/** A whole decode: the result and one Table per decoded table (`cswitch`, `spinlock`, …). */
export type DecodeResult = StreamResult & DecodedTables;

/** The result of a finished drive and its lifetimes (without the rows). */
export function buildResult(
  result: DriverResult,
  lifetimes: LifetimeCollector,
  engineKind: EngineKind,
  biasOverride: number | undefined,
  sourcePath: string | null = null,
): StreamResult {
  const info = traceInfo(result);
  const threads = lifetimes.threads();
  const processes = lifetimes.processes();
  const images = lifetimes.images();
  // cpuUsage has a row per cswitch row whose new thread is known: all but each CPU's last compact switch
  const cpuUsage = result.rows.cswitch - (result.engine.counters[L.D_COMPCS_NEW_THREAD_UNKNOWN] ?? 0);
  const rows = { ...result.rows, threads: threads.length, processes: processes.length, cpuUsage, traces: 1, images: images.length };
  const summary = summarize(result, rows, info, engineKind, biasOverride);
  const clock = clockOf(info);
  const traces = traceRow({
    sourcePath,
    fileSize: result.size,
    info,
    clock,
    buffers: summary.buffers,
    events: summary.events,
    diagnostics: summary.diagnostics,
    dataLoss: dataLossText(summary.diagnostics),
  });
  return { summary, buffers: result.buffers, info, clock, threads, processes, images, traces };
}

function summarize(
  result: DriverResult,
  rows: Record<SummaryTableName, number>,
  info: TraceInfo | null,
  engineKind: EngineKind,
  biasOverride: number | undefined,
): TraceSummary {
  const s = result.engine;
  const counters = s.counters.map((v, i) => v + (result.framingCounters[i] ?? 0));
  const issues = [...result.framingIssues, ...s.log]
    .sort((a, b) => a.fileOffset - b.fileOffset)
    .slice(0, L.LOG_CAPACITY)
    .map(describeIssue);
  const summary: TraceSummary = {
    engine: engineKind,
    fileSize: result.size,
    buffers: result.buffers.length,
    events: counters[L.D_EVENTS]!,
    eventsByKind: [],
    ...(Object.fromEntries(SUMMARY_TABLE_NAMES.map((t) => [t, rows[t]])) as Record<SummaryTableName, number>),
    compact: {
      batches: counters[L.D_COMPCS_BATCHES]!,
      packets: {
        idleShort: counters[L.D_COMPCS_PACKETS_IDLE_SHORT]!,
        idle: counters[L.D_COMPCS_PACKETS_IDLE]!,
        lite: counters[L.D_COMPCS_PACKETS_LITE]!,
        full: counters[L.D_COMPCS_PACKETS_FULL]!,
      },
    },
    bias: {
      value: s.bias,
      source: biasOverride !== undefined ? 'override' : info ? 'build' : 'default',
      certain: biasOverride !== undefined || (info !== null && L.maxWaitReasonCertain(info.build)),
    },
    trace: info,
    diagnostics: {
      ...namedCounters(counters),
      // what the kernel reported lost, from the logfile header (§A.8)
      logfileEventsLost: info?.eventsLost ?? 0,
      logfileBuffersLost: info?.buffersLost ?? 0,
    },
    issues,
  };
  // eventsByKind is made when first read (a trace can have thousands of kinds to name and sort, which a
  // caller that never looks at them should not wait for); it stays an ordinary enumerable field
  // (the engine's tallies too: s.kinds is read here, not before)
  let kindTable: KindRow[] | null = null;
  Object.defineProperty(summary, 'eventsByKind', {
    enumerable: true,
    configurable: true,
    get: () => (kindTable ??= kindRows(s.kinds)),
    set: (value: KindRow[]) => {
      kindTable = value;
    },
  });
  return summary;
}

export function traceInfo(result: DriverResult): TraceInfo | null {
  const s = result.engine;
  if (!s.logfilePayload) return null;
  return parseLogfileHeader(s.logfilePayload, s.logfilePayloadLength, s.logfilePointerSize, s.logfileTimestamp, s.headerExtension);
}

/** The trace's clock, or null when it has none or its clock type cannot be converted. */
export function clockOf(info: TraceInfo | null): Clock | null {
  return info && clockUnavailable(info) === null ? createClock(info) : null;
}
