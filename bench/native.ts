// The native reference engine of the benchmarks: the C decoder of the shared bench (`cdecode.c`, the
// yardstick of issue 12), built with the system's gcc into a temporary directory and run on the very bytes
// of a case (written to a temporary file), so each in-memory case prints how far the WebAssembly engine is
// from native code doing the same work in the same run. Optional: no gcc or no cdecode.c = no native rows
// (a note says why).
//
// What is compared: cdecode `--window-mb 8` (bounded memory: 8 MiB windows of buffers decoded into reused
// columns, like the streaming decode) `--repeat R` reports `decode_s`, the best of R decodes in one process
// (warm columns, file mapped and in the page cache; excludes process start and mapping). The figure kept
// is the median of `processes` such bests.
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface NativeDecoder {
  /** the built executable */
  exe: string;
  /** where it came from and how it was built (for the notes) */
  source: string;
  flags: string[];
  /** a directory for the fixture files (removed by dispose) */
  dir: string;
  dispose(): void;
}

export interface NativeRun {
  /** median over the processes of the best decode_s of each, seconds */
  decodeSeconds: number;
  /** every process's best decode_s */
  samples: number[];
  events: number;
  /** cswitch + spinlock rows */
  rows: number;
  problems: number;
  checksum: string;
}

/** Compiler flags (the shared bench README builds with -O3 -march=native; -O2 is what issue 12 measured). */
export const NATIVE_CFLAGS = (process.env.ETW_BENCH_NATIVE_CFLAGS ?? '-O2').split(/\s+/).filter(Boolean);

/** Finds cdecode.c next to the repository (../shared/bench) or at /work/shared/bench. */
export function nativeSource(root: string): string | null {
  for (const p of [join(root, '..', 'shared', 'bench', 'cdecode.c'), '/work/shared/bench/cdecode.c']) if (existsSync(p)) return p;
  return null;
}

/** Builds the native decoder, or says why it cannot. */
export function buildNative(root: string): NativeDecoder | { skipped: string } {
  if (process.env.ETW_BENCH_NATIVE === '0') return { skipped: 'ETW_BENCH_NATIVE=0' };
  const source = nativeSource(root);
  if (!source) return { skipped: 'cdecode.c not found (../shared/bench)' };
  const cc = process.env.CC ?? 'gcc';
  const probe = spawnSync(cc, ['--version'], { encoding: 'utf8' });
  if (probe.error || probe.status !== 0) return { skipped: `no C compiler (${cc}) on PATH` };
  const dir = mkdtempSync(join(tmpdir(), 'etw-decode-native-'));
  const exe = join(dir, 'cdecode');
  try {
    execFileSync(cc, [...NATIVE_CFLAGS, '-o', exe, source], { stdio: ['ignore', 'ignore', 'pipe'] });
  } catch (e) {
    rmSync(dir, { recursive: true, force: true });
    return { skipped: `${cc} ${NATIVE_CFLAGS.join(' ')} cdecode.c failed: ${String((e as { stderr?: Buffer }).stderr ?? e).slice(0, 200)}` };
  }
  return { exe, source, flags: NATIVE_CFLAGS, dir, dispose: () => rmSync(dir, { recursive: true, force: true }) };
}

function field(line: string, name: string): string {
  const m = new RegExp(`(?:^| )${name.replace(/[/]/g, '\\/')}=(\\S+)`).exec(line);
  if (!m) throw new Error(`cdecode output has no ${name}=: ${line.slice(0, 200)}`);
  return m[1]!;
}

/** Runs cdecode on a file: `processes` processes, each the best of `repeat` windowed decodes. */
export function runNativeFile(n: NativeDecoder, path: string, opts: { processes?: number; repeat?: number; windowMb?: number } = {}): NativeRun {
  const processes = opts.processes ?? 3;
  const repeat = opts.repeat ?? 5;
  const samples: number[] = [];
  let line = '';
  for (let i = 0; i < processes; i++) {
    const out = execFileSync(n.exe, [path, '--window-mb', String(opts.windowMb ?? 8), '--repeat', String(repeat)], { encoding: 'utf8' });
    line = out.split('\n').find((l) => l.startsWith('file='))!;
    samples.push(Number(field(line, 'decode_s')));
  }
  const sorted = [...samples].sort((a, b) => a - b);
  return {
    decodeSeconds: sorted[sorted.length >> 1]!,
    samples,
    events: Number(field(line, 'events')),
    rows: Number(field(line, 'cswitch_rows')) + Number(field(line, 'spinlock_rows')),
    problems: Number(field(line, 'problems')),
    checksum: field(line, 'checksum'),
  };
}

/** Writes `bytes` to a file of the native decoder's directory (once per name) and runs cdecode on it. */
export function runNativeBytes(n: NativeDecoder, name: string, bytes: Uint8Array, opts?: Parameters<typeof runNativeFile>[2]): NativeRun {
  const path = join(n.dir, `${name.replace(/\W+/g, '-')}.etl`);
  writeFileSync(path, bytes);
  try {
    return runNativeFile(n, path, opts);
  } finally {
    rmSync(path, { force: true });
  }
}
