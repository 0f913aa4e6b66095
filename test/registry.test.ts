// The registry (schema/tables.mjs), the stats table (schema/stats.mjs) and the shared layout facts:
// declared once, generated for both engines, and every layer follows them.
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, test } from 'vitest';
import * as L from '../src/generated/layout.js';
import { ENGINE_COLUMN_GAP, TABLES } from '../src/generated/registry.js';
import { COUNTERS, cpuUsage, DECODED_TABLE_NAMES, decodeSync, TABLE_COLUMNS, TABLE_NAMES, type Table } from '../src/node.js';

const c0 = <T>(cols: readonly T[]): T => cols[0]!;
import { generateMixedTrace } from '../src/writer/index.js';

const root = fileURLToPath(new URL('..', import.meta.url));

describe('MaximumWaitReason by build (docs/format.md §C.7)', () => {
  test('39 for 1507-1703, 40 from 1709 through 22H2', () => {
    const expected: [number, number][] = [
      [10240, 39], [10586, 39], [14393, 39], [15063, 39], [16299, 40], [17134, 40], [17763, 40], [18362, 40], [18363, 40],
      [19041, 40], [19045, 40], [20348, 40], [22000, 42], [22631, 42], [26100, 43],
    ];
    for (const [build, bias] of expected) expect([build, L.maxWaitReasonForBuild(build)]).toEqual([build, bias]);
  });
  test('1703 and 1709 (and every build between confirmed builds) are certain; 8.1, 21H2 and 24H2 are not', () => {
    for (const b of [10240, 14393, 15063, 16299, 17763, 18363, 19041, 19045, 22621, 22631]) expect([b, L.maxWaitReasonCertain(b)]).toEqual([b, true]);
    for (const b of [7601, 9600, 20348, 22000, 26100]) expect([b, L.maxWaitReasonCertain(b)]).toEqual([b, false]);
  });
});

describe('table registry', () => {
  test('every table: column ids in order, the valid mask last when a column is nullable, widths from the types', () => {
    expect(TABLE_NAMES).toEqual(Object.keys(TABLES));
    for (const name of TABLE_NAMES) {
      const cols = TABLE_COLUMNS[name];
      cols.forEach((c, i) => expect(c.id).toBe(i));
      if (cols.some((c) => c.nullable)) expect(cols[cols.length - 1]).toMatchObject({ name: 'valid', type: 'u32', nullable: false });
      const width = { i64: 8, u64: 8, f64: 8, u32: 4, i32: 4, u16: 2, u8: 1, i8: 1, str: 4 }[c0(cols).type];
      expect(width).toBeGreaterThan(0);
    }
    // decoded tables first, with engine widths; derived tables have no engine columns
    expect(DECODED_TABLE_NAMES).toEqual(TABLE_NAMES.filter((t) => !TABLES[t].derived));
    expect(TABLE_NAMES.slice(0, DECODED_TABLE_NAMES.length)).toEqual(DECODED_TABLE_NAMES);
    expect(L.TABLE_COUNT).toBe(DECODED_TABLE_NAMES.length);
    for (const name of DECODED_TABLE_NAMES) {
      for (const c of TABLE_COLUMNS[name]) {
        expect(L.columnWidth(TABLES[name].id, c.id)).toBe({ i64: 8, u64: 8, f64: 8, u32: 4, i32: 4, u16: 2, u8: 1, i8: 1, str: 4 }[c.type]);
      }
    }
  });
  test('the gap after each engine column takes what the compact batch fill writes past the last row', () => {
    // assembly/compcs.ts fastBatch writes the cpu, version and fileOffset columns 8 rows at a time: up to 7
    // rows (56 bytes of f64) past the batch's last row, which may be the arena's last
    expect(ENGINE_COLUMN_GAP).toBeGreaterThanOrEqual(7 * 8);
  });
  test('always-valid masks are the non-nullable columns', () => {
    const mask = (name: 'cswitch') => TABLE_COLUMNS[name].reduce((m, c) => (c.nullable ? m : m | (1 << c.id)), 0) >>> 0;
    expect(L.CS_ALWAYS_VALID).toBe(mask('cswitch'));
  });
  test('a decode returns one table per registry entry, and the summary counts each', () => {
    const r = decodeSync(generateMixedTrace({ seed: 3, targetBytes: 200_000, cpus: 2, bufferSize: 0x4000 }).bytes);
    for (const name of TABLE_NAMES) {
      const t: Table = name === 'cpuUsage' ? cpuUsage(r) : r[name];
      expect(t.name).toBe(name);
      expect(t.columnNames).toEqual(TABLE_COLUMNS[name].map((c) => c.name));
      expect(r.summary[name]).toBe(t.length);
    }
    expect(r.cswitch.length).toBeGreaterThan(0);
    expect(r.spinlock.length).toBeGreaterThan(0);
    // the row count of cswitch is what the counters say it is
    const d = r.summary.diagnostics;
    expect(r.summary.cswitch).toBe(
      d['cswitchDecoded']! + d['compactPacketsIdleShort']! + d['compactPacketsIdle']! + d['compactPacketsLite']! + d['compactPacketsFull']!,
    );
  });
  test('the CLI offers every table', () => {
    const help = execFileSync(process.execPath, [root + 'bin/etw-decode.js', 'dump', '--help'], { encoding: 'utf8' });
    for (const name of TABLE_NAMES) expect(help).toContain(`"${name}"`);
  });
});

describe('stats table', () => {
  test('counter ids, names and severities come from the one declaration', () => {
    expect(COUNTERS.map((c) => c.id)).toEqual(COUNTERS.map((_, i) => i));
    expect(new Set(COUNTERS.map((c) => c.name)).size).toBe(COUNTERS.length);
    expect(COUNTERS.length).toBe(L.D_COUNTER_COUNT);
    expect(COUNTERS[L.D_BUFFERS_CORRUPT]!.name).toBe('buffersCorrupt');
    expect(COUNTERS[L.D_BUFFERS_TRUNCATED_WALK]!.details).toContainEqual([L.D_EVENTS_BAD_SIZE, 'event Size is invalid']);
  });
  test('docs/stats.md is generated from it and up to date', () => {
    execFileSync(process.execPath, [root + 'scripts/gen.mjs', '--check']);
    const doc = readFileSync(root + 'docs/stats.md', 'utf8');
    for (const c of COUNTERS) expect(doc).toContain('`' + c.name + '`');
  });
});
