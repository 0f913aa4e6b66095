// Engine.keepTables (a decode of a few tables: the first pass of src/derive/stack-pass.ts): both engines decode
// only the kept tables' events — the same rows as a whole decode for those, none for the
// others, whose events are still walked and tallied by kind — and a pooled engine decodes every table again.
import { describe, expect, test } from 'vitest';
import { decodeStream, decodeSync, type DecodedTables } from '../src/node.js';
import { DECODED_TABLE_NAMES, type DecodedTableName } from '../src/tables/schema.js';
import { simulateSchedule, writeTrace } from '../src/writer/index.js';

const bytes = writeTrace(
  simulateSchedule({ seed: 5, cpus: 4, duration: 400_000, profileInterval: 2_000, stacks: true, images: true, switchMode: 'mixed' }).description,
).bytes;
const KEPT: DecodedTableName[] = ['stackEvents', 'stackEventFrames'];
const DECODED: DecodedTableName[] = KEPT;

/** rows per table and the kinds of a one-thread streamed decode keeping `tables` */
async function kept(engine: 'wasm' | 'reference', tables?: DecodedTableName[]) {
  const rows = Object.fromEntries(DECODED_TABLE_NAMES.map((t) => [t, [] as unknown[]])) as Record<DecodedTableName, unknown[]>;
  const res = await decodeStream(bytes, {
    engine,
    windowBytes: 64 << 10,
    ...(tables ? { tables } : {}),
    onRows: (r: DecodedTables) => {
      for (const t of DECODED_TABLE_NAMES) for (const row of r[t]) rows[t].push(row);
    },
  });
  return { rows, summary: res.summary };
}

describe('keepTables', () => {
  const whole = decodeSync(bytes);

  test.each(['wasm', 'reference'] as const)('%s: the kept tables as a whole decode, no other rows, every event walked', async (engine) => {
    const all = await kept(engine);
    const some = await kept(engine, KEPT);
    for (const t of DECODED_TABLE_NAMES) {
      if (DECODED.includes(t)) expect(some.rows[t], t).toEqual(all.rows[t]);
      else {
        expect(some.rows[t].length, t).toBe(0);
        expect(some.summary[t], t).toBe(0);
      }
    }
    for (const t of ['cswitch', 'readythread', 'samples', 'stackEvents', 'threadEvents', 'imageEvents'] as const) expect(all.rows[t].length, t).toBeGreaterThan(0);
    expect(some.rows.stackEvents.length).toBe(whole.stackEvents.length);
    expect(some.summary.events).toBe(all.summary.events);
    // every kind is still tallied, with the same counts
    expect(some.summary.eventsByKind).toEqual(all.summary.eventsByKind);
  });

  test('the two engines agree on a decode of a few tables, rows and summary', async () => {
    const w = await kept('wasm', KEPT);
    const r = await kept('reference', KEPT);
    expect(w.rows).toEqual(r.rows);
    expect({ ...w.summary, engine: null }).toEqual({ ...r.summary, engine: null });
  });

  test('a table that is not decoded (derived, unknown) is refused with one clear error', async () => {
    for (const t of ['threads', 'nope'])
      await expect(decodeStream(bytes, { tables: [t as DecodedTableName], onRows: () => {} })).rejects.toMatchObject({ code: 'BAD_OPTION', message: expect.stringContaining(`'${t}' is not a decoded table`) });
  });

  test('a pooled engine used for a few tables decodes every table next time', async () => {
    await kept('wasm', KEPT);
    const again = decodeSync(bytes);
    for (const t of DECODED_TABLE_NAMES) expect(again[t].length, t).toBe(whole[t].length);
    expect(again.cswitch.length).toBeGreaterThan(0);
  });
});
