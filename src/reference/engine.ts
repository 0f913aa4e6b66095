// Pure-TypeScript reference decoder: the same buffer walk, tables and counters as the WebAssembly
// engine (assembly/), written for clarity. It is the test oracle and the benchmark baseline.
// Spec: format-spec.md A.2-A.6 (buffers), B.1-B.4 (trace headers), C (CSwitch), D (compact), E (SpinLock).
import * as L from '../generated/layout.js';
import type { Engine, EngineState, IssueLogEntry, KindTally } from '../engine.js';
import type { ColumnChunk } from '../schema.js';
import { ColumnBuilder } from './output.js';
import { xpressDecompress } from './xpress.js';

const BIT = (c: number): number => (1 << c) >>> 0;
/** columns every cswitch row carries */
export const CS_ALWAYS_VALID =
  (BIT(L.CS_TIMESTAMP) |
    BIT(L.CS_CPU) |
    BIT(L.CS_OLD_THREAD_ID) |
    BIT(L.CS_NEW_THREAD_WAIT_TIME_AT_MOST_ONE_TICK) |
    BIT(L.CS_SOURCE) |
    BIT(L.CS_VERSION) |
    BIT(L.CS_FILE_OFFSET) |
    BIT(L.CS_VALID)) >>>
  0;

const PACKET_BYTES = [2, 4, 4, 8];

/** Per-processor compact-switch state: the last switch, held back until the next one names its new thread. */
class PendingSwitches {
  valid = new Uint8Array(L.MAX_PROCESSORS);
  tsLo = new Uint32Array(L.MAX_PROCESSORS);
  tsHi = new Int32Array(L.MAX_PROCESSORS);
  oldThreadId = new Uint32Array(L.MAX_PROCESSORS);
  oldThreadPriority = new Int8Array(L.MAX_PROCESSORS);
  oldThreadState = new Uint8Array(L.MAX_PROCESSORS);
  oldThreadWaitReason = new Uint8Array(L.MAX_PROCESSORS);
  newThreadWaitTime = new Uint32Array(L.MAX_PROCESSORS);
  source = new Uint8Array(L.MAX_PROCESSORS);
  mask = new Uint32Array(L.MAX_PROCESSORS);
  fileOffset = new Float64Array(L.MAX_PROCESSORS);
}

export class ReferenceEngine implements Engine {
  readonly kind = 'reference' as const;
  private input = new Uint8Array(0);
  private view = new DataView(this.input.buffer);
  private readonly cswitch = new ColumnBuilder('cswitch');
  private readonly spinlock = new ColumnBuilder('spinlock');
  private readonly counters = new Array<number>(L.D_COUNTER_COUNT).fill(0);
  private readonly log: IssueLogEntry[] = [];
  private readonly kinds = new Map<string, KindTally>();
  private lastKind: KindTally | null = null;
  private readonly pending = new PendingSwitches();
  private logfilePayload: Uint8Array | null = null;
  private logfilePayloadLength = 0;
  private logfilePointerSize = 0;
  private logfileTimestamp = 0n;
  private numberOfProcessors = 0;
  private headerExtension: Uint32Array | null = null;
  private biasOverride: number | undefined;
  private bias = L.maxWaitReasonForBuild(0xffffffff);

  reserveInput(byteLength: number): Uint8Array {
    if (this.input.length < byteLength) {
      this.input = new Uint8Array(byteLength);
      this.view = new DataView(this.input.buffer);
    }
    return this.input;
  }

  inputView(): Uint8Array {
    return this.input;
  }

  setBiasOverride(bias: number | undefined): void {
    this.biasOverride = bias;
    if (bias !== undefined) this.bias = bias;
  }

  rowCount(table: number): number {
    return table === L.TABLE_CSWITCH ? this.cswitch.length : this.spinlock.length;
  }

  drain(): { cswitch: ColumnChunk; spinlock: ColumnChunk } {
    return { cswitch: this.cswitch.take(), spinlock: this.spinlock.take() };
  }

  peekRows(): { cswitch: ColumnChunk; spinlock: ColumnChunk } {
    return { cswitch: this.cswitch.peek(), spinlock: this.spinlock.peek() };
  }

  resetRows(): void {
    this.cswitch.reset();
    this.spinlock.reset();
  }

  resume(): number {
    return L.STATUS_OK; // the reference never runs out of row space
  }

  finish(): number {
    const p = this.pending;
    for (let cpu = 0; cpu < L.MAX_PROCESSORS; cpu++) {
      if (!p.valid[cpu]) continue;
      this.emitPending(cpu, 0, false);
      p.valid[cpu] = 0;
      this.counters[L.D_COMPCS_NEW_THREAD_UNKNOWN]!++;
    }
    return L.STATUS_OK;
  }

