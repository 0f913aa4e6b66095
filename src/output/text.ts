// CSV and JSON lines of any table, formatted straight into a reusable byte buffer: one header row of
// column names (CSV), decimal integers (64-bit exact; in JSON lines every 64-bit column and converted time is
// a decimal string, so a column's JSON type never changes by row), an empty cell (CSV) or null (JSON) for
// null. Optional extra columns: converted times (--time ns|filetime: every tick column of the registry) and
// enum names (--names). The internal `valid` mask is not written.
//
// Speed: digits are written by hand (src/output/digits.ts), 64-bit cells from the two 32-bit halves of the
// column (an Int32Array over the same memory, no BigInt per cell), converted times with number arithmetic
// (src/time.ts TickConverter), strings and names encoded once per distinct value (src/output/escape.ts), the row
// loop compiled per layout where the platform allows (src/output/row-loop.ts). Each row costs no
// allocation; the buffer is handed to the sink when nearly full.
import { TABLES } from '../generated/registry.js';
import { ENUMS } from '../tables/enums.js';
import { TABLE_COLUMNS, validColumnOf, type ColumnType, type TableName, type TypedColumn } from '../tables/schema.js';
import type { Table } from '../tables/table.js';
import { formatSeconds, TickConverter, type Clock, type TickConversion, type TickPath } from '../time.js';
import { concatBytes } from './bytes.js';
import { DIGITS_OVERHANG, writeI64, writeSafe } from './digits.js';
import { csvText, jsonText, StringBytes } from './escape.js';
import { sinkWait, type ByteSink } from './sink.js';
import { wasmRowLoop, type WasmRows } from './text-wasm.js';
import { K_ADDR, K_F64, K_I32, K_I64, K_I8, K_NAME, K_STR, K_TICKS, K_U16, K_U32, K_U64, K_U8, rowLoop, type RowCell, type RowLoop, type RowTarget } from './row-loop.js';

export type DumpFormat = 'csv' | 'jsonl';
/**
 * A converted time column: ns (integer nanoseconds since the trace start), s (seconds since the start, 9
 * decimals), filetime (integer 100 ns since 1601, UTC), iso (UTC as YYYY-MM-DDThh:mm:ss.fffffffZ); raw: none.
 */
export type TimeColumn = 'raw' | 'ns' | 's' | 'filetime' | 'iso';

/** How a TickWriter writes its value: an integer, seconds with 9 decimals (from ns), an ISO UTC time (from a FILETIME). */
export type TickStyle = 'integer' | 'seconds' | 'iso';

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
 * (it continues in a new buffer). A returned promise is awaited before the writer goes on (backpressure);
 * any other return value is ignored (src/output/sink.ts).
 */
export type TextSink = ByteSink;

/** Bytes of the longest converted time text (an int64: at most 20 characters), overhang included. */
export const MAX_TICK_TEXT = 48;

/**
 * What TickWriter.write returns for a value outside the int64 range (only from corrupt ticks or clocks):
 * the cell is null, as Arrow and Parquet store it — one rule for out-of-range times in every output.
 */
export const NO_TICK_VALUE = -1;
const I64_MIN = -(2n ** 63n);
const I64_MAX = 2n ** 63n - 1n;

/** A converted time as decimal digits: the TickConverter's number, else its exact BigInt value. */
export class TickWriter {
  private readonly conv: TickConverter;
  /** the converter's base (FILETIME at the anchor) is not 0: added to its number in 32-bit halves */
  private readonly based: boolean;
  /** iso: the base as whole days since 1601 and 100 ns units into its day (doubles, exact) */
  private readonly baseDays: number = 0;
  private readonly baseRem: number = 0;
  /** integers without a base (ns and durations): the number path, then writeSafe */
  private readonly plain: boolean;

