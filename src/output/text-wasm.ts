// The WebAssembly row loop of the text writers (assembly/text/index.ts → build/text.wasm, embedded as base64 by
// scripts/embed-wasm.mjs): CSV and JSON-lines rows, the same bytes and flushes as the TypeScript row loop
// (src/output/row-loop.ts, its twin and fallback) at 0.5–0.8 of its cost on most tables (docs/performance.md). It is a RowLoop like the twin's: a
// window of the chunk's columns is copied into the module's memory, each call formats into the module's
// output, which is copied to the writer's buffer; a row the module leaves (an Unknown(v) name, a tick value
// off the number path, a file offset that is no safe integer, text longer than the buffer's room) is written
// by the twin. Text columns go as their codes (ColumnChunk.textCodes: what a worker's chunk carries); a
// chunk without them, and a layout with seconds or ISO times, is the twin's.
import { TEXT_WASM_BASE64 } from '../generated/text-wasm-binary.js';
import { decodeBase64 } from '../engine/wasm/instance.js';
import * as L from '../generated/layout.js';
import type { TextCells, TypedColumn } from '../tables/schema.js';
import type { TickPath } from '../time.js';
import { K_ADDR, K_F64, K_I32, K_I64, K_I8, K_NAME, K_STR, K_TICKS, K_U16, K_U32, K_U64, K_U8, packNames, type RowCell, type RowLayout, type RowLoop, type RowTarget } from './row-loop.js';

/** The exports of assembly/text/index.ts. */
interface TextExports {
  readonly memory: WebAssembly.Memory;
  base(): number;
  reserve(bytes: number): boolean;
  rows(cells: number, count: number, hasValid: boolean, valid: number, n: number, from: number, json: boolean, out: number, limit: number, room: number, reserve: number): number;
  stopped(): number;
  bytesWritten(): number;
}

/**
 * WebAssembly row loops on (default) or off: tests run both; off, every writer uses the TypeScript loop.
 * minRows: a chunk of fewer rows is the twin's (an instance costs about as much as a few hundred rows).
 */
export const textWasmSettings = { enabled: true, minRows: 1024 };
/** rows the module wrote and rows it left to the twin, since the process started (for tests and profiles) */
export const textWasmRows = { module: 0, twin: 0 };

/** bytes per value of each kind the module reads (0: not its kind; text: its i32 codes) */
const VALUE_BYTES: Record<number, number> = { [K_STR]: 4, [K_U8]: 1, [K_U16]: 2, [K_U32]: 4, [K_I8]: 1, [K_I32]: 4, [K_F64]: 8, [K_I64]: 8, [K_U64]: 8, [K_NAME]: 1, [K_TICKS]: 8, [K_ADDR]: 8 };

let compiled: WebAssembly.Module | null | undefined;

function textModule(): WebAssembly.Module | null {
  if (compiled === undefined) {
    try {
      compiled = new WebAssembly.Module(decodeBase64(TEXT_WASM_BASE64)); // 2.4 KB: synchronously, anywhere
    } catch {
      compiled = null;
    }
  }
  return compiled;
}

const align = (n: number) => (n + 15) & ~15;
/** rows of a chunk in the module's memory at a time (about 100 bytes each for the widest tables) */
const WINDOW_ROWS = 16384;

/**
 * The module's row loop for `layout` (cells[c] reads table column columnOf[c]), with `twin` for the rows it
 * leaves; null when the layout is the twin's alone.
 */
export function wasmRowLoop(layout: RowLayout, columnOf: readonly number[], twin: RowLoop, rowReserve: number): WasmRows | null {
  if (!textWasmSettings.enabled) return null;
  const paths = layout.cells.map((c) => (c.kind === K_TICKS ? (c.ticks?.integerPath?.() ?? null) : null));
  if (layout.cells.some((c, i) => !VALUE_BYTES[c.kind] || (c.kind === K_TICKS && paths[i] === null))) return null;
  const mod = textModule();
  if (!mod) return null;
  return new WasmRows(mod, layout, columnOf, paths, twin, rowReserve);
}

export class WasmRows {
  private x: TextExports | null = null;
  private readonly cells: readonly RowCell[];
  /** bytes of the fixed part of the region: the cells, their prefixes, names and tick conversions */
  private readonly fixedBytes: number;
  /** the table columns the cells read, each once, and the first cell reading each */
  private readonly columns: number[] = [];
  private readonly columnCell: number[] = [];
  private readonly cellColumn: number[];
  /** the chunk loaded: its data array (a new one per TextTableWriter.write) */
  private loaded: readonly TypedColumn[] | null = null;
  /** the rows of the chunk in the module's memory: [windowFrom, windowTo) */
  private windowFrom = 0;
  private windowTo = 0;
  private validPtr = 0;
  /** per cell: a text cell's codes for the chunk (use()) */
  private codes: (TextCells | undefined)[] = [];
  private outPtr = 0;
  private outBytes: number;
  readonly loop: RowLoop;

