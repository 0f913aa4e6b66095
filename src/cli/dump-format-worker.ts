// A formatting worker of `dump` (dump-format.ts): formats the chunks it is sent as CSV or JSON lines
// (output/text.ts, the same TextTableWriter as in one thread) and sends each chunk's bytes back, handed over,
// with the chunk's numeric columns when the caller gave them (for it to reuse).
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
    const chunk = chunkOf(job.chunk);
    writer.write(new Table(setup.table, chunk));
    writer.end();
    const bytes = parts;
    parts = [];
    const transfer = bytes.map((b) => b.buffer as ArrayBuffer);
    // the numeric columns back to the caller, who gave them (text columns: its own arrays)
    const columns = job.giveBack ? chunk.columns.map((c) => (ArrayBuffer.isView(c) ? c : null)) : undefined;
    for (const c of columns ?? []) if (c && !transfer.includes(c.buffer as ArrayBuffer)) transfer.push(c.buffer as ArrayBuffer);
    port.postMessage({ id: job.id, bytes, columns } satisfies FormatDone, transfer);
  } catch (e) {
    port.postMessage({ id: job.id, error: (e as Error)?.message ?? String(e) } satisfies FormatDone);
  }
});
