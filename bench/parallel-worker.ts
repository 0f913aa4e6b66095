// Child process of the parallel case (parallel.ts): `node parallel-worker.js <file> <threads>` decodes the
// file as `etw-decode summary` does (streamFile without a rows consumer) with that many threads and prints
// one JSON line (ParallelWorkerReport) on stdout.
import { readFileSync } from 'node:fs';
import { streamFile } from '../src/node.js';

export interface ParallelWorkerReport {
  threads: number;
  bytes: number;
  /** the decode alone (modules loaded, the file not yet opened) */
  seconds: number;
  /** CPU time of the process over the decode (every thread) */
  cpuSeconds: number;
  /** CPU time of the calling thread alone over the decode (0 when unknown) */
  mainCpuSeconds: number;
  /** VmHWM: the process's peak RSS */
  maxRssBytes: number;
  events: number;
  cswitch: number;
  issues: number;
}

function vmHwmBytes(): number {
  try {
    const m = /^VmHWM:\s+(\d+)\s+kB/m.exec(readFileSync('/proc/self/status', 'utf8'));
    return m ? Number(m[1]) * 1024 : 0;
  } catch {
    return 0;
  }
}

/** Nanoseconds the calling (main) thread has run: the first field of /proc/thread-self/schedstat (Linux). */
export function threadCpuNs(): number {
  try {
    return Number(readFileSync('/proc/thread-self/schedstat', 'utf8').split(' ')[0]);
  } catch {
    return NaN;
  }
}

async function main(): Promise<void> {
  const [file, t] = process.argv.slice(2);
  const threads = Number(t);
  if (!file || !Number.isInteger(threads) || threads < 1) throw new Error('usage: parallel-worker.js <file> <threads>');
  const c0 = process.cpuUsage();
  const m0 = threadCpuNs();
  const t0 = performance.now();
  const out = await streamFile(file, { threads });
  const seconds = (performance.now() - t0) / 1000;
  const c = process.cpuUsage(c0);
  const main = (threadCpuNs() - m0) / 1e9;
  const report: ParallelWorkerReport = {
    threads,
    bytes: out.summary.fileSize,
    seconds,
    cpuSeconds: (c.user + c.system) / 1e6,
    mainCpuSeconds: Number.isFinite(main) ? main : 0,
    maxRssBytes: vmHwmBytes(),
    events: out.summary.events,
    cswitch: out.summary.cswitch,
    issues: out.summary.issues.length,
  };
  process.stdout.write(JSON.stringify(report) + '\n');
}

main().catch((e: unknown) => {
  console.error(e instanceof Error ? (e.stack ?? e.message) : String(e));
  process.exit(1);
});
