// XPRESS (MS-XCA Plain LZ77) decompression, pure TypeScript reference: the payload of a compressed
// ETL buffer (BufferFlag 0x40, docs/format.md §A.6), algorithm per MS-XCA 2.4 "Plain LZ77 Decompression".
//
// Mirrors assembly/xpress.ts: same results, same error codes, and the same bytes written before an
// error. Written one flag bit at a time for clarity. Browser-safe (no node imports).
//
// Stream: a little-endian u32 flag word, read MSB first, gives one bit per symbol for the next 32
// symbols (0 = one literal byte, 1 = a match). A match is a u16 `m`: offset = (m >> 3) + 1
// (1..8192), length code = m & 7. Code < 7: length = code + 3. Code 7 takes an extra nibble; two
// code-7 matches share one nibble byte (the first uses its low half, the second its high half; the
// byte sits in the stream where the first one needed it). Nibble < 15: length = nibble + 10.
// Nibble 15: one more byte b; b < 255: length = b + 25. b = 255: a u16 v, and if v is 0 a u32 v;
// then v must be >= 22 and length = v + 3.
//
// Decoding stops as soon as dst.length bytes were produced (trailing input is ignored); running out
// of input before that is an error.

import * as L from '../../generated/layout.js';

/** Input bytes the last successful xpressDecompress read (where its stream ended). */
let inputRead = 0;

export function xpressInputRead(): number {
  return inputRead;
}

/**
 * Decompresses `src` into exactly `dst.length` bytes of `dst`.
 * Returns dst.length on success (xpressInputRead() then says how much input it read), otherwise a
 * negative L.XPRESS_E_* code.
 */
export function xpressDecompress(src: Uint8Array, dst: Uint8Array): number {
  inputRead = 0;
  const srcLen = src.length;
  const dstLen = dst.length;
  let ip = 0; // input position
  let op = 0; // output position
  let flags = 0; // current flag word
  let flagCount = 0; // flag bits not yet used (the next one is bit flagCount - 1)
  let nibblePos = -1; // input position of a half-used shared nibble byte, or -1

  while (op < dstLen) {
    if (flagCount === 0) {
      if (srcLen - ip < 4) return L.XPRESS_E_INPUT_TRUNCATED;
      flags = (src[ip] | (src[ip + 1] << 8) | (src[ip + 2] << 16) | (src[ip + 3] << 24)) >>> 0;
      ip += 4;
      flagCount = 32;
    }
    flagCount--;
    const isMatch = ((flags >>> flagCount) & 1) === 1;

    if (!isMatch) {
      if (ip >= srcLen) return L.XPRESS_E_INPUT_TRUNCATED;
      dst[op++] = src[ip++];
      continue;
    }

    if (srcLen - ip < 2) return L.XPRESS_E_INPUT_TRUNCATED;
    const m = src[ip] | (src[ip + 1] << 8);
    ip += 2;
    const offset = (m >>> 3) + 1;
    let length = m & 7;
    if (length < 7) {
      length += 3;
    } else {
      let nibble: number;
      if (nibblePos < 0) {
        if (ip >= srcLen) return L.XPRESS_E_INPUT_TRUNCATED;
        nibble = src[ip] & 15;
        nibblePos = ip;
        ip += 1;
      } else {
        nibble = src[nibblePos] >>> 4;
        nibblePos = -1;
      }
      if (nibble < 15) {
        length = nibble + 10;
      } else {
        if (ip >= srcLen) return L.XPRESS_E_INPUT_TRUNCATED;
        const b = src[ip];
        ip += 1;
        if (b < 255) {
          length = b + 25;
        } else {
          if (srcLen - ip < 2) return L.XPRESS_E_INPUT_TRUNCATED;
          let v = src[ip] | (src[ip + 1] << 8);
          ip += 2;
          if (v === 0) {
            if (srcLen - ip < 4) return L.XPRESS_E_INPUT_TRUNCATED;
            v = (src[ip] | (src[ip + 1] << 8) | (src[ip + 2] << 16) | (src[ip + 3] << 24)) >>> 0;
            ip += 4;
          }
          if (v < 22) return L.XPRESS_E_BAD_LENGTH;
          length = v + 3;
        }
      }
    }

    if (offset > op) return L.XPRESS_E_BAD_OFFSET;
    if (length > dstLen - op) return L.XPRESS_E_OUTPUT_OVERFLOW;
    // Byte by byte, so overlapping matches (offset < length) repeat the pattern.
    for (let i = 0; i < length; i++) {
      dst[op] = dst[op - offset];
      op++;
    }
  }
  inputRead = ip;
  return op;
}
