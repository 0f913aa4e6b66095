// "Which process used the CPU, who waited, who woke whom": totals per process and per thread from the
// cpuUsage table (WPA's CPU Usage (Precise) summed by process / thread), with image and thread names
// from the threads and processes tables; the percentiles of ready and wait times per thread, process and
// trace, and the N longest ready delays (distributions.ts: a log-bucketed histogram per thread, a bounded
// heap). Works on a whole result or chunk by chunk while streaming: memory grows with the number of threads
// (and the histogram buckets they use), never with the number of switches.
import * as L from '../generated/layout.js';
import * as R from '../derive/cpu-usage.js';
import { CpuUsageDeriver, type CoreFold, type CoreFoldRequest, type CoreFoldSink, type CpuUsageOptions, type CpuUsageStats } from '../derive/cpu-usage.js';
import { EtlError } from '../errors.js';
import { floorDiv } from '../time.js';
import { dataLossText } from '../result/diagnostics.js';
import type { Selection, SelectionSummary } from '../select/selection.js';
import { KEY_MAPPING, LogHistograms, LongestReady, type DistributionTicks } from './distributions.js';
import { columnsOf, concatChunks, int32Words, type ColumnChunk, type NumericColumn, type TypedColumn } from '../tables/schema.js';
import type { StreamResult } from '../result/summary.js';
import { Table, type DecodedTables } from '../tables/table.js';

export interface CpuTotals {
  /** switch-ins (rows of cpuUsage) */
  switchIns: number;
  /** sum of cpuUsage (ticks; rows whose next switch is unknown count 0) */
  cpuTicks: bigint;
  /** sum of ready (ticks) over rows that have a readyTime */
  readyTicks: bigint;
  /** sum of waits (ticks) over rows that have one */
  waitTicks: bigint;
  /** the same in milliseconds, when the trace's clock converts (else null) */
  cpuMs: number | null;
  readyMs: number | null;
  waitMs: number | null;
  /** percentiles of ready (switchInTime − readyTime) over the rows that have a readyTime (null: not asked for, CpuAnalyzerOptions.percentiles) */
  readyPercentiles: Percentiles | null;
  /** percentiles of waits (readyTime − lastSwitchOutTime) over the rows that have one (null: not asked for) */
  waitPercentiles: Percentiles | null;
}

/**
 * Nearest-rank percentiles (the value of rank ⌈p·n/100⌉ among the n in order) and the maximum of one
 * duration. The percentiles come from a log-bucketed histogram: within 1 % of the exact value + ½ tick
 * (exact below 50 ticks), bounded memory for any number of rows (analysis/distributions.ts); the maximum
 * is exact. Ticks, and milliseconds when the clock converts; null without values.
 */
export interface Percentiles {
  /** values summarized */
  count: number;
  p50Ticks: bigint | null;
  p90Ticks: bigint | null;
  p99Ticks: bigint | null;
  maxTicks: bigint | null;
  p50Ms: number | null;
  p90Ms: number | null;
  p99Ms: number | null;
  maxMs: number | null;
}

/** One ready delay of the `worst` list: who waited for a CPU, where and how long, and who readied it. */
export interface ReadyDelay {
  threadId: number;
  processId: number | null;
  imageFileName: string | null;
  /** thread name, null if none */
  name: string | null;
  /** the processor it was switched in on */
  cpu: number;
  switchInTime: bigint;
  /** switchInTime in nanoseconds since the trace start (null: the clock does not convert) */
  switchInNs: bigint | null;
  readyTime: bigint;
  /** the thread running on the ready event's cpu at its time, its process and image (null if unknown) */
  readyingThreadId: number | null;
  readyingProcessId: number | null;
  readyingImageFileName: string | null;
  /** switchInTime − readyTime */
  readyTicks: bigint;
  readyMs: number | null;
}

export interface CpuAnalyzerOptions {
  /** keep the N longest ready delays (`CpuAnalysis.worst`); default 0: none */
  worst?: number;
  /**
   * only these threads, processes and times (src/select, docs/selection.md): CPU, ready and wait times are
   * their parts inside the range; switch-ins, percentiles and the longest ready delays are those of the
   * switch-ins inside it, with their whole durations
   */
  selection?: Selection;
  /**
   * the ready and wait percentiles (default true); false leaves them null and saves their cost — a third
   * of `cpu`'s time on a trace with many threads (a histogram counter per thread and duration bucket)
   */
  percentiles?: boolean;
}

export interface ProcessCpu extends CpuTotals {
  processId: number | null;
  /** ImageFileName of the process lifetime (the latest with that id), null if unknown */
  imageFileName: string | null;
  threads: number;
}

export interface ThreadCpu extends CpuTotals {
  threadId: number;
  processId: number | null;
  imageFileName: string | null;
  /** thread name, null if none */
  name: string | null;
}

export interface CpuAnalysis {
  /** ticks per second of the times (null: the clock does not convert) */
  ticksPerSecond: bigint | null;
  total: CpuTotals;
  /** by CPU time, descending */
  processes: ProcessCpu[];
  threads: ThreadCpu[];
  /** the `worst` longest ready delays of the trace, longest first (ties: earlier switch-in first) */
  worst: ReadyDelay[];
  /** what the analysis was restricted to (null: the whole trace) */
  selection: SelectionSummary | null;
  /** figures that cannot be right, each with the cause the trace shows (empty when all are plausible) */
  warnings: CpuWarning[];
}

/** A figure that cannot be right: what, for whom, and the causes the decode can see. */
export interface CpuWarning {
  /** ready / cpu / wait: a thread's time longer than the span; processCpu: more CPU than the span × CPUs */
  kind: 'ready' | 'cpu' | 'wait' | 'processCpu';
  threadId: number | null;
  processId: number | null;
  /** the figure and the span it cannot exceed, in ticks */
  ticks: bigint;
  spanTicks: bigint;
  /** one line: the figure, why it cannot be, and what the trace shows that explains it */
  message: string;
}

