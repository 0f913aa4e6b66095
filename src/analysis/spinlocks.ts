// Spin lock contention (issue 9, "which spin lock is most contended"): the `spinlock` table aggregated by
// lock address and by caller address. Exact: sums are kept as (carries of 2^52, a double below 2^52 + 2^32)
// and become bigints, with the addresses, only for the rows reported. Memory grows with the number of
// distinct locks and callers only — typed columns per distinct address, no object each — so
// `SpinlockAnalyzer` works on the chunks of a streaming decode (borrowed ones included: it reads their typed
// columns and keeps nothing), and a report of the top N ranks with a bounded heap rather than sorting all.
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

/** A double that holds an integer exactly: carried into a count of CARRY units before it could pass 2^53. */
const CARRY = 2 ** 52;
/** |high-word difference| up to this keeps hi·2^32 + lo exact in a double */
const HI_EXACT = 2 ** 20;

/**
 * Accumulators by 64-bit address, columnar: an open-addressing table from the address's two 32-bit words
 * to an entry, and one typed array per sum — no object, BigInt or Map entry per distinct address (a trace
 * can have millions), no allocation per row. A sum is exact as `carries × 2^52 + lo` (lo < 2^52 + 2^32).
 * Holds of 2^52 cycles or more (corrupt data only) are summed as bigints in a side table.
 */
class AccTable {
  /** entries */
  size = 0;
  private keyHi = new Int32Array(1024);
  private keyLo = new Int32Array(1024);
  /** entry + 1 per bucket (0: empty) */
  private slot = new Int32Array(1024);
  private shift = 22;
  private lastHi = 0;
  private lastLo = 0;
  private last = -1;
  // per entry
  addrHi = new Uint32Array(0);
  addrLo = new Uint32Array(0);
  count = new Float64Array(0);
  contended = new Float64Array(0);
  spinLo = new Float64Array(0);
  spinCarry = new Float64Array(0);
  spinMax = new Float64Array(0);
  waitLo = new Float64Array(0);
  waitCarry = new Float64Array(0);
  waitMax = new Float64Array(0);
  holdLo = new Float64Array(0);
  holdCarry = new Float64Array(0);
  /** largest hold below 2^52, -1 when none */
  holdMaxSmall = new Float64Array(0);
  inconsistent = new Float64Array(0);
  /** entries with a hold of 2^52 or more: their sum of those and their largest */
  readonly bigHolds = new Map<number, { sum: bigint; max: bigint }>();

  /** The entry of address (hi, lo) (u32 words as int32), made when new. */
  get(hi: number, lo: number): number {
    if (hi === this.lastHi && lo === this.lastLo && this.last >= 0) return this.last;
    const mask = this.slot.length - 1;
    let h = Math.imul(Math.imul(hi, 0x9e3779b1) ^ lo, 0x85ebca6b) >>> this.shift;
    for (; ; h = (h + 1) & mask) {
      const e = this.slot[h]! - 1;
      if (e < 0) break;
      if (this.keyHi[h] === hi && this.keyLo[h] === lo) return this.remember(hi, lo, e);
    }
    const e = this.size++;
    if (e === this.count.length) this.grow();
    this.addrHi[e] = hi;
    this.addrLo[e] = lo;
    this.holdMaxSmall[e] = -1;
    this.keyHi[h] = hi;
    this.keyLo[h] = lo;
    this.slot[h] = e + 1;
    if (2 * this.size > this.slot.length) this.rehash();
    return this.remember(hi, lo, e);
  }

  private remember(hi: number, lo: number, e: number): number {
    this.lastHi = hi;
    this.lastLo = lo;
    this.last = e;
    return e;
  }

  private rehash(): void {
    const cap = 2 * this.slot.length;
    this.keyHi = new Int32Array(cap);
    this.keyLo = new Int32Array(cap);
    this.slot = new Int32Array(cap);
    this.shift--;
    const mask = cap - 1;
    for (let e = 0; e < this.size; e++) {
      const hi = this.addrHi[e]! | 0;
      const lo = this.addrLo[e]! | 0;
      let h = Math.imul(Math.imul(hi, 0x9e3779b1) ^ lo, 0x85ebca6b) >>> this.shift;
      while (this.slot[h] !== 0) h = (h + 1) & mask;
      this.keyHi[h] = hi;
      this.keyLo[h] = lo;
      this.slot[h] = e + 1;
    }
  }

