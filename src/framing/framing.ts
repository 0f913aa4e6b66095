// Framing, docs/format.md §A.1 and §A.5: buffers follow each other at BufferSize strides. Only the
// 0x48-byte headers are read (in batches, or from one contiguous read when buffers are small). A header
// whose BufferSize is impossible is counted as a corrupt buffer and the scan goes forward to the next
// plausible header (resync), counting the skipped bytes; the scan reuses what it read (a window that
// slides forward) and skips runs of zero bytes word by word, so it costs one pass over the bytes it
// skips, however many corrupt headers there are. A buffer cut short by the end of the input is the
// truncation of the file: it is recorded (its events that fit are decoded) and its bytes counted as
// truncatedTailBytes. A BufferSize above the usual size (the logger's, from the logfile header), another
// than the size of the buffer before it, or followed by no plausible header (the end of the input included)
// or by a header not plausible or above the usual size (checked first: a shifted copy of the next header
// passes for one), or in a header whose BufferFlag or BufferType is none a buffer has (all its bytes scanned
// then), is a claim to check: the bytes it covers after the buffer's data are scanned for the header of
// another buffer, and when there is one the buffer is framed up to it (§A.1 "size
// claims"), so one flipped bit never hides the buffers behind it. The first buffer must look like a
// trace's header buffer, or the input gets one clear error. Work is linear in the input; memory is one
// record per buffer (buffers.ts) and one window.
import { BufferTable } from './buffers.js';
import * as L from '../generated/layout.js';
import { EtlError, hex } from '../errors.js';
import { load, prefetch, read, readMany, type Steps } from '../decode/steps.js';

/** A problem found while framing (an entry of the issue log; code = a D_* counter). */
export interface FramingIssue {
  code: number;
  detail: number;
  fileOffset: number;
}

const HEADER = L.WMI_BUFFER_HEADER_SIZE;
/** bytes a resync candidate needs: the header and the first event's marker */
const CANDIDATE = HEADER + 4;
/** buffer headers requested at once while framing (see frameBuffers), unless the source asks for another number */
export const HEADER_BATCH = 64;
/** buffers this small are framed from contiguous reads of CONTIGUOUS_READ bytes, not a read per header */
const SMALL_STRIDE = 0x2000;
const CONTIGUOUS_READ = 256 << 10;
/**
 * Buffers of varying sizes (compressed buffers) defeat the batches, which guess that the next buffer has
 * the size of the last: after a batch whose guess failed at once, headers come from contiguous reads of
 * 16 buffers of the last size, between VARIABLE_READ_MIN and VARIABLE_READ_MAX bytes, until STABLE_RUN
 * buffers in a row have one size again.
 */
const VARIABLE_READ_MIN = 1 << 20;
const VARIABLE_READ_MAX = 4 << 20;
const STABLE_RUN = 8;
/** the first batch of a run of buffers; the next ones double up to the batch size */
const FIRST_BATCH = 16;
/** resync reads: the first SCAN_FIRST bytes, each further one twice as long, up to SCAN_MAX */
const SCAN_FIRST = 64 << 10;
const SCAN_MAX = 4 << 20;
/** a header one stride on is read with the bytes before it (the scan's first read) when it is this close */
const STRIDE_READ = 2 * SCAN_FIRST;
/** headers a claim check looks for at the usual stride before the claiming buffer's data end */
const STRIDE_PROBES = 4;
/** the first read: the header buffer's WMI_BUFFER_HEADER and its logfile header event up to BufferSize (§A.8) */
const FIRST_READ = HEADER + L.SYSTEM_HEADER_SIZE + 64 + 4;
/** a progress step every this many bytes framed or scanned */
const PROGRESS_EVERY = 64 << 20;

/** What the first bytes look like, when they are a well-known container rather than a trace. */
function hint(h: Uint8Array): string {
  const ascii = String.fromCharCode(...h.subarray(0, 8));
  if (ascii.startsWith('PK\x03\x04')) return ' — this looks like a ZIP archive: extract the .etl file from it first';
  if (ascii.startsWith('MSCF')) return ' — this looks like a CAB archive: extract the .etl file from it first';
  if (h[0] === 0x1f && h[1] === 0x8b) return ' — this looks like gzip data: decompress it first';
  if (/^[\t\n\r\x20-\x7e]{8}$/.test(ascii)) return ' — the file starts with text: is it an ETL trace (.etl) written by WPR, xperf or an ETW session?';
  return ' — is it an ETL trace (.etl) written by WPR, xperf or an ETW session?';
}

