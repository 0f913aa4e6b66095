// The trace writer: routes events to per-processor buffers in the order the kernel would log them,
// packs compact switches into batches, flushes buffers and assembles the file. writeTrace() is the
// one-shot API; TraceWriter is the streaming core used by the generators. Browser-safe.
import * as L from '../generated/layout.js';
import { BufferFlusher, FileOrder, OpenBuffer } from './buffers.js';
import type { Chunk, Compressor } from './buffers.js';
import { checkCompactSwitch, CompactBatcher, compactTickLimit } from './compact.js';
import type { BatchEmitter, BatchFlushReason } from './compact.js';
import {
  align8,
  checkInt,
  checkTimestamp,
  encodeCSwitch,
  encodeRaw,
  encodeSpinLock,
  fieldName,
  measureCSwitch,
  measureRaw,
  measureSpinLock,
  perfInfoType,
  writePerfInfoHeader,
} from './events.js';
import {
  encodeImage,
  encodeSampleInterval,
  encodeProcess,
  encodeReadyThread,
  encodeSampledProfile,
  encodeStackWalk,
  encodeSetThreadName,
  encodeThread,
  measureImage,
  measureSampleInterval,
  measureProcess,
  measureReadyThread,
  measureSampledProfile,
  measureStackWalk,
  measureSetThreadName,
  measureThread,
} from './sched-events.js';
import {
  buildHeaderBuffer,
  checkHeaderFits,
  headerBufferFilled,
  normalizeOptions,
  timestampToFiletime,
} from './logfile.js';
import type { NormalizedOptions } from './logfile.js';
import type {
  CompactPacketInfo,
  CompactSwitchSpec,
  EventSpec,
  TraceDescription,
  TraceOptions,
  WrittenBuffer,
  WrittenTrace,
} from './types.js';
import { xpressCompress } from './xpress-encode.js';

/** number of events in the header buffer */
export const HEADER_EVENTS = 2;

export interface TraceWriterOptions {
  /** collect CompactPacketInfo for every compact switch (default true) */
  collectPackets?: boolean;
  /** override the XPRESS compressor (default: xpressCompress from ./xpress-encode.js) */
  compressor?: Compressor;
  /** validate every event spec (default true) */
  validate?: boolean;
}

/** Statistics of batch flush reasons (for tests). */
export type FlushReasonCounts = Record<BatchFlushReason, number>;

interface CpuState {
  buf: OpenBuffer;
  batcher: CompactBatcher;
  /** last timestamp added on this processor (input order check) */
  lastAdded: bigint;
}

/**
 * Streaming writer. Feed events with add() — per processor in non-decreasing timestamp order; the order
 * of add() calls across processors is the order in which buffers fill up and get flushed (sequence
 * numbers) — then call finish(). Flushed data buffers in file order are available from takeChunks();
 * the header buffer (which must be written first and needs the final buffer count) from headerBuffer().
 */
export class TraceWriter {
  readonly o: NormalizedOptions;
  private readonly cpus: CpuState[] = [];
  private readonly flusher: BufferFlusher;
  private readonly order: FileOrder;
  private readonly validate: boolean;
  private readonly emitBatch: BatchEmitter;
  private readonly maxEventSize: number;
  /** data events written (batch = 1 event) */
  dataEvents = 0;
  compactBatches = 0;
  readonly reasons: FlushReasonCounts = { tidTableFull: 0, deltaOverflow: 0, tickLimit: 0, full: 0, end: 0 };
  private readonly packets: CompactPacketInfo[] | null;
  /** largest timestamp written */
  maxTimestamp: bigint | null = null;
  private finished = false;
  private addIndex = 0;

