// Decoding files with bounded memory (the node entry's additions; the CLI imports this module directly).
// Files are read in fixed windows straight into the decoder's input window, so memory does not grow
// with the file size (files over 4 GiB included; positions are exact up to 2^53). Importing it registers
// nothing: the entries that use it (src/node.ts, the CLI's main()) register the worker_threads host.
import { open, stat, type FileHandle } from 'node:fs/promises';
import { fstatSync, readSync } from 'node:fs';
import { loadEngine } from '../engine/engines.js';
import { EtlError, fileSizeChanged } from '../errors.js';
import * as L from '../generated/layout.js';
import { decodeStream, decodeSync, TableCollector, type StreamOptions, type StreamResult } from './decode.js';
import type { TraceInfo } from '../result/logfile.js';
import type { DecodeOptions } from '../options.js';
import type { AsyncSource } from './runners.js';
import type { DecodeResult } from '../result/summary.js';
import { DiskDetector } from '../input/disk-detector.js';

class FileSource implements AsyncSource {
  /** false once synchronous batches were slow (DiskDetector): the file is not in the page cache */
  private syncHeaders = true;
  private readonly disk = new DiskDetector();

  constructor(
    private readonly fh: FileHandle,
    readonly size: number,
    /** decoding workers open the file themselves (parallel/node-host.ts filePathOf) */
    readonly path: string,
  ) {}
  async read(position: number, length: number): Promise<Uint8Array> {
    const out = new Uint8Array(Math.max(0, length));
    const n = await this.readInto(position, out);
    return out.subarray(0, n);
  }
  /**
   * Buffer headers, 72 bytes each. An awaited read costs a round trip through the libuv pool (tens of
   * microseconds here) for 72 bytes, so while the file is in the page cache a batch is read synchronously
   * (64 reads block the event loop about as long as decoding one 64 KiB buffer). When batches are slow
   * (DiskDetector) the file is coming from the disk, and the reads go back to the pool, in parallel.
   */
  async readMany(positions: readonly number[], length: number): Promise<Uint8Array[]> {
    if (!this.syncHeaders) return Promise.all(positions.map((p) => this.read(p, Math.min(length, this.size - p))));
    const started = performance.now();
    const all = new Uint8Array(positions.length * length);
    const out = positions.map((position, i) => {
      const target = all.subarray(i * length, (i + 1) * length);
      let n: number;
      try {
        n = readSync(this.fh.fd, target, 0, Math.max(0, Math.min(length, this.size - position)), position);
      } catch (e) {
        throw new EtlError('READ_FAILED', `cannot read ${this.path} at offset ${position}: ${(e as Error).message}`, position);
      }
      if (n < target.length && position + n < this.size) this.checkSize(fstatSync(this.fh.fd).size);
      return target.subarray(0, n);
    });
    if (this.disk.slow(performance.now() - started)) this.syncHeaders = false;
    return out;
  }
  async readInto(position: number, target: Uint8Array): Promise<number> {
    let done = 0;
    while (done < target.length) {
      let r: { bytesRead: number };
      try {
        r = await this.fh.read(target, done, target.length - done, position + done);
      } catch (e) {
        throw new EtlError('READ_FAILED', `cannot read ${this.path} at offset ${position + done}: ${(e as Error).message}`, position + done);
      }
      if (r.bytesRead === 0) break;
      done += r.bytesRead;
    }
    if (done < target.length && position + done < this.size) this.checkSize((await this.fh.stat()).size);
    return done;
  }
  /** After a read came short of the size the file had when opened: it shrank, and the error names its size now. */
  private checkSize(now: number): void {
    if (now < this.size) throw fileSizeChanged(this.path, now, this.size);
  }
}

const NOT_RANDOM_ACCESS = 'not a regular file (decoding needs random access: read a pipe or device into a file or a Uint8Array first)';

function openError(path: string, e: unknown): EtlError {
  const err = e as NodeJS.ErrnoException;
  const why = err.code === 'ENOENT' ? 'no such file' : err.code === 'EISDIR' ? 'it is a directory' : err.code === 'EACCES' ? 'permission denied' : err.message;
  return new EtlError('READ_FAILED', `cannot open ${path}: ${why}`);
}

async function withFile<T>(path: string, fn: (source: AsyncSource) => Promise<T>): Promise<T> {
  // the kind of file is checked before open(): opening a FIFO would block until a writer comes
  const kind = await stat(path).catch((e: unknown) => {
    throw openError(path, e);
  });
  if (kind.isDirectory()) throw new EtlError('READ_FAILED', `cannot open ${path}: it is a directory`);
  if (!kind.isFile()) throw new EtlError('READ_FAILED', `cannot read ${path}: ${NOT_RANDOM_ACCESS}`);
  let fh: FileHandle;
  try {
    fh = await open(path, 'r');
  } catch (e) {
    throw openError(path, e);
  }
  try {
    const st = await fh.stat();
    if (!st.isFile()) throw new EtlError('READ_FAILED', `cannot read ${path}: ${NOT_RANDOM_ACCESS}`);
    return await fn(new FileSource(fh, st.size, path));
  } finally {
    await fh.close();
  }
}

/** Decodes a trace file with bounded memory, handing rows to `options.onRows` chunk by chunk. */
export function streamFile(path: string, options: StreamOptions): Promise<StreamResult> {
  return withFile(path, (source) => decodeStream(source, { sourcePath: path, ...options }));
}

/** Decodes a whole trace file into tables (memory grows with the number of rows). */
export async function decodeFile(path: string, options: DecodeOptions = {}): Promise<DecodeResult> {
  const collector = new TableCollector();
  // every row is kept: the threads need not wait for the consumer
  const parallel = { aheadBytes: Infinity, ...options.parallel };
  const out = await withFile(path, (source) => decodeStream(source, { sourcePath: path, ...options, parallel, onRows: collector.add }));
  return { ...out, ...collector.tables(out) };
}

/**
 * Reads only the first (header) buffer of a trace file and returns its trace info — cheap for any file
 * size. Throws EtlError if the file is not an ETL file.
 */
export async function readTraceInfo(path: string): Promise<TraceInfo | null> {
  return withFile(path, async (source) => {
    const head = await source.read(0, L.WMI_BUFFER_HEADER_SIZE);
    const size = head.length >= 4 ? new DataView(head.buffer, head.byteOffset).getUint32(L.BUF_BUFFER_SIZE, true) : 0;
    const first = await source.read(0, Math.min(source.size, Math.max(size, head.length), L.MAX_BUFFER_SIZE));
    await loadEngine('wasm'); // compiled once: the decode that usually follows uses it too
    return decodeSync(first, { engine: 'wasm' }).info;
  });
}
