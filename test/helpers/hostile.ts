// Hostile inputs of issue 13 ("resource attacks"), built from the writer's output (src/writer): a valid
// header buffer, then buffers crafted to make the decoder work or allocate in proportion to what a header
// claims rather than to what the file holds. Used by test/hostile.test.ts (small sizes, limits asserted on
// work done) and by the `hostile/*` benchmark cases (bench/cases.ts, the sizes of the issue).
// Browser-safe apart from nothing: plain bytes in, bytes out.
import * as L from '../../src/generated/layout.js';
import { writeTrace, type CSwitchSpec, type EventSpec } from '../../src/writer/index.js';

const HEADER = L.WMI_BUFFER_HEADER_SIZE;

/** A CSwitch v2 event on `cpu` (0x28 bytes with its PERFINFO64 header). */
function cswitch(cpu: number, i: number): CSwitchSpec {
  return {
    kind: 'cswitch', cpu, timestamp: 2_000_000n + BigInt(i), version: 2, newThreadId: 100 + i, oldThreadId: 200 + i,
    newThreadPriority: 8, oldThreadPriority: 9, previousCState: 0, newThreadPriorityDecrement: 0, oldThreadWaitReason: 6,
    oldThreadWaitMode: 0, oldThreadState: 5, oldThreadIdealProcessor: 0, newThreadWaitTime: 1, oldThreadRemainingQuantum: 0,
  };
}

interface Template {
  /** the header buffer of a 2-CPU trace, logger BufferSize `bufferSize` */
  header: Uint8Array;
  /** one CSwitch event (header + payload) */
  event: Uint8Array;
}

const templates = new Map<number, Template>();

/** The writer's header buffer and one CSwitch event, for a logger BufferSize of `bufferSize`. */
export function template(bufferSize = 0x1000): Template {
  let t = templates.get(bufferSize);
  if (!t) {
    const w = writeTrace({ numberOfProcessors: 2, bufferSize, outOfOrder: false, events: [cswitch(0, 0)] });
    const data = w.buffers[1]!;
    t = {
      header: w.bytes.slice(0, w.buffers[0]!.size),
      event: w.bytes.slice(data.fileOffset + HEADER, data.fileOffset + data.filled),
    };
    templates.set(bufferSize, t);
  }
  return t;
}

/** Writes a WMI_BUFFER_HEADER at `at` of `dv` (docs/format.md §A.2). */
export function bufferHeader(
  dv: DataView,
  at: number,
  h: { size: number; filled: number; saved?: number; seq: bigint; cpu: number; flags?: number; type?: number },
): void {
  dv.setUint32(at + L.BUF_BUFFER_SIZE, h.size, true);
  dv.setUint32(at + L.BUF_SAVED_OFFSET, h.saved ?? h.filled, true);
  dv.setUint32(at + L.BUF_CURRENT_OFFSET, h.filled, true);
  dv.setBigInt64(at + L.BUF_SEQUENCE_NUMBER, h.seq, true);
  dv.setUint16(at + L.BUF_CLIENT_CONTEXT, h.cpu, true);
  dv.setUint32(at + L.BUF_STATE, 3, true);
  dv.setUint32(at + L.BUF_OFFSET, h.filled, true);
  dv.setUint16(at + L.BUF_BUFFER_FLAG, h.flags ?? L.BUFFER_FLAG_PROC_INDEX, true);
  dv.setUint16(at + L.BUF_BUFFER_TYPE, h.type ?? L.BUFFER_TYPE_GENERIC, true);
}

export type TinyOrder = 'ascending' | 'descending' | 'alternating';

/** Bytes of one tiny buffer: a buffer header and one CSwitch event. */
export const TINY_BUFFER_BYTES = HEADER + 0x28;

/** SequenceNumber of the buffer at file index i (0-based, after the header buffer) of n. */
function tinySeq(order: TinyOrder, i: number, n: number): bigint {
  if (order === 'ascending') return BigInt(i + 1);
  if (order === 'descending') return BigInt(n - i);
  // decode order alternates between the two halves of the file: 1st, (h+1)th, 2nd, (h+2)th, …
  const h = Math.ceil(n / 2);
  return i < h ? BigInt(2 * i + 1) : BigInt(2 * (i - h) + 2);
}

/**
 * The header buffer, then `n` tiny buffers (0x70 bytes: header + one CSwitch v2 event, alternating CPUs 0
 * and 1) whose SequenceNumbers run in `order`. With `corruptAfterEach`, a corrupt 0x48-byte header
 * (BufferSize 0x10) follows every tiny buffer, so framing has to resync after each one.
 */
