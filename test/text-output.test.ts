// The byte encoder of CSV / JSON lines (src/output/text.ts): the same bytes as the former string formatter
// (test/helpers/format-oracle.ts) for every table and option on generated traces and on random tables;
// chunking, flushing and async sinks; exact 64-bit values and converted times; CSV and JSON that parse
// back to exactly the values.
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import fc from 'fast-check';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { cpuUsage, CpuUsageDeriver, ThreadStatesDeriver, createClock, decodeStream, decodeSync, isWholeTraceTable, Table, TABLE_NAMES, threadStates, wholeTraceTable, TextTableWriter, toCsv, toJsonl, type Clock, type DecodeResult, type FormatOptions, type TableName } from '../src/node.js';
import { TABLE_COLUMNS, validColumnOf, type ColumnSpec, type TypedColumn } from '../src/tables/schema.js';
import { TABLES } from '../src/generated/registry.js';
import { ENUMS } from '../src/tables/enums.js';
import { simulateSchedule, writeTrace } from '../src/writer/index.js';
import { formatRows, headerLine } from './helpers/format-oracle.js';
import { rowLoopSettings } from '../src/output/row-loop.js';
import { textWasmRows, textWasmSettings } from '../src/output/text-wasm.js';

const ROW_LOOPS = ['wasm', 'compiled', 'interpreted'] as const;
/** the defaults: WebAssembly for chunks of 1,024 rows or more, compiled loops */
function restoreRowLoop(): void {
  Object.assign(textWasmSettings, { enabled: true, minRows: 1024 });
  rowLoopSettings.compile = true;
}
function useRowLoop(loop: (typeof ROW_LOOPS)[number]): void {
  textWasmSettings.enabled = loop === 'wasm';
  textWasmSettings.minRows = loop === 'wasm' ? 0 : 1024; // every chunk, however small, to the module
  rowLoopSettings.compile = loop !== 'interpreted';
}
import { csvText } from '../src/output/escape.js';
import { chunkMessage, chunkOf } from '../src/tables/chunk-message.js';

const utf8 = new TextDecoder();

/** What the former formatter wrote for a whole table: the header row, then the rows (UTF-8). */
function oracle(t: Table, o: FormatOptions): Buffer {
  return Buffer.from(headerLine(t.name, o) + (t.length ? formatRows(t, o) : ''), 'utf8');
}

function sliceTable<T extends TableName>(t: Table<T>, from: number, to: number): Table<T> {
  return new Table(t.name, { length: to - from, columns: t.columns.map((c) => c.slice(from, to) as TypedColumn) });
}

/** The writer's bytes for `t` written whole (its textCodes kept: sliceTable drops them). */
function writtenWhole(t: Table, o: FormatOptions, bufferBytes: number): Buffer {
  const parts: Uint8Array[] = [];
  const w = new TextTableWriter(t.name, o, (b) => void parts.push(b), bufferBytes);
  w.writeHeader();
  w.write(t);
  w.end();
  return concat(parts);
}

/** t's rows `times` times over, as one table */
function concatTable(t: Table, times: number): Table {
  return new Table(t.name, {
    length: t.length * times,
    columns: t.columns.map((c) => {
      const col = c as Exclude<TypedColumn, string[]>;
      const out = new (col.constructor as new (n: number) => typeof col)(col.length * times);
      for (let k = 0; k < times; k++) out.set(col as never, k * col.length);
      return out as TypedColumn;
    }),
  });
}

function concat(parts: readonly Uint8Array[]): Buffer {
  return Buffer.concat(parts.map((p) => Buffer.from(p.buffer, p.byteOffset, p.byteLength)));
}

/** The writer's bytes for `t` written in chunks of `chunk` rows, with a small buffer (many flushes). */
function written(t: Table, o: FormatOptions, chunk: number, bufferBytes = 4096): Buffer {
  const parts: Uint8Array[] = [];
  const w = new TextTableWriter(t.name, o, (b) => void parts.push(b), bufferBytes);
  w.writeHeader();
  for (let i = 0; i < t.length; i += chunk) w.write(sliceTable(t, i, Math.min(t.length, i + chunk)));
  w.end();
  return concat(parts);
}

