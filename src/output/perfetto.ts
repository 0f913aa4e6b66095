// Perfetto timeline: context switches, ReadyThread events and CPU samples as a Perfetto protobuf trace
// (https://ui.perfetto.dev opens it: a track per CPU, thread states, wake-ups, process and thread names,
// callstack samples on the threads' tracks).
//
// The trace is a `Trace` of `packet` (1) fields. Messages and field numbers, from google/perfetto
// protos/perfetto/trace/etw/{etw_event_bundle,etw_event,etw}.proto, ps/process_tree.proto and
// trace_packet.proto (proto2, package perfetto.protos):
//
//   TracePacket        etw_events 95 (EtwTraceEventBundle), process_tree 2, trusted_packet_sequence_id 10 (uint32),
//                      timestamp 8 (uint64), interned_data 12, sequence_flags 13 (uint32), perf_sample 66
//                      (the samples: output/perfetto-samples.ts)
//   EtwTraceEventBundle cpu 1 (uint32), event 2 (repeated EtwTraceEvent)
//   EtwTraceEvent      timestamp 1 (uint64), cpu 4 (uint32), thread_id 5 (uint32),
//                      oneof event { c_switch 2 (CSwitchEtwEvent), ready_thread 3 (ReadyThreadEtwEvent) }
//   CSwitchEtwEvent    new_thread_id 1, old_thread_id 2 (uint32), new_thread_priority 3, old_thread_priority 4
//                      (sint32), previous_c_state 5 (uint32), old_thread_wait_reason 6 (enum 0-37) | _int 11
//                      (int32), old_thread_wait_mode 7 (enum 0-1) | _int 12 (int32), old_thread_state 8
//                      (enum 0-7) | _int 13 (sint32), old_thread_wait_ideal_processor 9 (sint32),
//                      new_thread_wait_time 10 (uint32)
//   ReadyThreadEtwEvent t_thread_id 1 (uint32), adjust_reason 2 (enum 0-2) | _int 5 (int32),
//                      adjust_increment 3 (sint32), flag 4 (enum 0,1,2,4) | _int 6 (int32)
//   ProcessTree        processes 1 {pid 1, ppid 2 (int32), cmdline 3 (repeated string)},
//                      threads 2 {tid 1 (int32), name 2 (string), tgid 3 (int32)}
//
// How Perfetto's importer reads them (src/trace_processor/importers/etw/etw_{tokenizer,parser}.cc):
// * an event's cpu is its own `cpu`, else its bundle's (both are written); its timestamp is used as is,
//   in nanoseconds of the trace's time line, so timestamps are ns since the trace start (Clock: the
//   logfile header's timestamp maps to 0). Events go to one queue per CPU that the importer sorts
//   (src/trace_processor/sorter/trace_sorter.h: an out-of-order queue is sorted before extraction, and a
//   file without tracing-service flush events is extracted once, at its end), so neither bundles nor
//   events need to be in time order; we write rows in decode order. A cpu of 1024 or more is refused
//   (only corrupt input has one).
// * c_switch: old/new thread, old_thread_state (enum, else the _int), old_thread_wait_reason (the enum
//   only: used when the state is Waiting) and new_thread_priority. The event's thread_id is not read for
//   a switch, and we do not decode the CSwitch header's thread id: it is omitted. A row whose new thread
//   is unknown (the last compact switch of a CPU) omits new_thread_id; Perfetto then shows its remainder
//   as thread 4294967295 "Anonymized Process".
// * ready_thread: t_thread_id is the woken thread, the event's thread_id the waker. The readythread
//   table has no waker column (the event header's thread id is not decoded), so thread_id is the
//   readying thread as the README's cpuUsage defines it: the new thread of the latest switch on the
//   event's CPU at or before it. It is known only once the CPU's switches up to the event's time have
//   arrived (compact rows come one switch late), so ReadyThread events wait per CPU — at most
//   `readyWindow` of them; past that the oldest are written with the thread known so far (counted in
//   `readyingForced`). Unknown (no switch before it on its CPU): thread_id omitted (Perfetto says 0).
// * process_tree (no packet timestamp: Perfetto applies it at the latest time seen, so first or last in
//   the file both work): a process without cmdline is skipped by Perfetto; cmdline is [imageFileName,
//   commandLine] of what is present (Perfetto names the process after cmdline[0], cut at its first space
//   when it is the only entry). One Thread per `threads` row (tid, tgid = processId, name when known).
//
// Values: every present cell is written, null cells are omitted (compact rows have no new-thread
// priority, idle packets no old priority, …); an enum value outside the Perfetto enum goes to the
// oneof's _int field. Columns without a Perfetto field (quanta, priority decrement, remaining quantum,
// BAM flags, wait-time-at-most-one-tick) are not written.
//
// * perf_sample (output/perfetto-samples.ts): one TracePacket per SampledProfile row, at its time (the
//   packet's timestamp, the events' time line) with its cpu, process (pid omitted when the thread's process
//   is unknown), thread and callstack — the instruction pointer, then the stack's callers when the trace has
//   stacks — and cpu_mode (kernel or user, by the instruction pointer). Perfetto shows them on the thread's
//   track as a CPU profile. They have their own packet sequence (`samplesSequenceId`): its first packet says
//   SEQ_INCREMENTAL_STATE_CLEARED, the others SEQ_NEEDS_INCREMENTAL_STATE, and each carries the interned
//   entries it is the first to use.
//
// Streaming: each cswitch()/readyThread() call writes one EtwTraceEventBundle packet per CPU present
// (split every `maxBundleEvents` events) into a byte buffer, handed to the sink when it holds
// `flushBytes` or more at the end of a call — memory is bounded by the chunk, the ReadyThread window and
// a few per-CPU numbers, never by the trace. Samples are the exception: a sample's callstack needs the
// trace's image lifetimes, its thread's process and its stack, known only once the whole trace is decoded
// (a stack-key reference takes the frames of a later definition), so samples() takes the whole samples
// table and stack events at the end — memory proportional to the samples, the stack events and the
// distinct frames and callstacks — and hands its packets to the sink every `flushBytes`.
// Browser-safe: no node imports.
import * as R from '../generated/registry.js';
import { SampleFrames, type SampleStacksInput } from '../analysis/sample-frames.js';
import { isKernelAddress, processOfSample } from '../analysis/samples.js';
import { resolveSelection } from '../select/selection.js';
import type { DecodeResult } from '../result/summary.js';
import { Table } from '../tables/table.js';
import { TickConverter, type Clock } from '../time.js';
import { concatBytes } from './bytes.js';
import { CallstackInterner, MODE_KERNEL, MODE_USER, writePerfSample } from './perfetto-samples.js';
import { ProtoWriter, putVarint32, putVarint64 } from './protobuf.js';
import { sinkWait, type ByteSink } from './sink.js';