/**
 * Checks that the input starts like an ETL file; throws the one clear error otherwise. A first buffer
 * that starts right but runs past the end of the input is a truncated ETL file, not an error.
 */
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
  const marker = v.getUint32(HEADER, true);
  const hookId = v.getUint16(HEADER + L.TH_HOOK_ID, true);
  const kind = marker >>> 16;
  const headerEvent = (kind === 0xc001 || kind === 0xc002) && hookId === L.HOOK_HEADER;
  if (bufferSize < HEADER || bufferSize > L.MAX_BUFFER_SIZE || (bufferSize > size && !headerEvent)) {
    throw new EtlError(
      'NOT_ETL',
      `not an ETL file: at offset 0x0 expected a WMI_BUFFER_HEADER whose BufferSize is between 0x48 and ${hex(Math.min(size, L.MAX_BUFFER_SIZE))}, found BufferSize ${hex(bufferSize)}${hint(h)}`,
      0,
      `BufferSize in [0x48, ${hex(Math.min(size, L.MAX_BUFFER_SIZE))}]`,
      hex(bufferSize),
    );
  }
  if (!headerEvent) {
    throw new EtlError(
      'NOT_ETL',
      `not an ETL file: at offset 0x48 expected the WMI_LOG_TYPE_HEADER event (marker 0xC002xxxx or 0xC001xxxx, HookId 0x0000), found marker ${hex(marker, 8)} HookId ${hex(hookId, 4)}${hint(h)}`,
      HEADER,
      'marker 0xC0020002/0xC0010002, HookId 0x0000',
      `marker ${hex(marker, 8)}, HookId ${hex(hookId, 4)}`,
    );
  }
}

/**
 * Is there a plausible WMI_BUFFER_HEADER at `at` of `v` (file offset `fileOffset`, input `size` bytes)?
 * With `fit`, the buffer must also fit in the input. The first event's marker is checked when `v` holds it.
 */
function plausibleHeader(v: DataView, at: number, fileOffset: number, size: number, fit: boolean): boolean {
  if (!plausibleFields(v, at, fileOffset, size, fit)) return false;
  // a compressed buffer's events are in its stream; the marker is past the end of the input
  if (v.getUint16(at + L.BUF_BUFFER_FLAG, true) & L.BUFFER_FLAG_COMPRESSED || at + CANDIDATE > v.byteLength) return true;
  return (v.getUint32(at + HEADER, true) & L.TRACE_HEADER_FLAG) !== 0;
}

/**
 * The fields of plausibleHeader, from the header's bytes alone (what framing judges a header by wherever it
 * was read from: a batch, a window): BufferSize, BufferFlag, BufferType and the data end (§A.5).
 */
function plausibleFields(v: DataView, at: number, fileOffset: number, size: number, fit: boolean): boolean {
  const bufferSize = v.getUint32(at + L.BUF_BUFFER_SIZE, true);
  if (bufferSize < HEADER || bufferSize > L.MAX_BUFFER_SIZE || (fit && fileOffset + bufferSize > size)) return false;
  if (!plausibleKind(v, at)) return false;
  const flags = v.getUint16(at + L.BUF_BUFFER_FLAG, true);
  const saved = v.getUint32(at + L.BUF_SAVED_OFFSET, true);
  if (flags & L.BUFFER_FLAG_COMPRESSED) return saved >= HEADER && saved <= L.MAX_BUFFER_SIZE;
  const filled = v.getUint32(at + L.BUF_OFFSET, true);
  return (filled >= HEADER && filled <= bufferSize) || (saved >= HEADER && saved <= bufferSize);
}

/** BufferFlag and BufferType of a header: no flag outside the known ones, a known type. */
function plausibleKind(v: DataView, at: number): boolean {
  return (v.getUint16(at + L.BUF_BUFFER_FLAG, true) & ~L.BUFFER_FLAG_KNOWN_MASK) === 0 && v.getUint16(at + L.BUF_BUFFER_TYPE, true) < L.BUFFER_TYPE_MAXIMUM;
}

const NO_BYTES = new Uint8Array(0);

/** The last contiguous read of framing (a run of small buffers, or a resync scan), reused while it covers. */
class Window {
  base = 0;
  bytes: Uint8Array = NO_BYTES;
  view: DataView<ArrayBufferLike> = new DataView(NO_BYTES.buffer);
  /** the aligned words of `bytes` (made on first use by the zero skipper), starting at `bytes[wordsAt]` */
  private words: Int32Array | null = null;
  private wordsAt = 0;

  set(base: number, bytes: Uint8Array): void {
    this.base = base;
    this.bytes = bytes;
    this.view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    this.words = null;
  }

  covers(position: number, length: number): boolean {
    return position >= this.base && position + length <= this.base + this.bytes.length;
  }