function allTables(r: DecodeResult): Record<TableName, Table> {
  const out = {} as Record<TableName, Table>;
  for (const name of TABLE_NAMES) out[name] = name === 'cpuUsage' ? cpuUsage(r) : isWholeTraceTable(name) ? wholeTraceTable(r, name) : (r[name as keyof DecodeResult] as Table);
  return out;
}

const OPTIONS: Omit<FormatOptions, 'format' | 'clock'>[] = [
  {},
  { names: true },
  { time: 'ns' },
  { time: 'filetime' },
  { names: true, time: 'ns' },
  { names: true, time: 'filetime' },
  { time: 's' },
  { names: true, time: 'iso' },
];

function describeOptions(o: FormatOptions): string {
  return [o.format, o.names ? '--names' : '', o.time && o.time !== 'raw' ? `--time ${o.time}` : ''].filter(Boolean).join(' ');
}

// every check below runs on the three row loops: WebAssembly (the default, src/output/text-wasm.ts, its rows
// left to the compiled loop), compiled and interpreted (no WebAssembly)
describe.each(ROW_LOOPS)('row loop: %s', (loop) => {
  beforeAll(() => useRowLoop(loop));
  afterAll(restoreRowLoop);

describe('the same bytes as the former string formatter', () => {
    // a simulated schedule with every table (compact rows with nulls, strings with commas and quotes in
    // command lines, rundowns, lifetimes, spin locks, samples, images, cpuUsage with its durations); two clocks
    const traces: [string, Uint8Array][] = [
      ['QPC 10 MHz', writeTrace(simulateSchedule({ seed: 11, cpus: 4, duration: 600_000, switchMode: 'mixed', spinlocks: 0.05, profileInterval: 10_000, images: true, stacks: true }).description).bytes],
      [
        'QPC 3.579545 MHz, v4 threads',
        writeTrace({ ...simulateSchedule({ seed: 12, cpus: 2, duration: 300_000, switchMode: 'mixed', threadVersion: 4, spinlocks: 0.05, profileInterval: 10_000, images: true, stacks: true }).description, perfFreq: 3_579_545n }).bytes,
      ],
    ];
    for (const [label, bytes] of traces) {
      test(`${label}: every table, every option, csv and jsonl`, () => {
        const r = decodeSync(bytes);
        expect(r.clock).not.toBeNull();
        const tables = allTables(r);
        let checked = 0;
        for (const name of TABLE_NAMES) {
          const t = tables[name];
          expect([name, t.length > 0]).toEqual([name, true]);
          for (const format of ['csv', 'jsonl'] as const) {
            for (const extra of OPTIONS) {
              const o: FormatOptions = { ...extra, format, clock: r.clock };
              const want = oracle(t, o);
              const whole = format === 'csv' ? toCsv(t, o) : toJsonl(t, o);
              expect([name, describeOptions(o), Buffer.from(whole).equals(want)]).toEqual([name, describeOptions(o), true]);
              // chunks of 7 rows into a 4 KiB buffer: rows and flushes meet at every offset
              expect([name, describeOptions(o), written(t, o, 7).equals(want)]).toEqual([name, describeOptions(o), true]);
              checked++;
            }
          }
        }
        expect(checked).toBe(TABLE_NAMES.length * 2 * OPTIONS.length);
      });
    }
  
    test('the trace has what the comparison needs: nulls, quoted CSV cells, 64-bit values past 2^53', () => {
      const r = decodeSync(traces[0]![1]);
      const csv = utf8.decode(toCsv(r.processEvents));
      expect(csv).toMatch(/"[^"\n]*,[^"\n]*"/); // a command line with a comma, quoted
      expect(csv).toMatch(/""/); // a quote inside a quoted cell
      expect(utf8.decode(toJsonl(r.cswitch))).toMatch(/"newThreadPriority":null/);
      expect(r.spinlock.toArray().some((row) => row.spinLockAddress > 2n ** 53n)).toBe(true);
    });
  });
});

// ---- random tables: every column type, extremes, nulls, any string

