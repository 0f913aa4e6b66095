// The Perfetto output (src/output/perfetto.ts), decoded by two readers independent of its encoder:
// protobufjs with test/fixtures/perfetto/perfetto-etw.proto (Perfetto's messages, field numbers and
// types) for values, and a schema-less wire walker (test/helpers/protowire.ts) for field numbers and wire
// types as they are on the wire. Expected values come from the decoded tables, row by row, and from the
// writer simulation's ground truth (readying threads).
import { fileURLToPath } from 'node:url';
import protobuf from 'protobufjs';
import { describe, expect, test } from 'vitest';
import { allocColumn, TABLE_COLUMNS, type TableName } from '../src/tables/schema.js';
import { createClock, decodeStream, decodeSync, PerfettoWriter, Table, toPerfetto, type Clock, type DecodedTables, type DecodeResult, type PerfettoOptions } from '../src/node.js';
import { TickConverter } from '../src/time.js';
import { ProtoWriter } from '../src/output/protobuf.js';
import { simulateSchedule, writeTrace, type ScheduleOptions } from '../src/writer/index.js';
import { int32Of, readFields, unzigzag32, WIRE, type WireField } from './helpers/protowire.js';

const root = protobuf.loadSync(fileURLToPath(new URL('./fixtures/perfetto/perfetto-etw.proto', import.meta.url)));
const TraceType = root.lookupType('perfetto.protos.Trace');

/* eslint-disable @typescript-eslint/no-explicit-any */
type Obj = Record<string, any>;

/** the trace as plain objects (uint64 as decimal strings, enums as numbers, absent fields absent) */
function decodeTrace(bytes: Uint8Array): { packet: Obj[] } {
  return TraceType.toObject(TraceType.decode(bytes), { longs: String }) as { packet: Obj[] };
}

interface Flat {
  events: Obj[]; // each with its bundle's cpu as `bundleCpu`
  trees: Obj[];
  packets: Obj[];
}

function flatten(bytes: Uint8Array): Flat {
  const { packet = [] } = decodeTrace(bytes);
  const events: Obj[] = [];
  const trees: Obj[] = [];
  for (const p of packet) {
    if (p.etwEvents) for (const e of p.etwEvents.event ?? []) events.push({ ...e, bundleCpu: p.etwEvents.cpu });
    if (p.processTree) trees.push(p.processTree);
  }
  return { events, trees, packets: packet };
}

const key = (e: Obj) => JSON.stringify(e);

/** A table from row objects (absent/null nullable cells are null). */
function tableOf<T extends TableName>(name: T, rows: Record<string, unknown>[]): Table<T> {
  const specs = TABLE_COLUMNS[name];
  const validCol = specs.findIndex((s) => s.name === 'valid');
  const cols = specs.map((s) => allocColumn(s.type, rows.length));
  rows.forEach((row, i) => {
    let v = 0;
    specs.forEach((s, c) => {
      if (c === validCol) return;
      const x = row[s.name];
      if (x === null || x === undefined) {
        if (!s.nullable) throw new Error(`${name}.${s.name} needs a value`);
        return;
      }
      (cols[c] as unknown[])[i] = x;
      v |= 1 << c;
    });
    if (validCol >= 0) (cols[validCol] as Uint32Array)[i] = (v | (1 << validCol)) >>> 0;
  });
  return new Table(name, { length: rows.length, columns: cols });
}

const CLOCK_10MHZ = createClock({ clockType: 1, perfFreq: 10_000_000n, cpuSpeedInMHz: 0, headerTimestamp: 1_000_000n, startTime: 133_000_000_000_000_000n });

// ---------------------------------------------------------------------------------------------
// expected events from table rows

function expectedSwitch(row: Obj, clock: Clock): Obj {
  const cs: Obj = {};
  if (row.newThreadId !== null) cs.newThreadId = row.newThreadId;
  cs.oldThreadId = row.oldThreadId;
  if (row.newThreadPriority !== null) cs.newThreadPriority = row.newThreadPriority;
  if (row.oldThreadPriority !== null) cs.oldThreadPriority = row.oldThreadPriority;
  if (row.previousCState !== null) cs.previousCState = row.previousCState;
  if (row.oldThreadWaitReason !== null) cs[row.oldThreadWaitReason <= 37 ? 'oldThreadWaitReason' : 'oldThreadWaitReasonInt'] = row.oldThreadWaitReason;
  if (row.oldThreadWaitMode !== null) cs[row.oldThreadWaitMode <= 1 ? 'oldThreadWaitMode' : 'oldThreadWaitModeInt'] = row.oldThreadWaitMode;
  if (row.oldThreadState !== null) cs[row.oldThreadState <= 7 ? 'oldThreadState' : 'oldThreadStateInt'] = row.oldThreadState;
  if (row.oldThreadIdealProcessor !== null) cs.oldThreadWaitIdealProcessor = row.oldThreadIdealProcessor;
  if (row.newThreadWaitTime !== null) cs.newThreadWaitTime = row.newThreadWaitTime;
  return { timestamp: clock.toNanoseconds(row.timestamp).toString(), cpu: row.cpu, cSwitch: cs, bundleCpu: row.cpu };
}

