// Raw session-clock ticks → nanoseconds since the trace anchor and → wall-clock FILETIME (docs/format.md §A.10).
// All integer: (t − T0) · 10^9 / f is computed as q·10^9 + (r·10^9)/f with floor division, never in floating point.
import { EtlError } from './errors.js';
import type { TraceInfo } from './result/logfile.js';

export interface Clock {
  /** ticks per second of the raw timestamps (QPC: PerfFreq; system time: 10^7; cycles: CpuSpeedInMHz·10^6) */
  readonly ticksPerSecond: bigint;
  /** the anchor: raw timestamp T0 of the header event */
  readonly anchorTicks: bigint;
  /** FILETIME W0 at the anchor */
  readonly anchorFileTime: bigint;
  /** nanoseconds since T0 (floor) */
  toNanoseconds(ticks: bigint): bigint;
  /** FILETIME (100 ns units since 1601-01-01 UTC), floor */
  toFileTime(ticks: bigint): bigint;
  /** JavaScript Date (millisecond precision) */
  toDate(ticks: bigint): Date;
  /** column-wise nanoseconds since T0 */
  toNanosecondsColumn(ticks: BigInt64Array): BigInt64Array;
}

const FILETIME_UNIX_EPOCH = 116444736000000000n;

function floorDiv(a: bigint, b: bigint): bigint {
  const q = a / b;
  return a % b !== 0n && (a < 0n) !== (b < 0n) ? q - 1n : q;
}

/** a·m/d exactly (floor), without overflow concerns (BigInt), split as in docs/format.md §A.10 */
function scale(a: bigint, m: bigint, d: bigint): bigint {
  const q = floorDiv(a, d);
  const r = a - q * d;
  return q * m + floorDiv(r * m, d);
}

/**
 * The linear form of a clock made by createClock: toNanoseconds(t) = floor((t − anchorTicks)·10^9 / ticksPerSecond)
 * and toFileTime(t) = fileTimeOrigin + floor((t − anchorTicks)·10^7 / ticksPerSecond). Fast exact converters
 * (src/output/ticks.ts) rely on it; a Clock made another way has none and is converted through its methods.
 */
export interface LinearClock {
  readonly anchorTicks: bigint;
  readonly ticksPerSecond: bigint;
  /** FILETIME at anchorTicks as toFileTime computes it (system-time clocks: anchorTicks itself) */
  readonly fileTimeOrigin: bigint;
}

const linearClocks = new WeakMap<Clock, LinearClock>();

/** The linear form of a clock made by createClock, or null for any other object. */
export function linearClock(clock: Clock): LinearClock | null {
  return linearClocks.get(clock) ?? null;
}

type ClockInfo = Pick<TraceInfo, 'clockType' | 'perfFreq' | 'cpuSpeedInMHz' | 'headerTimestamp' | 'startTime'>;

/** Why the trace's timestamps cannot be converted, or null when they can. */
export function clockUnavailable(info: ClockInfo): string | null {
  switch (info.clockType) {
    case 1:
      return info.perfFreq > 0n ? null : `QPC clock with PerfFreq ${info.perfFreq}: cannot convert timestamps`;
    case 2:
      return null;
    case 3:
      return info.cpuSpeedInMHz > 0 ? null : 'CPU-cycle clock with CpuSpeedInMHz 0: cannot convert timestamps';
    default:
      return `clock type ${info.clockType} (ReservedFlags) has no known conversion; use raw ticks`;
  }
}

/** The conversions of a trace's clock; EtlError('NO_CLOCK') when clockUnavailable() says why not. */
export function createClock(info: ClockInfo): Clock {
  const problem = clockUnavailable(info);
  if (problem !== null) throw new EtlError('NO_CLOCK', problem);
  const t0 = info.headerTimestamp;
  const w0 = info.startTime;
  let ticksPerSecond: bigint;
  let toFileTime: (t: bigint) => bigint;
  let fileTimeOrigin: bigint;
  switch (info.clockType) {
    case 1:
      ticksPerSecond = info.perfFreq;
      toFileTime = (t) => w0 + scale(t - t0, 10_000_000n, ticksPerSecond);
      fileTimeOrigin = w0;
      break;
    case 2:
      ticksPerSecond = 10_000_000n;
      toFileTime = (t) => t; // already a FILETIME (MS-WNODE)
      fileTimeOrigin = t0; // t = t0 + floor((t − t0)·10^7 / 10^7)
      break;
    case 3: {
      const mhz = BigInt(info.cpuSpeedInMHz);
      ticksPerSecond = mhz * 1_000_000n;
      toFileTime = (t) => w0 + scale(t - t0, 10n, mhz); // = floor((t − t0)·10^7 / (mhz·10^6))
      fileTimeOrigin = w0;
      break;
    }
    default:
      throw new EtlError('NO_CLOCK', `clock type ${info.clockType}`); // excluded by clockUnavailable
  }
  const toNanoseconds = (t: bigint): bigint => scale(t - t0, 1_000_000_000n, ticksPerSecond);
  const clock: Clock = {
    ticksPerSecond,
    anchorTicks: t0,
    anchorFileTime: w0,
    toNanoseconds,
    toFileTime,
    toDate: (t) => new Date(Number(floorDiv(toFileTime(t) - FILETIME_UNIX_EPOCH, 10_000n))),
    toNanosecondsColumn(ticks) {
      const out = new BigInt64Array(ticks.length);
      for (let i = 0; i < ticks.length; i++) out[i] = toNanoseconds(ticks[i]!);
      return out;
    },
  };
  linearClocks.set(clock, { anchorTicks: t0, ticksPerSecond, fileTimeOrigin });
  return clock;
}