const I64_EDGES = [0n, 1n, -1n, 2n ** 31n, -(2n ** 31n), 2n ** 32n - 1n, 2n ** 32n, 2n ** 53n - 1n, 2n ** 53n, 2n ** 53n + 1n, -(2n ** 53n) - 1n, 2n ** 62n, 2n ** 63n - 1n, -(2n ** 63n)];
const U64_EDGES = [0n, 1n, 2n ** 32n - 1n, 2n ** 32n, 2n ** 53n - 1n, 2n ** 53n, 2n ** 53n + 1n, 10n ** 19n, 2n ** 63n, 2n ** 64n - 1n, 0xfffff8006ba1bc20n];
const STRINGS = ['', ',', '"', '""', 'a,b', 'say "hi"', 'line\nbreak', 'cr\rlf\r\n', 'é', '日本語.exe', '\u{1F600}', 'tab\tand\u0001control', '\\back\\slash', 'C:\\Program Files\\x.exe', ' lead', 'trail '];
/** not UTF-16 text: CSV writes U+FFFD for a lone surrogate (as Node encodes strings), JSON an escape */
const LONE_SURROGATES = ['\uD800', 'x\uDC00y', '\uDBFF\uDBFF'];

function valueArb(spec: ColumnSpec, anyString: boolean): fc.Arbitrary<unknown> {
  switch (spec.type) {
    case 'i64':
      return fc.oneof(fc.constantFrom(...I64_EDGES), fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n }), fc.bigInt({ min: -(2n ** 54n), max: 2n ** 54n }));
    case 'u64':
      return fc.oneof(fc.constantFrom(...U64_EDGES), fc.bigInt({ min: 0n, max: 2n ** 64n - 1n }));
    case 'f64':
      return anyString
        ? fc.oneof(fc.integer({ min: 0, max: 2 ** 31 }), fc.double(), fc.constantFrom(2 ** 53, 2 ** 53 - 1, -0, 1e21, 1.5e-7))
        : fc.oneof(fc.integer({ min: 0, max: 2 ** 31 }), fc.maxSafeNat(), fc.double({ noNaN: true, noDefaultInfinity: true }));
    case 'u32':
      return fc.oneof(fc.constantFrom(0, 9, 10, 99, 100, 2 ** 31, 2 ** 32 - 1), fc.nat({ max: 2 ** 32 - 1 }));
    case 'i32':
      return fc.oneof(fc.constantFrom(0, -1, 2 ** 31 - 1, -(2 ** 31)), fc.integer({ min: -(2 ** 31), max: 2 ** 31 - 1 }));
    case 'u16':
      return fc.nat({ max: 0xffff });
    case 'u8':
      return fc.nat({ max: 0xff });
    case 'i8':
      return fc.integer({ min: -128, max: 127 });
    case 'str':
      return fc.oneof(fc.constantFrom(...STRINGS, ...(anyString ? LONE_SURROGATES : [])), fc.string({ unit: 'binary', maxLength: 40 }), fc.string({ maxLength: 300 }));
  }
}

/** A random chunk of `table`: a value per cell, a random `valid` mask (bits of non-nullable columns set). */
function tableArb(table: TableName, anyString: boolean): fc.Arbitrary<Table> {
  const specs = TABLE_COLUMNS[table];
  const v = validColumnOf(table);
  const row = fc.tuple(...specs.map((s, i) => (i === v ? fc.nat({ max: 2 ** 32 - 1 }) : valueArb(s, anyString))));
  return fc.array(row, { minLength: 1, maxLength: 12 }).map((rows) => {
    const columns = specs.map((s, c): TypedColumn => {
      const values = rows.map((r) => r[c]);
      switch (s.type) {
        case 'str':
          return values as string[];
        case 'i64':
          return BigInt64Array.from(values as bigint[]);
        case 'u64':
          return BigUint64Array.from(values as bigint[]);
        case 'f64':
          return Float64Array.from(values as number[]);
        case 'u32':
          return Uint32Array.from(values as number[]);
        case 'i32':
          return Int32Array.from(values as number[]);
        case 'u16':
          return Uint16Array.from(values as number[]);
        case 'u8':
          return Uint8Array.from(values as number[]);
        case 'i8':
          return Int8Array.from(values as number[]);
      }
    });
    return new Table(table, { length: rows.length, columns });
  });
}

