// XPRESS (MS-XCA Plain LZ77, format-spec A.6) decompressor and encoder tests: the compressed buffers
// of the real corpus files, TS reference vs WASM parity, round trips through the encoder, hostile
// input (random / truncated / bit-flipped) with canaries and the input placed at the very end of
// WASM memory so any out-of-range access traps.
//
// The WASM side is assembly/xpress.ts compiled standalone in beforeAll (no dependency on
// assembly/index.ts). If build/decoder.wasm exists and exports xpressDecompress, the real-file
// checks run against it too.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  XPRESS_E_BAD_ARGS,
  XPRESS_E_BAD_LENGTH,
  XPRESS_E_BAD_OFFSET,
  XPRESS_E_INPUT_TRUNCATED,
  XPRESS_E_OUTPUT_OVERFLOW,
} from '../src/generated/layout.js';
import { xpressDecompress } from '../src/engine/reference/xpress.js';
import { xpressCompress, xpressCompressBound } from '../src/writer/xpress-encode.js';
import { corpusTestsEnabled, readCorpus } from './helpers/corpus.js';
import { lz77DecodeToEndMarker, splitBuffers } from './helpers/reader.js';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const ERROR_CODES = [
  XPRESS_E_INPUT_TRUNCATED,
  XPRESS_E_BAD_OFFSET,
  XPRESS_E_OUTPUT_OVERFLOW,
  XPRESS_E_BAD_LENGTH,
];
const FILL = 0xcc; // initial content of every dst (TS and WASM), so stray writes show up
const CANARY = 0xa5;
const CANARY_LEN = 64;

// ---------------------------------------------------------------------------------------------
// Corpus: compressed buffers (BufferFlag 0x40) of the real files.

interface CompressedBuffer {
  fileOffset: number;
  src: Uint8Array; // file bytes [0x48, BufferSize)
  outLen: number; // SavedOffset - 0x48
}

interface CorpusFile {
  buffers: number;
  compressed: CompressedBuffer[];
  compressedHeaderBuffers: number;
}

function compressedBuffersOf(name: string): CorpusFile {
  const file = readCorpus(name);
  const { buffers, end } = splitBuffers(file);
  expect(end, `${name}: bad BufferSize at ${end}`).toBe(file.length);
  const compressed: CompressedBuffer[] = [];
  let compressedHeaderBuffers = 0;
  for (const b of buffers) {
    if (b.flags & 0x40) {
      if (b.type === 4) compressedHeaderBuffers++;
      compressed.push({ fileOffset: b.fileOffset, src: b.raw.subarray(0x48), outLen: b.savedOffset - 0x48 });
    }
  }
  return { buffers: buffers.length, compressed, compressedHeaderBuffers };
}

const FILES: { name: string; buffers: number; compressed: number }[] = [
  { name: 'perfview-net.4.5.2.x64.etl', buffers: 360, compressed: 359 },
  { name: 'perfview-SelfDescribingSingleEvent.etl', buffers: 3, compressed: 2 },
  { name: 'perfview-smallEtlFile.etl', buffers: 2, compressed: 1 },
];
const realCorpus = corpusTestsEnabled();
/** the compressed buffers of FILES (none when the corpus tests are skipped) */
const corpus = new Map(realCorpus ? FILES.map((f) => [f.name, compressedBuffersOf(f.name)]) : []);
const allCompressed = [...corpus.values()].flatMap((c) => c.compressed);

function tsDecompress(src: Uint8Array, dstLen: number): { r: number; out: Uint8Array } {
  const out = new Uint8Array(dstLen).fill(FILL);
  return { r: xpressDecompress(src, out), out };
}

// ---------------------------------------------------------------------------------------------
// WASM harness. Layout in the module's memory, above everything the module itself uses:
//   [base, base+64) canary | dst (dstLen) | canary (64) | ... gap ... | src (srcLen) = end of memory

type WasmFn = (src: number, srcLen: number, dst: number, dstLen: number) => number;

class WasmXpress {
  private readonly memory: WebAssembly.Memory;
  private readonly fn: WasmFn;
  private readonly base: number;

  constructor(instance: WebAssembly.Instance) {
    this.memory = instance.exports.memory as WebAssembly.Memory;
    this.fn = instance.exports.xpressDecompress as WasmFn;
    this.base = this.memory.buffer.byteLength; // fresh pages: nothing of the module lives there
    this.memory.grow(1);
  }