  state(): EngineState {
    return {
      counters: this.counters.slice(),
      log: this.log.slice(),
      kinds: [...this.kinds.values()].map((k) => ({ ...k, guid: k.guid.slice() })),
      logfilePayload: this.logfilePayload,
      logfilePayloadLength: this.logfilePayloadLength,
      logfilePointerSize: this.logfilePointerSize,
      logfileTimestamp: this.logfileTimestamp,
      headerExtension: this.headerExtension,
      bias: this.bias,
    };
  }

  private count(code: number, n = 1): void {
    this.counters[code]! += n;
  }

  private issue(code: number, detail: number, fileOffset: number): void {
    this.counters[code]!++;
    if (this.log.length < L.LOG_CAPACITY) this.log.push({ code, detail: detail >>> 0, fileOffset });
  }

  // ------------------------------------------------------------------------------------------
  // A.2-A.6: one buffer
  decodeBuffer(offset: number, length: number, fileOffset: number): number {
    const v = this.view;
    if (length < L.WMI_BUFFER_HEADER_SIZE) {
      this.issue(L.D_BUFFERS_CORRUPT, 1, fileOffset);
      return L.STATUS_OK;
    }
    const bufferSize = v.getUint32(offset + L.BUF_BUFFER_SIZE, true);
    const flags = v.getUint16(offset + L.BUF_BUFFER_FLAG, true);
    const type = v.getUint16(offset + L.BUF_BUFFER_TYPE, true);
    if (bufferSize < L.WMI_BUFFER_HEADER_SIZE || bufferSize > length) {
      this.issue(L.D_BUFFERS_CORRUPT, 2, fileOffset);
      return L.STATUS_OK;
    }
    if (flags & L.BUFFER_FLAG_EVENTS_LOST) this.count(L.D_BUFFERS_EVENTS_LOST_FLAG);
    if (flags & L.BUFFER_FLAG_BUFFER_LOST) this.count(L.D_BUFFERS_BUFFER_LOST_FLAG);
    const cpu =
      flags & L.BUFFER_FLAG_PROC_INDEX
        ? v.getUint16(offset + L.BUF_CLIENT_CONTEXT, true) & L.PROCESSOR_INDEX_MASK
        : v.getUint8(offset + L.BUF_CLIENT_CONTEXT);
    if (flags & L.BUFFER_FLAG_COMPRESSED) this.count(L.D_BUFFERS_COMPRESSED);
    if (type >= L.BUFFER_TYPE_EMPTY_MARKER) {
      this.count(L.D_BUFFERS_NOT_WALKED);
      return L.STATUS_OK;
    }
    const savedOffset = v.getUint32(offset + L.BUF_SAVED_OFFSET, true);
    let data: DataView;
    let start: number;
    let end: number;
    let eventFileBase: number; // file offset of data byte `start`... minus start
    if (flags & L.BUFFER_FLAG_COMPRESSED) {
      if (savedOffset < L.WMI_BUFFER_HEADER_SIZE || savedOffset > L.MAX_BUFFER_SIZE) {
        this.issue(L.D_BUFFERS_CORRUPT, 3, fileOffset);
        return L.STATUS_OK;
      }
      const outLength = savedOffset - L.WMI_BUFFER_HEADER_SIZE;
      const out = new Uint8Array(outLength);
      const src = this.input.subarray(offset + L.WMI_BUFFER_HEADER_SIZE, offset + bufferSize);
      const written = xpressDecompress(src, out);
      if (written !== outLength) {
        this.issue(L.D_BUFFERS_COMPRESSED_UNDECODED, written, fileOffset);
        return L.STATUS_OK;
      }
      data = new DataView(out.buffer);
      start = 0;
      end = outLength;
      eventFileBase = fileOffset + L.WMI_BUFFER_HEADER_SIZE;
    } else {
      const filledOffset = v.getUint32(offset + L.BUF_OFFSET, true);
      let filled: number;
      if (filledOffset >= L.WMI_BUFFER_HEADER_SIZE && filledOffset <= bufferSize) filled = filledOffset;
      else if (savedOffset >= L.WMI_BUFFER_HEADER_SIZE && savedOffset <= bufferSize) filled = savedOffset;
      else {
        this.issue(L.D_BUFFERS_CORRUPT, 3, fileOffset);
        return L.STATUS_OK;
      }
      data = v;
      start = offset + L.WMI_BUFFER_HEADER_SIZE;
      end = offset + filled;
      eventFileBase = fileOffset - offset;
    }
    this.count(L.D_BUFFERS);
    if (this.numberOfProcessors > 0 && cpu >= this.numberOfProcessors) {
      this.issue(L.D_PROCESSOR_OUT_OF_RANGE, cpu, fileOffset);
    }
    this.walkEvents(data, start, end, cpu, eventFileBase);
    return L.STATUS_OK;
  }

