// Encoders of the part F and G events (docs/format.md §F, §G): Thread_TypeGroup1 (F.2), Process_TypeGroup1
// (F.3), ReadyThread (F.4), Thread SetName (F.5), SampledProfile (G.1), Image_Load (G.2), SampledProfileInterval
// (G.4) and the StackWalk group (H.1), each under a
// SYSTEM32/64 or PERFINFO32/64 header (B.3).
// As in events.ts, `measure*` validates a spec and returns the event Size; `encode*` writes the event into a
// zero-initialised buffer. The payload layout is chosen by the event version and by the header's pointer
// size (…32 → 4, …64 → 8), never by the trace's Windows build. Browser-safe: no node imports.
import * as L from '../generated/layout.js';
import {
  checkBig,
  checkInt,
  checkOptInt,
  fieldName,
  MAX_EVENT_SIZE,
  U64_MAX,
  writePerfInfoHeader,
  writeSystemHeader,
} from './events.js';
import * as F from './sched-layout.js';
import type {
  IdentityEventBase,
  IdentityHeaderKind,
  ImageOpcode,
  ImageSpec,
  SampledProfileSpec,
  StackWalkOpcode,
  StackWalkSpec,
  SampleIntervalOpcode,
  SampleIntervalSpec,
  ProcessOpcode,
  ProcessSpec,
  ReadyThreadSpec,
  SetThreadNameSpec,
  ThreadOpcode,
  ThreadSpec,
} from './types.js';

export const THREAD_HOOK_IDS: Readonly<Record<ThreadOpcode, number>> = {
  start: F.HOOK_THREAD_START,
  end: F.HOOK_THREAD_END,
  dcStart: F.HOOK_THREAD_DC_START,
  dcEnd: F.HOOK_THREAD_DC_END,
};

export const SAMPLE_INTERVAL_HOOK_IDS: Readonly<Record<SampleIntervalOpcode, number>> = {
  setInterval: F.HOOK_SAMPLED_PROFILE_SET_INTERVAL,
  dcStart: F.HOOK_SAMPLED_PROFILE_DC_START,
  dcEnd: F.HOOK_SAMPLED_PROFILE_DC_END,
};

export const IMAGE_HOOK_IDS: Readonly<Record<ImageOpcode, number>> = {
  load: F.HOOK_IMAGE_LOAD,
  unload: F.HOOK_IMAGE_UNLOAD,
  dcStart: F.HOOK_IMAGE_DC_START,
  dcEnd: F.HOOK_IMAGE_DC_END,
};

export const PROCESS_HOOK_IDS: Readonly<Record<ProcessOpcode, number>> = {
  start: F.HOOK_PROCESS_START,
  end: F.HOOK_PROCESS_END,
  dcStart: F.HOOK_PROCESS_DC_START,
  dcEnd: F.HOOK_PROCESS_DC_END,
  defunct: F.HOOK_PROCESS_DEFUNCT,
};

/** Default TOKEN_USER Sid pointer (any non-zero kernel address; real files hold one) */
export const DEFAULT_SID_POINTER64 = 0xffffb48800001000n;
export const DEFAULT_SID_POINTER32 = 0x8a001000n;
/** SID of LocalSystem, the default UserSID */
export const DEFAULT_USER_SID = 'S-1-5-18';

// ---------------------------------------------------------------------------------------------
// headers

interface HeaderChoice {
  headerType: number;
  system: boolean;
  pointerSize: 4 | 8;
}

const HEADER_CHOICE: Readonly<Record<IdentityHeaderKind, HeaderChoice>> = {
  SYSTEM32: { headerType: L.HT_SYSTEM32, system: true, pointerSize: 4 },
  SYSTEM64: { headerType: L.HT_SYSTEM64, system: true, pointerSize: 8 },
  PERFINFO32: { headerType: L.HT_PERFINFO32, system: false, pointerSize: 4 },
  PERFINFO64: { headerType: L.HT_PERFINFO64, system: false, pointerSize: 8 },
};

/** Header of an event: the spec's, or SYSTEM/PERFINFO by `defaultSystem` and the trace's pointer size. */
export function identityHeader(
  header: IdentityHeaderKind | undefined,
  defaultSystem: boolean,
  pointerSize: 4 | 8,
  index: number,
): HeaderChoice {
  if (header === undefined) {
    if (defaultSystem) return pointerSize === 8 ? HEADER_CHOICE.SYSTEM64 : HEADER_CHOICE.SYSTEM32;
    return pointerSize === 8 ? HEADER_CHOICE.PERFINFO64 : HEADER_CHOICE.PERFINFO32;
  }
  const c = Object.prototype.hasOwnProperty.call(HEADER_CHOICE, header) ? HEADER_CHOICE[header] : undefined;
  if (!c) {
    throw new RangeError(`${fieldName(index, 'header')}: ${String(header)} is not SYSTEM32, SYSTEM64, PERFINFO32 or PERFINFO64`);
  }
  return c;
}

