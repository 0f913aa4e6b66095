// etw-decode — Node entry: everything of the browser entry (index.ts) plus decoding files with bounded
// memory (files.ts: decodeFile, streamFile, readTraceInfo). The wiring lives here, not in the modules:
// large decodes use worker_threads, and the reference engine is available to decodeSync.
import { registerReferenceEngine } from './engine/engines.js';
import { ReferenceEngine } from './engine/reference/walk.js';
import { registerParallelHost } from './parallel/host.js';
import { nodeHost } from './parallel/node-host.js';
import { registerThreadsCore } from './derive/lifetimes.js';
import * as deriveModule from './engine/wasm/derive.js';

export * from './index.js';
export * from './decode/files.js';

// worker_threads, in place of Web Workers (index.ts registers those where a global Worker exists: Deno, Bun)
registerParallelHost(nodeHost);
// Node has no bundle size to keep small: the reference engine is always available, decodeSync included.
// (Registered here, not in files.ts: the CLI imports files.ts and loads the reference only when asked.)
registerReferenceEngine(() => new ReferenceEngine());
// The `threads` core's derivation module, for decodeSync (the async paths load it when they need it).
registerThreadsCore(deriveModule);