  // ------------------------------------------------------------------------------------------
  // B.4: the events of one buffer
  private walkEvents(d: DataView, start: number, end: number, cpu: number, fileBase: number): void {
    let p = start;
    while (p + 4 <= end) {
      const m = d.getUint32(p, true);
      if (m === L.END_OF_BUFFER_MARKER) break;
      let headerType: number;
      let size: number;
      let headerSize: number;
      let abandon = 0; // 0 ok, else the counter to charge
      if ((m & L.TRACE_HEADER_FLAG) === 0) {
        abandon = L.D_EVENTS_BAD_MARKER;
        headerType = 0;
        size = 0;
        headerSize = 0;
      } else if (((m >>> 24) & 0xd0) === 0x90) {
        headerType = L.HT_MESSAGE;
        size = m & 0xffff;
        headerSize = L.MESSAGE_HEADER_SIZE;
      } else if (m >>> 30 === 3) {
        headerType = (m >>> 16) & 0xff;
        headerSize = fixedHeaderSize(headerType, m);
        if (headerSize === 0) {
          abandon = L.D_EVENTS_BAD_MARKER;
          size = 0;
        } else if (p + 8 > end) {
          abandon = L.D_EVENTS_BAD_SIZE;
          size = 0;
        } else {
          size = sizeAtPlus4(headerType) ? d.getUint16(p + L.TH_SIZE, true) : d.getUint16(p, true);
        }
      } else {
        abandon = L.D_EVENTS_BAD_MARKER;
        headerType = 0;
        size = 0;
        headerSize = 0;
      }
      if (abandon === 0 && (size < headerSize || p + size > end)) abandon = L.D_EVENTS_BAD_SIZE;
      if (abandon !== 0) {
        this.count(abandon);
        this.issue(L.D_BUFFERS_TRUNCATED_WALK, abandon, fileBase + p);
        this.count(L.D_BYTES_ABANDONED, end - p);
        return;
      }
      this.count(L.D_EVENTS);
      this.tally(d, p, headerType, size);
      if (headerType <= L.HT_COMPACT64 || headerType === L.HT_PERFINFO32 || headerType === L.HT_PERFINFO64) {
        this.dispatch(d, p, m, headerType, headerSize, size, cpu, fileBase + p);
      }
      p += (size + 7) & ~7;
    }
  }

  // B.2: count the event by kind
  private tally(d: DataView, p: number, headerType: number, size: number): void {
    let flags = 0;
    let version = 0;
    let id = 0;
    let task = 0;
    let opcode = 0;
    let guidAt = -1;
    switch (headerType) {
      case L.HT_SYSTEM32:
      case L.HT_SYSTEM64:
      case L.HT_COMPACT32:
      case L.HT_COMPACT64:
      case L.HT_PERFINFO32:
      case L.HT_PERFINFO64:
        version = d.getUint8(p);
        id = d.getUint16(p + L.TH_HOOK_ID, true);
        break;
      case L.HT_FULL_HEADER32:
      case L.HT_FULL_HEADER64:
      case L.HT_INSTANCE32:
      case L.HT_INSTANCE64:
        id = d.getUint8(p + L.ETH_TYPE);
        version = d.getUint16(p + L.ETH_VERSION, true);
        guidAt = p + L.ETH_GUID;
        break;
      case L.HT_EVENT_HEADER32:
      case L.HT_EVENT_HEADER64:
        flags = d.getUint16(p + L.EH_FLAGS, true) & L.EH_FLAG_EXTENDED_INFO;
        id = d.getUint16(p + L.EH_EVENT_ID, true);
        version = d.getUint8(p + L.EH_VERSION);
        opcode = d.getUint8(p + L.EH_OPCODE);
        task = d.getUint16(p + L.EH_TASK, true);
        guidAt = p + L.EH_PROVIDER_ID;
        break;
      case L.HT_MESSAGE:
        id = d.getUint16(p + L.MTH_MESSAGE_NUMBER, true);
        break;
      default:
        break;
    }
    // kernel events repeat: try the last kind first
    const last = this.lastKind;
    if (
      last !== null &&
      last.headerType === headerType &&
      last.id === id &&
      last.version === version &&
      last.flags === flags &&
      last.task === task &&
      last.opcode === opcode &&
      sameGuid(d, guidAt, last.guid)
    ) {
      last.count++;
      last.bytes += size;
      return;
    }
    const guid = new Uint8Array(16);
    if (guidAt >= 0) guid.set(new Uint8Array(d.buffer, d.byteOffset + guidAt, 16));
    const key = `${headerType},${flags},${version},${id},${task},${opcode},${guid.join('.')}`;
    let entry = this.kinds.get(key);
    if (!entry) {
      if (this.kinds.size >= L.KIND_MAX_DISTINCT) {
        this.count(L.D_KIND_TABLE_FULL);
        return;
      }
      entry = { headerType, flags, version, id, task, opcode, guid, count: 0, bytes: 0 };
      this.kinds.set(key, entry);
    }
    entry.count++;
    entry.bytes += size;
    this.lastKind = entry;
  }

