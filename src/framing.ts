// Framing, docs/format.md §A.1 and §A.5: buffers follow each other at BufferSize strides. Only the
// 0x48-byte headers are read. A header whose BufferSize is impossible is counted as a corrupt buffer and
// the scan goes forward to the next plausible header (resync), counting the skipped bytes. The first
// buffer must look like a trace's header buffer, or the input gets one clear error.
import * as L from './generated/layout.js';
import { EtlError, hex } from './errors.js';
import { read, readMany, type Steps } from './steps.js';

/** One buffer found in the input. */
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

/** A problem found while framing (an entry of the issue log; code = a D_* counter). */
export interface FramingIssue {
  code: number;
  detail: number;
  fileOffset: number;
}

const HEADER = L.WMI_BUFFER_HEADER_SIZE;
/** bytes read at once while scanning for the next buffer after a corrupt one */
const SCAN_CHUNK = 1 << 20;
/** buffer headers requested at once while framing (see frameBuffers) */
const HEADER_BATCH = 64;

/** What the first bytes look like, when they are a well-known container rather than a trace. */
function hint(h: Uint8Array): string {
  const ascii = String.fromCharCode(...h.subarray(0, 8));
  if (ascii.startsWith('PK\x03\x04')) return ' — this looks like a ZIP archive: extract the .etl file from it first';
  if (ascii.startsWith('MSCF')) return ' — this looks like a CAB archive: extract the .etl file from it first';
  if (h[0] === 0x1f && h[1] === 0x8b) return ' — this looks like gzip data: decompress it first';
  if (/^[\t\n\r\x20-\x7e]{8}$/.test(ascii)) return ' — the file starts with text: is it an ETL trace (.etl) written by WPR, xperf or an ETW session?';
  return ' — is it an ETL trace (.etl) written by WPR, xperf or an ETW session?';
}

/** Checks that the input starts like an ETL file; throws the one clear error otherwise. */
function checkFirstBuffer(h: Uint8Array, size: number): void {
  if (size === 0) throw new EtlError('EMPTY', 'input is empty (0 bytes): expected an ETL file', 0, 'a WMI_BUFFER_HEADER', 'end of input');
  if (h.length < HEADER + 8) {
    throw new EtlError(
      'NOT_ETL',
      `not an ETL file: ${size} bytes is too short for a trace buffer (a WMI_BUFFER_HEADER of 0x48 bytes followed by the logfile header event)${hint(h)}`,
      0,
      '>= 0x50 bytes',
      `${size} bytes`,
    );
  }
  const v = new DataView(h.buffer, h.byteOffset, h.byteLength);
  const bufferSize = v.getUint32(L.BUF_BUFFER_SIZE, true);
  if (bufferSize < HEADER || bufferSize > L.MAX_BUFFER_SIZE || bufferSize > size) {
    throw new EtlError(
      'NOT_ETL',
      `not an ETL file: at offset 0x0 expected a WMI_BUFFER_HEADER whose BufferSize is between 0x48 and ${hex(Math.min(size, L.MAX_BUFFER_SIZE))}, found BufferSize ${hex(bufferSize)}${hint(h)}`,
      0,
      `BufferSize in [0x48, ${hex(Math.min(size, L.MAX_BUFFER_SIZE))}]`,
      hex(bufferSize),
    );
  }
  const marker = v.getUint32(HEADER, true);
  const hookId = v.getUint16(HEADER + L.TH_HOOK_ID, true);
  const kind = marker >>> 16;
  if ((kind !== 0xc001 && kind !== 0xc002) || hookId !== L.HOOK_HEADER) {
    throw new EtlError(
      'NOT_ETL',
      `not an ETL file: at offset 0x48 expected the WMI_LOG_TYPE_HEADER event (marker 0xC002xxxx or 0xC001xxxx, HookId 0x0000), found marker ${hex(marker, 8)} HookId ${hex(hookId, 4)}${hint(h)}`,
      HEADER,
      'marker 0xC0020002/0xC0010002, HookId 0x0000',
      `marker ${hex(marker, 8)}, HookId ${hex(hookId, 4)}`,
    );
  }
}