  /** Raw call with explicit addresses, for argument checks. */
  call(src: number, srcLen: number, dst: number, dstLen: number): number {
    return this.fn(src, srcLen, dst, dstLen);
  }

  run(src: Uint8Array, dstLen: number): { r: number; out: Uint8Array; trapped: boolean; canariesOk: boolean } {
    const dst = this.base + CANARY_LEN;
    const need = dst + dstLen + CANARY_LEN + src.length;
    const have = this.memory.buffer.byteLength;
    if (need > have) this.memory.grow(Math.ceil((need - have) / 65536));
    const mem = new Uint8Array(this.memory.buffer);
    const srcAt = mem.length - src.length; // a read past srcLen traps
    mem.fill(CANARY, this.base, dst);
    mem.fill(FILL, dst, dst + dstLen);
    mem.fill(CANARY, dst + dstLen, dst + dstLen + CANARY_LEN);
    mem.set(src, srcAt);
    let r = 0;
    let trapped = false;
    try {
      r = this.fn(srcAt, src.length, dst, dstLen);
    } catch (e) {
      if (!(e instanceof WebAssembly.RuntimeError)) throw e;
      trapped = true;
    }
    const after = new Uint8Array(this.memory.buffer);
    let canariesOk = true;
    for (let i = this.base; i < dst; i++) if (after[i] !== CANARY) canariesOk = false;
    for (let i = dst + dstLen; i < dst + dstLen + CANARY_LEN; i++) if (after[i] !== CANARY) canariesOk = false;
    for (let i = 0; i < src.length; i++) if (after[srcAt + i] !== src[i]) canariesOk = false; // input untouched
    return { r, out: after.slice(dst, dst + dstLen), trapped, canariesOk };
  }
}

let tmp = '';
let wasm: WasmXpress;
let built: WasmXpress | undefined; // build/decoder.wasm, when present and exporting xpressDecompress

beforeAll(async () => {
  tmp = mkdtempSync(join(tmpdir(), 'xpress-test-'));
  const cfg = join(tmp, 'asconfig.json'); // keep asc from picking up the project's asconfig.json
  writeFileSync(cfg, '{}');
  const out = join(tmp, 'xpress.wasm');
  execFileSync(
    process.execPath,
    [
      join(ROOT, 'node_modules/assemblyscript/bin/asc.js'),
      join(ROOT, 'assembly/xpress.ts'),
      '--config', cfg,
      '--outFile', out,
      '-O3',
      '--runtime', 'stub',
      '--use', 'abort=',
    ],
    { cwd: ROOT, stdio: 'pipe' },
  );
  const { instance } = await WebAssembly.instantiate(readFileSync(out), {});
  wasm = new WasmXpress(instance);

  const buildPath = join(ROOT, 'build/decoder.wasm');
  if (existsSync(buildPath)) {
    try {
      const { instance: full } = await WebAssembly.instantiate(readFileSync(buildPath), {});
      if (typeof full.exports.xpressDecompress === 'function') built = new WasmXpress(full);
    } catch {
      built = undefined; // needs imports or is stale: covered by the standalone module
    }
  }
});

afterAll(() => {
  if (tmp) rmSync(tmp, { recursive: true, force: true });
});

/** Runs TS and WASM on the same input and asserts they agree and behave. Returns the TS result. */
function checkBoth(src: Uint8Array, dstLen: number, w: WasmXpress = wasm): { r: number; out: Uint8Array } {
  const t = tsDecompress(src, dstLen);
  const v = w.run(src, dstLen);
  expect(v.trapped).toBe(false);
  expect(v.canariesOk).toBe(true);
  expect(v.r).toBe(t.r);
  expect(t.r === dstLen || ERROR_CODES.includes(t.r)).toBe(true);
  if (!equalBytes(v.out, t.out)) expect.fail(`TS/WASM output differs (r=${t.r}, dstLen=${dstLen})`);
  return t;
}

