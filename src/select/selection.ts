// A selection (docs/selection.md): a time range [from, to) since the trace start (the anchor T0 of
// docs/format.md §A.10) or in wall-clock time, × processes (ids or image names) × threads. Made once per
// trace from what the user typed (SelectionOptions) and the trace's clock and lifetimes, then asked per row
// with the two 32-bit words of a timestamp (as a BigInt64Array holds them): no BigInt, object or closure
// per row. Tables are selected by selectTable (select/tables.ts), the CPU analysis clips its sums with it.
import { EtlError } from '../errors.js';
import { ThreadProcesses } from '../derive/lifetimes.js';
import type { Table } from '../tables/table.js';
import { formatSeconds, parseTimeSpec, type Clock, type TimeSpec } from '../time.js';

export { parseTimeSpec, type TimeSpec };

export interface SelectionOptions {
  /** start of the range (included); default: the trace's start */
  from?: TimeSpec;
  /** end of the range (excluded); default: the trace's end */
  to?: TimeSpec;
  /** processes by id */
  processIds?: readonly number[];
  /** processes by image file name (case-insensitive; `notepad` matches `notepad.exe`) */
  processNames?: readonly string[];
  /** threads by id */
  threadIds?: readonly number[];
}

/** What a selection keeps, as a report states it (null: not restricted). */
export interface SelectionSummary {
  fromTicks: bigint | null;
  toTicks: bigint | null;
  /** the bounds in nanoseconds since the trace start (null: open, or no clock) */
  fromNs: bigint | null;
  toNs: bigint | null;
  /** the processes kept (names resolved to ids) */
  processIds: number[] | null;
  threadIds: number[] | null;
}

/** A selection's summary as one line of text ('' for none). */
export function selectionText(s: SelectionSummary | null): string {
  if (s === null) return '';
  const time = (ns: bigint | null, ticks: bigint | null) => (ns !== null ? `${formatSeconds(ns)} s` : ticks !== null ? `tick ${ticks}` : null);
  const parts: string[] = [];
  const from = time(s.fromNs, s.fromTicks);
  const to = time(s.toNs, s.toTicks);
  if (from !== null || to !== null) parts.push(`${from ?? 'start'} to ${to ?? 'end'} since the trace start`);
  if (s.processIds) parts.push(`process${s.processIds.length === 1 ? '' : 'es'} ${s.processIds.join(', ') || '(none matched)'}`);
  if (s.threadIds) parts.push(`thread${s.threadIds.length === 1 ? '' : 's'} ${s.threadIds.join(', ')}`);
  return `selection: ${parts.join('; ')}`;
}

/** The selection options as one canonical text (what a dataset records with the rows it kept), null when they select the whole trace. */
export function selectionKey(o: SelectionOptions | undefined): string | null {
  if (!o) return null;
  const sorted = (a: readonly number[] | undefined) => (a ? [...new Set(a)].sort((x, y) => x - y) : undefined);
  const spec = (t: TimeSpec | undefined) => (t === undefined ? undefined : typeof t === 'object' ? ('ticks' in t ? `${t.ticks}t` : `${t.ns}ns`) : String(t).trim());
  const key = {
    from: spec(o.from),
    to: spec(o.to),
    processIds: sorted(o.processIds),
    processNames: o.processNames ? [...new Set(o.processNames.map((n) => n.trim().toLowerCase()))].sort() : undefined,
    threadIds: sorted(o.threadIds),
  };
  return Object.values(key).every((v) => v === undefined) ? null : JSON.stringify(key);
}

/** The raw timestamp of a time spec (the first tick at or after it). */
export function specTicks(spec: TimeSpec, clock: Clock | null, what = 'time'): bigint {
  const p = parseTimeSpec(spec, what);
  if ('ticks' in p) return p.ticks;
  if (!clock) throw new EtlError('NO_CLOCK', `${what}: the trace has no clock to convert ${typeof spec === 'object' ? 'nanoseconds' : String(spec)} with; give raw timestamps ({ ticks })`);
  return 'ns' in p ? clock.fromNanoseconds(p.ns) : clock.fromFileTime(p.fileTime);
}

/** The signed high and unsigned low 32-bit words of an int64. */
function words(v: bigint): [hi: number, lo: number] {
  const u = BigInt.asUintN(64, v);
  return [Number(BigInt.asIntN(32, u >> 32n)), Number(u & 0xffffffffn) | 0];
}

/** (aHi, aLo) < (bHi, bLo) as int64s, words as int32 (lo's bits the unsigned low word). */
function less(aHi: number, aLo: number, bHi: number, bLo: number): boolean {
  return aHi < bHi || (aHi === bHi && (aLo ^ 0x80000000) < (bLo ^ 0x80000000));
}

