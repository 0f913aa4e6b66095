// Buffer walk of the reference decoder, the twin of assembly/walk.ts: docs/format.md §A.2-A.6
// (WMI_BUFFER_HEADER, data extent, XPRESS-compressed payloads) and §B.4 (events back to back, 8-byte
// aligned, each framed by its trace header's Size); every event is tallied by kind (§B.2) and
// SYSTEM/COMPACT/PERFINFO events are routed by HookId (§B.5; the routing is generated from
// schema/tables.mjs into src/generated/reference-dispatch.ts) to the decoders of the logfile header
// (§A.8), the header extension (§A.9), CSwitch (§C), CompCS (§D), SpinLock (§E), ReadyThread (§F.4),
// Thread (§F.2, §F.5) and Process (§F.3) events.
//
// Pure TypeScript, written for clarity: the test oracle and the benchmark baseline. Its output never
// runs out of room, so it never asks for a drain.
import * as L from '../../generated/layout.js';
import type { Engine, EngineState } from '../engine.js';
import { DECODED_TABLE_NAMES, keptTableMask, TABLE_IDS, type Chunks, type DecodedTableName } from '../../tables/schema.js';
import { decodeTableEvent, HOOK_DECODERS, hookDecoders } from '../../generated/reference-dispatch.js';
import { flushHeldSwitches } from './compcs.js';
import { count, issue } from './diag.js';
import { tally } from './kinds.js';
import { Arena } from './memory.js';
import { xpressDecompress, xpressInputRead } from './xpress.js';

export class ReferenceEngine implements Engine {
  readonly kind = 'reference' as const;
  private input = new Uint8Array(0);
  private view = new DataView(this.input.buffer);
  private readonly a = new Arena();
  // trace-wide state (§A.8, §D.5)
  private numberOfProcessors = 0;
  private biasOverride: number | undefined;
  private bias = L.maxWaitReasonForBuild(0xffffffff);
  /** §A.6 policy: the largest SavedOffset a compressed buffer may have (the logger's BufferSize) */
  /** the decoder of each HookId (keepTables) */
  private hookDecoders = HOOK_DECODERS;
  private compressedLimit = L.MAX_LOGGER_BUFFER_SIZE;

  reserveInput(byteLength: number): Uint8Array {
    if (this.input.length < byteLength) {
      this.input = new Uint8Array(byteLength);
      this.view = new DataView(this.input.buffer);
    }
    return this.input;
  }

  inputView(): Uint8Array {
    return this.input;
  }

  keepTables(tables: readonly DecodedTableName[] | null): void {
    this.hookDecoders = tables === null ? HOOK_DECODERS : hookDecoders(keptTableMask(tables));
  }

  setBiasOverride(bias: number | undefined): void {
    this.biasOverride = bias;
    if (bias !== undefined) this.bias = bias;
  }

  rowCount(table: number): number {
    return this.a.table(table).length;
  }

  mostPendingRows(): number {
    let most = 0;
    for (const t of DECODED_TABLE_NAMES) most = Math.max(most, this.a.table(TABLE_IDS[t]).length);
    return most;
  }

  drain(): Chunks {
    return this.a.drain();
  }

  peekRows(): Chunks {
    return this.a.peekRows();
  }

  resetRows(): void {
    this.a.resetRows();
  }

  resume(): number {
    return L.STATUS_OK; // the reference never runs out of row space
  }

  finish(): number {
    flushHeldSwitches(this.a);
    return L.STATUS_OK;
  }

  state(): EngineState {
    const a = this.a;
    return {
      counters: a.counters.slice(),
      log: a.log.slice(),
      kinds: [...a.kinds.values()].map((k) => ({ ...k, guid: k.guid.slice() })),
      logfilePayload: a.logfilePayload,
      logfilePayloadLength: a.logfilePayloadLength,
      logfilePointerSize: a.logfilePointerSize,
      logfileTimestamp: a.logfileTimestamp,
      headerExtension: a.headerExtension,
      bias: this.bias,
    };
  }

