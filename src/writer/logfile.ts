// The header buffer (spec A.8/A.9): WMI_BUFFER_HEADER (BufferType HEADER), the WMI_LOG_TYPE_HEADER event
// carrying TRACE_LOGFILE_HEADER + logger name + log file name, and the HEADER_EXTENSION (0x0005) event.
// Also the normalised session options shared by the writer. Browser-safe: no node imports.
import * as L from '../generated/layout.js';
import { align8, checkBig, checkInt, I64_MAX, MAX_EVENT_SIZE, writeSystemHeader } from './events.js';
import type { TraceOptions } from './types.js';

/** EVENT_TRACE_FILE_MODE_SEQUENTIAL */
export const LOG_FILE_MODE_SEQUENTIAL = 0x00000001;
/** EVENT_TRACE_COMPRESSED_MODE (A.6) */
export const LOG_FILE_MODE_COMPRESSED = 0x04000000;
/** PERF_CONTEXT_SWITCH | PERF_COMPACT_CSWITCH | PERF_SPINLOCK bits of Masks[1] (A.9) */
export const DEFAULT_GROUP_MASK1 = 0x00000004 | 0x00000100 | 0x00010000;
/** ETW_BUFFER_STATE Flush */
export const BUFFER_STATE_FLUSH = 3;
export const DEFAULT_LOGGER_ID = 0x1c;
export const DEFAULT_START_TIME = 133_000_000_000_000_000n;
/** ThreadId / ProcessId of the header events (any value is allowed) */
export const HEADER_EVENT_THREAD_ID = 0x1000;
export const HEADER_EVENT_PROCESS_ID = 4;
/** 6.1+: the LoggerName / LogFileName pointer slots hold timer sources (A.8); values as in real files */
export const CLOCK_INTERRUPT_TIMER_SOURCE = 5;
export const PERF_COUNTER_TIMER_SOURCE = 7;

/** TraceOptions with every default applied and validated. */
export interface NormalizedOptions {
  pointerSize: 4 | 8;
  build: number;
  osVersion: [number, number];
  numberOfProcessors: number;
  bufferSize: number;
  perfFreq: bigint;
  clockType: 1 | 2 | 3;
  cpuSpeedInMHz: number;
  timerResolution: number;
  startTime: bigint;
  endTime: bigint | undefined;
  bootTime: bigint;
  headerTimestamp: bigint;
  loggerName: string;
  logFileName: string;
  logFileMode: number;
  eventsLost: number;
  buffersLost: number;
  groupMasks: number[];
  kernelEventVersion: number;
  procIndex: boolean;
  outOfOrder: boolean;
  compress: boolean;
  loggerId: number;
  bias: number;
}

/** smallest accepted bufferSize */
export const MIN_BUFFER_SIZE = 0x400;