function headerSize(h: HeaderChoice): number {
  return h.system ? L.SYSTEM_HEADER_SIZE : L.PERFINFO_HEADER_SIZE;
}

/** Size of an event with `data` payload bytes; it must fit the u16 Size field. */
function eventSize(h: HeaderChoice, data: number, index: number): number {
  const size = headerSize(h) + data;
  if (size > MAX_EVENT_SIZE) throw new RangeError(`${fieldName(index, 'kind')}: event size ${size} does not fit the u16 Size field`);
  return size;
}

/** Writes the header; returns the payload offset. */
function writeIdentityHeader(
  dv: DataView,
  off: number,
  h: HeaderChoice,
  version: number,
  hookId: number,
  size: number,
  s: IdentityEventBase,
  payloadThreadId: number,
  payloadProcessId: number,
): number {
  if (!h.system) return writePerfInfoHeader(dv, off, h.headerType, version, hookId, size, s.timestamp);
  const tid = s.headerThreadId ?? (payloadThreadId ^ 4) >>> 0;
  const pid = s.headerProcessId ?? (payloadProcessId ^ 4) >>> 0;
  return writeSystemHeader(dv, off, h.headerType, version, hookId, size, tid, pid, s.timestamp, false);
}

function checkHeaderIds(s: IdentityEventBase, index: number): void {
  checkOptInt(s.headerThreadId, 0, 0xffffffff, index, 'headerThreadId', 0);
  checkOptInt(s.headerProcessId, 0, 0xffffffff, index, 'headerProcessId', 0);
}

// ---------------------------------------------------------------------------------------------
// strings and SIDs

/** Validates a UTF-16Z string field; returns its encoded size (code units + terminator) × 2. */
function utf16Size(v: unknown, index: number, field: string): number {
  if (typeof v !== 'string') throw new RangeError(`${fieldName(index, field)}: must be a string`);
  if (v.indexOf('\u0000') >= 0) throw new RangeError(`${fieldName(index, field)}: must not contain U+0000`);
  return 2 * v.length + 2;
}

/** Writes `s` as UTF-16LE plus a 2-byte terminator; returns the offset after it. */
function writeUtf16z(u8: Uint8Array, off: number, s: string): number {
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    u8[off + 2 * i] = c & 0xff;
    u8[off + 2 * i + 1] = c >>> 8;
  }
  const end = off + 2 * s.length;
  u8[end] = 0;
  u8[end + 1] = 0;
  return end + 2;
}

/** Validates an ANSI (one byte per character, 0x01…0xFF) string; returns its size with the NUL. */
function ansiSize(v: unknown, index: number, field: string): number {
  if (typeof v !== 'string') throw new RangeError(`${fieldName(index, field)}: must be a string`);
  for (let i = 0; i < v.length; i++) {
    const c = v.charCodeAt(i);
    if (c === 0 || c > 0xff) {
      throw new RangeError(`${fieldName(index, field)}: character ${i} (U+${c.toString(16).padStart(4, '0')}) is not an ANSI byte 0x01-0xFF`);
    }
  }
  return v.length + 1;
}

function writeAnsiz(u8: Uint8Array, off: number, s: string): number {
  for (let i = 0; i < s.length; i++) u8[off + i] = s.charCodeAt(i);
  u8[off + s.length] = 0;
  return off + s.length + 1;
}

const SID_RE = /^S-(\d+)-(\d+)((?:-\d+)*)$/i;
const sidCache = new Map<string, Uint8Array>();

/**
 * A SID's binary form: u8 Revision, u8 SubAuthorityCount, 6-byte big-endian IdentifierAuthority, then
 * SubAuthorityCount little-endian u32 (8 + 4 × count bytes).
 */
export function sidToBytes(sid: string): Uint8Array {
  const cached = sidCache.get(sid);
  if (cached) return cached;
  const m = typeof sid === 'string' ? SID_RE.exec(sid) : null;
  if (!m) throw new RangeError(`userSid: ${String(sid)} is not a SID (S-R-A-S1-S2-…)`);
  const revision = Number(m[1]);
  const authority = BigInt(m[2]);
  const subs = m[3] ? m[3].slice(1).split('-').map(Number) : [];
  if (revision > 255) throw new RangeError(`userSid: revision ${revision} does not fit a byte`);
  if (authority >= 1n << 48n) throw new RangeError(`userSid: authority ${authority} does not fit 48 bits`);
  if (subs.length > F.SID_MAX_SUB_AUTHORITIES) throw new RangeError(`userSid: more than 15 sub-authorities`);
  const out = new Uint8Array(F.SID_FIXED_SIZE + 4 * subs.length);
  out[0] = revision;
  out[F.SID_SUB_AUTHORITY_COUNT] = subs.length;
  for (let i = 0; i < 6; i++) out[2 + i] = Number((authority >> BigInt(8 * (5 - i))) & 0xffn);
  const dv = new DataView(out.buffer);
  subs.forEach((v, i) => {
    if (!Number.isInteger(v) || v > 0xffffffff) throw new RangeError(`userSid: sub-authority ${v} does not fit a u32`);
    dv.setUint32(F.SID_FIXED_SIZE + 4 * i, v, true);
  });
  if (sidCache.size > 1024) sidCache.clear();
  sidCache.set(sid, out);
  return out;
}