  /**
   * The first plausible header at or after window index `i`, before index `end`, that leaves CANDIDATE
   * bytes in the window (file position), or -1.
   */
  scan(i: number, size: number, end: number): number {
    const v = this.view;
    const limit = Math.min(this.bytes.length - CANDIDATE, end - 1);
    for (; i <= limit; i++) {
      const bufferSize = v.getUint32(i, true);
      if (bufferSize < HEADER) {
        // zero bytes cannot start a header: jump to 3 bytes before the next non-zero byte
        if (bufferSize === 0) i = Math.max(i, this.firstOther(i + 4, limit + 4, 0) - 3) - 1;
        continue;
      }
      if (bufferSize > L.MAX_BUFFER_SIZE) {
        // nor can the 0xFF fill of a buffer's unused tail (§A.5)
        if (bufferSize === 0xffffffff) i = Math.max(i, this.firstOther(i + 4, limit + 4, -1) - 3) - 1;
        continue;
      }
      if (plausibleHeader(v, i, this.base + i, size, true)) return this.base + i;
    }
    return -1;
  }

  /**
   * Index of the first byte in [from, to) of the window that is not the fill byte (0 for `fill` 0, 0xFF for
   * `fill` -1), `to` if none: 4 bytes a step.
   */
  private firstOther(from: number, to: number, fill: 0 | -1): number {
    const b = this.bytes;
    const byte = fill & 0xff;
    let i = from;
    // bytes up to a word boundary of the underlying buffer
    while (i < to && ((b.byteOffset + i) & 3) !== 0) {
      if (b[i] !== byte) return i;
      i++;
    }
    if (this.words === null) {
      this.wordsAt = (((b.byteOffset + 3) & ~3) - b.byteOffset) | 0;
      this.words = new Int32Array(b.buffer, b.byteOffset + this.wordsAt, Math.max(0, (b.length - this.wordsAt) >> 2));
    }
    const words = this.words;
    let w = (i - this.wordsAt) >> 2;
    const wordEnd = Math.min(words.length, (to - this.wordsAt) >> 2);
    if (fill === 0) while (w + 4 <= wordEnd && (words[w]! | words[w + 1]! | words[w + 2]! | words[w + 3]!) === 0) w += 4;
    else while (w + 4 <= wordEnd && (words[w]! & words[w + 1]! & words[w + 2]! & words[w + 3]!) === -1) w += 4;
    while (w < wordEnd && words[w] === fill) w++;
    i = Math.max(i, this.wordsAt + 4 * w);
    while (i < to && b[i] === byte) i++;
    return i;
  }
}

function readFailed(position: number, wanted: number, got: number): EtlError {
  return new EtlError(
    'READ_FAILED',
    `could not read the input at ${hex(position)}: expected ${wanted} bytes, got ${got} (did the file change while it was read?)`,
    position,
    `${wanted} bytes`,
    `${got} bytes`,
  );
}

/**
 * Resync (§A.1 policy): the file position of the next plausible header at or after `from` and before `end`,
 * or -1. Reads forward in growing chunks, reusing the window while it covers the scan. A header whose buffer
 * ends where a plausible header starts, or at the end of the input, is taken; one whose buffer does not is
 * taken only if no such header lies inside its claim, and with `chained` never: the scan runs over the bytes
 * of a buffer that may be real but cut short, whose data must not be taken for buffers. The claim checks
 * (frameBuffers) scan the bytes a BufferSize claims after the buffer's data.
 */
function* resync(from: number, size: number, win: Window, chained: boolean, stream: ScanStream, end = size): Steps<number> {
  let scan = from;
  let chunk = SCAN_FIRST;
  let lastProgress = from;
  // candidates before `end` need the bytes up to end - 1 + CANDIDATE
  const last = Math.min(size, end - 1 + CANDIDATE);
  while (scan + CANDIDATE <= size && scan < end) {
    if (!win.covers(scan, CANDIDATE)) {
      const want = Math.min(chunk, last - scan);
      let got: Uint8Array;
      if (chunk === SCAN_MAX && stream.on) {
        // a long scan: the next chunk is read (ahead) into the other buffer while this one is scanned
        got = yield* stream.load(scan, want);
        const next = scan + got.length - CANDIDATE + 1;
        if (next + CANDIDATE <= last) stream.on = yield* stream.prefetch(next, Math.min(SCAN_MAX, last - next));
      } else {
        got = yield* read(scan, want);
      }
      if (got.length < CANDIDATE) throw readFailed(scan, want, got.length);
      win.set(scan, got);
      chunk = Math.min(2 * chunk, SCAN_MAX);
    }
    const found = win.scan(scan - win.base, size, end - win.base);
    if (found >= 0) {
      const claim = win.view.getUint32(found - win.base + L.BUF_BUFFER_SIZE, true);
      if (yield* chainsOn(found, size, win)) return found;
      if (!chained) {
        // a plausible header whose buffer does not end at another: taken, unless a header that does chain
        // lies inside its claim (then it was a byte run of event data that passed for a header)
        const inside = yield* resync(found + 1, size, win, true, stream, found + claim);
        return inside >= 0 ? inside : found;
      }
      scan = found + 1;
      continue;
    }
    scan = win.base + win.bytes.length - CANDIDATE + 1;
    if (scan - lastProgress >= PROGRESS_EVERY) {
      lastProgress = scan;
      yield { kind: 'progress', phase: 'frame', done: scan, total: size };
    }
  }
  return -1;
}

