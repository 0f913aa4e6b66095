// The WebAssembly engine: a thin wrapper over one instance of the decoder module (assembly/). It owns
// no decoding logic; it moves bytes in (the input window lives in wasm memory), rows out (slice()d
// copies of the column regions) and reads the state blocks. Same results as src/engine/reference/ (its twin).
import * as L from '../../generated/layout.js';
import type { Engine, EngineState, IssueLogEntry, KindTally } from '../engine.js';
import {
  DECODED_TABLE_NAMES,
  NO_ROWS,
  perTable,
  TABLE_COLUMNS,
  TABLE_IDS,
  keptTableMask,
  validColumnOf,
  viewColumn,
  type Chunks,
  type ColumnChunk,
  type DecodedTableName,
  type TypedColumn,
} from '../../tables/schema.js';
import type { WasmExports } from './instance.js';

export interface WasmEngineOptions {
  /** rows per output table held in wasm memory between drains (default and most 131072; at least 32770 are used) */
  rowCapacity?: number;
  /** initial input window in bytes (default 4 MiB; reserveInput() grows it) */
  inputBytes?: number;
}

const DEFAULT_ROW_CAPACITY = 131072;
const DEFAULT_INPUT_BYTES = 4 << 20;
const MAX_WINDOW = 0x7fffffff;
/** the engine's row counts: one i32 per decoded table, registry ids 0..n-1 (assembly/memory.ts ROW_COUNTS) */
const ROW_COUNTS = DECODED_TABLE_NAMES.length;

/**
 * The kind-table entry at byte `e` of `table` (a copy of the engine's kind table; `kv` a view of it). u64
 * values as two u32 halves: exact below 2^53, like Number(BigInt) there, without a BigInt per value. The
 * GUID is a view of `table`, or its own copy with `copyGuid`.
 */
export function kindEntry(table: Uint8Array, kv: DataView, e: number, copyGuid: boolean): KindTally {
  const g = e + L.KIND_GUID;
  return {
    headerType: kv.getUint8(e + L.KIND_HEADER_TYPE),
    flags: kv.getUint8(e + L.KIND_FLAGS),
    version: kv.getUint16(e + L.KIND_VERSION, true),
    id: kv.getUint16(e + L.KIND_ID, true),
    task: kv.getUint16(e + L.KIND_TASK, true),
    opcode: kv.getUint8(e + L.KIND_OPCODE),
    guid: copyGuid ? table.slice(g, g + 16) : table.subarray(g, g + 16),
    count: u64At(kv, e + L.KIND_COUNT),
    bytes: u64At(kv, e + L.KIND_BYTES),
  };
}

/** The tallies of a copy of the engine's kind table (state()); the GUIDs are views of it. */
function kindTallies(table: Uint8Array): KindTally[] {
  const kinds: KindTally[] = [];
  const kv = new DataView(table.buffer, table.byteOffset, table.byteLength);
  for (let e = 0; e < table.length; e += L.KIND_ENTRY_SIZE) {
    if (kv.getUint8(e + L.KIND_USED) !== 0) kinds.push(kindEntry(table, kv, e, false));
  }
  return kinds;
}

/** The u64 at `at` of `kv` as a number (exact below 2^53); a function of its own, not a closure per entry. */
function u64At(kv: DataView, at: number): number {
  return kv.getUint32(at, true) + kv.getUint32(at + 4, true) * 2 ** 32;
}

function checkCount(name: string, value: number, max: number): void {
  if (!Number.isInteger(value) || value < 0 || value > max) {
    throw new RangeError(`WasmEngine: ${name} must be an integer in [0, ${max}], got ${value}`);
  }
}

export class WasmEngine implements Engine {
  readonly kind = 'wasm' as const;
  private readonly x: WasmExports;
  private readonly memory: WebAssembly.Memory;
  /** the string columns' text, decoded once per distinct string */
  private readonly strings = new StringHeapReader();
  private inputCapacity: number;
  private input: Uint8Array | null = null;
  /** the engine's row count per table, a view of its memory (mostPendingRows) */
  private counts: Int32Array | null = null;

