// Wait analysis (PerfView's "Thread Time (with ReadyThread)", WPA's NewThreadStack / ReadyThreadStack): the
// blocked time of the switch-ins — each cpuUsage row's `waits`, from the thread's switch-out to the ReadyThread
// that readied it — by the stack where the thread waited (the stack of its switch-in's cswitch row: a thread
// resumes where it blocked) and by the stack of the thread that readied it (the stack of the ReadyThread row),
// from the stacks resolveStacks attaches (src/derive/stacks.ts). Frames are named module!0xoffset through the
// image lifetimes (ImageMap; no symbols). Rows are joined on (time, thread) through typed maps — no object or
// BigInt per row; sums in doubles (exact below 2^53 ticks).
import * as L from '../generated/layout.js';
import { resolveStacks, WordMap } from '../derive/stacks.js';
import { int32Words } from '../tables/schema.js';
import type { Table } from '../tables/table.js';
import { StackFrameImages, stackPointerSize } from '../derive/stack-tables.js';
import { addressName, moduleOffsetName } from './sample-frames.js';

export interface WaitsInput {
  cpuUsage: Table<'cpuUsage'>;
  cswitch: Table<'cswitch'>;
  readythread: Table<'readythread'>;
  stackEvents: Table<'stackEvents'>;
  stackEventFrames: Table<'stackEventFrames'>;
  images: Table<'images'>;
  /** ticks per second, for the ms (null: ticks only) */
  ticksPerSecond: bigint | null;
}

/** Blocked time of one stack: its frames (leaf first, module!0xoffset), the waits and their sum. */
export interface WaitStack {
  /** stack id (resolveStacks), -1 for the waits without a stack */
  stackId: number;
  /** the stack's process (null: a kernel-only stack) */
  processId: number | null;
  frames: string[];
  waits: number;
  waitTicks: bigint;
  waitMs: number | null;
}

export interface WaitAnalysis {
  /** switch-ins with a wait (a readyTime after a switch-out) */
  waits: number;
  waitTicks: bigint;
  waitMs: number | null;
  /** of them: with the stack where the thread waited, with the stack of its readying thread */
  withWaitStack: number;
  withReadyStack: number;
  /** by the stack where the thread waited, most blocked time first (the waits without one: stackId -1) */
  byWaitStack: WaitStack[];
  /** by the stack of the readying thread */
  byReadyStack: WaitStack[];
}

/** int32 words of an int64 column */

/** Per cpuUsage row: the stack id where its thread waited and its readying thread's (-1: none), and the stacks. */
export interface RowStacks {
  wait: Int32Array;
  ready: Int32Array;
  stacks: ReturnType<typeof resolveStacks>;
}

/**
 * The stacks of a decode's switch-ins, joined once: the stacked cswitch rows by (time, new thread) and the
 * stacked ReadyThread rows by (time, thread), so that any cpuUsage rows of that decode (all, or a selection's)
 * get the stack where their thread waited and their readying thread's — the switch and ready tables need not
 * be kept.
 */
export class WaitStackJoin {
  readonly stacks: ReturnType<typeof resolveStacks>;
  /** (time words, thread) → stack id of the cswitch row (by its new thread) and of the readythread row */
  private readonly cs: WordMap;
  private readonly rt: WordMap;
  constructor(r: Omit<WaitsInput, 'cpuUsage' | 'images' | 'ticksPerSecond'>) {
    const st = resolveStacks({ stackEvents: r.stackEvents, stackEventFrames: r.stackEventFrames, cswitch: r.cswitch, readythread: r.readythread });
    this.stacks = st;
    this.cs = new WordMap(r.cswitch.length);
    const csTs = int32Words(r.cswitch.column('timestamp'));
    const csNew = r.cswitch.column('newThreadId');
    for (let i = 0; i < r.cswitch.length; i++) if (st.stackIdOf.cswitch[i]! >= 0) this.cs.set(csTs[2 * i]!, csTs[2 * i + 1]!, csNew[i]! | 0, st.stackIdOf.cswitch[i]!);
    this.rt = new WordMap(r.readythread.length);
    const rtTs = int32Words(r.readythread.column('timestamp'));
    const rtTid = r.readythread.column('threadId');
    for (let i = 0; i < r.readythread.length; i++) if (st.stackIdOf.readythread[i]! >= 0) this.rt.set(rtTs[2 * i]!, rtTs[2 * i + 1]!, rtTid[i]! | 0, st.stackIdOf.readythread[i]!);
  }

  /** Per row of `u`: the stack id where its thread waited and its readying thread's (-1: none). */
  rows(u: Table<'cpuUsage'>): Omit<RowStacks, 'stacks'> {
    const valid = u.column('valid');
    const inT = int32Words(u.column('switchInTime'));
    const readyT = int32Words(u.column('readyTime'));
    const tid = u.column('newThreadId');
    const wait = new Int32Array(u.length);
    const ready = new Int32Array(u.length);
    for (let i = 0; i < u.length; i++) {
      wait[i] = this.cs.get(inT[2 * i]!, inT[2 * i + 1]!, tid[i]! | 0);
      ready[i] = (valid[i]! >>> L.CU_READY_TIME) & 1 ? this.rt.get(readyT[2 * i]!, readyT[2 * i + 1]!, tid[i]! | 0) : -1;
    }
    return { wait, ready };
  }
}

