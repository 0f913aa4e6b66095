// XPRESS (MS-XCA Plain LZ77) decompression: the payload of a compressed ETL buffer
// (BufferFlag 0x40, docs/format.md §A.6), algorithm per MS-XCA 2.3/2.4 "Plain LZ77".
//
// Stream: a little-endian u32 flag word, read MSB first, gives one bit per symbol for the next 32
// symbols (0 = one literal byte, 1 = a match). A match is a u16 `m`: offset = (m >> 3) + 1
// (1..8192), length code = m & 7. Code < 7 means length = code + 3. Code 7 takes an extra nibble;
// two consecutive code-7 matches share one nibble byte (the first uses its low half, the second its
// high half; the byte sits in the stream where the first one needed it). Nibble < 15: length =
// nibble + 10. Nibble 15: one more byte b; b < 255: length = b + 25. b = 255: a u16 v, and if v is 0
// a u32 v; then v must be >= 22 and length = v + 3.
//
// We know the exact output size, so decoding stops as soon as dstLen bytes were produced; trailing
// input (the end-marker flag bits, padding) is ignored. Any other way of running out of input is an
// error. Pure pointer code: no allocation, no exceptions, never touches memory outside
// [src, src+srcLen) and [dst, dst+dstLen). src/engine/reference/xpress.ts mirrors it (same results, same
// error codes, same bytes written before an error).

import * as L from './layout';

// Copies exactly n bytes (n >= 1) between non-overlapping ranges (src and dst of xpressDecompress
// must not overlap either). Short copies use two possibly
// overlapping loads/stores of the widest fitting size: fewer branches than a byte loop and no call
// overhead of memory.copy. Both loads happen before the stores, and nothing outside [d, d+n) is
// written.
// @ts-ignore: decorator
@inline
function copyDisjoint(d: usize, s: usize, n: i32): void {
  if (n < 4) {
    if (n < 2) {
      store<u8>(d, load<u8>(s));
    } else {
      const a = load<u16>(s);
      const b = load<u16>(s + <usize>n - 2);
      store<u16>(d, a);
      store<u16>(d + <usize>n - 2, b);
    }
  } else if (n <= 8) {
    const a = load<u32>(s);
    const b = load<u32>(s + <usize>n - 4);
    store<u32>(d, a);
    store<u32>(d + <usize>n - 4, b);
  } else if (n <= 16) {
    const a = load<u64>(s);
    const b = load<u64>(s + <usize>n - 8);
    store<u64>(d, a);
    store<u64>(d + <usize>n - 8, b);
  } else {
    memory.copy(d, s, <usize>n);
  }
}

/** Input bytes the last successful xpressDecompress read (where its stream ended). */
let inputRead: i32 = 0;

export function xpressInputRead(): i32 {
  return inputRead;
}

/**
 * Decompresses `srcLen` bytes at `src` into exactly `dstLen` bytes at `dst`.
 * Returns dstLen on success (xpressInputRead() then says how much input it read), otherwise a negative
 * L.XPRESS_E_* code (bytes decoded before the error stay in dst). The two ranges must not overlap.
 */
export function xpressDecompress(src: usize, srcLen: i32, dst: usize, dstLen: i32): i32 {
  inputRead = 0;
  if (srcLen < 0 || dstLen < 0) return L.XPRESS_E_BAD_ARGS;
  let ip: i32 = 0; // input position (relative to src)
  let op: i32 = 0; // output position (relative to dst)
  let flags: u32 = 0; // remaining flag bits, next one in bit 31
  let flagCount: i32 = 0; // number of valid bits left in `flags`
  let nibblePos: i32 = -1; // input position of a half-used shared nibble byte, or -1

  while (op < dstLen) {
    if (flagCount == 0) {
      if (srcLen - ip < 4) return L.XPRESS_E_INPUT_TRUNCATED;
      flags = load<u32>(src + <usize>ip);
      ip += 4;
      flagCount = 32;
    }

    // Literal run: the number of leading zero flag bits (clz(0) = 32 >= flagCount).
    let run: i32 = <i32>clz<u32>(flags);
    if (run > flagCount) run = flagCount;
    if (run > 0) {
      const outLeft = dstLen - op; // > 0
      let n: i32 = run < outLeft ? run : outLeft;
      const inLeft = srcLen - ip;
      if (n > inLeft) {
        // The input ends inside this literal run: keep what there is, as the byte-wise TS does.
        if (inLeft > 0) copyDisjoint(dst + <usize>op, src + <usize>ip, inLeft);
        return L.XPRESS_E_INPUT_TRUNCATED;
      }
      copyDisjoint(dst + <usize>op, src + <usize>ip, n);
      op += n;
      ip += n;
      flagCount -= run; // if n < run the output is complete and the loop ends
      flags = run < 32 ? flags << <u32>run : 0;
      continue;
    }

    // Match (top flag bit is 1).
    flags <<= 1;
    flagCount -= 1;
    if (srcLen - ip < 2) return L.XPRESS_E_INPUT_TRUNCATED;
    const m: u32 = <u32>load<u16>(src + <usize>ip);
    ip += 2;
    const offset: i32 = <i32>(m >> 3) + 1;
    let length: i64 = <i64>(m & 7);
    if (length == 7) {
      let nib: i32;
      if (nibblePos < 0) {
        if (srcLen - ip < 1) return L.XPRESS_E_INPUT_TRUNCATED;
        nib = <i32>(load<u8>(src + <usize>ip) & 15);
        nibblePos = ip;
        ip += 1;
      } else {
        nib = <i32>(load<u8>(src + <usize>nibblePos) >> 4);
        nibblePos = -1;
      }
      if (nib == 15) {
        if (srcLen - ip < 1) return L.XPRESS_E_INPUT_TRUNCATED;
        const b: i32 = <i32>load<u8>(src + <usize>ip);
        ip += 1;
        if (b == 255) {
          if (srcLen - ip < 2) return L.XPRESS_E_INPUT_TRUNCATED;
          let v: u32 = <u32>load<u16>(src + <usize>ip);
          ip += 2;
          if (v == 0) {
            if (srcLen - ip < 4) return L.XPRESS_E_INPUT_TRUNCATED;
            v = load<u32>(src + <usize>ip);
            ip += 4;
          }
          if (v < 22) return L.XPRESS_E_BAD_LENGTH;
          length = <i64>v + 3;
        } else {
          length = <i64>(b + 25);
        }
      } else {
        length = <i64>(nib + 10);
      }
    } else {
      length += 3;
    }

    if (offset > op) return L.XPRESS_E_BAD_OFFSET;
    if (length > <i64>(dstLen - op)) return L.XPRESS_E_OUTPUT_OVERFLOW;
    const len: i32 = <i32>length;
    const out: usize = dst + <usize>op;
    if (offset >= len) {
      copyDisjoint(out, out - <usize>offset, len);
    } else if (len <= 16) {
      for (let i: i32 = 0; i < len; i++) {
        store<u8>(out + <usize>i, load<u8>(out + <usize>i - <usize>offset));
      }
    } else if (offset == 1) {
      memory.fill(out, load<u8>(out - 1), <usize>len);
    } else {
      // Overlapping match: the output repeats with period `offset`, so copying from `d` back, d a
      // multiple of offset, is exact and never overlaps when at most d bytes are copied.
      let d: usize = <usize>offset;
      let left: usize = <usize>len;
      let o: usize = out;
      while (left > 0) {
        const n: usize = left < d ? left : d;
        memory.copy(o, o - d, n);
        o += n;
        left -= n;
        d += n;
      }
    }
    op += len;
  }
  inputRead = ip;
  return op;
}
