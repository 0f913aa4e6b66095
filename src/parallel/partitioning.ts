// Where a parallel decode cuts the decode order (docs/format.md §A.7) into partitions, and the job of each.
//
// Partitions are cut while the input is still being framed, betting that buffers far apart in the file are
// in SequenceNumber order (they are, but for buffers a processor flushed late: nearby ones): a cut after
// record r is made once the records framed after it — at least a margin of bytes and records — all sort
// at or after every record before it. The partitions cut so far are decoded while framing goes on. When
// framing ends the bet is checked against the real order (verifyCuts), and the rest of the order is cut
// (guided sizes: shares of what remains, getting smaller, so the decoders finish together).
import type { BufferTable } from '../framing/buffers.js';
import * as L from '../generated/layout.js';
import type { DecodedTableName } from '../tables/schema.js';
import type { PartitionJob, PartitionStart } from './partition.js';
import { headerFirst } from '../framing/ordering.js';

/** Sizes of partitions: the first, then shares of what remains between min and max; the margin of a cut. */
export interface Guide {
  first: number;
  min: number;
  max: number;
  /** bytes and records framed after a speculative cut before it is made */
  margin: number;
  marginRecords: number;
}

export const DEFAULT_GUIDE: Guide = { first: 4 << 20, min: 4 << 20, max: 64 << 20, margin: 8 << 20, marginRecords: 64 };

/** The size of the next partition when `remaining` bytes are left for `decoders` decoders. */
export function shareOf(guide: Guide, remaining: number, decoders: number): number {
  return Math.min(guide.max, Math.max(guide.min, remaining / (2 * decoders)));
}

/** Decode positions [bounds[k], bounds[k + 1]) make partition k: `partitions` of about equal bytes, none empty. */
export function partitionBounds(sizes: Uint32Array, order: Uint32Array, partitions: number): number[] {
  const n = order.length;
  const p = Math.max(1, Math.min(partitions, n));
  let total = 0;
  for (let i = 0; i < n; i++) total += sizes[order[i]!]!;
  const bounds = [0];
  let sum = 0;
  for (let i = 0; i < n - 1 && bounds.length < p; i++) {
    sum += sizes[order[i]!]!;
    // cut after position i once its share is reached (or when the buffers left are just enough), leaving
    // a buffer for each partition still to come
    const left = n - (i + 1);
    const after = p - bounds.length;
    if (left >= after && (sum >= (total * bounds.length) / p || left === after)) bounds.push(i + 1);
  }
  bounds.push(n);
  return bounds;
}

/**
 * Guided partitions of decode positions [from, n): a first one of `guide.first` bytes when from is 0, then
 * shares of what remains (shareOf). Returns the cuts after `from` and the end n.
 */
export function guidedBounds(sizes: Uint32Array, order: Uint32Array, decoders: number, guide: Guide = DEFAULT_GUIDE, from = 0): number[] {
  const n = order.length;
  let remaining = 0;
  for (let i = from; i < n; i++) remaining += sizes[order[i]!]!;
  const bounds = from === 0 ? [0] : [];
  let want = from === 0 ? guide.first : shareOf(guide, remaining, decoders);
  let sum = 0;
  for (let i = from; i < n; i++) {
    const s = sizes[order[i]!]!;
    sum += s;
    remaining -= s;
    if (sum >= want && i + 1 < n) {
      bounds.push(i + 1);
      sum = 0;
      want = shareOf(guide, remaining, decoders);
    }
  }
  bounds.push(n);
  return bounds;
}

/**
 * Records [a, b) of `t` in decode order: the header buffer (record 0) first, then by SequenceNumber, ties in
 * file order (decodeOrder on a range).
 */
export function keySorted(t: BufferTable, a: number, b: number): Uint32Array {
  const ids = new Uint32Array(b - a);
  for (let i = 0; i < ids.length; i++) ids[i] = a + i;
  const w = t.seqWords;
  const less = (x: number, y: number): boolean => {
    const hx = w[2 * x + 1]! | 0;
    const hy = w[2 * y + 1]! | 0;
    return hx < hy || (hx === hy && w[2 * x]! < w[2 * y]!);
  };
  let sorted = true;
  for (let i = 1; i < ids.length && sorted; i++) sorted = !less(ids[i]!, ids[i - 1]!);
  if (sorted) return ids;
  return headerFirst(ids.sort((x, y) => (less(x, y) ? -1 : less(y, x) ? 1 : x - y)));
}

/**
 * Cuts partitions of the records framed so far (see the file comment). update() after each framing step;
 * `cuts` are record indices where partitions after the first start.
 */
export class SpeculativeCuts {
  readonly cuts: number[] = [];
  private scanned = 0;
  /** bytes of the partition being filled, and what it should hold */
  private bytes = 0;
  private want: number;
  /** the cut being tried (record index), or -1 */
  private candidate = -1;
  private marginBytes = 0;
  private marginRecords = 0;
  // largest key before the candidate; smallest and largest key from it (hi: signed high word, lo: low word)
  private maxHi = -Infinity;
  private maxLo = 0;
  private minHi = Infinity;
  private minLo = 0;
  private afterHi = -Infinity;
  private afterLo = 0;

  constructor(
    private readonly table: BufferTable,
    private readonly size: number,
    private readonly decoders: number,
    private readonly guide: Guide,
  ) {
    this.want = guide.first;
  }