function expectedReady(row: Obj, readying: number | null, clock: Clock): Obj {
  const rt: Obj = { tThreadId: row.threadId };
  rt[row.adjustReason <= 2 ? 'adjustReason' : 'adjustReasonInt'] = row.adjustReason;
  rt.adjustIncrement = row.adjustIncrement;
  rt[[0, 1, 2, 4].includes(row.flags) ? 'flag' : 'flagInt'] = row.flags;
  const e: Obj = { timestamp: clock.toNanoseconds(row.timestamp).toString(), cpu: row.cpu };
  if (readying !== null) e.threadId = readying;
  e.readyThread = rt;
  e.bundleCpu = row.cpu;
  return e;
}

/** field order of protobufjs objects follows the .proto; compare without caring about key order */
function canon(e: Obj): Obj {
  const sort = (o: Obj): Obj => Object.fromEntries(Object.keys(o).sort().map((k) => [k, o[k] !== null && typeof o[k] === 'object' && !Array.isArray(o[k]) ? sort(o[k]) : o[k]]));
  return sort(e);
}

function rowsOf<T extends TableName>(t: Table<T>): Obj[] {
  return Array.from({ length: t.length }, (_, i) => t.get(i) as Obj);
}

/** Oracle for the readying thread: new thread of the latest switch on the ready's cpu at or before it. */
function readyingOracle(r: DecodeResult): (row: Obj) => number | null {
  const byCpu = new Map<number, Obj[]>();
  for (const s of rowsOf(r.cswitch)) (byCpu.get(s.cpu) ?? byCpu.set(s.cpu, []).get(s.cpu)!).push(s);
  for (const list of byCpu.values()) list.sort((a, b) => (a.timestamp < b.timestamp ? -1 : a.timestamp > b.timestamp ? 1 : 0));
  return (row) => {
    let best: Obj | null = null;
    for (const s of byCpu.get(row.cpu) ?? []) if (s.timestamp <= row.timestamp) best = s;
    return best ? best.newThreadId : null;
  };
}

// ---------------------------------------------------------------------------------------------
// simulated schedules

const CASES: [string, Partial<ScheduleOptions>][] = [
  ['CSwitch v2-v4', { seed: 21, switchMode: 'cswitch', cswitchVersions: [2, 3, 4], threadVersion: 4 }],
  ['compact', { seed: 22, switchMode: 'compact' }],
  ['mixed per CPU, x86', { seed: 23, switchMode: 'mixed', pointerSize: 4, cpus: 6 }],
];

function simulated(options: Partial<ScheduleOptions>) {
  const sim = simulateSchedule({ seed: 1, cpus: 4, duration: 2_000_000, ...options });
  const bytes = writeTrace(sim.description).bytes;
  return { sim, bytes, r: decodeSync(bytes) };
}

