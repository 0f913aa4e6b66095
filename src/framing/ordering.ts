// The order buffers are decoded in, docs/format.md §A.7: the header buffer first (the trace-wide facts of
// its logfile header, §A.8, hold for every data buffer), then SequenceNumber order, which is time order per
// processor — required to chain compact switches across buffers (§D.8) — and the reads that order
// implies (the load plan).
//
// The plan keeps work linear in the file and memory bounded whatever order the SequenceNumbers claim.
// The file is cut, in file order, into chunks of whole buffers of at most `window` bytes. The engine's
// input holds two chunk slots and one single-buffer region. Walking the decode order, a buffer whose
// chunk is in a slot is decoded from it (a hit); otherwise the plan looks ahead at the stretch of decode
// order that uses only this chunk and one other, and loads the chunk into a slot only if that stretch
// decodes at least a quarter of the chunk's bytes from it (counting a per-read cost for each buffer);
// else the buffer (and the rest of its chunk's buffers in that stretch) is read on its own. So every byte
// loaded is paid for by bytes decoded from that load: bytes read <= 4 x (file size + buffers x
// SINGLE_READ_COST) + the singles, for files in order, in reverse, in two interleaved halves or shuffled.
// The look-ahead visits each decode position at most twice.
import { radixOrder } from '../order.js';
import type { BufferTable } from './buffers.js';

/**
 * What one separate read costs beyond its bytes, in bytes (a system call, an await): a chunk load must be
 * paid for by its bytes decoded plus this per buffer. Small, so that a window is never loaded for one
 * out-of-place buffer (unless windows are tiny: 4 x (buffer + 1 KiB) >= window).
 */
export const SINGLE_READ_COST = 1 << 10;
/** slot number of a buffer read on its own */
export const SINGLE = 2;

/**
 * Moves record 0 — the header buffer: the buffer at file offset 0, whose first event is the logfile header
 * (framing.ts checkFirstBuffer) — to the front of `order` (record indices), the others keeping their order.
 * §A.7 policy: it is decoded first whatever its SequenceNumber, so that the facts of the logfile header
 * (the build's compact bias, NumberOfProcessors, the compressed limit) hold for every data buffer.
 */
export function headerFirst(order: Uint32Array): Uint32Array {
  const k = order.indexOf(0);
  if (k > 0) {
    order.copyWithin(1, 0, k);
    order[0] = 0;
  }
  return order;
}

/**
 * The decode order (§A.7): the header buffer, then SequenceNumber order, stable by file offset: record
 * indices of `t`. Already-sorted input (the common case) costs one pass; dense SequenceNumbers (a range of
 * at most 4 per buffer) a counting sort; otherwise the stable LSD radix sort of src/order.ts on the 64-bit
 * key; a comparison sort for small inputs.
 */
export function decodeOrder(t: BufferTable): Uint32Array {
  return headerFirst(sequenceOrder(t));
}

/** SequenceNumber order, stable by file offset (decodeOrder before the header buffer is moved first). */
export function sequenceOrder(t: BufferTable): Uint32Array {
  const n = t.count;
  const w = t.seqWords;
  const order = new Uint32Array(n);
  for (let i = 0; i < n; i++) order[i] = i;
  let sorted = true;
  for (let i = 1; i < n && sorted; i++) {
    const hiA = w[2 * i - 1]! | 0;
    const hiB = w[2 * i + 1]! | 0;
    sorted = hiA < hiB || (hiA === hiB && w[2 * i - 2]! <= w[2 * i]!);
  }
  if (sorted) return order;
  const fast = sortBySmallKeys(w, n);
  if (fast) return fast;
  if (n < 1024) {
    // a comparison sort: the radix sort's digit tables would cost more than the sort
    const key = (r: number, word: number): number => (word ? w[2 * r + 1]! | 0 : w[2 * r]!);
    return order.sort((a, b) => key(a, 1) - key(b, 1) || key(a, 0) - key(b, 0) || a - b);
  }
  // the 64-bit key as two unsigned words, the sign bit flipped: negative SequenceNumbers first
  const lo = new Uint32Array(n);
  const hi = new Uint32Array(n);
  for (let i = 0; i < n; i++) {
    lo[i] = w[2 * i]!;
    hi[i] = (w[2 * i + 1]! ^ 0x80000000) >>> 0;
  }
  return radixOrder([lo, hi], n);
}

