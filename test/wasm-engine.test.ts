// The WebAssembly engine (assembly/ via src/engine/wasm/engine.ts) against the pure-TS reference decoder,
// engine to engine (no driver): identical drained rows, counters, issue log, kind tallies, logfile
// header copy, header extension and bias — on the real corpus, with tiny row capacities (NEED_DRAIN /
// resume in the middle of buffers and batches), with several buffers per input window, and on
// synthetic buffers (format-spec A-E) plus random mutations and truncations of those and of real
// buffers. A wasm trap would throw and fail the test.
import { describe, expect, test } from 'vitest';
import fc from 'fast-check';
import * as L from '../src/generated/layout.js';
import * as R from '../src/generated/registry.js';
import type { Engine, EngineState } from '../src/engine/engine.js';
import { ReferenceEngine } from '../src/engine/reference/walk.js';
import { StringHeapReader, WasmEngine } from '../src/engine/wasm/engine.js';
import { generateRealisticTrace } from '../src/writer/realistic.js';
import { decodeBase64, loadWasmModule, loadWasmModuleSync } from '../src/engine/wasm/instance.js';
import { WASM_BASE64 } from '../src/generated/wasm-binary.js';
import { concatChunks, DECODED_TABLE_NAMES, perTable, TABLE_COLUMNS, type Chunks, type ColumnChunk, type TableName, type TypedColumn } from '../src/tables/schema.js';
import { xpressCompress } from '../src/writer/xpress-encode.js';
import { corpusFiles, corpusTestsEnabled, readCorpus } from './helpers/corpus.js';
import {
  BUFFER_FLAG,
  ByteWriter,
  HOOK,
  HT,
  buildBuffer as buildBufferBytes,
  compactPayload,
  eventHeaderEvent,
  fullEvent,
  instanceEvent,
  kernelEvent as kernelEventBytes,
  logfileHeaderPayload,
  messageEvent,
  packetBytes,
  type PacketSpec,
} from './helpers/bytes.js';
import { splitBuffers } from './helpers/reader.js';

const wasmModule = loadWasmModuleSync();

// ---------------------------------------------------------------------------------------------
// Feeding an engine

interface Buf {
  bytes: Uint8Array;
  fileOffset: number;
}

interface Outcome {
  tables: Chunks;
  state: EngineState;
  drains: number;
}

/** Buffers of an ETL file: start at 0, next at start + BufferSize (the shared independent splitter). */
function splitFile(file: Uint8Array): Buf[] {
  return splitBuffers(file).buffers.map((b) => ({ bytes: b.raw, fileOffset: b.fileOffset }));
}

class Collector {
  chunks = perTable((): ColumnChunk[] => []);
  drains = 0;
  constructor(readonly engine: Engine) {}
  drain(): void {
    const d = this.engine.drain();
    for (const t of DECODED_TABLE_NAMES) this.chunks[t].push(d[t]);
    this.drains++;
  }
  decode(offset: number, length: number, fileOffset: number): void {
    let status = this.engine.decodeBuffer(offset, length, fileOffset, false);
    while (status === L.STATUS_NEED_DRAIN) {
      this.drain();
      status = this.engine.resume();
    }
    expect(status).toBe(L.STATUS_OK);
  }
  end(): Outcome {
    let status = this.engine.finish();
    while (status === L.STATUS_NEED_DRAIN) {
      this.drain();
      status = this.engine.finish();
    }
    this.drain();
    return {
      tables: perTable((t) => concatChunks(t, this.chunks[t])),
      state: this.engine.state(),
      drains: this.drains - 1,
    };
  }
}

/** One buffer per window at offset 0; the window bytes after the buffer are junk (must not matter). */
function runBuffers(engine: Engine, buffers: readonly Buf[], bias?: number): Outcome {
  if (bias !== undefined) engine.setBiasOverride(bias);
  const c = new Collector(engine);
  for (const b of buffers) {
    const win = engine.reserveInput(b.bytes.length);
    win.set(b.bytes);
    win.fill(0x5a, b.bytes.length, Math.min(win.length, b.bytes.length + 64));
    c.decode(0, b.bytes.length, b.fileOffset);
  }
  return c.end();
}

/** Like the driver: consecutive buffers share a window of `windowBytes` and are decoded in place. */
function runWindowed(engine: Engine, file: Uint8Array, windowBytes: number): Outcome {
  const c = new Collector(engine);
  const buffers = splitFile(file);
  let i = 0;
  while (i < buffers.length) {
    const winStart = buffers[i]!.fileOffset;
    let j = i + 1;
    while (j < buffers.length && buffers[j]!.fileOffset + buffers[j]!.bytes.length - winStart <= windowBytes) j++;
    const winEnd = buffers[j - 1]!.fileOffset + buffers[j - 1]!.bytes.length;
    const win = engine.reserveInput(Math.max(windowBytes, winEnd - winStart));
    win.set(file.subarray(winStart, winEnd));
    for (let k = i; k < j; k++) c.decode(buffers[k]!.fileOffset - winStart, buffers[k]!.bytes.length, buffers[k]!.fileOffset);
    i = j;
  }
  return c.end();
}

// ---------------------------------------------------------------------------------------------
// Comparing outcomes

