// StackWalk and stack-key events of the real corpus (docs/format.md §H): every one decoded (zero skipped, counts
// per HookId equal to the independent walker's in expected/*.json), every row and frame of perfview-net equal
// to the bytes as test/helpers/reader.ts reads them (literal offsets, no src/ import), a few rows written out by
// hand, and the stacks resolved (every key reference defined, every stack of a sample attached to it).
import { describe, expect, test } from 'vitest';
import { resolveStacks } from '../src/derive/stacks.js';
import { decodeSync } from '../src/node.js';
import { corpusFiles, corpusTestsEnabled, readCorpus, readExpected } from './helpers/corpus.js';
import { bufferData, i64, splitBuffers, u32, u64, walkEvents } from './helpers/reader.js';

const STACK_HOOKS: [hook: string, opcode: number][] = [['0x1820', 32], ['0x1822', 34], ['0x1823', 35], ['0x1824', 36], ['0x1825', 37], ['0x1826', 38]];
const ENGINES = ['wasm', 'reference'] as const;
const corpus = corpusTestsEnabled();
const NET = 'perfview-net.4.5.2.x64.etl';

describe.skipIf(!corpus).each(ENGINES)('%s engine', (engine) => {
  test.each(corpusFiles())('%s: every StackWalk and stack-key event decoded, none skipped', (name) => {
    const r = decodeSync(readCorpus(name), { engine });
    const kinds = readExpected(name).eventsByKind;
    const count = (hook: string) => kinds.filter((k) => k.id === hook).reduce((n, k) => n + k.count, 0);
    const all = STACK_HOOKS.reduce((n, [hook]) => n + count(hook), 0);
    const d = r.summary.diagnostics;
    expect(r.stackEvents.length).toBe(all);
    expect(d['stackEventsDecoded']).toBe(all);
    expect([d['stackEventsSkippedVersion'], d['stackEventsSkippedShort']]).toEqual([0, 0]);
    const opcodes = r.stackEvents.column('opcode');
    for (const [hook, opcode] of STACK_HOOKS) {
      let n = 0;
      for (let i = 0; i < r.stackEvents.length; i++) if (opcodes[i] === opcode) n++;
      expect([hook, n]).toEqual([hook, count(hook)]);
    }
    // the frames of the rows are the frame rows, in order
    const fc = r.stackEvents.column('frameCount');
    expect(r.stackEventFrames.length).toBe(fc.reduce((n, c) => n + c, 0));
  });

  test(`${NET}: every row and frame equal to the bytes; rows read by hand`, () => {
    const file = readCorpus(NET);
    const r = decodeSync(file, { engine });
    // the independent reader: every 0x18xx event by file offset (buffer start + offset in its decompressed data)
    // (by offset and timestamp: the decompressed data of a buffer can be longer than its stride in the file)
    const want = new Map<string, { hook: number; ts: bigint; cpu: number; data: Uint8Array }>();
    for (const b of splitBuffers(file).buffers) {
      const data = bufferData(b);
      for (const e of walkEvents(data, b.offset).events) if (e.hookId >> 8 === 0x18) want.set(`${b.fileOffset + e.off}:${e.timestamp}`, { hook: e.hookId, ts: e.timestamp!, cpu: b.processor, data: e.data });
    }
    expect(want.size).toBe(12280);
    const rows = r.stackEvents.toArray();
    const frames = r.stackEventFrames.column('address');
    const depth = r.stackEventFrames.column('depth');
    let f = 0;
    for (const row of rows) {
      const e = want.get(`${row.fileOffset}:${row.timestamp}`)!;
      expect(e, `event at ${row.fileOffset}`).toBeDefined();
      expect([row.opcode, row.timestamp, row.cpu, row.pointerSize, row.version]).toEqual([e.hook & 0xff, e.ts, e.cpu, 8, 2]);
      const def = row.opcode >= 34 && row.opcode <= 36;
      const ref = row.opcode === 37 || row.opcode === 38;
      if (def) expect([row.eventTimestamp, row.processId, row.threadId, row.stackKey]).toEqual([null, null, null, u64(e.data, 0)]);
      else expect([row.eventTimestamp, row.processId, row.threadId, row.stackKey]).toEqual([i64(e.data, 0), u32(e.data, 8), u32(e.data, 12), ref ? u64(e.data, 16) : null]);
      const at = def ? 8 : 16;
      expect(row.frameCount).toBe(ref ? 0 : (e.data.length - at) / 8);
      for (let k = 0; k < row.frameCount; k++, f++) {
        expect(frames[f]).toBe(u64(e.data, at + 8 * k));
        expect(depth[f]).toBe(k);
      }
    }
    expect(f).toBe(63338);
    // by hand: StackWalk at 0xD599 (PERFINFO64 v2, Size 0x30, HookId 0x1820, TS 0x73CE6E65, CPU 3): EventTimeStamp
    // 0x73CE6E0F, StackProcess 0xF94, StackThread 0xEC4, Stack1 0xFFFFFFFFFFD03003, Stack2 0xFFFFF800215DAE37
    const walk = rows.find((x) => x.fileOffset === 0xd599)!;
    expect(walk).toEqual({
      timestamp: 0x73ce6e65n, cpu: 3, opcode: 32, eventTimestamp: 0x73ce6e0fn, processId: 0xf94, threadId: 0xec4, stackKey: null, frameCount: 2,
      pointerSize: 8, version: 2, fileOffset: 0xd599, valid: walk.valid,
    });
    // StackKeyKernel at 0x4C018 (Size 0x28, HookId 0x1825, TS 0x73D14201, CPU 3): EventTimeStamp 0x73D14167,
    // StackProcess 0xF94, StackThread 0xEC4, StackKey 0xFFFFFA830343ED90
    const ref = rows.find((x) => x.fileOffset === 0x4c018)!;
    expect(ref).toEqual({
      timestamp: 0x73d14201n, cpu: 3, opcode: 37, eventTimestamp: 0x73d14167n, processId: 0xf94, threadId: 0xec4, stackKey: 0xfffffa830343ed90n,
      frameCount: 0, pointerSize: 8, version: 2, fileOffset: 0x4c018, valid: ref.valid,
    });
    // KeyDelete at 0x60A88 (Size 0xB8, HookId 0x1823, TS 0x74FAB1BA, CPU 5): StackKey 0xFFFFFA83033EDB10, then 20
    // frames from 0xFFFFF88005296D8B, 0xFFFFF880052970D1, 0xFFFFF8800529752A
    const del = rows.find((x) => x.fileOffset === 0x60a88)!;
    expect(del).toEqual({
      timestamp: 0x74fab1ban, cpu: 5, opcode: 35, eventTimestamp: null, processId: null, threadId: null, stackKey: 0xfffffa83033edb10n, frameCount: 20,
      pointerSize: 8, version: 2, fileOffset: 0x60a88, valid: del.valid,
    });
  });

  test(`${NET}: stacks resolved — every key reference defined, 6318 samples with a stack`, () => {
    const r = decodeSync(readCorpus(NET), { engine });
    const s = resolveStacks(r);
    expect(s.counts).toEqual({
      walks: 252, references: 9107, definitions: 2921, unresolvedReferences: 0, emptyWalks: 0, duplicateHalves: 0, joined: 1613, kernelOnly: 577,
      userOnly: 5556, attached: { cswitch: 0, readythread: 0, samples: 6318 }, unmatched: 1428, claimedTwice: 0,
    });
    expect([s.stacks.length, s.frames.length, s.events.length]).toEqual([2224, 55300, 7746]);
    // a sample's stack: its kernel frames, then the user frames
    let checked = 0;
    for (let i = 0; i < r.samples.length && checked < 200; i++) {
      const id = s.stackIdOf.samples[i]!;
      if (id < 0) continue;
      checked++;
      const k = s.stacks.kernelFrameCount[id]!;
      const f0 = s.stacks.firstFrame[id]!;
      const kinds = Array.from(s.frames.address.subarray(f0, f0 + s.stacks.frameCount[id]!), (a) => (a >= 0xffff000000000000n ? 'K' : 'U')).join('');
      // the kernel half is kernel frames; the user half starts and ends in user mode (in between it can cross
      // the kernel: a user-mode callback from a system call)
      expect(kinds.slice(0, k)).toBe('K'.repeat(k));
      if (kinds.length > k) expect([kinds[k], kinds[kinds.length - 1]]).toEqual(['U', 'U']);
    }
    expect(checked).toBe(200);
    // docs/format.md §H: Stack1 of a sample's stack is its InstructionPointer (all but 2); kernel frames are at or above
    // 0xFFFFF80000000000, user frames below 0x0000080000000000
    const ip = r.samples.column('instructionPointer');
    let same = 0;
    let withStack = 0;
    for (let i = 0; i < r.samples.length; i++) {
      const id = s.stackIdOf.samples[i]!;
      if (id < 0) continue;
      withStack++;
      if (s.frames.address[s.stacks.firstFrame[id]!] === ip[i]) same++;
    }
    expect([same, withStack]).toEqual([6316, 6318]);
    for (const a of s.frames.address) expect(a >= 0xfffff80000000000n || a < 0x0000080000000000n).toBe(true);
  });
});