/** What a decode tells about the causes of implausible figures (CpuAnalyzer.result). */
export interface CpuResultContext {
  /** the trace's data loss as `summary` says it (dataLossText), or null */
  dataLoss?: string | null;
  /** the cpuUsage derivation's statistics (events out of time order, rows without a process) */
  stats?: CpuUsageStats;
}

interface Acc {
  switchIns: number;
  cpu: bigint;
  ready: bigint;
  wait: bigint;
}

/** a partial sum moves on into the BigInt spill past this (each value added is below it: the sum stays below 2^53, exact) */
const LIMIT = 2 ** 52;
/** values whose high word is within ±2^19 (|value| < 2^51 + 2^32) are added as one double */
const HI_FAST = 0x80000;
/** x ^ MIN32 orders the int32 bits of u32 values as the u32 values */
const MIN32 = -0x80000000;

/** The low word of the 64-bit (aHi, aLo) − (bHi, bLo), words as int32. */
function subLo(aLo: number, bLo: number): number {
  return (aLo - bLo) | 0;
}

/** Its high word (with the borrow of the low words). */
function subHi(aHi: number, aLo: number, bHi: number, bLo: number): number {
  return (aHi - bHi - ((aLo ^ MIN32) < (bLo ^ MIN32) ? 1 : 0)) | 0;
}

/** The LongestReady `known` bits of a row's valid mask: its process, readying thread and process. */
function knownBits(v: number): number {
  return ((v >>> L.CU_NEW_PROCESS_ID) & 1) | (((v >>> L.CU_READYING_THREAD_ID) & 1) << 1) | (((v >>> L.CU_READYING_PROCESS_ID) & 1) << 2);
}

/**
 * Per slot, ACC doubles: one 64-byte cache line with its switch-ins, the exact parts of its CPU, ready and
 * wait sums, and its key (tid, pid, known: compared there by the hash lookup, so a row touches one line).
 */
const ACC = 8;
const A_CPU = 1;
const A_READY = 2;
const A_WAIT = 3;
const A_TID = 4;
const A_PID = 5;
const A_KNOWN = 6;

/**
 * Exact 64-bit sums without a BigInt per row, at index i = slot * ACC + which: a sum is spill + part, part
 * a double kept exact (below 2^52 between adds; a value below 2^52 is added as one double, the sum below
 * 2^53) that moves into the BigInt spill when it reaches 2^52; a value beyond that range (a corrupt time)
 * goes to the spill at once. acc[slot * ACC] is the slot's switch-in count.
 */
class Sums {
  acc = new Float64Array(0);
  private readonly spill: bigint[] = [];
  /** room for `slots` slots */
  grow(slots: number): void {
    const acc = new Float64Array(slots * ACC);
    acc.set(this.acc);
    this.acc = acc;
  }
  /** Adds the 64-bit value of words (lo, hi), both as int32 (lo's bits are the unsigned low word), at i. */
  add(i: number, lo: number, hi: number): void {
    if (hi < HI_FAST && hi > -HI_FAST) this.addExact(i, hi * 4294967296 + (lo >>> 0));
    else this.spill[i] = (this.spill[i] ?? 0n) + BigInt(hi) * 4294967296n + BigInt(lo >>> 0);
  }
  /** Adds the 128-bit value of low 64 bits lo[at], lo[at + 1] and high ones hi[hat], hi[hat + 1] (int32 words, lowest first) at i. */
  add128(i: number, lo: Int32Array, at: number, hi: Int32Array, hat: number): void {
    const w1 = lo[at + 1]!;
    const sign = w1 >> 31;
    if (hi[hat] === sign && hi[hat + 1] === sign) this.add(i, lo[at]!, w1);
    else {
      const u = (x: number) => BigInt(x >>> 0);
      const v = (BigInt(hi[hat + 1]!) << 96n) | (u(hi[hat]!) << 64n) | (u(w1) << 32n) | u(lo[at]!);
      this.spill[i] = (this.spill[i] ?? 0n) + v;
    }
  }
  /** Adds (aHi, aLo) − (bHi, bLo) (words as int32) at i. */
  addDiff(i: number, aHi: number, aLo: number, bHi: number, bLo: number): void {
    const dHi = aHi - bHi;
    if (dHi < HI_FAST && dHi > -HI_FAST) this.addExact(i, dHi * 4294967296 + ((aLo >>> 0) - (bLo >>> 0)));
    else this.add(i, subLo(aLo, bLo), subHi(aHi, aLo, bHi, bLo));
  }
  /** Adds v (an integer, |v| < 2^52) at i. */
  private addExact(i: number, v: number): void {
    const x = this.acc[i]! + v;
    if (x < LIMIT && x > -LIMIT) this.acc[i] = x;
    else {
      this.spill[i] = (this.spill[i] ?? 0n) + BigInt(x);
      this.acc[i] = 0;
    }
  }
  get(i: number): bigint {
    return (this.spill[i] ?? 0n) + BigInt(this.acc[i]!);
  }
  /** Adds the sum at j of `from` (its part and spill) at i, exactly. */
  addSum(i: number, from: Sums, j: number): void {
    const s = from.spill[j];
    if (s !== undefined) this.spill[i] = (this.spill[i] ?? 0n) + s;
    this.addExact(i, from.acc[j]!);
  }
  /** Whether the sum at i has a part in the spill (else it is acc[i], an integer below 2^52). */
  spilled(i: number): boolean {
    return this.spill[i] !== undefined;
  }
  /** A copy of the first `slots` slots. */
  copy(slots: number): Sums {
    const c = new Sums();
    c.acc = this.acc.slice(0, slots * ACC);
    this.spill.forEach((v, i) => {
      if (i < slots * ACC) c.spill[i] = v;
    });
    return c;
  }
}

/**
 * Sums cpuUsage rows by (thread, process); feed it chunks, or make it a CpuUsageDeriver's sink (`new
 * CpuUsageDeriver(analyzer)`: the rows as they are staged, no columns — or, without a selection or
 * `worst`, folded inside the WebAssembly core, addCoreFold), then ask for the analysis.
 */
