// "Which process used the CPU, who waited, who woke whom": totals per process and per thread from the
// cpuUsage table (WPA's CPU Usage (Precise) summed by process / thread), with image and thread names
// from the threads and processes tables. Works on a whole result or chunk by chunk while streaming:
// memory grows with the number of threads, never with the number of switches.
import * as L from '../generated/layout.js';
import * as R from '../derive/cpu-usage.js';
import { CpuUsageDeriver, type CpuUsageOptions, type CpuUsageStats, type StagedRowSink } from '../derive/cpu-usage.js';
import { columnsOf, concatChunks, type ColumnChunk, type NumericColumn, type TypedColumn } from '../tables/schema.js';
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
}

interface Acc {
  switchIns: number;
  cpu: bigint;
  ready: bigint;
  wait: bigint;
}
const zero = (): Acc => ({ switchIns: 0, cpu: 0n, ready: 0n, wait: 0n });

/** 2^32 */
const WORD = 4294967296;
/** a partial sum moves on past this (each row adds less than 2^32 to it: it stays below 2^53, exact) */
const LIMIT = 2 ** 52;
/** x ^ MIN32 orders the int32 bits of u32 values as the u32 values */
const MIN32 = -0x80000000;

/**
 * Exact 64-bit sums per slot without a BigInt per row: a sum is spill + hi * 2^32 + lo, with hi the sum of
 * the high words and lo that of the low words, both doubles kept exact (below 2^53): lo carries into hi,
 * and hi (past 2^52 only for sums beyond 2^84) into a BigInt spill.
 */
class Sums {
  hi = new Float64Array(0);
  lo = new Float64Array(0);
  private readonly spill: bigint[] = [];
  grow(cap: number): void {
    const hi = new Float64Array(cap);
    const lo = new Float64Array(cap);
    hi.set(this.hi);
    lo.set(this.lo);
    this.hi = hi;
    this.lo = lo;
  }
  /** Adds the 64-bit value of words (lo, hi), both as int32 (lo's bits are the unsigned low word), to slot s. */
  add(s: number, lo: number, hi: number): void {
    let l = this.lo[s]! + lo;
    let h = this.hi[s]! + hi + (lo < 0 ? 1 : 0); // lo as int32 is 2^32 less than the u32 it stands for
    if (l >= LIMIT || l <= -LIMIT) {
      const carry = Math.floor(l / WORD);
      h += carry;
      l -= carry * WORD;
    }
    if (h >= LIMIT || h <= -LIMIT) {
      this.spill[s] = (this.spill[s] ?? 0n) + BigInt(h) * 4294967296n;
      h = 0;
    }
    this.lo[s] = l;
    this.hi[s] = h;
  }
  /** Adds (aHi, aLo) − (bHi, bLo) (words as int32) to slot s. */
  addDiff(s: number, aHi: number, aLo: number, bHi: number, bLo: number): void {
    this.add(s, (aLo - bLo) | 0, (aHi - bHi - ((aLo ^ MIN32) < (bLo ^ MIN32) ? 1 : 0)) | 0);
  }
  get(s: number): bigint {
    return (this.spill[s] ?? 0n) + BigInt(this.hi[s]!) * 4294967296n + BigInt(this.lo[s]!);
  }
}

/**
 * Sums cpuUsage rows by (thread, process); feed it chunks, or make it a CpuUsageDeriver's sink (`new
 * CpuUsageDeriver(analyzer)`: the rows as they are staged, no columns), then ask for the analysis.
 */
export class CpuAnalyzer implements StagedRowSink {
  // one slot per (newThreadId, newProcessId or null), in the order first seen; found by open addressing
  private n = 0;
  /** the ids as int32 (their bits) */
  private tid = new Int32Array(0);
  private pid = new Int32Array(0);
  /** 1: the process is known */
  private hasPid = new Uint8Array(0);
  private switchIns = new Float64Array(0);
  private readonly cpu = new Sums();
  private readonly ready = new Sums();
  private readonly wait = new Sums();
  /** slot + 1 per hash bucket (0: empty) */
  private buckets = new Int32Array(256);
  private shift = 24;

