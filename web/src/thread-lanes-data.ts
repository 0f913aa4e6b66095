// The per-thread lanes of the page, packed in the decoding worker from the library's `threadStates` table
// (one row per Running / Ready / Waiting / unknown interval of each thread): typed arrays only, rows
// grouped by lane (a thread id in one process) in time order, times as ticks since the timeline's
// baseTicks in doubles (exact to 2^53 ticks), converted from the int64 words without a BigInt per row.
// Lanes are ordered by their process's running time, then their own (busiest first).
import type { Table } from '../../src/index.js';

export const ST_UNKNOWN = 0;
export const ST_RUNNING = 1;
export const ST_READY = 2;
export const ST_WAITING = 3;
/** waitReason / cpu / readying thread unknown */
export const NONE8 = 255;
export const NONE16 = 0xffff;
/** priority unknown */
export const NO_PRIORITY = -128;

export interface ThreadLanesData {
  /** per lane: thread id, process id (-1: unknown), first row (laneFirst[n] = rows) */
  laneTid: Uint32Array;
  lanePid: Int32Array;
  laneFirst: Uint32Array;
  /** per row, grouped by lane, in time order */
  start: Float64Array;
  end: Float64Array;
  state: Uint8Array;
  waitReason: Uint8Array;
  cpu: Uint16Array;
  /** readying thread (`readyingKnown` 0: none) */
  readying: Uint32Array;
  readyingKnown: Uint8Array;
  /** the thread's priority in the interval (NO_PRIORITY: unknown) */
  priority: Int8Array;
  rows: number;
}

const STATE_CODE: Record<string, number> = { unknown: ST_UNKNOWN, running: ST_RUNNING, ready: ST_READY, waiting: ST_WAITING };

