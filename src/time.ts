// Raw session-clock ticks → nanoseconds since the trace anchor, → wall-clock FILETIME and tick differences →
// nanoseconds (docs/format.md §A.10), exactly: integer arithmetic only (BigInt, or doubles holding exact
// integers), never a rounded quotient. Two layers, one idea:
//   Clock (createClock): the definitions, in BigInt — time = floor((t − T0)·10^9 / f),
//     FILETIME = W0 + floor((t − T0)·10^7 / f) (system time: t itself), duration = trunc(d·10^9 / f);
//   TickConverter: the same values without a BigInt per value, for every writer that converts a column
//     (text digits, int64 Arrow/Parquet columns, Perfetto timestamps), falling back to the Clock's BigInt
//     conversion wherever its number path cannot be exact.
import { EtlError } from './errors.js';
import * as L from './generated/layout.js';
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
  /** column-wise nanoseconds since T0 (a value beyond int64 wraps, as a BigInt64Array stores it) */
  toNanosecondsColumn(ticks: BigInt64Array): BigInt64Array;
  /** the first raw timestamp whose toNanoseconds is at least `ns` (a selection's bound, src/select) */
  fromNanoseconds(ns: bigint): bigint;
  /** the first raw timestamp whose toFileTime is at least `fileTime` */
  fromFileTime(fileTime: bigint): bigint;
}

/** FILETIME of 1970-01-01 00:00:00 UTC (the Unix epoch) */
export const FILETIME_UNIX_EPOCH = 116444736000000000n;

function gcd(a: bigint, b: bigint): bigint {
  while (b !== 0n) [a, b] = [b, a % b];
  return a < 0n ? -a : a;
}

/** floor(a / b) of bigints (BigInt division truncates toward zero). */
function floorDivBig(a: bigint, b: bigint): bigint {
  const q = a / b;
  return a % b !== 0n && (a < 0n) !== (b < 0n) ? q - 1n : q;
}

/**
 * floor(x / d) for integers |x| < 2^53 and d ≥ 1 held in doubles. Exact without a correction step: the
 * quotient x/d = k + f/d (0 ≤ f < d) is at least 1/d from the next integer, more than half an ulp of it
 * (< 2^-53·|x|/d), so the rounded quotient lies in [k, k + 1).
 */