/** Is there a plausible WMI_BUFFER_HEADER at `at` of `b` (which holds file bytes from `base`)? */
function plausibleHeader(v: DataView, at: number, fileOffset: number, size: number): boolean {
  const bufferSize = v.getUint32(at + L.BUF_BUFFER_SIZE, true);
  if (bufferSize < HEADER || bufferSize > L.MAX_BUFFER_SIZE || fileOffset + bufferSize > size) return false;
  const flags = v.getUint16(at + L.BUF_BUFFER_FLAG, true);
  const type = v.getUint16(at + L.BUF_BUFFER_TYPE, true);
  if ((flags & ~L.BUFFER_FLAG_KNOWN_MASK) !== 0 || type >= L.BUFFER_TYPE_MAXIMUM) return false;
  const saved = v.getUint32(at + L.BUF_SAVED_OFFSET, true);
  if (flags & L.BUFFER_FLAG_COMPRESSED) return saved >= HEADER && saved <= L.MAX_BUFFER_SIZE;
  const filled = v.getUint32(at + L.BUF_OFFSET, true);
  const extentOk = (filled >= HEADER && filled <= bufferSize) || (saved >= HEADER && saved <= bufferSize);
  if (!extentOk) return false;
  const marker = v.getUint32(at + HEADER, true);
  return (marker & L.TRACE_HEADER_FLAG) !== 0;
}

/** Frames the input into buffers. */
export function* frameBuffers(size: number, issues: FramingIssue[], counters: number[]): Steps<BufferRef[]> {
  const first = yield* read(0, HEADER + 8);
  checkFirstBuffer(first, size);
  const refs: BufferRef[] = [];
  let pos = 0;
  let lastProgress = 0;
  // Headers are read ahead in batches, assuming the next buffers have the BufferSize of the last one
  // (they do in practice): one request for HEADER_BATCH headers instead of one round trip each, which
  // for files is most of the framing time. A header read ahead is used only if it sits exactly where the
  // previous buffer ends, so the result is the same as reading them one by one.
  let ahead: Uint8Array[] = [];
  let aheadAt: number[] = [];
  let aheadNext = 0;
  let stride = 0;
  while (pos < size) {
    if (size - pos < HEADER) {
      counters[L.D_TRUNCATED_TAIL_BYTES]! += size - pos;
      break;
    }
    let h: Uint8Array;
    if (aheadNext < aheadAt.length && aheadAt[aheadNext] === pos && ahead[aheadNext]!.length === HEADER) {
      h = ahead[aheadNext++]!;
    } else if (stride >= HEADER) {
      const positions: number[] = [];
      for (let at = pos; positions.length < HEADER_BATCH && at + HEADER <= size; at += stride) positions.push(at);
      ahead = yield* readMany(positions, HEADER);
      aheadAt = positions;
      aheadNext = 1;
      h = ahead[0]!;
    } else {
      h = yield* read(pos, HEADER);
    }
    const v = new DataView(h.buffer, h.byteOffset, h.byteLength);
    const bufferSize = v.getUint32(L.BUF_BUFFER_SIZE, true);
    if (bufferSize >= HEADER && bufferSize <= L.MAX_BUFFER_SIZE && pos + bufferSize <= size) {
      const flags = v.getUint16(L.BUF_BUFFER_FLAG, true);
      refs.push({
        index: refs.length,
        fileOffset: pos,
        size: bufferSize,
        sequenceNumber: v.getBigInt64(L.BUF_SEQUENCE_NUMBER, true),
        cpu:
          flags & L.BUFFER_FLAG_PROC_INDEX
            ? v.getUint16(L.BUF_CLIENT_CONTEXT, true) & L.PROCESSOR_INDEX_MASK
            : v.getUint8(L.BUF_CLIENT_CONTEXT),
        flags,
        type: v.getUint16(L.BUF_BUFFER_TYPE, true),
      });
      pos += bufferSize;
      stride = bufferSize;
      if (pos - lastProgress >= 64 << 20) {
        lastProgress = pos;
        yield { kind: 'progress', phase: 'frame', done: pos, total: size };
      }
      continue;
    }
    stride = 0;
    const reason =
      bufferSize < HEADER ? L.CORRUPT_FRAME_SIZE_SMALL : bufferSize > L.MAX_BUFFER_SIZE ? L.CORRUPT_FRAME_SIZE_LARGE : L.CORRUPT_FRAME_PAST_END;
    counters[L.D_BUFFERS_CORRUPT]!++;
    if (issues.length < L.LOG_CAPACITY) issues.push({ code: L.D_BUFFERS_CORRUPT, detail: reason, fileOffset: pos });
    // resync: scan forward byte by byte for the next plausible buffer header
    let next = -1;
    let scan = pos + 1;
    while (next < 0 && scan + HEADER + 4 <= size) {
      const chunk = yield* read(scan, SCAN_CHUNK + HEADER + 4);
      const cv = new DataView(chunk.buffer, chunk.byteOffset, chunk.byteLength);
      const limit = chunk.length - (HEADER + 4);
      for (let i = 0; i <= limit; i++) {
        if (plausibleHeader(cv, i, scan + i, size)) {
          next = scan + i;
          break;
        }
      }
      if (next < 0) scan += limit + 1;
    }
    const resumeAt = next < 0 ? size : next;
    counters[L.D_RESYNC_BYTES]! += resumeAt - pos;
    pos = resumeAt;
  }
  return refs;
}