/**
 * Two scan buffers of SCAN_MAX bytes for long resync scans: each chunk is loaded into one while the next
 * is read ahead into the other (when the runner reads ahead: `on` turns false when it does not, and
 * plain reads take over, which for bytes in memory copy nothing).
 */
class ScanStream {
  on = true;
  private bufs: Uint8Array[] = [];
  private cur = 0;

  private target(length: number): Uint8Array {
    if (!this.bufs.length) this.bufs = [new Uint8Array(SCAN_MAX), new Uint8Array(SCAN_MAX)];
    return this.bufs[this.cur]!.subarray(0, length);
  }

  /** Loads `length` bytes at `position` into the current buffer (the prefetch of that range, if any). */
  *load(position: number, length: number): Steps<Uint8Array> {
    const t = this.target(length);
    const n = yield* load(position, t);
    this.cur ^= 1;
    return t.subarray(0, n);
  }

  /** Starts reading the next chunk into the other buffer; false if the runner does not read ahead. */
  *prefetch(position: number, length: number): Steps<boolean> {
    return yield* prefetch(position, this.target(length));
  }
}

/**
 * `at` if a plausible header is there whose buffer ends at the end of the input or where a plausible header
 * starts, else -1: where framing resumes after a corrupt header when the buffers before it had the stride
 * that leads here (decoder policy, §A.1). `from` is where the scan starts if not: when the header is less
 * than STRIDE_READ bytes on, the window is read from there, so the scan that may follow reads nothing again.
 */
function* strideNext(from: number, at: number, size: number, win: Window, chain = true): Steps<number> {
  if (at + HEADER > size) return -1;
  const want = Math.min(CANDIDATE, size - at);
  let v: DataView<ArrayBufferLike> = win.view;
  let i = at - win.base;
  if (!win.covers(at, want)) {
    const start = at + want - from <= STRIDE_READ ? from : at;
    const got = yield* read(start, at + want - start);
    if (got.length < at + HEADER - start) return -1;
    if (start === from) {
      win.set(from, got);
      v = win.view;
      i = at - from;
    } else {
      v = new DataView(got.buffer, got.byteOffset, got.byteLength);
      i = 0;
    }
  }
  if (!plausibleHeader(v, i, at, size, true)) return -1;
  return !chain || (yield* chainsFrom(at + v.getUint32(i + L.BUF_BUFFER_SIZE, true), size, win)) ? at : -1;
}

/** Does the buffer at `at` (a plausible header in the window) end at the end of the input or where a plausible header starts? */
function* chainsOn(at: number, size: number, win: Window): Steps<boolean> {
  return yield* chainsFrom(at + win.view.getUint32(at - win.base + L.BUF_BUFFER_SIZE, true), size, win);
}

/** Is `end` (where a buffer ends) the end of the input or the place of a plausible header? */
function* chainsFrom(end: number, size: number, win: Window): Steps<boolean> {
  if (size - end < HEADER) return true;
  let v: DataView<ArrayBufferLike> = win.view;
  let i = end - win.base;
  if (!win.covers(end, Math.min(CANDIDATE, size - end))) {
    const got = yield* read(end, Math.min(CANDIDATE, size - end));
    if (got.length < HEADER) return false;
    v = new DataView(got.buffer, got.byteOffset, got.byteLength);
    i = 0;
  }
  return plausibleHeader(v, i, end, size, false);
}

/**
 * Frames the input into buffers (file order), into `table` (a caller may watch it fill: src/parallel).
 * `headerBatch`: headers per batched request (sources whose reads are round trips, like Blobs, ask for more).
 */
