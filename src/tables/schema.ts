// Table schemas: the public column contract of every decoded table, derived from the registry
// (schema/tables.mjs → src/generated/registry.ts). Nothing here names a table: adding one to the
// registry adds it to every layer (engines, driver steps, row types, typed column access, CLI, formats).
import { COLUMN_VIEWS, columnCount, columnWidth, TABLES, type TableColumns } from '../generated/registry.js';

export type { TableColumns } from '../generated/registry.js';
export type {
  CpuUsageColumns,
  CswitchColumns,
  ProcessesColumns,
  ProcessEventsColumns,
  ReadythreadColumns,
  SpinlockColumns,
  ThreadEventsColumns,
  ThreadsColumns,
  TracesColumns,
} from '../generated/registry.js';

export type NumericColumnType = 'i64' | 'u64' | 'f64' | 'u32' | 'i32' | 'u16' | 'u8' | 'i8';
/** 'str' is text: a string per row ('' where null) */
export type ColumnType = NumericColumnType | 'str';
export type NumericColumn =
  | BigInt64Array
  | BigUint64Array
  | Float64Array
  | Uint32Array
  | Int32Array
  | Uint16Array
  | Uint8Array
  | Int8Array;
export type TypedColumn = NumericColumn | string[];
/** The array of each column type. */
export interface ColumnArrayOfType {
  i64: BigInt64Array;
  u64: BigUint64Array;
  f64: Float64Array;
  u32: Uint32Array;
  i32: Int32Array;
  u16: Uint16Array;
  u8: Uint8Array;
  i8: Int8Array;
  str: string[];
}

/** Name of a table: 'cswitch' | 'spinlock' | … (one per registry entry, decoded or derived). */
export type TableName = keyof typeof TABLES;
/** Name of a table the engines decode (the others are derived from them in TypeScript). */
export type DecodedTableName = { [T in TableName]: (typeof TABLES)[T]['derived'] extends false ? T : never }[TableName];

/** Name of a column of table T (of any of the tables when T is a union of names). */
export type ColumnName<T extends TableName> = T extends TableName ? keyof TableColumns[T] & string : never;
/** The array of column K of table T: BigInt64Array for an i64 column, Uint16Array for u16, string[] for str, … */
export type ColumnArray<T extends TableName, K extends ColumnName<T>> = T extends TableName
  ? K extends keyof TableColumns[T]
    ? TableColumns[T][K]
    : never
  : never;

export interface ColumnSpec {
  readonly id: number;
  readonly name: string;
  readonly type: ColumnType;
  /** true when the column can be null; presence is bit `id` of the table's `valid` column. */
  readonly nullable: boolean;
  readonly description: string;
}

type ColumnsOf<T extends TableName> = (typeof TABLES)[T]['columns'][number];
type ValueOf<C extends { type: string }> = C['type'] extends 'i64' | 'u64' ? bigint : C['type'] extends 'str' ? string : number;

/** The record of one row of table T: one property per column, null where a nullable cell is absent. */
export type RowOf<T extends TableName> = T extends TableName
  ? { -readonly [C in ColumnsOf<T> as C['name']]: C['nullable'] extends true ? ValueOf<C> | null : ValueOf<C> }
  : never;

/** Every table name, in registry (id) order: the decoded tables, then the derived ones. */
export const TABLE_NAMES = Object.keys(TABLES) as TableName[];
/** The tables the engines decode, in id order (= the engines' table index). */
export const DECODED_TABLE_NAMES = TABLE_NAMES.filter((t) => !TABLES[t].derived) as DecodedTableName[];

/**
 * Derived tables made from a whole decode's rows after it (threadStates, src/derive/thread-states.ts; stacks
 * and stackFrames, src/derive/stack-tables.ts): a summary has no count of their rows (it is known only once
 * they are derived).
 */
export const WHOLE_TRACE_TABLE_NAMES = ['threadStates', 'stacks', 'stackFrames'] as const satisfies readonly TableName[];
/** The tables a summary counts: every table but the whole-trace ones. */
export type SummaryTableName = Exclude<TableName, (typeof WHOLE_TRACE_TABLE_NAMES)[number]>;
export const SUMMARY_TABLE_NAMES = TABLE_NAMES.filter((t) => !(WHOLE_TRACE_TABLE_NAMES as readonly string[]).includes(t)) as SummaryTableName[];

/** Columns of every table, in id order. */
export const TABLE_COLUMNS = Object.fromEntries(TABLE_NAMES.map((t) => [t, TABLES[t].columns as readonly ColumnSpec[]])) as Record<
  TableName,
  readonly ColumnSpec[]
>;

/** Registry id of every table (the engines' table index). */
export const TABLE_IDS = Object.fromEntries(TABLE_NAMES.map((t) => [t, TABLES[t].id])) as Record<TableName, number>;

/** The registry-id bit mask of `tables` for an engine's keepTables (null: every table); a child table (rowsOf,
 *  e.g. stackEventFrames) is written by its parent's decoder, so it keeps the parent. */
export function keptTableMask(tables: readonly DecodedTableName[] | null): number {
  if (tables === null) return -1;
  let mask = 0;
  for (const t of tables) mask |= 1 << TABLE_IDS[(TABLES[t].rowsOf as DecodedTableName | null) ?? t];
  return mask;
}

