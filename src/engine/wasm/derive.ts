// The compiled derivation module (assembly/derive/ → build/derive.wasm, embedded as base64 by
// scripts/embed-wasm.mjs): compiled once per thread, one instance per deriver (CpuUsageDeriver,
// ThreadStatesDeriver: its memory is that derivation's state). Browser-safe (decodeBase64 of instance.ts).
import { DERIVE_WASM_BASE64 } from '../../generated/derive-wasm-binary.js';
import { decodeBase64 } from './instance.js';

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
