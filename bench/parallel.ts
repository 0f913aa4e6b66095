// The parallel case: the scale case's ≥ 1 GiB mixed trace (same generator, same seed) written to
// os.tmpdir(), then decoded as `etw-decode summary` does — streamFile without a rows consumer — with 1 and
// with 2 (or more) threads, each job in a child process of its own, in alternating rounds (others share
// the machine: medians, and the ratio of each round's pair), from the page cache (a plain read of the
// file first). Also the whole command, `etw-decode summary FILE --threads N`, timed from spawn to exit.
import { spawn } from 'node:child_process';
import { closeSync, openSync, readSync, statSync, unlinkSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { ParallelWorkerReport } from './parallel-worker.js';
import { writeTraceFile } from './scale.js';

export const PARALLEL_CASE = 'parallel/1gib';
export const PARALLEL_DESCRIPTION =
  'the ≥ 1 GiB mixed trace of the scale case decoded as `etw-decode summary` does (no rows consumer), 1 vs 2 threads, alternating rounds in child processes; also the whole command';

export interface ParallelOptions {
  minBytes: number;
  /** thread counts compared (the first is the baseline), default [1, 2] */
  threads: readonly number[];
  /** alternating rounds, default 5 */
  rounds: number;
  /** an existing trace to decode instead of writing one (it is not deleted) */
  file?: string;
  /**
   * the native decoder (native.ts): each round also runs it alone and as N processes at once on the same
   * file (N = the most threads compared) — what this machine gives N cores' worth of native work, the
   * ceiling of a speed-up by threads here
   */
  nativeExe?: string;
  log: (line: string) => void;
}

export interface ParallelJob {
  threads: number;
  round: number;
  /**
   * `library`: streamFile alone (parallel-worker.js); `command`: etw-decode summary, spawn to exit;
   * `native`: cdecode --window-mb 8 on the file in `threads` processes at once, the slowest one's decode_s
   */
  kind: 'library' | 'command' | 'native';
  seconds: number;
  cpuSeconds?: number;
  /** CPU time of the decoding (main) thread alone (library jobs; 0 when unknown) */
  mainCpuSeconds?: number;
  maxRssBytes?: number;
  events?: number;
}

export interface ParallelSummary {
  threads: number;
  kind: 'library' | 'command';
  median: number;
  min: number;
  max: number;
  /** speed-up over the first thread count: median of each round's ratio */
  speedup: number | null;
  cpuSeconds?: number;
  maxRssBytes?: number;
}

export interface ParallelResult {
  file: { bytes: number };
  jobs: ParallelJob[];
  summaries: ParallelSummary[];
  /**
   * N native processes decoding the file each, against one: N x (one's time) / (the N's time), median of
   * the rounds' ratios — the throughput N cores give native code here (N on an idle machine with N cores)
   */
  nativeScaling?: { processes: number; scaling: number };
  /**
   * What bounds a speed-up by N threads of the one-thread decode (the first thread count) here, whatever the
   * split: N cores do at most N CPU-seconds a second, and a decode on N threads does at least the one-thread
   * decode's CPU work. `measured`: N x wall / CPU of the one-thread decode (its reads, JIT compiles and GC
   * run on other cores while its thread decodes). `reads`: N x D / (D + R) with D the decoding thread's own
   * CPU time and R the CPU time of reading the file once from the page cache (2 MiB reads, as the decode
   * does) — the bound with no JIT, GC or idle time at all, only the copies a decoder that reads (and cannot
   * map) its input must make. Medians of the rounds.
   */
  bound?: { threads: number; measured: number; reads: number; readCpuSeconds: number; mainCpuSeconds: number };
}

/** CPU seconds (user + system) of reading `path` once through a 2 MiB buffer (the page cache's copy). */
function readCpuSeconds(path: string, bytes: number): number {
  const fd = openSync(path, 'r');
  const buf = new Uint8Array(2 << 20);
  const c0 = process.cpuUsage();
  try {
    for (let pos = 0; pos < bytes; ) pos += readSync(fd, buf, 0, buf.length, pos) || bytes;
  } finally {
    closeSync(fd);
  }
  const c = process.cpuUsage(c0);
  return (c.user + c.system) / 1e6;
}

/**
 * Runs `processes` native decodes of `path` at once; the slowest one's decode_s (the decode of the mapped
 * file, without the process's start and the mapping, which vary most here).
 */
async function nativeJob(exe: string, path: string, processes: number): Promise<number> {
  const times = await Promise.all(
    Array.from(
      { length: processes },
      () =>
        new Promise<number>((resolve, reject) => {
          const c = spawn(exe, [path, '--window-mb', '8', '--repeat', '1'], { stdio: ['ignore', 'pipe', 'inherit'] });
          let out = '';
          c.stdout.setEncoding('utf8');
          c.stdout.on('data', (d: string) => (out += d));
          c.on('error', reject);
          c.on('close', (code) => {
            const m = / decode_s=([0-9.]+)/.exec(out);
            if (code === 0 && m) resolve(Number(m[1]));
            else reject(new Error(`${exe} ${path} exited with code ${code}${m ? '' : ' and no decode_s='}`));
          });
        }),
    ),
  );
  return Math.max(...times);
}

const here = fileURLToPath(new URL('.', import.meta.url));
const ROOT = fileURLToPath(new URL('../../', import.meta.url));

function child(args: string[], stdout: boolean): Promise<{ seconds: number; out: string }> {
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    const c = spawn(process.execPath, args, { stdio: ['ignore', stdout ? 'pipe' : 'ignore', 'inherit'] });
    let out = '';
    c.stdout?.setEncoding('utf8');
    c.stdout?.on('data', (d: string) => (out += d));
    c.on('error', reject);
    c.on('close', (code) => {
      const seconds = (performance.now() - t0) / 1000;
      if (code !== 0) reject(new Error(`${args.join(' ')} exited with code ${code}`));
      else resolve({ seconds, out });
    });
  });
}

