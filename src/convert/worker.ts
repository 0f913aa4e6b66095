// A conversion worker (pool.ts): converts the files it is sent, one at a time, with the WebAssembly
// module its parent compiled; reports progress, results and failures as messages.
import { parentPort, workerData } from 'node:worker_threads';
import { EtlError } from '../errors.js';
import { adoptWasmModule } from '../engine/wasm/instance.js';
import { convertFile, type ConvertOptions } from './convert-file.js';
import type { FromWorker, ToWorker } from './pool.js';

const data = workerData as { wasmModule: WebAssembly.Module; options: ConvertOptions };
adoptWasmModule(data.wasmModule);
const port = parentPort!;

port.on('message', async (m: ToWorker) => {
  let last = 0;
  try {
    const result = await convertFile(m.path, {
      ...data.options,
      onProgress: (done, total) => {
        const now = Date.now();
        if (now - last < 200) return;
        last = now;
        port.postMessage({ type: 'progress', index: m.index, done, total } satisfies FromWorker);
      },
    });
    port.postMessage({ type: 'done', index: m.index, result } satisfies FromWorker);
  } catch (e) {
    const msg: FromWorker =
      e instanceof EtlError
        ? { type: 'failed', index: m.index, error: e.message, code: e.code }
        : { type: 'failed', index: m.index, error: (e as Error)?.message ?? String(e), code: (e as NodeJS.ErrnoException)?.code };
    port.postMessage(msg);
  }
});
