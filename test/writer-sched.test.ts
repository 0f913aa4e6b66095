// Tests of the writer's part F and G events (Thread, Process, SetName, ReadyThread, SampledProfile, Image)
// and of the scheduler simulation. The written bytes are re-read with an independent reader written here from
// docs/format.md (literal offsets and the formulas of parts A, B, F and G), not through the writer's constants.
import { describe, expect, test } from 'vitest';
import { decodeSync } from '../src/node.js';
import { generateSampleTrace, simulateSchedule, writeTrace } from '../src/writer/index.js';
import type {
  EventSpec,
  IdentityHeaderKind,
  ImageSpec,
  ProcessSpec,
  ProcessTruth,
  ReadyThreadSpec,
  ReadyTruth,
  SampledProfileSpec,
  ScheduleOptions,
  SetThreadNameSpec,
  SimulatedSchedule,
  SwitchTruth,
  ThreadSpec,
  ThreadTruth,
  TraceDescription,
} from '../src/writer/index.js';

// ---------------------------------------------------------------------------------------------
// independent reader (uncompressed traces)

const u16 = (b: Uint8Array, o: number): number => b[o]! | (b[o + 1]! << 8);
const u32 = (b: Uint8Array, o: number): number => (b[o]! | (b[o + 1]! << 8) | (b[o + 2]! << 16) | (b[o + 3]! << 24)) >>> 0;
const i32 = (b: Uint8Array, o: number): number => u32(b, o) | 0;
const u64 = (b: Uint8Array, o: number): bigint => BigInt(u32(b, o)) | (BigInt(u32(b, o + 4)) << 32n);
const i8 = (b: Uint8Array, o: number): number => (b[o]! << 24) >> 24;
const ptr = (b: Uint8Array, o: number, P: number): bigint => (P === 8 ? u64(b, o) : BigInt(u32(b, o)));

/** a cheap assertion for hot loops (expect() costs too much per event) */
function check(cond: boolean, msg: string): void {
  if (!cond) throw new Error(msg);
}

/** UTF-16LE up to the 2-byte terminator; returns [string, offset after the terminator] */
function utf16z(b: Uint8Array, o: number): [string, number] {
  let s = '';
  for (;;) {
    check(o + 2 <= b.length, 'UTF-16 string runs past the payload');
    const c = u16(b, o);
    o += 2;
    if (c === 0) return [s, o];
    s += String.fromCharCode(c);
  }
}

/** ANSI up to the NUL byte */
function ansiz(b: Uint8Array, o: number): [string, number] {
  let s = '';
  for (;;) {
    check(o < b.length, 'ANSI string runs past the payload');
    const c = b[o++]!;
    if (c === 0) return [s, o];
    s += String.fromCharCode(c);
  }
}

interface RawEv {
  cpu: number;
  seq: number;
  headerType: number;
  /** marker low byte */
  version: number;
  hookId: number;
  timestamp: bigint;
  /** SYSTEM headers only */
  headerThreadId: number | null;
  headerProcessId: number | null;
  /** 4 or 8, from the header type (B.2) */
  P: 4 | 8;
  payload: Uint8Array;
}

/** Every SYSTEM/PERFINFO event of the data buffers (A.2, A.5, B.1–B.4), per CPU in SequenceNumber order. */
function readEvents(bytes: Uint8Array): RawEv[] {
  const bufs: { off: number; size: number; seq: number; cpu: number; filled: number; type: number }[] = [];
  for (let off = 0; off < bytes.length; ) {
    const size = u32(bytes, off);
    expect(size).toBeGreaterThanOrEqual(0x48);
    expect(u16(bytes, off + 0x34) & 0x40).toBe(0); // uncompressed only
    bufs.push({ off, size, seq: Number(u64(bytes, off + 0x18)), cpu: u16(bytes, off + 0x28) & 0x7ff, filled: u32(bytes, off + 0x30), type: u16(bytes, off + 0x36) });
    off += size;
  }
  const out: RawEv[] = [];
  for (const b of bufs.filter((x) => x.type !== 4).sort((a, c) => a.seq - c.seq)) {
    let p = b.off + 0x48;
    const end = b.off + b.filled;
    while (p + 4 <= end) {
      const m = u32(bytes, p);
      if (m === 0xffffffff) break;
      let size: number;
      if (((m >>> 24) & 0xd0) === 0x90) {
        size = m & 0xffff; // MESSAGE (B.2)
      } else {
        check(m >>> 30 === 3, `bad marker ${m.toString(16)}`);
        const ht = (m >>> 16) & 0xff;
        const ext = (m & 0x8000 ? 8 : 0) + 8 * ((m >>> 8) & 7);
        if (ht <= 0x04 || ht === 0x10 || ht === 0x11) {
          size = u16(bytes, p + 4);
          let hdr: number;
          let ts: bigint;
          let tid: number | null = null;
          let pid: number | null = null;
          if (ht === 0x10 || ht === 0x11) {
            hdr = 0x10 + ext;
            ts = u64(bytes, p + 8);
          } else {
            hdr = ht <= 0x02 ? 0x20 + ext : 0x18;
            tid = u32(bytes, p + 8);
            pid = u32(bytes, p + 0xc);
            ts = u64(bytes, p + 0x10);
          }
          check(size >= hdr, 'Size below the header size');
          out.push({
            cpu: b.cpu, seq: b.seq, headerType: ht, version: m & 0xff, hookId: u16(bytes, p + 6), timestamp: ts,
            headerThreadId: tid, headerProcessId: pid, P: ht === 0x01 || ht === 0x03 || ht === 0x10 ? 4 : 8,
            payload: bytes.subarray(p + hdr, p + size),
          });
        } else {
          size = u16(bytes, p); // FULL / INSTANCE / EVENT_HEADER: u16 Size at +0
        }
      }
      check(size >= 8 && p + size <= end, `bad Size ${size}`);
      p += (size + 7) & ~7;
    }
  }
  return out;
}

// ---- F.2 Thread_TypeGroup1, offsets as the formulas of the table: 8 + k·P for the 7 pointers

interface ThreadPayload {
  processId: number;
  threadId: number;
  stackBase: bigint;
  stackLimit: bigint;
  userStackBase: bigint;
  userStackLimit: bigint;
  startAddrOrAffinity: bigint;
  win32StartAddr: bigint;
  tebBase: bigint;
  subProcessTag: number;
  basePriority: number | null;
  pagePriority: number | null;
  ioPriority: number | null;
  threadFlags: number | null;
  name: string | null;
}

function parseThread(d: Uint8Array, version: number, P: 4 | 8): ThreadPayload {
  const fixed = version === 2 ? 12 + 7 * P : 16 + 7 * P; // V2: 40 / 68, V3+: 44 / 72
  expect(d.length).toBeGreaterThanOrEqual(fixed);
  const t: ThreadPayload = {
    processId: u32(d, 0),
    threadId: u32(d, 4),
    stackBase: ptr(d, 8, P),
    stackLimit: ptr(d, 8 + P, P),
    userStackBase: ptr(d, 8 + 2 * P, P),
    userStackLimit: ptr(d, 8 + 3 * P, P),
    startAddrOrAffinity: ptr(d, 8 + 4 * P, P),
    win32StartAddr: ptr(d, 8 + 5 * P, P),
    tebBase: ptr(d, 8 + 6 * P, P),
    subProcessTag: u32(d, 8 + 7 * P),
    basePriority: null,
    pagePriority: null,
    ioPriority: null,
    threadFlags: null,
    name: null,
  };
  if (version >= 3) {
    t.basePriority = d[12 + 7 * P]!;
    t.pagePriority = d[13 + 7 * P]!;
    t.ioPriority = d[14 + 7 * P]!;
    t.threadFlags = d[15 + 7 * P]!;
    if (version === 4) expect(d.length).toBeGreaterThan(fixed); // V4: name required
    if (d.length > fixed) {
      const [name, end] = utf16z(d, 16 + 7 * P);
      t.name = name;
      expect(end).toBe(d.length);
    }
  } else {
    expect(d.length).toBe(fixed);
  }
  return t;
}

// ---- F.3 Process_TypeGroup1

interface ProcessPayload {
  uniqueProcessKey: bigint;
  processId: number;
  parentId: number;
  sessionId: number;
  exitStatus: number;
  directoryTableBase: bigint | null;
  flags: number | null;
  /** null = the 4-byte zero form; else the TOKEN_USER block's two pointers and the SID bytes */
  sid: { pointers: [bigint, bigint]; bytes: Uint8Array } | null;
  imageFileName: string;
  commandLine: string;
  packageFullName: string | null;
  applicationId: string | null;
  exitTime: bigint | null;
}

