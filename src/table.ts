// Decoded tables: columns as typed arrays (zero-copy access) and rows as typed records with nulls.
import * as L from './generated/layout.js';
import { TABLE_COLUMNS, type ColumnChunk, type ColumnSpec, type TableName, type TypedColumn } from './schema.js';

export interface CSwitchRow {
  timestamp: bigint;
  cpu: number;
  newThreadId: number | null;
  oldThreadId: number;
  newThreadPriority: number | null;
  oldThreadPriority: number | null;
  previousCState: number | null;
  newThreadPriorityDecrement: number | null;
  oldThreadWaitReason: number | null;
  oldThreadWaitMode: number | null;
  oldThreadState: number | null;
  oldThreadIdealProcessor: number | null;
  newThreadWaitTime: number | null;
  oldThreadRemainingQuantum: number | null;
  newThreadQuantum: number | null;
  oldThreadQuantum: number | null;
  threadFlags: number | null;
  oldThreadBamEppImportant: number | null;
  newThreadBamEppImportant: number | null;
  oldThreadBamQosLevel: number | null;
  newThreadBamQosLevel: number | null;
  newThreadWaitTimeAtMostOneTick: number;
  source: number;
  version: number;
  fileOffset: number;
  valid: number;
}

export interface SpinLockRow {
  timestamp: bigint;
  cpu: number;
  spinLockAddress: bigint;
  callerAddress: bigint;
  acquireTime: bigint;
  releaseTime: bigint;
  waitTimeInCycles: number;
  spinCount: number;
  threadId: number;
  interruptCount: number;
  irql: number;
  acquireDepth: number;
  acquireMode: number;
  executeDpc: number;
  executeIsr: number;
  pointerSize: number;
  version: number;
  fileOffset: number;
}

export type RowOf<T extends TableName> = T extends 'cswitch' ? CSwitchRow : SpinLockRow;

export class Table<T extends TableName = TableName> {
  readonly specs: readonly ColumnSpec[];
  readonly length: number;
  private readonly cols: readonly TypedColumn[];
  private readonly validColumn: Uint32Array | null;

  constructor(
    readonly name: T,
    chunk: ColumnChunk,
  ) {
    this.specs = TABLE_COLUMNS[name];
    this.length = chunk.length;
    this.cols = chunk.columns;
    this.validColumn = name === 'cswitch' ? (chunk.columns[L.CS_VALID] as Uint32Array) : null;
  }

  get columnNames(): string[] {
    return this.specs.map((s) => s.name);
  }

  /** The typed array of a column (values of null cells are 0; see isNull). */
  column(name: string): TypedColumn {
    const i = this.specs.findIndex((s) => s.name === name);
    if (i < 0) throw new RangeError(`table ${this.name} has no column '${name}' (columns: ${this.columnNames.join(', ')})`);
    return this.cols[i]!;
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
    return row as unknown as RowOf<T>;
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