/** The SID bytes of a spec (null = the 4-byte zero form). */
function sidBytes(v: ProcessSpec['userSid'], index: number): Uint8Array | null {
  if (v === null) return null;
  if (v === undefined) return sidToBytes(DEFAULT_USER_SID);
  if (typeof v === 'string') {
    try {
      return sidToBytes(v);
    } catch (e) {
      throw new RangeError(`${fieldName(index, 'userSid')}: ${(e as Error).message}`);
    }
  }
  if (v instanceof Uint8Array) {
    if (v.length < F.SID_FIXED_SIZE || v.length !== F.SID_FIXED_SIZE + 4 * v[F.SID_SUB_AUTHORITY_COUNT]) {
      throw new RangeError(`${fieldName(index, 'userSid')}: SID bytes must be 8 + 4 × SubAuthorityCount (byte 1) long`);
    }
    return v;
  }
  throw new RangeError(`${fieldName(index, 'userSid')}: must be a SID string, SID bytes or null`);
}

function checkPointer(v: unknown, ptr: 4 | 8, index: number, field: string): void {
  if (v !== undefined) checkBig(v, 0n, ptr === 8 ? U64_MAX : 0xffffffffn, index, field);
}

function writePointer(dv: DataView, off: number, v: bigint | undefined, ptr: 4 | 8): void {
  if (ptr === 8) dv.setBigUint64(off, v ?? 0n, true);
  else dv.setUint32(off, Number(v ?? 0n), true);
}

// ---------------------------------------------------------------------------------------------
// Thread_TypeGroup1 (F.2)

function threadVersion(s: ThreadSpec, index: number): 2 | 3 | 4 {
  return checkOptInt(s.version, 2, 4, index, 'version', 3) as 2 | 3 | 4;
}

/** whether the ThreadName field is written */
function threadHasName(s: ThreadSpec, version: number): boolean {
  return version === 4 || (version === 3 && s.name !== undefined);
}

export function measureThread(s: ThreadSpec, index: number, pointerSize: 4 | 8): number {
  if (!Object.prototype.hasOwnProperty.call(THREAD_HOOK_IDS, s.opcode)) {
    throw new RangeError(`${fieldName(index, 'opcode')}: ${String(s.opcode)} is not start, end, dcStart or dcEnd`);
  }
  const h = identityHeader(s.header, true, pointerSize, index);
  const version = threadVersion(s, index);
  const P = h.pointerSize;
  checkHeaderIds(s, index);
  checkInt(s.processId, 0, 0xffffffff, index, 'processId');
  checkInt(s.threadId, 0, 0xffffffff, index, 'threadId');
  for (const f of ['stackBase', 'stackLimit', 'userStackBase', 'userStackLimit', 'startAddr', 'affinity', 'win32StartAddr', 'tebBase'] as const) {
    checkPointer(s[f], P, index, f);
  }
  checkOptInt(s.subProcessTag, 0, 0xffffffff, index, 'subProcessTag', 0);
  checkOptInt(s.basePriority, 0, 255, index, 'basePriority', 0);
  checkOptInt(s.pagePriority, 0, 255, index, 'pagePriority', 0);
  checkOptInt(s.ioPriority, 0, 255, index, 'ioPriority', 0);
  checkOptInt(s.threadFlags, 0, 255, index, 'threadFlags', 0);
  let data: number;
  if (version === 2) data = P === 8 ? F.THR64_SIZE_V2 : F.THR32_SIZE_V2;
  else data = P === 8 ? F.THR64_SIZE_V3 : F.THR32_SIZE_V3;
  if (threadHasName(s, version)) data += utf16Size(s.name ?? '', index, 'name');
  else if (s.name !== undefined) utf16Size(s.name, index, 'name');
  return eventSize(h, data, index);
}