function expectSameChunk(table: TableName, w: ColumnChunk, r: ColumnChunk): void {
  expect(w.length, `${table} rows`).toBe(r.length);
  TABLE_COLUMNS[table].forEach((spec, i) => {
    if (spec.type === 'str') {
      expect(w.columns[i], `${table}.${spec.name}`).toEqual(r.columns[i]);
      return;
    }
    const a = w.columns[i] as Exclude<TypedColumn, string[]>;
    const b = r.columns[i] as Exclude<TypedColumn, string[]>;
    const ab = new Uint8Array(a.buffer, a.byteOffset, a.byteLength);
    const bb = new Uint8Array(b.buffer, b.byteOffset, b.byteLength);
    if (ab.length === bb.length && ab.every((x, k) => x === bb[k])) return;
    let k = 0;
    while (k < Math.min(a.length, b.length) && a[k] === b[k]) k++;
    expect.fail(`${table}.${spec.name} row ${k} of ${r.length}: wasm ${a[k]}, reference ${b[k]}`);
  });
}

function expectSame(w: Outcome, r: Outcome): void {
  for (const t of DECODED_TABLE_NAMES) expectSameChunk(t, w.tables[t], r.tables[t]);
  // kinds too are in the same (first-seen) order, though only the set is part of the contract
  const ws = w.state;
  const rs = r.state;
  // the big parts first, for readable failures
  expect(ws.counters).toEqual(rs.counters);
  expect(ws.log).toEqual(rs.log);
  expect(ws.kinds).toEqual(rs.kinds);
  expect(ws).toEqual(rs);
}

function wasmEngine(options?: { rowCapacity?: number; inputBytes?: number }): WasmEngine {
  return new WasmEngine(wasmModule, options);
}

function compareBuffers(buffers: readonly Buf[], options?: { rowCapacity?: number; inputBytes?: number }, bias?: number): Outcome {
  const w = runBuffers(wasmEngine(options), buffers, bias);
  const r = runBuffers(new ReferenceEngine(), buffers, bias);
  expectSame(w, r);
  return w;
}

// ---------------------------------------------------------------------------------------------
// Synthetic buffers (format-spec A.2, B.3, C.2, D.2-D.4, E.2)

// The bytes come from the shared hand-written builder (test/helpers/bytes.ts); these adapters only map the
// arbitraries' parameters onto it.

/** Events with a SYSTEM/COMPACT/PERFINFO header (B.3): headerType picks the form; extended items hold 0xEE bytes. */
function kernelEvent(headerType: number, version: number, hookId: number, timestamp: bigint, payload: Uint8Array, extItems = 0, pebs = false): Uint8Array {
  const ee = 0xeeeeeeeeeeeeeeeen;
  return kernelEventBytes(
    headerType,
    { version, hookId, timestamp, threadId: 0x1234, processId: 0x5678, kernelTime: 1, userTime: 2, pebs: pebs ? ee : undefined, pmc: new Array<bigint>(extItems).fill(ee) },
    payload,
  );
}

/** EVENT_HEADER / FULL / INSTANCE / MESSAGE / ERROR events, walked and tallied only. `flags` goes into the
 *  EVENT_HEADER Flags raw (bit 0 may claim extended items that are not there). */
function otherEvent(kind: number, id: number, version: number, guidByte: number, payloadLength: number, flags: number): Uint8Array {
  const guid = new Uint8Array(16).fill(guidByte);
  if (kind === HT.MESSAGE) return messageEvent({ messageNumber: id }, new Uint8Array(payloadLength).fill(0x11));
  if (kind === HT.EVENT_HEADER32 || kind === HT.EVENT_HEADER64) {
    const o = { flags, threadId: 1, processId: 2, timestamp: 99n, provider: guid, id, version, level: 4, opcode: flags >> 8, task: id >> 3 };
    return eventHeaderEvent(kind, o, new Uint8Array(payloadLength).fill(0x22));
  }
  if (kind === HT.ERROR) {
    // layout unclear (spec B.2 [U]): u16 Size, u8 HeaderType, u8 0xC0, u32 0, then data
    return new ByteWriter().u16(8 + payloadLength).u8(kind).u8(0xc0).u32(0).fill(payloadLength, 0x33).done();
  }
  const o = { type: id, level: 4, version, threadId: 1, processId: 2, timestamp: 5n, guid };
  const payload = new Uint8Array(payloadLength).fill(0x44);
  return kind === HT.INSTANCE32 || kind === HT.INSTANCE64 ? instanceEvent(kind, o, payload) : fullEvent(kind, o, payload);
}

/** TRACE_LOGFILE_HEADER payload (A.8), 64-bit form (0x118 bytes), with the build and processor count; `extra`
 *  bytes (0x07) more, or fewer when negative, than the structure. */
function logfilePayload(build: number, processors: number, extra: number): Uint8Array {
  const lfh = logfileHeaderPayload({ pointerSize: 8, build, numberOfProcessors: processors }).subarray(0, 0x118);
  if (extra <= 0) return lfh.subarray(0, Math.max(0, 0x118 + extra));
  return new ByteWriter().raw(lfh).fill(extra, 0x07).done();
}

