// The text formatter (build/text.wasm, embedded by scripts/embed-wasm.mjs; loaded by src/output/text-wasm.ts):
// CSV and JSON-lines rows of any table, the same bytes as the row loop of src/output/row-loop.ts (its
// TypeScript twin, which formats every table and every row this module leaves). An output stage, not a
// decoding one: no section of docs/format.md; its cells are layout.ts "Text output".
//
// JavaScript lays out one region at base(): the cells (TXT_CELL_BYTES each, the TXT_C_ fields), their
// names' and tick conversions' (TXT_T_) tables, the chunk's columns and the output. rows() formats rows
// until the output passes its limit, the chunk ends, or a cell this module does not write exactly as the
// twin would (a name not in the table, a tick value off the number path, a file offset that is no safe
// integer, text longer than the room left): that row is left for the twin (stopped() = TXT_STOP_ROW) and nothing of it is written.
import * as L from '../layout';

const K_U8 = L.TXT_K_U8;
const K_U16 = L.TXT_K_U16;
const K_U32 = L.TXT_K_U32;
const K_I8 = L.TXT_K_I8;
const K_I32 = L.TXT_K_I32;
const K_F64 = L.TXT_K_F64;
const K_I64 = L.TXT_K_I64;
const K_U64 = L.TXT_K_U64;
const K_STR = L.TXT_K_STR;
const K_NAME = L.TXT_K_NAME;
const K_TICKS = L.TXT_K_TICKS;
const K_ADDR = L.TXT_K_ADDR;
const HI_LIMIT: i64 = L.TXT_HI_LIMIT;

let stop: i32 = L.TXT_STOP_FULL;
let written: i32 = 0;

// ---- digit tables: 4 digits of v < 10^4 zero-padded, unpadded (from the low byte up) and their count
const PADDED: usize = memory.data(40000, 16);
const PLAIN: usize = memory.data(40000, 16);
const PLAIN_LENGTH: usize = memory.data(10000, 16);
const HEX: usize = memory.data(16);
let ready = false;

function tables(): void {
  for (let v: u32 = 0; v < 10000; v++) {
    const d0 = 48 + v / 1000;
    const d1 = 48 + ((v / 100) % 10);
    const d2 = 48 + ((v / 10) % 10);
    const d3 = 48 + (v % 10);
    const padded = d0 | (d1 << 8) | (d2 << 16) | (d3 << 24);
    const n: u32 = v < 10 ? 1 : v < 100 ? 2 : v < 1000 ? 3 : 4;
    store<u32>(PADDED + (<usize>v << 2), padded);
    store<u32>(PLAIN + (<usize>v << 2), n == 4 ? padded : n == 3 ? d1 | (d2 << 8) | (d3 << 16) : n == 2 ? d2 | (d3 << 8) : d3);
    store<u8>(PLAIN_LENGTH + <usize>v, <u8>n);
  }
  for (let d: u32 = 0; d < 16; d++) store<u8>(HEX + <usize>d, <u8>(d < 10 ? 48 + d : 87 + d));
  ready = true;
}

/** Where JavaScript's region starts (past the static data), 16-byte aligned. */
export function base(): usize {
  if (!ready) tables();
  return (__heap_base + 15) & ~15;
}

/** Memory for `bytes` of region from base(); false when it cannot grow. */
export function reserve(bytes: f64): bool {
  const end = <f64>base() + bytes + 64;
  const have = <f64>memory.size() * 65536;
  if (end <= have) return true;
  const pages = <i32>Math.ceil((end - have) / 65536);
  return memory.grow(pages) >= 0;
}

/** Why the last rows() call stopped (layout.ts TXT_STOP_*). */
export function stopped(): i32 {
  return stop;
}

/** Bytes the last rows() call wrote. */
export function bytesWritten(): i32 {
  return written;
}

// ---- digits: each writer returns the position after its text and may store up to 3 bytes past it

// @ts-ignore: decorator
@inline
function upTo4(pos: usize, v: u32): usize {
  store<u32>(pos, load<u32>(PLAIN + (<usize>v << 2)));
  return pos + <usize>load<u8>(PLAIN_LENGTH + <usize>v);
}

// @ts-ignore: decorator
@inline
function four(pos: usize, v: u32): usize {
  store<u32>(pos, load<u32>(PADDED + (<usize>v << 2)));
  return pos + 4;
}

