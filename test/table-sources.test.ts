// decodedTablesFor (src/tables/sources.ts): what a command writing or analysing some tables decodes. For every
// table, a streamed decode of only the decoded tables it names gives that table exactly as a decode of every
// table does — the decoded tables' rows, the lifetimes' tables, and cpuUsage and threadStates derived from
// the streamed chunks — and it decodes fewer tables than all.
import { describe, expect, test } from 'vitest';
import { CpuUsageDeriver, decodeStream, ThreadStatesDeriver, type DecodedTables, type Table } from '../src/node.js';
import { decodedTablesFor } from '../src/tables/sources.js';
import { DECODED_TABLE_NAMES, TABLE_NAMES, type DecodedTableName, type TableName } from '../src/tables/schema.js';
import { simulateSchedule, writeTrace } from '../src/writer/index.js';

const bytes = writeTrace(
  simulateSchedule({ seed: 11, cpus: 4, duration: 400_000, profileInterval: 2_000, stacks: true, images: true, switchMode: 'mixed' }).description,
).bytes;

/** every table of a streamed one-thread decode of `tables` (undefined: all), derived ones included, as rows */
async function decode(tables: DecodedTableName[] | undefined): Promise<Record<string, unknown[]>> {
  const out: Record<string, unknown[]> = Object.fromEntries(TABLE_NAMES.map((t) => [t, []]));
  const push = (t: string) => (rows: Table) => {
    for (const row of rows) out[t]!.push(row);
  };
  const usage = new CpuUsageDeriver(push('cpuUsage'));
  const states = new ThreadStatesDeriver(push('threadStates'), { cpus: 4 });
  const res = await decodeStream(bytes, {
    windowBytes: 64 << 10,
    ...(tables ? { tables } : {}),
    onRows: (r: DecodedTables) => {
      for (const t of DECODED_TABLE_NAMES) push(t)(r[t]);
      usage.add(r.cswitch, r.readythread, r.threadEvents);
      states.add(r.cswitch, r.readythread, r.threadEvents);
    },
  });
  usage.finish();
  states.finish();
  for (const t of ['threads', 'processes', 'images', 'traces'] as const) push(t)(res[t]);
  return out;
}

describe('decodedTablesFor', () => {
  test('each table from what it names alone, as from a decode of every table', async () => {
    const all = await decode(undefined);
    for (const t of ['cswitch', 'readythread', 'threadEvents', 'processEvents', 'imageEvents', 'samples', 'threads', 'processes', 'images', 'cpuUsage', 'threadStates'] as const) {
      expect(all[t]!.length, t).toBeGreaterThan(0);
    }
    // stacks and stackFrames come from a stack pass with a decode of its own (nothing of the main decode)
    for (const t of TABLE_NAMES.filter((t) => t !== 'stacks' && t !== 'stackFrames')) {
      const only = decodedTablesFor([t]);
      const some = await decode(only);
      expect(some[t], t).toEqual(all[t]);
      if (t !== 'traces') expect(only!.length, t).toBeLessThan(DECODED_TABLE_NAMES.length);
    }
  });

  test('the decoded tables of a list: the union, in id order; every table or the traces row: all', () => {
    expect(decodedTablesFor(['cpuUsage'])).toEqual(['cswitch', 'readythread', 'threadEvents']);
    expect(decodedTablesFor(['spinlock'])).toEqual(['spinlock']);
    expect(decodedTablesFor(['threads', 'cswitch', 'processes'])).toEqual(['cswitch', 'threadEvents', 'processEvents']);
    expect(decodedTablesFor(['stacks', 'stackFrames'])).toEqual([]);
    expect(decodedTablesFor(['cswitch', 'traces'])).toBeUndefined();
    expect(decodedTablesFor(DECODED_TABLE_NAMES)).toBeUndefined();
    expect(decodedTablesFor(TABLE_NAMES as TableName[])).toBeUndefined();
  });
});