describe.each(CASES)('%s', (_, options) => {
  const { sim, bytes, r } = simulated(options);
  const clock = r.clock!;
  const out = toPerfetto(r);
  const flat = flatten(out);

  test('every cswitch row is one c_switch event: timestamp in ns since the start, cpu, every present field, nothing else', () => {
    expect(clock).not.toBeNull();
    const got = flat.events.filter((e) => e.cSwitch).map(canon);
    // toPerfetto writes one bundle per CPU (ascending), rows in decode order
    const want = rowsOf(r.cswitch)
      .map((row, i) => ({ row, i }))
      .sort((a, b) => a.row.cpu - b.row.cpu || a.i - b.i)
      .map(({ row }) => canon(expectedSwitch(row, clock)));
    expect(got.length).toBe(r.cswitch.length);
    expect(got).toEqual(want);
    // the first event is near the start, none before it
    const first = got.map((e) => BigInt(e.timestamp)).reduce((a, b) => (a < b ? a : b));
    expect(first >= 0n && first < 1_000_000_000n).toBe(true);
  });

  test('null cells are absent fields (compact rows: no new-thread priority; the last switch of a compact CPU: no new thread)', () => {
    const rows = rowsOf(r.cswitch);
    const events = flat.events.filter((e) => e.cSwitch);
    const compact = rows.filter((x) => x.source !== 0).length;
    if (options.switchMode === 'cswitch') {
      expect(compact).toBe(0);
      expect(events.every((e) => 'newThreadPriority' in e.cSwitch && 'newThreadId' in e.cSwitch)).toBe(true);
      return;
    }
    expect(compact).toBeGreaterThan(50);
    const noNewPri = rows.filter((x) => x.newThreadPriority === null).length;
    expect(noNewPri).toBeGreaterThanOrEqual(compact);
    expect(events.filter((e) => !('newThreadPriority' in e.cSwitch)).length).toBe(noNewPri);
    expect(events.filter((e) => !('newThreadId' in e.cSwitch)).length).toBe(rows.filter((x) => x.newThreadId === null).length);
    expect(rows.filter((x) => x.newThreadId === null).length).toBeGreaterThan(0);
  });

  test('every readythread row is one ready_thread event; thread_id is the readying thread of the simulation', () => {
    const oracle = readyingOracle(r);
    const got = flat.events.filter((e) => e.readyThread).map(canon);
    const want = rowsOf(r.readythread)
      .map((row, i) => ({ row, i }))
      .sort((a, b) => a.row.cpu - b.row.cpu || a.i - b.i)
      .map(({ row }) => canon(expectedReady(row, oracle(row), clock)));
    expect(got.length).toBeGreaterThan(50);
    expect(got).toEqual(want);
    // ground truth: the simulation knows who readied whom
    const truth = new Map(sim.readies.map((x) => [`${clock.toNanoseconds(x.timestamp)}/${x.cpu}/${x.threadId}`, x.readyingThreadId]));
    for (const e of got) expect([e.timestamp, e.threadId]).toEqual([e.timestamp, truth.get(`${e.timestamp}/${e.cpu}/${e.readyThread.tThreadId}`)]);
  });

  test('the process tree has every process and thread lifetime with its names', () => {
    expect(flat.trees.length).toBe(1);
    expect(flat.packets[0]!.processTree).toBeDefined(); // toPerfetto writes it first
    const tree = flat.trees[0]!;
    const procs = rowsOf(r.processes).map((p) => {
      const o: Obj = { pid: p.processId, ppid: p.parentId };
      const cmdline = [p.imageFileName, p.commandLine].filter((x) => x !== null && x !== '');
      if (cmdline.length) o.cmdline = cmdline;
      return o;
    });
    const threads = rowsOf(r.threads).map((t) => {
      const o: Obj = { tid: t.threadId, tgid: t.processId };
      if (t.name !== null && t.name !== '') o.name = t.name;
      return o;
    });
    expect(tree.processes).toEqual(procs);
    expect(tree.threads.map(canon)).toEqual(threads.map(canon));
    expect(threads.filter((t) => t.name).length).toBeGreaterThan(3);
    expect(procs.filter((p) => p.cmdline?.length === 2).length).toBeGreaterThan(2);
  });

  test('every packet carries trusted_packet_sequence_id 1; every event its cpu and its bundle\'s', () => {
    expect(flat.packets.every((p) => p.trustedPacketSequenceId === 1)).toBe(true);
    expect(flat.events.every((e) => e.cpu === e.bundleCpu)).toBe(true);
  });

  test('streaming in small chunks (both call orders, borrowed rows) gives the same events and tree as toPerfetto', async () => {
    const whole = flat.events.map((e) => key(canon(e))).sort();
    for (const order of ['switches first', 'readies first'] as const) {
      const parts: Uint8Array[] = [];
      const w = new PerfettoWriter((b) => void parts.push(b.slice()), { clock, flushBytes: 4096 });
      let chunks = 0;
      // rows reach onRows once a table has `drainRows` pending (an internal knob of decode-steps.ts)
      const res = await decodeStream(bytes, Object.assign({
        windowBytes: 0x4000,
        rows: 'borrow' as const,
        onRows: (t: DecodedTables) => {
          chunks++;
          if (order === 'switches first') {
            w.cswitch(t.cswitch);
            w.readyThread(t.readythread);
          } else {
            w.readyThread(t.readythread);
            w.cswitch(t.cswitch);
          }
        },
      }, { drainRows: 50 }));
      w.processTree(res.threads, res.processes); // known at the end when streaming
      w.close();
      const stats = w.getStats();
      expect(chunks).toBeGreaterThan(3); // one or more buffers per chunk
      expect(parts.length).toBeGreaterThan(1);
      expect(stats.readyingForced + stats.readyLate).toBe(0);
      expect(stats.bytes).toBe(parts.reduce((s, p) => s + p.length, 0));
      const streamed = flatten(concat(parts));
      expect(streamed.events.map((e) => key(canon(e))).sort()).toEqual(whole);
      expect(streamed.trees).toEqual(flat.trees);
      expect(streamed.packets.at(-1)!.processTree).toBeDefined();
    }
  });
});

