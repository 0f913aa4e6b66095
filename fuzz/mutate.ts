// Mutations of a seed: bit flips (anywhere and in headers), header overwrites with boundary values,
// BufferSize claims (multiples, the rest of the file, low and high bit flips), logfile-header claims
// (BufferSize, NumberOfProcessors, build), buffer order around the header buffer, truncation, splicing
// (with another seed; buffers duplicated, dropped, swapped, reordered by SequenceNumber), byte insertion
// and deletion, compact-batch corruption and XPRESS corruption (damaged streams, wrong sizes, streams that
// expand far). Deterministic: the same Rng state gives the same input.
import * as L from '../src/generated/layout.js';
import { Rng } from '../src/writer/index.js';
import { xpressRepeat } from '../test/helpers/hostile.js';
import type { Seed } from './seeds.js';

const HEADER = L.WMI_BUFFER_HEADER_SIZE;
/** inputs never grow past this */
const MAX_BYTES = 1 << 20;

const U32_VALUES = [0, 1, 0x47, 0x48, 0x49, 0x50, 0x7f, 0x80, 0xff, 0x100, 0x400, 0x1000, 0x10000, 0xffff, 0x10001, 0x7fffffff, 0x80000000, 0xfffffffe, 0xffffffff, 0x1000000, 0x1000001, L.MAX_BUFFER_SIZE, L.MAX_BUFFER_SIZE + 1];

function interestingU32(rng: Rng, near: number[]): number {
  if (near.length && rng.chance(0.4)) return (rng.pick(near) + rng.int(-8, 8)) >>> 0;
  return rng.chance(0.8) ? rng.pick(U32_VALUES) : rng.next();
}