  /**
   * §A.2-A.6: decodes the buffer at `offset` of the input, `length` bytes: the buffer as framing found it;
   * fileOffset = its place in the file. A BufferSize above `length` is a buffer the input ends in when
   * `cut` (a truncated file: it is counted and the events that fit are walked), else a BufferSize that
   * framing corrected (§A.1: the buffer ends where the next one starts).
   */
  decodeBuffer(offset: number, length: number, fileOffset: number, cut: boolean): number {
    const a = this.a;
    const v = this.view;
    if (length < L.WMI_BUFFER_HEADER_SIZE) {
      issue(a, L.D_BUFFERS_CORRUPT, L.CORRUPT_HEADER_SHORT, fileOffset);
      return L.STATUS_OK;
    }
    const bufferSize = v.getUint32(offset + L.BUF_BUFFER_SIZE, true);
    const flags = v.getUint16(offset + L.BUF_BUFFER_FLAG, true);
    const type = v.getUint16(offset + L.BUF_BUFFER_TYPE, true);
    if (bufferSize < L.WMI_BUFFER_HEADER_SIZE) {
      issue(a, L.D_BUFFERS_CORRUPT, L.CORRUPT_BUFFER_SIZE, fileOffset);
      return L.STATUS_OK;
    }
    // the bytes of the buffer: its BufferSize, or fewer (the input ends in it, or framing corrected it)
    const short = bufferSize > length;
    const extent = short ? length : bufferSize;
    cut = cut && short;
    if (cut) issue(a, L.D_BUFFERS_TRUNCATED, bufferSize - length, fileOffset);
    if (flags & L.BUFFER_FLAG_EVENTS_LOST) count(a, L.D_BUFFERS_EVENTS_LOST_FLAG);
    if (flags & L.BUFFER_FLAG_BUFFER_LOST) count(a, L.D_BUFFERS_BUFFER_LOST_FLAG);
    const cpu =
      flags & L.BUFFER_FLAG_PROC_INDEX
        ? v.getUint16(offset + L.BUF_CLIENT_CONTEXT, true) & L.PROCESSOR_INDEX_MASK
        : v.getUint8(offset + L.BUF_CLIENT_CONTEXT);
    if (flags & L.BUFFER_FLAG_COMPRESSED) count(a, L.D_BUFFERS_COMPRESSED);
    if (type >= L.BUFFER_TYPE_EMPTY_MARKER) {
      count(a, L.D_BUFFERS_NOT_WALKED);
      return L.STATUS_OK;
    }
    const savedOffset = v.getUint32(offset + L.BUF_SAVED_OFFSET, true);
    let data: DataView;
    let start: number;
    let end: number;
    let fileBase: number; // an event at position p of `data` is at file offset fileBase + p
    if (flags & L.BUFFER_FLAG_COMPRESSED) {
      // §A.6: XPRESS input [0x48, extent), output exactly SavedOffset - 0x48 bytes, at most the logger's
      // BufferSize and XPRESS_MAX_RATIO times the input; a cut stream cannot be decompressed
      if (cut) return L.STATUS_OK;
      if (savedOffset < L.WMI_BUFFER_HEADER_SIZE || savedOffset > L.MAX_BUFFER_SIZE) {
        issue(a, L.D_BUFFERS_CORRUPT, L.CORRUPT_COMPRESSED_EXTENT, fileOffset);
        return L.STATUS_OK;
      }
      if (savedOffset > this.compressedLimit) {
        issue(a, L.D_BUFFERS_CORRUPT, L.CORRUPT_COMPRESSED_TOO_LARGE, fileOffset);
        return L.STATUS_OK;
      }
      const outLength = savedOffset - L.WMI_BUFFER_HEADER_SIZE;
      const inLength = extent - L.WMI_BUFFER_HEADER_SIZE;
      if (outLength > inLength * L.XPRESS_MAX_RATIO) {
        issue(a, L.D_BUFFERS_COMPRESSED_REFUSED, outLength, fileOffset);
        return L.STATUS_OK;
      }
      const out = new Uint8Array(outLength);
      const written = xpressDecompress(this.input.subarray(offset + L.WMI_BUFFER_HEADER_SIZE, offset + extent), out);
      if (written !== outLength) {
        issue(a, L.D_BUFFERS_COMPRESSED_UNDECODED, written, fileOffset);
        return L.STATUS_OK;
      }
      const trailing = inLength - xpressInputRead();
      if (trailing > L.XPRESS_FINAL_FLAG_BYTES) issue(a, L.D_COMPRESSED_TRAILING_DATA, trailing, fileOffset);
      data = new DataView(out.buffer);
      start = 0;
      end = outLength;
      fileBase = fileOffset + L.WMI_BUFFER_HEADER_SIZE;
    } else {
      // §A.5: the data ends at Offset, or at SavedOffset when Offset is out of range
      const filledOffset = v.getUint32(offset + L.BUF_OFFSET, true);
      let filled: number;
      if (filledOffset >= L.WMI_BUFFER_HEADER_SIZE && filledOffset <= bufferSize) filled = filledOffset;
      else if (savedOffset >= L.WMI_BUFFER_HEADER_SIZE && savedOffset <= bufferSize) filled = savedOffset;
      else {
        issue(a, L.D_BUFFERS_CORRUPT, L.CORRUPT_DATA_END, fileOffset);
        return L.STATUS_OK;
      }
      if (filled > extent) filled = extent;
      data = v;
      start = offset + L.WMI_BUFFER_HEADER_SIZE;
      end = offset + filled;
      fileBase = fileOffset - offset;
    }
    count(a, L.D_BUFFERS);
    if (this.numberOfProcessors > 0 && cpu >= this.numberOfProcessors) issue(a, L.D_PROCESSOR_OUT_OF_RANGE, cpu, fileOffset);
    this.walkEvents(data, start, end, cpu, fileBase, cut);
    return L.STATUS_OK;
  }