export function* frameBuffers(
  size: number,
  issues: FramingIssue[],
  counters: number[],
  headerBatch = HEADER_BATCH,
  table = new BufferTable(),
): Steps<BufferTable> {
  const first = yield* read(0, FIRST_READ);
  checkFirstBuffer(first, size);
  // the size above which a claim is checked (§A.1), by kind: for uncompressed buffers the header buffer's
  // (whose own claim is always checked: 0 until then), for compressed ones the logger's BufferSize (the
  // header buffer's when the logfile header gives none); raised to a claim that was checked and stands
  const logger = loggerBufferSize(first);
  const firstSize = new DataView(first.buffer, first.byteOffset).getUint32(L.BUF_BUFFER_SIZE, true);
  const run: BatchRun = { pos: 0, next: 0, usualPlain: 0, usualCompressed: logger || firstSize, logger, plainCap: logger || firstSize };
  /** the last record whose claim was checked (its bytes after its data scanned) */
  let scanned = -1;
  const win = new Window();
  const stream = new ScanStream();
  let pos = 0;
  let lastProgress = 0;
  // Headers of large buffers are read ahead in batches, assuming the next buffers have the BufferSize of
  // the last one (they do in practice): one request for HEADER_BATCH headers instead of one round trip
  // each, which for files is most of the framing time. A header read ahead is used only if it sits
  // exactly where the previous buffer ends, so the result is the same as reading them one by one. Small
  // buffers come from one contiguous read (the window), as do the buffers right after a resync.
  let ahead: Uint8Array[] = [];
  let aheadAt: number[] = [];
  let aheadNext = 0;
  let stride = 0;
  /** buffer sizes vary: headers from contiguous reads (see VARIABLE_READ_MIN) */
  let variable = false;
  /** buffers in a row with the size `stride` */
  let sameRun = 0;
  /** headers in the last batch */
  let batch = FIRST_BATCH;
  /** appends a record (its header at `at` of `h`, `n` bytes), making room for the rest of the file */
  const push = (h: DataView, at: number, n: number): void => {
    // when the records are full: room for the rest of the file at this buffer's size (exact when the data
    // buffers have one size), between 1024 more and twice as many
    if (table.count === table.capacity) {
      const rest = table.count + 1 + Math.ceil((size - pos - n) / n);
      table.reserve(Math.min(2 * table.count, Math.max(table.count + 1024, rest)));
    }
    table.push(h, at, pos, n, false);
  };
  /** counts the BufferSize `claimed` of the buffer at `at` (file position), framed shorter (§A.1) */
  const corrected = (at: number, claimed: number): void => {
    counters[L.D_BUFFERS_SIZE_CORRECTED]!++;
    if (issues.length < L.LOG_CAPACITY) issues.push({ code: L.D_BUFFERS_SIZE_CORRECTED, detail: claimed, fileOffset: at });
  };
  /**
   * The claim check (§A.1) of the last buffer framed, when it ends at `pos` and its claim was not checked:
   * when its bytes after its data hold the header of another buffer, it is framed up to it (counted) and
   * framing goes on there (true).
   */
  function* recheckLast(): Steps<boolean> {
    const last = table.count - 1;
    if (last < 0 || last === scanned || table.fileOffset[last]! + table.size[last]! !== pos) return false;
    const lastAt = table.fileOffset[last]!;
    const claimed = table.size[last]!;
    const head = win.covers(lastAt, HEADER) ? copyHeader(win.view, lastAt - win.base) : yield* headerAt(lastAt);
    scanned = last;
    const usual = table.flags[last]! & L.BUFFER_FLAG_COMPRESSED ? run.usualCompressed : run.usualPlain || run.logger || Infinity;
    const covered = head ? yield* claimCovers(lastAt, head, claimed, usual, pos, size, win, stream) : -1;
    if (covered < 0) return false;
    corrected(lastAt, claimed);
    table.correctLast(covered - lastAt);
    stride = covered - lastAt;
    sameRun = 0;
    pos = covered;
    return true;
  }
  for (;;) {
    if (pos >= size) {
      // the input ends where the last buffer does: its claim is checked too, as a claim of the bytes up to
      // the end would hide the buffers there (§A.1)
      if (pos === size && (yield* recheckLast())) continue;
      break;
    }
    if (aheadNext > 0 && aheadNext < aheadAt.length && aheadAt[aheadNext] === pos) {
      // the batch's guesses that hold (most headers of a file) are taken by a plain function
      run.pos = pos;
      run.next = aheadNext;
      takeBatch(run, ahead, aheadAt, stride, size, table, win, lastProgress + PROGRESS_EVERY);
      sameRun += run.next - aheadNext;
      if (variable && sameRun >= STABLE_RUN) variable = false;
      pos = run.pos;
      aheadNext = run.next;
      if (pos - lastProgress >= PROGRESS_EVERY) {
        lastProgress = pos;
        yield { kind: 'progress', phase: 'frame', done: pos, total: size };
      }
      if (pos >= size) continue;
    }
    if (size - pos < HEADER) {
      counters[L.D_TRUNCATED_TAIL_BYTES]! += size - pos;
      break;
    }
    let v: DataView<ArrayBufferLike>;
    let at = 0;
    // the guess of the last batch failed at its second header: the sizes vary
    const missed = aheadNext === 1 && aheadAt.length > 1 && aheadAt[1] !== pos;
    if (missed && !win.covers(pos, HEADER)) variable = true;
    if (win.covers(pos, HEADER)) {
      v = win.view;
      at = pos - win.base;
    } else if (aheadNext < aheadAt.length && aheadAt[aheadNext] === pos && ahead[aheadNext]!.length === HEADER) {
      const h = ahead[aheadNext++]!;
      v = new DataView(h.buffer, h.byteOffset, h.byteLength);
    } else if (stride > SMALL_STRIDE && !variable) {
      const positions: number[] = [];
      // a batch after the sizes changed is small, and doubles while its guesses hold
      batch = aheadAt.length > 0 && aheadNext === aheadAt.length ? Math.min(2 * batch, headerBatch) : FIRST_BATCH;
      for (let p = pos; positions.length < batch && p + HEADER <= size; p += stride) positions.push(p);
      ahead = yield* readMany(positions, HEADER);
      aheadAt = positions;
      aheadNext = 1;
      const h = ahead[0]!;
      if (h.length < HEADER) throw readFailed(pos, HEADER, h.length);
      v = new DataView(h.buffer, h.byteOffset, h.byteLength);
    } else {
      const want =
        stride > SMALL_STRIDE // variable sizes
          ? Math.min(Math.max(VARIABLE_READ_MIN, 16 * stride), VARIABLE_READ_MAX, size - pos)
          : stride >= HEADER
            ? Math.min(CONTIGUOUS_READ, size - pos)
            : HEADER;
      const got = yield* read(pos, want);
      if (got.length < HEADER) throw readFailed(pos, want, got.length);
      win.set(pos, got);
      v = win.view;
    }
    if (missed) aheadAt = []; // judged once
    const bufferSize = v.getUint32(at + L.BUF_BUFFER_SIZE, true);
    const sizeOk = bufferSize >= HEADER && bufferSize <= L.MAX_BUFFER_SIZE;
    const compressed = (v.getUint16(at + L.BUF_BUFFER_FLAG, true) & L.BUFFER_FLAG_COMPRESSED) !== 0;
    const overUsual = sizeOk && bufferSize > (compressed ? run.usualCompressed : run.usualPlain);
    // an uncompressed buffer whose size is not the one before it, within the usual size, is a claim to check
    // too: where sizes vary, a claim of a few buffers hides them as well (§A.1); where they do not (nearly
    // every file), nothing but headers is read
    const changed = !overUsual && !compressed && sizeOk && pos > 0 && stride >= HEADER && bufferSize !== stride;
    // a header whose fields are not plausible is not trusted either: its claim is checked — over all its
    // bytes when its BufferFlag or BufferType is none a buffer has (§A.1), as bytes inserted inside the last
    // buffer leave the position its claim leads to in its data
    const plausible = plausibleFields(v, at, pos, size, false);
    const check = overUsual || changed || (sizeOk && !plausible);
    if ((overUsual || !plausible) && table.count > 0 && table.count - 1 !== scanned) {
      // What the last buffer's claim leads to is a header that is not plausible, or one claiming more than
      // the usual size: the last buffer's claim is checked first (§A.1), as bytes missing inside it, or a
      // claim a few bytes long, lead a few bytes into the next buffer, where a shifted copy of its header
      // passes for one. The header is copied first (the check may move the window).
      v = copyHeader(v, at);
      at = 0;
      if (yield* recheckLast()) continue;
    }
    /** a claim checked that is not trusted: the header is not even plausible */
    let refused = false;
    if (check) {
      // A claim to check (§A.1). One above the usual size in a header that is not even plausible is not
      // trusted: the header is corrupt (the next buffer is looked for below; the header buffer, whose logfile
      // header was checked, is kept). Otherwise the bytes it claims after the buffer's data are scanned for
      // the header of another buffer (the scan may move the window: the header is copied first).
      const head = copyHeader(v, at);
      v = head;
      at = 0;
      refused = overUsual && pos > 0 && !plausibleHeader(head, 0, pos, size, false);
      const usual = changed ? stride : compressed ? run.usualCompressed : run.usualPlain || run.logger || Infinity;
      const covered = refused ? -1 : yield* claimCovers(pos, head, bufferSize, usual, Math.min(pos + bufferSize, size), size, win, stream, plausibleKind(head, 0));
      if (covered >= 0) {
        // the buffer ends where that one starts: framed so, and framing goes on there
        corrected(pos, bufferSize);
        push(head, 0, covered - pos);
        scanned = table.count - 1;
        stride = covered - pos;
        sameRun = 0;
        pos = covered;
        continue;
      }
      // it covers none: the claim stands (for buffers of its kind from now on too; the header buffer's for
      // uncompressed ones, as their size in uncompressed files, §A.1) — an uncompressed one no higher than the
      // logger's BufferSize (the header buffer's when the logfile header gives none): no uncompressed buffer
      // is larger, and a claim whose damaged neighbours hid nothing that chains must not wave later ones through
      if (!refused && pos + bufferSize <= size) {
        if (compressed) run.usualCompressed = Math.max(run.usualCompressed, bufferSize);
        else run.usualPlain = Math.max(run.usualPlain, Math.min(bufferSize, run.plainCap));
      }
    }
    if (sizeOk && !refused && pos + bufferSize <= size) {
      push(v, at, bufferSize);
      if (check) scanned = table.count - 1;
      pos += bufferSize;
      sameRun = bufferSize === stride ? sameRun + 1 : 0;
      if (variable && sameRun >= STABLE_RUN) variable = false;
      stride = bufferSize;
      if (pos - lastProgress >= PROGRESS_EVERY) {
        lastProgress = pos;
        yield { kind: 'progress', phase: 'frame', done: pos, total: size };
      }
      continue;
    }
    // A plausible header whose buffer runs past the end: the input was cut inside this buffer. When its
    // size is the stride of the buffers before it (or it is the first buffer), that is taken as certain;
    // otherwise only if no plausible header follows (else its BufferSize was corrupt).
    const cutCandidate = sizeOk && !refused && plausibleHeader(v, at, pos, size, false);
    if (cutCandidate && (bufferSize === stride || table.count === 0)) {
      cut(table, v, at, pos, size, counters);
      break;
    }
    // No buffer here, right after the last one: did the last one claim too much? Its bytes after its data
    // are scanned for the header of another buffer (unless they were when it was framed) — also when what is
    // here looks like a header cut short (the real one may start a few bytes before it).
    if (yield* recheckLast()) continue;
    // The scan may move the window: the header's fields are read first.
    const reason = refused
      ? L.CORRUPT_FRAME_CLAIM
      : bufferSize < HEADER
        ? L.CORRUPT_FRAME_SIZE_SMALL
        : bufferSize > L.MAX_BUFFER_SIZE
          ? L.CORRUPT_FRAME_SIZE_LARGE
          : L.CORRUPT_FRAME_PAST_END;
    const saved = cutCandidate ? new DataView(new Uint8Array(new Uint8Array(v.buffer, v.byteOffset + at, HEADER)).buffer) : null;
    // the buffers of a file have one size in practice (§A.1): the next header is looked for one stride on
    // first, and the bytes between scanned only when none is there (a header in them may be event data)
    let next = stride > 0 ? yield* strideNext(pos + 1, pos + stride, size, win) : -1;
    if (next < 0) next = yield* resync(pos + 1, size, win, saved !== null, stream);
    if (next < 0 && saved) {
      cut(table, saved, 0, pos, size, counters);
      break;
    }
    stride = 0;
    counters[L.D_BUFFERS_CORRUPT]!++;
    if (issues.length < L.LOG_CAPACITY) issues.push({ code: L.D_BUFFERS_CORRUPT, detail: reason, fileOffset: pos });
    const resumeAt = next < 0 ? size : next;
    counters[L.D_RESYNC_BYTES]! += resumeAt - pos;
    pos = resumeAt;
  }
  return table;
}

