// A part-writing worker (part-writers.ts): writes the part files it is sent — one table's rows, put in
// (cpu, time) order here (sort.ts), in the dataset's format — while the converting thread decodes and
// derives the next ones; replies with the
// file's size or the failure, and (when asked) the part's numeric columns, their buffers handed back for
// the converting thread to reuse.
import { parentPort } from 'node:worker_threads';
import { EtlError } from '../errors.js';
import { Table } from '../tables/table.js';
import { createClock, clockUnavailable } from '../time.js';
import { datasetWriter, type DatasetWriter } from './formats.js';
import type { PartDone, PartJob } from './part-writers.js';
import { chunkOf } from '../tables/chunk-message.js';
import { CpuTimeSorter } from './sort.js';

const port = parentPort!;
const sorter = new CpuTimeSorter();
const writers = new Map<string, Promise<DatasetWriter>>();

port.on('message', async (job: PartJob) => {
  try {
    const key = `${job.format}/${job.partRows}`;
    let writer = writers.get(key);
    if (!writer) writers.set(key, (writer = datasetWriter(job.format, job.partRows)));
    const clock = job.info && clockUnavailable(job.info) === null ? createClock(job.info) : null;
    const part = await (await writer).openPart(job.path, job.table, { clock, names: job.names });
    const chunk = chunkOf(job.chunk); // this thread's own arrays (handed over or cloned)
    sorter.sortInPlace(job.table, chunk.columns, chunk.length);
    let bytes: number;
    try {
      await part.write(new Table(job.table, chunk));
    } finally {
      bytes = await part.close();
    }
    if (!job.giveBack) port.postMessage({ id: job.id, bytes } satisfies PartDone);
    else {
      // written and closed: nothing here reads the columns any more
      const transfer: ArrayBuffer[] = [];
      const columns = chunk.columns.map((c) => {
        if (Array.isArray(c)) return null;
        if (c.buffer instanceof ArrayBuffer && !transfer.includes(c.buffer)) transfer.push(c.buffer);
        return c;
      });
      port.postMessage({ id: job.id, bytes, columns } satisfies PartDone, transfer);
    }
  } catch (e) {
    const err = e as NodeJS.ErrnoException;
    port.postMessage({ id: job.id, error: err?.message ?? String(e), code: e instanceof EtlError ? e.code : err?.code } satisfies PartDone);
  }
});