// Trace / TracePacket / EtwTraceEventBundle / EtwTraceEvent
const TRACE_PACKET = 1;
const PACKET_PROCESS_TREE = 2;
const PACKET_TIMESTAMP = 8;
const PACKET_SEQUENCE_ID = 10;
const PACKET_INTERNED_DATA = 12;
const PACKET_SEQUENCE_FLAGS = 13;
const PACKET_PERF_SAMPLE = 66;
const PACKET_ETW_EVENTS = 95;
/** TracePacket.SequenceFlags */
const SEQ_INCREMENTAL_STATE_CLEARED = 1;
const SEQ_NEEDS_INCREMENTAL_STATE = 2;
const BUNDLE_CPU = 1;
const BUNDLE_EVENT = 2;
const EVENT_TIMESTAMP = 1;
const EVENT_C_SWITCH = 2;
const EVENT_READY_THREAD = 3;
const EVENT_CPU = 4;
const EVENT_THREAD_ID = 5;
// CSwitchEtwEvent
const CS_NEW_THREAD_ID = 1;
const CS_OLD_THREAD_ID = 2;
const CS_NEW_THREAD_PRIORITY = 3;
const CS_OLD_THREAD_PRIORITY = 4;
const CS_PREVIOUS_C_STATE = 5;
const CS_WAIT_REASON = 6;
const CS_WAIT_MODE = 7;
const CS_THREAD_STATE = 8;
const CS_IDEAL_PROCESSOR = 9;
const CS_NEW_THREAD_WAIT_TIME = 10;
const CS_WAIT_REASON_INT = 11;
const CS_WAIT_MODE_INT = 12;
const CS_THREAD_STATE_INT = 13;
/** largest value of each enum: OldThreadWaitReason (MAXIMUM_WAIT_REASON), OldThreadWaitMode, OldThreadState */
const MAX_WAIT_REASON = 37;
const MAX_WAIT_MODE = 1;
const MAX_THREAD_STATE = 7;
// ReadyThreadEtwEvent
const RT_T_THREAD_ID = 1;
const RT_ADJUST_REASON = 2;
const RT_ADJUST_INCREMENT = 3;
const RT_FLAG = 4;
const RT_ADJUST_REASON_INT = 5;
const RT_FLAG_INT = 6;
const MAX_ADJUST_REASON = 2;
/** TraceFlag values: UNSPECIFIED 0, THREAD_READIED 1, KERNEL_STACK_SWAPPED_OUT 2, PROCESS_ADDRESS_SWAPPED_OUT 4 */
const isTraceFlag = (v: number): boolean => v === 0 || v === 1 || v === 2 || v === 4;
// ProcessTree
const TREE_PROCESSES = 1;
const TREE_THREADS = 2;
const PROCESS_PID = 1;
const PROCESS_PPID = 2;
const PROCESS_CMDLINE = 3;
const THREAD_TID = 1;
const THREAD_NAME = 2;
const THREAD_TGID = 3;

// keys (field << 3 | wire type) and valid bits of the hot path
const KEY_BUNDLE_EVENT = (BUNDLE_EVENT << 3) | 2;
const KEY_EVENT_TIMESTAMP = EVENT_TIMESTAMP << 3;
const KEY_EVENT_CPU = EVENT_CPU << 3;
const KEY_EVENT_THREAD_ID = EVENT_THREAD_ID << 3;
const KEY_EVENT_C_SWITCH = (EVENT_C_SWITCH << 3) | 2;
const KEY_EVENT_READY_THREAD = (EVENT_READY_THREAD << 3) | 2;
/** key + length + timestamp (11) + cpu (4) + thread_id (6) + key + length + the widest c_switch (39) */
const MAX_EVENT_BYTES = 64;
const VALID_NEW_THREAD_ID = 1 << R.CS_NEW_THREAD_ID;
const VALID_NEW_THREAD_PRIORITY = 1 << R.CS_NEW_THREAD_PRIORITY;
const VALID_OLD_THREAD_PRIORITY = 1 << R.CS_OLD_THREAD_PRIORITY;
const VALID_PREVIOUS_CSTATE = 1 << R.CS_PREVIOUS_CSTATE;
const VALID_WAIT_REASON = 1 << R.CS_OLD_THREAD_WAIT_REASON;
const VALID_WAIT_MODE = 1 << R.CS_OLD_THREAD_WAIT_MODE;
const VALID_THREAD_STATE = 1 << R.CS_OLD_THREAD_STATE;
const VALID_IDEAL_PROCESSOR = 1 << R.CS_OLD_THREAD_IDEAL_PROCESSOR;
const VALID_NEW_THREAD_WAIT_TIME = 1 << R.CS_NEW_THREAD_WAIT_TIME;
const TWO_32 = 4294967296;

