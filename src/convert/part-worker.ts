// A part-writing worker (part-writers.ts): writes the part files it is sent — one table's rows in the
// dataset's format — while the converting thread decodes and derives the next ones; replies with the
// file's size or the failure.
import { parentPort } from 'node:worker_threads';
import { EtlError } from '../errors.js';
import { Table } from '../tables/table.js';
import { createClock, clockUnavailable } from '../time.js';
import { datasetWriter, type DatasetWriter } from './formats.js';
import type { PartDone, PartJob } from './part-writers.js';

const port = parentPort!;
const writers = new Map<string, Promise<DatasetWriter>>();

port.on('message', async (job: PartJob) => {
  try {
    const key = `${job.format}/${job.partRows}`;
    let writer = writers.get(key);
    if (!writer) writers.set(key, (writer = datasetWriter(job.format, job.partRows)));
    const clock = job.info && clockUnavailable(job.info) === null ? createClock(job.info) : null;
    const part = await (await writer).openPart(job.path, job.table, { clock, names: job.names });
    let bytes: number;
    try {
      await part.write(new Table(job.table, job.chunk));
    } finally {
      bytes = await part.close();
    }
    port.postMessage({ id: job.id, bytes } satisfies PartDone);
  } catch (e) {
    const err = e as NodeJS.ErrnoException;
    port.postMessage({ id: job.id, error: err?.message ?? String(e), code: e instanceof EtlError ? e.code : err?.code } satisfies PartDone);
  }
});
