// Address → image by time: the one lookup of which image lifetime (a row of `images`, docs/format.md §G.3)
// holds an address of a process at a time — among the images of the process, or first of process 0 (the
// kernel's images: drivers and the kernel, mapped in every process) for a kernel-space address. Used by
// analyzeSamples (analysis/samples.ts) and the pprof writer (output/pprof.ts).
//
// Columnar: the lifetimes sorted by (processId, imageBase) in typed arrays of 32-bit words, a running
// maximum of their ends per process; a lookup is a binary search for the last base <= the address, then a
// walk back over the lifetimes whose range can still hold it (the running maximum bounds it), keeping the
// one whose [loadTime, unloadTime) holds the time (a null bound is open) — the latest loaded when several
// do, then the highest base (the innermost of nested ranges). No allocation, BigInt or closure per lookup.
import * as L from '../generated/layout.js';
import type { Table } from '../tables/table.js';

const UNBOUNDED = 2 ** 32; // above any int32 high word: an open bound of a lifetime

/** a < b for (hi, lo) pairs of numbers, lo unsigned */
function lt(aHi: number, aLo: number, bHi: number, bLo: number): boolean {
  return aHi < bHi || (aHi === bHi && aLo < bLo);
}

export class ImageMap {
  /** rows of `images` in (processId, imageBase) order */
  private readonly row: Int32Array;
  private readonly baseHi: Float64Array;
  private readonly baseLo: Float64Array;
  private readonly endHi: Float64Array;
  private readonly endLo: Float64Array;
  /** the largest end among the lifetimes of the process up to this one (sorted order) */
  private readonly maxEndHi: Float64Array;
  private readonly maxEndLo: Float64Array;
  /** loadTime / unloadTime as (signed high word, unsigned low word); null: ∓UNBOUNDED */
  private readonly loadHi: Float64Array;
  private readonly loadLo: Float64Array;
  private readonly unloadHi: Float64Array;
  private readonly unloadLo: Float64Array;
  /** processId → [first, end) of its lifetimes in the sorted order */
  private readonly spans = new Map<number, [number, number]>();
  /** imageBase of each row of `images` as uint32 words (low, high) */
  private readonly baseWords: Uint32Array;

  constructor(readonly images: Table<'images'>) {
    const n = images.length;
    const pid = images.column('processId');
    const base = images.column('imageBase');
    this.baseWords = new Uint32Array(base.buffer, base.byteOffset, 2 * n);
    const size = images.column('imageSize');
    const load = images.column('loadTime');
    const unload = images.column('unloadTime');
    // sorted once, per image lifetime (thousands): comparing BigInts here is fine
    const order = Array.from({ length: n }, (_, i) => i).sort((a, b) => pid[a]! - pid[b]! || (base[a]! < base[b]! ? -1 : base[a]! > base[b]! ? 1 : a - b));
    this.row = Int32Array.from(order);
    const f = () => new Float64Array(n);
    [this.baseHi, this.baseLo, this.endHi, this.endLo, this.maxEndHi, this.maxEndLo] = [f(), f(), f(), f(), f(), f()];
    [this.loadHi, this.loadLo, this.unloadHi, this.unloadLo] = [f(), f(), f(), f()];
    for (let k = 0; k < n; k++) {
      const i = order[k]!;
      const p = pid[i]!;
      const span = this.spans.get(p);
      if (span) span[1] = k + 1;
      else this.spans.set(p, [k, k + 1]);
      const b = base[i]!;
      const e = b + size[i]!; // may pass 2^64: its high word, a number, is then 2^32 or more
      this.baseHi[k] = Number(b >> 32n);
      this.baseLo[k] = Number(b & 0xffffffffn);
      this.endHi[k] = Number(e >> 32n);
      this.endLo[k] = Number(e & 0xffffffffn);
      const first = !span;
      if (first || lt(this.maxEndHi[k - 1]!, this.maxEndLo[k - 1]!, this.endHi[k]!, this.endLo[k]!)) {
        this.maxEndHi[k] = this.endHi[k]!;
        this.maxEndLo[k] = this.endLo[k]!;
      } else {
        this.maxEndHi[k] = this.maxEndHi[k - 1]!;
        this.maxEndLo[k] = this.maxEndLo[k - 1]!;
      }
      if (images.isNull(L.IM_LOAD_TIME, i)) [this.loadHi[k], this.loadLo[k]] = [-UNBOUNDED, 0];
      else [this.loadHi[k], this.loadLo[k]] = [Number(load[i]! >> 32n), Number(load[i]! & 0xffffffffn)];
      if (images.isNull(L.IM_UNLOAD_TIME, i)) [this.unloadHi[k], this.unloadLo[k]] = [UNBOUNDED, 0];
      else [this.unloadHi[k], this.unloadLo[k]] = [Number(unload[i]! >> 32n), Number(unload[i]! & 0xffffffffn)];
    }
  }

  /**
   * The row of `images` holding address (hi, lo) in process `pid` at time (tHi signed, tLo) — words as
   * numbers, lo unsigned — or -1. A kernel-space address (`kernel`) is looked up in process 0 first.
   */
  find(pid: number, kernel: boolean, hi: number, lo: number, tHi: number, tLo: number): number {
    if (kernel) {
      const k = this.findIn(0, hi, lo, tHi, tLo);
      if (k >= 0 || pid === 0) return k;
    }
    return this.findIn(pid, hi, lo, tHi, tLo);
  }

  /** address - imageBase of row `row` (below the image's size, so exact as a number); address as words */
  offset(row: number, hi: number, lo: number): number {
    return (hi - this.baseWords[2 * row + 1]!) * 2 ** 32 + (lo - this.baseWords[2 * row]!);
  }

  private findIn(pid: number, hi: number, lo: number, tHi: number, tLo: number): number {
    const span = this.spans.get(pid);
    if (!span) return -1;
    const first = span[0];
    let a = first;
    let b = span[1];
    // the last base <= the address
    while (a < b) {
      const mid = (a + b) >>> 1;
      if (lt(hi, lo, this.baseHi[mid]!, this.baseLo[mid]!)) b = mid;
      else a = mid + 1;
    }
    let best = -1;
    for (let k = a - 1; k >= first; k--) {
      // no lifetime at or before k reaches the address
      if (!lt(hi, lo, this.maxEndHi[k]!, this.maxEndLo[k]!)) break;
      if (!lt(hi, lo, this.endHi[k]!, this.endLo[k]!)) continue;
      // loadTime <= t < unloadTime
      if (lt(tHi, tLo, this.loadHi[k]!, this.loadLo[k]!) || !lt(tHi, tLo, this.unloadHi[k]!, this.unloadLo[k]!)) continue;
      if (best < 0 || lt(this.loadHi[best]!, this.loadLo[best]!, this.loadHi[k]!, this.loadLo[k]!)) best = k;
    }
    return best < 0 ? -1 : this.row[best]!;
  }
}