  constructor(
    clock: Clock,
    kind: TickConversion,
    private readonly style: TickStyle = 'integer',
  ) {
    this.conv = new TickConverter(clock, kind);
    this.based = this.conv.baseHi !== 0 || this.conv.baseLo !== 0;
    this.plain = style === 'integer' && !this.based;
    if (style === 'iso') {
      const base = BigInt(this.conv.baseHi) * 4294967296n + BigInt(this.conv.baseLo);
      const days = base / DAY_100NS_BIG - (base % DAY_100NS_BIG < 0n ? 1n : 0n);
      this.baseDays = Number(days);
      this.baseRem = Number(base - days * DAY_100NS_BIG);
    }
  }

  /**
   * Writes the converted value of the int64 whose halves are hi (signed) and lo (unsigned) at `pos`;
   * returns the position after it (up to 3 more bytes may be stored past it, as digits.ts writers do),
   * or NO_TICK_VALUE, having written nothing, when the value does not fit in an int64.
   * Room for MAX_TICK_TEXT bytes is the caller's to provide.
   */
  write(out: DataView, pos: number, hi: number, lo: number): number {
    // the common case first, in a method small enough to be inlined into the row loop
    if (this.plain) {
      const v = this.conv.fromHalves(hi, lo);
      if (v === v) return writeSafe(out, pos, v);
    }
    return this.writeAny(out, pos, hi, lo);
  }

  /** The converter's number path (TickConverter.numberPath) when this writes integers, else null. */
  integerPath(): TickPath | null {
    return this.style === 'integer' ? this.conv.numberPath() : null;
  }

  /** write() for any style, base and value. */
  private writeAny(out: DataView, pos: number, hi: number, lo: number): number {
    const v = this.conv.fromHalves(hi, lo);
    if (this.style === 'seconds') {
      if (v === v) return writeSeconds(out, pos, v);
      const exact = this.conv.exact((BigInt(hi | 0) << 32n) | BigInt(lo >>> 0));
      if (exact < I64_MIN || exact > I64_MAX) return NO_TICK_VALUE;
      return writeText(out, pos, formatSeconds(exact));
    }
    if (this.style === 'iso') {
      if (v === v) {
        // days and 100 ns units since 1601 from the base's and the value's, in exact doubles
        const total = this.baseRem + v;
        const d = Math.floor(total / DAY_100NS);
        return writeIso(out, pos, this.baseDays + d, total - d * DAY_100NS);
      }
      const ft = this.conv.exact((BigInt(hi | 0) << 32n) | BigInt(lo >>> 0));
      const days = ft / DAY_100NS_BIG - (ft % DAY_100NS_BIG < 0n ? 1n : 0n);
      // beyond the years an ISO date has (0000–9999): null
      if (days < -700_000n || days > 4_000_000n) return NO_TICK_VALUE;
      return writeIso(out, pos, Number(days), Number(ft - days * DAY_100NS_BIG));
    }
    if (v !== v) {
      const exact = this.conv.exact((BigInt(hi | 0) << 32n) | BigInt(lo >>> 0));
      if (exact < I64_MIN || exact > I64_MAX) return NO_TICK_VALUE;
      const s = exact.toString();
      for (let i = 0; i < s.length; i++) out.setUint8(pos + i, s.charCodeAt(i));
      return pos + s.length;
    }
    if (!this.based) return writeSafe(out, pos, v);
    // base + v in 32-bit halves (|base| < 2^62, |v| < 2^53: no overflow)
    const vhi = Math.floor(v / TWO_32);
    let lo2 = this.conv.baseLo + (v - vhi * TWO_32);
    let carry = 0;
    if (lo2 >= TWO_32) {
      lo2 -= TWO_32;
      carry = 1;
    }
    return writeI64(out, pos, this.conv.baseHi + vhi + carry, lo2);
  }
}

const TWO_32 = 4294967296;
const DAY_100NS = 864_000_000_000;
const DAY_100NS_BIG = 864_000_000_000n;
/** days from 1601-01-01 to 1970-01-01 */
const DAYS_1601_TO_1970 = 134_774;

function writeText(out: DataView, pos: number, s: string): number {
  for (let i = 0; i < s.length; i++) out.setUint8(pos + i, s.charCodeAt(i));
  return pos + s.length;
}