function parseProcess(d: Uint8Array, version: number, P: 4 | 8): ProcessPayload {
  const r: ProcessPayload = {
    uniqueProcessKey: ptr(d, 0, P),
    processId: u32(d, P),
    parentId: u32(d, P + 4),
    sessionId: u32(d, P + 8),
    exitStatus: i32(d, P + 0xc),
    directoryTableBase: version >= 3 ? ptr(d, P + 0x10, P) : null,
    flags: version >= 4 ? u32(d, 2 * P + 0x10) : null,
    sid: null,
    imageFileName: '',
    commandLine: '',
    packageFullName: null,
    applicationId: null,
    exitTime: null,
  };
  let o = version === 2 ? P + 0x10 : version === 3 ? 2 * P + 0x10 : 2 * P + 0x14;
  if (u32(d, o) === 0) {
    o += 4;
  } else {
    const count = d[o + 2 * P + 1]!;
    const len = 8 + 4 * count;
    r.sid = { pointers: [ptr(d, o, P), ptr(d, o + P, P)], bytes: d.slice(o + 2 * P, o + 2 * P + len) };
    o += 2 * P + len;
  }
  [r.imageFileName, o] = ansiz(d, o);
  [r.commandLine, o] = utf16z(d, o);
  if (version >= 4) {
    [r.packageFullName, o] = utf16z(d, o);
    [r.applicationId, o] = utf16z(d, o);
  }
  if (version === 5) {
    r.exitTime = u64(d, o);
    o += 8;
  }
  expect(o).toBe(d.length);
  return r;
}

/** SID bytes → 'S-R-A-S1-…' (authority 48-bit big-endian, sub-authorities u32 LE) */
function sidString(b: Uint8Array): string {
  let auth = 0n;
  for (let i = 0; i < 6; i++) auth = (auth << 8n) | BigInt(b[2 + i]!);
  const subs: number[] = [];
  for (let i = 0; i < b[1]!; i++) subs.push(u32(b, 8 + 4 * i));
  return ['S', b[0], auth, ...subs].join('-');
}

// ---- F.4, F.5
const parseReady = (d: Uint8Array) => {
  expect(d.length).toBe(8);
  return { threadId: u32(d, 0), adjustReason: d[4]!, adjustIncrement: i8(d, 5), flags: d[6]!, spare: d[7]! };
};
const parseSetName = (d: Uint8Array) => {
  const [name, end] = utf16z(d, 8);
  expect(end).toBe(d.length);
  return { processId: u32(d, 0), threadId: u32(d, 4), name };
};

const HT: Record<IdentityHeaderKind, number> = { SYSTEM32: 0x01, SYSTEM64: 0x02, PERFINFO32: 0x10, PERFINFO64: 0x11 };

function writeOne(e: EventSpec, pointerSize: 4 | 8 = 8, extra: Partial<TraceDescription> = {}): RawEv {
  const t = writeTrace({ pointerSize, numberOfProcessors: 2, outOfOrder: false, events: [e], ...extra });
  const evs = readEvents(t.bytes);
  expect(evs.length).toBe(1);
  return evs[0]!;
}

// ---------------------------------------------------------------------------------------------

describe('Thread_TypeGroup1 (F.2)', () => {
  const base = (o: Partial<ThreadSpec> = {}): ThreadSpec => ({
    kind: 'thread', cpu: 1, timestamp: 5_000_000n, opcode: 'dcStart', processId: 0x1a7c, threadId: 0x1e98,
    stackBase: 0xfffff580f713b000n & 0xffffffffn, stackLimit: 0xf7135000n, userStackBase: 0x3c439400n, userStackLimit: 0x3c439380n,
    affinity: 3n, win32StartAddr: 0x7ff9909c4150n & 0xffffffffn, tebBase: 0x3c4350b0n, subProcessTag: 0x11223344,
    basePriority: 13, pagePriority: 5, ioPriority: 2, threadFlags: 0x81, name: 'CrBrowserMain', ...o,
  });

  const hooks = { start: 0x0501, end: 0x0502, dcStart: 0x0503, dcEnd: 0x0504 } as const;

  for (const P of [4, 8] as const) {
    for (const header of (P === 8 ? ['SYSTEM64', 'PERFINFO64'] : ['SYSTEM32', 'PERFINFO32']) as IdentityHeaderKind[]) {
      for (const version of [2, 3, 4] as const) {
        test(`v${version}, ${header}: every field at its offset, every opcode`, () => {
          for (const opcode of ['start', 'end', 'dcStart', 'dcEnd'] as const) {
            const s = base({ version, header, opcode, headerThreadId: 0x777, headerProcessId: 0x55 });
            const ev = writeOne(s, P);
            expect(ev.hookId).toBe(hooks[opcode]);
            expect(ev.headerType).toBe(HT[header]);
            expect(ev.version).toBe(version);
            expect(ev.timestamp).toBe(5_000_000n);
            expect(ev.cpu).toBe(1);
            expect(ev.P).toBe(P);
            if (header.startsWith('SYSTEM')) {
              expect([ev.headerThreadId, ev.headerProcessId]).toEqual([0x777, 0x55]);
            }
            const t = parseThread(ev.payload, version, P);
            expect(t).toEqual({
              processId: 0x1a7c, threadId: 0x1e98, stackBase: s.stackBase, stackLimit: s.stackLimit,
              userStackBase: s.userStackBase, userStackLimit: s.userStackLimit, startAddrOrAffinity: 3n,
              win32StartAddr: s.win32StartAddr, tebBase: s.tebBase, subProcessTag: 0x11223344,
              basePriority: version >= 3 ? 13 : null, pagePriority: version >= 3 ? 5 : null, ioPriority: version >= 3 ? 2 : null,
              threadFlags: version >= 3 ? 0x81 : null, name: version >= 3 ? 'CrBrowserMain' : null,
            });
            // sizes of F.2: V2 40/68, V3 44/72 + name
            const nameBytes = version >= 3 ? 2 * 'CrBrowserMain'.length + 2 : 0;
            expect(ev.payload.length).toBe((version === 2 ? 12 : 16) + 7 * P + nameBytes);
          }
        });
      }
    }
  }

  test('v3 name only when given (empty = 2-byte terminator); v4 name always; StartAddr when no affinity', () => {
    const noName = writeOne(base({ version: 3, name: undefined, affinity: undefined, startAddr: 0x1234n }));
    expect(noName.payload.length).toBe(72);
    expect(parseThread(noName.payload, 3, 8).name).toBeNull();
    expect(parseThread(noName.payload, 3, 8).startAddrOrAffinity).toBe(0x1234n);
    const empty = writeOne(base({ version: 3, name: '' }));
    expect(empty.payload.length).toBe(74); // as in 18362 files
    expect(parseThread(empty.payload, 3, 8).name).toBe('');
    const v4 = writeOne(base({ version: 4, name: undefined }), 4);
    expect(v4.payload.length).toBe(44 + 2);
    expect(parseThread(v4.payload, 4, 4).name).toBe('');
    const uni = writeOne(base({ version: 4, name: 'Wörker ☃ 線程' }));
    expect(parseThread(uni.payload, 4, 8).name).toBe('Wörker ☃ 線程');
  });

  test('defaults: version 3, SYSTEM header by pointer size, header ids never the payload ids, priorities 8/5/2/0', () => {
    for (const P of [4, 8] as const) {
      const ev = writeOne({ kind: 'thread', cpu: 0, timestamp: 2_000_000n, opcode: 'start', processId: 0x40, threadId: 0x44 }, P);
      expect(ev.headerType).toBe(P === 8 ? 0x02 : 0x01);
      expect(ev.version).toBe(3);
      expect(ev.headerThreadId).not.toBe(0x44);
      expect(ev.headerProcessId).not.toBe(0x40);
      const t = parseThread(ev.payload, 3, P);
      expect([t.processId, t.threadId, t.basePriority, t.pagePriority, t.ioPriority, t.threadFlags, t.name]).toEqual([0x40, 0x44, 8, 5, 2, 0, null]);
      expect(ev.payload.length).toBe(16 + 7 * P);
    }
  });

  test('validation: versions, pointer widths, names', () => {
    const w = (o: Partial<ThreadSpec>, P: 4 | 8 = 8) => () => writeOne(base(o), P);
    expect(w({ version: 1 as 2 })).toThrow(/version/);
    expect(w({ version: 5 as 2 })).toThrow(/version/);
    expect(w({ opcode: 'stop' as 'start' })).toThrow(/opcode/);
    expect(w({ header: 'COMPACT64' as 'SYSTEM64' })).toThrow(/header/);
    expect(w({ stackBase: 1n << 32n }, 4)).toThrow(/stackBase/);
    expect(w({ stackBase: 1n << 32n, header: 'SYSTEM64' }, 4)).not.toThrow();
    expect(w({ name: 'a\u0000b' })).toThrow(/name/);
    expect(w({ basePriority: 256 })).toThrow(/basePriority/);
    expect(w({ threadId: -1 })).toThrow(/threadId/);
  });
});