/** sint32 encoding of a small integer */
const zigzag = (v: number): number => ((v << 1) ^ (v >> 31)) >>> 0;

/** Typed-array views read timestamps as 32-bit halves: only on little-endian hosts (all current ones). */
const LITTLE_ENDIAN = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;
const UNKNOWN = -1;

/** the int64 whose 32-bit halves are hi and lo */
const ticksOf = (hi: number, lo: number): bigint => (BigInt(hi | 0) << 32n) | BigInt(lo >>> 0);

export interface PerfettoOptions {
  /**
   * The trace's clock (DecodeResult.clock): timestamps become ns since the trace start. null (a clock
   * that cannot be converted): timestamps are raw ticks since `originTicks` — right order, unknown scale.
   */
  clock: Clock | null;
  /** without a clock: the tick written as 0 (default: the first timestamp written) */
  originTicks?: bigint;
  /** TracePacket.trusted_packet_sequence_id of every packet but the samples' (default 1) */
  sequenceId?: number;
  /** trusted_packet_sequence_id of the perf_sample packets, which carry interned data (default sequenceId + 1) */
  samplesSequenceId?: number;
  /** most events in one EtwTraceEventBundle packet (default 8192) */
  maxBundleEvents?: number;
  /** the buffer is handed to the sink at the end of a call once it holds this many bytes (default 1 MiB) */
  flushBytes?: number;
  /** most ReadyThread events held while their readying thread is not yet known (default 65 536) */
  readyWindow?: number;
}

export interface PerfettoStats {
  /** TracePackets written */
  packets: number;
  /** bytes handed to the sink */
  bytes: number;
  /** EtwTraceEvents with a c_switch */
  cswitchEvents: number;
  /** EtwTraceEvents with a ready_thread */
  readyThreadEvents: number;
  /** ReadyThread events written without thread_id: no switch (or one with an unknown new thread) before them on their CPU */
  readyingUnknown: number;
  /** ReadyThread events written before their CPU's switches up to their time had arrived (window full) */
  readyingForced: number;
  /** ReadyThread events that arrived behind later switches of their CPU than the last call's */
  readyLate: number;
  /** most ReadyThread events held at once */
  readyHeldMax: number;
  /** events timed before the trace start (written as negative int64 in the uint64 field, as Perfetto reads it) */
  beforeStart: number;
  /** ProcessTree entries written */
  processes: number;
  threads: number;
  /** perf_sample packets (SampledProfile rows), those without pid (the thread's process unknown), those whose row has a stack (resolveStacks) */
  perfSamples: number;
  samplesNoProcess: number;
  samplesWithStack: number;
  /** interned entries written */
  callstacks: number;
  frames: number;
  mappings: number;
  functionNames: number;
}

/** What samples() needs: the SampledProfile rows, the lifetimes, and the stack events when the trace has them. */
export interface PerfettoSamplesInput {
  samples: Table<'samples'>;
  images: Table<'images'>;
  threads: Table<'threads'>;
  processes: Table<'processes'>;
  /** the trace's stack events (DecodeResult.stackEvents, stackEventFrames): samples with a stack get their callers */
  stacks?: SampleStacksInput;
}

/** ReadyThread events of one CPU waiting for their readying thread (a queue of columns). */
class ReadyQueue {
  head = 0;
  tail = 0;
  lo = new Uint32Array(64);
  hi = new Int32Array(64);
  tid = new Uint32Array(64);
  reason = new Uint8Array(64);
  increment = new Int8Array(64);
  flags = new Uint8Array(64);

  get length(): number {
    return this.tail - this.head;
  }

  push(lo: number, hi: number, tid: number, reason: number, increment: number, flags: number): void {
    if (this.tail === this.lo.length) this.makeRoom();
    const i = this.tail++;
    this.lo[i] = lo;
    this.hi[i] = hi;
    this.tid[i] = tid;
    this.reason[i] = reason;
    this.increment[i] = increment;
    this.flags[i] = flags;
  }

  private makeRoom(): void {
    const n = this.length;
    const size = n * 2 > this.lo.length ? this.lo.length * 2 : this.lo.length;
    const move = <A extends Uint32Array | Int32Array | Uint8Array | Int8Array>(a: A, make: (n: number) => A): A => {
      const b = size === a.length ? a : make(size);
      b.set(a.subarray(this.head, this.tail), 0); // overlapping in place: set() copies the source first
      return b;
    };
    this.lo = move(this.lo, (k) => new Uint32Array(k));
    this.hi = move(this.hi, (k) => new Int32Array(k));
    this.tid = move(this.tid, (k) => new Uint32Array(k));
    this.reason = move(this.reason, (k) => new Uint8Array(k));
    this.increment = move(this.increment, (k) => new Int8Array(k));
    this.flags = move(this.flags, (k) => new Uint8Array(k));
    this.head = 0;
    this.tail = n;
  }
}

/** The state of a samples() call between flushes. */
interface SamplesJob {
  n: number;
  /** timestamps as int32 words (low, high) */
  time: Int32Array;
  cpu: Uint16Array;
  tid: Uint32Array;
  pointerSize: Uint8Array;
  frames: SampleFrames;
  interner: CallstackInterner;
  lifetimes: ReturnType<typeof resolveSelection>;
}

