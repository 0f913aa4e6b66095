// NUL-terminated strings of Thread, Process and Image payloads (docs/format.md §F.2 ThreadName, §F.3
// ImageFileName / CommandLine / PackageFullName, §F.5 SetName, §G.2 FileName), copied to the string heap (memory.ts)
// as entries of layout.ts STR_*: the `str` columns hold entry offsets. src/engine/reference/strings.ts is its twin.
import * as L from './layout';
import { heapStart, heapTake } from './memory';

/** after putString: the byte after the string's terminator, or the end of the payload when it has none */
export let stringNext: usize = 0;
/** after putString: whether the string had its terminator before the end */
export let stringTerminated: bool = false;
/** after skipString: bytes of the string itself (an unterminated UTF-16 string ends at its last whole unit) */
let stringBytes: i32 = 0;

/**
 * Copies the string at [p, end) — `unit` 1 (ANSI bytes) or 2 (UTF-16LE units), up to its NUL — to the
 * heap and returns the offset of its entry. An unterminated string is taken up to the end.
 */
export function putString(p: usize, end: usize, unit: i32): u32 {
  skipString(p, end, unit);
  const n = stringBytes;
  const off = heapTake(L.STR_ENTRY_HEADER + n);
  const at = heapStart + <usize>off;
  store<u32>(at, <u32>n | (<u32>unit << 16));
  // the entry's last word zeroed first: its bytes after the string are 0, so readers compare whole words
  if (n & 3) store<u32>(at + L.STR_ENTRY_HEADER + <usize>(n & ~3), 0);
  memory.copy(at + L.STR_ENTRY_HEADER, p, <usize>n);
  return <u32>off;
}

/** Finds the end of the string at [p, end) like putString, without copying it (stringNext, stringTerminated). */
export function skipString(p: usize, end: usize, unit: i32): void {
  let q = p;
  if (unit == L.STR_UNIT_ANSI) {
    while (q < end && load<u8>(q) != 0) q++;
    stringTerminated = q < end;
    stringNext = stringTerminated ? q + 1 : end;
  } else {
    while (q + 2 <= end && load<u16>(q) != 0) q += 2;
    stringTerminated = q + 2 <= end;
    stringNext = stringTerminated ? q + 2 : end;
  }
  stringBytes = <i32>(q - p);
}
