// The rows of one table on their way into part files (convert-file.ts): each chunk's rows are copied into
// this table's staging columns as they arrive (the decode's rows may be borrowed: nothing of a chunk is
// kept), and every partRows rows become a part: the staging columns handed as they are to the part writers
// (part-writers.ts), which put the rows in (cpu, time) order (sort.ts) — on a worker thread, whose time is
// spare, rather than this one — write them, and give the columns back (a worker takes their buffers over
// and returns them). Those column sets are reused for later parts, so a steady conversion allocates no
// columns: per table, the staging set, the sets of the parts being written and at most IDLE_SETS idle ones.
import { join } from 'node:path';
import { mkdir } from 'node:fs/promises';
import { allocColumn, bytesOf, emptyChunk, TABLE_COLUMNS, viewColumn, type ColumnChunk, type ColumnSpec, type NumericColumn, type NumericColumnType, type TableName, type TypedColumn } from '../tables/schema.js';
import { partFile } from './dataset.js';
import type { PartWriters } from './part-writers.js';

/** Column sets kept for reuse per table beyond those in use. */
const IDLE_SETS = 1;
/** The first staging set's rows (made GROWTH times larger as more are pending, up to partRows). */
const FIRST_ROWS = 1 << 12;
/**
 * How much larger a staging set that filled up is made. Its rows are copied into the new one, and a
 * column's first write to fresh memory costs about 3× a write to memory already used (the page faults):
 * doubling copied every row of a large table's first part once more (1 Mi rows: 1 Mi copied on the way),
 * growing 8× copies a seventh of that. The cells never written cost nothing (the pages of a fresh buffer
 * are mapped when first written), so a set 8× its rows costs no more memory than one 2× its rows.
 */
const GROWTH = 8;

/** The first `n` cells of a column (a view: no copy). */
function head(c: TypedColumn, n: number): TypedColumn {
  if (c.length === n) return c;
  return Array.isArray(c) ? c.slice(0, n) : (c.subarray(0, n) as NumericColumn);
}

/** Copies rows [from, from + n) of `src` into `dst` at row `at` (columns of the same types). */
function copyRows(src: readonly TypedColumn[], from: number, n: number, dst: readonly TypedColumn[], at: number): void {
  for (let c = 0; c < src.length; c++) {
    const s = src[c]!;
    if (Array.isArray(s)) {
      const d = dst[c] as string[];
      for (let k = 0; k < n; k++) d[at + k] = s[from + k]!;
    } else (dst[c] as Uint8Array).set((s as Uint8Array).subarray(from, from + n), at);
  }
}

/** One table's rows on their way into part files (see the file comment). */
export class Parts {
  /** rows waiting for the next part, in columns of `capacity` cells; null until the first row */
  private staging: TypedColumn[] | null = null;
  private capacity = 0;
  /** the largest staging yet: a new staging set (after one went out as a part) is made this size at once */
  private wanted = FIRST_ROWS;
  private pending = 0;
  /** column sets given back by the writers, for a later staging or part */
  private readonly idle: TypedColumn[][] = [];
  private readonly specs: readonly ColumnSpec[];
  /** the sizes of the parts handed to the writers */
  private sizes: Promise<number>[] = [];
  rows = 0;
  files = 0;
  bytes = 0;

  constructor(
    private readonly table: TableName,
    private readonly dir: string,
    private readonly writers: PartWriters,
    private readonly ext: string,
    private readonly partRows: number,
  ) {
    this.specs = TABLE_COLUMNS[table];
  }

  /** Copies the rows of a chunk (borrowed is fine: nothing of it is kept after this resolves); writes a part whenever partRows rows are pending. */
  async add(chunk: ColumnChunk): Promise<void> {
    let at = 0;
    while (at < chunk.length) {
      const take = Math.min(chunk.length - at, this.partRows - this.pending);
      this.reserve(this.pending + take);
      copyRows(chunk.columns, at, take, this.staging!, this.pending);
      this.pending += take;
      at += take;
      if (this.pending >= this.partRows) await this.flush();
    }
  }