/** What the writer knows about one CPU. */
class CpuState {
  /** new thread of the latest switch applied (UNKNOWN: none yet, or its new thread is unknown) */
  current = UNKNOWN;
  /** latest switch time delivered (32-bit halves) */
  hasWatermark = false;
  wmLo = 0;
  wmHi = 0;
  /** the last cswitch() call's rows of this CPU: history[segStart, segEnd), `current` before them */
  histGen = -1;
  segStart = 0;
  segEnd = 0;
  before = UNKNOWN;
  /** position in the segment reached by ReadyThread lookups */
  cursor = 0;
  readonly queue = new ReadyQueue();
}

/** a < b for timestamps as (lo unsigned, hi signed) halves */
function less(alo: number, ahi: number, blo: number, bhi: number): boolean {
  return ahi < bhi || (ahi === bhi && alo < blo);
}

function grow<A extends Uint32Array | Int32Array>(a: A, n: number, make: (n: number) => A): A {
  if (a.length >= n) return a;
  let size = Math.max(a.length, 1024);
  while (size < n) size *= 2;
  return make(size);
}

/** Rows of a table grouped by CPU (a counting sort): `perm` lists row indices CPU by CPU, in row order. */
class CpuGroups {
  perm = new Int32Array(1024);
  /** CPUs present, ascending; rows of cpus[j] are perm[start[j] .. start[j+1]) */
  cpus: number[] = [];
  start: number[] = [];
  private readonly count = new Uint32Array(65536);

  group(cpu: Uint16Array, n: number): void {
    const count = this.count;
    const cpus: number[] = [];
    for (let i = 0; i < n; i++) if (count[cpu[i]!]!++ === 0) cpus.push(cpu[i]!);
    cpus.sort((a, b) => a - b);
    const start: number[] = [];
    let at = 0;
    for (const c of cpus) {
      start.push(at);
      const k = count[c]!;
      count[c] = at; // now the next free slot of c
      at += k;
    }
    start.push(at);
    this.perm = grow(this.perm, n, (k) => new Int32Array(k));
    const perm = this.perm;
    for (let i = 0; i < n; i++) perm[count[cpu[i]!]!++] = i;
    for (const c of cpus) count[c] = 0;
    this.cpus = cpus;
    this.start = start;
  }
}

export class PerfettoWriter {
  private readonly w: ProtoWriter;
  /** timestamps → ns since the trace start (raw ticks since an origin without a clock); null until that origin is known */
  private ns: TickConverter | null;
  private readonly sequenceId: number;
  private readonly samplesSequenceId: number;
  private samplesDone = false;
  private readonly maxBundleEvents: number;
  private readonly flushBytes: number;
  private readonly readyWindow: number;
  private readonly cpus: (CpuState | undefined)[] = [];
  private readonly switchGroups = new CpuGroups();
  private readonly readyGroups = new CpuGroups();
  // the last cswitch() call's rows (copied: borrowed chunks may be reused after the call)
  private gen = 0;
  private histTs = new Uint32Array(2048); // lo, hi per row
  private histNew = new Uint32Array(1024);
  private histValid = new Uint32Array(1024);
  private held = 0;
  // columns of the cswitch chunk being written
  private csValid: Uint32Array<ArrayBufferLike> = new Uint32Array(0);
  private csNew: Uint32Array<ArrayBufferLike> = new Uint32Array(0);
  private csOld: Uint32Array<ArrayBufferLike> = new Uint32Array(0);
  private csNewPri: Int8Array<ArrayBufferLike> = new Int8Array(0);
  private csOldPri: Int8Array<ArrayBufferLike> = new Int8Array(0);
  private csCState: Uint8Array<ArrayBufferLike> = new Uint8Array(0);
  private csReason: Uint8Array<ArrayBufferLike> = new Uint8Array(0);
  private csMode: Uint8Array<ArrayBufferLike> = new Uint8Array(0);
  private csState: Uint8Array<ArrayBufferLike> = new Uint8Array(0);
  private csIdeal: Uint8Array<ArrayBufferLike> = new Uint8Array(0);
  private csWaitTime: Uint32Array<ArrayBufferLike> = new Uint32Array(0);
  private bundleCpu = -1;
  private bundleEvents = 0;
  /** where the open event's length byte is */
  private eventLenAt = 0;
  private closed = false;
  private readonly stats: PerfettoStats = {
    packets: 0,
    bytes: 0,
    cswitchEvents: 0,
    readyThreadEvents: 0,
    readyingUnknown: 0,
    readyingForced: 0,
    readyLate: 0,
    readyHeldMax: 0,
    beforeStart: 0,
    processes: 0,
    threads: 0,
    perfSamples: 0,
    samplesNoProcess: 0,
    samplesWithStack: 0,
    callstacks: 0,
    frames: 0,
    mappings: 0,
    functionNames: 0,
  };

  /**
   * @param sink receives the trace's bytes in order, in buffers it owns (the writer keeps no reference);
   *   a returned promise is returned by the call that flushed (await it for backpressure)
   */
  constructor(
    private readonly sink: ByteSink,
    options: PerfettoOptions,
  ) {
    const { clock, originTicks } = options;
    this.ns = clock ? new TickConverter(clock, 'ns') : originTicks !== undefined ? new TickConverter(null, 'ns', originTicks) : null;
    this.sequenceId = options.sequenceId ?? 1;
    this.samplesSequenceId = options.samplesSequenceId ?? this.sequenceId + 1;
    this.maxBundleEvents = Math.max(1, options.maxBundleEvents ?? 8192);
    this.flushBytes = options.flushBytes ?? 1 << 20;
    this.readyWindow = Math.max(0, options.readyWindow ?? 1 << 16);
    this.w = new ProtoWriter(1 << 16);
  }

