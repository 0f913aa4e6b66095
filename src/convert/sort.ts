// Row order of a converted part: by (cpu, time) — the order engines prune best on (min/max statistics
// per row group narrow to a few CPUs and a time range). Decoded rows come as per-CPU runs in time order
// (each buffer is one CPU's, in time order: docs/format.md §A.7; cpuUsage rows per CPU in switch-in
// order), so the order is a stable counting partition by cpu, checked per CPU as the rows are placed; only
// a CPU whose times are not in order (a damaged trace, or rows from elsewhere) is sorted by time (stable),
// so the result is exact whatever the input order. The rows then move once: each column scattered to its
// place in one pass, into columns the caller gives or (sortInPlace: a part writer sorting the part it was
// handed) into a scratch copied back.
import { allocColumn, TABLE_COLUMNS, type ColumnChunk, type NumericColumn, type TableName, type TypedColumn } from '../tables/schema.js';

/** The columns a table is sorted by: [cpu column, time column], or null for tables without a cpu. */
export function sortKeys(table: TableName): [number, number] | null {
  const cols = TABLE_COLUMNS[table];
  const cpu = cols.findIndex((c) => c.name === 'cpu');
  const time = cols.findIndex((c) => c.name === 'timestamp' || c.name === 'switchInTime');
  return cpu >= 0 && time >= 0 ? [cpu, time] : null;
}

const MIN32 = -0x80000000;

/** The (cpu, time) sort's scratch, reused from part to part (one per converting thread). */
export class CpuTimeSorter {
  private pos = new Uint32Array(0);
  private next = new Uint32Array(0);
  /** per CPU: the latest time placed (hi, lo ^ MIN32: compared as signed) */
  private lastHi = new Int32Array(0);
  private lastLo = new Int32Array(0);
  private unordered = new Uint8Array(0);

  /**
   * Where each row [0, n) goes in the stable (cpu, time) order (row i to pos[i]), or null when the rows are
   * in that order already. The array is this sorter's scratch: valid until its next call.
   */
  positions(cpu: Uint16Array, time: BigInt64Array, n: number): Uint32Array | null {
    // signed 64-bit compare on the two 32-bit halves (no BigInt per row)
    const w = new Int32Array(time.buffer, time.byteOffset, n * 2);
    let sorted = true;
    let maxCpu = n > 0 ? cpu[0]! : 0;
    for (let i = 1; i < n; i++) {
      const c0 = cpu[i - 1]!;
      const c1 = cpu[i]!;
      if (c1 > maxCpu) maxCpu = c1;
      if (!sorted) continue;
      if (c1 < c0) sorted = false;
      else if (c1 === c0) {
        const h0 = w[2 * i - 1]!;
        const h1 = w[2 * i + 1]!;
        if (h1 < h0 || (h1 === h0 && (w[2 * i]! ^ MIN32) < (w[2 * i - 2]! ^ MIN32))) sorted = false;
      }
    }
    if (sorted) return null;
    const cpus = maxCpu + 1;
    if (this.next.length < cpus + 1) {
      this.next = new Uint32Array(cpus + 1);
      this.lastHi = new Int32Array(cpus);
      this.lastLo = new Int32Array(cpus);
      this.unordered = new Uint8Array(cpus);
    }
    if (this.pos.length < n) this.pos = new Uint32Array(n);
    const pos = this.pos;
    const next = this.next;
    const lastHi = this.lastHi;
    const lastLo = this.lastLo;
    const unordered = this.unordered;
    next.fill(0, 0, cpus + 1);
    unordered.fill(0, 0, cpus);
    lastHi.fill(MIN32, 0, cpus);
    lastLo.fill(MIN32, 0, cpus); // (MIN32, MIN32): the least time, so the first row of a CPU is in order
    for (let i = 0; i < n; i++) next[cpu[i]! + 1]!++;
    for (let c = 1; c <= cpus; c++) next[c]! += next[c - 1]!;
    // each row to its CPU's next place, each CPU's times checked on the way
    let bad = false;
    for (let i = 0; i < n; i++) {
      const c = cpu[i]!;
      pos[i] = next[c]!++;
      const hi = w[2 * i + 1]!;
      const lo = w[2 * i]! ^ MIN32;
      const h0 = lastHi[c]!;
      if (hi < h0 || (hi === h0 && lo < lastLo[c]!)) {
        unordered[c] = 1;
        bad = true;
      }
      lastHi[c] = hi;
      lastLo[c] = lo;
    }
    if (bad) {
      // next[c] is now the end of CPU c's places: its rows are sorted by time (stable) into [end − count, end)
      for (let c = 0; c < cpus; c++) {
        if (unordered[c] === 0) continue;
        const rows: number[] = [];
        for (let i = 0; i < n; i++) if (cpu[i] === c) rows.push(i);
        rows.sort((x, y) => {
          const hx = w[2 * x + 1]!;
          const hy = w[2 * y + 1]!;
          if (hx !== hy) return hx < hy ? -1 : 1;
          const lx = w[2 * x]! ^ MIN32;
          const ly = w[2 * y]! ^ MIN32;
          return lx !== ly ? (lx < ly ? -1 : 1) : x - y;
        });
        const first = next[c]! - rows.length;
        for (let k = 0; k < rows.length; k++) pos[rows[k]!] = first + k;
      }
    }
    return pos.subarray(0, n);
  }

  /** scratch of sortInPlace: one column's cells */
  private scratch = new ArrayBuffer(0);
  private strings: string[] = [];

