// The compiled derivation module (assembly/derive/ → build/derive.wasm, embedded as base64 by
// scripts/embed-wasm.mjs): compiled once per thread, one instance per deriver (CpuUsageDeriver,
// ThreadStatesDeriver: its memory is that derivation's state). Browser-safe (decodeBase64 of instance.ts).
import { DERIVE_WASM_BASE64 } from '../../generated/derive-wasm-binary.js';
import { decodeBase64 } from './instance.js';
import type { Table } from '../../tables/table.js';

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
  return new WebAssembly.Instance(cached, { env: { drain } }).exports as unknown as DeriveExports;
}

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
  if (nT > 0) {
    const t = threadEvents!;
    new BigInt64Array(buf, w.inputColumn(0), nT).set(t.column('timestamp').subarray(0, nT));
    new Uint16Array(buf, w.inputColumn(1), nT).set(t.column('cpu').subarray(0, nT));
    new Uint32Array(buf, w.inputColumn(2), nT).set(t.column('threadId').subarray(0, nT));
    new Uint32Array(buf, w.inputColumn(3), nT).set(t.column('processId').subarray(0, nT));
    new Uint8Array(buf, w.inputColumn(4), nT).set(t.column('opcode').subarray(0, nT));
  }
  if (nR > 0) {
    new BigInt64Array(buf, w.inputColumn(5), nR).set(readythread.column('timestamp').subarray(0, nR));
    new Uint16Array(buf, w.inputColumn(6), nR).set(readythread.column('cpu').subarray(0, nR));
    new Uint32Array(buf, w.inputColumn(7), nR).set(readythread.column('threadId').subarray(0, nR));
  }
  if (nS > 0) {
    new BigInt64Array(buf, w.inputColumn(8), nS).set(cswitch.column('timestamp').subarray(0, nS));
    new Uint16Array(buf, w.inputColumn(9), nS).set(cswitch.column('cpu').subarray(0, nS));
    new Uint32Array(buf, w.inputColumn(10), nS).set(cswitch.column('valid').subarray(0, nS));
    new Uint32Array(buf, w.inputColumn(11), nS).set(cswitch.column('newThreadId').subarray(0, nS));
    new Uint32Array(buf, w.inputColumn(12), nS).set(cswitch.column('oldThreadId').subarray(0, nS));
    new Int8Array(buf, w.inputColumn(13), nS).set(cswitch.column('newThreadPriority').subarray(0, nS));
    new Int8Array(buf, w.inputColumn(14), nS).set(cswitch.column('oldThreadPriority').subarray(0, nS));
    new Uint8Array(buf, w.inputColumn(15), nS).set(cswitch.column('oldThreadState').subarray(0, nS));
    new Uint8Array(buf, w.inputColumn(16), nS).set(cswitch.column('oldThreadWaitReason').subarray(0, nS));
    new Uint8Array(buf, w.inputColumn(17), nS).set(cswitch.column('previousCState').subarray(0, nS));
    new Uint8Array(buf, w.inputColumn(18), nS).set(cswitch.column('oldThreadWaitMode').subarray(0, nS));
  }
}