  constructor(
    private readonly mod: WebAssembly.Module,
    private readonly layout: RowLayout,
    columnOf: readonly number[],
    private readonly paths: readonly (TickPath | null)[],
    private readonly twin: RowLoop,
    private readonly rowReserve: number,
  ) {
    this.cells = layout.cells;
    this.cellColumn = columnOf.map((col, c) => {
      let k = this.columns.indexOf(col);
      if (k < 0) {
        k = this.columns.push(col) - 1;
        this.columnCell.push(c);
      }
      return k;
    });
    // cells, then per cell its prefix words, names (packed words, lengths) or tick conversion
    let bytes = align(L.TXT_CELL_BYTES * this.cells.length);
    this.cells.forEach((cell, c) => {
      bytes += align(4 * (layout.prefixWordStart[c + 1]! - layout.prefixWordStart[c]!));
      if (cell.kind === K_NAME) bytes += align(packNames(cell.names!).words.byteLength) + 256;
      if (cell.kind === K_TICKS) bytes += L.TXT_TICK_BYTES;
    });
    this.fixedBytes = align(bytes);
    this.outBytes = 0;
    this.loop = (w, data, valid, n, from) => this.rows(w, data, valid, n, from);
  }

  /** The instance, made for the first chunk it writes (a writer of small chunks only never makes one). */
  private start(): TextExports {
    const x = new WebAssembly.Instance(this.mod, { env: {} }).exports as unknown as TextExports;
    if (!x.reserve(this.fixedBytes)) throw new RangeError('text formatter: no memory for its cells');
    this.x = x;
    this.writeCells();
    return x;
  }

  /** The cells' records and tables at base(). */
  private writeCells(): void {
    const x = this.x!;
    const base = x.base();
    const buf = x.memory.buffer;
    const dv = new DataView(buf);
    const bytes = new Uint8Array(buf);
    const layout = this.layout;
    let at = base + align(L.TXT_CELL_BYTES * this.cells.length);
    this.cells.forEach((cell, c) => {
      const rec = base + L.TXT_CELL_BYTES * c;
      dv.setInt32(rec + L.TXT_C_KIND, cell.kind, true);
      dv.setInt32(rec + L.TXT_C_NULL_BIT, cell.nullBit, true);
      const w0 = layout.prefixWordStart[c]!;
      const w1 = layout.prefixWordStart[c + 1]!;
      dv.setInt32(rec + L.TXT_C_PREFIX, at, true);
      dv.setInt32(rec + L.TXT_C_PREFIX_LENGTH, layout.prefixLength[c]!, true);
      for (let k = w0; k < w1; k++) dv.setInt32(at + 4 * (k - w0), layout.prefixWords[k]!, true);
      at += align(4 * (w1 - w0));
      if (cell.kind === K_NAME) {
        const { words, length } = packNames(cell.names!);
        dv.setInt32(rec + L.TXT_C_TABLE, at, true);
        dv.setInt32(rec + L.TXT_C_NAME_WORDS, words.length / 256, true);
        bytes.set(new Uint8Array(words.buffer, words.byteOffset, words.byteLength), at);
        at += align(words.byteLength);
        dv.setInt32(rec + L.TXT_C_NAME_LENGTH, at, true);
        bytes.set(length, at);
        at += 256;
      }
      const p = this.paths[c];
      if (cell.kind === K_TICKS && p) {
        dv.setInt32(rec + L.TXT_C_TABLE, at, true);
        dv.setBigInt64(at + L.TXT_T_ANCHOR, p.anchor, true);
        dv.setBigInt64(at + L.TXT_T_NUM, BigInt(p.num), true);
        dv.setBigInt64(at + L.TXT_T_DEN, BigInt(p.den), true);
        dv.setBigInt64(at + L.TXT_T_BASE, p.base, true);
        dv.setBigInt64(at + L.TXT_T_Q_LIMIT, BigInt(p.qLimit), true);
        dv.setInt32(at + L.TXT_T_TRUNC, p.trunc ? 1 : 0, true);
        at += L.TXT_TICK_BYTES;
      }
    });
  }