function concat(parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((s, p) => s + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// wire level, without a schema

/** expected wire type of each field a message may carry, and which fields are oneof alternatives */
const MESSAGES: Record<string, { fields: Record<number, [number, string?]>; repeated?: number[]; oneofs?: number[][] }> = {
  TracePacket: { fields: { 2: [WIRE.LEN, 'ProcessTree'], 10: [WIRE.VARINT], 95: [WIRE.LEN, 'EtwTraceEventBundle'] }, oneofs: [[2, 95]] },
  EtwTraceEventBundle: { fields: { 1: [WIRE.VARINT], 2: [WIRE.LEN, 'EtwTraceEvent'] }, repeated: [2] },
  EtwTraceEvent: {
    fields: { 1: [WIRE.VARINT], 2: [WIRE.LEN, 'CSwitchEtwEvent'], 3: [WIRE.LEN, 'ReadyThreadEtwEvent'], 4: [WIRE.VARINT], 5: [WIRE.VARINT] },
    oneofs: [[2, 3]],
  },
  CSwitchEtwEvent: {
    fields: Object.fromEntries(Array.from({ length: 13 }, (_, i) => [i + 1, [WIRE.VARINT]])),
    oneofs: [
      [6, 11],
      [7, 12],
      [8, 13],
    ],
  },
  ReadyThreadEtwEvent: {
    fields: Object.fromEntries(Array.from({ length: 6 }, (_, i) => [i + 1, [WIRE.VARINT]])),
    oneofs: [
      [2, 5],
      [4, 6],
    ],
  },
  ProcessTree: { fields: { 1: [WIRE.LEN, 'Process'], 2: [WIRE.LEN, 'Thread'] }, repeated: [1, 2] },
  Process: { fields: { 1: [WIRE.VARINT], 2: [WIRE.VARINT], 3: [WIRE.LEN, 'string'] }, repeated: [3] },
  Thread: { fields: { 1: [WIRE.VARINT], 2: [WIRE.LEN, 'string'], 3: [WIRE.VARINT] } },
};

/** Walks a message of a known type: field numbers, wire types, repetition, oneofs, minimal varints. */
function walk(type: string, bytes: Uint8Array, seen: Map<string, number>): WireField[] {
  const spec = MESSAGES[type]!;
  const fields = readFields(bytes);
  const count = new Map<number, number>();
  for (const f of fields) {
    const want = spec.fields[f.field];
    expect([type, f.field, want !== undefined]).toEqual([type, f.field, true]);
    expect([type, f.field, f.wireType]).toEqual([type, f.field, want![0]]);
    expect([type, f.field, f.minimal]).toEqual([type, f.field, true]);
    count.set(f.field, (count.get(f.field) ?? 0) + 1);
    seen.set(`${type}.${f.field}`, (seen.get(`${type}.${f.field}`) ?? 0) + 1);
    const sub = want![1];
    if (sub === 'string') new TextDecoder('utf-8', { fatal: true }).decode(f.bytes);
    else if (sub) walk(sub, f.bytes!, seen);
  }
  for (const [field, n] of count) if (!spec.repeated?.includes(field)) expect([type, field, n]).toEqual([type, field, 1]);
  for (const group of spec.oneofs ?? []) expect(group.filter((f) => count.has(f)).length).toBeLessThanOrEqual(1);
  return fields;
}

describe('wire level', () => {
  const { r } = simulated({ seed: 31, switchMode: 'mixed' });
  const out = toPerfetto(r);

  test('every field has the number and wire type of Perfetto\'s schema, shortest varints and lengths', () => {
    const seen = new Map<string, number>();
    const packets = readFields(out);
    expect(packets.every((p) => p.field === 1 && p.wireType === WIRE.LEN && p.minimal)).toBe(true);
    for (const p of packets) {
      const fields = walk('TracePacket', p.bytes!, seen);
      expect(fields.filter((f) => f.field === 2 || f.field === 95).length).toBe(1);
    }
    // what a mixed trace must exercise
    for (const k of ['EtwTraceEvent.1', 'EtwTraceEvent.4', 'EtwTraceEvent.5', 'CSwitchEtwEvent.3', 'CSwitchEtwEvent.4', 'CSwitchEtwEvent.9', 'ReadyThreadEtwEvent.3', 'Thread.2', 'Process.3']) {
      expect([k, (seen.get(k) ?? 0) > 0]).toEqual([k, true]);
    }
    // a c_switch event never carries thread_id (the CSwitch header's thread is not decoded)
    for (const p of packets) {
      const bundle = readFields(p.bytes!).find((f) => f.field === 95);
      if (!bundle) continue;
      for (const ev of readFields(bundle.bytes!).filter((f) => f.field === 2)) {
        const ef = readFields(ev.bytes!);
        if (ef.some((f) => f.field === 2)) expect(ef.some((f) => f.field === 5)).toBe(false);
      }
    }
  });

  test('raw values row by row: sint32 fields are zigzag, uint32 fields plain varints', () => {
    const rows = rowsOf(r.cswitch)
      .map((row, i) => ({ row, i }))
      .sort((a, b) => a.row.cpu - b.row.cpu || a.i - b.i)
      .map((x) => x.row);
    const events: WireField[][] = [];
    for (const p of readFields(out)) {
      const bundle = readFields(p.bytes!).find((f) => f.field === 95);
      if (!bundle) continue;
      for (const ev of readFields(bundle.bytes!).filter((f) => f.field === 2)) {
        const cs = readFields(ev.bytes!).find((f) => f.field === 2);
        if (cs) events.push([...readFields(ev.bytes!), ...readFields(cs.bytes!).map((f) => ({ ...f, field: 100 + f.field }))]);
      }
    }
    expect(events.length).toBe(rows.length);
    let negative = 0;
    events.forEach((fields, i) => {
      const row = rows[i]!;
      const get = (n: number) => fields.find((f) => f.field === n)?.varint;
      expect(get(1)).toBe(BigInt.asUintN(64, r.clock!.toNanoseconds(row.timestamp)));
      expect(get(4)).toBe(BigInt(row.cpu));
      expect(get(101) === undefined ? null : Number(get(101))).toBe(row.newThreadId);
      expect(Number(get(102))).toBe(row.oldThreadId);
      expect(get(103) === undefined ? null : unzigzag32(get(103)!)).toBe(row.newThreadPriority);
      expect(get(104) === undefined ? null : unzigzag32(get(104)!)).toBe(row.oldThreadPriority);
      expect(get(105) === undefined ? null : Number(get(105))).toBe(row.previousCState);
      expect(get(106) === undefined ? null : int32Of(get(106)!)).toBe(row.oldThreadWaitReason);
      expect(get(107) === undefined ? null : int32Of(get(107)!)).toBe(row.oldThreadWaitMode);
      expect(get(108) === undefined ? null : int32Of(get(108)!)).toBe(row.oldThreadState);
      expect(get(109) === undefined ? null : unzigzag32(get(109)!)).toBe(row.oldThreadIdealProcessor);
      expect(get(110) === undefined ? null : Number(get(110))).toBe(row.newThreadWaitTime);
      if (row.oldThreadPriority !== null && get(104)! % 2n === 1n) negative++;
    });
    expect(negative).toBe(0); // priorities are 0..31: zigzag doubles them
    expect(events.some((f) => f.some((x) => x.field === 103 && x.varint! > 31n))).toBe(true); // 2·priority, not priority
  });
});

// ---------------------------------------------------------------------------------------------
// values the simulation does not produce

describe('synthetic rows', () => {
  const base = { cpu: 3, oldThreadId: 100, newThreadWaitTimeAtMostOneTick: 0, source: 0, version: 4, fileOffset: 0 };
  const cswitch = tableOf('cswitch', [
    { ...base, timestamp: 1_000_010n, newThreadId: 200, newThreadPriority: -5, oldThreadPriority: 15, oldThreadWaitReason: 37, oldThreadWaitMode: 1, oldThreadState: 7, oldThreadIdealProcessor: 255, newThreadWaitTime: 4294967295, previousCState: 255 },
    { ...base, timestamp: 1_000_020n, newThreadId: 300, oldThreadWaitReason: 38, oldThreadWaitMode: 2, oldThreadState: 8 },
    { ...base, timestamp: 1_000_030n, newThreadId: 4294967295, oldThreadWaitReason: 255, oldThreadWaitMode: 255, oldThreadState: 255 },
    { ...base, timestamp: 1_000_040n, oldThreadId: 4294967295 },
  ]);
  const rbase = { cpu: 3, threadId: 7, adjustIncrement: -128, version: 2, fileOffset: 0 };
  // one CPU's ReadyThread events come in time order
  const ready = tableOf('readythread', [
    { ...rbase, timestamp: 1_000_005n, adjustReason: 0, flags: 0, adjustIncrement: 0 },
    { ...rbase, timestamp: 1_000_015n, adjustReason: 2, flags: 4 },
    { ...rbase, timestamp: 1_000_025n, adjustReason: 3, flags: 3 },
    { ...rbase, timestamp: 1_000_035n, adjustReason: 255, flags: 8, adjustIncrement: 127 },
  ]);

  function write(opts: Partial<PerfettoOptions> = {}) {
    const parts: Uint8Array[] = [];
    const w = new PerfettoWriter((b) => void parts.push(b), { clock: CLOCK_10MHZ, ...opts });
    w.readyThread(ready);
    w.cswitch(cswitch);
    w.close();
    return { bytes: concat(parts), stats: w.getStats() };
  }

  test('enum values outside Perfetto\'s enums go to the *_int alternative; boundary values stay enums', () => {
    const { events } = flatten(write().bytes);
    const cs = events.filter((e) => e.cSwitch).map((e) => e.cSwitch);
    expect(cs[0]).toEqual({
      newThreadId: 200,
      oldThreadId: 100,
      newThreadPriority: -5,
      oldThreadPriority: 15,
      previousCState: 255,
      oldThreadWaitReason: 37,
      oldThreadWaitMode: 1,
      oldThreadState: 7,
      oldThreadWaitIdealProcessor: 255,
      newThreadWaitTime: 4294967295,
    });
    expect(cs[1]).toEqual({ newThreadId: 300, oldThreadId: 100, oldThreadWaitReasonInt: 38, oldThreadWaitModeInt: 2, oldThreadStateInt: 8 });
    expect(cs[2]).toEqual({ newThreadId: 4294967295, oldThreadId: 100, oldThreadWaitReasonInt: 255, oldThreadWaitModeInt: 255, oldThreadStateInt: 255 });
    expect(cs[3]).toEqual({ oldThreadId: 4294967295 });
    const rt = events.filter((e) => e.readyThread);
    expect(rt.map((e) => [e.timestamp, e.threadId ?? null, e.readyThread])).toEqual([
      ['500', null, { tThreadId: 7, adjustReason: 0, adjustIncrement: 0, flag: 0 }], // before any switch: readying unknown
      ['1500', 200, { tThreadId: 7, adjustReason: 2, adjustIncrement: -128, flag: 4 }],
      ['2500', 300, { tThreadId: 7, adjustReasonInt: 3, adjustIncrement: -128, flagInt: 3 }],
      ['3500', 4294967295, { tThreadId: 7, adjustReasonInt: 255, adjustIncrement: 127, flagInt: 8 }],
    ]);
  });

  test('on the wire: old_thread_state_int is sint32 (zigzag), the other _int fields int32, ideal processor and increments sint32', () => {
    const { bytes } = write();
    const evs: WireField[][] = [];
    for (const p of readFields(bytes)) {
      const bundle = readFields(p.bytes!).find((f) => f.field === 95)!;
      for (const ev of readFields(bundle.bytes!).filter((f) => f.field === 2)) {
        const inner = readFields(ev.bytes!).find((f) => f.field === 2 || f.field === 3)!;
        evs.push(readFields(inner.bytes!));
      }
    }
    const sw = evs.filter((f) => f.some((x) => x.field === 2 && x.varint === 100n) || f.some((x) => x.field === 2 && x.varint === 4294967295n));
    const v = (fs: WireField[], n: number) => fs.find((f) => f.field === n)?.varint;
    expect(v(sw[0]!, 3)).toBe(9n); // sint32 −5
    expect(v(sw[0]!, 9)).toBe(510n); // sint32 255
    expect(v(sw[1]!, 13)).toBe(16n); // sint32 8
    expect(v(sw[1]!, 11)).toBe(38n); // int32 38
    expect(v(sw[2]!, 13)).toBe(510n);
    const rt = evs.filter((f) => f.some((x) => x.field === 1 && x.varint === 7n));
    expect(rt.map((f) => v(f, 3))).toEqual([0n, 255n, 255n, 254n]); // sint32 0, −128, −128, 127
    expect(rt.map((f) => v(f, 5) ?? null)).toEqual([null, null, 3n, 255n]);
  });

  test('a small ReadyThread window writes the oldest with the thread known so far, and counts them', () => {
    const { events } = flatten(write({ readyWindow: 1 }).bytes);
    const { stats } = write({ readyWindow: 1 });
    expect(events.filter((e) => e.readyThread).length).toBe(4);
    expect(stats.readyingForced).toBe(3); // 4 held, one allowed: the 3 oldest are written at once, readying unknown
    expect(stats.readyingUnknown).toBe(3);
    expect(stats.readyHeldMax).toBe(4);
  });

  test('a timestamp before the trace start is written as a negative int64, as Perfetto reads the uint64', () => {
    const parts: Uint8Array[] = [];
    const w = new PerfettoWriter((b) => void parts.push(b), { clock: CLOCK_10MHZ });
    w.cswitch(tableOf('cswitch', [{ ...base, timestamp: 999_999n, newThreadId: 1 }]));
    w.close();
    const ev = flatten(concat(parts)).events[0]!;
    expect(BigInt.asIntN(64, BigInt(ev.timestamp))).toBe(-100n);
    expect(w.getStats().beforeStart).toBe(1);
  });

  test('without a clock: raw ticks since the first row written (or originTicks)', () => {
    for (const [opts, want] of [
      [{}, ['0', '5', '10', '15', '20', '25', '30', '35']],
      [{ originTicks: 1_000_000n }, ['5', '10', '15', '20', '25', '30', '35', '40']],
    ] as const) {
      const parts: Uint8Array[] = [];
      const w = new PerfettoWriter((b) => void parts.push(b), { clock: null, ...opts });
      w.readyThread(ready);
      w.cswitch(cswitch);
      w.close();
      const ts = flatten(concat(parts)).events.map((e) => e.timestamp);
      expect(ts.sort()).toEqual([...want].sort());
    }
  });

  test('process tree: pids and tids as int32 (ids ≥ 2^31 negative on the wire), names only when known', () => {
    const threads = tableOf('threads', [
      { threadId: 8, processId: 4, name: 'worker' },
      { threadId: 2147483652, processId: 2147483650, name: '' },
      { threadId: 12, processId: 4, name: 'ñandú ☃' },
    ]);
    const processes = tableOf('processes', [
      { processId: 4, parentId: 0, sessionId: 0, imageFileName: 'System' },
      { processId: 2147483650, parentId: 4, sessionId: 1, imageFileName: 'a.exe', commandLine: '' },
      { processId: 9, parentId: 4, sessionId: 1 },
    ]);
    const parts: Uint8Array[] = [];
    const w = new PerfettoWriter((b) => void parts.push(b), { clock: CLOCK_10MHZ });
    w.processTree(threads, processes);
    w.close();
    const tree = flatten(concat(parts)).trees[0]!;
    expect(tree.processes).toEqual([
      { pid: 4, ppid: 0, cmdline: ['System'] },
      { pid: -2147483646, ppid: 4, cmdline: ['a.exe'] },
      { pid: 9, ppid: 4 }, // no cmdline: Perfetto skips it; its threads still name it as tgid
    ]);
    expect(tree.threads.map(canon)).toEqual([
      { tid: 8, tgid: 4, name: 'worker' },
      { tid: -2147483644, tgid: -2147483646 },
      { tid: 12, tgid: 4, name: 'ñandú ☃' },
    ].map(canon));
    expect(w.getStats()).toMatchObject({ processes: 3, threads: 3, packets: 1 });
  });

  test('bundles are split every maxBundleEvents events, and each packet is its own Trace.packet', () => {
    const { bytes, stats } = write({ maxBundleEvents: 3 });
    const packets = decodeTrace(bytes).packet;
    // the readies wait for the switches; then one bundle for CPU 3's 8 events, split
    expect(packets.map((p) => p.etwEvents.event.length)).toEqual([3, 3, 2]);
    expect(packets.map((p) => p.etwEvents.event.map((e: Obj) => (e.cSwitch ? 's' : 'r')).join(''))).toEqual(['rsr', 'srs', 'rs']);
    expect(stats.packets).toBe(3);
    expect(() => {
      const w = new PerfettoWriter(() => {}, { clock: null });
      w.close();
      w.close();
    }).toThrow(/closed/);
  });

  test('toPerfetto writes the switches in chunks of 65 536 rows; readying threads are right across the chunks', () => {
    const n = 150_000;
    const sw = Array.from({ length: n }, (_, i) => ({ ...base, cpu: i % 3, timestamp: 1_000_000n + BigInt(i * 10), newThreadId: 1000 + i, oldThreadId: 999 + i }));
    const rd = sw.filter((_, i) => i % 7 === 0).map((x, k) => ({ ...rbase, cpu: x.cpu, timestamp: x.timestamp + 5n, threadId: k, adjustReason: 1, flags: 0 }));
    const result = {
      cswitch: tableOf('cswitch', sw),
      readythread: tableOf('readythread', rd),
      threads: tableOf('threads', []),
      processes: tableOf('processes', []),
      clock: CLOCK_10MHZ,
    } as unknown as DecodeResult;
    const out = toPerfetto(result);
    const packets = decodeTrace(out).packet;
    expect(packets.every((p) => (p.etwEvents?.event.length ?? 0) <= 8192)).toBe(true);
    const events = packets.flatMap((p) => p.etwEvents?.event ?? []);
    expect(events.filter((e: Obj) => e.cSwitch).length).toBe(n);
    const readies = events.filter((e: Obj) => e.readyThread);
    expect(readies.length).toBe(rd.length);
    // a ready 5 ticks after switch i on the same cpu: readied by that switch's new thread
    for (const e of readies) expect([e.readyThread.tThreadId, e.threadId]).toEqual([e.readyThread.tThreadId, 1000 + 7 * e.readyThread.tThreadId]);
  });

  test('an async sink gets one buffer per flush and the calls return its promise', async () => {
    const got: Uint8Array[] = [];
    const w = new PerfettoWriter(async (b) => void got.push(b), { clock: CLOCK_10MHZ, flushBytes: 1 });
    const p = w.cswitch(cswitch);
    expect(p).toBeInstanceOf(Promise);
    await p;
    await w.close();
    expect(got.length).toBe(1);
    expect(flatten(concat(got)).events.length).toBe(4);
  });
});

// ---------------------------------------------------------------------------------------------
// the building blocks

describe('ProtoWriter', () => {
  test('writes the bytes protobufjs writes: varints, int32, sint32, uint64, strings, nested lengths of 1-3 bytes', () => {
    const ref = protobuf.Writer.create();
    const w = new ProtoWriter(16);
    const u32 = [0, 1, 127, 128, 16383, 16384, 2097151, 2097152, 268435455, 268435456, 4294967295];
    for (const v of u32) {
      ref.uint32((1 << 3) | 0).uint32(v);
      w.uint32Field(1, v);
    }
    for (const v of [0, 1, -1, 2147483647, -2147483648, -300]) {
      ref.uint32((2 << 3) | 0).int32(v);
      w.int32Field(2, v);
      ref.uint32((3 << 3) | 0).sint32(v);
      w.sint32Field(3, v);
    }
    for (const v of [0n, 1n, 4294967295n, 4294967296n, 2n ** 53n - 1n, 2n ** 63n, 2n ** 64n - 1n]) {
      ref.uint32((4 << 3) | 0).uint64(protobuf.util.LongBits.from(v.toString()).toLong(true));
      w.tag(4, 0);
      w.varintBigInt(v);
    }
    for (const v of [0, 1, 4294967295, 4294967296, 2 ** 53 - 1, -1, -(2 ** 40)]) {
      ref.uint32((5 << 3) | 0).int64(protobuf.util.LongBits.from(BigInt.asUintN(64, BigInt(v)).toString()).toLong(true));
      w.tag(5, 0);
      w.varintNumber(v);
    }
    for (const s of ['', 'abc', 'ñandú ☃ 𝄞', 'x'.repeat(200), 'y'.repeat(20000)]) {
      ref.uint32((6 << 3) | 2).string(s);
      w.stringField(6, s);
    }
    for (const n of [0, 127, 128, 16383, 16384, 70000]) {
      const inner = new Uint8Array(n).map((_, i) => i & 0x7f);
      ref.uint32((7 << 3) | 2).fork();
      for (const b of inner) ref.uint32(b);
      ref.ldelim();
      w.begin(7);
      for (const b of inner) w.varint32(b);
      w.end();
    }
    // nested: an outer message whose inner one grows past 128 after the outer's length byte was reserved
    ref.uint32((8 << 3) | 2).fork().uint32((1 << 3) | 2).fork();
    for (let i = 0; i < 300; i++) ref.uint32(i);
    ref.ldelim().ldelim();
    w.begin(8);
    w.begin(1);
    for (let i = 0; i < 300; i++) w.varint32(i);
    w.end();
    w.end();
    expect(Buffer.from(w.take())).toEqual(Buffer.from(ref.finish()));
    expect(w.pos).toBe(0);
  });
});

describe('TickConverter (Perfetto timestamps): exact, without BigInt on the fast path, equal to Clock.toNanoseconds', () => {
  const clocks: [string, Clock][] = [
    ['QPC 10 MHz', CLOCK_10MHZ],
    ['QPC 3.579545 MHz', createClock({ clockType: 1, perfFreq: 3_579_545n, cpuSpeedInMHz: 0, headerTimestamp: 123_456_789n, startTime: 0n })],
    ['QPC 3.117777 MHz', createClock({ clockType: 1, perfFreq: 3_117_777n, cpuSpeedInMHz: 0, headerTimestamp: 185_227_195_741n, startTime: 0n })],
    ['QPC 2^32-5 Hz (den < 2^32: split multiplication)', createClock({ clockType: 1, perfFreq: 4_294_967_291n, cpuSpeedInMHz: 0, headerTimestamp: 5n, startTime: 0n })],
    ['cycles 2995 MHz', createClock({ clockType: 3, perfFreq: 0n, cpuSpeedInMHz: 2995, headerTimestamp: 9_876_543_210_123n, startTime: 0n })],
    ['system time', createClock({ clockType: 2, perfFreq: 0n, cpuSpeedInMHz: 0, headerTimestamp: 133_700_000_000_000_000n, startTime: 133_700_000_000_000_000n })],
  ];
  test.each(clocks)('%s', (_, clock) => {
    const conv = new TickConverter(clock, 'ns');
    const t0 = clock.anchorTicks;
    const deltas = [0n, 1n, -1n, 7n, 12345n, 10n ** 7n, 10n ** 9n, 3n * 10n ** 11n, 2n ** 40n, -(2n ** 33n), 2n ** 51n, 2n ** 52n, 2n ** 53n, 2n ** 60n];
    let seed = 12345;
    for (let i = 0; i < 2000; i++) {
      seed = (seed * 1103515245 + 12345) >>> 0;
      deltas.push(BigInt(seed) * BigInt((seed >>> 7) % 5000) - 10n ** 9n);
    }
    let fast = 0;
    for (const d of deltas) {
      const t = BigInt.asIntN(64, t0 + d);
      const u = BigInt.asUintN(64, t);
      const lo = Number(u & 0xffffffffn);
      const hi = Number(BigInt.asIntN(32, u >> 32n));
      const want = clock.toNanoseconds(t);
      const got = conv.fromHalves(hi, lo);
      if (Number.isNaN(got)) expect(conv.exact(t)).toBe(want);
      else {
        fast++;
        expect([d, BigInt(got)]).toEqual([d, want]);
      }
    }
    expect(fast).toBeGreaterThan(1900);
  });

  test('a writer trace with a system-time clock: timestamps still exact', () => {
    const sim = simulateSchedule({ seed: 5, cpus: 2, duration: 300_000, switchMode: 'cswitch', clockType: 2 });
    const r = decodeSync(writeTrace(sim.description).bytes);
    expect(r.info!.clockType).toBe(2);
    const ev = flatten(toPerfetto(r)).events.filter((e) => e.cSwitch);
    const want = rowsOf(r.cswitch)
      .map((row, i) => ({ row, i }))
      .sort((a, b) => a.row.cpu - b.row.cpu || a.i - b.i)
      .map(({ row }) => r.clock!.toNanoseconds(row.timestamp).toString());
    expect(ev.map((e) => e.timestamp)).toEqual(want);
  });
});
