// Where decoding workers come from: Node's worker_threads (node-host.ts, registered by the node entry
// src/node.ts and by the CLI's main()) or Web Workers (web-host.ts, registered by the browser entry
// src/index.ts where `Worker` exists). Only entry points register a host; no host: decodes run in one thread.
import type { AsyncSource } from '../decode/runners.js';
import type { FromWorker, ToWorker } from './protocol.js';

/** The coordinator's handle on one worker. */
export interface WorkerPort {
  post(message: ToWorker, transfer?: Transferable[]): void;
  /** messages from the worker */
  onMessage(handler: (message: FromWorker) => void): void;
  /** the worker failed outside a job (its script did not load, it crashed or exited) */
  onFailure(handler: (error: Error) => void): void;
  terminate(): void;
}

export interface ParallelHost {
  /** starts a worker (its script loads while the coordinator frames the input) */
  spawn(): WorkerPort;
  /** whether the coordinator's own thread decodes partitions too (Node: yes; browsers: no, it keeps the page responsive) */
  readonly mainThreadDecodes: boolean;
  /** the number of threads a decode uses by default (available parallelism) */
  defaultThreads(): number;
  /** the path of a file source (AsyncSource.path) its workers may open themselves, or null (they read through the coordinator) */
  filePathOf(source: AsyncSource): string | null;
}

let host: ParallelHost | null = null;

export function registerParallelHost(h: ParallelHost | null): void {
  host = h;
}

export function parallelHost(): ParallelHost | null {
  return host;
}

/**
 * Starts `count` workers of `host` (stopping at the first that cannot start: its error ends the list), so
 * that their scripts load while the caller prepares the decode.
 */
export function spawnWorkers(host: ParallelHost, count: number): (WorkerPort | Error)[] {
  const out: (WorkerPort | Error)[] = [];
  for (let i = 0; i < count; i++) {
    try {
      out.push(host.spawn());
    } catch (e) {
      out.push(e instanceof Error ? e : new Error(String(e)));
      break;
    }
  }
  return out;
}