/**
 * SequenceNumber order when the numbers are exact doubles and span a range r with (r + 1) × n < 2^53 (any
 * real trace): each record becomes (its number - the least) × n + its index, and a Float64Array sorts
 * those natively (no comparator, no per-element JavaScript) — the index makes ties keep file order. null
 * when the numbers do not fit.
 */
function sortBySmallKeys(w: Uint32Array, n: number): Uint32Array | null {
  let min = Infinity;
  let max = -Infinity;
  const seq = new Float64Array(n);
  for (let i = 0; i < n; i++) {
    const hi = w[2 * i + 1]! | 0;
    if (hi >= 0x200000 || hi < -0x200000) return null; // |SequenceNumber| >= 2^53
    const v = hi * 0x100000000 + w[2 * i]!;
    seq[i] = v;
    if (v < min) min = v;
    if (v > max) max = v;
  }
  const range = max - min + 1;
  if (range <= 4 * n) {
    // dense SequenceNumbers (the usual case: one per buffer, a few missing): a counting sort, stable by index
    const at = new Uint32Array(range + 1);
    for (let i = 0; i < n; i++) at[seq[i]! - min + 1]!++;
    for (let k = 1; k <= range; k++) at[k]! += at[k - 1]!;
    const order = new Uint32Array(n);
    for (let i = 0; i < n; i++) order[at[seq[i]! - min]!++] = i;
    return order;
  }
  if (range * n >= 2 ** 53) return null;
  for (let i = 0; i < n; i++) seq[i] = (seq[i]! - min) * n + i;
  seq.sort();
  const order = new Uint32Array(n);
  for (let i = 0; i < n; i++) order[i] = seq[i]! % n;
  return order;
}

/** How the decode reads its buffers (see the file comment). */
export interface LoadPlan {
  /** bytes per slot: the largest chunk span */
  window: number;
  /** chunk c holds records [chunkFirst[c], chunkFirst[c + 1]) */
  chunkFirst: Uint32Array;
  /** file range of chunk c: [chunkStart[c], chunkEnd[c]) */
  chunkStart: Float64Array;
  chunkEnd: Float64Array;
  /** per decode position: the slot (0 or 1) its buffer is decoded from, or SINGLE */
  slot: Uint8Array;
  /** loads in decode order: before decoding position loadAt[k], chunk loadChunk[k] goes into slot loadSlot[k] */
  loads: number;
  loadAt: Uint32Array;
  loadChunk: Uint32Array;
  loadSlot: Uint8Array;
  /** load k may be read ahead once decode position loadAfter[k] is done (nothing reads the slot or the input before it) */
  loadAfter: Int32Array;
  /** slots used (0 to 2), buffers read on their own and the largest of them */
  slotsUsed: number;
  singles: number;
  largestSingle: number;
}