  /** Counters so far (a copy). */
  getStats(): PerfettoStats {
    return { ...this.stats };
  }

  /**
   * Writes the process_tree packet: the `processes` and `threads` lifetimes (DecodeResult / StreamResult).
   * Call it once, first when the tables are known (toPerfetto) or after the rows when streaming — Perfetto
   * reads the packets in any order.
   */
  processTree(threads: Table<'threads'>, processes: Table<'processes'>): void | Promise<void> {
    this.open();
    const w = this.w;
    w.begin(TRACE_PACKET);
    w.uint32Field(PACKET_SEQUENCE_ID, this.sequenceId);
    w.begin(PACKET_PROCESS_TREE);
    const pid = processes.column('processId');
    const ppid = processes.column('parentId');
    const image = processes.column('imageFileName');
    const cmd = processes.column('commandLine');
    for (let i = 0; i < processes.length; i++) {
      w.begin(TREE_PROCESSES);
      w.int32Field(PROCESS_PID, pid[i]!);
      w.int32Field(PROCESS_PPID, ppid[i]!);
      if (!processes.isNull(R.PR_IMAGE_FILE_NAME, i)) w.stringField(PROCESS_CMDLINE, image[i]!);
      if (!processes.isNull(R.PR_COMMAND_LINE, i) && cmd[i] !== '') w.stringField(PROCESS_CMDLINE, cmd[i]!);
      w.end();
    }
    const tid = threads.column('threadId');
    const tgid = threads.column('processId');
    const name = threads.column('name');
    for (let i = 0; i < threads.length; i++) {
      w.begin(TREE_THREADS);
      w.int32Field(THREAD_TID, tid[i]!);
      if (!threads.isNull(R.TH_NAME, i) && name[i] !== '') w.stringField(THREAD_NAME, name[i]!);
      w.int32Field(THREAD_TGID, tgid[i]!);
      w.end();
    }
    w.end();
    w.end();
    this.stats.packets++;
    this.stats.processes += processes.length;
    this.stats.threads += threads.length;
    return this.maybeFlush();
  }

  /** Writes the switches of one chunk (borrowed columns are fine: what is kept is copied). */
  cswitch(t: Table<'cswitch'>): void | Promise<void> {
    this.open();
    const n = t.length;
    if (n === 0) return this.maybeFlush();
    const ts = t.column('timestamp');
    const cpu = t.column('cpu');
    const newTid = t.column('newThreadId');
    const valid = t.column('valid');
    this.setSwitchColumns(t);
    // history for ReadyThread lookups until the next call
    this.gen++;
    this.histTs = grow(this.histTs, 2 * n, (k) => new Uint32Array(k));
    this.histTs.set(new Uint32Array(ts.buffer, ts.byteOffset, 2 * n));
    this.histNew = grow(this.histNew, n, (k) => new Uint32Array(k));
    this.histNew.set(newTid.subarray(0, n));
    this.histValid = grow(this.histValid, n, (k) => new Uint32Array(k));
    this.histValid.set(valid.subarray(0, n));
    const g = this.switchGroups;
    g.group(cpu, n);
    const perm = g.perm;
    const h = this.histTs;
    const hNew = this.histNew;
    const hValid = this.histValid;
    const NEW_BIT = 1 << R.CS_NEW_THREAD_ID;
    for (let j = 0; j < g.cpus.length; j++) {
      const cpuId = g.cpus[j]!;
      const st = this.state(cpuId);
      const a = g.start[j]!;
      const b = g.start[j + 1]!;
      st.before = st.current;
      st.histGen = this.gen;
      st.segStart = a;
      st.segEnd = b;
      st.cursor = a;
      const q = st.queue;
      this.openBundle(cpuId);
      for (let k = a; k < b; k++) {
        const r = perm[k]!;
        const lo = h[2 * r]!;
        const hi = h[2 * r + 1]! | 0;
        // ReadyThread events before this switch: their readying thread is the current one
        while (q.head < q.tail && less(q.lo[q.head]!, q.hi[q.head]!, lo, hi)) this.releaseFront(st, cpuId, false);
        this.writeSwitch(r, cpuId, lo, hi);
        st.current = (hValid[r]! & NEW_BIT) !== 0 ? hNew[r]! : UNKNOWN;
        if (!st.hasWatermark || less(st.wmLo, st.wmHi, lo, hi)) {
          st.hasWatermark = true;
          st.wmLo = lo;
          st.wmHi = hi;
        }
      }
      // and those at or before the latest switch
      while (q.head < q.tail && !less(st.wmLo, st.wmHi, q.lo[q.head]!, q.hi[q.head]!)) this.releaseFront(st, cpuId, false);
      this.closeBundle();
    }
    this.stats.cswitchEvents += n;
    this.limitHeld();
    return this.maybeFlush();
  }