export function normalizeOptions(o: TraceOptions): NormalizedOptions {
  const pointerSize = o.pointerSize ?? 8;
  if (pointerSize !== 4 && pointerSize !== 8) throw new RangeError(`pointerSize: ${String(pointerSize)} is not 4 or 8`);
  const build = checkInt(o.build ?? 19041, 0, 0xffffffff, -1, 'build');
  const osVersion = o.osVersion ?? [10, 0];
  if (!Array.isArray(osVersion) || osVersion.length !== 2) throw new RangeError('osVersion: must be [major, minor]');
  checkInt(osVersion[0], 0, 255, -1, 'osVersion[0]');
  checkInt(osVersion[1], 0, 255, -1, 'osVersion[1]');
  const procIndex = o.procIndex ?? true;
  const numberOfProcessors = checkInt(
    o.numberOfProcessors ?? 2, 1, procIndex ? L.PROCESSOR_INDEX_MASK + 1 : 256, -1, 'numberOfProcessors',
  );
  const bufferSize = checkInt(o.bufferSize ?? 0x10000, MIN_BUFFER_SIZE, L.MAX_BUFFER_SIZE, -1, 'bufferSize');
  if (bufferSize % 8 !== 0) throw new RangeError(`bufferSize: ${bufferSize} is not a multiple of 8`);
  const perfFreq = checkBig(o.perfFreq ?? 10_000_000n, 1n, I64_MAX, -1, 'perfFreq');
  const clockType = o.clockType ?? 1;
  if (clockType !== 1 && clockType !== 2 && clockType !== 3) throw new RangeError(`clockType: ${String(clockType)} is not 1, 2 or 3`);
  const cpuSpeedInMHz = checkInt(o.cpuSpeedInMHz ?? 3000, 0, 0xffffffff, -1, 'cpuSpeedInMHz');
  const timerResolution = checkInt(o.timerResolution ?? 156250, 0, 0xffffffff, -1, 'timerResolution');
  const startTime = checkBig(o.startTime ?? DEFAULT_START_TIME, 0n, I64_MAX, -1, 'startTime');
  const endTime = o.endTime === undefined ? undefined : checkBig(o.endTime, 0n, I64_MAX, -1, 'endTime');
  const bootTime = checkBig(o.bootTime ?? startTime - 36_000_000_000n, -I64_MAX, I64_MAX, -1, 'bootTime');
  const headerTimestamp = checkBig(o.headerTimestamp ?? 1_000_000n, 0n, I64_MAX, -1, 'headerTimestamp');
  const loggerName = o.loggerName ?? 'NT Kernel Logger';
  const logFileName = o.logFileName ?? 'C:\\Windows\\Temp\\etw-decode.etl';
  if (typeof loggerName !== 'string') throw new RangeError('loggerName: must be a string');
  if (typeof logFileName !== 'string') throw new RangeError('logFileName: must be a string');
  const compress = o.compress ?? false;
  const logFileMode = checkInt(
    o.logFileMode ?? (LOG_FILE_MODE_SEQUENTIAL | (compress ? LOG_FILE_MODE_COMPRESSED : 0)), 0, 0xffffffff, -1, 'logFileMode',
  );
  const eventsLost = checkInt(o.eventsLost ?? 0, 0, 0xffffffff, -1, 'eventsLost');
  const buffersLost = checkInt(o.buffersLost ?? 0, 0, 0xffffffff, -1, 'buffersLost');
  const groupMasks = o.groupMasks ?? [0, DEFAULT_GROUP_MASK1, 0, 0, 0, 0, 0, 0];
  if (!Array.isArray(groupMasks) || groupMasks.length !== 8) throw new RangeError('groupMasks: must hold 8 u32');
  groupMasks.forEach((m, i) => checkInt(m, 0, 0xffffffff, -1, `groupMasks[${i}]`));
  const kernelEventVersion = checkInt(o.kernelEventVersion ?? 0x46, 0, 0xffffffff, -1, 'kernelEventVersion');
  const loggerId = checkInt(o.loggerId ?? DEFAULT_LOGGER_ID, 0, 0xffff, -1, 'loggerId');
  const bias = checkInt(o.compactBias ?? L.maxWaitReasonForBuild(build), 1, 64 - L.THREAD_STATE_COUNT, -1, 'compactBias');
  return {
    pointerSize, build, osVersion: [osVersion[0], osVersion[1]], numberOfProcessors, bufferSize, perfFreq, clockType,
    cpuSpeedInMHz, timerResolution, startTime, endTime, bootTime, headerTimestamp, loggerName, logFileName, logFileMode,
    eventsLost, buffersLost, groupMasks: groupMasks.slice(), kernelEventVersion, procIndex,
    outOfOrder: o.outOfOrder ?? true, compress, loggerId, bias,
  };
}

