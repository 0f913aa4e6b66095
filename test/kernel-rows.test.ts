// The WebAssembly engine does not zero the columns that every row writer stores in every row
// (assembly/memory.ts rewrittenColumns): a decode must give the same tables whatever those columns held
// before. Here they are filled with garbage before the decode (and the engine drains often, so rows are
// also written over earlier rows); the tables must equal the reference decoder's, null cells included.
import { describe, expect, test } from 'vitest';
import { readFileSync } from 'node:fs';
import { TableCollector } from '../src/decode/decode.js';
import { decodeSteps } from '../src/decode/decode-steps.js';
import { bytesSource, runSync } from '../src/decode/runners.js';
import { DECODED_TABLE_NAMES, TABLE_COLUMNS, TABLE_IDS, type DecodedTableName } from '../src/tables/schema.js';
import { columnWidth } from '../src/generated/registry.js';
import { decodeSync } from '../src/node.js';
import { WasmEngine } from '../src/engine/wasm/engine.js';
import { loadWasmModuleSync } from '../src/engine/wasm/instance.js';
import { generateMixedTrace, simulateSchedule, writeTrace } from '../src/writer/index.js';
import { corpusFiles, corpusTestsEnabled, readCorpus } from './helpers/corpus.js';

const corpus = corpusTestsEnabled();

/** The columns the engine leaves unzeroed between drains: they are poisoned. */
const REWRITTEN: Partial<Record<DecodedTableName, readonly string[] | 'all'>> = {
  cswitch: [
    'timestamp',
    'cpu',
    'newThreadId',
    'oldThreadId',
    'oldThreadPriority',
    'oldThreadWaitReason',
    'oldThreadState',
    'newThreadWaitTime',
    'newThreadWaitTimeAtMostOneTick',
    'source',
    'version',
    'fileOffset',
    'valid',
  ],
  spinlock: 'all',
  // every column but stackId, which the engine never writes (attached after the decode)
  readythread: TABLE_COLUMNS.readythread.map((c) => c.name).filter((n) => n !== 'stackId'),
};

const POISON = 0xa5;

/** Decodes `bytes` with a fresh engine whose rewritten columns are filled with POISON first. */
function decodePoisoned(bytes: Uint8Array, rowCapacity: number) {
  const engine = new WasmEngine(loadWasmModuleSync(), { rowCapacity });
  const capacity = engine.rowCapacity();
  // where each column starts in the engine's memory (a drain of no rows is a shared empty chunk, not views)
  const x = engine.exports as unknown as { columnPtr(table: number, column: number): number };
  const memory = new Uint8Array(engine.inputView().buffer);
  let poisoned = 0;
  for (const t of DECODED_TABLE_NAMES) {
    const which = REWRITTEN[t];
    if (!which) continue;
    TABLE_COLUMNS[t].forEach((spec, c) => {
      if (which !== 'all' && !which.includes(spec.name)) return;
      const at = x.columnPtr(TABLE_IDS[t], c) >>> 0;
      const width = columnWidth(TABLE_IDS[t], c);
      expect(at).toBeGreaterThan(0);
      memory.fill(POISON, at, at + capacity * width);
      poisoned++;
    });
  }
  const collector = new TableCollector();
  const result = runSync(bytesSource(bytes), decodeSteps(bytes.length, engine, {}), collector.add);
  return { tables: collector.tables(), counters: result.engine.counters, poisoned };
}

function expectSameTables(bytes: Uint8Array, rowCapacity: number): number {
  const w = decodePoisoned(bytes, rowCapacity);
  const r = decodeSync(bytes, { engine: 'reference' });
  expect(w.poisoned).toBe(13 + TABLE_COLUMNS.spinlock.length + TABLE_COLUMNS.readythread.length - 1);
  let rows = 0;
  for (const t of DECODED_TABLE_NAMES) {
    const a = w.tables[t];
    const b = r[t];
    expect(a.length, t).toBe(b.length);
    a.columns.forEach((col, i) => expect(col, `${t}.${a.specs[i]!.name}`).toEqual(b.columns[i]));
    rows += a.length;
  }
  return rows;
}

describe('columns every row overwrites are not zeroed, and that changes nothing', () => {
  test('mixed trace (CSwitch v1-v4, compact, SpinLock), many drains', () => {
    const t = generateMixedTrace({ seed: 12, targetBytes: 1_500_000, cpus: 3, bufferSize: 0x4000 });
    // 40000 rows per table: a drain every ~7000 cswitch rows (a compact batch may need 32770)
    expect(expectSameTables(t.bytes, 40_000)).toBeGreaterThan(15_000);
  });

  test('32-bit layouts', () => {
    const t = generateMixedTrace({ seed: 13, targetBytes: 400_000, cpus: 2, pointerSize: 4, bufferSize: 0x2000 });
    expect(expectSameTables(t.bytes, 40_000)).toBeGreaterThan(1000);
  });

  test('a simulated schedule (ReadyThread rows, CSwitch and compact switches)', () => {
    const bytes = writeTrace(simulateSchedule({ seed: 14, cpus: 4, threads: 60, processes: 8, switchMode: 'mixed', duration: 3_000_000 }).description).bytes;
    expect(expectSameTables(bytes, 40_000)).toBeGreaterThan(1000);
  });

  test.skipIf(!corpus)('the real corpus and the sample', () => {
    for (const f of corpusFiles()) expectSameTables(readCorpus(f), 40_000);
    expectSameTables(new Uint8Array(readFileSync(new URL('../samples/sample.etl', import.meta.url))), 40_000);
  });
});