  /**
   * Rows [0, n) of `table`'s columns put in (cpu, time) order in place: each column scattered into a
   * scratch and copied back (no new columns); false when they were in that order already or the table has
   * no cpu (nothing moved).
   */
  sortInPlace(table: TableName, columns: readonly TypedColumn[], n: number): boolean {
    const keys = sortKeys(table);
    if (!keys || n < 2) return false;
    const pos = this.positions(columns[keys[0]] as Uint16Array, columns[keys[1]] as BigInt64Array, n);
    if (!pos) return false;
    for (const col of columns) {
      if (Array.isArray(col)) {
        if (this.strings.length < n) this.strings = new Array<string>(n);
        scatterStrings(col, this.strings, pos, n);
        for (let k = 0; k < n; k++) col[k] = this.strings[k]!;
        continue;
      }
      const bytes = col.BYTES_PER_ELEMENT * n;
      if (this.scratch.byteLength < bytes) this.scratch = new ArrayBuffer(bytes);
      const tmp = new (col.constructor as new (b: ArrayBuffer, o: number, n: number) => NumericColumn)(this.scratch, 0, n);
      scatterColumn(col, tmp, pos, n);
      new Uint8Array(col.buffer, col.byteOffset, bytes).set(new Uint8Array(this.scratch, 0, bytes));
    }
    this.strings.fill('');
    return true;
  }

  /**
   * Rows [0, n) of `table`'s columns `src` in (cpu, time) order, written into the first n cells of `dst`
   * (columns of the same types); false when `src` is in that order already or the table has no cpu
   * (dst untouched).
   */
  sortInto(table: TableName, src: readonly TypedColumn[], n: number, dst: readonly TypedColumn[]): boolean {
    const keys = sortKeys(table);
    if (!keys || n < 2) return false;
    const pos = this.positions(src[keys[0]] as Uint16Array, src[keys[1]] as BigInt64Array, n);
    if (!pos) return false;
    for (let c = 0; c < src.length; c++) scatterColumn(src[c]!, dst[c]!, pos, n);
    return true;
  }
}

const shared = new CpuTimeSorter();

/** The permutation that orders rows by (cpu, time), stable (order[k]: the row at place k); null when the rows are in that order already. */
export function cpuTimeOrder(cpu: Uint16Array, time: BigInt64Array, length: number): Uint32Array | null {
  const pos = shared.positions(cpu, time, length);
  if (!pos) return null;
  const order = new Uint32Array(length);
  for (let i = 0; i < length; i++) order[pos[i]!] = i;
  return order;
}

/** The chunk's rows in (cpu, time) order, in new columns (the chunk itself when already so, or the table has no cpu). */
export function sortByCpuTime(table: TableName, chunk: ColumnChunk): ColumnChunk {
  const columns = TABLE_COLUMNS[table].map((spec) => allocColumn(spec.type, chunk.length));
  return shared.sortInto(table, chunk.columns, chunk.length, columns) ? { length: chunk.length, columns } : chunk;
}

// The scatter moves cells by element width through one view type each (Uint8/16/32Array; 8-byte cells as two
// 32-bit words): one loop per width sees one array type, where a loop over every column type would be
// megamorphic (~10× slower per cell in V8).
function scatter8(src: Uint8Array, dst: Uint8Array, pos: Uint32Array, n: number): void {
  for (let i = 0; i < n; i++) dst[pos[i]!] = src[i]!;
}
function scatter16(src: Uint16Array, dst: Uint16Array, pos: Uint32Array, n: number): void {
  for (let i = 0; i < n; i++) dst[pos[i]!] = src[i]!;
}
function scatter32(src: Uint32Array, dst: Uint32Array, pos: Uint32Array, n: number): void {
  for (let i = 0; i < n; i++) dst[pos[i]!] = src[i]!;
}
function scatter64(src: Uint32Array, dst: Uint32Array, pos: Uint32Array, n: number): void {
  for (let i = 0; i < n; i++) {
    const p = pos[i]! * 2;
    dst[p] = src[2 * i]!;
    dst[p + 1] = src[2 * i + 1]!;
  }
}
function scatterStrings(src: string[], dst: string[], pos: Uint32Array, n: number): void {
  for (let i = 0; i < n; i++) dst[pos[i]!] = src[i]!;
}

/** dst[pos[i]] = src[i] for i < n (dst a column of the same type, holding at least n cells). */
export function scatterColumn(src: TypedColumn, dst: TypedColumn, pos: Uint32Array, n: number): void {
  if (Array.isArray(src)) return scatterStrings(src, dst as string[], pos, n);
  const d = dst as NumericColumn;
  switch (src.BYTES_PER_ELEMENT) {
    case 1:
      scatter8(new Uint8Array(src.buffer, src.byteOffset, n), new Uint8Array(d.buffer, d.byteOffset, n), pos, n);
      break;
    case 2:
      scatter16(new Uint16Array(src.buffer, src.byteOffset, n), new Uint16Array(d.buffer, d.byteOffset, n), pos, n);
      break;
    case 4:
      scatter32(new Uint32Array(src.buffer, src.byteOffset, n), new Uint32Array(d.buffer, d.byteOffset, n), pos, n);
      break;
    default:
      scatter64(new Uint32Array(src.buffer, src.byteOffset, n * 2), new Uint32Array(d.buffer, d.byteOffset, n * 2), pos, n);
  }
}