interface BufferSpec {
  cpu: number;
  procIndex: boolean;
  /** BufferFlag bits besides PROC_INDEX and COMPRESSED */
  flags?: number;
  type: number;
  events: Uint8Array[];
  compress: boolean;
  tail: number;
}

/** A WMI_BUFFER_HEADER + 8-byte-aligned events (+ optional 0xFF tail); compressed if asked (A.6). */
function buildBuffer(spec: BufferSpec): Uint8Array {
  return buildBufferBytes({
    events: spec.events,
    cpu: spec.cpu,
    procIndex: spec.procIndex,
    flags: spec.flags,
    type: spec.type,
    tail: spec.tail,
    compressor: spec.compress ? xpressCompress : undefined,
    timestamp: 1000n,
    sequenceNumber: 7,
    loggerId: 0x14,
  });
}

function asBufs(buffers: readonly Uint8Array[]): Buf[] {
  let at = 0;
  return buffers.map((bytes) => {
    const b = { bytes, fileOffset: at };
    at += bytes.length;
    return b;
  });
}

// fast-check arbitraries
const perfinfoType = fc.constantFrom(HT.PERFINFO64, HT.PERFINFO32, HT.PERFINFO64, HT.SYSTEM64, HT.SYSTEM32, HT.COMPACT64, HT.COMPACT32);
const timestamp = fc.bigInt({ min: 0n, max: 1n << 40n });

const packetArb: fc.Arbitrary<PacketSpec> = fc.record({
  type: fc.integer({ min: 0, max: 3 }),
  delta: fc.oneof(fc.integer({ min: 0, max: 300 }), fc.integer({ min: 0, max: 0x3fffffff })),
  index: fc.oneof(fc.integer({ min: 0, max: 3 }), fc.integer({ min: 0, max: 15 })),
  inc: fc.integer({ min: 0, max: 7 }),
  stateWr: fc.integer({ min: 0, max: 63 }),
  priority: fc.integer({ min: 0, max: 31 }),
  wait: fc.integer({ min: 0, max: 0x1ffff }),
});

const compactEventArb = fc
  .record({
    headerType: fc.constantFrom(HT.PERFINFO64, HT.PERFINFO64, HT.PERFINFO32, HT.SYSTEM64),
    version: fc.constantFrom(2, 2, 2, 2, 1),
    first: timestamp,
    tids: fc.array(fc.oneof(fc.integer({ min: 1, max: 0xffff }), fc.constant(0)), { minLength: 16, maxLength: 16 }),
    basePriority: fc.array(fc.integer({ min: -128, max: 127 }), { minLength: 16, maxLength: 16 }),
    packets: fc.oneof({ arbitrary: fc.array(packetArb, { maxLength: 60 }), weight: 4 }, fc.array(packetArb, { minLength: 200, maxLength: 300 })),
    cut: fc.integer({ min: 0, max: 7 }),
    short: fc.oneof({ arbitrary: fc.constant(-1), weight: 9 }, fc.integer({ min: 0, max: 0x58 - 1 })),
    eventTs: fc.oneof(timestamp, fc.constant(1n << 62n)),
    pebs: fc.boolean(),
  })
  .map((c) => {
    const packets = packetBytes(c.packets);
    const cut = c.cut > 4 ? c.cut - 4 : 0; // sometimes chop the last packet
    const payload = compactPayload(c.first, c.tids, c.basePriority, packets.subarray(0, Math.max(0, packets.length - cut)));
    // sometimes too short for PERFINFO_CCSWAP_BUFFER
    return kernelEvent(c.headerType, c.version, HOOK.COMPCS, c.eventTs, c.short < 0 ? payload : payload.subarray(0, c.short), 0, c.pebs && c.cut === 0);
  });

const cswitchEventArb = fc
  .record({
    headerType: perfinfoType,
    version: fc.constantFrom(1, 2, 3, 4, 4, 0, 5),
    ts: timestamp,
    n: fc.constantFrom(0x18, 0x18, 0x10, 0x14, 0x0f, 0x1c),
    bytes: fc.uint8Array({ minLength: 0x1c, maxLength: 0x1c }),
    ext: fc.integer({ min: 0, max: 2 }),
    pebs: fc.boolean(),
  })
  .map((c) => kernelEvent(c.headerType, c.version, HOOK.CSWITCH, c.ts, c.bytes.subarray(0, c.n), c.ext, c.pebs));

const spinlockEventArb = fc
  .record({
    headerType: perfinfoType,
    version: fc.constantFrom(2, 2, 2, 1),
    ts: timestamp,
    extra: fc.integer({ min: -2, max: 8 }),
    bytes: fc.uint8Array({ minLength: 0x40, maxLength: 0x40 }),
  })
  .map((c) => {
    const n = (c.headerType === HT.SYSTEM32 || c.headerType === HT.COMPACT32 || c.headerType === HT.PERFINFO32 ? 0x30 : 0x38) + Math.min(c.extra, 8);
    return kernelEvent(c.headerType, c.version, HOOK.SPINLOCK, c.ts, c.bytes.subarray(0, n));
  });

