// The one hand-written ETL byte builder of the test suite, written from format-spec.md (parts A–E) with its
// own literal offsets. Like reader.ts it imports nothing from src/ (not src/generated/layout, not
// src/writer): the bytes it produces mean what the spec says, whatever the decoder's constants say.
// Compression is not built in: a test that wants compressed buffers passes a compressor.
//
//   ByteWriter, hexBytes                little-endian writers; bytes from commented hex strings
//   bufferHeader, buildBuffer           WMI_BUFFER_HEADER (A.2, A.3) + 8-byte aligned events (B.4)
//   kernelEvent & co.                   SYSTEM / COMPACT / PERFINFO headers with extended items (B.1, B.3)
//   fullEvent, instanceEvent,           EVENT_TRACE_HEADER, EVENT_INSTANCE_GUID_HEADER, EVENT_HEADER,
//   eventHeaderEvent, messageEvent      MESSAGE_TRACE_HEADER (B.3)
//   logfileHeaderPayload, logfileEvent  TRACE_LOGFILE_HEADER 32/64-bit (A.8), header extension (A.9)
//   packetBytes, compactPayload         PERFINFO_CCSWAP_BUFFER + packets (D.2–D.4)
//   minimalTrace                        header buffer + data buffers = a file

// ---------------------------------------------------------------------------------------------
// constants (B.2, B.5, A.4)

/** B.2 HeaderType values */
export const HT = {
  SYSTEM32: 0x01,
  SYSTEM64: 0x02,
  COMPACT32: 0x03,
  COMPACT64: 0x04,
  FULL_HEADER32: 0x0a,
  INSTANCE32: 0x0b,
  ERROR: 0x0d,
  MESSAGE: 0x0f,
  PERFINFO32: 0x10,
  PERFINFO64: 0x11,
  EVENT_HEADER32: 0x12,
  EVENT_HEADER64: 0x13,
  FULL_HEADER64: 0x14,
  INSTANCE64: 0x15,
} as const;

/** B.5 HookIds */
export const HOOK = {
  HEADER: 0x0000,
  HEADER_EXTENSION: 0x0005,
  CSWITCH: 0x0524,
  COMPCS: 0x0525,
  SPINLOCK: 0x0529,
} as const;

/** A.4 BufferFlag bits */
export const BUFFER_FLAG = {
  FLUSH_MARKER: 0x0001,
  EVENTS_LOST: 0x0002,
  BUFFER_LOST: 0x0004,
  PROC_INDEX: 0x0020,
  COMPRESSED: 0x0040,
} as const;

/** A.4 BufferType values */
export const BUFFER_TYPE = { GENERIC: 0, RUNDOWN: 1, HEADER: 4, EMPTY_MARKER: 6, DBG_INFO: 7 } as const;

// ---------------------------------------------------------------------------------------------
// bytes

/** Appends little-endian values to a growing byte array. */
export class ByteWriter {
  private bytes = new Uint8Array(256);
  private view = new DataView(this.bytes.buffer);
  length = 0;

  private room(n: number): number {
    if (this.length + n > this.bytes.length) {
      const next = new Uint8Array(Math.max(this.bytes.length * 2, this.length + n));
      next.set(this.bytes);
      this.bytes = next;
      this.view = new DataView(next.buffer);
    }
    const at = this.length;
    this.length += n;
    return at;
  }
  u8(v: number): this {
    const at = this.room(1); // first: room() may replace bytes and view
    this.view.setUint8(at, v & 0xff);
    return this;
  }
  u16(v: number): this {
    const at = this.room(2); // first: room() may replace bytes and view
    this.view.setUint16(at, v & 0xffff, true);
    return this;
  }
  u32(v: number): this {
    const at = this.room(4); // first: room() may replace bytes and view
    this.view.setUint32(at, v >>> 0, true);
    return this;
  }
  u64(v: bigint): this {
    const at = this.room(8); // first: room() may replace bytes and view
    this.view.setBigUint64(at, BigInt.asUintN(64, v), true);
    return this;
  }
  raw(b: Uint8Array | readonly number[]): this {
    const at = this.room(b.length);
    this.bytes.set(b, at);
    return this;
  }
  fill(n: number, v: number): this {
    const at = this.room(n);
    this.bytes.fill(v & 0xff, at, at + n);
    return this;
  }
  /** zero bytes up to the next multiple of 8 */
  align8(): this {
    return this.fill((8 - (this.length & 7)) & 7, 0);
  }
  /** UTF-16LE text and a NUL */
  utf16z(s: string): this {
    for (let i = 0; i < s.length; i++) this.u16(s.charCodeAt(i));
    return this.u16(0);
  }
  done(): Uint8Array {
    return this.bytes.slice(0, this.length);
  }
}

