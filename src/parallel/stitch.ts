// The coordinator's side of a partitioned decode: takes the partitions' rows and outcomes in decode order
// and makes of them what one engine decoding every buffer in that order produces (src/parallel/partition.ts
// explains the placeholders):
//
// - held-back compact switches: each processor's last switch of the partitions so far is kept (HeldTable);
//   a partition's placeholder row for that processor becomes that switch (new thread as the placeholder
//   has it), or is dropped when no switch was held — as the single engine would emit it, or not, there;
// - the time check against that switch: its issue, logged at its place by the partition, is kept when the
//   switch's time is after the first switch of the partition on that processor, else dropped;
// - counters are summed; issues are concatenated in decode order, the first LOG_CAPACITY kept; kinds are
//   merged in first-seen order, at most KIND_MAX_DISTINCT, the events of later new kinds counted in
//   kindTableFull; the logfile header is the one of the partition that decoded it, the header extension
//   the last one, the bias the last partition's;
// - at the end, every processor's held switch is emitted with newThreadId null (assembly finish()).
//
// When a partition's guess could make a difference it cannot see — the trace-wide state it started from
// differs from the previous partition's end, its kind table ran full having started with fewer kinds than
// the whole decode had there, or a placeholder's issue took the place of a real one in a full log — the
// coordinator decodes it again from the exact state (exactStart()), and that outcome replaces the guessed one.
import * as L from '../generated/layout.js';
import type { EngineState, IssueLogEntry, KindTally } from '../engine/engine.js';
import {
  allocColumn,
  columnsOf,
  emptyChunk,
  perTable,
  TABLE_COLUMNS,
  type Chunks,
  type ColumnChunk,
  type CswitchColumns,
  type DecodedTableName,
  type TypedColumn,
} from '../tables/schema.js';
import type { PartitionOutcome, PartitionStart, PlaceholderMark } from './partition.js';
import { HeldTable, KIND_KEY_WORDS, packKind, sameTraceState, type TraceState } from './state.js';

function kindKey(k: KindTally): string {
  let g = '';
  for (let i = 0; i < 16; i++) g += String.fromCharCode(k.guid[i]!);
  return `${k.headerType},${k.flags},${k.version},${k.id},${k.task},${k.opcode},${g}`;
}

/** The cswitch row `r` of `c` made the held switch of processor `cpu` of `held` (assembly/compcs.ts emitHeld). */
function writeHeldRow(c: CswitchColumns, r: number, held: HeldTable, cpu: number, newThreadId: number | null): void {
  const bytes = held.bytes[cpu]!;
  const source = bytes >>> 24;
  c.timestamp[r] = held.ts[cpu]!;
  c.cpu[r] = cpu;
  if (newThreadId !== null) c.newThreadId[r] = newThreadId;
  c.oldThreadId[r] = held.oldThreadId[cpu]!;
  c.oldThreadPriority[r] = bytes << 24 >> 24;
  c.oldThreadState[r] = (bytes >>> 8) & 0xff;
  c.oldThreadWaitReason[r] = (bytes >>> 16) & 0xff;
  c.newThreadWaitTime[r] = held.waitTime[cpu]!;
  c.newThreadWaitTimeAtMostOneTick[r] = source === L.CS_SOURCE_LITE ? 1 : 0;
  c.source[r] = source;
  c.version[r] = L.CCS_EVENT_VERSION;
  c.fileOffset[r] = held.fileOffset[cpu]!;
  c.valid[r] = newThreadId !== null ? (held.valid[cpu]! | L.CCS_NEXT_VALID) >>> 0 : held.valid[cpu]!;
}

/** `chunk` without the rows in `drop` (ascending). */
function withoutRows(table: DecodedTableName, chunk: ColumnChunk, drop: readonly number[]): ColumnChunk {
  const length = chunk.length - drop.length;
  const columns = TABLE_COLUMNS[table].map((spec, i): TypedColumn => {
    const from = chunk.columns[i]!;
    if (Array.isArray(from)) return from.filter((_, r) => !drop.includes(r));
    const out = allocColumn(spec.type, length) as Uint8Array;
    let at = 0;
    let prev = 0;
    for (const d of [...drop, chunk.length]) {
      out.set((from as Uint8Array).subarray(prev, d), at);
      at += d - prev;
      prev = d + 1;
    }
    return out;
  });
  return { length, columns };
}

/** to[i] += from[i] for i < n (its own small function: the compiler optimizes the loop alone) */
function addTo(to: Float64Array, from: Float64Array, n: number): void {
  for (let i = 0; i < n; i++) to[i] += from[i]!;
}

