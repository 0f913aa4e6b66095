// Spin lock contention (issue 9, "which spin lock is most contended"): the `spinlock` table aggregated by
// lock address and by caller address. Exact: addresses and 64-bit sums are bigints; cycle sums are kept in
// a double while it is exact (below 2^52 + 2^32) and carried into a bigint before it could lose a bit.
// Memory grows with the number of distinct locks and callers only, so `SpinlockAnalyzer` works on the
// chunks of a streaming decode (borrowed ones included: it reads their typed columns and keeps nothing).
import type { TraceInfo } from '../result/logfile.js';
import type { Table } from '../tables/table.js';

/** Contention of one lock (byLock) or one caller (byCaller). Cycles are rdtsc cycles as the events log them. */
export interface SpinlockStats {
  /** SpinLockAddress (byLock) or CallerAddress (byCaller), exact */
  address: bigint;
  /** rows (released spin locks) */
  count: number;
  /** rows with spinCount > 0 */
  contended: number;
  spinCountSum: bigint;
  spinCountMax: number;
  waitTimeInCyclesSum: bigint;
  waitTimeInCyclesMax: number;
  /** releaseTime − acquireTime summed over the rows with releaseTime ≥ acquireTime */
  holdCyclesSum: bigint;
  /** null when every row is inconsistent */
  holdCyclesMax: bigint | null;
  /** rows with releaseTime < acquireTime: left out of the hold sums (never wrapped) */
  inconsistent: number;
  /** cycles × 1000 / CpuSpeedInMHz (integer division); null when the speed is unknown */
  waitNsSum: bigint | null;
  waitNsMax: bigint | null;
  holdNsSum: bigint | null;
  holdNsMax: bigint | null;
}

export interface SpinlockTotals {
  rows: number;
  contended: number;
  /** rows with releaseTime < acquireTime */
  inconsistent: number;
  /** distinct lock addresses */
  locks: number;
  /** distinct caller addresses */
  callers: number;
}

export interface SpinlockAnalysis {
  totals: SpinlockTotals;
  /** the CPU speed used for the ns columns (the trace's CpuSpeedInMHz unless overridden); null: no ns */
  cpuSpeedInMHz: number | null;
  /** sorted by contended desc, then waitTimeInCyclesSum desc, then address asc */
  byLock: SpinlockStats[];
  byCaller: SpinlockStats[];
}

export interface SpinlockOptions {
  /**
   * CPU speed for the cycles → ns conversion, overriding the trace's CpuSpeedInMHz (the logfile header's
   * nominal speed; the time stamp counter runs at about that rate on current processors). null: no ns.
   */
  cpuSpeedInMHz?: number | null;
}

/** A double that holds an integer exactly: carried into `big` before it could pass 2^53. */
const CARRY = 2 ** 52;
/** |high-word difference| up to this keeps hi·2^32 + lo exact in a double */
const HI_EXACT = 2 ** 20;

class Acc {
  count = 0;
  contended = 0;
  spinLo = 0;
  spinHi = 0n;
  spinMax = 0;
  waitLo = 0;
  waitHi = 0n;
  waitMax = 0;
  holdLo = 0;
  holdHi = 0n;
  /** largest hold below 2^52, -1 when none */
  holdMaxSmall = -1;
  /** largest hold of 2^52 or more (always above holdMaxSmall), null when none */
  holdMaxBig: bigint | null = null;
  inconsistent = 0;
  constructor(readonly address: bigint) {}
}

/** Accumulators by 64-bit address, keyed by its high and low 32-bit words (no bigint per lookup). */
class AccMap {
  private readonly byHi = new Map<number, Map<number, Acc>>();
  private lastHi = -1;
  private lastLo = -1;
  private last: Acc | null = null;
  size = 0;