  private grow(): void {
    const cap = Math.max(256, 2 * this.count.length);
    const u32 = (a: Uint32Array) => {
      const b = new Uint32Array(cap);
      b.set(a);
      return b;
    };
    const f64 = (a: Float64Array) => {
      const b = new Float64Array(cap);
      b.set(a);
      return b;
    };
    this.addrHi = u32(this.addrHi);
    this.addrLo = u32(this.addrLo);
    this.count = f64(this.count);
    this.contended = f64(this.contended);
    this.spinLo = f64(this.spinLo);
    this.spinCarry = f64(this.spinCarry);
    this.spinMax = f64(this.spinMax);
    this.waitLo = f64(this.waitLo);
    this.waitCarry = f64(this.waitCarry);
    this.waitMax = f64(this.waitMax);
    this.holdLo = f64(this.holdLo);
    this.holdCarry = f64(this.holdCarry);
    this.holdMaxSmall = f64(this.holdMaxSmall);
    this.inconsistent = f64(this.inconsistent);
  }

  /** Adds a row to entry e: spin count, wait cycles, hold (≥ 0: below 2^52; -1: inconsistent; -2: `big`). */
  addRow(e: number, spin: number, wait: number, hold: number, big: bigint): void {
    this.count[e]!++;
    if (spin > 0) this.contended[e]!++;
    if (this.spinLo[e]! >= CARRY) {
      this.spinLo[e]! -= CARRY;
      this.spinCarry[e]!++;
    }
    this.spinLo[e]! += spin;
    if (spin > this.spinMax[e]!) this.spinMax[e] = spin;
    if (this.waitLo[e]! >= CARRY) {
      this.waitLo[e]! -= CARRY;
      this.waitCarry[e]!++;
    }
    this.waitLo[e]! += wait;
    if (wait > this.waitMax[e]!) this.waitMax[e] = wait;
    if (hold >= 0) {
      if (this.holdLo[e]! >= CARRY) {
        this.holdLo[e]! -= CARRY;
        this.holdCarry[e]!++;
      }
      this.holdLo[e]! += hold; // both below 2^52: exact
      if (hold > this.holdMaxSmall[e]!) this.holdMaxSmall[e] = hold;
    } else if (hold === -1) this.inconsistent[e]!++;
    else {
      const b = this.bigHolds.get(e);
      if (b) {
        b.sum += big;
        if (big > b.max) b.max = big;
      } else this.bigHolds.set(e, { sum: big, max: big });
    }
  }

  /** Whether entry a ranks before entry b: more contended rows, then more wait cycles, then the lower address. */
  before(a: number, b: number): boolean {
    if (this.contended[a] !== this.contended[b]) return this.contended[a]! > this.contended[b]!;
    if (this.waitCarry[a] !== this.waitCarry[b]) return this.waitCarry[a]! > this.waitCarry[b]!;
    if (this.waitLo[a] !== this.waitLo[b]) return this.waitLo[a]! > this.waitLo[b]!;
    if (this.addrHi[a] !== this.addrHi[b]) return this.addrHi[a]! < this.addrHi[b]!;
    return this.addrLo[a]! < this.addrLo[b]!;
  }

