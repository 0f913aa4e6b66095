// The one independent ETL reader of the test suite, written from format-spec.md (parts A–D) and MS-XCA with
// literal offsets and bit layouts. It deliberately imports nothing from src/ (in particular not
// src/generated/layout or src/writer): a wrong constant there must not be able to hide in the tests.
//
//   little-endian readers          u8 i8 u16 u32 i32 u64 i64
//   MS-XCA Plain LZ77 ("XPRESS")    lz77Decompress (size-aware), lz77DecodeToEndMarker (size-unaware)
//   buffer splitter (A.1–A.6)       splitBuffers, bufferData
//   event walker (B.1–B.4)          walkEvents
//   compact batches (D.2–D.4)       parseCompactBatch
//
// Nothing here asserts: the helpers report what they found (stop reasons, truncation) and the tests decide.

// ---------------------------------------------------------------------------------------------
// little-endian readers (unchecked: out-of-range bytes read as 0)

const b = (a: Uint8Array, o: number): number => a[o] ?? 0;
export const u8 = (a: Uint8Array, o: number): number => b(a, o);
export const i8 = (a: Uint8Array, o: number): number => (b(a, o) << 24) >> 24;
export const u16 = (a: Uint8Array, o: number): number => b(a, o) | (b(a, o + 1) << 8);
export const u32 = (a: Uint8Array, o: number): number =>
  (b(a, o) | (b(a, o + 1) << 8) | (b(a, o + 2) << 16) | (b(a, o + 3) << 24)) >>> 0;
export const i32 = (a: Uint8Array, o: number): number => u32(a, o) | 0;
export const u64 = (a: Uint8Array, o: number): bigint => BigInt(u32(a, o)) | (BigInt(u32(a, o + 4)) << 32n);
export const i64 = (a: Uint8Array, o: number): bigint => BigInt.asIntN(64, u64(a, o));

// ---------------------------------------------------------------------------------------------
// MS-XCA 2.3/2.4 Plain LZ77: 32-bit flag words (MSB first: 0 literal, 1 match); match metadata u16 =
// (offset − 1) << 3 | length code; code 7 continues in a shared nibble (low half first), 15 in a byte,
// 255 in a u16 (0: a u32 follows), lengths from 22 up; minimum match length 3.

export interface Lz77Result {
  out: Uint8Array;
  /** null when the stream decoded cleanly */
  error: string | null;
}

function lz77(src: Uint8Array, outSize: number | null): Lz77Result {
  let out = new Uint8Array(outSize ?? Math.max(64, src.length * 4));
  let op = 0;
  let ip = 0;
  let flags = 0;
  let flagCount = 0;
  let halfByte = -1;
  const fail = (error: string): Lz77Result => ({ out: out.subarray(0, op), error });
  const room = (n: number): void => {
    if (outSize !== null || op + n <= out.length) return;
    const next = new Uint8Array(Math.max(out.length * 2, op + n));
    next.set(out.subarray(0, op));
    out = next;
  };
  while (outSize === null || op < outSize) {
    if (flagCount === 0) {
      if (ip + 4 > src.length) return fail('flag word past input');
      flags = u32(src, ip);
      ip += 4;
      flagCount = 32;
    }
    flagCount--;
    if (((flags >>> flagCount) & 1) === 0) {
      if (ip >= src.length) return fail('literal past input');
      room(1);
      out[op++] = src[ip++]!;
      continue;
    }
    // a match flag with no input left is the end marker (size-unaware decoding)
    if (outSize === null && ip === src.length) return { out: out.subarray(0, op), error: null };
    if (ip + 2 > src.length) return fail('match past input');
    const meta = u16(src, ip);
    ip += 2;
    let len = meta & 7;
    const dist = (meta >>> 3) + 1;
    if (len === 7) {
      if (halfByte < 0) {
        if (ip >= src.length) return fail('nibble past input');
        len = src[ip]! & 15;
        halfByte = ip++;
      } else {
        len = src[halfByte]! >>> 4;
        halfByte = -1;
      }
      if (len === 15) {
        if (ip >= src.length) return fail('length byte past input');
        len = src[ip++]!;
        if (len === 255) {
          if (ip + 2 > src.length) return fail('length u16 past input');
          len = u16(src, ip);
          ip += 2;
          if (len === 0) {
            if (ip + 4 > src.length) return fail('length u32 past input');
            len = u32(src, ip);
            ip += 4;
          }
          if (len < 22) return fail('bad length');
          len -= 22;
        }
        len += 15;
      }
      len += 7;
    }
    len += 3;
    if (dist > op) return fail('offset before start');
    if (outSize !== null && op + len > outSize) return fail('output overflow');
    room(len);
    for (let k = 0; k < len; k++, op++) out[op] = out[op - dist]!;
  }
  return { out: out.subarray(0, op), error: null };
}

