// The buffers framed in the input (framing.ts), one compact record each: parallel typed arrays instead of
// an object per buffer, so a file of millions of tiny buffers costs 26 bytes per buffer, not an object's
// 100-250 (docs/format.md §A.1). BufferTable is what framing fills and the decode reads; BufferList is the
// read-only public view of a result's `buffers`.
import * as L from '../generated/layout.js';

/** One buffer found in the input (BufferList.get). */
export interface BufferRef {
  /** position in file order */
  index: number;
  fileOffset: number;
  size: number;
  sequenceNumber: bigint;
  cpu: number;
  flags: number;
  type: number;
}

/** Bytes of one record: fileOffset f64, size u32, SequenceNumber i64, processor, BufferFlag, BufferType u16. */
export const BUFFER_RECORD_BYTES = 8 + 4 + 8 + 2 + 2 + 2;

/** The records framing appends, in file order (growable). */
export class BufferTable {
  /** records: the whole buffers, then the cut last buffer of a truncated input, if any */
  count = 0;
  /** whether the last record is a buffer cut short by the end of the input (its size = the bytes present) */
  lastCut = false;
  /** largest record size so far, unless a correction made it stale (see largest) */
  private widest = 0;
  private widestStale = false;
  /** some record is a compressed buffer */
  anyCompressed = false;
  fileOffset: Float64Array;
  size: Uint32Array;
  seq: BigInt64Array;
  /** the same memory as `seq`, as u32 words: low word of record i at 2i, high word at 2i + 1 */
  seqWords: Uint32Array;
  cpu: Uint16Array;
  flags: Uint16Array;
  type: Uint16Array;

  constructor(capacity = 64) {
    this.fileOffset = new Float64Array(capacity);
    this.size = new Uint32Array(capacity);
    this.seq = new BigInt64Array(capacity);
    this.seqWords = new Uint32Array(this.seq.buffer);
    this.cpu = new Uint16Array(capacity);
    this.flags = new Uint16Array(capacity);
    this.type = new Uint16Array(capacity);
  }

  /** whole buffers (the public list) */
  get whole(): number {
    return this.lastCut ? this.count - 1 : this.count;
  }

  /** records the arrays hold */
  get capacity(): number {
    return this.fileOffset.length;
  }

  /** Makes room for `n` records in all (framing's estimate from the stride: exact for uniform files). */
  reserve(n: number): void {
    if (n > this.fileOffset.length) this.grow(n);
  }

  private grow(cap = this.fileOffset.length * 2): void {
    const more = <T extends Float64Array | Uint32Array | BigInt64Array | Uint16Array>(a: T, make: (n: number) => T): T => {
      const b = make(cap);
      (b as Uint32Array).set(a as Uint32Array);
      return b;
    };
    this.fileOffset = more(this.fileOffset, (n) => new Float64Array(n));
    this.size = more(this.size, (n) => new Uint32Array(n));
    this.seq = more(this.seq, (n) => new BigInt64Array(n));
    this.seqWords = new Uint32Array(this.seq.buffer);
    this.cpu = more(this.cpu, (n) => new Uint16Array(n));
    this.flags = more(this.flags, (n) => new Uint16Array(n));
    this.type = more(this.type, (n) => new Uint16Array(n));
  }

  /**
   * Appends the buffer whose WMI_BUFFER_HEADER is at `at` of `v`, at file offset `fileOffset`, `size`
   * bytes in the input (its BufferSize, or the bytes present when `cut`).
   */
  push(v: DataView, at: number, fileOffset: number, size: number, cut: boolean): void {
    if (this.count === this.fileOffset.length) this.grow();
    const i = this.count++;
    const flags = v.getUint16(at + L.BUF_BUFFER_FLAG, true);
    this.fileOffset[i] = fileOffset;
    this.size[i] = size;
    this.seqWords[2 * i] = v.getUint32(at + L.BUF_SEQUENCE_NUMBER, true);
    this.seqWords[2 * i + 1] = v.getUint32(at + L.BUF_SEQUENCE_NUMBER + 4, true);
    this.cpu[i] =
      flags & L.BUFFER_FLAG_PROC_INDEX ? v.getUint16(at + L.BUF_CLIENT_CONTEXT, true) & L.PROCESSOR_INDEX_MASK : v.getUint8(at + L.BUF_CLIENT_CONTEXT);
    this.flags[i] = flags;
    this.type[i] = v.getUint16(at + L.BUF_BUFFER_TYPE, true);
    this.lastCut = cut;
    if (size > this.widest) this.widest = size;
    if (flags & L.BUFFER_FLAG_COMPRESSED) this.anyCompressed = true;
  }

  /** Sets the size of the last record (framing corrected its BufferSize, docs/format.md §A.1). */
  correctLast(size: number): void {
    const i = this.count - 1;
    if (this.size[i] === this.widest) this.widestStale = true;
    this.size[i] = size;
  }

  /** largest record size */
  get largest(): number {
    if (this.widestStale) {
      let w = 0;
      for (let i = 0; i < this.count; i++) if (this.size[i]! > w) w = this.size[i]!;
      this.widest = w;
      this.widestStale = false;
    }
    return this.widest;
  }

  /** The public list of the whole buffers: the arrays themselves when they are nearly full, else trimmed copies. */
  list(): BufferList {
    const n = this.whole;
    const exact = this.fileOffset.length - n <= n / 8;
    const cut = <T extends Float64Array | Uint32Array | BigInt64Array | Uint16Array>(a: T): T => (exact ? a.subarray(0, n) : a.slice(0, n)) as T;
    return new BufferList(cut(this.fileOffset), cut(this.size), cut(this.seq), cut(this.cpu), cut(this.flags), cut(this.type));
  }
}

/**
 * Every whole buffer framed in the input, in file order, as columns (typed arrays, 26 bytes per buffer):
 * `fileOffset`, `size` (BufferSize; less when it claimed the header of another buffer, docs/format.md §A.1 —
 * see `buffersSizeCorrected`), `sequenceNumber`, `cpu` (processor, docs/format.md §A.3), `flags`
 * (BufferFlag) and `type` (BufferType). `get(i)` and iteration give one BufferRef object per buffer.
 * A buffer cut short by the end of a truncated input is not listed (see `buffersTruncated`).
 */
export class BufferList implements Iterable<BufferRef> {
  constructor(
    readonly fileOffset: Float64Array,
    readonly size: Uint32Array,
    readonly sequenceNumber: BigInt64Array,
    readonly cpu: Uint16Array,
    readonly flags: Uint16Array,
    readonly type: Uint16Array,
  ) {}

  get length(): number {
    return this.fileOffset.length;
  }

  /** Buffer `i` (0-based, file order) as an object; undefined past the end. */
  get(i: number): BufferRef | undefined {
    if (!Number.isInteger(i) || i < 0 || i >= this.length) return undefined;
    return {
      index: i,
      fileOffset: this.fileOffset[i]!,
      size: this.size[i]!,
      sequenceNumber: this.sequenceNumber[i]!,
      cpu: this.cpu[i]!,
      flags: this.flags[i]!,
      type: this.type[i]!,
    };
  }

  *[Symbol.iterator](): Iterator<BufferRef> {
    for (let i = 0; i < this.length; i++) yield this.get(i)!;
  }

  /** Every buffer as an object (for small traces; large ones are cheaper through the columns). */
  toArray(): BufferRef[] {
    return [...this];
  }
}