/** FILETIME of raw timestamp `t` with the StartTime anchor (A.10). */
export function timestampToFiletime(o: NormalizedOptions, t: bigint): bigint {
  const d = t - o.headerTimestamp;
  if (d <= 0n) return o.startTime;
  if (o.clockType === 2) return o.startTime + d;
  if (o.clockType === 3) return o.cpuSpeedInMHz > 0 ? o.startTime + (d * 10n) / BigInt(o.cpuSpeedInMHz) : o.startTime;
  return o.startTime + (d * 10_000_000n) / o.perfFreq;
}

function utf16z(s: string): Uint8Array {
  const out = new Uint8Array(2 * s.length + 2);
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    out[2 * i] = c & 0xff;
    out[2 * i + 1] = c >>> 8;
  }
  return out;
}

/** Size of the WMI_LOG_TYPE_HEADER event. */
export function logfileHeaderEventSize(o: NormalizedOptions): number {
  return L.SYSTEM_HEADER_SIZE + (o.pointerSize === 8 ? L.LFH64_SIZE : L.LFH32_SIZE) + 2 * (o.loggerName.length + o.logFileName.length + 2);
}

/** Filled size of the header buffer. */
export function headerBufferFilled(o: NormalizedOptions): number {
  return L.WMI_BUFFER_HEADER_SIZE + align8(logfileHeaderEventSize(o)) + align8(L.SYSTEM_HEADER_SIZE + L.KHE_SIZE);
}

/** Checks that the header events fit (called once at normalisation time by the writer). */
export function checkHeaderFits(o: NormalizedOptions): void {
  const size = logfileHeaderEventSize(o);
  if (size > MAX_EVENT_SIZE) throw new RangeError(`loggerName/logFileName: the header event (${size} bytes) does not fit a u16 Size`);
  if (headerBufferFilled(o) > o.bufferSize) {
    throw new RangeError(`bufferSize: ${o.bufferSize} is too small for the header events (loggerName/logFileName too long)`);
  }
}

