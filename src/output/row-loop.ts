// The loop that formats rows into the writer's buffer (src/output/text.ts), in two forms that write the same
// bytes: an interpreter (a switch on each cell's kind) and, where the platform allows `new Function`, a
// loop compiled once per output layout, with every cell's code written out in order, its null bit, prefix
// bytes and column as constants (1.5–2× faster on CSV, where cells are short and the switch is most of
// the cost). A page whose Content-Security-Policy forbids eval gets the interpreter.
import type { TypedColumn } from '../tables/schema.js';
import * as L from '../generated/layout.js';
import type { TickPath } from '../time.js';
import { writeHex64, writeI32, writeI64, writeSafe, writeU32, writeU64, writeUSafe } from './digits.js';

// cell kinds (one switch case each, so every typed-array access site sees one element type), shared with the
// WebAssembly row loop (assembly/layout.ts "Text output")
export const K_U8 = L.TXT_K_U8;
export const K_U16 = L.TXT_K_U16;
export const K_U32 = L.TXT_K_U32;
export const K_I8 = L.TXT_K_I8;
export const K_I32 = L.TXT_K_I32;
export const K_F64 = L.TXT_K_F64;
export const K_I64 = L.TXT_K_I64;
export const K_U64 = L.TXT_K_U64;
export const K_STR = L.TXT_K_STR;
export const K_NAME = L.TXT_K_NAME;
export const K_TICKS = L.TXT_K_TICKS;
/** a u64 address: hex text (0x…); in JSON a string */
export const K_ADDR = L.TXT_K_ADDR;

/** index of the low / high 32-bit half of int64 i in an Int32Array over the same bytes (platform byte order) */
const LITTLE_ENDIAN = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;
const LO = LITTLE_ENDIAN ? 0 : 1;
const HI = LITTLE_ENDIAN ? 1 : 0;

const TWO_32 = 4294967296;
const QUOTE = 34;
const COMMA = 44;
const NEWLINE = 10;
const CLOSE_BRACE = 125;

/** What the loop needs of one output cell. */
export interface RowCell {
  kind: number;
  /** bit of the `valid` mask that says the value is present, or -1 when it always is */
  nullBit: number;
  /** K_NAME: the encoded name of every value (undefined: not named yet) */
  names: (Uint8Array | undefined)[] | null;
  /**
   * K_TICKS: writes the converted value, returns the position after it, or < 0 (nothing written) for null;
   * integerPath: the conversion's number path when it writes integers (the WebAssembly loop's, text-wasm.ts)
   */
  ticks: { write(out: DataView, pos: number, hi: number, lo: number): number; integerPath?(): TickPath | null } | null;
}

/** The shape of every row: fixed for a writer. */
export interface RowLayout {
  json: boolean;
  cells: readonly RowCell[];
  /** JSON: the bytes before each cell (`{"name":` / `,"name":`) as little-endian words, words[start[c] … start[c + 1]) */
  prefixWords: Int32Array;
  prefixWordStart: Int32Array;
  prefixLength: Int32Array;
}

/** The writer's side: its buffer (and a DataView of it), the position, and what a row may need. */
export interface RowTarget {
  buf: Uint8Array;
  view: DataView;
  pos: number;
  /** rows start while pos ≤ limit */
  readonly limit: number;
  /** room a row needs besides its strings */
  readonly rowReserve: number;
  /** the encoded text of a string cell */
  text(s: string): Uint8Array;
  /** room for `bytes` more bytes plus one row (a bigger buffer for a very long string): updates buf and view */
  ensure(bytes: number): void;
  /** the encoded `Unknown(v)` name of a value its enumeration does not know (kept in cell.names) */
  unknownName(cell: RowCell, v: number): Uint8Array;
}

/** Formats rows from..n-1 until pos passes the limit; returns the first row not written. */
export type RowLoop = (w: RowTarget, data: readonly TypedColumn[], valid: Uint32Array | null, n: number, from: number) => number;

/** Compiled loops on (default) or off: tests run both; off, every writer interprets. */
export const rowLoopSettings = { compile: true };

export function writeAscii(buf: Uint8Array, pos: number, s: string): number {
  for (let k = 0; k < s.length; k++) buf[pos + k] = s.charCodeAt(k);
  return pos + s.length;
}