  add(rows: Table<'cpuUsage'>): void {
    const c = rows.columns;
    const tid = rows.column('newThreadId');
    const pid = rows.column('newProcessId');
    const usage = words(rows.column('cpuUsage'));
    const ready = words(rows.column('ready'));
    const waits = words(rows.column('waits'));
    const valid = rows.column('valid');
    for (let i = 0; i < rows.length; i++) {
      const v = valid[i]!;
      const known = (v >>> L.CU_NEW_PROCESS_ID) & 1;
      const s = this.slot(tid[i]! | 0, known === 1 ? pid[i]! | 0 : 0, known);
      this.switchIns[s]!++;
      if ((v >>> L.CU_CPU_USAGE) & 1) this.cpu.add(s, usage[2 * i]!, usage[2 * i + 1]!);
      if ((v >>> L.CU_READY) & 1) this.ready.add(s, ready[2 * i]!, ready[2 * i + 1]!);
      if ((v >>> L.CU_WAITS) & 1) this.wait.add(s, waits[2 * i]!, waits[2 * i + 1]!);
    }
  }

  /** Rows staged by a CpuUsageDeriver (StagedRowSink): the same sums, the durations from the times. */
  addStaged(S: Int32Array, n: number): void {
    for (let b = 0; b < n * R.RWS; b += R.RWS) {
      const v = S[b + R.R_VALID]!;
      const known = (v >>> L.CU_NEW_PROCESS_ID) & 1;
      const s = this.slot(S[b + R.R_NEW_TID]!, known === 1 ? S[b + R.R_NEW_PID]! : 0, known);
      this.switchIns[s]!++;
      const inHi = S[b + R.R_IN_HI]!;
      const inLo = S[b + R.R_IN_LO]!;
      if ((v >>> L.CU_CPU_USAGE) & 1) this.cpu.addDiff(s, S[b + R.R_NEXT_HI]!, S[b + R.R_NEXT_LO]!, inHi, inLo);
      if ((v >>> L.CU_READY) & 1) {
        const rHi = S[b + R.R_READY_HI]!;
        const rLo = S[b + R.R_READY_LO]!;
        this.ready.addDiff(s, inHi, inLo, rHi, rLo);
        if ((v >>> L.CU_WAITS) & 1) this.wait.addDiff(s, rHi, rLo, S[b + R.R_LAST_HI]!, S[b + R.R_LAST_LO]!);
      }
    }
  }

  /** The slot of (tid, pid) (as int32; pid 0 with known 0: null), made if new. */
  private slot(tid: number, pid: number, known: number): number {
    const mask = this.buckets.length - 1;
    let h = Math.imul(Math.imul(tid, 0x9e3779b1) ^ pid ^ (known << 31), 0x85ebca6b) >>> this.shift;
    for (; ; h = (h + 1) & mask) {
      const b = this.buckets[h]!;
      if (b === 0) break;
      const s = b - 1;
      if (this.tid[s] === tid && this.pid[s] === pid && this.hasPid[s] === known) return s;
    }
    const s = this.n++;
    if (s === this.tid.length) this.grow();
    this.tid[s] = tid;
    this.pid[s] = pid;
    this.hasPid[s] = known;
    if (2 * this.n > this.buckets.length) this.rehash();
    else this.buckets[h] = s + 1;
    return s;
  }