  // B.5: route SYSTEM/COMPACT/PERFINFO events by HookId
  private dispatch(
    d: DataView,
    p: number,
    m: number,
    headerType: number,
    headerSize: number,
    size: number,
    cpu: number,
    fileOffset: number,
  ): void {
    const hookId = d.getUint16(p + L.TH_HOOK_ID, true);
    const version = m & 0xff;
    const isPerfinfo = headerType === L.HT_PERFINFO32 || headerType === L.HT_PERFINFO64;
    const tsAt = p + (isPerfinfo ? L.PERFINFO_TIMESTAMP : L.SYSTEM_TIMESTAMP);
    const pointerSize = headerType === L.HT_SYSTEM32 || headerType === L.HT_COMPACT32 || headerType === L.HT_PERFINFO32 ? 4 : 8;
    const data = p + headerSize;
    const dataLength = size - headerSize;
    switch (hookId) {
      case L.HOOK_HEADER:
        this.logfileHeader(d, data, dataLength, pointerSize, tsAt);
        break;
      case L.HOOK_HEADER_EXTENSION:
        if (dataLength >= L.KHE_SIZE) {
          const h = new Uint32Array(L.KHE_SIZE / 4);
          for (let i = 0; i < h.length; i++) h[i] = d.getUint32(data + 4 * i, true);
          this.headerExtension = h;
        }
        break;
      case L.HOOK_CSWITCH:
        this.cswitchEvent(d, data, dataLength, version, cpu, tsAt, fileOffset);
        break;
      case L.HOOK_COMPCS:
        this.compactBatch(d, data, dataLength, version, cpu, tsAt, fileOffset);
        break;
      case L.HOOK_SPINLOCK:
        this.spinlockEvent(d, data, dataLength, version, pointerSize, cpu, tsAt, fileOffset);
        break;
      default:
        break;
    }
  }

  // A.8: the first WMI_LOG_TYPE_HEADER is the trace's logfile header
  private logfileHeader(d: DataView, data: number, dataLength: number, pointerSize: number, tsAt: number): void {
    this.count(L.D_LOGFILE_HEADERS);
    if (this.logfilePayload !== null) return;
    const n = Math.min(dataLength, L.LOGFILE_HEADER_COPY_MAX);
    this.logfilePayload = new Uint8Array(d.buffer, d.byteOffset + data, n).slice();
    this.logfilePayloadLength = dataLength;
    this.logfilePointerSize = pointerSize;
    this.logfileTimestamp = d.getBigInt64(tsAt, true);
    if (dataLength >= L.LFH_NUMBER_OF_PROCESSORS + 4) {
      this.numberOfProcessors = d.getUint32(data + L.LFH_NUMBER_OF_PROCESSORS, true);
    }
    if (this.biasOverride === undefined && dataLength >= L.LFH_PROVIDER_VERSION + 4) {
      this.bias = L.maxWaitReasonForBuild(d.getUint32(data + L.LFH_PROVIDER_VERSION, true));
    }
  }

