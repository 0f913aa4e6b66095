// All cores (src/parallel): a decode split into partitions of the decode order — decoded by several engines,
// in this thread or in workers — gives what one engine gives: every row of every table in the same order,
// the counters, the issue log, the kinds in first-seen order, the logfile header, the bias. Checked on
// generated traces (compact chains crossing every partition boundary, CSwitch, SpinLock, Thread/Process
// events, out-of-order, compressed and x86 buffers, corrupt and lost buffers, more kinds than the kind
// table holds), the real corpus and fuzzed inputs, for partition counts 1..8 and arbitrary boundaries.
import { spawnSync } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import fc from 'fast-check';
import { describe, expect, test } from 'vitest';
import { mutate } from '../fuzz/mutate.js';
import { analyse, writerSeeds } from '../fuzz/seeds.js';
import { decodeSteps, type DriverResult } from '../src/decode/decode-steps.js';
import { createEngine, releaseEngine } from '../src/engine/engines.js';
import * as L from '../src/generated/layout.js';
import { cpuUsage, CpuUsageDeriver, decode, decodeStream, decodeSync, EtlError, type DecodeOptions } from '../src/node.js';
import { decodeParallel, emptyReport, guidedBounds, partitionBounds, yielding, type ParallelReport, type ParallelRequest } from '../src/parallel/coordinator.js';
import { parallelHost, registerParallelHost, type ParallelHost } from '../src/parallel/host.js';
import { decodeInParallel } from '../src/parallel/run.js';
import type { FromWorker, ToWorker } from '../src/parallel/protocol.js';
import { serveWorker } from '../src/parallel/worker.js';
import { nodeHost } from '../src/parallel/node-host.js';
import { webHost } from '../src/parallel/web-host.js';
import { Worker as NodeWorker } from 'node:worker_threads';
import { bytesSource, runSync, type AsyncSource } from '../src/decode/runners.js';
import { concatChunks, DECODED_TABLE_NAMES, perTable, TABLE_COLUMNS, type ColumnChunk, type DecodedTableName, type TypedColumn } from '../src/tables/schema.js';
import { generateMixedTrace, generateSampleTrace, generateTraceChunks, Rng, simulateSchedule, writeTrace, type ScheduleOptions } from '../src/writer/index.js';
import { corpusFiles, corpusPath, corpusTestsEnabled } from './helpers/corpus.js';

const corpus = corpusTestsEnabled();

interface Decoded {
  r: DriverResult;
  tables: Record<DecodedTableName, ColumnChunk>;
}

/** The one-engine decode (decode-steps.ts), rows copied. */
function one(bytes: Uint8Array, options: { bias?: number } = {}): Decoded {
  const engine = createEngine('wasm');
  try {
    if (options.bias !== undefined) engine.setBiasOverride(options.bias);
    const chunks = perTable((): ColumnChunk[] => []);
    const r = runSync(bytesSource(bytes), decodeSteps(bytes.length, engine, { rows: 'copy' }), (c) => {
      for (const t of DECODED_TABLE_NAMES) if (c[t].length) chunks[t].push(c[t]);
    });
    return { r, tables: perTable((t) => concatChunks(t, chunks[t])) };
  } finally {
    releaseEngine(engine);
  }
}

function memorySource(bytes: Uint8Array): AsyncSource {
  const s = bytesSource(bytes);
  return { size: s.size, read: async (p, n) => s.read(p, n), readInto: async (p, t) => s.readInto(p, t) };
}

type ManyOptions = Partial<Omit<ParallelRequest, 'source' | 'onChunks'>> & { host?: ParallelHost | null };

/** The parallel decode (coordinator.ts), in this thread unless a host is given. */
async function many(bytes: Uint8Array, o: ManyOptions = {}, source: AsyncSource = memorySource(bytes)): Promise<Decoded & { report: ParallelReport }> {
  const chunks = perTable((): ColumnChunk[] => []);
  const report: ParallelReport = emptyReport();
  const r = await decodeParallel({
    source,
    threads: 2,
    host: null,
    ship: DECODED_TABLE_NAMES,
    budget: Infinity,
    ...o,
    report,
    onChunks: (c) => {
      for (const t of DECODED_TABLE_NAMES) if (c[t].length) chunks[t].push(c[t]);
    },
  });
  return { r, tables: perTable((t) => concatChunks(t, chunks[t])), report };
}

const bytesOf = (a: ArrayBufferView): Buffer => Buffer.from(a.buffer, a.byteOffset, a.byteLength);

