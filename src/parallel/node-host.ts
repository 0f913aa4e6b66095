// Decoding workers in Node: worker_threads running worker-node.js (next to this file in dist/; when the
// library runs from its TypeScript sources, as under vitest, the built dist/parallel/worker-node.js).
// Registered by the Node entries (src/node.ts, src/cli/main.ts), never by importing this module.
import { existsSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import type { ParallelHost, WorkerPort } from './host.js';
import type { FromWorker, ToWorker } from './protocol.js';

let script: URL | null = null;

function workerScript(): URL {
  if (script) return script;
  const here = new URL('./worker-node.js', import.meta.url);
  if (existsSync(fileURLToPath(here))) return (script = here);
  const built = new URL('../../dist/parallel/worker-node.js', import.meta.url);
  if (existsSync(fileURLToPath(built))) return (script = built);
  throw new Error(`the decoding worker script is missing: neither ${fileURLToPath(here)} nor ${fileURLToPath(built)} exists (run npm run build)`);
}

export const nodeHost: ParallelHost = {
  mainThreadDecodes: true,
  defaultThreads: () => availableParallelism(),
  // a file source (files.ts) says its path: each worker opens the file and reads its partitions itself
  filePathOf: (source) => source.path ?? null,
  spawn(): WorkerPort {
    const w = new Worker(workerScript());
    let failed: ((e: Error) => void) | null = null;
    let terminated = false;
    const fail = (e: Error) => {
      if (!terminated) failed?.(e);
    };
    w.on('error', (e: Error) => fail(e));
    w.on('messageerror', (e: Error) => fail(e));
    w.on('exit', (code) => fail(new Error(`a decoding worker exited unexpectedly (exit code ${code})`)));
    return {
      post: (m: ToWorker, transfer?: Transferable[]) => w.postMessage(m, transfer as never),
      onMessage: (h: (m: FromWorker) => void) => w.on('message', h),
      onFailure: (h) => (failed = h),
      terminate: () => {
        terminated = true;
        void w.terminate();
      },
    };
  },
};