/** Where takeBatch is: the file position and the next header of the batch; the sizes claims are checked above (§A.1). */
interface BatchRun {
  pos: number;
  next: number;
  usualPlain: number;
  usualCompressed: number;
  /** the logger's BufferSize (logfile header), 0 if unknown */
  logger: number;
  /** the most usualPlain is raised to: the logger's BufferSize, else the header buffer's */
  plainCap: number;
}

/**
 * Takes the headers of the batch read ahead from `run.next` on while each is where the last buffer ends,
 * has the batch's stride as BufferSize and is not covered by the window, and while the records have room
 * and the position is short of `progressAt` — what frameBuffers' loop does for such a header, without the
 * generator. Most headers of a file are these, and a plain function for them keeps V8's optimizing
 * compiler off frameBuffers (compiling it took 19–35 ms of a background thread per run: docs/performance.md "End to end").
 */
function takeBatch(
  run: BatchRun,
  ahead: readonly Uint8Array[],
  aheadAt: readonly number[],
  stride: number,
  size: number,
  table: BufferTable,
  win: Window,
  progressAt: number,
): void {
  let pos = run.pos;
  let k = run.next;
  for (; k < aheadAt.length && aheadAt[k] === pos && pos < progressAt && table.count < table.capacity; k++) {
    const h = ahead[k]!;
    if (h.length !== HEADER || win.covers(pos, HEADER)) break;
    const v = new DataView(h.buffer, h.byteOffset, HEADER);
    const bufferSize = v.getUint32(L.BUF_BUFFER_SIZE, true);
    if (bufferSize !== stride || pos + bufferSize > size) break;
    // no plausible header where the last buffer ends: its claim is the loop's to check (§A.1)
    if (!plausibleFields(v, 0, pos, size, false)) break;
    // a claim to check (§A.1) is the loop's
    if (bufferSize > (v.getUint16(L.BUF_BUFFER_FLAG, true) & L.BUFFER_FLAG_COMPRESSED ? run.usualCompressed : run.usualPlain)) break;
    table.push(v, 0, pos, bufferSize, false);
    pos += bufferSize;
  }
  run.pos = pos;
  run.next = k;
}

