// The typed lifetime derivation (src/derive/lifetimes.ts; the threads by both engines' cores) against the
// row-by-row oracle (test/helpers/lifetimes-oracle.ts): simulated schedules with churn, events shuffled out
// of time order, ids reused, equal timestamps, negative times; and the shared real corpus when present.
import { describe, expect, test } from 'vitest';
import fc from 'fast-check';
import { decodeSync } from '../src/node.js';
import { deriveProcesses, IdIndex, threadsOf } from '../src/derive/lifetimes.js';
import { Table } from '../src/tables/table.js';
import { TABLE_COLUMNS, type TableName } from '../src/tables/schema.js';
import { simulateSchedule, writeTrace } from '../src/writer/index.js';
import { processesOracle, threadsOracle } from './helpers/lifetimes-oracle.js';
import { corpusFiles, corpusTestsEnabled, readCorpus } from './helpers/corpus.js';

/** the `threads` table by either engine's core: the WebAssembly one and its twin deriveThreads */
const ENGINES = ['wasm', 'reference'] as const;

function same<T extends TableName>(a: Table<T>, b: Table<T>): void {
  expect(a.length).toBe(b.length);
  TABLE_COLUMNS[a.name].forEach((spec, c) => expect(Array.from(a.columns[c] as ArrayLike<unknown>), spec.name).toEqual(Array.from(b.columns[c] as ArrayLike<unknown>)));
}

/** The rows of `t` in the order given. */
function permuted<T extends TableName>(t: Table<T>, order: number[]): Table<T> {
  const columns = t.columns.map((c) => (Array.isArray(c) ? order.map((i) => c[i]) : Reflect.construct((c as Uint8Array).constructor, [order.map((i) => (c as Uint8Array)[i])])));
  return new Table(t.name, { length: order.length, columns: columns as Table<T>['columns'] });
}

describe('lifetimes', () => {
  test('equal the oracle on simulated schedules, in decode order and shuffled, times shifted below zero', () => {
    // (2+ CPUs: the simulation's scripted lifecycle may not complete on one CPU in a short run)
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 1000 }), fc.integer({ min: 2, max: 4 }), fc.array(fc.nat(), { maxLength: 64 }), fc.boolean(), (seed, cpus, swaps, negative) => {
        const r = decodeSync(writeTrace(simulateSchedule({ seed, cpus, duration: 400_000, switchMode: 'mixed', threadVersion: 4 }).description).bytes);
        const prepare = <T extends 'threadEvents' | 'processEvents'>(t0: Table<T>): Table<T> => {
          const order = Array.from({ length: t0.length }, (_, i) => i);
          for (let k = 0; k + 1 < swaps.length && order.length > 1; k += 2) {
            const a = swaps[k]! % order.length;
            const b = swaps[k + 1]! % order.length;
            [order[a], order[b]] = [order[b]!, order[a]!];
          }
          const t = permuted(t0, order);
          if (negative) {
            const ts = t.columns[0] as BigInt64Array; // timestamp: column 0 of both
            for (let i = 0; i < ts.length; i++) ts[i] = ts[i]! - (1n << 62n) - (ts[i]! % 3n === 0n ? 5n : 0n);
          }
          return t;
        };
        const te = prepare(r.threadEvents);
        for (const engine of ENGINES) same(threadsOf(te, engine), threadsOracle(te));
        const pe = prepare(r.processEvents);
        same(deriveProcesses(pe), processesOracle(pe));
      }),
      { numRuns: 40 },
    );
  });

  test.runIf(corpusTestsEnabled())('equal the oracle on every file of the real corpus', () => {
    let threads = 0;
    for (const f of corpusFiles()) {
      const r = decodeSync(readCorpus(f));
      for (const engine of ENGINES) same(threadsOf(r.threadEvents, engine), threadsOracle(r.threadEvents));
      same(deriveProcesses(r.processEvents), processesOracle(r.processEvents));
      threads += r.threads.length;
    }
    expect(threads).toBeGreaterThan(1000);
  });
});

describe('IdIndex', () => {
  test('get/set against a Map, ids as u32 and int32 bits, values cleared with -1', () => {
    fc.assert(
      fc.property(fc.array(fc.tuple(fc.oneof(fc.integer({ min: 0, max: 50 }), fc.integer({ min: 0, max: 0xffffffff })), fc.integer({ min: -1, max: 1 << 20 })), { maxLength: 3000 }), (ops) => {
        const x = new IdIndex();
        const m = new Map<number, number>();
        for (const [id, v] of ops) {
          x.set(id, v);
          m.set(id | 0, v);
          expect(x.get(id)).toBe(v);
        }
        for (const [id] of ops) expect(x.get(id >>> 0)).toBe(m.get(id | 0));
        expect(x.get(123456789)).toBe(m.get(123456789) ?? -1);
      }),
      { numRuns: 60 },
    );
  });
});