describe('Process_TypeGroup1 (F.3)', () => {
  const base = (o: Partial<ProcessSpec> = {}): ProcessSpec => ({
    kind: 'process', cpu: 0, timestamp: 3_000_000n, opcode: 'end', processId: 0x1a7c, parentId: 0xf10, sessionId: 1,
    exitStatus: 0x40010004, uniqueProcessKey: 0x86b693c0n, directoryTableBase: 0x26f5a000n, flags: 0x2,
    userSid: 'S-1-5-21-4150174568-1238771585-1724997581-1000', userSidPointers: [0xfcd44b60n, 0xb4880000n],
    imageFileName: 'SecurityHealthSystray.exe', commandLine: '"C:\\Windows\\System32\\SecurityHealthSystray.exe" ',
    packageFullName: 'Microsoft.Pkg_1.0_x64__8wekyb3d8bbwe', applicationId: 'App', exitTime: 0x01d5ee5aba25fc67n, ...o,
  });
  const hooks = { start: 0x0301, end: 0x0302, dcStart: 0x0303, dcEnd: 0x0304, defunct: 0x0327 } as const;

  for (const P of [4, 8] as const) {
    for (const header of (P === 8 ? ['SYSTEM64', 'PERFINFO64'] : ['SYSTEM32', 'PERFINFO32']) as IdentityHeaderKind[]) {
      for (const version of [2, 3, 4, 5] as const) {
        test(`v${version}, ${header}: fixed part, UserSID, strings, exit time`, () => {
          for (const opcode of ['start', 'end', 'dcStart', 'dcEnd', 'defunct'] as const) {
            const ev = writeOne(base({ version, header, opcode, headerThreadId: 0x1a80, headerProcessId: 0x1a7c }), P);
            expect(ev.hookId).toBe(hooks[opcode]);
            expect(ev.headerType).toBe(HT[header]);
            expect(ev.version).toBe(version);
            if (header.startsWith('SYSTEM')) expect([ev.headerThreadId, ev.headerProcessId]).toEqual([0x1a80, 0x1a7c]);
            const r = parseProcess(ev.payload, version, P);
            expect(r.sid).not.toBeNull();
            expect(sidString(r.sid!.bytes)).toBe('S-1-5-21-4150174568-1238771585-1724997581-1000');
            expect(r.sid!.pointers).toEqual([0xfcd44b60n, 0xb4880000n]);
            expect({ ...r, sid: null }).toEqual({
              uniqueProcessKey: 0x86b693c0n, processId: 0x1a7c, parentId: 0xf10, sessionId: 1, exitStatus: 0x40010004,
              directoryTableBase: version >= 3 ? 0x26f5a000n : null, flags: version >= 4 ? 2 : null, sid: null,
              imageFileName: 'SecurityHealthSystray.exe', commandLine: '"C:\\Windows\\System32\\SecurityHealthSystray.exe" ',
              packageFullName: version >= 4 ? 'Microsoft.Pkg_1.0_x64__8wekyb3d8bbwe' : null, applicationId: version >= 4 ? 'App' : null,
              exitTime: version === 5 ? 0x01d5ee5aba25fc67n : null,
            });
          }
        });
      }
    }
  }

  test('UserSID offsets of F.3 (x64 V4 0x24, x64 V3 0x20, x86 V4 0x1C) and the zero form', () => {
    const cases: [4 | 8, 2 | 3 | 4 | 5, number][] = [[8, 4, 0x24], [8, 5, 0x24], [8, 3, 0x20], [4, 4, 0x1c], [4, 3, 0x18], [8, 2, 0x18], [4, 2, 0x14]];
    for (const [P, version, at] of cases) {
      const ev = writeOne(base({ version, userSid: null, imageFileName: 'Idle' }), P);
      expect(u32(ev.payload, at)).toBe(0);
      expect(String.fromCharCode(...ev.payload.subarray(at + 4, at + 8))).toBe('Idle');
      const r = parseProcess(ev.payload, version, P);
      expect(r.sid).toBeNull();
      const withSid = writeOne(base({ version, userSid: 'S-1-5-18', userSidPointers: undefined }), P);
      // two pointers, then revision 1, count 1, authority 5, sub-authority 18
      expect(Array.from(withSid.payload.subarray(at + 2 * P, at + 2 * P + 12))).toEqual([1, 1, 0, 0, 0, 0, 0, 5, 18, 0, 0, 0]);
      expect(ptr(withSid.payload, at, P)).not.toBe(0n);
    }
  });

  test('defaults: version 4, headers as in Win10 files, exitStatus 259 except end/defunct, LocalSystem SID', () => {
    const mk = (opcode: ProcessSpec['opcode'], P: 4 | 8) =>
      writeOne({ kind: 'process', cpu: 0, timestamp: 2_000_000n, opcode, processId: 4, imageFileName: 'System' }, P);
    for (const P of [4, 8] as const) {
      for (const [opcode, system, exit] of [['start', true, 259], ['end', true, 0], ['dcStart', false, 259], ['dcEnd', false, 259], ['defunct', false, 0]] as const) {
        const ev = mk(opcode, P);
        expect(ev.version).toBe(4);
        expect(ev.headerType).toBe(system ? (P === 8 ? 0x02 : 0x01) : P === 8 ? 0x11 : 0x10);
        if (system) expect(ev.headerProcessId).not.toBe(4);
        const r = parseProcess(ev.payload, 4, P);
        expect(r.exitStatus).toBe(exit);
        expect(sidString(r.sid!.bytes)).toBe('S-1-5-18');
        expect([r.commandLine, r.packageFullName, r.applicationId, r.imageFileName]).toEqual(['', '', '', 'System']);
      }
    }
  });

  test('SID bytes, negative exit status, sessionId 0xFFFFFFFF, ANSI image names', () => {
    const sid = new Uint8Array([1, 2, 0, 0, 0, 0, 0, 5, 32, 0, 0, 0, 0x20, 2, 0, 0]); // S-1-5-32-544
    const ev = writeOne(base({ version: 4, userSid: sid, exitStatus: -1073741510, sessionId: 0xffffffff, imageFileName: 'caf\u00e9.exe' }));
    const r = parseProcess(ev.payload, 4, 8);
    expect(sidString(r.sid!.bytes)).toBe('S-1-5-32-544');
    expect(r.exitStatus).toBe(-1073741510);
    expect(r.sessionId).toBe(0xffffffff);
    expect(r.imageFileName).toBe('caf\u00e9.exe');
    expect(writeOne(base({ exitStatus: 0xc000013a })).payload).toEqual(writeOne(base({ exitStatus: 0xc000013a - 2 ** 32 })).payload);
  });

  test('validation', () => {
    const w = (o: Partial<ProcessSpec>, P: 4 | 8 = 8) => () => writeOne(base(o), P);
    expect(w({ version: 1 as 2 })).toThrow(/version/);
    expect(w({ version: 6 as 2 })).toThrow(/version/);
    expect(w({ opcode: 'zombie' as 'end' })).toThrow(/opcode/);
    expect(w({ imageFileName: 'x\u0100' })).toThrow(/imageFileName/);
    expect(w({ imageFileName: 'a\u0000' })).toThrow(/imageFileName/);
    expect(w({ commandLine: 'a\u0000' })).toThrow(/commandLine/);
    expect(w({ userSid: 'X-1-5' })).toThrow(/userSid/);
    expect(w({ userSid: new Uint8Array([1, 2, 0, 0, 0, 0, 0, 5, 1, 0, 0, 0]) })).toThrow(/userSid/);
    expect(w({ userSidPointers: [0n, 0n] })).toThrow(/userSidPointers/);
    expect(w({ uniqueProcessKey: 1n << 40n }, 4)).toThrow(/uniqueProcessKey/);
    expect(w({ exitStatus: 2 ** 32 })).toThrow(/exitStatus/);
    expect(w({ commandLine: 'x'.repeat(40_000) })).toThrow(/size/);
  });
});