/** The stacks of each cpuUsage row of `r`: its switch-in's cswitch row's, and its ReadyThread row's (joined on time and thread). */
export function rowStacks(r: Omit<WaitsInput, 'images' | 'ticksPerSecond'>): RowStacks {
  const join = new WaitStackJoin(r);
  return { ...join.rows(r.cpuUsage), stacks: join.stacks };
}

/** The wait analysis of a whole decode's rows (cpuUsage rows already selected, if a selection applies). */
export function analyzeWaits(r: WaitsInput, options: { top?: number } = {}): WaitAnalysis {
  const rs = rowStacks(r);
  const st = rs.stacks;
  const u = r.cpuUsage;
  const valid = u.column('valid');
  const waitW = int32Words(u.column('waits'));
  // per stack id + 1 (0: none): count and ticks
  const n = st.stacks.length + 1;
  const waitCount = new Float64Array(n);
  const waitSum = new Float64Array(n);
  const readyCount = new Float64Array(n);
  const readySum = new Float64Array(n);
  let waits = 0;
  let total = 0;
  let withWait = 0;
  let withReady = 0;
  for (let i = 0; i < u.length; i++) {
    if (((valid[i]! >>> L.CU_WAITS) & 1) === 0) continue;
    const ticks = waitW[2 * i + 1]! * 4294967296 + (waitW[2 * i]! >>> 0);
    waits++;
    total += ticks;
    const ws = rs.wait[i]! + 1;
    if (ws > 0) withWait++;
    waitCount[ws]!++;
    waitSum[ws]! += ticks;
    const rr = rs.ready[i]! + 1;
    if (rr > 0) withReady++;
    readyCount[rr]!++;
    readySum[rr]! += ticks;
  }
  const ms = (t: number) => (r.ticksPerSecond === null ? null : (t * 1000) / Number(r.ticksPerSecond));
  const names = new FrameNames(st, r.images, r.stackEvents);
  const list = (count: Float64Array, sum: Float64Array): WaitStack[] => {
    const ids: number[] = [];
    for (let s = 0; s < n; s++) if (count[s]! > 0) ids.push(s);
    ids.sort((a, b) => sum[b]! - sum[a]! || a - b);
    const shown = options.top ? ids.slice(0, options.top) : ids;
    return shown.map((s) => ({
      stackId: s - 1,
      processId: s === 0 || st.stacks.processId[s - 1] === 0xffffffff ? null : st.stacks.processId[s - 1]!,
      frames: s === 0 ? [] : names.of(s - 1),
      waits: count[s]!,
      waitTicks: BigInt(sum[s]!),
      waitMs: ms(sum[s]!),
    }));
  };
  return {
    waits,
    waitTicks: BigInt(total),
    waitMs: ms(total),
    withWaitStack: withWait,
    withReadyStack: withReady,
    byWaitStack: list(waitCount, waitSum),
    byReadyStack: list(readyCount, readySum),
  };
}

/** module!0xoffset names of a stack's frames (leaf first), through the image lifetimes at its first use (StackFrameImages). */
class FrameNames {
  private readonly named: StackFrameImages;
  private readonly addr: Int32Array;
  constructor(
    private readonly st: ReturnType<typeof resolveStacks>,
    private readonly images: Table<'images'>,
    stackEvents: Table<'stackEvents'>,
  ) {
    this.named = new StackFrameImages(st, images, stackPointerSize(stackEvents));
    this.addr = int32Words(st.frames.address);
  }
  of(s: number): string[] {
    const { stacks } = this.st;
    const out: string[] = [];
    for (let f = stacks.firstFrame[s]!, end = f + stacks.frameCount[s]!; f < end; f++) {
      const row = this.named.row[f]!;
      out.push(row < 0 ? addressName(this.addr[2 * f + 1]! >>> 0, this.addr[2 * f]! >>> 0) : moduleOffsetName(this.images, row, this.named.offset[f]!));
    }
    return out;
  }
}

/**
 * The name of the marker frame between a wait's stacks (pprof's waitsToPprof, the page's wait flame graph):
 * `READIED BY <process> (<pid>) tid <tid>`; `processId` -1 when unknown, `name` the process's image name.
 */
export function readiedByName(processId: number, name: string | undefined, threadId: number): string {
  const who = processId < 0 ? '?' : processId === 0 ? 'Idle (0)' : `${name ?? '?'} (${processId})`;
  return `READIED BY ${who} tid ${threadId}`;
}

/** The cpuUsage columns a wait's consumers read (pprof's waitsToPprof, the page's wait flame graph): views, 64-bit times as words. */
export function waitColumns(u: Table<'cpuUsage'>) {
  return {
    valid: u.column('valid'),
    waitW: int32Words(u.column('waits')),
    inW: int32Words(u.column('switchInTime')),
    rdW: int32Words(u.column('readyTime')),
    pid: u.column('newProcessId'),
    tid: u.column('newThreadId'),
    rTid: u.column('readyingThreadId'),
    rPid: u.column('readyingProcessId'),
  };
}