export class CpuAnalyzer implements CoreFoldSink {
  // one slot per (newThreadId, newProcessId or null), in the order first seen; found by open addressing
  private n = 0;
  /** the ids as int32 (their bits) */
  private tid = new Int32Array(0);
  private pid = new Int32Array(0);
  /** 1: the process is known */
  private hasPid = new Uint8Array(0);
  /** switch-ins and sums per slot (Sums: index slot * ACC + A_…) */
  private readonly sums = new Sums();
  /** ready and wait durations per slot */
  private readonly readyDist: LogHistograms;
  private readonly waitDist: LogHistograms;
  private readonly longest: LongestReady;
  /** staged rows: the slot + 1 (0: none) of each deriver thread slot (R_NEW_SLOT), the last one it had */
  private byThreadSlot: Int32Array = new Int32Array(0);
  /** slot + 1 per hash bucket (0: empty) */
  private buckets = new Int32Array(256);
  private shift = 24;
  private readonly sel: Selection | null;
  /** per slot: 1 when the selection's thread and process filters keep it */
  private picked = new Uint8Array(0);
  /** the span of the rows (first switch-in, last switch-out or switch-in), as words; the highest cpu + 1 */
  private firstHi = 0x7fffffff;
  private firstLo = -1;
  private lastHi = -0x80000000;
  private lastLo = 0;
  private cpus = 0;

  constructor(options: CpuAnalyzerOptions = {}) {
    const worst = options.worst ?? 0;
    if (!Number.isSafeInteger(worst) || worst < 0) throw new EtlError('BAD_OPTION', `worst must be a whole number of rows (0 = none), not ${worst}`);
    this.longest = new LongestReady(worst);
    this.sel = options.selection?.active ? options.selection : null;
    const percentiles = options.percentiles ?? true;
    this.readyDist = new LogHistograms(percentiles);
    this.waitDist = new LogHistograms(percentiles);
  }

  /**
   * Widens the span to a row's times (words): its switch-in, and its next switch-out, ready time and last
   * switch-out where its valid mask `v` has them; on `cpu`. Every interval summed lies inside the span, so a
   * thread's sum above it means overlapping intervals (warnings()).
   */
  private span(v: number, inHi: number, inLo: number, outHi: number, outLo: number, rHi: number, rLo: number, lHi: number, lLo: number, cpu: number): void {
    this.widen(inHi, inLo);
    if ((v >>> L.CU_CPU_USAGE) & 1) this.widen(outHi, outLo);
    if ((v >>> L.CU_READY) & 1) this.widen(rHi, rLo);
    if ((v >>> L.CU_WAITS) & 1) this.widen(lHi, lLo);
    if (cpu >= this.cpus) this.cpus = cpu + 1;
  }

  private widen(hi: number, lo: number): void {
    if (hi < this.firstHi || (hi === this.firstHi && (lo ^ MIN32) < (this.firstLo ^ MIN32))) {
      this.firstHi = hi;
      this.firstLo = lo;
    }
    if (hi > this.lastHi || (hi === this.lastHi && (lo ^ MIN32) > (this.lastLo ^ MIN32))) {
      this.lastHi = hi;
      this.lastLo = lo;
    }
  }

  add(rows: Table<'cpuUsage'>): void {
    if (this.sel !== null) {
      this.addSelected(rows, this.sel);
      return;
    }
    const tid = rows.column('newThreadId');
    const pid = rows.column('newProcessId');
    const usage = int32Words(rows.column('cpuUsage'));
    const ready = int32Words(rows.column('ready'));
    const waits = int32Words(rows.column('waits'));
    const valid = rows.column('valid');
    const cpu = rows.column('cpu');
    const switchIn = int32Words(rows.column('switchInTime'));
    const next = int32Words(rows.column('nextSwitchOutTime'));
    const readyT = int32Words(rows.column('readyTime'));
    const last = int32Words(rows.column('lastSwitchOutTime'));
    const readyingTid = rows.column('readyingThreadId');
    const readyingPid = rows.column('readyingProcessId');
    for (let i = 0; i < rows.length; i++) {
      const v = valid[i]!;
      const known = (v >>> L.CU_NEW_PROCESS_ID) & 1;
      const s = this.slot(tid[i]! | 0, known === 1 ? pid[i]! | 0 : 0, known);
      this.span(v, switchIn[2 * i + 1]!, switchIn[2 * i]!, next[2 * i + 1]!, next[2 * i]!, readyT[2 * i + 1]!, readyT[2 * i]!, last[2 * i + 1]!, last[2 * i]!, cpu[i]!);
      this.sums.acc[s * ACC]!++;
      if ((v >>> L.CU_CPU_USAGE) & 1) this.sums.add(s * ACC + A_CPU, usage[2 * i]!, usage[2 * i + 1]!);
      if ((v >>> L.CU_READY) & 1) {
        const lo = ready[2 * i]!;
        const hi = ready[2 * i + 1]!;
        this.sums.add(s * ACC + A_READY, lo, hi);
        this.readyDist.add(s, lo, hi);
        this.longest.offer(lo, hi, switchIn[2 * i]!, switchIn[2 * i + 1]!, cpu[i]!, tid[i]! | 0, pid[i]! | 0, readyingTid[i]! | 0, readyingPid[i]! | 0, knownBits(v));
      }
      if ((v >>> L.CU_WAITS) & 1) {
        this.sums.add(s * ACC + A_WAIT, waits[2 * i]!, waits[2 * i + 1]!);
        this.waitDist.add(s, waits[2 * i]!, waits[2 * i + 1]!);
      }
    }
  }