/** exactly 8 digits of v < 10^8 */
// @ts-ignore: decorator
@inline
function eight(pos: usize, v: u32): usize {
  const a = v / 10000;
  store<u32>(pos, load<u32>(PADDED + (<usize>a << 2)));
  store<u32>(pos + 4, load<u32>(PADDED + (<usize>(v - a * 10000) << 2)));
  return pos + 8;
}

function u32Digits(pos: usize, v: u32): usize {
  if (v < 10000) return upTo4(pos, v);
  if (v < 100000000) {
    const a = v / 10000;
    return four(upTo4(pos, a), v - a * 10000);
  }
  const a = v / 100000000;
  return eight(upTo4(pos, a), v - a * 100000000);
}

function u64Digits(pos: usize, v: u64): usize {
  if (v < 0x100000000) return u32Digits(pos, <u32>v);
  const hi = v / 100000000;
  const lo = <u32>(v - hi * 100000000);
  if (hi < 100000000) return eight(u32Digits(pos, <u32>hi), lo);
  const top = hi / 100000000; // < 1845
  return eight(eight(upTo4(pos, <u32>top), <u32>(hi - top * 100000000)), lo);
}

// @ts-ignore: decorator
@inline
function i64Digits(pos: usize, v: i64): usize {
  if (v < 0) {
    store<u8>(pos, 45); // -
    return u64Digits(pos + 1, <u64>(0 - v));
  }
  return u64Digits(pos, <u64>v);
}

// @ts-ignore: decorator
@inline
function i32Digits(pos: usize, v: i32): usize {
  if (v < 0) {
    store<u8>(pos, 45);
    return u32Digits(pos + 1, <u32>(0 - v));
  }
  return u32Digits(pos, <u32>v);
}

/** 0x and lowercase hex digits without leading zeros (0x0) */
function hex(pos: usize, v: u64): usize {
  store<u16>(pos, 0x7830); // "0x"
  pos += 2;
  const digits = v == 0 ? 1 : 16 - <i32>(clz<u64>(v) >> 2);
  for (let k = digits - 1; k >= 0; k--) store<u8>(pos++, load<u8>(HEX + <usize>((v >> (<u64>k << 2)) & 15)));
  return pos;
}

/**
 * The converted value of ticks t (TickConverter: floor — for a duration, truncated — of (t − anchor)·num/den,
 * plus base), written; 0 (nothing written) when t is off the number path (the twin's exact() writes it).
 */
function ticks(pos: usize, t: i64, c: usize): usize {
  const anchor = load<i64>(c + <usize>L.TXT_T_ANCHOR);
  const dhi = (t >> 32) - (anchor >> 32);
  if (dhi <= -HI_LIMIT || dhi >= HI_LIMIT) return 0;
  const a = t - anchor; // |a| < 2^52 + 2^32
  const num = load<i64>(c + <usize>L.TXT_T_NUM);
  const den = load<i64>(c + <usize>L.TXT_T_DEN);
  const neg = load<i32>(c + <usize>L.TXT_T_TRUNC) != 0 && a < 0;
  const x = neg ? -a : a;
  const limit = load<i64>(c + <usize>L.TXT_T_Q_LIMIT);
  let v: i64;
  if (den == 1) {
    // QPC at a divisor of 10^9 Hz (10 MHz: ×100), no division
    if (x > limit || x < -limit) return 0;
    v = x * num;
  } else {
    let q = x / den;
    let r = x - q * den;
    if (r < 0) {
      q--;
      r += den;
    }
    if (q > limit || q < -limit) return 0;
    v = q * num + (r * num) / den; // r·num < den·num < 2^62
  }
  if (neg) v = -v;
  return i64Digits(pos, v + load<i64>(c + <usize>L.TXT_T_BASE));
}

/**
 * Formats rows from..n−1 of the cells at `cells` (count of them) into out: a row starts while the output
 * is at most `limit` bytes long; a text cell is written while its end is `reserve` bytes short of `room`.
 * valid: the rows' valid masks (u32 each, row i at valid + 4i) when hasValid. Returns the row it stopped at
 * (stopped(): TXT_STOP_FULL or TXT_STOP_ROW) with bytesWritten() bytes at out.
 */