/** `n` as exactly `width` decimal digits (0 ≤ n < 10^width). */
function writeDigits(out: DataView, pos: number, n: number, width: number): number {
  for (let i = width - 1; i >= 0; i--) {
    const q = Math.floor(n / 10);
    out.setUint8(pos + i, 48 + (n - q * 10));
    n = q;
  }
  return pos + width;
}

/** Nanoseconds (an exact double) as seconds with 9 decimals. */
function writeSeconds(out: DataView, pos: number, ns: number): number {
  if (ns < 0) {
    out.setUint8(pos++, 45); // -
    ns = -ns;
  }
  const s = Math.floor(ns / 1e9);
  pos = writeSafe(out, pos, s);
  out.setUint8(pos++, 46); // .
  return writeDigits(out, pos, ns - s * 1e9, 9);
}

/**
 * Days since 1601-01-01 and 100 ns units into the day as YYYY-MM-DDThh:mm:ss.fffffffZ (the proleptic
 * Gregorian calendar: H. Hinnant's civil_from_days); NO_TICK_VALUE outside the years 0000–9999.
 */
function writeIso(out: DataView, pos: number, days1601: number, rem: number): number {
  const z = days1601 - DAYS_1601_TO_1970 + 719468;
  const era = Math.floor(z / 146097);
  const doe = z - era * 146097;
  const yoe = Math.floor((doe - Math.floor(doe / 1460) + Math.floor(doe / 36524) - Math.floor(doe / 146096)) / 365);
  const doy = doe - (365 * yoe + Math.floor(yoe / 4) - Math.floor(yoe / 100));
  const mp = Math.floor((5 * doy + 2) / 153);
  const day = doy - Math.floor((153 * mp + 2) / 5) + 1;
  const month = mp < 10 ? mp + 3 : mp - 9;
  const year = yoe + era * 400 + (month <= 2 ? 1 : 0);
  if (year < 0 || year > 9999) return NO_TICK_VALUE;
  const secs = Math.floor(rem / 1e7);
  pos = writeDigits(out, pos, year, 4);
  out.setUint8(pos++, 45);
  pos = writeDigits(out, pos, month, 2);
  out.setUint8(pos++, 45);
  pos = writeDigits(out, pos, day, 2);
  out.setUint8(pos++, 84); // T
  pos = writeDigits(out, pos, Math.floor(secs / 3600), 2);
  out.setUint8(pos++, 58);
  pos = writeDigits(out, pos, Math.floor(secs / 60) % 60, 2);
  out.setUint8(pos++, 58);
  pos = writeDigits(out, pos, secs % 60, 2);
  out.setUint8(pos++, 46);
  pos = writeDigits(out, pos, rem - secs * 1e7, 7);
  out.setUint8(pos++, 90); // Z
  return pos;
}

const KIND_OF: Record<ColumnType, number> = { u8: K_U8, u16: K_U16, u32: K_U32, i8: K_I8, i32: K_I32, f64: K_F64, i64: K_I64, u64: K_U64, str: K_STR };
/** longest text of a value of each kind (STR: none, checked per string; NAME: per enum) */
const MAX_BYTES = [3, 5, 10, 4, 11, 32, 22, 22, 0, 0, MAX_TICK_TEXT + 2, 20];

interface Cell extends RowCell {
  /** output column name */
  name: string;
  /** the table column the value comes from */
  column: number;
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
  private readonly out: OutBuffer;
  /** the TypeScript row loop, and the WebAssembly one where the layout allows (src/output/text-wasm.ts) */
  private readonly rows: RowLoop;
  private readonly wasm: WasmRows | null;
  private readonly validColumn: number;
  private busy = false;