const clockArb: fc.Arbitrary<Clock> = fc
  .record({
    clockType: fc.constantFrom(1, 2, 3),
    perfFreq: fc.oneof(fc.constantFrom(10_000_000n, 3_579_545n, 14_318_180n, 2_904_000_000n, 2_999_999_999n, 1n, 2n ** 40n + 7n), fc.bigInt({ min: 1n, max: 2n ** 33n })),
    cpuSpeedInMHz: fc.constantFrom(1, 2904, 3000, 65535),
    headerTimestamp: fc.oneof(fc.constantFrom(0n, 1_000_000n, 133_000_000_000_000_000n, -(2n ** 63n), 2n ** 63n - 1n), fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n })),
    startTime: fc.oneof(fc.constantFrom(0n, 133_000_000_000_000_000n, 2n ** 63n - 1n), fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n })),
  })
  .map((info) => createClock(info));

const optionsArb = fc.record({
  format: fc.constantFrom('csv' as const, 'jsonl' as const),
  names: fc.boolean(),
  time: fc.constantFrom('raw' as const, 'ns' as const, 'filetime' as const),
  clock: clockArb,
});

describe.each(ROW_LOOPS)('row loop: %s', (loop) => {
  beforeAll(() => useRowLoop(loop));
  afterAll(restoreRowLoop);

describe('random tables', () => {
    test.each(TABLE_NAMES)('%s: the bytes of the former formatter, any values, chunking and buffer size', (name) => {
      fc.assert(
        fc.property(tableArb(name, true), optionsArb, fc.integer({ min: 1, max: 5 }), fc.constantFrom(0, 1024, 1 << 16), (t, o, chunk, bufferBytes) => {
          const want = oracle(t, o);
          expect(written(t, o, chunk, bufferBytes).equals(want)).toBe(true);
        }),
        { numRuns: 150 },
      );
    });
  
    test.each(TABLE_NAMES)('%s: CSV parses back and JSON lines JSON.parse back to exactly the values', (name) => {
      const specs = TABLE_COLUMNS[name].filter((s) => s.name !== 'valid');
      const ticks = TABLES[name].columns.filter((c) => c.time !== null);
      const enums = TABLES[name].columns.filter((c) => c.enum !== null);
      fc.assert(
        fc.property(tableArb(name, false), optionsArb, (t, o) => {
          const csv = parseCsv(utf8.decode(toCsv(t, o)));
          const json = utf8
            .decode(toJsonl(t, o))
            .split('\n')
            .slice(0, -1)
            .map((l) => JSON.parse(l) as Record<string, unknown>);
          const header = csv[0]!;
          expect(csv.length).toBe(t.length + 1);
          expect(json.length).toBe(t.length);
          for (let i = 0; i < t.length; i++) {
            const cells = csv[i + 1]!;
            expect(cells.length).toBe(header.length);
            const obj = json[i]!;
            const row = t.get(i) as Record<string, unknown>;
            const cell = (col: string) => cells[header.indexOf(col)];
            for (const s of specs) {
              const v = row[s.name];
              if (v === null) {
                expect([s.name, cell(s.name), obj[s.name]]).toEqual([s.name, '', null]);
              } else if (typeof v === 'bigint' && TABLES[t.name].columns[s.id]!.address) {
                // an address: 0x and lowercase hex digits, in CSV and (a string) in JSON
                expect([s.name, cell(s.name), obj[s.name]]).toEqual([s.name, `0x${v.toString(16)}`, `0x${v.toString(16)}`]);
              } else if (typeof v === 'bigint') {
                expect([s.name, BigInt(cell(s.name)!), obj[s.name]]).toEqual([s.name, v, v.toString()]); // always a string in JSON
              } else if (typeof v === 'number') {
                expect([s.name, Number(cell(s.name)), obj[s.name]]).toEqual([s.name, v === 0 ? 0 : v, v === 0 ? 0 : v]);
              } else {
                expect([s.name, cell(s.name), obj[s.name]]).toEqual([s.name, v, v]);
              }
            }
            if (o.time !== 'raw') {
              const ns = o.time === 'ns';
              for (const c of ticks) {
                if (c.time === 'duration' && !ns) continue;
                const col = c.name === 'timestamp' ? (ns ? 'timeNs' : 'fileTime') : c.name + (ns ? 'Ns' : 'FileTime');
                const raw = row[c.name] as bigint | null;
                const value =
                  raw === null ? null : c.time === 'duration' ? (raw * 1_000_000_000n) / o.clock.ticksPerSecond : ns ? o.clock.toNanoseconds(raw) : o.clock.toFileTime(raw);
                // a converted value outside the int64 range is null, as Arrow and Parquet store it
                const want = value === null || value < -(2n ** 63n) || value >= 2n ** 63n ? null : value;
                expect([col, cell(col), obj[col]]).toEqual([col, want === null ? '' : want.toString(), want === null ? null : want.toString()]);
              }
            }
            if (o.names) {
              for (const c of enums) {
                const v = row[c.name] as number | null;
                const want = v === null ? null : (ENUMS[c.enum!]![v] ?? `Unknown(${v})`);
                expect([c.name, cell(c.name + 'Name'), obj[c.name + 'Name']]).toEqual([c.name, want ?? '', want]);
              }
            }
          }
        }),
        { numRuns: 100 },
      );
    });
  });
});