const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;

/**
 * A selection resolved for one trace. Time bounds in raw ticks (null: open); process ids with the names
 * resolved; thread ids; the threads' processes over their lifetimes (when the trace's threads are given),
 * for rows that carry a thread but no process.
 */
export class Selection {
  readonly fromTicks: bigint | null;
  readonly toTicks: bigint | null;
  readonly processIds: ReadonlySet<number> | null;
  readonly threadIds: ReadonlySet<number> | null;
  /** the range is empty (to <= from) */
  readonly empty: boolean;
  /** the bounds as words (open bounds: INT64_MIN and INT64_MAX) */
  readonly fromHi: number;
  readonly fromLo: number;
  readonly toHi: number;
  readonly toLo: number;
  /** with thread ids: the processes of those threads (from the lifetimes given), else null */
  private threadProcesses: Set<number> | null = null;
  /** the clipped duration of the last clip(), as words */
  lo = 0;
  hi = 0;
  /** the threads' processes by time (the lifetimes given; none: every thread's process is unknown) */
  private lifetimes: ThreadProcesses | null = null;

  constructor(fromTicks: bigint | null, toTicks: bigint | null, processIds: ReadonlySet<number> | null, threadIds: ReadonlySet<number> | null, threads?: Table<'threads'>) {
    this.fromTicks = fromTicks;
    this.toTicks = toTicks;
    this.processIds = processIds;
    this.threadIds = threadIds;
    const [fh, fl] = words(fromTicks ?? INT64_MIN);
    const [th, tl] = words(toTicks ?? INT64_MAX);
    this.fromHi = fh;
    this.fromLo = fl;
    this.toHi = th;
    this.toLo = tl;
    this.empty = fromTicks !== null && toTicks !== null && toTicks <= fromTicks;
    if (threads) this.indexLifetimes(threads);
  }

  /** Whether it selects anything less than the whole trace. */
  get active(): boolean {
    return this.fromTicks !== null || this.toTicks !== null || this.processIds !== null || this.threadIds !== null;
  }

  get hasTime(): boolean {
    return this.fromTicks !== null || this.toTicks !== null;
  }

  /** What it selects, for a report (times in ticks, and ns since the trace start when the clock converts). */
  describe(clock: Clock | null): SelectionSummary {
    const ns = (t: bigint | null) => (t === null || clock === null ? null : clock.toNanoseconds(t));
    const list = (set: ReadonlySet<number> | null) => (set === null ? null : [...set].sort((a, b) => a - b));
    return { fromTicks: this.fromTicks, toTicks: this.toTicks, fromNs: ns(this.fromTicks), toNs: ns(this.toTicks), processIds: list(this.processIds), threadIds: list(this.threadIds) };
  }

  /** Is the timestamp (words) before `from`? */
  before(hi: number, lo: number): boolean {
    return less(hi, lo, this.fromHi, this.fromLo);
  }

  /** Is the timestamp (words) after `to` (false with no `to`)? */
  after(hi: number, lo: number): boolean {
    return this.toTicks !== null && less(this.toHi, this.toLo, hi, lo);
  }

  /** Is process `pid` selected: by the process filter, and with a thread filter, as the process of a selected thread? */
  process(pid: number): boolean {
    if (this.processIds !== null && !this.processIds.has(pid >>> 0)) return false;
    return this.threadIds === null || this.threadProcesses === null || this.threadProcesses.has(pid >>> 0);
  }

  /** Is the timestamp (words) in [from, to)? */
  timeIn(hi: number, lo: number): boolean {
    return !less(hi, lo, this.fromHi, this.fromLo) && (this.toTicks === null || less(hi, lo, this.toHi, this.toLo));
  }

  /**
   * Does [start, end) (words; `openStart`/`openEnd`: unbounded on that side) meet the range? A zero-length
   * interval meets it when its point is in it.
   */
  overlaps(sHi: number, sLo: number, eHi: number, eLo: number, openStart = false, openEnd = false): boolean {
    if (!openEnd) {
      // the end after from (or, empty interval, its point at from or later)
      const pointOnly = !openStart && sHi === eHi && sLo === eLo;
      if (pointOnly) return this.timeIn(sHi, sLo);
      if (!less(this.fromHi, this.fromLo, eHi, eLo)) return false;
    }
    return openStart || this.toTicks === null || less(sHi, sLo, this.toHi, this.toLo);
  }