/** Records the buffer at `pos` as cut short by the end of the input; its bytes are the truncated tail. */
function cut(table: BufferTable, v: DataView, at: number, pos: number, size: number, counters: number[]): void {
  table.push(v, at, pos, size - pos, true);
  counters[L.D_TRUNCATED_TAIL_BYTES]! += size - pos;
}

/**
 * The claim check (§A.1) of the buffer at `pos` (header `h`, at its offset 0) whose BufferSize `claimed` covers
 * the bytes up to `end`: the first plausible header whose buffer chains, inside the claim — at the usual size
 * `usual` of its kind and multiples of it before the buffer's data end (STRIDE_PROBES at most: its data end
 * may be a wrong claim too), then anywhere from its data end on — where, for an uncompressed buffer, a plausible
 * header one usual size on at or past its data end is taken whether its buffer chains or not, when no header
 * that chains comes before it (from its second byte when
 * `kind` is false — its BufferFlag or BufferType is none a buffer has: nothing it says is trusted) — or -1.
 */
function* claimCovers(pos: number, h: DataView, claimed: number, usual: number, end: number, size: number, win: Window, stream: ScanStream, kind = true): Steps<number> {
  // a header none of whose fields is trusted may not even be 0x48 bytes long: the scan starts right after its first byte
  const data = kind ? dataEnd(h, claimed) : 1;
  const scanFrom = data < 0 ? end : pos + data;
  for (let k = 1, at = pos + usual; k <= STRIDE_PROBES && at < Math.min(scanFrom, end); k++, at += usual) {
    const found = yield* strideNext(at, at, size, win);
    if (found >= 0) return found;
  }
  // one usual size on, at or past the data end (no event data there): when no header that chains comes
  // before it, a plausible header there is the next buffer even when the one after it is damaged (whose own
  // claim is checked when framing gets there)
  const next = pos + usual;
  if (kind && (h.getUint16(L.BUF_BUFFER_FLAG, true) & L.BUFFER_FLAG_COMPRESSED) === 0 && next >= scanFrom && next < end) {
    const before = scanFrom < next ? yield* resync(scanFrom, size, win, true, stream, next) : -1;
    if (before >= 0) return before;
    const found = yield* strideNext(next, next, size, win, false);
    if (found >= 0) return found;
    return yield* resync(next, size, win, true, stream, end);
  }
  return scanFrom < end ? yield* resync(scanFrom, size, win, true, stream, end) : -1;
}