/** RFC 4180 records (fields separated by commas, "quoted" fields with doubled quotes, records ending in \n). */
function parseCsv(text: string): string[][] {
  const records: string[][] = [];
  let fields: string[] = [];
  let i = 0;
  while (i < text.length) {
    let field = '';
    if (text[i] === '"') {
      i++;
      for (;;) {
        if (i >= text.length) throw new Error('unterminated quoted field');
        if (text[i] === '"') {
          if (text[i + 1] === '"') {
            field += '"';
            i += 2;
          } else {
            i++;
            break;
          }
        } else field += text[i++];
      }
      if (i < text.length && text[i] !== ',' && text[i] !== '\n') throw new Error(`text after a quoted field at ${i}`);
    } else {
      while (i < text.length && text[i] !== ',' && text[i] !== '\n') {
        if (text[i] === '"' || text[i] === '\r') throw new Error(`unquoted ${JSON.stringify(text[i])} at ${i}`);
        field += text[i++];
      }
    }
    fields.push(field);
    if (text[i] === ',') i++;
    else {
      records.push(fields);
      fields = [];
      i++; // \n
    }
  }
  return records;
}

describe('TextTableWriter', () => {
  const r = decodeSync(writeTrace(simulateSchedule({ seed: 3, cpus: 2, duration: 200_000, switchMode: 'mixed' }).description).bytes);

  test('an async sink: each call awaited, the same bytes; a call before the previous one finished is refused', async () => {
    const o: FormatOptions = { format: 'jsonl', names: true, time: 'ns', clock: r.clock };
    const parts: Uint8Array[] = [];
    let inFlight = 0;
    const w = new TextTableWriter('cswitch', o, async (b) => {
      inFlight++;
      expect(inFlight).toBe(1);
      await new Promise((resolve) => setTimeout(resolve, 0));
      parts.push(b);
      inFlight--;
    }, 2048);
    await w.writeHeader();
    const half = r.cswitch.length >> 1;
    const first = w.write(sliceTable(r.cswitch, 0, half));
    expect(first).toBeInstanceOf(Promise);
    expect(() => w.write(r.cswitch)).toThrow(/previous call has not finished/);
    await first;
    await w.write(sliceTable(r.cswitch, half, r.cswitch.length));
    await w.end();
    expect(parts.length).toBeGreaterThan(10);
    expect(concat(parts).equals(oracle(r.cswitch, o))).toBe(true);
  });

  test('the sink owns what it receives: earlier bytes never change', () => {
    const parts: Uint8Array[] = [];
    const copies: Buffer[] = [];
    const w = new TextTableWriter('cswitch', { format: 'csv' }, (b) => {
      parts.push(b);
      copies.push(Buffer.from(b));
    }, 4096);
    w.writeHeader();
    w.write(r.cswitch);
    w.write(r.cswitch);
    w.end();
    expect(parts.length).toBeGreaterThan(2);
    parts.forEach((p, i) => expect(Buffer.from(p).equals(copies[i]!)).toBe(true));
  });

  test('columns, header, empty chunks, a string longer than the buffer', () => {
    const w = new TextTableWriter('processes', { format: 'csv', names: true, time: 'filetime', clock: r.clock }, () => {});
    expect(w.columns).toEqual(['processId', 'parentId', 'sessionId', 'imageFileName', 'commandLine', 'startTime', 'endTime', 'exitStatus', 'startTimeFileTime', 'endTimeFileTime']);
    expect(utf8.decode(toJsonl(sliceTable(r.cswitch, 0, 0)))).toBe('');
    expect(utf8.decode(toCsv(sliceTable(r.threads, 0, 0)))).toBe('threadId,processId,startTime,endTime,name,win32StartAddr,basePriority\n');
    const long = 'x,"'.repeat(100_000);
    const t = new Table('threads', {
      length: 2,
      columns: [Uint32Array.of(1, 2), Uint32Array.of(3, 4), BigInt64Array.of(5n, 6n), BigInt64Array.of(7n, 8n), [long, 'short'], BigUint64Array.of(9n, 10n), Uint8Array.of(11, 12), Uint32Array.of(0xff, 0xff)],
    });
    for (const format of ['csv', 'jsonl'] as const) {
      expect(written(t, { format }, 1, 4096).equals(oracle(t, { format }))).toBe(true);
    }
  });

  test('a chunk of another table, a bad format, --time without a clock: clear errors', () => {
    const w = new TextTableWriter('threads', { format: 'csv' }, () => {});
    expect(() => w.write(r.cswitch)).toThrow(/formats threads rows, not cswitch/);
    expect(() => new TextTableWriter('threads', { format: 'xml' as 'csv' }, () => {})).toThrow(/format must be 'csv' or 'jsonl'/);
    expect(() => new TextTableWriter('threads', { format: 'csv', time: 'ns' }, () => {})).toThrow(/--time needs a trace whose clock/);
  });
});