  // ------------------------------------------------------------------------------------------
  // C: WMI_CONTEXTSWAP
  private cswitchEvent(d: DataView, data: number, n: number, version: number, cpu: number, tsAt: number, fileOffset: number): void {
    if (version < 1 || version > 4) {
      this.count(L.D_CSWITCH_SKIPPED_VERSION);
      return;
    }
    if (n < L.CSW_SIZE_V1) {
      this.issue(L.D_CSWITCH_SKIPPED_SHORT, n, fileOffset);
      return;
    }
    this.count(L.D_CSWITCH_DECODED);
    const b = this.cswitch;
    const r = b.add();
    const c = b.cols;
    const ts = b.words[L.CS_TIMESTAMP]!;
    ts[2 * r] = d.getUint32(tsAt, true);
    ts[2 * r + 1] = d.getUint32(tsAt + 4, true);
    (c[L.CS_CPU] as Uint16Array)[r] = cpu;
    (c[L.CS_NEW_THREAD_ID] as Uint32Array)[r] = d.getUint32(data + L.CSW_NEW_THREAD_ID, true);
    (c[L.CS_OLD_THREAD_ID] as Uint32Array)[r] = d.getUint32(data + L.CSW_OLD_THREAD_ID, true);
    (c[L.CS_NEW_THREAD_PRIORITY] as Int8Array)[r] = d.getInt8(data + L.CSW_NEW_THREAD_PRIORITY);
    (c[L.CS_OLD_THREAD_PRIORITY] as Int8Array)[r] = d.getInt8(data + L.CSW_OLD_THREAD_PRIORITY);
    (c[L.CS_OLD_THREAD_WAIT_REASON] as Uint8Array)[r] = d.getUint8(data + L.CSW_OLD_THREAD_WAIT_REASON);
    (c[L.CS_OLD_THREAD_STATE] as Uint8Array)[r] = d.getUint8(data + L.CSW_OLD_THREAD_STATE);
    (c[L.CS_OLD_THREAD_IDEAL_PROCESSOR] as Uint8Array)[r] = d.getUint8(data + L.CSW_OLD_THREAD_IDEAL_PROCESSOR);
    let mask =
      CS_ALWAYS_VALID |
      BIT(L.CS_NEW_THREAD_ID) |
      BIT(L.CS_NEW_THREAD_PRIORITY) |
      BIT(L.CS_OLD_THREAD_PRIORITY) |
      BIT(L.CS_OLD_THREAD_WAIT_REASON) |
      BIT(L.CS_OLD_THREAD_WAIT_MODE) |
      BIT(L.CS_OLD_THREAD_STATE) |
      BIT(L.CS_OLD_THREAD_IDEAL_PROCESSOR);
    const byte0a = d.getUint8(data + L.CSW_PREVIOUS_CSTATE);
    const byte0b = d.getInt8(data + L.CSW_NEW_THREAD_PRIORITY_DECREMENT);
    const byte0d = d.getUint8(data + L.CSW_OLD_THREAD_WAIT_MODE);
    if (version === 1) {
      (c[L.CS_NEW_THREAD_QUANTUM] as Int8Array)[r] = byte0a;
      (c[L.CS_OLD_THREAD_QUANTUM] as Int8Array)[r] = byte0b;
      mask |= BIT(L.CS_NEW_THREAD_QUANTUM) | BIT(L.CS_OLD_THREAD_QUANTUM);
    } else {
      (c[L.CS_PREVIOUS_CSTATE] as Uint8Array)[r] = byte0a;
      (c[L.CS_NEW_THREAD_PRIORITY_DECREMENT] as Int8Array)[r] = byte0b;
      mask |= BIT(L.CS_PREVIOUS_CSTATE) | BIT(L.CS_NEW_THREAD_PRIORITY_DECREMENT);
    }
    if (version <= 2) {
      (c[L.CS_OLD_THREAD_WAIT_MODE] as Uint8Array)[r] = byte0d;
    } else {
      (c[L.CS_OLD_THREAD_WAIT_MODE] as Uint8Array)[r] = byte0d & 1;
      (c[L.CS_THREAD_FLAGS] as Uint8Array)[r] = byte0d;
      mask |= BIT(L.CS_THREAD_FLAGS);
      if (version === 3) {
        (c[L.CS_OLD_THREAD_BAM_EPP_IMPORTANT] as Uint8Array)[r] = (byte0d >>> 1) & 1;
        (c[L.CS_NEW_THREAD_BAM_EPP_IMPORTANT] as Uint8Array)[r] = (byte0d >>> 2) & 1;
        mask |= BIT(L.CS_OLD_THREAD_BAM_EPP_IMPORTANT) | BIT(L.CS_NEW_THREAD_BAM_EPP_IMPORTANT);
      } else {
        (c[L.CS_OLD_THREAD_BAM_QOS_LEVEL] as Uint8Array)[r] = (byte0d >>> 1) & 7;
        (c[L.CS_NEW_THREAD_BAM_QOS_LEVEL] as Uint8Array)[r] = (byte0d >>> 4) & 7;
        mask |= BIT(L.CS_OLD_THREAD_BAM_QOS_LEVEL) | BIT(L.CS_NEW_THREAD_BAM_QOS_LEVEL);
      }
    }
    if (n >= L.CSW_NEW_THREAD_WAIT_TIME + 4) {
      (c[L.CS_NEW_THREAD_WAIT_TIME] as Uint32Array)[r] = d.getUint32(data + L.CSW_NEW_THREAD_WAIT_TIME, true);
      mask |= BIT(L.CS_NEW_THREAD_WAIT_TIME);
    }
    if (n >= L.CSW_OLD_THREAD_REMAINING_QUANTUM + 4) {
      (c[L.CS_OLD_THREAD_REMAINING_QUANTUM] as Int32Array)[r] = d.getInt32(data + L.CSW_OLD_THREAD_REMAINING_QUANTUM, true);
      mask |= BIT(L.CS_OLD_THREAD_REMAINING_QUANTUM);
    }
    (c[L.CS_SOURCE] as Uint8Array)[r] = L.CS_SOURCE_CSWITCH;
    (c[L.CS_VERSION] as Uint8Array)[r] = version;
    (c[L.CS_FILE_OFFSET] as Float64Array)[r] = fileOffset;
    (c[L.CS_VALID] as Uint32Array)[r] = mask >>> 0;
  }

