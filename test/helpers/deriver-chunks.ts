// Chunks of a decode for the derivations' differential tests (test/cpu-usage-wasm.test.ts,
// test/thread-states-wasm.test.ts): the switch, ready and Thread rows cut at fractions, rows filtered, a
// column mapped — each a new table of copied columns; and the traces' mutations both tests run.
import type { DecodeResult, Table } from '../../src/node.js';
import type { TypedColumn } from '../../src/tables/schema.js';
import * as L from '../../src/generated/layout.js';
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

/** the tables as if the start rundown (Thread DCStart) was not logged: threads known only later */
export const noStartRundown = (r: In): In => ({ ...r, threadEvents: filterRows(r.threadEvents, (i) => (r.threadEvents.columns[L.TE_OPCODE] as Uint8Array)[i] !== L.OPCODE_DC_START) });
/** events lost: blocks of every table dropped (a CPU's switches then disagree with its next) */
export const lost = (r: In): In => {
  const gap = (i: number) => i % 997 >= 150;
  return { cswitch: filterRows(r.cswitch, gap), readythread: filterRows(r.readythread, gap), threadEvents: filterRows(r.threadEvents, (i) => i % 7 !== 3) };
};
/** thread ids reused: few ids, each of many threads in turn (threads with several lifetimes, of other processes) */
export const reused = (r: In): In => {
  const f = (t: number) => (t === 0 ? 0 : 1 + (t % 23));
  return { cswitch: mapColumn(mapColumn(r.cswitch, L.CS_NEW_THREAD_ID, f), L.CS_OLD_THREAD_ID, f), readythread: mapColumn(r.readythread, L.RT_THREAD_ID, f), threadEvents: mapColumn(r.threadEvents, L.TE_THREAD_ID, f) };
};
/** threads never known: every Thread event of a third of the thread ids dropped */
export const unknown = (r: In): In => {
  const tid = r.threadEvents.columns[L.TE_THREAD_ID] as Uint32Array;
  return { ...r, threadEvents: filterRows(r.threadEvents, (i) => tid[i]! % 3 !== 1) };
};