  constructor(module: WebAssembly.Module, options: WasmEngineOptions = {}) {
    const rowCapacity = options.rowCapacity ?? DEFAULT_ROW_CAPACITY;
    const inputBytes = options.inputBytes ?? DEFAULT_INPUT_BYTES;
    checkCount('rowCapacity', rowCapacity, 1 << 26);
    checkCount('inputBytes', inputBytes, MAX_WINDOW);
    const instance = new WebAssembly.Instance(module, {});
    this.x = instance.exports as unknown as WasmExports;
    this.memory = this.x.memory;
    this.x.init(inputBytes, rowCapacity);
    if (this.x.rowCapacity() === 0 || this.x.inputPtr() === 0) {
      throw new RangeError(`WasmEngine: could not allocate ${inputBytes} input bytes and ${rowCapacity} rows in wasm memory`);
    }
    this.inputCapacity = inputBytes;
  }

  /** Starts a new decode on this instance: empty state and tables, same memory (see assembly reset()). */
  reset(): void {
    this.x.reset();
  }

  /** The instance's exports (src/parallel reads and sets the state carried across partitions through them). */
  get exports(): WasmExports {
    return this.x;
  }

  /** Bytes of linear memory the instance holds (it never shrinks). */
  memoryBytes(): number {
    return this.memory.buffer.byteLength;
  }

  reserveInput(byteLength: number): Uint8Array {
    checkCount('byteLength', byteLength, MAX_WINDOW);
    if (byteLength > this.inputCapacity) {
      if (this.x.reserveInput(byteLength) === 0) {
        throw new RangeError(`WasmEngine: could not grow the input window to ${byteLength} bytes`);
      }
      this.inputCapacity = byteLength;
    }
    return this.inputView();
  }

  inputView(): Uint8Array {
    const buffer = this.memory.buffer;
    const ptr = this.x.inputPtr() >>> 0;
    const v = this.input;
    if (!v || v.buffer !== buffer || v.byteOffset !== ptr || v.length !== this.inputCapacity) {
      this.input = new Uint8Array(buffer, ptr, this.inputCapacity);
    }
    return this.input!;
  }

  keepTables(tables: readonly DecodedTableName[] | null): void {
    this.x.keepTables(keptTableMask(tables));
  }

  setBiasOverride(bias: number | undefined): void {
    if (bias !== undefined) checkCount('bias', bias, 0x7fffffff);
    this.x.setBiasOverride(bias ?? -1);
  }

  decodeBuffer(offset: number, length: number, fileOffset: number, cut: boolean): number {
    checkCount('offset', offset, MAX_WINDOW);
    checkCount('length', length, MAX_WINDOW);
    if (offset + length > this.inputCapacity) {
      throw new RangeError(`WasmEngine: buffer [${offset}, ${offset + length}) is outside the ${this.inputCapacity}-byte input window`);
    }
    return this.x.decodeBuffer(offset, length, fileOffset, cut ? 1 : 0);
  }

  resume(): number {
    return this.x.resume();
  }

  finish(): number {
    return this.x.finish();
  }

  rowCount(table: number): number {
    return this.x.rowCount(table);
  }

  mostPendingRows(): number {
    // the engine's i32 row counts, read in its memory (no call per table); a new view when memory grew
    let counts = this.counts;
    if (counts === null || counts.buffer !== this.memory.buffer) counts = this.counts = new Int32Array(this.memory.buffer, this.x.rowCountsPtr() >>> 0, ROW_COUNTS);
    let most = 0;
    for (let t = 0; t < ROW_COUNTS; t++) if (counts[t]! > most) most = counts[t]!;
    return most;
  }

  /** Rows each table can hold between drains. */
  rowCapacity(): number {
    return this.x.rowCapacity();
  }

  drain(): Chunks {
    const out = perTable((t) => this.take(t, true));
    this.x.resetRows();
    return out;
  }

  peekRows(): Chunks {
    return perTable((t) => this.take(t, false));
  }

  resetRows(): void {
    this.x.resetRows();
  }

