// CSV and JSON lines of any table, formatted straight into a reusable byte buffer: one header row of
// column names (CSV), decimal integers (64-bit exact; in JSON lines every 64-bit column and converted time is
// a decimal string, so a column's JSON type never changes by row), an empty cell (CSV) or null (JSON) for
// null. Optional extra columns: converted times (--time ns|filetime: every tick column of the registry) and
// enum names (--names). The internal `valid` mask is not written.
//
// Speed: digits are written by hand (src/output/digits.ts), 64-bit cells from the two 32-bit halves of the
// column (an Int32Array over the same memory, no BigInt per cell), converted times with number arithmetic
// (src/output/ticks.ts), strings and names encoded once per distinct value (src/output/escape.ts). Each
// row costs no allocation; the buffer is handed to the sink when nearly full.
import { TABLES } from '../generated/registry.js';
import { ENUMS } from '../enums.js';
import { TABLE_COLUMNS, validColumnOf, type ColumnType, type TableName, type TypedColumn } from '../schema.js';
import type { Table } from '../table.js';
import type { Clock } from '../time.js';
import { DIGITS_OVERHANG, writeI32, writeI64, writeSafe, writeU32, writeU64, writeUSafe } from './digits.js';
import { csvText, jsonText, StringBytes } from './escape.js';
import { MAX_TICK_TEXT, TickWriter, type TickConversion } from './ticks.js';

export type DumpFormat = 'csv' | 'jsonl';
export type TimeColumn = 'raw' | 'ns' | 'filetime';

export interface FormatOptions {
  format: DumpFormat;
  /** add name columns for enum values */
  names?: boolean;
  /** add a converted time column (needs the clock) */
  time?: TimeColumn;
  clock?: Clock | null;
}

/**
 * Receives the formatted bytes. The bytes are the sink's to keep: the writer never touches them again
 * (it continues in a new buffer). A returned promise is awaited before the writer goes on (backpressure).
 */
export type TextSink = (bytes: Uint8Array) => void | Promise<void>;

// cell kinds (one switch case each, so every typed-array access site sees one element type)
const K_U8 = 0;
const K_U16 = 1;
const K_U32 = 2;
const K_I8 = 3;
const K_I32 = 4;
const K_F64 = 5;
const K_I64 = 6;
const K_U64 = 7;
const K_STR = 8;
const K_NAME = 9;
const K_TICKS = 10;

const KIND_OF: Record<ColumnType, number> = { u8: K_U8, u16: K_U16, u32: K_U32, i8: K_I8, i32: K_I32, f64: K_F64, i64: K_I64, u64: K_U64, str: K_STR };
/** longest text of a value of each kind (STR: none, checked per string; NAME: per enum) */
const MAX_BYTES = [3, 5, 10, 4, 11, 32, 22, 22, 0, 0, MAX_TICK_TEXT + 2];

/** index of the low / high 32-bit half of int64 i in an Int32Array over the same bytes (platform byte order) */
const LITTLE_ENDIAN = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;
const LO = LITTLE_ENDIAN ? 0 : 1;
const HI = LITTLE_ENDIAN ? 1 : 0;

const TWO_32 = 4294967296;
const QUOTE = 34;
const COMMA = 44;
const NEWLINE = 10;
const CLOSE_BRACE = 125;

interface Cell {
  /** output column name */
  name: string;
  kind: number;
  /** the table column the value comes from */
  column: number;
  /** bit of the `valid` mask that says the value is present, or -1 when it always is */
  nullBit: number;
  /** K_NAME: the encoded name of every value (undefined: not named) */
  names: (Uint8Array | undefined)[] | null;
  /** K_TICKS */
  ticks: TickWriter | null;
}

const encoder = new TextEncoder();
const DEFAULT_BUFFER_BYTES = 1 << 16;

/**
 * Formats chunks of one table as CSV or JSON lines. Call writeHeader() once first (it writes the CSV
 * header row; nothing for JSON lines), then write() for every chunk, then end(). Bytes reach the sink in
 * buffers of about `bufferBytes` (default 64 KiB; more for a row with a longer string), each the sink's to
 * keep. Each call returns a promise when the sink returned one (await it before the next call: a call
 * while one is pending throws); with a synchronous sink every call is synchronous.
 */