  constructor(
    readonly table: TableName,
    options: FormatOptions,
    private readonly sink: TextSink,
    bufferBytes: number = DEFAULT_BUFFER_BYTES,
  ) {
    if (options.format !== 'csv' && options.format !== 'jsonl') throw new RangeError(`format must be 'csv' or 'jsonl', got '${String(options.format)}'`);
    this.json = options.format === 'jsonl';
    const quote = this.json ? jsonText : csvText;
    this.cells = cellsOf(table, options, quote);
    this.columns = this.cells.map((c) => c.name);
    this.validColumn = validColumnOf(table);
    // JSON: the bytes before each cell as little-endian words (stored 4 at a time; the up to 3 bytes past
    // a prefix are overwritten by the value that follows)
    const prefixes = this.cells.map((c, i) => encoder.encode(this.json ? `${i ? ',' : '{'}"${c.name}":` : i ? ',' : ''));
    const prefixLength = Int32Array.from(prefixes, (p) => p.length);
    const prefixWordStart = new Int32Array(prefixes.length + 1);
    prefixes.forEach((p, i) => (prefixWordStart[i + 1] = prefixWordStart[i]! + Math.ceil(p.length / 4)));
    const padded = new Uint8Array(4 * prefixWordStart[prefixes.length]!);
    prefixes.forEach((p, i) => padded.set(p, 4 * prefixWordStart[i]!));
    const words = new DataView(padded.buffer);
    const prefixWords = Int32Array.from({ length: padded.length / 4 }, (_, k) => words.getInt32(4 * k, true));
    let reserve = padded.length + 2 + DIGITS_OVERHANG;
    for (const c of this.cells) {
      const longestName = c.names ? Math.max(UNKNOWN_MAX, ...c.names.map((n) => n?.length ?? 0)) : 0;
      reserve += Math.max(4, MAX_BYTES[c.kind]!, longestName);
    }
    this.out = new OutBuffer(Math.max(bufferBytes | 0, 2 * reserve, 4096), reserve, new StringBytes(quote), quote);
    const layout = { json: this.json, cells: this.cells, prefixWords, prefixWordStart, prefixLength };
    this.rows = rowLoop(layout);
    this.wasm = wasmRowLoop(layout, this.cells.map((c) => c.column), this.rows, reserve);
  }

  /** The CSV header row (column names); nothing for JSON lines. */
  writeHeader(): void | Promise<void> {
    this.idle();
    if (this.json) return;
    const out = this.out;
    const line = encoder.encode(this.columns.join(',') + '\n');
    out.ensure(line.length);
    out.buf.set(line, out.pos);
    out.pos += line.length;
    return out.pos > out.limit ? this.track(this.flush()) : undefined;
  }

  /** Formats every row of `t` (a chunk of this writer's table). Rows are read before the call (or its promise) ends. */
  write(t: Table): void | Promise<void> {
    this.idle();
    if (t.name !== this.table) throw new RangeError(`this writer formats ${this.table} rows, not ${t.name}`);
    if (t.length === 0) return;
    const cols = t.columns;
    // 64-bit columns are read as two 32-bit halves: an Int32Array over the same bytes (no BigInt per cell)
    const data = this.cells.map((c): TypedColumn => {
      const col = cols[c.column]!;
      if (c.kind !== K_I64 && c.kind !== K_U64 && c.kind !== K_TICKS && c.kind !== K_ADDR) return col;
      const w = col as BigInt64Array;
      return new Int32Array(w.buffer, w.byteOffset, w.length * 2);
    });
    const valid = this.validColumn >= 0 ? (cols[this.validColumn] as Uint32Array) : null;
    // the WebAssembly loop when it can take the chunk (its text columns' codes: t.textCodes)
    const codes = this.wasm ? this.cells.map((c) => (c.kind === K_STR ? t.textCodes?.[c.column] : undefined)) : null;
    const rows = this.wasm?.use(codes!, t.length) ? this.wasm.loop : this.rows;
    return this.track(this.run(rows, data, valid, t.length, 0));
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

  private run(rows: RowLoop, data: TypedColumn[], valid: Uint32Array | null, n: number, from: number): void | Promise<void> {
    let i = from;
    for (;;) {
      i = rows(this.out, data, valid, n, i);
      if (i >= n) return;
      const r = this.flush();
      if (isPromise(r)) return r.then(() => this.run(rows, data, valid, n, i));
    }
  }

  private flush(): void | Promise<void> {
    const bytes = this.out.take();
    return bytes ? sinkWait(this.sink(bytes)) : undefined;
  }
}

/** The buffer rows are formatted into (the row loop's RowTarget). */
class OutBuffer implements RowTarget {
  buf: Uint8Array;
  view: DataView;
  pos = 0;
  readonly limit: number;

