// Reading a Blob or File (browsers; Node's fs.openAsBlob) as the decode's random-access input.
//
// A Blob read is a round trip whatever its size: `slice().arrayBuffer()` costs ~1 ms in Chromium (a
// trip through the browser process, which opens the file again) and ~0.1 ms in Node (open, stat, read,
// close on the thread pool), against ~4 ms/MiB and ~1 ms/MiB of bytes. So the source never makes one
// read per buffer header:
// - readMany (framing's batches of headers) coalesces positions closer than `gapBytes` into one slice
//   each (at most `runMax`, see SLICES: the slice size that reads fastest differs between Node and
//   browsers) and reads those slices concurrently: one or a few round trips per batch. The gap is the size
//   whose bytes cost as much as a round trip, estimated from the reads themselves (latency of small
//   reads x measured throughput), so Chromium reads a batch of 64 KiB buffers as one contiguous slice
//   while Node reads its 64 headers concurrently.
// - Framing's large reads (coalesced runs, contiguous reads of at least CACHE_MIN_READ) are kept, up to
//   `cacheBytes` (default 64 MiB) and only while there is room, for the decode (ReadCache): readInto takes
//   what they hold of its range and reads only the rest; a kept read is dropped once each of its bytes
//   was used. So the bytes framing read are not read again while they fit — all of them for Blobs of up
//   to ~64 MiB, the first ones of larger Blobs. Beyond that the decode reads the file a second time: its
//   rows cannot all wait for the end of framing (src/parallel holds them until framing has checked its
//   bet on the file order, with a bounded budget), nor can the file's bytes, so framing cannot be kept
//   just ahead of the decode. Nothing depends on what is kept: a range not held is read from the Blob.
// - readInto (the decode's windows, one per load) reads a window (what the cache does not hold of it) as
//   up to `readParts` concurrent slices (each of at least `partMin` bytes) into the target: Blob reads are
//   faster in parallel. A Blob's data reaches this thread in tasks (a chunk per task in Node), so the
//   source says `turns`: the decode lets other tasks run while a window is read ahead (runners.ts).
// - A Blob of at most WHOLE_MAX bytes is read whole with the first read (one round trip) and served
//   from memory after that: framing and decoding then cost what they cost on bytes in memory.
// Memory: what the caller asks for, the kept reads (at most cacheBytes) and at most WHOLE_MAX; never the file.
import type { AsyncSource } from '../decode/runners.js';

/** Blobs up to this size are read whole, once */
const WHOLE_MAX = 16 << 20;

/**
 * Slice sizes, by where the Blob is read: `runMax`, the most a coalesced slice of framing spans; readInto
 * splits a read into at most `readParts` concurrent slices of at least `partMin` bytes. Measured reading the
 * 1 GiB bench trace from a File-backed Blob (2-core VM), whole-file times:
 * - Node (fs.openAsBlob): 2 MiB slices 4 at a time 1.2–1.6 s, 8 MiB slices 2.2 s; 1 MiB x 8: 1.7 s;
 * - Chromium (a File from an <input>): 2 MiB slices 4 at a time 3.5 s, 8 MiB x 4 1.9 s, 32 MiB x 2 1.9 s.
 * `headerBatch`: buffer headers framing asks for at once (a batch is one or a few round trips: 1024 buffers
 * of 64 KiB are 8 slices of 8 MiB in flight in a browser, 256 are 8 of 2 MiB in Node; Chromium framed the
 * 1 GiB trace in 2.7–3.4 s with batches of 256, 2.2–2.5 s with 1024).
 * `windowBytes`: the decode's input window (the one-thread decode reads a window, and the next one ahead,
 * as `readParts` slices): in Chromium the 1 GiB trace's decode after framing took 3.9 s with 8 MiB windows
 * (2 slices of 4 MiB) and 3.1–3.6 s with 32 MiB windows (4 of 8 MiB); its input memory is 2 windows.
 * `stream`: readInto copies a slice's stream into the target chunk by chunk (Node: no buffer of the slice's
 * size made and dropped) rather than taking its arrayBuffer() (Chromium: 8 MiB slices streamed 4 at a time
 * 2.6 s, against 1.9 s).
 */