export function tinyBuffers(n: number, order: TinyOrder = 'ascending', corruptAfterEach = false): Uint8Array {
  const t = template();
  const unit = TINY_BUFFER_BYTES + (corruptAfterEach ? HEADER : 0);
  const out = new Uint8Array(t.header.length + n * unit);
  out.set(t.header);
  const dv = new DataView(out.buffer);
  // one unit, then copied: only the SequenceNumber and processor differ
  const proto = new Uint8Array(unit);
  const pv = new DataView(proto.buffer);
  bufferHeader(pv, 0, { size: TINY_BUFFER_BYTES, filled: TINY_BUFFER_BYTES, seq: 0n, cpu: 0 });
  proto.set(t.event, HEADER);
  if (corruptAfterEach) pv.setUint32(TINY_BUFFER_BYTES + L.BUF_BUFFER_SIZE, 0x10, true);
  for (let i = 0, at = t.header.length; i < n; i++, at += unit) {
    out.set(proto, at);
    dv.setBigInt64(at + L.BUF_SEQUENCE_NUMBER, tinySeq(order, i, n), true);
    dv.setUint16(at + L.BUF_CLIENT_CONTEXT, i & 1, true);
  }
  return out;
}

/**
 * An MS-XCA Plain LZ77 stream that decompresses to `pattern` repeated up to `total` bytes: the pattern as
 * literals, then one match of offset pattern.length and length total - pattern.length (the 32-bit length
 * form). A few bytes more than the pattern, whatever `total` is.
 */
export function xpressRepeat(pattern: Uint8Array, total: number): Uint8Array {
  const p = pattern.length;
  const length = total - p;
  if (p < 1 || p > 8192 || length < 300) throw new RangeError('xpressRepeat: pattern of 1..8192 bytes and total >= pattern + 300');
  const out: number[] = [];
  let flagPos = 0;
  let flags = 0;
  let count = 0;
  out.push(0, 0, 0, 0);
  const putU32 = (at: number, v: number): void => {
    out[at] = v & 0xff;
    out[at + 1] = (v >>> 8) & 0xff;
    out[at + 2] = (v >>> 16) & 0xff;
    out[at + 3] = (v >>> 24) & 0xff;
  };
  const flag = (bit: number): void => {
    flags = ((flags << 1) | bit) >>> 0;
    if (++count === 32) {
      putU32(flagPos, flags);
      flagPos = out.length;
      out.push(0, 0, 0, 0);
      flags = 0;
      count = 0;
    }
  };
  for (const b of pattern) {
    out.push(b);
    flag(0);
  }
  const l = length - 3;
  const m = ((p - 1) << 3) | 7;
  out.push(m & 0xff, m >>> 8, 15, 255); // code 7, nibble 15, byte 255: the explicit length follows
  if (l <= 0xffff) out.push(l & 0xff, l >>> 8);
  else out.push(0, 0, l & 0xff, (l >>> 8) & 0xff, (l >>> 16) & 0xff, (l >>> 24) & 0xff);
  flag(1);
  putU32(flagPos, count === 0 ? 0xffffffff : ((flags << (32 - count)) | (0xffffffff >>> count)) >>> 0);
  return new Uint8Array(out);
}

let compactPatternCache: Uint8Array | undefined;

/** Compact context-switch batch events (whole events, at most 8192 bytes) from a writer trace. */
export function compactPattern(): Uint8Array {
  if (compactPatternCache) return compactPatternCache;
  const events: EventSpec[] = [];
  for (let i = 0; i < 4000; i++) {
    const idle = i % 5 === 0;
    events.push({
      kind: 'compactSwitch', cpu: 0, timestamp: 2_000_000n + BigInt(i * 3), oldThreadId: idle ? 0 : 0x100 + 4 * (i % 7),
      oldThreadPriority: 9, oldThreadBasePriority: 8, oldThreadState: i % 3 === 0 ? 5 : 1, oldThreadWaitReason: 6,
      newThreadWaitTime: i % 40,
    });
  }
  const w = writeTrace({ numberOfProcessors: 1, bufferSize: 0x10000, outOfOrder: false, events });
  const b = w.buffers[1]!;
  const dv = new DataView(w.bytes.buffer);
  // whole events from the start of the first data buffer, as many as fit in 8192 bytes
  const start = b.fileOffset + HEADER;
  let end = start;
  for (;;) {
    if (dv.getUint16(end + L.TH_HOOK_ID, true) !== L.HOOK_COMPCS) throw new Error('compactPattern: not a compact batch');
    const next = end + ((dv.getUint16(end + L.TH_SIZE, true) + 7) & ~7);
    if (next > b.fileOffset + b.filled || next - start > 8192) break;
    end = next;
  }
  compactPatternCache = w.bytes.slice(start, end);
  return compactPatternCache;
}