/** Everything but what the decode read (`reads`) is the same. */
function expectSame(a: Decoded, b: Decoded, label = '', tables: readonly DecodedTableName[] = DECODED_TABLE_NAMES): void {
  expect(b.r.size, label).toBe(a.r.size);
  expect(b.r.rows, label).toEqual(a.r.rows);
  expect(b.r.framingCounters, label).toEqual(a.r.framingCounters);
  expect(b.r.framingIssues, label).toEqual(a.r.framingIssues);
  for (const c of ['fileOffset', 'size', 'sequenceNumber', 'cpu', 'flags', 'type'] as const) expect(bytesOf(b.r.buffers[c]).equals(bytesOf(a.r.buffers[c])), `${label} buffers.${c}`).toBe(true);
  const x = a.r.engine;
  const y = b.r.engine;
  expect(y.counters, `${label} counters`).toEqual(x.counters);
  expect(y.log, `${label} issue log`).toEqual(x.log);
  expect(y.kinds, `${label} kinds`).toEqual(x.kinds);
  expect([y.logfilePayload, y.logfilePayloadLength, y.logfilePointerSize, y.logfileTimestamp], `${label} logfile header`).toEqual([
    x.logfilePayload,
    x.logfilePayloadLength,
    x.logfilePointerSize,
    x.logfileTimestamp,
  ]);
  expect(y.headerExtension, `${label} header extension`).toEqual(x.headerExtension);
  expect(y.bias, `${label} bias`).toBe(x.bias);
  for (const t of tables) {
    const p = a.tables[t];
    const q = b.tables[t];
    expect(q.length, `${label} ${t} rows`).toBe(p.length);
    TABLE_COLUMNS[t].forEach((spec, c) => {
      const u = p.columns[c]!;
      const v = q.columns[c]!;
      const same = Array.isArray(u) ? JSON.stringify(u) === JSON.stringify(v) : bytesOf(u).equals(bytesOf(v as ArrayBufferView));
      expect(same, `${label} ${t}.${spec.name}`).toBe(true);
    });
  }
}

/** A schedule trace with small buffers: compact chains cross many buffers, so many partition boundaries. */
function schedule(o: Partial<ScheduleOptions> = {}): Uint8Array {
  return writeTrace(simulateSchedule({ seed: 7, cpus: 4, duration: 3_000_000, bufferSize: 0x800, spinlocks: 0.05, noise: 0.05, ...o }).description).bytes;
}

/** Workers only: the coordinator's thread does not decode (as in browsers), so the workers do everything. */
const workersOnly: ParallelHost = { ...nodeHost, mainThreadDecodes: false };

