// summary.eventsByKind order: sortKinds (ranks the text fields once) = sorting with compareKinds.
import { describe, expect, test } from 'vitest';
import fc from 'fast-check';
import { compareKinds, guidText, HEADER_TYPE_NAMES, kindRow, kindRows, plainText, sortKinds, type KindRow } from '../src/result/event-kinds.js';
import * as L from '../src/generated/layout.js';
import type { KindTally } from '../src/engine/engine.js';
import { readFileSync } from 'node:fs';
import { decodeSync } from '../src/node.js';

const HEADER_TYPES = [L.HT_SYSTEM32, L.HT_SYSTEM64, L.HT_COMPACT64, L.HT_PERFINFO64, L.HT_FULL_HEADER64, L.HT_INSTANCE32, L.HT_EVENT_HEADER64, L.HT_EVENT_HEADER32, L.HT_MESSAGE, L.HT_ERROR, 0x17, 0xfe];

const tally = fc.record({
  headerType: fc.constantFrom(...HEADER_TYPES),
  flags: fc.integer({ min: 0, max: 1 }),
  version: fc.integer({ min: 0, max: 4 }),
  id: fc.integer({ min: 0, max: 6 }),
  task: fc.integer({ min: 0, max: 3 }),
  opcode: fc.integer({ min: 0, max: 3 }),
  // few providers, some differing only in letter case of no digit (the collator's order is not code-unit order)
  guid: fc.oneof(fc.constantFrom(...[0x00, 0x0a, 0xa0, 0xff, 0x5f].map((b) => new Uint8Array(16).fill(b))), fc.uint8Array({ minLength: 16, maxLength: 16 })),
  count: fc.integer({ min: 1, max: 4 }),
  bytes: fc.integer({ min: 0, max: 1000 }),
}) as fc.Arbitrary<KindTally>;

describe('eventsByKind order', () => {
  test('sortKinds and kindRows give the order of compareKinds (property: many equal counts)', () => {
    fc.assert(
      fc.property(fc.array(tally, { maxLength: 300 }), (tallies) => {
        const rows = tallies.map(kindRow);
        const expected = [...rows].sort(compareKinds);
        expect(sortKinds([...rows])).toEqual(expected);
        expect(kindRows(tallies)).toEqual(expected);
      }),
      { numRuns: 200 },
    );
  });

  test('the order itself: count first, then header type name, HookId, provider', () => {
    const rows: KindRow[] = [
      { headerType: 'SYSTEM64', hookId: 0x524, version: 2, count: 5, bytes: 1 },
      { headerType: 'PERFINFO64', hookId: 0x529, version: 2, count: 5, bytes: 1 },
      { headerType: 'PERFINFO64', hookId: 0x525, version: 2, count: 5, bytes: 1 },
      { headerType: 'EVENT_HEADER64', provider: 'b', eventId: 1, version: 0, count: 7, bytes: 1 },
      { headerType: 'EVENT_HEADER64', provider: 'A', eventId: 1, version: 0, count: 7, bytes: 1 },
    ];
    expect(sortKinds(rows).map((r) => `${r.headerType}/${r.hookId ?? r.provider}`)).toEqual([
      'EVENT_HEADER64/A',
      'EVENT_HEADER64/b',
      'PERFINFO64/1317',
      'PERFINFO64/1321',
      'SYSTEM64/1316',
    ]);
  });

  test('the texts sorted without the collator are in the collator\'s order', () => {
    const collator = new Intl.Collator();
    const byCollator = (texts: string[]) => [...texts].sort(collator.compare);
    const byCodeUnits = (texts: string[]) => [...texts].sort((x, y) => (x < y ? -1 : x > y ? 1 : 0));
    const names = [...Object.values(HEADER_TYPE_NAMES), ...Array.from({ length: 256 }, (_, i) => `TYPE_0x${i.toString(16).toUpperCase().padStart(2, '0')}`), ''];
    expect(names.every(plainText)).toBe(true);
    expect(byCodeUnits(names)).toEqual(byCollator(names));
    fc.assert(
      fc.property(fc.array(fc.uint8Array({ minLength: 16, maxLength: 16 }), { minLength: 2, maxLength: 50 }), (guids) => {
        const texts = [...guids.map(guidText), ''];
        expect(texts.every(plainText)).toBe(true);
        expect(byCodeUnits(texts)).toEqual(byCollator(texts));
      }),
      { numRuns: 300 },
    );
    // texts outside those: the collator ranks them ('_' before letters, unlike code units)
    const odd: KindRow[] = ['A_B', 'AB', 'Ab', 'a_b', 'AA'].map((headerType) => ({ headerType, version: 0, count: 1, bytes: 0 }));
    expect(sortKinds([...odd]).map((r) => r.headerType)).toEqual([...odd].sort(compareKinds).map((r) => r.headerType));
    expect(plainText('ab_c')).toBe(false);
    expect(plainText('0123456789ABCDEF-0000-0000-0000-000000000000')).toBe(false);
  });

  test('guidText: registry format of the GUID bytes (little-endian first three fields)', () => {
    const b = Uint8Array.from([0x67, 0x45, 0x23, 0x01, 0xab, 0x89, 0xef, 0xcd, 0x01, 0x23, 0x45, 0x67, 0x89, 0xab, 0xcd, 0xef]);
    expect(guidText(b)).toBe('01234567-89ab-cdef-0123-456789abcdef');
  });

  test('summary.eventsByKind: made on first read, an ordinary enumerable field in its place', () => {
    const r = decodeSync(new Uint8Array(readFileSync(new URL('../samples/sample.etl', import.meta.url))));
    const keys = Object.keys(r.summary);
    expect(keys.indexOf('eventsByKind')).toBe(keys.indexOf('events') + 1);
    const rows = r.summary.eventsByKind;
    expect(rows.length).toBeGreaterThan(5);
    expect(r.summary.eventsByKind).toBe(rows); // made once
    expect(rows).toEqual([...rows].sort(compareKinds));
    expect(JSON.parse(JSON.stringify({ ...r.summary, trace: null })).eventsByKind).toEqual(JSON.parse(JSON.stringify(rows)));
    expect({ ...r.summary }.eventsByKind).toBe(rows);
  });
});
