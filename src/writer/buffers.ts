// Data buffers (spec A.2–A.7): one open buffer per processor, flushed when the next event does not fit
// or at the end of the trace; flushed buffers get their WMI_BUFFER_HEADER, optional XPRESS compression
// (A.6) and are put in file order (optionally swapping neighbours, A.7). Browser-safe: no node imports.
import * as L from '../generated/layout.js';
import { BUFFER_STATE_FLUSH } from './logfile.js';
import type { NormalizedOptions } from './logfile.js';
import type { WrittenBuffer } from './types.js';

/** A flushed buffer as it goes to the file. */
export interface Chunk {
  bytes: Uint8Array;
  info: WrittenBuffer;
}

export type Compressor = (input: Uint8Array) => Uint8Array;

/** The open buffer of one processor. Bytes past `off` are zero (fresh buffer) until the flush. */
export class OpenBuffer {
  u8: Uint8Array;
  dv: DataView;
  off = L.WMI_BUFFER_HEADER_SIZE;
  events = 0;
  lastTs = 0n;
  constructor(
    readonly cpu: number,
    size: number,
  ) {
    this.u8 = new Uint8Array(size);
    this.dv = new DataView(this.u8.buffer);
  }
  get empty(): boolean {
    return this.off === L.WMI_BUFFER_HEADER_SIZE;
  }
}

/** Finalises flushed buffers: header fields, 0xFF tail, sequence numbers, compression. */
export class BufferFlusher {
  private seq = 0;
  private readonly o: NormalizedOptions;
  private readonly compressor: Compressor | null;

  constructor(o: NormalizedOptions, compressor: Compressor | null) {
    this.o = o;
    if (o.compress && !compressor) throw new RangeError('compress: no XPRESS compressor available');
    this.compressor = o.compress ? compressor : null;
  }

  /** number of data buffers flushed so far */
  get flushed(): number {
    return this.seq;
  }

  /** Finalises `b` (which must not be empty) and returns its on-disk bytes; `b` gets a fresh buffer. */
  flush(b: OpenBuffer): Chunk {
    const o = this.o;
    const u8 = b.u8;
    const dv = b.dv;
    const filled = b.off;
    const seq = ++this.seq;
    dv.setUint32(L.BUF_BUFFER_SIZE, o.bufferSize, true);
    dv.setUint32(L.BUF_SAVED_OFFSET, filled, true);
    dv.setUint32(L.BUF_CURRENT_OFFSET, filled + o.bufferSize, true);
    dv.setBigInt64(L.BUF_TIMESTAMP, b.lastTs, true);
    dv.setBigInt64(L.BUF_SEQUENCE_NUMBER, BigInt(seq), true);
    if (o.procIndex) dv.setUint16(L.BUF_CLIENT_CONTEXT, b.cpu, true);
    else u8[L.BUF_CLIENT_CONTEXT] = b.cpu;
    dv.setUint16(L.BUF_CLIENT_CONTEXT + 2, o.loggerId, true);
    dv.setUint32(L.BUF_STATE, BUFFER_STATE_FLUSH, true);
    dv.setUint32(L.BUF_OFFSET, filled, true);
    let flags = o.procIndex ? L.BUFFER_FLAG_PROC_INDEX : 0;
    dv.setUint16(L.BUF_BUFFER_TYPE, L.BUFFER_TYPE_GENERIC, true);
    let bytes: Uint8Array;
    if (this.compressor) {
      flags |= L.BUFFER_FLAG_COMPRESSED;
      dv.setUint16(L.BUF_BUFFER_FLAG, flags, true);
      const comp = this.compressor(u8.subarray(L.WMI_BUFFER_HEADER_SIZE, filled));
      bytes = new Uint8Array(L.WMI_BUFFER_HEADER_SIZE + comp.length);
      bytes.set(u8.subarray(0, L.WMI_BUFFER_HEADER_SIZE));
      bytes.set(comp, L.WMI_BUFFER_HEADER_SIZE);
      new DataView(bytes.buffer).setUint32(L.BUF_BUFFER_SIZE, bytes.length, true);
      // reuse the uncompressed buffer
      u8.fill(0);
    } else {
      dv.setUint16(L.BUF_BUFFER_FLAG, flags, true);
      u8.fill(0xff, filled);
      bytes = u8;
      b.u8 = new Uint8Array(o.bufferSize);
      b.dv = new DataView(b.u8.buffer);
    }
    const info: WrittenBuffer = {
      fileOffset: -1,
      size: bytes.length,
      cpu: b.cpu,
      sequenceNumber: seq,
      compressed: this.compressor !== null,
      events: b.events,
      filled,
      timestamp: b.lastTs,
    };
    b.off = L.WMI_BUFFER_HEADER_SIZE;
    b.events = 0;
    return { bytes, info };
  }
}

/**
 * Puts flushed data buffers in file order. With `outOfOrder`, data buffers i and i+1 (0-based flush index,
 * i % 4 == 1) trade places — sequence numbers 1, 3, 2, 4, 5, 7, 6, 8, … as in real files — except that the
 * very last buffer is never moved, so the last buffer of the file is the last one flushed. The last buffer
 * gets BufferFlag FLUSH_MARKER (0x01) at finish(). Holds at most 3 buffers.
 */
export class FileOrder {
  private held: Chunk[] = [];
  private ready: Chunk[] = [];
  private index = 0;
  private heldBase = 0; // flush index of held[0]
  private finished = false;

  constructor(private readonly outOfOrder: boolean) {}

  push(c: Chunk): void {
    if (this.finished) throw new Error('FileOrder: push after finish');
    if (this.held.length === 0) this.heldBase = this.index;
    this.index++;
    this.held.push(c);
    this.drain(false);
  }

  finish(): void {
    if (this.finished) return;
    this.finished = true;
    this.drain(true);
    const last = this.ready[this.ready.length - 1];
    if (last) {
      const flagOff = L.BUF_BUFFER_FLAG;
      const flag = (last.bytes[flagOff] | (last.bytes[flagOff + 1] << 8)) | L.BUFFER_FLAG_FLUSH_MARKER;
      last.bytes[flagOff] = flag & 0xff;
      last.bytes[flagOff + 1] = flag >>> 8;
    }
  }

  /** Buffers whose file position is final, in file order. */
  take(): Chunk[] {
    const r = this.ready;
    this.ready = [];
    return r;
  }

  private release(n: number, swap: boolean): void {
    if (swap) {
      this.ready.push(this.held[1], this.held[0]);
    } else {
      for (let k = 0; k < n; k++) this.ready.push(this.held[k]);
    }
    this.held.splice(0, n);
    this.heldBase += n;
  }

  private drain(final: boolean): void {
    while (this.held.length > 0) {
      const i = this.heldBase;
      if (this.outOfOrder && i % 4 === 1) {
        if (this.held.length >= 3) {
          this.release(2, true); // i+1 exists and is not the last
          continue;
        }
        if (final) {
          this.release(this.held.length, false); // i+1 missing or last: keep order
          continue;
        }
        return;
      }
      if (this.held.length >= 2 || final) {
        this.release(1, false);
        continue;
      }
      return;
    }
  }
}
