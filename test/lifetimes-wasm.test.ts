// The WebAssembly `threads` core (assembly/derive/lifetimes.ts, fed by WasmThreadLifetimes) against its
// TypeScript twin deriveThreads (src/derive/lifetimes.ts, `engine: 'reference'`): the same table column
// for column (valid bits, names, 64-bit values exactly) on simulated and realistic traces (both pointer
// sizes; ids reused, rundowns missing, events lost) and on drawn Thread events (ids reused, equal times
// across CPUs, empty names, a CPU out of time order, times spanning 2^53 and more, negative times), cut
// into any chunks — borrowed ones overwritten once added — across the core's 65,536-event input blocks;
// each order path (as they came, merged, radix) taken; and a decode's `threads` by either engine.
import { describe, expect, test } from 'vitest';
import fc from 'fast-check';
import { decodeStream, decodeSync, type DecodeResult } from '../src/node.js';
import * as L from '../src/generated/layout.js';
import { deriveThreads, threadsOf, WasmThreadLifetimes } from '../src/derive/lifetimes.js';
import { Table } from '../src/tables/table.js';
import { TABLE_COLUMNS, type ColumnChunk, type TypedColumn } from '../src/tables/schema.js';
import { generateRealisticTrace, simulateSchedule, writeTrace } from '../src/writer/index.js';
import { filterRows, lost, noStartRundown, reused, sliceOf, unknown, type In } from './helpers/deriver-chunks.js';

function same(a: Table<'threads'>, b: Table<'threads'>): void {
  expect(a.length).toBe(b.length);
  TABLE_COLUMNS.threads.forEach((spec, c) => expect(Array.from(a.columns[c] as ArrayLike<unknown>), spec.name).toEqual(Array.from(b.columns[c] as ArrayLike<unknown>)));
}

/** The wasm table of `ev` fed in chunks cut at the row indices `cuts`; borrowed chunks are overwritten once added (the core must not keep them). */
function wasmThreads(ev: Table<'threadEvents'>, cuts: number[] = [], borrowed = false): WasmThreadLifetimes {
  const w = new WasmThreadLifetimes();
  const b = [...new Set([0, ...cuts.map((c) => Math.min(c, ev.length)), ev.length])].sort((x, y) => x - y);
  for (let k = 0; k + 1 < b.length; k++) {
    const chunk = sliceOf(ev, b[k]!, b[k + 1]!);
    w.add({ length: chunk.length, columns: chunk.columns } as ColumnChunk, borrowed);
    if (borrowed) for (const col of chunk.columns) (Array.isArray(col) ? col.fill('overwritten') : col instanceof BigInt64Array || col instanceof BigUint64Array ? col.fill(7n) : col.fill(7));
  }
  return w;
}

/** The wasm table equals the twin's, whole and in the chunks `cuts` (borrowed or not); returns the wasm side. */
function check(ev: Table<'threadEvents'>, cuts: number[] = [], borrowed = false): WasmThreadLifetimes {
  const want = deriveThreads(ev);
  const w = wasmThreads(ev, cuts, borrowed);
  same(w.table(), want);
  return w;
}

// ---- drawn Thread events

const OPCODES = [L.OPCODE_START, L.OPCODE_END, L.OPCODE_DC_START, L.OPCODE_DC_END, L.OPCODE_THREAD_SET_NAME];
const NAMES = ['', 'a', 'worker', 'ñ名'];

interface Drawn {
  /** per event: cpu, opcode index, tid index, pid, addr, prio, name index, valid bits (addr, prio, name), time step */
  events: [number, number, number, number, bigint, number, number, number, number][];
  ids: number[];
  /** how the times run: 'cpu' each CPU's clock (rows in stretches of one CPU), 'sorted' rows in time order, 'shuffled' a CPU out of order */
  order: 'cpu' | 'sorted' | 'shuffled';
  /** the times' origin and a jump: spans of 2^53 ticks and more, negative times */
  base: bigint;
  jump: bigint;
}