test('JSON lines: every 64-bit column and converted time is a string (or null) in every table', () => {
  const r = decodeSync(writeTrace(simulateSchedule({ seed: 4, cpus: 2, duration: 200_000, switchMode: 'mixed', spinlocks: 0.05, profileInterval: 10_000, images: true, stacks: true }).description).bytes);
  const tables = allTables(r);
  for (const name of TABLE_NAMES) {
    const typeOf = new Map<string, string>(TABLES[name].columns.map((c) => [c.name, c.type]));
    for (const time of ['ns', 's', 'filetime', 'iso'] as const) {
      const o: FormatOptions = { format: 'jsonl', time, clock: r.clock, names: true };
      const columns = new TextTableWriter(name, o, () => {}).columns;
      const lines = utf8.decode(toJsonl(tables[name], o)).trimEnd().split('\n');
      expect(lines.length).toBe(tables[name].length);
      const seen = new Map<string, Set<string>>(columns.map((c) => [c, new Set()]));
      for (const l of lines) {
        const obj = JSON.parse(l) as Record<string, unknown>;
        expect(Object.keys(obj)).toEqual(columns);
        for (const [k, v] of Object.entries(obj)) if (v !== null) seen.get(k)!.add(typeof v);
      }
      for (const k of columns) {
        const type = typeOf.get(k);
        // 64-bit columns, converted times (not a table column) and names/strings: strings; the others numbers
        const want = type === undefined || type === 'i64' || type === 'u64' || type === 'str' ? 'string' : 'number';
        expect([name, k, [...seen.get(k)!].filter((x) => x !== want)]).toEqual([name, k, []]);
      }
      // the converted times are the clock's exact values
      if (name === 'cswitch' && (time === 'ns' || time === 'filetime')) {
        const o = JSON.parse(lines[lines.length - 1]!) as Record<string, string>;
        const ts = r.cswitch.get(r.cswitch.length - 1).timestamp;
        expect(o[time === 'ns' ? 'timeNs' : 'fileTime']).toBe((time === 'ns' ? r.clock!.toNanoseconds(ts) : r.clock!.toFileTime(ts)).toString());
        expect(BigInt(o.fileTime ?? o.timeNs!)).toBeGreaterThan(time === 'ns' ? 0n : 2n ** 53n); // FILETIMEs are past 2^53
      }
    }
  }
});

