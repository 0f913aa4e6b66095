// Structural tests of the ETL writer (src/writer). No decoder is used: the file is re-read with the independent
// reader of test/helpers/reader.ts, which uses the literal offsets and bit layouts of format-spec.md (parts A–E),
// not the constants of layout.ts, so a wrong constant there would show up here.
import { describe, expect, test } from 'vitest';
import fc from 'fast-check';
import {
  generateMixedTrace,
  generateTraceChunks,
  guidToBytes,
  randomNoiseEvents,
  Rng,
  TraceWriter,
  writeTrace,
} from '../src/writer/index.js';
import type {
  CompactSwitchSpec,
  CSwitchSpec,
  EventSpec,
  HeaderKind,
  RawEventSpec,
  SpinLockSpec,
  TraceDescription,
  WrittenTrace,
} from '../src/writer/index.js';
import {
  bufferData,
  i8,
  i32,
  parseCompactBatch,
  splitBuffers,
  u16,
  u32,
  u64,
  walkEvents as walk,
  type CompactPacket,
  type EventInfo,
} from './helpers/reader.js';

// ---------------------------------------------------------------------------------------------
// the independent reader, with the writer's structural guarantees asserted on the way

interface Buf {
  fileOffset: number;
  bufferSize: number;
  saved: number;
  current: number;
  timestamp: bigint;
  seq: number;
  cpu: number;
  cpuU8: number;
  loggerId: number;
  state: number;
  filled: number;
  flag: number;
  type: number;
  /** the whole buffer as written, payload decompressed when BufferFlag 0x40 */
  data: Uint8Array;
}

/** Every byte of the file belongs to a buffer (A.1). */
function readBuffers(bytes: Uint8Array): Buf[] {
  const { buffers, end } = splitBuffers(bytes);
  expect(end).toBe(bytes.length);
  return buffers.map((b) => {
    expect(b.bufferSize).toBeGreaterThanOrEqual(0x48);
    expect(b.raw.length).toBe(b.bufferSize);
    return {
      fileOffset: b.fileOffset,
      bufferSize: b.bufferSize,
      saved: b.savedOffset,
      current: b.currentOffset,
      timestamp: b.timestamp,
      seq: Number(b.sequenceNumber),
      cpu: b.processor,
      cpuU8: b.processorU8,
      loggerId: b.loggerId,
      state: b.state,
      filled: b.offset,
      flag: b.flags,
      type: b.type,
      data: bufferData(b),
    };
  });
}

type Ev = EventInfo;

/** Walks [0x48, filled) per spec B.4: the walk ends exactly at `filled`, events 8-aligned, zero padding. */
function walkEvents(data: Uint8Array, filled: number): Ev[] {
  const w = walk(data, filled);
  expect(w.stop, `walk stopped at ${w.at}`).toBe('end');
  expect(w.at).toBe(filled);
  for (const e of w.events) {
    expect(e.off % 8).toBe(0);
    for (const item of e.items) expect(item.size % 8).toBe(0);
    // padding is zero
    for (let p = e.off + e.size; p < ((e.off + e.size + 7) & ~7); p++) expect(data[p]).toBe(0);
  }
  return w.events;
}

type Packet = CompactPacket;
interface Batch {
  cpu: number;
  eventTs: bigint;
  headerType: number;
  marker: number;
  first: bigint;
  tids: number[];
  base: number[];
  packets: Packet[];
  dataSize: number;
}

/** PERFINFO_CCSWAP_BUFFER + packets per D.2/D.4; the packets fill the event exactly. */
function parseBatch(ev: Ev, cpu: number): Batch {
  const d = ev.data;
  const c = parseCompactBatch(d);
  expect(c.truncated).toBe(false);
  return {
    cpu,
    eventTs: ev.timestamp!,
    headerType: ev.headerType,
    marker: u32(ev.bytes, 0),
    first: c.first,
    tids: c.tids,
    base: c.base,
    packets: c.packets,
    dataSize: d.length,
  };
}

interface Parsed {
  bufs: Buf[];
  header: Buf;
  data: Buf[];
  /** per cpu: events in SequenceNumber order */
  perCpu: Map<number, Ev[]>;
  batches: Batch[];
}

function parse(t: WrittenTrace | Uint8Array): Parsed {
  const bytes = t instanceof Uint8Array ? t : t.bytes;
  const bufs = readBuffers(bytes);
  const [header, ...data] = bufs;
  const perCpu = new Map<number, Ev[]>();
  const batches: Batch[] = [];
  for (const b of [...data].sort((a, c) => a.seq - c.seq)) {
    const evs = walkEvents(b.data, b.filled);
    const list = perCpu.get(b.cpu) ?? [];
    list.push(...evs);
    perCpu.set(b.cpu, list);
    for (const e of evs) if ((e.headerType === 0x10 || e.headerType === 0x11) && e.hookId === 0x0525) batches.push(parseBatch(e, b.cpu));
  }
  return { bufs, header, data, perCpu, batches };
}

// ---------------------------------------------------------------------------------------------
// spec builders

const cs = (cpu: number, ts: bigint, o: Partial<CSwitchSpec> = {}): CSwitchSpec => ({
  kind: 'cswitch', cpu, timestamp: ts, version: 2, newThreadId: 100, oldThreadId: 200, newThreadPriority: 9, oldThreadPriority: 8,
  previousCState: 0, newThreadPriorityDecrement: 0, oldThreadWaitReason: 6, oldThreadWaitMode: 1, oldThreadState: 5,
  oldThreadIdealProcessor: 0, newThreadWaitTime: 0, oldThreadRemainingQuantum: 0, ...o,
});

const sw = (cpu: number, ts: bigint, tid: number, o: Partial<CompactSwitchSpec> = {}): CompactSwitchSpec => ({
  kind: 'compactSwitch', cpu, timestamp: ts, oldThreadId: tid, oldThreadPriority: tid ? 9 : 0, oldThreadBasePriority: tid ? 8 : 0,
  oldThreadState: 5, oldThreadWaitReason: 6, newThreadWaitTime: 0, ...o,
});

const raw = (cpu: number, ts: bigint, headerType: HeaderKind, o: Partial<RawEventSpec> = {}): RawEventSpec => ({
  kind: 'raw', cpu, timestamp: ts, headerType, payload: new Uint8Array(0), ...o,
});

const spin = (cpu: number, ts: bigint, o: Partial<SpinLockSpec> = {}): SpinLockSpec => ({
  kind: 'spinlock', cpu, timestamp: ts, spinLockAddress: 0xfffff80012345678n, callerAddress: 0xfffff800abcdef01n,
  acquireTime: 1000n, releaseTime: 2000n, waitTimeInCycles: 7, spinCount: 3, threadId: 0x1234, interruptCount: 2, irql: 2,
  acquireDepth: 1, acquireMode: 3, executeDpc: true, executeIsr: false, ...o,
});

/** every compact switch of a trace, reconstructed from the batches: per cpu, in order */
function switchesOf(p: Parsed, bias: number): Map<number, { ts: bigint; tid: number; pri: number | null; state: number | null; wr: number | null; wait: number | null; type: number }[]> {
  const m = new Map<number, { ts: bigint; tid: number; pri: number | null; state: number | null; wr: number | null; wait: number | null; type: number }[]>();
  for (const b of p.batches) {
    const list = m.get(b.cpu) ?? [];
    let t = b.first;
    for (const pk of b.packets) {
      t += BigInt(pk.delta);
      const idle = pk.type < 2;
      const wrv = pk.wr;
      list.push({
        ts: t,
        tid: idle ? 0 : b.tids[pk.idx],
        pri: idle ? null : pk.type === 2 ? b.base[pk.idx] + pk.inc : pk.pri,
        state: idle ? null : wrv < bias ? 5 : wrv - bias,
        wr: idle ? null : wrv < bias ? wrv : null,
        wait: pk.type === 3 ? pk.wait : null,
        type: pk.type,
      });
    }
    m.set(b.cpu, list);
  }
  return m;
}

// ---------------------------------------------------------------------------------------------