  private take(table: DecodedTableName, copy: boolean): ColumnChunk {
    const buffer = this.memory.buffer;
    const t = TABLE_IDS[table];
    const length = this.x.rowCount(t);
    // most drains leave most tables empty: one shared chunk of empty columns (nothing to copy or view)
    if (length === 0) return NO_ROWS[table];
    const v = validColumnOf(table);
    const valid = v >= 0 ? viewColumn('u32', buffer, this.x.columnPtr(t, v) >>> 0, length) : null;
    const columns = TABLE_COLUMNS[table].map((spec, c): TypedColumn => {
      if (spec.type === 'str') {
        const refs = viewColumn('u32', buffer, this.x.columnPtr(t, c) >>> 0, length);
        return this.strings.read(buffer, this.x.heapPtr() >>> 0, refs, valid, c);
      }
      const view = viewColumn(spec.type, buffer, this.x.columnPtr(t, c) >>> 0, length);
      return copy ? view.slice() : view;
    });
    return { length, columns };
  }

  state(): EngineState {
    const x = this.x;
    const buffer = this.memory.buffer;
    const dv = new DataView(buffer);
    const countersAt = x.countersPtr() >>> 0;
    const counters: number[] = [];
    for (let i = 0; i < L.D_COUNTER_COUNT; i++) counters.push(Number(dv.getBigUint64(countersAt + 8 * i, true)));
    const log: IssueLogEntry[] = [];
    const logAt = x.logPtr() >>> 0;
    for (let i = 0, n = x.logCount(); i < n; i++) {
      const e = logAt + i * L.LOG_ENTRY_SIZE;
      log.push({ code: dv.getUint32(e, true), detail: dv.getUint32(e + 4, true), fileOffset: dv.getFloat64(e + 8, true) });
    }
    // entries are dense, in first-seen order (the reference's order); one copy of them all is taken now,
    // and the tallies (an object and a GUID view each) are made from it when `kinds` is first read: a
    // trace can have thousands of kinds, and most decodes never look at them (summary.ts eventsByKind)
    const table = new Uint8Array(buffer, x.kindsPtr() >>> 0, x.kindCount() * L.KIND_ENTRY_SIZE).slice();
    let kinds: KindTally[] | null = null;
    const payloadLength = x.logfilePayloadLength();
    const logfilePayload = x.logfileCopied()
      ? new Uint8Array(buffer, x.logfilePtr() >>> 0, Math.min(payloadLength, L.LOGFILE_HEADER_COPY_MAX)).slice()
      : null;
    let headerExtension: Uint32Array | null = null;
    if (x.headerExtensionSeen()) {
      const at = x.headerExtensionPtr() >>> 0;
      headerExtension = new Uint32Array(L.KHE_SIZE / 4);
      for (let i = 0; i < headerExtension.length; i++) headerExtension[i] = dv.getUint32(at + 4 * i, true);
    }
    return {
      counters,
      log,
      get kinds(): KindTally[] {
        return (kinds ??= kindTallies(table));
      },
      logfilePayload,
      logfilePayloadLength: payloadLength,
      logfilePointerSize: x.logfilePointerSize(),
      logfileTimestamp: x.logfileTimestamp(),
      headerExtension,
      bias: x.bias(),
    };
  }
}

// ---- string columns
// The text of the engine's string-heap entries (layout.ts STR_*: a u32 of byte length | unit << 16, then
// the bytes; docs/format.md §F.2, §F.3, §F.5, §G.2), decoded once per distinct string: a trace names the
// same threads, processes and images over and over (rundowns, SetName), and a TextDecoder call per row
// costs more than the row. Entries are looked up by a hash of their bytes in a small open-addressing
// table whose bytes are kept for an exact comparison; the table is emptied when it holds MAX_BYTES, so its
// memory stays bounded whatever the trace. Identical entries give the same JavaScript string.
const utf16 = new TextDecoder('utf-16le');
const ansi = new TextDecoder('windows-1252');
/** bytes of distinct strings kept before the table starts again */
const MAX_BYTES = 1 << 20;
const SLOTS = 1 << 14;
/** slots of read()'s cache by entry offset */
const REF_SLOTS = 1 << 12;

