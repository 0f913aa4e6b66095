// etw-decode — Node entry: everything of the browser entry (index.ts) plus decoding files with bounded
// memory (files.ts: decodeFile, streamFile, readTraceInfo; worker_threads for large decodes).
export * from './index.js';
export * from './files.js';