describe('header buffer and TRACE_LOGFILE_HEADER', () => {
  for (const ptr of [8, 4] as const) {
    test(`logfile header fields at the spec offsets, pointerSize ${ptr}`, () => {
      const t = writeTrace({
        pointerSize: ptr, build: 22621, osVersion: [10, 0], numberOfProcessors: 3, bufferSize: 0x2000, perfFreq: 3_117_777n,
        clockType: 3, cpuSpeedInMHz: 2400, timerResolution: 5000, startTime: 132_000_000_000_000_000n, endTime: 132_000_000_100_000_000n,
        bootTime: 131_999_000_000_000_000n, headerTimestamp: 123_456_789n, loggerName: 'Logger X', logFileName: 'C:\\a.etl',
        logFileMode: 0x02000080, eventsLost: 11, buffersLost: 12, groupMasks: [1, 2, 3, 4, 5, 6, 7, 8], kernelEventVersion: 0x47,
        events: [cs(0, 200_000_000n), cs(2, 200_000_001n)],
      });
      const { header, bufs } = parse(t);
      // WMI_BUFFER_HEADER of the header buffer
      expect(header.fileOffset).toBe(0);
      expect(header.bufferSize).toBe(0x2000);
      expect(header.type).toBe(4);
      expect(header.flag).toBe(0x21);
      expect(header.seq).toBe(0);
      expect(header.state).toBe(3);
      expect(header.cpu).toBe(0);
      expect(header.loggerId).toBe(0x1c);
      expect(header.saved).toBe(header.filled);
      for (let i = header.filled; i < 0x2000; i++) if (header.data[i] !== 0xff) throw new Error(`header tail byte ${i}`);
      const evs = walkEvents(header.data, header.filled);
      expect(evs.length).toBe(2);
      const h = evs[0];
      const b = h.bytes;
      expect(u32(b, 0)).toBe(ptr === 8 ? 0xc0020002 : 0xc0010002);
      expect(u16(b, 6)).toBe(0x0000);
      expect(u64(b, 0x10)).toBe(123_456_789n);
      const lfhSize = ptr === 8 ? 0x118 : 0x110;
      expect(h.size).toBe(0x20 + lfhSize + 2 * ('Logger X'.length + 1) + 2 * ('C:\\a.etl'.length + 1));
      const f = b.subarray(0x20);
      expect(u32(f, 0x00)).toBe(0x2000);
      expect([...f.subarray(4, 8)]).toEqual([10, 0, 1, 5]);
      expect(u32(f, 0x08)).toBe(22621);
      expect(u32(f, 0x0c)).toBe(3);
      expect(u64(f, 0x10)).toBe(132_000_000_100_000_000n);
      expect(u32(f, 0x18)).toBe(5000);
      expect(u32(f, 0x20)).toBe(0x02000080);
      expect(u32(f, 0x24)).toBe(bufs.length);
      expect(u32(f, 0x2c)).toBe(ptr);
      expect(u32(f, 0x30)).toBe(11);
      expect(u32(f, 0x34)).toBe(2400);
      const tz = ptr === 8 ? 0x48 : 0x40;
      for (let i = 0; i < 0xac; i++) expect(f[tz + i]).toBe(0);
      expect(u64(f, ptr === 8 ? 0xf8 : 0xf0)).toBe(131_999_000_000_000_000n);
      expect(u64(f, ptr === 8 ? 0x100 : 0xf8)).toBe(3_117_777n);
      expect(u64(f, ptr === 8 ? 0x108 : 0x100)).toBe(132_000_000_000_000_000n);
      expect(u32(f, ptr === 8 ? 0x110 : 0x108)).toBe(3);
      expect(u32(f, ptr === 8 ? 0x114 : 0x10c)).toBe(12);
      const names = new TextDecoder('utf-16le').decode(f.subarray(lfhSize, h.size - 0x20));
      expect(names).toBe('Logger X\0C:\\a.etl\0');
      // HEADER_EXTENSION
      const x = evs[1].bytes;
      expect(u32(x, 0)).toBe(ptr === 8 ? 0xc0020002 : 0xc0010002);
      expect(evs[1].size).toBe(0x44);
      expect(u16(x, 6)).toBe(0x0005);
      expect(u64(x, 0x10)).toBe(123_456_789n);
      for (let i = 0; i < 8; i++) expect(u32(x, 0x20 + 4 * i)).toBe(i + 1);
      expect(u32(x, 0x40)).toBe(0x47);
    });
  }

  test('defaults: group masks, version bytes, clock, EndTime from the last event', () => {
    const t = writeTrace({ events: [cs(1, 1_000_000n + 10_000_000n)] });
    const { header } = parse(t);
    const evs = walkEvents(header.data, header.filled);
    const f = evs[0].bytes.subarray(0x20);
    expect(u32(f, 0x00)).toBe(0x10000);
    expect([...f.subarray(4, 8)]).toEqual([10, 0, 1, 5]);
    expect(u32(f, 0x08)).toBe(19041);
    expect(u32(f, 0x0c)).toBe(2);
    expect(u32(f, 0x18)).toBe(156250);
    expect(u32(f, 0x2c)).toBe(8);
    expect(u64(f, 0x100)).toBe(10_000_000n);
    expect(u32(f, 0x110)).toBe(1);
    // EndTime = StartTime + 1 s (10^7 ticks at 10 MHz after T0)
    expect(u64(f, 0x10)).toBe(u64(f, 0x108) + 10_000_000n);
    expect(u64(evs[0].bytes, 0x10)).toBe(1_000_000n);
    const x = evs[1].bytes;
    expect(u32(x, 0x20)).toBe(0);
    expect(u32(x, 0x24)).toBe(0x4 | 0x100 | 0x10000);
    expect(u32(x, 0x40)).toBe(0x46);
  });
});