  /** Writes (or holds until their readying thread is known) the ReadyThread events of one chunk. */
  readyThread(t: Table<'readythread'>): void | Promise<void> {
    this.open();
    const n = t.length;
    if (n === 0) return this.maybeFlush();
    const ts = t.column('timestamp');
    const halves = new Uint32Array(ts.buffer, ts.byteOffset, 2 * n);
    const cpu = t.column('cpu');
    const tid = t.column('threadId');
    const reason = t.column('adjustReason');
    const increment = t.column('adjustIncrement');
    const flags = t.column('flags');
    const g = this.readyGroups;
    g.group(cpu, n);
    const perm = g.perm;
    for (let j = 0; j < g.cpus.length; j++) {
      const cpuId = g.cpus[j]!;
      const st = this.state(cpuId);
      let open = false;
      for (let k = g.start[j]!; k < g.start[j + 1]!; k++) {
        const r = perm[k]!;
        const lo = halves[2 * r]!;
        const hi = halves[2 * r + 1]! | 0;
        if (st.hasWatermark && !less(st.wmLo, st.wmHi, lo, hi)) {
          // a switch at or after it has been written: its readying thread is known now
          if (!open) {
            this.openBundle(cpuId);
            open = true;
          }
          this.writeReady(cpuId, lo, hi, this.readyingAt(st, lo, hi), tid[r]!, reason[r]!, increment[r]!, flags[r]!);
        } else {
          st.queue.push(lo, hi, tid[r]!, reason[r]!, increment[r]!, flags[r]!);
          this.held++;
        }
      }
      if (open) this.closeBundle();
    }
    if (this.held > this.stats.readyHeldMax) this.stats.readyHeldMax = this.held;
    this.limitHeld();
    return this.maybeFlush();
  }

  /**
   * Writes every SampledProfile row as a perf_sample packet with its callstack (see the file comment). Once,
   * with the whole trace's rows and lifetimes (after streaming: StreamResult's images, threads, processes);
   * packets go to the sink every `flushBytes` (await the returned promise).
   */
  samples(input: PerfettoSamplesInput): void | Promise<void> {
    this.open();
    if (this.samplesDone) throw new Error('PerfettoWriter: samples() already called');
    this.samplesDone = true;
    const t = input.samples;
    const ts = t.column('timestamp');
    const job: SamplesJob = {
      n: t.length,
      time: new Int32Array(ts.buffer, ts.byteOffset, 2 * t.length),
      cpu: t.column('cpu'),
      tid: t.column('threadId'),
      pointerSize: t.column('pointerSize'),
      frames: new SampleFrames(t, input.stacks),
      interner: new CallstackInterner(input.images),
      lifetimes: resolveSelection({}, null, input),
    };
    return this.samplesFrom(job, 0);
  }

  /** Writes the samples from row `from` on, yielding to the sink's promise when a flush returns one. */
  private samplesFrom(j: SamplesJob, from: number): void | Promise<void> {
    const w = this.w;
    const words = j.frames;
    for (let i = from; i < j.n; i++) {
      const tHi = j.time[2 * i + 1]!;
      const tLo = j.time[2 * i]! >>> 0;
      const tid = j.tid[i]!;
      const pid = processOfSample(j.lifetimes, tid, tHi, tLo);
      const n = words.of(i);
      const f = words.words;
      const callstack = j.interner.callstack(f, n, j.pointerSize[i]!, pid, tHi, tLo);
      w.begin(TRACE_PACKET);
      w.ensure(11);
      w.buf[w.pos++] = PACKET_TIMESTAMP << 3;
      w.pos = this.putTimestamp(w.buf, w.pos, tLo, tHi);
      w.uint32Field(PACKET_SEQUENCE_ID, this.samplesSequenceId);
      w.uint32Field(PACKET_SEQUENCE_FLAGS, this.stats.perfSamples === 0 ? SEQ_INCREMENTAL_STATE_CLEARED : SEQ_NEEDS_INCREMENTAL_STATE);
      j.interner.take(w, PACKET_INTERNED_DATA);
      writePerfSample(w, PACKET_PERF_SAMPLE, j.cpu[i]!, pid, tid, callstack, isKernelAddress(j.pointerSize[i]!, f[1]!, f[0]!) ? MODE_KERNEL : MODE_USER);
      w.end();
      this.stats.packets++;
      this.stats.perfSamples++;
      if (pid < 0) this.stats.samplesNoProcess++;
      if (words.stackOfSample(i) >= 0) this.stats.samplesWithStack++;
      if (w.pos >= this.flushBytes) {
        const wait = this.flush();
        if (wait) return wait.then(() => this.samplesFrom(j, i + 1));
      }
    }
    const c = j.interner.counts;
    this.stats.callstacks = c.callstacks;
    this.stats.frames = c.frames;
    this.stats.mappings = c.mappings;
    this.stats.functionNames = c.functionNames;
    return undefined;
  }

  /** Writes the ReadyThread events still held (every switch has arrived) and hands the rest to the sink. */
  close(): void | Promise<void> {
    this.open();
    for (let cpuId = 0; cpuId < this.cpus.length; cpuId++) {
      const st = this.cpus[cpuId];
      if (!st || st.queue.length === 0) continue;
      this.openBundle(cpuId);
      while (st.queue.length) this.releaseFront(st, cpuId, false);
      this.closeBundle();
    }
    this.closed = true;
    return this.flush();
  }

  // -------------------------------------------------------------------------------------------

  private open(): void {
    if (this.closed) throw new Error('PerfettoWriter: already closed');
  }

  private state(cpu: number): CpuState {
    let st = this.cpus[cpu];
    if (!st) {
      while (this.cpus.length < cpu) this.cpus.push(undefined);
      st = new CpuState();
      this.cpus[cpu] = st;
    }
    return st;
  }

  /** The readying thread of a ReadyThread event at (lo, hi) arriving after its CPU's switches past it. */
  private readyingAt(st: CpuState, lo: number, hi: number): number {
    if (st.histGen !== this.gen) {
      // the CPU's switches past it came in an earlier call: it arrived late
      this.stats.readyLate++;
      return st.current;
    }
    const perm = this.switchGroups.perm;
    const h = this.histTs;
    let k = st.cursor;
    while (k < st.segEnd) {
      const r = perm[k]!;
      if (less(lo, hi, h[2 * r]!, h[2 * r + 1]! | 0)) break;
      k++;
    }
    st.cursor = k;
    if (k === st.segStart) return st.before;
    const r = perm[k - 1]!;
    return (this.histValid[r]! & (1 << R.CS_NEW_THREAD_ID)) !== 0 ? this.histNew[r]! : UNKNOWN;
  }

