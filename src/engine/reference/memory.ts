// Arena of the reference decoder: everything it writes, the twin of assembly/memory.ts — the output
// columns of every table of the registry (growable typed arrays here, fixed regions there), the
// diagnostic counters and issue log, the per-kind tally, the per-CPU held-back compact switches and the
// logfile-header copy. 8-byte integer columns are written as two u32 words (lo, hi) so no BigInt is
// made per row.
import * as L from '../../generated/layout.js';
import type { IssueLogEntry, KindTally } from '../engine.js';
import {
  allocColumn,
  columnsOf,
  DECODED_TABLE_NAMES,
  perTable,
  TABLE_COLUMNS,
  TABLE_IDS,
  type Chunks,
  type ColumnChunk,
  type DecodedTableName,
  type TableColumns,
  type TypedColumn,
} from '../../tables/schema.js';

/** The rows of one table, written one row at a time: `add()` a row, then write its cells through `view`
 *  (typed arrays by column name; 8-byte integers through `words`). */
export class ColumnBuilder<T extends DecodedTableName = DecodedTableName> {
  length = 0;
  private capacity: number;
  /** the columns in schema order */
  cols: TypedColumn[];
  /** the same columns by name, typed (schema/tables.mjs): remade when the columns grow, so read it after add() */
  view: TableColumns[T];
  /** u32 word views of the 8-byte integer columns (undefined for the others) */
  words: (Uint32Array | undefined)[];

  constructor(
    readonly table: T,
    initialCapacity = 1024,
  ) {
    this.capacity = initialCapacity;
    this.cols = [];
    this.view = columnsOf(table, this.cols);
    this.words = [];
    this.allocate(initialCapacity);
  }

  private allocate(capacity: number): void {
    const specs = TABLE_COLUMNS[this.table];
    const old = this.cols;
    this.cols = specs.map((s) => allocColumn(s.type, capacity));
    this.view = columnsOf(this.table, this.cols);
    this.words = this.cols.map((c) =>
      c instanceof BigInt64Array || c instanceof BigUint64Array ? new Uint32Array(c.buffer) : undefined,
    );
    for (let i = 0; i < old.length; i++) {
      const from = old[i]!;
      const to = this.cols[i]!;
      if (Array.isArray(to)) for (let r = 0; r < this.length; r++) to[r] = (from as string[])[r]!;
      else (to as Uint8Array).set((from as Uint8Array).subarray(0, this.length));
    }
    this.capacity = capacity;
  }

  /** Reserves one row (all cells zero) and returns its index. */
  add(): number {
    if (this.length === this.capacity) this.allocate(this.capacity * 2);
    return this.length++;
  }

  /** Copies the rows out and starts empty again. */
  take(): ColumnChunk {
    const chunk: ColumnChunk = { length: this.length, columns: this.cols.map((c) => c.slice(0, this.length)) };
    this.reset();
    return chunk;
  }

  /** The rows as views (no copy), valid until the builder is used again. */
  peek(): ColumnChunk {
    return { length: this.length, columns: this.cols.map((c) => (Array.isArray(c) ? c.slice(0, this.length) : c.subarray(0, this.length))) };
  }

  /** Zeroes the used rows and starts empty again. */
  reset(): void {
    const length = this.length;
    this.cols.forEach((c, i) => {
      const w = this.words[i];
      if (w) w.fill(0, 0, 2 * length);
      else if (Array.isArray(c)) c.fill('', 0, length);
      else (c as Uint8Array).fill(0, 0, length);
    });
    this.length = 0;
  }
}

/** Per-processor held-back compact switch (§D.8; assembly/memory.ts keeps a slot per processor, laid out
 *  in assembly/compcs.ts): written and emitted by compcs.ts. */
export class PendingSwitches {
  held = new Uint8Array(L.MAX_PROCESSORS);
  tsLo = new Uint32Array(L.MAX_PROCESSORS);
  tsHi = new Int32Array(L.MAX_PROCESSORS);
  oldThreadId = new Uint32Array(L.MAX_PROCESSORS);
  oldThreadPriority = new Int8Array(L.MAX_PROCESSORS);
  oldThreadState = new Uint8Array(L.MAX_PROCESSORS);
  oldThreadWaitReason = new Uint8Array(L.MAX_PROCESSORS);
  newThreadWaitTime = new Uint32Array(L.MAX_PROCESSORS);
  source = new Uint8Array(L.MAX_PROCESSORS);
  valid = new Uint32Array(L.MAX_PROCESSORS);
  fileOffset = new Float64Array(L.MAX_PROCESSORS);
}

/** Everything the reference decoder writes (see the file comment). */
export class Arena {
  /** output builders by table name */
  readonly builders: { readonly [T in DecodedTableName]: ColumnBuilder<T> } = perTable((t) => new ColumnBuilder(t)) as {
    readonly [T in DecodedTableName]: ColumnBuilder<T>;
  };
  /** the same builders by registry table id */
  readonly tables: ColumnBuilder[] = DECODED_TABLE_NAMES.map((t) => this.builders[t]);
  readonly counters = new Array<number>(L.D_COUNTER_COUNT).fill(0);
  readonly log: IssueLogEntry[] = [];
  readonly kinds = new Map<string, KindTally>();
  lastKind: KindTally | null = null;
  readonly pending = new PendingSwitches();
  logfilePayload: Uint8Array | null = null;
  logfilePayloadLength = 0;
  logfilePointerSize = 0;
  logfileTimestamp = 0n;
  headerExtension: Uint32Array | null = null;

  table(id: number): ColumnBuilder {
    return this.tables[id]!;
  }

  drain(): Chunks {
    return perTable((t) => this.tables[TABLE_IDS[t]]!.take());
  }

  peekRows(): Chunks {
    return perTable((t) => this.tables[TABLE_IDS[t]]!.peek());
  }

  resetRows(): void {
    for (const b of this.tables) b.reset();
  }
}

/** Writes the 8 bytes at `at` of `d` as row `row` of a u32-word column. */
export function copy64(d: DataView, at: number, words: Uint32Array, row: number): void {
  words[2 * row] = d.getUint32(at, true);
  words[2 * row + 1] = d.getUint32(at + 4, true);
}

/** A pointer-sized field at `at` of `d` (`pointerSize` 4 or 8) into the 64-bit column `words`, row `row` (two u32 halves). */
export function pointerTo(d: DataView, at: number, pointerSize: number, words: Uint32Array, row: number): void {
  words[2 * row] = d.getUint32(at, true);
  words[2 * row + 1] = pointerSize === 4 ? 0 : d.getUint32(at + 4, true);
}
