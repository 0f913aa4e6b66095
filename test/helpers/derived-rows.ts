// Rows of a derived table built one at a time (the oracles): plain arrays per column and a valid mask, turned into
// typed columns at the end (or per chunk). Used for tables computed in TypeScript (threads, processes,
// cpuUsage), whose size is that of their output.
import { allocColumn, TABLE_COLUMNS, validColumnOf, type TableName, type TypedColumn } from '../../src/tables/schema.js';
import { Table } from '../../src/tables/table.js';

export class DerivedRows<T extends TableName> {
  private readonly specs;
  private readonly validColumn: number;
  private cells: unknown[][];
  private valid: number[] = [];

  constructor(private readonly table: T) {
    this.specs = TABLE_COLUMNS[table];
    this.validColumn = validColumnOf(table);
    this.cells = this.specs.map(() => []);
  }

  get length(): number {
    return this.valid.length;
  }

  /** A new row with every nullable cell null; returns its index. */
  add(): number {
    this.specs.forEach((spec, c) => this.cells[c]!.push(spec.type === 'str' ? '' : spec.type === 'i64' || spec.type === 'u64' ? 0n : 0));
    this.valid.push(0);
    return this.valid.length - 1;
  }

  has(row: number, column: number): boolean {
    return ((this.valid[row]! >>> column) & 1) === 1;
  }

  set(row: number, column: number, value: unknown): void {
    this.cells[column]![row] = value;
    this.valid[row] = (this.valid[row]! | (1 << column)) >>> 0;
  }

  /** Sets the cell unless value is null/undefined (then it stays null). */
  maybe(row: number, column: number, value: unknown): void {
    if (value !== null && value !== undefined) this.set(row, column, value);
  }

  /** Sets the cell only while it is null. */
  fill(row: number, column: number, value: unknown): void {
    if (!this.has(row, column)) this.set(row, column, value);
  }

  /** The rows as a Table (in the order given, default as added), and starts empty again. */
  take(order?: readonly number[]): Table<T> {
    const idx = order ?? Array.from({ length: this.valid.length }, (_, i) => i);
    const columns = this.cells.map((values, c): TypedColumn => {
      const out = allocColumn(this.specs[c]!.type, idx.length);
      if (c === this.validColumn) {
        const bit = 1 << c;
        for (let i = 0; i < idx.length; i++) (out as Uint32Array)[i] = (this.valid[idx[i]!]! | bit) >>> 0;
      } else {
        for (let i = 0; i < idx.length; i++) (out as unknown[])[i] = values[idx[i]!];
      }
      return out;
    });
    this.cells = this.specs.map(() => []);
    this.valid = [];
    return new Table(this.table, { length: idx.length, columns });
  }
}