  constructor(opts: TraceOptions, wopts: TraceWriterOptions = {}) {
    this.o = normalizeOptions(opts);
    checkHeaderFits(this.o);
    this.validate = wopts.validate ?? true;
    this.packets = (wopts.collectPackets ?? true) ? [] : null;
    this.flusher = new BufferFlusher(this.o, wopts.compressor ?? xpressCompress);
    this.order = new FileOrder(this.o.outOfOrder);
    this.maxEventSize = this.o.bufferSize - L.WMI_BUFFER_HEADER_SIZE;
    const limit = compactTickLimit(this.o.clockType, this.o.timerResolution, this.o.perfFreq, this.o.cpuSpeedInMHz);
    const collect = this.packets !== null;
    for (let c = 0; c < this.o.numberOfProcessors; c++) {
      this.cpus.push({
        buf: new OpenBuffer(c, this.o.bufferSize),
        batcher: new CompactBatcher(c, this.o.bias, limit, collect),
        lastAdded: -1n,
      });
    }
    this.emitBatch = (batcher, ts, data, reason) => {
      const st = this.cpus[batcher.cpu];
      const ht = perfInfoType(batcher.header, this.o.pointerSize, -1);
      const size = L.PERFINFO_HEADER_SIZE + data.length;
      const off = this.reserve(st.buf, size);
      const p = writePerfInfoHeader(st.buf.dv, off, ht, L.CCS_EVENT_VERSION, L.HOOK_COMPCS, size, ts);
      st.buf.u8.set(data, p);
      this.commit(st.buf, size, ts);
      const infos = batcher.takeInfos();
      if (infos && this.packets) {
        for (const i of infos) {
          i.batch = this.compactBatches;
          this.packets.push(i);
        }
      }
      this.compactBatches++;
      this.reasons[reason]++;
    };
  }

  /** OldThreadStateWr bias */
  get bias(): number {
    return this.o.bias;
  }

  /** data buffers flushed so far */
  get flushedBuffers(): number {
    return this.flusher.flushed;
  }

  /** Exact number of data buffers the file will have if finish() is called now. */
  predictDataBuffers(): number {
    let n = this.flusher.flushed;
    const bs = this.o.bufferSize;
    for (const st of this.cpus) {
      let off = st.buf.off;
      if (st.batcher.count > 0) {
        const sz = align8(L.PERFINFO_HEADER_SIZE + st.batcher.dataSize());
        if (off + sz > bs) {
          n++;
          off = L.WMI_BUFFER_HEADER_SIZE;
        }
        off += sz;
      }
      if (off > L.WMI_BUFFER_HEADER_SIZE) n++;
    }
    return n;
  }

  /** Current fill offset of a processor's open buffer (for generators). */
  openBufferOffset(cpu: number): number {
    return this.cpus[cpu].buf.off;
  }

  /** Whether a processor has an open compact batch. */
  hasOpenBatch(cpu: number): boolean {
    return this.cpus[cpu].batcher.count > 0;
  }