describe('etw-decode dump: the bytes of the former formatter', () => {
  const BIN = fileURLToPath(new URL('../bin/etw-decode.js', import.meta.url));
  const dir = mkdtempSync(join(tmpdir(), 'etw-text-'));
  const file = join(dir, 'sched.etl');
  const bytes = writeTrace(simulateSchedule({ seed: 21, cpus: 3, duration: 500_000, switchMode: 'mixed', spinlocks: 0.05, profileInterval: 10_000, images: true, stacks: true }).description).bytes;
  writeFileSync(file, bytes);
  const r = decodeSync(bytes, { sourcePath: file }); // the traces row names the file, as dump's does
  const tables = allTables(r);

  /** cpuUsage as dump writes it: the streaming deriver's chunks in the order they come */
  async function streamedCpuUsage(): Promise<Table[]> {
    const chunks: Table[] = [];
    const d = new CpuUsageDeriver((t) => chunks.push(t));
    await decodeStream(bytes, { rows: 'borrow', onRows: (rows) => d.add(rows.cswitch, rows.readythread, rows.threadEvents) });
    d.finish();
    return chunks;
  }

  /** threadStates as dump writes it: streamed too, each CPU in the watermark from the start */
  async function streamedThreadStates(): Promise<Table[]> {
    const chunks: Table[] = [];
    const d = new ThreadStatesDeriver((t) => chunks.push(t), { cpus: r.info!.numberOfProcessors });
    await decodeStream(bytes, { rows: 'borrow', onRows: (rows) => d.add(rows.cswitch, rows.readythread, rows.threadEvents) });
    d.finish();
    return chunks;
  }

  const cases: [FormatOptions['format'], string[]][] = [
    ['csv', []],
    ['csv', ['--names', '--time', 'ns']],
    ['jsonl', ['--names', '--time', 'filetime']],
  ];
  test.each(TABLE_NAMES)('%s', async (name) => {
    const chunks = name === 'cpuUsage' ? await streamedCpuUsage() : name === 'threadStates' ? await streamedThreadStates() : [tables[name]];
    for (const [format, args] of cases) {
      const o: FormatOptions = { format, names: args.includes('--names'), time: args.includes('ns') ? 'ns' : args.includes('filetime') ? 'filetime' : 'raw', clock: r.clock };
      const want = Buffer.from(headerLine(name, o) + chunks.map((t) => formatRows(t, o)).join(''), 'utf8');
      const out = spawnSync(process.execPath, [BIN, 'dump', file, '--table', name, '--format', format, ...args], { maxBuffer: 1 << 30 });
      expect([name, format, args, out.status, out.stderr.toString()]).toEqual([name, format, args, 0, '']);
      expect([name, format, args, out.stdout.length, out.stdout.equals(want)]).toEqual([name, format, args, want.length, true]);
    }
  });

  test('-o FILE: the same bytes', () => {
    const target = join(dir, 'out.jsonl');
    const out = spawnSync(process.execPath, [BIN, 'dump', file, '--table', 'processEvents', '--format', 'jsonl', '--names', '--time', 'ns', '-o', target]);
    expect(out.status).toBe(0);
    const o: FormatOptions = { format: 'jsonl', names: true, time: 'ns', clock: r.clock };
    expect(readFileSync(target).equals(oracle(tables.processEvents, o))).toBe(true);
  });
});

test('the string forms of the former API come from the byte encoder: header row, rows, an empty chunk, a CSV cell', () => {
  const r = decodeSync(writeTrace(simulateSchedule({ seed: 8, cpus: 2, duration: 200_000, switchMode: 'mixed' }).description).bytes);
  for (const name of ['cswitch', 'processEvents', 'threads'] as const) {
    for (const o of [{ format: 'csv' as const }, { format: 'jsonl' as const, names: true, time: 'filetime' as const, clock: r.clock }]) {
      const parts: string[] = [];
      const w = new TextTableWriter(name, o, (b) => void parts.push(utf8.decode(b)), 1 << 20);
      w.writeHeader();
      w.end();
      expect(parts.join('')).toBe(headerLine(name, o));
      const text = (t: Table) => utf8.decode(o.format === 'csv' ? toCsv(t, o) : toJsonl(t, o));
      expect(text(r[name])).toBe(headerLine(name, o) + formatRows(r[name], o));
      expect(text(sliceTable(r[name], 0, 0))).toBe(headerLine(name, o)); // an empty chunk adds nothing
    }
  }
  expect(csvText('a,"b"')).toBe('"a,""b"""');
});