/** Size-aware decompression (how ETL buffers are decoded, A.6): exactly `outSize` bytes or an Error. */
export function lz77Decompress(src: Uint8Array, outSize: number): Uint8Array {
  const r = lz77(src, outSize);
  if (r.error !== null) throw new Error(`lz77: ${r.error}`);
  return r.out;
}

/**
 * Size-unaware decompression following MS-XCA 2.4 to the letter: stops at a match flag with no input left
 * (the end marker). Null when the stream is malformed or ends without the end marker.
 */
export function lz77DecodeToEndMarker(src: Uint8Array): Uint8Array | null {
  const r = lz77(src, null);
  return r.error === null ? r.out : null;
}

// ---------------------------------------------------------------------------------------------
// A.1–A.6: WMI_BUFFER_HEADER (0x48 bytes) and the buffers of a file

export interface BufferInfo {
  fileOffset: number;
  /** 0x00 */
  bufferSize: number;
  /** 0x04 */
  savedOffset: number;
  /** 0x08 */
  currentOffset: number;
  /** 0x10 */
  timestamp: bigint;
  /** 0x18 (i64) */
  sequenceNumber: bigint;
  /** A.3: u16 at 0x28 & 0x7FF when BufferFlag 0x20 (PROC_INDEX) is set, else u8 at 0x28 */
  processor: number;
  /** u8 at 0x28 */
  processorU8: number;
  /** u16 at 0x2A */
  loggerId: number;
  /** 0x2C */
  state: number;
  /** 0x30 (the filled size) */
  offset: number;
  /** 0x34 */
  flags: number;
  /** 0x36 */
  type: number;
  /** the buffer as stored in the file (BufferSize bytes) */
  raw: Uint8Array;
}

/** Reads the header fields of the buffer at `raw` (which starts with a WMI_BUFFER_HEADER). */
export function readBufferHeader(raw: Uint8Array, fileOffset = 0): BufferInfo {
  const flags = u16(raw, 0x34);
  return {
    fileOffset,
    bufferSize: u32(raw, 0x00),
    savedOffset: u32(raw, 0x04),
    currentOffset: u32(raw, 0x08),
    timestamp: i64(raw, 0x10),
    sequenceNumber: i64(raw, 0x18),
    processor: flags & 0x20 ? u16(raw, 0x28) & 0x7ff : u8(raw, 0x28),
    processorU8: u8(raw, 0x28),
    loggerId: u16(raw, 0x2a),
    state: u32(raw, 0x2c),
    offset: u32(raw, 0x30),
    flags,
    type: u16(raw, 0x36),
    raw,
  };
}

/**
 * Buffers of a file: the first at 0, the next at start + BufferSize (A.1). Stops before a buffer whose
 * header does not fit, whose BufferSize is below 0x48 or runs past the end; `end` is where it stopped
 * (the file length when every byte belongs to a buffer).
 */
export function splitBuffers(file: Uint8Array): { buffers: BufferInfo[]; end: number } {
  const buffers: BufferInfo[] = [];
  let at = 0;
  while (at + 0x48 <= file.length) {
    const size = u32(file, at);
    if (size < 0x48 || at + size > file.length) break;
    buffers.push(readBufferHeader(file.subarray(at, at + size), at));
    at += size;
  }
  return { buffers, end: at };
}

/**
 * The buffer as the event walk sees it: for a compressed buffer (BufferFlag 0x40, A.6) the header followed
 * by the payload decompressed from file bytes [0x48, BufferSize) to SavedOffset − 0x48 bytes (SavedOffset
 * bytes in all); otherwise the raw buffer.
 */
export function bufferData(buf: BufferInfo): Uint8Array {
  if (!(buf.flags & 0x40)) return buf.raw;
  const data = new Uint8Array(buf.savedOffset);
  data.set(buf.raw.subarray(0, 0x48));
  data.set(lz77Decompress(buf.raw.subarray(0x48), buf.savedOffset - 0x48), 0x48);
  return data;
}