const drawn = fc.record({
  events: fc.array(
    fc.tuple(
      fc.integer({ min: 0, max: 4 }),
      fc.integer({ min: 0, max: OPCODES.length - 1 }),
      fc.nat(),
      fc.integer({ min: 0, max: 0xffffffff }),
      fc.bigInt({ min: 0n, max: (1n << 64n) - 1n }),
      fc.integer({ min: 0, max: 255 }),
      fc.integer({ min: 0, max: NAMES.length - 1 }),
      fc.integer({ min: 0, max: 7 }),
      fc.oneof(fc.constant(0), fc.integer({ min: 0, max: 3 }), fc.integer({ min: 0, max: 1000 })),
    ),
    { maxLength: 300 },
  ),
  // few ids (reused: several lifetimes each), or any u32 (above 2^31 too)
  ids: fc.oneof(fc.array(fc.integer({ min: 0, max: 6 }), { minLength: 1, maxLength: 3 }), fc.array(fc.integer({ min: 0, max: 0xffffffff }), { minLength: 1, maxLength: 40 })),
  order: fc.constantFrom('cpu' as const, 'sorted' as const, 'shuffled' as const),
  base: fc.constantFrom(0n, -(1n << 62n), 123456789n, (1n << 62n) - (1n << 40n)),
  jump: fc.constantFrom(0n, 1n << 53n, (1n << 53n) + 1n, 1n << 60n),
});

/** A threadEvents table of the drawn events. */
function threadEventsOf(d: Drawn): Table<'threadEvents'> {
  const n = d.events.length;
  const clocks = new Array<bigint>(5).fill(d.base);
  const rows = d.events.map(([cpu, op, tid, pid, addr, prio, name, bits, step], i) => {
    // each CPU's clock; the jump once, halfway, on every CPU: a span of 2^53 ticks and more
    clocks[cpu] = clocks[cpu]! + BigInt(step) + (i === n >> 1 ? d.jump : 0n);
    return { cpu, op, tid: d.ids[tid % d.ids.length]!, pid, addr, prio, name, bits, ts: clocks[cpu]! };
  });
  if (d.order === 'sorted') rows.sort((a, b) => (a.ts < b.ts ? -1 : a.ts > b.ts ? 1 : 0));
  if (d.order === 'shuffled' && n > 1) {
    // one CPU's later event moved before its earlier one
    const i = rows.findIndex((r, k) => rows.some((s, j) => j > k && s.cpu === r.cpu && s.ts > r.ts));
    if (i >= 0) {
      const j = rows.findIndex((s, k) => k > i && s.cpu === rows[i]!.cpu && s.ts > rows[i]!.ts);
      [rows[i], rows[j]] = [rows[j]!, rows[i]!];
    }
  }
  const columns: TypedColumn[] = [];
  columns[L.TE_TIMESTAMP] = BigInt64Array.from(rows, (r) => r.ts);
  columns[L.TE_CPU] = Uint16Array.from(rows, (r) => r.cpu);
  columns[L.TE_OPCODE] = Uint8Array.from(rows, (r) => OPCODES[r.op]!);
  columns[L.TE_THREAD_ID] = Uint32Array.from(rows, (r) => r.tid);
  columns[L.TE_PROCESS_ID] = Uint32Array.from(rows, (r) => r.pid);
  columns[L.TE_WIN32_START_ADDR] = BigUint64Array.from(rows, (r) => ((r.bits & 1) !== 0 ? r.addr : 0n));
  columns[L.TE_BASE_PRIORITY] = Uint8Array.from(rows, (r) => ((r.bits & 2) !== 0 ? r.prio : 0));
  columns[L.TE_NAME] = rows.map((r) => ((r.bits & 4) !== 0 ? NAMES[r.name]! : ''));
  columns[L.TE_VERSION] = new Uint8Array(n).fill(4);
  columns[L.TE_FILE_OFFSET] = Float64Array.from(rows, (_, i) => i * 64);
  columns[L.TE_VALID] = Uint32Array.from(
    rows,
    (r) =>
      (L.TE_ALWAYS_VALID |
        ((r.bits & 1) !== 0 ? 1 << L.TE_WIN32_START_ADDR : 0) |
        ((r.bits & 2) !== 0 ? 1 << L.TE_BASE_PRIORITY : 0) |
        ((r.bits & 4) !== 0 ? 1 << L.TE_NAME : 0) |
        (1 << L.TE_VALID)) >>>
      0,
  );
  return new Table('threadEvents', { length: n, columns });
}

