// `dump --table events` as CSV quotes its cells with the one CSV escaping of src/output/escape.ts: a cell
// holding a carriage return is quoted like one holding a line feed, a comma or a quote (RFC 4180). No
// decoded kind carries such text, so the decode result is given one: the CLI runs in-process on a written
// trace with streamFile wrapped to add a kind row.
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, test, vi } from 'vitest';
import { main } from '../src/cli/main.js';
import type { KindRow } from '../src/result/event-kinds.js';
import { generateMixedTrace } from '../src/writer/index.js';

const ODD: KindRow = { headerType: 'EVENT_HEADER64', name: 'carriage\rreturn', provider: 'comma, "quote"', eventId: 7, version: 0, count: 1, bytes: 80 };

vi.mock('../src/decode/files.js', async (importOriginal) => {
  const files = await importOriginal<typeof import('../src/decode/files.js')>();
  return {
    ...files,
    streamFile: async (...args: Parameters<typeof files.streamFile>) => {
      const r = await files.streamFile(...args);
      r.summary.eventsByKind.push(ODD);
      return r;
    },
  };
});

test('dump --table events: a cell with \\r is quoted in the CSV', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'etw-events-csv-'));
  const trace = join(dir, 'mixed.etl');
  writeFileSync(trace, generateMixedTrace({ seed: 3, targetBytes: 50_000, cpus: 2, bufferSize: 0x4000 }).bytes);
  const out = join(dir, 'events.csv');
  expect(await main(['dump', trace, '--table', 'events', '--no-progress', '-o', out])).toBe(0);
  const lines = readFileSync(out, 'utf8').split('\n');
  expect(lines[0]).toBe('headerType,hookId,name,provider,eventId,eventType,messageNumber,opcode,task,extended,version,count,bytes');
  expect(lines.length).toBeGreaterThan(3);
  expect(lines.at(-2)).toBe('EVENT_HEADER64,,"carriage\rreturn","comma, ""quote""",7,,,,,,0,1,80');
});