// ---------------------------------------------------------------------------------------------
// B.1–B.4: events of a buffer

export interface ExtendedItem {
  /** offset in the event */
  off: number;
  size: number;
  extType: number;
  linkage: number;
  dataSize: number;
}

export interface EventInfo {
  /** offset in the buffer data */
  off: number;
  marker: number;
  /** B.2 HeaderType (0x0F for MESSAGE) */
  headerType: number;
  /** Size field: header + extended items + data, without alignment padding */
  size: number;
  /** fixed header + extended items: where the event data starts */
  hdr: number;
  /** SYSTEM/COMPACT/PERFINFO: u16 at +6; −1 for the other kinds */
  hookId: number;
  /** SYSTEM/COMPACT/PERFINFO: marker & 0xFF; −1 for the other kinds */
  version: number;
  /** null for MESSAGE */
  timestamp: bigint | null;
  /** EVENT_HEADER extended items (B.3) */
  items: ExtendedItem[];
  /** the event's Size bytes */
  bytes: Uint8Array;
  /** the event data (bytes after hdr) */
  data: Uint8Array;
}

export type WalkStop = 'end' | 'endMarker' | 'badMarker' | 'unknownHeaderType' | 'badSize';

export interface Walk {
  events: EventInfo[];
  /** why the walk stopped: 'end' = fewer than 4 bytes left before `end` */
  stop: WalkStop;
  /** offset where the walk stopped */
  at: number;
}

/** B.1: bytes of PEBS index (0x8000) and PMC counters ((m >> 8) & 7) inserted after a SYSTEM/PERFINFO header */
export const extendedItemBytes = (marker: number): number => (marker & 0x8000 ? 8 : 0) + 8 * ((marker >>> 8) & 7);

/** Walks the events of `data` from `start` (0x48 by default) to `end` (B.4, 8-byte alignment). */
export function walkEvents(data: Uint8Array, end: number, start = 0x48): Walk {
  const events: EventInfo[] = [];
  let off = start;
  const stop = (why: WalkStop): Walk => ({ events, stop: why, at: off });
  while (off + 4 <= end) {
    const m = u32(data, off);
    if (m === 0xffffffff) return stop('endMarker');
    if ((m & 0x80000000) === 0) return stop('badMarker');
    let ht: number;
    let size: number;
    let hdr: number;
    let hookId = -1;
    let version = -1;
    let ts: bigint | null = null;
    const items: ExtendedItem[] = [];
    if (((m >>> 24) & 0xd0) === 0x90) {
      // MESSAGE_TRACE_HEADER: u16 Size, u8 reserved, u8 0x9x flags, u16 MessageNumber, u16 OptionFlags
      ht = 0x0f;
      size = m & 0xffff;
      hdr = 8;
    } else if (m >>> 30 === 3) {
      ht = (m >>> 16) & 0xff;
      if (off + 8 > end) return stop('badSize');
      if (ht >= 0x01 && ht <= 0x04) {
        // SYSTEM (0x20) / COMPACT (0x18): u16 Size @4, HookId @6, TID @8, PID @0xC, timestamp @0x10
        size = u16(data, off + 4);
        hdr = (ht <= 0x02 ? 0x20 : 0x18) + extendedItemBytes(m);
        hookId = u16(data, off + 6);
        version = m & 0xff;
        ts = i64(data, off + 0x10);
      } else if (ht === 0x10 || ht === 0x11) {
        // PERFINFO: u16 Size @4, HookId @6, timestamp @8, then extended items
        size = u16(data, off + 4);
        hdr = 0x10 + extendedItemBytes(m);
        hookId = u16(data, off + 6);
        version = m & 0xff;
        ts = i64(data, off + 8);
      } else if (ht === 0x0a || ht === 0x14) {
        // EVENT_TRACE_HEADER: u16 Size @0, timestamp @0x10
        size = u16(data, off);
        hdr = 0x30;
        ts = i64(data, off + 0x10);
      } else if (ht === 0x0b || ht === 0x15) {
        // EVENT_INSTANCE_GUID_HEADER
        size = u16(data, off);
        hdr = 0x48;
        ts = i64(data, off + 0x10);
      } else if (ht === 0x12 || ht === 0x13) {
        // EVENT_HEADER: u16 Size @0, u16 Flags @4 (bit 0: extended items follow), timestamp @0x10
        size = u16(data, off);
        hdr = 0x50;
        ts = i64(data, off + 0x10);
        if (u16(data, off + 4) & 1) {
          for (;;) {
            if (off + hdr + 8 > end) return stop('badSize');
            const item: ExtendedItem = {
              off: hdr,
              size: u16(data, off + hdr),
              extType: u16(data, off + hdr + 2),
              linkage: u16(data, off + hdr + 4),
              dataSize: u16(data, off + hdr + 6),
            };
            items.push(item);
            if (item.size < 8) return stop('badSize');
            hdr += item.size;
            if (!(item.linkage & 1)) break;
          }
        }
      } else {
        return stop('unknownHeaderType');
      }
    } else {
      return stop('badMarker');
    }
    if (size < hdr || off + size > end) return stop('badSize');
    const bytes = data.subarray(off, off + size);
    events.push({ off, marker: m, headerType: ht, size, hdr, hookId, version, timestamp: ts, items, bytes, data: bytes.subarray(hdr) });
    off += (size + 7) & ~7;
  }
  return stop('end');
}

