// Entry of a decoding worker in Node (worker_threads): worker.ts over the parent port, reading files itself
// (synchronous reads: the worker has nothing else to do meanwhile, and no read is in flight while the
// engine's memory may grow).
import { closeSync, fstatSync, openSync, readSync } from 'node:fs';
import { parentPort } from 'node:worker_threads';
import { EtlError, fileSizeChanged } from '../errors.js';
import type { AsyncSource } from '../decode/runners.js';
import { serveWorker } from './worker.js';

function openFile(path: string): { source: AsyncSource; close(): void } {
  let fd: number;
  try {
    fd = openSync(path, 'r');
  } catch (e) {
    throw new EtlError('READ_FAILED', `cannot open ${path}: ${(e as Error).message}`);
  }
  const size = fstatSync(fd).size;
  const readInto = (position: number, target: Uint8Array): number => {
    let done = 0;
    while (done < target.length) {
      let n: number;
      try {
        n = readSync(fd, target, done, target.length - done, position + done);
      } catch (e) {
        throw new EtlError('READ_FAILED', `cannot read ${path} at offset ${position + done}: ${(e as Error).message}`, position + done);
      }
      if (n === 0) break;
      done += n;
    }
    // short of the size the file had when opened: it shrank, say to what
    if (done < target.length && position + done < size) {
      const now = fstatSync(fd).size;
      if (now < size) throw fileSizeChanged(path, now, size);
    }
    return done;
  };
  return {
    source: {
      size,
      read: async (position, length) => {
        const out = new Uint8Array(Math.max(0, Math.min(length, size - position)));
        return out.subarray(0, readInto(position, out));
      },
      readInto: async (position, target) => readInto(position, target),
    },
    close: () => closeSync(fd),
  };
}

const port = parentPort;
if (port) {
  serveWorker({
    post: (m, transfer) => port.postMessage(m, transfer as never),
    listen: (h) => port.on('message', h),
    openFile,
  });
}