export const SLICES = {
  node: { runMax: 2 << 20, readParts: 4, partMin: 1 << 20, stream: true, headerBatch: 256, windowBytes: 8 << 20 },
  browser: { runMax: 8 << 20, readParts: 4, partMin: 4 << 20, stream: false, headerBatch: 1024, windowBytes: 32 << 20 },
} as const;
export type SliceProfile = keyof typeof SLICES;

/** Node, or a browser (anything else reads like one) */
function runtimeProfile(): SliceProfile {
  const p = (globalThis as { process?: { versions?: { node?: unknown } } }).process;
  return typeof p?.versions?.node === 'string' ? 'node' : 'browser';
}
/** bounds of the coalescing gap, and its value before anything was measured */
const GAP_MIN = 16 << 10;
const GAP_MAX = 1 << 20;
const GAP_DEFAULT = 128 << 10;
/** bytes of framing's large reads kept for the decode (see ReadCache), unless the caller asks for another number */
const CACHE_BYTES = 64 << 20;
/** reads at least this long are kept (framing's coalesced runs and contiguous reads; not single headers) */
const CACHE_MIN_READ = 256 << 10;
/** readMany keeps at most this many slices in flight */
const MANY_CONCURRENCY = 256;
/** reads up to this size time the round trip; reads from this size time the throughput */
const SMALL_READ = 4 << 10;
const LARGE_READ = 1 << 20;

export interface BlobSourceOptions {
  /** read Blobs of at most this many bytes whole, once (default 16 MiB; 0: never) */
  wholeMax?: number;
  /** fixed coalescing gap in bytes (default: estimated from the reads, see the file comment) */
  gapBytes?: number;
  /** bytes of framing's reads kept for the decode to use again (default 64 MiB; 0: none) */
  cacheBytes?: number;
  /** called with each slice read (start, end): for tests and measurements */
  onSlice?: (start: number, end: number) => void;
  /** slice sizes (SLICES; default: those of the runtime, Node or a browser) */
  profile?: SliceProfile;
}

/** Running estimates of a Blob's round-trip time and throughput, from timed reads. */
class ReadCost {
  /** ms per round trip (small reads); null until one was timed */
  latencyMs: number | null = null;
  /** bytes per ms (large reads, less the latency); null until one was timed */
  bytesPerMs: number | null = null;

  /** a read of `bytes` that took `ms` (large reads: possibly several slices in parallel) */
  note(bytes: number, ms: number): void {
    if (bytes <= SMALL_READ) {
      this.latencyMs = this.latencyMs === null ? ms : 0.75 * this.latencyMs + 0.25 * ms;
    } else if (bytes >= LARGE_READ) {
      const rate = bytes / Math.max(0.01, ms - (this.latencyMs ?? 0));
      this.bytesPerMs = this.bytesPerMs === null ? rate : 0.75 * this.bytesPerMs + 0.25 * rate;
    }
  }

  /** bytes that cost as much to read as one more round trip */
  gap(): number {
    if (this.latencyMs === null) return GAP_DEFAULT;
    const rate = this.bytesPerMs ?? 500_000; // 500 MB/s until a large read was timed
    return Math.min(GAP_MAX, Math.max(GAP_MIN, Math.round(this.latencyMs * rate)));
  }
}

/** A kept read: bytes at `start`, and how many of them were not yet used. */
interface Kept {
  start: number;
  bytes: Uint8Array;
  unused: number;
}

/**
 * Framing's large reads, kept for the decode's window reads (see the file comment): at most `capacity`
 * bytes, a read kept only while there is room for it, dropped once each of its bytes was used. Nothing
 * depends on what it holds: a range it does not hold is read from the Blob.
 */
export class ReadCache {
  /** kept reads, by start */
  private readonly kept: Kept[] = [];
  private held = 0;

