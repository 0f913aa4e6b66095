// What both workers of the page share: posting messages, throttled progress, errors as messages.
import { EtlError } from '../../src/index.js';
import type { FromWorker } from './protocol.js';

export const post = (m: FromWorker, transfer: Transferable[] = []) => (self as unknown as Worker).postMessage(m, transfer);

/** progress messages at most every PROGRESS_MS */
const PROGRESS_MS = 50;
export function progress(): (phase: string, done: number, total: number) => void {
  let last = 0;
  return (phase, done, total) => {
    const now = performance.now();
    if (now - last < PROGRESS_MS && done < total) return;
    last = now;
    post({ type: 'progress', phase, done, total });
  };
}

/** An error as the page shows it: EtlError's message (what went wrong and where), or an internal error. */
export function fail(e: unknown, what?: 'select' | 'threads' | 'flame'): void {
  if (e instanceof EtlError) post({ type: 'error', message: e.message, code: e.code, for: what });
  else post({ type: 'error', message: `internal error: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}`, code: null, for: what });
}