function equalBytes(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

// ---------------------------------------------------------------------------------------------

describe.skipIf(!realCorpus)('real compressed ETL buffers', () => {
  it('TS: every compressed buffer decompresses to exactly SavedOffset - 0x48 bytes', () => {
    const t0 = performance.now();
    let outBytes = 0;
    for (const f of FILES) {
      const c = corpus.get(f.name)!;
      expect(c.buffers).toBe(f.buffers);
      expect(c.compressed.length).toBe(f.compressed);
      expect(c.compressedHeaderBuffers).toBe(0); // the header buffer is never compressed
      for (const buf of c.compressed) {
        expect(buf.outLen).toBeGreaterThan(0);
        const { r, out } = tsDecompress(buf.src, buf.outLen);
        expect(r, `${f.name} @${buf.fileOffset}`).toBe(buf.outLen);
        // The payload begins with an event: a trace header whose marker has bits 31 and 30 set.
        const first = (out[0] | (out[1] << 8) | (out[2] << 16) | (out[3] << 24)) >>> 0;
        expect(first & 0x80000000).not.toBe(0);
        expect(first >>> 30).toBe(3);
        outBytes += r;
      }
      console.log(`${f.name}: ${c.compressed.length} compressed buffers of ${c.buffers} decompressed`);
    }
    console.log(
      `TS: ${allCompressed.length} buffers, ${outBytes} bytes out in ${(performance.now() - t0).toFixed(0)} ms`,
    );
  });

  it('the streams end as MS-XCA 2.3 writes them: unused flag bits are 1, nothing after', () => {
    // Decoding the whole input with the size-unaware MS-XCA decoder yields the same bytes.
    for (const buf of allCompressed) {
      const ref = tsDecompress(buf.src, buf.outLen).out;
      const all = lz77DecodeToEndMarker(buf.src);
      expect(all).not.toBeNull();
      expect(all!.length).toBe(buf.outLen);
      expect(equalBytes(all!, ref)).toBe(true);
    }
  });

  it('WASM (standalone assembly/xpress.ts) is byte-identical to TS on every buffer', () => {
    for (const buf of allCompressed) expect(checkBoth(buf.src, buf.outLen).r).toBe(buf.outLen);
  });

  it('WASM build/decoder.wasm (when built) is byte-identical to TS on every buffer', (ctx) => {
    if (!built) ctx.skip();
    for (const buf of allCompressed) expect(checkBoth(buf.src, buf.outLen, built).r).toBe(buf.outLen);
  });

  it('re-encoding every decompressed payload round-trips (TS and WASM)', () => {
    let inBytes = 0;
    let outBytes = 0;
    for (const buf of allCompressed) {
      const plain = tsDecompress(buf.src, buf.outLen).out;
      const z = xpressCompress(plain);
      inBytes += plain.length;
      outBytes += z.length;
      const { out } = checkBoth(z, plain.length);
      expect(equalBytes(out, plain)).toBe(true);
    }
    console.log(`re-encoded ${inBytes} bytes to ${outBytes} (${((100 * outBytes) / inBytes).toFixed(1)}%)`);
  });
});

// ---------------------------------------------------------------------------------------------

/** Hand-assembled streams. */
function stream(...parts: (number[] | Uint8Array)[]): Uint8Array {
  return Uint8Array.from(parts.flatMap((p) => [...p]));
}
const u32le = (v: number) => [v & 0xff, (v >>> 8) & 0xff, (v >>> 16) & 0xff, (v >>> 24) & 0xff];
const u16le = (v: number) => [v & 0xff, (v >>> 8) & 0xff];
/** Flag word from a bit string, MSB first, padded with 1s. */
const flagWord = (bits: string) => u32le(parseInt(bits.padEnd(32, '1'), 2) >>> 0);
/** Match metadata word. */
const meta = (offset: number, code: number) => u16le(((offset - 1) << 3) | code);

describe('format details and error codes', () => {
  const abc = [0x61, 0x62, 0x63];

  it('short match, overlapping match, trailing input after the output is complete', () => {
    // "abc" + match(off 3, len 5) -> "abcabcab"; trailing bytes are ignored.
    const s = stream(flagWord('0001'), abc, meta(3, 2), [0xde, 0xad]);
    const { r, out } = checkBoth(s, 8);
    expect(r).toBe(8);
    expect([...out]).toEqual([...'abcabcab'].map((c) => c.charCodeAt(0)));
    // offset 1 run
    const { out: run } = checkBoth(stream(flagWord('01'), [7], meta(1, 6)), 10);
    expect([...run]).toEqual(new Array(10).fill(7));
  });

  it('shared length nibble: low half for the first code-7 match, high half for the second', () => {
    // "abc", match(3, len 10: nibble 0) -> nibble byte 0xF0 placed after its metadata,
    // match(3, len 25 + 5: nibble 15 from the high half, then byte 5).
    const s = stream(flagWord('00011'), abc, meta(3, 7), [0xf0], meta(3, 7), [5]);
    const { r, out } = checkBoth(s, 3 + 10 + 30);
    expect(r).toBe(43);
    for (let i = 0; i < 43; i++) expect(out[i]).toBe(abc[i % 3]);
    // A third code-7 match takes a fresh nibble byte.
    const s3 = stream(flagWord('000111'), abc, meta(3, 7), [0x21], meta(3, 7), meta(3, 7), [0x03]);
    expect(checkBoth(s3, 3 + 11 + 12 + 13).r).toBe(39);
  });

  it('u16 and u32 explicit lengths', () => {
    const len16 = 1000; // v = len - 3
    const s16 = stream(flagWord('01'), [9], meta(1, 7), [0x0f], [255], u16le(len16 - 3));
    expect(checkBoth(s16, 1 + len16).r).toBe(1 + len16);
    const len32 = 70000;
    const s32 = stream(flagWord('01'), [9], meta(1, 7), [0x0f], [255], u16le(0), u32le(len32 - 3));
    const { r, out } = checkBoth(s32, 1 + len32);
    expect(r).toBe(1 + len32);
    expect(out.every((b) => b === 9)).toBe(true);
    // A huge u32 length cannot overflow anything: it is simply longer than the output.
    const sHuge = stream(flagWord('01'), [9], meta(1, 7), [0x0f], [255], u16le(0), u32le(0xffffffff));
    expect(checkBoth(sHuge, 100).r).toBe(XPRESS_E_OUTPUT_OVERFLOW);
  });

  it('error codes', () => {
    expect(checkBoth(new Uint8Array(0), 1).r).toBe(XPRESS_E_INPUT_TRUNCATED);
    expect(checkBoth(stream([0, 0, 0]), 1).r).toBe(XPRESS_E_INPUT_TRUNCATED);
    // Clean end marker before the expected size: still "input ended early".
    expect(checkBoth(stream(flagWord('0'), [1]), 2).r).toBe(XPRESS_E_INPUT_TRUNCATED);
    // Input ends inside a literal run: the literals that exist are written (same in TS and WASM).
    const cut = checkBoth(stream(u32le(0), [1, 2, 3]), 10);
    expect(cut.r).toBe(XPRESS_E_INPUT_TRUNCATED);
    expect([...cut.out.subarray(0, 4)]).toEqual([1, 2, 3, FILL]);
    // Match metadata cut in half, nibble missing, extension bytes missing.
    expect(checkBoth(stream(flagWord('01'), [1], [0]), 5).r).toBe(XPRESS_E_INPUT_TRUNCATED);
    expect(checkBoth(stream(flagWord('01'), [1], meta(1, 7)), 50).r).toBe(XPRESS_E_INPUT_TRUNCATED);
    expect(checkBoth(stream(flagWord('01'), [1], meta(1, 7), [15]), 50).r).toBe(XPRESS_E_INPUT_TRUNCATED);
    expect(checkBoth(stream(flagWord('01'), [1], meta(1, 7), [15, 255, 0]), 500).r).toBe(
      XPRESS_E_INPUT_TRUNCATED,
    );
    expect(checkBoth(stream(flagWord('01'), [1], meta(1, 7), [15, 255, 0, 0, 1, 0, 0]), 500).r).toBe(
      XPRESS_E_INPUT_TRUNCATED,
    );
    // Offset before the output start.
    expect(checkBoth(stream(flagWord('1'), meta(1, 0)), 3).r).toBe(XPRESS_E_BAD_OFFSET);
    expect(checkBoth(stream(flagWord('001'), [1, 2], meta(3, 0)), 5).r).toBe(XPRESS_E_BAD_OFFSET);
    // Match longer than the space left (nothing of it is written).
    const over = checkBoth(stream(flagWord('01'), [1], meta(1, 4)), 5);
    expect(over.r).toBe(XPRESS_E_OUTPUT_OVERFLOW);
    expect([...over.out]).toEqual([1, FILL, FILL, FILL, FILL]);
    // Exactly at the boundary: length 7 needs 7 bytes after the literal.
    expect(checkBoth(stream(flagWord('01'), [1], meta(1, 4)), 7).r).toBe(XPRESS_E_OUTPUT_OVERFLOW);
    expect(checkBoth(stream(flagWord('01'), [1], meta(1, 4)), 8).r).toBe(8);
    // Explicit u16 / u32 length below 22.
    expect(checkBoth(stream(flagWord('01'), [1], meta(1, 7), [15, 255], u16le(21)), 500).r).toBe(
      XPRESS_E_BAD_LENGTH,
    );
    expect(checkBoth(stream(flagWord('01'), [1], meta(1, 7), [15, 255], u16le(0), u32le(5)), 500).r).toBe(
      XPRESS_E_BAD_LENGTH,
    );
    // Zero-length output succeeds with any input; negative sizes are rejected by the WASM entry.
    expect(checkBoth(new Uint8Array(0), 0).r).toBe(0);
    expect(checkBoth(stream([1, 2, 3]), 0).r).toBe(0);
    expect(wasm.call(0, -1, 0, 0)).toBe(XPRESS_E_BAD_ARGS);
    expect(wasm.call(0, 0, 0, -1)).toBe(XPRESS_E_BAD_ARGS);
  });
});

// ---------------------------------------------------------------------------------------------

/** Inputs that compress in different ways. */
const plainInput: fc.Arbitrary<Uint8Array> = fc.oneof(
  // incompressible
  fc.uint8Array({ maxLength: 4096 }),
  // small alphabet: many short matches, shared nibbles
  fc
    .tuple(fc.integer({ min: 1, max: 4 }), fc.array(fc.integer({ min: 0, max: 3 }), { maxLength: 6000 }))
    .map(([k, xs]) => Uint8Array.from(xs, (x) => (x * 37 * k) & 0xff)),
  // a repeated pattern with occasional edits: long (and overlapping) matches
  fc
    .tuple(
      fc.uint8Array({ minLength: 1, maxLength: 40 }),
      fc.integer({ min: 0, max: 30000 }),
      fc.array(fc.tuple(fc.nat(), fc.integer({ min: 0, max: 255 })), { maxLength: 20 }),
    )
    .map(([pat, n, edits]) => {
      const a = new Uint8Array(n);
      for (let i = 0; i < n; i++) a[i] = pat[i % pat.length];
      for (const [at, v] of edits) if (n > 0) a[at % n] = v;
      return a;
    }),
  // runs of random lengths (u8/u16/u32 length extensions)
  fc
    .array(fc.tuple(fc.integer({ min: 0, max: 255 }), fc.integer({ min: 1, max: 70000 })), { maxLength: 6 })
    .map((runs) => {
      const a = new Uint8Array(runs.reduce((s, [, n]) => s + n, 0));
      let o = 0;
      for (const [v, n] of runs) {
        a.fill(v, o, o + n);
        o += n;
      }
      return a;
    }),
  // large: up to 200 KiB of mixed data (random blocks re-used at distances up to and past 8 KiB)
  fc
    .tuple(fc.integer({ min: 0, max: 200 * 1024 }), fc.integer({ min: 1, max: 0x7fffffff }))
    .map(([n, seed]) => {
      const a = new Uint8Array(n);
      let x = seed;
      const rnd = () => ((x = (Math.imul(x, 1103515245) + 12345) >>> 0), x >>> 8);
      let i = 0;
      while (i < n) {
        const len = Math.min(n - i, 1 + (rnd() % 300));
        const back = 1 + (rnd() % 10000);
        if (rnd() % 2 === 0 && back <= i) for (let k = 0; k < len; k++, i++) a[i] = a[i - back];
        else for (let k = 0; k < len; k++, i++) a[i] = rnd() & 0xff;
      }
      return a;
    }),
);

describe('round trips through xpressCompress', () => {
  it('fixed inputs: empty, single bytes, 200 KiB of zeros, incompressible', () => {
    const zeros = new Uint8Array(200 * 1024);
    const rnd = new Uint8Array(200 * 1024);
    for (let i = 0, x = 1; i < rnd.length; i++) rnd[i] = (x = (Math.imul(x, 1103515245) + 12345) >>> 0) >>> 24;
    for (const input of [new Uint8Array(0), Uint8Array.of(42), Uint8Array.of(1, 2, 3), zeros, rnd]) {
      const z = xpressCompress(input);
      expect(z.length).toBeLessThanOrEqual(xpressCompressBound(input.length));
      const { r, out } = checkBoth(z, input.length);
      expect(r).toBe(input.length);
      expect(equalBytes(out, input)).toBe(true);
      expect(lz77DecodeToEndMarker(z)?.length).toBe(input.length);
    }
    expect(xpressCompress(new Uint8Array(0))).toEqual(Uint8Array.from(u32le(0xffffffff)));
    expect(xpressCompress(zeros).length).toBeLessThan(32);
    // Deterministic.
    expect(equalBytes(xpressCompress(rnd), xpressCompress(rnd))).toBe(true);
  });

  it('fast-check: decompress(compress(x)) == x in TS and WASM', () => {
    const t0 = performance.now();
    fc.assert(
      fc.property(plainInput, (input) => {
        const z = xpressCompress(input);
        expect(z.length).toBeLessThanOrEqual(xpressCompressBound(input.length));
        const { r, out } = checkBoth(z, input.length);
        expect(r).toBe(input.length);
        expect(equalBytes(out, input)).toBe(true);
        // Also terminated with the MS-XCA end marker.
        const all = lz77DecodeToEndMarker(z);
        expect(all?.length).toBe(input.length);
      }),
      { numRuns: 150, seed: 0x5eed },
    );
    console.log(`round trips: ${(performance.now() - t0).toFixed(0)} ms`);
  });
});

// ---------------------------------------------------------------------------------------------

describe('hostile input: no throw, no trap, no stray access, TS == WASM', () => {
  it('random byte strings', () => {
    fc.assert(
      fc.property(
        fc.uint8Array({ maxLength: 3000 }),
        fc.oneof(fc.integer({ min: 0, max: 64 }), fc.integer({ min: 0, max: 70000 })),
        (src, dstLen) => {
          checkBoth(src, dstLen);
        },
      ),
      { numRuns: 1500, seed: 0xbad },
    );
  });

  it('random byte strings biased to matches and long lengths', () => {
    // Flag words full of 1s and metadata with length code 7 reach the extension paths.
    const biased = fc
      .array(
        fc.oneof(
          fc.constant(0xff),
          fc.constant(0x00),
          fc.constant(0x07),
          fc.constant(0x0f),
          fc.integer({ min: 0, max: 255 }),
        ),
        { maxLength: 2000 },
      )
      .map((xs) => Uint8Array.from(xs));
    fc.assert(
      fc.property(biased, fc.integer({ min: 0, max: 70000 }), (src, dstLen) => {
        checkBoth(src, dstLen);
      }),
      { numRuns: 1500, seed: 0xf1a9 },
    );
  });

  it.skipIf(!realCorpus)('truncated and bit-flipped real compressed buffers', () => {
    const n = allCompressed.length;
    let exact = 0;
    let errors = 0;
    fc.assert(
      fc.property(
        fc.nat({ max: n - 1 }),
        fc.option(fc.nat(), { nil: undefined }), // truncate at (x % len)
        fc.array(fc.nat(), { maxLength: 8 }), // bit positions to flip
        fc.integer({ min: -64, max: 64 }), // output size error
        (which, cut, flips, dLen) => {
          const buf = allCompressed[which];
          let src = buf.src.slice();
          for (const f of flips) src[(f >>> 3) % src.length] ^= 1 << (f & 7);
          if (cut !== undefined) src = src.slice(0, cut % (src.length + 1));
          const dstLen = Math.max(0, buf.outLen + (dLen % 3 === 0 ? dLen : 0));
          const { r } = checkBoth(src, dstLen);
          if (r === dstLen) exact++;
          else errors++;
        },
      ),
      { numRuns: 600, seed: 0xe71 },
    );
    console.log(`mutated real buffers: ${exact} decoded to the full size, ${errors} rejected`);
  });
});