/** Builds the header buffer (SequenceNumber 0, BufferType 4, flags 0x01 | 0x20, processor 0). */
export function buildHeaderBuffer(o: NormalizedOptions, buffersWritten: number, endTime: bigint): Uint8Array {
  const u8 = new Uint8Array(o.bufferSize);
  const dv = new DataView(u8.buffer);
  const filled = headerBufferFilled(o);
  // WMI_BUFFER_HEADER
  dv.setUint32(L.BUF_BUFFER_SIZE, o.bufferSize, true);
  dv.setUint32(L.BUF_SAVED_OFFSET, filled, true);
  dv.setUint32(L.BUF_CURRENT_OFFSET, filled, true);
  dv.setBigInt64(L.BUF_TIMESTAMP, 0n, true);
  dv.setBigInt64(L.BUF_SEQUENCE_NUMBER, 0n, true);
  dv.setUint16(L.BUF_CLIENT_CONTEXT, 0, true);
  dv.setUint16(L.BUF_CLIENT_CONTEXT + 2, o.loggerId, true);
  dv.setUint32(L.BUF_STATE, BUFFER_STATE_FLUSH, true);
  dv.setUint32(L.BUF_OFFSET, filled, true);
  dv.setUint16(L.BUF_BUFFER_FLAG, L.BUFFER_FLAG_FLUSH_MARKER | (o.procIndex ? L.BUFFER_FLAG_PROC_INDEX : 0), true);
  dv.setUint16(L.BUF_BUFFER_TYPE, L.BUFFER_TYPE_HEADER, true);

  // WMI_LOG_TYPE_HEADER event
  let off = L.WMI_BUFFER_HEADER_SIZE;
  const sysType = o.pointerSize === 8 ? L.HT_SYSTEM64 : L.HT_SYSTEM32;
  const size = logfileHeaderEventSize(o);
  const lfh = writeSystemHeader(
    dv, off, sysType, 2, L.HOOK_HEADER, size, HEADER_EVENT_THREAD_ID, HEADER_EVENT_PROCESS_ID, o.headerTimestamp, false,
  );
  const is64 = o.pointerSize === 8;
  dv.setUint32(lfh + L.LFH_BUFFER_SIZE, o.bufferSize, true);
  u8[lfh + L.LFH_VERSION] = o.osVersion[0];
  u8[lfh + L.LFH_VERSION + 1] = o.osVersion[1];
  u8[lfh + L.LFH_VERSION + 2] = o.compress ? 2 : 1;
  u8[lfh + L.LFH_VERSION + 3] = o.compress ? 0 : 5;
  dv.setUint32(lfh + L.LFH_PROVIDER_VERSION, o.build, true);
  dv.setUint32(lfh + L.LFH_NUMBER_OF_PROCESSORS, o.numberOfProcessors, true);
  dv.setBigInt64(lfh + L.LFH_END_TIME, endTime, true);
  dv.setUint32(lfh + L.LFH_TIMER_RESOLUTION, o.timerResolution, true);
  dv.setUint32(lfh + L.LFH_MAXIMUM_FILE_SIZE, 0, true);
  dv.setUint32(lfh + L.LFH_LOG_FILE_MODE, o.logFileMode, true);
  dv.setUint32(lfh + L.LFH_BUFFERS_WRITTEN, buffersWritten, true);
  dv.setUint32(lfh + L.LFH_START_BUFFERS, 1, true);
  dv.setUint32(lfh + L.LFH_POINTER_SIZE, o.pointerSize, true);
  dv.setUint32(lfh + L.LFH_EVENTS_LOST, o.eventsLost, true);
  dv.setUint32(lfh + L.LFH_CPU_SPEED_IN_MHZ, o.cpuSpeedInMHz, true);
  dv.setUint32(lfh + L.LFH_LOGGER_NAME, CLOCK_INTERRUPT_TIMER_SOURCE, true);
  dv.setUint32(lfh + (is64 ? L.LFH64_LOG_FILE_NAME : L.LFH32_LOG_FILE_NAME), PERF_COUNTER_TIMER_SOURCE, true);
  // TimeZone: zeros
  dv.setBigInt64(lfh + (is64 ? L.LFH64_BOOT_TIME : L.LFH32_BOOT_TIME), o.bootTime, true);
  dv.setBigInt64(lfh + (is64 ? L.LFH64_PERF_FREQ : L.LFH32_PERF_FREQ), o.perfFreq, true);
  dv.setBigInt64(lfh + (is64 ? L.LFH64_START_TIME : L.LFH32_START_TIME), o.startTime, true);
  dv.setUint32(lfh + (is64 ? L.LFH64_RESERVED_FLAGS : L.LFH32_RESERVED_FLAGS), o.clockType, true);
  dv.setUint32(lfh + (is64 ? L.LFH64_BUFFERS_LOST : L.LFH32_BUFFERS_LOST), o.buffersLost, true);
  let p = lfh + (is64 ? L.LFH64_SIZE : L.LFH32_SIZE);
  const ln = utf16z(o.loggerName);
  u8.set(ln, p);
  p += ln.length;
  u8.set(utf16z(o.logFileName), p);
  off += align8(size);

  // HEADER_EXTENSION event (ETW_KERNEL_HEADER_EXTENSION: 8 group masks + version)
  const ext = writeSystemHeader(
    dv, off, sysType, 2, L.HOOK_HEADER_EXTENSION, L.SYSTEM_HEADER_SIZE + L.KHE_SIZE,
    HEADER_EVENT_THREAD_ID, HEADER_EVENT_PROCESS_ID, o.headerTimestamp, false,
  );
  for (let i = 0; i < 8; i++) dv.setUint32(ext + 4 * i, o.groupMasks[i] >>> 0, true);
  dv.setUint32(ext + 32, o.kernelEventVersion >>> 0, true);
  off += align8(L.SYSTEM_HEADER_SIZE + L.KHE_SIZE);
  u8.fill(0xff, off);
  return u8;
}