  /** Rows of a cpuUsage table, through the selection (their times as words). */
  private addSelected(rows: Table<'cpuUsage'>, sel: Selection): void {
    const tid = rows.column('newThreadId');
    const pid = rows.column('newProcessId');
    const valid = rows.column('valid');
    const cpu = rows.column('cpu');
    const inT = int32Words(rows.column('switchInTime'));
    const next = int32Words(rows.column('nextSwitchOutTime'));
    const readyT = int32Words(rows.column('readyTime'));
    const last = int32Words(rows.column('lastSwitchOutTime'));
    const readyingTid = rows.column('readyingThreadId');
    const readyingPid = rows.column('readyingProcessId');
    for (let i = 0; i < rows.length; i++) {
      const v = valid[i]!;
      const known = (v >>> L.CU_NEW_PROCESS_ID) & 1;
      const s = this.slot(tid[i]! | 0, known === 1 ? pid[i]! | 0 : 0, known);
      this.span(v, inT[2 * i + 1]!, inT[2 * i]!, next[2 * i + 1]!, next[2 * i]!, readyT[2 * i + 1]!, readyT[2 * i]!, last[2 * i + 1]!, last[2 * i]!, cpu[i]!);
      if (this.picked[s] === 0) continue;
      this.selectedRow(sel, s, v, inT[2 * i + 1]!, inT[2 * i]!, next[2 * i + 1]!, next[2 * i]!, readyT[2 * i + 1]!, readyT[2 * i]!, last[2 * i + 1]!, last[2 * i]!);
      if ((v >>> L.CU_READY) & 1 && sel.timeIn(inT[2 * i + 1]!, inT[2 * i]!)) {
        const lo = subLo(inT[2 * i]!, readyT[2 * i]!);
        const hi = subHi(inT[2 * i + 1]!, inT[2 * i]!, readyT[2 * i + 1]!, readyT[2 * i]!);
        this.longest.offer(lo, hi, inT[2 * i]!, inT[2 * i + 1]!, cpu[i]!, tid[i]! | 0, pid[i]! | 0, readyingTid[i]! | 0, readyingPid[i]! | 0, knownBits(v));
      }
    }
  }

  /**
   * One row of a kept slot through the selection: the switch-in, its percentiles, when it is in the range;
   * the parts of the running, ready and waiting intervals inside the range (times as words).
   */
  private selectedRow(sel: Selection, s: number, v: number, inHi: number, inLo: number, nextHi: number, nextLo: number, rHi: number, rLo: number, lHi: number, lLo: number): void {
    const inRange = sel.timeIn(inHi, inLo);
    if (inRange) this.sums.acc[s * ACC]!++;
    if ((v >>> L.CU_CPU_USAGE) & 1 && sel.clip(inHi, inLo, nextHi, nextLo)) this.sums.add(s * ACC + A_CPU, sel.lo, sel.hi);
    if (((v >>> L.CU_READY) & 1) === 0) return;
    if (sel.clip(rHi, rLo, inHi, inLo)) this.sums.add(s * ACC + A_READY, sel.lo, sel.hi);
    if (inRange) this.readyDist.add(s, subLo(inLo, rLo), subHi(inHi, inLo, rHi, rLo));
    if (((v >>> L.CU_WAITS) & 1) === 0) return;
    if (sel.clip(lHi, lLo, rHi, rLo)) this.sums.add(s * ACC + A_WAIT, sel.lo, sel.hi);
    if (inRange) this.waitDist.add(s, subLo(rLo, lLo), subHi(rHi, rLo, lHi, lLo));
  }

  /** Rows staged by a CpuUsageDeriver (StagedRowSink): the same sums, the durations from the times. */
  addStaged(S: Int32Array, n: number): void {
    const sel = this.sel;
    if (sel !== null) {
      for (let b = 0; b < n * R.RWS; b += R.RWS) {
        const v = S[b + R.R_VALID]!;
        const known = (v >>> L.CU_NEW_PROCESS_ID) & 1;
        const s = this.stagedSlot(S, b, known);
        const inHi = S[b + R.R_IN_HI]!;
        const inLo = S[b + R.R_IN_LO]!;
        this.span(v, inHi, inLo, S[b + R.R_NEXT_HI]!, S[b + R.R_NEXT_LO]!, S[b + R.R_READY_HI]!, S[b + R.R_READY_LO]!, S[b + R.R_LAST_HI]!, S[b + R.R_LAST_LO]!, S[b + R.R_CPU]!);
        if (this.picked[s] === 0) continue;
        const rHi = S[b + R.R_READY_HI]!;
        const rLo = S[b + R.R_READY_LO]!;
        this.selectedRow(sel, s, v, inHi, inLo, S[b + R.R_NEXT_HI]!, S[b + R.R_NEXT_LO]!, rHi, rLo, S[b + R.R_LAST_HI]!, S[b + R.R_LAST_LO]!);
        if ((v >>> L.CU_READY) & 1 && sel.timeIn(inHi, inLo)) {
          this.longest.offer(subLo(inLo, rLo), subHi(inHi, inLo, rHi, rLo), inLo, inHi, S[b + R.R_CPU]!, S[b + R.R_NEW_TID]!, S[b + R.R_NEW_PID]!, S[b + R.R_READYING_TID]!, S[b + R.R_READYING_PID]!, knownBits(v));
        }
      }
      return;
    }
    const dists = this.readyDist.enabled;
    const worst = this.longest.limit > 0;
    const sums = this.sums;
    for (let b = 0; b < n * R.RWS; b += R.RWS) {
      const v = S[b + R.R_VALID]!;
      const known = (v >>> L.CU_NEW_PROCESS_ID) & 1;
      const s = this.stagedSlot(S, b, known);
      const x = s * ACC;
      sums.acc[x]!++;
      const inHi = S[b + R.R_IN_HI]!;
      const inLo = S[b + R.R_IN_LO]!;
      this.span(v, inHi, inLo, S[b + R.R_NEXT_HI]!, S[b + R.R_NEXT_LO]!, S[b + R.R_READY_HI]!, S[b + R.R_READY_LO]!, S[b + R.R_LAST_HI]!, S[b + R.R_LAST_LO]!, S[b + R.R_CPU]!);
      if ((v >>> L.CU_CPU_USAGE) & 1) sums.addDiff(x + A_CPU, S[b + R.R_NEXT_HI]!, S[b + R.R_NEXT_LO]!, inHi, inLo);
      if (((v >>> L.CU_READY) & 1) === 0) continue;
      // ready = switch-in − readyTime; waits = readyTime − the last switch-out
      const rHi = S[b + R.R_READY_HI]!;
      const rLo = S[b + R.R_READY_LO]!;
      sums.addDiff(x + A_READY, inHi, inLo, rHi, rLo);
      if (dists || worst) {
        const lo = subLo(inLo, rLo);
        const hi = subHi(inHi, inLo, rHi, rLo);
        if (dists) this.readyDist.add(s, lo, hi);
        if (worst) this.longest.offer(lo, hi, inLo, inHi, S[b + R.R_CPU]!, S[b + R.R_NEW_TID]!, S[b + R.R_NEW_PID]!, S[b + R.R_READYING_TID]!, S[b + R.R_READYING_PID]!, knownBits(v));
      }
      if ((v >>> L.CU_WAITS) & 1) {
        const lHi = S[b + R.R_LAST_HI]!;
        const lLo = S[b + R.R_LAST_LO]!;
        sums.addDiff(x + A_WAIT, rHi, rLo, lHi, lLo);
        if (dists) this.waitDist.add(s, subLo(rLo, lLo), subHi(rHi, rLo, lHi, lLo));
      }
    }
  }

