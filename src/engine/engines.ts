// Engine factory: the WebAssembly engine (compiled once per process, src/engine/wasm/instance.ts) and the
// pure-TypeScript reference engine. The reference is not imported here, so a browser bundle of the
// library does not carry it: it is registered by the node entry and by `etw-decode/reference`, or loaded
// on demand by the async paths (`decode`, `decodeStream`, `init({ engine: 'reference' })`).
import type { Engine, EngineKind } from './engine.js';
import { EtlError } from '../errors.js';
import { WasmEngine } from './wasm/engine.js';
import { loadWasmModule, loadWasmModuleSync } from './wasm/instance.js';

let makeReference: (() => Engine) | undefined;

/** Makes the reference engine available to the synchronous paths (decodeSync). */
export function registerReferenceEngine(make: () => Engine): void {
  makeReference = make;
}

function badEngine(kind: unknown): EtlError {
  return new EtlError('BAD_OPTION', `unknown engine '${String(kind)}': use 'wasm' or 'reference'`);
}

// Idle WebAssembly instances are kept for the next decodes: instantiating the module and laying out its
// arena costs about a millisecond and 40 MiB of fresh memory (which the garbage collector then has to
// reclaim), a reset (src/engine/wasm/engine.ts reset()) microseconds. A decode in partitions in one thread
// (src/parallel) takes one per partition, so up to POOL_MAX_IDLE are kept, holding at most POOL_MAX_BYTES in
// all; one that would pass that (a huge window or buffer) is dropped instead, so the process does not keep it.
const POOL_MAX_IDLE = 4;
const POOL_MAX_BYTES = 160 << 20;
const idleWasm: WasmEngine[] = [];
let idleBytes = 0;

/** A WebAssembly engine of `module` (the process's compiled module): an idle one reset, else a new one. Give it back with releaseEngine. */
export function createWasmEngine(module: WebAssembly.Module): WasmEngine {
  const pooled = idleWasm.pop();
  if (pooled) {
    idleBytes -= pooled.memoryBytes();
    pooled.reset();
    return pooled;
  }
  return new WasmEngine(module);
}

/** Idle WebAssembly instances in the pool (for tests). */
export function idleEngines(): number {
  return idleWasm.length;
}

/** An engine, synchronously (the reference must have been registered or loaded). Give it back with releaseEngine. */
export function createEngine(kind: EngineKind): Engine {
  if (kind === 'wasm') return createWasmEngine(loadWasmModuleSync());
  if (kind !== 'reference') throw badEngine(kind);
  if (!makeReference) {
    throw new EtlError(
      'BAD_OPTION',
      "the reference engine is not loaded: call `await init({ engine: 'reference' })` first, import 'etw-decode/reference', or use decode()",
    );
  }
  return makeReference();
}

/** Loads what an engine needs (compiles the WebAssembly module, or imports the reference). */
export async function loadEngine(kind: EngineKind): Promise<void> {
  if (kind === 'wasm') {
    await loadWasmModule();
  } else if (kind === 'reference') {
    if (!makeReference) {
      const { ReferenceEngine } = await import('./reference/walk.js');
      makeReference ??= () => new ReferenceEngine();
    }
  } else {
    throw badEngine(kind);
  }
}

/** An engine, after loading what it needs. */
export async function createEngineAsync(kind: EngineKind): Promise<Engine> {
  await loadEngine(kind);
  return createEngine(kind);
}

/**
 * Hands an engine back after a decode (finished or failed); a later createEngine may reuse it. The
 * caller must not use it, nor views into its memory, afterwards.
 */
export function releaseEngine(engine: Engine): void {
  if (!(engine instanceof WasmEngine) || idleWasm.length >= POOL_MAX_IDLE || idleWasm.includes(engine)) return;
  const bytes = engine.memoryBytes();
  if (idleBytes + bytes > POOL_MAX_BYTES) return;
  idleBytes += bytes;
  idleWasm.push(engine);
}