const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
};

export async function runParallel(o: ParallelOptions): Promise<ParallelResult> {
  const path = o.file ?? join(os.tmpdir(), `etw-decode-parallel-${process.pid}.etl`);
  const remove = () => {
    if (o.file) return;
    try {
      unlinkSync(path);
    } catch {
      /* not there */
    }
  };
  const onSignal = (signal: NodeJS.Signals) => {
    remove();
    process.kill(process.pid, signal);
  };
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  try {
    if (!o.file) {
      o.log(`parallel: writing a mixed trace of at least ${(o.minBytes / 2 ** 20).toFixed(0)} MiB to ${path} …`);
      writeTraceFile(path, Math.ceil(o.minBytes * 1.02) + 0x10000);
    }
    const bytes = statSync(path).size;
    readCpuSeconds(path, bytes); // into the page cache
    const jobs: ParallelJob[] = [];
    const readCpu: number[] = [];
    const worker = join(here, 'parallel-worker.js');
    const cli = join(ROOT, 'bin', 'etw-decode.js');
    for (let round = 0; round < o.rounds; round++) {
      for (const threads of o.threads) {
        const lib = await child([worker, path, String(threads)], true);
        const r = JSON.parse(lib.out.trim().split('\n').pop()!) as ParallelWorkerReport;
        jobs.push({ threads, round, kind: 'library', seconds: r.seconds, cpuSeconds: r.cpuSeconds, mainCpuSeconds: r.mainCpuSeconds, maxRssBytes: r.maxRssBytes, events: r.events });
        const cmd = await child([cli, 'summary', path, '--threads', String(threads), '--no-progress'], false);
        jobs.push({ threads, round, kind: 'command', seconds: cmd.seconds });
      }
      if (o.nativeExe) {
        const pair = [1, Math.max(...o.threads)];
        for (const processes of round % 2 ? pair.reverse() : pair) {
          jobs.push({ threads: processes, round, kind: 'native', seconds: await nativeJob(o.nativeExe, path, processes) });
        }
      }
      const line = o.threads
        .map((t) => {
          const j = jobs.filter((x) => x.round === round && x.threads === t && x.kind !== 'native');
          return `${t} thread${t > 1 ? 's' : ''} ${j.map((x) => x.seconds.toFixed(3)).join(' / ')} s`;
        })
        .join(', ');
      const native = jobs.filter((x) => x.round === round && x.kind === 'native');
      const nativeLine = native.length ? `; native ${native.map((x) => `${x.threads}× ${x.seconds.toFixed(3)} s`).join(', ')}` : '';
      o.log(`parallel: round ${round + 1}/${o.rounds}: ${line} (decode / command)${nativeLine}`);
      readCpu.push(readCpuSeconds(path, bytes));
    }
    const summaries: ParallelSummary[] = [];
    for (const kind of ['library', 'command'] as const) {
      for (const threads of o.threads) {
        const js = jobs.filter((j) => j.kind === kind && j.threads === threads);
        const secs = js.map((j) => j.seconds);
        const ratios = js.map((j) => jobs.find((b) => b.kind === kind && b.round === j.round && b.threads === o.threads[0])!.seconds / j.seconds);
        summaries.push({
          threads,
          kind,
          median: median(secs),
          min: Math.min(...secs),
          max: Math.max(...secs),
          speedup: threads === o.threads[0] ? null : median(ratios),
          cpuSeconds: kind === 'library' ? median(js.map((j) => j.cpuSeconds!)) : undefined,
          maxRssBytes: kind === 'library' ? Math.max(...js.map((j) => j.maxRssBytes!)) : undefined,
        });
      }
    }
    let nativeScaling: ParallelResult['nativeScaling'];
    const most = Math.max(...o.threads);
    if (o.nativeExe && most > 1) {
      const ratios = [];
      for (let round = 0; round < o.rounds; round++) {
        const one = jobs.find((j) => j.kind === 'native' && j.round === round && j.threads === 1)!;
        const n = jobs.find((j) => j.kind === 'native' && j.round === round && j.threads === most)!;
        ratios.push((most * one.seconds) / n.seconds);
      }
      nativeScaling = { processes: most, scaling: median(ratios) };
    }
    let bound: ParallelResult['bound'];
    const ones = jobs.filter((j) => j.kind === 'library' && j.threads === o.threads[0]);
    if (most > o.threads[0]! && ones.every((j) => j.cpuSeconds! > 0 && j.mainCpuSeconds! > 0)) {
      const n = most / o.threads[0]!;
      const r = median(readCpu);
      bound = {
        threads: most,
        measured: median(ones.map((j) => (n * j.seconds) / j.cpuSeconds!)),
        reads: median(ones.map((j) => (n * j.mainCpuSeconds!) / (j.mainCpuSeconds! + r))),
        readCpuSeconds: r,
        mainCpuSeconds: median(ones.map((j) => j.mainCpuSeconds!)),
      };
    }
    return { file: { bytes }, jobs, summaries, nativeScaling, bound };
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
    remove();
  }
}

