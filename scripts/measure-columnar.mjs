// Measures the Arrow and Parquet outputs on a compact-heavy cswitch table (default ~5.2 M rows from a
// generated 36 MB trace; `node scripts/measure-columnar.mjs [trace.etl]`): toArrow, the Arrow IPC writer and
// the Parquet writer with each compression, as wall and CPU time (CPU time is steadier on a shared
// machine), file sizes, peak RSS (process maxRSS) and the Parquet wasm memory. Run `npm run build` first.
import { readFileSync } from 'node:fs';
import { decodeSync, toArrow, ArrowIpcWriter, ParquetTableWriter } from '../dist/index.js';
import { generateMixedTrace } from '../dist/writer/index.js';
import { loadParquetWasm } from '../dist/output/parquet-wasm.js';

const mib = (n) => (n / 2 ** 20).toFixed(1) + ' MiB';
const maxRss = () => process.resourceUsage().maxRSS * 1024;

async function timed(fn) {
  const c0 = process.cpuUsage();
  const t0 = performance.now();
  const value = await fn();
  const c = process.cpuUsage(c0);
  return { value, wall: performance.now() - t0, cpu: (c.user + c.system) / 1000 };
}

const bytes = process.argv[2]
  ? new Uint8Array(readFileSync(process.argv[2]))
  : generateMixedTrace({ seed: 7, targetBytes: 36_000_000, cpus: 4, mix: { compact: 1 } }).bytes;
const r = decodeSync(bytes);
const t = r.cswitch;
console.log(`trace ${mib(bytes.length)}, cswitch ${t.length} rows; peak RSS after decode ${mib(maxRss())}`);

for (const [label, o] of [['toArrow', {}], ['toArrow names+clock', { names: true, clock: r.clock }]]) {
  const runs = [];
  for (let k = 0; k < 5; k++) runs.push(await timed(() => toArrow(t, o)));
  runs.sort((a, b) => a.cpu - b.cpu);
  console.log(`${label}: median ${runs[2].wall.toFixed(0)} ms wall, ${runs[2].cpu.toFixed(0)} ms CPU (5 runs)`);
}

{
  let size = 0;
  const w = new ArrowIpcWriter('cswitch', (b) => void (size += b.length));
  const run = await timed(async () => {
    for (let at = 0; at < t.length; at += 1 << 20) await w.write(sliceOf(t, at, Math.min(t.length, at + (1 << 20))));
    return w.close();
  });
  console.log(`Arrow IPC file (1 Mi-row batches): ${run.wall.toFixed(0)} ms wall, ${run.cpu.toFixed(0)} ms CPU, ${mib(size)}`);
}

function sliceOf(table, a, b) {
  return new table.constructor(table.name, { length: b - a, columns: table.columns.map((c) => (Array.isArray(c) ? c.slice(a, b) : c.subarray(a, b))) });
}

const load = await timed(() => loadParquetWasm());
console.log(`Parquet wasm load (gunzip + compile + instantiate): ${load.wall.toFixed(0)} ms wall`);
const pw = load.value;
for (const compression of (process.env.COMPRESSIONS ?? 'zstd,snappy,none').split(',')) {
  const rss0 = maxRss();
  let size = 0;
  const run = await timed(async () => {
    const w = await ParquetTableWriter.create('cswitch', (b) => void (size += b.length), { compression });
    // as a stream delivers them: chunks of 65,536 rows
    for (let at = 0; at < t.length; at += 65536) await w.write(sliceOf(t, at, Math.min(t.length, at + 65536)));
    return w.close();
  });
  const { rows, rowGroups } = run.value;
  console.log(
    `Parquet ${compression}: ${run.wall.toFixed(0)} ms wall, ${run.cpu.toFixed(0)} ms CPU (${((rows / run.cpu) * 1000 / 1e6).toFixed(2)} M rows/CPU-s), ` +
      `${mib(size)} (${(size / rows).toFixed(2)} B/row), ${rowGroups} row groups; peak RSS ${mib(maxRss())} (+${mib(maxRss() - rss0)}), wasm memory ${mib(pw.wasmMemory().buffer.byteLength)}`,
  );
}