export function encodeThread(u8: Uint8Array, dv: DataView, off: number, s: ThreadSpec, size: number, pointerSize: 4 | 8): void {
  const h = identityHeader(s.header, true, pointerSize, -1);
  const version = threadVersion(s, -1);
  const P = h.pointerSize;
  const p = writeIdentityHeader(dv, off, h, version, THREAD_HOOK_IDS[s.opcode], size, s, s.threadId, s.processId);
  dv.setUint32(p + F.THR_PROCESS_ID, s.processId, true);
  dv.setUint32(p + F.THR_THREAD_ID, s.threadId, true);
  const w = P === 8;
  writePointer(dv, p + F.THR_STACK_BASE, s.stackBase, P);
  writePointer(dv, p + (w ? F.THR64_STACK_LIMIT : F.THR32_STACK_LIMIT), s.stackLimit, P);
  writePointer(dv, p + (w ? F.THR64_USER_STACK_BASE : F.THR32_USER_STACK_BASE), s.userStackBase, P);
  writePointer(dv, p + (w ? F.THR64_USER_STACK_LIMIT : F.THR32_USER_STACK_LIMIT), s.userStackLimit, P);
  writePointer(dv, p + (w ? F.THR64_START_ADDR : F.THR32_START_ADDR), s.affinity ?? s.startAddr, P);
  writePointer(dv, p + (w ? F.THR64_WIN32_START_ADDR : F.THR32_WIN32_START_ADDR), s.win32StartAddr, P);
  writePointer(dv, p + (w ? F.THR64_TEB_BASE : F.THR32_TEB_BASE), s.tebBase, P);
  dv.setUint32(p + (w ? F.THR64_SUB_PROCESS_TAG : F.THR32_SUB_PROCESS_TAG), s.subProcessTag ?? 0, true);
  if (version >= 3) {
    u8[p + (w ? F.THR64_BASE_PRIORITY : F.THR32_BASE_PRIORITY)] = s.basePriority ?? 8;
    u8[p + (w ? F.THR64_PAGE_PRIORITY : F.THR32_PAGE_PRIORITY)] = s.pagePriority ?? 5;
    u8[p + (w ? F.THR64_IO_PRIORITY : F.THR32_IO_PRIORITY)] = s.ioPriority ?? 2;
    u8[p + (w ? F.THR64_THREAD_FLAGS : F.THR32_THREAD_FLAGS)] = s.threadFlags ?? 0;
    if (threadHasName(s, version)) writeUtf16z(u8, p + (w ? F.THR64_THREAD_NAME : F.THR32_THREAD_NAME), s.name ?? '');
  }
}

// ---------------------------------------------------------------------------------------------
// Process_TypeGroup1 (F.3)

function processVersion(s: ProcessSpec, index: number): 2 | 3 | 4 | 5 {
  return checkOptInt(s.version, 2, 5, index, 'version', 4) as 2 | 3 | 4 | 5;
}

/** Default header of a process event (F.1): SYSTEM for start/end, PERFINFO for rundown and defunct. */
export function processDefaultsToSystem(opcode: ProcessOpcode): boolean {
  return opcode === 'start' || opcode === 'end';
}

/** offset of UserSID in the payload (F.3) */
export function processUserSidOffset(version: number, pointerSize: 4 | 8): number {
  if (version === 2) return pointerSize === 8 ? F.PRC64_USER_SID_V2 : F.PRC32_USER_SID_V2;
  if (version === 3) return pointerSize === 8 ? F.PRC64_USER_SID_V3 : F.PRC32_USER_SID_V3;
  return pointerSize === 8 ? F.PRC64_USER_SID_V4 : F.PRC32_USER_SID_V4;
}

export function measureProcess(s: ProcessSpec, index: number, pointerSize: 4 | 8): number {
  if (!Object.prototype.hasOwnProperty.call(PROCESS_HOOK_IDS, s.opcode)) {
    throw new RangeError(`${fieldName(index, 'opcode')}: ${String(s.opcode)} is not start, end, dcStart, dcEnd or defunct`);
  }
  const h = identityHeader(s.header, processDefaultsToSystem(s.opcode), pointerSize, index);
  const version = processVersion(s, index);
  const P = h.pointerSize;
  checkHeaderIds(s, index);
  checkPointer(s.uniqueProcessKey, P, index, 'uniqueProcessKey');
  checkInt(s.processId, 0, 0xffffffff, index, 'processId');
  checkOptInt(s.parentId, 0, 0xffffffff, index, 'parentId', 0);
  checkOptInt(s.sessionId, 0, 0xffffffff, index, 'sessionId', 0);
  checkOptInt(s.exitStatus, -0x80000000, 0xffffffff, index, 'exitStatus', 0);
  checkPointer(s.directoryTableBase, P, index, 'directoryTableBase');
  checkOptInt(s.flags, 0, 0xffffffff, index, 'flags', 0);
  const sid = sidBytes(s.userSid, index);
  if (s.userSidPointers !== undefined) {
    if (!Array.isArray(s.userSidPointers) || s.userSidPointers.length !== 2) {
      throw new RangeError(`${fieldName(index, 'userSidPointers')}: must be two bigints`);
    }
    checkPointer(s.userSidPointers[0], P, index, 'userSidPointers[0]');
    checkPointer(s.userSidPointers[1], P, index, 'userSidPointers[1]');
    if ((s.userSidPointers[0] & 0xffffffffn) === 0n) {
      throw new RangeError(`${fieldName(index, 'userSidPointers[0]')}: its low u32 must be non-zero (0 means the zero form)`);
    }
  }
  let n = processUserSidOffset(version, P);
  n += sid === null ? F.PRC_SID_ZERO_SIZE : 2 * P + sid.length;
  n += ansiSize(s.imageFileName ?? '', index, 'imageFileName');
  n += utf16Size(s.commandLine ?? '', index, 'commandLine');
  if (version >= 4) {
    n += utf16Size(s.packageFullName ?? '', index, 'packageFullName');
    n += utf16Size(s.applicationId ?? '', index, 'applicationId');
  }
  if (s.exitTime !== undefined) checkBig(s.exitTime, 0n, U64_MAX, index, 'exitTime');
  if (version === 5) n += F.PRC_EXIT_TIME_SIZE;
  return eventSize(h, n, index);
}

