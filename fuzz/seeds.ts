// Fuzz seeds: small traces from the writer (every option that changes the bytes: compression, pointer size,
// buffer sizes, event mixes) and the real corpus ($ETW_DECODE_CORPUS, else ../shared/corpus/real; files over
// 128 KiB cut to their first buffers), each with a map of its buffers and events so mutations can aim at
// headers, compact batches and compressed streams; apart from them, stackSeeds (simulated schedules with stacks).
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import * as L from '../src/generated/layout.js';
import { generateMixedTrace, simulateSchedule, writeTrace, type MixedTraceOptions } from '../src/writer/index.js';
import { findCorpus } from '../test/helpers/corpus.js';

export interface SeedBuffer {
  at: number;
  size: number;
  compressed: boolean;
}
export interface SeedEvent {
  at: number;
  size: number;
  /** HookId of SYSTEM/COMPACT/PERFINFO events, -1 for other kinds */
  hook: number;
}
export interface Seed {
  name: string;
  bytes: Uint8Array;
  buffers: SeedBuffer[];
  /** events of the uncompressed buffers */
  events: SeedEvent[];
}

/** Buffers at BufferSize strides and the events of the uncompressed ones (docs/format.md §A.1, §B.4). */
export function analyse(name: string, bytes: Uint8Array): Seed {
  const v = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const buffers: SeedBuffer[] = [];
  const events: SeedEvent[] = [];
  for (let pos = 0; pos + L.WMI_BUFFER_HEADER_SIZE <= bytes.length; ) {
    const size = v.getUint32(pos, true);
    if (size < L.WMI_BUFFER_HEADER_SIZE || pos + size > bytes.length) break;
    const compressed = (v.getUint16(pos + L.BUF_BUFFER_FLAG, true) & L.BUFFER_FLAG_COMPRESSED) !== 0;
    buffers.push({ at: pos, size, compressed });
    if (!compressed) {
      const filled = v.getUint32(pos + L.BUF_OFFSET, true);
      const end = pos + (filled >= L.WMI_BUFFER_HEADER_SIZE && filled <= size ? filled : size);
      for (let p = pos + L.WMI_BUFFER_HEADER_SIZE; p + 8 <= end; ) {
        const m = v.getUint32(p, true);
        if (m === L.END_OF_BUFFER_MARKER || (m & L.TRACE_HEADER_FLAG) === 0) break;
        const ht = (m >>> 16) & 0xff;
        const message = ((m >>> 24) & 0xd0) === 0x90;
        const info = message || ht >= L.HEADER_TYPE_COUNT ? 0 : L.headerInfo(ht);
        const perfinfo = info >> 4 === L.HC_PERFINFO;
        const n = message ? m & 0xffff : perfinfo ? v.getUint16(p + L.TH_SIZE, true) : v.getUint16(p, true);
        if (n < 8 || p + n > end || (!message && info === 0)) break;
        events.push({ at: p, size: n, hook: perfinfo ? v.getUint16(p + L.TH_HOOK_ID, true) : -1 });
        p += (n + 7) & ~7;
      }
    }
    pos += size;
  }
  return { name, bytes, buffers, events };
}

/** The writer seeds: a spread of options, 32–64 KB each. */
export function writerSeeds(): Seed[] {
  const configs: (Omit<MixedTraceOptions, 'seed'> & { name: string })[] = [
    { name: 'mixed-2k', targetBytes: 64_000, cpus: 2, bufferSize: 0x800 },
    { name: 'mixed-4k', targetBytes: 64_000, cpus: 4, bufferSize: 0x1000 },
    { name: 'mixed-8k-x86', targetBytes: 64_000, cpus: 3, bufferSize: 0x2000, pointerSize: 4 },
    { name: 'compact', targetBytes: 64_000, cpus: 2, bufferSize: 0x1000, mix: { compact: 1 } },
    { name: 'compact-cswitch', targetBytes: 64_000, cpus: 3, bufferSize: 0x1000, mix: { compact: 3, cswitch: 2 } },
    { name: 'spinlock', targetBytes: 48_000, cpus: 2, bufferSize: 0x1000, mix: { spinlock: 1, cswitch: 1 } },
    { name: 'compressed', targetBytes: 64_000, cpus: 2, bufferSize: 0x2000, compress: true },
    { name: 'compressed-compact', targetBytes: 80_000, cpus: 2, bufferSize: 0x1000, compress: true, mix: { compact: 1 } },
    { name: 'noise', targetBytes: 64_000, cpus: 1, bufferSize: 0x2000, mix: { noise: 1 } },
  ];
  return configs.map(({ name, ...o }, i) => analyse(`writer/${name}`, generateMixedTrace({ seed: 1000 + i, ...o }).bytes));
}

/**
 * Seeds with stacks (docs/format.md §H): StackWalk halves, key references, KeyDelete and KeyRundown after
 * switches, readies and samples, x64 and x86. Not among allSeeds (input i of seed S stays what it was):
 * `fuzz({ seeds: stackSeeds() })` and test/fuzz.test.ts run them.
 */
export function stackSeeds(): Seed[] {
  return ([8, 4] as const).map((pointerSize) => {
    const sim = simulateSchedule({ seed: 1100 + pointerSize, cpus: 2, duration: 60_000, profileInterval: 3_000, stacks: true, bufferSize: 0x1000, pointerSize });
    return analyse(`writer/stacks-x${pointerSize === 8 ? 64 : 86}`, writeTrace(sim.description).bytes);
  });
}

/** The real corpus (none if it is not there), files over `maxBytes` cut to their first whole buffers. */
export function corpusSeeds(root: string, maxBytes = 128 << 10): Seed[] {
  const dir = findCorpus(root);
  if (!dir) return [];
  return readdirSync(dir)
    .filter((f) => f.endsWith('.etl'))
    .sort()
    .map((f) => {
      const all = new Uint8Array(readFileSync(join(dir, f)));
      const whole = analyse(f, all);
      let end = all.length;
      if (end > maxBytes) {
        end = 0;
        for (const b of whole.buffers) if (b.at + b.size <= maxBytes || end === 0) end = b.at + b.size;
      }
      return analyse(`corpus/${f}`, all.slice(0, end));
    });
}