export class TextTableWriter {
  /** the output columns, in order: the table's columns, then the converted times, then the names */
  readonly columns: readonly string[];
  private readonly json: boolean;
  private readonly cells: Cell[];
  private readonly kinds: Int32Array;
  private readonly nullBits: Int32Array;
  /**
   * JSON: the bytes written before each cell (`{"name":` / `,"name":`) as little-endian 32-bit words,
   * prefixWords[prefixWordStart[c] … prefixWordStart[c + 1]), prefixLength[c] bytes of them meaningful:
   * written 4 bytes at a time, the up to 3 bytes past the prefix are overwritten by what follows
   */
  private readonly prefixWords: Int32Array;
  private readonly prefixWordStart: Int32Array;
  private readonly prefixLength: Int32Array;
  /** room a row needs besides its strings */
  private readonly rowReserve: number;
  private readonly strings: StringBytes;
  private readonly nameQuote: (s: string) => string;
  private readonly capacity: number;
  private readonly validColumn: number;
  private buf: Uint8Array;
  /** a DataView of buf (4-byte writes at any position) */
  private view: DataView;
  private pos = 0;
  private busy = false;

  constructor(
    readonly table: TableName,
    options: FormatOptions,
    private readonly sink: TextSink,
    bufferBytes: number = DEFAULT_BUFFER_BYTES,
  ) {
    if (options.format !== 'csv' && options.format !== 'jsonl') throw new RangeError(`format must be 'csv' or 'jsonl', got '${String(options.format)}'`);
    this.json = options.format === 'jsonl';
    this.nameQuote = this.json ? jsonText : csvText;
    this.strings = new StringBytes(this.json ? jsonText : csvText);
    this.cells = cellsOf(table, options, this.nameQuote);
    this.columns = this.cells.map((c) => c.name);
    this.validColumn = validColumnOf(table);
    this.kinds = Int32Array.from(this.cells, (c) => c.kind);
    this.nullBits = Int32Array.from(this.cells, (c) => c.nullBit);
    const prefixes = this.cells.map((c, i) => encoder.encode(this.json ? `${i ? ',' : '{'}"${c.name}":` : i ? ',' : ''));
    this.prefixLength = Int32Array.from(prefixes, (p) => p.length);
    this.prefixWordStart = new Int32Array(prefixes.length + 1);
    prefixes.forEach((p, i) => (this.prefixWordStart[i + 1] = this.prefixWordStart[i]! + Math.ceil(p.length / 4)));
    const padded = new Uint8Array(4 * this.prefixWordStart[prefixes.length]!);
    prefixes.forEach((p, i) => padded.set(p, 4 * this.prefixWordStart[i]!));
    const words = new DataView(padded.buffer);
    this.prefixWords = Int32Array.from({ length: padded.length / 4 }, (_, k) => words.getInt32(4 * k, true));
    let reserve = padded.length + 2 + DIGITS_OVERHANG;
    for (const c of this.cells) {
      const longestName = c.names ? Math.max(UNKNOWN_MAX, ...c.names.map((n) => n?.length ?? 0)) : 0;
      reserve += Math.max(4, MAX_BYTES[c.kind]!, longestName);
    }
    this.rowReserve = reserve;
    this.capacity = Math.max(bufferBytes | 0, 2 * reserve, 4096);
    this.buf = new Uint8Array(this.capacity);
    this.view = new DataView(this.buf.buffer);
  }

  /** The CSV header row (column names); nothing for JSON lines. */
  writeHeader(): void | Promise<void> {
    this.idle();
    if (this.json) return;
    const line = encoder.encode(this.columns.join(',') + '\n');
    this.ensure(line.length);
    this.buf.set(line, this.pos);
    this.pos += line.length;
    return this.pos + this.rowReserve > this.capacity ? this.track(this.flush()) : undefined;
  }

  /** Formats every row of `t` (a chunk of this writer's table). Rows are read before the call (or its promise) ends. */
  write(t: Table): void | Promise<void> {
    this.idle();
    if (t.name !== this.table) throw new RangeError(`this writer formats ${this.table} rows, not ${t.name}`);
    if (t.length === 0) return;
    const cols = t.columns;
    const data = this.cells.map((c): TypedColumn => {
      const col = cols[c.column]!;
      if (c.kind !== K_I64 && c.kind !== K_U64 && c.kind !== K_TICKS) return col;
      const w = col as BigInt64Array;
      return new Int32Array(w.buffer, w.byteOffset, w.length * 2);
    });
    const valid = this.validColumn >= 0 ? (cols[this.validColumn] as Uint32Array) : null;
    return this.track(this.run(data, valid, t.length, 0));
  }

  /** Hands what is buffered to the sink. */
  end(): void | Promise<void> {
    this.idle();
    return this.track(this.flush());
  }

  private idle(): void {
    if (this.busy) throw new Error('TextTableWriter: the previous call has not finished (await its promise first)');
  }

  private track(r: void | Promise<void>): void | Promise<void> {
    if (!isPromise(r)) return;
    this.busy = true;
    return r.finally(() => {
      this.busy = false;
    });
  }

  private run(data: TypedColumn[], valid: Uint32Array | null, n: number, from: number): void | Promise<void> {
    let i = from;
    for (;;) {
      i = this.fill(data, valid, n, i);
      if (i >= n) return;
      const r = this.flush();
      if (isPromise(r)) return r.then(() => this.run(data, valid, n, i));
    }
  }

