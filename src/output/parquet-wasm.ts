// Loads parquet-wasm (Rust `parquet` + `arrow` crates compiled to WebAssembly) on the first Parquet write:
// its JavaScript glue and the embedded module (gzip + base64, src/generated/parquet-wasm-binary.ts) are
// dynamic imports, so importing etw-decode costs nothing for them and bundlers put them in a separate
// chunk. No fetch: the bytes are gunzipped with DecompressionStream and instantiated from memory, the
// same way in Node and in browsers (file:// pages included).
import { EtlError } from '../errors.js';
import { decodeBase64 } from '../wasm/instance.js';

export type ParquetWasm = typeof import('parquet-wasm/esm');

let loading: Promise<ParquetWasm> | null = null;

async function gunzip(bytes: Uint8Array<ArrayBuffer>): Promise<Uint8Array<ArrayBuffer>> {
  const stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream('gzip'));
  return new Uint8Array(await new Response(stream).arrayBuffer());
}

async function load(): Promise<ParquetWasm> {
  const [glue, embedded] = await Promise.all([import('parquet-wasm/esm'), import('../generated/parquet-wasm-binary.js')]);
  const wasm = await gunzip(decodeBase64(embedded.PARQUET_WASM_GZIP_BASE64));
  if (wasm.length !== embedded.PARQUET_WASM_BYTES) {
    throw new Error(`embedded parquet-wasm module: ${wasm.length} bytes after gunzip, expected ${embedded.PARQUET_WASM_BYTES}`);
  }
  await glue.default({ module_or_path: wasm });
  return glue;
}

/** parquet-wasm, instantiated once (later calls share it). */
export function loadParquetWasm(): Promise<ParquetWasm> {
  loading ??= load().catch((e: unknown) => {
    loading = null; // a later call may try again
    throw new EtlError(
      'WRITE_FAILED',
      `cannot load the Parquet writer (parquet-wasm): ${(e as Error).message ?? e}. It needs WebAssembly, DecompressionStream and Response (Node ≥ 20, current browsers)`,
    );
  });
  return loading;
}
