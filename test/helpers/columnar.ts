// Shared by the Arrow and Parquet tests: every table of a decode, tables of random edge values for every
// column type, the expected cells of the extra columns (names, nanoseconds), and a row comparison that
// names the first difference.
import { Type as ArrowType, type Table as ArrowTable } from 'apache-arrow';
import { cpuUsage, createClock, decodeSync, stacksOfTrace, threadStates, type Clock, type DecodeResult } from '../../src/index.js';
import { TABLES } from '../../src/generated/registry.js';
import { ENUMS, nameOf } from '../../src/tables/enums.js';
import { allocColumn, TABLE_COLUMNS, TABLE_NAMES, validColumnOf, type TableName, type TypedColumn } from '../../src/tables/schema.js';
import { Table, type Tables } from '../../src/tables/table.js';
import { Rng, simulateSchedule, writeTrace } from '../../src/writer/index.js';

export type Cell = bigint | number | string | null;

/** Every table (decoded and derived) of a decode. */
export function allTables(r: DecodeResult): Tables {
  return { ...r, threads: r.threads, processes: r.processes, cpuUsage: cpuUsage(r), threadStates: threadStates(r), ...stacksOfTrace(r) } as unknown as Tables;
}

/** A simulated schedule on 4 CPUs (CSwitch and compact switches, ReadyThread, Thread/Process events, SpinLock). */
export function scheduleDecode(seed = 3): DecodeResult {
  const sim = simulateSchedule({ seed, cpus: 4, duration: 1_500_000, switchMode: 'mixed', spinlocks: 0.05, threadVersion: 4, profileInterval: 10_000, images: true, stacks: true });
  return decodeSync(writeTrace(sim.description).bytes);
}

/** The columns written by toArrow/Parquet: the Table's, without `valid`. */
export function visibleColumns(table: TableName) {
  return TABLE_COLUMNS[table].filter((c) => c.name !== 'valid');
}

export function cell(t: Table, columnId: number, row: number): Cell {
  return t.isNull(columnId, row) ? null : (t.columns[columnId]![row] as Cell);
}

export interface ExtraOptions {
  names?: boolean;
  clock?: Clock | null;
}

/** The expected output columns of `t` in order (name → cell of row i), extra columns included. */
export function expectedColumns(t: Table, o: ExtraOptions = {}): { name: string; value: (i: number) => Cell }[] {
  const out: { name: string; value: (i: number) => Cell }[] = [];
  for (const c of TABLES[t.name].columns) {
    if (c.name === 'valid') continue;
    // f64 columns (file offsets: integers) are int64 in Arrow and Parquet
    out.push({ name: c.name, value: c.type === 'f64' ? (i) => { const v = cell(t, c.id, i); return v === null ? null : BigInt(v as number); } : (i) => cell(t, c.id, i) });
    const clock = o.clock;
    if (clock && c.time !== null) {
      const name = c.name === 'timestamp' ? 'timeNs' : c.name + 'Ns';
      out.push({
        name,
        value: (i) => {
          const v = cell(t, c.id, i) as bigint | null;
          if (v === null) return null;
          const ns = c.time === 'time' ? clock.toNanoseconds(v) : (v * 1_000_000_000n) / clock.ticksPerSecond;
          return ns === BigInt.asIntN(64, ns) ? ns : null; // out of the int64 range: null
        },
      });
      if (c.time === 'time') {
        // the same instant as nanoseconds since 1970 UTC: the anchor's FILETIME in ns plus the ns since it
        const unixAnchor = (clock.toFileTime(clock.anchorTicks) - 116444736000000000n) * 100n;
        out.push({
          name: c.name === 'timestamp' ? 'timeUtc' : c.name + 'Utc',
          value: (i) => {
            const v = cell(t, c.id, i) as bigint | null;
            if (v === null) return null;
            const ns = unixAnchor + clock.toNanoseconds(v);
            return ns === BigInt.asIntN(64, ns) ? ns : null;
          },
        });
      }
    }
    if (o.names && c.enum !== null) {
      const names = ENUMS[c.enum]!;
      out.push({ name: c.name + 'Name', value: (i) => nameOf(names, cell(t, c.id, i) as number | null) });
    }
  }
  return out;
}

/** Compares rows (objects keyed by column name) with the expected columns; returns the first difference. */
export function firstDifference(
  t: Table,
  rowCount: number,
  actual: (i: number, column: string) => unknown,
  o: ExtraOptions = {},
  normalize: (v: unknown) => unknown = (v) => v,
): string | null {
  if (rowCount !== t.length) return `${t.name}: ${rowCount} rows, expected ${t.length}`;
  const cols = expectedColumns(t, o);
  for (let i = 0; i < t.length; i++) {
    for (const c of cols) {
      const want = c.value(i);
      const got = normalize(actual(i, c.name));
      if (got !== want) return `${t.name} row ${i} column ${c.name}: got ${fmt(got)}, expected ${fmt(want)}`;
    }
  }
  return null;
}

