// etw-decode — browser-safe entry (no node: imports): the decode API (decode.ts) and the output
// writers. Node users get the same API plus file helpers from the package's node entry (src/node.ts).
// The wiring lives here, not in the modules: where Web Workers exist, large decodes use them.
import { parallelHost, registerParallelHost } from './parallel/host.js';
import { webHost, webWorkersAvailable } from './parallel/web-host.js';

export * from './decode/decode.js';
// the entries' own (decode.ts does not load them: the CLI starts without them)
export { analyzeCpu, cpuUsage, CpuAnalyzer, CpuUsageDeriver } from './analysis/cpu.js';
export { threadStates, ThreadStatesDeriver, THREAD_STATE_VALUES, type ThreadStateValue, type ThreadStatesInput, type ThreadStatesOptions, type ThreadStatesStats } from './derive/thread-states.js';
export { resolveStacks, StackAttacher, STACK_ATTACHED_TABLES, type ResolvedStacks, type StacksInput, type StackedTableName } from './derive/stacks.js';
export { stackTables, stacksOfTrace, StackFrameImages } from './derive/stack-tables.js';
export { attachWholeStacks, fillStackIds, STACKED_TABLES, type StackedRows } from './derive/stacks.js';
export { needsStackPass, runStackPass, StackPass, type StackPassOptions } from './derive/stack-pass.js';
export { wholeTraceTable, isWholeTraceTable, type WholeTraceTableName } from './derive/whole-trace.js';
export { TextTableWriter, toCsv, toJsonl, type FormatOptions, type DumpFormat, type TimeColumn, type TextSink } from './output/text.js';
export { toArrow, tableToArrowIpc, ArrowIpcWriter } from './output/arrow.js';
export type { ArrowOptions, ArrowIpcWriterOptions, ByteSink } from './output/arrow.js';
export { ParquetTableWriter, tableToParquet, DEFAULT_ROW_GROUP_ROWS, DEFAULT_COMPRESSION } from './output/parquet.js';
export type { ParquetOptions, ParquetCompression, ParquetWriteResult } from './output/parquet.js';
export { analyzeSpinlocks, SpinlockAnalyzer, type SpinlockAnalysis, type SpinlockStats, type SpinlockTotals, type SpinlockOptions } from './analysis/spinlocks.js';
export { analyzeSamples, type SampledAnalysis, type SampledGroup, type SampledOptions } from './analysis/samples.js';
export { samplesToPprof, waitsToPprof, PprofBuilder, type PprofOptions, type PprofContext } from './output/pprof.js';
export { analyzeWaits, rowStacks, type WaitAnalysis, type WaitStack, type WaitsInput, type RowStacks } from './analysis/waits.js';
export { ImageMap } from './derive/lifetimes.js';
export { resolveSelection, parseTimeSpec, selectionText, Selection, type SelectionOptions, type SelectionSummary, type TimeSpec } from './select/selection.js';
export { selectTable } from './select/tables.js';
export { PerfettoWriter, toPerfetto, type PerfettoOptions, type PerfettoStats, type ToPerfettoOptions } from './output/perfetto.js';

// decodes of large inputs use Web Workers where there are any (the node entry, which includes this one,
// registers worker_threads after it)
if (webWorkersAvailable() && !parallelHost()) registerParallelHost(webHost);
