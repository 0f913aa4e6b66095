// The writers' byte sink (src/output/sink.ts): Node's own writers are sinks as they are — a stream's
// `write` (returns a boolean) and a FileHandle's `write` (returns a promise of the bytes written) — for the
// text, Arrow, Parquet and Perfetto writers alike (this file does not compile where one of them rejects
// them), and a returned promise is awaited before the writer goes on.
import { describe, expect, test } from 'vitest';
import { createWriteStream, mkdtempSync, readFileSync } from 'node:fs';
import { open } from 'node:fs/promises';
import { once } from 'node:events';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ArrowIpcWriter, decodeSync, ParquetTableWriter, PerfettoWriter, TextTableWriter, toCsv, type ByteSink, type TextSink } from '../src/node.js';
import { sinkWait } from '../src/output/sink.js';

const trace = decodeSync(readFileSync(new URL('../samples/sample.etl', import.meta.url)));
const dir = mkdtempSync(join(tmpdir(), 'etw-sink-'));

describe('byte sinks', () => {
  test("a stream's write (a boolean) is a sink: the CSV arrives whole", async () => {
    const path = join(dir, 'stream.csv');
    const out = createWriteStream(path);
    const sink: TextSink = (b) => out.write(b);
    const w = new TextTableWriter('cswitch', { format: 'csv' }, sink, 4096);
    expect(w.writeHeader()).toBeUndefined(); // a sink that returns no promise keeps every call synchronous
    expect(w.write(trace.cswitch)).toBeUndefined();
    expect(w.end()).toBeUndefined();
    out.end();
    await once(out, 'close');
    expect(new Uint8Array(readFileSync(path))).toEqual(toCsv(trace.cswitch));
  });

  test("a FileHandle's write (a promise of its result) is a sink for every writer, awaited in order", async () => {
    const csv = await open(join(dir, 'fh.csv'), 'w');
    const text = new TextTableWriter('cswitch', { format: 'csv' }, (b) => csv.write(b), 4096);
    await text.writeHeader();
    const pending = text.write(trace.cswitch);
    expect(pending).toBeInstanceOf(Promise);
    await pending;
    await text.end();
    await csv.close();
    expect(new Uint8Array(readFileSync(join(dir, 'fh.csv')))).toEqual(toCsv(trace.cswitch));

    const files = await Promise.all(['a.arrow', 'a.parquet', 'a.perfetto-trace'].map((f) => open(join(dir, f), 'w')));
    const [arrowFile, parquetFile, perfettoFile] = files as [typeof csv, typeof csv, typeof csv];
    const sinks: ByteSink[] = [(b) => arrowFile.write(b), (b) => parquetFile.write(b)];
    const arrow = new ArrowIpcWriter('cswitch', sinks[0]!);
    await arrow.write(trace.cswitch);
    await arrow.close();
    const parquet = await ParquetTableWriter.create('cswitch', sinks[1]!);
    await parquet.write(trace.cswitch);
    const { bytes } = await parquet.close();
    const perfetto = new PerfettoWriter((b) => perfettoFile.write(b), { clock: trace.clock, flushBytes: 1024 });
    await perfetto.cswitch(trace.cswitch);
    await perfetto.close();
    for (const f of files) await f.close();
    expect(readFileSync(join(dir, 'a.parquet')).length).toBe(bytes);
    expect(readFileSync(join(dir, 'a.perfetto-trace')).length).toBe(perfetto.getStats().bytes);
    expect(readFileSync(join(dir, 'a.arrow')).subarray(0, 6).toString()).toBe('ARROW1');
  });

  test('sinkWait: a thenable is waited for, anything else is not', async () => {
    expect(sinkWait(undefined)).toBeUndefined();
    expect(sinkWait(true)).toBeUndefined();
    expect(sinkWait({ bytesWritten: 3 })).toBeUndefined();
    let resolve!: () => void;
    const p = sinkWait({ then: (r: () => void) => (resolve = r) });
    expect(p).toBeInstanceOf(Promise);
    let done = false;
    void p!.then(() => (done = true));
    await Promise.resolve();
    expect(done).toBe(false);
    resolve();
    await p;
    expect(done).toBe(true);
  });
});