const headerEventArb = fc
  .record({
    build: fc.constantFrom(2600, 7601, 9600, 14393, 17763, 19041, 22000, 22631, 26100),
    processors: fc.integer({ min: 0, max: 6 }),
    extra: fc.oneof(fc.integer({ min: -0x118, max: -0x100 }), fc.integer({ min: -8, max: 0x1000 })),
    ts: timestamp,
    headerType: fc.constantFrom(HT.SYSTEM64, HT.SYSTEM32, HT.PERFINFO64),
  })
  .map((h) => {
    const p = logfilePayload(h.build, h.processors, h.extra);
    return kernelEvent(h.headerType, 2, HOOK.HEADER, h.ts, p);
  });

const extensionEventArb = fc
  .record({ masks: fc.uint8Array({ minLength: 0x28, maxLength: 0x28 }), n: fc.constantFrom(0x24, 0x24, 0x20, 0x28), ts: timestamp })
  .map((e) => kernelEvent(HT.PERFINFO64, 2, HOOK.HEADER_EXTENSION, e.ts, e.masks.subarray(0, e.n)));

const noiseEventArb = fc
  .record({
    kind: fc.constantFrom(
      HT.EVENT_HEADER64,
      HT.EVENT_HEADER32,
      HT.FULL_HEADER64,
      HT.FULL_HEADER32,
      HT.INSTANCE64,
      HT.INSTANCE32,
      HT.MESSAGE,
      HT.ERROR,
      HT.SYSTEM64,
      HT.PERFINFO64,
    ),
    id: fc.integer({ min: 0, max: 40 }),
    version: fc.integer({ min: 0, max: 3 }),
    guidByte: fc.integer({ min: 0, max: 3 }),
    payloadLength: fc.integer({ min: 0, max: 40 }),
    flags: fc.integer({ min: 0, max: 0xffff }),
  })
  .map((e) =>
    e.kind === HT.SYSTEM64 || e.kind === HT.PERFINFO64
      ? kernelEvent(e.kind, e.version, 0x0500 + e.id, 1n, new Uint8Array(e.payloadLength))
      : otherEvent(e.kind, e.id, e.version, e.guidByte, e.payloadLength, e.flags),
  );

const junkEventArb = fc.uint8Array({ minLength: 4, maxLength: 24 });

const eventArb = fc.oneof(
  { arbitrary: compactEventArb, weight: 6 },
  { arbitrary: cswitchEventArb, weight: 3 },
  { arbitrary: spinlockEventArb, weight: 3 },
  { arbitrary: noiseEventArb, weight: 3 },
  { arbitrary: headerEventArb, weight: 1 },
  { arbitrary: extensionEventArb, weight: 1 },
  { arbitrary: junkEventArb, weight: 1 },
);

const bufferArb = fc
  .record({
    cpu: fc.oneof(fc.integer({ min: 0, max: 3 }), fc.integer({ min: 0, max: 0xffff })),
    procIndex: fc.boolean(),
    flags: fc.constantFrom(0, 0, 0, BUFFER_FLAG.EVENTS_LOST, BUFFER_FLAG.BUFFER_LOST, BUFFER_FLAG.FLUSH_MARKER),
    type: fc.constantFrom(0, 0, 0, 0, 4, 1, 6, 7),
    events: fc.array(eventArb, { maxLength: 12 }),
    compress: fc.oneof({ arbitrary: fc.constant(false), weight: 4 }, { arbitrary: fc.constant(true), weight: 1 }),
    tail: fc.integer({ min: 0, max: 40 }),
  })
  .map(buildBuffer);

/** A trace: a first buffer with a logfile header event, then random buffers. */
const traceArb = fc
  .record({ head: headerEventArb, first: fc.array(eventArb, { maxLength: 4 }), rest: fc.array(bufferArb, { minLength: 1, maxLength: 6 }) })
  .map((t) => [buildBuffer({ cpu: 0, procIndex: true, type: 4, events: [t.head, ...t.first], compress: false, tail: 0 }), ...t.rest]);

interface Mutation {
  buffer: number;
  at: number;
  value: number;
}

function mutated(buffers: readonly Uint8Array[], edits: readonly Mutation[], cut: { buffer: number; length: number } | null): Uint8Array[] {
  const out = buffers.map((b) => b.slice());
  for (const e of edits) {
    const b = out[e.buffer % out.length]!;
    if (b.length) b[e.at % b.length] = e.value;
  }
  if (cut) {
    const i = cut.buffer % out.length;
    out[i] = out[i]!.subarray(0, cut.length % (out[i]!.length + 1));
  }
  return out;
}

const editsArb = fc.array(fc.record({ buffer: fc.nat(), at: fc.nat(), value: fc.integer({ min: 0, max: 255 }) }), { maxLength: 12 });
const cutArb = fc.option(fc.record({ buffer: fc.nat(), length: fc.nat() }), { nil: null });

// ---------------------------------------------------------------------------------------------

