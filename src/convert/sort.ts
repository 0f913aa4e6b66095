// Row order of a converted part: by (cpu, time) — the order engines prune best on (min/max statistics
// per row group narrow to a few CPUs and a time range). A stable counting sort by cpu; rows of one CPU
// are already in time order in decode order (docs/format.md §A.7), and a CPU whose times are not is
// sorted by time (stable), so the result is exact whatever the input order.
import { allocColumn, TABLE_COLUMNS, type ColumnChunk, type NumericColumn, type TableName, type TypedColumn } from '../tables/schema.js';

/** The columns a table is sorted by: [cpu column, time column], or null for tables without a cpu. */
export function sortKeys(table: TableName): [number, number] | null {
  const cols = TABLE_COLUMNS[table];
  const cpu = cols.findIndex((c) => c.name === 'cpu');
  const time = cols.findIndex((c) => c.name === 'timestamp' || c.name === 'switchInTime');
  return cpu >= 0 && time >= 0 ? [cpu, time] : null;
}

/** The permutation that orders rows by (cpu, time), stable; null when the rows are in that order already. */
export function cpuTimeOrder(cpu: Uint16Array, time: BigInt64Array, length: number): Uint32Array | null {
  // signed 64-bit compare on the two 32-bit halves (no BigInt per row)
  const hi = new Int32Array(time.buffer, time.byteOffset, length * 2);
  const lo = new Uint32Array(time.buffer, time.byteOffset, length * 2);
  const before = (x: number, y: number): boolean => {
    const hx = hi[2 * x + 1]!;
    const hy = hi[2 * y + 1]!;
    return hx < hy || (hx === hy && lo[2 * x]! < lo[2 * y]!);
  };
  let sorted = true;
  for (let i = 1; i < length && sorted; i++) {
    const c0 = cpu[i - 1]!;
    const c1 = cpu[i]!;
    if (c1 < c0 || (c1 === c0 && before(i, i - 1))) sorted = false;
  }
  if (sorted) return null;
  let maxCpu = 0;
  for (let i = 0; i < length; i++) if (cpu[i]! > maxCpu) maxCpu = cpu[i]!;
  const start = new Uint32Array(maxCpu + 2);
  for (let i = 0; i < length; i++) start[cpu[i]! + 1]!++;
  for (let c = 1; c < start.length; c++) start[c]! += start[c - 1]!;
  const order = new Uint32Array(length);
  const next = start.slice(0, maxCpu + 1);
  for (let i = 0; i < length; i++) order[next[cpu[i]!]!++] = i;
  // within each cpu: time order (stable)
  for (let c = 0; c <= maxCpu; c++) {
    const a = start[c]!;
    const b = start[c + 1]!;
    let inOrder = true;
    for (let k = a + 1; k < b; k++) {
      if (before(order[k]!, order[k - 1]!)) {
        inOrder = false;
        break;
      }
    }
    if (!inOrder) {
      const seg = Array.from(order.subarray(a, b));
      seg.sort((x, y) => (before(x, y) ? -1 : before(y, x) ? 1 : x - y));
      order.set(seg, a);
    }
  }
  return order;
}

/** The chunk's rows in (cpu, time) order (the chunk itself when already so, or the table has no cpu). */
export function sortByCpuTime(table: TableName, chunk: ColumnChunk): ColumnChunk {
  const keys = sortKeys(table);
  if (!keys || chunk.length < 2) return chunk;
  const order = cpuTimeOrder(chunk.columns[keys[0]] as Uint16Array, chunk.columns[keys[1]] as BigInt64Array, chunk.length);
  if (!order) return chunk;
  const specs = TABLE_COLUMNS[table];
  const columns = chunk.columns.map((col, c): TypedColumn => {
    if (Array.isArray(col)) {
      const strings = new Array<string>(order.length);
      for (let k = 0; k < order.length; k++) strings[k] = col[order[k]!]!;
      return strings;
    }
    const out = allocColumn(specs[c]!.type, chunk.length) as NumericColumn;
    permuteColumn(col, out, order);
    return out;
  });
  return { length: chunk.length, columns };
}

// The permutation copies by element width through one view type each (Uint8/16/32Array; 8-byte cells as two
// 32-bit words): one loop per width sees one array type, where a loop over every column type would be
// megamorphic (~10× slower per cell in V8).
function permute8(src: Uint8Array, dst: Uint8Array, order: Uint32Array): void {
  for (let k = 0; k < order.length; k++) dst[k] = src[order[k]!]!;
}
function permute16(src: Uint16Array, dst: Uint16Array, order: Uint32Array): void {
  for (let k = 0; k < order.length; k++) dst[k] = src[order[k]!]!;
}
function permute32(src: Uint32Array, dst: Uint32Array, order: Uint32Array): void {
  for (let k = 0; k < order.length; k++) dst[k] = src[order[k]!]!;
}
function permute64(src: Uint32Array, dst: Uint32Array, order: Uint32Array): void {
  for (let k = 0; k < order.length; k++) {
    const i = order[k]! * 2;
    dst[2 * k] = src[i]!;
    dst[2 * k + 1] = src[i + 1]!;
  }
}

/** dst[k] = src[order[k]] for a numeric column (dst of the same type, order.length cells). */
export function permuteColumn(src: NumericColumn, dst: NumericColumn, order: Uint32Array): void {
  const n = order.length;
  switch (src.BYTES_PER_ELEMENT) {
    case 1:
      permute8(new Uint8Array(src.buffer, src.byteOffset, src.length), new Uint8Array(dst.buffer, dst.byteOffset, n), order);
      break;
    case 2:
      permute16(new Uint16Array(src.buffer, src.byteOffset, src.length), new Uint16Array(dst.buffer, dst.byteOffset, n), order);
      break;
    case 4:
      permute32(new Uint32Array(src.buffer, src.byteOffset, src.length), new Uint32Array(dst.buffer, dst.byteOffset, n), order);
      break;
    default:
      permute64(new Uint32Array(src.buffer, src.byteOffset, src.length * 2), new Uint32Array(dst.buffer, dst.byteOffset, n * 2), order);
  }
}