/** ExitStatus default: STILL_ACTIVE, except for end and defunct */
export function defaultExitStatus(opcode: ProcessOpcode): number {
  return opcode === 'end' || opcode === 'defunct' ? 0 : F.STATUS_STILL_ACTIVE;
}

export function encodeProcess(u8: Uint8Array, dv: DataView, off: number, s: ProcessSpec, size: number, pointerSize: 4 | 8): void {
  const h = identityHeader(s.header, processDefaultsToSystem(s.opcode), pointerSize, -1);
  const version = processVersion(s, -1);
  const P = h.pointerSize;
  const w = P === 8;
  // a process event's "thread" is whatever logged it: default header thread id = processId ^ 4 as well
  const p = writeIdentityHeader(dv, off, h, version, PROCESS_HOOK_IDS[s.opcode], size, s, s.processId, s.processId);
  writePointer(dv, p + F.PRC_UNIQUE_PROCESS_KEY, s.uniqueProcessKey, P);
  dv.setUint32(p + (w ? F.PRC64_PROCESS_ID : F.PRC32_PROCESS_ID), s.processId, true);
  dv.setUint32(p + (w ? F.PRC64_PARENT_ID : F.PRC32_PARENT_ID), s.parentId ?? 0, true);
  dv.setUint32(p + (w ? F.PRC64_SESSION_ID : F.PRC32_SESSION_ID), s.sessionId ?? 0, true);
  dv.setUint32(p + (w ? F.PRC64_EXIT_STATUS : F.PRC32_EXIT_STATUS), (s.exitStatus ?? defaultExitStatus(s.opcode)) >>> 0, true);
  if (version >= 3) writePointer(dv, p + (w ? F.PRC64_DIRECTORY_TABLE_BASE : F.PRC32_DIRECTORY_TABLE_BASE), s.directoryTableBase, P);
  if (version >= 4) dv.setUint32(p + (w ? F.PRC64_FLAGS : F.PRC32_FLAGS), s.flags ?? 0, true);
  let q = p + processUserSidOffset(version, P);
  const sid = sidBytes(s.userSid, -1);
  if (sid === null) {
    dv.setUint32(q, 0, true);
    q += F.PRC_SID_ZERO_SIZE;
  } else {
    const ptrs = s.userSidPointers ?? [w ? DEFAULT_SID_POINTER64 : DEFAULT_SID_POINTER32, 0n];
    writePointer(dv, q, ptrs[0], P);
    writePointer(dv, q + P, ptrs[1], P);
    q += 2 * P;
    u8.set(sid, q);
    q += sid.length;
  }
  q = writeAnsiz(u8, q, s.imageFileName ?? '');
  q = writeUtf16z(u8, q, s.commandLine ?? '');
  if (version >= 4) {
    q = writeUtf16z(u8, q, s.packageFullName ?? '');
    q = writeUtf16z(u8, q, s.applicationId ?? '');
  }
  if (version === 5) dv.setBigUint64(q, s.exitTime ?? 0n, true);
}

// ---------------------------------------------------------------------------------------------
// SetName (F.5)

export function measureSetThreadName(s: SetThreadNameSpec, index: number, pointerSize: 4 | 8): number {
  const h = identityHeader(s.header, false, pointerSize, index);
  checkOptInt(s.version, 0, 255, index, 'version', F.SETNAME_EVENT_VERSION);
  checkHeaderIds(s, index);
  checkInt(s.processId, 0, 0xffffffff, index, 'processId');
  checkInt(s.threadId, 0, 0xffffffff, index, 'threadId');
  return eventSize(h, F.SETNAME_THREAD_NAME + utf16Size(s.name, index, 'name'), index);
}

