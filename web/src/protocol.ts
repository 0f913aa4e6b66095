// Messages between the page (app.ts) and its workers (worker.ts decodes and recomputes for a selected
// range; export-worker.ts writes downloads). Everything crosses by structured clone (bigints included);
// the timeline's typed arrays are transferred, not copied.
import type { CpuAnalysis, SpinlockAnalysis, TimeSpec, TraceSummary } from '../../src/index.js';
import type { TimelineData } from './timeline-data.js';
import type { ThreadLanesData } from './thread-lanes-data.js';
import type { FlameData } from './flame-data.js';

/** what a flame graph weighs: the sampled CPU, or the blocked time of the switch-ins (wait time) */
export type FlameOf = FlameData['of'];
import type { ExportFormat, ExportTable } from './export-formats.js';

/** The page's selected time range (the library's SelectionOptions `from`/`to`: ns since the trace start, or raw ticks without a clock). */
export interface PageRange {
  from: TimeSpec;
  to: TimeSpec;
}

export type ToWorker =
  | { type: 'decode'; file: Blob; name: string }
  /** the CPU usage and spin locks again, for `range` (null: the whole trace), of the trace decoded last */
  | { type: 'select'; seq: number; range: PageRange | null }
  /** the per-thread lanes (threadStates) of the trace decoded last */
  | { type: 'threads' }
  /**
   * the flame graph of the trace decoded last — of its samples, or of its wait time (the first one decodes the
   * trace again, whole) — for `range` (null: the whole trace) and the search (lower case; '': all)
   */
  | { type: 'flame'; seq: number; of: FlameOf; range: PageRange | null; search: string }
  | { type: 'export'; file: Blob; name: string; table: ExportTable; format: ExportFormat; range: PageRange | null };

export type FromWorker =
  | { type: 'progress'; phase: string; done: number; total: number }
  | { type: 'result'; result: PageResult }
  | { type: 'selected'; seq: number; cpu: CpuAnalysis; spin: SpinlockAnalysis }
  | { type: 'threads'; lanes: ThreadLanesData }
  /** flame null: the trace has no samples (of: 'samples') or no context switches (of: 'waits') */
  | { type: 'flame'; seq: number; of: FlameOf; flame: FlameData | null }
  | { type: 'exported'; blob: Blob; fileName: string; rows: number }
  /** `for`: a recomputation for a range or the thread lanes failed (the trace stays shown) */
  | { type: 'error'; message: string; code: string | null; for?: 'select' | 'threads' | 'flame' };

/** A thread's name and process, for the timeline's tooltips. */
export interface ThreadName {
  threadId: number;
  processId: number | null;
  name: string;
}

/** What the page shows of a decoded trace. */
export interface PageResult {
  fileName: string;
  summary: TraceSummary;
  /** ticks per second of the trace's clock (null: it does not convert; times are shown in ticks) */
  ticksPerSecond: number | null;
  /** raw ticks of the trace start (the logfile header event), or of the first switch */
  startTicks: bigint;
  /** duration from the first to the last event time seen (switches), in ticks */
  switchSpanTicks: number;
  /** "3 corrupt buffers skipped, …" or null */
  dataLoss: string | null;
  /** why cswitch / spinlock came out empty, or null */
  noSwitches: string | null;
  noSpinlocks: string | null;
  /** why the trace has no samples (the sampled flame graph's empty state), or null */
  noSamples: string | null;
  /** why the trace has no stacks ("the trace has no StackWalk events": the wait-time flame graph's empty state), or null */
  noStacks: string | null;
  cpu: CpuAnalysis;
  spin: SpinlockAnalysis;
  timeline: TimelineData;
  /** image names by process id, thread names */
  processNames: [number, string][];
  threadNames: ThreadName[];
  /** cpuUsage events that arrived behind the reorder window (see the README) */
  lateEvents: number;
  /** cpuUsage rows counted before their thread's process was known, the deriver's hold being full (see the README) */
  unresolvedRows: number;
  /** wall time of the decode, ms */
  decodeMs: number;
}
