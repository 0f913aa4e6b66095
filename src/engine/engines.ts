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

// One idle WebAssembly instance is kept for the next decode: instantiating the module and laying out
// its arena costs milliseconds, a reset (src/engine/wasm/engine.ts reset()) microseconds. An instance that
// grew past POOL_MAX_BYTES (a huge window or buffer) is dropped instead, so the process does not keep it.
const POOL_MAX_BYTES = 128 << 20;
let idleWasm: WasmEngine | null = null;

/** An engine, synchronously (the reference must have been registered or loaded). Give it back with releaseEngine. */
export function createEngine(kind: EngineKind): Engine {
  if (kind === 'wasm') {
    const pooled = idleWasm;
    if (pooled) {
      idleWasm = null;
      pooled.reset();
      return pooled;
    }
    return new WasmEngine(loadWasmModuleSync());
  }
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
  if (engine instanceof WasmEngine && idleWasm === null && engine.memoryBytes() <= POOL_MAX_BYTES) idleWasm = engine;
}