describe('data buffers', () => {
  function busyTrace(extra: Partial<TraceDescription> = {}): { desc: TraceDescription; t: WrittenTrace } {
    const rng = new Rng(99);
    const events: EventSpec[] = [];
    for (let i = 0; i < 3000; i++) {
      const cpu = rng.int(0, 2);
      const ts = 2_000_000n + BigInt(rng.int(0, 5_000_000));
      const k = rng.int(0, 3);
      if (k === 0) events.push(cs(cpu, ts, { newThreadId: i }));
      else if (k === 1) events.push(spin(cpu, ts, { threadId: i }));
      else if (k === 2) events.push(sw(cpu, ts, rng.int(0, 30) * 4));
      else events.push(raw(cpu, ts, rng.pick(['SYSTEM64', 'PERFINFO64', 'EVENT_HEADER64', 'FULL_HEADER32'] as const), { payload: rng.bytes(rng.int(0, 200)), hookId: 0x0a10 }));
    }
    const desc: TraceDescription = { numberOfProcessors: 3, bufferSize: 0x1000, events, ...extra };
    return { desc, t: writeTrace(desc) };
  }

  test('stride, sizes, flags, states, sequence numbers, tail, WrittenBuffer info', () => {
    const { t } = busyTrace();
    const { bufs, data } = parse(t);
    expect(t.buffers.length).toBe(bufs.length);
    expect(data.length).toBeGreaterThan(20);
    let off = 0;
    bufs.forEach((b, i) => {
      expect(b.fileOffset).toBe(off);
      expect(t.buffers[i].fileOffset).toBe(off);
      expect(t.buffers[i].size).toBe(b.bufferSize);
      expect(t.buffers[i].sequenceNumber).toBe(b.seq);
      expect(t.buffers[i].cpu).toBe(b.cpu);
      expect(t.buffers[i].compressed).toBe(false);
      expect(t.buffers[i].events).toBe(walkEvents(b.data, b.filled).length);
      off += b.bufferSize;
    });
    expect(off).toBe(t.bytes.length);
    data.forEach((b, i) => {
      expect(b.bufferSize).toBe(0x1000);
      expect(b.type).toBe(0);
      expect(b.state).toBe(3);
      expect(b.loggerId).toBe(0x1c);
      expect(b.flag).toBe(i === data.length - 1 ? 0x21 : 0x20);
      expect(b.saved).toBe(b.filled);
      expect(b.filled % 8).toBe(0);
      expect(b.filled).toBeGreaterThan(0x48);
      expect(b.current).toBe(b.filled + 0x1000);
      for (let k = b.filled; k < 0x1000; k++) if (b.data[k] !== 0xff) throw new Error(`tail byte ${k} of buffer ${i}`);
    });
    // sequence numbers: 1..n, unique; file order 1,3,2,4,5,7,6,8,… with the last buffer not moved
    const seqs = data.map((b) => b.seq);
    expect([...seqs].sort((a, b) => a - b)).toEqual(seqs.map((_, i) => i + 1));
    const n = seqs.length;
    const expected = seqs.map((_, i) => i + 1);
    for (let i = 1; i + 2 < n; i += 4) [expected[i], expected[i + 1]] = [expected[i + 1], expected[i]];
    expect(seqs).toEqual(expected);
    expect(seqs[n - 1]).toBe(n);
    // total events
    expect(t.events).toBe(bufs.reduce((s, b) => s + walkEvents(b.data, b.filled).length, 0));
  });

  test('per-CPU streams are time ordered; buffer TimeStamp = last event; full buffers flushed when the next event does not fit', () => {
    const { desc, t } = busyTrace();
    const { data, perCpu } = parse(t);
    for (const [, evs] of perCpu) {
      for (let i = 1; i < evs.length; i++) expect(evs[i].timestamp! >= evs[i - 1].timestamp!).toBe(true);
    }
    const byCpu = new Map<number, Buf[]>();
    for (const b of data) byCpu.set(b.cpu, [...(byCpu.get(b.cpu) ?? []), b]);
    for (const [, list] of byCpu) {
      list.sort((a, b) => a.seq - b.seq);
      list.forEach((b, k) => {
        const evs = walkEvents(b.data, b.filled);
        expect(b.timestamp).toBe(evs[evs.length - 1].timestamp);
        if (k + 1 < list.length) {
          // the first event of the next buffer did not fit here
          const next = walkEvents(list[k + 1].data, list[k + 1].filled)[0];
          expect(b.filled + next.size).toBeGreaterThan(0x1000);
        }
      });
    }
    // event counts per cpu match the input (compact switches are batched)
    for (let c = 0; c < 3; c++) {
      const nonCompact = desc.events.filter((e) => e.cpu === c && e.kind !== 'compactSwitch').length;
      const batches = t.compactPackets.filter((p) => p.cpu === c).reduce((s, p) => s.add(p.batch), new Set<number>()).size;
      expect(perCpu.get(c)!.length).toBe(nonCompact + batches);
    }
    // sequence numbers follow flush time: a full buffer is flushed when the first event of its CPU's next
    // buffer comes (global time order); the partial buffers follow at the end, in CPU order
    const flushTime = new Map<number, bigint>();
    const finals: Buf[] = [];
    for (const [, list] of byCpu) {
      list.forEach((b, k) => {
        if (k + 1 < list.length) flushTime.set(b.seq, walkEvents(list[k + 1].data, list[k + 1].filled)[0].timestamp!);
        else finals.push(b);
      });
    }
    const fullSeqs = [...flushTime.keys()].sort((a, b) => a - b);
    for (let i = 1; i < fullSeqs.length; i++) expect(flushTime.get(fullSeqs[i])! >= flushTime.get(fullSeqs[i - 1])!).toBe(true);
    finals.sort((a, b) => a.seq - b.seq);
    expect(finals.map((b) => b.cpu)).toEqual([0, 1, 2]);
    expect(finals[0].seq).toBe(fullSeqs.length + 1);
  });

  test('equal timestamps keep input order (stable), across the whole description', () => {
    const events: EventSpec[] = [];
    for (let i = 0; i < 50; i++) events.push(cs(0, 5_000_000n, { newThreadId: 1000 + i }));
    events.push(cs(0, 4_000_000n, { newThreadId: 1 }));
    const t = writeTrace({ events, numberOfProcessors: 1 });
    const evs = parse(t).perCpu.get(0)!;
    expect(evs.map((e) => u32(e.bytes, 0x10))).toEqual([1, ...Array.from({ length: 50 }, (_, i) => 1000 + i)]);
  });

  test('outOfOrder false keeps SequenceNumber order; procIndex false writes an 8-bit processor without flag 0x20', () => {
    const { t } = busyTrace({ outOfOrder: false, procIndex: false });
    const { data, header } = parse(t);
    expect(header.flag).toBe(0x01);
    expect(data.map((b) => b.seq)).toEqual(data.map((_, i) => i + 1));
    for (const [i, b] of data.entries()) {
      expect(b.flag).toBe(i === data.length - 1 ? 0x01 : 0x00);
      expect(b.data[0x29]).toBe(0);
      expect(b.cpuU8).toBe(t.buffers[i + 1].cpu);
    }
    expect(new Set(data.map((b) => b.cpuU8))).toEqual(new Set([0, 1, 2]));
  });

  test('remaining partial buffers are flushed at the end in CPU order', () => {
    const t = writeTrace({ numberOfProcessors: 4, events: [cs(3, 2_000_000n), cs(1, 2_000_001n), cs(2, 2_000_002n)], outOfOrder: false });
    const { data } = parse(t);
    expect(data.map((b) => [b.seq, b.cpu])).toEqual([[1, 1], [2, 2], [3, 3]]);
  });

  test('an empty trace is a header buffer only', () => {
    const t = writeTrace({ events: [] });
    const { bufs } = parse(t);
    expect(bufs.length).toBe(1);
    expect(t.events).toBe(2);
    expect(u32(walkEvents(bufs[0].data, bufs[0].filled)[0].bytes, 0x20 + 0x24)).toBe(1);
  });

  test('deterministic: same description, same bytes', () => {
    const a = busyTrace().t.bytes;
    const b = busyTrace().t.bytes;
    expect(Buffer.compare(Buffer.from(a), Buffer.from(b))).toBe(0);
  });
});

describe('CSwitch (0x0524) and SpinLock (0x0529) payloads', () => {
  test('CSwitch v1..v4 fields at the spec offsets, PERFINFO32/64 markers, PEBS + PMC items', () => {
    const specs: CSwitchSpec[] = [
      cs(0, 2_000_000n, { version: 1, newThreadId: 0x11223344, oldThreadId: 0x55667788, newThreadPriority: 15, oldThreadPriority: -2, previousCState: 0xfe, newThreadPriorityDecrement: -3, oldThreadWaitReason: 37, oldThreadWaitMode: 1, oldThreadState: 9, oldThreadIdealProcessor: 200 }),
      cs(0, 2_000_001n, { version: 2, newThreadWaitTime: 0xdeadbeef, oldThreadRemainingQuantum: -123456, header: 'PERFINFO32' }),
      cs(0, 2_000_002n, { version: 3, oldThreadWaitMode: 0x07 }),
      cs(0, 2_000_003n, { version: 4, oldThreadWaitMode: 0x7f, pebsIndex: 0x0102030405060708n, pmcCounters: [1n, 0xffffffffffffffffn, 3n] }),
    ];
    const t = writeTrace({ events: specs, numberOfProcessors: 1 });
    const evs = parse(t).perCpu.get(0)!;
    expect(evs.length).toBe(4);
    const [e1, e2, e3, e4] = evs;
    expect(u32(e1.bytes, 0)).toBe(0xc0110001);
    expect(e1.size).toBe(0x10 + 0x10);
    expect(e1.hookId).toBe(0x0524);
    expect(e1.timestamp).toBe(2_000_000n);
    const p1 = e1.bytes.subarray(0x10);
    expect(u32(p1, 0)).toBe(0x11223344);
    expect(u32(p1, 4)).toBe(0x55667788);
    expect(i8(p1, 8)).toBe(15);
    expect(i8(p1, 9)).toBe(-2);
    expect(p1[0x0a]).toBe(0xfe);
    expect(i8(p1, 0x0b)).toBe(-3);
    expect(p1[0x0c]).toBe(37);
    expect(p1[0x0d]).toBe(1);
    expect(p1[0x0e]).toBe(9);
    expect(p1[0x0f]).toBe(200);
    expect(u32(e2.bytes, 0)).toBe(0xc0100002);
    expect(e2.size).toBe(0x28);
    expect(u32(e2.bytes, 0x10 + 0x10)).toBe(0xdeadbeef);
    expect(i32(e2.bytes, 0x10 + 0x14)).toBe(-123456);
    expect(u32(e3.bytes, 0)).toBe(0xc0110003);
    expect(e3.bytes[0x10 + 0x0d]).toBe(0x07);
    // PEBS flag 0x8000 + 3 PMC counters (3 << 8), PEBS first
    expect(u32(e4.bytes, 0)).toBe((0xc0110000 | 0x8000 | 0x0300 | 4) >>> 0);
    expect(e4.size).toBe(0x10 + 8 + 24 + 0x18);
    expect(e4.hdr).toBe(0x10 + 32);
    expect(u64(e4.bytes, 0x10)).toBe(0x0102030405060708n);
    expect(u64(e4.bytes, 0x18)).toBe(1n);
    expect(u64(e4.bytes, 0x20)).toBe(0xffffffffffffffffn);
    expect(u64(e4.bytes, 0x28)).toBe(3n);
    expect(u32(e4.bytes, 0x30)).toBe(100);
    expect(e4.bytes[0x30 + 0x0d]).toBe(0x7f);
  });

  test('CSwitch header defaults to PERFINFO32 with pointerSize 4', () => {
    const t = writeTrace({ pointerSize: 4, events: [cs(0, 2_000_000n, { version: 4 })] });
    expect(u32(parse(t).perCpu.get(0)![0].bytes, 0)).toBe(0xc0100004);
  });

  test('SpinLock x64 (0x38) and x86 (0x30) layouts, flags byte, reserved zero', () => {
    const t = writeTrace({
      numberOfProcessors: 1,
      events: [
        spin(0, 2_000_000n, { acquireTime: 0x1111222233334444n, releaseTime: 0x5555666677778888n, waitTimeInCycles: 0xaabbccdd, spinCount: 77, threadId: 0x4444, interruptCount: 5, irql: 12, acquireDepth: 3, acquireMode: 4, executeDpc: true, executeIsr: true }),
        spin(0, 2_000_001n, { header: 'PERFINFO32', spinLockAddress: 0x80001234n, callerAddress: 0x80005678n, acquireMode: 1, executeDpc: false, executeIsr: true, version: 3 }),
      ],
    });
    const [a, b] = parse(t).perCpu.get(0)!;
    expect(u32(a.bytes, 0)).toBe(0xc0110002);
    expect(a.hookId).toBe(0x0529);
    expect(a.size).toBe(0x10 + 0x38);
    const p = a.bytes.subarray(0x10);
    expect(u64(p, 0x00)).toBe(0xfffff80012345678n);
    expect(u64(p, 0x08)).toBe(0xfffff800abcdef01n);
    expect(u64(p, 0x10)).toBe(0x1111222233334444n);
    expect(u64(p, 0x18)).toBe(0x5555666677778888n);
    expect(u32(p, 0x20)).toBe(0xaabbccdd);
    expect(u32(p, 0x24)).toBe(77);
    expect(u32(p, 0x28)).toBe(0x4444);
    expect(u32(p, 0x2c)).toBe(5);
    expect(p[0x30]).toBe(12);
    expect(p[0x31]).toBe(3);
    expect(p[0x32]).toBe(4 | 0x40 | 0x80);
    expect([...p.subarray(0x33, 0x38)]).toEqual([0, 0, 0, 0, 0]);
    expect(u32(b.bytes, 0)).toBe(0xc0100003);
    expect(b.size).toBe(0x10 + 0x30);
    const q = b.bytes.subarray(0x10);
    expect(u32(q, 0x00)).toBe(0x80001234);
    expect(u32(q, 0x04)).toBe(0x80005678);
    expect(u64(q, 0x08)).toBe(1000n);
    expect(u64(q, 0x10)).toBe(2000n);
    expect(u32(q, 0x18)).toBe(7);
    expect(u32(q, 0x1c)).toBe(3);
    expect(u32(q, 0x20)).toBe(0x1234);
    expect(u32(q, 0x24)).toBe(2);
    expect(q[0x28]).toBe(2);
    expect(q[0x29]).toBe(1);
    expect(q[0x2a]).toBe(1 | 0x80);
    expect([...q.subarray(0x2b, 0x30)]).toEqual([0, 0, 0, 0, 0]);
  });
});

