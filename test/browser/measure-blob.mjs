#!/usr/bin/env node
// Measures decoding a File in headless Chromium (Debian's chromium via playwright-core), the path of the
// web page: decodeStream(file) (src/input/blob-source.ts) against the same bytes as a Uint8Array, and against
// the Blob source this project had before (a slice per read, headers one by one). Not a test: run it
// by hand after `npm run build`:
//   node test/browser/measure-blob.mjs FILE.etl [FILE2.etl …] [--runs N] [--no-before]
// Prints, per file: median ms of each way, slices read, and the ratios.
import { build } from 'esbuild';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';

const root = fileURLToPath(new URL('../..', import.meta.url));
const args = process.argv.slice(2);
const runsAt = args.indexOf('--runs');
const runs = runsAt >= 0 ? Number(args.splice(runsAt, 2)[1]) : 5;
const before = !args.includes('--no-before');
const files = args.filter((a) => !a.startsWith('--'));
if (!files.length) {
  console.error('usage: node test/browser/measure-blob.mjs FILE.etl [FILE2.etl …] [--runs N] [--no-before]');
  process.exit(2);
}

const probe = `
import { decodeStream } from ${JSON.stringify(join(root, 'src', 'index.ts'))};
let slices = 0;
const slice = Blob.prototype.slice;
Blob.prototype.slice = function (...a) { slices++; return slice.apply(this, a); };
// the Blob source before issue 11: one slice per read, no readMany (framing read each header alone)
function oldSource(b) {
  const read = async (p, n) => new Uint8Array(await b.slice(p, p + n).arrayBuffer());
  return { size: b.size, read, readInto: async (p, t) => { const x = await read(p, t.length); t.set(x); return x.length; } };
}
const once = async (input) => {
  const t = performance.now();
  await decodeStream(input, { rows: 'borrow', onRows() {} });
  return performance.now() - t;
};
globalThis.measure = async (file, way) => {
  slices = 0;
  let bytes = null;
  if (way === 'memory') bytes = new Uint8Array(await file.arrayBuffer());
  const ms = await once(way === 'memory' ? bytes : way === 'before' ? oldSource(file) : file);
  return { ms, slices };
};
`;
const dir = mkdtempSync(join(tmpdir(), 'etw-measure-'));
await build({ stdin: { contents: probe, resolveDir: root, loader: 'js' }, bundle: true, format: 'iife', outfile: join(dir, 'probe.js'), logLevel: 'warning' });
writeFileSync(join(dir, 'index.html'), '<!doctype html><meta charset="utf-8"><input type="file" id="f"><script src="probe.js"></script>');
const context = await chromium.launchPersistentContext(join(dir, 'profile'), {
  executablePath: process.env.CHROMIUM_PATH || '/usr/bin/chromium',
  headless: true,
  args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
});
try {
  const page = await context.newPage();
  await page.goto('file://' + join(dir, 'index.html'));
  const median = (a) => [...a].sort((x, y) => x - y)[a.length >> 1];
  for (const file of files) {
    await page.setInputFiles('#f', file);
    const ways = ['blob', 'memory', ...(before ? ['before'] : [])];
    const out = {};
    for (const way of ways) {
      const n = way === 'before' ? 1 : runs;
      const times = [];
      let slices = 0;
      for (let i = 0; i < n + (way === 'before' ? 0 : 1); i++) {
        const r = await page.evaluate(([w]) => globalThis.measure(document.getElementById('f').files[0], w), [way]);
        if (i > 0 || way === 'before') times.push(r.ms); // the first run of each way warms up
        slices = r.slices;
      }
      out[way] = { ms: median(times), slices };
    }
    const f = (x) => x.toFixed(0);
    console.log(
      `${file}: File ${f(out.blob.ms)} ms (${out.blob.slices} slices), Uint8Array ${f(out.memory.ms)} ms → ${(out.blob.ms / out.memory.ms).toFixed(2)}× the in-memory time` +
        (out.before ? `; a slice per read: ${f(out.before.ms)} ms (${out.before.slices} slices) → ${(out.before.ms / out.blob.ms).toFixed(1)}× slower than now` : ''),
    );
  }
} finally {
  await context.close();
  rmSync(dir, { recursive: true, force: true });
}
