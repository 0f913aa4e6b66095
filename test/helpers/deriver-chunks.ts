// Chunks of a decode for the derivations' differential tests (test/cpu-usage-wasm.test.ts,
// test/thread-states-wasm.test.ts): the switch, ready and Thread rows cut at fractions, rows filtered, a
// column mapped — each a new table of copied columns.
import type { DecodeResult, Table } from '../../src/node.js';
import type { TypedColumn } from '../../src/tables/schema.js';
import { Table as TableCtor } from '../../src/tables/table.js';

export type In = Pick<DecodeResult, 'cswitch' | 'readythread' | 'threadEvents'>;
export type Chunk = [Table<'cswitch'>, Table<'readythread'>, Table<'threadEvents'>];
export type Name = 'cswitch' | 'readythread' | 'threadEvents';

export const table = <T extends Name>(name: T, length: number, columns: TypedColumn[]): Table<T> => new TableCtor(name, { length, columns }) as unknown as Table<T>;
export const sliceOf = <T extends Name>(t: Table<T>, a: number, b: number): Table<T> => table(t.name as T, b - a, t.columns.map((c) => c.slice(a, b)) as TypedColumn[]);
/** the rows of t where keep(i) */
export const filterRows = <T extends Name>(t: Table<T>, keep: (i: number) => boolean): Table<T> => {
  const idx = Array.from({ length: t.length }, (_, i) => i).filter(keep);
  return table(t.name as T, idx.length, t.columns.map((c) => (c as Uint8Array).filter((_, i) => keep(i))) as TypedColumn[]);
};
/** t with column `col` mapped */
export const mapColumn = <T extends Name>(t: Table<T>, col: number, f: (v: number) => number): Table<T> => {
  const c = t.columns.slice();
  c[col] = (t.columns[col] as Uint32Array).map(f);
  return table(t.name as T, t.length, c as TypedColumn[]);
};

/** `r` cut at the fractions `at` (thread events at `atThreads`: they may arrive before or after the switches they matter to). */
export function chunksOf(r: In, at: number[], atThreads = at): Chunk[] {
  const cut = <T extends Name>(t: Table<T>, fr: number[]) => {
    const b = [0, ...fr.map((f) => Math.floor(f * t.length)), t.length];
    return b.slice(1).map((x, k) => sliceOf(t, b[k]!, x));
  };
  const th = atThreads.slice(0, at.length).concat(new Array(Math.max(0, at.length - atThreads.length)).fill(1));
  const cs = cut(r.cswitch, at);
  const rt = cut(r.readythread, at);
  const te = cut(r.threadEvents, th);
  return cs.map((c, k) => [c, rt[k]!, te[k]!]);
}

/** Both cores over the same chunks: the chunks (their columns) and the statistics equal; returns the statistics. */