  private grow(): void {
    const cap = Math.max(64, 2 * this.tid.length);
    const tid = new Int32Array(cap);
    const pid = new Int32Array(cap);
    const hasPid = new Uint8Array(cap);
    const switchIns = new Float64Array(cap);
    tid.set(this.tid);
    pid.set(this.pid);
    hasPid.set(this.hasPid);
    switchIns.set(this.switchIns);
    this.tid = tid;
    this.pid = pid;
    this.hasPid = hasPid;
    this.switchIns = switchIns;
    for (const sums of [this.cpu, this.ready, this.wait]) sums.grow(cap);
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

  /** The sums of every (thread, process), in the order first seen. */
  private *perThread(): IterableIterator<Acc & { tid: number; pid: number | null }> {
    for (let s = 0; s < this.n; s++) {
      yield {
        tid: this.tid[s]! >>> 0,
        pid: this.hasPid[s] === 1 ? this.pid[s]! >>> 0 : null,
        switchIns: this.switchIns[s]!,
        cpu: this.cpu.get(s),
        ready: this.ready.get(s),
        wait: this.wait.get(s),
      };
    }
  }

  /** The totals, named from the threads and processes tables. */
  result(names: Pick<StreamResult, 'threads' | 'processes' | 'clock'>): CpuAnalysis {
    const perSecond = names.clock?.ticksPerSecond ?? null;
    const ms = (t: bigint): number | null => (perSecond === null ? null : Number((t * 1_000_000n) / perSecond) / 1000);
    const totals = (a: Acc): CpuTotals => ({
      switchIns: a.switchIns,
      cpuTicks: a.cpu,
      readyTicks: a.ready,
      waitTicks: a.wait,
      cpuMs: ms(a.cpu),
      readyMs: ms(a.ready),
      waitMs: ms(a.wait),
    });
    const image = new Map<number, string>();
    for (const p of names.processes) if (p.imageFileName !== null) image.set(p.processId, p.imageFileName);
    const threadName = new Map<string, string>();
    for (const t of names.threads) if (t.name !== null) threadName.set(`${t.threadId}/${t.processId}`, t.name);
    const procs = new Map<string, Acc & { pid: number | null; threads: number }>();
    const all = zero();
    const threads: ThreadCpu[] = [];
    for (const a of this.perThread()) {
      threads.push({
        threadId: a.tid,
        processId: a.pid,
        imageFileName: a.pid === null ? null : (image.get(a.pid) ?? null),
        name: threadName.get(`${a.tid}/${a.pid}`) ?? null,
        ...totals(a),
      });
      const key = String(a.pid);
      let p = procs.get(key);
      if (!p) procs.set(key, (p = { ...zero(), pid: a.pid, threads: 0 }));
      for (const x of [p, all]) {
        x.switchIns += a.switchIns;
        x.cpu += a.cpu;
        x.ready += a.ready;
        x.wait += a.wait;
      }
      p.threads++;
    }
    const byCpu = (x: CpuTotals, y: CpuTotals): number => (x.cpuTicks > y.cpuTicks ? -1 : x.cpuTicks < y.cpuTicks ? 1 : y.switchIns - x.switchIns);
    const processes: ProcessCpu[] = [...procs.values()].map((p) => ({
      processId: p.pid,
      imageFileName: p.pid === null ? null : (image.get(p.pid) ?? null),
      threads: p.threads,
      ...totals(p),
    }));
    processes.sort((x, y) => byCpu(x, y) || (x.processId ?? -1) - (y.processId ?? -1));
    threads.sort((x, y) => byCpu(x, y) || x.threadId - y.threadId);
    return { ticksPerSecond: perSecond, total: totals(all), processes, threads };
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

/** The 64-bit column as (lo, hi) 32-bit words, as int32. */
function words(col: BigInt64Array): Int32Array {
  return new Int32Array(col.buffer, col.byteOffset, col.length * 2);
}

/** CPU time, ready time and waits per process and per thread of a decoded trace. */
export function analyzeCpu(result: DecodedTables & Pick<StreamResult, 'threads' | 'processes' | 'clock'>): CpuAnalysis {
  const a = new CpuAnalyzer();
  a.add(cpuUsage(result));
  return a.result(result);
}

export { CpuUsageDeriver, type CpuUsageOptions, type CpuUsageStats };
