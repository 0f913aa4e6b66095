// Options of every decode entry point, checked once: a bad value is one EtlError('BAD_OPTION') that says
// what is allowed.
import type { Engine, EngineKind } from './engine/engine.js';
import { EtlError } from './errors.js';

export interface DecodeOptions {
  /** 'wasm' (default) or the pure-TS 'reference' decoder */
  engine?: EngineKind;
  /** MaximumWaitReason for compact OldThreadStateWr (docs/format.md §D.5); default: from the trace's build number */
  bias?: number;
  /** input window per load in bytes (default 2 MiB; 512 KiB for bytes in memory; a Blob's own in Node and browsers) */
  windowBytes?: number;
  /** where the input came from, for the `traces` table's sourcePath (decodeFile/streamFile set it) */
  sourcePath?: string;
  /** called now and then with bytes done / total, per phase */
  onProgress?: (phase: string, done: number, total: number) => void;
  /**
   * Decoding threads for `decode`, `decodeStream`, `decodeFile` and `streamFile`; 1 = one thread. Default:
   * the available parallelism (os.availableParallelism() in Node, navigator.hardwareConcurrency in browsers)
   * where workers were measured to pay — a file of at least AUTO_MIN_BYTES (768 MiB) decoded without a rows
   * consumer, or of at least AUTO_MIN_BYTES_ROWS (2 GiB) with one: src/parallel/run.ts — and one thread otherwise. Given, it is used for inputs of 32 MiB or more. The
   * reference engine and `decodeSync` use one thread (README "All cores").
   */
  threads?: number;
  /** @internal tuning of the parallel decode (tests, benchmarks): src/parallel/run.ts */
  parallel?: ParallelTuning;
}

/** @internal see src/parallel/run.ts */
export interface ParallelTuning {
  /** partitions (default: a first one of 4 MiB, then about 4 per thread, 4 to 64 MiB each) */
  partitions?: number;
  /** decode positions (buffers in decode order) where partitions start, instead of `partitions` */
  cuts?: readonly number[];
  /** smallest input decoded in parallel (default 32 MiB) */
  minBytes?: number;
  /** bytes of rows each thread may decode ahead of the consumer (default 64 MiB; Infinity when every row is kept) */
  aheadBytes?: number;
  /** decoders in this thread only, no workers (tests) */
  inThread?: boolean;
  /** told what the parallel decode does, when (benchmarks, debugging) */
  log?: (event: string) => void;
}

/** Throws EtlError('BAD_OPTION') for an option value outside its range. */
export function checkOptions(options: DecodeOptions): void {
  const w = options.windowBytes;
  if (w !== undefined && (!Number.isInteger(w) || w < 0x1000 || w > 1 << 30)) {
    throw new EtlError('BAD_OPTION', `windowBytes must be an integer from 4096 to 2^30 (1 GiB), got ${w}`);
  }
  const n = options.threads;
  if (n !== undefined && (!Number.isInteger(n) || n < 1 || n > 1024)) {
    throw new EtlError('BAD_OPTION', `threads must be an integer from 1 to 1024, got ${n}`);
  }
  const b = options.bias;
  if (b !== undefined && (!Number.isInteger(b) || b < 1 || b > 63)) {
    throw new EtlError('BAD_OPTION', `bias must be an integer MaximumWaitReason in 1..63, got ${b}`);
  }
}

/** Applies the options that configure an engine (after checkOptions). */
export function configureEngine(engine: Engine, options: DecodeOptions): Engine {
  if (options.bias !== undefined) engine.setBiasOverride(options.bias);
  return engine;
}
