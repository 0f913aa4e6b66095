// The named benchmark cases (modelled on protobuf-es's bench: named cases, a regex filter, seeded fixtures).
// Every case runs on both engines over the same in-memory input:
//   wasm       the WebAssembly engine (assembly/ via src/engine/wasm/)
//   reference  the pure-TypeScript reference decoder (src/engine/reference/)
// The scale case (a ≥ 1 GiB file through streamFile) lives in scale.ts; it is listed here for the filter.
import { closeSync, ftruncateSync, mkdirSync, openAsBlob, openSync, rmSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { decodeStream, decodeSync, streamFile } from '../src/node.js';
import type { DecodeResult } from '../src/node.js';
import { xpressDecompress as tsXpress } from '../src/engine/reference/xpress.js';
import { loadWasmModuleSync, type WasmExports } from '../src/engine/wasm/instance.js';
import type { MixedTraceOptions } from '../src/writer/index.js';
import { cpuUsage } from '../src/node.js';
import { cpuUsageBySorting } from '../test/helpers/cpu-usage-oracle.js';
import { compressedPayloads, corpusFile, realisticFixture, scheduleFixture, traceFixture, type XpressSet } from './fixtures.js';
import { deriveProcesses, threadsOf } from '../src/derive/lifetimes.js';
import { threadStates } from '../src/derive/thread-states.js';
import { processesOracle, threadsOracle } from '../test/helpers/lifetimes-oracle.js';
import { threadStatesOracle } from '../test/helpers/thread-states-oracle.js';
import { FORMAT_CASES } from './format-cases.js';
import { compressedBombs, template, tinyBuffers } from '../test/helpers/hostile.js';

export type EngineName = 'wasm' | 'reference';
export const ENGINES: readonly EngineName[] = ['wasm', 'reference'];

export type CaseGroup = 'walk' | 'decode' | 'tables' | 'derive' | 'xpress' | 'hostile' | 'blob' | 'scale' | 'format';

export interface CaseSettings {
  /** approximate size of each generated trace fixture */
  fixtureBytes: number;
  /** repository root (the corpus is looked for beside it unless $ETW_DECODE_CORPUS says where) */
  root: string;
}

/** What one iteration of a case processes (the same for both engines). */
export interface CaseWork {
  /** bytes read by one iteration (trace bytes; compressed payload bytes for xpress cases) */
  inputBytes: number;
  /** bytes produced (xpress: decompressed bytes; 0 for decode cases) */
  outputBytes: number;
  /** MB/s is computed from this side */
  throughputOf: 'input' | 'output';
  /** events walked (every header kind; xpress: buffers decompressed) */
  events: number;
  /** rows produced (cswitch + spinlock) */
  rows: number;
}

export interface PreparedCase {
  work: CaseWork;
  run: Record<EngineName, () => unknown>;
  /** anything worth printing under the table (e.g. the engines disagree) */
  notes: string[];
  /** called once the case has run (e.g. deletes its temporary file) */
  cleanup?: () => void;
  /** the trace bytes, when the native reference decoder (bench/native.ts) does the same work on them */
  nativeInput?: Uint8Array;
}

export interface BenchCase {
  name: string;
  group: CaseGroup;
  description: string;
  /** null: cannot run here (reason in `skipped`) */
  prepare(settings: CaseSettings): PreparedCase | { skipped: string };
}

// ------------------------------------------------------------------------------------------------
// decode cases: the bounded-memory streaming API over bytes in memory (rows are produced and lent to
// onRows, which counts and drops them), so the figure is decoding, not table building; tables/* cases
// build whole tables with decodeSync

const SEED = 0x5eed;

function countsOf(r: DecodeResult): { events: number; rows: number; diag: string } {
  const rows = r.summary.cswitch + r.summary.spinlock + r.summary.readythread + r.summary.threadEvents + r.summary.processEvents;
  return { events: r.summary.events, rows, diag: JSON.stringify(r.summary.diagnostics) };
}

/** Runs both engines once (warm-up and sanity: same event, row and counter totals). */
function checkEngines(bytes: Uint8Array, notes: string[], name: string): { events: number; rows: number } {
  const w = countsOf(decodeSync(bytes, { engine: 'wasm' }));
  const r = countsOf(decodeSync(bytes, { engine: 'reference' }));
  if (w.events !== r.events || w.rows !== r.rows || w.diag !== r.diag) {
    notes.push(
      `${name}: the engines disagree (wasm ${w.events} events / ${w.rows} rows, reference ${r.events} events / ${r.rows} rows` +
        `${w.diag !== r.diag ? ', different diagnostic counters' : ''}); run test/differential.test.ts`,
    );
  }
  return { events: r.events, rows: r.rows };
}

/** The bounded-memory decode with a consumer that counts the rows and drops them: it borrows them (views
 *  into the engine's output, no copy), as a consumer that aggregates or serializes each chunk would. */
function streamRunner(bytes: Uint8Array, engine: EngineName): () => Promise<number> {
  return async () => {
    let rows = 0;
    await decodeStream(bytes, {
      engine,
      threads: 1, // the one-thread kernel (parallel/1gib measures threads)
      rows: 'borrow',
      onRows: (t) => {
        rows += t.cswitch.length + t.spinlock.length + t.readythread.length + t.threadEvents.length + t.processEvents.length;
      },
    });
    return rows;
  };
}

function traceCase(
  name: string,
  group: CaseGroup,
  description: string,
  options: Omit<MixedTraceOptions, 'targetBytes'>,
  fixtureName: string,
): BenchCase {
  return {
    name,
    group,
    description,
    prepare(s) {
      const f = traceFixture(fixtureName, { ...options, targetBytes: s.fixtureBytes });
      const notes: string[] = [];
      const { events, rows } = checkEngines(f.bytes, notes, name);
      return {
        work: { inputBytes: f.bytes.length, outputBytes: 0, throughputOf: 'input', events, rows },
        run:
          group === 'tables'
            ? { wasm: () => decodeSync(f.bytes, { engine: 'wasm' }), reference: () => decodeSync(f.bytes, { engine: 'reference' }) }
            : { wasm: streamRunner(f.bytes, 'wasm'), reference: streamRunner(f.bytes, 'reference') },
        notes,
        nativeInput: f.bytes,
      };
    },
  };
}

// ------------------------------------------------------------------------------------------------
// scheduling cases: a simulated schedule (Thread/Process rundowns and lifetimes, ReadyThread wake-ups,
// CSwitch and compact switches) — the decoders of issue 9 and the cpuUsage derivation

function scheduleDecodeCase(): BenchCase {
  return {
    name: 'decode/sched',
    group: 'decode',
    description: 'a simulated schedule: CSwitch and compact switches, ReadyThread, Thread/Process events (+ threads/processes lifetimes)',
    prepare(s) {
      const bytes = scheduleFixture(s.fixtureBytes);
      const notes: string[] = [];
      const { events, rows } = checkEngines(bytes, notes, 'decode/sched');
      const r = decodeSync(bytes);
      notes.push(
        `decode/sched: ${(bytes.length / 2 ** 20).toFixed(1)} MiB, ${r.summary.cswitch} switches, ${r.summary.readythread} ReadyThread, ` +
          `${r.summary.threadEvents} Thread and ${r.summary.processEvents} Process events → ${r.summary.threads} threads, ${r.summary.processes} processes`,
      );
      return {
        work: { inputBytes: bytes.length, outputBytes: 0, throughputOf: 'input', events, rows },
        run: { wasm: streamRunner(bytes, 'wasm'), reference: streamRunner(bytes, 'reference') },
        notes,
      };
    },
  };
}

function stacksCases(): BenchCase[] {
  return [
    {
      name: 'decode/stacks',
      group: 'decode',
      description: 'a simulated schedule with SampledProfile, images and stacks (StackWalk after every CSwitch and ReadyThread, stack keys after samples): the decode of the new tables beside the core ones; native decodes the switches only',
      prepare(s) {
        const bytes = scheduleFixture(s.fixtureBytes, true);
        const notes: string[] = [];
        const { events, rows } = checkEngines(bytes, notes, 'decode/stacks');
        const r = decodeSync(bytes);
        notes.push(
          `decode/stacks: ${(bytes.length / 2 ** 20).toFixed(1)} MiB, ${r.summary.cswitch} switches, ${r.summary.samples} samples, ` +
            `${r.summary.stackEvents} stack events with ${r.summary.stackEventFrames} frames, ${r.summary.imageEvents} image events`,
        );
        return {
          work: { inputBytes: bytes.length, outputBytes: 0, throughputOf: 'input', events, rows },
          run: { wasm: streamRunner(bytes, 'wasm'), reference: streamRunner(bytes, 'reference') },
          notes,
          nativeInput: bytes,
        };
      },
    },
  ];
}

function cpuUsageCase(): BenchCase {
  return {
    name: 'derive/cpuUsage',
    group: 'derive',
    description: 'the cpuUsage table from decoded tables: "wasm" column = the derivation (cpuUsage()), "reference" = the test oracle that sorts everything (test/helpers/cpu-usage-oracle.ts)',
    prepare(s) {
      const r = decodeSync(scheduleFixture(s.fixtureBytes));
      const rows = cpuUsage(r).length;
      return {
        work: { inputBytes: 0, outputBytes: 0, throughputOf: 'input', events: r.summary.cswitch + r.summary.readythread, rows },
        run: {
          wasm: () => cpuUsage(r).length,
          reference: () => cpuUsageBySorting(r.cswitch, r.readythread, r.threads).length,
        },
        notes: [`derive/cpuUsage: ${rows} rows from ${r.summary.cswitch} switches and ${r.summary.readythread} ready events`],
      };
    },
  };
}

// ------------------------------------------------------------------------------------------------
// realistic cases: the writer's realistic trace (thread churn, SetName, rundowns, samples, hundreds of
// event kinds beside the switches), whose identity events are what made summary slow

function realisticTablesCase(): BenchCase {
  return {
    name: 'tables/realistic',
    group: 'tables',
    description: 'decodeSync on the realistic trace: decode, string columns, whole tables, threads/processes lifetimes',
    prepare(s) {
      const bytes = realisticFixture(s.fixtureBytes);
      const notes: string[] = [];
      const { events, rows } = checkEngines(bytes, notes, 'tables/realistic');
      const r = decodeSync(bytes);
      notes.push(
        `tables/realistic: ${(bytes.length / 2 ** 20).toFixed(1)} MiB, ${r.summary.threadEvents} Thread and ${r.summary.processEvents} Process events ` +
          `→ ${r.summary.threads} threads, ${r.summary.processes} processes; ${r.summary.cswitch} switches, ${r.summary.samples} samples, ${r.summary.eventsByKind.length} event kinds`,
      );
      return {
        work: { inputBytes: bytes.length, outputBytes: 0, throughputOf: 'input', events, rows },
        run: { wasm: () => decodeSync(bytes, { engine: 'wasm' }), reference: () => decodeSync(bytes, { engine: 'reference' }) },
        notes,
        nativeInput: bytes,
      };
    },
  };
}

function lifetimesCase(): BenchCase {
  return {
    name: 'derive/lifetimes',
    group: 'derive',
    description: 'threads and processes from the realistic trace\'s Thread/Process events (ns/event: per event): "wasm" column = the derivations (the threads by the WebAssembly core, a new instance each run), "reference" = the row-by-row oracle (test/helpers/lifetimes-oracle.ts)',
    prepare(s) {
      const r = decodeSync(realisticFixture(s.fixtureBytes));
      const events = r.threadEvents.length + r.processEvents.length;
      return {
        work: { inputBytes: 0, outputBytes: 0, throughputOf: 'input', events, rows: r.threads.length + r.processes.length },
        run: {
          wasm: () => threadsOf(r.threadEvents).length + deriveProcesses(r.processEvents).length,
          reference: () => threadsOracle(r.threadEvents).length + processesOracle(r.processEvents).length,
        },
        notes: [`derive/lifetimes: ${r.threads.length} threads and ${r.processes.length} processes from ${events} events`],
      };
    },
  };
}

function threadStatesCase(): BenchCase {
  return {
    name: 'derive/threadStates',
    group: 'derive',
    description: 'threadStates of the realistic trace (ns/row: per row): "wasm" column = the derivation, "reference" = the oracle with objects and BigInts (test/helpers/thread-states-oracle.ts)',
    prepare(s) {
      const r = decodeSync(realisticFixture(s.fixtureBytes));
      const rows = threadStates(r).length;
      return {
        work: { inputBytes: 0, outputBytes: 0, throughputOf: 'input', events: r.cswitch.length + r.readythread.length, rows },
        run: { wasm: () => threadStates(r).length, reference: () => threadStatesOracle(r.cswitch, r.readythread, r.threads).length },
        notes: [`derive/threadStates: ${rows} rows from ${r.cswitch.length} switches and ${r.readythread.length} ReadyThread events`],
      };
    },
  };
}

// ------------------------------------------------------------------------------------------------
// xpress cases: decompression alone (MS-XCA Plain LZ77), MB/s of output

function xpressCase(name: string, description: string, load: (s: CaseSettings) => XpressSet | string): BenchCase {
  return {
    name,
    group: 'xpress',
    description,
    prepare(s) {
      const set = load(s);
      if (typeof set === 'string') return { skipped: set };
      if (set.sources.length === 0) return { skipped: `${set.name}: no compressed buffers` };
      const notes: string[] = [];

      // TypeScript reference: one reusable output buffer
      const tsOut = new Uint8Array(set.maxOutput);
      const ts = (): number => {
        let total = 0;
        for (let i = 0; i < set.sources.length; i++) {
          const n = tsXpress(set.sources[i]!, tsOut.subarray(0, set.outputLengths[i]!));
          if (n < 0) throw new Error(`${name}: reference xpressDecompress failed on payload ${i} (${n})`);
          total += n;
        }
        return total;
      };

      // WebAssembly export: payloads packed into the instance's input window, one output region after them
      const x = new WebAssembly.Instance(loadWasmModuleSync(), {}).exports as unknown as WasmExports;
      const window = set.inputBytes + set.maxOutput + 64;
      x.init(window, 0);
      if (x.inputPtr() === 0) return { skipped: `${name}: could not allocate ${window} bytes of wasm memory` };
      const base = x.inputPtr() >>> 0;
      new Uint8Array(x.memory.buffer, base, set.inputBytes).set(set.packed);
      const srcPtr: number[] = [];
      let at = base;
      for (const src of set.sources) {
        srcPtr.push(at);
        at += src.length;
      }
      const dst = (base + set.inputBytes + 15) & ~15;
      const wasm = (): number => {
        let total = 0;
        for (let i = 0; i < srcPtr.length; i++) {
          const n = x.xpressDecompress(srcPtr[i]!, set.sources[i]!.length, dst, set.outputLengths[i]!);
          if (n < 0) throw new Error(`${name}: wasm xpressDecompress failed on payload ${i} (${n})`);
          total += n;
        }
        return total;
      };

      // both produce the same bytes (checked on every payload once)
      for (let i = 0; i < set.sources.length; i++) {
        const len = set.outputLengths[i]!;
        const a = tsXpress(set.sources[i]!, tsOut.subarray(0, len));
        const b = x.xpressDecompress(srcPtr[i]!, set.sources[i]!.length, dst, len);
        const same = a === b && Buffer.compare(tsOut.subarray(0, len), new Uint8Array(x.memory.buffer, dst, len)) === 0;
        if (!same) {
          notes.push(`${name}: payload ${i} decompresses differently (reference ${a}, wasm ${b})`);
          break;
        }
      }
      notes.push(
        `${name}: ${set.sources.length} buffers, ${(set.inputBytes / 2 ** 20).toFixed(2)} MiB → ${(set.outputBytes / 2 ** 20).toFixed(2)} MiB ` +
          `(ratio ${(set.outputBytes / set.inputBytes).toFixed(2)})`,
      );
      return {
        work: {
          inputBytes: set.inputBytes,
          outputBytes: set.outputBytes,
          throughputOf: 'output',
          events: set.sources.length,
          rows: 0,
        },
        run: { wasm, reference: ts },
        notes,
      };
    },
  };
}

// ------------------------------------------------------------------------------------------------
// hostile cases (issue 13): crafted files that claim far more work than they hold (test/helpers/hostile.ts),
// written to os.tmpdir() and decoded as `etw-decode summary FILE` does: streamFile, rows discarded. The
// figure to watch is the time per file (median ms); work must stay proportional to the file's real content.

/** What a hostile case writes: bytes, or a sparse file of `sparseBytes` starting with `head`. */
type HostileInput = { bytes: Uint8Array } | { head: Uint8Array; sparseBytes: number };

function hostileCase(name: string, description: string, make: (quick: boolean) => HostileInput): BenchCase {
  return {
    name,
    group: 'hostile',
    description,
    prepare(s) {
      const quick = s.fixtureBytes < 32 << 20;
      const input = make(quick);
      const dir = join(tmpdir(), 'etw-decode-bench');
      mkdirSync(dir, { recursive: true });
      const path = join(dir, `${name.replace(/\W+/g, '-')}${quick ? '-quick' : ''}.etl`);
      const fd = openSync(path, 'w');
      let size: number;
      try {
        if ('bytes' in input) {
          writeSync(fd, input.bytes);
          size = input.bytes.length;
        } else {
          writeSync(fd, input.head);
          ftruncateSync(fd, input.sparseBytes);
          size = input.sparseBytes;
        }
      } finally {
        closeSync(fd);
      }
      const notes: string[] = [];
      // both engines once, in memory (a sparse file: only its header buffer decodes)
      const { events, rows } = checkEngines('bytes' in input ? input.bytes : input.head, notes, name);
      const run = (engine: EngineName) => () => streamFile(path, { engine });
      return {
        work: { inputBytes: size, outputBytes: 0, throughputOf: 'input', events, rows },
        run: { wasm: run('wasm'), reference: run('reference') },
        notes,
        cleanup: () => rmSync(path, { force: true }),
      };
    },
  };
}

export const HOSTILE_CASES: readonly BenchCase[] = [
  hostileCase('hostile/descending-seq', '100 k tiny buffers (0x70 bytes) whose SequenceNumbers descend: decode order = reverse file order', (q) => ({
    bytes: tinyBuffers(q ? 20_000 : 100_000, 'descending'),
  })),
  hostileCase('hostile/alternating-seq', '200 k tiny buffers whose SequenceNumbers alternate between the two file halves', (q) => ({
    bytes: tinyBuffers(q ? 40_000 : 200_000, 'alternating'),
  })),
  hostileCase('hostile/corrupt-every-buffer', '50 k tiny buffers, each followed by a corrupt 0x48-byte header (a resync after every buffer)', (q) => ({
    bytes: tinyBuffers(q ? 10_000 : 50_000, 'ascending', true),
  })),
  hostileCase('hostile/tiny-buffers', '3 M tiny buffers in order (336 MB): per-buffer costs of framing and decoding', (q) => ({
    bytes: tinyBuffers(q ? 300_000 : 3_000_000, 'ascending'),
  })),
  hostileCase('hostile/compressed-bomb', '20 compressed buffers of ~8 KB whose XPRESS streams claim 64 MiB of compact batches each (logger BufferSize 64 KiB)', () => ({
    bytes: compressedBombs(20, (64 << 20) - 0x48, 'compact'),
  })),
  hostileCase('hostile/compressed-full', '20 compressed buffers of ~8 KB that expand to exactly the logger BufferSize (64 KiB) of compact batches', () => ({
    bytes: compressedBombs(20, 0x10000 - 0x48, 'compact'),
  })),
  hostileCase('hostile/compressed-zeros', '1000 compressed buffers of ~100 bytes whose XPRESS streams claim 64 MiB of zeros each', () => ({
    bytes: compressedBombs(1000, (64 << 20) - 0x48, 'zeros'),
  })),
  hostileCase('hostile/sparse-zeros', 'a header buffer, then zeros to 4 GiB (a sparse file): one resync scan over the zeros', (q) => ({
    head: template().header,
    sparseBytes: q ? 512 << 20 : 4 * 2 ** 30,
  })),
];

// ------------------------------------------------------------------------------------------------
// blob cases (issue 11): decoding a File-backed Blob (Node's fs.openAsBlob, the path browsers take with a
// File) against the same bytes in memory. The "wasm" column is the Blob, the "reference" column the
// bytes in memory — both with the wasm engine — so the ratio column is Blob speed / in-memory speed.

function blobCase(name: string, description: string, file: string): BenchCase {
  return {
    name,
    group: 'blob',
    description,
    prepare(s) {
      const bytes = corpusFile(file, s.root);
      if (!bytes) return { skipped: `${file} not found ($ETW_DECODE_CORPUS or ../shared/corpus/real)` };
      const dir = join(tmpdir(), 'etw-decode-bench');
      mkdirSync(dir, { recursive: true });
      const path = join(dir, `${name.replace(/\W+/g, '-')}.etl`);
      const fd = openSync(path, 'w');
      try {
        writeSync(fd, bytes);
      } finally {
        closeSync(fd);
      }
      const notes: string[] = [];
      const { events, rows } = checkEngines(bytes, notes, name);
      let blob: Blob | undefined;
      const count = (t: { cswitch: { length: number }; spinlock: { length: number } }) => t.cswitch.length + t.spinlock.length;
      return {
        work: { inputBytes: bytes.length, outputBytes: 0, throughputOf: 'input', events, rows },
        run: {
          wasm: async () => {
            blob ??= await openAsBlob(path);
            let n = 0;
            await decodeStream(blob, { rows: 'borrow', onRows: (t) => void (n += count(t)) });
            return n;
          },
          reference: async () => {
            let n = 0;
            await decodeStream(bytes, { rows: 'borrow', onRows: (t) => void (n += count(t)) });
            return n;
          },
        },
        notes,
        cleanup: () => rmSync(path, { force: true }),
      };
    },
  };
}

// ------------------------------------------------------------------------------------------------

const MIXED: Omit<MixedTraceOptions, 'targetBytes'> = { seed: SEED, cpus: 4 }; // default mix: cswitch 3, compact 4, spinlock 1, noise 2

export const SCALE_CASE = 'scale/mixed-1GiB';

export const CASES: readonly BenchCase[] = [
  traceCase(
    'walk/noise',
    'walk',
    'buffer walk only: noise events of every header kind (no CSwitch, compact or SpinLock), ~110 B/event',
    { seed: SEED + 1, cpus: 4, mix: { noise: 1 } },
    'noise',
  ),
  traceCase('decode/cswitch', 'decode', 'CSwitch events only (v4 85 %, v2/v3/v1), 1 row per event', { seed: SEED + 2, cpus: 4, mix: { cswitch: 1 } }, 'cswitch'),
  traceCase(
    'decode/compact',
    'decode',
    'compact context-switch batches only (IDLE_SHORT/IDLE/LITE/FULL packets, ~7 B per row)',
    { seed: SEED + 3, cpus: 4, mix: { compact: 1 } },
    'compact',
  ),
  traceCase('decode/spinlock', 'decode', 'SpinLock events only (x64 layout)', { seed: SEED + 4, cpus: 4, mix: { spinlock: 1 } }, 'spinlock'),
  traceCase(
    'decode/compressed',
    'decode',
    'the realistic mix, every data buffer XPRESS-compressed (decompression + decode)',
    { ...MIXED, seed: SEED + 5, compress: true },
    'compressed',
  ),
  traceCase('decode/mixed', 'decode', 'realistic mix: CSwitch 3 : compact 4 : SpinLock 1 : noise 2 (event weights)', MIXED, 'mixed'),
  scheduleDecodeCase(),
  cpuUsageCase(),
  ...stacksCases(),
  realisticTablesCase(),
  lifetimesCase(),
  threadStatesCase(),
  traceCase(
    'tables/mixed',
    'tables',
    'decodeSync on the mixed trace: decode plus building whole tables (what decodeSync/decodeFile callers pay)',
    MIXED,
    'mixed',
  ),
  xpressCase('xpress/writer', 'decompression alone: the compressed buffers of the decode/compressed trace (writer output, greedy encoder)', (s) => {
    const f = traceFixture('compressed', { ...MIXED, seed: SEED + 5, compress: true, targetBytes: s.fixtureBytes });
    return compressedPayloads('writer trace', f.bytes);
  }),
  xpressCase('xpress/perfview-net', 'decompression alone: the compressed buffers of the real perfview-net.4.5.2.x64.etl (shared corpus)', (s) => {
    const file = corpusFile('perfview-net.4.5.2.x64.etl', s.root);
    return file ? compressedPayloads('perfview-net.4.5.2.x64.etl', file) : 'perfview-net.4.5.2.x64.etl not found ($ETW_DECODE_CORPUS or ../shared/corpus/real)';
  }),
  ...HOSTILE_CASES,
  blobCase(
    'blob/perfview-net',
    'perfview-net.4.5.2.x64.etl (4.9 MB, 359 compressed buffers of varying sizes) from a File-backed Blob (fs.openAsBlob): "wasm" column = Blob, "reference" = the bytes in memory (wasm engine both)',
    'perfview-net.4.5.2.x64.etl',
  ),
  ...FORMAT_CASES,
];

export const CASE_NAMES: readonly string[] = [...CASES.map((c) => c.name), SCALE_CASE];

export const SCALE_DESCRIPTION =
  'a ≥ 1 GiB mixed trace written to os.tmpdir() by generateTraceChunks, decoded with streamFile (rows dropped): throughput, peak RSS, and plain-read throughput of the same file';
