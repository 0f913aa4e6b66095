// Child process of the scale case (scale.ts), so its peak RSS is that of one job alone:
//   node scale-worker.js read <file>            plain reads of the whole file into one 8 MiB buffer
//   node scale-worker.js decode <file> <engine>  streamFile with a consumer that counts and drops rows
//   node scale-worker.js blob <file> <engine>    the same through a File-backed Blob (fs.openAsBlob + decodeStream)
// Prints one JSON line (WorkerReport) on stdout.
import { openAsBlob, readFileSync } from 'node:fs';
import { open } from 'node:fs/promises';
import { decodeStream, streamFile } from '../src/node.js';

export interface WorkerReport {
  mode: 'read' | 'decode' | 'blob';
  engine?: string;
  bytes: number;
  seconds: number;
  /** RSS when the job started (modules loaded) */
  rssStartBytes: number;
  /** highest RSS sampled every 10 ms during the job */
  rssSampledPeakBytes: number;
  /** the kernel's high-water mark of this process's RSS (VmHWM of /proc/self/status; Linux only, else 0).
   *  Not process.resourceUsage().maxRSS: Linux carries that over from the parent across fork + exec. */
  maxRssBytes: number;
  events?: number;
  rows?: number;
  buffers?: number;
  issues?: number;
}

/** VmHWM (peak RSS of this process image) in bytes, or 0 where /proc is not available. */
function vmHwmBytes(): number {
  try {
    const m = /^VmHWM:\s+(\d+)\s+kB/m.exec(readFileSync('/proc/self/status', 'utf8'));
    return m ? Number(m[1]) * 1024 : 0;
  } catch {
    return 0;
  }
}

/** bytes per read: the decoder's default input window */
const READ_BYTES = 8 << 20;

async function main(): Promise<void> {
  const [mode, file, engine] = process.argv.slice(2);
  if ((mode !== 'read' && mode !== 'decode' && mode !== 'blob') || !file) throw new Error('usage: scale-worker.js read|decode|blob <file> [wasm|reference]');
  const rssStartBytes = process.memoryUsage.rss();
  let peak = rssStartBytes;
  const timer = setInterval(() => {
    const r = process.memoryUsage.rss();
    if (r > peak) peak = r;
  }, 10);
  const t0 = performance.now();
  let report: WorkerReport;
  if (mode === 'read') {
    const fh = await open(file, 'r');
    const buf = new Uint8Array(READ_BYTES);
    let pos = 0;
    let sum = 0;
    try {
      for (;;) {
        const { bytesRead } = await fh.read(buf, 0, buf.length, pos);
        if (bytesRead === 0) break;
        sum = (sum + buf[bytesRead - 1]!) | 0; // touch the data
        pos += bytesRead;
      }
    } finally {
      await fh.close();
    }
    const seconds = (performance.now() - t0) / 1000;
    report = { mode, bytes: pos, seconds, rssStartBytes, rssSampledPeakBytes: 0, maxRssBytes: 0 };
    if (sum === 0x7fffffff) console.error('');
  } else {
    if (engine !== 'wasm' && engine !== 'reference') throw new Error(`scale-worker: unknown engine ${engine}`);
    let rows = 0;
    const options = {
      engine,
      rows: 'borrow', // the consumer only counts: no copy out of the engine
      onRows: ({ cswitch, spinlock }: { cswitch: { length: number }; spinlock: { length: number } }) => {
        rows += cswitch.length + spinlock.length;
      },
    } as const;
    const out = mode === 'blob' ? await decodeStream(await openAsBlob(file), options) : await streamFile(file, options);
    const seconds = (performance.now() - t0) / 1000;
    report = {
      mode,
      engine,
      bytes: out.summary.fileSize,
      seconds,
      rssStartBytes,
      rssSampledPeakBytes: 0,
      maxRssBytes: 0,
      events: out.summary.events,
      rows,
      buffers: out.summary.buffers,
      issues: out.summary.issues.length,
    };
  }
  clearInterval(timer);
  const now = process.memoryUsage.rss();
  report.rssSampledPeakBytes = Math.max(peak, now);
  report.maxRssBytes = vmHwmBytes();
  process.stdout.write(JSON.stringify(report) + '\n');
}

main().catch((e: unknown) => {
  console.error(e instanceof Error ? (e.stack ?? e.message) : String(e));
  process.exit(1);
});
