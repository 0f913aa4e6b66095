// Growable column builders for the reference decoder: typed arrays that double when full.
// 8-byte integer columns are written as two u32 words (lo, hi) so no BigInt is made per row.
import { allocColumn, TABLE_COLUMNS, type ColumnChunk, type TableName, type TypedColumn } from '../schema.js';

export class ColumnBuilder {
  length = 0;
  private capacity: number;
  cols: TypedColumn[];
  /** u32 word views of the 8-byte columns (undefined for narrower columns) */
  words: (Uint32Array | undefined)[];

  constructor(
    readonly table: TableName,
    initialCapacity = 1024,
  ) {
    this.capacity = initialCapacity;
    this.cols = [];
    this.words = [];
    this.allocate(initialCapacity);
  }

  private allocate(capacity: number): void {
    const specs = TABLE_COLUMNS[this.table];
    const old = this.cols;
    this.cols = specs.map((s) => allocColumn(s.type, capacity));
    this.words = this.cols.map((c) =>
      c.BYTES_PER_ELEMENT === 8 && !(c instanceof Float64Array) ? new Uint32Array(c.buffer) : undefined,
    );
    if (old.length) {
      for (let i = 0; i < old.length; i++) (this.cols[i] as Uint8Array).set(old[i]!.subarray(0, this.length) as Uint8Array);
    }
    this.capacity = capacity;
  }

  /** Reserves one row and returns its index. */
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
    return { length: this.length, columns: this.cols.map((c) => c.subarray(0, this.length)) };
  }

  /** Zeroes the used rows and starts empty again. */
  reset(): void {
    const length = this.length;
    this.cols.forEach((c, i) => {
      const w = this.words[i];
      if (w) w.fill(0, 0, 2 * length);
      else (c as Uint8Array).fill(0, 0, length);
    });
    this.length = 0;
  }
}