describe('SetName (F.5) and ReadyThread (F.4)', () => {
  test('SetName: PERFINFO v2 by default, PID, TID, UTF-16Z name; every header kind', () => {
    for (const P of [4, 8] as const) {
      const s: SetThreadNameSpec = { kind: 'setThreadName', cpu: 1, timestamp: 4_000_000n, processId: 0x1234, threadId: 0x5678, name: 'Chrome_IOThread' };
      const ev = writeOne(s, P);
      expect([ev.hookId, ev.headerType, ev.version, ev.timestamp]).toEqual([0x0548, P === 8 ? 0x11 : 0x10, 2, 4_000_000n]);
      expect(parseSetName(ev.payload)).toEqual({ processId: 0x1234, threadId: 0x5678, name: 'Chrome_IOThread' });
      expect(ev.payload.length).toBe(8 + 2 * 15 + 2);
      for (const header of ['SYSTEM32', 'SYSTEM64', 'PERFINFO32', 'PERFINFO64'] as const) {
        const e2 = writeOne({ ...s, header, name: '', version: 3, headerThreadId: 9, headerProcessId: 10 }, P);
        expect([e2.headerType, e2.version]).toEqual([HT[header], 3]);
        if (header.startsWith('SYSTEM')) expect([e2.headerThreadId, e2.headerProcessId]).toEqual([9, 10]);
        expect(parseSetName(e2.payload)).toEqual({ processId: 0x1234, threadId: 0x5678, name: '' });
      }
    }
  });

  test('ReadyThread: 8 bytes, signed AdjustIncrement, PERFINFO v2 by default; every header kind', () => {
    for (const P of [4, 8] as const) {
      const s: ReadyThreadSpec = { kind: 'readyThread', cpu: 1, timestamp: 4_500_000n, threadId: 0x2a0c, adjustReason: 2, adjustIncrement: -3, flags: 0x9 };
      const ev = writeOne(s, P);
      expect([ev.hookId, ev.headerType, ev.version]).toEqual([0x0532, P === 8 ? 0x11 : 0x10, 2]);
      expect(parseReady(ev.payload)).toEqual({ threadId: 0x2a0c, adjustReason: 2, adjustIncrement: -3, flags: 9, spare: 0 });
      for (const header of ['SYSTEM32', 'SYSTEM64', 'PERFINFO32', 'PERFINFO64'] as const) {
        const e2 = writeOne({ ...s, header, adjustIncrement: 127, spare: 0xee }, P);
        expect(e2.headerType).toBe(HT[header]);
        if (header.startsWith('SYSTEM')) expect(e2.headerThreadId).not.toBe(0x2a0c);
        expect(parseReady(e2.payload)).toEqual({ threadId: 0x2a0c, adjustReason: 2, adjustIncrement: 127, flags: 9, spare: 0xee });
      }
      const d = parseReady(writeOne({ kind: 'readyThread', cpu: 0, timestamp: 2_000_000n, threadId: 8 }, P).payload);
      expect(d).toEqual({ threadId: 8, adjustReason: 0, adjustIncrement: 0, flags: 0, spare: 0 });
    }
    expect(() => writeOne({ kind: 'readyThread', cpu: 0, timestamp: 2_000_000n, threadId: 8, adjustIncrement: 128 })).toThrow(/adjustIncrement/);
    expect(() => writeOne({ kind: 'readyThread', cpu: 0, timestamp: 2_000_000n, threadId: 8, flags: 256 })).toThrow(/flags/);
    expect(() => writeOne({ kind: 'setThreadName', cpu: 0, timestamp: 2_000_000n, threadId: 8, processId: 4, name: 'a\u0000' })).toThrow(/name/);
  });
});

describe('SampledProfile (G.1), Image_Load (G.2) and SampledProfileInterval (G.4)', () => {
  /** G.1 at literal offsets: x86 IP 0, ThreadId 4, Count 8, Flags 0x0A, Rank 0x0B; x64 IP 0, ThreadId 8, Count 0x0C, Flags 0x0E, Rank 0x0F */
  const parseSample = (b: Uint8Array, P: number) => ({
    instructionPointer: ptr(b, 0, P), threadId: u32(b, P), count: u16(b, P + 4), flags: b[P + 6]!, rank: b[P + 7]!, size: b.length,
  });
  /** G.2 at literal offsets: x86 0x00 base, 0x04 size, 0x08 pid, 0x0C checksum, 0x10 stamp, 0x14/0x15 signature,
   *  0x18 DefaultBase, 0x2C name; x64 0x00, 0x08, 0x10, 0x14, 0x18, 0x1C/0x1D, 0x20, 0x38 */
  const parseImage = (b: Uint8Array, P: number) => ({
    imageBase: ptr(b, 0, P), imageSize: ptr(b, P, P), processId: u32(b, 2 * P), imageChecksum: u32(b, 2 * P + 4), timeDateStamp: u32(b, 2 * P + 8),
    reserved0: u32(b, 2 * P + 0x0c), defaultBase: ptr(b, 2 * P + 0x10, P), reserved: [...b.subarray(3 * P + 0x10, 3 * P + 0x20)].every((x) => x === 0),
    fileName: utf16z(b, 3 * P + 0x20)[0], end: utf16z(b, 3 * P + 0x20)[1], size: b.length,
  });

  test('SampledProfile: P + 8 bytes, PERFINFO v2 by default; every header kind', () => {
    for (const P of [4, 8] as const) {
      const ip = P === 8 ? 0xfffff8024266ffd0n : 0x8266ffd0n;
      const s: SampledProfileSpec = { kind: 'sampledProfile', cpu: 1, timestamp: 4_000_000n, instructionPointer: ip, threadId: 0x1e98, flags: 0x41, rank: 3 };
      const ev = writeOne(s, P);
      expect([ev.hookId, ev.headerType, ev.version, ev.timestamp]).toEqual([0x0f2e, P === 8 ? 0x11 : 0x10, 2, 4_000_000n]);
      expect(parseSample(ev.payload, P)).toEqual({ instructionPointer: ip, threadId: 0x1e98, count: 1, flags: 0x41, rank: 3, size: P + 8 });
      for (const header of ['SYSTEM32', 'SYSTEM64', 'PERFINFO32', 'PERFINFO64'] as const) {
        const Q = header.endsWith('64') ? 8 : 4;
        const e2 = writeOne({ ...s, header, instructionPointer: 0x7ff0n, count: 0xffff, version: 3, headerThreadId: 9 }, P);
        expect([e2.headerType, e2.version]).toEqual([HT[header], 3]);
        if (header.startsWith('SYSTEM')) expect(e2.headerThreadId).toBe(9);
        expect(parseSample(e2.payload, Q)).toEqual({ instructionPointer: 0x7ff0n, threadId: 0x1e98, count: 0xffff, flags: 0x41, rank: 3, size: Q + 8 });
      }
    }
    expect(() => writeOne({ kind: 'sampledProfile', cpu: 0, timestamp: 2_000_000n, instructionPointer: 1n << 32n, threadId: 8 }, 4)).toThrow(/instructionPointer/);
    expect(() => writeOne({ kind: 'sampledProfile', cpu: 0, timestamp: 2_000_000n, instructionPointer: 0n, threadId: 8, count: 0x10000 })).toThrow(/count/);
  });

  test('Image: load/unload SYSTEM, dcStart/dcEnd PERFINFO, v3 by default; the name at 3P + 0x20; v2 leaves Reserved0 zero', () => {
    for (const P of [4, 8] as const) {
      const base = P === 8 ? 0x7ffb45d00000n : 0x77a00000n;
      const s: ImageSpec = {
        kind: 'image', cpu: 1, timestamp: 4_000_000n, opcode: 'load', processId: 0x1234, imageBase: base, imageSize: 0x1f8000n,
        imageChecksum: 0x1f9a6c, timeDateStamp: 0x5e9d3a1b, signatureLevel: 12, signatureType: 1, fileName: '\\Device\\HarddiskVolume3\\ntdll.dll',
      };
      const hooks = { load: 0x030a, unload: 0x1402, dcStart: 0x1403, dcEnd: 0x1404 } as const;
      for (const opcode of ['load', 'unload', 'dcStart', 'dcEnd'] as const) {
        const ev = writeOne({ ...s, opcode }, P);
        const system = opcode === 'load' || opcode === 'unload';
        expect([ev.hookId, ev.headerType, ev.version]).toEqual([hooks[opcode], system ? (P === 8 ? 0x02 : 0x01) : P === 8 ? 0x11 : 0x10, 3]);
        const name = '\\Device\\HarddiskVolume3\\ntdll.dll';
        expect(parseImage(ev.payload, P)).toEqual({
          imageBase: base, imageSize: 0x1f8000n, processId: 0x1234, imageChecksum: 0x1f9a6c, timeDateStamp: 0x5e9d3a1b,
          reserved0: 12 | (1 << 8), defaultBase: base, reserved: true, fileName: name, end: 3 * P + 0x20 + 2 * name.length + 2, size: 3 * P + 0x20 + 2 * name.length + 2,
        });
      }
      const v2 = parseImage(writeOne({ ...s, version: 2, header: P === 8 ? 'PERFINFO64' : 'PERFINFO32', defaultBase: 0n, fileName: '' }, P).payload, P);
      expect([v2.reserved0, v2.defaultBase, v2.fileName, v2.size]).toEqual([0, 0n, '', 3 * P + 0x22]);
    }
    const s: ImageSpec = { kind: 'image', cpu: 0, timestamp: 2_000_000n, opcode: 'dcStart', processId: 4, imageBase: 0n, imageSize: 0n, fileName: 'a' };
    expect(() => writeOne({ ...s, imageBase: 1n << 32n }, 4)).toThrow(/imageBase/);
    expect(() => writeOne({ ...s, version: 4 as 3 })).toThrow(/version/);
    expect(() => writeOne({ ...s, opcode: 'start' as 'load' })).toThrow(/opcode/);
    expect(() => writeOne({ ...s, fileName: 'a\u0000' })).toThrow(/fileName/);
  });

  test('SampledProfileInterval (G.4): SYSTEM v3 by default; Source 0, NewInterval 4, OldInterval 8, SourceName at 0x0C (v3 only), for both pointer sizes', () => {
    const hooks = { setInterval: 0x0f48, dcStart: 0x0f49, dcEnd: 0x0f4a } as const;
    for (const P of [4, 8] as const) {
      for (const opcode of ['setInterval', 'dcStart', 'dcEnd'] as const) {
        const ev = writeOne({ kind: 'sampleInterval', cpu: 1, timestamp: 4_000_000n, opcode, newInterval: 10_000, oldInterval: 5_000, source: 2 }, P);
        expect([ev.hookId, ev.headerType, ev.version]).toEqual([hooks[opcode], P === 8 ? 0x02 : 0x01, 3]);
        expect([u32(ev.payload, 0), u32(ev.payload, 4), u32(ev.payload, 8), ...utf16z(ev.payload, 0x0c), ev.payload.length]).toEqual([2, 10_000, 5_000, 'Timer', 0x0c + 12, 0x0c + 12]);
      }
      const v2 = writeOne({ kind: 'sampleInterval', cpu: 0, timestamp: 2_000_000n, opcode: 'setInterval', newInterval: 1, version: 2, header: P === 8 ? 'PERFINFO64' : 'PERFINFO32' }, P);
      expect([v2.headerType, v2.version, u32(v2.payload, 0), u32(v2.payload, 4), u32(v2.payload, 8), v2.payload.length]).toEqual([P === 8 ? 0x11 : 0x10, 2, 0, 1, 1, 0x0c]);
    }
    expect(() => writeOne({ kind: 'sampleInterval', cpu: 0, timestamp: 2_000_000n, opcode: 'dcStart', newInterval: 2 ** 32 })).toThrow(/newInterval/);
    expect(() => writeOne({ kind: 'sampleInterval', cpu: 0, timestamp: 2_000_000n, opcode: 'start' as 'dcStart', newInterval: 1 })).toThrow(/opcode/);
  });
});