  get(hi: number, lo: number): Acc {
    if (hi === this.lastHi && lo === this.lastLo && this.last) return this.last;
    let inner = this.byHi.get(hi);
    if (!inner) this.byHi.set(hi, (inner = new Map()));
    let acc = inner.get(lo);
    if (!acc) {
      inner.set(lo, (acc = new Acc((BigInt(hi) << 32n) | BigInt(lo))));
      this.size++;
    }
    this.lastHi = hi;
    this.lastLo = lo;
    this.last = acc;
    return acc;
  }

  values(): Acc[] {
    const out: Acc[] = [];
    for (const inner of this.byHi.values()) for (const a of inner.values()) out.push(a);
    return out;
  }
}

const LITTLE_ENDIAN = new Uint8Array(new Uint32Array([1]).buffer)[0] === 1;
/** index of the low / high 32-bit word of u64 number i in a Uint32Array over the same bytes */
const LO = LITTLE_ENDIAN ? 0 : 1;
const HI = LITTLE_ENDIAN ? 1 : 0;

function words(col: BigUint64Array): Uint32Array {
  return new Uint32Array(col.buffer, col.byteOffset, col.length * 2);
}

/**
 * Streaming spin lock aggregation: `add` each chunk of the `spinlock` table (copied or borrowed: nothing
 * of the chunk is kept), then `result`. Memory: one accumulator per distinct lock and per distinct caller.
 */
export class SpinlockAnalyzer {
  private readonly locks = new AccMap();
  private readonly callers = new AccMap();
  private rows = 0;
  private contended = 0;
  private inconsistent = 0;

  add(table: Table<'spinlock'>): void {
    const n = table.length;
    if (n === 0) return;
    const lockCol = table.column('spinLockAddress') as BigUint64Array;
    const callerCol = table.column('callerAddress') as BigUint64Array;
    const acqCol = table.column('acquireTime') as BigUint64Array;
    const relCol = table.column('releaseTime') as BigUint64Array;
    const lock = words(lockCol);
    const caller = words(callerCol);
    const acq = words(acqCol);
    const rel = words(relCol);
    const wait = table.column('waitTimeInCycles') as Uint32Array;
    const spin = table.column('spinCount') as Uint32Array;
    let contended = 0;
    let inconsistent = 0;
    for (let i = 0; i < n; i++) {
      const w = 2 * i;
      const s = spin[i]!;
      const wt = wait[i]!;
      // hold = releaseTime − acquireTime: exact in a double unless the high words are far apart
      const dHi = rel[w + HI]! - acq[w + HI]!;
      let hold = 0; // ≥ 0: a hold below 2^52; -1: inconsistent; -2: a big hold (bigint)
      let big = 0n;
      if (dHi >= -HI_EXACT && dHi <= HI_EXACT) {
        const d = dHi * 4294967296 + (rel[w + LO]! - acq[w + LO]!);
        if (d < 0) hold = -1;
        else if (d < CARRY) hold = d;
        else {
          hold = -2;
          big = BigInt(d);
        }
      } else if (dHi < 0) hold = -1;
      else {
        hold = -2;
        big = relCol[i]! - acqCol[i]!;
      }
      if (s > 0) contended++;
      if (hold === -1) inconsistent++;
      addRow(this.locks.get(lock[w + HI]!, lock[w + LO]!), s, wt, hold, big);
      addRow(this.callers.get(caller[w + HI]!, caller[w + LO]!), s, wt, hold, big);
    }
    this.rows += n;
    this.contended += contended;
    this.inconsistent += inconsistent;
  }

  /** The aggregates so far (the analyzer can go on accumulating afterwards). */
  result(info: Pick<TraceInfo, 'cpuSpeedInMHz'> | null, options: SpinlockOptions = {}): SpinlockAnalysis {
    const mhz = options.cpuSpeedInMHz !== undefined ? options.cpuSpeedInMHz : info && info.cpuSpeedInMHz > 0 ? info.cpuSpeedInMHz : null;
    if (mhz !== null && !(Number.isInteger(mhz) && mhz > 0)) throw new RangeError(`cpuSpeedInMHz must be a positive integer or null, got ${mhz}`);
    return {
      totals: { rows: this.rows, contended: this.contended, inconsistent: this.inconsistent, locks: this.locks.size, callers: this.callers.size },
      cpuSpeedInMHz: mhz,
      byLock: stats(this.locks, mhz),
      byCaller: stats(this.callers, mhz),
    };
  }
}