/** The first cell where an Arrow table (apache-arrow) differs from the Table (extra columns included), or null. */
export function arrowDifference(t: Table, a: ArrowTable, o: ExtraOptions = {}): string | null {
  const cache = new Map<string, ReturnType<ArrowTable['getChild']>>();
  const col = (name: string) => {
    if (!cache.has(name)) cache.set(name, a.getChild(name));
    const c = cache.get(name);
    if (!c) throw new Error(`${t.name}: no Arrow column ${name} (has ${a.schema.names.join(', ')})`);
    return c;
  };
  // a timestamp's exact int64 (apache-arrow's get() gives milliseconds as a double)
  const exact = (c: NonNullable<ReturnType<ArrowTable['getChild']>>, i: number): unknown => {
    if (!c.isValid(i)) return null;
    let k = i;
    for (const d of c.data) {
      if (k < d.length) return (d.values as BigInt64Array)[d.offset + k];
      k -= d.length;
    }
    return undefined;
  };
  return firstDifference(t, a.numRows, (i, name) => (col(name)!.type.typeId === ArrowType.Timestamp ? exact(col(name)!, i) : col(name)!.get(i)), o);
}

function fmt(v: unknown): string {
  return typeof v === 'bigint' ? `${v}n` : JSON.stringify(v);
}

const I64_EDGES = [-(2n ** 63n), 2n ** 63n - 1n, -1n, 0n, 1n, -(2n ** 53n) - 1n, 2n ** 53n + 1n];
const U64_EDGES = [0n, 1n, 2n ** 63n, 2n ** 63n - 1n, 2n ** 64n - 1n, 0xfffff80012345678n, 2n ** 53n + 1n];
const TEXT = ['', 'System', 'svchost.exe', 'a,b"c\nd', 'naïve — 日本語 😀', 'C:\\Windows\\System32\\cmd.exe /c "x"'];

function randomBig(rng: Rng, bits: number, signed: boolean): bigint {
  let v = 0n;
  for (let k = 0; k < bits; k += 30) v = (v << 30n) | BigInt(rng.next() & 0x3fffffff);
  return signed ? BigInt.asIntN(bits, v) : BigInt.asUintN(bits, v);
}

/**
 * A table of `n` rows of random values over each column type's whole range (64-bit extremes, u64 above
 * 2^63, negative i64, text with commas, quotes, line breaks and non-ASCII), nullable cells null at random.
 */
export function edgeTable(table: TableName, n: number, seed: number): Table {
  const rng = new Rng(seed);
  const specs = TABLE_COLUMNS[table];
  const validId = validColumnOf(table);
  const columns: TypedColumn[] = specs.map((s) => allocColumn(s.type, n));
  for (const s of specs) {
    if (s.id === validId) continue;
    const col = columns[s.id]!;
    for (let i = 0; i < n; i++) {
      const pick = rng.next() % 8 === 0;
      switch (s.type) {
        case 'i64':
          (col as BigInt64Array)[i] = pick ? I64_EDGES[rng.next() % I64_EDGES.length]! : randomBig(rng, 64, true);
          break;
        case 'u64':
          (col as BigUint64Array)[i] = pick ? U64_EDGES[rng.next() % U64_EDGES.length]! : randomBig(rng, 64, false);
          break;
        case 'f64':
          (col as Float64Array)[i] = pick ? [0, 2 ** 53 - 1, 12345, -1][rng.next() % 4]! : rng.next() * 65536 + (rng.next() % 65536);
          break;
        case 'str':
          (col as string[])[i] = pick ? `t${rng.next() % 1000}` : TEXT[rng.next() % TEXT.length]!;
          break;
        default: {
          const a = col as Uint32Array;
          a[i] = rng.next() ^ (rng.next() << 16); // wraps to the column type's range
        }
      }
    }
  }
  if (validId >= 0) {
    const valid = columns[validId] as Uint32Array;
    // some rows all present, some all absent, the rest random
    for (let i = 0; i < n; i++) valid[i] = i % 11 === 0 ? 0xffffffff : i % 13 === 0 ? 0 : rng.next() ^ (rng.next() << 16);
    // a null cell reads as 0 / '' in the Table
    for (const s of specs) {
      if (!s.nullable) continue;
      const col = columns[s.id]!;
      for (let i = 0; i < n; i++) {
        if (((valid[i]! >>> s.id) & 1) === 0) {
          if (s.type === 'str') (col as string[])[i] = '';
          else if (s.type === 'i64' || s.type === 'u64') (col as BigInt64Array)[i] = 0n;
          else (col as Uint32Array)[i] = 0;
        }
      }
    }
  }
  return new Table(table, { length: n, columns });
}

/** Clocks of each kind: QPC 10 MHz, QPC of the ACPI PM timer (3.579545 MHz), system time, 2.4 GHz cycles. */
export function testClocks(): { name: string; clock: Clock }[] {
  const base = { cpuSpeedInMHz: 0, perfFreq: 0n, headerTimestamp: 123_456_789n, startTime: 133_000_000_000_000_000n };
  return [
    { name: 'QPC 10 MHz', clock: createClock({ ...base, clockType: 1, perfFreq: 10_000_000n }) },
    { name: 'QPC 3.579545 MHz', clock: createClock({ ...base, clockType: 1, perfFreq: 3_579_545n }) },
    { name: 'QPC prime 9999991 Hz', clock: createClock({ ...base, clockType: 1, perfFreq: 9_999_991n }) },
    { name: 'system time', clock: createClock({ ...base, clockType: 2, headerTimestamp: 133_000_000_000_000_000n }) },
    { name: 'cycles 2400 MHz', clock: createClock({ ...base, clockType: 3, cpuSpeedInMHz: 2400 }) },
  ];
}

export { TABLE_NAMES };