/** The result as a text table. */
export function parallelTable(r: ParallelResult): string {
  const head = ['case', 'what', 'threads', 'median s', 'min s', 'max s', 'MB/s', 'speed-up', 'CPU s', 'peak RSS MiB'];
  const rows = r.summaries.map((s) => [
    PARALLEL_CASE,
    s.kind === 'library' ? 'decode (streamFile)' : 'etw-decode summary',
    String(s.threads),
    s.median.toFixed(3),
    s.min.toFixed(3),
    s.max.toFixed(3),
    (r.file.bytes / 1e6 / s.median).toFixed(0),
    s.speedup === null ? '' : `${s.speedup.toFixed(2)}×`,
    s.cpuSeconds === undefined ? '' : s.cpuSeconds.toFixed(2),
    s.maxRssBytes === undefined ? '' : (s.maxRssBytes / 2 ** 20).toFixed(0),
  ]);
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((x) => x[i]!.length)));
  const line = (cells: string[]) => cells.map((c, i) => (i < 2 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('  ');
  const out = [line(head), ...rows.map(line)];
  if (r.nativeScaling) {
    const n = r.nativeScaling.processes;
    const secs = (p: number) => median(r.jobs.filter((j) => j.kind === 'native' && j.threads === p).map((j) => j.seconds));
    out.push(
      `machine: ${n} native decodes of this file at once (cdecode --window-mb 8, one process each; decode_s of the slowest) take ${secs(n).toFixed(3)} s, one alone ` +
        `${secs(1).toFixed(3)} s: ${r.nativeScaling.scaling.toFixed(2)}× the throughput of one (median of the rounds): what ${n} cores give native code, which maps its file and reads nothing`,
    );
  }
  if (r.bound) {
    const b = r.bound;
    const one = r.summaries.find((s) => s.kind === 'library' && s.speedup === null)!;
    out.push(
      `bound: ${one.threads} thread decodes in ${one.median.toFixed(3)} s with ${one.cpuSeconds!.toFixed(2)} CPU-s (its own thread ${b.mainCpuSeconds.toFixed(2)} s); ` +
        `${b.threads} cores can then give at most ${b.measured.toFixed(2)}× over it, and ${b.reads.toFixed(2)}× with no JIT, GC or idle time at all ` +
        `(reading the file from the page cache takes ${b.readCpuSeconds.toFixed(3)} CPU-s, which one thread overlaps on another core)`,
    );
  }
  return out.join('\n');
}