  /**
   * Whether the module writes the next chunk, of n rows: one of textWasmSettings.minRows or more whose
   * every text cell has its codes (per cell, from the chunk's
   * textCodes), kept for it.
   */
  use(codes: readonly (TextCells | undefined)[], n: number): boolean {
    if (n < textWasmSettings.minRows) return false;
    for (let c = 0; c < this.cells.length; c++) if (this.cells[c]!.kind === K_STR && !((codes[c]?.codes.length ?? -1) >= n)) return false;
    this.codes = codes.slice();
    this.loaded = null;
    this.x ??= this.start();
    return true;
  }

  /**
   * Rows [from, to) of a chunk's columns (and valid masks) into the module's memory, after the fixed part,
   * the output after them. A window of WINDOW_ROWS at most: the module's memory stays a few MiB whatever
   * the chunk (it never shrinks). Each cell's column pointer is set so that row i is at pointer + i · size
   * (32-bit address arithmetic wraps, as the module's does).
   */
  private load(w: RowTarget, data: readonly TypedColumn[], valid: Uint32Array | null, from: number, to: number, outBytes: number): void {
    const n = to - from;
    const sizes = this.columns.map((_, k) => VALUE_BYTES[this.cells[this.columnCell[k]!]!.kind]!);
    let need = this.fixedBytes + (valid ? align(4 * n) : 0);
    for (const s of sizes) need += align(s * n);
    // the text cells' distinct values, encoded as the twin writes them
    const texts = this.cells.map((cell, c) => (cell.kind === K_STR ? this.codes[c]!.values.map((v) => w.text(v)) : null));
    for (const t of texts) if (t) need += align(8 * t.length) + align(t.reduce((a, b) => a + b.length, 0));
    const outAt = need;
    need += outBytes + this.rowReserve + 64;
    const x = this.x!;
    if (!x.reserve(need)) throw new RangeError(`text formatter: no memory for ${n} rows`);
    const base = x.base();
    const buf = x.memory.buffer;
    const bytes = new Uint8Array(buf);
    const dv = new DataView(buf);
    let at = base + this.fixedBytes;
    this.validPtr = 0;
    if (valid) {
      bytes.set(new Uint8Array(valid.buffer, valid.byteOffset + 4 * from, 4 * n), at);
      this.validPtr = (at - 4 * from) | 0;
      at += align(4 * n);
    }
    const columnAt: number[] = [];
    this.columns.forEach((_, k) => {
      const first = this.columnCell[k]!;
      const d = this.cells[first]!.kind === K_STR ? this.codes[first]!.codes : (data[first] as Exclude<TypedColumn, string[]>);
      const size = sizes[k]!;
      bytes.set(new Uint8Array(d.buffer, d.byteOffset + size * from, size * n), at);
      columnAt.push((at - size * from) | 0);
      at += align(size * n);
    });
    this.cells.forEach((_, c) => dv.setInt32(base + L.TXT_CELL_BYTES * c + L.TXT_C_COLUMN, columnAt[this.cellColumn[c]!]!, true));
    texts.forEach((t, c) => {
      if (!t) return;
      const rec = base + L.TXT_CELL_BYTES * c;
      dv.setInt32(rec + L.TXT_C_TABLE, at, true);
      dv.setInt32(rec + L.TXT_C_NAME_WORDS, t.length, true);
      let to = at + align(8 * t.length);
      t.forEach((b, k) => {
        dv.setInt32(at + 8 * k, to, true);
        dv.setInt32(at + 8 * k + 4, b.length, true);
        bytes.set(b, to);
        to += b.length;
      });
      at = align(to);
    });
    this.outPtr = base + outAt;
    this.outBytes = outBytes;
    this.loaded = data;
    this.windowFrom = from;
    this.windowTo = to;
  }

  private rows(w: RowTarget, data: readonly TypedColumn[], valid: Uint32Array | null, n: number, from: number): number {
    const x = this.x!; // made by use()
    let i = from;
    while (i < n && w.pos <= w.limit) {
      if (data !== this.loaded || i < this.windowFrom || i >= this.windowTo || w.buf.length > this.outBytes) this.load(w, data, valid, i, Math.min(n, i + WINDOW_ROWS), Math.max(w.buf.length, this.outBytes));
      const next = x.rows(x.base(), this.cells.length, valid !== null, this.validPtr, this.windowTo, i, this.layout.json, this.outPtr, w.limit - w.pos, w.buf.length - w.pos, this.rowReserve);
      const len = x.bytesWritten();
      if (len > 0) {
        w.buf.set(new Uint8Array(x.memory.buffer, this.outPtr, len), w.pos);
        w.pos += len;
      }
      textWasmRows.module += next - i;
      i = next;
      // a row the module leaves: the twin writes it
      if (i < this.windowTo && x.stopped() === L.TXT_STOP_ROW) {
        i = this.twin(w, data, valid, i + 1, i);
        textWasmRows.twin++;
      }
    }
    return i;
  }
}
