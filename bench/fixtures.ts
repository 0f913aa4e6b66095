// Seeded benchmark inputs: traces from the writer (src/writer), generated once per run and kept in memory,
// and sets of XPRESS-compressed buffer payloads (from a compressed writer trace or a real file).
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { generateMixedTrace, generateRealisticTraceChunks, simulateSchedule, writeTrace, type MixedTraceOptions } from '../src/writer/index.js';
import { findCorpus } from '../test/helpers/corpus.js';

export interface TraceFixture {
  name: string;
  bytes: Uint8Array;
  options: MixedTraceOptions;
  generateMs: number;
}

const traces = new Map<string, TraceFixture>();

/** The writer trace for `options` (generated on first use, then cached for the run). */
export function traceFixture(name: string, options: MixedTraceOptions): TraceFixture {
  const key = `${name}:${JSON.stringify(options)}`;
  let f = traces.get(key);
  if (!f) {
    const t0 = performance.now();
    const trace = generateMixedTrace(options);
    f = { name, bytes: trace.bytes, options, generateMs: performance.now() - t0 };
    traces.set(key, f);
  }
  return f;
}

const SEED = 0x5eed;

const realistic = new Map<number, Uint8Array>();
/**
 * The writer's realistic trace of about `bytes` (generateRealisticTraceChunks, the e2e bench's: compact
 * switches, ReadyThread, thread churn with SetName, rundowns, SampledProfile, SpinLock, hundreds of provider
 * event kinds; rates in bench/README.md), generated once per run.
 */
export function realisticFixture(bytes: number): Uint8Array {
  let f = realistic.get(bytes);
  if (!f) {
    const chunks = [...generateRealisticTraceChunks({ seed: SEED, targetBytes: bytes, cpus: 4 })];
    f = new Uint8Array(chunks.reduce((n, c) => n + c.length, 0));
    let at = 0;
    for (const c of chunks) {
      f.set(c, at);
      at += c.length;
    }
    realistic.set(bytes, f);
  }
  return f;
}

const schedules = new Map<string, Uint8Array>();
/**
 * A simulated schedule of about `bytes` (generated once per run); `profiled`: with SampledProfile, images and
 * stacks (StackWalk halves after CSwitch and ReadyThread, cached keys after samples).
 */
export function scheduleFixture(bytes: number, profiled = false): Uint8Array {
  const key = `${bytes}/${profiled}`;
  let f = schedules.get(key);
  if (!f) {
    // the simulation writes ~0.2 bytes per tick of duration on 8 CPUs (stacks and samples add about as much again)
    const duration = Math.round(bytes * (profiled ? 2.2 : 5.3));
    const extra = profiled ? { profileInterval: 1_000, images: true, stacks: true } : {};
    f = writeTrace(simulateSchedule({ seed: SEED + 9, cpus: 8, threads: 400, processes: 40, switchMode: 'mixed', duration, ...extra }).description).bytes;
    schedules.set(key, f);
  }
  return f;
}

// WMI_BUFFER_HEADER fields (docs/format.md §A.2); kept local so this file does not depend on generated code
const HEADER_SIZE = 0x48;
const BUFFER_SIZE = 0x00; // u32 stride to the next buffer
const SAVED_OFFSET = 0x04; // u32: compressed buffers: decompressed payload end (header included)
const BUFFER_FLAG = 0x34; // u16
const FLAG_COMPRESSED = 0x40;
const MAX_BUFFER_SIZE = 64 << 20;

/** The compressed payloads of a trace file and the size each decompresses to (docs/format.md §A.6). */
export interface XpressSet {
  name: string;
  /** compressed payloads, views into one contiguous copy (`packed`) */
  sources: Uint8Array[];
  packed: Uint8Array;
  /** decompressed size of each payload */
  outputLengths: number[];
  inputBytes: number;
  outputBytes: number;
  maxOutput: number;
}

/**
 * Every compressed buffer of `file` (BufferFlag & 0x40): input bytes [0x48, BufferSize) of the buffer,
 * output SavedOffset − 0x48 bytes. Buffers are followed at BufferSize strides; framing stops at the
 * first impossible header.
 */
export function compressedPayloads(name: string, file: Uint8Array): XpressSet {
  const v = new DataView(file.buffer, file.byteOffset, file.byteLength);
  const found: { at: number; len: number; out: number }[] = [];
  for (let pos = 0; pos + HEADER_SIZE <= file.length; ) {
    const size = v.getUint32(pos + BUFFER_SIZE, true);
    if (size < HEADER_SIZE || size > MAX_BUFFER_SIZE || pos + size > file.length) break;
    const flags = v.getUint16(pos + BUFFER_FLAG, true);
    const saved = v.getUint32(pos + SAVED_OFFSET, true);
    if (flags & FLAG_COMPRESSED && saved > HEADER_SIZE && saved <= MAX_BUFFER_SIZE) {
      found.push({ at: pos + HEADER_SIZE, len: size - HEADER_SIZE, out: saved - HEADER_SIZE });
    }
    pos += size;
  }
  const inputBytes = found.reduce((n, f) => n + f.len, 0);
  const packed = new Uint8Array(inputBytes);
  const sources: Uint8Array[] = [];
  let at = 0;
  for (const f of found) {
    packed.set(file.subarray(f.at, f.at + f.len), at);
    sources.push(packed.subarray(at, at + f.len));
    at += f.len;
  }
  const outputLengths = found.map((f) => f.out);
  return {
    name,
    sources,
    packed,
    outputLengths,
    inputBytes,
    outputBytes: outputLengths.reduce((n, x) => n + x, 0),
    maxOutput: outputLengths.reduce((m, x) => Math.max(m, x), 0),
  };
}

/** A real trace of the corpus ($ETW_DECODE_CORPUS, else ../shared/corpus/real beside `root`), or null when it is not there. */
export function corpusFile(file: string, root: string): Uint8Array | null {
  const dir = findCorpus(root);
  const p = dir && join(dir, file);
  return p && existsSync(p) ? new Uint8Array(readFileSync(p)) : null;
}
