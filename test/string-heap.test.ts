// The string columns' reader (StringHeapReader, src/engine/wasm/engine.ts): each entry's text equals a direct decode (UTF-16
// and ANSI, empty, null rows), identical entries give the same string, and the table starts again past its
// byte bound without changing any text.
import { describe, expect, test } from 'vitest';
import fc from 'fast-check';
import * as L from '../src/generated/layout.js';
import { StringHeapReader } from '../src/engine/wasm/engine.js';

/** A heap of entries for `texts` ([text, ansi]); returns the buffer, the heap's offset and the refs. */
function heapOf(texts: [string, boolean][]): { buffer: ArrayBuffer; heap: number; refs: Uint32Array } {
  const parts: Uint8Array[] = [];
  const refs = new Uint32Array(texts.length);
  let at = 0;
  texts.forEach(([t, ansi], i) => {
    const body = ansi ? Uint8Array.from(t, (c) => c.charCodeAt(0) & 0x7f) : new Uint8Array(Uint16Array.from(t, (c) => c.charCodeAt(0)).buffer);
    const e = new Uint8Array(L.STR_ENTRY_HEADER + body.length + ((4 - (body.length % 4)) % 4));
    new DataView(e.buffer).setUint32(0, body.length | ((ansi ? L.STR_UNIT_ANSI : L.STR_UNIT_UTF16) << 16), true);
    e.set(body, L.STR_ENTRY_HEADER);
    refs[i] = at;
    parts.push(e);
    at += e.length;
  });
  const heap = 64; // entries start past other memory
  const mem = new Uint8Array(heap + at);
  let p = heap;
  for (const e of parts) {
    mem.set(e, p);
    p += e.length;
  }
  return { buffer: mem.buffer, heap, refs };
}

const direct = (t: string, ansi: boolean) => (ansi ? String.fromCharCode(...Array.from(t, (c) => c.charCodeAt(0) & 0x7f)) : t);

describe('StringHeapReader', () => {
  test('each entry reads as its text; identical entries as the same string; null rows as empty', () => {
    fc.assert(
      fc.property(fc.array(fc.tuple(fc.oneof(fc.constantFrom('', 'svchost.exe', 'ntdll.dll'), fc.string({ maxLength: 40 })), fc.boolean(), fc.boolean()), { maxLength: 200 }), (rows) => {
        const { buffer, heap, refs } = heapOf(rows.map(([t, a]) => [t, a]));
        const valid = Uint32Array.from(rows, ([, , nul]) => (nul ? 0 : 1 << 3));
        const reader = new StringHeapReader();
        for (let round = 0; round < 2; round++) {
          const got = reader.read(buffer, heap, refs, valid, 3);
          rows.forEach(([t, a, nul], i) => expect(got[i]).toBe(nul ? '' : direct(t, a)));
        }
      }),
      { numRuns: 200 },
    );
  });

  test('repeated offsets (interned entries) read as their text; a later read of other entries at the same offsets reads those', () => {
    const a = heapOf([
      ['svchost.exe', false],
      ['ntdll.dll', true],
    ]);
    const b = heapOf([
      ['explorer.exe', false],
      ['kernel32.dll', true],
    ]);
    const reader = new StringHeapReader();
    const refs = Uint32Array.from([a.refs[0]!, a.refs[1]!, a.refs[0]!, a.refs[0]!, a.refs[1]!]);
    expect(reader.read(a.buffer, a.heap, refs, null, 0)).toEqual(['svchost.exe', 'ntdll.dll', 'svchost.exe', 'svchost.exe', 'ntdll.dll']);
    // the next chunk's heap: the first entry at the same offset holds another string
    expect(b.refs[0]).toBe(a.refs[0]);
    expect(reader.read(b.buffer, b.heap, Uint32Array.from([b.refs[0]!, b.refs[1]!, b.refs[0]!]), null, 0)).toEqual(['explorer.exe', 'kernel32.dll', 'explorer.exe']);
  });

  test('past its byte bound the table starts again, every text still right', () => {
    const texts: [string, boolean][] = [];
    for (let i = 0; i < 12_000; i++) texts.push([`thread-${i}-${'x'.repeat(40)}`, false]); // ~1.1 MB of UTF-16
    for (let i = 0; i < 3000; i++) texts.push([`thread-${i * 4}-${'x'.repeat(40)}`, false]);
    const { buffer, heap, refs } = heapOf(texts);
    const got = new StringHeapReader().read(buffer, heap, refs, null, 0);
    texts.forEach(([t], i) => expect(got[i]).toBe(t));
  });
});