  constructor(
    private readonly capacity: number,
    readonly rowReserve: number,
    private readonly strings: StringBytes,
    private readonly quote: (s: string) => string,
  ) {
    this.limit = capacity - rowReserve;
    this.buf = new Uint8Array(capacity);
    this.view = new DataView(this.buf.buffer);
  }

  text(s: string): Uint8Array {
    return this.strings.get(s);
  }

  ensure(bytes: number): void {
    const need = this.pos + bytes + this.rowReserve;
    if (need <= this.buf.length) return;
    const bigger = new Uint8Array(Math.max(need, 2 * this.buf.length));
    bigger.set(this.buf.subarray(0, this.pos));
    this.buf = bigger;
    this.view = new DataView(bigger.buffer);
  }

  unknownName(cell: RowCell, v: number): Uint8Array {
    const b = encoder.encode(this.quote(`Unknown(${v})`)); // as enums.ts nameOf
    cell.names![v] = b; // enum columns are u8: at most 256 entries
    return b;
  }

  /** The bytes written so far (null when none), handed over: writing goes on in a new buffer. */
  take(): Uint8Array | null {
    if (this.pos === 0) return null;
    const bytes = this.buf.subarray(0, this.pos);
    this.buf = new Uint8Array(this.capacity);
    this.view = new DataView(this.buf.buffer);
    this.pos = 0;
    return bytes;
  }
}

/** room for the longest Unknown(v) name of a u8..u32 value, quoted */
const UNKNOWN_MAX = 'Unknown(4294967295)'.length + 2;

function isPromise(r: void | Promise<void>): r is Promise<void> {
  return r !== undefined && typeof (r as Promise<void>).then === 'function';
}

/** The output cells of a table: its visible columns, then converted times, then names (registry order). */
function cellsOf(table: TableName, o: FormatOptions, quote: (s: string) => string): Cell[] {
  const columns = TABLES[table].columns;
  // addresses (registry `address`) as hex text
  const cells: Cell[] = TABLE_COLUMNS[table]
    .filter((c) => c.name !== 'valid')
    .map((c) => ({ name: c.name, kind: columns[c.id]!.address ? K_ADDR : KIND_OF[c.type], column: c.id, nullBit: c.nullable ? c.id : -1, names: null, ticks: null }));
  if (o.time && o.time !== 'raw') {
    const clock = o.clock;
    if (!clock) throw new RangeError('--time needs a trace whose clock type can be converted (QPC, system time or CPU cycles)');
    const since = o.time === 'ns' || o.time === 's';
    const suffix = { ns: 'Ns', s: 'Seconds', filetime: 'FileTime', iso: 'Utc' }[o.time];
    const style: TickStyle = o.time === 's' ? 'seconds' : o.time === 'iso' ? 'iso' : 'integer';
    // every column of raw ticks (registry `time`): `timestamp` → time<Suffix> (fileTime), others →
    // <name><Suffix>; differences of ticks (`duration`) → <name>Ns / <name>Seconds with ns and s
    for (const c of columns) {
      if (c.time === null || (c.time === 'duration' && !since)) continue;
      const name = c.name === 'timestamp' ? (o.time === 'filetime' ? 'fileTime' : 'time' + suffix) : c.name + suffix;
      const conversion: TickConversion = c.time === 'duration' ? 'duration' : since ? 'ns' : 'filetime';
      cells.push({ name, kind: K_TICKS, column: c.id, nullBit: c.nullable ? c.id : -1, names: null, ticks: new TickWriter(clock, conversion, style) });
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
  return parts.length === 1 ? parts[0]! : concatBytes(parts);
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