  /** Looks at the records framed since the last call; true when a cut was made. */
  update(): boolean {
    const t = this.table;
    const w = t.seqWords;
    const sizes = t.size;
    let made = false;
    for (; this.scanned < t.count; this.scanned++) {
      const r = this.scanned;
      const hi = w[2 * r + 1]! | 0;
      const lo = w[2 * r]!;
      const s = sizes[r]!;
      if (this.candidate < 0) {
        // (the header buffer, record 0, is decoded first whatever its key)
        if (r > 0 && (hi > this.maxHi || (hi === this.maxHi && lo > this.maxLo))) [this.maxHi, this.maxLo] = [hi, lo];
        this.bytes += s;
        if (this.bytes >= this.want) this.try(r + 1);
        continue;
      }
      if (hi < this.minHi || (hi === this.minHi && lo < this.minLo)) [this.minHi, this.minLo] = [hi, lo];
      if (hi > this.afterHi || (hi === this.afterHi && lo > this.afterLo)) [this.afterHi, this.afterLo] = [hi, lo];
      this.marginBytes += s;
      this.marginRecords++;
      if (this.minHi < this.maxHi || (this.minHi === this.maxHi && this.minLo < this.maxLo)) {
        // a record after the candidate sorts before one before it: try again after this record
        if (this.afterHi > this.maxHi || (this.afterHi === this.maxHi && this.afterLo > this.maxLo)) [this.maxHi, this.maxLo] = [this.afterHi, this.afterLo];
        this.bytes += this.marginBytes;
        this.try(r + 1);
      } else if (this.marginBytes >= this.guide.margin && this.marginRecords >= this.guide.marginRecords) {
        this.cuts.push(this.candidate);
        made = true;
        // the records after the cut open the next partition
        if (this.afterHi > this.maxHi || (this.afterHi === this.maxHi && this.afterLo > this.maxLo)) [this.maxHi, this.maxLo] = [this.afterHi, this.afterLo];
        this.bytes = this.marginBytes;
        this.candidate = -1;
        this.want = shareOf(this.guide, this.size - t.fileOffset[this.cuts[this.cuts.length - 1]!]!, this.decoders);
        if (this.bytes >= this.want) this.try(r + 1);
      }
    }
    return made;
  }

  private try(candidate: number): void {
    this.candidate = candidate;
    this.marginBytes = 0;
    this.marginRecords = 0;
    this.minHi = Infinity;
    this.minLo = 0;
    this.afterHi = -Infinity;
    this.afterLo = 0;
  }
}

/**
 * Whether every cut splits the decode order as it splits the file: no record after a cut sorts before one
 * before it (then the records of decode positions [c_k, c_k+1) are those of file records [c_k, c_k+1)).
 */
export function verifyCuts(t: BufferTable, cuts: readonly number[]): boolean {
  if (cuts.length === 0) return true;
  const n = t.count;
  const w = t.seqWords;
  // smallest key from each cut on, scanning back
  const minHi = new Float64Array(cuts.length);
  const minLo = new Float64Array(cuts.length);
  let hi = Infinity;
  let lo = 0;
  let k = cuts.length - 1;
  for (let r = n - 1; r >= 0 && k >= 0; r--) {
    const h = w[2 * r + 1]! | 0;
    const l = w[2 * r]!;
    if (h < hi || (h === hi && l < lo)) [hi, lo] = [h, l];
    while (k >= 0 && cuts[k] === r) {
      minHi[k] = hi;
      minLo[k] = lo;
      k--;
    }
  }
  // largest key before each cut, scanning forward
  hi = -Infinity;
  lo = 0;
  k = 0;
  for (let r = 0; r < n && k < cuts.length; r++) {
    while (k < cuts.length && cuts[k] === r) {
      if (minHi[k]! < hi || (minHi[k] === hi && minLo[k]! < lo)) return false;
      k++;
    }
    const h = w[2 * r + 1]! | 0;
    const l = w[2 * r]!;
    // (the header buffer, record 0, is decoded first whatever its key)
    if (r > 0 && (h > hi || (h === hi && l > lo))) [hi, lo] = [h, l];
  }
  return true;
}

/** The job of partition `partition`: its records `ids` in decode order. */
export function jobOf(
  t: BufferTable,
  ids: Uint32Array,
  partition: number,
  start: PartitionStart,
  inputSize: number,
  options: { bias?: number; windowBytes?: number; drainRows?: number; turns?: boolean },
  ship: readonly DecodedTableName[],
): PartitionJob {
  const n = ids.length;
  let ascending = true;
  for (let i = 1; i < n && ascending; i++) ascending = ids[i - 1]! < ids[i]!;
  const sorted = ascending ? ids.slice() : ids.slice().sort();
  const local = new Uint32Array(n);
  if (ascending) for (let i = 0; i < n; i++) local[i] = i;
  else {
    for (let i = 0; i < n; i++) {
      // the rank of ids[i] in sorted (record indices are distinct)
      let lo = 0;
      let hi = n - 1;
      const v = ids[i]!;
      while (lo < hi) {
        const mid = (lo + hi) >> 1;
        if (sorted[mid]! < v) lo = mid + 1;
        else hi = mid;
      }
      local[i] = lo;
    }
  }
  const fileOffset = new Float64Array(n);
  const size = new Uint32Array(n);
  const cpu = new Uint16Array(n);
  let largest = 0;
  let anyCompressed = false;
  let cutRecord = -1;
  for (let i = 0; i < n; i++) {
    const r = sorted[i]!;
    if (t.lastCut && r === t.count - 1) cutRecord = i;
    fileOffset[i] = t.fileOffset[r]!;
    size[i] = t.size[r]!;
    cpu[i] = t.cpu[r]!;
    largest = Math.max(largest, size[i]!);
    if (t.flags[r]! & L.BUFFER_FLAG_COMPRESSED) anyCompressed = true;
  }
  return { partition, inputSize, fileOffset, size, cpu, order: local, largest, anyCompressed, cutRecord, start, ...options, ship };
}