export function floorDiv(x: number, d: number): number {
  return Math.floor(x / d);
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

/**
 * The clocks createClock makes: linear, toFileTime(t) = toFileTime(T0) + floor((t − T0)·10^7 / f), which
 * TickConverter's number path relies on. A Clock made any other way is converted through its methods.
 * The methods are own arrow functions: `const f = clock.toNanoseconds` works, and `{ ...clock }` copies them.
 */
class LinearClock implements Clock {
  declare readonly toNanoseconds: (ticks: bigint) => bigint;
  declare readonly toFileTime: (ticks: bigint) => bigint;
  declare readonly toDate: (ticks: bigint) => Date;
  declare readonly toNanosecondsColumn: (ticks: BigInt64Array) => BigInt64Array;
  declare readonly fromNanoseconds: (ns: bigint) => bigint;
  declare readonly fromFileTime: (fileTime: bigint) => bigint;

  /** @param fileTimeOrigin FILETIME at the anchor as toFileTime computes it (system time: the anchor itself) */
  constructor(
    readonly ticksPerSecond: bigint,
    readonly anchorTicks: bigint,
    readonly anchorFileTime: bigint,
    fileTimeOrigin: bigint,
  ) {
    const t0 = anchorTicks;
    this.toNanoseconds = (t) => floorDivBig((t - t0) * 1_000_000_000n, ticksPerSecond);
    this.toFileTime = (t) => fileTimeOrigin + floorDivBig((t - t0) * 10_000_000n, ticksPerSecond);
    this.toDate = (t) => new Date(Number(floorDivBig(this.toFileTime(t) - FILETIME_UNIX_EPOCH, 10_000n)));
    this.toNanosecondsColumn = (ticks) => convertColumn(new TickConverter(this, 'ns'), ticks, ticks.length, null, 0, false).values;
    // floor((t − t0)·k / f) ≥ v  ⇔  (t − t0)·k ≥ v·f  ⇔  t ≥ t0 + ceil(v·f / k)
    this.fromNanoseconds = (ns) => t0 - floorDivBig(-ns * ticksPerSecond, 1_000_000_000n);
    this.fromFileTime = (ft) => t0 - floorDivBig(-(ft - fileTimeOrigin) * ticksPerSecond, 10_000_000n);
  }
}

/** The conversions of a trace's clock; EtlError('NO_CLOCK') when clockUnavailable() says why not. */
export function createClock(info: ClockInfo): Clock {
  const problem = clockUnavailable(info);
  if (problem !== null) throw new EtlError('NO_CLOCK', problem);
  const t0 = info.headerTimestamp;
  const w0 = info.startTime;
  switch (info.clockType) {
    case 1:
      return new LinearClock(info.perfFreq, t0, w0, w0);
    case 2:
      // the ticks are FILETIMEs already (MS-WNODE): t = t0 + floor((t − t0)·10^7 / 10^7)
      return new LinearClock(10_000_000n, t0, w0, t0);
    case 3:
      return new LinearClock(BigInt(info.cpuSpeedInMHz) * 1_000_000n, t0, w0, w0);
    default:
      throw new EtlError('NO_CLOCK', `clock type ${info.clockType}`); // excluded by clockUnavailable
  }
}

/** A TickConverter's number path (numberPath()): value = base + floor (durations: trunc) of (t − anchor)·num/den while |quotient| ≤ qLimit. */
export interface TickPath {
  anchor: bigint;
  num: number;
  den: number;
  base: bigint;
  qLimit: number;
  trunc: boolean;
}

/** What a TickConverter computes from raw ticks t: Clock.toNanoseconds, Clock.toFileTime, or trunc(t·10^9/f). */
export type TickConversion = 'ns' | 'filetime' | 'duration' | 'unixNs';

const TWO_32 = 4294967296;
const TWO_53 = 9007199254740992;
/** |hi − anchorHi| below this: the tick difference a fits in 2^52 + 2^32, exact as a double */
const HI_LIMIT = L.TXT_HI_LIMIT; // as assembly/text/index.ts ticks() bounds it

/** the signed high and unsigned low 32-bit halves of an int64 bigint */
function halves(v: bigint): [hi: number, lo: number] {
  const u = BigInt.asUintN(64, v);
  return [Number(BigInt.asIntN(32, u >> 32n)), Number(u & 0xffffffffn)];
}

/**
 * One exact conversion of raw ticks, read as the two 32-bit halves of an int64 (as a BigInt64Array holds
 * them), without a BigInt per value:
 *   value = base + floor(a·num / den)  (durations: trunc), a = t − anchor,
 * num/den the fraction 10^9/f (FILETIME: 10^7/f) reduced by its gcd, base the FILETIME at the anchor (else 0).
 * Number path: while |a| < 2^52 + 2^32 (the halves subtracted), den < 2^32 and the result below 2^53,
 *   floor(a·num/den) = q·num + floor(r·num/den), a = q·den + r, 0 ≤ r < den,
 * where r·num, when it could reach 2^53, is split on the two 15-bit halves of num (num < 2^30), so every
 * product is an exact integer double. Elsewhere (hostile timestamps, den ≥ 2^32, a Clock not made by
 * createClock) exact() gives the value from the Clock's BigInt conversion; what a writer does with a
 * value out of its range (an int64 column, a varint) is the writer's rule.
 */
export class TickConverter {
  /** false: every value needs exact() */
  readonly fast: boolean = false;
  /** `base` as signed high and unsigned low 32-bit halves (FILETIME: |base| < 2^62) */
  readonly baseHi: number = 0;
  readonly baseLo: number = 0;
  private readonly anchorHi: number = 0;
  private readonly anchorLo: number = 0;
  private readonly num: number = 1;
  private readonly den: number = 1;
  private readonly numHi: number = 0;
  private readonly numLo: number = 1;
  /** r·num stays below 2^53 for every r < den */
  private readonly direct: boolean = true;
  /** largest |q| whose q·num + (num − 1) is below 2^53 */
  private readonly qLimit: number = 0;
  private readonly trunc: boolean;
  private readonly exactOf: (t: bigint) => bigint;

  /**
   * @param clock the trace's clock, or null for raw ticks since `origin` (num = den = 1: a trace whose
   *   clock cannot be converted keeps order and proportions, with an unknown scale)
   * @param kind with a clock: which conversion
   * @param origin without a clock: the tick that maps to 0
   */
  constructor(clock: Clock, kind: TickConversion);
  constructor(clock: null, kind: 'ns', origin: bigint);
  constructor(clock: Clock | null, kind: TickConversion, origin = 0n) {
    this.trunc = kind === 'duration';
    let anchor: bigint | null;
    let perSecond = 1n;
    let f = 1n;
    let base = 0n;
    if (clock === null) {
      anchor = origin;
      this.exactOf = (t) => t - origin;
    } else if (kind === 'duration') {
      anchor = 0n;
      perSecond = 1_000_000_000n;
      f = clock.ticksPerSecond;
      this.exactOf = (t) => (t * 1_000_000_000n) / clock.ticksPerSecond; // BigInt division truncates
    } else {
      const linear = clock instanceof LinearClock ? clock : null;
      anchor = linear?.anchorTicks ?? null;
      perSecond = kind === 'filetime' ? 10_000_000n : 1_000_000_000n;
      f = clock.ticksPerSecond;
      if (kind === 'unixNs') {
        // nanoseconds since 1970-01-01 UTC: the anchor's FILETIME in ns, plus the nanoseconds since the anchor
        const unixBase = (clock.toFileTime(clock.anchorTicks) - FILETIME_UNIX_EPOCH) * 100n;
        base = unixBase;
        this.exactOf = (t) => unixBase + clock.toNanoseconds(t);
      } else {
        base = kind === 'filetime' && linear !== null ? linear.toFileTime(linear.anchorTicks) : 0n;
        this.exactOf = kind === 'ns' ? (t) => clock.toNanoseconds(t) : (t) => clock.toFileTime(t);
      }
    }
    const g = f > 0n ? gcd(perSecond, f) : 0n;
    const den = g > 0n ? f / g : 0n;
    if (anchor === null || BigInt.asIntN(64, anchor) !== anchor || den <= 0n || den >= BigInt(TWO_32) || base <= -(2n ** 62n) || base >= 2n ** 62n) return;
    this.fast = true;
    [this.anchorHi, this.anchorLo] = halves(anchor);
    [this.baseHi, this.baseLo] = halves(base);
    this.num = Number(perSecond / g);
    this.den = Number(den);
    this.numHi = Math.floor(this.num / 32768);
    this.numLo = this.num - this.numHi * 32768;
    this.direct = this.den * this.num <= TWO_53;
    this.qLimit = Math.floor((TWO_53 - 2 * this.num) / this.num);
  }

  /**
   * The number path's constants, for a twin that computes it in 64-bit integers (assembly/text/index.ts
   * ticks(): anchor, num, den, base as there, qLimit its bound on the quotient, trunc for durations), or null
   * when every value needs exact().
   */
  numberPath(): TickPath | null {
    if (!this.fast) return null;
    const anchor = (BigInt(this.anchorHi) << 32n) | BigInt(this.anchorLo >>> 0);
    const base = (BigInt(this.baseHi) << 32n) | BigInt(this.baseLo >>> 0);
    return { anchor, num: this.num, den: this.den, base, qLimit: this.qLimit, trunc: this.trunc };
  }

  /**
   * value − base for the ticks whose halves are hi (signed or not) and lo (unsigned), as an exact integer
   * double of magnitude below 2^53; NaN where the number path cannot give it exactly (use exact()).
   */
  fromHalves(hi: number, lo: number): number {
    if (!this.fast) return NaN;
    const dhi = (hi | 0) - this.anchorHi;
    if (dhi <= -HI_LIMIT || dhi >= HI_LIMIT) return NaN;
    const a = dhi * TWO_32 + (lo - this.anchorLo); // exact: |a| < 2^52 + 2^32
    return this.trunc && a < 0 ? -this.scale(-a) : this.scale(a);
  }

  /**
   * The column form of fromHalves, plus the base: for each row i < n whose bit is set in `valid` (null:
   * every row), the ticks in words src[2i] (lo), src[2i + 1] (hi) become base + value in dst's words —
   * one loop over locals, no call or allocation per row. Returns the rows the number path cannot give
   * exactly (to be converted with exact()), in order; empty for almost every column.
   */
  convertWords(src: Int32Array, dst: Int32Array, n: number, valid: Uint8Array | null): number[] {
    const misses: number[] = [];
    if (!this.fast) {
      for (let i = 0; i < n; i++) if (valid === null || ((valid[i >>> 3]! >>> (i & 7)) & 1) === 1) misses.push(i);
      return misses;
    }
    const aHi = this.anchorHi;
    const aLo = this.anchorLo;
    const bHi = this.baseHi;
    const bLo = this.baseLo;
    const num = this.num;
    const den = this.den;
    const trunc = this.trunc;
    const direct = this.direct;
    const qLimit = this.qLimit;
    for (let i = 0; i < n; i++) {
      if (valid !== null && ((valid[i >>> 3]! >>> (i & 7)) & 1) === 0) continue;
      const dhi = src[2 * i + 1]! - aHi;
      if (dhi <= -HI_LIMIT || dhi >= HI_LIMIT) {
        misses.push(i);
        continue;
      }
      const a = dhi * TWO_32 + ((src[2 * i]! >>> 0) - aLo); // exact: |a| < 2^52 + 2^32
      let v: number;
      if (den === 1) {
        v = a * num; // rounded at or beyond 2^53 only when the exact product is there too
        if (!(v < TWO_53 && v > -TWO_53)) {
          misses.push(i);
          continue;
        }
      } else {
        // scale(): floor(x·num/den) = q·num + floor(r·num/den), inlined when r·num stays below 2^53
        const neg = trunc && a < 0;
        const x = neg ? -a : a;
        const q = Math.floor(x / den);
        if (!direct) v = this.scale(x);
        else if (q > qLimit || q < -qLimit) v = NaN;
        else v = q * num + Math.floor(((x - q * den) * num) / den);
        if (v !== v) {
          misses.push(i);
          continue;
        }
        if (neg) v = -v;
      }
      // base + v in 32-bit halves (|base| < 2^62, |v| < 2^53: within int64)
      const vh = Math.floor(v / TWO_32);
      let lo = v - vh * TWO_32 + bLo;
      let carry = 0;
      if (lo >= TWO_32) {
        lo -= TWO_32;
        carry = 1;
      }
      dst[2 * i] = lo | 0;
      dst[2 * i + 1] = vh + bHi + carry;
    }
    return misses;
  }

  /** The value for any ticks, from the clock's BigInt conversion. */
  exact(ticks: bigint): bigint {
    return this.exactOf(ticks);
  }

  /** floor(a·num/den) exactly, or NaN when it would not be below 2^53 */
  private scale(a: number): number {
    const num = this.num;
    const den = this.den;
    if (den === 1) {
      const v = a * num; // rounded at or beyond 2^53 only when the exact product is there too
      return v < TWO_53 && v > -TWO_53 ? v : NaN;
    }
    const q = floorDiv(a, den);
    if (q > this.qLimit || q < -this.qLimit) return NaN;
    const r = a - q * den;
    if (this.direct) return q * num + floorDiv(r * num, den);
    // r·num = r·numHi·2^15 + r·numLo; with r·numHi = q1·den + r1:
    // floor(r·num/den) = q1·2^15 + floor((r1·2^15 + r·numLo)/den), every product below 2^48
    const x1 = r * this.numHi;
    const q1 = floorDiv(x1, den);
    return q * num + q1 * 32768 + floorDiv((x1 - q1 * den) * 32768 + r * this.numLo, den);
  }
}

const I64_MIN = -(2n ** 63n);
const I64_MAX = 2n ** 63n - 1n;

export interface NanosecondsColumn {
  readonly values: BigInt64Array;
  /** validity: the input bitmap, or a copy with the cells whose nanoseconds do not fit in an int64 cleared */
  readonly bitmap: Uint8Array | null;
  readonly nullCount: number;
}

/**
 * Nanoseconds of a column of ticks: `time` since the clock's anchor, or a `duration`. Null cells (bit
 * clear in `bitmap`, when given) are 0; so are cells whose nanoseconds overflow an int64 (ticks centuries
 * away from the anchor, only in corrupt data), which become null. `out` (each function here): the values
 * are written into its first n cells (a column reused from batch to batch), else into a new array.
 */
/** Nanoseconds since 1970-01-01 UTC of ticks[0, n) (an Arrow/Parquet timestamp): as nanosecondsColumn, plus the anchor's. */
export function unixNanosecondsColumn(ticks: BigInt64Array, n: number, bitmap: Uint8Array | null, nullCount: number, clock: Clock, out?: BigInt64Array): NanosecondsColumn {
  return convertColumn(new TickConverter(clock, 'unixNs'), ticks, n, bitmap, nullCount, true, out);
}

/**
 * unixNanosecondsColumn from the same ticks' nanoseconds since the start (`ns`: nanosecondsColumn of kind
 * 'time'): the anchor's UTC nanoseconds added in 32-bit halves — the same values, without converting each
 * tick again. Cells whose `ns` overflowed are converted from their ticks.
 */
export function unixNanosecondsFrom(
  ns: NanosecondsColumn,
  ticks: BigInt64Array,
  n: number,
  bitmap: Uint8Array | null,
  nullCount: number,
  clock: Clock,
  into?: BigInt64Array,
): NanosecondsColumn {
  const conv = new TickConverter(clock, 'unixNs');
  if (!conv.fast) return unixNanosecondsColumn(ticks, n, bitmap, nullCount, clock, into);
  const out = valuesOf(n, into, bitmap !== null || ns.bitmap !== null);
  const src = new Int32Array(ns.values.buffer, ns.values.byteOffset, 2 * n);
  const dst = new Int32Array(out.buffer, out.byteOffset, 2 * n);
  const bLo = conv.baseLo;
  const bHi = conv.baseHi;
  let valid = bitmap;
  let nulls = nullCount;
  const clear = (i: number) => {
    if (valid === null || valid === bitmap) valid = bitmap === null ? new Uint8Array((n + 7) >>> 3).fill(0xff) : bitmap.slice();
    valid[i >>> 3]! &= ~(1 << (i & 7));
    nulls++;
  };
  if (bitmap === null && ns.bitmap === null) {
    // every cell present: the anchor added word by word
    for (let i = 0; i < n; i++) {
      const lo = (src[2 * i]! >>> 0) + bLo;
      const hi = src[2 * i + 1]! + bHi + (lo >= TWO_32 ? 1 : 0);
      if (hi > 0x7fffffff || hi < -0x80000000) {
        clear(i);
        dst[2 * i] = 0;
        dst[2 * i + 1] = 0;
      } else {
        dst[2 * i] = lo | 0;
        dst[2 * i + 1] = hi;
      }
    }
    return { values: out, bitmap: valid, nullCount: nulls };
  }
  for (let i = 0; i < n; i++) {
    if (bitmap !== null && ((bitmap[i >>> 3]! >>> (i & 7)) & 1) === 0) continue;
    if (ns.bitmap !== null && ((ns.bitmap[i >>> 3]! >>> (i & 7)) & 1) === 0) {
      // the nanoseconds overflowed: this cell from its ticks
      const u = conv.exact(ticks[i]!);
      if (u >= I64_MIN && u <= I64_MAX) out[i] = u;
      else clear(i);
      continue;
    }
    const lo = (src[2 * i]! >>> 0) + bLo;
    const hi = src[2 * i + 1]! + bHi + (lo >= TWO_32 ? 1 : 0);
    if (hi > 0x7fffffff || hi < -0x80000000) {
      clear(i);
      continue;
    }
    dst[2 * i] = lo | 0;
    dst[2 * i + 1] = hi;
  }
  return { values: out, bitmap: valid, nullCount: nulls };
}

export function nanosecondsColumn(
  ticks: BigInt64Array,
  n: number,
  bitmap: Uint8Array | null,
  nullCount: number,
  clock: Clock,
  kind: 'time' | 'duration',
  out?: BigInt64Array,
): NanosecondsColumn {
  return convertColumn(new TickConverter(clock, kind === 'time' ? 'ns' : kind), ticks, n, bitmap, nullCount, true, out);
}

/**
 * The values array of a converted column: `into`'s first n cells (a column reused from batch to batch;
 * zeroed first when some cells will not be written), or a new array.
 */
function valuesOf(n: number, into: BigInt64Array | undefined, gaps: boolean): BigInt64Array {
  if (into === undefined) return new BigInt64Array(n);
  const out = into.length === n ? into : into.subarray(0, n);
  if (gaps) new Int32Array(out.buffer, out.byteOffset, 2 * n).fill(0);
  return out;
}

/**
 * The converted values of ticks[0, n) (cells with a clear bit in `bitmap` skipped: 0). A value beyond int64
 * becomes null (`overflowNull`) or wraps as a BigInt64Array stores it.
 * Typed arrays are little-endian on every platform JavaScript runs on (WebAssembly memory is too).
 */
function convertColumn(
  conv: TickConverter,
  ticks: BigInt64Array,
  n: number,
  bitmap: Uint8Array | null,
  nullCount: number,
  overflowNull: boolean,
  into?: BigInt64Array,
): NanosecondsColumn {
  const out = valuesOf(n, into, bitmap !== null);
  let valid = bitmap;
  let nulls = nullCount;
  const misses = conv.convertWords(new Int32Array(ticks.buffer, ticks.byteOffset, 2 * n), new Int32Array(out.buffer, out.byteOffset, 2 * n), n, bitmap);
  for (const i of misses) {
    const ns = conv.exact(ticks[i]!);
    if (!overflowNull || (ns >= I64_MIN && ns <= I64_MAX)) out[i] = ns;
    else {
      out[i] = 0n;
      if (valid === bitmap) valid = bitmap === null ? new Uint8Array((n + 7) >>> 3).fill(0xff) : bitmap.slice();
      valid![i >>> 3]! &= ~(1 << (i & 7));
      nulls++;
    }
  }
  return { values: out, bitmap: valid, nullCount: nulls };
}

// ---- times as people write them (a selection's bounds, src/select; checked as the command line is read)

/**
 * A point in time: text — `1.5s`, `250ms`, `40us` (or `µs`), `1200ns`, a bare number of seconds, all since
 * the trace start; or an ISO 8601 wall-clock time with its zone (`2026-11-27T07:01:25.1234567Z`,
 * `…+01:00`) — a number of seconds, or raw timestamps (`{ ticks }`) or nanoseconds since the start (`{ ns }`).
 */
export type TimeSpec = string | number | { ticks: bigint } | { ns: bigint };

const UNITS: Record<string, bigint> = { s: 1_000_000_000n, ms: 1_000_000n, us: 1_000n, µs: 1_000n, ns: 1n };
const UNIT_DIGITS: Record<string, number> = { s: 9, ms: 6, us: 3, µs: 3, ns: 0 };
const ISO = /^(\d{4})-(\d{2})-(\d{2})[T ](\d{2}):(\d{2})(?::(\d{2})(?:[.,](\d{1,9}))?)?\s*(Z|[+-]\d{2}:?\d{2})$/i;

function badTime(what: string, text: string, why: string): EtlError {
  return new EtlError('BAD_OPTION', `${what} ${text}: ${why}`);
}

/** A time spec as nanoseconds since the start (`ns`) or a FILETIME (`fileTime`), or raw `ticks`. */
export function parseTimeSpec(spec: TimeSpec, what = 'time'): { ns: bigint } | { fileTime: bigint } | { ticks: bigint } {
  if (typeof spec === 'object') {
    if ('ticks' in spec && typeof spec.ticks === 'bigint') return { ticks: spec.ticks };
    if ('ns' in spec && typeof spec.ns === 'bigint') return { ns: spec.ns };
    throw badTime(what, JSON.stringify(spec, (_k, v: unknown) => (typeof v === 'bigint' ? `${v}n` : v)), 'expected { ticks: bigint } or { ns: bigint }');
  }
  if (typeof spec === 'number') {
    if (!Number.isFinite(spec)) throw badTime(what, String(spec), 'expected a finite number of seconds');
    return parseTimeSpec(String(spec), what);
  }
  const text = spec.trim();
  const m = /^(-?)(\d+)(?:\.(\d+))?\s*(s|ms|us|µs|ns)?$/i.exec(text);
  if (m) {
    const unit = (m[4] ?? 's').toLowerCase();
    const frac = m[3] ?? '';
    const digits = UNIT_DIGITS[unit]!;
    if (frac.length > digits && /[1-9]/.test(frac.slice(digits))) {
      throw badTime(what, text, 'finer than a nanosecond: give at most 9 decimals of seconds (6 of ms, 3 of µs, none of ns)');
    }
    const ns = BigInt(m[2]!) * UNITS[unit]! + BigInt((frac.slice(0, digits) || '0').padEnd(digits, '0') || '0');
    return { ns: m[1] === '-' ? -ns : ns };
  }
  const iso = ISO.exec(text);
  if (iso) {
    const [, y, mo, d, h, mi, sec, frac, zone] = iso;
    const ms = Date.UTC(Number(y), Number(mo) - 1, Number(d), Number(h), Number(mi), Number(sec ?? 0));
    const check = new Date(ms);
    if (Number.isNaN(ms) || check.getUTCMonth() !== Number(mo) - 1 || check.getUTCDate() !== Number(d) || Number(h) > 23 || Number(mi) > 59 || Number(sec ?? 0) > 59) {
      throw badTime(what, text, 'not a valid date and time');
    }
    const f = frac ?? '';
    if (f.length > 7 && /[1-9]/.test(f.slice(7))) throw badTime(what, text, 'finer than 100 ns (a FILETIME): give at most 7 decimals of seconds');
    let offsetMinutes = 0;
    if (zone!.toUpperCase() !== 'Z') {
      const z = /^([+-])(\d{2}):?(\d{2})$/.exec(zone!)!;
      offsetMinutes = (z[1] === '-' ? -1 : 1) * (Number(z[2]) * 60 + Number(z[3]));
    }
    const fileTime = BigInt(ms) * 10_000n + BigInt(f.slice(0, 7).padEnd(7, '0')) + FILETIME_UNIX_EPOCH - BigInt(offsetMinutes) * 600_000_000n;
    return { fileTime };
  }
  if (/^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}/.test(text)) throw badTime(what, text, 'an ISO time needs its zone: end it with Z (UTC) or an offset like +01:00');
  throw badTime(what, text, 'expected a time since the trace start (1.5s, 250ms, 40us, 1200ns, or seconds) or an ISO time with its zone (2026-11-27T07:01:25.5Z)');
}

/** Nanoseconds as seconds with 9 decimals, exactly. */
export function formatSeconds(ns: bigint): string {
  const neg = ns < 0n;
  const a = neg ? -ns : ns;
  return `${neg ? '-' : ''}${a / 1_000_000_000n}.${(a % 1_000_000_000n).toString().padStart(9, '0')}`;
}
