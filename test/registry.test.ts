// The registry (schema/tables.mjs), the stats table (schema/stats.mjs) and the shared layout facts:
// declared once, generated for both engines, and every layer follows them.
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, test } from 'vitest';
import * as L from '../src/generated/layout.js';
import { ENGINE_COLUMN_GAP, HOOK_NAMES, TABLES } from '../src/generated/registry.js';
import { HOOK_DECODERS } from '../src/generated/reference-dispatch.js';
import { COUNTERS, cpuUsage, DECODED_TABLE_NAMES, decodeSync, isWholeTraceTable, TABLE_COLUMNS, TABLE_NAMES, threadStates, wholeTraceTable, type Table } from '../src/node.js';

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
      const t: Table = name === 'cpuUsage' ? cpuUsage(r) : isWholeTraceTable(name) ? wholeTraceTable(r, name) : r[name];
      expect(t.name).toBe(name);
      expect(t.columnNames).toEqual(TABLE_COLUMNS[name].map((c) => c.name));
      // threadStates, stacks and stackFrames are derived after a decode: the summary does not count them
      if (isWholeTraceTable(name)) expect(name in r.summary).toBe(false);
      else expect(r.summary[name]).toBe(t.length);
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

describe('HookIds and their decoders', () => {
  const layout = L as unknown as Record<string, number>;
  test('every decoded table declares the HookIds it takes; the generated routing sends each to its decoder, every other HookId nowhere', () => {
    const expected = new Map<number, number>([
      [L.HOOK_HEADER, L.DEC_HEADER],
      [L.HOOK_HEADER_EXTENSION, L.DEC_HEADER_EXTENSION],
    ]);
    for (const name of DECODED_TABLE_NAMES) {
      // a child table (stackEventFrames) takes no HookId: its rows come from the decoder of the table it names
      const parent = TABLES[name].rowsOf;
      if (parent !== null) {
        expect([name, TABLES[name].hooks]).toEqual([name, []]);
        expect(TABLES[parent].hooks.length, parent).toBeGreaterThan(0);
        continue;
      }
      const hooks = TABLES[name].hooks;
      expect(hooks.length, name).toBeGreaterThan(0);
      for (const h of hooks) {
        expect(layout[`HOOK_${h.name}`], h.name).toBe(h.hookId);
        expect(expected.has(h.hookId), `${h.name} routed twice`).toBe(false);
        expect(layout[`DEC_${h.decoder.toUpperCase()}`], h.decoder).toBeGreaterThan(L.DEC_HEADER_EXTENSION);
        expect(HOOK_NAMES[h.hookId], h.name).toBeTruthy();
        expected.set(h.hookId, layout[`DEC_${h.decoder.toUpperCase()}`]!);
      }
    }
    for (const name of TABLE_NAMES.filter((t) => TABLES[t].derived)) expect(TABLES[name].hooks, name).toEqual([]);
    expect(HOOK_DECODERS.length).toBe(0x10000);
    const routes = (table: ArrayLike<number>) => Array.from(table, (d, hookId) => [hookId, d]).filter(([, d]) => d !== L.DEC_NONE);
    expect(routes(HOOK_DECODERS)).toEqual([...expected].sort((a, b) => a[0] - b[0]));
  });
  test('the routes of today\'s tables (schema/tables.mjs)', () => {
    const decoderOf = (hookId: number): number => HOOK_DECODERS[hookId]!;
    expect(decoderOf(0x0524)).toBe(L.DEC_CSWITCH);
    expect(decoderOf(0x0525)).toBe(L.DEC_COMPCS);
    expect(decoderOf(0x0529)).toBe(L.DEC_SPINLOCK);
    expect(decoderOf(0x0532)).toBe(L.DEC_READYTHREAD);
    for (const id of [0x0501, 0x0502, 0x0503, 0x0504, 0x0548]) expect(decoderOf(id)).toBe(L.DEC_THREAD);
    for (const id of [0x0301, 0x0302, 0x0303, 0x0304, 0x0327]) expect(decoderOf(id)).toBe(L.DEC_PROCESS);
    expect(decoderOf(0x0000)).toBe(L.DEC_HEADER);
    expect(decoderOf(0x0005)).toBe(L.DEC_HEADER_EXTENSION);
    expect(decoderOf(0x0020)).toBe(L.DEC_NONE); // WMI_LOG_TYPE_GROUP_MASKS_END: named, not decoded
    expect(HOOK_NAMES[0x0020]).toBe('WMI_LOG_TYPE_GROUP_MASKS_END');
    expect(HOOK_NAMES[0x0548]).toBe('Thread/SetName');
  });
  test('scripts/gen.mjs refuses a registry it could not follow', async () => {
    const gen = (await import(root + 'scripts/gen.mjs')) as { checkDeclarations(tables?: unknown[], traceHooks?: unknown[]): void };
    const schema = (await import(root + 'schema/tables.mjs')) as { TABLES: Record<string, unknown>[]; TRACE_HOOKS: unknown[][] };
    const tables = (): { name: string; decoders?: { fn: string; file: string; hooks: [string, number, string][] }[] }[] => structuredClone(schema.TABLES) as never;
    expect(() => gen.checkDeclarations()).not.toThrow();
    // a HookId declared twice
    const twice = tables();
    twice[1]!.decoders![0]!.hooks.push(['CSWITCH_AGAIN', 0x0524, 'again']);
    expect(() => gen.checkDeclarations(twice)).toThrow(/HookId 0x0524 declared twice/);
    // a decoder function its twins do not export
    const missing = tables();
    missing[0]!.decoders![0]!.fn = 'noSuchDecoder';
    expect(() => gen.checkDeclarations(missing)).toThrow(/must export function noSuchDecoder/);
    // a decoded table without decoders
    const none = tables();
    delete none[2]!.decoders;
    expect(() => gen.checkDeclarations(none)).toThrow(/names its decoders/);
    // a walk HookId that a table also takes
    expect(() => gen.checkDeclarations(tables(), [...schema.TRACE_HOOKS, ['CS', 0x0524, 'x', 'walk']])).toThrow(/declared twice/);
  });
});

describe('CONTRIBUTING.md, "Adding a decoded table"', () => {
  test('names files that exist, and the dispatch arguments gen.mjs knows', async () => {
    const text = readFileSync(root + 'CONTRIBUTING.md', 'utf8');
    const section = text.slice(text.indexOf('## Adding a decoded table'));
    const body = section.slice(0, section.indexOf('\n## ', 3) >>> 0);
    const paths = [...body.matchAll(/`((?:assembly|schema|src|test|docs|scripts)\/[\w./-]*|[A-Z]+\.md)`/g)].map((m) => m[1]!);
    expect(paths.length).toBeGreaterThan(10);
    for (const p of paths.filter((p) => !p.includes('diskio'))) expect(existsSync(root + p), p).toBe(true);
    const gen = (await import(root + 'scripts/gen.mjs')) as { DISPATCH_ARGS: readonly string[] };
    expect(body).toContain('`' + gen.DISPATCH_ARGS.join(' ') + '`');
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
