// Entry of a decoding worker in browsers (a module Web Worker): worker.ts over the worker's global scope.
// Inputs are read through the coordinator (File/Blob slices and byte arrays alike).
import { serveWorker } from './worker.js';
import type { FromWorker, ToWorker } from './protocol.js';

interface WorkerScope {
  postMessage(message: FromWorker, transfer?: Transferable[]): void;
  addEventListener(type: 'message', listener: (e: { data: ToWorker }) => void): void;
}

const scope = globalThis as unknown as WorkerScope;
serveWorker({
  post: (m, transfer) => scope.postMessage(m, transfer ?? []),
  listen: (h) => scope.addEventListener('message', (e) => h(e.data)),
});