describe('module and instance', () => {
  test('the embedded base64 decodes without Buffer to the same bytes', () => {
    expect(Buffer.from(decodeBase64(WASM_BASE64)).equals(Buffer.from(WASM_BASE64, 'base64'))).toBe(true);
    expect(decodeBase64('AAEC/w==')).toEqual(new Uint8Array([0, 1, 2, 255]));
    expect(decodeBase64('AAEC/w')).toEqual(new Uint8Array([0, 1, 2, 255]));
  });

  test('the module is compiled once, needs no imports, and exports the ABI', async () => {
    expect(loadWasmModuleSync()).toBe(wasmModule);
    expect(await loadWasmModule()).toBe(wasmModule);
    expect(WebAssembly.Module.imports(wasmModule)).toEqual([]);
    const names = WebAssembly.Module.exports(wasmModule).map((e) => e.name);
    for (const n of ['init', 'decodeBuffer', 'resume', 'finish', 'resetRows', 'columnPtr', 'xpressDecompress', 'memory']) expect(names).toContain(n);
  });

  test('columns are 16-byte aligned; row capacity is at least one worst-case event', () => {
    const e = wasmEngine({ rowCapacity: 100, inputBytes: 0 });
    expect(e.rowCapacity()).toBe(32770);
    const x = new WebAssembly.Instance(wasmModule, {}).exports as unknown as { init(a: number, b: number): void; columnPtr(t: number, c: number): number };
    x.init(1000, 40000);
    for (const t of [L.TABLE_CSWITCH, L.TABLE_SPINLOCK]) for (let c = 0; c < L.columnCount(t); c++) expect(x.columnPtr(t, c) % 16).toBe(0);
    expect(() => wasmEngine({ rowCapacity: 1.5 })).toThrow(RangeError);
    expect(() => e.decodeBuffer(0, 100, 0, false)).toThrow(RangeError); // outside the (empty) window
  });

  test('a table without rows drains as one shared empty chunk (no view or copy per drain); one with rows does not', () => {
    const e = wasmEngine();
    const a = e.peekRows();
    const b = e.drain();
    for (const t of DECODED_TABLE_NAMES) {
      expect(a[t]).toBe(b[t]);
      expect(a[t].length).toBe(0);
      expect(a[t].columns.map((c) => c.length)).toEqual(TABLE_COLUMNS[t].map(() => 0));
    }
    const bytes = buildBuffer({ cpu: 0, procIndex: true, type: 0, events: [kernelEvent(HT.PERFINFO64, 4, HOOK.CSWITCH, 5n, new Uint8Array(0x18).fill(3))], compress: false, tail: 0 });
    e.reserveInput(bytes.length).set(bytes);
    expect(e.decodeBuffer(0, bytes.length, 0, false)).toBe(L.STATUS_OK);
    const c = e.peekRows();
    expect(c.cswitch.length).toBe(1);
    expect(c.cswitch).not.toBe(a.cswitch);
    expect(c.spinlock).toBe(a.spinlock);
  });

  test('a buffer shorter than its header, and an empty state', () => {
    const bytes = new Uint8Array(0x20);
    compareBuffers([{ bytes, fileOffset: 12345 }]);
    const fresh = runBuffers(wasmEngine(), []);
    expect(fresh.state).toEqual(runBuffers(new ReferenceEngine(), []).state);
  });
});

describe.skipIf(!corpusTestsEnabled())('real files', () => {
  test.each(corpusFiles())('%s: identical', (name) => {
    const buffers = splitFile(readCorpus(name));
    compareBuffers(buffers);
  });

  test('several buffers per window, growing a small window', () => {
    for (const name of ['airbus-lxcore_kernel.etl', 'krabsetw-powershell.etl', 'sonde-test.etl', 'perfview-smallEtlFile.etl']) {
      const file = readCorpus(name);
      const w = runWindowed(wasmEngine({ inputBytes: 0x1000 }), file, 0x30000);
      expectSame(w, runBuffers(new ReferenceEngine(), splitFile(file)));
    }
  });

  test('property: mutated and truncated real buffers', () => {
    const pools = ['airbus-ShutdownPerfDiagLogger.etl', 'perfview-net.4.5.2.x64.etl', 'perfview-smallEtlFile.etl', 'airbus-lxcore_kernel.etl'].map(
      (n) => splitFile(readCorpus(n)),
    );
    const pickArb = fc.record({ pool: fc.nat(), first: fc.nat(), count: fc.integer({ min: 1, max: 3 }) });
    fc.assert(
      fc.property(pickArb, editsArb, cutArb, (pick, edits, cut) => {
        const pool = pools[pick.pool % pools.length]!;
        const start = pick.first % pool.length;
        const chosen = [pool[0]!.bytes, ...pool.slice(start, start + pick.count).map((b) => b.bytes)];
        // every other edit lands in the events of a data buffer (so the walk goes deep), the rest anywhere
        const placed = edits.map((e, i) => (i % 2 ? e : { ...e, buffer: 1 + (e.buffer % (chosen.length - 1)), at: 0x48 + e.at }));
        compareBuffers(asBufs(mutated(chosen, placed, cut)));
      }),
      { numRuns: 60 },
    );
  });
});