export function encodeSetThreadName(
  u8: Uint8Array,
  dv: DataView,
  off: number,
  s: SetThreadNameSpec,
  size: number,
  pointerSize: 4 | 8,
): void {
  const h = identityHeader(s.header, false, pointerSize, -1);
  const p = writeIdentityHeader(
    dv, off, h, s.version ?? F.SETNAME_EVENT_VERSION, F.HOOK_THREAD_SET_NAME, size, s, s.threadId, s.processId,
  );
  dv.setUint32(p + F.SETNAME_PROCESS_ID, s.processId, true);
  dv.setUint32(p + F.SETNAME_THREAD_ID, s.threadId, true);
  writeUtf16z(u8, p + F.SETNAME_THREAD_NAME, s.name);
}

// ---------------------------------------------------------------------------------------------
// ReadyThread (F.4)

export function measureReadyThread(s: ReadyThreadSpec, index: number, pointerSize: 4 | 8): number {
  const h = identityHeader(s.header, false, pointerSize, index);
  checkOptInt(s.version, 0, 255, index, 'version', F.RDY_EVENT_VERSION);
  checkHeaderIds(s, index);
  checkInt(s.threadId, 0, 0xffffffff, index, 'threadId');
  checkOptInt(s.adjustReason, 0, 255, index, 'adjustReason', 0);
  checkOptInt(s.adjustIncrement, -128, 127, index, 'adjustIncrement', 0);
  checkOptInt(s.flags, 0, 255, index, 'flags', 0);
  checkOptInt(s.spare, 0, 255, index, 'spare', 0);
  return headerSize(h) + F.RDY_SIZE;
}

export function encodeReadyThread(dv: DataView, off: number, s: ReadyThreadSpec, size: number, pointerSize: 4 | 8): void {
  const h = identityHeader(s.header, false, pointerSize, -1);
  // SYSTEM header default ids: the made-ready thread's id ^ 4 (the payload has no process id)
  const p = writeIdentityHeader(dv, off, h, s.version ?? F.RDY_EVENT_VERSION, F.HOOK_READY_THREAD, size, s, s.threadId, 0);
  dv.setUint32(p + F.RDY_THREAD_ID, s.threadId, true);
  dv.setUint8(p + F.RDY_ADJUST_REASON, s.adjustReason ?? 0);
  dv.setInt8(p + F.RDY_ADJUST_INCREMENT, s.adjustIncrement ?? 0);
  dv.setUint8(p + F.RDY_FLAGS, s.flags ?? 0);
  dv.setUint8(p + F.RDY_SPARE, s.spare ?? 0);
}

// ---------------------------------------------------------------------------------------------
// SampledProfile (G.1)

export function measureSampledProfile(s: SampledProfileSpec, index: number, pointerSize: 4 | 8): number {
  const h = identityHeader(s.header, false, pointerSize, index);
  checkOptInt(s.version, 0, 255, index, 'version', F.SMP_EVENT_VERSION);
  checkHeaderIds(s, index);
  checkBig(s.instructionPointer, 0n, h.pointerSize === 8 ? U64_MAX : 0xffffffffn, index, 'instructionPointer');
  checkInt(s.threadId, 0, 0xffffffff, index, 'threadId');
  checkOptInt(s.count, 0, 0xffff, index, 'count', 1);
  checkOptInt(s.flags, 0, 255, index, 'flags', 0);
  checkOptInt(s.rank, 0, 255, index, 'rank', 0);
  return headerSize(h) + (h.pointerSize === 8 ? F.SMP64_SIZE : F.SMP32_SIZE);
}

export function encodeSampledProfile(dv: DataView, off: number, s: SampledProfileSpec, size: number, pointerSize: 4 | 8): void {
  const h = identityHeader(s.header, false, pointerSize, -1);
  const w = h.pointerSize === 8;
  // SYSTEM header default ids: the sampled thread's id ^ 4 (the payload has no process id)
  const p = writeIdentityHeader(dv, off, h, s.version ?? F.SMP_EVENT_VERSION, F.HOOK_SAMPLED_PROFILE, size, s, s.threadId, 0);
  writePointer(dv, p + F.SMP_INSTRUCTION_POINTER, s.instructionPointer, h.pointerSize);
  dv.setUint32(p + (w ? F.SMP64_THREAD_ID : F.SMP32_THREAD_ID), s.threadId, true);
  dv.setUint16(p + (w ? F.SMP64_COUNT : F.SMP32_COUNT), s.count ?? 1, true);
  dv.setUint8(p + (w ? F.SMP64_FLAGS : F.SMP32_FLAGS), s.flags ?? 0);
  dv.setUint8(p + (w ? F.SMP64_RANK : F.SMP32_RANK), s.rank ?? 0);
}

// ---------------------------------------------------------------------------------------------
// Image_Load (G.2)

function imageVersion(s: ImageSpec, index: number): 2 | 3 {
  return checkOptInt(s.version, 2, 3, index, 'version', F.IMG_EVENT_VERSION) as 2 | 3;
}