// ---------------------------------------------------------------------------------------------
// the scheduler simulation: everything re-derived from the bytes

/** C.7 bias table (MaximumWaitReason by build) */
function biasOf(build: number): number {
  if (build < 6000) return 27;
  if (build < 9200) return 37;
  if (build < 16299) return 39;
  if (build < 22000) return 40;
  if (build < 26100) return 42;
  return 43;
}

interface DerivedSwitch {
  cpu: number;
  timestamp: bigint;
  oldThreadId: number;
  newThreadId: number | null;
  oldThreadPriority: number | null;
  oldThreadState: number | null;
  oldThreadWaitReason: number | null;
  newThreadPriority: number | null;
  encoding: 'cswitch' | 'compact';
}

/** CSwitch (C.2) and compact (D.2–D.8) switches of each CPU, in SequenceNumber/packet order. */
function switchesFromBytes(evs: RawEv[], bias: number): DerivedSwitch[] {
  const out: DerivedSwitch[] = [];
  const held = new Map<number, DerivedSwitch>();
  for (const e of evs) {
    if ((e.headerType !== 0x10 && e.headerType !== 0x11) || (e.hookId !== 0x0524 && e.hookId !== 0x0525)) continue;
    const d = e.payload;
    if (e.hookId === 0x0524) {
      out.push({
        cpu: e.cpu, timestamp: e.timestamp, newThreadId: u32(d, 0), oldThreadId: u32(d, 4), newThreadPriority: i8(d, 8),
        oldThreadPriority: i8(d, 9), oldThreadWaitReason: d[0xc]!, oldThreadState: d[0xe]!, encoding: 'cswitch',
      });
      continue;
    }
    let t = u64(d, 0);
    for (let p = 0x58; p < d.length; ) {
      const type = d[p]! & 3;
      let sw: DerivedSwitch;
      const base = { cpu: e.cpu, newThreadId: null, newThreadPriority: null, encoding: 'compact' as const };
      if (type < 2) {
        t += BigInt(type === 0 ? u16(d, p) >>> 2 : u32(d, p) >>> 2);
        sw = { ...base, timestamp: t, oldThreadId: 0, oldThreadPriority: null, oldThreadState: null, oldThreadWaitReason: null };
        p += type === 0 ? 2 : 4;
      } else {
        let idx: number;
        let pri: number;
        let wr: number;
        if (type === 2) {
          const w = u32(d, p);
          idx = (w >>> 2) & 0xf;
          pri = i8(d, 0x48 + idx) + ((w >>> 6) & 7);
          wr = (w >>> 9) & 0x3f;
          t += BigInt(w >>> 15);
          p += 4;
        } else {
          const w1 = u32(d, p + 4);
          t += BigInt(u32(d, p) >>> 2);
          idx = w1 & 0xf;
          wr = (w1 >>> 4) & 0x3f;
          pri = (w1 >>> 10) & 0x1f;
          p += 8;
        }
        sw = {
          ...base, timestamp: t, oldThreadId: u32(d, 8 + 4 * idx), oldThreadPriority: pri,
          oldThreadState: wr < bias ? 5 : wr - bias, oldThreadWaitReason: wr < bias ? wr : null,
        };
      }
      const prev = held.get(e.cpu);
      if (prev) prev.newThreadId = sw.oldThreadId;
      held.set(e.cpu, sw);
      out.push(sw);
    }
  }
  return out.sort((a, b) => a.cpu - b.cpu || (a.timestamp < b.timestamp ? -1 : 1));
}

interface Lifetimes {
  threads: ThreadTruth[];
  processes: ProcessTruth[];
}

/** Issue 9's lifetime rules, applied to the identity events in timestamp order. */
function lifetimesFromBytes(evs: RawEv[]): Lifetimes {
  const ids = evs.filter((e) => [0x0301, 0x0302, 0x0303, 0x0304, 0x0327, 0x0501, 0x0502, 0x0503, 0x0504, 0x0548].includes(e.hookId));
  ids.sort((a, b) => (a.timestamp < b.timestamp ? -1 : a.timestamp > b.timestamp ? 1 : 0));
  const threads: ThreadTruth[] = [];
  const processes: ProcessTruth[] = [];
  const openT = new Map<number, ThreadTruth>();
  const openP = new Map<number, ProcessTruth>();
  for (const e of ids) {
    const op = e.hookId & 0xff;
    if (e.hookId === 0x0548) {
      const n = parseSetName(e.payload);
      const row = openT.get(n.threadId);
      expect(row, `SetName of a thread without an open lifetime (${n.threadId})`).toBeDefined();
      if (n.name !== '') row!.name = n.name;
    } else if (e.hookId >> 8 === 0x05) {
      const t = parseThread(e.payload, e.version, e.P);
      let row = openT.get(t.threadId);
      if (op === 1 || !row) {
        expect(op === 1 ? row : undefined, `Start of tid ${t.threadId} whose lifetime is open`).toBeUndefined();
        row = { threadId: t.threadId, processId: t.processId, startTime: op === 1 ? e.timestamp : null, endTime: null, name: null };
        threads.push(row);
        openT.set(t.threadId, row);
      }
      if (t.name) row.name = t.name;
      if (op === 2) {
        row.endTime = e.timestamp;
        openT.delete(t.threadId);
      }
    } else {
      const r = parseProcess(e.payload, e.version, e.P);
      let row = openP.get(r.processId);
      if (op === 0x27) {
        expect(row, 'Defunct of an open process in this simulation').toBeUndefined();
        continue;
      }
      if (op === 1 || !row) {
        expect(op === 1 ? row : undefined).toBeUndefined();
        row = {
          processId: r.processId, parentId: r.parentId, sessionId: r.sessionId, imageFileName: r.imageFileName, commandLine: r.commandLine,
          startTime: op === 1 ? e.timestamp : null, endTime: null, exitStatus: null,
        };
        processes.push(row);
        openP.set(r.processId, row);
      }
      if (op === 2) {
        row.endTime = e.timestamp;
        row.exitStatus = r.exitStatus;
        openP.delete(r.processId);
      }
    }
  }
  return { threads, processes };
}

/** the running thread of a CPU at time t per the switches (undefined before the CPU's first switch) */
function runningAtFn(sw: { cpu: number; timestamp: bigint; newThreadId: number | null }[]): (cpu: number, t: bigint) => number | null | undefined {
  const byCpu = new Map<number, { timestamp: bigint; newThreadId: number | null }[]>();
  for (const s of sw) (byCpu.get(s.cpu) ?? byCpu.set(s.cpu, []).get(s.cpu)!).push(s);
  return (cpu, t) => {
    const list = byCpu.get(cpu) ?? [];
    let lo = 0;
    let hi = list.length; // first index with timestamp > t
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (list[mid]!.timestamp <= t) lo = mid + 1;
      else hi = mid;
    }
    return lo === 0 ? undefined : list[lo - 1]!.newThreadId;
  };
}