describe('raw events of every header kind', () => {
  const G = '3d6fa8d1-fe05-11d0-9dda-00c04fd7ba7c';
  test('guidToBytes is the mixed-endian Windows layout', () => {
    expect([...guidToBytes('{' + G.toUpperCase() + '}')]).toEqual([
      0xd1, 0xa8, 0x6f, 0x3d, 0x05, 0xfe, 0xd0, 0x11, 0x9d, 0xda, 0x00, 0xc0, 0x4f, 0xd7, 0xba, 0x7c,
    ]);
    expect(() => guidToBytes('not-a-guid')).toThrow(RangeError);
  });

  test('header fields of SYSTEM, COMPACT, PERFINFO, FULL, INSTANCE, EVENT_HEADER and MESSAGE', () => {
    const pl = new Uint8Array([1, 2, 3, 4, 5]);
    const t = writeTrace({
      numberOfProcessors: 1,
      events: [
        raw(0, 2_000_000n, 'SYSTEM32', { hookId: 0x0a10, version: 3, threadId: 11, processId: 22, payload: pl, kernelTime: 5, userTime: 6 }),
        raw(0, 2_000_001n, 'COMPACT64', { hookId: 0x0a11, version: 1, threadId: 12, processId: 23, payload: pl }),
        raw(0, 2_000_002n, 'PERFINFO32', { hookId: 0x0f2e, version: 2, payload: pl, pmcCounters: [9n] }),
        raw(0, 2_000_003n, 'FULL_HEADER64', { provider: G, classType: 7, level: 4, version: 0x0102, threadId: 13, processId: 24, payload: pl }),
        raw(0, 2_000_004n, 'INSTANCE32', { provider: G, classType: 8, instanceId: 0x1234, parentInstanceId: 0x5678, parentGuid: G, payload: pl }),
        raw(0, 2_000_005n, 'EVENT_HEADER64', {
          provider: G, eventId: 0x0201, version: 3, channel: 0x0b, level: 2, opcode: 9, task: 0x0403, keyword: 0x8000000000000001n,
          threadId: 14, processId: 25, payload: pl,
          extendedItems: [{ extType: 0x0c, data: new Uint8Array(56).fill(7) }, { extType: 0x0b, data: new Uint8Array(100).fill(8) }],
        }),
        raw(0, 2_000_006n, 'EVENT_HEADER32', { provider: G, payload: pl }),
        raw(0, 2_000_007n, 'MESSAGE', { messageNumber: 0x4321, payload: pl }),
      ],
    });
    const evs = parse(t).perCpu.get(0)!;
    expect(evs.map((e) => e.headerType)).toEqual([0x01, 0x04, 0x10, 0x14, 0x0b, 0x13, 0x12, 0x0f]);
    const [sys, cmp, pi, full, inst, eh, eh32, msg] = evs;
    expect(u32(sys.bytes, 0)).toBe(0xc0010003);
    expect(sys.size).toBe(0x20 + 5);
    expect(sys.hookId).toBe(0x0a10);
    expect(u32(sys.bytes, 8)).toBe(11);
    expect(u32(sys.bytes, 0xc)).toBe(22);
    expect(sys.timestamp).toBe(2_000_000n);
    expect(u32(sys.bytes, 0x18)).toBe(5);
    expect(u32(sys.bytes, 0x1c)).toBe(6);
    expect([...sys.bytes.subarray(0x20)]).toEqual([...pl]);
    expect(u32(cmp.bytes, 0)).toBe(0xc0040001);
    expect(cmp.size).toBe(0x18 + 5);
    expect([...cmp.bytes.subarray(0x18)]).toEqual([...pl]);
    expect(u32(pi.bytes, 0)).toBe(0xc0100102);
    expect(pi.size).toBe(0x10 + 8 + 5);
    expect(u64(pi.bytes, 0x10)).toBe(9n);
    expect(u16(full.bytes, 0)).toBe(0x30 + 5);
    expect(full.bytes[2]).toBe(0x14);
    expect(full.bytes[3]).toBe(0xc0);
    expect(full.bytes[4]).toBe(7);
    expect(full.bytes[5]).toBe(4);
    expect(u16(full.bytes, 6)).toBe(0x0102);
    expect(u32(full.bytes, 8)).toBe(13);
    expect(u32(full.bytes, 0xc)).toBe(24);
    expect([...full.bytes.subarray(0x18, 0x28)]).toEqual([...guidToBytes(G)]);
    expect(u16(inst.bytes, 0)).toBe(0x48 + 5);
    expect(inst.bytes[2]).toBe(0x0b);
    expect(u32(inst.bytes, 0x30)).toBe(0x1234);
    expect(u32(inst.bytes, 0x34)).toBe(0x5678);
    expect([...inst.bytes.subarray(0x38, 0x48)]).toEqual([...guidToBytes(G)]);
    // EVENT_HEADER: items {u16 aligned size, u16 type, u16 linkage, u16 data size}
    expect(u16(eh.bytes, 0)).toBe(0x50 + 64 + 112 + 5);
    expect(u16(eh.bytes, 2)).toBe(0xc013);
    expect(u16(eh.bytes, 4)).toBe(1);
    expect(u32(eh.bytes, 8)).toBe(14);
    expect([...eh.bytes.subarray(0x18, 0x28)]).toEqual([...guidToBytes(G)]);
    expect(u16(eh.bytes, 0x28)).toBe(0x0201);
    expect(eh.bytes[0x2a]).toBe(3);
    expect(eh.bytes[0x2b]).toBe(0x0b);
    expect(eh.bytes[0x2c]).toBe(2);
    expect(eh.bytes[0x2d]).toBe(9);
    expect(u16(eh.bytes, 0x2e)).toBe(0x0403);
    expect(u64(eh.bytes, 0x30)).toBe(0x8000000000000001n);
    expect([u16(eh.bytes, 0x50), u16(eh.bytes, 0x52), u16(eh.bytes, 0x54), u16(eh.bytes, 0x56)]).toEqual([64, 0x0c, 1, 56]);
    expect([u16(eh.bytes, 0x90), u16(eh.bytes, 0x92), u16(eh.bytes, 0x94), u16(eh.bytes, 0x96)]).toEqual([112, 0x0b, 0, 100]);
    expect(eh.bytes[0x98 + 99]).toBe(8);
    expect([...eh.bytes.subarray(0x98 + 100, 0x98 + 104)]).toEqual([0, 0, 0, 0]);
    expect(eh.hdr).toBe(0x50 + 176);
    expect([...eh.bytes.subarray(eh.hdr)]).toEqual([...pl]);
    expect(u16(eh32.bytes, 2)).toBe(0xc012);
    expect(u16(eh32.bytes, 4)).toBe(0);
    expect(u16(msg.bytes, 0)).toBe(8 + 5);
    expect((msg.bytes[3] & 0xd0)).toBe(0x90);
    expect(u16(msg.bytes, 4)).toBe(0x4321);
    expect(u16(msg.bytes, 6)).toBe(0);
  });

  test('randomNoiseEvents: every header kind, PEBS/PMC and EVENT_HEADER items, sizes, order, determinism', () => {
    const a = randomNoiseEvents(new Rng(5), 400, { cpus: 3, startTimestamp: 2_000_000n, pointerSize: 8 });
    const b = randomNoiseEvents(new Rng(5), 400, { cpus: 3, startTimestamp: 2_000_000n, pointerSize: 8 });
    expect(a).toEqual(b);
    const kinds = new Set(a.map((e) => e.headerType));
    expect(kinds.size).toBe(13);
    expect(new Set(a.slice(0, 13).map((e) => e.headerType)).size).toBe(13);
    expect(a.some((e) => e.headerType.startsWith('PERFINFO') && e.pebsIndex !== undefined && (e.pmcCounters?.length ?? 0) > 0)).toBe(true);
    expect(a.some((e) => e.headerType.startsWith('EVENT_HEADER') && (e.extendedItems?.length ?? 0) > 0)).toBe(true);
    for (let i = 0; i < a.length; i++) {
      expect(a[i].payload.length).toBeLessThanOrEqual(300);
      expect(a[i].cpu).toBeLessThan(3);
      if (i) expect(a[i].timestamp >= a[i - 1].timestamp).toBe(true);
      expect([0x0524, 0x0525, 0x0529, 0, 5]).not.toContain(a[i].hookId ?? -1);
    }
    // they all write and re-walk
    const t = writeTrace({ numberOfProcessors: 3, events: a });
    const p = parse(t);
    expect([...p.perCpu.values()].reduce((s, l) => s + l.length, 0)).toBe(400);
  });
});

