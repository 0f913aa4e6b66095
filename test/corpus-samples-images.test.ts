// SampledProfile and image events of the real corpus (docs/format.md §G): every one decoded (zero skipped,
// counts equal to the independent walker's per-HookId counts in expected/*.json), and rows checked field by
// field against bytes read by hand (offsets below; in compressed buffers, the offset in the decompressed data).
import { describe, expect, test } from 'vitest';
import { decodeSync } from '../src/node.js';
import { corpusFiles, corpusTestsEnabled, readCorpus, readExpected } from './helpers/corpus.js';

const SAMPLE_HOOKS = /^0x0F2E$/;
const IMAGE_HOOKS = /^0x(030A|140[234])$/;
const INTERVAL_HOOKS = /^0x0F4[89A]$/;
const ENGINES = ['wasm', 'reference'] as const;
const corpus = corpusTestsEnabled();

describe.skipIf(!corpus).each(ENGINES)('%s engine', (engine) => {
  test.each(corpusFiles())('%s: every SampledProfile and image event decoded, none skipped', (name) => {
    const r = decodeSync(readCorpus(name), { engine });
    const kinds = readExpected(name).eventsByKind;
    const count = (re: RegExp) => kinds.filter((k) => re.test(k.id)).reduce((n, k) => n + k.count, 0);
    const d = r.summary.diagnostics;
    expect(r.samples.length).toBe(count(SAMPLE_HOOKS));
    expect(d['samplesDecoded']).toBe(count(SAMPLE_HOOKS));
    expect(r.imageEvents.length).toBe(count(IMAGE_HOOKS));
    expect(d['imageEventsDecoded']).toBe(count(IMAGE_HOOKS));
    expect(r.sampleIntervals.length).toBe(count(INTERVAL_HOOKS));
    expect(d['sampleIntervalsDecoded']).toBe(count(INTERVAL_HOOKS));
    // per HookId: the opcode column counts the events of each kind
    const opcodes = r.imageEvents.column('opcode');
    for (const [hook, opcode] of [['0x030A', 10], ['0x1402', 2], ['0x1403', 3], ['0x1404', 4]] as const) {
      let n = 0;
      for (let i = 0; i < r.imageEvents.length; i++) if (opcodes[i] === opcode) n++;
      expect([hook, n]).toEqual([hook, count(new RegExp(`^${hook}$`))]);
    }
    for (const c of ['samplesSkippedVersion', 'samplesSkippedShort', 'imageEventsSkippedVersion', 'imageEventsSkippedShort', 'sampleIntervalsSkippedVersion', 'sampleIntervalsSkippedShort', 'stringUnterminated']) {
      expect([c, d[c]]).toEqual([c, 0]);
    }
  });

  test('perfview-net.4.5.2.x64 (compressed, Windows 8): 79 528 samples and 3596 image events; rows checked against the bytes', () => {
    const r = decodeSync(readCorpus('perfview-net.4.5.2.x64.etl'), { engine });
    expect([r.samples.length, r.imageEvents.length]).toEqual([79528, 3596]);
    // the sample interval's rundowns (§G.4), SYSTEM64 v3, payload 0x18: Source 0, NewInterval = OldInterval =
    // 10000 (1 ms), SourceName "Timer"; the first samples come before the DCStart
    expect(r.sampleIntervals.toArray().map((x) => [x.fileOffset, x.timestamp, x.cpu, x.opcode, x.source, x.newInterval, x.oldInterval, x.sourceName, x.version])).toEqual([
      [309920, 1942978442n, 3, 73, 0, 10000, 10000, 'Timer', 3],
      [2252809, 2042423726n, 5, 74, 0, 10000, 10000, 'Timer', 3],
    ]);
    const samples = r.samples.toArray();
    // event at 0x4DF9F = buffer 0x4DAFF + 0x48 + 0x458 in its decompressed data: marker C0110002 (PERFINFO64 v2),
    // Size 0x20, HookId 0x0F2E, TS 0x73CE5B3D; payload: InstructionPointer 0xFFFFF8002152F552, ThreadId 0,
    // Count 1, Flags 0x80 (priority 16: the idle thread), Rank 0
    expect(samples.find((x) => x.fileOffset === 0x4df9f)).toEqual({
      timestamp: 0x73ce5b3dn, cpu: 0, threadId: 0, instructionPointer: 0xfffff8002152f552n, count: 1, flags: 0x80,
      executingDpc: 0, executingIsr: 0, priority: 16, rank: 0, pointerSize: 8, version: 2, fileOffset: 0x4df9f,
      stackId: null, // no stack event names this sample
      // the idle thread's process (0); the kernel address in ntoskrnl.exe of process 0 (ImageBase 0xFFFFF80021489000, the DCStart at 0x5620 below)
      processId: 0, imageName: 'ntoskrnl.exe', imageOffset: 0xfffff8002152f552n - 0xfffff80021489000n, valid: 0x3dfff,
    });
    // event at 0x780A5 = buffer 0x73ACD + 0x48 + 0x4590: PERFINFO64 v2, Size 0x20, HookId 0x0F2E, TS 0x75661F56;
    // payload: InstructionPointer 0xFFFFF80021434313, ThreadId 0xF78, Count 1, Flags 0x29 (ExecutingDpc, priority 5), Rank 0
    expect(samples.find((x) => x.fileOffset === 0x780a5)).toEqual({
      timestamp: 0x75661f56n, cpu: 2, threadId: 0xf78, instructionPointer: 0xfffff80021434313n, count: 1, flags: 0x29,
      executingDpc: 1, executingIsr: 0, priority: 5, rank: 0, pointerSize: 8, version: 2, fileOffset: 0x780a5,
      stackId: 312, // its stack (StackKeyKernel/StackKeyUser at its timestamp and thread), the 313th distinct one
      // thread 0xF78's one lifetime is process 1632's; the kernel address in hal.dll of process 0 (ImageBase 0xFFFFF8002141D000)
      processId: 1632, imageName: 'hal.dll', imageOffset: 0xfffff80021434313n - 0xfffff8002141d000n, valid: 0x3ffff,
    });
    const images = r.imageEvents.toArray();
    // event at 0x5620 = buffer 0x200 + 0x48 + 0x53D8: marker C0020002 (SYSTEM64 v2), Size 0x9C, HookId 0x1403
    // (DCStart), TS 0x73CE39C4; payload: ImageBase 0xFFFFF80021489000, ImageSize 0x748000, ProcessId 0,
    // ImageChecksum 0x6AA6C8, TimeDateStamp 0x5010AC4B, Reserved0 0 (v2), DefaultBase 0, Reserved1-4 0,
    // UTF-16Z "\SystemRoot\system32\ntoskrnl.exe"
    const ntoskrnl = images.find((x) => x.fileOffset === 0x5620 && x.opcode === 3)!;
    expect(ntoskrnl).toEqual({
      timestamp: 0x73ce39c4n, cpu: 7, opcode: 3, processId: 0, imageBase: 0xfffff80021489000n, imageSize: 0x748000n,
      imageChecksum: 0x6aa6c8, timeDateStamp: 0x5010ac4b, signatureLevel: null, signatureType: null, defaultBase: 0n,
      fileName: '\\SystemRoot\\system32\\ntoskrnl.exe', pointerSize: 8, version: 2, fileOffset: 0x5620, valid: ntoskrnl.valid,
    });
    // event at 0x8F121 = buffer 0x87181 + 0x48 + 0x7F58: SYSTEM64 v2, Size 0x132, HookId 0x030A (Load), header
    // ThreadId 0xE60 / ProcessId 0xE5C, TS 0x756BC82C; payload: ImageBase 0x550000, ImageSize 0x8000,
    // ProcessId 0xE5C, ImageChecksum 0, TimeDateStamp 0x9916FC82, Reserved0 0, DefaultBase bytes
    // 00 40 00 00 00 00 40 00 (a PE32 image: BaseOfData 0x4000 and ImageBase 0x400000 of its optional header,
    // §G.2), UTF-16Z "\Device\Mup\DfsClient\;Z:0000000000020d40\clrmain\…\Test.x64.exe"
    const load = images.find((x) => x.fileOffset === 0x8f121 && x.opcode === 10)!;
    expect(load).toEqual({
      timestamp: 0x756bc82cn, cpu: 0, opcode: 10, processId: 0xe5c, imageBase: 0x550000n, imageSize: 0x8000n,
      imageChecksum: 0, timeDateStamp: 0x9916fc82, signatureLevel: null, signatureType: null, defaultBase: 0x0040000000004000n,
      fileName: '\\Device\\Mup\\DfsClient\\;Z:0000000000020d40\\clrmain\\public\\PerfInvestigations\\20-07-28.TestTraces\\Test.x64.exe',
      pointerSize: 8, version: 2, fileOffset: 0x8f121, valid: load.valid,
    });
  });

  test('ShutdownPerfDiagLogger (build 18362): 13 753 image events, v3 with signature bytes; rows checked against the bytes', () => {
    const r = decodeSync(readCorpus('airbus-ShutdownPerfDiagLogger.etl'), { engine });
    expect([r.samples.length, r.imageEvents.length]).toEqual([0, 13753]);
    const images = r.imageEvents.toArray();
    // file offset 0x134C0: marker C0110003 (PERFINFO64 v3), Size 0xAE, HookId 0x1403 (DCStart), TS 0x44BB790A4A;
    // payload: ImageBase 0x7FF993B80000, ImageSize 0x1F0000, ProcessId 4, ImageChecksum 0x1EF8E0,
    // TimeDateStamp 0, SignatureLevel 0x0C, SignatureType 2, Reserved0 0, DefaultBase 0x7FF993B80000,
    // Reserved1-4 0, UTF-16Z "\Device\HarddiskVolume3\Windows\System32\ntdll.dll"
    const ntdll = images.find((x) => x.fileOffset === 0x134c0)!;
    expect(ntdll).toEqual({
      timestamp: 0x44bb790a4an, cpu: 0, opcode: 3, processId: 4, imageBase: 0x7ff993b80000n, imageSize: 0x1f0000n,
      imageChecksum: 0x1ef8e0, timeDateStamp: 0, signatureLevel: 12, signatureType: 2, defaultBase: 0x7ff993b80000n,
      fileName: '\\Device\\HarddiskVolume3\\Windows\\System32\\ntdll.dll', pointerSize: 8, version: 3, fileOffset: 0x134c0,
      valid: 0xffff,
    });
    // file offset 0x13570: marker C0020003 (SYSTEM64 v3), Size 0x9C, HookId 0x1403, header ThreadId 0x103C /
    // ProcessId 4, TS 0x44BB790A57; payload: ImageBase 0xFFFFF802424AB000, ImageSize 0xAB6000, ProcessId 0,
    // ImageChecksum 0x980591, TimeDateStamp 0x4269A790, SignatureLevel 0, SignatureType 1, DefaultBase 0,
    // UTF-16Z "\SystemRoot\system32\ntoskrnl.exe"
    expect(images.find((x) => x.fileOffset === 0x13570)).toEqual({
      timestamp: 0x44bb790a57n, cpu: 0, opcode: 3, processId: 0, imageBase: 0xfffff802424ab000n, imageSize: 0xab6000n,
      imageChecksum: 0x980591, timeDateStamp: 0x4269a790, signatureLevel: 0, signatureType: 1, defaultBase: 0n,
      fileName: '\\SystemRoot\\system32\\ntoskrnl.exe', pointerSize: 8, version: 3, fileOffset: 0x13570, valid: 0xffff,
    });
    // file offset 0xA6138: marker C0020003 (SYSTEM64 v3), Size 0xBE, HookId 0x030A (Load), header ThreadId
    // 0x1BFC / ProcessId 0x1B98, TS 0x44BB80B452; payload: ImageBase 0x75610000 (a 32-bit DLL of a WOW64
    // process), ImageSize 0x5E000, ProcessId 0x1B98, ImageChecksum 0x6658E, TimeDateStamp 0x6C20697E,
    // SignatureLevel 0x0C, SignatureType 2, DefaultBase bytes 00 50 05 00 00 00 61 75 (PE32: BaseOfData
    // 0x55000, ImageBase 0x75610000), UTF-16Z "\Device\HarddiskVolume3\Windows\SysWOW64\coml2.dll"
    expect(images.find((x) => x.fileOffset === 0xa6138)).toEqual({
      timestamp: 0x44bb80b452n, cpu: 1, opcode: 10, processId: 0x1b98, imageBase: 0x75610000n, imageSize: 0x5e000n,
      imageChecksum: 0x6658e, timeDateStamp: 0x6c20697e, signatureLevel: 12, signatureType: 2, defaultBase: 0x7561000000055000n,
      fileName: '\\Device\\HarddiskVolume3\\Windows\\SysWOW64\\coml2.dll', pointerSize: 8, version: 3, fileOffset: 0xa6138,
      valid: 0xffff,
    });
  });
});