/** A 64-bit column as its 32-bit words, low word first (a view: no copy, no BigInt per value). */
export function int32Words(col: BigInt64Array | BigUint64Array): Int32Array {
  return new Int32Array(col.buffer, col.byteOffset, col.length * 2);
}

/** Index of the `valid` column of a table, or -1 when no column is nullable. */
export function validColumnOf(table: TableName): number {
  return TABLE_COLUMNS[table].findIndex((c) => c.name === 'valid');
}

/** Bytes per value in engine memory ('str': a u32 reference into the string heap). */
export function bytesOf(type: ColumnType): number {
  switch (type) {
    case 'str':
      return 4;
    case 'i64':
    case 'u64':
    case 'f64':
      return 8;
    case 'u32':
    case 'i32':
      return 4;
    case 'u16':
      return 2;
    default:
      return 1;
  }
}

const ARRAY_TYPES = {
  i64: BigInt64Array,
  u64: BigUint64Array,
  f64: Float64Array,
  u32: Uint32Array,
  i32: Int32Array,
  u16: Uint16Array,
  u8: Uint8Array,
  i8: Int8Array,
} as const;

/** A column of `length` zero values ('' for text). */
export function allocColumn<K extends ColumnType>(type: K, length: number): ColumnArrayOfType[K] {
  return (type === 'str' ? new Array<string>(length).fill('') : new ARRAY_TYPES[type as NumericColumnType](length)) as ColumnArrayOfType[K];
}

/** A view of `length` elements of `type` over `buffer` at byte `offset` (no copy). */
export function viewColumn<K extends NumericColumnType>(type: K, buffer: ArrayBufferLike, offset: number, length: number): ColumnArrayOfType[K] {
  return new ARRAY_TYPES[type](buffer as ArrayBuffer, offset, length) as ColumnArrayOfType[K];
}

/** The columns of a chunk of `table` rows (schema order) as a typed view by column name: make it once per
 *  chunk, then `view.cpu[row]` is a Uint16Array access with no cast (src/generated/registry.ts COLUMN_VIEWS). */
export function columnsOf<T extends TableName>(table: T, columns: readonly TypedColumn[]): TableColumns[T] {
  return COLUMN_VIEWS[table](columns);
}

/**
 * A text column as each row's index into the column's distinct values: how text travels to a worker
 * (tables/chunk-message.ts), and how a producer that has the codes already hands them on (textCodes).
 */
export interface TextCells {
  codes: Int32Array;
  values: string[];
}

/** Rows of one table produced by one engine call: columns in schema order. */
export interface ColumnChunk {
  readonly length: number;
  readonly columns: readonly TypedColumn[];
  /**
   * Per column, the text column's cells as codes (at least `length` of them), where the producer made
   * them with the column (threadStates' `state`): a message to a worker sends these instead of finding
   * the distinct values again. Valid while the text column is not changed.
   */
  readonly textCodes?: readonly (TextCells | undefined)[];
}

/** Rows of every decoded table produced by one engine call. */
export type Chunks = Record<DecodedTableName, ColumnChunk>;

export function emptyChunk(table: TableName): ColumnChunk {
  return { length: 0, columns: TABLE_COLUMNS[table].map((c) => allocColumn(c.type, 0)) };
}

/** A record with one value per decoded table, in registry order. */
export function perTable<V>(make: (table: DecodedTableName) => V): Record<DecodedTableName, V> {
  return Object.fromEntries(DECODED_TABLE_NAMES.map((t) => [t, make(t)])) as Record<DecodedTableName, V>;
}

/** Every decoded table with no rows: one shared chunk each (zero-length columns cannot change), for the drains
 *  that leave a table empty (wasm/engine.ts, parallel/partition.ts). */
export const NO_ROWS: Chunks = perTable((t) => emptyChunk(t));

/** Concatenates chunks of one table into one chunk (one copy per column). */
export function concatChunks(table: TableName, chunks: readonly ColumnChunk[]): ColumnChunk {
  const specs = TABLE_COLUMNS[table];
  if (chunks.length === 0) return emptyChunk(table);
  if (chunks.length === 1) return chunks[0]!;
  const length = chunks.reduce((n, c) => n + c.length, 0);
  const columns = specs.map((spec, i): TypedColumn => {
    if (spec.type === 'str') {
      const out = new Array<string>(length);
      let at = 0;
      for (const c of chunks) {
        const col = c.columns[i] as string[];
        for (let k = 0; k < c.length; k++) out[at++] = col[k]!;
      }
      return out;
    }
    const out = allocColumn(spec.type, length);
    let at = 0;
    for (const c of chunks) {
      (out as Uint8Array).set(c.columns[i] as Uint8Array, at);
      at += c.length;
    }
    return out;
  });
  return { length, columns };
}

// The layout's widths and the schema's types agree (both come from the registry; this guards the generator).
for (const name of DECODED_TABLE_NAMES) {
  const cols = TABLE_COLUMNS[name];
  if (cols.length !== columnCount(TABLE_IDS[name])) throw new Error(`schema ${name}: column count mismatch`);
  cols.forEach((c, i) => {
    if (c.id !== i || bytesOf(c.type) !== columnWidth(TABLE_IDS[name], i)) throw new Error(`schema ${name}: column ${c.name}`);
  });
}
