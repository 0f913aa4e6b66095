// Deterministic synthetic traces: random noise events of every header kind, and a realistic mixed
// NT-Kernel-Logger trace (CSwitch, compact switches, SpinLock, noise) of about a target size, either in
// memory (generateMixedTrace) or streamed buffer by buffer with bounded memory (generateTraceChunks).
// Both produce the same bytes for the same options. Browser-safe: no node imports.
import * as L from '../generated/layout.js';
import type { Chunk } from './buffers.js';
import { align8, bytesToGuid, HEADER_KINDS } from './events.js';
import { timestampToFiletime } from './logfile.js';
import { Rng } from './random.js';
import type {
  CompactSwitchSpec,
  CSwitchSpec,
  EventSpec,
  HeaderKind,
  RawEventSpec,
  SpinLockSpec,
  TraceOptions,
  WrittenTrace,
} from './types.js';
import { finishTrace, TraceWriter } from './writer.js';
import { xpressCompress } from './xpress-encode.js';

// ---------------------------------------------------------------------------------------------
// noise

/** HookIds used for SYSTEM/COMPACT/PERFINFO noise: none in the header (0x00), process (0x03), thread (0x05)
 *  or image (0x14) groups, and none of the decoded 0x0524/0x0525/0x0529/0x0532/0x0548/0x0F2E or of 0x0F4B/0x0F4C
 *  (0x0F2F, PmcCounterProfile, has the SampledProfile layout and is not decoded). */
export const NOISE_HOOK_IDS: readonly number[] = [
  0x0a10, 0x0a11, 0x0a12, 0x0a22, 0x0b0a, 0x0f2f, 0x0f33, 0x0f42, 0x0f43, 0x0f44, 0x1a00, 0x1a40, 0x1a43, 0x0420,
  0x0f4f, 0x2019,
];

export const KINDS_64: readonly HeaderKind[] = HEADER_KINDS.filter((k) => !k.endsWith('32'));
export const KINDS_32: readonly HeaderKind[] = HEADER_KINDS.filter((k) => !k.endsWith('64'));

export function randomGuid(rng: Rng): string {
  return bytesToGuid(rng.bytes(16));
}

/** Fills the kind-specific fields of a noise event (payload supplied by the caller). */
export function noiseEvent(
  rng: Rng,
  kind: HeaderKind,
  cpu: number,
  timestamp: bigint,
  payload: Uint8Array,
  providers: readonly string[],
  forceItems: boolean,
  realistic = false,
): RawEventSpec {
  // realistic traces have a few hundred distinct event kinds, not tens of thousands
  const idMax = realistic ? 63 : 0xffff;
  const byteMax = realistic ? 63 : 255;
  const e: RawEventSpec = {
    kind: 'raw',
    cpu,
    timestamp,
    headerType: kind,
    payload,
    threadId: rng.int(1, 0x3fff) * 4,
    processId: rng.int(1, 0x3ff) * 4,
  };
  switch (kind) {
    case 'SYSTEM32':
    case 'SYSTEM64':
    case 'COMPACT32':
    case 'COMPACT64':
      e.hookId = rng.pick(NOISE_HOOK_IDS);
      e.version = rng.int(0, 5);
      break;
    case 'PERFINFO32':
    case 'PERFINFO64':
      e.hookId = rng.pick(NOISE_HOOK_IDS);
      e.version = rng.int(0, 5);
      if (forceItems || rng.chance(0.2)) e.pebsIndex = rng.bigint64();
      if (forceItems || rng.chance(0.3)) {
        const n = rng.int(1, 4);
        e.pmcCounters = [];
        for (let i = 0; i < n; i++) e.pmcCounters.push(rng.bigint64());
      }
      break;
    case 'FULL_HEADER32':
    case 'FULL_HEADER64':
    case 'INSTANCE32':
    case 'INSTANCE64':
      e.provider = rng.pick(providers);
      e.classType = rng.int(0, byteMax);
      e.level = rng.int(0, 5);
      e.version = rng.int(0, 3);
      if (kind.startsWith('INSTANCE')) {
        e.instanceId = rng.next();
        e.parentInstanceId = rng.next();
        e.parentGuid = rng.pick(providers);
      }
      break;
    case 'EVENT_HEADER32':
    case 'EVENT_HEADER64':
      e.provider = rng.pick(providers);
      e.eventId = rng.int(0, idMax);
      e.version = rng.int(0, 3);
      e.channel = rng.int(0, 16);
      e.level = rng.int(0, 5);
      e.opcode = rng.int(0, realistic ? 3 : 255);
      e.task = rng.int(0, idMax);
      e.keyword = rng.bigint64();
      if (forceItems || rng.chance(0.3)) {
        const n = rng.int(1, 3);
        e.extendedItems = [];
        for (let i = 0; i < n; i++) e.extendedItems.push({ extType: rng.int(1, 13), data: rng.bytes(rng.int(0, 40)) });
      }
      break;
    case 'MESSAGE':
      e.messageNumber = rng.int(0, idMax);
      delete e.threadId;
      delete e.processId;
      break;
  }
  return e;
}