  constructor(private readonly capacity: number) {}

  /** bytes held */
  get bytes(): number {
    return this.held;
  }

  keep(start: number, bytes: Uint8Array): void {
    if (bytes.length < CACHE_MIN_READ || this.held + bytes.length > this.capacity) return;
    let i = this.kept.length;
    while (i > 0 && this.kept[i - 1]!.start > start) i--;
    this.kept.splice(i, 0, { start, bytes, unused: bytes.length });
    this.held += bytes.length;
  }

  /**
   * Copies what it holds of [position, position + target.length) into target; returns the ranges it does
   * not hold, as [start, end) pairs (file positions, ascending).
   */
  take(position: number, target: Uint8Array): number[] {
    const end = position + target.length;
    const missing: number[] = [];
    let at = position;
    let emptied = false;
    for (const k of this.kept) {
      const kEnd = k.start + k.bytes.length;
      if (kEnd <= at) continue;
      if (k.start >= end) break;
      if (k.start > at) missing.push(at, k.start);
      const from = Math.max(at, k.start);
      const to = Math.min(end, kEnd);
      target.set(k.bytes.subarray(from - k.start, to - k.start), from - position);
      k.unused -= to - from;
      if (k.unused <= 0) emptied = true;
      at = to;
      if (at >= end) break;
    }
    if (at < end) missing.push(at, end);
    if (emptied) {
      for (let i = this.kept.length - 1; i >= 0; i--) {
        if (this.kept[i]!.unused > 0) continue;
        this.held -= this.kept[i]!.bytes.length;
        this.kept.splice(i, 1);
      }
    }
    return missing;
  }
}