  /** Writes the oldest held ReadyThread event of a CPU, readied by its current thread, into the open bundle. */
  private releaseFront(st: CpuState, cpuId: number, forced: boolean): void {
    const q = st.queue;
    const i = q.head++;
    this.held--;
    if (forced) this.stats.readyingForced++;
    this.writeReady(cpuId, q.lo[i]!, q.hi[i]!, st.current, q.tid[i]!, q.reason[i]!, q.increment[i]!, q.flags[i]!);
    if (q.head === q.tail) q.head = q.tail = 0;
  }

  /** Keeps at most readyWindow events held: the oldest of the longest queues are written with what is known. */
  private limitHeld(): void {
    while (this.held > this.readyWindow) {
      let best = -1;
      for (let i = 0; i < this.cpus.length; i++) {
        const st = this.cpus[i];
        if (st && (best < 0 || st.queue.length > this.cpus[best]!.queue.length)) best = i;
      }
      const st = this.cpus[best]!;
      const k = Math.min(st.queue.length, this.held - this.readyWindow);
      this.openBundle(best);
      for (let i = 0; i < k; i++) this.releaseFront(st, best, true);
      this.closeBundle();
    }
  }

  private openBundle(cpuId: number): void {
    const w = this.w;
    w.begin(TRACE_PACKET);
    w.uint32Field(PACKET_SEQUENCE_ID, this.sequenceId);
    w.begin(PACKET_ETW_EVENTS);
    w.uint32Field(BUNDLE_CPU, cpuId);
    this.bundleCpu = cpuId;
    this.bundleEvents = 0;
  }

  private closeBundle(): void {
    this.w.end();
    this.w.end();
    this.stats.packets++;
    this.bundleCpu = -1;
  }

  /**
   * Starts an EtwTraceEvent (a new bundle when this one is full): reserves room for the largest event,
   * writes its key, a length byte to patch and its timestamp and cpu; returns the write position.
   * An event is at most 62 bytes (every field at its widest), so its length and that of its c_switch /
   * ready_thread fit one byte each.
   */
  private beginEvent(cpuId: number, lo: number, hi: number): number {
    if (this.bundleEvents === this.maxBundleEvents) {
      this.closeBundle();
      this.openBundle(cpuId);
    }
    this.bundleEvents++;
    const w = this.w;
    if (w.pos + MAX_EVENT_BYTES > w.buf.length) w.ensure(MAX_EVENT_BYTES);
    const b = w.buf;
    let p = w.pos;
    b[p++] = KEY_BUNDLE_EVENT;
    this.eventLenAt = p++;
    b[p++] = KEY_EVENT_TIMESTAMP;
    p = this.putTimestamp(b, p, lo, hi);
    b[p++] = KEY_EVENT_CPU;
    return putVarint32(b, p, cpuId);
  }

  /**
   * Writes the uint64 varint (at most 10 bytes, room checked by the caller) of the time of the tick count
   * (lo, hi) in ns since the trace start; returns the position after it. Before the start: a negative
   * int64 in the uint64, as Perfetto reads it (counted in beforeStart).
   */
  private putTimestamp(b: Uint8Array, p: number, lo: number, hi: number): number {
    const conv = this.ns ?? (this.ns = new TickConverter(null, 'ns', ticksOf(hi, lo))); // no clock: the first timestamp is 0
    const ns = LITTLE_ENDIAN ? conv.fromHalves(hi, lo) : NaN;
    if (ns === ns) {
      if (ns < 0) this.stats.beforeStart++;
      return ns >= 0 && ns < TWO_32 ? putVarint32(b, p, ns) : putVarint64(b, p, ns - Math.floor(ns / TWO_32) * TWO_32, Math.floor(ns / TWO_32));
    }
    const v = BigInt.asUintN(64, conv.exact(ticksOf(hi, lo)));
    if (v >= 1n << 63n) this.stats.beforeStart++;
    return putVarint64(b, p, Number(v & 0xffffffffn), Number(v >> 32n));
  }

  /** Closes the event begun at beginEvent(), whose write position is now `p`. */
  private endEvent(p: number): void {
    const b = this.w.buf;
    b[this.eventLenAt] = p - this.eventLenAt - 1;
    this.w.pos = p;
  }

