// The compiled decoder module (assembly/ → build/decoder.wasm, embedded as base64 by
// scripts/embed-wasm.mjs), compiled once per process and shared by every WasmEngine instance.
// Browser-safe: the base64 is decoded by hand (no Buffer, no atob needed).
import { WASM_BASE64 } from '../../generated/wasm-binary.js';

/** The exports of assembly/index.ts. Pointers are byte offsets in `memory` (>>> 0 them). */
export interface WasmExports {
  readonly memory: WebAssembly.Memory;
  init(inputBytes: number, rowCapacity: number): void;
  reset(): void;
  reserveInput(bytes: number): number;
  inputPtr(): number;
  setBiasOverride(bias: number): void;
  keepTables(kept: number): void;
  decodeBuffer(offset: number, length: number, fileOffset: number, cut: number): number;
  resume(): number;
  finish(): number;
  rowCount(table: number): number;
  /** address of the i32 row count of each table */
  rowCountsPtr(): number;
  rowCapacity(): number;
  columnPtr(table: number, column: number): number;
  resetRows(): void;
  countersPtr(): number;
  logPtr(): number;
  logCount(): number;
  kindsPtr(): number;
  kindCount(): number;
  logfilePtr(): number;
  logfileCopied(): number;
  logfilePayloadLength(): number;
  logfilePointerSize(): number;
  logfileTimestamp(): bigint;
  headerExtensionPtr(): number;
  heapPtr(): number;
  heapSize(): number;
  headerExtensionSeen(): number;
  bias(): number;
  xpressDecompress(src: number, srcLen: number, dst: number, dstLen: number): number;
}

const B64 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';

/** Standard base64 (padding optional, no whitespace) to bytes. */
export function decodeBase64(text: string): Uint8Array<ArrayBuffer> {
  const lookup = new Uint8Array(128).fill(255);
  for (let i = 0; i < B64.length; i++) lookup[B64.charCodeAt(i)] = i;
  let end = text.length;
  while (end > 0 && text.charCodeAt(end - 1) === 61 /* = */) end--;
  const out = new Uint8Array(((end * 3) / 4) | 0);
  let bits = 0;
  let n = 0;
  let o = 0;
  for (let i = 0; i < end; i++) {
    const c = text.charCodeAt(i);
    const v = c < 128 ? lookup[c]! : 255;
    if (v === 255) throw new Error(`embedded wasm: invalid base64 character at ${i}`);
    bits = (bits << 6) | v;
    n += 6;
    if (n >= 8) {
      n -= 8;
      out[o++] = (bits >>> n) & 0xff;
    }
  }
  return out;
}

let cached: WebAssembly.Module | undefined;
let pending: Promise<WebAssembly.Module> | undefined;

/** Compiles the decoder (once; later calls return the same Module). */
export function loadWasmModule(): Promise<WebAssembly.Module> {
  if (cached) return Promise.resolve(cached);
  pending ??= WebAssembly.compile(decodeBase64(WASM_BASE64)).then(
    (m) => (cached ??= m),
    (e: unknown) => {
      pending = undefined; // let a later call try again
      throw e;
    },
  );
  return pending;
}

/** Synchronous twin of loadWasmModule (new WebAssembly.Module; fine for this small module). */
export function loadWasmModuleSync(): WebAssembly.Module {
  cached ??= new WebAssembly.Module(decodeBase64(WASM_BASE64));
  return cached;
}

/**
 * Uses a module compiled elsewhere (a worker given its parent's Module: one compilation per process
 * tree). Ignored when this thread has compiled its own already.
 */
export function adoptWasmModule(module: WebAssembly.Module): void {
  cached ??= module;
}
