// The decode's steps (decode-steps.ts): which steps it yields, and that yielding fewer changes no row.
// The buffers that need no step are decoded by a plain loop (BufferLoop.quiet); these tests pin what
// still takes a step: rows only when the consumer wants a table that has some, turns only when asked.
import { describe, expect, test } from 'vitest';
import { TableCollector } from '../src/decode/decode.js';
import { decodeSteps, type DriverOptions } from '../src/decode/decode-steps.js';
import { bytesSource, runSync } from '../src/decode/runners.js';
import { DECODED_TABLE_NAMES, TABLE_COLUMNS, TABLE_IDS, type Chunks, type DecodedTableName } from '../src/tables/schema.js';
import type { Engine } from '../src/engine/engine.js';
import { WasmEngine } from '../src/engine/wasm/engine.js';
import { loadWasmModuleSync } from '../src/engine/wasm/instance.js';
import { ReferenceEngine } from '../src/engine/reference/walk.js';
import { generateMixedTrace, simulateSchedule, writeTrace } from '../src/writer/index.js';
import { TURN_BYTES, type Step } from '../src/decode/steps.js';

// a scheduling trace in 8 KiB buffers (42): CSwitch and compact rows in most, Thread/Process events in a few
const schedule = simulateSchedule({ seed: 31, cpus: 4, threads: 40, processes: 6, switchMode: 'mixed', duration: 20_000_000 }).description;
const sched = writeTrace({ ...schedule, bufferSize: 0x2000 }).bytes;
// 2 MB of mixed events (CSwitch, compact, SpinLock, noise) in 64 KiB buffers
const mixed = generateMixedTrace({ seed: 32, targetBytes: 2_000_000, cpus: 3 }).bytes;
// 1 MB of them in 8 KiB buffers
const small = generateMixedTrace({ seed: 33, targetBytes: 1_200_000, cpus: 3, bufferSize: 0x2000 }).bytes;
const LIFETIMES: DecodedTableName[] = ['threadEvents', 'processEvents'];

const engines = {
  wasm: () => new WasmEngine(loadWasmModuleSync()),
  reference: () => new ReferenceEngine(),
};

/** Runs decodeSteps over the trace, recording every step kind and the rows handed over; `onStep` sees the engine at each step. */
function run(engine: keyof typeof engines, options: DriverOptions, bytes = sched, onStep?: (e: Engine) => void) {
  const kinds: Step['kind'][] = [];
  /** `done` of each decode progress step */
  const decodeProgress: number[] = [];
  const collector = new TableCollector();
  const rowsSteps: Chunks[] = [];
  const e = engines[engine]();
  const steps = decodeSteps(bytes.length, e, options);
  const source = bytesSource(bytes);
  // runSync, with the step kinds seen on the way
  const watched: typeof steps = {
    next: () => {
      const it = steps.next();
      if (!it.done) kinds.push(it.value.kind);
      if (!it.done) onStep?.(e);
      if (!it.done && it.value.kind === 'progress' && it.value.phase === 'decode') decodeProgress.push(it.value.done);
      return it;
    },
    return: (v) => steps.return(v),
    throw: (e) => steps.throw(e),
    [Symbol.iterator]() {
      return this;
    },
  } as typeof steps;
  const result = runSync(source, watched, (chunks) => {
    rowsSteps.push(chunks);
    collector.add(chunks);
  });
  return { kinds, decodeProgress, rowsSteps, tables: collector.tables(), result };
}

const count = (kinds: Step['kind'][], kind: Step['kind']) => kinds.filter((k) => k === kind).length;

describe.each(Object.keys(engines) as (keyof typeof engines)[])('%s engine', (engine) => {
  test('the trace drains many times and has lifetime events in only some drains', () => {
    const all = run(engine, { drainRows: 64 });
    expect(all.rowsSteps.length).toBeGreaterThan(30);
    expect(all.result.rows.threadEvents).toBeGreaterThan(0);
    expect(all.result.rows.processEvents).toBeGreaterThan(0);
    const withLifetimes = all.rowsSteps.filter((c) => c.threadEvents.length + c.processEvents.length > 0).length;
    expect(withLifetimes).toBeLessThan(all.rowsSteps.length / 2);
  });

  test('with `ship`, a drain that leaves no rows in those tables is no rows step; the same rows and counts', () => {
    const all = run(engine, { drainRows: 64 });
    const some = run(engine, { drainRows: 64, ship: LIFETIMES });
    // every rows step carries rows of a shipped table
    expect(some.rowsSteps.length).toBeGreaterThan(0);
    for (const c of some.rowsSteps) expect(c.threadEvents.length + c.processEvents.length).toBeGreaterThan(0);
    expect(some.rowsSteps.length).toBeLessThan(all.rowsSteps.length / 2);
    expect(count(some.kinds, 'rows')).toBe(some.rowsSteps.length);
    // rows counted in every table, whatever was shipped
    expect(some.result.rows).toEqual(all.result.rows);
    expect(some.result.engine.counters).toEqual(all.result.engine.counters);
    // the shipped tables arrive whole
    for (const t of LIFETIMES) {
      expect(some.tables[t].length, t).toBe(all.tables[t].length);
      TABLE_COLUMNS[t].forEach((spec, i) => expect(some.tables[t].columns[i], `${t}.${spec.name}`).toEqual(all.tables[t].columns[i]));
    }
  });

  test('decode progress steps every 64 buffers and at the end by default, none with progress: false; the same rows', () => {
    const buffers = small.length / 0x2000;
    expect(buffers).toBeGreaterThan(128);
    const shown = run(engine, {}, small);
    const quiet = run(engine, { progress: false }, small);
    expect(shown.decodeProgress).toEqual([...Array.from({ length: Math.floor(buffers / 64) }, (_, k) => (k + 1) * 64 * 0x2000), small.length]);
    expect(quiet.decodeProgress).toEqual([]);
    expect(quiet.result.rows).toEqual(shown.result.rows);
    expect(quiet.result.engine.counters).toEqual(shown.result.engine.counters);
  });

  test("turn steps every TURN_BYTES by default, none with turns: false; the same rows", () => {
    const turns = run(engine, {}, mixed);
    const none = run(engine, { turns: false }, mixed);
    expect(count(turns.kinds, 'turn')).toBe(Math.floor(mixed.length / TURN_BYTES)); // 64 KiB buffers: a turn after every 4
    expect(count(none.kinds, 'turn')).toBe(0);
    for (const t of DECODED_TABLE_NAMES) expect(none.tables[t].length, t).toBe(turns.tables[t].length);
    expect(none.result.rows).toEqual(turns.result.rows);
  });
});

describe('mostPendingRows', () => {
  test.each(Object.keys(engines) as (keyof typeof engines)[])('%s engine: the largest rowCount, after every buffer', (engine) => {
    const seen: number[] = [];
    // a window per buffer: a load step before each, where the counts are compared
    run(engine, { drainRows: 1 << 30, rows: 'discard', windowBytes: 0x2000 }, sched, (e) => {
      const most = Math.max(...DECODED_TABLE_NAMES.map((t) => e.rowCount(TABLE_IDS[t])));
      expect(e.mostPendingRows()).toBe(most);
      seen.push(most);
    });
    // rows piled up (nothing drained before the end): the maximum grew past one table's count
    expect(Math.max(...seen)).toBeGreaterThan(1000);
    expect(new Set(seen).size).toBeGreaterThan(20);
  });
});