describe('the WebAssembly row loop', () => {
  afterAll(restoreRowLoop);
  // a schedule's switches and cpuUsage rows, some made to be rows the module leaves to its twin: an enum value
  // without a name, a file offset that is no safe integer, ticks off the number path (a converted time
  // beyond 2^53, or beyond the int64 range: null)
  const r = decodeSync(writeTrace(simulateSchedule({ seed: 21, cpus: 4, duration: 3_000_000, switchMode: 'mixed' }).description).bytes);
  const cswitch = sliceTable(r.cswitch, 0, r.cswitch.length);
  const usage = cpuUsage(r);
  const cs = cswitch.columns as TypedColumn[];
  const at = (name: string) => TABLE_COLUMNS.cswitch.findIndex((c) => c.name === name);
  (cs[at('oldThreadWaitReason')] as Uint8Array)[3] = 250;
  (cs[at('fileOffset')] as Float64Array)[5] = 1.5;
  (cs[at('fileOffset')] as Float64Array)[6] = 2 ** 60;
  (cs[at('timestamp')] as BigInt64Array)[7] = 2n ** 62n;
  (cs[at('timestamp')] as BigInt64Array)[8] = -(2n ** 63n);

  test.each([
    ['cswitch', cswitch],
    ['cpuUsage', usage],
  ] as const)('%s: the bytes of the TypeScript loop, the rows it cannot write left to it', (_name, t) => {
    expect(t.length).toBeGreaterThan(100);
    for (const format of ['csv', 'jsonl'] as const) {
      for (const extra of [{}, { names: true, time: 'ns' as const }, { time: 'filetime' as const }]) {
        const o: FormatOptions = { ...extra, format, clock: r.clock };
        useRowLoop('compiled');
        const want = written(t, o, 64, 1 << 12);
        useRowLoop('wasm');
        const before = { ...textWasmRows };
        const got = written(t, o, 64, 1 << 12);
        expect([describeOptions(o), got.equals(want)]).toEqual([describeOptions(o), true]);
        expect(textWasmRows.module - before.module).toBeGreaterThan(t.length - 10);
        if (t === cswitch) expect(textWasmRows.twin - before.twin).toBeGreaterThanOrEqual(extra.names || extra.time ? 3 : 2);
      }
    }
    // and as the former formatter wrote them
    const o: FormatOptions = { format: 'csv', names: true, time: 'ns', clock: r.clock };
    expect(written(t, o, 1000).equals(oracle(t, o))).toBe(true);
    // one chunk of more rows than the module holds at a time (text-wasm.ts WINDOW_ROWS), nulls among them
    const many = t.length > 40_000 ? t : (concatTable(t, Math.ceil(40_000 / t.length)) as typeof t);
    useRowLoop('compiled');
    const whole = written(many, o, many.length, 1 << 18);
    useRowLoop('wasm');
    expect(written(many, o, many.length, 1 << 18).equals(whole)).toBe(true);
  });

  // text columns go to the module as their codes: as a worker gets a chunk (chunkMessage → chunkOf)
  const profiled = decodeSync(writeTrace(simulateSchedule({ seed: 22, cpus: 4, duration: 600_000, switchMode: 'mixed', profileInterval: 10_000, images: true, stacks: true }).description).bytes);
  const all = allTables(profiled);
  test.each(TABLE_NAMES.filter((n) => TABLE_COLUMNS[n].some((c) => c.type === 'str')))('%s: text columns written from their codes, the bytes of the TypeScript loop', (name) => {
    const t = all[name];
    expect(t.length).toBeGreaterThan(0);
    // a long value and one to escape in every text column of a few rows: the buffer's room, quoting
    const cols = t.columns.map((c) => (Array.isArray(c) ? [...c] : c)) as TypedColumn[];
    cols.forEach((c) => {
      if (!Array.isArray(c)) return;
      c[0] = 'x'.repeat(5000);
      if (c.length > 2) c[2] = 'a "quoted", value\nwith a newline';
    });
    const m = chunkMessage({ length: t.length, columns: cols }, false);
    const chunk = chunkOf(m.chunk);
    const coded = new Table(name, chunk);
    expect(coded.textCodes?.some((c) => c !== undefined)).toBe(true);
    for (const format of ['csv', 'jsonl'] as const) {
      const o: FormatOptions = { format, names: true, time: 'ns', clock: profiled.clock };
      useRowLoop('compiled');
      const want = written(coded, o, t.length, 1 << 12);
      useRowLoop('wasm');
      const before = textWasmRows.module;
      expect([format, writtenWhole(coded, o, 1 << 12).equals(want)]).toEqual([format, true]);
      expect(textWasmRows.module - before).toBeGreaterThanOrEqual(Math.floor(0.85 * (t.length - 1))); // the rest: the long value, rows near a full buffer
    }
  });
});