/**
 * The header buffer (logger BufferSize `bufferSize`), then `count` compressed buffers whose XPRESS stream
 * expands to `expandTo` bytes (SavedOffset = 0x48 + expandTo) of `content`: compact batch events, or zeros.
 */
export function compressedBombs(count: number, expandTo: number, content: 'compact' | 'zeros', bufferSize = 0x10000): Uint8Array {
  const t = template(bufferSize);
  const pattern = content === 'zeros' ? new Uint8Array(1) : compactPattern();
  const total = content === 'zeros' ? expandTo : expandTo - (expandTo % pattern.length);
  const stream = xpressRepeat(pattern, total);
  const size = HEADER + stream.length;
  const out = new Uint8Array(t.header.length + count * size);
  out.set(t.header);
  const dv = new DataView(out.buffer);
  for (let i = 0, at = t.header.length; i < count; i++, at += size) {
    bufferHeader(dv, at, {
      size,
      filled: HEADER + total,
      seq: BigInt(i + 1),
      cpu: 0,
      flags: L.BUFFER_FLAG_PROC_INDEX | L.BUFFER_FLAG_COMPRESSED,
    });
    out.set(stream, at + HEADER);
  }
  return out;
}

/**
 * The header buffer of a writer trace whose logfile header claims a logger BufferSize of `loggerBufferSize`,
 * cut to the bytes it holds (its BufferSize = its Offset rounded up to 8, as the small header buffers of real
 * compressed files are): what a file sets for itself, at the cost of a few hundred bytes.
 */
export function claimingHeader(loggerBufferSize: number): Uint8Array {
  const w = writeTrace({ numberOfProcessors: 2, bufferSize: 0x10000, outOfOrder: false, events: [cswitch(0, 0)] });
  const dv0 = new DataView(w.bytes.buffer);
  const used = (dv0.getUint32(L.BUF_OFFSET, true) + 7) & ~7;
  const header = w.bytes.slice(0, used);
  const dv = new DataView(header.buffer);
  dv.setUint32(L.BUF_BUFFER_SIZE, used, true);
  // TRACE_LOGFILE_HEADER.BufferSize: the payload of the SYSTEM64 header event at 0x48
  dv.setUint32(HEADER + L.SYSTEM_HEADER_SIZE + L.LFH_BUFFER_SIZE, loggerBufferSize, true);
  return header;
}

/** One compact batch event (the first of compactPattern). */
export function compactBatch(): Uint8Array {
  const pattern = compactPattern();
  return pattern.subarray(0, (new DataView(pattern.buffer, pattern.byteOffset).getUint16(L.TH_SIZE, true) + 7) & ~7);
}

/**
 * The decompression bomb of issue 28: a header buffer whose logfile header claims a logger BufferSize of
 * `loggerBufferSize` (16 MiB, the largest ETW accepts), then `count` compressed buffers, each one compact
 * batch (from compactPattern) as literals and one match repeating it up to `expandTo` bytes (default: the
 * logger BufferSize less the buffer header, the most the old cap allowed).
 */
export function headerClaimBombs(count: number, loggerBufferSize = 16 << 20, expandTo = loggerBufferSize - HEADER): Uint8Array {
  const head = claimingHeader(loggerBufferSize);
  const batch = compactBatch();
  const total = expandTo - (expandTo % batch.length);
  const stream = xpressRepeat(batch, total);
  const size = HEADER + stream.length;
  const out = new Uint8Array(head.length + count * size);
  out.set(head);
  const dv = new DataView(out.buffer);
  for (let i = 0, at = head.length; i < count; i++, at += size) {
    bufferHeader(dv, at, { size, filled: HEADER + total, seq: BigInt(i + 1), cpu: i & 1, flags: L.BUFFER_FLAG_PROC_INDEX | L.BUFFER_FLAG_COMPRESSED });
    out.set(stream, at + HEADER);
  }
  return out;
}