  /** §B.4: the events in [p, end) of `d`; `cut`: the input ends at `end` inside the buffer. */
  private walkEvents(d: DataView, p: number, end: number, cpu: number, fileBase: number, cut: boolean): void {
    const a = this.a;
    while (p + 4 <= end) {
      const m = d.getUint32(p, true);
      if (m === L.END_OF_BUFFER_MARKER) break;
      // §B.1/B.2: header kind, fixed header bytes and Size
      let headerType = 0;
      let cls = L.HC_NONE;
      let headerSize = 0;
      let size = 0;
      let abandon = 0; // 0 ok, else the counter to charge
      if ((m & L.TRACE_HEADER_FLAG) === 0) {
        abandon = L.D_EVENTS_BAD_MARKER;
      } else if (((m >>> 24) & 0xd0) === 0x90) {
        headerType = L.HT_MESSAGE;
        cls = L.HC_MESSAGE;
        size = m & 0xffff;
        headerSize = L.MESSAGE_HEADER_SIZE;
      } else if (m >>> 30 === 3) {
        headerType = (m >>> 16) & 0xff;
        const info = headerType < L.HEADER_TYPE_COUNT ? L.headerInfo(headerType) : 0;
        cls = info >> 4;
        if (info === 0) {
          abandon = L.D_EVENTS_BAD_MARKER;
        } else if (p + 8 > end) {
          abandon = L.D_EVENTS_BAD_SIZE;
        } else if (cls === L.HC_PERFINFO) {
          headerSize = ((info & 0xf) << 3) + L.extendedItemBytes(m);
          size = d.getUint16(p + L.TH_SIZE, true);
        } else {
          headerSize = (info & 0xf) << 3;
          size = d.getUint16(p, true);
        }
      } else {
        abandon = L.D_EVENTS_BAD_MARKER;
      }
      if (abandon === 0 && (size < headerSize || p + size > end)) abandon = L.D_EVENTS_BAD_SIZE;
      if (abandon !== 0) {
        // a cut buffer ends inside an event: that is the truncation (buffersTruncated), not a bad event
        if (cut && abandon === L.D_EVENTS_BAD_SIZE && (p + 8 > end || size >= headerSize)) return;
        // the rest of this buffer cannot be framed
        count(a, abandon);
        issue(a, L.D_BUFFERS_TRUNCATED_WALK, abandon === L.D_EVENTS_BAD_MARKER ? L.WALK_BAD_MARKER : L.WALK_BAD_SIZE, fileBase + p);
        count(a, L.D_BYTES_ABANDONED, end - p);
        return;
      }
      count(a, L.D_EVENTS);
      tally(a, d, p, headerType, cls, size);
      if (cls === L.HC_PERFINFO) this.dispatch(d, p, m, headerType, headerSize, size, cpu, fileBase + p);
      p += (size + 7) & ~7;
    }
  }