/** A random-access source over a Blob or File (see the file comment). */
export function blobSource(blob: Blob, options: BlobSourceOptions = {}): AsyncSource {
  const size = blob.size;
  const sizes = SLICES[options.profile ?? runtimeProfile()];
  const cost = new ReadCost();
  const slice = async (start: number, end: number, timed: boolean): Promise<Uint8Array> => {
    options.onSlice?.(start, end);
    const t0 = timed ? performance.now() : 0;
    const bytes = new Uint8Array(await blob.slice(start, end).arrayBuffer());
    if (timed) cost.note(bytes.length, performance.now() - t0);
    return bytes;
  };
  /**
   * Reads [start, end) into `into` (end - start bytes): through the slice's stream where that pays (see
   * SLICES), its chunks copied where they belong, else its arrayBuffer(). Returns the bytes placed.
   */
  const sliceInto = async (start: number, end: number, into: Uint8Array): Promise<number> => {
    const part = blob.slice(start, end);
    if (!sizes.stream || typeof part.stream !== 'function') {
      const bytes = await slice(start, end, false);
      into.set(bytes.subarray(0, into.length));
      return Math.min(bytes.length, into.length);
    }
    options.onSlice?.(start, end);
    const reader = part.stream().getReader();
    let at = 0;
    try {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        const n = Math.min(value.length, into.length - at);
        into.set(n === value.length ? value : value.subarray(0, n), at);
        at += n;
        if (at >= into.length) break;
      }
    } finally {
      reader.releaseLock();
    }
    return at;
  };
  /**
   * Reads `ranges` ([start, end) pairs, ascending, within [position, position + target.length)) into
   * `target` (which holds the bytes from `position`), each as up to readParts concurrent slices of at
   * least partMin bytes. Returns the bytes from `position` that are placed: a short slice (the Blob changed
   * under us) ends them there.
   */
  const readRanges = async (position: number, target: Uint8Array, ranges: readonly number[]): Promise<number> => {
    const parts: number[] = [];
    for (let m = 0; m < ranges.length; m += 2) {
      const a = ranges[m]!;
      const len = ranges[m + 1]! - a;
      const n = Math.max(1, Math.min(sizes.readParts, Math.floor(len / sizes.partMin)));
      const step = Math.ceil(len / n);
      for (let k = 0; k < n; k++) parts.push(a + k * step, Math.min(a + len, a + (k + 1) * step));
    }
    const got = await Promise.all(
      Array.from({ length: parts.length / 2 }, (_, k) => sliceInto(parts[2 * k]!, parts[2 * k + 1]!, target.subarray(parts[2 * k]! - position, parts[2 * k + 1]! - position))),
    );
    let n = target.length;
    for (let k = 0; k < got.length; k++) {
      const a = parts[2 * k]!;
      if (got[k]! < parts[2 * k + 1]! - a) n = Math.min(n, a + got[k]! - position);
    }
    return n;
  };
  const clampEnd = (position: number, length: number) => Math.max(position, Math.min(size, position + Math.max(0, length)));
  if (size <= (options.wholeMax ?? WHOLE_MAX)) {
    // read whole, once, as a few concurrent slices (Node reads the 4.9 MB perfview-net trace in 5–7 ms as 4 slices, 12–14 ms as one)
    return wholeSource(size, async () => {
      const all = new Uint8Array(size);
      return all.subarray(0, await readRanges(0, all, [0, size]));
    });
  }
  const cache = new ReadCache(options.cacheBytes ?? CACHE_BYTES);

  return {
    size,
    headerBatch: sizes.headerBatch,
    turns: true,
    windowBytes: sizes.windowBytes,
    async read(position, length) {
      const bytes = await slice(position, clampEnd(position, length), true);
      cache.keep(position, bytes);
      return bytes;
    },

    async readInto(position, target) {
      const end = clampEnd(position, target.length);
      const total = end - position;
      const missing = cache.take(position, target.subarray(0, total));
      if (missing.length === 0) return total;
      const whole = missing.length === 2 && missing[0] === position && missing[1] === end;
      const t0 = performance.now();
      const n = await readRanges(position, target.subarray(0, total), missing);
      if (whole) cost.note(total, performance.now() - t0);
      return n;
    },

    async readMany(positions, length) {
      const gap = options.gapBytes ?? cost.gap();
      // runs of positions (in the order given, which framing gives ascending) read as one slice each
      const runs: { start: number; end: number; first: number; last: number }[] = [];
      for (let i = 0; i < positions.length; i++) {
        const p = positions[i]!;
        const end = clampEnd(p, length);
        const run = runs[runs.length - 1];
        if (run && p >= run.start && p - run.end <= gap && end - run.start <= sizes.runMax) {
          run.end = Math.max(run.end, end);
          run.last = i;
        } else {
          runs.push({ start: p, end, first: i, last: i });
        }
      }
      const out = new Array<Uint8Array>(positions.length);
      let next = 0;
      const worker = async (): Promise<void> => {
        while (next < runs.length) {
          const run = runs[next++]!;
          const bytes = await slice(run.start, run.end, runs.length === 1);
          cache.keep(run.start, bytes);
          for (let i = run.first; i <= run.last; i++) {
            const at = positions[i]! - run.start;
            out[i] = bytes.subarray(Math.min(at, bytes.length), Math.min(bytes.length, at + Math.max(0, length)));
          }
        }
      };
      await Promise.all(Array.from({ length: Math.min(MANY_CONCURRENCY, runs.length) }, worker));
      return out;
    },
  };
}

/** A small Blob: read whole at the first request, then served from memory. */
function wholeSource(size: number, readAll: () => Promise<Uint8Array>): AsyncSource {
  let all: Promise<Uint8Array> | null = null;
  const bytes = () => (all ??= readAll());
  const view = (b: Uint8Array, position: number, length: number) => b.subarray(Math.min(position, b.length), Math.min(b.length, position + Math.max(0, length)));
  return {
    size,
    read: async (position, length) => view(await bytes(), position, length),
    async readInto(position, target) {
      const src = view(await bytes(), position, target.length);
      target.set(src);
      return src.length;
    },
    readMany: async (positions, length) => {
      const b = await bytes();
      return positions.map((p) => view(b, p, length));
    },
  };
}
