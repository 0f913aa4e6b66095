// Perfetto encoding throughput (src/output/perfetto.ts), apart from decoding: a compact-heavy trace is
// decoded once, then its cswitch and readythread rows are encoded again and again, in chunks of 65 536
// rows as streamFile hands them over, into a sink that only counts bytes.
//
//   npm run build && tsc -p tsconfig.bench.json && node --expose-gc dist-bench/bench/perfetto.js [rows]
//
// Prints rows/s and MB/s of output (median of 7 runs, by the process's CPU time, which the other jobs of a
// shared machine disturb less than wall time) and bytes per row.
import { decodeSync, PerfettoWriter, Table, type DecodeResult } from '../src/node.js';
import { generateMixedTrace } from '../src/writer/index.js';

const targetRows = Number(process.argv[2] ?? 3_000_000);
const CHUNK = 65536;

function slice<T extends 'cswitch' | 'readythread'>(t: Table<T>, from: number, to: number): Table<T> {
  return new Table(t.name, { length: to - from, columns: t.columns.map((c) => (c as Uint8Array).subarray(from, to)) as never });
}

function encode(r: DecodeResult): { bytes: number; rows: number; ms: number } {
  let bytes = 0;
  const w = new PerfettoWriter((b) => void (bytes += b.length), { clock: r.clock });
  const c0 = process.cpuUsage();
  const n = r.cswitch.length;
  for (let i = 0; i < n; i += CHUNK) {
    w.readyThread(slice(r.readythread, Math.min(i, r.readythread.length), Math.min(i + CHUNK, r.readythread.length)));
    w.cswitch(slice(r.cswitch, i, Math.min(i + CHUNK, n)));
  }
  w.processTree(r.threads, r.processes);
  w.close();
  const c = process.cpuUsage(c0);
  return { bytes, rows: n + r.readythread.length, ms: (c.user + c.system) / 1000 };
}

// ~7 input bytes per compact row: size the trace for the rows wanted
const bytes = generateMixedTrace({ seed: 7, targetBytes: Math.round(targetRows * 7.5), cpus: 8, mix: { compact: 1 } }).bytes;
const r = decodeSync(bytes);
const compact = r.cswitch.column('source') as Uint8Array;
let compactRows = 0;
for (const s of compact) if (s !== 0) compactRows++;
console.log(`trace ${(bytes.length / 1e6).toFixed(1)} MB: ${r.cswitch.length} cswitch rows (${compactRows} compact), ${r.readythread.length} readythread rows`);

// encode and decode alternate, so that each ratio compares two runs under the same load
const runs: { bytes: number; rows: number; ms: number }[] = [];
const ratios: number[] = [];
const decodeMs: number[] = [];
const gc = (globalThis as { gc?: () => void }).gc;
for (let i = 0; i < 7; i++) {
  gc?.();
  const e = encode(r);
  runs.push(e);
  gc?.();
  const c0 = process.cpuUsage();
  decodeSync(bytes);
  const c = process.cpuUsage(c0);
  decodeMs.push((c.user + c.system) / 1000);
  ratios.push(e.ms / decodeMs[i]!);
}
runs.sort((a, b) => a.ms - b.ms);
decodeMs.sort((a, b) => a - b);
ratios.sort((a, b) => a - b);
const med = runs[3]!;
console.log(
  `encode: median ${med.ms.toFixed(0)} ms CPU of 7 (min ${runs[0]!.ms.toFixed(0)}, max ${runs[6]!.ms.toFixed(0)}): ` +
    `${((med.rows / med.ms) * 1e3 / 1e6).toFixed(2)} M rows/s, ${((med.bytes / med.ms) * 1e3 / 1e6).toFixed(0)} MB/s of output, ` +
    `${(med.bytes / med.rows).toFixed(2)} bytes/row, ${(med.bytes / 1e6).toFixed(1)} MB in all`,
);
console.log(
  `decodeSync of the same trace: median ${decodeMs[3]!.toFixed(0)} ms CPU; encode/decode per pair of runs: median ${ratios[3]!.toFixed(2)} (${ratios[0]!.toFixed(2)}-${ratios[6]!.toFixed(2)})`,
);