/** The row loop for a layout: compiled when allowed and possible, else the interpreter. */
export function rowLoop(layout: RowLayout): RowLoop {
  return (rowLoopSettings.compile && compile(layout)) || ((w, data, valid, n, from) => interpret(layout, w, data, valid, n, from));
}

/** The interpreter: a switch on each cell's kind. */
function interpret(layout: RowLayout, w: RowTarget, data: readonly TypedColumn[], valid: Uint32Array | null, n: number, from: number): number {
  let buf = w.buf;
  let view = w.view;
  let pos = w.pos;
  const limit = w.limit;
  const cells = layout.cells;
  const words = layout.prefixWords;
  const wordStart = layout.prefixWordStart;
  const prefixLength = layout.prefixLength;
  const nc = cells.length;
  const json = layout.json;
  let i = from;
  for (; i < n && pos <= limit; i++) {
    const vw = valid === null ? -1 : valid[i]!;
    for (let c = 0; c < nc; c++) {
      if (json) {
        for (let k = wordStart[c]!, e = wordStart[c + 1]!, p = pos; k < e; k++, p += 4) view.setInt32(p, words[k]!, true);
        pos += prefixLength[c]!;
      } else if (c !== 0) buf[pos++] = COMMA;
      const cell = cells[c]!;
      const bit = cell.nullBit;
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
      switch (cell.kind) {
        case K_U8:
        case K_U16:
        case K_U32:
          v = (d as Uint8Array | Uint16Array | Uint32Array)[i]!;
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
          if (v >= 0 && v < TWO_32 && v === Math.floor(v)) pos = writeU32(view, pos, v); // file offsets; -0 too ("0")
          else if (Number.isSafeInteger(v)) pos = writeSafe(view, pos, v);
          else pos = writeAscii(buf, pos, String(v)); // as String(v): 1.5, 1e+300, NaN
          break;
        }
        case K_I64: {
          const h = d as Int32Array;
          if (json) buf[pos++] = QUOTE;
          const hi = h[2 * i + HI]!;
          // timestamps: non-negative and below 2^53 (hi < 2^21), one number
          if (hi >= 0 && hi < 0x200000) pos = writeUSafe(view, pos, hi * TWO_32 + (h[2 * i + LO]! >>> 0));
          else pos = writeI64(view, pos, hi, h[2 * i + LO]! >>> 0);
          if (json) buf[pos++] = QUOTE;
          break;
        }
        case K_U64: {
          const h = d as Int32Array;
          if (json) buf[pos++] = QUOTE;
          pos = writeU64(view, pos, h[2 * i + HI]! >>> 0, h[2 * i + LO]! >>> 0);
          if (json) buf[pos++] = QUOTE;
          break;
        }
        case K_ADDR: {
          const h = d as Int32Array;
          if (json) buf[pos++] = QUOTE;
          pos = writeHex64(view, pos, h[2 * i + HI]! >>> 0, h[2 * i + LO]! >>> 0);
          if (json) buf[pos++] = QUOTE;
          break;
        }
        case K_STR: {
          const b = w.text((d as string[])[i]!);
          const len = b.length;
          if (pos + len + w.rowReserve > buf.length) {
            w.pos = pos;
            w.ensure(len);
            buf = w.buf;
            view = w.view;
          }
          if (len > 32) buf.set(b, pos);
          else for (let k = 0; k < len; k++) buf[pos + k] = b[k]!;
          pos += len;
          break;
        }
        case K_NAME: {
          v = (d as Uint8Array)[i]!;
          const b = cell.names![v] ?? w.unknownName(cell, v);
          for (let k = 0; k < b.length; k++) buf[pos + k] = b[k]!;
          pos += b.length;
          break;
        }
        case K_TICKS: {
          // a converted time outside the int64 range (write() < 0) is null, as in Arrow and Parquet
          const h = d as Int32Array;
          const at = cell.ticks!.write(view, json ? pos + 1 : pos, h[2 * i + HI]!, h[2 * i + LO]! >>> 0);
          if (at < 0) {
            if (json) {
              buf[pos] = 110; // null
              buf[pos + 1] = 117;
              buf[pos + 2] = 108;
              buf[pos + 3] = 108;
              pos += 4;
            }
          } else if (json) {
            buf[pos] = QUOTE;
            pos = at;
            buf[pos++] = QUOTE;
          } else pos = at;
          break;
        }
      }
    }
    if (json) buf[pos++] = CLOSE_BRACE;
    buf[pos++] = NEWLINE;
  }
  w.pos = pos;
  return i;
}