// ---------------------------------------------------------------------------------------------
// D.2–D.4: PERFINFO_CCSWAP_BUFFER (FirstTimeStamp @0, TidTable u32[16] @8, ThreadBasePriority i8[16] @0x48)
// followed by byte-packed packets, LSB-first bit fields of little-endian words

export interface CompactPacket {
  /** 0 IDLE_SHORT (2 bytes), 1 IDLE (4), 2 LITE (4), 3 FULL (8) */
  type: number;
  bytes: number;
  /** offset in the batch payload */
  off: number;
  delta: number;
  /** TidTable index (LITE/FULL), −1 otherwise */
  idx: number;
  /** OldThreadPriInc (LITE), −1 otherwise */
  inc: number;
  /** OldThreadStateWr (LITE/FULL), −1 otherwise */
  wr: number;
  /** OldThreadPriority (FULL), −1 otherwise */
  pri: number;
  /** NewThreadWaitTime (FULL), −1 otherwise */
  wait: number;
}

export interface CompactBatch {
  first: bigint;
  tids: number[];
  base: number[];
  packets: CompactPacket[];
  /** true when the last packet does not fit before the end of the payload (it is not in `packets`) */
  truncated: boolean;
}

/** Parses the data of a 0x0525 event. `payload` must hold at least the 0x58-byte header. */
export function parseCompactBatch(payload: Uint8Array): CompactBatch {
  const tids: number[] = [];
  const base: number[] = [];
  for (let i = 0; i < 16; i++) tids.push(u32(payload, 0x08 + 4 * i));
  for (let i = 0; i < 16; i++) base.push(i8(payload, 0x48 + i));
  const packets: CompactPacket[] = [];
  let p = 0x58;
  let truncated = false;
  while (p < payload.length) {
    const type = payload[p]! & 3;
    const bytes = [2, 4, 4, 8][type]!;
    if (p + bytes > payload.length) {
      truncated = true;
      break;
    }
    const k: CompactPacket = { type, bytes, off: p, delta: 0, idx: -1, inc: -1, wr: -1, pri: -1, wait: -1 };
    if (type === 0) {
      k.delta = u16(payload, p) >>> 2; // bits 2–15
    } else if (type === 1) {
      k.delta = u32(payload, p) >>> 2; // bits 2–31
    } else if (type === 2) {
      const w = u32(payload, p);
      k.idx = (w >>> 2) & 0xf; // bits 2–5
      k.inc = (w >>> 6) & 0x7; // bits 6–8
      k.wr = (w >>> 9) & 0x3f; // bits 9–14
      k.delta = w >>> 15; // bits 15–31
    } else {
      const w0 = u32(payload, p);
      const w1 = u32(payload, p + 4);
      k.delta = w0 >>> 2; // d0 bits 2–31
      k.idx = w1 & 0xf; // d1 bits 0–3
      k.wr = (w1 >>> 4) & 0x3f; // d1 bits 4–9
      k.pri = (w1 >>> 10) & 0x1f; // d1 bits 10–14
      k.wait = w1 >>> 15; // d1 bits 15–31
    }
    packets.push(k);
    p += bytes;
  }
  return { first: i64(payload, 0), tids, base, packets, truncated };
}
