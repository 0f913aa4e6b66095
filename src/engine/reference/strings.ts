// NUL-terminated strings of Thread, Process and Image payloads (docs/format.md §F.2, §F.3, §F.5, §G.2), the twin of
// assembly/strings.ts: decoded to JavaScript strings directly (the WebAssembly engine copies them to its
// string heap; its wrapper decodes them the same way: ANSI as windows-1252, UTF-16LE).
import * as L from '../../generated/layout.js';

const utf16 = new TextDecoder('utf-16le');
const ansi = new TextDecoder('windows-1252');

export interface StringAt {
  text: string;
  /** the byte after the terminator, or the end of the payload when it has none */
  next: number;
  terminated: boolean;
}

/** Finds the end of the string at [p, end) of `d` (`unit` 1 ANSI bytes, 2 UTF-16 units). */
export function skipString(d: DataView, p: number, end: number, unit: number): { next: number; terminated: boolean; length: number } {
  let q = p;
  if (unit === L.STR_UNIT_ANSI) while (q < end && d.getUint8(q) !== 0) q++;
  else while (q + 2 <= end && d.getUint16(q, true) !== 0) q += 2;
  const terminated = q + unit <= end;
  return { next: terminated ? q + unit : end, terminated, length: q - p };
}

/** The string at [p, end) of `d`, up to its NUL (or the end). */
export function readString(d: DataView, p: number, end: number, unit: number): StringAt {
  const s = skipString(d, p, end, unit);
  const bytes = new Uint8Array(d.buffer, d.byteOffset + p, s.length);
  return { text: (unit === L.STR_UNIT_ANSI ? ansi : utf16).decode(bytes), next: s.next, terminated: s.terminated };
}