const jsonish = (v: unknown): string => JSON.stringify(v, (_k, x) => (typeof x === 'bigint' ? `${x}n` : x));

/** a canonical text of a row: keys sorted, bigints marked */
const canon = (v: object): string =>
  JSON.stringify(Object.fromEntries(Object.entries(v).sort(([a], [b]) => (a < b ? -1 : 1))), (_k, x) => (typeof x === 'bigint' ? `${x}n` : x));

/** row-by-row equality; expect() (with its diff) only at the first difference */
function expectSameRows<T extends object>(got: T[], want: T[], what: string): void {
  const n = Math.min(got.length, want.length);
  for (let i = 0; i < n; i++) if (canon(got[i]!) !== canon(want[i]!)) expect(got[i], `${what} row ${i}`).toEqual(want[i]);
  expect(got.length, `${what}: row count`).toBe(want.length);
}

function checkSchedule(opts: ScheduleOptions, sim: SimulatedSchedule, bytes: Uint8Array): void {
  const cpus = opts.cpus ?? 4;
  const evs = readEvents(bytes);
  const bias = biasOf(opts.build ?? 19041);

  // ---- timestamps: distinct across the trace, strictly increasing per CPU
  const all = sim.description.events;
  expect(new Set(all.map((e) => e.timestamp)).size).toBe(all.length);
  for (let c = 0; c < cpus; c++) {
    const ts = all.filter((e) => e.cpu === c).map((e) => e.timestamp);
    for (let i = 1; i < ts.length; i++) check(ts[i]! > ts[i - 1]!, `cpu ${c}: timestamps not strictly increasing at ${ts[i]}`);
  }

  // ---- the bytes give back the truth
  const sw = switchesFromBytes(evs, bias);
  const lastCompact = new Map<number, number>();
  sim.switches.forEach((s, i) => s.encoding === 'compact' && lastCompact.set(s.cpu, i));
  const expectedSw = sim.switches.map((s, i) => ({ ...s, newThreadId: lastCompact.get(s.cpu) === i ? null : s.newThreadId }));
  expectSameRows<object>(sw, expectedSw, 'switches');
  for (let c = 0; c < cpus; c++) expect(sim.switches.filter((s) => s.cpu === c).every((s) => s.encoding === sim.cpuEncodings[c])).toBe(true);
  const life = lifetimesFromBytes(evs);
  expectSameRows(life.threads, sim.threads, 'threads');
  expectSameRows(life.processes, sim.processes, 'processes');
  const runningAt = runningAtFn(sw);
  const readies: ReadyTruth[] = evs
    .filter((e) => e.hookId === 0x0532)
    .map((e) => {
      const r = parseReady(e.payload);
      return {
        timestamp: e.timestamp, cpu: e.cpu, threadId: r.threadId, readyingThreadId: runningAt(e.cpu, e.timestamp) as number,
        adjustReason: r.adjustReason, adjustIncrement: r.adjustIncrement, flags: r.flags,
      };
    })
    .sort((a, b) => (a.timestamp < b.timestamp ? -1 : 1));
  expectSameRows(readies, sim.readies, 'readies');
  // the readying thread is known from the switches (never null / before the first switch)
  for (const r of readies) check(typeof r.readyingThreadId === 'number', `ready at ${r.timestamp}: no switch on cpu ${r.cpu} before it`);

  // ---- rundowns
  const thr = evs.filter((e) => e.hookId >> 8 === 0x05 && (e.hookId & 0xff) <= 4).map((e) => ({ e, t: parseThread(e.payload, e.version, e.P) }));
  expect(thr.filter((x) => x.e.hookId === 0x0503 && x.t.threadId === 0).length).toBe(cpus);
  expect(thr.filter((x) => x.e.hookId === 0x0504 && x.t.threadId === 0).length).toBe(cpus);
  // (0x030A, an image Load, is logged in the process group: G.2)
  const prc = evs.filter((e) => e.hookId >> 8 === 0x03 && e.hookId !== 0x030a).map((e) => ({ e, r: parseProcess(e.payload, e.version, e.P) }));
  for (const pid of [0, 4]) {
    const dc = prc.filter((x) => x.e.hookId === 0x0303 && x.r.processId === pid);
    expect(dc.length).toBe(1);
    expect(dc[0]!.r.sessionId).toBe(0xffffffff);
    expect(dc[0]!.r.imageFileName).toBe(pid === 0 ? 'Idle' : 'System');
  }
  expect(prc.filter((x) => x.e.hookId === 0x0303 && x.r.processId !== 0).every((x) => x.r.exitStatus === 259)).toBe(true);
  expect(prc.filter((x) => x.e.hookId === 0x0304 && x.r.processId !== 0).every((x) => x.r.exitStatus === 259)).toBe(true);
  expect(prc.some((x) => x.r.commandLine.startsWith('"'))).toBe(true);
  expect(prc.every((x) => x.r.sid !== null)).toBe(true);
  // header classes as asked (default: as in Win10 files)
  const hdr = {
    thread: 'SYSTEM', processStartEnd: 'SYSTEM', processRundown: 'PERFINFO', readyThread: 'PERFINFO', setThreadName: 'PERFINFO',
    sampledProfile: 'PERFINFO', imageLoadUnload: 'SYSTEM', imageRundown: 'PERFINFO', ...opts.headers,
  }; // (0x0F2E is also a noise HookId of any header kind: the SampledProfile header is checked on its own)
  const wide = (opts.pointerSize ?? 8) === 8;
  const want = (cls: string): number => (cls === 'SYSTEM' ? (wide ? 0x02 : 0x01) : wide ? 0x11 : 0x10);
  const groupOf = (h: number): string | null =>
    h >> 8 === 5 && (h & 0xff) <= 4 ? 'thread' : h === 0x0301 || h === 0x0302 ? 'processStartEnd' : h === 0x0303 || h === 0x0304 || h === 0x0327 ? 'processRundown'
      : h === 0x0532 ? 'readyThread' : h === 0x0548 ? 'setThreadName' : h === 0x030a || h === 0x1402 ? 'imageLoadUnload'
      : h === 0x1403 || h === 0x1404 ? 'imageRundown' : null;
  for (const e of evs) {
    const g = groupOf(e.hookId);
    if (g) check(e.headerType === want(hdr[g as keyof typeof hdr]), `${g} event with header type ${e.headerType}`);
  }
  // a SYSTEM ReadyThread header names the readying thread
  if (hdr.readyThread === 'SYSTEM') for (const e of evs.filter((x) => x.hookId === 0x0532)) check(e.headerThreadId === runningAt(e.cpu, e.timestamp), 'ReadyThread header thread');
  // SYSTEM header ids of Start events: the creating thread, not the payload's
  for (const x of thr.filter((x) => x.e.hookId === 0x0501)) expect(x.e.headerThreadId).not.toBe(x.t.threadId);
  expect(thr.filter((x) => x.e.hookId === 0x0503 && x.t.threadId !== 0 && x.e.headerThreadId !== x.t.threadId).length).toBeGreaterThan(0);

  // ---- lifetimes: tid reuse, End before the last switch-out, a process end, pid reuse, defunct
  const tidRows = new Map<number, ThreadTruth[]>();
  for (const t of sim.threads) (tidRows.get(t.threadId) ?? tidRows.set(t.threadId, []).get(t.threadId)!).push(t);
  const reused = [...tidRows.values()].filter((r) => r.length > 1);
  expect(reused.length).toBeGreaterThan(0);
  expect(reused.map((r) => r[0]!.threadId)).toEqual(sim.reusedThreadIds);
  for (const [a, b] of reused) {
    expect(a!.processId).not.toBe(b!.processId);
    expect(a!.endTime).not.toBeNull();
    expect(b!.startTime! > a!.endTime!).toBe(true);
  }
  expect(sim.threads.filter((t) => t.threadId === 0).length).toBe(1);
  const ended = sim.processes.filter((p) => p.endTime !== null);
  expect(ended.length).toBeGreaterThan(0);
  for (const p of ended) {
    expect(p.exitStatus).not.toBeNull();
    expect(p.exitStatus).not.toBe(259);
    const defunct = prc.filter((x) => x.e.hookId === 0x0327 && x.r.processId === p.processId);
    expect(defunct.length).toBe(1);
    expect(defunct[0]!.e.timestamp > p.endTime!).toBe(true);
  }
  const pidRows = sim.processes.filter((p) => sim.reusedProcessIds.includes(p.processId));
  expect(pidRows.length).toBe(2);
  expect(pidRows[1]!.startTime! > pidRows[0]!.endTime!).toBe(true);
  expect(sim.processes.filter((p) => p.startTime !== null).length).toBeGreaterThanOrEqual(2);
  expect(sim.threads.filter((t) => t.startTime !== null).length).toBeGreaterThanOrEqual(4);
  expect(sim.threads.filter((t) => t.endTime !== null).length).toBeGreaterThanOrEqual(2);
  expect(sim.threads.some((t) => t.name !== null)).toBe(true);

  // ---- per lifetime: switches inside the lifetime, one CPU at a time, readies before switch-ins of waiting
  //      threads only, End before the final switch-out (state Terminated)
  const readyTs = new Map<number, bigint[]>();
  for (const r of sim.readies) (readyTs.get(r.threadId) ?? readyTs.set(r.threadId, []).get(r.threadId)!).push(r.timestamp);
  const byTid = new Map<number, SwitchTruth[]>();
  for (const x of sim.switches) {
    for (const id of new Set([x.oldThreadId, x.newThreadId])) (byTid.get(id) ?? byTid.set(id, []).get(id)!).push(x);
  }
  let waitedIns = 0;
  let preemptedIns = 0;
  let endBeforeLastOut = 0;
  for (const [tid, rows] of tidRows) {
    if (tid === 0) continue;
    rows.forEach((row, k) => {
      const from = row.startTime ?? -1n;
      const to = k + 1 < rows.length ? rows[k + 1]!.startTime! : 1n << 62n;
      type Ev = { ts: bigint; cpu: number; dir: 'in' | 'out'; s: SwitchTruth };
      const mine: Ev[] = [];
      for (const s of byTid.get(tid) ?? []) {
        if (s.timestamp <= from || s.timestamp >= to) continue;
        if (s.newThreadId === tid) mine.push({ ts: s.timestamp, cpu: s.cpu, dir: 'in', s });
        if (s.oldThreadId === tid) mine.push({ ts: s.timestamp, cpu: s.cpu, dir: 'out', s });
      }
      mine.sort((a, b) => (a.ts < b.ts ? -1 : 1));
      let lastOut: Ev | null = null;
      let onCpu = -1;
      for (let i = 0; i < mine.length; i++) {
        const ev = mine[i]!;
        if (ev.dir === 'in') {
          check(onCpu === -1, `tid ${tid} switched in on cpu ${ev.cpu} while running on ${onCpu}`);
          onCpu = ev.cpu;
          if (row.endTime !== null) check(ev.ts < row.endTime, `tid ${tid} switched in after its End`);
          const lo = lastOut ? lastOut.ts : row.startTime;
          const between = (readyTs.get(tid) ?? []).filter((r) => (lo === null || r > lo) && r < ev.ts);
          if (lastOut && lastOut.s.oldThreadState !== 5) {
            check(between.length === 0, `preempted tid ${tid} got a ReadyThread`);
            preemptedIns++;
          } else if (lastOut || row.startTime !== null) {
            check(between.length > 0, `tid ${tid} switched in at ${ev.ts} without a ReadyThread`);
            if (lastOut) waitedIns++;
          }
        } else {
          if (i > 0) check(ev.cpu === onCpu, `tid ${tid} switched out on cpu ${ev.cpu}, ran on ${onCpu}`); // the first may be an initial thread's
          onCpu = -1;
          lastOut = ev;
          if (row.endTime !== null && ev.ts > row.endTime) {
            check(i === mine.length - 1, `tid ${tid}: a switch after its final switch-out`);
            check(ev.s.oldThreadState === 4, `tid ${tid}: final switch-out not Terminated`);
            endBeforeLastOut++;
          } else {
            check(ev.s.oldThreadState !== 4, `tid ${tid}: Terminated before its End`);
          }
        }
      }
      if (row.endTime !== null) expect(mine[mine.length - 1]!.ts > row.endTime).toBe(true);
      if (row.startTime !== null && mine.length > 0) expect(mine[0]!.dir).toBe('in');
    });
  }
  expect(waitedIns).toBeGreaterThan(5);
  expect(preemptedIns).toBeGreaterThan(0);
  expect(endBeforeLastOut).toBe(sim.threads.filter((t) => t.endTime !== null).length);
  // idle switches both ways, readies from idle CPUs (DPCs) and from threads
  expect(sim.switches.some((s) => s.oldThreadId === 0) && sim.switches.some((s) => s.newThreadId === 0)).toBe(true);
  expect(sim.readies.some((r) => r.readyingThreadId === 0) && sim.readies.some((r) => r.readyingThreadId !== 0)).toBe(true);
  // a ready always comes strictly before the switch-in it enables (checked above) and the readying thread is
  // the thread running on that CPU (derived from the bytes above)
}