describe('partitions: the same output as one engine', () => {
  test('sample trace, 1 to 8 partitions', async () => {
    const bytes = generateSampleTrace().bytes;
    const a = one(bytes);
    expect(a.tables.cswitch.length).toBeGreaterThan(1000);
    for (let p = 1; p <= 8; p++) {
      const b = await many(bytes, { partitions: p });
      expect(b.report.partitions).toBe(p);
      expectSame(a, b, `${p} partitions`);
    }
  });

  test('compact switches only, 4 CPUs: a partition boundary after every buffer in turn', async () => {
    const bytes = schedule({ switchMode: 'compact', duration: 2_000_000 });
    const a = one(bytes);
    const n = a.r.buffers.length;
    expect(n).toBeGreaterThanOrEqual(24);
    expect(a.r.engine.counters[L.D_COMPCS_PACKETS_LITE]! + a.r.engine.counters[L.D_COMPCS_PACKETS_FULL]!).toBeGreaterThan(500);
    for (let cut = 1; cut < n; cut++) expectSame(a, await many(bytes, { cuts: [cut] }), `cut at ${cut}`);
    // a partition per buffer
    expectSame(a, await many(bytes, { cuts: Array.from({ length: n }, (_, i) => i), threads: 3 }), 'one buffer each');
  });

  test('compact batches that start before the switch held back on their processor: the time-check issues, placeholder or not, at their places', async () => {
    const bytes = schedule({ switchMode: 'compact', duration: 2_000_000, seed: 8 }).slice();
    // every 2nd batch's FirstTimeStamp goes back to 0: its first switch precedes the one held on its processor
    const v = new DataView(bytes.buffer);
    let k = 0;
    for (const e of analyse('t', bytes).events) {
      if (e.hook !== L.HOOK_COMPCS || k++ % 2 !== 0) continue;
      const headerSize = (L.headerInfo((v.getUint32(e.at, true) >>> 16) & 0xff) & 0xf) << 3;
      v.setBigInt64(e.at + headerSize + L.CCS_FIRST_TIMESTAMP, 0n, true);
    }
    const a = one(bytes);
    expect(a.r.engine.counters[L.D_COMPCS_TIME_MISMATCH]).toBeGreaterThan(10);
    expect(a.r.engine.log.filter((x) => x.code === L.D_COMPCS_TIME_MISMATCH && x.detail === L.TIME_BEFORE_PREVIOUS).length).toBeGreaterThan(10);
    const n = a.r.buffers.length;
    for (let cut = 1; cut < n; cut += 2) expectSame(a, await many(bytes, { cuts: [cut, cut + 5, cut + 9] }), `cuts at ${cut}`);
  });

  test('stacks (docs/format.md §H): the frames of each stack event stay its rows across partition boundaries', async () => {
    const bytes = schedule({ switchMode: 'mixed', seed: 15, duration: 600_000, profileInterval: 3_000, stacks: true });
    const a = one(bytes);
    expect(a.tables.stackEventFrames.length).toBeGreaterThan(1000);
    const n = a.r.buffers.length;
    for (let cut = 1; cut < n; cut += 3) expectSame(a, await many(bytes, { cuts: [cut, cut + 4] }), `cuts at ${cut}`);
    for (const p of [2, 5]) expectSame(a, await many(bytes, { partitions: p }), `${p} partitions`);
  });

  test('mixed switch encodings, x86, compressed, u8 processors, CSwitch v2/v3/v4, Thread/Process events', async () => {
    const traces = [
      schedule({ switchMode: 'mixed', seed: 11 }),
      schedule({ switchMode: ['compact', 'cswitch', 'compact'], cpus: 3, pointerSize: 4, seed: 12, cswitchVersions: [2, 3, 4] }),
      schedule({ switchMode: 'compact', compress: true, seed: 13 }),
      schedule({ switchMode: 'compact', procIndex: false, outOfOrder: false, seed: 14, threadVersion: 4, processVersion: 3 }),
    ];
    for (const [i, bytes] of traces.entries()) {
      const a = one(bytes);
      expect(a.tables.threadEvents.length).toBeGreaterThan(0);
      for (const p of [2, 3, 5, 8]) expectSame(a, await many(bytes, { partitions: p, threads: 1 + (p % 3) }), `trace ${i}, ${p} partitions`);
    }
  });

  test('more event kinds than the kind table holds: seeded partitions count like one engine; a guess that was too small is decoded again', async () => {
    const bytes = generateMixedTrace({ seed: 5, targetBytes: 6 << 20, cpus: 4, mix: { noise: 3, compact: 3, cswitch: 1 } }).bytes;
    const a = one(bytes);
    expect(a.r.engine.kinds.length).toBe(L.KIND_MAX_DISTINCT);
    expect(a.r.engine.counters[L.D_KIND_TABLE_FULL]).toBeGreaterThan(0);
    // the first partition fills the table, the others start with it: no second decode
    const n = a.r.buffers.length;
    const d = await many(bytes, { cuts: [n >> 1, (5 * n) >> 3, (6 * n) >> 3, (7 * n) >> 3], threads: 3 });
    expect(d.report.partitions).toBe(5);
    expect(d.report.reruns).toEqual({ trace: 0, kinds: 0, log: 0 });
    expectSame(a, d, 'large first partition');
    // a first partition of one buffer: the next ones fill their tables from a partial seed and are decoded again
    const b = await many(bytes, { cuts: [1, 20, 40, 60, 80] });
    expect(b.report.reruns.kinds).toBeGreaterThan(0);
    expectSame(a, b, 'tiny first partition');
  });

  test('the logfile header later in the decode order than the first partition: partitions after it are decoded again', async () => {
    const bytes = schedule({ switchMode: 'compact', outOfOrder: false, seed: 21 }).slice();
    // the header buffer (file offset 0) gets the largest SequenceNumber: decoded first all the same (§A.7)
    const v = new DataView(bytes.buffer);
    v.setBigInt64(L.BUF_SEQUENCE_NUMBER, 1n << 40n, true);
    const a = one(bytes);
    expect(a.r.engine.logfilePayload).not.toBeNull();
    const n = a.r.buffers.length;
    const b = await many(bytes, { cuts: [n >> 2, n >> 1, n - 1] });
    expect(b.report.reruns.trace).toBe(0); // every partition after the first starts from the header: the guesses hold
    expectSame(a, b, 'header last');
    // a bias override: the same
    expectSame(one(bytes, { bias: 37 }), await many(bytes, { cuts: [3, n - 2], bias: 37 }), 'bias override');
    // header in the middle: the header buffer's own logfile header event has a bad Size (its walk stops at
    // once), and a data buffer halfway is a copy of the header buffer, whose event is then the first logfile
    // header in decode order; the partitions after it guessed "no header" and are decoded again
    const m = n >> 1;
    expect(a.r.buffers.size[m]).toBe(a.r.buffers.size[0]);
    bytes.copyWithin(a.r.buffers.fileOffset[m]!, 0, a.r.buffers.size[0]!);
    v.setBigInt64(a.r.buffers.fileOffset[m]! + L.BUF_SEQUENCE_NUMBER, a.r.buffers.sequenceNumber[m]!, true);
    v.setUint16(L.WMI_BUFFER_HEADER_SIZE + L.TH_SIZE, 0xffff, true);
    const c0 = one(bytes);
    expect(c0.r.engine.logfilePayload).not.toBeNull();
    const c = await many(bytes, { cuts: [n >> 3, n >> 2, (3 * n) >> 2] });
    expect(c.report.reruns.trace).toBeGreaterThan(0);
    expectSame(c0, c, 'header in the middle');
  });

  test('a placeholder issue in a buffer that fills the engine log: the partition is decoded again for its log', async () => {
    // CPU 1's first compact batch of the second partition has 1500 FULL packets naming empty TidTable slots:
    // 1500 issues in one buffer, the first switch's time check among them
    const base = simulateSchedule({ seed: 3, cpus: 2, duration: 2_000_000, bufferSize: 0x4000, switchMode: 'compact', outOfOrder: false });
    const desc = base.description;
    const ts = desc.events.map((e) => e.timestamp).sort((x, y) => (x < y ? -1 : x > y ? 1 : 0));
    const mid = ts[ts.length >> 1]!;
    const packets = 1500;
    const payload = new Uint8Array(L.CCS_HEADER_SIZE + 8 * packets);
    const pv = new DataView(payload.buffer);
    pv.setBigInt64(L.CCS_FIRST_TIMESTAMP, mid, true);
    for (let i = 0; i < packets; i++) pv.setUint32(L.CCS_HEADER_SIZE + 8 * i, (1 << 2) | L.CCS_TYPE_FULL, true); // delta 1, index 0, tid 0
    const events = [...desc.events, { kind: 'raw' as const, cpu: 1, timestamp: mid + BigInt(packets), headerType: 'PERFINFO64' as const, hookId: L.HOOK_COMPCS, version: 2, payload }];
    const bytes = writeTrace({ ...desc, bufferSize: 0x4000, events }).bytes;
    const a = one(bytes);
    expect(a.r.engine.counters[L.D_COMPCS_BAD_TID_INDEX]).toBeGreaterThanOrEqual(packets);
    expect(a.r.engine.log.length).toBe(L.LOG_CAPACITY);
    const n = a.r.buffers.length;
    let saw = false;
    for (let cut = 1; cut < n; cut++) {
      const b = await many(bytes, { cuts: [cut] });
      saw ||= b.report.reruns.log > 0;
      expectSame(a, b, `cut at ${cut}`);
    }
    expect(saw).toBe(true);
  });

  test('partitions cut while the input is framed: the same output; a late buffer that sorts before them makes the decode start over', async () => {
    const guide = { first: 16 << 10, min: 8 << 10, max: 32 << 10, margin: 8 << 10, marginRecords: 4 };
    const bytes = schedule({ switchMode: 'mixed', seed: 51, duration: 6_000_000 }).slice();
    const a = one(bytes);
    for (const threads of [1, 2, 3]) {
      const b = await many(bytes, { guide, threads });
      expect(b.report.speculative).toBeGreaterThan(3);
      expect(b.report.restarted).toBe(false);
      expectSame(a, b, `guided, ${threads} decoders`);
    }
    // the last buffer sorts second: every cut was wrong
    const n = a.r.buffers.length;
    const v = new DataView(bytes.buffer);
    v.setBigInt64(a.r.buffers.fileOffset[n - 1]! + L.BUF_SEQUENCE_NUMBER, a.r.buffers.sequenceNumber[0]!, true);
    const c0 = one(bytes);
    const c = await many(bytes, { guide, threads: 2 });
    expect(c.report.restarted).toBe(true);
    expectSame(c0, c, 'restarted');
    const w = await many(bytes, { guide, threads: 2, host: workersOnly });
    expect(w.report.restarted).toBe(true);
    expectSame(c0, w, 'restarted, workers');
  });

  test('property: any simulated schedule, any partition boundaries', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.record({
          seed: fc.integer({ min: 1, max: 1_000_000 }),
          cpus: fc.integer({ min: 1, max: 5 }),
          switchMode: fc.constantFrom('compact', 'mixed', 'cswitch') as fc.Arbitrary<'compact' | 'mixed' | 'cswitch'>,
          bufferSize: fc.constantFrom(0x800, 0x1000, 0x2000),
          compress: fc.boolean(),
          pointerSize: fc.constantFrom(4, 8) as fc.Arbitrary<4 | 8>,
        }),
        fc.array(fc.integer({ min: 1, max: 200 }), { maxLength: 8 }),
        fc.integer({ min: 1, max: 4 }),
        async (o, cuts, threads) => {
          const bytes = writeTrace(simulateSchedule({ ...o, cpus: Math.max(o.cpus, o.switchMode === 'mixed' ? 2 : 1), duration: 1_000_000, spinlocks: 0.05, noise: 0.05 }).description).bytes;
          expectSame(one(bytes), await many(bytes, { cuts, threads }), JSON.stringify({ o, cuts }));
        },
      ),
      { numRuns: 40, seed: 42 },
    );
  });

  test('fuzzed inputs (corrupt, lost, truncated, reordered, spliced buffers; damaged compact batches and XPRESS streams)', async () => {
    const seeds = writerSeeds();
    const rng = new Rng(99);
    for (let i = 0; i < 150; i++) {
      const { bytes, seed, ops } = mutate(seeds, rng);
      let a: Decoded;
      try {
        a = one(bytes);
      } catch (e) {
        // not an ETL file at all: the same error
        expect(e).toBeInstanceOf(EtlError);
        await expect(many(bytes, { partitions: 3 })).rejects.toThrow((e as Error).message);
        continue;
      }
      const n = a.r.buffers.length + 1;
      const cuts = [rng.int(1, n), rng.int(1, n), rng.int(1, n)];
      expectSame(a, await many(bytes, { cuts, threads: rng.int(1, 3) }), `input ${i} (${seed}: ${ops.join(', ')}) cuts ${cuts}`);
    }
  });

  test.skipIf(!corpus)('the real corpus, 1 to 8 partitions', async () => {
    for (const f of corpusFiles()) {
      const bytes = new Uint8Array(readFileSync(corpusPath(f)));
      const a = one(bytes);
      for (let p = 1; p <= Math.min(8, a.r.buffers.length); p++) expectSame(a, await many(bytes, { partitions: p }), `${f}, ${p} partitions`);
    }
  });
});

