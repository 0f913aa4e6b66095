// `etw-decode convert`: many traces into one Hive-partitioned dataset — every row of every table in a
// part file, parts sorted by (cpu, time), the traces row last, skips and --force, a failed file that
// does not stop the others (exit 1), files in parallel worker threads; and the (cpu, time) sort itself.
import { describe, expect, test, beforeAll } from 'vitest';
import fc from 'fast-check';
import protobuf from 'protobufjs';
import { decodeSync, isWholeTraceTable, threadStates, wholeTraceTable } from '../src/node.js';
import { tableFromIPC } from 'apache-arrow';
import { duck } from './helpers/readers.js';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { cpuTimeOrder, sortByCpuTime } from '../src/convert/sort.js';
import { TABLE_NAMES, type ColumnChunk } from '../src/tables/schema.js';
import { simulateSchedule, writeTrace, generateMixedTrace } from '../src/writer/index.js';

const BIN = fileURLToPath(new URL('../bin/etw-decode.js', import.meta.url));
const cli = (args: string[]) => spawnSync(process.execPath, [BIN, ...args], { encoding: 'utf8' });

describe('sort by (cpu, time)', () => {
  test('stable, a permutation, sorted — for any cpus and times', () => {
    fc.assert(
      fc.property(fc.array(fc.tuple(fc.integer({ min: 0, max: 5 }), fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n })), { maxLength: 200 }), (rows) => {
        const cpu = Uint16Array.from(rows.map((r) => r[0]));
        const time = BigInt64Array.from(rows.map((r) => r[1]));
        const order = cpuTimeOrder(cpu, time, rows.length) ?? Uint32Array.from(rows.map((_, i) => i));
        const expected = rows.map((r, i) => ({ c: r[0], t: r[1], i })).sort((a, b) => a.c - b.c || (a.t < b.t ? -1 : a.t > b.t ? 1 : a.i - b.i));
        expect(Array.from(order)).toEqual(expected.map((e) => e.i));
      }),
    );
  });

  test('rows move with every column, 64-bit values exact', () => {
    const chunk: ColumnChunk = {
      length: 3,
      columns: [
        BigInt64Array.from([30n, -5n, 2n ** 62n]), // timestamp
        Uint16Array.from([1, 1, 0]), // cpu
        Uint32Array.from([7, 8, 9]), // threadId
        Uint8Array.from([1, 2, 3]), // adjustReason
        Int8Array.from([-1, -2, -3]), // adjustIncrement
        Uint8Array.from([0, 0, 1]), // flags
        Uint8Array.from([2, 2, 2]), // version
        Float64Array.from([100, 200, 300]), // fileOffset
      ],
    };
    const s = sortByCpuTime('readythread', chunk);
    expect(Array.from(s.columns[0] as BigInt64Array)).toEqual([2n ** 62n, -5n, 30n]);
    expect(Array.from(s.columns[2] as Uint32Array)).toEqual([9, 8, 7]);
    expect(Array.from(s.columns[4] as Int8Array)).toEqual([-3, -2, -1]);
    expect(Array.from(s.columns[7] as Float64Array)).toEqual([300, 200, 100]);
  });
  test('columns that are views into larger buffers (non-zero byteOffset) are permuted from their own cells', () => {
    const at = <T extends { subarray(a: number, b: number): T }>(a: T) => a.subarray(2, 5);
    const chunk: ColumnChunk = {
      length: 3,
      columns: [
        at(BigInt64Array.from([9n, 9n, 30n, -5n, 2n ** 62n, 9n])),
        at(Uint16Array.from([7, 7, 1, 1, 0, 7])),
        at(Uint32Array.from([0, 0, 7, 8, 9, 0])),
        at(Uint8Array.from([0, 0, 1, 2, 3, 0])),
        at(Int8Array.from([0, 0, -1, -2, -3, 0])),
        at(Uint8Array.from([0, 0, 0, 0, 1, 0])),
        at(Uint8Array.from([0, 0, 2, 2, 2, 0])),
        at(Float64Array.from([0, 0, 100, 200, 300, 0])),
      ],
    };
    const s = sortByCpuTime('readythread', chunk);
    expect(Array.from(s.columns[0] as BigInt64Array)).toEqual([2n ** 62n, -5n, 30n]);
    expect(Array.from(s.columns[1] as Uint16Array)).toEqual([0, 1, 1]);
    expect(Array.from(s.columns[2] as Uint32Array)).toEqual([9, 8, 7]);
    expect(Array.from(s.columns[3] as Uint8Array)).toEqual([3, 2, 1]);
    expect(Array.from(s.columns[4] as Int8Array)).toEqual([-3, -2, -1]);
    expect(Array.from(s.columns[7] as Float64Array)).toEqual([300, 200, 100]);
  });
});