describe('the wasm threads core equals deriveThreads', () => {
  test('on drawn Thread events, in any chunks, borrowed or not', () => {
    const paths = new Set<string | null>();
    fc.assert(
      fc.property(drawn, fc.array(fc.nat({ max: 300 }), { maxLength: 6 }), fc.boolean(), (d, cuts, borrowed) => {
        const ev = threadEventsOf(d);
        paths.add(check(ev, cuts, borrowed).orderPath);
      }),
      { numRuns: 400 },
    );
    expect([...paths].sort()).toEqual(['as they came', 'merged', 'radix']);
  });

  test('across the input blocks (65,536 events), chunks spanning them', () => {
    // many events: ids reused, 4 CPUs in stretches of a few hundred rows, names empty or not
    const n = 70_000;
    const events: Drawn['events'] = [];
    let cpu = 0;
    for (let i = 0; i < n; i++) {
      if (i % 333 === 0) cpu = (cpu + 1 + (i % 3)) % 4;
      events.push([cpu, (i * 7) % 5, (i * 13) % 4000, 4 * (i % 97), BigInt(i) * 0x10001n, i % 31, (i * 3) % 4, (i * 5) % 8, i % 4]);
    }
    const ids = Array.from({ length: 4000 }, (_, k) => 4 * k + 8);
    const cuts = [[], [1, 65_535, 65_536, 65_537], [40_000, 66_000], Array.from({ length: 30 }, (_, k) => k * 2333 + 17)];
    for (const order of ['cpu', 'sorted', 'shuffled'] as const) {
      const ev = threadEventsOf({ events, ids, order, base: -5000n, jump: 0n });
      const want = deriveThreads(ev);
      for (const c of cuts) {
        const w = wasmThreads(ev, c, c.length === 4);
        same(w.table(), want);
        expect(w.orderPath).toBe(order === 'cpu' ? 'merged' : order === 'sorted' ? 'as they came' : 'radix');
      }
    }
  });

  test('an empty table, and a row name that only empty names follow', () => {
    check(threadEventsOf({ events: [], ids: [1], order: 'cpu', base: 0n, jump: 0n }));
    // the thread named 'worker', then an empty name (valid bit set): the row keeps 'worker'
    const ev = threadEventsOf({
      events: [
        [0, 2, 0, 10, 0n, 0, 2, 4, 1],
        [1, 4, 0, 10, 0n, 0, 0, 4, 2],
        [0, 4, 0, 10, 0n, 0, 0, 4, 2],
        [1, 4, 1, 11, 0n, 0, 0, 4, 3],
      ],
      ids: [1234, 99],
      order: 'cpu',
      base: 0n,
      jump: 0n,
    });
    const t = check(ev).table();
    expect(t.column('name')).toEqual(['worker', '']);
    expect(t.get(1)!.name).toBeNull();
  });
});

const MUTATIONS: [string, (r: In) => In][] = [['as written', (r) => r], ['no start rundown', noStartRundown], ['lost events', lost], ['thread ids reused', reused], ['threads never known', unknown]];

const traces: [string, DecodeResult][] = [
  ['schedule mixed, 64-bit', decodeSync(writeTrace(simulateSchedule({ seed: 41, cpus: 4, duration: 800_000, switchMode: 'mixed', threadVersion: 4 }).description).bytes)],
  ['schedule compact, 32-bit', decodeSync(writeTrace(simulateSchedule({ seed: 42, cpus: 6, duration: 800_000, switchMode: 'compact', pointerSize: 4 }).description).bytes)],
  ['realistic, 64-bit', decodeSync(generateRealisticTrace({ seed: 43, targetBytes: 1 << 19, cpus: 4 }).bytes)],
  ['realistic mixed, 32-bit', decodeSync(generateRealisticTrace({ seed: 44, targetBytes: 1 << 19, cpus: 8, switches: 'mixed', pointerSize: 4 }).bytes)],
];