  // ------------------------------------------------------------------------------------------
  // E: WMI_SPINLOCK
  private spinlockEvent(
    d: DataView,
    data: number,
    n: number,
    version: number,
    pointerSize: number,
    cpu: number,
    tsAt: number,
    fileOffset: number,
  ): void {
    if (version !== L.SPL_EVENT_VERSION) {
      this.count(L.D_SPINLOCK_SKIPPED_VERSION);
      return;
    }
    const layoutSize = pointerSize === 4 ? L.SPL32_SIZE : L.SPL64_SIZE;
    if (n < layoutSize) {
      this.issue(L.D_SPINLOCK_SKIPPED_SHORT, n, fileOffset);
      return;
    }
    this.count(L.D_SPINLOCK_DECODED);
    const b = this.spinlock;
    const r = b.add();
    const c = b.cols;
    const w = b.words;
    copy64(d, tsAt, w[L.SL_TIMESTAMP]!, r);
    (c[L.SL_CPU] as Uint16Array)[r] = cpu;
    let tail: number;
    if (pointerSize === 4) {
      w[L.SL_SPIN_LOCK_ADDRESS]![2 * r] = d.getUint32(data + L.SPL32_SPIN_LOCK_ADDRESS, true);
      w[L.SL_CALLER_ADDRESS]![2 * r] = d.getUint32(data + L.SPL32_CALLER_ADDRESS, true);
      tail = data + L.SPL32_ACQUIRE_TIME;
    } else {
      copy64(d, data + L.SPL64_SPIN_LOCK_ADDRESS, w[L.SL_SPIN_LOCK_ADDRESS]!, r);
      copy64(d, data + L.SPL64_CALLER_ADDRESS, w[L.SL_CALLER_ADDRESS]!, r);
      tail = data + L.SPL64_ACQUIRE_TIME;
    }
    copy64(d, tail + L.SPL_TAIL_ACQUIRE_TIME, w[L.SL_ACQUIRE_TIME]!, r);
    copy64(d, tail + L.SPL_TAIL_RELEASE_TIME, w[L.SL_RELEASE_TIME]!, r);
    (c[L.SL_WAIT_TIME_IN_CYCLES] as Uint32Array)[r] = d.getUint32(tail + L.SPL_TAIL_WAIT_TIME_IN_CYCLES, true);
    (c[L.SL_SPIN_COUNT] as Uint32Array)[r] = d.getUint32(tail + L.SPL_TAIL_SPIN_COUNT, true);
    (c[L.SL_THREAD_ID] as Uint32Array)[r] = d.getUint32(tail + L.SPL_TAIL_THREAD_ID, true);
    (c[L.SL_INTERRUPT_COUNT] as Uint32Array)[r] = d.getUint32(tail + L.SPL_TAIL_INTERRUPT_COUNT, true);
    (c[L.SL_IRQL] as Uint8Array)[r] = d.getUint8(tail + L.SPL_TAIL_IRQL);
    (c[L.SL_ACQUIRE_DEPTH] as Uint8Array)[r] = d.getUint8(tail + L.SPL_TAIL_ACQUIRE_DEPTH);
    const flags = d.getUint8(tail + L.SPL_TAIL_FLAGS);
    (c[L.SL_ACQUIRE_MODE] as Uint8Array)[r] = flags & L.SPL_ACQUIRE_MODE_MASK;
    (c[L.SL_EXECUTE_DPC] as Uint8Array)[r] = (flags >>> L.SPL_EXECUTE_DPC_BIT) & 1;
    (c[L.SL_EXECUTE_ISR] as Uint8Array)[r] = (flags >>> L.SPL_EXECUTE_ISR_BIT) & 1;
    (c[L.SL_POINTER_SIZE] as Uint8Array)[r] = pointerSize;
    (c[L.SL_VERSION] as Uint8Array)[r] = version;
    (c[L.SL_FILE_OFFSET] as Float64Array)[r] = fileOffset;
  }