interface RealIssue {
  logIndex: number;
  entry: IssueLogEntry;
}

export class Stitcher {
  /** each processor's held switch after the partitions taken so far */
  private readonly held = new HeldTable();
  /** the trace-wide state after the partitions taken so far (null: none taken) */
  private trace: TraceState | null = null;
  private readonly counters = new Array<number>(L.D_COUNTER_COUNT).fill(0);
  private readonly log: IssueLogEntry[] = [];
  /** kinds in first-seen order (their counts are in kindCounts/kindBytes), and where each is */
  private readonly kinds: KindTally[] = [];
  private readonly kindIndex = new Map<string, number>();
  private readonly kindCounts = new Float64Array(L.KIND_MAX_DISTINCT);
  private readonly kindBytes = new Float64Array(L.KIND_MAX_DISTINCT);
  /** the key words of `kinds` (state.ts packKind), to seed partitions with */
  private kindKeys = new BigUint64Array(64 * KIND_KEY_WORDS);
  private logfile: PartitionOutcome['logfile'] = null;
  private headerExtension: Uint32Array | null = null;
  private bias = 0;
  /** rows handed on, per table */
  readonly rows = perTable(() => 0);
  // the partition being taken: its placeholders' real issues and the processors whose placeholder was seen
  private partition = 0;
  private issues: RealIssue[] = [];
  private dropped = 0;
  private realChecks = 0;
  private readonly placed = new Uint8Array(L.MAX_PROCESSORS);
  private cswitchRowBase = 0;

  /** Partitions taken so far. */
  get taken(): number {
    return this.partition;
  }

  /** Whether the next partition's guessed trace-wide start is right. */
  startMatches(start: TraceState): boolean {
    return this.trace === null || sameTraceState(this.trace, start);
  }

  /** A guessed start for a later partition: what the partitions taken so far leave, but the held switches. */
  guess(): PartitionStart {
    if (this.trace === null) return { kind: 'fresh' };
    return { kind: 'guess', trace: this.trace, kinds: this.kindsCopy() };
  }

  /** The exact start of the next partition (for a re-run). */
  exactStart(): PartitionStart {
    if (this.trace === null) return { kind: 'fresh' };
    return { kind: 'exact', trace: this.trace, held: this.held.list(), kinds: this.kindsCopy() };
  }

  private kindsCopy(): BigUint64Array {
    return this.kindKeys.slice(0, this.kinds.length * KIND_KEY_WORDS);
  }

  /**
   * Rows of the partition being taken, in its order (call for each rows message): its placeholders made
   * real or dropped. The chunks are changed in place (they are the stitcher's); the cswitch chunk is
   * replaced when a row is dropped.
   */
  rowsOf(chunks: Chunks, marks: readonly PlaceholderMark[]): Chunks {
    const sw = chunks.cswitch;
    const sc = columnsOf('cswitch', sw.columns);
    const base = this.cswitchRowBase;
    this.cswitchRowBase += sw.length;
    const drop: number[] = [];
    for (const m of marks) {
      const c = m.cpu;
      if (this.placed[c]) throw new Error(`partition ${this.partition}: a second placeholder for processor ${c}`);
      this.placed[c] = 1;
      const r = m.row - base;
      const inChunk = r >= 0 && r < sw.length;
      if (!this.held.held[c]) {
        // no switch was held: the single engine emits no row here, and checks no time
        if (inChunk) drop.push(r);
        this.dropped++;
        continue;
      }
      if (inChunk) writeHeldRow(sc, r, this.held, c, sc.newThreadId[r]!);
      if (m.t < this.held.ts[c]!) {
        this.realChecks++;
        if (m.logIndex >= 0) this.issues.push({ logIndex: m.logIndex, entry: { code: L.D_COMPCS_TIME_MISMATCH, detail: L.TIME_BEFORE_PREVIOUS, fileOffset: m.issueAt } });
      }
    }
    return drop.length ? { ...chunks, cswitch: withoutRows('cswitch', sw, drop) } : chunks;
  }

  /**
   * Whether the outcome of a partition that started with placeholders might differ from the single engine's
   * in a way the stitching cannot repair: then decode it again from exactStart() (rows dropped) and take
   * that outcome instead.
   */
  needsExactRun(o: PartitionOutcome): 'kinds' | 'log' | null {
    if (!o.speculative) return null;
    // its kind table ran full without starting as the whole decode's does here: a kind seen before it may
    // have been counted as kindTableFull (a table that starts as the whole decode's fills the same way)
    if (o.counters[L.D_KIND_TABLE_FULL]! > 0 && o.kindSeed < this.kinds.length) return 'kinds';
    return o.logOverflow !== null && this.log.length + o.logOverflow.logIndex < L.LOG_CAPACITY ? 'log' : null;
  }