describe('compact context switches (0x0525)', () => {
  const LIMIT = 500n * 156250n; // 500 ticks of 15.625 ms at 10 MHz
  const T = 10_000_000n;

  function one(switches: EventSpec[], opts: Partial<TraceDescription> = {}) {
    const t = writeTrace({ numberOfProcessors: 2, events: switches, ...opts });
    return { t, p: parse(t) };
  }

  test('batch framing: PERFINFO v2 header, FirstTimeStamp, TidTable in order of first appearance, base priorities, unused slots zero', () => {
    const { t, p } = one([
      sw(1, T, 0x100, { oldThreadPriority: 10, oldThreadBasePriority: 8 }),
      sw(1, T + 5n, 0),
      sw(1, T + 9n, 0x200, { oldThreadPriority: 13, oldThreadBasePriority: 13 }),
      sw(1, T + 20n, 0x100, { oldThreadPriority: 9, oldThreadBasePriority: 9 }),
      sw(1, T + 30n, 0x300, { oldThreadPriority: 5, oldThreadBasePriority: -3 }),
    ]);
    expect(p.batches.length).toBe(1);
    const b = p.batches[0];
    expect(b.cpu).toBe(1);
    expect(b.marker).toBe(0xc0110002);
    expect(b.first).toBe(T);
    expect(b.eventTs).toBe(T + 30n);
    expect(b.tids).toEqual([0x100, 0x200, 0x300, ...Array(13).fill(0)]);
    expect(b.base).toEqual([8, 13, -3, ...Array(13).fill(0)]);
    expect(b.packets.map((k) => k.delta)).toEqual([0, 5, 4, 11, 10]);
    expect(b.packets.map((k) => k.type)).toEqual([2, 0, 2, 2, 3]);
    // the third switch of 0x100 uses the base priority stored at its first appearance (8): inc 1
    expect(b.packets[3].idx).toBe(0);
    expect(b.packets[3].inc).toBe(1);
    // 0x300: priority 5 - base -3 = 8 does not fit PriInc: FULL with the absolute priority
    expect(b.packets[4]).toMatchObject({ type: 3, idx: 2, pri: 5, wait: 0, wr: 6 });
    expect(t.compactBatches).toBe(1);
    expect(t.compactPackets.map((k) => k.kind)).toEqual(['LITE', 'IDLE_SHORT', 'LITE', 'LITE', 'FULL']);
    expect(b.dataSize).toBe(0x58 + 4 + 2 + 4 + 4 + 8);
  });

  test('packet kinds at every boundary (D.3) and bit layouts (D.4)', () => {
    const cases: { s: Partial<CompactSwitchSpec>; tid: number; d: bigint; kind: number }[] = [
      { tid: 0, d: 16383n, s: {}, kind: 0 },
      { tid: 0, d: 16384n, s: {}, kind: 1 },
      { tid: 0, d: (1n << 30n) - 1n, s: {}, kind: 1 },
      { tid: 8, d: 131071n, s: { newThreadWaitTime: 1, oldThreadPriority: 15, oldThreadBasePriority: 8 }, kind: 2 },
      { tid: 8, d: 131072n, s: { newThreadWaitTime: 1, oldThreadPriority: 15, oldThreadBasePriority: 8 }, kind: 3 },
      { tid: 8, d: 0n, s: { newThreadWaitTime: 2, oldThreadPriority: 8, oldThreadBasePriority: 8 }, kind: 3 },
      { tid: 8, d: 0n, s: { newThreadWaitTime: 0, oldThreadPriority: 16, oldThreadBasePriority: 8 }, kind: 3 },
      { tid: 8, d: 0n, s: { newThreadWaitTime: 0, oldThreadPriority: 7, oldThreadBasePriority: 8 }, kind: 3 },
      { tid: 8, d: 0n, s: { newThreadWaitTime: 0, oldThreadPriority: 8, oldThreadBasePriority: 8 }, kind: 2 },
    ];
    for (const c of cases) {
      // a first switch at T (idle, so the TidTable base comes from the case), then the case at T + d
      const timerResolution = 10_000_000; // 500 ticks >> 2^30: the tick limit does not interfere
      const { t, p } = one([sw(0, T, 0), sw(0, T + c.d, c.tid, c.s)], { timerResolution });
      expect(p.batches.length).toBe(1);
      const k = p.batches[0].packets[1];
      expect(k.type).toBe(c.kind);
      expect(k.delta).toBe(Number(c.d));
      expect(t.compactPackets[1].kind).toBe(['IDLE_SHORT', 'IDLE', 'LITE', 'FULL'][c.kind]);
      if (c.kind === 2) expect(k.inc).toBe(c.s.oldThreadPriority! - c.s.oldThreadBasePriority!);
      if (c.kind === 3) {
        expect(k.pri).toBe(c.s.oldThreadPriority);
        expect(k.wait).toBe(c.s.newThreadWaitTime);
      }
    }
  });

  test('full-width field values survive the bit packing', () => {
    const bias = 40;
    const { p } = one([
      sw(0, T, 0x10, { oldThreadPriority: 31, oldThreadBasePriority: 0, oldThreadState: 9, newThreadWaitTime: 0x1ffff }),
      sw(0, T + (1n << 30n) - 1n, 0x10, { oldThreadPriority: 31, oldThreadBasePriority: 0, oldThreadState: 5, oldThreadWaitReason: 39, newThreadWaitTime: 5_000_000 }),
      sw(0, T + (1n << 30n) - 1n + 131071n, 0x10, { oldThreadPriority: 7, oldThreadBasePriority: 0, oldThreadState: 5, oldThreadWaitReason: 39, newThreadWaitTime: 1 }),
      sw(0, T + (1n << 30n) - 1n + 131071n + 16383n, 0),
    ], { timerResolution: 100_000_000 });
    const [b] = p.batches;
    const [a, c, d, e] = b.packets;
    expect([a.type, a.delta, a.idx, a.wr, a.pri, a.wait]).toEqual([3, 0, 0, bias + 9, 31, 0x1ffff]);
    expect([c.type, c.delta, c.idx, c.wr, c.pri, c.wait]).toEqual([3, (1 << 30) - 1, 0, 39, 31, 0x1ffff]); // saturated
    expect([d.type, d.delta, d.idx, d.wr, d.inc]).toEqual([2, 131071, 0, 39, 7]);
    expect([e.type, e.delta]).toEqual([0, 16383]);
    // raw bits of the LITE packet, computed by hand
    const ev = p.perCpu.get(0)![0];
    const off = ev.hdr + 0x58 + 8 + 8;
    expect(u32(ev.bytes, off)).toBe((2 | (0 << 2) | (7 << 6) | (39 << 9) | (131071 * 32768)) >>> 0);
  });

  test('OldThreadStateWr bias per build (D.5, C.7) and the RangeError for a wait reason >= bias', () => {
    // 1507-1703 (10240-15063) 39, 1709 (16299) onward 40 through 22H2: wdm.h 10240/14393/16299, 1703 kernel symbols
    const table: [number, number][] = [
      [2600, 27], [7601, 37], [9600, 39], [10240, 39], [14393, 39], [15063, 39], [16299, 40], [17134, 40], [17763, 40],
      [18362, 40], [18363, 40], [19041, 40], [19045, 40], [22000, 42], [22631, 42], [26100, 43],
    ];
    for (const [build, bias] of table) {
      const { t, p } = one([sw(0, T, 0x20, { oldThreadState: 1 }), sw(0, T + 1n, 0x20, { oldThreadState: 5, oldThreadWaitReason: bias - 1 })], { build });
      expect(t.bias).toBe(bias);
      const [r, w] = p.batches[0].packets;
      expect(r.wr).toBe(bias + 1);
      expect(w.wr).toBe(bias - 1);
      expect(() => writeTrace({ build, events: [sw(0, T, 0x20, { oldThreadState: 5, oldThreadWaitReason: bias })] })).toThrow(/oldThreadWaitReason/);
    }
    const { t, p } = one([sw(0, T, 0x20, { oldThreadState: 2 })], { build: 19041, compactBias: 45 });
    expect(t.bias).toBe(45);
    expect(p.batches[0].packets[0].wr).toBe(47);
  });

  test('flush: TidTable full and a new thread comes', () => {
    const list = Array.from({ length: 17 }, (_, i) => sw(0, T + BigInt(i), 0x100 + 4 * i));
    list.push(sw(0, T + 17n, 0x100)); // known in batch 1? no: batch 2 only holds 0x140
    const w = new TraceWriter({ numberOfProcessors: 1 });
    list.forEach((e) => w.add(e));
    w.finish();
    expect(w.reasons.tidTableFull).toBe(1);
    const { p } = one(list);
    expect(p.batches.length).toBe(2);
    expect(p.batches[0].packets.length).toBe(16);
    expect(p.batches[0].tids).toEqual(list.slice(0, 16).map((e) => e.oldThreadId));
    expect(p.batches[0].eventTs).toBe(T + 16n); // logged when the 17th thread came
    expect(p.batches[1].first).toBe(T + 16n);
    expect(p.batches[1].packets[0].delta).toBe(0);
    expect(p.batches[1].tids.slice(0, 3)).toEqual([0x140, 0x100, 0]);
    // idle switches and known threads do not need a slot
    const list2 = [...list.slice(0, 16), sw(0, T + 16n, 0), sw(0, T + 17n, 0x104)];
    expect(one(list2).p.batches.length).toBe(1);
  });

  test('flush: more than 500 ticks since FirstTimeStamp (tick = TimerResolution, converted with PerfFreq)', () => {
    const at = one([sw(0, T, 0x10), sw(0, T + LIMIT / 2n, 0), sw(0, T + LIMIT, 0x10)]).p;
    expect(at.batches.length).toBe(1);
    const over = one([sw(0, T, 0x10), sw(0, T + LIMIT / 2n, 0), sw(0, T + LIMIT + 1n, 0x10)]).p;
    expect(over.batches.length).toBe(2);
    expect(over.batches[0].eventTs).toBe(T + LIMIT + 1n);
    expect(over.batches[1].first).toBe(T + LIMIT + 1n);
    // another clock: 3 MHz QPC, TimerResolution 10000 (1 ms) -> 500 ms = 1_500_000 ticks
    const q = { perfFreq: 3_000_000n, timerResolution: 10_000 };
    expect(one([sw(0, T, 0x10), sw(0, T + 1_500_000n, 0x10)], q).p.batches.length).toBe(1);
    expect(one([sw(0, T, 0x10), sw(0, T + 1_500_001n, 0x10)], q).p.batches.length).toBe(2);
    // system-time clock: ticks are 100 ns
    const s = { clockType: 2 as const, timerResolution: 10_000 };
    expect(one([sw(0, T, 0x10), sw(0, T + 5_000_000n, 0x10)], s).p.batches.length).toBe(1);
    expect(one([sw(0, T, 0x10), sw(0, T + 5_000_001n, 0x10)], s).p.batches.length).toBe(2);
    // CPU-cycle clock: 2000 MHz, TimerResolution 10 (1 µs) -> 500 µs = 1_000_000 cycles
    const c = { clockType: 3 as const, cpuSpeedInMHz: 2000, timerResolution: 10 };
    expect(one([sw(0, T, 0x10), sw(0, T + 1_000_000n, 0x10)], c).p.batches.length).toBe(1);
    expect(one([sw(0, T, 0x10), sw(0, T + 1_000_001n, 0x10)], c).p.batches.length).toBe(2);
  });

  test('flush: delta does not fit 30 bits', () => {
    const big = { timerResolution: 10_000_000 }; // limit 5e9 ticks > 2^30
    const ok = one([sw(0, T, 0), sw(0, T + (1n << 30n) - 1n, 0)], big).p;
    expect(ok.batches.length).toBe(1);
    expect(ok.batches[0].packets[1]).toMatchObject({ type: 1, delta: (1 << 30) - 1 });
    const w = new TraceWriter({ numberOfProcessors: 1, ...big });
    w.add(sw(0, T, 0));
    w.add(sw(0, T + (1n << 30n), 0));
    w.finish();
    expect(w.reasons).toMatchObject({ deltaOverflow: 1, end: 1, tickLimit: 0 });
    const over = one([sw(0, T, 0), sw(0, T + (1n << 30n), 0)], big).p;
    expect(over.batches.length).toBe(2);
    expect(over.batches[1].first).toBe(T + (1n << 30n));
  });

  test('flush: fewer than 8 packet bytes left (0x400 bytes including the 0x58 header)', () => {
    // 8-byte FULL packets: 117 fit exactly into 0x3A8
    const full = Array.from({ length: 300 }, (_, i) => sw(0, T + BigInt(i), 0x10, { newThreadWaitTime: 100 }));
    const pf = one(full).p;
    expect(pf.batches.map((b) => b.packets.length)).toEqual([117, 117, 66]);
    expect(pf.batches[0].dataSize).toBe(0x400);
    expect(pf.batches[0].eventTs).toBe(T + 116n); // logged at once, at its last switch
    // 4-byte LITE packets: 233 (4 bytes left after them)
    const lite = Array.from({ length: 500 }, (_, i) => sw(0, T + BigInt(i), 0x10));
    expect(one(lite).p.batches.map((b) => b.packets.length)).toEqual([233, 233, 34]);
    // 2-byte IDLE_SHORT packets: 465 (6 bytes left)
    const idle = Array.from({ length: 1000 }, (_, i) => sw(0, T + BigInt(i), 0));
    const pi = one(idle).p;
    expect(pi.batches.map((b) => b.packets.length)).toEqual([465, 465, 70]);
    expect(pi.batches[0].dataSize).toBe(0x58 + 930);
    const w = new TraceWriter({ numberOfProcessors: 1 });
    idle.forEach((e) => w.add(e));
    w.finish();
    expect(w.reasons).toMatchObject({ full: 2, end: 1 });
  });

  test('flush at the end of the trace: batch event at the latest timestamp of its processor; per-CPU batches', () => {
    const { t, p } = one([sw(0, T, 0x10), sw(1, T + 1n, 0x20), cs(0, T + 50n), sw(1, T + 60n, 0)]);
    expect(p.batches.map((b) => [b.cpu, b.eventTs, b.packets.length])).toEqual([[0, T + 50n, 1], [1, T + 60n, 2]]);
    // the CSwitch at T+50 precedes the batch in cpu 0's stream
    expect(p.perCpu.get(0)!.map((e) => e.hookId)).toEqual([0x0524, 0x0525]);
    expect(t.compactPackets.map((k) => [k.cpu, k.batch, k.kind])).toEqual([[0, 0, 'LITE'], [1, 1, 'LITE'], [1, 1, 'IDLE_SHORT']]);
    // a batch logged on a trigger sits at that time in the stream
    const q = one([sw(0, T, 0x10), cs(0, T + 5n), ...Array.from({ length: 16 }, (_, i) => sw(0, T + 10n + BigInt(i), 0x100 + 4 * i))]).p;
    expect(q.perCpu.get(0)!.map((e) => [e.hookId, e.timestamp])).toEqual([[0x0524, T + 5n], [0x0525, T + 25n], [0x0525, T + 25n]]);
  });

  test('PERFINFO32 batches and the header of the first switch', () => {
    const p = one([sw(0, T, 0x10, { header: 'PERFINFO32' }), sw(0, T + 1n, 0x10)]).p;
    expect(p.batches[0].marker).toBe(0xc0100002);
    expect(one([sw(0, T, 0)], { pointerSize: 4 }).p.batches[0].marker).toBe(0xc0100002);
  });

  test('property: packets reconstruct every switch; kinds and batch boundaries follow D.3/D.6 exactly', () => {
    const tidArb = fc.oneof({ weight: 1, arbitrary: fc.constant(0) }, { weight: 4, arbitrary: fc.integer({ min: 1, max: 24 }).map((x) => x * 4) });
    const deltaArb = fc.oneof(
      { weight: 8, arbitrary: fc.integer({ min: 0, max: 20_000 }) },
      { weight: 2, arbitrary: fc.integer({ min: 0, max: 200_000 }) },
      { weight: 1, arbitrary: fc.integer({ min: 0, max: 80_000_000 }) },
      { weight: 1, arbitrary: fc.integer({ min: (1 << 30) - 2, max: (1 << 30) + 2 }) },
    );
    const swArb = fc.record({
      cpu: fc.integer({ min: 0, max: 1 }),
      d: deltaArb,
      tid: tidArb,
      base: fc.integer({ min: 0, max: 20 }),
      inc: fc.integer({ min: -2, max: 10 }),
      state: fc.integer({ min: 0, max: 9 }),
      wr: fc.integer({ min: 0, max: 39 }),
      wait: fc.oneof(fc.integer({ min: 0, max: 2 }), fc.integer({ min: 0, max: 300_000 })),
    });
    fc.assert(
      fc.property(fc.array(swArb, { minLength: 1, maxLength: 700 }), (arr) => {
        const bias = 40;
        const clock = [T, T];
        const specs = arr.map((a) => {
          clock[a.cpu] += BigInt(a.d);
          const pri = Math.min(31, Math.max(0, a.base + a.inc));
          return sw(a.cpu, clock[a.cpu], a.tid, {
            oldThreadPriority: pri, oldThreadBasePriority: a.base, oldThreadState: a.state, oldThreadWaitReason: a.wr, newThreadWaitTime: a.wait,
          });
        });
        const t = writeTrace({ numberOfProcessors: 2, events: specs });
        const p = parse(t);
        const rec = switchesOf(p, bias);
        for (const cpu of [0, 1]) {
          const input = specs.filter((s) => s.cpu === cpu);
          const got = rec.get(cpu) ?? [];
          expect(got.length).toBe(input.length);
          const infos = t.compactPackets.filter((k) => k.cpu === cpu);
          input.forEach((s, i) => {
            const g = got[i];
            expect(g.ts).toBe(s.timestamp);
            expect(g.tid).toBe(s.oldThreadId);
            expect(infos[i].kind).toBe(['IDLE_SHORT', 'IDLE', 'LITE', 'FULL'][g.type]);
            if (s.oldThreadId !== 0) {
              expect(g.pri).toBe(s.oldThreadPriority);
              expect(g.state).toBe(s.oldThreadState);
              if (s.oldThreadState === 5) expect(g.wr).toBe(s.oldThreadWaitReason);
              if (g.type === 3) expect(g.wait).toBe(Math.min(s.newThreadWaitTime, 0x1ffff));
              else expect(s.newThreadWaitTime).toBeLessThanOrEqual(1);
            }
          });
          // batch boundaries: greedy partition by the D.6 rules, kinds by D.3
          const batches = p.batches.filter((b) => b.cpu === cpu);
          let k = 0;
          batches.forEach((b, bi) => {
            const members = input.slice(k, k + b.packets.length);
            expect(b.first).toBe(members[0].timestamp);
            expect(b.eventTs >= members[members.length - 1].timestamp).toBe(true);
            expect(b.dataSize).toBeLessThanOrEqual(0x400);
            const table: number[] = [];
            const base: number[] = [];
            let used = 0;
            members.forEach((s, j) => {
              const delta = j === 0 ? 0n : s.timestamp - members[j - 1].timestamp;
              if (j > 0) {
                expect(0x3a8 - used).toBeGreaterThanOrEqual(8);
                expect(delta < 1n << 30n).toBe(true);
                expect(s.timestamp - b.first <= LIMIT).toBe(true);
                expect(s.oldThreadId === 0 || table.includes(s.oldThreadId) || table.length < 16).toBe(true);
              }
              let kind: number;
              if (s.oldThreadId === 0) kind = delta < 16384n ? 0 : 1;
              else {
                let idx = table.indexOf(s.oldThreadId);
                if (idx < 0) {
                  idx = table.push(s.oldThreadId) - 1;
                  base.push(s.oldThreadBasePriority);
                }
                const inc = s.oldThreadPriority - base[idx];
                kind = s.newThreadWaitTime <= 1 && delta < 131072n && inc >= 0 && inc <= 7 ? 2 : 3;
              }
              expect(b.packets[j].type).toBe(kind);
              used += [2, 4, 4, 8][kind];
            });
            expect(b.tids).toEqual([...table, ...Array(16 - table.length).fill(0)]);
            expect(b.base).toEqual([...base, ...Array(16 - base.length).fill(0)]);
            k += members.length;
            const next = input[k];
            if (next) {
              // this batch had to end before `next`
              const last = members[members.length - 1];
              const reasons = [
                0x3a8 - used < 8,
                next.timestamp - last.timestamp >= 1n << 30n,
                next.timestamp - b.first > LIMIT,
                next.oldThreadId !== 0 && !table.includes(next.oldThreadId) && table.length === 16,
              ];
              expect(reasons.some(Boolean)).toBe(true);
              expect(b.eventTs <= next.timestamp).toBe(true);
              expect(batches[bi + 1].packets[0].delta).toBe(0);
            }
          });
          expect(k).toBe(input.length);
        }
      }),
      { numRuns: 60, seed: 4242 },
    );
  });
});