  /**
   * CoreFoldSink: the WebAssembly core can fold the rows as addStaged does, histograms included, when no
   * selection and no longest ready delays are asked for (those stay on the staged path).
   */
  coreFold(): CoreFoldRequest | null {
    if (this.sel !== null || this.longest.limit > 0) return null;
    return { histograms: this.readyDist.enabled ? KEY_MAPPING : null };
  }

  /** The WebAssembly core's fold (CoreFoldSink, at the deriver's finish()): its slots, in their order, into these. */
  addCoreFold(f: CoreFold): void {
    const F = f.slots;
    const first = this.n;
    const to = new Int32Array(f.n);
    for (let i = 0; i < f.n; i++) {
      const b = i * R.FW;
      const s = this.slot(F[b + R.F_TID]!, F[b + R.F_PID]!, F[b + R.F_KNOWN]!);
      to[i] = s;
      const x = s * ACC;
      this.sums.acc[x]! += F[b + R.F_IN + 1]! * 4294967296 + (F[b + R.F_IN]! >>> 0);
      const h = i * R.FHW;
      this.sums.add128(x + A_CPU, F, b + R.F_CPU, f.high, h);
      this.sums.add128(x + A_READY, F, b + R.F_READY, f.high, h + 2);
      this.sums.add128(x + A_WAIT, F, b + R.F_WAIT, f.high, h + 4);
      const seen = F[b + R.F_SEEN]!;
      if (seen & 1) this.readyDist.addMax(s, F[b + R.F_READY_MAX]!, F[b + R.F_READY_MAX + 1]!);
      if (seen & 2) this.waitDist.addMax(s, F[b + R.F_WAIT_MAX]!, F[b + R.F_WAIT_MAX + 1]!);
    }
    if (f.histograms !== null) {
      // a fresh analyzer's slots are the fold's: its tables are taken as they are
      const same = first === 0;
      this.readyDist.merge(f.histograms[0].table, f.histograms[0].cells, same ? null : to);
      this.waitDist.merge(f.histograms[1].table, f.histograms[1].cells, same ? null : to);
    }
    if (f.rows > 0) {
      const word = (t: bigint, k: number) => Number(BigInt.asIntN(32, t >> BigInt(32 * k)));
      this.widen(word(f.first, 1), word(f.first, 0));
      this.widen(word(f.last, 1), word(f.last, 0));
      if (f.cpus > this.cpus) this.cpus = f.cpus;
    }
  }

  /**
   * The slot of the staged row at word b of S (`known`: its process is): the one the deriver's thread slot
   * had last, when its key matches (most rows: no hash lookup), else slot().
   */
  private stagedSlot(S: Int32Array, b: number, known: number): number {
    const tid = S[b + R.R_NEW_TID]!;
    const pid = known === 1 ? S[b + R.R_NEW_PID]! : 0;
    const ds = S[b + R.R_NEW_SLOT]!;
    if (ds < this.byThreadSlot.length) {
      const s = this.byThreadSlot[ds]! - 1;
      const x = s * ACC;
      const acc = this.sums.acc;
      if (s >= 0 && acc[x + A_TID] === tid && acc[x + A_PID] === pid && acc[x + A_KNOWN] === known) return s;
    } else this.byThreadSlot = grownTo(this.byThreadSlot, ds + 1);
    const s = this.slot(tid, pid, known);
    this.byThreadSlot[ds] = s + 1;
    return s;
  }

  /** The slot of (tid, pid) (as int32; pid 0 with known 0: null), made if new. */
  private slot(tid: number, pid: number, known: number): number {
    const mask = this.buckets.length - 1;
    let h = Math.imul(Math.imul(tid, 0x9e3779b1) ^ pid ^ (known << 31), 0x85ebca6b) >>> this.shift;
    for (; ; h = (h + 1) & mask) {
      const b = this.buckets[h]!;
      if (b === 0) break;
      const x = (b - 1) * ACC;
      const acc = this.sums.acc;
      if (acc[x + A_TID] === tid && acc[x + A_PID] === pid && acc[x + A_KNOWN] === known) return b - 1;
    }
    const s = this.n++;
    if (s === this.tid.length) this.grow();
    this.tid[s] = tid;
    this.pid[s] = pid;
    this.hasPid[s] = known;
    this.sums.acc[s * ACC + A_TID] = tid;
    this.sums.acc[s * ACC + A_PID] = pid;
    this.sums.acc[s * ACC + A_KNOWN] = known;
    this.picked[s] = this.sel === null || this.sel.ids(tid, pid, known) ? 1 : 0;
    if (2 * this.n > this.buckets.length) this.rehash();
    else this.buckets[h] = s + 1;
    return s;
  }