function concat(...parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

type Mutator = (b: Uint8Array, seed: Seed, rng: Rng, seeds: readonly Seed[]) => Uint8Array;

/** A buffer of the seed (its header is at `at` in the mutated bytes too as long as nothing shifted). */
const someBuffer = (seed: Seed, rng: Rng) => rng.pick(seed.buffers);

const MUTATORS: [name: string, weight: number, fn: Mutator][] = [
  [
    'bitflip',
    3,
    (b, _s, rng) => {
      for (let k = rng.int(1, 8); k > 0 && b.length; k--) b[rng.int(0, b.length - 1)]! ^= 1 << rng.int(0, 7);
      return b;
    },
  ],
  [
    'bitflip-header',
    3,
    (b, s, rng) => {
      for (let k = rng.int(1, 4); k > 0; k--) {
        const useEvent = s.events.length > 0 && rng.chance(0.5);
        const at = useEvent ? rng.pick(s.events).at + rng.int(0, 15) : someBuffer(s, rng).at + rng.int(0, HEADER + 7);
        if (at < b.length) b[at]! ^= 1 << rng.int(0, 7);
      }
      return b;
    },
  ],
  [
    'buffer-field',
    4,
    (b, s, rng) => {
      const buf = someBuffer(s, rng);
      const v = new DataView(b.buffer, b.byteOffset, b.byteLength);
      const field = rng.pick([L.BUF_BUFFER_SIZE, L.BUF_SAVED_OFFSET, L.BUF_OFFSET, L.BUF_BUFFER_FLAG, L.BUF_BUFFER_TYPE, L.BUF_SEQUENCE_NUMBER, L.BUF_CLIENT_CONTEXT]);
      if (buf.at + field + 8 > b.length) return b;
      const near = [buf.size, b.length - buf.at, L.WMI_BUFFER_HEADER_SIZE];
      if (field === L.BUF_BUFFER_FLAG || field === L.BUF_BUFFER_TYPE || field === L.BUF_CLIENT_CONTEXT) {
        v.setUint16(buf.at + field, rng.chance(0.5) ? rng.int(0, 0x7f) : rng.int(0, 0xffff), true);
      } else if (field === L.BUF_SEQUENCE_NUMBER) {
        v.setBigInt64(buf.at + field, rng.chance(0.5) ? BigInt(rng.int(-3, s.buffers.length + 3)) : rng.bigint64(), true);
      } else {
        v.setUint32(buf.at + field, interestingU32(rng, near), true);
      }
      return b;
    },
  ],
  [
    'event-field',
    3,
    (b, s, rng) => {
      if (!s.events.length) return b;
      const e = rng.pick(s.events);
      const v = new DataView(b.buffer, b.byteOffset, b.byteLength);
      if (e.at + 16 > b.length) return b;
      switch (rng.int(0, 3)) {
        case 0: // Size (SYSTEM/COMPACT/PERFINFO at +4, others at +0)
          v.setUint16(e.at + (e.hook >= 0 ? L.TH_SIZE : 0), rng.pick([0, 1, 7, 8, 0x10, 0x18, e.size - 1, e.size + 1, e.size + 8, 0xffff, rng.int(0, 0xffff)]), true);
          break;
        case 1: // marker: header type, flags, version
          b[e.at + rng.int(0, 3)] = rng.chance(0.5) ? rng.int(0, 255) : rng.pick([0x00, 0x01, 0x02, 0x10, 0x11, 0x0a, 0x0b, 0x12, 0x13, 0x14, 0x15, 0xc0, 0x80, 0x90, 0xff]);
          break;
        case 2: // HookId: make it one of the decoded kinds
          if (e.hook >= 0) v.setUint16(e.at + L.TH_HOOK_ID, rng.pick([L.HOOK_CSWITCH, L.HOOK_COMPCS, L.HOOK_SPINLOCK, L.HOOK_HEADER, L.HOOK_HEADER_EXTENSION]), true);
          break;
        default: // payload bytes
          for (let k = rng.int(1, 6); k > 0; k--) b[Math.min(b.length - 1, e.at + rng.int(0, e.size - 1))] = rng.int(0, 255);
      }
      return b;
    },
  ],
  [
    'truncate',
    2,
    (b, s, rng) => {
      const near = rng.chance(0.5) ? someBuffer(s, rng).at + rng.int(-4, HEADER + 8) : rng.int(0, b.length);
      return b.slice(0, Math.max(0, Math.min(b.length, near)));
    },
  ],
  [
    'splice',
    2,
    (b, _s, rng, seeds) => {
      const other = rng.pick(seeds);
      const cutA = rng.chance(0.5) && _s.buffers.length ? rng.pick(_s.buffers).at : rng.int(0, b.length);
      const cutB = rng.chance(0.5) && other.buffers.length ? rng.pick(other.buffers).at : rng.int(0, other.bytes.length);
      return concat(b.subarray(0, cutA), other.bytes.subarray(cutB, cutB + rng.int(0, MAX_BYTES / 2)));
    },
  ],
  [
    'buffers',
    3,
    (b, s, rng) => {
      const bufs = s.buffers.filter((x) => x.at + x.size <= b.length);
      if (bufs.length < 2) return b;
      const x = rng.pick(bufs.slice(1));
      const y = rng.pick(bufs.slice(1));
      const v = new DataView(b.buffer, b.byteOffset, b.byteLength);
      switch (rng.int(0, 4)) {
        case 0: // duplicate a buffer
          return concat(b.subarray(0, x.at + x.size), b.subarray(x.at, x.at + x.size), b.subarray(x.at + x.size));
        case 1: // drop one
          return concat(b.subarray(0, x.at), b.subarray(x.at + x.size));
        case 2: // swap two of the same size
          if (x.size === y.size && x.at !== y.at) {
            const t = b.slice(x.at, x.at + x.size);
            b.copyWithin(x.at, y.at, y.at + y.size);
            b.set(t, y.at);
          }
          return b;
        case 3: // reverse or shuffle the SequenceNumbers
          if (rng.chance(0.5)) bufs.forEach((buf, i) => v.setBigInt64(buf.at + L.BUF_SEQUENCE_NUMBER, BigInt(bufs.length - i), true));
          else for (const buf of bufs) v.setBigInt64(buf.at + L.BUF_SEQUENCE_NUMBER, BigInt(rng.int(-2, bufs.length)), true);
          return b;
        default: // a buffer's processor
          v.setUint16(x.at + L.BUF_CLIENT_CONTEXT, rng.chance(0.5) ? rng.int(0, 3) : rng.int(0, 0xffff), true);
          return b;
      }
    },
  ],
  [
    'insert-delete',
    2,
    (b, _s, rng) => {
      const at = rng.int(0, b.length);
      if (rng.chance(0.5)) return concat(b.subarray(0, at), rng.chance(0.5) ? new Uint8Array(rng.int(1, 300)) : rng.bytes(rng.int(1, 64)), b.subarray(at));
      return concat(b.subarray(0, at), b.subarray(Math.min(b.length, at + rng.int(1, 600))));
    },
  ],
  [
    'fill',
    1,
    (b, _s, rng) => {
      const at = rng.int(0, b.length);
      const n = rng.int(1, 4096);
      b.fill(rng.pick([0, 0xff, rng.int(0, 255)]), at, Math.min(b.length, at + n));
      return b;
    },
  ],
  [
    'compact',
    4,
    (b, s, rng) => {
      const batches = s.events.filter((e) => e.hook === L.HOOK_COMPCS && e.at + e.size <= b.length);
      if (!batches.length) return b;
      const e = rng.pick(batches);
      const data = e.at + 0x10; // PERFINFO64 header (PERFINFO32: the same 0x10 bytes)
      const v = new DataView(b.buffer, b.byteOffset, b.byteLength);
      for (let k = rng.int(1, 4); k > 0; k--) {
        switch (rng.int(0, 4)) {
          case 0: // a packet byte
            b[Math.min(e.at + e.size - 1, data + L.CCS_HEADER_SIZE + rng.int(0, Math.max(0, e.size - 0x10 - L.CCS_HEADER_SIZE)))] = rng.int(0, 255);
            break;
          case 1: // a TidTable slot
            v.setUint32(data + L.CCS_TID_TABLE + 4 * rng.int(0, 15), rng.chance(0.5) ? 0 : rng.next(), true);
            break;
          case 2: // FirstTimeStamp
            v.setBigInt64(data + L.CCS_FIRST_TIMESTAMP, rng.chance(0.5) ? rng.bigint64() : v.getBigInt64(data, true) + BigInt(rng.int(-1e6, 1e6)), true);
            break;
          case 3: // packet type bits
            b[Math.min(e.at + e.size - 1, data + L.CCS_HEADER_SIZE + 2 * rng.int(0, 40))]! ^= rng.int(1, 3);
            break;
          default: // the event's Size
            v.setUint16(e.at + L.TH_SIZE, rng.int(0x10, e.size + 16), true);
        }
      }
      return b;
    },
  ],
  [
    'xpress',
    4,
    (b, s, rng) => {
      const comp = s.buffers.filter((x) => x.compressed && x.size > HEADER + 8 && x.at + x.size <= b.length);
      if (!comp.length) return b;
      const x = rng.pick(comp);
      const v = new DataView(b.buffer, b.byteOffset, b.byteLength);
      switch (rng.int(0, 4)) {
        case 0: // damage the stream
          for (let k = rng.int(1, 6); k > 0; k--) b[x.at + HEADER + rng.int(0, x.size - HEADER - 1)] = rng.int(0, 255);
          return b;
        case 1: // SavedOffset: a little off, up to the logger BufferSize, beyond it
          v.setUint32(x.at + L.BUF_SAVED_OFFSET, interestingU32(rng, [v.getUint32(x.at + L.BUF_SAVED_OFFSET, true), 0x10000, 0x2000]), true);
          return b;
        case 2: // BufferSize shorter than the stream (what follows becomes the next header)
          v.setUint32(x.at + L.BUF_BUFFER_SIZE, rng.int(HEADER, x.size), true);
          return b;
        case 3: {
          // a stream that expands: a pattern of this buffer's bytes (or zeros) repeated up to SavedOffset
          const total = rng.pick([0x1000, 0x2000 - HEADER, 0x10000 - HEADER, 0x20000, 1 << 20, (16 << 20) + 8]);
          const longest = Math.min(4096, x.size - HEADER, total - 300);
          const pattern = rng.chance(0.3) ? new Uint8Array(1) : b.slice(x.at + HEADER, x.at + HEADER + rng.int(1, longest));
          const stream = xpressRepeat(pattern, total);
          const head = b.slice(x.at, x.at + HEADER);
          const hv = new DataView(head.buffer);
          hv.setUint32(L.BUF_BUFFER_SIZE, HEADER + stream.length, true);
          hv.setUint32(L.BUF_SAVED_OFFSET, HEADER + total, true);
          hv.setUint32(L.BUF_OFFSET, HEADER + total, true);
          return concat(b.subarray(0, x.at), head, stream, b.subarray(x.at + x.size));
        }
        default: // the compressed flag on an uncompressed buffer, or off on a compressed one
          v.setUint16(x.at + L.BUF_BUFFER_FLAG, v.getUint16(x.at + L.BUF_BUFFER_FLAG, true) ^ L.BUFFER_FLAG_COMPRESSED, true);
          return b;
      }
    },
  ],
  [
    // docs/format.md §A.1 "size claims": one buffer's BufferSize claims more (or other) than it holds
    'claim',
    4,
    (b, s, rng) => {
      const bufs = s.buffers.filter((x) => x.at + 8 <= b.length);
      if (!bufs.length) return b;
      const x = rng.pick(bufs);
      const v = new DataView(b.buffer, b.byteOffset, b.byteLength);
      const next = s.buffers.find((y) => y.at === x.at + x.size);
      let claim: number;
      switch (rng.int(0, 5)) {
        case 0: // a multiple of its size
          claim = x.size * rng.int(2, 6);
          break;
        case 1: // the rest of the file
          claim = b.length - x.at;
          break;
        case 2: // a low bit flipped (0-15)
          claim = x.size ^ (1 << rng.int(0, 15));
          break;
        case 3: // a high bit flipped (16-31)
          claim = (x.size ^ (1 << rng.int(16, 31))) >>> 0;
          break;
        case 4: // exactly over the next buffer
          claim = x.size + (next?.size ?? x.size);
          break;
        default: // a little more, or anything
          claim = rng.chance(0.5) ? x.size + rng.int(1, 64) : rng.next();
      }
      v.setUint32(x.at + L.BUF_BUFFER_SIZE, claim >>> 0, true);
      return b;
    },
  ],
  [
    // §A.8: what the logfile header claims for the whole trace
    'logfile',
    2,
    (b, _s, rng) => {
      const p = logfilePayload(b);
      if (p < 0) return b;
      const v = new DataView(b.buffer, b.byteOffset, b.byteLength);
      switch (rng.int(0, 2)) {
        case 0: {
          const now = v.getUint32(p + L.LFH_BUFFER_SIZE, true);
          v.setUint32(p + L.LFH_BUFFER_SIZE, rng.pick([0, 0x48, 0x400, now >>> 1, now * 2, now * 3, 0x100000, 16 << 20, (16 << 20) + 1, rng.next()]) >>> 0, true);
          break;
        }
        case 1:
          v.setUint32(p + L.LFH_NUMBER_OF_PROCESSORS, rng.pick([0, 1, 2, 3, 64, 0x800, 0xffff, 0xffffffff, rng.next()]) >>> 0, true);
          break;
        default:
          v.setUint32(p + L.LFH_PROVIDER_VERSION, rng.pick([0, 7600, 9200, 10240, 17134, 18362, 19041, 22000, 26100, 0xffffffff, rng.next()]) >>> 0, true);
      }
      return b;
    },
  ],
  [
    // §A.7: SequenceNumbers around the header buffer's (decoded first whatever its own)
    'order',
    2,
    (b, s, rng) => {
      const bufs = s.buffers.filter((x) => x.at + L.BUF_SEQUENCE_NUMBER + 8 <= b.length);
      if (bufs.length < 2) return b;
      const v = new DataView(b.buffer, b.byteOffset, b.byteLength);
      const seq = (x: (typeof bufs)[number]) => v.getBigInt64(x.at + L.BUF_SEQUENCE_NUMBER, true);
      const setSeq = (x: (typeof bufs)[number], n: bigint) => v.setBigInt64(x.at + L.BUF_SEQUENCE_NUMBER, n, true);
      const header = bufs[0]!;
      switch (rng.int(0, 3)) {
        case 0: // the header's highest, the data buffers' negative
          setSeq(header, rng.chance(0.5) ? 1n << 40n : 0x7fffffffffffffffn);
          for (const x of bufs.slice(1)) setSeq(x, seq(x) - 1_000_000n);
          break;
        case 1: // the header's among the data buffers'
          setSeq(header, seq(rng.pick(bufs.slice(1))) + BigInt(rng.int(-1, 1)));
          break;
        case 2: // data buffers below the header's, in reverse
          bufs.slice(1).forEach((x, i) => setSeq(x, -BigInt(i + 1)));
          break;
        default: // one data buffer far below the rest
          setSeq(rng.pick(bufs.slice(1)), rng.chance(0.5) ? -(1n << 62n) : -1n);
      }
      return b;
    },
  ],
];

/** The payload of the logfile header event at 0x48 (SYSTEM header, no extended items), if it fits. */
function logfilePayload(b: Uint8Array): number {
  const at = HEADER + L.SYSTEM_HEADER_SIZE;
  return at + L.LFH_NUMBER_OF_PROCESSORS + 4 <= b.length ? at : -1;
}

const TOTAL_WEIGHT = MUTATORS.reduce((n, m) => n + m[1], 0);

function pickMutator(rng: Rng): [string, Mutator] {
  let r = rng.int(0, TOTAL_WEIGHT - 1);
  for (const [name, w, fn] of MUTATORS) {
    if (r < w) return [name, fn];
    r -= w;
  }
  return [MUTATORS[0]![0], MUTATORS[0]![2]];
}

/** One fuzz input: a seed with 1–4 mutations (`from`: the seed). */
export function mutate(seeds: readonly Seed[], rng: Rng): { bytes: Uint8Array; seed: string; from: Seed; ops: string[] } {
  const seed = rng.pick(seeds);
  let bytes = seed.bytes.slice();
  const ops: string[] = [];
  for (let k = rng.chance(0.6) ? 1 : rng.int(2, 4); k > 0; k--) {
    const [name, fn] = pickMutator(rng);
    bytes = fn(bytes, seed, rng, seeds) as Uint8Array<ArrayBuffer>;
    if (bytes.length > MAX_BYTES) bytes = bytes.slice(0, MAX_BYTES);
    ops.push(name);
  }
  return { bytes, seed: seed.name, from: seed, ops };
}

export const MUTATOR_NAMES = MUTATORS.map((m) => m[0]);