/**
 * `count` noise events of every header kind (the first ones cycle through all 13 kinds in random order,
 * plus a PERFINFO with PEBS + PMC items and an EVENT_HEADER with extended items), random cpus, non-decreasing
 * timestamps from startTimestamp, random payloads of 0..300 bytes. With pointerSize 8, 64-bit kinds are
 * three times as likely as 32-bit ones (and the other way round for 4).
 */
export function randomNoiseEvents(
  rng: Rng,
  count: number,
  opts: { cpus: number; startTimestamp: bigint; pointerSize: 4 | 8 },
): RawEventSpec[] {
  if (!Number.isInteger(count) || count < 0) throw new RangeError(`count: ${count} is not a non-negative integer`);
  if (!Number.isInteger(opts.cpus) || opts.cpus < 1) throw new RangeError(`cpus: ${opts.cpus} is not a positive integer`);
  if (typeof opts.startTimestamp !== 'bigint' || opts.startTimestamp < 0n) {
    throw new RangeError(`startTimestamp: ${String(opts.startTimestamp)} is not a non-negative bigint`);
  }
  const providers: string[] = [];
  for (let i = 0; i < 6; i++) providers.push(randomGuid(rng));
  // the guaranteed prefix: every kind once, then a PERFINFO with items and an EVENT_HEADER with items
  const prefix: { kind: HeaderKind; items: boolean }[] = HEADER_KINDS.map((k) => ({ kind: k, items: false }));
  for (let i = prefix.length - 1; i > 0; i--) {
    const j = rng.int(0, i);
    [prefix[i], prefix[j]] = [prefix[j], prefix[i]];
  }
  prefix.push({ kind: opts.pointerSize === 8 ? 'PERFINFO64' : 'PERFINFO32', items: true });
  prefix.push({ kind: opts.pointerSize === 8 ? 'EVENT_HEADER64' : 'EVENT_HEADER32', items: true });
  const preferred = opts.pointerSize === 8 ? KINDS_64 : KINDS_32;
  const out: RawEventSpec[] = [];
  let t = opts.startTimestamp;
  for (let i = 0; i < count; i++) {
    let kind: HeaderKind;
    let items = false;
    if (i < prefix.length) {
      kind = prefix[i].kind;
      items = prefix[i].items;
    } else {
      kind = rng.chance(0.75) ? rng.pick(preferred) : rng.pick(HEADER_KINDS);
    }
    const payload = rng.bytes(rng.int(0, 300));
    out.push(noiseEvent(rng, kind, rng.int(0, opts.cpus - 1), t, payload, providers, items));
    t += BigInt(rng.int(0, 2000));
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// the mixed generator

export interface MixedTraceOptions {
  seed: number;
  /** approximate file size in bytes */
  targetBytes: number;
  /** processors, default 4 */
  cpus?: number;
  /** relative event-count weights, default { cswitch: 3, compact: 4, spinlock: 1, noise: 2 } */
  mix?: { cswitch?: number; compact?: number; spinlock?: number; noise?: number };
  compress?: boolean;
  /** default 8 */
  pointerSize?: 4 | 8;
  /** default 0x10000 */
  bufferSize?: number;
}

interface Thread {
  tid: number;
  pid: number;
  base: number;
}

const HEADER_TIMESTAMP = 1_000_000;
const BUILD = 19041;
const WAIT_REASONS = [0, 6, 6, 13, 15, 15, 15, 31, 32, 4, 11, 7, 18, 28, 29, 36, 37];
const BASE_PRIORITIES = [8, 8, 8, 8, 8, 9, 10, 10, 13, 15, 4, 6, 12, 24];

/** Produces the events of a mixed trace in global time order. */
class MixedEventSource implements TraceSource {
  private readonly rng: Rng;
  private readonly cpus: number;
  private readonly ptr: 4 | 8;
  private readonly bias: number;
  private readonly threads: Thread[] = [];
  private readonly hot: number[][] = [];
  private readonly current: number[] = [];
  private readonly cum: number[];
  private readonly pool: Uint8Array;
  private readonly providers: string[] = [];
  private readonly preferredKinds: readonly HeaderKind[];
  /** current time (raw ticks), a safe integer */
  t = HEADER_TIMESTAMP + 1000;

  constructor(seed: number, cpus: number, ptr: 4 | 8, mix: Required<NonNullable<MixedTraceOptions['mix']>>, bias: number) {
    this.rng = new Rng(seed);
    this.cpus = cpus;
    this.ptr = ptr;
    this.bias = bias;
    const rng = this.rng;
    const w = [mix.cswitch, mix.compact, mix.spinlock, mix.noise];
    const total = w.reduce((a, b) => a + b, 0);
    let acc = 0;
    this.cum = w.map((x) => (acc += x / total));
    const nThreads = 24 + 8 * cpus;
    const used = new Set<number>();
    for (let i = 0; i < nThreads; i++) {
      let tid: number;
      do tid = rng.int(0x40, 0x3fff) * 4;
      while (used.has(tid));
      used.add(tid);
      this.threads.push({ tid, pid: rng.int(1, 40) * 4 + 0x100, base: rng.pick(BASE_PRIORITIES) });
    }
    for (let c = 0; c < cpus; c++) {
      const h: number[] = [];
      for (let i = 0; i < 8; i++) h.push(rng.int(0, nThreads - 1));
      this.hot.push(h);
      this.current.push(-1);
    }
    this.pool = rng.bytes(1 << 16);
    for (let i = 0; i < 6; i++) this.providers.push(randomGuid(rng));
    this.preferredKinds = ptr === 8 ? KINDS_64 : KINDS_32;
  }

  private gap(): number {
    const rng = this.rng;
    const r = rng.next();
    if (r < 4_252_017_000) return rng.int(0, 400); // ~99%
    if (r < 4_290_000_000) return rng.int(400, 20_000);
    if (r < 4_294_500_000) return rng.int(20_000, 2_000_000);
    if (r < 4_294_967_000) return rng.int(2_000_000, 100_000_000); // > 500 ticks at 10 MHz sometimes
    return (1 << 30) + rng.int(0, 1 << 28); // a CompCS delta that does not fit 30 bits
  }

  /** switch: returns [old thread index or -1, new thread index or -1] and updates the cpu's current thread */
  private switchThreads(cpu: number): [number, number] {
    const rng = this.rng;
    const old = this.current[cpu];
    let nw: number;
    if (old >= 0 && rng.chance(0.15)) nw = -1;
    else {
      do nw = rng.chance(0.8) ? rng.pick(this.hot[cpu]) : rng.int(0, this.threads.length - 1);
      while (nw === old);
    }
    this.current[cpu] = nw;
    return [old, nw];
  }

  private state(): { state: number; waitReason: number } {
    const rng = this.rng;
    const r = rng.next() % 100;
    if (r < 62) return { state: L.THREAD_STATE_WAITING, waitReason: rng.pick(WAIT_REASONS) % this.bias };
    if (r < 92) return { state: 1, waitReason: rng.pick(WAIT_REASONS) };
    if (r < 96) return { state: 7, waitReason: 0 };
    if (r < 98) return { state: 4, waitReason: 22 };
    return { state: rng.pick([0, 2, 3, 6, 8, 9]), waitReason: 0 };
  }

  next(): EventSpec {
    const rng = this.rng;
    this.t += this.gap();
    const ts = BigInt(this.t);
    const cpu = rng.int(0, this.cpus - 1);
    const k = rng.float();
    if (k < this.cum[0]) return this.cswitch(cpu, ts);
    if (k < this.cum[1]) return this.compact(cpu, ts);
    if (k < this.cum[2]) return this.spinlock(cpu, ts);
    return this.noise(cpu, ts);
  }

  private cswitch(cpu: number, timestamp: bigint): CSwitchSpec {
    const rng = this.rng;
    const [o, n] = this.switchThreads(cpu);
    const ot = o >= 0 ? this.threads[o] : null;
    const nt = n >= 0 ? this.threads[n] : null;
    const vr = rng.next() % 100;
    const version = (vr < 85 ? 4 : vr < 95 ? 2 : vr < 99 ? 3 : 1) as 1 | 2 | 3 | 4;
    const st = ot ? this.state() : { state: 2, waitReason: 0 };
    const e: CSwitchSpec = {
      kind: 'cswitch',
      cpu,
      timestamp,
      version,
      newThreadId: nt ? nt.tid : 0,
      oldThreadId: ot ? ot.tid : 0,
      newThreadPriority: nt ? Math.min(31, nt.base + (rng.chance(0.2) ? rng.int(1, 2) : 0)) : 0,
      oldThreadPriority: ot ? Math.min(31, ot.base + (rng.chance(0.1) ? 1 : 0)) : 0,
      previousCState: ot ? 0 : rng.int(0, 2),
      newThreadPriorityDecrement: rng.chance(0.9) ? 0 : rng.int(1, 3),
      oldThreadWaitReason: st.waitReason,
      oldThreadWaitMode: version >= 4 ? rng.int(0, 1) | (rng.int(0, 7) << 1) | (rng.int(0, 7) << 4) : rng.int(0, 1),
      oldThreadState: st.state,
      oldThreadIdealProcessor: rng.int(0, this.cpus - 1),
    };
    if (version >= 2) {
      e.newThreadWaitTime = rng.chance(0.7) ? rng.int(0, 1) : rng.int(2, 5000);
      e.oldThreadRemainingQuantum = rng.int(-200_000, 2_000_000);
    }
    if (rng.chance(0.01)) {
      e.pebsIndex = rng.bigint64();
      e.pmcCounters = [rng.bigint64(), rng.bigint64()];
    }
    return e;
  }

  private compact(cpu: number, timestamp: bigint): CompactSwitchSpec {
    const rng = this.rng;
    const [o] = this.switchThreads(cpu);
    if (o < 0) {
      return {
        kind: 'compactSwitch', cpu, timestamp, oldThreadId: 0, oldThreadPriority: 0, oldThreadBasePriority: 0,
        oldThreadState: 0, oldThreadWaitReason: 0, newThreadWaitTime: 0,
      };
    }
    const th = this.threads[o];
    const st = this.state();
    const r = rng.next() % 100;
    const pri = r < 90 ? Math.min(31, th.base + rng.int(0, 2)) : r < 95 ? rng.int(th.base, 31) : rng.int(0, 31);
    const wr = rng.next() % 100;
    const wait = wr < 70 ? rng.int(0, 1) : wr < 97 ? rng.int(2, 5000) : rng.int(5000, 300_000);
    return {
      kind: 'compactSwitch', cpu, timestamp, oldThreadId: th.tid, oldThreadPriority: pri, oldThreadBasePriority: th.base,
      oldThreadState: st.state, oldThreadWaitReason: st.waitReason, newThreadWaitTime: wait,
    };
  }

  private spinlock(cpu: number, timestamp: bigint): SpinLockSpec {
    const rng = this.rng;
    const cycles = this.t * 300;
    const hold = rng.int(20, 20_000);
    const wide = this.ptr === 8;
    const base = wide ? 0xfffff80000000000n : 0x80000000n;
    const th = this.current[cpu] >= 0 ? this.threads[this.current[cpu]].tid : 0;
    return {
      kind: 'spinlock',
      cpu,
      timestamp,
      spinLockAddress: base + BigInt(rng.int(0, 0xfffffff) * 8),
      callerAddress: base + BigInt(rng.int(0, 0xfffffff)),
      acquireTime: BigInt(cycles - hold),
      releaseTime: BigInt(cycles),
      waitTimeInCycles: rng.chance(0.7) ? 0 : rng.int(1, 100_000),
      spinCount: rng.chance(0.7) ? 0 : rng.int(1, 5000),
      threadId: th,
      interruptCount: rng.chance(0.9) ? 0 : rng.int(1, 3),
      irql: rng.pick([0, 2, 2, 2, 5, 12]),
      acquireDepth: rng.int(1, 3),
      acquireMode: rng.int(0, 4),
      executeDpc: rng.chance(0.2),
      executeIsr: rng.chance(0.05),
    };
  }

  /** `n` pseudo-random bytes (a view of the pool; n <= 64 KiB) */
  poolBytes(n: number): Uint8Array {
    const at = this.rng.int(0, this.pool.length - n);
    return this.pool.subarray(at, at + n);
  }

  /** no end rundown */
  closingBuffers(): number {
    return 0;
  }

  closing(): EventSpec[] {
    return [];
  }

  private noise(cpu: number, timestamp: bigint): RawEventSpec {
    const rng = this.rng;
    const kind = rng.chance(0.75) ? rng.pick(this.preferredKinds) : rng.pick(HEADER_KINDS);
    const n = rng.int(0, 300);
    const at = rng.int(0, this.pool.length - n);
    return noiseEvent(rng, kind, cpu, timestamp, this.pool.subarray(at, at + n), this.providers, false, true);
  }
}

/**
 * What the generation loop (run) draws from: an event model that yields events in time order. Both the
 * mixed source below and the realistic one (realistic.ts) are one.
 */
export interface TraceSource {
  /** timestamp of the latest event (raw ticks, a safe integer) */
  t: number;
  /** the next event, in time order */
  next(): EventSpec;
  /** `n` pseudo-random bytes (n <= 64 KiB), for the fillers */
  poolBytes(n: number): Uint8Array;
  /** at most how many data buffers closing() would add now (0: it adds none) */
  closingBuffers(): number;
  /** the events that close the trace (an end rundown), logged after the stream and before the fillers */
  closing(): EventSpec[];
}

/** How a generator is planned: the session, its event model and how to probe it. */
export interface SourceSpec {
  seed: number;
  targetBytes: number;
  cpus: number;
  options: TraceOptions;
  /** a fresh source, the same events for the same arguments */
  make(bias: number, pointerSize: 4 | 8): TraceSource;
  /** data buffers flushed before the probe starts timing (a start rundown at no time cost); default 0 */
  probeSkip?: number;
  /** data buffers the probe times; default 4 */
  probeBuffers?: number;
}

interface GenPlan {
  options: TraceOptions;
  cpus: number;
  make: SourceSpec['make'];
  dataBuffers: number;
  endTime: bigint;
}

function normalizeMix(mix: MixedTraceOptions['mix']): Required<NonNullable<MixedTraceOptions['mix']>> {
  const m = { cswitch: 3, compact: 4, spinlock: 1, noise: 2 };
  if (mix) {
    const given = mix.cswitch !== undefined || mix.compact !== undefined || mix.spinlock !== undefined || mix.noise !== undefined;
    if (given) {
      m.cswitch = mix.cswitch ?? 0;
      m.compact = mix.compact ?? 0;
      m.spinlock = mix.spinlock ?? 0;
      m.noise = mix.noise ?? 0;
    }
  }
  for (const [k, v] of Object.entries(m)) {
    if (typeof v !== 'number' || !(v >= 0) || !Number.isFinite(v)) throw new RangeError(`mix.${k}: ${v} is not a non-negative number`);
  }
  if (m.cswitch + m.compact + m.spinlock + m.noise <= 0) throw new RangeError('mix: all weights are zero');
  return m;
}

/** buffers generated by the probe run (estimates of the compression ratio and of the time per buffer) */
const PROBE_BUFFERS = 4;

/** Checks the options shared by the generators; the session options of a generated trace. */
export function generatorSession(opts: {
  seed: number;
  targetBytes: number;
  cpus?: number;
  compress?: boolean;
  pointerSize?: 4 | 8;
  bufferSize?: number;
}, logFileName: string): { cpus: number; options: TraceOptions } {
  if (opts === null || typeof opts !== 'object') throw new RangeError('options: must be an object');
  if (!Number.isFinite(opts.seed)) throw new RangeError(`seed: ${opts.seed} is not a finite number`);
  if (!Number.isFinite(opts.targetBytes) || opts.targetBytes < 0) {
    throw new RangeError(`targetBytes: ${opts.targetBytes} is not a non-negative number`);
  }
  const cpus = opts.cpus ?? 4;
  if (!Number.isInteger(cpus) || cpus < 1 || cpus > 256) throw new RangeError(`cpus: ${cpus} is not an integer in [1, 256]`);
  const options: TraceOptions = {
    pointerSize: opts.pointerSize ?? 8,
    build: BUILD,
    numberOfProcessors: cpus,
    bufferSize: opts.bufferSize ?? 0x10000,
    compress: opts.compress ?? false,
    headerTimestamp: BigInt(HEADER_TIMESTAMP),
    loggerName: 'NT Kernel Logger',
    logFileName,
  };
  return { cpus, options };
}

function mixedSpec(opts: MixedTraceOptions): SourceSpec {
  const { cpus, options } = generatorSession(opts, 'C:\\etw-decode\\mixed.etl');
  const mix = normalizeMix(opts.mix);
  return { seed: opts.seed, targetBytes: opts.targetBytes, cpus, options, make: (bias, ptr) => new MixedEventSource(opts.seed, cpus, ptr, mix, bias) };
}

/**
 * Fixes the number of data buffers (so the header's BuffersWritten is exact) and estimates EndTime, from a
 * probe run of the first buffers of the same event stream (uncompressed).
 */
function plan(spec: SourceSpec): GenPlan {
  const options = spec.options;
  const probe = new TraceWriter({ ...options, compress: false }, { collectPackets: false, validate: false });
  const src = spec.make(probe.bias, probe.o.pointerSize);
  const bs = probe.o.bufferSize;
  const skip = spec.probeSkip ?? 0;
  const estimate = Math.max(1, Math.round(spec.targetBytes / bs) - 1);
  const want = Math.min(skip + (spec.probeBuffers ?? PROBE_BUFFERS), estimate);
  const chunks: Chunk[] = [];
  let guard = 0;
  let t0 = HEADER_TIMESTAMP;
  let skipped = skip === 0 || want <= skip;
  while (probe.flushedBuffers < want && guard++ < 50_000_000) {
    probe.add(src.next());
    chunks.push(...probe.takeChunks());
    if (!skipped && probe.flushedBuffers >= skip) {
      skipped = true;
      t0 = src.t;
    }
  }
  const timed = skip > 0 && want > skip ? probe.flushedBuffers - skip : probe.flushedBuffers;
  const ticksPerBuffer = (src.t - t0) / Math.max(1, timed);
  let onDisk = bs;
  if (options.compress) {
    probe.finish();
    chunks.push(...probe.takeChunks());
    const from = want > skip ? skip : 0;
    const sample = chunks.slice(from, want);
    let total = 0;
    for (const c of sample) total += L.WMI_BUFFER_HEADER_SIZE + xpressCompress(c.bytes.subarray(L.WMI_BUFFER_HEADER_SIZE, c.info.filled)).length;
    onDisk = Math.max(L.WMI_BUFFER_HEADER_SIZE + 8, total / Math.max(1, sample.length));
  }
  let dataBuffers = Math.max(1, Math.round((spec.targetBytes - bs) / onDisk));
  // room for both rundowns of a source that has them (each at most closingBuffers() at the start)
  const closing = spec.make(probe.bias, probe.o.pointerSize).closingBuffers();
  if (closing > 0) dataBuffers = Math.max(dataBuffers, 2 * closing + MAIN_LOOP_MARGIN + spec.cpus + 1);
  const endTicks = BigInt(HEADER_TIMESTAMP + Math.round(ticksPerBuffer * dataBuffers));
  const endTime = timestampToFiletime(probe.o, endTicks);
  return { options: { ...options, endTime }, cpus: spec.cpus, make: spec.make, dataBuffers, endTime };
}

/** margin of the main loop: one generated event raises the predicted buffer count by at most 2 */
const MAIN_LOOP_MARGIN = 3;

/**
 * The generation loop shared by the generators: yields the header chunk first, then data chunks in file
 * order; returns the writer. The number of data buffers is fixed in advance (so the header's BuffersWritten
 * is exact): the source's stream stops a few buffers short (and short of the room its closing events need),
 * the closing events follow, and large filler noise events finish the count.
 */
function* run(p: GenPlan, collectPackets: boolean, validate: boolean): Generator<Chunk, TraceWriter> {
  const w = new TraceWriter(p.options, { collectPackets, validate });
  const src = p.make(w.bias, w.o.pointerSize);
  const n = p.dataBuffers;
  yield w.headerBuffer(1 + n, p.endTime);
  while (w.predictDataBuffers() < n - MAIN_LOOP_MARGIN - src.closingBuffers()) {
    w.add(src.next());
    const ready = w.takeChunks();
    for (let i = 0; i < ready.length; i++) yield ready[i];
  }
  for (const e of src.closing()) {
    w.add(e);
    const ready = w.takeChunks();
    for (let i = 0; i < ready.length; i++) yield ready[i];
  }
  // fillers: SYSTEM noise events sized so that an open batch still fits after them (each adds <= 1 buffer)
  let rr = 0;
  let predicted = w.predictDataBuffers();
  if (predicted > n) throw new Error(`generator: internal error, ${predicted} buffers predicted for ${n}`);
  while (predicted < n) {
    let cpu = -1;
    for (let c = 0; c < p.cpus; c++) {
      if (w.openBufferOffset(c) === L.WMI_BUFFER_HEADER_SIZE && !w.hasOpenBatch(c)) {
        cpu = c;
        break;
      }
    }
    if (cpu < 0) cpu = rr++ % p.cpus;
    src.t += 1;
    const room = w.o.bufferSize - L.WMI_BUFFER_HEADER_SIZE - (w.hasOpenBatch(cpu) ? align8(L.PERFINFO_HEADER_SIZE + L.CCS_MAX_BATCH_BYTES) : 0);
    const size = Math.min(0xfff8, room) & ~7;
    w.add({
      kind: 'raw',
      cpu,
      timestamp: BigInt(src.t),
      headerType: w.o.pointerSize === 8 ? 'SYSTEM64' : 'SYSTEM32',
      hookId: NOISE_HOOK_IDS[0],
      payload: src.poolBytes(size - L.SYSTEM_HEADER_SIZE),
    });
    const ready = w.takeChunks();
    for (let i = 0; i < ready.length; i++) yield ready[i];
    const next = w.predictDataBuffers();
    if (next > n) throw new Error(`generator: internal error, ${next} buffers predicted for ${n}`);
    predicted = next;
  }
  w.finish();
  const ready = w.takeChunks();
  for (let i = 0; i < ready.length; i++) yield ready[i];
  if (w.flushedBuffers !== n) throw new Error(`generator: internal error, ${w.flushedBuffers} buffers written for ${n}`);
  return w;
}

/** The trace of a source spec, in memory. */
export function generateFromSpec(spec: SourceSpec): WrittenTrace {
  const it = run(plan(spec), true, true);
  const chunks: Chunk[] = [];
  let r = it.next();
  while (!r.done) {
    chunks.push(r.value);
    r = it.next();
  }
  const w = r.value;
  return finishTrace(w, chunks[0]!, chunks.slice(1));
}

/** The trace of a source spec, buffer by buffer (the same bytes as generateFromSpec). */
export function* streamFromSpec(spec: SourceSpec): Generator<Uint8Array> {
  const it = run(plan(spec), false, false);
  let r = it.next();
  while (!r.done) {
    yield r.value.bytes;
    r = it.next();
  }
}

/** A deterministic mixed trace of about targetBytes, in memory. Same bytes as generateTraceChunks. */
export function generateMixedTrace(opts: MixedTraceOptions): WrittenTrace {
  return generateFromSpec(mixedSpec(opts));
}

/** Streams the trace of generateMixedTrace buffer by buffer (the file is the concatenation of the chunks). */
export function* generateTraceChunks(opts: MixedTraceOptions): Generator<Uint8Array> {
  yield* streamFromSpec(mixedSpec(opts));
}