  /**
   * Takes a chunk the caller owns and can do without until `giveBack` returns its columns (a deriver's
   * chunk, made for this: derivers in a conversion make chunks of partRows rows). With no rows pending
   * it becomes a part as it is — no copy into staging columns — and its columns go back to the caller
   * once written; else its rows are copied like add()'s and the columns go back at once.
   */
  async adopt(chunk: ColumnChunk, giveBack: (columns: readonly TypedColumn[]) => void): Promise<void> {
    if (this.pending > 0 || chunk.length === 0 || chunk.length > this.partRows) {
      await this.add(chunk);
      giveBack(chunk.columns);
      return;
    }
    await this.send(chunk, giveBack);
  }

  /** Staging room for `rows` rows (the pending ones kept). */
  private reserve(rows: number): void {
    if (rows <= this.capacity) return;
    const set = this.take(Math.min(this.partRows, Math.max(rows, GROWTH * this.capacity, this.wanted)));
    if (this.staging !== null && this.pending > 0) copyRows(this.staging, 0, this.pending, set, 0);
    this.staging = set;
    this.capacity = set[0]!.length;
    this.wanted = Math.max(this.wanted, this.capacity);
  }

  /** A column set of at least `rows` cells: an idle one, or new. */
  private take(rows: number): TypedColumn[] {
    const k = this.idle.findIndex((s) => s[0]!.length >= rows);
    if (k >= 0) return this.idle.splice(k, 1)[0]!;
    return this.specs.map((s) => allocColumn(s.type, rows));
  }

  /** A set's columns as the writers give them back (views of the part's rows), whole again: views of their buffers. */
  private whole(columns: readonly TypedColumn[]): TypedColumn[] {
    return columns.map((c, i): TypedColumn => {
      if (Array.isArray(c)) return c;
      const type = this.specs[i]!.type as NumericColumnType;
      return viewColumn(type, c.buffer, 0, c.buffer.byteLength / bytesOf(type)) as TypedColumn;
    });
  }

  /** Keeps a set for reuse (up to IDLE_SETS). */
  private keep(set: TypedColumn[]): void {
    if (this.idle.length < IDLE_SETS) this.idle.push(set);
  }

  private async flush(): Promise<void> {
    const n = this.pending;
    this.pending = 0;
    let chunk: ColumnChunk;
    let part: TypedColumn[] | null = null;
    if (n === 0) chunk = emptyChunk(this.table);
    else {
      // the staging columns go (the writers sort them), the next rows get another set
      part = this.staging!;
      this.staging = null;
      this.capacity = 0;
      chunk = { length: n, columns: part.map((c) => head(c, n)) };
    }
    const whole = part;
    // string columns are copied to a worker, not handed over: the set's own arrays are ours again at once
    await this.send(chunk, whole === null ? undefined : (columns) => this.keep(this.whole(columns.map((c, i) => (Array.isArray(c) ? whole[i]! : c)))));
  }

  /** Hands a part to the writers: an owned chunk when `giveBack` is given (the columns come back through it), else an empty one. */
  private async send(chunk: ColumnChunk, giveBack?: (columns: readonly TypedColumn[]) => void): Promise<void> {
    if (this.files === 0) await mkdir(this.dir, { recursive: true });
    const { size } = await this.writers.write(join(this.dir, partFile(this.files, this.ext)), this.table, chunk, giveBack !== undefined, giveBack);
    this.sizes.push(size);
    this.files++;
    this.rows += chunk.length;
  }

  /** Hands over what is pending as the last part (a table without rows still gets an empty part-0: its schema). */
  async end(): Promise<void> {
    if (this.pending > 0 || this.files === 0) await this.flush();
  }

  /** Ends the table and waits until every part is written. */
  async finish(): Promise<void> {
    await this.end();
    for (const size of this.sizes.splice(0)) this.bytes += await size;
  }
}

/**
 * Ends every table and waits until all their parts are written: each table's last part is handed to the
 * writers before any is awaited, so the writers take the parts left at the end side by side (a table's
 * finish() awaited before the next table's last part went out kept one worker writing, the others idle).
 */
export async function finishParts(parts: Iterable<Parts>): Promise<void> {
  const all = [...parts];
  for (const p of all) await p.end();
  for (const p of all) await p.finish();
}
