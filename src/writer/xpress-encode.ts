// XPRESS (MS-XCA Plain LZ77) compression: produces the payload of a compressed ETL buffer
// (BufferFlag 0x40, docs/format.md §A.6) in the format of MS-XCA 2.3 "Plain LZ77 Compression".
//
// A simple, deterministic greedy encoder: a hash of the next 3 bytes indexes a head table, a
// ring-buffer chain (one link per position of the 8 KiB window) gives older candidates, the longest
// match (first found wins ties, i.e. the nearest) of length >= 3 within offset 1..8192 is taken,
// otherwise a literal. Output layout follows the MS-XCA 2.3 pseudocode exactly, including the shared
// length nibble and the final flag word padded with 1 bits (the end marker that size-unaware
// decoders stop on). Browser-safe (no node imports).

const MIN_MATCH = 3;
const MAX_OFFSET = 8192;
const WINDOW_MASK = MAX_OFFSET - 1;
const HASH_BITS = 15;
const MAX_CHAIN = 32;

function hash3(input: Uint8Array, i: number): number {
  const v = input[i] | (input[i + 1] << 8) | (input[i + 2] << 16);
  return Math.imul(v, 0x9e3779b1) >>> (32 - HASH_BITS);
}

/** Upper bound of the compressed size of `n` input bytes (every symbol costs at most its length). */
export function xpressCompressBound(n: number): number {
  return n + 4 * (Math.floor(n / 32) + 1);
}

/** Compresses `input` to an MS-XCA Plain LZ77 stream that decompresses to exactly `input`. */
export function xpressCompress(input: Uint8Array): Uint8Array {
  const n = input.length;
  const out = new Uint8Array(xpressCompressBound(n));
  let op = 4; // the first flag word is reserved at 0
  let flagPos = 0;
  let flags = 0;
  let flagCount = 0;
  let nibblePos = -1; // output position of a half-used shared nibble byte, or -1

  const writeU16 = (v: number): void => {
    out[op++] = v & 0xff;
    out[op++] = (v >>> 8) & 0xff;
  };
  const writeU32At = (pos: number, v: number): void => {
    out[pos] = v & 0xff;
    out[pos + 1] = (v >>> 8) & 0xff;
    out[pos + 2] = (v >>> 16) & 0xff;
    out[pos + 3] = (v >>> 24) & 0xff;
  };
  // Called after a symbol's bytes were written, so the next flag word follows that symbol.
  const pushFlag = (bit: number): void => {
    flags = ((flags << 1) | bit) >>> 0;
    flagCount++;
    if (flagCount === 32) {
      writeU32At(flagPos, flags);
      flagCount = 0;
      flags = 0;
      flagPos = op;
      op += 4;
    }
  };

  const head = new Int32Array(1 << HASH_BITS).fill(-1);
  const prev = new Int32Array(MAX_OFFSET).fill(-1);
  const insert = (i: number): void => {
    if (i + MIN_MATCH > n) return;
    const h = hash3(input, i);
    prev[i & WINDOW_MASK] = head[h];
    head[h] = i;
  };

  let i = 0;
  while (i < n) {
    let bestLen = 0;
    let bestOff = 0;
    if (i + MIN_MATCH <= n) {
      const maxLen = n - i;
      let cand = head[hash3(input, i)];
      let chain = MAX_CHAIN;
      while (cand >= 0 && i - cand <= MAX_OFFSET && chain-- > 0) {
        if (input[cand + bestLen] === input[i + bestLen]) {
          let len = 0;
          while (len < maxLen && input[cand + len] === input[i + len]) len++;
          if (len > bestLen) {
            bestLen = len;
            bestOff = i - cand;
            if (len === maxLen) break;
          }
        }
        const next = prev[cand & WINDOW_MASK];
        if (next >= cand) break; // the ring slot was reused by a newer position
        cand = next;
      }
    }

    if (bestLen < MIN_MATCH) {
      out[op++] = input[i];
      pushFlag(0);
      insert(i);
      i++;
      continue;
    }

    // Match: u16 metadata, then (length code 7) the shared nibble and the extension bytes.
    const l = bestLen - MIN_MATCH;
    const offBits = (bestOff - 1) << 3;
    if (l < 7) {
      writeU16(offBits | l);
    } else {
      writeU16(offBits | 7);
      const l2 = l - 7;
      const nib = l2 < 15 ? l2 : 15;
      if (nibblePos < 0) {
        nibblePos = op;
        out[op++] = nib;
      } else {
        out[nibblePos] |= nib << 4;
        nibblePos = -1;
      }
      if (l2 >= 15) {
        const l3 = l2 - 15;
        if (l3 < 255) {
          out[op++] = l3;
        } else {
          out[op++] = 255;
          if (l <= 0xffff) {
            writeU16(l);
          } else {
            writeU16(0);
            writeU32At(op, l);
            op += 4;
          }
        }
      }
    }
    pushFlag(1);
    const end = i + bestLen;
    for (; i < end; i++) insert(i);
  }

  // Final flag word: the used bits, then 1s (an end marker for decoders that do not know the size).
  // flagCount is 0..31 here; with 0 the whole word is the end marker.
  flags = flagCount === 0 ? 0xffffffff : ((flags << (32 - flagCount)) | (0xffffffff >>> flagCount)) >>> 0;
  writeU32At(flagPos, flags);
  return out.slice(0, op);
}
