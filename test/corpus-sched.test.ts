// Thread and Process events of the real corpus: every one decoded (zero skipped, counts equal to the
// independent walker's per-HookId counts), the lifetimes the files hold, and field-level expectations for
// rows checked by hand against the bytes (offsets below).
import { describe, expect, test } from 'vitest';
import { decodeSync } from '../src/node.js';
import { corpusFiles, corpusTestsEnabled, readCorpus, readExpected } from './helpers/corpus.js';

const THREAD_HOOKS = /^0x0(50[1-4]|548)$/;
const PROCESS_HOOKS = /^0x0(30[1-4]|327)$/;
const ENGINES = ['wasm', 'reference'] as const;
const corpus = corpusTestsEnabled();

describe.skipIf(!corpus).each(ENGINES)('%s engine', (engine) => {
  test.each(corpusFiles())('%s: every Thread / Process / ReadyThread event decoded, none skipped', (name) => {
    const r = decodeSync(readCorpus(name), { engine });
    const kinds = readExpected(name).eventsByKind;
    const count = (re: RegExp) => kinds.filter((k) => re.test(k.id)).reduce((n, k) => n + k.count, 0);
    expect(r.threadEvents.length).toBe(count(THREAD_HOOKS));
    expect(r.processEvents.length).toBe(count(PROCESS_HOOKS));
    expect(r.readythread.length).toBe(count(/^0x0532$/));
    const d = r.summary.diagnostics;
    for (const c of ['threadEventsSkippedVersion', 'threadEventsSkippedShort', 'processEventsSkippedVersion', 'processEventsSkippedShort', 'readyThreadSkippedShort', 'stringUnterminated']) {
      expect([c, d[c]]).toEqual([c, 0]);
    }
  });

  test('ShutdownPerfDiagLogger (build 18362): 1532 thread and 97 process lifetimes; rows checked against the bytes', () => {
    const r = decodeSync(readCorpus('airbus-ShutdownPerfDiagLogger.etl'), { engine });
    expect([r.threadEvents.length, r.processEvents.length, r.threads.length, r.processes.length]).toEqual([3058, 196, 1532, 97]);
    // file offset 0x1C5E0: marker C0020003 (SYSTEM64 v3), Size 0x98, HookId 0x0503 (DCStart), TS 0x44BB791546;
    // payload: ProcessId 0x1AC, TThreadId 0x230, 7 pointers (Win32StartAddr 0x7FF9909C32C0 the 6th),
    // SubProcessTag 0, BasePriority 0x10, then UTF-16Z "Win32k Raw Input Thread"
    const t = r.threadEvents.toArray().find((x) => x.fileOffset === 0x1c5e0)!;
    expect(t).toEqual({
      timestamp: 0x44bb791546n,
      cpu: 0,
      opcode: 3,
      threadId: 560,
      processId: 428,
      win32StartAddr: 0x7ff9909c32c0n,
      basePriority: 16,
      name: 'Win32k Raw Input Thread',
      version: 3,
      fileOffset: 0x1c5e0,
      valid: t.valid,
    });
    // file offset 0x1C0F8: marker C0110004 (PERFINFO64 v4), Size 0x248, HookId 0x0303 (DCStart), TS 0x44BB791372;
    // payload: UniqueProcessKey 0xFFFFCA8687720140, ProcessId 0x1AC, ParentId 0x1A4, SessionId 0,
    // ExitStatus 0x103, DTB, Flags 4, UserSID 0xFFFFB488FC9CDC20 + 8 + S-1-5-18 (12 bytes), "csrss.exe\0",
    // UTF-16Z "%SystemRoot%\system32\csrss.exe ObjectDirectory=…"
    const p = r.processEvents.toArray().find((x) => x.fileOffset === 0x1c0f8)!;
    expect({ ...p, commandLine: p.commandLine!.slice(0, 48) }).toEqual({
      timestamp: 0x44bb791372n,
      cpu: 0,
      opcode: 3,
      processId: 428,
      parentId: 420,
      sessionId: 0,
      exitStatus: 259,
      uniqueProcessKey: 0xffffca8687720140n,
      imageFileName: 'csrss.exe',
      commandLine: '%SystemRoot%\\system32\\csrss.exe ObjectDirectory=',
      packageFullName: '',
      exitTime: null,
      version: 4,
      fileOffset: 0x1c0f8,
      valid: p.valid,
    });
    // the lifetimes: Idle and System with session 4294967295, rundown-only (no start), csrss 428 named
    const procs = r.processes.toArray();
    expect(procs.slice(0, 2).map((x) => [x.processId, x.imageFileName, x.sessionId, x.startTime, x.exitStatus])).toEqual([
      [0, 'Idle', 4294967295, null, null],
      [4, 'System', 4294967295, null, null],
    ]);
    const csrss = r.threads.toArray().find((x) => x.threadId === 560)!;
    expect([csrss.processId, csrss.name, csrss.startTime, csrss.endTime]).toEqual([428, 'Win32k Raw Input Thread', null, null]);
    // exit statuses come from End events only
    expect(procs.filter((x) => x.endTime !== null).every((x) => x.exitStatus !== null)).toBe(true);
    expect(procs.filter((x) => x.endTime === null).every((x) => x.exitStatus === null)).toBe(true);
  });

  test('perfview-net.4.5.2.x64 (compressed, build 9200 kernel events): 672 thread and 33 process lifetimes', () => {
    const r = decodeSync(readCorpus('perfview-net.4.5.2.x64.etl'), { engine });
    expect([r.threadEvents.length, r.processEvents.length, r.threads.length, r.processes.length]).toEqual([1358, 68, 672, 33]);
  });
});
