// TRACE_LOGFILE_HEADER (docs/format.md §A.8) and ETW_KERNEL_HEADER_EXTENSION (A.9) → TraceInfo.
import * as L from '../generated/layout.js';

export interface GroupMasks {
  masks: number[];
  kernelEventVersion: number;
  contextSwitch: boolean;
  compactContextSwitch: boolean;
  dispatcher: boolean;
  spinLock: boolean;
}

export interface TraceInfo {
  /** BufferSize of the session, bytes */
  bufferSize: number;
  osVersion: string;
  /** file-layout version: SubVersion.SubMinorVersion */
  layoutVersion: string;
  /** ProviderVersion = Windows build number */
  build: number;
  numberOfProcessors: number;
  pointerSize: number;
  /** 4 or 8: the header event's bitness (SYSTEM32 vs SYSTEM64) */
  headerPointerSize: number;
  /** ReservedFlags: 1 QPC, 2 system time, 3 CPU cycles */
  clockType: number;
  clockName: string;
  perfFreq: bigint;
  cpuSpeedInMHz: number;
  timerResolution: number;
  maximumFileSize: number;
  logFileMode: number;
  buffersWritten: number;
  startBuffers: number;
  eventsLost: number;
  buffersLost: number;
  /** FILETIMEs (100 ns since 1601-01-01 UTC) */
  startTime: bigint;
  endTime: bigint;
  bootTime: bigint;
  /** raw timestamp of the WMI_LOG_TYPE_HEADER event: the anchor T0 of docs/format.md §A.10 */
  headerTimestamp: bigint;
  timeZoneBias: number;
  loggerName: string;
  logFileName: string;
  groupMasks: GroupMasks | null;
}

const CLOCK_NAMES: Record<number, string> = { 0: 'raw', 1: 'QPC', 2: 'system time', 3: 'CPU cycle counter' };

/** Parses the copied payload of the first WMI_LOG_TYPE_HEADER event. Missing bytes read as 0. */
export function parseLogfileHeader(
  payload: Uint8Array,
  payloadLength: number,
  headerPointerSize: number,
  headerTimestamp: bigint,
  headerExtension: Uint32Array | null,
): TraceInfo {
  const is64 = headerPointerSize === 8;
  const bytes = new Uint8Array(Math.max(payload.length, is64 ? L.LFH64_SIZE : L.LFH32_SIZE));
  bytes.set(payload);
  const v = new DataView(bytes.buffer);
  const u32 = (o: number) => v.getUint32(o, true);
  const i64 = (o: number) => v.getBigInt64(o, true);
  const size = is64 ? L.LFH64_SIZE : L.LFH32_SIZE;
  const strings = readUtf16Strings(payload.subarray(Math.min(size, payload.length)), 2);
  const clockType = u32(is64 ? L.LFH64_RESERVED_FLAGS : L.LFH32_RESERVED_FLAGS);
  void payloadLength;
  return {
    bufferSize: u32(L.LFH_BUFFER_SIZE),
    osVersion: `${bytes[L.LFH_VERSION]}.${bytes[L.LFH_VERSION + 1]}`,
    layoutVersion: `${bytes[L.LFH_VERSION + 2]}.${bytes[L.LFH_VERSION + 3]}`,
    build: u32(L.LFH_PROVIDER_VERSION),
    numberOfProcessors: u32(L.LFH_NUMBER_OF_PROCESSORS),
    pointerSize: u32(L.LFH_POINTER_SIZE),
    headerPointerSize,
    clockType,
    clockName: CLOCK_NAMES[clockType] ?? `unknown (${clockType})`,
    perfFreq: i64(is64 ? L.LFH64_PERF_FREQ : L.LFH32_PERF_FREQ),
    cpuSpeedInMHz: u32(L.LFH_CPU_SPEED_IN_MHZ),
    timerResolution: u32(L.LFH_TIMER_RESOLUTION),
    maximumFileSize: u32(L.LFH_MAXIMUM_FILE_SIZE),
    logFileMode: u32(L.LFH_LOG_FILE_MODE),
    buffersWritten: u32(L.LFH_BUFFERS_WRITTEN),
    startBuffers: u32(L.LFH_START_BUFFERS),
    eventsLost: u32(L.LFH_EVENTS_LOST),
    buffersLost: u32(is64 ? L.LFH64_BUFFERS_LOST : L.LFH32_BUFFERS_LOST),
    startTime: i64(is64 ? L.LFH64_START_TIME : L.LFH32_START_TIME),
    endTime: i64(L.LFH_END_TIME),
    bootTime: i64(is64 ? L.LFH64_BOOT_TIME : L.LFH32_BOOT_TIME),
    headerTimestamp,
    timeZoneBias: v.getInt32(is64 ? L.LFH64_TIME_ZONE : L.LFH32_TIME_ZONE, true),
    loggerName: strings[0] ?? '',
    logFileName: strings[1] ?? '',
    groupMasks: headerExtension ? groupMasks(headerExtension) : null,
  };
}

export function groupMasks(ext: Uint32Array): GroupMasks {
  const masks = Array.from(ext.subarray(0, 8));
  const m1 = masks[1] ?? 0;
  return {
    masks,
    kernelEventVersion: ext[8] ?? 0,
    contextSwitch: (m1 & 0x4) !== 0, // PERF_CONTEXT_SWITCH 0x20000004
    compactContextSwitch: (m1 & 0x100) !== 0, // PERF_COMPACT_CSWITCH 0x20000100
    dispatcher: (m1 & 0x200) !== 0, // PERF_DISPATCHER 0x20000200
    spinLock: (m1 & 0x10000) !== 0, // PERF_SPINLOCK 0x20010000
  };
}

/** Reads `count` NUL-terminated UTF-16LE strings from the start of `bytes`. */
export function readUtf16Strings(bytes: Uint8Array, count: number): string[] {
  const out: string[] = [];
  let p = 0;
  for (let k = 0; k < count && p + 1 < bytes.length; k++) {
    let s = '';
    while (p + 1 < bytes.length) {
      const ch = bytes[p]! | (bytes[p + 1]! << 8);
      p += 2;
      if (ch === 0) break;
      s += String.fromCharCode(ch);
    }
    out.push(s);
  }
  return out;
}
