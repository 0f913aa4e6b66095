// Decoded tables: columns as typed arrays (zero-copy access) and rows as typed records with nulls.
// One class for every table of the registry; row and column types are derived from it (schema.ts RowOf,
// ColumnArray): `column('timestamp')` of a Table<'cswitch'> is a BigInt64Array, and a name the table does
// not have does not compile.
import {
  TABLE_COLUMNS,
  validColumnOf,
  type ColumnArray,
  type ColumnChunk,
  type ColumnName,
  type ColumnSpec,
  type DecodedTableName,
  type RowOf,
  type TableName,
  type TypedColumn,
} from './schema.js';

export type CSwitchRow = RowOf<'cswitch'>;
export type SpinLockRow = RowOf<'spinlock'>;

/** `out`: a Table<'cswitch'> is a Table<TableName> (whose column() takes the name of any table's column). */
export class Table<out T extends TableName = TableName> {
  readonly specs: readonly ColumnSpec[];
  readonly length: number;
  private readonly cols: readonly TypedColumn[];
  private readonly validColumn: Uint32Array | null;
  /** the text columns' codes where the producer made them (ColumnChunk.textCodes) */
  readonly textCodes: ColumnChunk['textCodes'];

  constructor(
    readonly name: T,
    chunk: ColumnChunk,
  ) {
    this.specs = TABLE_COLUMNS[name];
    this.length = chunk.length;
    this.cols = chunk.columns;
    this.textCodes = chunk.textCodes;
    const v = validColumnOf(name);
    this.validColumn = v >= 0 ? (chunk.columns[v] as Uint32Array) : null;
  }

  get columnNames(): string[] {
    return this.specs.map((s) => s.name);
  }

  /** The typed array of a column (values of null cells are 0 or ''; see isNull). */
  column<K extends ColumnName<T>>(name: K): ColumnArray<T, K> {
    const i = this.specs.findIndex((s) => s.name === name);
    if (i < 0) throw new RangeError(`table ${this.name} has no column '${name}' (columns: ${this.columnNames.join(', ')})`);
    return this.cols[i] as ColumnArray<T, K>;
  }

  /** Columns in schema order. */
  get columns(): readonly TypedColumn[] {
    return this.cols;
  }

  isNull(columnId: number, row: number): boolean {
    const spec = this.specs[columnId]!;
    return spec.nullable && this.validColumn !== null && ((this.validColumn[row]! >>> columnId) & 1) === 0;
  }

  /** Row `i` as a record; nullable cells that the encoding did not carry are null. */
  get(i: number): RowOf<T> {
    if (i < 0 || i >= this.length) throw new RangeError(`row ${i} out of range 0..${this.length - 1}`);
    const row: Record<string, unknown> = {};
    const valid = this.validColumn ? this.validColumn[i]! : 0xffffffff;
    for (let c = 0; c < this.specs.length; c++) {
      const spec = this.specs[c]!;
      row[spec.name] = spec.nullable && ((valid >>> c) & 1) === 0 ? null : this.cols[c]![i];
    }
    return row as RowOf<T>;
  }

  *rows(): IterableIterator<RowOf<T>> {
    for (let i = 0; i < this.length; i++) yield this.get(i);
  }

  [Symbol.iterator](): IterableIterator<RowOf<T>> {
    return this.rows();
  }

  toArray(): RowOf<T>[] {
    return [...this.rows()];
  }
}

export type ReadyThreadRow = RowOf<'readythread'>;
export type ThreadEventRow = RowOf<'threadEvents'>;
export type ProcessEventRow = RowOf<'processEvents'>;
export type SampleRow = RowOf<'samples'>;
export type ImageEventRow = RowOf<'imageEvents'>;
export type ImageRow = RowOf<'images'>;
export type ThreadRow = RowOf<'threads'>;
export type ProcessRow = RowOf<'processes'>;
export type CpuUsageRow = RowOf<'cpuUsage'>;
export type ThreadStateRow = RowOf<'threadStates'>;

/** One Table per registry entry. */
export type Tables = { [T in TableName]: Table<T> };
/** One Table per decoded table. */
export type DecodedTables = { [T in DecodedTableName]: Table<T> };
