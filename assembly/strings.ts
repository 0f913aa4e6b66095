// NUL-terminated strings of Thread, Process and Image payloads (docs/format.md §F.2 ThreadName, §F.3
// ImageFileName / CommandLine / PackageFullName, §F.5 SetName, §G.2 FileName), copied to the string heap (memory.ts)
// as entries of layout.ts STR_*: the `str` columns hold entry offsets. src/engine/reference/strings.ts is its twin.
// Entries are interned until the heap is emptied: a string equal to one put since then gets that entry's offset
// (a trace names the same threads and images over and over), so the wrapper decodes each text once per chunk
// and finds it by offset (src/engine/wasm/engine.ts StringHeapReader).
import * as L from './layout';
import { heapGeneration, heapGiveBack, heapStart, heapTake } from './memory';

/** the intern table: per slot the entry's offset + 1 (0: empty) and its hash; half full at most */
const INTERN_SLOTS: i32 = 4096;
const INTERN: usize = memory.data(INTERN_SLOTS * 8, 16);
let interned: i32 = 0;
/** the heap generation the table's entries belong to */
let internGeneration: u32 = 0;

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
  const head = <u32>n | (<u32>unit << 16);
  store<u32>(at, head);
  // the entry's last word zeroed first: its bytes after the string are 0, so readers compare whole words
  if (n & 3) store<u32>(at + L.STR_ENTRY_HEADER + <usize>(n & ~3), 0);
  memory.copy(at + L.STR_ENTRY_HEADER, p, <usize>n);
  return intern(off, at, head, (n + 3) >> 2);
}

/** The offset of an entry equal to the one just put at `off` (which is given back), or `off` (kept in the table). */
function intern(off: i32, at: usize, head: u32, words: i32): u32 {
  if (internGeneration != heapGeneration) {
    if (interned != 0) memory.fill(INTERN, 0, <usize>(INTERN_SLOTS * 8));
    interned = 0;
    internGeneration = heapGeneration;
  }
  // FNV-1a over the header (length and unit) and the words
  const w = at + L.STR_ENTRY_HEADER;
  let h: u32 = (0x811c9dc5 ^ head) * 0x01000193;
  for (let k = 0; k < words; k++) h = (h ^ load<u32>(w + (<usize>k << 2))) * 0x01000193;
  const mask = INTERN_SLOTS - 1;
  for (let s = <i32>(h ^ (h >>> 15)) & mask; ; s = (s + 1) & mask) {
    const slot = INTERN + (<usize>s << 3);
    const e = load<i32>(slot) - 1;
    if (e < 0) {
      if (interned < INTERN_SLOTS >> 1) {
        store<i32>(slot, off + 1);
        store<u32>(slot + 4, h);
        interned++;
      }
      return <u32>off;
    }
    if (load<u32>(slot + 4) != h) continue;
    const other = heapStart + <usize>e;
    if (load<u32>(other) != head) continue;
    let k = 0;
    const v = other + L.STR_ENTRY_HEADER;
    while (k < words && load<u32>(v + (<usize>k << 2)) == load<u32>(w + (<usize>k << 2))) k++;
    if (k == words) {
      heapGiveBack(off);
      return <u32>e;
    }
  }
  return <u32>off; // not reached: the table is never full
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
