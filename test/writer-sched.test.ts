// Tests of the writer's part F events (Thread, Process, SetName, ReadyThread) and of the scheduler
// simulation. The written bytes are re-read with an independent reader written here from docs/format.md
// (literal offsets and the formulas of parts A, B and F), not through the writer's constants.
import { describe, expect, test } from 'vitest';
import { writeTrace } from '../src/writer/index.js';
import type {
  EventSpec,
  IdentityHeaderKind,
  ProcessSpec,
  ReadyThreadSpec,
  SetThreadNameSpec,
  ThreadSpec,
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

/** UTF-16LE up to the 2-byte terminator; returns [string, offset after the terminator] */
function utf16z(b: Uint8Array, o: number): [string, number] {
  let s = '';
  for (;;) {
    expect(o + 2).toBeLessThanOrEqual(b.length);
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
    expect(o).toBeLessThan(b.length);
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
        expect(m >>> 30).toBe(3);
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
          expect(size).toBeGreaterThanOrEqual(hdr);
          out.push({
            cpu: b.cpu, seq: b.seq, headerType: ht, version: m & 0xff, hookId: u16(bytes, p + 6), timestamp: ts,
            headerThreadId: tid, headerProcessId: pid, P: ht === 0x01 || ht === 0x03 || ht === 0x10 ? 4 : 8,
            payload: bytes.subarray(p + hdr, p + size),
          });
        } else {
          size = u16(bytes, p); // FULL / INSTANCE / EVENT_HEADER: u16 Size at +0
        }
      }
      expect(size).toBeGreaterThanOrEqual(8);
      expect(p + size).toBeLessThanOrEqual(end);
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