  /** Ends the partition being taken with its outcome (the speculative one, or the exact re-run's). */
  endPartition(o: PartitionOutcome): void {
    for (let i = 0; i < L.D_COUNTER_COUNT; i++) this.counters[i]! += o.counters[i]!;
    for (const t of Object.keys(o.rows) as DecodedTableName[]) this.rows[t] += o.rows[t];
    // a speculative outcome counts its placeholders as rows and took their checks back; an exact one has
    // neither (its counters and log hold the real checks)
    if (o.speculative) {
      this.rows.cswitch -= this.dropped;
      this.counters[L.D_COMPCS_TIME_MISMATCH]! += this.realChecks;
    }
    this.mergeLog(o.log, o.speculative ? this.issues : []);
    this.mergeKinds(o);
    if (o.logfile) this.logfile = o.logfile;
    if (o.headerExtension) this.headerExtension = o.headerExtension;
    this.bias = o.bias;
    this.trace = o.endTrace;
    this.held.update(o.held);
    this.partition++;
    this.issues = [];
    this.dropped = 0;
    this.realChecks = 0;
    this.placed.fill(0);
    this.cswitchRowBase = 0;
  }

  /** A partition's issues, with the real placeholder checks at their places, after the ones so far. */
  private mergeLog(log: readonly IssueLogEntry[], issues: readonly RealIssue[]): void {
    let ri = 0;
    for (let gi = 0; gi < log.length && this.log.length < L.LOG_CAPACITY; gi++) {
      while (ri < issues.length && issues[ri]!.logIndex <= gi && this.log.length < L.LOG_CAPACITY) this.log.push(issues[ri++]!.entry);
      if (this.log.length < L.LOG_CAPACITY) this.log.push(log[gi]!);
    }
    while (ri < issues.length && issues[ri]!.logIndex <= log.length && this.log.length < L.LOG_CAPACITY) this.log.push(issues[ri++]!.entry);
  }

  /** A partition's kinds: the ones it was seeded with (the first ones here, in order), then the ones it added. */
  private mergeKinds(o: PartitionOutcome): void {
    const counts = this.kindCounts;
    const bytes = this.kindBytes;
    addTo(counts, o.seededCounts, o.kindSeed);
    addTo(bytes, o.seededBytes, o.kindSeed);
    for (const k of o.kinds) {
      const key = kindKey(k);
      let at = this.kindIndex.get(key);
      if (at === undefined) {
        if (this.kinds.length >= L.KIND_MAX_DISTINCT) {
          this.counters[L.D_KIND_TABLE_FULL]! += k.count;
          continue;
        }
        at = this.addKind(k, key);
      }
      counts[at] += k.count;
      bytes[at] += k.bytes;
    }
  }

  private addKind(k: KindTally, key: string): number {
    const at = this.kinds.length;
    if ((at + 1) * KIND_KEY_WORDS > this.kindKeys.length) {
      const more = new BigUint64Array(this.kindKeys.length * 2);
      more.set(this.kindKeys);
      this.kindKeys = more;
    }
    packKind(k, this.kindKeys, at);
    this.kinds.push({ ...k, guid: k.guid.slice(), count: 0, bytes: 0 });
    this.kindIndex.set(key, at);
    return at;
  }

  /** End of input: every processor's held switch, emitted with newThreadId null (assembly finish()). */
  finish(): Chunks {
    const list = this.held.list();
    const n = list.cpu.length;
    const columns = TABLE_COLUMNS.cswitch.map((spec) => allocColumn(spec.type, n));
    const c = columnsOf('cswitch', columns);
    for (let i = 0; i < n; i++) writeHeldRow(c, i, this.held, list.cpu[i]!, null);
    this.counters[L.D_COMPCS_NEW_THREAD_UNKNOWN]! += n;
    this.rows.cswitch += n;
    this.held.held.fill(0);
    return perTable((t) => (t === 'cswitch' ? { length: n, columns } : emptyChunk(t)));
  }

  state(): EngineState {
    return {
      counters: this.counters.slice(),
      log: this.log.slice(),
      kinds: this.kinds.map((k, i) => ({ ...k, count: this.kindCounts[i]!, bytes: this.kindBytes[i]! })),
      logfilePayload: this.logfile?.payload ?? null,
      logfilePayloadLength: this.logfile?.length ?? 0,
      logfilePointerSize: this.logfile?.pointerSize ?? 0,
      logfileTimestamp: this.logfile?.timestamp ?? 0n,
      headerExtension: this.headerExtension,
      bias: this.bias,
    };
  }
}
