// Sources that count what a decode reads, for tests that bound the work done (bytes read, read calls,
// buffers loaded) rather than the time taken.
import { decodeSteps, type DriverOptions, type DriverResult } from '../../src/decode/decode-steps.js';
import type { EngineKind } from '../../src/engine/engine.js';
import { createEngine, releaseEngine } from '../../src/engine/engines.js';
import '../../src/node.js'; // registers the reference engine
import { runAsync, runSync, type AsyncSource, type SyncSource } from '../../src/decode/runners.js';

export interface ReadCounts {
  /** read / readMany / readInto calls (readMany counts each position) */
  calls: number;
  /** bytes delivered */
  bytes: number;
}

/** A source over `size` virtual bytes given by `at(position, length)`, counting what is read. */
export function countingSource(size: number, at: (position: number, length: number) => Uint8Array): SyncSource & AsyncSource & { counts: ReadCounts } {
  const counts: ReadCounts = { calls: 0, bytes: 0 };
  const read = (position: number, length: number): Uint8Array => {
    const b = at(position, Math.max(0, Math.min(length, size - position)));
    counts.calls++;
    counts.bytes += b.length;
    return b;
  };
  const readInto = (position: number, target: Uint8Array): number => {
    const b = at(position, Math.max(0, Math.min(target.length, size - position)));
    target.set(b);
    counts.calls++;
    counts.bytes += b.length;
    return b.length;
  };
  return {
    size,
    counts,
    read: read as SyncSource['read'] & AsyncSource['read'],
    readInto: readInto as SyncSource['readInto'] & AsyncSource['readInto'],
  };
}

/** A counting source over bytes in memory. */
export function bytesCounting(bytes: Uint8Array): SyncSource & AsyncSource & { counts: ReadCounts } {
  return countingSource(bytes.length, (p, n) => bytes.subarray(p, p + n));
}

/** Runs a whole decode synchronously over `source` (rows discarded) and returns the driver's result. */
export function decodeCountedSync(source: SyncSource, engine: EngineKind, options: DriverOptions = {}): DriverResult {
  const e = createEngine(engine);
  try {
    return runSync(source, decodeSteps(source.size, e, { rows: 'discard', ...options }), () => {});
  } finally {
    releaseEngine(e);
  }
}

/** The same, asynchronously (the path of files and Blobs: read-ahead on). */
export async function decodeCountedAsync(source: AsyncSource, engine: EngineKind, options: DriverOptions = {}): Promise<DriverResult> {
  const e = createEngine(engine);
  try {
    const wrapped: AsyncSource = {
      size: source.size,
      read: async (p, n) => source.read(p, n),
      readInto: async (p, t) => source.readInto(p, t),
    };
    return await runAsync(wrapped, decodeSteps(source.size, e, { rows: 'discard', ...options }), () => {});
  } finally {
    releaseEngine(e);
  }
}