/** Bytes from hex strings ('0a 0b', '0a0b', commas allowed); one string per field reads well with a comment. */
export function hexBytes(...parts: string[]): Uint8Array {
  const text = parts.join('').replace(/[\s,_]/g, '');
  if (!/^([0-9a-fA-F]{2})*$/.test(text)) throw new Error(`hexBytes: not whole bytes: ${parts.join(' ')}`);
  const out = new Uint8Array(text.length / 2);
  for (let i = 0; i < out.length; i++) out[i] = parseInt(text.slice(2 * i, 2 * i + 2), 16);
  return out;
}

export function concatBytes(...parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

/** Windows GUID text → 16 bytes (Data1, Data2, Data3 little-endian; Data4 as is). */
export function guidBytes(text: string): Uint8Array {
  const h = text.replace(/[{}-]/g, '');
  if (!/^[0-9a-fA-F]{32}$/.test(h)) throw new Error(`guidBytes: bad GUID ${text}`);
  const be = hexBytes(h);
  return Uint8Array.of(be[3]!, be[2]!, be[1]!, be[0]!, be[5]!, be[4]!, be[7]!, be[6]!, ...be.subarray(8));
}

// ---------------------------------------------------------------------------------------------
// B.1/B.3: SYSTEM_TRACE_HEADER (0x20; compact form 0x18) and PERFINFO_TRACE_HEADER (0x10)

export interface KernelEventOptions {
  /** event version: low byte of the marker (default 2) */
  version?: number;
  hookId: number;
  timestamp: bigint;
  /** SYSTEM/COMPACT only (defaults 0) */
  threadId?: number;
  processId?: number;
  /** full SYSTEM header only (defaults 0) */
  kernelTime?: number;
  userTime?: number;
  /** B.1 extended items: a PEBS index (flag 0x8000) and PMC counters (count << 8), PEBS first */
  pebs?: bigint;
  pmc?: readonly bigint[];
}

/**
 * An event with a SYSTEM32/64 (0x20 bytes), COMPACT32/64 (0x18) or PERFINFO32/64 (0x10) header:
 * marker = 0xC0000000 | HeaderType << 16 | ext flags | version; u16 Size (header + items + data) at +4,
 * u16 HookId at +6; SYSTEM/COMPACT: TID +8, PID +0xC, timestamp +0x10 (SYSTEM: KernelTime +0x18,
 * UserTime +0x1C); PERFINFO: timestamp +8. The extended items follow the fixed header.
 */
export function kernelEvent(headerType: number, o: KernelEventOptions, payload: Uint8Array): Uint8Array {
  const system = headerType === HT.SYSTEM32 || headerType === HT.SYSTEM64;
  const compact = headerType === HT.COMPACT32 || headerType === HT.COMPACT64;
  const perfinfo = headerType === HT.PERFINFO32 || headerType === HT.PERFINFO64;
  if (!system && !compact && !perfinfo) throw new Error(`kernelEvent: header type ${headerType} is not SYSTEM/COMPACT/PERFINFO`);
  const pmc = o.pmc ?? [];
  if (pmc.length > 7) throw new Error('kernelEvent: at most 7 PMC counters');
  const fixed = system ? 0x20 : compact ? 0x18 : 0x10;
  const ext = (o.pebs !== undefined ? 8 : 0) + 8 * pmc.length;
  const size = fixed + ext + payload.length;
  if (size > 0xffff) throw new Error(`kernelEvent: Size ${size} does not fit 16 bits`);
  const marker = (0xc0000000 | (headerType << 16) | (o.pebs !== undefined ? 0x8000 : 0) | (pmc.length << 8) | ((o.version ?? 2) & 0xff)) >>> 0;
  const w = new ByteWriter().u32(marker).u16(size).u16(o.hookId);
  if (perfinfo) {
    w.u64(o.timestamp);
  } else {
    w.u32(o.threadId ?? 0).u32(o.processId ?? 0).u64(o.timestamp);
    if (system) w.u32(o.kernelTime ?? 0).u32(o.userTime ?? 0);
  }
  if (o.pebs !== undefined) w.u64(o.pebs);
  for (const c of pmc) w.u64(c);
  return w.raw(payload).done();
}

export const perfinfoEvent = (is64: boolean, o: KernelEventOptions, payload: Uint8Array): Uint8Array =>
  kernelEvent(is64 ? HT.PERFINFO64 : HT.PERFINFO32, o, payload);
export const systemEvent = (is64: boolean, o: KernelEventOptions, payload: Uint8Array): Uint8Array =>
  kernelEvent(is64 ? HT.SYSTEM64 : HT.SYSTEM32, o, payload);

// ---------------------------------------------------------------------------------------------
// B.3: EVENT_TRACE_HEADER (0x30), EVENT_INSTANCE_GUID_HEADER (0x48), EVENT_HEADER (0x50), MESSAGE (8)

export interface FullEventOptions {
  /** Class.Type (u8 @4), Class.Level (u8 @5), Class.Version (u16 @6) */
  type?: number;
  level?: number;
  version?: number;
  threadId?: number;
  processId?: number;
  timestamp?: bigint;
  /** 16 GUID bytes @0x18 */
  guid?: Uint8Array;
  /** u32 @0x28 and @0x2C (KernelTime/UserTime) */
  kernelTime?: number;
  userTime?: number;
  /** marker flags byte @3 (default 0xC0) */
  markerFlags?: number;
}

function traceHeaderPrefix(w: ByteWriter, headerType: number, size: number, o: FullEventOptions): void {
  w.u16(size).u8(headerType).u8(o.markerFlags ?? 0xc0);
  w.u8(o.type ?? 0).u8(o.level ?? 0).u16(o.version ?? 0);
  w.u32(o.threadId ?? 0).u32(o.processId ?? 0).u64(o.timestamp ?? 0n);
  w.raw(o.guid ?? new Uint8Array(16)).u32(o.kernelTime ?? 0).u32(o.userTime ?? 0);
}

/** EVENT_TRACE_HEADER: u16 Size @0, u8 HeaderType @2 (0x0A / 0x14), u8 0xC0 @3, … (0x30 bytes) */
export function fullEvent(headerType: number, o: FullEventOptions, payload: Uint8Array): Uint8Array {
  const w = new ByteWriter();
  traceHeaderPrefix(w, headerType, 0x30 + payload.length, o);
  return w.raw(payload).done();
}

/** EVENT_INSTANCE_GUID_HEADER: the 0x30 bytes above + InstanceId @0x30, ParentInstanceId @0x34, ParentGuid @0x38 */
export function instanceEvent(
  headerType: number,
  o: FullEventOptions & { instanceId?: number; parentInstanceId?: number; parentGuid?: Uint8Array },
  payload: Uint8Array,
): Uint8Array {
  const w = new ByteWriter();
  traceHeaderPrefix(w, headerType, 0x48 + payload.length, o);
  w.u32(o.instanceId ?? 0).u32(o.parentInstanceId ?? 0).raw(o.parentGuid ?? new Uint8Array(16));
  return w.raw(payload).done();
}

export interface EventHeaderOptions {
  /** u16 @4; bit 0 (EXTENDED_INFO) is set automatically when items are given */
  flags?: number;
  eventProperty?: number;
  threadId?: number;
  processId?: number;
  timestamp?: bigint;
  provider?: Uint8Array;
  /** EVENT_DESCRIPTOR @0x28: u16 Id, u8 Version, u8 Channel, u8 Level, u8 Opcode, u16 Task, u64 Keyword */
  id?: number;
  version?: number;
  channel?: number;
  level?: number;
  opcode?: number;
  task?: number;
  keyword?: bigint;
  /** u32 @0x38, @0x3C */
  kernelTime?: number;
  userTime?: number;
  activityId?: Uint8Array;
  /** extended items: {u16 size (8-aligned), u16 ExtType, u16 Linkage, u16 DataSize, data, zero padding} */
  items?: { extType: number; data: Uint8Array }[];
}

/** EVENT_HEADER (0x50 bytes): u16 Size @0, u16 HeaderType 0xC012/0xC013 @2, … */
export function eventHeaderEvent(headerType: number, o: EventHeaderOptions, payload: Uint8Array): Uint8Array {
  const items = o.items ?? [];
  const itemBytes = new ByteWriter();
  items.forEach((it, i) => {
    const size = (8 + it.data.length + 7) & ~7;
    itemBytes.u16(size).u16(it.extType).u16(i + 1 < items.length ? 1 : 0).u16(it.data.length).raw(it.data).align8();
  });
  const ext = itemBytes.done();
  const size = 0x50 + ext.length + payload.length;
  const w = new ByteWriter().u16(size).u16(0xc000 | headerType).u16((o.flags ?? 0) | (items.length ? 1 : 0)).u16(o.eventProperty ?? 0);
  w.u32(o.threadId ?? 0).u32(o.processId ?? 0).u64(o.timestamp ?? 0n).raw(o.provider ?? new Uint8Array(16));
  w.u16(o.id ?? 0).u8(o.version ?? 0).u8(o.channel ?? 0).u8(o.level ?? 0).u8(o.opcode ?? 0).u16(o.task ?? 0).u64(o.keyword ?? 0n);
  w.u32(o.kernelTime ?? 0).u32(o.userTime ?? 0).raw(o.activityId ?? new Uint8Array(16));
  return w.raw(ext).raw(payload).done();
}

/** MESSAGE_TRACE_HEADER (8 bytes): u16 Size, u8 reserved, u8 flags (0x9x), u16 MessageNumber, u16 OptionFlags */
export function messageEvent(o: { messageNumber?: number; optionFlags?: number; flagsByte?: number }, payload: Uint8Array): Uint8Array {
  const size = 8 + payload.length;
  return new ByteWriter().u16(size).u8(0).u8(o.flagsByte ?? 0x90).u16(o.messageNumber ?? 0).u16(o.optionFlags ?? 0).raw(payload).done();
}

// ---------------------------------------------------------------------------------------------
// A.8: TRACE_LOGFILE_HEADER (0x110 bytes 32-bit form / 0x118 bytes 64-bit form) + logger and file names

export interface LogfileOptions {
  /** 4 or 8: the 32- or 64-bit form (and SYSTEM32/SYSTEM64 header of the event); default 8 */
  pointerSize?: 4 | 8;
  bufferSize?: number;
  /** VersionDetail: major, minor, sub, subminor (default 10.0, layout 1.5) */
  versionDetail?: [number, number, number, number];
  /** ProviderVersion = Windows build */
  build?: number;
  numberOfProcessors?: number;
  endTime?: bigint;
  timerResolution?: number;
  maximumFileSize?: number;
  logFileMode?: number;
  buffersWritten?: number;
  startBuffers?: number;
  /** PointerSize field (default = pointerSize) */
  pointerSizeField?: number;
  eventsLost?: number;
  cpuSpeedInMHz?: number;
  timeZoneBias?: number;
  bootTime?: bigint;
  perfFreq?: bigint;
  startTime?: bigint;
  /** ReservedFlags: 1 QPC, 2 system time, 3 CPU cycles */
  clockType?: number;
  buffersLost?: number;
  loggerName?: string;
  logFileName?: string;
}

/** TRACE_LOGFILE_HEADER followed by the two UTF-16Z names (A.8), literal offsets for both forms. */
export function logfileHeaderPayload(o: LogfileOptions = {}): Uint8Array {
  const is64 = (o.pointerSize ?? 8) === 8;
  const size = is64 ? 0x118 : 0x110;
  const h = new Uint8Array(size);
  const v = new DataView(h.buffer);
  const [maj, min, sub, subMin] = o.versionDetail ?? [10, 0, 1, 5];
  v.setUint32(0x00, o.bufferSize ?? 0x10000, true);
  h.set([maj, min, sub, subMin], 0x04);
  v.setUint32(0x08, o.build ?? 19041, true);
  v.setUint32(0x0c, o.numberOfProcessors ?? 1, true);
  v.setBigInt64(0x10, o.endTime ?? 0n, true);
  v.setUint32(0x18, o.timerResolution ?? 156250, true);
  v.setUint32(0x1c, o.maximumFileSize ?? 0, true);
  v.setUint32(0x20, o.logFileMode ?? 1, true);
  v.setUint32(0x24, o.buffersWritten ?? 0, true);
  v.setUint32(0x28, o.startBuffers ?? 0, true);
  v.setUint32(0x2c, o.pointerSizeField ?? (is64 ? 8 : 4), true);
  v.setUint32(0x30, o.eventsLost ?? 0, true);
  v.setUint32(0x34, o.cpuSpeedInMHz ?? 3000, true);
  // 0x38 / 0x3C (x86) or 0x38 / 0x40 (x64): LoggerName / LogFileName slots (timer sources from 6.1), left 0
  v.setInt32(is64 ? 0x48 : 0x40, o.timeZoneBias ?? 0, true); // TIME_ZONE_INFORMATION.Bias, 0xAC bytes in all
  v.setBigInt64(is64 ? 0xf8 : 0xf0, o.bootTime ?? 0n, true);
  v.setBigInt64(is64 ? 0x100 : 0xf8, o.perfFreq ?? 10_000_000n, true);
  v.setBigInt64(is64 ? 0x108 : 0x100, o.startTime ?? 133_000_000_000_000_000n, true);
  v.setUint32(is64 ? 0x110 : 0x108, o.clockType ?? 1, true);
  v.setUint32(is64 ? 0x114 : 0x10c, o.buffersLost ?? 0, true);
  return new ByteWriter().raw(h).utf16z(o.loggerName ?? '').utf16z(o.logFileName ?? '').done();
}

/** The WMI_LOG_TYPE_HEADER event: SYSTEM32/64 header, version 2, HookId 0 (A.8), timestamp = T0 (A.10). */
export function logfileEvent(o: LogfileOptions & { headerTimestamp?: bigint } = {}): Uint8Array {
  return systemEvent((o.pointerSize ?? 8) === 8, { version: 2, hookId: HOOK.HEADER, timestamp: o.headerTimestamp ?? 1_000_000n }, logfileHeaderPayload(o));
}

/** A.9 ETW_KERNEL_HEADER_EXTENSION: 8 × u32 group masks + u32 Version (36 bytes). */
export function headerExtensionPayload(masks: readonly number[] = [0, 0x4 | 0x100 | 0x10000, 0, 0, 0, 0, 0, 0], version = 0x46): Uint8Array {
  const w = new ByteWriter();
  for (let i = 0; i < 8; i++) w.u32(masks[i] ?? 0);
  return w.u32(version).done();
}

// ---------------------------------------------------------------------------------------------
// D.2–D.4: compact context switches

export interface PacketSpec {
  /** 0 IDLE_SHORT, 1 IDLE, 2 LITE, 3 FULL */
  type: number;
  delta: number;
  /** TidTable index (LITE/FULL) */
  index: number;
  /** OldThreadPriInc (LITE) */
  inc: number;
  /** OldThreadStateWr (LITE/FULL) */
  stateWr: number;
  /** OldThreadPriority (FULL) */
  priority: number;
  /** NewThreadWaitTime (FULL) */
  wait: number;
}

/** Packs packets back to back (D.4), masking each field to its width. */
export function packetBytes(packets: readonly Partial<PacketSpec>[]): Uint8Array {
  const w = new ByteWriter();
  for (const k of packets) {
    const delta = k.delta ?? 0;
    const index = (k.index ?? 0) & 0xf;
    const stateWr = (k.stateWr ?? 0) & 0x3f;
    if (k.type === 0) w.u16(((delta & 0x3fff) << 2) | 0);
    else if (k.type === 1) w.u32(((delta & 0x3fffffff) << 2) | 1);
    else if (k.type === 2) w.u32(2 | (index << 2) | (((k.inc ?? 0) & 7) << 6) | (stateWr << 9) | ((delta & 0x1ffff) << 15));
    else if (k.type === 3) w.u32(((delta & 0x3fffffff) << 2) | 3).u32(index | (stateWr << 4) | (((k.priority ?? 0) & 0x1f) << 10) | (((k.wait ?? 0) & 0x1ffff) << 15));
    else throw new Error(`packetBytes: packet type ${k.type}`);
  }
  return w.done();
}

/** PERFINFO_CCSWAP_BUFFER (FirstTimeStamp, TidTable[16], ThreadBasePriority[16]) followed by the packet bytes. */
export function compactPayload(firstTimestamp: bigint, tids: readonly number[], basePriority: readonly number[], packets: Uint8Array): Uint8Array {
  const w = new ByteWriter().u64(firstTimestamp);
  for (let i = 0; i < 16; i++) w.u32(tids[i] ?? 0);
  for (let i = 0; i < 16; i++) w.u8(basePriority[i] ?? 0);
  return w.raw(packets).done();
}

// ---------------------------------------------------------------------------------------------
// A.2: WMI_BUFFER_HEADER and buffers

export interface BufferHeaderFields {
  bufferSize: number;
  savedOffset: number;
  /** default bufferSize + 0x40 (files hold a CurrentOffset past the buffer, A.2) */
  currentOffset?: number;
  timestamp?: bigint;
  sequenceNumber?: bigint | number;
  /** written as u16 at 0x28 (the processor, or ProcessorNumber + Alignment byte) */
  clientContext?: number;
  /** u16 at 0x2A */
  loggerId?: number;
  /** default 3 (Flush) */
  state?: number;
  /** filled size at 0x30; default savedOffset */
  offset?: number;
  flags?: number;
  type?: number;
}

/** The 0x48-byte WMI_BUFFER_HEADER. */
export function bufferHeader(f: BufferHeaderFields): Uint8Array {
  return new ByteWriter()
    .u32(f.bufferSize) // 0x00 BufferSize
    .u32(f.savedOffset) // 0x04 SavedOffset
    .u32(f.currentOffset ?? f.bufferSize + 0x40) // 0x08 CurrentOffset
    .u32(0) // 0x0C ReferenceCount
    .u64(f.timestamp ?? 0n) // 0x10 TimeStamp
    .u64(BigInt(f.sequenceNumber ?? 0)) // 0x18 SequenceNumber
    .u64(0n) // 0x20 ClockType/Frequency union
    .u16(f.clientContext ?? 0) // 0x28 ProcessorNumber/ProcessorIndex
    .u16(f.loggerId ?? 0x1c) // 0x2A LoggerId
    .u32(f.state ?? 3) // 0x2C State
    .u32(f.offset ?? f.savedOffset) // 0x30 Offset
    .u16(f.flags ?? 0) // 0x34 BufferFlag
    .u16(f.type ?? 0) // 0x36 BufferType
    .fill(16, 0) // 0x38 ReferenceTime / pointers
    .done();
}

export interface BufferSpec {
  events: readonly Uint8Array[];
  /** processor: u16 at 0x28 (with procIndex) or the low byte of it */
  cpu?: number;
  /** BufferFlag 0x20 (default true) */
  procIndex?: boolean;
  /** BufferFlag bits besides PROC_INDEX and COMPRESSED */
  flags?: number;
  type?: number;
  sequenceNumber?: bigint | number;
  timestamp?: bigint;
  /**
   * total BufferSize of an uncompressed buffer (the rest after the events is 0xFF); default: just the events
   * plus `tail` bytes
   */
  bufferSize?: number;
  /** 0xFF bytes after the events when bufferSize is not given (default 0) */
  tail?: number;
  /** compresses the event bytes (BufferFlag 0x40; BufferSize = 0x48 + compressed length, A.6) */
  compressor?: (payload: Uint8Array) => Uint8Array;
  loggerId?: number;
}

/** A WMI_BUFFER_HEADER followed by the events, each starting on an 8-byte boundary (zero padding). */
export function buildBuffer(spec: BufferSpec): Uint8Array {
  const data = new ByteWriter();
  for (const e of spec.events) data.raw(e).align8();
  const payload = data.done();
  const filled = 0x48 + payload.length;
  const body = spec.compressor ? spec.compressor(payload) : payload;
  const size = spec.compressor ? 0x48 + body.length : spec.bufferSize ?? filled + (spec.tail ?? 0);
  if (size < 0x48 + body.length) throw new Error(`buildBuffer: events need ${0x48 + body.length} bytes, BufferSize is ${size}`);
  const flags = (spec.flags ?? 0) | (spec.procIndex === false ? 0 : BUFFER_FLAG.PROC_INDEX) | (spec.compressor ? BUFFER_FLAG.COMPRESSED : 0);
  const header = bufferHeader({
    bufferSize: size,
    savedOffset: filled,
    timestamp: spec.timestamp ?? 0n,
    sequenceNumber: spec.sequenceNumber ?? 0,
    clientContext: spec.cpu ?? 0,
    loggerId: spec.loggerId,
    flags,
    type: spec.type ?? BUFFER_TYPE.GENERIC,
  });
  const out = new Uint8Array(size).fill(0xff);
  out.set(header);
  out.set(body, 0x48);
  return out;
}

// ---------------------------------------------------------------------------------------------
// a whole file

export interface TraceSpec extends LogfileOptions {
  /** raw timestamp of the header event (T0) */
  headerTimestamp?: bigint;
  /** the header extension event (A.9) after the logfile header; default true */
  headerExtension?: boolean;
  /** data buffers in file order; each gets BufferSize = bufferSize (default 0x400) unless it is compressed */
  buffers: (Omit<BufferSpec, 'bufferSize'> & { cpu: number; sequenceNumber: bigint | number })[];
}

export interface BuiltTrace {
  bytes: Uint8Array;
  /** file offset of each data buffer (in the order given) */
  offsets: number[];
  /** BufferSize of every uncompressed buffer */
  bufferSize: number;
}

/**
 * A file: a header buffer (BufferType 4, SequenceNumber 0, flags FLUSH_MARKER | PROC_INDEX) holding the
 * logfile header event and the header extension, then the data buffers. Every buffer has BufferSize
 * `bufferSize` (default 0x400), so with the defaults the first data buffer's first event is at 0x448.
 */
export function minimalTrace(spec: TraceSpec): BuiltTrace {
  const bufferSize = spec.bufferSize ?? 0x400;
  const o: LogfileOptions = { ...spec, bufferSize, buffersWritten: spec.buffersWritten ?? spec.buffers.length + 1 };
  const pointerSize = spec.pointerSize ?? 8;
  const t0 = spec.headerTimestamp ?? 1_000_000n;
  const headerEvents = [logfileEvent({ ...o, headerTimestamp: t0 })];
  if (spec.headerExtension !== false) {
    headerEvents.push(systemEvent(pointerSize === 8, { version: 2, hookId: HOOK.HEADER_EXTENSION, timestamp: t0 }, headerExtensionPayload()));
  }
  const parts = [
    buildBuffer({ events: headerEvents, cpu: 0, flags: BUFFER_FLAG.FLUSH_MARKER, type: BUFFER_TYPE.HEADER, sequenceNumber: 0, timestamp: t0, bufferSize }),
  ];
  const offsets: number[] = [];
  let at = bufferSize;
  for (const b of spec.buffers) {
    const bytes = buildBuffer({ ...b, bufferSize: b.compressor ? undefined : bufferSize });
    offsets.push(at);
    at += bytes.length;
    parts.push(bytes);
  }
  return { bytes: concatBytes(...parts), offsets, bufferSize };
}
