// etw-decode/reference: the pure-TypeScript reference decoder (test oracle and benchmark baseline).
export { ReferenceEngine } from './engine.js';
export { xpressDecompress } from './xpress.js';