  /** Adds one event. `index` is used in error messages (default: running count). */
  add(e: EventSpec, index = this.addIndex): void {
    this.addIndex = index + 1;
    if (this.finished) throw new Error('TraceWriter: add after finish');
    const o = this.o;
    if (this.validate) {
      if (e === null || typeof e !== 'object') throw new RangeError(`${fieldName(index, 'kind')}: not an event`);
      checkInt(e.cpu, 0, o.numberOfProcessors - 1, index, 'cpu');
      checkTimestamp(e.timestamp, index);
    }
    const st = this.cpus[e.cpu];
    if (e.timestamp < st.lastAdded) {
      throw new RangeError(
        `${fieldName(index, 'timestamp')}: ${e.timestamp} is earlier than the previous event on cpu ${e.cpu} (${st.lastAdded})`,
      );
    }
    st.lastAdded = e.timestamp;
    switch (e.kind) {
      case 'compactSwitch':
        if (this.validate) checkCompactSwitch(e, index, o.bias);
        if (L.PERFINFO_HEADER_SIZE + L.CCS_MAX_BATCH_BYTES > this.maxEventSize) {
          throw new RangeError(`bufferSize: ${o.bufferSize} is too small for compact batches (needs >= 0x458)`);
        }
        st.batcher.add(e, this.emitBatch);
        return;
      case 'cswitch': {
        const size = measureCSwitch(e, index);
        this.checkFits(size, index);
        const off = this.reserve(st.buf, size);
        encodeCSwitch(st.buf.dv, off, e, size, o.pointerSize);
        this.commit(st.buf, size, e.timestamp);
        return;
      }
      case 'spinlock': {
        const size = measureSpinLock(e, index, o.pointerSize);
        this.checkFits(size, index);
        const off = this.reserve(st.buf, size);
        encodeSpinLock(st.buf.dv, off, e, size, o.pointerSize);
        this.commit(st.buf, size, e.timestamp);
        return;
      }
      case 'thread': {
        const size = measureThread(e, index, o.pointerSize);
        this.checkFits(size, index);
        const off = this.reserve(st.buf, size);
        encodeThread(st.buf.u8, st.buf.dv, off, e, size, o.pointerSize);
        this.commit(st.buf, size, e.timestamp);
        return;
      }
      case 'process': {
        const size = measureProcess(e, index, o.pointerSize);
        this.checkFits(size, index);
        const off = this.reserve(st.buf, size);
        encodeProcess(st.buf.u8, st.buf.dv, off, e, size, o.pointerSize);
        this.commit(st.buf, size, e.timestamp);
        return;
      }
      case 'setThreadName': {
        const size = measureSetThreadName(e, index, o.pointerSize);
        this.checkFits(size, index);
        const off = this.reserve(st.buf, size);
        encodeSetThreadName(st.buf.u8, st.buf.dv, off, e, size, o.pointerSize);
        this.commit(st.buf, size, e.timestamp);
        return;
      }
      case 'readyThread': {
        const size = measureReadyThread(e, index, o.pointerSize);
        this.checkFits(size, index);
        const off = this.reserve(st.buf, size);
        encodeReadyThread(st.buf.dv, off, e, size, o.pointerSize);
        this.commit(st.buf, size, e.timestamp);
        return;
      }
      case 'sampledProfile': {
        const size = measureSampledProfile(e, index, o.pointerSize);
        this.checkFits(size, index);
        const off = this.reserve(st.buf, size);
        encodeSampledProfile(st.buf.dv, off, e, size, o.pointerSize);
        this.commit(st.buf, size, e.timestamp);
        return;
      }
      case 'stackWalk': {
        const size = measureStackWalk(e, index, o.pointerSize);
        this.checkFits(size, index);
        const off = this.reserve(st.buf, size);
        encodeStackWalk(st.buf.dv, off, e, size, o.pointerSize);
        this.commit(st.buf, size, e.timestamp);
        return;
      }
      case 'image': {
        const size = measureImage(e, index, o.pointerSize);
        this.checkFits(size, index);
        const off = this.reserve(st.buf, size);
        encodeImage(st.buf.u8, st.buf.dv, off, e, size, o.pointerSize);
        this.commit(st.buf, size, e.timestamp);
        return;
      }
      case 'sampleInterval': {
        const size = measureSampleInterval(e, index, o.pointerSize);
        this.checkFits(size, index);
        const off = this.reserve(st.buf, size);
        encodeSampleInterval(st.buf.u8, st.buf.dv, off, e, size, o.pointerSize);
        this.commit(st.buf, size, e.timestamp);
        return;
      }
      case 'raw': {
        const size = measureRaw(e, index);
        this.checkFits(size, index);
        const off = this.reserve(st.buf, size);
        encodeRaw(st.buf.u8, st.buf.dv, off, e, size);
        this.commit(st.buf, size, e.timestamp);
        return;
      }
      default:
        throw new RangeError(`${fieldName(index, 'kind')}: ${String((e as { kind?: unknown }).kind)} is not an event kind`);
    }
  }

  /** Logs the open compact batches, flushes every non-empty buffer (in CPU order) and closes the file order. */
  finish(): void {
    if (this.finished) return;
    for (const st of this.cpus) {
      // logged at the end of the trace: at the latest time seen on this processor (>= its last switch)
      st.batcher.flush(st.lastAdded, 'end', this.emitBatch);
    }
    for (const st of this.cpus) if (!st.buf.empty) this.order.push(this.flusher.flush(st.buf));
    this.order.finish();
    this.finished = true;
  }

  /** Data buffers whose file position is final, in file order (drains them). */
  takeChunks(): Chunk[] {
    return this.order.take();
  }

