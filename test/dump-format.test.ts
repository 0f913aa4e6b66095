// dump's formatting workers (src/cli/dump-format.ts): the text of a table formatted by worker threads, a chunk
// each, is the bytes of the one-thread TextTableWriter — CSV and JSON lines, names and converted times, chunks
// borrowed and reused after the call, more chunks than may be in flight; and when workers are used at all. Runs
// the built package (dist/, `npm run build`): the worker is the compiled script.
import { describe, expect, test } from 'vitest';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { decodeSync, readTraceInfo, Table, type TableName } from '../src/node.js';
import type { ColumnChunk } from '../src/tables/schema.js';
import { createClock } from '../src/time.js';
import { concatBytes } from '../src/output/bytes.js';
import { simulateSchedule, writeTrace } from '../src/writer/index.js';

const dist = (await import(new URL('../dist/cli/dump-format.js', import.meta.url).href)) as typeof import('../src/cli/dump-format.js');

const bytes = writeTrace(simulateSchedule({ seed: 3, cpus: 4, duration: 300_000, profileInterval: 2_000, switchMode: 'mixed' }).description).bytes;
const r = decodeSync(bytes);
const info = r.info;

/** the table in chunks of `size` rows, each chunk a copy whose columns are zeroed once the formatter returns (as a reused buffer would be) */
async function format(t: Table, workers: number, options: { format: 'csv' | 'jsonl'; names?: boolean; time?: 'raw' | 'ns' | 'iso' }, size: number): Promise<Uint8Array> {
  const out: Uint8Array[] = [];
  const clock = options.time && options.time !== 'raw' ? createClock(info!) : null;
  const f = dist.chunkFormatter({ table: t.name as TableName, format: options, clock, info, bufferBytes: 4096 }, async (b) => void out.push(b.slice()), workers);
  await f.writeHeader();
  for (let at = 0; at < t.length; at += size) {
    const end = Math.min(t.length, at + size);
    const chunk = new Table(t.name, { length: end - at, columns: t.columns.map((c) => c.slice(at, end)) as ColumnChunk['columns'] });
    await f.write(chunk);
    for (const c of chunk.columns) if (!Array.isArray(c)) new Uint8Array(c.buffer, c.byteOffset, c.byteLength).fill(0);
  }
  await f.end();
  return concatBytes(out);
}

describe('dump formatting workers', () => {
  test.each([
    ['cswitch', { format: 'csv' }],
    ['cswitch', { format: 'jsonl', names: true, time: 'ns' }],
    ['readythread', { format: 'csv', time: 'iso' }],
    ['samples', { format: 'csv', names: true }],
    ['threadEvents', { format: 'jsonl' }],
  ] as const)('%s %j: the same bytes as one thread', async (name, options) => {
    const t = r[name] as Table;
    expect(t.length).toBeGreaterThan(50);
    const one = await format(t, 0, options, 97);
    expect(one.length).toBeGreaterThan(1000);
    for (const workers of [1, 3]) expect(Buffer.from(await format(t, workers, options, 37)).equals(Buffer.from(one)), `${workers} workers`).toBe(true);
  });

  test.each([0, 2])('chunks given (%i workers): handed over uncopied, the same bytes, every column given back with its values', async (workers) => {
    const t = r.threadEvents as Table; // numeric and text columns
    const one = await format(t, 0, { format: 'jsonl' }, 97);
    const out: Uint8Array[] = [];
    const f = dist.chunkFormatter({ table: t.name as TableName, format: { format: 'jsonl' }, clock: null, info, bufferBytes: 4096 }, async (b) => void out.push(b.slice()), workers);
    await f.writeHeader();
    const back: { sent: ColumnChunk['columns']; given: ColumnChunk['columns'] }[] = [];
    let sent = 0;
    for (let at = 0; at < t.length; at += 17) {
      const end = Math.min(t.length, at + 17);
      const columns = t.columns.map((c) => c.slice(at, end)) as ColumnChunk['columns'];
      const copy = columns.map((c) => c.slice()) as ColumnChunk['columns'];
      const entry = { sent: copy, given: [] as ColumnChunk['columns'] };
      back.push(entry);
      await f.write(new Table(t.name, { length: end - at, columns }), (given) => void (entry.given = given));
      sent++;
      // with workers the numeric columns went over uncopied: detached here
      if (workers > 0) expect(columns.filter((c) => !Array.isArray(c)).every((c) => (c as Uint8Array).byteLength === 0)).toBe(true);
    }
    await f.end();
    expect(Buffer.from(concatBytes(out)).equals(Buffer.from(one))).toBe(true);
    expect(sent).toBeGreaterThan(2);
    for (const { sent, given } of back) {
      expect(given.length).toBe(sent.length);
      given.forEach((c, i) => expect(Array.from(c as ArrayLike<unknown>)).toEqual(Array.from(sent[i] as ArrayLike<unknown>)));
    }
  });

  test('workers only for inputs of 16 MiB and more, and never with --threads 1', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'etw-dumpfmt-'));
    const small = join(dir, 'small.etl');
    writeFileSync(small, bytes);
    const big = join(dir, 'big.etl');
    writeFileSync(big, new Uint8Array(dist.FORMAT_WORKERS_MIN_BYTES));
    expect(dist.formatWorkersFor(small, 4)).toBe(0);
    expect(dist.formatWorkersFor(big, 1)).toBe(0);
    expect(dist.formatWorkersFor(big, 2)).toBe(1);
    expect(dist.formatWorkersFor(big, 8)).toBe(3);
    expect(dist.formatWorkersFor(join(dir, 'missing.etl'), 4)).toBe(0);
    expect(await readTraceInfo(small)).not.toBeNull();
  });
});
