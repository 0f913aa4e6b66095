// Typed column access, generated from the registry (schema/tables.mjs → src/generated/registry.ts
// TableColumns, COLUMN_VIEWS): Table.column(name) and Table.get(i) are typed by table and column, a column
// name the table does not have does not compile, and the engines' chunks are read through typed views.
// The `@ts-expect-error` lines are checked by `npm run typecheck` (an unused one is an error there); the
// assertions check the same at run time.
import { describe, expect, expectTypeOf, test } from 'vitest';
import { allocColumn, columnsOf, TABLE_COLUMNS, viewColumn, type ColumnArray, type ColumnName, type CswitchColumns } from '../src/tables/schema.js';
import { Table } from '../src/tables/table.js';
import { cpuUsage } from '../src/node.js';
import { scheduleDecode } from './helpers/columnar.js';

const r = scheduleDecode();

describe('Table.column(name)', () => {
  test('the array type of each column type', () => {
    const ts = r.cswitch.column('timestamp');
    expectTypeOf(ts).toEqualTypeOf<BigInt64Array>();
    expect(ts).toBeInstanceOf(BigInt64Array);
    const cpu = r.cswitch.column('cpu');
    expectTypeOf(cpu).toEqualTypeOf<Uint16Array>();
    expect(cpu).toBeInstanceOf(Uint16Array);
    const lock = r.spinlock.column('spinLockAddress');
    expectTypeOf(lock).toEqualTypeOf<BigUint64Array>();
    expect(lock).toBeInstanceOf(BigUint64Array);
    const fileOffset = r.readythread.column('fileOffset');
    expectTypeOf(fileOffset).toEqualTypeOf<Float64Array>();
    expect(fileOffset).toBeInstanceOf(Float64Array);
    const priority = r.cswitch.column('newThreadPriority'); // i8?: nullable columns hold 0 where null
    expectTypeOf(priority).toEqualTypeOf<Int8Array>();
    expect(priority).toBeInstanceOf(Int8Array);
    const exitStatus = r.processEvents.column('exitStatus');
    expectTypeOf(exitStatus).toEqualTypeOf<Int32Array>();
    expect(exitStatus).toBeInstanceOf(Int32Array);
    const name = r.threadEvents.column('name'); // str
    expectTypeOf(name).toEqualTypeOf<string[]>();
    expect(Array.isArray(name)).toBe(true);
    expect(name.some((s) => s !== '')).toBe(true);
    const switchIn = cpuUsage(r).column('switchInTime'); // a derived table
    expectTypeOf(switchIn).toEqualTypeOf<BigInt64Array>();
    expect(switchIn).toBeInstanceOf(BigInt64Array);
  });

  test('every column of every table: the declared type, at run time', () => {
    const arrays = { i64: BigInt64Array, u64: BigUint64Array, f64: Float64Array, u32: Uint32Array, i32: Int32Array, u16: Uint16Array, u8: Uint8Array, i8: Int8Array };
    const tables: Table[] = [r.cswitch, r.spinlock, r.readythread, r.threadEvents, r.processEvents, r.threads, r.processes, cpuUsage(r)];
    for (const t of tables) {
      for (const spec of TABLE_COLUMNS[t.name]) {
        const column = t.column(spec.name as ColumnName<typeof t.name>);
        if (spec.type === 'str') expect(Array.isArray(column), `${t.name}.${spec.name}`).toBe(true);
        else expect(column, `${t.name}.${spec.name}`).toBeInstanceOf(arrays[spec.type]);
        expect(column).toBe(t.columns[spec.id]);
      }
    }
  });

  test('a name the table does not have does not compile (and throws at run time)', () => {
    // @ts-expect-error: no such column
    expect(() => r.cswitch.column('timestmp')).toThrow(/no column 'timestmp'/);
    // @ts-expect-error: a column of another table (spinlock)
    expect(() => r.cswitch.column('spinLockAddress')).toThrow(RangeError);
    // @ts-expect-error: a column of another table (cswitch)
    expect(() => r.threads.column('oldThreadId')).toThrow(RangeError);
    // @ts-expect-error: any string is not a column name
    expect(() => r.spinlock.column('x' as string)).toThrow(RangeError);
  });

  test('a Table of any table takes the column names of every table; a specific one is a Table', () => {
    const any: Table = r.cswitch;
    expectTypeOf(any.column('timestamp')).toEqualTypeOf<BigInt64Array>();
    expectTypeOf<ColumnName<'cswitch' | 'spinlock'>>().toEqualTypeOf<ColumnName<'cswitch'> | ColumnName<'spinlock'>>();
    expectTypeOf<ColumnArray<'cswitch', 'valid'>>().toEqualTypeOf<Uint32Array>();
    // @ts-expect-error: no table has it
    expect(() => any.column('nope')).toThrow(RangeError);
  });
});

describe('Table.get(i)', () => {
  test('rows are typed: bigint for 64-bit integers, null for nullable cells, string for text', () => {
    const row = r.cswitch.get(0);
    expectTypeOf(row.timestamp).toEqualTypeOf<bigint>();
    expectTypeOf(row.cpu).toEqualTypeOf<number>();
    expectTypeOf(row.newThreadId).toEqualTypeOf<number | null>();
    expect(typeof row.timestamp).toBe('bigint');
    expect(typeof row.cpu).toBe('number');
    // @ts-expect-error: no such column
    expect(row.spinLockAddress).toBeUndefined();
    const ev = r.threadEvents.get(0);
    expectTypeOf(ev.name).toEqualTypeOf<string | null>();
    expectTypeOf(ev.win32StartAddr).toEqualTypeOf<bigint | null>();
    const p = r.processEvents.get(0);
    expectTypeOf(p.imageFileName).toEqualTypeOf<string>();
    expect(typeof p.imageFileName).toBe('string');
  });
});

describe('column views of engine chunks', () => {
  test('columnsOf: the chunk columns by name, typed, no copy', () => {
    const t = r.cswitch;
    const v = columnsOf('cswitch', t.columns);
    expectTypeOf(v).toEqualTypeOf<CswitchColumns>();
    expectTypeOf(v.cpu).toEqualTypeOf<Uint16Array>();
    expectTypeOf(v.timestamp).toEqualTypeOf<BigInt64Array>();
    expect(v.cpu).toBe(t.column('cpu'));
    expect(v.timestamp).toBe(t.column('timestamp'));
    expect(v.valid).toBe(t.column('valid'));
    expect(Object.keys(v)).toEqual(TABLE_COLUMNS.cswitch.map((c) => c.name));
    // @ts-expect-error: no such column
    expect(v.spinLockAddress).toBeUndefined();
  });

  test('allocColumn and viewColumn return the array of their type', () => {
    expectTypeOf(allocColumn('u16', 2)).toEqualTypeOf<Uint16Array>();
    expectTypeOf(allocColumn('str', 2)).toEqualTypeOf<string[]>();
    expect(allocColumn('i64', 2)).toBeInstanceOf(BigInt64Array);
    expect(allocColumn('str', 2)).toEqual(['', '']);
    const v = viewColumn('u32', new ArrayBuffer(16), 4, 2);
    expectTypeOf(v).toEqualTypeOf<Uint32Array>();
    expect([v.constructor, v.byteOffset, v.length]).toEqual([Uint32Array, 4, 2]);
  });
});