  private grow(): void {
    const cap = Math.max(64, 2 * this.tid.length);
    const tid = new Int32Array(cap);
    const pid = new Int32Array(cap);
    const hasPid = new Uint8Array(cap);
    const picked = new Uint8Array(cap);
    picked.set(this.picked);
    this.picked = picked;
    tid.set(this.tid);
    pid.set(this.pid);
    hasPid.set(this.hasPid);
    this.tid = tid;
    this.pid = pid;
    this.hasPid = hasPid;
    this.sums.grow(cap);
    this.readyDist.growGroups(cap);
    this.waitDist.growGroups(cap);
  }

  /** Buckets for twice the slots (every slot placed again, the last one made included). */
  private rehash(): void {
    const cap = this.buckets.length * 2;
    this.buckets = new Int32Array(cap);
    this.shift = 32 - Math.log2(cap);
    const mask = cap - 1;
    for (let s = 0; s < this.n; s++) {
      let h = Math.imul(Math.imul(this.tid[s]!, 0x9e3779b1) ^ this.pid[s]! ^ (this.hasPid[s]! << 31), 0x85ebca6b) >>> this.shift;
      while (this.buckets[h] !== 0) h = (h + 1) & mask;
      this.buckets[h] = s + 1;
    }
  }

  /** The totals, percentiles and longest ready delays, named from the threads and processes tables. */
  result(names: Pick<StreamResult, 'threads' | 'processes' | 'clock'>, context: CpuResultContext = {}): CpuAnalysis {
    const clock = names.clock ?? null;
    const perSecond = clock?.ticksPerSecond ?? null;
    const ms = msOf(perSecond);
    const percentiles = (d: DistributionTicks): Percentiles => {
      const [p50, p90, p99] = d.percentiles as [bigint | null, bigint | null, bigint | null];
      return { count: d.count, p50Ticks: p50, p90Ticks: p90, p99Ticks: p99, maxTicks: d.max, p50Ms: ms(p50), p90Ms: ms(p90), p99Ms: ms(p99), maxMs: ms(d.max) };
    };
    const image = new Map<number, string>();
    for (const p of names.processes) if (p.imageFileName !== null) image.set(p.processId, p.imageFileName);
    // thread names: looked up only where a thread is shown (--by thread, the longest delays)
    let named: ((tid: number, pid: number | null) => string | null) | null = null;
    const threadName = (tid: number, pid: number | null) => (named ??= threadNames(names.threads))(tid, pid);
    const imageOf = (pid: number | null) => (pid === null ? null : (image.get(pid) ?? null));

    // the groups the distributions merge into: each slot alone (threads), its process, the trace
    const n = this.n;
    // with a selection: the slots it keeps that have something inside the range (-1: left out)
    const kept = (s: number): boolean =>
      this.sel === null || (this.picked[s] === 1 && (this.sums.acc[s * ACC]! > 0 || this.sums.get(s * ACC + A_CPU) !== 0n || this.sums.get(s * ACC + A_READY) !== 0n || this.sums.get(s * ACC + A_WAIT) !== 0n));
    const self = Int32Array.from({ length: n }, (_, s) => (kept(s) ? s : -1));
    const procOf = new Int32Array(n);
    const procIndex = new Map<string, number>();
    const procPid: (number | null)[] = [];
    for (let s = 0; s < n; s++) {
      if (self[s] === -1) {
        procOf[s] = -1;
        continue;
      }
      const pid = this.hasPid[s] === 1 ? this.pid[s]! >>> 0 : null;
      const key = String(pid);
      let p = procIndex.get(key);
      if (p === undefined) {
        procIndex.set(key, (p = procPid.length));
        procPid.push(pid);
      }
      procOf[s] = p;
    }
    const all = Int32Array.from(self, (s) => (s < 0 ? -1 : 0));
    const dists = (into: Int32Array, targets: number) =>
      this.readyDist.enabled ? { ready: this.readyDist.summarize(into, targets), wait: this.waitDist.summarize(into, targets) } : null;
    const byThread = dists(self, n);
    const byProcess = dists(procOf, procPid.length);
    const byTrace = dists(all, 1);

    const totals = (a: Acc, d: { ready: DistributionTicks[]; wait: DistributionTicks[] } | null, i: number): CpuTotals => ({
      switchIns: a.switchIns,
      cpuTicks: a.cpu,
      readyTicks: a.ready,
      waitTicks: a.wait,
      cpuMs: ms(a.cpu),
      readyMs: ms(a.ready),
      waitMs: ms(a.wait),
      readyPercentiles: d && percentiles(d.ready[i]!),
      waitPercentiles: d && percentiles(d.wait[i]!),
    });
    const accOf = (S: Sums, i: number): Acc => ({ switchIns: S.acc[i * ACC]!, cpu: S.get(i * ACC + A_CPU), ready: S.get(i * ACC + A_READY), wait: S.get(i * ACC + A_WAIT) });
    // the processes' sums and the trace's (at P) from the slots', in typed cells: no object or BigInt per thread
    const P = procPid.length;
    const ps = new Sums();
    ps.grow(P + 1);
    const pThreads = new Int32Array(P);
    const S = this.sums;
    const addSlot = (y: number, x: number) => {
      ps.acc[y]! += S.acc[x]!;
      ps.addSum(y + A_CPU, S, x + A_CPU);
      ps.addSum(y + A_READY, S, x + A_READY);
      ps.addSum(y + A_WAIT, S, x + A_WAIT);
    };
    for (let s = 0; s < n; s++) {
      if (self[s] === -1) continue;
      addSlot(procOf[s]! * ACC, s * ACC);
      addSlot(P * ACC, s * ACC);
      pThreads[procOf[s]!]!++;
    }
    const byCpu = (x: CpuTotals, y: CpuTotals): number => (x.cpuTicks > y.cpuTicks ? -1 : x.cpuTicks < y.cpuTicks ? 1 : y.switchIns - x.switchIns);
    const processes: ProcessCpu[] = procPid.map((pid, i) => ({ processId: pid, imageFileName: imageOf(pid), threads: pThreads[i]!, ...totals(accOf(ps, i), byProcess, i) }));
    sortByCpu(processes, (x, y) => byCpu(x, y) || (x.processId ?? -1) - (y.processId ?? -1));
    // threads: a slot's object made where it is read (most runs show processes only), from a copy of the slots
    const slots = S.copy(n);
    const tids = this.tid.slice(0, n);
    const threadOf = (s: number): ThreadCpu => {
      const tid = tids[s]! >>> 0;
      const pid = procPid[procOf[s]!]!;
      return { threadId: tid, processId: pid, imageFileName: imageOf(pid), name: threadName(tid, pid), ...totals(accOf(slots, s), byThread, s) };
    };
    const threadsOf = (pick: (s: number) => boolean): ThreadCpu[] => {
      const list: ThreadCpu[] = [];
      for (let s = 0; s < n; s++) if (self[s] !== -1 && pick(s)) list.push(threadOf(s));
      sortByCpu(list, (x, y) => byCpu(x, y) || x.threadId - y.threadId);
      return list;
    };
    const worst: ReadyDelay[] = this.longest.list().map((w) => ({
      threadId: w.threadId,
      processId: w.processId,
      imageFileName: imageOf(w.processId),
      name: threadName(w.threadId, w.processId),
      cpu: w.cpu,
      switchInTime: w.switchInTime,
      switchInNs: clock === null ? null : clock.toNanoseconds(w.switchInTime),
      readyTime: w.switchInTime - w.ready,
      readyingThreadId: w.readyingThreadId,
      readyingProcessId: w.readyingProcessId,
      readyingImageFileName: imageOf(w.readyingProcessId),
      readyTicks: w.ready,
      readyMs: ms(w.ready),
    }));
    // the warnings' threads: those whose sums could pass their bound (exact doubles compared; a spilled sum or
    // a bound of 2^52 and more: every thread), checked exactly in warnings()
    const span = this.spanTicks();
    const bound = (t: bigint | null) => (t === null ? Infinity : t < 2n ** 52n ? Number(t) : -Infinity);
    const spanD = bound(span);
    const capacityD = bound(span === null ? null : span * BigInt(Math.max(1, this.cpus)));
    const suspect = (s: number): boolean => {
      const x = s * ACC;
      if (slots.spilled(x + A_CPU) || slots.spilled(x + A_READY) || slots.spilled(x + A_WAIT)) return true;
      return slots.acc[x + A_CPU]! > (tids[s] === 0 ? capacityD : spanD) || slots.acc[x + A_READY]! > spanD || slots.acc[x + A_WAIT]! > spanD;
    };
    let threads: ThreadCpu[] | null = null;
    return {
      ticksPerSecond: perSecond,
      total: totals(accOf(ps, P), byTrace, 0),
      processes,
      get threads(): ThreadCpu[] {
        return (threads ??= threadsOf(() => true));
      },
      worst,
      selection: this.sel?.describe(clock) ?? null,
      warnings: this.warnings(processes, span === null ? [] : threadsOf(suspect), span, ms, context),
    };
  }