  /** Sorted copy of the collected compact packet infos (by cpu, then time order). */
  compactPackets(): CompactPacketInfo[] {
    if (!this.packets) return [];
    const byCpu: CompactPacketInfo[][] = this.cpus.map(() => []);
    for (const p of this.packets) byCpu[p.cpu].push(p);
    return byCpu.flat();
  }

  /** EndTime default: FILETIME of the largest event timestamp. */
  defaultEndTime(): bigint {
    return timestampToFiletime(this.o, this.maxTimestamp ?? this.o.headerTimestamp);
  }

  /** The header buffer for a file of `buffersWritten` buffers (header included). */
  headerBuffer(buffersWritten: number, endTime: bigint = this.o.endTime ?? this.defaultEndTime()): Chunk {
    const bytes = buildHeaderBuffer(this.o, buffersWritten, endTime);
    return {
      bytes,
      info: {
        fileOffset: 0,
        size: bytes.length,
        cpu: 0,
        sequenceNumber: 0,
        compressed: false,
        events: HEADER_EVENTS,
        filled: headerBufferFilled(this.o),
        timestamp: 0n,
      },
    };
  }

  private checkFits(size: number, index: number): void {
    if (size > this.maxEventSize) {
      throw new RangeError(
        `${fieldName(index, 'payload')}: event size ${size} does not fit a buffer of ${this.o.bufferSize} bytes`,
      );
    }
  }

  /** Returns the offset for an event of `size` bytes, flushing the buffer first if it does not fit. */
  private reserve(b: OpenBuffer, size: number): number {
    if (b.off + size > this.o.bufferSize) this.order.push(this.flusher.flush(b));
    return b.off;
  }

  private commit(b: OpenBuffer, size: number, ts: bigint): void {
    b.off += align8(size);
    b.events++;
    b.lastTs = ts;
    this.dataEvents++;
    if (this.maxTimestamp === null || ts > this.maxTimestamp) this.maxTimestamp = ts;
  }
}

/** Assembles header + data chunks into one file. */
export function assemble(header: Chunk, data: Chunk[]): { bytes: Uint8Array; buffers: WrittenBuffer[] } {
  let total = header.bytes.length;
  for (const c of data) total += c.bytes.length;
  const bytes = new Uint8Array(total);
  const buffers: WrittenBuffer[] = [];
  let off = 0;
  for (const c of [header, ...data]) {
    bytes.set(c.bytes, off);
    c.info.fileOffset = off;
    buffers.push(c.info);
    off += c.bytes.length;
  }
  return { bytes, buffers };
}

/**
 * Writes a complete trace. Events are ordered by timestamp (stable: equal timestamps keep input order)
 * and logged in that global order, so per-processor streams are time-ordered and buffers are flushed
 * in the order the kernel would flush them.
 */
export function writeTrace(desc: TraceDescription, wopts: TraceWriterOptions = {}): WrittenTrace {
  if (desc === null || typeof desc !== 'object' || !Array.isArray(desc.events)) {
    throw new RangeError('events: must be an array of event specs');
  }
  const w = new TraceWriter(desc, wopts);
  const events = desc.events;
  for (let i = 0; i < events.length; i++) {
    const e = events[i];
    if (e === null || typeof e !== 'object') throw new RangeError(`${fieldName(i, 'kind')}: not an event`);
    checkTimestamp(e.timestamp, i);
  }
  const order = events.map((_, i) => i);
  order.sort((a, b) => {
    const ta = events[a].timestamp;
    const tb = events[b].timestamp;
    return ta < tb ? -1 : ta > tb ? 1 : a - b;
  });
  for (const i of order) w.add(events[i], i);
  w.finish();
  const data = w.takeChunks();
  const header = w.headerBuffer(1 + data.length);
  return finishTrace(w, header, data);
}

/** Concatenates the header buffer and the data buffers of a finished writer into the WrittenTrace. */
export function finishTrace(w: TraceWriter, header: Chunk, data: Chunk[]): WrittenTrace {
  const { bytes, buffers } = assemble(header, data);
  return {
    bytes,
    buffers,
    events: HEADER_EVENTS + w.dataEvents,
    compactBatches: w.compactBatches,
    compactPackets: w.compactPackets(),
    bias: w.bias,
  };
}

export type { CompactSwitchSpec };