// ---- the compiler: the interpreter's cases, written out per cell

/** words a name column's longest name takes */
function nameWordCount(names: readonly (Uint8Array | undefined)[]): number {
  let longest = 0;
  for (const b of names) if (b && b.length > longest) longest = b.length;
  return Math.max(1, Math.ceil(longest / 4));
}

/**
 * A name column's names as whole little-endian words, nameWordCount() per value, zero-padded, and their
 * lengths (0: no name yet, the byte-by-byte path). Stored a word at a time, a name costs a few stores
 * instead of a loop over its bytes.
 */
export function packNames(names: readonly (Uint8Array | undefined)[]): { words: Int32Array; length: Uint8Array } {
  const count = nameWordCount(names);
  const bytes = new Uint8Array(4 * count * 256);
  const length = new Uint8Array(256);
  names.forEach((b, v) => {
    if (b === undefined || v > 255) return;
    bytes.set(b, 4 * count * v);
    length[v] = b.length;
  });
  const view = new DataView(bytes.buffer);
  return { words: Int32Array.from({ length: count * 256 }, (_, k) => view.getInt32(4 * k, true)), length };
}

/** the source of one cell's value (after its prefix, when present) */
function valueSource(c: number, cell: RowCell, json: boolean): string {
  const d = `d${c}`;
  const q = json ? 'buf[pos++] = 34;' : '';
  const small = (load: string) => `{ const v = ${load}; if (v < 10) buf[pos++] = 48 + v; else pos = U32(view, pos, v); }`;
  switch (cell.kind) {
    case K_U8:
    case K_U16:
    case K_U32:
      return small(`${d}[i]`);
    case K_I8:
    case K_I32:
      return `pos = I32(view, pos, ${d}[i]);`;
    case K_F64:
      return (
        `{ const v = ${d}[i]; if (v >= 0 && v < 4294967296 && v === Math.floor(v)) pos = U32(view, pos, v); ` +
        `else if (Number.isSafeInteger(v)) pos = SAFE(view, pos, v); else pos = ASCII(buf, pos, String(v)); }`
      );
    case K_I64:
      return (
        `${q} { const hi = ${d}[2 * i + ${HI}]; if (hi >= 0 && hi < 0x200000) pos = USAFE(view, pos, hi * 4294967296 + (${d}[2 * i + ${LO}] >>> 0)); ` +
        `else pos = I64(view, pos, hi, ${d}[2 * i + ${LO}] >>> 0); } ${q}`
      );
    case K_U64:
      return `${q} pos = U64(view, pos, ${d}[2 * i + ${HI}] >>> 0, ${d}[2 * i + ${LO}] >>> 0); ${q}`;
    case K_ADDR:
      return `${q} pos = HEX64(view, pos, ${d}[2 * i + ${HI}] >>> 0, ${d}[2 * i + ${LO}] >>> 0); ${q}`;
    case K_STR:
      return (
        `{ const b = w.text(${d}[i]); const len = b.length; ` +
        `if (pos + len + reserve > buf.length) { w.pos = pos; w.ensure(len); buf = w.buf; view = w.view; } ` +
        `if (len > 32) buf.set(b, pos); else for (let k = 0; k < len; k++) buf[pos + k] = b[k]; pos += len; }`
      );
    case K_NAME: {
      // a known name: its bytes as whole words from the packed table (the up to 3 bytes past it are
      // overwritten by what follows, as digits' are); else (Unknown(v), added later) byte by byte
      const words = nameWordCount(cell.names!);
      let stores = '';
      for (let k = 0; k < words; k++) stores += `view.setInt32(pos + ${4 * k}, nameWords${c}[o + ${k}], true); `;
      return (
        `{ const v = ${d}[i]; const len = nameLength${c}[v]; ` +
        `if (len !== 0) { const o = v * ${words}; ${stores}pos += len; } else { const b = names${c}[v] ?? w.unknownName(cell${c}, v); ` +
        `for (let k = 0; k < b.length; k++) buf[pos + k] = b[k]; pos += b.length; } }`
      );
    }
    case K_TICKS: {
      // a converted time outside the int64 range (write() < 0) is null, as in Arrow and Parquet
      const write = `ticks${c}.write(view, ${json ? 'pos + 1' : 'pos'}, ${d}[2 * i + ${HI}], ${d}[2 * i + ${LO}] >>> 0)`;
      return json
        ? `{ const at = ${write}; if (at < 0) { buf[pos] = 110; buf[pos + 1] = 117; buf[pos + 2] = 108; buf[pos + 3] = 108; pos += 4; } else { buf[pos] = 34; pos = at; buf[pos++] = 34; } }`
        : `{ const at = ${write}; if (at >= 0) pos = at; }`;
    }
    default:
      throw new Error(`row loop: unknown cell kind ${cell.kind}`);
  }
}