describe('consumers of the rows', () => {
  test('the streaming cpuUsage derivation: the same rows when no event arrives behind its reorder window', async () => {
    const bytes = writeTrace(simulateSchedule({ seed: 71, cpus: 4, duration: 20_000_000, bufferSize: 0x1000, spinlocks: 0.02 }).description).bytes;
    const derive = async (options: DecodeOptions) => {
      const chunks: ColumnChunk[] = [];
      const deriver = new CpuUsageDeriver((t) => chunks.push({ length: t.length, columns: t.columns.map((c) => (Array.isArray(c) ? [...c] : c.slice())) as TypedColumn[] }));
      await decodeStream(bytes, { ...options, onRows: (t) => deriver.add(t.cswitch, t.readythread, t.threadEvents) });
      const stats = deriver.finish();
      return { stats, table: concatChunks('cpuUsage', chunks) };
    };
    const a = await derive({ threads: 1 });
    expect(a.stats.lateEvents).toBe(0);
    expect(a.stats.rows).toBeGreaterThan(5_000);
    for (const partitions of [2, 5, 9]) {
      const b = await derive({ threads: 3, parallel: { inThread: true, minBytes: 0, partitions } });
      expect(b.stats.lateEvents).toBe(0);
      expect(b.stats.rows).toBe(a.stats.rows);
      expect(b.table.columns, `${partitions} partitions`).toEqual(a.table.columns);
    }
  });
});

