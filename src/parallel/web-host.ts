// Decoding workers in browsers: module Web Workers running worker-web.js. The `new Worker(new URL(…,
// import.meta.url), { type: 'module' })` form is the one bundlers (Vite, webpack 5, Parcel, Rollup with
// its worker plugins) recognise and bundle as a worker entry; a page built without it gets workers that
// fail to load, and the decode goes on in one thread (coordinator.ts).
import type { ParallelHost, WorkerPort } from './host.js';
import type { FromWorker, ToWorker } from './protocol.js';

interface WebWorker {
  postMessage(message: unknown, transfer?: Transferable[]): void;
  addEventListener(type: 'message', listener: (e: { data: FromWorker }) => void): void;
  addEventListener(type: 'error' | 'messageerror', listener: (e: { message?: string }) => void): void;
  terminate(): void;
}
type WorkerConstructor = new (url: URL, options: { type: 'module' }) => WebWorker;

export function webWorkersAvailable(): boolean {
  return typeof (globalThis as { Worker?: unknown }).Worker === 'function';
}

export const webHost: ParallelHost = {
  mainThreadDecodes: false,
  defaultThreads: () => (globalThis as { navigator?: { hardwareConcurrency?: number } }).navigator?.hardwareConcurrency ?? 1,
  filePathOf: () => null,
  spawn(): WorkerPort {
    const W = (globalThis as unknown as { Worker: WorkerConstructor }).Worker;
    const w = new W(new URL('./worker-web.js', import.meta.url), { type: 'module' });
    let failed: ((e: Error) => void) | null = null;
    let terminated = false;
    const fail = (what: string) => (e: { message?: string }) => {
      if (!terminated) failed?.(new Error(`a decoding worker ${what}${e.message ? `: ${e.message}` : ''}`));
    };
    w.addEventListener('error', fail('failed'));
    w.addEventListener('messageerror', fail('could not read a message'));
    return {
      post: (m: ToWorker, transfer?: Transferable[]) => w.postMessage(m, transfer ?? []),
      onMessage: (h) => w.addEventListener('message', (e) => h(e.data)),
      onFailure: (h) => (failed = h),
      terminate: () => {
        terminated = true;
        w.terminate();
      },
    };
  },
};