function addRow(a: Acc, spin: number, wait: number, hold: number, big: bigint): void {
  a.count++;
  if (spin > 0) a.contended++;
  if (a.spinLo >= CARRY) {
    a.spinHi += BigInt(a.spinLo);
    a.spinLo = 0;
  }
  a.spinLo += spin;
  if (spin > a.spinMax) a.spinMax = spin;
  if (a.waitLo >= CARRY) {
    a.waitHi += BigInt(a.waitLo);
    a.waitLo = 0;
  }
  a.waitLo += wait;
  if (wait > a.waitMax) a.waitMax = wait;
  if (hold >= 0) {
    if (a.holdLo >= CARRY) {
      a.holdHi += BigInt(a.holdLo);
      a.holdLo = 0;
    }
    a.holdLo += hold; // both below 2^52: exact
    if (hold > a.holdMaxSmall) a.holdMaxSmall = hold;
  } else if (hold === -1) a.inconsistent++;
  else {
    a.holdHi += big;
    if (a.holdMaxBig === null || big > a.holdMaxBig) a.holdMaxBig = big;
  }
}

function stats(map: AccMap, mhz: number | null): SpinlockStats[] {
  const m = mhz === null ? 0n : BigInt(mhz);
  const ns = (cycles: bigint | null): bigint | null => (mhz === null || cycles === null ? null : (cycles * 1000n) / m);
  const out = map.values().map((a): SpinlockStats => {
    const waitSum = a.waitHi + BigInt(a.waitLo);
    const holdSum = a.holdHi + BigInt(a.holdLo);
    const holdMax = a.holdMaxBig ?? (a.holdMaxSmall >= 0 ? BigInt(a.holdMaxSmall) : null);
    return {
      address: a.address,
      count: a.count,
      contended: a.contended,
      spinCountSum: a.spinHi + BigInt(a.spinLo),
      spinCountMax: a.spinMax,
      waitTimeInCyclesSum: waitSum,
      waitTimeInCyclesMax: a.waitMax,
      holdCyclesSum: holdSum,
      holdCyclesMax: holdMax,
      inconsistent: a.inconsistent,
      waitNsSum: ns(waitSum),
      waitNsMax: ns(BigInt(a.waitMax)),
      holdNsSum: ns(holdSum),
      holdNsMax: ns(holdMax),
    };
  });
  return out.sort(compareStats);
}

/** contended desc, then waitTimeInCyclesSum desc, then address asc */
export function compareStats(a: SpinlockStats, b: SpinlockStats): number {
  if (a.contended !== b.contended) return b.contended - a.contended;
  if (a.waitTimeInCyclesSum !== b.waitTimeInCyclesSum) return a.waitTimeInCyclesSum > b.waitTimeInCyclesSum ? -1 : 1;
  return a.address < b.address ? -1 : a.address > b.address ? 1 : 0;
}

/**
 * Spin lock contention of a whole decode (`decodeSync`, `decode`, `decodeFile`): by lock address and by
 * caller address. The same as feeding every chunk of a streaming decode to a SpinlockAnalyzer.
 */
export function analyzeSpinlocks(
  result: { spinlock: Table<'spinlock'>; info: Pick<TraceInfo, 'cpuSpeedInMHz'> | null },
  options: SpinlockOptions = {},
): SpinlockAnalysis {
  const a = new SpinlockAnalyzer();
  a.add(result.spinlock);
  return a.result(result.info, options);
}
