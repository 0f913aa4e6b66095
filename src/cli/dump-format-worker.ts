// A formatting worker of `dump` (dump-format.ts): formats the chunks it is sent as CSV or JSON lines
// (output/text.ts, the same TextTableWriter as in one thread) and sends each chunk's bytes back, handed over.
import { parentPort, workerData } from 'node:worker_threads';
import { TextTableWriter } from '../output/text.js';
import { Table } from '../tables/table.js';
import { chunkOf } from '../tables/chunk-message.js';
import { createClock } from '../time.js';
import type { FormatDone, FormatJob, FormatSetup } from './dump-format.js';

const port = parentPort!;
const setup = workerData as FormatSetup;
const fmt = { ...setup.format, clock: setup.info ? createClock(setup.info) : null };
let parts: Uint8Array[] = [];
const writer = new TextTableWriter(setup.table, fmt, (bytes) => void parts.push(bytes), setup.bufferBytes);

port.on('message', (job: FormatJob) => {
  try {
    writer.write(new Table(setup.table, chunkOf(job.chunk)));
    writer.end();
    const bytes = parts;
    parts = [];
    port.postMessage({ id: job.id, bytes } satisfies FormatDone, bytes.map((b) => b.buffer as ArrayBuffer));
  } catch (e) {
    port.postMessage({ id: job.id, error: (e as Error)?.message ?? String(e) } satisfies FormatDone);
  }
});