  private flush(): void | Promise<void> {
    if (this.pos === 0) return;
    const out = this.buf.subarray(0, this.pos);
    this.buf = new Uint8Array(this.capacity);
    this.view = new DataView(this.buf.buffer);
    this.pos = 0;
    return this.sink(out);
  }

  /** Room for `bytes` more bytes plus one row (a bigger buffer for a very long string). */
  private ensure(bytes: number): Uint8Array {
    const need = this.pos + bytes + this.rowReserve;
    if (need > this.buf.length) {
      const bigger = new Uint8Array(Math.max(need, 2 * this.buf.length));
      bigger.set(this.buf.subarray(0, this.pos));
      this.buf = bigger;
      this.view = new DataView(bigger.buffer);
    }
    return this.buf;
  }

  /** The name of a value the enumeration does not know: `Unknown(v)` (as enums.ts nameOf). */
  private unknownName(cell: Cell, v: number): Uint8Array {
    const b = encoder.encode(this.nameQuote(`Unknown(${v})`));
    cell.names![v] = b; // enum columns are u8: at most 256 entries
    return b;
  }

  /** Formats rows from..n-1 until the buffer is nearly full; returns the first row not written. */
  private fill(data: TypedColumn[], valid: Uint32Array | null, n: number, from: number): number {
    let buf = this.buf;
    let pos = this.pos;
    const limit = this.capacity - this.rowReserve;
    const kinds = this.kinds;
    const nullBits = this.nullBits;
    let view = this.view;
    const words = this.prefixWords;
    const wordStart = this.prefixWordStart;
    const prefixLength = this.prefixLength;
    const cells = this.cells;
    const nc = kinds.length;
    const json = this.json;
    let i = from;
    for (; i < n && pos <= limit; i++) {
      const vw = valid === null ? -1 : valid[i]!;
      for (let c = 0; c < nc; c++) {
        if (json) {
          for (let k = wordStart[c]!, e = wordStart[c + 1]!, p = pos; k < e; k++, p += 4) view.setInt32(p, words[k]!, true);
          pos += prefixLength[c]!;
        } else if (c !== 0) buf[pos++] = COMMA;
        const bit = nullBits[c]!;
        if (bit >= 0 && ((vw >>> bit) & 1) === 0) {
          if (json) {
            buf[pos] = 110; // null
            buf[pos + 1] = 117;
            buf[pos + 2] = 108;
            buf[pos + 3] = 108;
            pos += 4;
          }
          continue;
        }
        const d = data[c]!;
        let v = 0;
        switch (kinds[c]) {
          case K_U8:
            v = (d as Uint8Array)[i]!;
            if (v < 10) buf[pos++] = 48 + v;
            else pos = writeU32(view, pos, v);
            break;
          case K_U16:
            v = (d as Uint16Array)[i]!;
            if (v < 10) buf[pos++] = 48 + v;
            else pos = writeU32(view, pos, v);
            break;
          case K_U32:
            v = (d as Uint32Array)[i]!;
            if (v < 10) buf[pos++] = 48 + v;
            else pos = writeU32(view, pos, v);
            break;
          case K_I8:
            pos = writeI32(view, pos, (d as Int8Array)[i]!);
            break;
          case K_I32:
            pos = writeI32(view, pos, (d as Int32Array)[i]!);
            break;
          case K_F64: {
            v = (d as Float64Array)[i]!;
            if (v >= 0 && v < TWO_32 && v === Math.floor(v)) pos = writeU32(view, pos, v); // file offsets: -0 too ("0")
            else if (Number.isSafeInteger(v)) pos = writeSafe(view, pos, v);
            else pos = writeAscii(buf, pos, String(v)); // as String(v): 1.5, 1e+300, NaN
            break;
          }
          case K_I64: {
            const w = d as Int32Array;
            if (json) buf[pos++] = QUOTE;
            const hi = w[2 * i + HI]!;
            // timestamps: non-negative and below 2^53 (hi < 2^21), one number
            if (hi >= 0 && hi < 0x200000) pos = writeUSafe(view, pos, hi * TWO_32 + (w[2 * i + LO]! >>> 0));
            else pos = writeI64(view, pos, hi, w[2 * i + LO]! >>> 0);
            if (json) buf[pos++] = QUOTE;
            break;
          }
          case K_U64: {
            const w = d as Int32Array;
            if (json) buf[pos++] = QUOTE;
            pos = writeU64(view, pos, w[2 * i + HI]! >>> 0, w[2 * i + LO]! >>> 0);
            if (json) buf[pos++] = QUOTE;
            break;
          }
          case K_STR: {
            const b = this.strings.get((d as string[])[i]!);
            const len = b.length;
            if (pos + len + this.rowReserve > buf.length) {
              this.pos = pos;
              buf = this.ensure(len);
              view = this.view;
            }
            if (len > 32) buf.set(b, pos);
            else for (let k = 0; k < len; k++) buf[pos + k] = b[k]!;
            pos += len;
            break;
          }
          case K_NAME: {
            v = (d as Uint8Array)[i]!;
            const cell = cells[c]!;
            const b = cell.names![v] ?? this.unknownName(cell, v);
            for (let k = 0; k < b.length; k++) buf[pos + k] = b[k]!;
            pos += b.length;
            break;
          }
          case K_TICKS: {
            const w = d as Int32Array;
            if (json) buf[pos++] = QUOTE;
            pos = cells[c]!.ticks!.write(view, pos, w[2 * i + HI]!, w[2 * i + LO]! >>> 0);
            if (json) buf[pos++] = QUOTE;
            break;
          }
        }
      }
      if (json) buf[pos++] = CLOSE_BRACE;
      buf[pos++] = NEWLINE;
    }
    this.pos = pos;
    return i;
  }
}

