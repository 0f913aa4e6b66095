// The file formats of a converted dataset: how one part file of one table is written. Every format adds
// the nanoseconds since the trace's anchor next to each raw time column (`timestamp` → `timeNs`) when
// the trace's clock converts, and `<column>Name` text columns for enumerations with `names`.
import { open, type FileHandle } from 'node:fs/promises';
import { TextTableWriter } from '../output/text.js';
import type { TableName } from '../tables/schema.js';
import type { Table } from '../tables/table.js';
import type { Clock } from '../time.js';

import type { DatasetFormat } from './format-names.js';
export { CONVERT_FORMATS, type ConvertFormat, type DatasetFormat } from './format-names.js';

export interface FormatContext {
  clock: Clock | null;
  names: boolean;
}

/** One part file being written. */
export interface PartWriter {
  write(t: Table): Promise<void>;
  /** finishes the file; returns its size in bytes */
  close(): Promise<number>;
}

export interface DatasetWriter {
  readonly ext: string;
  openPart(path: string, table: TableName, ctx: FormatContext): Promise<PartWriter>;
}

/** A file written through one handle, in the order given (each write awaited: backpressure). */
export class FileSink {
  private bytes = 0;
  private constructor(private readonly fh: FileHandle) {}
  static async create(path: string): Promise<FileSink> {
    return new FileSink(await open(path, 'wx'));
  }
  write = async (data: Uint8Array | string): Promise<void> => {
    const buf = typeof data === 'string' ? Buffer.from(data, 'utf8') : data;
    let done = 0;
    while (done < buf.length) done += (await this.fh.write(buf, done, buf.length - done)).bytesWritten;
    this.bytes += buf.length;
  };
  get size(): number {
    return this.bytes;
  }
  async close(): Promise<number> {
    if (!this.closed) {
      this.closed = true;
      await this.fh.close();
    }
    return this.bytes;
  }
  private closed = false;
}

function textFormat(format: 'csv' | 'jsonl'): DatasetWriter {
  return {
    ext: format,
    async openPart(path, table, ctx) {
      const sink = await FileSink.create(path);
      const o = { format, names: ctx.names, time: ctx.clock ? ('ns' as const) : ('raw' as const), clock: ctx.clock };
      // rows formatted into byte buffers (src/output/text.ts), each written when full
      const writer = new TextTableWriter(table, o, sink.write, 1 << 18);
      await writer.writeHeader();
      return {
        write: async (t) => {
          if (t.length) await writer.write(t);
        },
        close: async () => {
          await writer.end();
          return sink.close();
        },
      };
    },
  };
}

/** Parquet (zstd, min/max statistics): a part file is one row group. */
function parquetFormat(partRows: number, ParquetTableWriter: typeof import('../output/parquet.js').ParquetTableWriter): DatasetWriter {
  return {
    ext: 'parquet',
    async openPart(path, table, ctx) {
      const sink = await FileSink.create(path);
      try {
        const w = await ParquetTableWriter.create(table, sink.write, { clock: ctx.clock, names: ctx.names, rowGroupRows: partRows });
        return {
          write: (t) => w.write(t),
          close: async () => {
            try {
              await w.close();
            } finally {
              await sink.close();
            }
            return sink.size;
          },
        };
      } catch (e) {
        await sink.close();
        throw e;
      }
    },
  };
}

/** Arrow IPC files (`.arrow`, the Feather v2 format): record batches of the part's rows. */
function arrowFormat(ArrowIpcWriter: typeof import('../output/arrow.js').ArrowIpcWriter): DatasetWriter {
  return {
    ext: 'arrow',
    async openPart(path, table, ctx) {
      const sink = await FileSink.create(path);
      // the file sink has written each buffer when its write resolves
      const w = new ArrowIpcWriter(table, sink.write, { clock: ctx.clock, names: ctx.names, format: 'file', reuseBuffers: true });
      return {
        write: (t) => w.write(t),
        close: async () => {
          try {
            await w.close();
          } finally {
            await sink.close();
          }
          return sink.size;
        },
      };
    },
  };
}

/** The writer of a dataset format (loads what the format needs on first use). */
export async function datasetWriter(format: DatasetFormat, partRows: number): Promise<DatasetWriter> {
  switch (format) {
    case 'csv':
    case 'jsonl':
      return textFormat(format);
    // loaded on first use: apache-arrow and the Parquet writer cost a third of a second to import
    case 'parquet':
      return parquetFormat(partRows, (await import('../output/parquet.js')).ParquetTableWriter);
    case 'arrow':
      return arrowFormat((await import('../output/arrow.js')).ArrowIpcWriter);
  }
}
