// The compiled derivation module (assembly/derive/ → build/derive.wasm, embedded as base64 by
// scripts/embed-wasm.mjs): compiled once per thread, one instance per deriver (CpuUsageDeriver,
// ThreadStatesDeriver: its memory is that derivation's state). Browser-safe (decodeBase64 of instance.ts).
import { DERIVE_WASM_BASE64 } from '../../generated/derive-wasm-binary.js';
import { decodeBase64 } from './instance.js';
import type { Table } from '../../tables/table.js';
import { TABLE_COLUMNS, viewColumn, type NumericColumn, type NumericColumnType } from '../../tables/schema.js';

/** The exports of assembly/derive/index.ts. Pointers are byte offsets in `memory` (>>> 0 them). */
export interface DeriveExports {
  readonly memory: WebAssembly.Memory;
  // the input region (both cores)
  reserveInput(nThread: number, nReady: number, nSwitch: number): void;
  inputColumn(i: number): number;
  // the cpuUsage core
  init(windowEvents: number, holdRows: number): void;
  /** the lifetimes of a whole decode's `threads` table (n rows in the Thread events' input columns) */
  lifetimes(n: number): void;
  add(nThread: number, nReady: number, nSwitch: number): void;
  finish(): void;
  /** where the rows handed to the drain import are staged */
  outPtr(): number;
  /** 0 lateEvents, 1 maxHeld, 2 threads, 3 heldRows, 4 unresolvedRows */
  stat(i: number): number;
  // its two halves (src/derive/remote-cpu-fold.ts): 1 INTAKE (streams the released events out), 2 APPLY (applies such a stream)
  splitInit(mode: number): void;
  /** INTAKE, after add() or finish(): 0 records, 1 groups, 2 idle slots made, 3 thread slots, 4 the records' bytes */
  streamCount(i: number): number;
  /** where the records (0), group ends (1: i32) and idle slots (2: i32 pairs) are (INTAKE), or go (APPLY, after applyReserve) */
  streamPtr(i: number): number;
  applyReserve(records: number, groups: number, idle: number): void;
  applyStream(records: number, groups: number, idle: number, slots: number): void;
  // the threadStates core
  /** cpus: the CPUs in the watermark from the start (0: none); final: tsThreads() will give the lifetimes */
  tsInit(windowEvents: number, holdRows: number, cpus: number, final: boolean): void;
  /** a whole decode's `threads` table (n rows in the input region, as tsThreads says) */
  tsThreads(n: number): void;
  tsAdd(nThread: number, nReady: number, nSwitch: number): void;
  tsFinish(): void;
  tsOutPtr(): number;
  /** 0 rows, 1 lateEvents, 2 maxHeld, 3 threads, 4 heldRows, 5 unresolvedRows */
  tsStat(i: number): number;
  // the cpuUsage core's fold per thread (assembly/derive/cpu-fold.ts): rows folded there, not drained
  /** from now on; hist: with the ready/wait histograms, bucketed with ln γ and MAX_INDEX of distributions.ts */
  foldInit(hist: boolean, lnGamma: number, maxIndex: number): void;
  /** one completed row (what closeRow folds; exported for the tests): valid bits, cpu, in, next, ready and last times, new tid, pid, deriver slot */
  foldRow(v: number, cpu: number, tIn: bigint, tNext: bigint, tReady: bigint, tLast: bigint, tid: number, pid: number, slot: number): void;
  foldSlots(): number;
  /** the slots, FSB bytes each (the F_ layout of src/derive/cpu-usage.ts) */
  foldSlotPtr(): number;
  /** the sums' high 64 bits, 24 bytes per slot (cpu, ready, wait) */
  foldHighPtr(): number;
  /** distribution d's (0 ready, 1 wait) table: foldHistSlots(d) slots of two f64 (LogHistograms' layout), foldHistCells(d) in use */
  foldHistPtr(d: number): number;
  foldHistSlots(d: number): number;
  foldHistCells(d: number): number;
  foldRows(): number;
  /** 0: the first time of the rows, 1: the last, 2: the highest cpu + 1 */
  foldSpan(i: number): bigint;
  // the `threads` lifetimes core (assembly/derive/lifetimes.ts: an input region of its own)
  /** room for up to n more Thread events: how many fit at ltColumn() */
  ltReserve(n: number): number;
  /** where the next rows of its input column i go (0 timestamp, 1 cpu, 2 threadId, 3 processId, 4 opcode, 5 valid: its low byte, u8, 6 win32StartAddr, 7 basePriority) */
  ltColumn(i: number): number;
  /** the n rows written at ltColumn() are appended */
  ltCommit(n: number): void;
  /** the rows of the events appended, up to `step` more events applied per call: −1 until all are, then the rows (their columns at ltOut()) */
  ltThreads(step: number): number;
  /** output column i: 0 threadId, 1 processId, 2 startTime, 3 endTime, 4 win32StartAddr, 5 basePriority, 6 per row two i32: its valid bits and its name event (−1: none) */
  ltOut(i: number): number;
  /** the name event applied to the same row before event i (−1: none) */
  ltNamePrev(i: number): number;
  /** the order ltThreads() applied the events in: 0 as they came (in time order), 1 the CPUs' runs merged, 2 the radix sort's */
  ltPath(): number;
  /** the instance ready for the next derivation (its regions dropped, its memory kept) */
  ltReset(): void;
}

