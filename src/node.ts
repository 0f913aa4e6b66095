// etw-decode — Node entry: everything of the browser entry (index.ts) plus decoding files with bounded
// memory (files.ts: decodeFile, streamFile, readTraceInfo; worker_threads for large decodes).
export * from './index.js';
export * from './decode/files.js';
import { registerReferenceEngine } from './engine/engines.js';
import { ReferenceEngine } from './engine/reference/walk.js';

// Node has no bundle size to keep small: the reference engine is always available, decodeSync included.
// (Registered here, not in files.ts: the CLI imports files.ts and loads the reference only when asked.)
registerReferenceEngine(() => new ReferenceEngine());