export class StringHeapReader {
  private hash = new Int32Array(SLOTS);
  /** slot → entry + 1 (0: empty) */
  private slot = new Int32Array(SLOTS);
  private entries = 0;
  private text: string[] = [];
  private head = new Int32Array(SLOTS / 2);
  private at = new Int32Array(SLOTS / 2);
  /** distinct strings the table holds (since it last started again) */
  get distinct(): number {
    return this.entries;
  }

  /** the kept entries' words (the heap's words: the string's bytes, zero-padded to a whole word) */
  private words = new Int32Array(MAX_BYTES / 4);
  private used = 0;

  /**
   * The strings of entries at heap + refs[i] (rows whose bit `column` of `valid` is clear: '') in wasm
   * memory `buffer`.
   */
  read(buffer: ArrayBufferLike, heap: number, refs: Uint32Array, valid: Uint32Array | null, column: number): string[] {
    const out = new Array<string>(refs.length);
    const mem = new Int32Array(buffer);
    // the engine interns its entries (assembly/strings.ts): a repeated string is a repeated offset, found
    // here by the offset alone (valid for this call: the heap is emptied between chunks)
    const epoch = ++this.epoch;
    const refKey = this.refKey;
    const refEpoch = this.refEpoch;
    const refText = this.refText;
    for (let i = 0; i < refs.length; i++) {
      if (valid !== null && ((valid[i]! >>> column) & 1) === 0) {
        out[i] = '';
        continue;
      }
      const ref = refs[i]!;
      const r = (ref >>> 2) & (REF_SLOTS - 1);
      if (refKey[r] === ref && refEpoch[r] === epoch) {
        out[i] = refText[r]!;
        continue;
      }
      const entry = (heap + ref) >>> 2;
      const head = mem[entry]!;
      const text = (head & 0xffff) === 0 ? '' : this.lookup(buffer, mem, entry + (L.STR_ENTRY_HEADER >>> 2), head);
      refKey[r] = ref;
      refEpoch[r] = epoch;
      refText[r] = text;
      out[i] = text;
    }
    return out;
  }

  /** read()'s entries by offset: slot (offset / 4) mod REF_SLOTS, valid in the read() of its epoch */
  private refKey = new Int32Array(REF_SLOTS);
  private refEpoch = new Int32Array(REF_SLOTS);
  private refText: string[] = new Array<string>(REF_SLOTS).fill('');
  private epoch = 0;

  /** The string of the entry whose header is `head` and whose words start at word `w` of `mem`. */
  private lookup(buffer: ArrayBufferLike, mem: Int32Array, w: number, head: number): string {
    const n = head & 0xffff;
    const nw = (n + 3) >>> 2;
    // FNV-1a over the header (length and unit) and the words
    let h = Math.imul(0x811c9dc5 ^ head, 0x01000193);
    for (let k = 0; k < nw; k++) h = Math.imul(h ^ mem[w + k]!, 0x01000193);
    const mask = SLOTS - 1;
    let s = (h ^ (h >>> 15)) & mask;
    for (; ; s = (s + 1) & mask) {
      const e = this.slot[s]! - 1;
      if (e < 0) break;
      if (this.hash[s] !== h || this.head[e] !== head) continue;
      const a = this.at[e]!;
      let k = 0;
      while (k < nw && this.words[a + k] === mem[w + k]) k++;
      if (k === nw) return this.text[e]!;
    }
    const text = ((head >>> 16) === L.STR_UNIT_ANSI ? ansi : utf16).decode(new Uint8Array(buffer, 4 * w, n));
    if (this.used + nw > this.words.length || 2 * (this.entries + 1) > SLOTS) {
      if (nw > this.words.length / 4) return text; // a huge string is not kept
      this.clear();
      s = (h ^ (h >>> 15)) & mask;
    }
    const e = this.entries++;
    this.words.set(mem.subarray(w, w + nw), this.used);
    this.at[e] = this.used;
    this.head[e] = head;
    this.text[e] = text;
    this.used += nw;
    this.hash[s] = h;
    this.slot[s] = e + 1;
    return text;
  }

  private clear(): void {
    this.slot.fill(0);
    this.entries = 0;
    this.text = [];
    this.used = 0;
  }
}