export function rows(cells: usize, count: i32, hasValid: bool, valid: usize, n: i32, from: i32, json: bool, out: usize, limit: i32, room: i32, reserve: i32): i32 {
  let pos = out;
  const end = out + <usize>limit;
  // a text cell fits when its bytes and a row's reserve do (else the twin makes room: TextTableWriter ensure())
  const textEnd = out + <usize>room - <usize>reserve;
  let i = from;
  stop = L.TXT_STOP_FULL;
  for (; i < n && pos <= end; i++) {
    const rowStart = pos;
    const vw = hasValid ? load<u32>(valid + (<usize>i << 2)) : 0xffffffff;
    let ok = true;
    for (let k = 0; k < count; k++) {
      const c = cells + <usize>(k * L.TXT_CELL_BYTES);
      if (json) {
        const prefix = <usize>load<i32>(c + <usize>L.TXT_C_PREFIX);
        const length = load<i32>(c + <usize>L.TXT_C_PREFIX_LENGTH);
        for (let b = 0; b < length; b += 4) store<u32>(pos + <usize>b, load<u32>(prefix + <usize>b));
        pos += <usize>length;
      } else if (k != 0) store<u8>(pos++, 44); // ,
      const bit = load<i32>(c + <usize>L.TXT_C_NULL_BIT);
      if (bit >= 0 && ((vw >>> <u32>bit) & 1) == 0) {
        if (json) {
          store<u32>(pos, 0x6c6c756e); // null
          pos += 4;
        }
        continue;
      }
      const col = <usize>load<i32>(c + <usize>L.TXT_C_COLUMN);
      const kind = load<i32>(c + <usize>L.TXT_C_KIND);
      const idx = <usize>i;
      switch (kind) {
        case K_U8:
          pos = upTo4(pos, <u32>load<u8>(col + idx));
          break;
        case K_U16:
          pos = u32Digits(pos, <u32>load<u16>(col + (idx << 1)));
          break;
        case K_U32:
          pos = u32Digits(pos, load<u32>(col + (idx << 2)));
          break;
        case K_I8:
          pos = i32Digits(pos, <i32>load<i8>(col + idx));
          break;
        case K_I32:
          pos = i32Digits(pos, load<i32>(col + (idx << 2)));
          break;
        case K_F64: {
          // file offsets: whole numbers of magnitude below 2^53 (−0 too: "0"); any other value is the twin's (String(v))
          const v = load<f64>(col + (idx << 3));
          if (!(v == Math.floor(v) && Math.abs(v) <= 9007199254740991)) {
            ok = false;
            break;
          }
          pos = i64Digits(pos, <i64>v);
          break;
        }
        case K_I64:
        case K_U64:
        case K_ADDR:
        case K_TICKS: {
          const v = load<i64>(col + (idx << 3));
          if (json) store<u8>(pos++, 34); // "
          if (kind == K_I64) pos = i64Digits(pos, v);
          else if (kind == K_U64) pos = u64Digits(pos, <u64>v);
          else if (kind == K_ADDR) pos = hex(pos, <u64>v);
          else {
            pos = ticks(pos, v, <usize>load<i32>(c + <usize>L.TXT_C_TABLE));
            if (pos == 0) {
              ok = false;
              break;
            }
          }
          if (json) store<u8>(pos++, 34);
          break;
        }
        case K_STR: {
          // the row's code of the column's distinct values, and that value's encoded bytes
          const code = load<i32>(col + (idx << 2));
          if (<u32>code >= <u32>load<i32>(c + <usize>L.TXT_C_NAME_WORDS)) {
            ok = false;
            break;
          }
          const entry = <usize>load<i32>(c + <usize>L.TXT_C_TABLE) + (<usize>code << 3);
          const length = <usize>load<i32>(entry + 4);
          if (pos + length > textEnd) {
            ok = false;
            break;
          }
          memory.copy(pos, <usize>load<i32>(entry), length);
          pos += length;
          break;
        }
        case K_NAME: {
          const v = <usize>load<u8>(col + idx);
          const length = <usize>load<u8>(<usize>load<i32>(c + <usize>L.TXT_C_NAME_LENGTH) + v);
          if (length == 0) {
            ok = false; // Unknown(v): the twin's
            break;
          }
          const words = <usize>load<i32>(c + <usize>L.TXT_C_NAME_WORDS);
          const from = <usize>load<i32>(c + <usize>L.TXT_C_TABLE) + ((v * words) << 2);
          for (let w: usize = 0; w < words; w++) store<u32>(pos + (w << 2), load<u32>(from + (w << 2)));
          pos += length;
          break;
        }
        default:
          ok = false;
      }
      if (!ok) break;
    }
    if (!ok) {
      pos = rowStart;
      stop = L.TXT_STOP_ROW;
      break;
    }
    if (json) store<u8>(pos++, 125); // }
    store<u8>(pos++, 10);
  }
  written = <i32>(pos - out);
  return i;
}