  /** The span the sums cannot exceed: the rows' (first switch-in to last time), within the selection's range; null when empty. */
  private spanTicks(): bigint | null {
    if (this.n === 0 || this.lastHi < this.firstHi) return null;
    const word = (hi: number, lo: number) => (BigInt(hi) << 32n) | BigInt(lo >>> 0);
    let first = word(this.firstHi, this.firstLo);
    let last = word(this.lastHi, this.lastLo);
    const sel = this.sel;
    if (sel?.fromTicks != null && sel.fromTicks > first) first = sel.fromTicks;
    if (sel?.toTicks != null && sel.toTicks < last) last = sel.toTicks;
    const span = last - first;
    return span > 0n ? span : null;
  }

  /**
   * The figures that cannot be right: a thread running, ready or waiting longer than the span of the rows
   * (the selection's range, when it has both bounds), a process using more CPU than the span × the CPUs
   * seen; each named with the causes the decode shows (data lost, events out of time order on their CPU,
   * rows whose process was not known). `threads`: every thread whose sums could pass their bound, in the
   * threads' order; `span`: spanTicks().
   */
  private warnings(processes: ProcessCpu[], threads: ThreadCpu[], span: bigint | null, ms: (t: bigint | null) => number | null, context: CpuResultContext): CpuWarning[] {
    if (span === null) return [];
    const sel = this.sel;
    const causes: string[] = [];
    if (context.dataLoss) causes.push(`data was lost (${context.dataLoss})`);
    if (context.stats?.lateEvents) causes.push(`${context.stats.lateEvents} events arrived out of time order on their CPU`);
    if (context.stats?.unresolvedRows) causes.push(`${context.stats.unresolvedRows} rows were counted before their thread's process was known`);
    const why = causes.length ? `; the trace shows: ${causes.join('; ')}` : '; the trace shows no cause (a corrupt or hand-made trace?)';
    const time = (t: bigint) => (ms(t) === null ? `${t} ticks` : `${ms(t)!.toFixed(3)} ms`);
    const out: CpuWarning[] = [];
    const spanText = `${time(span)} ${sel?.hasTime ? 'range' : 'trace'}`;
    const capacity = span * BigInt(Math.max(1, this.cpus));
    for (const t of threads) {
      for (const [kind, v, verb] of [
        ['cpu', t.cpuTicks, 'ran'],
        ['ready', t.readyTicks, 'was ready'],
        ['wait', t.waitTicks, 'waited'],
      ] as const) {
        // the idle thread (0) runs on every CPU at once: its CPU time is bounded as a process's
        if (v <= (kind === 'cpu' && t.threadId === 0 ? capacity : span)) continue;
        const who = `thread ${t.threadId}${t.processId === null ? '' : ` of process ${t.processId}${t.imageFileName ? ` (${t.imageFileName})` : ''}`}`;
        out.push({ kind, threadId: t.threadId, processId: t.processId, ticks: v, spanTicks: span, message: `${who} ${verb} ${time(v)} in a ${spanText}: that cannot be${why}` });
      }
    }
    for (const p of processes) {
      if (p.cpuTicks <= capacity) continue;
      const who = `process ${p.processId ?? '(unknown)'}${p.imageFileName ? ` (${p.imageFileName})` : ''}`;
      out.push({ kind: 'processCpu', threadId: null, processId: p.processId, ticks: p.cpuTicks, spanTicks: span, message: `${who} used ${time(p.cpuTicks)} of CPU in a ${spanText} on ${this.cpus} CPUs: that cannot be${why}` });
    }
    return out;
  }
}