/** A copy of the WMI_BUFFER_HEADER at `at` of `v` (what a scan that moves the window must not overwrite). */
function copyHeader(v: DataView, at: number): DataView {
  return new DataView(new Uint8Array(new Uint8Array(v.buffer, v.byteOffset + at, HEADER)).buffer);
}

/** The WMI_BUFFER_HEADER at file position `at` (read), or null if the input is too short. */
function* headerAt(at: number): Steps<DataView | null> {
  const h = yield* read(at, HEADER);
  return h.length < HEADER ? null : new DataView(h.buffer, h.byteOffset, HEADER);
}

/**
 * Where the bytes a buffer holds end, as far as its header tells (header `h`, at its offset 0; BufferSize
 * `claimed`): the data end of §A.5 (Offset, else SavedOffset, when in range) for an uncompressed buffer,
 * its header for a compressed one (its stream's end is not known before decompression); -1 for an
 * uncompressed buffer with neither in range (its events may be anywhere: they are not scanned, as event
 * payloads hold byte runs that pass for headers that chain).
 */
function dataEnd(h: DataView, claimed: number): number {
  if (h.getUint16(L.BUF_BUFFER_FLAG, true) & L.BUFFER_FLAG_COMPRESSED) return HEADER;
  const filled = h.getUint32(L.BUF_OFFSET, true);
  if (filled >= HEADER && filled <= claimed) return filled;
  const saved = h.getUint32(L.BUF_SAVED_OFFSET, true);
  return saved >= HEADER && saved <= claimed ? saved : -1;
}

/**
 * The logger's BufferSize (TRACE_LOGFILE_HEADER.BufferSize, §A.8) from the first bytes of the input, when it
 * is there and a size an ETW session accepts; else 0.
 */
function loggerBufferSize(h: Uint8Array): number {
  const v = new DataView(h.buffer, h.byteOffset, h.byteLength);
  const marker = v.getUint32(HEADER, true);
  const payload = HEADER + L.SYSTEM_HEADER_SIZE + L.extendedItemBytes(marker);
  const at = payload + L.LFH_BUFFER_SIZE;
  if (at + 4 > h.length || HEADER + v.getUint16(HEADER + L.TH_SIZE, true) < at + 4) return 0;
  const n = v.getUint32(at, true);
  return n >= HEADER && n <= L.MAX_LOGGER_BUFFER_SIZE ? n : 0;
}