export function measureImage(s: ImageSpec, index: number, pointerSize: 4 | 8): number {
  if (!Object.prototype.hasOwnProperty.call(IMAGE_HOOK_IDS, s.opcode)) {
    throw new RangeError(`${fieldName(index, 'opcode')}: ${String(s.opcode)} is not load, unload, dcStart or dcEnd`);
  }
  const h = identityHeader(s.header, s.opcode === 'load' || s.opcode === 'unload', pointerSize, index);
  imageVersion(s, index);
  checkHeaderIds(s, index);
  checkInt(s.processId, 0, 0xffffffff, index, 'processId');
  const max = h.pointerSize === 8 ? U64_MAX : 0xffffffffn;
  checkBig(s.imageBase, 0n, max, index, 'imageBase');
  checkBig(s.imageSize, 0n, max, index, 'imageSize');
  checkPointer(s.defaultBase, h.pointerSize, index, 'defaultBase');
  checkOptInt(s.imageChecksum, 0, 0xffffffff, index, 'imageChecksum', 0);
  checkOptInt(s.timeDateStamp, 0, 0xffffffff, index, 'timeDateStamp', 0);
  checkOptInt(s.signatureLevel, 0, 255, index, 'signatureLevel', 0);
  checkOptInt(s.signatureType, 0, 255, index, 'signatureType', 0);
  const fixed = h.pointerSize === 8 ? F.IMG64_FILE_NAME : F.IMG32_FILE_NAME;
  return eventSize(h, fixed + utf16Size(s.fileName, index, 'fileName'), index);
}

export function encodeImage(u8: Uint8Array, dv: DataView, off: number, s: ImageSpec, size: number, pointerSize: 4 | 8): void {
  const h = identityHeader(s.header, s.opcode === 'load' || s.opcode === 'unload', pointerSize, -1);
  const version = imageVersion(s, -1);
  const P = h.pointerSize;
  const w = P === 8;
  // SYSTEM header default ids: the image's process id ^ 4 as both ids (whatever thread logged it)
  const p = writeIdentityHeader(dv, off, h, version, IMAGE_HOOK_IDS[s.opcode], size, s, s.processId, s.processId);
  writePointer(dv, p + F.IMG_IMAGE_BASE, s.imageBase, P);
  writePointer(dv, p + (w ? F.IMG64_IMAGE_SIZE : F.IMG32_IMAGE_SIZE), s.imageSize, P);
  dv.setUint32(p + (w ? F.IMG64_PROCESS_ID : F.IMG32_PROCESS_ID), s.processId, true);
  dv.setUint32(p + (w ? F.IMG64_IMAGE_CHECKSUM : F.IMG32_IMAGE_CHECKSUM), s.imageChecksum ?? 0, true);
  dv.setUint32(p + (w ? F.IMG64_TIME_DATE_STAMP : F.IMG32_TIME_DATE_STAMP), s.timeDateStamp ?? 0, true);
  if (version === 3) {
    dv.setUint8(p + (w ? F.IMG64_SIGNATURE_LEVEL : F.IMG32_SIGNATURE_LEVEL), s.signatureLevel ?? 0);
    dv.setUint8(p + (w ? F.IMG64_SIGNATURE_TYPE : F.IMG32_SIGNATURE_TYPE), s.signatureType ?? 0);
  }
  writePointer(dv, p + (w ? F.IMG64_DEFAULT_BASE : F.IMG32_DEFAULT_BASE), s.defaultBase ?? s.imageBase, P);
  writeUtf16z(u8, p + (w ? F.IMG64_FILE_NAME : F.IMG32_FILE_NAME), s.fileName);
}

// ---------------------------------------------------------------------------------------------
// StackWalk group (H.1)

export const STACKWALK_HOOK_IDS: Readonly<Record<StackWalkOpcode, number>> = {
  stack: F.HOOK_STACKWALK,
  keyCreate: F.HOOK_STACK_KEY_CREATE,
  keyDelete: F.HOOK_STACK_KEY_DELETE,
  keyRundown: F.HOOK_STACK_KEY_RUNDOWN,
  keyKernel: F.HOOK_STACK_KEY_KERNEL,
  keyUser: F.HOOK_STACK_KEY_USER,
};

const isKeyDefinition = (o: StackWalkOpcode): boolean => o === 'keyCreate' || o === 'keyDelete' || o === 'keyRundown';
const isKeyReference = (o: StackWalkOpcode): boolean => o === 'keyKernel' || o === 'keyUser';