/** The load plan for decoding `t` in `order`, with chunks of at most `window` bytes (>= the largest record). */
export function planLoads(t: Pick<BufferTable, 'count' | 'fileOffset' | 'size'>, order: Uint32Array, window: number): LoadPlan {
  const n = t.count;
  const off = t.fileOffset;
  const size = t.size;
  // chunks: whole records in file order, spanning at most `window` bytes
  const firsts: number[] = [];
  const ends: number[] = [];
  for (let r = 0, start = -1; r < n; r++) {
    if (start < 0 || off[r]! + size[r]! - start > window) {
      firsts.push(r);
      ends.push(0);
      start = off[r]!;
    }
    ends[ends.length - 1] = Math.max(ends[ends.length - 1]!, off[r]! + size[r]!);
  }
  const chunks = firsts.length;
  const chunkFirst = new Uint32Array(chunks + 1);
  const chunkStart = new Float64Array(chunks);
  const chunkEnd = Float64Array.from(ends);
  firsts.forEach((r, c) => {
    chunkFirst[c] = r;
    chunkStart[c] = off[r]!;
  });
  chunkFirst[chunks] = n;
  // the chunk of each record (chunks are runs of records; 4 bytes per record while planning)
  const chunkOfRecord = new Uint32Array(n);
  for (let c = 0; c < chunks; c++) chunkOfRecord.fill(c, chunkFirst[c]!, chunkFirst[c + 1]!);
  const chunkOf = (r: number): number => chunkOfRecord[r]!;

  const slot = new Uint8Array(n).fill(0xff);
  const loadAt: number[] = [];
  const loadChunk: number[] = [];
  const loadSlot: number[] = [];
  const loadAfter: number[] = [];
  const resident = [-1, -1];
  const lastUse = [-1, -1];
  let lastSingle = -1;
  let slotsUsed = 0;
  let singles = 0;
  let largestSingle = 0;
  for (let i = 0; i < n; i++) {
    const r = order[i]!;
    const c = chunkOf(r);
    if (slot[i] === SINGLE) {
      singles++;
      largestSingle = Math.max(largestSingle, size[r]!);
      lastSingle = i;
      continue;
    }
    if (resident[0] === c || resident[1] === c) {
      const s = resident[0] === c ? 0 : 1;
      slot[i] = s;
      lastUse[s] = i;
      continue;
    }
    // a miss: look ahead over the stretch that uses only chunk c and one other chunk d
    const span = chunkEnd[c]! - chunkStart[c]!;
    let d = -1;
    let worth = 0;
    let j = i;
    let load = false;
    for (; j < n; j++) {
      const cj = chunkOf(order[j]!);
      if (cj === c) {
        worth += size[order[j]!]! + SINGLE_READ_COST;
        if (4 * worth >= span) {
          load = true;
          break;
        }
      } else if (d < 0) d = cj;
      else if (cj !== d) break;
    }
    if (load) {
      // not the slot holding the other chunk of the stretch; else the one unused for longer
      const s = resident[0] === d && d >= 0 ? 1 : resident[1] === d && d >= 0 ? 0 : lastUse[0] <= lastUse[1] ? 0 : 1;
      loadAt.push(i);
      loadChunk.push(c);
      loadSlot.push(s);
      loadAfter.push(Math.max(lastUse[s]!, lastSingle, loadAt.length > 1 ? loadAt[loadAt.length - 2]! : -1));
      if (resident[s] === -1) slotsUsed++;
      resident[s] = c;
      slot[i] = s;
      lastUse[s] = i;
    } else {
      // too little of the chunk in this stretch: its buffers there are read on their own
      for (let p = i; p < j; p++) if (chunkOf(order[p]!) === c) slot[p] = SINGLE;
      singles++;
      largestSingle = Math.max(largestSingle, size[r]!);
      lastSingle = i;
    }
  }
  let largestChunk = 0;
  for (let c = 0; c < chunks; c++) largestChunk = Math.max(largestChunk, chunkEnd[c]! - chunkStart[c]!);
  return {
    window: largestChunk,
    chunkFirst,
    chunkStart,
    chunkEnd,
    slot,
    loads: loadAt.length,
    loadAt: Uint32Array.from(loadAt),
    loadChunk: Uint32Array.from(loadChunk),
    loadSlot: Uint8Array.from(loadSlot),
    loadAfter: Int32Array.from(loadAfter),
    slotsUsed,
    singles,
    largestSingle,
  };
}