describe('compressed buffers', () => {
  test('BufferFlag 0x40, on-disk BufferSize, SavedOffset = Offset = uncompressed size, payload decompresses to the uncompressed buffer', () => {
    const rng = new Rng(3);
    const events: EventSpec[] = [
      ...randomNoiseEvents(rng, 600, { cpus: 2, startTimestamp: 2_000_000n, pointerSize: 8 }),
      ...Array.from({ length: 2000 }, (_, i) => cs(i % 2, 2_000_000n + BigInt(i * 300), { newThreadId: i })),
      ...Array.from({ length: 3000 }, (_, i) => sw(i % 2, 2_000_000n + BigInt(i * 200), (i % 7) * 4)),
    ];
    const plain = writeTrace({ bufferSize: 0x2000, events });
    const comp = writeTrace({ bufferSize: 0x2000, events, compress: true });
    const a = parse(plain);
    const b = parse(comp);
    expect(b.bufs.length).toBe(a.bufs.length);
    // header buffer never compressed; layout version 2.0; compressed file mode
    expect(b.header.flag).toBe(0x21);
    expect(b.header.bufferSize).toBe(0x2000);
    const f = walkEvents(b.header.data, b.header.filled)[0].bytes.subarray(0x20);
    expect([...f.subarray(4, 8)]).toEqual([10, 0, 2, 0]);
    expect(u32(f, 0x20) & 0x04000000).toBe(0x04000000);
    let off = b.header.bufferSize;
    let variable = false;
    b.data.forEach((cb, i) => {
      const pb = a.data[i];
      expect(cb.fileOffset).toBe(off);
      off += cb.bufferSize;
      expect(cb.flag).toBe(pb.flag | 0x40);
      expect(comp.buffers[i + 1].compressed).toBe(true);
      expect(comp.buffers[i + 1].size).toBe(cb.bufferSize);
      expect(cb.bufferSize).not.toBe(0x2000);
      if (cb.bufferSize % 8 !== 0) variable = true;
      expect(cb.saved).toBe(pb.filled);
      expect(cb.filled).toBe(pb.filled);
      expect([cb.seq, cb.cpu, cb.timestamp, cb.current, cb.state, cb.type]).toEqual([pb.seq, pb.cpu, pb.timestamp, pb.current, pb.state, pb.type]);
      expect(Buffer.compare(Buffer.from(cb.data.subarray(0x48, cb.saved)), Buffer.from(pb.data.subarray(0x48, pb.filled)))).toBe(0);
    });
    expect(off).toBe(comp.bytes.length);
    expect(variable).toBe(true);
    expect(comp.bytes.length).toBeLessThan(plain.bytes.length);
  });
});