describe('partitioning', () => {
  test('equal partitions: every buffer in one, none empty, sizes about equal', () => {
    const sizes = Uint32Array.from({ length: 100 }, (_, i) => 0x1000 * (1 + (i % 3)));
    const order = Uint32Array.from({ length: 100 }, (_, i) => 99 - i);
    for (let p = 1; p <= 120; p++) {
      const b = partitionBounds(sizes, order, p);
      expect(b[0]).toBe(0);
      expect(b[b.length - 1]).toBe(100);
      expect(b.length - 1).toBe(Math.min(p, 100));
      for (let k = 1; k < b.length; k++) expect(b[k]!).toBeGreaterThan(b[k - 1]!);
    }
    const b = partitionBounds(sizes, order, 4);
    const bytes = b.slice(1).map((e, k) => Array.from(order.subarray(b[k]!, e), (r) => sizes[r]!).reduce((x, y) => x + y, 0));
    // a cut overshoots its share by less than a buffer: partitions differ by less than two of the largest
    for (const x of bytes) expect(Math.abs(x - bytes[0]!)).toBeLessThan(2 * 3 * 0x1000);
  });

  test('guided partitions: a small first one, then shares of what remains, getting smaller', () => {
    const n = 16384; // 1 GiB of 64 KiB buffers
    const sizes = new Uint32Array(n).fill(0x10000);
    const order = Uint32Array.from({ length: n }, (_, i) => i);
    const b = guidedBounds(sizes, order, 2);
    const mib = b.slice(1).map((e, k) => ((e - b[k]!) * 0x10000) / 2 ** 20);
    expect(mib[0]).toBe(4);
    expect(Math.max(...mib)).toBe(64);
    expect(mib.slice(1, 4)).toEqual([64, 64, 64]);
    expect(mib[mib.length - 1]!).toBeLessThanOrEqual(8);
    for (let k = 2; k < mib.length - 1; k++) expect(mib[k]!).toBeLessThanOrEqual(mib[k - 1]!);
    expect(mib.reduce((x, y) => x + y, 0)).toBe(1024);
  });
});

