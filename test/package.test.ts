// Packaging: ESM exports for node and browser (types first), the browser entry never imports node:
// modules and decodes a trace with Node's globals removed (no Buffer, no process).
import { expect, test } from 'vitest';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { build } from 'esbuild';
import { generateMixedTrace } from '../src/writer/index.js';
import { decodeSync } from '../src/index.js';
import { readParquetFooter } from '../src/output/parquet-footer.js';

const root = fileURLToPath(new URL('..', import.meta.url));
const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));

test('exports: browser, node and default conditions, types first, ESM', () => {
  expect(pkg.type).toBe('module');
  const dot = pkg.exports['.'];
  expect(Object.keys(dot)).toEqual(['browser', 'node', 'default']);
  for (const cond of Object.values(dot) as Record<string, string>[]) expect(Object.keys(cond)[0]).toBe('types');
  expect(dot.browser.import).toBe('./dist/index.js');
  expect(dot.node.import).toBe('./dist/node.js');
  expect(pkg.bin['etw-decode']).toBe('bin/etw-decode.js');
  // versions are pinned; runtime dependencies: the CLI's, and Arrow and Parquet output (src/output/)
  expect(Object.keys(pkg.dependencies)).toEqual(['apache-arrow', 'commander', 'parquet-wasm']);
  for (const v of Object.values({ ...pkg.dependencies, ...pkg.devDependencies }) as string[]) expect(v).toMatch(/^\d+\.\d+\.\d+(-[0-9A-Za-z.]+)?$/);
});

test('the browser entry bundles for the browser platform with no node: imports', async () => {
  const out = await build({
    entryPoints: [join(root, 'src/index.ts')],
    bundle: true,
    platform: 'browser',
    format: 'esm',
    write: false,
    logLevel: 'silent',
  });
  const text = out.outputFiles[0]!.text;
  expect(text).not.toMatch(/from ["']node:/);
  expect(text).not.toMatch(/require\(["']node:/);
  expect(text.length).toBeGreaterThan(10_000);
});

test('the browser entry does not carry the reference engine: it is a separate chunk loaded on demand', async () => {
  const out = await build({
    entryPoints: [join(root, 'src/index.ts')],
    bundle: true,
    splitting: true,
    platform: 'browser',
    format: 'esm',
    outdir: join(mkdtempSync(join(tmpdir(), 'etw-split-')), 'out'),
    write: false,
    logLevel: 'silent',
  });
  const entry = out.outputFiles.find((f) => f.path.endsWith('index.js'))!;
  const chunks = out.outputFiles.filter((f) => f !== entry && f.path.endsWith('.js'));
  // the reference walk, its compact decoder and its XPRESS decoder live only in the lazy chunk
  for (const marker of ['function compactBatch(', 'function flushHeldSwitches(', 'function spinlockEvent(', 'function tally(']) {
    expect(entry.text).not.toContain(marker);
    expect(chunks.some((c) => c.text.includes(marker))).toBe(true);
  }
  expect(entry.text).toContain('import("./');
  // the Parquet writer (parquet-wasm's glue and its embedded module, ~2 MB of base64) is a lazy chunk too
  const gzipBase64 = /["']H4sI/; // the start of the embedded module: gzip's magic in base64
  expect(entry.text).not.toMatch(gzipBase64);
  expect(entry.text.length).toBeLessThan(1_000_000);
  expect(chunks.some((c) => gzipBase64.test(c.text) && c.text.length > 2_000_000)).toBe(true);
  expect(entry.text).not.toContain('function initSync(');
  expect(chunks.some((c) => c.text.includes('function initSync('))).toBe(true);
});

test('the built browser entry decodes with Buffer and process removed', () => {
  const dir = mkdtempSync(join(tmpdir(), 'etw-browser-'));
  const bytes = generateMixedTrace({ seed: 11, targetBytes: 100_000, cpus: 2, bufferSize: 0x4000 }).bytes;
  const tracePath = join(dir, 't.etl');
  writeFileSync(tracePath, bytes);
  const script = join(dir, 'run.mjs');
  writeFileSync(
    script,
    `import { readFileSync } from 'node:fs';
const bytes = new Uint8Array(readFileSync(${JSON.stringify(tracePath)}));
const out = globalThis.process.stdout;
// Node's fetch classes are lazy getters that load undici, which needs Buffer (browsers have them built in):
// parquet-wasm's glue tests 'instanceof Response', so they are loaded before Buffer goes
void [globalThis.Request, globalThis.Response];
delete globalThis.Buffer;
Object.defineProperty(globalThis, 'process', { value: undefined, configurable: true });
const m = await import(${JSON.stringify(pathToFileURL(join(root, 'dist/index.js')).href)});
const r = await m.decode(new Blob([bytes]));
let before = '';
try { m.decodeSync(bytes, { engine: 'reference' }); } catch (e) { before = e.code + ': ' + e.message; }
await m.init({ engine: 'reference' });
const ref = m.decodeSync(bytes, { engine: 'reference' });
const pq = await m.tableToParquet(r.cswitch, { names: true });
const ipc = m.tableToArrowIpc(r.cswitch);
out.write(JSON.stringify({ cs: r.cswitch.length, sl: r.spinlock.length, events: r.summary.events, buffer: typeof Buffer, process: typeof process, before, ref: ref.cswitch.length, parquet: Array.from(pq), ipc: ipc.length }));
`,
  );
  const res = JSON.parse(execFileSync(process.execPath, [script], { encoding: 'utf8' }));
  const lib = decodeSync(bytes);
  expect(res).toMatchObject({ cs: lib.cswitch.length, sl: lib.spinlock.length, events: lib.summary.events, buffer: 'undefined', process: 'undefined' });
  // the reference engine is loaded on demand in the browser entry: decodeSync says how until init() loaded it
  expect(res.before).toMatch(/^BAD_OPTION: the reference engine is not loaded: call `await init\(\{ engine: 'reference' \}\)` first/);
  expect(res.ref).toBe(lib.cswitch.length);
  // Parquet (the embedded wasm, gunzipped and instantiated without fetch) and Arrow IPC without Node's globals
  const footer = readParquetFooter(Uint8Array.from(res.parquet));
  expect(footer.rows).toBe(lib.cswitch.length);
  expect(res.ipc).toBeGreaterThan(lib.cswitch.length * 20);
});
