// A chunk of columns as a message to a worker thread (convert's part workers, dump's formatting workers):
// numeric columns handed over (or copied when the caller keeps them), text columns as codes into their
// distinct values — structured cloning strings one by one costs more than the rows' formatting saves.
import type { ColumnChunk, TextCells } from './schema.js';

export type { TextCells } from './schema.js';

/** A chunk as a message carries it: numeric columns as they are, text columns as TextCells. */
export interface ChunkMessage {
  length: number;
  columns: (ColumnChunk['columns'][number] | TextCells)[];
}

/**
 * A text column's cells as codes into its distinct values. Structured cloning an array of strings costs
 * ~50 ns per string on each side (and the receiver's garbage); a column of few distinct values (a thread
 * state, an image name) goes as one Int32Array, handed over, instead.
 */
function textCells(col: readonly string[], n: number): TextCells {
  const codes = new Int32Array(n);
  const values: string[] = [];
  const index = new Map<string, number>();
  let last: string | null = null;
  let code = -1;
  for (let i = 0; i < n; i++) {
    const s = col[i]!;
    if (s !== last) {
      let k = index.get(s);
      if (k === undefined) {
        k = values.length;
        index.set(s, k);
        values.push(s);
      }
      last = s;
      code = k;
    }
    codes[i] = code;
  }
  return { codes, values };
}

/**
 * The chunk a message carries, as the worker uses it: text columns made again from their TextCells, which
 * it keeps as its textCodes (the text writers' WebAssembly loop writes the codes).
 */
export function chunkOf(m: ChunkMessage): ColumnChunk {
  const textCodes: (TextCells | undefined)[] = [];
  const columns = m.columns.map((c, i) => {
    if (Array.isArray(c) || ArrayBuffer.isView(c)) return c;
    const { codes, values } = c as TextCells;
    textCodes[i] = { codes, values };
    const out = new Array<string>(m.length);
    for (let r = 0; r < m.length; r++) out[r] = values[codes[r]!]!;
    return out;
  }) as ColumnChunk['columns'];
  return { length: m.length, columns, textCodes };
}

/**
 * The chunk as a message and the buffers it hands over: those of an owned chunk, the text columns' codes,
 * and copies of the columns the caller keeps.
 */
export function chunkMessage(chunk: ColumnChunk, owned: boolean): { chunk: ChunkMessage; transfer: ArrayBuffer[] } {
  const transfer: ArrayBuffer[] = [];
  const columns = chunk.columns.map((c, i) => {
    if (Array.isArray(c)) {
      // the producer's codes when it made them (an owned chunk's handed over, else copied), else found here
      const made = chunk.textCodes?.[i];
      const t = made && made.codes.length >= chunk.length ? { codes: owned ? made.codes : made.codes.slice(), values: made.values } : textCells(c, chunk.length);
      if (!transfer.includes(t.codes.buffer as ArrayBuffer)) transfer.push(t.codes.buffer as ArrayBuffer);
      return t;
    }
    const own = owned ? c : c.slice(); // the caller's: copied now (the message may wait for a worker)
    if (own.buffer instanceof ArrayBuffer && !transfer.includes(own.buffer)) transfer.push(own.buffer);
    return own;
  });
  return { chunk: { length: chunk.length, columns }, transfer };
}