  // ------------------------------------------------------------------------------------------
  // D: PERFINFO_CCSWAP_BUFFER + packets. Row k's newThreadId is the old thread of the next switch on
  // the same processor, so each switch is held back (per CPU) until the next one arrives.
  private compactBatch(d: DataView, data: number, n: number, version: number, cpu: number, tsAt: number, fileOffset: number): void {
    if (version !== L.CCS_EVENT_VERSION) {
      this.count(L.D_COMPCS_SKIPPED_VERSION);
      return;
    }
    if (n < L.CCS_HEADER_SIZE) {
      this.issue(L.D_COMPCS_SKIPPED_SHORT, n, fileOffset);
      return;
    }
    this.count(L.D_COMPCS_BATCHES);
    if (n > L.CCS_MAX_BATCH_BYTES) this.issue(L.D_COMPCS_OVERSIZE, n, fileOffset);
    const pend = this.pending;
    let tLo = d.getUint32(data + L.CCS_FIRST_TIMESTAMP, true);
    let tHi = d.getInt32(data + L.CCS_FIRST_TIMESTAMP + 4, true);
    const bias = this.bias;
    let highestIndex = -1;
    let p = data + L.CCS_HEADER_SIZE;
    const end = data + n;
    while (p < end) {
      const type = d.getUint8(p) & 3;
      const need = PACKET_BYTES[type]!;
      if (p + need > end) {
        this.issue(L.D_COMPCS_TRUNCATED_PACKET, p - data, fileOffset);
        break;
      }
      let delta: number;
      let oldThreadId = 0;
      let priority = 0;
      let stateWr = 0;
      let waitTime = 0;
      let index = -1;
      let mask = CS_ALWAYS_VALID;
      if (type === L.CCS_TYPE_IDLE_SHORT) {
        delta = d.getUint16(p, true) >>> 2;
        this.count(L.D_COMPCS_PACKETS_IDLE_SHORT);
      } else if (type === L.CCS_TYPE_IDLE) {
        delta = d.getUint32(p, true) >>> 2;
        this.count(L.D_COMPCS_PACKETS_IDLE);
      } else if (type === L.CCS_TYPE_LITE) {
        const w = d.getUint32(p, true);
        index = (w >>> 2) & 0xf;
        const inc = (w >>> 6) & 0x7;
        stateWr = (w >>> 9) & 0x3f;
        delta = w >>> 15;
        priority = d.getInt8(data + L.CCS_THREAD_BASE_PRIORITY + index) + inc;
        mask |= BIT(L.CS_OLD_THREAD_PRIORITY);
        this.count(L.D_COMPCS_PACKETS_LITE);
      } else {
        const w0 = d.getUint32(p, true);
        const w1 = d.getUint32(p + 4, true);
        delta = w0 >>> 2;
        index = w1 & 0xf;
        stateWr = (w1 >>> 4) & 0x3f;
        priority = (w1 >>> 10) & 0x1f;
        waitTime = w1 >>> 15;
        mask |= BIT(L.CS_OLD_THREAD_PRIORITY) | BIT(L.CS_NEW_THREAD_WAIT_TIME);
        this.count(L.D_COMPCS_PACKETS_FULL);
      }
      let state = 0;
      let waitReason = 0;
      if (index >= 0) {
        oldThreadId = d.getUint32(data + L.CCS_TID_TABLE + 4 * index, true);
        if (index > highestIndex + 1 || oldThreadId === 0) {
          this.issue(L.D_COMPCS_BAD_TID_INDEX, index, fileOffset);
        }
        if (index > highestIndex) highestIndex = index;
        if (stateWr < bias) {
          state = L.THREAD_STATE_WAITING;
          waitReason = stateWr;
          mask |= BIT(L.CS_OLD_THREAD_STATE) | BIT(L.CS_OLD_THREAD_WAIT_REASON);
        } else {
          state = stateWr - bias;
          mask |= BIT(L.CS_OLD_THREAD_STATE);
          if (state === L.THREAD_STATE_WAITING || state >= L.THREAD_STATE_COUNT) {
            this.issue(L.D_COMPCS_STATE_OUT_OF_RANGE, stateWr, fileOffset);
          }
        }
      }
      // timestamp += delta (64-bit, as lo/hi words)
      tLo += delta;
      if (tLo > 0xffffffff) {
        tLo -= 0x100000000;
        tHi = (tHi + 1) | 0;
      }
      // D.7 self-check: the first switch of a batch must not precede the last switch before it on this CPU
      if (p === data + L.CCS_HEADER_SIZE && pend.valid[cpu] && compare64(tHi, tLo, pend.tsHi[cpu]!, pend.tsLo[cpu]!) < 0) {
        this.issue(L.D_COMPCS_TIME_MISMATCH, 2, fileOffset);
      }
      if (pend.valid[cpu]) this.emitPending(cpu, oldThreadId, true);
      pend.valid[cpu] = 1;
      pend.tsLo[cpu] = tLo;
      pend.tsHi[cpu] = tHi;
      pend.oldThreadId[cpu] = oldThreadId;
      pend.oldThreadPriority[cpu] = priority;
      pend.oldThreadState[cpu] = state;
      pend.oldThreadWaitReason[cpu] = waitReason;
      pend.newThreadWaitTime[cpu] = waitTime;
      pend.source[cpu] = L.CS_SOURCE_IDLE_SHORT + type;
      pend.mask[cpu] = mask;
      pend.fileOffset[cpu] = fileOffset;
      p += need;
    }
    const eventHi = d.getInt32(tsAt + 4, true);
    const eventLo = d.getUint32(tsAt, true);
    if (compare64(tHi, tLo, eventHi, eventLo) > 0) this.issue(L.D_COMPCS_TIME_MISMATCH, 1, fileOffset);
  }