describe('validation', () => {
  const bad = (events: EventSpec[], re: RegExp, opts: Partial<TraceDescription> = {}) =>
    expect(() => writeTrace({ events, ...opts })).toThrow(re);
  test('RangeErrors name the field', () => {
    bad([cs(2, 2_000_000n)], /events\[0\]\.cpu/);
    bad([cs(0, 2_000_000n), cs(0, 2_000_000n, { oldThreadPriority: 300 })], /events\[1\]\.oldThreadPriority/);
    bad([cs(0, 2_000_000n, { version: 5 as 4 })], /version/);
    bad([sw(0, 2_000_000n, 8, { oldThreadPriority: 32 })], /oldThreadPriority/);
    bad([sw(0, 2_000_000n, 8, { oldThreadState: 10 })], /oldThreadState/);
    bad([spin(0, 2_000_000n, { header: 'PERFINFO32' })], /spinLockAddress/);
    bad([spin(0, 2_000_000n, { acquireMode: 64 })], /acquireMode/);
    bad([raw(0, 2_000_000n, 'SYSTEM64', { payload: new Uint8Array(0x10000) })], /payload/);
    bad([raw(0, 2_000_000n, 'SYSTEM64', { payload: new Uint8Array(0x2000) })], /payload.*buffer/, { bufferSize: 0x2000 });
    bad([raw(0, 2_000_000n, 'FULL_HEADER64', { provider: 'xyz' })], /provider/);
    bad([raw(0, 2_000_000n, 'COMPACT64', { pebsIndex: 1n })], /pebsIndex/);
    bad([raw(0, 2_000_000n, 'SYSTEM64', { extendedItems: [{ extType: 1, data: new Uint8Array(1) }] })], /extendedItems/);
    bad([{ ...cs(0, 0n), timestamp: 5 as unknown as bigint }], /timestamp/);
    bad([], /numberOfProcessors/, { numberOfProcessors: 0 });
    bad([], /bufferSize/, { bufferSize: 0x1001 });
    bad([sw(0, 2_000_000n, 8)], /bufferSize/, { bufferSize: 0x400 });
    expect(() => writeTrace({ events: [cs(0, 2_000_000n)] })).not.toThrow();
    expect(() => writeTrace({ events: [cs(2, 2_000_000n)] })).toThrow(RangeError);
    expect(() => writeTrace({ events: [sw(0, 2_000_000n, 8, { oldThreadWaitReason: 40 })] })).toThrow(RangeError);
    // a timestamp going back on one processor is an error for the streaming writer
    const w = new TraceWriter({ numberOfProcessors: 1 });
    w.add(cs(0, 2_000_000n));
    expect(() => w.add(cs(0, 1_999_999n))).toThrow(/timestamp/);
  });
});

