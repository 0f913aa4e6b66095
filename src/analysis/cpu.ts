// "Which process used the CPU, who waited, who woke whom": totals per process and per thread from the
// cpuUsage table (WPA's CPU Usage (Precise) summed by process / thread), with image and thread names
// from the threads and processes tables. Works on a whole result or chunk by chunk while streaming:
// memory grows with the number of threads, never with the number of switches.
import * as L from '../generated/layout.js';
import { CpuUsageDeriver, type CpuUsageOptions, type CpuUsageStats } from '../derive/cpu-usage.js';
import { concatChunks, type ColumnChunk, type NumericColumn, type TypedColumn } from '../tables/schema.js';
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

/** Sums cpuUsage rows by (thread, process); feed it chunks, then ask for the analysis. */
export class CpuAnalyzer {
  private readonly byThread = new Map<string, Acc & { tid: number; pid: number | null }>();

  add(rows: Table<'cpuUsage'>): void {
    const c = rows.columns;
    const tid = c[L.CU_NEW_THREAD_ID] as Uint32Array;
    const pid = c[L.CU_NEW_PROCESS_ID] as Uint32Array;
    const usage = c[L.CU_CPU_USAGE] as BigInt64Array;
    const ready = c[L.CU_READY] as BigInt64Array;
    const waits = c[L.CU_WAITS] as BigInt64Array;
    const valid = c[L.CU_VALID] as Uint32Array;
    for (let i = 0; i < rows.length; i++) {
      const v = valid[i]!;
      const p = (v >>> L.CU_NEW_PROCESS_ID) & 1 ? pid[i]! : null;
      const key = `${tid[i]}/${p}`;
      let a = this.byThread.get(key);
      if (!a) this.byThread.set(key, (a = { ...zero(), tid: tid[i]!, pid: p }));
      a.switchIns++;
      if ((v >>> L.CU_CPU_USAGE) & 1) a.cpu += usage[i]!;
      if ((v >>> L.CU_READY) & 1) a.ready += ready[i]!;
      if ((v >>> L.CU_WAITS) & 1) a.wait += waits[i]!;
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
    for (const a of this.byThread.values()) {
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
  const cpu = all.columns[L.CU_CPU] as Uint16Array;
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

/** CPU time, ready time and waits per process and per thread of a decoded trace. */
export function analyzeCpu(result: DecodedTables & Pick<StreamResult, 'threads' | 'processes' | 'clock'>): CpuAnalysis {
  const a = new CpuAnalyzer();
  a.add(cpuUsage(result));
  return a.result(result);
}

export { CpuUsageDeriver, type CpuUsageOptions, type CpuUsageStats };