describe('StackWalk group (H.1)', () => {
  test('StackWalk, key references and key definitions at literal offsets, x86 and x64, PERFINFO v2 by default', () => {
    const i64 = (b: Uint8Array, o: number): bigint => BigInt.asIntN(64, u64(b, o));
    for (const P of [4, 8] as const) {
      const k = P === 8 ? 0xfffff80021400013n : 0x82400013n;
      const u = P === 8 ? 0x7ffb45d01000n : 0x77401000n;
      const key = P === 8 ? 0xfffffa8003000100n : 0x83000100n;
      const hooks = { stack: 0x1820, keyCreate: 0x1822, keyDelete: 0x1823, keyRundown: 0x1824, keyKernel: 0x1825, keyUser: 0x1826 } as const;
      for (const opcode of Object.keys(hooks) as (keyof typeof hooks)[]) {
        const ev = writeOne({ kind: 'stackWalk', cpu: 1, timestamp: 3_000_000n, opcode, eventTimestamp: -5n, processId: 0x1234, threadId: 0x5678, stackKey: key, frames: [k, u] }, P);
        expect([ev.hookId, ev.headerType, ev.version, ev.timestamp]).toEqual([hooks[opcode], P === 8 ? 0x11 : 0x10, 2, 3_000_000n]);
        const b = ev.payload;
        if (opcode === 'stack') {
          // 0x00 EventTimeStamp, 0x08 StackProcess, 0x0C StackThread, frames from 0x10
          expect([i64(b, 0), u32(b, 8), u32(b, 12), ptr(b, 16, P), ptr(b, 16 + P, P), b.length]).toEqual([-5n, 0x1234, 0x5678, k, u, 16 + 2 * P]);
        } else if (opcode === 'keyKernel' || opcode === 'keyUser') {
          // the same three fields, then StackKey at 0x10; no frames
          expect([i64(b, 0), u32(b, 8), u32(b, 12), ptr(b, 16, P), b.length]).toEqual([-5n, 0x1234, 0x5678, key, 16 + P]);
        } else {
          // StackKey at 0, frames from P
          expect([ptr(b, 0, P), ptr(b, P, P), ptr(b, 2 * P, P), b.length]).toEqual([key, k, u, 3 * P]);
        }
      }
    }
    expect(() => writeOne({ kind: 'stackWalk', cpu: 0, timestamp: 2_000_000n, opcode: 'stack', frames: [1n << 32n] }, 4)).toThrow(/frames\[0\]/);
    expect(() => writeOne({ kind: 'stackWalk', cpu: 0, timestamp: 2_000_000n, opcode: 'other' as 'stack' })).toThrow(/opcode/);
  });
});