describe('string heap', () => {
  test('entries are interned until the heap is emptied: equal names share one entry, different ones never', () => {
    const file = generateRealisticTrace({ seed: 9, targetBytes: 1 << 18, cpus: 2 }).bytes;
    const engine = wasmEngine({ rowCapacity: 1 << 17, inputBytes: file.length });
    engine.reserveInput(file.length).set(file);
    for (const b of splitFile(file)) expect(engine.decodeBuffer(b.fileOffset, b.bytes.length, b.fileOffset, false)).toBe(L.STATUS_OK);
    // the rows still in the engine: their name refs and the heap's entries
    const x = (engine as unknown as { x: { heapPtr(): number; heapSize(): number; rowCount(t: number): number; columnPtr(t: number, c: number): number; memory: WebAssembly.Memory } }).x;
    const n = x.rowCount(R.TABLE_THREAD_EVENTS);
    const mem = new DataView(x.memory.buffer);
    const heap = x.heapPtr() >>> 0;
    const valid = new Uint32Array(x.memory.buffer, x.columnPtr(R.TABLE_THREAD_EVENTS, TABLE_COLUMNS.threadEvents.findIndex((c) => c.name === 'valid')) >>> 0, n);
    const refs = new Uint32Array(x.memory.buffer, x.columnPtr(R.TABLE_THREAD_EVENTS, R.TE_NAME) >>> 0, n);
    const textOf = (ref: number) => {
      const head = mem.getUint32(heap + ref, true);
      return Buffer.from(x.memory.buffer, heap + ref + L.STR_ENTRY_HEADER, head & 0xffff).toString('hex') + '/' + (head >>> 16);
    };
    const refOfText = new Map<string, number>();
    let named = 0;
    for (let i = 0; i < n; i++) {
      if (((valid[i]! >>> R.TE_NAME) & 1) === 0) continue;
      named++;
      const t = textOf(refs[i]!);
      expect(refOfText.get(t) ?? refs[i]).toBe(refs[i]); // an equal text: the same entry
      refOfText.set(t, refs[i]!);
    }
    expect(named).toBeGreaterThan(2 * refOfText.size); // names repeat (SetName, rundowns)
    expect(new Set(refOfText.values()).size).toBe(refOfText.size); // different texts: different entries
    // the heap holds each distinct entry once (word-aligned), the threads' and the processes' names
    let distinctBytes = 0;
    for (const ref of new Set(refOfText.values())) distinctBytes += (L.STR_ENTRY_HEADER + (mem.getUint32(heap + ref, true) & 0xffff) + 3) & ~3;
    expect(distinctBytes).toBeLessThanOrEqual(x.heapSize());
    expect(x.heapSize()).toBeLessThan(named * 8);
    // and read back through the wrapper, the names of the reference engine
    const chunk = engine.drain().threadEvents;
    expect(chunk.length).toBe(n);
    const ref = runBuffers(new ReferenceEngine(), splitFile(file)).tables.threadEvents;
    expect(chunk.columns[R.TE_NAME]).toEqual(ref.columns[R.TE_NAME]);
  });

  test('entries are word-aligned and zero-padded: a name read again after drains is found, not decoded anew', () => {
    // names of every length mod 4 in a realistic trace; a tiny row capacity drains (and reuses the heap) often,
    // so without the zero padding a later entry's last word holds an earlier string's bytes and hashes apart
    const file = generateRealisticTrace({ seed: 7, targetBytes: 1 << 20, cpus: 2 }).bytes;
    const engine = wasmEngine({ rowCapacity: 64 });
    const out = runWindowed(engine, file, 1 << 20);
    expect(out.drains).toBeGreaterThan(100);
    const names = new Set<string>();
    for (const t of DECODED_TABLE_NAMES)
      TABLE_COLUMNS[t].forEach((c, i) => {
        if (c.type.startsWith('str')) for (const v of out.tables[t].columns[i] as string[]) if (v !== '') names.add(v);
      });
    expect(new Set([...names].map((n) => n.length % 4)).size).toBe(4);
    const reader = (engine as unknown as { strings: StringHeapReader }).strings;
    expect(reader.distinct).toBe(names.size);
    expect(out.tables).toEqual(runWindowed(new ReferenceEngine(), file, 1 << 20).tables);
  });
});