export function measureStackWalk(s: StackWalkSpec, index: number, pointerSize: 4 | 8): number {
  const h = identityHeader(s.header, false, pointerSize, index);
  if (!Object.prototype.hasOwnProperty.call(STACKWALK_HOOK_IDS, s.opcode)) {
    throw new RangeError(`${fieldName(index, 'opcode')}: ${String(s.opcode)} is not stack, keyCreate, keyDelete, keyRundown, keyKernel or keyUser`);
  }
  checkOptInt(s.version, 0, 255, index, 'version', F.STW_EVENT_VERSION);
  checkHeaderIds(s, index);
  const max = h.pointerSize === 8 ? U64_MAX : 0xffffffffn;
  if (s.eventTimestamp !== undefined) checkBig(s.eventTimestamp, -(2n ** 63n), 2n ** 63n - 1n, index, 'eventTimestamp');
  checkOptInt(s.processId, 0, 0xffffffff, index, 'processId', 0);
  checkOptInt(s.threadId, 0, 0xffffffff, index, 'threadId', 0);
  if (s.stackKey !== undefined) checkBig(s.stackKey, 0n, max, index, 'stackKey');
  const frames = s.frames ?? [];
  frames.forEach((f, i) => checkBig(f, 0n, max, index, `frames[${i}]`));
  const P = h.pointerSize;
  if (isKeyReference(s.opcode)) return eventSize(h, F.STW_REF_KEY + P, index);
  if (isKeyDefinition(s.opcode)) return eventSize(h, P + frames.length * P, index);
  return eventSize(h, F.STW_FRAMES + frames.length * P, index);
}

export function encodeStackWalk(dv: DataView, off: number, s: StackWalkSpec, size: number, pointerSize: 4 | 8): void {
  const h = identityHeader(s.header, false, pointerSize, -1);
  const P = h.pointerSize;
  const p = writeIdentityHeader(dv, off, h, s.version ?? F.STW_EVENT_VERSION, STACKWALK_HOOK_IDS[s.opcode], size, s, s.threadId ?? 0, s.processId ?? 0);
  const frames = s.frames ?? [];
  let at: number;
  if (isKeyDefinition(s.opcode)) {
    writePointer(dv, p + F.STW_DEF_KEY, s.stackKey, P);
    at = p + P;
  } else {
    dv.setBigInt64(p + F.STW_EVENT_TIMESTAMP, s.eventTimestamp ?? 0n, true);
    dv.setUint32(p + F.STW_STACK_PROCESS, s.processId ?? 0, true);
    dv.setUint32(p + F.STW_STACK_THREAD, s.threadId ?? 0, true);
    if (isKeyReference(s.opcode)) {
      writePointer(dv, p + F.STW_REF_KEY, s.stackKey, P);
      return;
    }
    at = p + F.STW_FRAMES;
  }
  for (const f of frames) {
    writePointer(dv, at, f, P);
    at += P;
  }
}

// SampledProfileInterval (G.4)

function sampleIntervalVersion(s: SampleIntervalSpec, index: number): 2 | 3 {
  return checkOptInt(s.version, 2, 3, index, 'version', F.SPI_EVENT_VERSION) as 2 | 3;
}

export function measureSampleInterval(s: SampleIntervalSpec, index: number, pointerSize: 4 | 8): number {
  if (!Object.prototype.hasOwnProperty.call(SAMPLE_INTERVAL_HOOK_IDS, s.opcode)) {
    throw new RangeError(`${fieldName(index, 'opcode')}: ${String(s.opcode)} is not setInterval, dcStart or dcEnd`);
  }
  const h = identityHeader(s.header, true, pointerSize, index);
  const version = sampleIntervalVersion(s, index);
  checkHeaderIds(s, index);
  checkOptInt(s.source, 0, 0xffffffff, index, 'source', 0);
  checkInt(s.newInterval, 0, 0xffffffff, index, 'newInterval');
  checkOptInt(s.oldInterval, 0, 0xffffffff, index, 'oldInterval', 0);
  return eventSize(h, F.SPI_SOURCE_NAME + (version === 3 ? utf16Size(s.sourceName ?? 'Timer', index, 'sourceName') : 0), index);
}

export function encodeSampleInterval(u8: Uint8Array, dv: DataView, off: number, s: SampleIntervalSpec, size: number, pointerSize: 4 | 8): void {
  const h = identityHeader(s.header, true, pointerSize, -1);
  const version = sampleIntervalVersion(s, -1);
  // SYSTEM header default ids: 0 ^ 4 (logged by the kernel)
  const p = writeIdentityHeader(dv, off, h, version, SAMPLE_INTERVAL_HOOK_IDS[s.opcode], size, s, 0, 0);
  dv.setUint32(p + F.SPI_SOURCE, s.source ?? 0, true);
  dv.setUint32(p + F.SPI_NEW_INTERVAL, s.newInterval, true);
  dv.setUint32(p + F.SPI_OLD_INTERVAL, s.oldInterval ?? s.newInterval, true);
  if (version === 3) writeUtf16z(u8, p + F.SPI_SOURCE_NAME, s.sourceName ?? 'Timer');
}