/**
 * The whole cpuUsage table of a decoded trace, ordered by (cpu, switchInTime), ties in decode order: the
 * deriver given the trace's threads table (every process id from the final lifetimes, no row held back),
 * its rows (per CPU in that order) then grouped by CPU, stably.
 */
export function cpuUsage(result: DecodedTables & Pick<StreamResult, 'threads'>, options: Omit<CpuUsageOptions, 'threads'> = {}): Table<'cpuUsage'> {
  const chunks: ColumnChunk[] = [];
  const d = new CpuUsageDeriver((t) => chunks.push({ length: t.length, columns: t.columns }), { ...options, threads: result.threads });
  d.add(result.cswitch, result.readythread, result.threadEvents);
  d.finish();
  const all = concatChunks('cpuUsage', chunks);
  const n = all.length;
  const cpu = columnsOf('cpuUsage', all.columns).cpu;
  // a stable counting sort by cpu
  const start = new Uint32Array(0x10001);
  for (let i = 0; i < n; i++) start[cpu[i]! + 1]!++;
  for (let c = 1; c < start.length; c++) start[c]! += start[c - 1]!;
  const order = new Uint32Array(n);
  for (let i = 0; i < n; i++) order[start[cpu[i]!]!++] = i;
  return new Table('cpuUsage', { length: n, columns: all.columns.map((col) => permute(col as NumericColumn, order)) });
}

/** col[order[i]] at i (64-bit columns moved as pairs of 32-bit words: no BigInt per value). */
function permute(col: NumericColumn, order: Uint32Array): TypedColumn {
  const out = col.slice();
  if (col instanceof BigInt64Array || col instanceof BigUint64Array) {
    const src = new Uint32Array(col.buffer, col.byteOffset, 2 * col.length);
    const dst = new Uint32Array(out.buffer, out.byteOffset, 2 * out.length);
    for (let i = 0; i < order.length; i++) {
      dst[2 * i] = src[2 * order[i]!]!;
      dst[2 * i + 1] = src[2 * order[i]! + 1]!;
    }
  } else {
    const src = col as Uint32Array;
    const dst = out as Uint32Array;
    for (let i = 0; i < order.length; i++) dst[i] = src[order[i]!]!;
  }
  return out as TypedColumn;
}

/**
 * Milliseconds of a tick count, (t · 10^6 / ticksPerSecond, truncated) / 1000 (null: no clock, or no
 * value): in doubles where t · 10^6 and the ticks per second are below 2^53 (exact: floorDiv), else BigInt.
 */
function msOf(perSecond: bigint | null): (t: bigint | null) => number | null {
  if (perSecond === null) return () => null;
  const d = Number(perSecond);
  const fast = perSecond > 0n && perSecond < 2n ** 53n;
  return (t) => {
    if (t === null) return null;
    if (fast && t < 9_007_199_254n && t > -9_007_199_254n) {
      const x = Number(t) * 1e6;
      const q = x >= 0 ? floorDiv(x, d) : -floorDiv(-x, d);
      return (q === 0 ? 0 : q) / 1000;
    }
    return Number((t * 1_000_000n) / perSecond) / 1000;
  };
}

/** Thread names by (thread id, process id), from the threads table's columns (a later row wins; null names skipped). */
function threadNames(threads: Table<'threads'>): (tid: number, pid: number | null) => string | null {
  const tid = threads.column('threadId');
  const pid = threads.column('processId');
  const name = threads.column('name') as readonly string[];
  // keyed by pid · 2^32 + tid (exact below 2^53), other pids by text
  const near = new Map<number, string>();
  const far = new Map<string, string>();
  for (let i = 0; i < threads.length; i++) {
    if (threads.isNull(L.TH_NAME, i)) continue;
    const p = pid[i]!;
    if (p < 0x200000) near.set(p * 4294967296 + tid[i]!, name[i]!);
    else far.set(`${tid[i]}/${p}`, name[i]!);
  }
  return (t, p) => (p === null ? null : p < 0x200000 ? (near.get(p * 4294967296 + t) ?? null) : (far.get(`${t}/${p}`) ?? null));
}

/**
 * Sorts `list` (stably) by `order`, which sorts by CPU time first: the CPU times as numbers decide where
 * they differ (Number() keeps the order of the BigInts), `order` where they are equal.
 */
function sortByCpu<T extends CpuTotals>(list: T[], order: (x: T, y: T) => number): void {
  const key = Float64Array.from(list, (x) => Number(x.cpuTicks));
  const at = Array.from(list, (_, i) => i);
  at.sort((i, j) => (key[i] !== key[j] ? (key[i]! > key[j]! ? -1 : 1) : order(list[i]!, list[j]!)));
  const sorted = at.map((i) => list[i]!);
  for (let i = 0; i < sorted.length; i++) list[i] = sorted[i]!;
}

/** A copy of `a` with room for at least n elements (twice as many, or more). */
function grownTo(a: Int32Array, n: number): Int32Array {
  const b = new Int32Array(Math.max(n, 2 * a.length, 256));
  b.set(a);
  return b;
}

/** The 64-bit column as (lo, hi) 32-bit words, as int32. */

/** CPU time, ready time and waits per process and per thread of a decoded trace, with their percentiles and the `worst` longest ready delays. */
export function analyzeCpu(result: DecodedTables & Pick<StreamResult, 'threads' | 'processes' | 'clock'>, options: CpuAnalyzerOptions = {}): CpuAnalysis {
  const a = new CpuAnalyzer(options);
  a.add(cpuUsage(result));
  const summary = (result as Partial<Pick<StreamResult, 'summary'>>).summary;
  return a.result(result, { dataLoss: summary ? dataLossText(summary.diagnostics) : null });
}

export { CpuUsageDeriver, type CpuUsageOptions, type CpuUsageStats };
