// The automatic choice of threads (src/parallel/run.ts threadsFor with `threads` unset): workers only where
// they were measured to pay — a file the workers read themselves, large enough — and an explicit `threads`
// as asked.
import { availableParallelism } from 'node:os';
import { describe, expect, test } from 'vitest';
import '../src/node.js'; // registers the worker_threads host
import { AUTO_MIN_BYTES, AUTO_MIN_BYTES_ROWS, PARALLEL_MIN_BYTES, THREAD_MIN_BYTES, autoMinBytes, threadsFor } from '../src/parallel/run.js';

const MiB = 1 << 20;
const cores = availableParallelism();
const split = (size: number, threads = cores) => (threads <= 1 ? 1 : Math.max(1, Math.min(threads, Math.floor(size / THREAD_MIN_BYTES))));

describe('threadsFor', () => {
  test('unset: a file the workers read, without a rows consumer, from AUTO_MIN_BYTES', () => {
    const file = { workersRead: true, rows: false };
    expect(autoMinBytes(file)).toBe(AUTO_MIN_BYTES);
    expect(threadsFor({}, AUTO_MIN_BYTES - 1, file)).toBe(1);
    expect(threadsFor({}, AUTO_MIN_BYTES, file)).toBe(split(AUTO_MIN_BYTES));
    // measured: the 516 MiB e2e trace is summarized faster by one thread, the 1 GiB one by two
    expect(threadsFor({}, 541065216, file)).toBe(1);
    expect(threadsFor({}, 1095303168, file)).toBe(split(1095303168));
  });

  test('unset: with a rows consumer, from AUTO_MIN_BYTES_ROWS', () => {
    const file = { workersRead: true, rows: true };
    expect(AUTO_MIN_BYTES_ROWS).toBeGreaterThan(AUTO_MIN_BYTES);
    expect(threadsFor({}, AUTO_MIN_BYTES_ROWS - 1, file)).toBe(1);
    expect(threadsFor({}, AUTO_MIN_BYTES_ROWS, file)).toBe(split(AUTO_MIN_BYTES_ROWS));
  });

  test('unset: bytes in memory and Blobs (read for the workers by this thread) never', () => {
    for (const rows of [false, true]) {
      expect(autoMinBytes({ workersRead: false, rows })).toBe(Infinity);
      expect(threadsFor({}, 8 * 2 ** 30, { workersRead: false, rows })).toBe(1);
    }
  });

  test('explicit threads: as asked from PARALLEL_MIN_BYTES, whatever the input', () => {
    for (const input of [{ workersRead: false, rows: true }, { workersRead: true, rows: false }]) {
      expect(threadsFor({ threads: 2 }, PARALLEL_MIN_BYTES - 1, input)).toBe(1);
      expect(threadsFor({ threads: 2 }, PARALLEL_MIN_BYTES, input)).toBe(2);
      expect(threadsFor({ threads: 3 }, 40 * MiB, input)).toBe(2); // one per 16 MiB
      expect(threadsFor({ threads: 1 }, 4 * 2 ** 30, input)).toBe(1);
      expect(threadsFor({ threads: 4, engine: 'reference' }, 4 * 2 ** 30, input)).toBe(1);
    }
  });

  test('a tuned minBytes is taken as given (tests, benchmarks)', () => {
    expect(threadsFor({ parallel: { minBytes: 0 } }, 1, { workersRead: false, rows: true })).toBe(cores > 1 ? cores : 1);
  });
});

describe('decodes without threads', () => {
  test('34 MiB in memory: one thread (no worker started); threads: 2 splits the same bytes, with the same result', async () => {
    const { generateMixedTrace } = await import('../src/writer/index.js');
    const { decodeStream } = await import('../src/node.js');
    const bytes = generateMixedTrace({ seed: 12, targetBytes: 34 * MiB, cpus: 4 }).bytes;
    expect(bytes.length).toBeGreaterThanOrEqual(PARALLEL_MIN_BYTES);
    const run = async (threads?: number) => {
      const log: string[] = [];
      const out = await decodeStream(bytes, { threads, parallel: { log: (e) => log.push(e) } });
      return { log, events: out.summary.events, cswitch: out.summary.cswitch };
    };
    const auto = await run();
    expect(auto.log).toEqual([]);
    const two = await run(2);
    expect(two.log.some((e) => e.includes('workers spawned'))).toBe(true);
    expect(two.events).toBe(auto.events);
    expect(two.cswitch).toBe(auto.cswitch);
    expect(auto.events).toBeGreaterThan(100_000);
  }, 60_000);
});