  /** §B.5: routes a SYSTEM/COMPACT/PERFINFO event by HookId: the logfile header and its extension here, the
   *  events of decoded tables to their decoders (generated/reference-dispatch.ts, from schema/tables.mjs). */
  private dispatch(d: DataView, p: number, m: number, headerType: number, headerSize: number, size: number, cpu: number, fileOffset: number): void {
    const a = this.a;
    const version = m & 0xff;
    const tsAt = p + L.timestampOffset(headerType);
    const pointerSize = L.pointerSizeOf(headerType);
    const data = p + headerSize;
    const n = size - headerSize;
    const hookId = d.getUint16(p + L.TH_HOOK_ID, true);
    const decoder = this.hookDecoders[hookId]!;
    switch (decoder) {
      case L.DEC_HEADER:
        this.logfileHeader(d, data, n, pointerSize, tsAt);
        break;
      case L.DEC_HEADER_EXTENSION:
        // §A.9 ETW_KERNEL_HEADER_EXTENSION: the last one wins
        if (n >= L.KHE_SIZE) {
          const h = new Uint32Array(L.KHE_SIZE / 4);
          for (let i = 0; i < h.length; i++) h[i] = d.getUint32(data + 4 * i, true);
          a.headerExtension = h;
        }
        break;
      default:
        decodeTableEvent(decoder, a, d, data, n, version, pointerSize, hookId, cpu, tsAt, fileOffset, this.bias);
        break;
    }
  }

  /** §A.8: the first WMI_LOG_TYPE_HEADER is the trace's logfile header. */
  private logfileHeader(d: DataView, data: number, n: number, pointerSize: number, tsAt: number): void {
    const a = this.a;
    count(a, L.D_LOGFILE_HEADERS);
    if (a.logfilePayload !== null) return;
    a.logfilePayload = new Uint8Array(d.buffer, d.byteOffset + data, Math.min(n, L.LOGFILE_HEADER_COPY_MAX)).slice();
    a.logfilePayloadLength = n;
    a.logfilePointerSize = pointerSize;
    a.logfileTimestamp = d.getBigInt64(tsAt, true);
    if (n >= L.LFH_NUMBER_OF_PROCESSORS + 4) this.numberOfProcessors = d.getUint32(data + L.LFH_NUMBER_OF_PROCESSORS, true);
    if (this.biasOverride === undefined && n >= L.LFH_PROVIDER_VERSION + 4) {
      this.bias = L.maxWaitReasonForBuild(d.getUint32(data + L.LFH_PROVIDER_VERSION, true));
    }
    if (n >= L.LFH_BUFFER_SIZE + 4) this.compressedLimit = L.compressedLimitFor(d.getUint32(data + L.LFH_BUFFER_SIZE, true));
  }
}