describe('row space: NEED_DRAIN and resume', () => {
  /** Buffers of compact batches (many packets) mixed with CSwitch and SpinLock events on 3 CPUs. */
  function busyTrace(buffers: number, seed: number): Uint8Array[] {
    let s = seed;
    const rnd = (n: number): number => {
      s = (Math.imul(s, 1103515245) + 12345) >>> 0;
      return (s >>> 8) % n;
    };
    const out = [buildBuffer({ cpu: 0, procIndex: true, type: 4, events: [kernelEvent(HT.SYSTEM64, 2, 0, 1n, logfilePayload(19041, 3, 0x40))], compress: false, tail: 0 })];
    let t = 1000n;
    for (let b = 0; b < buffers; b++) {
      const events: Uint8Array[] = [];
      let bytes = 0;
      while (bytes < 0xf000) {
        const kind = rnd(10);
        let e: Uint8Array;
        if (kind < 5) {
          const packets: PacketSpec[] = [];
          for (let k = 0, n = 20 + rnd(150); k < n; k++) {
            packets.push({ type: rnd(4), delta: rnd(5000), index: rnd(4), inc: rnd(8), stateWr: rnd(64), priority: rnd(32), wait: rnd(0x20000) });
          }
          e = kernelEvent(HT.PERFINFO64, 2, HOOK.COMPCS, t + 10_000_000n, compactPayload(t, [11, 12, 13, 14], [8, 9, 10, 11], packetBytes(packets)));
          t += 1_000_000n;
        } else if (kind < 7) {
          e = kernelEvent(HT.PERFINFO64, 4, HOOK.CSWITCH, t, new Uint8Array(0x18).fill(kind));
        } else {
          e = kernelEvent(HT.PERFINFO64, 2, HOOK.SPINLOCK, t, new Uint8Array(0x38).fill(kind + b));
        }
        events.push(e);
        bytes += (e.length + 7) & ~7;
      }
      out.push(buildBuffer({ cpu: b % 3, procIndex: true, type: 0, events, compress: b % 5 === 4, tail: 0 }));
    }
    return out;
  }

  test('tiny row capacity: drains in the middle of buffers (plain and compressed), same rows', () => {
    const buffers = asBufs(busyTrace(24, 1));
    const w = compareBuffers(buffers, { rowCapacity: 40000 });
    expect(w.drains).toBeGreaterThan(10);
    expect(w.tables.cswitch.length).toBeGreaterThan(100_000);
    expect(w.tables.spinlock.length).toBeGreaterThan(1000);
  });

  test('spinlock rows alone fill the table', () => {
    const events = Array.from({ length: 850 }, (_, i) => kernelEvent(HT.PERFINFO64, 2, HOOK.SPINLOCK, BigInt(i), new Uint8Array(0x38).fill(i)));
    const buffers = Array.from({ length: 50 }, (_, b) => buildBuffer({ cpu: b & 1, procIndex: false, type: 0, events, compress: false, tail: 0 }));
    const w = compareBuffers(asBufs(buffers), { rowCapacity: 32770 });
    expect(w.tables.spinlock.length).toBe(42500);
    expect(w.drains).toBe(1);
  });

  test('one 0xFFFF-byte batch at the smallest capacity; finish() waits for room', () => {
    const packets: PacketSpec[] = Array.from({ length: 32715 }, (_, i) => ({ type: 0, delta: i & 7, index: 0, inc: 0, stateWr: 0, priority: 0, wait: 0 }));
    // 32715 two-byte packets and one stray byte (a truncated packet) fill the largest event
    const area = new Uint8Array([...packetBytes(packets), 0]);
    const batch = kernelEvent(HT.PERFINFO64, 2, HOOK.COMPCS, 1n << 40n, compactPayload(5n, [], [], area));
    expect(batch.length).toBe(0xffff);
    const buffers = [batch, batch].map((e, cpu) => buildBuffer({ cpu, procIndex: false, type: 0, events: [e], compress: false, tail: 0 }));
    const w = compareBuffers(asBufs(buffers), { rowCapacity: 32770 });
    expect(w.tables.cswitch.length).toBe(2 * 32715);
    // one drain before the second batch, one because finish() needs MAX_PROCESSORS free rows
    expect(w.drains).toBe(2);
  });
});