describe('convert --to csv / jsonl', () => {
  const dir = mkdtempSync(join(tmpdir(), 'etw-convert-'));
  const a = join(dir, 'a.etl');
  const b = join(dir, 'b.etl');
  const bad = join(dir, 'notes.etl');
  beforeAll(() => {
    writeFileSync(a, writeTrace(simulateSchedule({ seed: 11, cpus: 3, duration: 1_500_000, switchMode: 'mixed' }).description).bytes);
    writeFileSync(b, generateMixedTrace({ seed: 4, targetBytes: 300_000, cpus: 4, bufferSize: 0x4000 }).bytes);
    writeFileSync(bad, 'this is not a trace\n'.repeat(20));
  });

  /** data lines of every part of `table` for the trace converted from `file` */
  function partLines(out: string, table: string, ext: string): { id: string; files: string[]; lines: string[] }[] {
    return readdirSync(join(out, table)).map((p) => {
      const files = readdirSync(join(out, table, p)).sort((x, y) => Number(x.match(/\d+/)![0]) - Number(y.match(/\d+/)![0]));
      const lines = files.flatMap((f) => {
        const text = readFileSync(join(out, table, p, f), 'utf8').split('\n').filter(Boolean);
        return ext === 'csv' ? text.slice(1) : text;
      });
      return { id: p.replace('trace=', ''), files, lines };
    });
  }

  test('two traces and a bad file in parallel: every row of every table, a failure reported, exit 1', () => {
    const out = join(dir, 'ds-csv');
    const r = cli(['convert', a, b, bad, '--to', 'csv', '--out', out, '--threads', '2', '--part-rows', '100', '--no-progress']);
    expect(r.status).toBe(1);
    expect(r.stderr).toMatch(/notes\.etl: failed: not an ETL file/);
    expect(r.stderr).toMatch(/2 converted, 0 skipped, 1 failed/);
    expect(existsSync(join(out, '.staging'))).toBe(false);
    expect(readdirSync(out).sort()).toEqual(['.manifests', ...TABLE_NAMES].sort());
    for (const [file, name] of [[a, 'a'], [b, 'b']] as const) {
      for (const table of TABLE_NAMES) {
        const parts = partLines(out, table, 'csv').find((p) => p.id.startsWith(name + '-'))!;
        expect(parts, `${table} of ${name}`).toBeDefined();
        // the same rows as `dump --time ns` (convert adds timeNs like it), in (cpu, time) order per part
        const dump = cli(['dump', file, '--table', table, '--time', 'ns', '--no-progress']);
        expect(dump.status).toBe(0);
        const dumped = dump.stdout.split('\n').filter(Boolean);
        const header = readFileSync(join(out, table, `trace=${parts.id}`, 'part-0.csv'), 'utf8').split('\n')[0];
        expect(header).toBe(dumped[0]);
        const body = dumped.slice(1);
        expect(parts.lines.length, `${table} rows of ${name}`).toBe(body.length);
        if (table === 'traces') continue; // sourcePath: absolute in the dataset, as given in the dump
        expect([...parts.lines].sort()).toEqual([...body].sort());
      }
      // parts of 100 rows (the last one fewer), each in (cpu, timestamp) order
      const cs = partLines(out, 'cswitch', 'csv').find((p) => p.id.startsWith(name + '-'))!;
      expect(cs.files.length).toBe(Math.ceil(cs.lines.length / 100));
      for (const f of cs.files) {
        const rows = readFileSync(join(out, 'cswitch', `trace=${cs.id}`, f), 'utf8').split('\n').filter(Boolean).slice(1).map((l) => l.split(','));
        expect(rows.length).toBe(f === cs.files.at(-1) ? cs.lines.length - 100 * (cs.files.length - 1) : 100);
        for (let i = 1; i < rows.length; i++) {
          const [t0, c0] = [BigInt(rows[i - 1]![0]!), Number(rows[i - 1]![1])];
          const [t1, c1] = [BigInt(rows[i]![0]!), Number(rows[i]![1])];
          expect(c1 > c0 || (c1 === c0 && t1 >= t0), `${f} row ${i}`).toBe(true);
        }
      }
    }
    const traces = partLines(out, 'traces', 'csv').map((p) => p.lines[0]!);
    expect(traces.some((l) => l.startsWith(a + ','))).toBe(true);
    expect(traces.some((l) => l.startsWith(b + ','))).toBe(true);
  });

  test('a re-run skips converted traces; --force converts again; jsonl keeps 64-bit values as strings', () => {
    const out = join(dir, 'ds-jsonl');
    expect(cli(['convert', a, '--to', 'jsonl', '--out', out, '--no-progress']).status).toBe(0);
    const again = cli(['convert', a, '--to', 'jsonl', '--out', out, '--no-progress']);
    expect(again.status).toBe(0);
    expect(again.stderr).toMatch(/skipped \(trace=a-[0-9a-f]{8} is in the dataset\)/);
    expect(again.stderr).toMatch(/0 converted, 1 skipped/);
    const forced = cli(['convert', a, '--to', 'jsonl', '--out', out, '--force', '--tables', 'cswitch,traces', '--no-progress']);
    expect(forced.stderr).toMatch(/1 converted/);
    const p = partLines(out, 'cswitch', 'jsonl')[0]!;
    const row = JSON.parse(p.lines[0]!);
    expect(typeof row.timestamp).toBe('string');
    expect(typeof row.timeNs).toBe('string');
    expect(typeof row.cpu).toBe('number');
  });

  test('--to perfetto: one timeline per trace with every switch, wake-up and process name', async () => {
    const out = join(dir, 'timelines');
    const r = cli(['convert', a, b, '--to', 'perfetto', '--out', out, '--no-progress']);
    expect(r.status).toBe(0);
    const files = readdirSync(out).sort();
    expect(files.map((f) => f.replace(/-[0-9a-f]{8}/, ''))).toEqual(['.manifests', 'a.perfetto-trace', 'b.perfetto-trace']);
    files.shift(); // the timelines
    const root = protobuf.loadSync(fileURLToPath(new URL('./fixtures/perfetto/perfetto-etw.proto', import.meta.url)));
    const Trace = root.lookupType('perfetto.protos.Trace');
    const lib = decodeSync(readFileSync(a));
    const trace = Trace.toObject(Trace.decode(readFileSync(join(out, files[0]!))), { longs: String }) as {
      packet: { etwEvents?: { event: { cSwitch?: unknown; readyThread?: unknown }[] }; processTree?: { processes: unknown[]; threads: unknown[] } }[];
    };
    const events = trace.packet.flatMap((p) => p.etwEvents?.event ?? []);
    expect(events.filter((e) => e.cSwitch).length).toBe(lib.cswitch.length);
    expect(events.filter((e) => e.readyThread).length).toBe(lib.readythread.length);
    const tree = trace.packet.find((p) => p.processTree)!.processTree!;
    expect(tree.processes.length).toBe(lib.processes.length);
    const again = cli(['convert', a, '--to', 'perfetto', '--out', out, '--no-progress']);
    expect(again.stderr).toMatch(/0 converted, 1 skipped/);
  });

  test('--to parquet: DuckDB reads the dataset with hive partitioning, joins tables by trace, sums CPU time by process', async () => {
    const out = join(dir, 'ds-parquet');
    const r = cli(['convert', a, b, '--to', 'parquet', '--out', out, '--threads', '2', '--no-progress']);
    expect(r.status, r.stderr).toBe(0);
    const c = await duck();
    const q = async (sql: string) => (await c.runAndReadAll(sql)).getRowObjects();
    const glob = (t: string) => `read_parquet('${out}/${t}/*/*.parquet', hive_partitioning = true)`;
    // every table: rows per trace equal the library's decode
    for (const [file, name] of [[a, 'a'], [b, 'b']] as const) {
      const lib = decodeSync(readFileSync(file));
      for (const table of TABLE_NAMES) {
        const want = table === 'cpuUsage' ? lib.summary.cpuUsage : isWholeTraceTable(table) ? wholeTraceTable(lib, table).length : lib[table].length;
        const [row] = await q(`SELECT count(*) AS n FROM ${glob(table)} WHERE trace LIKE '${name}-%'`);
        expect(Number(row!.n), `${table} of ${name}`).toBe(want);
      }
      // cells: the first switches of the trace, in (cpu, timestamp) order, with timeNs next to the ticks
      const rows = await q(`SELECT timestamp, timeNs, cpu, newThreadId, oldThreadId FROM ${glob('cswitch')} WHERE trace LIKE '${name}-%' ORDER BY cpu, timestamp LIMIT 50`);
      const order = Array.from({ length: lib.cswitch.length }, (_, i) => i).sort((x, y) => {
        const rx = lib.cswitch.get(x);
        const ry = lib.cswitch.get(y);
        return rx.cpu - ry.cpu || (rx.timestamp < ry.timestamp ? -1 : rx.timestamp > ry.timestamp ? 1 : x - y);
      });
      rows.forEach((row, k) => {
        const want = lib.cswitch.get(order[k]!);
        expect(row.timestamp).toBe(want.timestamp);
        expect(row.timeNs).toBe(lib.clock!.toNanoseconds(want.timestamp));
        expect(row.cpu).toBe(want.cpu);
        expect(row.oldThreadId).toBe(want.oldThreadId);
      });
    }
    // the README's query: CPU time by process, from cpuUsage joined with processes and traces
    const top = await q(`
      SELECT t.sourcePath, p.imageFileName, sum(u.cpuUsage) / any_value(t.ticksPerSecond) AS cpuSeconds
      FROM ${glob('cpuUsage')} u
      JOIN ${glob('traces')} t USING (trace)
      LEFT JOIN ${glob('processes')} p ON p.trace = u.trace AND p.processId = u.newProcessId
        AND (p.startTime IS NULL OR p.startTime <= u.switchInTime) AND (p.endTime IS NULL OR u.switchInTime < p.endTime)
      WHERE u.newProcessId IS NOT NULL
      GROUP BY ALL ORDER BY cpuSeconds DESC LIMIT 20`);
    expect(top.length).toBeGreaterThan(2);
    expect(top.some((row) => row.sourcePath === a)).toBe(true);
    const [arrowRows] = await q(`SELECT count(*) AS n FROM ${glob('traces')}`);
    expect(Number(arrowRows!.n)).toBe(2);
  });

  test('--to arrow: IPC files apache-arrow reads back', async () => {
    const out = join(dir, 'ds-arrow');
    expect(cli(['convert', b, '--to', 'arrow', '--out', out, '--tables', 'cswitch,spinlock,traces', '--no-progress']).status).toBe(0);
    const lib = decodeSync(readFileSync(b));
    const [part] = readdirSync(join(out, 'spinlock'));
    const t = tableFromIPC(readFileSync(join(out, 'spinlock', part!, 'part-0.arrow')));
    expect(t.numRows).toBe(lib.spinlock.length);
    const addresses = new Set(Array.from({ length: lib.spinlock.length }, (_, i) => lib.spinlock.get(i).spinLockAddress));
    for (let i = 0; i < t.numRows; i++) expect(addresses.has(t.get(i)!.spinLockAddress as bigint)).toBe(true);
    expect(readdirSync(out).sort()).toEqual(['.manifests', 'cswitch', 'spinlock', 'traces']);
  });

  test('the same trace twice in one run (a copy of the same name): converted once, the copy skipped', () => {
    mkdirSync(join(dir, 'copies'), { recursive: true });
    const copy = join(dir, 'copies', 'a.etl');
    writeFileSync(copy, readFileSync(a));
    const out = join(dir, 'ds-dup');
    const r = cli(['convert', a, copy, '--to', 'csv', '--out', out, '--threads', '2', '--tables', 'cswitch,traces', '--no-progress']);
    expect(r.status).toBe(0);
    expect(r.stderr).toMatch(/copies\/a\.etl: skipped \(the same trace as .*a\.etl: trace=a-[0-9a-f]{8}\)/);
    expect(r.stderr).toMatch(/1 converted, 1 skipped/);
    expect(readdirSync(join(out, 'traces'))).toHaveLength(1);
  });

  test('usage errors exit 2', () => {
    expect(cli(['convert', a, '--to', 'xml', '--out', dir]).status).toBe(2);
    expect(cli(['convert', a, '--to', 'csv']).status).toBe(2);
    expect(cli(['convert', a, '--to', 'csv', '--out', dir, '--tables', 'nope']).status).toBe(2);
  });
});
