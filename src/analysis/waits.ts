// Wait analysis (PerfView's "Thread Time (with ReadyThread)", WPA's NewThreadStack / ReadyThreadStack): the
// blocked time of the switch-ins — each cpuUsage row's `waits`, from the thread's switch-out to the ReadyThread
// that readied it — by the stack where the thread waited (the stack of its switch-in's cswitch row: a thread
// resumes where it blocked) and by the stack of the thread that readied it (the stack of the ReadyThread row),
// from the stacks resolveStacks attaches (src/derive/stacks.ts). Frames are named module!0xoffset through the
// image lifetimes (ImageMap; no symbols). Rows are joined on (time, thread) through typed maps — no object or
// BigInt per row; sums in doubles (exact below 2^53 ticks).
import * as L from '../generated/layout.js';
import { resolveStacks, WordMap, type ResolvedStacks } from '../derive/stacks.js';
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

/** Per cpuUsage row: the stack id where its thread waited and its readying thread's (-1: none), and the stacks. */
export interface RowStacks {
  wait: Int32Array;
  ready: Int32Array;
  stacks: ResolvedStacks;
}

/**
 * The stacks of a decode's switch-ins: the stacked cswitch rows by (time, new thread) and the stacked
 * ReadyThread rows by (time, thread), so that any cpuUsage rows of that decode (all, or a selection's) get the
 * stack where their thread waited and their readying thread's. Rows are added as they are met — whole tables,
 * or a streamed decode's chunks (`cpu --waits`: only the stacked rows are kept, never the switch and ready
 * tables) — and a cpuUsage row's stacks are looked up once the rows it was derived from were added.
 */
export class WaitStackJoin {
  /** (time words, thread) → stack id of the cswitch row (by its new thread) and of the readythread row */
  private readonly cs: WordMap;
  private readonly rt: WordMap;
  constructor(capacity = 1024) {
    this.cs = new WordMap(capacity);
    this.rt = new WordMap(capacity);
  }

  /** rows kept: the stacked switch-ins and ReadyThread rows added */
  get kept(): number {
    return this.cs.size + this.rt.size;
  }

  /** Rows met (a chunk or whole tables), with the stack id of each row (-1: none): the stacked ones are kept. */
  add(cswitch: Table<'cswitch'>, csStack: Int32Array, readythread: Table<'readythread'>, rtStack: Int32Array): void {
    if (cswitch.length > 0) {
      const ts = int32Words(cswitch.column('timestamp'));
      const tid = cswitch.column('newThreadId');
      for (let i = 0; i < cswitch.length; i++) if (csStack[i]! >= 0) this.cs.set(ts[2 * i]!, ts[2 * i + 1]!, tid[i]! | 0, csStack[i]!);
    }
    if (readythread.length > 0) {
      const ts = int32Words(readythread.column('timestamp'));
      const tid = readythread.column('threadId');
      for (let i = 0; i < readythread.length; i++) if (rtStack[i]! >= 0) this.rt.set(ts[2 * i]!, ts[2 * i + 1]!, tid[i]! | 0, rtStack[i]!);
    }
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

/** The join of whole tables: their stacks resolved (resolveStacks) and every row added. */
export function wholeWaitJoin(r: Omit<WaitsInput, 'cpuUsage' | 'images' | 'ticksPerSecond'>): { join: WaitStackJoin; stacks: ResolvedStacks } {
  const stacks = resolveStacks({ stackEvents: r.stackEvents, stackEventFrames: r.stackEventFrames, cswitch: r.cswitch, readythread: r.readythread });
  const join = new WaitStackJoin(Math.max(r.cswitch.length, r.readythread.length));
  join.add(r.cswitch, stacks.stackIdOf.cswitch, r.readythread, stacks.stackIdOf.readythread);
  return { join, stacks };
}

/** The stacks of each cpuUsage row of `r`: its switch-in's cswitch row's, and its ReadyThread row's (joined on time and thread). */
export function rowStacks(r: Omit<WaitsInput, 'images' | 'ticksPerSecond'>): RowStacks {
  const { join, stacks } = wholeWaitJoin(r);
  return { ...join.rows(r.cpuUsage), stacks };
}

/**
 * The blocked time of switch-ins by stack, summed as their cpuUsage rows come (whole, a selection's, or a
 * streamed derivation's chunks) with the stacks of each row (WaitStackJoin.rows): per stack id, counts and
 * ticks in doubles (exact below 2^53 ticks), no object or BigInt per row.
 */
export class WaitTotals {
  // per stack id + 1 (0: none): count and ticks
  private readonly waitCount: Float64Array;
  private readonly waitSum: Float64Array;
  private readonly readyCount: Float64Array;
  private readonly readySum: Float64Array;
  private waits = 0;
  private total = 0;
  private withWait = 0;
  private withReady = 0;

  constructor(private readonly st: ResolvedStacks) {
    const n = st.stacks.length + 1;
    this.waitCount = new Float64Array(n);
    this.waitSum = new Float64Array(n);
    this.readyCount = new Float64Array(n);
    this.readySum = new Float64Array(n);
  }

  /** The rows of `u` and their stacks (`stacks.wait[i]`, `stacks.ready[i]`: -1 none). */
  add(u: Table<'cpuUsage'>, stacks: Omit<RowStacks, 'stacks'>): void {
    const valid = u.column('valid');
    const waitW = int32Words(u.column('waits'));
    for (let i = 0; i < u.length; i++) {
      if (((valid[i]! >>> L.CU_WAITS) & 1) === 0) continue;
      const ticks = waitW[2 * i + 1]! * 4294967296 + (waitW[2 * i]! >>> 0);
      this.waits++;
      this.total += ticks;
      const ws = stacks.wait[i]! + 1;
      if (ws > 0) this.withWait++;
      this.waitCount[ws]!++;
      this.waitSum[ws]! += ticks;
      const rr = stacks.ready[i]! + 1;
      if (rr > 0) this.withReady++;
      this.readyCount[rr]!++;
      this.readySum[rr]! += ticks;
    }
  }

  /** The analysis of the rows added; frames named through the image lifetimes; `top` stacks of each list (0: all). */
  result(context: { images: Table<'images'>; stackEvents: Table<'stackEvents'>; ticksPerSecond: bigint | null }, options: { top?: number } = {}): WaitAnalysis {
    const st = this.st;
    const n = st.stacks.length + 1;
    const tps = context.ticksPerSecond;
    const ms = (t: number) => (tps === null ? null : (t * 1000) / Number(tps));
    const names = new FrameNames(st, context.images, context.stackEvents);
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
      waits: this.waits,
      waitTicks: BigInt(this.total),
      waitMs: ms(this.total),
      withWaitStack: this.withWait,
      withReadyStack: this.withReady,
      byWaitStack: list(this.waitCount, this.waitSum),
      byReadyStack: list(this.readyCount, this.readySum),
    };
  }
}

/** The wait analysis of a whole decode's rows (cpuUsage rows already selected, if a selection applies). */
export function analyzeWaits(r: WaitsInput, options: { top?: number } = {}): WaitAnalysis {
  const rs = rowStacks(r);
  const totals = new WaitTotals(rs.stacks);
  totals.add(r.cpuUsage, rs);
  return totals.result({ images: r.images, stackEvents: r.stackEvents, ticksPerSecond: r.ticksPerSecond }, options);
}

/** module!0xoffset names of a stack's frames (leaf first), through the image lifetimes at its first use (StackFrameImages). */
class FrameNames {
  private readonly named: StackFrameImages;
  private readonly addr: Int32Array;
  constructor(
    private readonly st: ResolvedStacks,
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