describe('synthetic buffers', () => {
  test('more kinds than the tally keeps, more issues than the log keeps', () => {
    // 3300 distinct HookIds (PERFINFO64, 0x10 bytes each), then 1100 CSwitch events too short to decode
    const kindsEvents = Array.from({ length: 3300 }, (_, i) => kernelEvent(HT.PERFINFO64, 2, 0x1000 + i, 1n, new Uint8Array(0)));
    const shortEvents = Array.from({ length: 1100 }, () => kernelEvent(HT.PERFINFO64, 2, HOOK.CSWITCH, 1n, new Uint8Array(8)));
    const buffers = [kindsEvents, shortEvents].map((events, cpu) => buildBuffer({ cpu, procIndex: false, type: 0, events, compress: false, tail: 0 }));
    const w = compareBuffers(asBufs(buffers));
    // the CSwitch kind comes after the table filled up: its 1100 events are not tallied either
    expect(w.state.counters[L.D_KIND_TABLE_FULL]).toBe(3300 - L.KIND_MAX_DISTINCT + 1100);
    expect(w.state.kinds.length).toBe(L.KIND_MAX_DISTINCT);
    expect(w.state.counters[L.D_CSWITCH_SKIPPED_SHORT]).toBe(1100);
    expect(w.state.log.length).toBe(L.LOG_CAPACITY);
  });

  test('other header kinds past a full tally: known kinds counted, new ones charged to kindTableFull, twice over', () => {
    // 3100 MESSAGE kinds, then FULL_HEADER and EVENT_HEADER events of one kind each, all of it twice: the
    // second pass has only kinds already seen (the engine's run loop counts them without a call) or kinds
    // the full table cannot take (kindTableFull, not a lookup that stops the loop)
    const guid = new Uint8Array(16).fill(7);
    const pass = [
      ...Array.from({ length: 3100 }, (_, i) => messageEvent({ messageNumber: i }, new Uint8Array(8))),
      fullEvent(HT.FULL_HEADER64, { type: 9, version: 3, guid }, new Uint8Array(4)),
      eventHeaderEvent(HT.EVENT_HEADER64, { id: 17, version: 1, opcode: 2, task: 5, provider: guid }, new Uint8Array(4)),
    ];
    const buffers = [pass, pass].map((events, cpu) => buildBuffer({ cpu, procIndex: false, type: 0, events, compress: false, tail: 0 }));
    const w = compareBuffers(asBufs(buffers));
    // MESSAGE 0..3071 entered; 3072..3099 and the two other kinds find the table full, in both passes
    expect(w.state.kinds.length).toBe(L.KIND_MAX_DISTINCT);
    expect(w.state.counters[L.D_KIND_TABLE_FULL]).toBe(2 * (3100 - L.KIND_MAX_DISTINCT + 2));
    expect(new Set(w.state.kinds.map((k) => Number(k.count)))).toEqual(new Set([2]));
    expect(w.state.counters[L.D_EVENTS]).toBe(2 * 3102);
  });

  test('state(): the kind tallies are made when first read, as they were at state(), once', () => {
    // a trace can have thousands of kinds that most decodes never look at (summary eventsByKind): state()
    // copies the table and makes no tally object until `kinds` is read
    const engine = new WasmEngine(wasmModule);
    const feed = (hookIds: number[], cpu: number) => {
      const events = hookIds.map((h) => kernelEvent(HT.PERFINFO64, 2, h, 1n, new Uint8Array(0)));
      const bytes = buildBuffer({ cpu, procIndex: false, type: 0, events, compress: false, tail: 0 });
      engine.reserveInput(bytes.length).set(bytes);
      expect(engine.decodeBuffer(0, bytes.length, 0, false)).toBe(0);
    };
    feed([0x1001, 0x1002, 0x1001], 0);
    const before = engine.state();
    expect(typeof Object.getOwnPropertyDescriptor(before, 'kinds')?.get).toBe('function');
    feed([0x1001, 0x1003], 1); // more events and a new kind after state(): not in `before`
    const kinds = before.kinds;
    expect(kinds.map((k) => [k.id, k.count])).toEqual([
      [0x1001, 2],
      [0x1002, 1],
    ]);
    expect(before.kinds).toBe(kinds);
    expect(engine.state().kinds.map((k) => [k.id, k.count])).toEqual([
      [0x1001, 3],
      [0x1002, 1],
      [0x1003, 1],
    ]);
  });

  test('batch time checks at their boundaries', () => {
    // CPU 0: a switch at 100; a batch whose FirstTimeStamp (95) is earlier but whose first switch (100) is
    // not (fine); a batch whose last switch (107) is one past its event time (106); a batch whose first
    // switch (106) precedes the previous switch (107)
    const idle = (delta: number): PacketSpec => ({ type: 1, delta, index: 0, inc: 0, stateWr: 0, priority: 0, wait: 0 });
    const batch = (first: bigint, eventTs: bigint, deltas: number[]): Uint8Array =>
      kernelEvent(HT.PERFINFO64, 2, HOOK.COMPCS, eventTs, compactPayload(first, [], [], packetBytes(deltas.map(idle))));
    const events = [batch(100n, 100n, [0]), batch(95n, 105n, [5]), batch(104n, 106n, [0, 3]), batch(106n, 200n, [0])];
    const buffers = [buildBuffer({ cpu: 0, procIndex: false, type: 0, events, compress: false, tail: 0 })];
    const w = compareBuffers(asBufs(buffers));
    expect(w.state.log.map((e) => [e.code, e.detail])).toEqual([
      [L.D_COMPCS_TIME_MISMATCH, 1],
      [L.D_COMPCS_TIME_MISMATCH, 2],
    ]);
  });

  test('a compressed buffer larger than the initial decompression scratch', () => {
    const events = Array.from({ length: 20000 }, (_, i) => kernelEvent(HT.PERFINFO64, 2, HOOK.SPINLOCK, BigInt(i), new Uint8Array(0x38).fill(i & 0xf0)));
    const big = buildBuffer({ cpu: 0, procIndex: false, type: 0, events, compress: true, tail: 0 });
    const w = compareBuffers(asBufs([big, big]));
    expect(w.tables.spinlock.length).toBe(40000);
    expect(w.state.counters[L.D_BUFFERS_COMPRESSED]).toBe(2);
  });

  test('property: random traces', () => {
    fc.assert(
      fc.property(traceArb, (buffers) => {
        compareBuffers(asBufs(buffers));
      }),
      { numRuns: 150 },
    );
  });

  test('property: random traces, bias override and tiny capacity', () => {
    fc.assert(
      fc.property(traceArb, fc.integer({ min: 0, max: 70 }), (buffers, bias) => {
        compareBuffers(asBufs(buffers), { rowCapacity: 32770 }, bias);
      }),
      { numRuns: 40 },
    );
  });

  test('property: mutated and truncated synthetic buffers', () => {
    fc.assert(
      fc.property(traceArb, editsArb, cutArb, (buffers, edits, cut) => {
        compareBuffers(asBufs(mutated(buffers, edits, cut)));
      }),
      { numRuns: 150 },
    );
  });

  test('property: random bytes as buffers', () => {
    fc.assert(
      fc.property(fc.array(fc.uint8Array({ maxLength: 600 }), { maxLength: 4 }), fc.array(eventArb, { maxLength: 3 }), (junk, events) => {
        // half-plausible headers: a valid header in front of random event bytes
        const framed = junk.map((j) => {
          const b = buildBuffer({ cpu: 1, procIndex: false, type: 0, events: [...events, j], compress: false, tail: 0 });
          return j.length > 300 ? j : b;
        });
        compareBuffers(asBufs(framed));
      }),
      { numRuns: 150 },
    );
  });
});