/** The lanes of `t` (ordered by threadId, startTime), times relative to `baseTicks`; an open end is `endOfTrace`. */
export function packThreadLanes(t: Table<'threadStates'>, baseTicks: bigint, endOfTrace: number): ThreadLanesData {
  const n = t.length;
  const col = <K extends Parameters<typeof t.column>[0]>(k: K) => t.column(k);
  const bit = (name: string) => t.specs.findIndex((s) => s.name === name);
  const tid = col('threadId');
  const pid = col('processId');
  const stateText = col('state') as unknown as string[];
  const startCol = col('startTime') as BigInt64Array;
  const endCol = col('endTime') as BigInt64Array;
  const cpuCol = col('cpu');
  const readyingCol = col('readyingThreadId');
  const waitCol = col('waitReason');
  const priorityCol = col('priority');
  const valid = col('valid');
  const [bPid, bEnd, bCpu, bReadying, bWait, bPriority] = [bit('processId'), bit('endTime'), bit('cpu'), bit('readyingThreadId'), bit('waitReason'), bit('priority')];
  const sw = new Int32Array(startCol.buffer, startCol.byteOffset, 2 * n);
  const ew = new Int32Array(endCol.buffer, endCol.byteOffset, 2 * n);
  const baseHi = Number(BigInt.asIntN(32, baseTicks >> 32n));
  const baseLo = Number(BigInt.asUintN(32, baseTicks));
  const rel = (w: Int32Array, i: number) => (w[2 * i + 1]! - baseHi) * 4294967296 + ((w[2 * i]! >>> 0) - baseLo);

  // each row's process: a row without one takes its thread's previous (or, leading, next) known one
  const rowPid = new Int32Array(n).fill(-1);
  for (let i = 0; i < n; ) {
    let j = i;
    let last = -1;
    let firstKnown = -1;
    for (; j < n && tid[j] === tid[i]; j++) {
      if ((valid[j]! >>> bPid) & 1) {
        last = pid[j]! | 0;
        if (firstKnown < 0) firstKnown = last;
      }
      rowPid[j] = last;
    }
    for (let k = i; k < j && rowPid[k] === -1; k++) rowPid[k] = firstKnown;
    i = j;
  }
  // lanes: (thread, process) in first-seen order; running time per lane and per process
  const laneOf = new Map<number, number>();
  const rowLane = new Uint32Array(n);
  const laneTid: number[] = [];
  const lanePid: number[] = [];
  const laneRun: number[] = [];
  const procRun = new Map<number, number>();
  const start = new Float64Array(n);
  const end = new Float64Array(n);
  for (let i = 0; i < n; i++) {
    const key = tid[i]! * 4294967296 + (rowPid[i]! >>> 0) + (rowPid[i]! < 0 ? 0.5 : 0);
    let l = laneOf.get(key);
    if (l === undefined) {
      l = laneTid.length;
      laneOf.set(key, l);
      laneTid.push(tid[i]!);
      lanePid.push(rowPid[i]!);
      laneRun.push(0);
    }
    rowLane[i] = l;
    start[i] = rel(sw, i);
    end[i] = (valid[i]! >>> bEnd) & 1 ? rel(ew, i) : Math.max(start[i]!, endOfTrace);
    if (stateText[i] === 'running') {
      laneRun[l] += end[i]! - start[i]!;
      procRun.set(rowPid[i]!, (procRun.get(rowPid[i]!) ?? 0) + end[i]! - start[i]!);
    }
  }
  const lanes = laneTid.length;
  const order = Array.from({ length: lanes }, (_, i) => i).sort(
    (a, b) => (procRun.get(lanePid[b]!) ?? 0) - (procRun.get(lanePid[a]!) ?? 0) || lanePid[a]! - lanePid[b]! || laneRun[b]! - laneRun[a]! || laneTid[a]! - laneTid[b]!,
  );
  const rank = new Uint32Array(lanes);
  order.forEach((l, k) => (rank[l] = k));
  // rows grouped by lane (counting sort, stable: time order kept)
  const first = new Uint32Array(lanes + 1);
  for (let i = 0; i < n; i++) first[rank[rowLane[i]!]! + 1]!++;
  for (let k = 0; k < lanes; k++) first[k + 1]! += first[k]!;
  const at = first.slice(0, lanes);
  const out: ThreadLanesData = {
    laneTid: Uint32Array.from(order, (l) => laneTid[l]!),
    lanePid: Int32Array.from(order, (l) => lanePid[l]!),
    laneFirst: first,
    start: new Float64Array(n),
    end: new Float64Array(n),
    state: new Uint8Array(n),
    waitReason: new Uint8Array(n).fill(NONE8),
    cpu: new Uint16Array(n).fill(NONE16),
    readying: new Uint32Array(n),
    readyingKnown: new Uint8Array(n),
    priority: new Int8Array(n).fill(NO_PRIORITY),
    rows: n,
  };
  for (let i = 0; i < n; i++) {
    const k = at[rank[rowLane[i]!]!]!++;
    const v = valid[i]!;
    out.start[k] = start[i]!;
    out.end[k] = end[i]!;
    out.state[k] = STATE_CODE[stateText[i]!] ?? ST_UNKNOWN;
    if ((v >>> bWait) & 1) out.waitReason[k] = waitCol[i]!;
    if ((v >>> bCpu) & 1) out.cpu[k] = cpuCol[i]!;
    if ((v >>> bPriority) & 1) out.priority[k] = priorityCol[i]!;
    if ((v >>> bReadying) & 1) {
      out.readying[k] = readyingCol[i]!;
      out.readyingKnown[k] = 1;
    }
  }
  return out;
}

/** The buffers of the lanes, to transfer them without a copy. */
export function threadLanesBuffers(d: ThreadLanesData): ArrayBuffer[] {
  return [d.laneTid, d.lanePid, d.laneFirst, d.start, d.end, d.state, d.waitReason, d.cpu, d.readying, d.readyingKnown, d.priority].map((a) => a.buffer as ArrayBuffer);
}

/** Index of the first row of lane rows [lo, hi) whose end is after `t` (ends ascend within a lane). */
export function firstRowEndingAfter(d: ThreadLanesData, lo: number, hi: number, t: number): number {
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (d.end[mid]! <= t) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}