  /** The first `top` entries in rank order (0: all), chosen with a bounded heap (no sort of every entry). */
  ranked(top: number): number[] {
    const n = this.size;
    // the wait sums in one form (lo below 2^52), so that (carry, lo) compares as the sum
    for (let e = 0; e < n; e++) {
      if (this.waitLo[e]! >= CARRY) {
        this.waitLo[e]! -= CARRY;
        this.waitCarry[e]!++;
      }
    }
    if (top <= 0 || top >= n) {
      const all = Array.from({ length: n }, (_, i) => i);
      return all.sort((a, b) => (this.before(a, b) ? -1 : this.before(b, a) ? 1 : 0));
    }
    // a heap of the `top` best so far, its root the worst of them
    const heap: number[] = [];
    const worse = (a: number, b: number) => this.before(b, a);
    for (let e = 0; e < n; e++) {
      if (heap.length < top) {
        heap.push(e);
        for (let i = heap.length - 1; i > 0; ) {
          const p = (i - 1) >> 1;
          if (!worse(heap[i]!, heap[p]!)) break;
          [heap[i], heap[p]] = [heap[p]!, heap[i]!];
          i = p;
        }
      } else if (this.before(e, heap[0]!)) {
        heap[0] = e;
        for (let i = 0; ; ) {
          const l = 2 * i + 1;
          if (l >= heap.length) break;
          const r = l + 1;
          const m = r < heap.length && worse(heap[r]!, heap[l]!) ? r : l;
          if (!worse(heap[m]!, heap[i]!)) break;
          [heap[i], heap[m]] = [heap[m]!, heap[i]!];
          i = m;
        }
      }
    }
    return heap.sort((a, b) => (this.before(a, b) ? -1 : this.before(b, a) ? 1 : 0));
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
 * of the chunk is kept), then `result`. Memory: one entry of typed columns per distinct lock and caller.
 */
export class SpinlockAnalyzer {
  private readonly locks = new AccTable();
  private readonly callers = new AccTable();
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
      this.locks.addRow(this.locks.get(lock[w + HI]! | 0, lock[w + LO]! | 0), s, wt, hold, big);
      this.callers.addRow(this.callers.get(caller[w + HI]! | 0, caller[w + LO]! | 0), s, wt, hold, big);
    }
    this.rows += n;
    this.contended += contended;
    this.inconsistent += inconsistent;
  }

  /**
   * The aggregates so far (the analyzer can go on accumulating afterwards). With `top`, byLock and byCaller
   * hold only the first `top` of their order (what a report shows; the totals count them all).
   */
  result(info: Pick<TraceInfo, 'cpuSpeedInMHz'> | null, options: SpinlockOptions & { top?: number } = {}): SpinlockAnalysis {
    const mhz = options.cpuSpeedInMHz !== undefined ? options.cpuSpeedInMHz : info && info.cpuSpeedInMHz > 0 ? info.cpuSpeedInMHz : null;
    if (mhz !== null && !(Number.isInteger(mhz) && mhz > 0)) throw new RangeError(`cpuSpeedInMHz must be a positive integer or null, got ${mhz}`);
    const top = options.top ?? 0;
    return {
      totals: { rows: this.rows, contended: this.contended, inconsistent: this.inconsistent, locks: this.locks.size, callers: this.callers.size },
      cpuSpeedInMHz: mhz,
      byLock: stats(this.locks, mhz, top),
      byCaller: stats(this.callers, mhz, top),
    };
  }
}

function stats(t: AccTable, mhz: number | null, top: number): SpinlockStats[] {
  const m = mhz === null ? 0n : BigInt(mhz);
  const ns = (cycles: bigint | null): bigint | null => (mhz === null || cycles === null ? null : (cycles * 1000n) / m);
  const sum = (carry: number, lo: number) => BigInt(carry) * BigInt(CARRY) + BigInt(lo);
  return t.ranked(top).map((e): SpinlockStats => {
    const big = t.bigHolds.get(e);
    const waitSum = sum(t.waitCarry[e]!, t.waitLo[e]!);
    const holdSum = sum(t.holdCarry[e]!, t.holdLo[e]!) + (big?.sum ?? 0n);
    const holdMax = big?.max ?? (t.holdMaxSmall[e]! >= 0 ? BigInt(t.holdMaxSmall[e]!) : null);
    return {
      address: (BigInt(t.addrHi[e]!) << 32n) | BigInt(t.addrLo[e]!),
      count: t.count[e]!,
      contended: t.contended[e]!,
      spinCountSum: sum(t.spinCarry[e]!, t.spinLo[e]!),
      spinCountMax: t.spinMax[e]!,
      waitTimeInCyclesSum: waitSum,
      waitTimeInCyclesMax: t.waitMax[e]!,
      holdCyclesSum: holdSum,
      holdCyclesMax: holdMax,
      inconsistent: t.inconsistent[e]!,
      waitNsSum: ns(waitSum),
      waitNsMax: ns(BigInt(t.waitMax[e]!)),
      holdNsSum: ns(holdSum),
      holdNsMax: ns(holdMax),
    };
  });
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
