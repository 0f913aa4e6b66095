// Values at the edges of their types (issue 28, item 8): compact switch times that would run past INT64_MAX
// are counted and dropped, never wrapped (both engines); FILETIMEs outside years 0000–9999 keep every digit
// in ISO text; a converted time outside the int64 range is null in every output (text as Arrow/Parquet);
// a file that shrinks under a decode is named with the size it has now; XPRESS error details are signed.
import { afterAll, describe, expect, test } from 'vitest';
import fc from 'fast-check';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { tableFromIPC } from 'apache-arrow';
import { decodeSync, streamFile, tableToArrowIpc, toCsv, toJsonl, type DecodeResult } from '../src/node.js';
import { fileTimeToIso } from '../src/result/trace-row.js';
import * as L from '../src/generated/layout.js';
import { generateMixedTrace } from '../src/writer/index.js';
import { ByteWriter, compactPayload, HOOK, HT, kernelEvent, minimalTrace, packetBytes, type PacketSpec } from './helpers/bytes.js';

const BIN = fileURLToPath(new URL('../bin/etw-decode.js', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'etw-edges-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const I64_MAX = 2n ** 63n - 1n;
const ENGINES = ['wasm', 'reference'] as const;

// ---- compact switch times past INT64_MAX

interface Batch {
  first: bigint;
  tid: number;
  packets: Partial<PacketSpec>[];
}

/** One CPU, one buffer of batches (each with one thread in TidTable[0]); the event time is INT64_MAX. */
function compactTrace(batches: Batch[]): Uint8Array {
  const events = batches.map((b) =>
    kernelEvent(HT.PERFINFO64, { version: 2, hookId: HOOK.COMPCS, timestamp: I64_MAX }, compactPayload(b.first, [b.tid], [8], packetBytes(b.packets))),
  );
  return minimalTrace({ numberOfProcessors: 1, bufferSize: 0x4000, buffers: [{ cpu: 0, sequenceNumber: 1, events }] }).bytes;
}

/** The rows the batches describe — [time, oldThreadId, newThreadId] — and the packets whose time is past INT64_MAX. */
function expected(batches: Batch[]): { rows: [bigint, number, number | null][]; dropped: number; batchesOver: number } {
  const rows: [bigint, number, number | null][] = [];
  let held: [bigint, number] | null = null;
  let dropped = 0;
  let batchesOver = 0;
  for (const b of batches) {
    let t = b.first;
    let over = false;
    for (const p of b.packets) {
      t += BigInt(p.delta ?? 0);
      const old = p.type! >= 2 ? b.tid : 0;
      if (held) rows.push([held[0], held[1], old]);
      held = null;
      if (t > I64_MAX) {
        if (!over) batchesOver++;
        over = true;
        dropped++;
      } else held = [t, old];
    }
  }
  if (held) rows.push([held[0], held[1], null]);
  return { rows, dropped, batchesOver };
}

const rowsOf = (r: DecodeResult) => r.cswitch.toArray().map((row) => [row.timestamp, row.oldThreadId, row.newThreadId] as [bigint, number, number | null]);

const packetArb: fc.Arbitrary<Partial<PacketSpec>> = fc.oneof(
  fc.record({ type: fc.constant(0), delta: fc.integer({ min: 0, max: 2 ** 14 - 1 }) }),
  fc.record({ type: fc.constant(1), delta: fc.integer({ min: 0, max: 2 ** 30 - 1 }) }),
  fc.record({ type: fc.constant(2), index: fc.constant(0), inc: fc.constant(0), stateWr: fc.constant(5), delta: fc.integer({ min: 0, max: 2 ** 17 - 1 }) }),
  fc.record({ type: fc.constant(3), index: fc.constant(0), stateWr: fc.constant(5), priority: fc.constant(9), wait: fc.constant(1), delta: fc.integer({ min: 0, max: 2 ** 30 - 1 }) }),
);

/** batches in time order whose FirstTimeStamps approach INT64_MAX: some fit, some run past it part way */
const batchesArb: fc.Arbitrary<Batch[]> = fc
  .array(fc.tuple(fc.bigInt({ min: 0n, max: 2n ** 32n }), fc.integer({ min: 1, max: 1000 }), fc.array(packetArb, { minLength: 1, maxLength: 12 })), { minLength: 1, maxLength: 6 })
  .map((xs) => xs.map(([below, tid, packets]) => ({ first: I64_MAX - below, tid, packets })).sort((a, b) => (a.first < b.first ? -1 : a.first > b.first ? 1 : 0)));

describe('compact FirstTimeStamp near INT64_MAX: a switch past it is counted and dropped, never wrapped', () => {
  test.each(ENGINES)('%s engine: random batches', (engine) => {
    let overflowSeen = 0;
    fc.assert(
      fc.property(batchesArb, (batches) => {
        const want = expected(batches);
        const r = decodeSync(compactTrace(batches), { engine });
        const d = r.summary.diagnostics;
        expect(rowsOf(r)).toEqual(want.rows);
        expect(rowsOf(r).every(([t]) => t >= I64_MAX - 2n ** 32n)).toBe(true); // no wrapped (negative) time
        expect(d['compactTimeOverflow']).toBe(want.dropped);
        // a batch that runs past INT64_MAX runs past its event time too
        expect(d['compactTimeMismatch']).toBeGreaterThanOrEqual(want.batchesOver);
        // the packet counters count the packets that became rows (rows by source = packet counters)
        expect(d['compactPacketsIdleShort']! + d['compactPacketsIdle']! + d['compactPacketsLite']! + d['compactPacketsFull']!).toBe(r.cswitch.length);
        expect(r.summary.issues.filter((i) => i.counter === 'compactTimeOverflow').length).toBe(want.batchesOver);
        if (want.dropped) overflowSeen++;
      }),
      { numRuns: 300 },
    );
    expect(overflowSeen).toBeGreaterThan(30);
  });

  test('both engines agree, every counter and issue', () => {
    fc.assert(
      fc.property(batchesArb, (batches) => {
        const bytes = compactTrace(batches);
        const [w, ref] = ENGINES.map((engine) => decodeSync(bytes, { engine }));
        expect(rowsOf(w!)).toEqual(rowsOf(ref!));
        expect(w!.summary.diagnostics).toEqual(ref!.summary.diagnostics);
        expect(w!.summary.issues).toEqual(ref!.summary.issues);
      }),
      { numRuns: 200 },
    );
  });

  test('a FirstTimeStamp of INT64_MAX: the data loss is said', () => {
    const r = decodeSync(compactTrace([{ first: I64_MAX, tid: 7, packets: [{ type: 2, index: 0, stateWr: 5, delta: 0 }, { type: 0, delta: 1 }, { type: 0, delta: 2 }] }]));
    expect(rowsOf(r)).toEqual([[I64_MAX, 7, 0]]);
    expect(r.summary.diagnostics['compactTimeOverflow']).toBe(2);
    expect(r.summary.issues.find((i) => i.counter === 'compactTimeOverflow')).toMatchObject({ detail: L.CCS_HEADER_SIZE + 4 });
  });
});

// ---- FILETIME as ISO 8601 outside years 0000–9999

describe('fileTimeToIso keeps every digit for any FILETIME', () => {
  const EPOCH = 116444736000000000n;
  /** the FILETIME an ISO text names: Date.parse for the seconds (extended years included), the 7 digits after them */
  const back = (iso: string): bigint => {
    const m = /^(.*T\d\d:\d\d:\d\d)\.(\d{7})Z$/.exec(iso);
    expect(m, iso).not.toBeNull();
    return (BigInt(Date.parse(m![1] + 'Z')) / 1000n) * 10_000_000n + BigInt(m![2]!) + EPOCH;
  };

  test('INT64_MAX (year 30828), INT64_MIN, and the edges of years 0000 and 9999', () => {
    expect(fileTimeToIso(I64_MAX)).toBe('+030828-09-14T02:48:05.4775807Z');
    for (const ft of [I64_MAX, -(2n ** 63n), 0n, -1n, 2650467743999999999n, 2650467744000000000n, -504911232000000001n, -504911232000000000n]) {
      expect([ft, back(fileTimeToIso(ft))]).toEqual([ft, ft]);
    }
  });

  test('any int64', () => {
    fc.assert(
      fc.property(fc.bigInt({ min: -(2n ** 63n), max: I64_MAX }), (ft) => {
        expect(back(fileTimeToIso(ft))).toBe(ft);
      }),
      { numRuns: 2000 },
    );
  });

  test('traces.anchorUtc of a trace whose StartTime is INT64_MAX', () => {
    const t = minimalTrace({ startTime: I64_MAX, buffers: [] });
    const r = decodeSync(t.bytes);
    expect(r.traces.get(0).anchorUtc).toBe('+030828-09-14T02:48:05.4775807Z');
  });
});

// ---- converted times outside the int64 range: null everywhere

describe('a converted time outside the int64 range is null in text as in Arrow', () => {
  // a QPC clock of 1 tick per second: ticks far from the anchor are nanoseconds past 64 bits
  const spin = (ts: bigint) => kernelEvent(HT.PERFINFO64, { version: 2, hookId: HOOK.SPINLOCK, timestamp: ts }, new ByteWriter().fill(0x38, 0).done());
  const stamps = [1_000_001n, 1_000_000n + 9_223_372_036n, 1_000_000n + 9_223_372_037n, I64_MAX, -(2n ** 62n)];
  const bytes = minimalTrace({ perfFreq: 1n, buffers: [{ cpu: 0, sequenceNumber: 1, events: stamps.map(spin) }] }).bytes;
  const path = join(dir, 'far.etl');
  writeFileSync(path, bytes);

  test('dump --time ns (CSV, JSON lines), toCsv/toJsonl and Arrow agree', () => {
    const r = decodeSync(bytes);
    expect(r.spinlock.length).toBe(stamps.length);
    const arrow = tableFromIPC(tableToArrowIpc(r.spinlock, { clock: r.clock! })).getChild('timeNs')!;
    const want = Array.from({ length: stamps.length }, (_, i) => arrow.get(i) as bigint | null);
    expect(want).toEqual([1_000_000_000n, 9_223_372_036_000_000_000n, null, null, null]);
    const csv = spawnSync(process.execPath, [BIN, 'dump', path, '--table', 'spinlock', '--time', 'ns'], { encoding: 'utf8' });
    expect([csv.status, csv.stderr]).toEqual([0, '']);
    const lines = csv.stdout.trimEnd().split('\n');
    const col = lines[0]!.split(',').indexOf('timeNs');
    expect(lines.slice(1).map((l) => l.split(',')[col])).toEqual(want.map((v) => (v === null ? '' : v.toString())));
    const jsonl = spawnSync(process.execPath, [BIN, 'dump', path, '--table', 'spinlock', '--time', 'ns', '--format', 'jsonl'], { encoding: 'utf8' });
    const rows = jsonl.stdout.trimEnd().split('\n').map((l) => JSON.parse(l) as { timeNs: string | null });
    expect(rows.map((o) => o.timeNs)).toEqual(want.map((v) => (v === null ? null : v.toString())));
    // the library's text writers: the same rule
    const csvLib = new TextDecoder().decode(toCsv(r.spinlock, { time: 'ns', clock: r.clock })).trimEnd().split('\n');
    expect(csvLib).toEqual(lines);
    const jsonLib = new TextDecoder().decode(toJsonl(r.spinlock, { time: 'ns', clock: r.clock }));
    expect(jsonLib).toBe(jsonl.stdout);
  });

  test('--time filetime: a FILETIME past 64 bits is null too', () => {
    const r = spawnSync(process.execPath, [BIN, 'dump', path, '--table', 'spinlock', '--time', 'filetime', '--format', 'jsonl'], { encoding: 'utf8' });
    const rows = r.stdout.trimEnd().split('\n').map((l) => JSON.parse(l) as { fileTime: string | null });
    const clock = decodeSync(bytes).clock!;
    expect(rows.map((o) => o.fileTime)).toEqual(
      stamps.map((t) => clock.toFileTime(t)).map((v) => (v < -(2n ** 63n) || v > I64_MAX ? null : v.toString())),
    );
    expect(rows.some((o) => o.fileTime === null)).toBe(true);
  });
});

// ---- a file that shrinks under a decode

describe('a file that shrinks under a decode: the error names the size it has now', () => {
  test.each([1, 2])('%i thread(s)', async (threads) => {
    const bytes = generateMixedTrace({ seed: 21, targetBytes: 6_000_000, cpus: 2, bufferSize: 0x10000 }).bytes;
    const path = join(dir, `shrink-${threads}.etl`);
    writeFileSync(path, bytes);
    const cut = 1_000_000;
    let cutDone = false;
    const run = streamFile(path, {
      threads,
      parallel: { minBytes: 0, aheadBytes: 1 }, // decoders wait for the consumer: the cut comes before they read on
      windowBytes: 1 << 18,
      rows: 'borrow',
      onRows: () => {
        if (cutDone) return;
        cutDone = true;
        truncateSync(path, cut);
      },
    });
    await expect(run).rejects.toThrow(`${path} is ${cut} bytes now, ${bytes.length} when the decode started (did the file change while it was read?)`);
  });
});

// ---- XPRESS error details

describe('an XPRESS error detail is its signed code', () => {
  const spin = kernelEvent(HT.PERFINFO64, { version: 2, hookId: HOOK.SPINLOCK, timestamp: 1_000_010n }, new ByteWriter().fill(0x38, 0).done());
  test.each([
    ['input truncated', new Uint8Array([0, 0, 0, 0]), L.XPRESS_E_INPUT_TRUNCATED, 'XPRESS input ended before the output was complete'],
    ['offset before the output', new Uint8Array([0xff, 0xff, 0xff, 0xff, 0, 0]), L.XPRESS_E_BAD_OFFSET, 'XPRESS match offset points before the start of the output'],
  ])('%s', (_, stream, code, message) => {
    const bytes = minimalTrace({ buffers: [{ cpu: 0, sequenceNumber: 1, events: [spin], compressor: () => stream }] }).bytes;
    const issue = decodeSync(bytes).summary.issues.find((i) => i.counter === 'buffersCompressedUndecoded');
    expect(code).toBeLessThan(0);
    expect(issue).toMatchObject({ detail: code, message });
    const path = join(dir, `xpress${code}.etl`);
    writeFileSync(path, bytes);
    const r = spawnSync(process.execPath, [BIN, 'summary', path, '--json'], { encoding: 'utf8' });
    expect(JSON.parse(r.stdout).issues).toContainEqual(expect.objectContaining({ counter: 'buffersCompressedUndecoded', detail: code }));
  });
});