describe('simulateSchedule', () => {
  const configs: ScheduleOptions[] = [
    { seed: 1 },
    {
      seed: 2, pointerSize: 4, threadVersion: 2, processVersion: 3, switchMode: 'compact', cpus: 2, build: 9600,
      headers: { thread: 'PERFINFO', processStartEnd: 'PERFINFO', processRundown: 'SYSTEM', readyThread: 'SYSTEM', setThreadName: 'SYSTEM' },
    },
    { seed: 3, threadVersion: 4, processVersion: 5, switchMode: 'cswitch', cswitchVersions: [2, 3, 4], cpus: 8, threads: 60, processes: 12 },
    { seed: 4, processVersion: 2, switchMode: ['compact', 'cswitch', 'compact'], cpus: 3, bufferSize: 0x2000, duration: 1_000_000 },
    { seed: 5, cpus: 1, processes: 5, threads: 8, duration: 200_000, spinlocks: 0.1, noise: 0.2 },
  ];
  for (const opts of configs) {
    test(`invariants and a byte-level round trip: ${jsonish(opts)}`, () => {
      const sim = simulateSchedule(opts);
      const w = writeTrace(sim.description);
      checkSchedule(opts, sim, w.bytes);
    });
  }

  test('deterministic; another seed differs', () => {
    const a = writeTrace(simulateSchedule({ seed: 11, duration: 500_000 }).description).bytes;
    const b = writeTrace(simulateSchedule({ seed: 11, duration: 500_000 }).description).bytes;
    const c = writeTrace(simulateSchedule({ seed: 12, duration: 500_000 }).description).bytes;
    expect(Buffer.compare(Buffer.from(a), Buffer.from(b))).toBe(0);
    expect(Buffer.compare(Buffer.from(a), Buffer.from(c))).not.toBe(0);
  });

  test('the project decoder reads the switches back as the truth says (reference and wasm engines)', () => {
    const sim = simulateSchedule({ seed: 21, duration: 1_000_000 });
    const w = writeTrace(sim.description);
    for (const engine of ['reference', 'wasm'] as const) {
      const t = decodeSync(w.bytes, { engine }).cswitch;
      const rows = [...t].sort((a, b) => a.cpu - b.cpu || (a.timestamp < b.timestamp ? -1 : 1));
      expect(rows.length).toBe(sim.switches.length);
      const last = new Map<number, number>();
      sim.switches.forEach((s, i) => s.encoding === 'compact' && last.set(s.cpu, i));
      rows.forEach((r, i) => {
        const s = sim.switches[i]!;
        expect([r.cpu, r.timestamp, r.oldThreadId, r.newThreadId, r.oldThreadPriority, r.oldThreadState, r.oldThreadWaitReason, r.newThreadPriority]).toEqual([
          s.cpu, s.timestamp, s.oldThreadId, last.get(s.cpu) === i ? null : s.newThreadId, s.oldThreadPriority, s.oldThreadState,
          s.oldThreadWaitReason, s.newThreadPriority,
        ]);
      });
    }
  });

  test.each([
    [{ seed: 31, duration: 600_000, profileInterval: 10_000, images: true }],
    [{ seed: 32, duration: 400_000, profileInterval: 2_500, images: true, imageVersion: 2, pointerSize: 4, cpus: 2, switchMode: 'compact' }],
  ] as [ScheduleOptions][])('samples and images read back as the truth says (both engines): %o', (opts) => {
    const sim = simulateSchedule(opts);
    expect(sim.samples.length).toBeGreaterThan(50);
    expect(sim.images.map((i) => i.opcode)).toEqual(expect.arrayContaining(['dcStart', 'dcEnd', 'load', 'unload']));
    const w = writeTrace(sim.description);
    checkSchedule(opts, sim, w.bytes);
    for (const engine of ['reference', 'wasm'] as const) {
      const r = decodeSync(w.bytes, { engine });
      const byTime = <T extends { timestamp: bigint }>(a: T, b: T) => (a.timestamp < b.timestamp ? -1 : a.timestamp > b.timestamp ? 1 : 0);
      const samples = [...r.samples].sort(byTime);
      expect(samples.map((x) => [x.timestamp, x.cpu, x.threadId, x.instructionPointer, x.flags, x.priority, x.count, x.pointerSize])).toEqual(
        sim.samples.map((x) => [x.timestamp, x.cpu, x.threadId, x.instructionPointer, x.flags, x.flags >> 3, 1, opts.pointerSize ?? 8]),
      );
      // every sample names the thread running on its CPU then: the truth's switches say which
      const running = (cpu: number, t: bigint): number => {
        let tid = -1;
        for (const s of sim.switches) if (s.cpu === cpu && s.timestamp <= t) tid = s.newThreadId;
        return tid;
      };
      for (const x of sim.samples.slice(0, 200)) if (running(x.cpu, x.timestamp) >= 0) expect(x.threadId).toBe(running(x.cpu, x.timestamp));
      const opcodes = { load: 10, unload: 2, dcStart: 3, dcEnd: 4 } as const;
      const images = [...r.imageEvents].sort(byTime);
      expect(images.map((x) => [x.timestamp, x.opcode, x.processId, x.imageBase, x.imageSize, x.imageChecksum, x.timeDateStamp, x.fileName, x.version])).toEqual(
        sim.images.map((x) => [x.timestamp, opcodes[x.opcode], x.processId, x.imageBase, x.imageSize, x.imageChecksum, x.timeDateStamp, x.fileName, opts.imageVersion ?? 3]),
      );
      // the sample interval's rundowns at both ends (§G.4): SYSTEM v3, Source 0, "Timer"
      expect([...r.sampleIntervals].map((x) => [x.timestamp, x.opcode, x.source, x.newInterval, x.oldInterval, x.sourceName, x.version])).toEqual(
        sim.sampleIntervals.map((x) => [x.timestamp, x.opcode === 'dcStart' ? 73 : 74, 0, opts.profileInterval, opts.profileInterval, 'Timer', 3]),
      );
      expect(sim.sampleIntervals.map((x) => x.opcode)).toEqual(['dcStart', 'dcEnd']);
      expect(r.summary.issues).toEqual([]);
      // the group masks say PERF_LOADER (Masks[0] 0x4) and PERF_PROFILE (Masks[1] 0x2) were on (§G)
      const masks = r.summary.trace!.groupMasks!.masks;
      expect([masks[0]! & 4, masks[1]! & 2]).toEqual([4, 2]);
    }
  });

  test('without profileInterval and images, no SampledProfile or image event, and their kernel flags off', () => {
    const sim = simulateSchedule({ seed: 33, duration: 300_000 });
    expect([sim.samples.length, sim.images.length, sim.sampleIntervals.length]).toEqual([0, 0, 0]);
    expect(sim.description.events.some((e) => e.kind === 'sampledProfile' || e.kind === 'image' || e.kind === 'sampleInterval')).toBe(false);
    // nor stacks without the stacks option
    expect([sim.stacks.length, sim.description.events.some((e) => e.kind === 'stackWalk')]).toEqual([0, false]);
    const masks = decodeSync(writeTrace(sim.description).bytes).summary.trace!.groupMasks!.masks;
    expect([masks[0]! & 4, masks[1]! & 2]).toEqual([0, 0]);
  });

  test('options are validated', () => {
    expect(() => simulateSchedule({ seed: 1, profileInterval: -1 })).toThrow(/profileInterval/);
    expect(() => simulateSchedule({ seed: 1, images: 1 as unknown as boolean })).toThrow(/images/);
    expect(() => simulateSchedule({ seed: 1, imageVersion: 4 as 3 })).toThrow(/imageVersion/);
    expect(() => simulateSchedule({ seed: NaN })).toThrow(/seed/);
    expect(() => simulateSchedule({ seed: 1, cpus: 0 })).toThrow(/cpus/);
    expect(() => simulateSchedule({ seed: 1, processes: 4 })).toThrow(/processes/);
    expect(() => simulateSchedule({ seed: 1, cpus: 8, threads: 9 })).toThrow(/threads/);
    expect(() => simulateSchedule({ seed: 1, switchMode: ['cswitch'] })).toThrow(/switchMode/);
    expect(() => simulateSchedule({ seed: 1, cswitchVersions: [1 as 2] })).toThrow(/cswitchVersions/);
    expect(() => simulateSchedule({ seed: 1, threadVersion: 5 as 4 })).toThrow(/threadVersion/);
    expect(() => simulateSchedule({ seed: 1, noise: 2 })).toThrow(/noise/);
    expect(() => simulateSchedule({ seed: 1, headers: { thread: 'COMPACT' as 'SYSTEM' } })).toThrow(/headers/);
    expect(() => simulateSchedule({ seed: 1, headers: { cswitch: 'SYSTEM' } as never })).toThrow(/headers/);
  });
});

describe('generateSampleTrace', () => {
  test('a realistic small trace under 300 KB with its truth', () => {
    const t = generateSampleTrace();
    expect(t.bytes.length).toBeLessThan(300 * 1024);
    expect(t.bytes.length).toBeGreaterThan(100 * 1024);
    const sim = t.schedule;
    expect(sim.cpuEncodings).toEqual(['cswitch', 'compact', 'cswitch', 'compact']);
    const names = new Set(sim.processes.map((p) => p.imageFileName));
    for (const n of ['Idle', 'System', 'explorer.exe', 'chrome.exe', 'svchost.exe']) expect(names.has(n)).toBe(true);
    expect(sim.processes.length).toBeGreaterThanOrEqual(10);
    expect(sim.threads.length).toBeGreaterThanOrEqual(50);
    const kinds = new Set(sim.description.events.map((e) => e.kind));
    for (const k of ['cswitch', 'compactSwitch', 'spinlock', 'raw', 'thread', 'process', 'readyThread', 'setThreadName']) expect(kinds.has(k as EventSpec['kind'])).toBe(true);
    checkSchedule({ seed: 2026, cpus: 4, build: 19041 }, sim, t.bytes);
    expect(Buffer.compare(Buffer.from(generateSampleTrace().bytes), Buffer.from(t.bytes))).toBe(0);
    const d = decodeSync(t.bytes, { engine: 'reference' });
    expect(d.cswitch.length).toBe(sim.switches.length);
    expect(d.spinlock.length).toBe(sim.description.events.filter((e) => e.kind === 'spinlock').length);
  });
});
