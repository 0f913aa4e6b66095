// The text of the engine's string-heap entries (layout.ts STR_*: a u32 of byte length | unit << 16, then
// the bytes; docs/format.md §F.2, §F.3, §F.5, §G.2), decoded once per distinct string: a trace names the
// same threads, processes and images over and over (rundowns, SetName), and a TextDecoder call per row
// costs more than the row. Entries are looked up by a hash of their bytes in a small open-addressing
// table whose bytes are kept for an exact comparison; the table is emptied when it holds MAX_BYTES, so its
// memory stays bounded whatever the trace. Identical entries give the same JavaScript string.
import * as L from '../../generated/layout.js';

const utf16 = new TextDecoder('utf-16le');
const ansi = new TextDecoder('windows-1252');
/** bytes of distinct strings kept before the table starts again */
const MAX_BYTES = 1 << 20;
const SLOTS = 1 << 14;

export class StringHeapReader {
  private hash = new Int32Array(SLOTS);
  /** slot → entry + 1 (0: empty) */
  private slot = new Int32Array(SLOTS);
  private entries = 0;
  private text: string[] = [];
  private head = new Int32Array(SLOTS / 2);
  private at = new Int32Array(SLOTS / 2);
  private bytes = new Uint8Array(MAX_BYTES);
  private used = 0;

  /**
   * The strings of entries at heap + refs[i] (rows whose bit `column` of `valid` is clear: '') in wasm
   * memory `buffer`.
   */
  read(buffer: ArrayBufferLike, heap: number, refs: Uint32Array, valid: Uint32Array | null, column: number): string[] {
    const out = new Array<string>(refs.length);
    const mem = new Uint8Array(buffer);
    const dv = new DataView(buffer);
    for (let i = 0; i < refs.length; i++) {
      if (valid !== null && ((valid[i]! >>> column) & 1) === 0) {
        out[i] = '';
        continue;
      }
      const entry = heap + refs[i]!;
      const head = dv.getUint32(entry, true);
      const n = head & 0xffff;
      out[i] = n === 0 ? '' : this.lookup(mem, entry + L.STR_ENTRY_HEADER, n, head);
    }
    return out;
  }

  private lookup(mem: Uint8Array, p: number, n: number, head: number): string {
    // FNV-1a over the bytes and the header (length and unit)
    let h = Math.imul(0x811c9dc5 ^ head, 0x01000193);
    for (let k = 0; k < n; k++) h = Math.imul(h ^ mem[p + k]!, 0x01000193);
    const mask = SLOTS - 1;
    let s = (h ^ (h >>> 15)) & mask;
    for (; ; s = (s + 1) & mask) {
      const e = this.slot[s]! - 1;
      if (e < 0) break;
      if (this.hash[s] !== h || this.head[e] !== head) continue;
      const a = this.at[e]!;
      let k = 0;
      while (k < n && this.bytes[a + k] === mem[p + k]) k++;
      if (k === n) return this.text[e]!;
    }
    const text = ((head >>> 16) === L.STR_UNIT_ANSI ? ansi : utf16).decode(mem.subarray(p, p + n));
    if (this.used + n > MAX_BYTES || 2 * (this.entries + 1) > SLOTS) {
      if (n > MAX_BYTES / 4) return text; // a huge string is not kept
      this.clear();
      s = (h ^ (h >>> 15)) & mask;
    }
    const e = this.entries++;
    this.bytes.set(mem.subarray(p, p + n), this.used);
    this.at[e] = this.used;
    this.head[e] = head;
    this.text[e] = text;
    this.used += n;
    this.hash[s] = h;
    this.slot[s] = e + 1;
    return text;
  }

  private clear(): void {
    this.slot.fill(0);
    this.entries = 0;
    this.text = [];
    this.used = 0;
  }
}
