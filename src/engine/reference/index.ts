// etw-decode/reference: the pure-TypeScript reference decoder (test oracle and benchmark baseline).
// Importing it also makes `engine: 'reference'` available to decodeSync in every entry.
import { registerReferenceEngine } from '../engines.js';
import { ReferenceEngine } from './walk.js';

registerReferenceEngine(() => new ReferenceEngine());

export { ReferenceEngine } from './walk.js';
export { xpressDecompress } from './xpress.js';