describe('Rng and generators', () => {
  test('Rng is deterministic and in range', () => {
    const a = new Rng(123);
    const b = new Rng(123);
    const xs = Array.from({ length: 1000 }, () => a.next());
    expect(xs).toEqual(Array.from({ length: 1000 }, () => b.next()));
    expect(xs.every((x) => Number.isInteger(x) && x >= 0 && x < 2 ** 32)).toBe(true);
    expect(new Set(xs).size).toBeGreaterThan(990);
    const r = new Rng(7);
    for (let i = 0; i < 2000; i++) {
      const v = r.int(-3, 5);
      expect(v >= -3 && v <= 5).toBe(true);
      const w = r.bigint64();
      expect(w >= 0n && w < 1n << 64n).toBe(true);
    }
    expect(r.bytes(13).length).toBe(13);
    expect(['a', 'b']).toContain(r.pick(['a', 'b']));
    expect(new Rng(1).next()).not.toBe(new Rng(2).next());
  });

  test('generateMixedTrace: about targetBytes, exact BuffersWritten, deterministic, equal to the streamed chunks', () => {
    for (const opts of [
      { seed: 1, targetBytes: 1_000_000 },
      { seed: 2, targetBytes: 600_000, pointerSize: 4 as const, cpus: 3, bufferSize: 0x2000 },
      { seed: 3, targetBytes: 700_000, compress: true, mix: { compact: 1, noise: 1 } },
      { seed: 4, targetBytes: 0 },
    ]) {
      const g = generateMixedTrace(opts);
      const p = parse(g);
      const lfh = walkEvents(p.header.data, p.header.filled)[0].bytes.subarray(0x20);
      expect(u32(lfh, 0x24)).toBe(p.bufs.length);
      expect(g.buffers.length).toBe(p.bufs.length);
      if (opts.targetBytes > 0) expect(Math.abs(g.bytes.length - opts.targetBytes)).toBeLessThan(opts.targetBytes * 0.15 + (opts.bufferSize ?? 0x10000));
      const again = generateMixedTrace(opts);
      expect(Buffer.compare(Buffer.from(g.bytes), Buffer.from(again.bytes))).toBe(0);
      const chunks = [...generateTraceChunks(opts)];
      expect(Buffer.compare(Buffer.concat(chunks.map((c) => Buffer.from(c))), Buffer.from(g.bytes))).toBe(0);
      expect(g.events).toBe(p.bufs.reduce((s, b) => s + walkEvents(b.data, b.filled).length, 0));
      // compact packets round trip through the batches
      const rec = switchesOf(p, g.bias);
      for (const [cpu, list] of rec) {
        const infos = g.compactPackets.filter((k) => k.cpu === cpu);
        expect(list.map((s) => [s.ts, s.tid])).toEqual(infos.map((k) => [k.timestamp, k.oldThreadId]));
      }
      expect(p.batches.length).toBe(g.compactBatches);
      for (const [, evs] of p.perCpu) for (let i = 1; i < evs.length; i++) if (evs[i].timestamp !== null && evs[i - 1].timestamp !== null) expect(evs[i].timestamp! >= evs[i - 1].timestamp!).toBe(true);
    }
    const other = generateMixedTrace({ seed: 5, targetBytes: 1_000_000 });
    expect(Buffer.compare(Buffer.from(other.bytes), Buffer.from(generateMixedTrace({ seed: 1, targetBytes: 1_000_000 }).bytes))).not.toBe(0);
  });

  test('generateTraceChunks streams buffer by buffer', () => {
    const it = generateTraceChunks({ seed: 9, targetBytes: 5_000_000 });
    const first = it.next();
    expect(first.done).toBe(false);
    expect(u16(first.value as Uint8Array, 0x36)).toBe(4);
    let n = 0;
    for (const c of it) {
      expect(c.length).toBe(0x10000);
      expect(u16(c, 0x36)).toBe(0);
      n++;
    }
    expect(n).toBe(Math.round((5_000_000 - 0x10000) / 0x10000));
  });
});