/** room for the longest Unknown(v) name of a u8..u32 value, quoted */
const UNKNOWN_MAX = 'Unknown(4294967295)'.length + 2;

function writeAscii(buf: Uint8Array, pos: number, s: string): number {
  for (let k = 0; k < s.length; k++) buf[pos + k] = s.charCodeAt(k);
  return pos + s.length;
}

function isPromise(r: void | Promise<void>): r is Promise<void> {
  return r !== undefined && typeof (r as Promise<void>).then === 'function';
}

/** The output cells of a table: its visible columns, then converted times, then names (registry order). */
function cellsOf(table: TableName, o: FormatOptions, quote: (s: string) => string): Cell[] {
  const cells: Cell[] = TABLE_COLUMNS[table]
    .filter((c) => c.name !== 'valid')
    .map((c) => ({ name: c.name, kind: KIND_OF[c.type], column: c.id, nullBit: c.nullable ? c.id : -1, names: null, ticks: null }));
  const columns = TABLES[table].columns;
  if (o.time && o.time !== 'raw') {
    const clock = o.clock;
    if (!clock) throw new RangeError('--time needs a trace whose clock type can be converted (QPC, system time or CPU cycles)');
    const ns = o.time === 'ns';
    // every column of raw ticks (registry `time`): `timestamp` → timeNs / fileTime, others → <name>Ns /
    // <name>FileTime; differences of ticks (`duration`) → <name>Ns with --time ns
    for (const c of columns) {
      if (c.time === null || (c.time === 'duration' && !ns)) continue;
      const name = c.name === 'timestamp' ? (ns ? 'timeNs' : 'fileTime') : c.name + (ns ? 'Ns' : 'FileTime');
      const conversion: TickConversion = c.time === 'duration' ? 'duration' : ns ? 'ns' : 'filetime';
      cells.push({ name, kind: K_TICKS, column: c.id, nullBit: c.nullable ? c.id : -1, names: null, ticks: new TickWriter(clock, conversion) });
    }
  }
  if (o.names) {
    // a name column after the others for every column that holds an enumeration (registry `enum`)
    for (const c of columns) {
      if (c.enum === null) continue;
      const type: ColumnType = c.type;
      if (type !== 'u8') throw new Error(`${table}.${c.name}: enum columns must be u8 (the name cache is indexed by value)`);
      const names = Array.from(ENUMS[c.enum]!, (n) => (n === undefined ? undefined : encoder.encode(quote(n))));
      cells.push({ name: c.name + 'Name', kind: K_NAME, column: c.id, nullBit: c.nullable ? c.id : -1, names, ticks: null });
    }
  }
  return cells;
}

/** Bytes of every chunk handed to a sink, as one array. */
function collect(write: (sink: TextSink) => void): Uint8Array {
  const parts: Uint8Array[] = [];
  write((b) => void parts.push(b));
  if (parts.length === 1) return parts[0]!;
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

/** A whole table as CSV (header row, then one row per record), UTF-8. */
export function toCsv(table: Table, options: Omit<FormatOptions, 'format'> = {}): Uint8Array {
  return collect((sink) => {
    const w = new TextTableWriter(table.name, { ...options, format: 'csv' }, sink, 1 << 20);
    w.writeHeader();
    w.write(table);
    w.end();
  });
}

/** A whole table as JSON lines (one object per record), UTF-8. */
export function toJsonl(table: Table, options: Omit<FormatOptions, 'format'> = {}): Uint8Array {
  return collect((sink) => {
    const w = new TextTableWriter(table.name, { ...options, format: 'jsonl' }, sink, 1 << 20);
    w.write(table);
    w.end();
  });
}