function source(layout: RowLayout): string {
  const { json, cells } = layout;
  const lines: string[] = [];
  // per loop: every name column's names packed as little-endian words (PACK: packNames)
  cells.forEach((cell, c) => {
    if (cell.kind === K_NAME) lines.push(`const packed${c} = PACK(cells[${c}].names), nameWords${c} = packed${c}.words, nameLength${c} = packed${c}.length;`);
  });
  lines.push('return function rows(w, data, valid, n, from) {');
  cells.forEach((cell, c) => {
    lines.push(`  const d${c} = data[${c}];`);
    if (cell.kind === K_NAME) lines.push(`  const cell${c} = cells[${c}]; const names${c} = cell${c}.names;`);
    if (cell.kind === K_TICKS) lines.push(`  const ticks${c} = cells[${c}].ticks;`);
  });
  lines.push('  let buf = w.buf, view = w.view, pos = w.pos;', '  const limit = w.limit, reserve = w.rowReserve;', '  let i = from;');
  lines.push('  for (; i < n && pos <= limit; i++) {', '    const vw = valid === null ? -1 : valid[i];');
  cells.forEach((cell, c) => {
    let prefix = '';
    if (json) {
      for (let k = layout.prefixWordStart[c]!, p = 0; k < layout.prefixWordStart[c + 1]!; k++, p += 4) prefix += `view.setInt32(pos + ${p}, ${layout.prefixWords[k]}, true); `;
      prefix += `pos += ${layout.prefixLength[c]};`;
    } else if (c !== 0) prefix = 'buf[pos++] = 44;';
    const value = valueSource(c, cell, json);
    const none = json ? 'buf[pos] = 110; buf[pos + 1] = 117; buf[pos + 2] = 108; buf[pos + 3] = 108; pos += 4;' : '';
    if (cell.nullBit < 0) lines.push(`    ${prefix} ${value}`);
    else lines.push(`    ${prefix} if (((vw >>> ${cell.nullBit}) & 1) === 0) { ${none} } else { ${value} }`);
  });
  if (json) lines.push('    buf[pos++] = 125;');
  lines.push('    buf[pos++] = 10;', '  }', '  w.pos = pos;', '  return i;', '};');
  return lines.join('\n');
}

/** compiled loops by source text (a layout is a table and its options: a handful per process) */
const compiled = new Map<string, (cells: readonly RowCell[]) => RowLoop>();
let unavailable = false;

function compile(layout: RowLayout): RowLoop | null {
  if (unavailable) return null;
  const text = source(layout);
  let make = compiled.get(text);
  if (!make) {
    try {
      // the writers and the cells come in as parameters; the source holds only constants and names
      const factory = new Function('U32', 'I32', 'SAFE', 'USAFE', 'I64', 'U64', 'HEX64', 'ASCII', 'PACK', 'cells', text) as (...args: unknown[]) => RowLoop;
      make = (cells) => factory(writeU32, writeI32, writeSafe, writeUSafe, writeI64, writeU64, writeHex64, writeAscii, packNames, cells);
    } catch {
      unavailable = true; // EvalError under a Content-Security-Policy without 'unsafe-eval'
      return null;
    }
    compiled.set(text, make);
  }
  return make(layout.cells);
}
