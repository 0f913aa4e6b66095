// Loads parquet-wasm (Rust `parquet` + `arrow` crates compiled to WebAssembly) on the first Parquet write:
// its JavaScript glue and the embedded module (gzip + base64, src/generated/parquet-wasm-binary.ts) are
// dynamic imports, so importing etw-decode costs nothing for them and bundlers put them in a separate
// chunk. No fetch: the bytes are gunzipped with DecompressionStream and instantiated from memory, the
// same way in Node and in browsers (file:// pages included).
import { EtlError } from '../errors.js';
import { decodeBase64 } from '../engine/wasm/instance.js';

export type ParquetWasm = typeof import('parquet-wasm/esm');

let loading: Promise<ParquetWasm> | null = null;

/** gunzip with the platform's DecompressionStream, into one buffer of the known size */
async function gunzip(bytes: Uint8Array<ArrayBuffer>, size: number): Promise<Uint8Array<ArrayBuffer>> {
  const ds = new DecompressionStream('gzip');
  const writer = ds.writable.getWriter();
  void writer.write(bytes).then(() => writer.close()).catch(() => undefined);
  const out = new Uint8Array(size);
  let at = 0;
  const reader = ds.readable.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    if (at + value.length > size) throw new Error(`embedded parquet-wasm module: more than ${size} bytes after gunzip`);
    out.set(value, at);
    at += value.length;
  }
  if (at !== size) throw new Error(`embedded parquet-wasm module: ${at} bytes after gunzip, expected ${size}`);
  return out;
}

async function load(): Promise<ParquetWasm> {
  const [glue, embedded] = await Promise.all([import('parquet-wasm/esm'), import('../generated/parquet-wasm-binary.js')]);
  const wasm = await gunzip(decodeBase64(embedded.PARQUET_WASM_GZIP_BASE64), embedded.PARQUET_WASM_BYTES);
  await glue.default({ module_or_path: wasm });
  return glue;
}

/** parquet-wasm, instantiated once (later calls share it). */
export function loadParquetWasm(): Promise<ParquetWasm> {
  loading ??= load().catch((e: unknown) => {
    loading = null; // a later call may try again
    throw new EtlError(
      'WRITE_FAILED',
      `cannot load the Parquet writer (parquet-wasm): ${(e as Error).message ?? e}. It needs WebAssembly and DecompressionStream (Node ≥ 20, current browsers)`,
    );
  });
  return loading;
}