  /**
   * The part of [start, end) inside the range, as words in `lo`/`hi` (0 when none); false when nothing of
   * the interval is inside it.
   */
  clip(sHi: number, sLo: number, eHi: number, eLo: number): boolean {
    if (less(sHi, sLo, this.fromHi, this.fromLo)) {
      sHi = this.fromHi;
      sLo = this.fromLo;
    }
    if (this.toTicks !== null && less(this.toHi, this.toLo, eHi, eLo)) {
      eHi = this.toHi;
      eLo = this.toLo;
    }
    if (!less(sHi, sLo, eHi, eLo)) {
      this.lo = 0;
      this.hi = 0;
      return false;
    }
    this.lo = (eLo - sLo) | 0;
    this.hi = (eHi - sHi - ((eLo ^ 0x80000000) < (sLo ^ 0x80000000) ? 1 : 0)) | 0;
    return true;
  }

  /** The clipped bounds of [start, end) as bigints (for the few rows a table rewrites). */
  clipBounds(start: bigint, end: bigint): [bigint, bigint] {
    return [this.fromTicks !== null && start < this.fromTicks ? this.fromTicks : start, this.toTicks !== null && end > this.toTicks ? this.toTicks : end];
  }

  /** Is thread `tid` of process `pid` (`pidKnown` 0: unknown) selected by the id filters? */
  ids(tid: number, pid: number, pidKnown: number): boolean {
    if (this.threadIds !== null && !this.threadIds.has(tid >>> 0)) return false;
    return this.processIds === null || (pidKnown !== 0 && this.processIds.has(pid >>> 0));
  }

  /**
   * Is thread `tid`, at the timestamp (words), selected by the id filters? Its process is processOf's.
   */
  thread(tid: number, hi: number, lo: number): boolean {
    if (this.threadIds !== null && !this.threadIds.has(tid >>> 0)) return false;
    if (this.processIds === null) return true;
    const pid = this.processOf(tid, hi, lo);
    return pid !== -1 && this.processIds.has(pid);
  }

  /**
   * The process of thread `tid` at the timestamp (words) from the lifetimes given, -1 if unknown: the rule
   * of the `threads` table (ThreadProcesses, src/derive/lifetimes.ts — the lifetime with the latest start at
   * or before the time; tid 0 → 0).
   */
  processOf(tid: number, hi: number, lo: number): number {
    return this.lifetimes === null ? (tid === 0 ? 0 : -1) : this.lifetimes.at(tid, hi, lo);
  }

  private indexLifetimes(threads: Table<'threads'>): void {
    this.lifetimes = new ThreadProcesses(threads);
    if (this.threadIds === null) return;
    const processes = (this.threadProcesses = new Set<number>());
    const tid = threads.column('threadId');
    const pid = threads.column('processId');
    for (let i = 0; i < threads.length; i++) if (this.threadIds.has(tid[i]!)) processes.add(pid[i]!);
  }
}

/** Does process image file name `image` match a name the user gave (lower case)? */
export function imageMatches(image: string, names: readonly string[]): boolean {
  const base = image.slice(Math.max(image.lastIndexOf('\\'), image.lastIndexOf('/')) + 1).toLowerCase();
  const bare = base.endsWith('.exe') ? base.slice(0, -4) : base;
  return names.some((n) => n === base || n === bare);
}

/**
 * The selection of `options` for a trace: its clock (for times other than raw ticks) and, when processes
 * are selected by name or rows without a process column are to be selected by process, its lifetimes.
 */
export function resolveSelection(
  options: SelectionOptions,
  clock: Clock | null,
  lifetimes?: { threads: Table<'threads'>; processes: Table<'processes'> },
): Selection {
  const from = options.from === undefined ? null : specTicks(options.from, clock, 'from');
  const to = options.to === undefined ? null : specTicks(options.to, clock, 'to');
  const ids = (list: readonly number[] | undefined, what: string): Set<number> | null => {
    if (list === undefined) return null;
    for (const x of list) if (!Number.isInteger(x) || x < 0 || x > 0xffffffff) throw new EtlError('BAD_OPTION', `${what}: expected ids from 0 to 4294967295, got ${x}`);
    return new Set(list);
  };
  let pids = ids(options.processIds, 'processIds');
  if (options.processNames !== undefined) {
    if (!lifetimes) throw new EtlError('BAD_OPTION', 'processNames: selecting processes by name needs the trace\'s processes (decode it first)');
    const names = options.processNames.map((n) => n.trim().toLowerCase()).map((n) => (n.endsWith('.exe') ? n.slice(0, -4) : n));
    const named = new Set<number>();
    const image = lifetimes.processes.column('imageFileName');
    const pid = lifetimes.processes.column('processId');
    for (let i = 0; i < lifetimes.processes.length; i++) if (imageMatches(image[i]!, names)) named.add(pid[i]!);
    pids = pids === null ? named : new Set([...pids, ...named]);
  }
  return new Selection(from, to, pids, ids(options.threadIds, 'threadIds'), lifetimes?.threads);
}