describe('workers', () => {
  test('node workers: the same output, rows in order, workers started and terminated', async () => {
    const bytes = schedule({ switchMode: 'mixed', seed: 31, duration: 6_000_000 });
    const a = one(bytes);
    const b = await many(bytes, { host: workersOnly, threads: 3, partitions: 9 });
    expect(b.report.workers).toBe(3);
    expect(b.report.workersReady).toBeGreaterThan(0);
    expectSame(a, b, 'workers');
    // workers and this thread
    expectSame(a, await many(bytes, { host: nodeHost, threads: 2, partitions: 7 }), 'workers and this thread');
    // a bounded budget: decoders wait for the consumer, and the rows are the same
    const c = await many(bytes, { host: workersOnly, threads: 3, partitions: 9, budget: 1 });
    expectSame(a, c, 'budget 1 byte');
    // only the lifetimes' tables shipped (summary): counts and state the same
    const d = await many(bytes, { host: workersOnly, threads: 2, partitions: 5, ship: ['threadEvents', 'processEvents'] });
    expectSame(a, d, 'summary', ['threadEvents', 'processEvents']);
    expect(d.tables.cswitch.length).toBe(0);
  });

  test('entry points: decode, decodeStream and a file, with threads and small inputs made to run in parallel', async () => {
    const bytes = generateSampleTrace().bytes;
    const opts: DecodeOptions = { threads: 2, parallel: { minBytes: 0, partitions: 4 } };
    const s = decodeSync(bytes);
    const p = await decode(bytes, opts);
    expect(p.summary).toEqual(s.summary);
    for (const t of [...DECODED_TABLE_NAMES, 'threads', 'processes'] as const) expect(p[t].columns, t).toEqual(s[t].columns);
    expect(cpuUsage(p).columns).toEqual(cpuUsage(s).columns);
    let rows = 0;
    const st = await decodeStream(bytes, { ...opts, onRows: (t) => void (rows += t.cswitch.length) });
    expect(rows).toBe(s.cswitch.length);
    expect(st.summary).toEqual(s.summary);
    const summaryOnly = await decodeStream(bytes, opts);
    expect(summaryOnly.summary).toEqual(s.summary);
    expect(summaryOnly.threads.columns).toEqual(s.threads.columns);
  });

  test('a read error in a worker or here is one clear error, and nothing is left running', async () => {
    const bytes = schedule({ switchMode: 'compact', seed: 41 });
    const a = one(bytes);
    const failAt = a.r.buffers.fileOffset[a.r.buffers.length - 3]!;
    const src = memorySource(bytes);
    const bad: AsyncSource = {
      size: src.size,
      read: src.read,
      readInto: async (p, t) => {
        if (p <= failAt && failAt < p + t.length && t.length > 72) throw new EtlError('READ_FAILED', `disk on fire at ${p}`, p);
        return src.readInto(p, t);
      },
    };
    const unhandled: unknown[] = [];
    const onUnhandled = (e: unknown) => unhandled.push(e);
    process.on('unhandledRejection', onUnhandled);
    try {
      for (const host of [null, workersOnly, nodeHost]) {
        await expect(many(bytes, { host, threads: 3, partitions: 6 }, bad)).rejects.toThrow(/disk on fire/);
      }
      await new Promise((r) => setTimeout(r, 50));
      expect(unhandled).toEqual([]);
    } finally {
      process.off('unhandledRejection', onUnhandled);
    }
  });

  test('decodeInParallel starts the workers before it loads the coordinator, which takes them (none spawned twice); every one ends with the decode, failed or not', async () => {
    const bytes = schedule({ switchMode: 'compact', seed: 47 });
    const events: string[] = [];
    let live = 0;
    const counting: ParallelHost = {
      ...workersOnly,
      mainThreadDecodes: true,
      spawn() {
        const port = nodeHost.spawn();
        const n = events.filter((e) => e === 'spawn').length;
        events.push('spawn');
        live++;
        let ended = false;
        return {
          post: (m, transfer) => {
            if (m.t === 'init') events.push(`init ${n}`);
            port.post(m, transfer);
          },
          onMessage: (h) => port.onMessage(h),
          onFailure: (h) => port.onFailure(h),
          terminate: () => {
            if (!ended) live--;
            ended = true;
            port.terminate();
          },
        };
      },
    };
    const previous = parallelHost();
    registerParallelHost(counting);
    try {
      const rows = perTable(() => 0);
      const out = await decodeInParallel(memorySource(bytes), { threads: 3, parallel: { partitions: 6 } }, 3, 'all', (c) => {
        for (const t of DECODED_TABLE_NAMES) rows[t] += c[t].length;
      });
      expect(events).toEqual(['spawn', 'spawn', 'init 0', 'init 1']);
      expect(live).toBe(0);
      const expected = one(bytes).r.rows;
      expect(rows).toEqual(expected);
      expect(out.rows).toEqual(expected);
      // a decode that fails: the workers end too
      events.length = 0;
      const broken: AsyncSource = { ...memorySource(bytes), readInto: async () => Promise.reject(new Error('disk on fire')), readMany: async () => Promise.reject(new Error('disk on fire')) };
      await expect(decodeInParallel(broken, { threads: 2 }, 2, 'all', () => {})).rejects.toThrow(/disk on fire/);
      expect(events[0]).toBe('spawn');
      expect(live).toBe(0);
    } finally {
      registerParallelHost(previous);
    }
  });

  test('no workers at all (spawning throws): this thread decodes, the same output', async () => {
    const bytes = schedule({ switchMode: 'compact', seed: 45 });
    const none: ParallelHost = {
      ...workersOnly,
      spawn() {
        throw new Error('workers are not allowed here');
      },
    };
    const b = await many(bytes, { host: none, threads: 2, partitions: 4 });
    expect(b.report.workers).toBe(0);
    expect(b.report.workersReady).toBe(0);
    expectSame(one(bytes), b, 'no workers');
  });

  test('a worker that dies is one clear error', async () => {
    const bytes = schedule({ switchMode: 'compact', seed: 43 });
    // the worker "crashes" when it gets its first job: its port reports the failure as the node host does
    const crashing: ParallelHost = {
      ...workersOnly,
      spawn() {
        const port = nodeHost.spawn();
        let fail: ((e: Error) => void) | null = null;
        return {
          post: (m, transfer) => {
            if (m.t === 'job') setTimeout(() => fail?.(new Error('a decoding worker exited unexpectedly (exit code 1)')), 1);
            else port.post(m, transfer);
          },
          onMessage: (h) => port.onMessage(h),
          onFailure: (h) => (fail = h),
          terminate: () => port.terminate(),
        };
      },
    };
    await expect(many(bytes, { host: crashing, threads: 2, partitions: 4 })).rejects.toThrow(/exited unexpectedly/);
  });

  test('reads that give other tasks a turn start at once: a read ahead is in flight while this thread goes on (a resync scan over 4 GiB of zeros took 1.9x as long)', async () => {
    const started: number[] = [];
    const inner: AsyncSource = {
      size: 1 << 20,
      read: async (p) => (started.push(p), new Uint8Array(1)),
      readInto: async (p) => (started.push(p), 1),
      readMany: async (ps) => (started.push(...ps), ps.map(() => new Uint8Array(1))),
    };
    const s = yielding(inner);
    for (const [k, call] of [() => s.readInto(100, new Uint8Array(1)), () => s.read(200, 1), () => s.readMany!([300], 1)].entries()) {
      const until = performance.now() + 3; // past the slice: this read also gives other tasks a turn
      while (performance.now() < until);
      const pending = call();
      expect(started.length, `read ${k} started before anything was awaited`).toBe(k + 1);
      await pending;
    }
    expect(started).toEqual([100, 200, 300]);
  });

  test('this thread decodes while workers start: their messages are handled between its reads, so a worker that becomes ready gets partitions', async () => {
    // a worker in this thread (worker.ts over an in-process channel whose messages arrive as macrotasks, as
    // a MessagePort's do): it can only become ready when this thread lets other tasks run
    const inProcess: ParallelHost = {
      mainThreadDecodes: true,
      defaultThreads: () => 2,
      filePathOf: () => null,
      spawn() {
        let toCoordinator: (m: FromWorker) => void = () => {};
        let toWorker: (m: ToWorker) => void = () => {};
        let closed = false;
        const later = (f: () => void) => setImmediate(() => !closed && f());
        serveWorker({ post: (m) => later(() => toCoordinator(m)), listen: (h) => (toWorker = h) });
        return {
          post: (m) => later(() => toWorker(m)),
          onMessage: (h) => (toCoordinator = h),
          onFailure: () => {},
          terminate: () => (closed = true),
        };
      },
    };
    const bytes = schedule({ seed: 81, duration: 12_000_000 });
    const a = one(bytes);
    const log: string[] = [];
    const b = await many(bytes, { host: inProcess, threads: 2, partitions: 24, windowBytes: 0x10000, log: (e) => log.push(e) });
    expectSame(a, b, 'a worker in this thread');
    expect(b.report.workersReady).toBe(1);
    expect(log.filter((e) => e.includes('to worker 0')).length, log.join('\n')).toBeGreaterThan(0);
  });

  test('Web Workers (worker-web.js under a stand-in for the browser Worker): the same output; workers that cannot load leave the work to this thread', async () => {
    // the browser's Worker, as far as web-host.ts and worker-web.ts use it, over worker_threads
    const bootstrap = `
      const { parentPort, workerData } = require('node:worker_threads');
      globalThis.postMessage = (m, t) => parentPort.postMessage(m, t);
      globalThis.addEventListener = (type, fn) => { if (type === 'message') parentPort.on('message', (data) => fn({ data })); };
      import(workerData.url).catch((e) => { throw e; });`;
    const dist = new URL('../dist/parallel/worker-web.js', import.meta.url).href;
    class StandIn {
      private readonly w: NodeWorker;
      constructor(url: URL, options: { type: string }) {
        expect(options.type).toBe('module');
        expect(url.pathname.endsWith('/parallel/worker-web.js')).toBe(true);
        this.w = new NodeWorker(bootstrap, { eval: true, workerData: { url: url.pathname.includes('/src/') ? dist : url.href } });
      }
      postMessage(m: unknown, transfer?: Transferable[]) {
        this.w.postMessage(m, transfer as never);
      }
      addEventListener(type: string, fn: (e: { data?: unknown; message?: string }) => void) {
        if (type === 'message') this.w.on('message', (data) => fn({ data }));
        if (type === 'error') this.w.on('error', (e: Error) => fn({ message: e.message }));
      }
      terminate() {
        void this.w.terminate();
      }
    }
    class CannotLoad extends StandIn {
      constructor(_url: URL, options: { type: string }) {
        super(new URL('file:///nowhere/parallel/worker-web.js'), options);
      }
    }
    const g = globalThis as { Worker?: unknown };
    const bytes = schedule({ switchMode: 'mixed', seed: 61 });
    const a = one(bytes);
    try {
      g.Worker = StandIn;
      const b = await many(bytes, { host: webHost, threads: 2, partitions: 5 });
      expect(b.report.workersReady).toBeGreaterThan(0);
      expectSame(a, b, 'web workers');
      g.Worker = CannotLoad;
      const c = await many(bytes, { host: webHost, threads: 2, partitions: 5 });
      expect(c.report.workersReady).toBe(0);
      expectSame(a, c, 'no worker could load');
    } finally {
      delete g.Worker;
    }
  });
});