  /** Writes row r of the cswitch chunk whose columns setSwitchColumns() took. */
  private writeSwitch(r: number, cpuId: number, lo: number, hi: number): void {
    let p = this.beginEvent(cpuId, lo, hi);
    const b = this.w.buf;
    const v = this.csValid[r]!;
    b[p++] = KEY_EVENT_C_SWITCH;
    const at = p++;
    if (v & VALID_NEW_THREAD_ID) {
      b[p++] = CS_NEW_THREAD_ID << 3;
      p = putVarint32(b, p, this.csNew[r]!);
    }
    b[p++] = CS_OLD_THREAD_ID << 3;
    p = putVarint32(b, p, this.csOld[r]!);
    if (v & VALID_NEW_THREAD_PRIORITY) {
      b[p++] = CS_NEW_THREAD_PRIORITY << 3;
      p = putVarint32(b, p, zigzag(this.csNewPri[r]!));
    }
    if (v & VALID_OLD_THREAD_PRIORITY) {
      b[p++] = CS_OLD_THREAD_PRIORITY << 3;
      p = putVarint32(b, p, zigzag(this.csOldPri[r]!));
    }
    if (v & VALID_PREVIOUS_CSTATE) {
      b[p++] = CS_PREVIOUS_C_STATE << 3;
      p = putVarint32(b, p, this.csCState[r]!);
    }
    if (v & VALID_WAIT_REASON) {
      const x = this.csReason[r]!; // u8: int32 and enum values are plain varints
      b[p++] = (x <= MAX_WAIT_REASON ? CS_WAIT_REASON : CS_WAIT_REASON_INT) << 3;
      p = putVarint32(b, p, x);
    }
    if (v & VALID_WAIT_MODE) {
      const x = this.csMode[r]!;
      b[p++] = (x <= MAX_WAIT_MODE ? CS_WAIT_MODE : CS_WAIT_MODE_INT) << 3;
      p = putVarint32(b, p, x);
    }
    if (v & VALID_THREAD_STATE) {
      const x = this.csState[r]!;
      if (x <= MAX_THREAD_STATE) {
        b[p++] = CS_THREAD_STATE << 3;
        p = putVarint32(b, p, x);
      } else {
        b[p++] = CS_THREAD_STATE_INT << 3; // sint32
        p = putVarint32(b, p, zigzag(x));
      }
    }
    if (v & VALID_IDEAL_PROCESSOR) {
      b[p++] = CS_IDEAL_PROCESSOR << 3;
      p = putVarint32(b, p, zigzag(this.csIdeal[r]!));
    }
    if (v & VALID_NEW_THREAD_WAIT_TIME) {
      b[p++] = CS_NEW_THREAD_WAIT_TIME << 3;
      p = putVarint32(b, p, this.csWaitTime[r]!);
    }
    b[at] = p - at - 1;
    this.endEvent(p);
  }

  private setSwitchColumns(t: Table<'cswitch'>): void {
    this.csValid = t.column('valid');
    this.csNew = t.column('newThreadId');
    this.csOld = t.column('oldThreadId');
    this.csNewPri = t.column('newThreadPriority');
    this.csOldPri = t.column('oldThreadPriority');
    this.csCState = t.column('previousCState');
    this.csReason = t.column('oldThreadWaitReason');
    this.csMode = t.column('oldThreadWaitMode');
    this.csState = t.column('oldThreadState');
    this.csIdeal = t.column('oldThreadIdealProcessor');
    this.csWaitTime = t.column('newThreadWaitTime');
  }

  private writeReady(cpuId: number, lo: number, hi: number, readying: number, tid: number, reason: number, increment: number, flags: number): void {
    let p = this.beginEvent(cpuId, lo, hi);
    const b = this.w.buf;
    if (readying === UNKNOWN) this.stats.readyingUnknown++;
    else {
      b[p++] = KEY_EVENT_THREAD_ID;
      p = putVarint32(b, p, readying);
    }
    b[p++] = KEY_EVENT_READY_THREAD;
    const at = p++;
    b[p++] = RT_T_THREAD_ID << 3;
    p = putVarint32(b, p, tid);
    b[p++] = (reason <= MAX_ADJUST_REASON ? RT_ADJUST_REASON : RT_ADJUST_REASON_INT) << 3; // u8: plain varint either way
    p = putVarint32(b, p, reason);
    b[p++] = RT_ADJUST_INCREMENT << 3;
    p = putVarint32(b, p, zigzag(increment));
    b[p++] = (isTraceFlag(flags) ? RT_FLAG : RT_FLAG_INT) << 3;
    p = putVarint32(b, p, flags);
    b[at] = p - at - 1;
    this.endEvent(p);
    this.stats.readyThreadEvents++;
  }

  private maybeFlush(): void | Promise<void> {
    return this.w.pos >= this.flushBytes ? this.flush() : undefined;
  }

  private flush(): void | Promise<void> {
    if (this.w.pos === 0) return undefined;
    const bytes = this.w.take();
    this.stats.bytes += bytes.length;
    return sinkWait(this.sink(bytes));
  }
}

export type ToPerfettoOptions = Partial<PerfettoOptions>;

/** rows per cswitch() call of toPerfetto */
const TO_PERFETTO_ROWS = 1 << 16;

/**
 * A whole decode result as one Perfetto trace (in memory: for a browser download). The process tree comes
 * first, then the switches and ReadyThread events, then the samples with their stacks. `clock` defaults to
 * the result's.
 */
export function toPerfetto(result: DecodeResult, options: ToPerfettoOptions = {}): Uint8Array {
  const parts: Uint8Array[] = [];
  const writer = new PerfettoWriter(
    (b) => {
      parts.push(b);
    },
    { readyWindow: Infinity, ...options, clock: options.clock === undefined ? result.clock : options.clock },
  );
  writer.processTree(result.threads, result.processes);
  // the ReadyThread events wait (all of them: readyWindow) for the switches, which go in chunks so that
  // the writer's buffer stays the size of a chunk's output
  writer.readyThread(result.readythread);
  const cs = result.cswitch;
  for (let at = 0; at < cs.length || at === 0; at += TO_PERFETTO_ROWS) {
    const end = Math.min(cs.length, at + TO_PERFETTO_ROWS);
    writer.cswitch(new Table('cswitch', { length: end - at, columns: cs.columns.map((c) => (c as Uint8Array).subarray(at, end)) }));
  }
  // (tolerant of a result assembled by hand without the samples or stack tables: none written, or no callers)
  if (result.samples?.length) writer.samples({ ...result, stacks: result.stackEvents ? result : undefined });
  writer.close();
  return parts.length === 1 ? parts[0]! : concatBytes(parts);
}
