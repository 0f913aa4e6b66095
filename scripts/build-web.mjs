#!/usr/bin/env node
// Builds the web page (web/) into static files in web/dist/: index.html, style.css, app.js (the page and,
// as a string, its worker — started from a Blob URL, so the page works from file:// and any static
// host), export-worker.js (the download worker, loaded on the first download), sample.js (the bundled
// sample trace, loaded on demand). Relative URLs only, no network.
// Needs the library's generated sources (npm run build, which `npm run web` runs first).
import { build } from 'esbuild';
import { copyFileSync, existsSync, mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const web = join(root, 'web');
const out = join(web, 'dist');

if (!existsSync(join(root, 'src', 'generated', 'wasm-binary.ts'))) {
  console.error('build-web: src/generated/wasm-binary.ts is missing: run `npm run build` first');
  process.exit(1);
}

const common = {
  bundle: true,
  format: 'iife',
  platform: 'browser',
  target: ['chrome110', 'firefox115', 'safari16'],
  minify: true,
  legalComments: 'none',
  logLevel: 'warning',
};

// the decoding worker goes into app.js as a string; the download worker (with the Parquet writer) is
// export-worker.js, a script the page loads on the first download
const bundle = async (entry) => (await build({ ...common, entryPoints: [join(web, 'src', entry)], write: false, outfile: 'out.js' })).outputFiles[0].text;
const workerSource = await bundle('worker.ts');
const exportSource = await bundle('export-worker.ts');

rmSync(out, { recursive: true, force: true });
mkdirSync(out, { recursive: true });
await build({
  ...common,
  entryPoints: [join(web, 'src', 'app.ts')],
  outfile: join(out, 'app.js'),
  define: { __WORKER_SOURCE__: JSON.stringify(workerSource) },
});
copyFileSync(join(web, 'index.html'), join(out, 'index.html'));
copyFileSync(join(web, 'style.css'), join(out, 'style.css'));
const sample = readFileSync(join(root, 'samples', 'sample.etl'));
writeFileSync(join(out, 'sample.js'), `window.ETW_DECODE_SAMPLE=${JSON.stringify(sample.toString('base64'))};\n`);
writeFileSync(join(out, 'export-worker.js'), `window.ETW_DECODE_EXPORT_WORKER=${JSON.stringify(exportSource)};\n`);

const kib = (f) => `${(statSync(join(out, f)).size / 1024).toFixed(0)} KiB`;
console.log(`web/dist: index.html, style.css, app.js ${kib('app.js')} (worker ${(workerSource.length / 1024).toFixed(0)} KiB inside), export-worker.js ${kib('export-worker.js')}, sample.js ${kib('sample.js')}`);