let cached: WebAssembly.Module | undefined;

/**
 * A new instance of the derivation module (compiled on first use: small, so synchronously); `drain(n)`
 * takes the n rows staged at outPtr() as they complete.
 */
export function deriveInstance(drain: (n: number) => void): DeriveExports {
  cached ??= new WebAssembly.Module(decodeBase64(DERIVE_WASM_BASE64));
  // Math.log: the fold's bucket of a value near a histogram boundary is JS's (assembly/derive/cpu-fold.ts)
  return new WebAssembly.Instance(cached, { env: { drain }, Math: { log: Math.log } }).exports as unknown as DeriveExports;
}

/** The tables the derivations read, and which of a chunk's rows: switches, ReadyThread and Thread events. */
export type DeriveInputTable = 'cswitch' | 'readythread' | 'threadEvents';

/**
 * The columns of the input region (assembly/derive/input.ts), in its order: the table and column each is
 * copied from — what the derivations read of a chunk.
 */
export const INPUT_COLUMNS: readonly (readonly [DeriveInputTable, string])[] = [
  ['threadEvents', 'timestamp'],
  ['threadEvents', 'cpu'],
  ['threadEvents', 'threadId'],
  ['threadEvents', 'processId'],
  ['threadEvents', 'opcode'],
  ['readythread', 'timestamp'],
  ['readythread', 'cpu'],
  ['readythread', 'threadId'],
  ['cswitch', 'timestamp'],
  ['cswitch', 'cpu'],
  ['cswitch', 'valid'],
  ['cswitch', 'newThreadId'],
  ['cswitch', 'oldThreadId'],
  ['cswitch', 'newThreadPriority'],
  ['cswitch', 'oldThreadPriority'],
  ['cswitch', 'oldThreadState'],
  ['cswitch', 'oldThreadWaitReason'],
  ['cswitch', 'previousCState'],
  ['cswitch', 'oldThreadWaitMode'],
];

/** Each input column's index among its table's columns and its type. */
const INPUT_SPECS = INPUT_COLUMNS.map(([t, c]) => {
  const at = TABLE_COLUMNS[t].findIndex((x) => x.name === c);
  return { table: t, at, type: TABLE_COLUMNS[t][at]!.type as NumericColumnType };
});

/**
 * A chunk's rows into the input region (assembly/derive/input.ts: its columns, in its order), the one copy for
 * both derivations: the first nT Thread events (0 when the lifetimes are given), every ReadyThread event and
 * switch; then the deriver's add reads what it needs.
 */
export function copyInput(w: DeriveExports, cswitch: Table<'cswitch'>, readythread: Table<'readythread'>, threadEvents: Table<'threadEvents'> | undefined, nT: number): void {
  const nR = readythread.length;
  const nS = cswitch.length;
  w.reserveInput(nT, nR, nS);
  const buf = w.memory.buffer;
  for (let i = 0; i < INPUT_SPECS.length; i++) {
    const { table, at, type } = INPUT_SPECS[i]!;
    const t = table === 'cswitch' ? cswitch : table === 'readythread' ? readythread : threadEvents;
    const n = table === 'cswitch' ? nS : table === 'readythread' ? nR : nT;
    if (n > 0) viewColumn(type, buf, w.inputColumn(i), n).set((t!.columns[at] as NumericColumn).subarray(0, n) as never);
  }
}