describe('command line', () => {
  const BIN = fileURLToPath(new URL('../bin/etw-decode.js', import.meta.url));
  const run = (...args: string[]) => spawnSync(process.execPath, [BIN, ...args], { encoding: 'utf8', maxBuffer: 1 << 30 });

  test('--threads: summary, dump and spinlocks print the same with 1 and 2 threads on a 40 MiB trace, cpu the same rows; bad values are usage errors', { timeout: 300_000 }, () => {
    const dir = mkdtempSync(join(tmpdir(), 'etw-parallel-'));
    try {
      const file = join(dir, 'mixed.etl');
      const fd = openSync(file, 'w');
      for (const chunk of generateTraceChunks({ seed: 77, targetBytes: 40 << 20, cpus: 4, mix: { compact: 4, cswitch: 2, spinlock: 1, noise: 1 } })) writeSync(fd, chunk);
      closeSync(fd);
      for (const args of [['summary', '--json'], ['dump', '--table', 'cswitch'], ['dump', '--table', 'spinlock', '--format', 'jsonl'], ['spinlocks', '--json']]) {
        const one = run(args[0]!, file, ...args.slice(1), '--threads', '1');
        const two = run(args[0]!, file, ...args.slice(1), '--threads', '2');
        expect(one.status, one.stderr).toBe(0);
        expect(two.status, two.stderr).toBe(0);
        expect(two.stdout.length).toBeGreaterThan(100);
        expect(two.stdout === one.stdout, `${args.join(' ')}: the same output`).toBe(true);
        expect(two.stderr).toBe(one.stderr);
      }
      // cpu: the same rows; chunk boundaries differ, and with them what arrives behind the cpuUsage reorder window
      // in this random trace (its lateEvents, and the times of those rows)
      const cpu = [1, 2].map((t) => JSON.parse(run('cpu', file, '--json', '--threads', String(t)).stdout) as { cpuUsage: { rows: number; lateEvents: number } });
      expect(cpu[1]!.cpuUsage.rows).toBe(cpu[0]!.cpuUsage.rows);
      expect(cpu[0]!.cpuUsage.lateEvents).toBeGreaterThan(0);
      for (const bad of ['0', '-1', '1.5', 'x', '2000']) {
        const r = run('summary', file, '--threads', bad);
        expect(r.status).toBe(2);
        expect(r.stderr).toMatch(/^etw-decode: option '--threads <n>' argument '.*' is invalid\. expected a whole number of threads from 1 to 1024/);
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