  private emitPending(cpu: number, newThreadId: number, known: boolean): void {
    const pend = this.pending;
    const b = this.cswitch;
    const r = b.add();
    const c = b.cols;
    const ts = b.words[L.CS_TIMESTAMP]!;
    ts[2 * r] = pend.tsLo[cpu]!;
    ts[2 * r + 1] = pend.tsHi[cpu]!;
    (c[L.CS_CPU] as Uint16Array)[r] = cpu;
    (c[L.CS_NEW_THREAD_ID] as Uint32Array)[r] = newThreadId;
    (c[L.CS_OLD_THREAD_ID] as Uint32Array)[r] = pend.oldThreadId[cpu]!;
    (c[L.CS_OLD_THREAD_PRIORITY] as Int8Array)[r] = pend.oldThreadPriority[cpu]!;
    (c[L.CS_OLD_THREAD_STATE] as Uint8Array)[r] = pend.oldThreadState[cpu]!;
    (c[L.CS_OLD_THREAD_WAIT_REASON] as Uint8Array)[r] = pend.oldThreadWaitReason[cpu]!;
    (c[L.CS_NEW_THREAD_WAIT_TIME] as Uint32Array)[r] = pend.newThreadWaitTime[cpu]!;
    const source = pend.source[cpu]!;
    (c[L.CS_NEW_THREAD_WAIT_TIME_AT_MOST_ONE_TICK] as Uint8Array)[r] = source === L.CS_SOURCE_LITE ? 1 : 0;
    (c[L.CS_SOURCE] as Uint8Array)[r] = source;
    (c[L.CS_VERSION] as Uint8Array)[r] = L.CCS_EVENT_VERSION;
    (c[L.CS_FILE_OFFSET] as Float64Array)[r] = pend.fileOffset[cpu]!;
    (c[L.CS_VALID] as Uint32Array)[r] = (pend.mask[cpu]! | (known ? BIT(L.CS_NEW_THREAD_ID) : 0)) >>> 0;
  }
}

/** Fixed header bytes of a SYSTEM/COMPACT/PERFINFO/FULL/INSTANCE/EVENT_HEADER/ERROR event; 0 = not walkable. */
export function fixedHeaderSize(headerType: number, marker: number): number {
  const ext = (marker & L.EXT_PEBS_INDEX_FLAG ? 8 : 0) + 8 * ((marker & L.EXT_PMC_COUNTERS_MASK) >>> L.EXT_PMC_COUNTERS_SHIFT);
  switch (headerType) {
    case L.HT_SYSTEM32:
    case L.HT_SYSTEM64:
      return L.SYSTEM_HEADER_SIZE + ext;
    case L.HT_COMPACT32:
    case L.HT_COMPACT64:
      return L.COMPACT_HEADER_SIZE + ext;
    case L.HT_PERFINFO32:
    case L.HT_PERFINFO64:
      return L.PERFINFO_HEADER_SIZE + ext;
    case L.HT_FULL_HEADER32:
    case L.HT_FULL_HEADER64:
      return L.FULL_HEADER_SIZE;
    case L.HT_INSTANCE32:
    case L.HT_INSTANCE64:
      return L.INSTANCE_HEADER_SIZE;
    case L.HT_EVENT_HEADER32:
    case L.HT_EVENT_HEADER64:
      return L.EVENT_HEADER_SIZE;
    case L.HT_ERROR:
      return L.ERROR_HEADER_SIZE;
    default:
      return 0;
  }
}

/** SYSTEM/COMPACT/PERFINFO keep Size at +4; the others at +0. */
function sizeAtPlus4(headerType: number): boolean {
  return headerType <= L.HT_COMPACT64 || headerType === L.HT_PERFINFO32 || headerType === L.HT_PERFINFO64;
}

function sameGuid(d: DataView, at: number, guid: Uint8Array): boolean {
  for (let i = 0; i < 16; i++) if ((at < 0 ? 0 : d.getUint8(at + i)) !== guid[i]) return false;
  return true;
}

function copy64(d: DataView, at: number, words: Uint32Array, row: number): void {
  words[2 * row] = d.getUint32(at, true);
  words[2 * row + 1] = d.getUint32(at + 4, true);
}

/** Signed 64-bit compare of (hi, lo) pairs: -1, 0, 1. */
function compare64(aHi: number, aLo: number, bHi: number, bLo: number): number {
  if (aHi !== bHi) return aHi < bHi ? -1 : 1;
  return aLo === bLo ? 0 : aLo < bLo ? -1 : 1;
}