describe.each(traces)('%s', (_, r) => {
  test.each(MUTATIONS)('%s: the same table in any chunks', (_, mutate) => {
    const ev = mutate(r).threadEvents;
    expect(ev.length).toBeGreaterThan(50);
    fc.assert(
      fc.property(fc.array(fc.nat({ max: ev.length }), { maxLength: 8 }), fc.boolean(), (cuts, borrowed) => {
        check(ev, cuts, borrowed);
      }),
      { numRuns: 12 },
    );
  });

  test('a CPU out of time order (the radix sort), times spanning more than 2^53 ticks (the merge), in time order already', () => {
    const ev = r.threadEvents;
    const cpu = ev.column('cpu');
    // two events of one CPU swapped
    const i = cpu.findIndex((c, k) => k > 10 && cpu.indexOf(c, k + 1) > 0 && ev.column('timestamp')[cpu.indexOf(c, k + 1)]! > ev.column('timestamp')[k]!);
    const j = cpu.indexOf(cpu[i]!, i + 1);
    const order = Array.from({ length: ev.length }, (_, k) => (k === i ? j : k === j ? i : k));
    const swapped = new Table('threadEvents', { length: ev.length, columns: ev.columns.map((c) => (Array.isArray(c) ? order.map((k) => c[k]!) : Reflect.construct(c.constructor, [order.map((k) => (c as Uint8Array)[k]!)]))) as TypedColumn[] });
    expect(check(swapped, [ev.length >> 1]).orderPath).toBe('radix');
    // the later half 2^60 ticks later: each CPU still in order
    const far = sliceOf(ev, 0, ev.length);
    const ts = far.column('timestamp');
    const mid = ts.slice().sort()[ts.length >> 1]!;
    for (let k = 0; k < ts.length; k++) if (ts[k]! > mid) ts[k] = ts[k]! + (1n << 60n);
    expect(check(far, [7, ev.length >> 2]).orderPath).toBe('merged');
    // in time order already: the rows sorted by time
    const byTime = Array.from({ length: ev.length }, (_, k) => k).sort((a, b) => (ev.column('timestamp')[a]! < ev.column('timestamp')[b]! ? -1 : ev.column('timestamp')[a]! > ev.column('timestamp')[b]! ? 1 : a - b));
    const sorted = new Table('threadEvents', { length: ev.length, columns: ev.columns.map((c) => (Array.isArray(c) ? byTime.map((k) => c[k]!) : Reflect.construct(c.constructor, [byTime.map((k) => (c as Uint8Array)[k]!)]))) as TypedColumn[] });
    expect(check(sorted, [3]).orderPath).toBe('as they came');
  });
});

describe("a decode's threads", () => {
  const bytes = generateRealisticTrace({ seed: 45, targetBytes: 1 << 20, cpus: 4 }).bytes;
  test('the same by either engine, whole (rows copied) and streamed (rows borrowed)', async () => {
    const wasm = decodeSync(bytes);
    const reference = decodeSync(bytes, { engine: 'reference' });
    expect(wasm.threads.length).toBeGreaterThan(100);
    same(wasm.threads, reference.threads);
    same(wasm.threads, deriveThreads(wasm.threadEvents));
    same((await decodeStream(bytes, {})).threads, wasm.threads);
    same((await decodeStream(bytes, { engine: 'reference' })).threads, wasm.threads);
    // threadsOf: either engine's core
    same(threadsOf(wasm.threadEvents), threadsOf(wasm.threadEvents, 'reference'));
  });

  test('a table of rows filtered and their names emptied: the same', () => {
    const r = decodeSync(bytes);
    const ev = filterRows(r.threadEvents, (i) => i % 5 !== 2);
    const names = (ev.columns[L.TE_NAME] as string[]).map((s, i) => (i % 3 === 0 ? '' : s));
    const columns = ev.columns.slice();
    columns[L.TE_NAME] = names;
    check(new Table('threadEvents', { length: ev.length, columns: columns as TypedColumn[] }), [100, 101]);
  });
});
