// Process events, docs/format.md §F.3 (Process_TypeGroup1: Start 0x0301, End 0x0302, DCStart 0x0303,
// DCEnd 0x0304, Defunct 0x0327; versions 2-5, 32/64-bit): one processEvents row per event.
//
//  +0 ptr UniqueProcessKey, then at P: +0 u32 ProcessId, +4 u32 ParentId, +8 u32 SessionId,
//  +0xC i32 ExitStatus, +0x10 ptr DirectoryTableBase (v3+), then u32 Flags (v4+); the variable part
//  starts at processSidOffset(version, P): UserSID (a zero u32, or 2 pointers + a SID of
//  8 + 4 × SubAuthorityCount bytes), ImageFileName (ANSI, NUL), CommandLine (UTF-16Z, v2+),
//  PackageFullName and ApplicationId (UTF-16Z, v4+), u64 exit FILETIME (v5).
// A string without its NUL is taken up to the end of the payload (counted); the fields after it are null.
// src/engine/reference/process.ts is its twin.
import * as L from './layout';
import { count, issue } from './diag';
import { addRow, col } from './memory';
import { putString, skipString, stringNext, stringTerminated } from './strings';

// @ts-ignore: decorator
@inline
function bit(c: i32): u32 {
  return <u32>1 << <u32>c;
}

/** Decodes one Process event (`opcode` = low byte of its HookId); the row space was checked by the walker. */
export function processEvent(data: usize, n: i32, version: i32, pointerSize: i32, opcode: i32, cpu: i32, tsAt: usize, fileOffset: f64): void {
  if (version < 2 || version > 5) {
    count(L.D_PROCESS_SKIPPED_VERSION);
    return;
  }
  // the variable part: UserSID, then ImageFileName (at least its NUL) must lie inside the payload
  const sidAt = L.processSidOffset(version, pointerSize);
  let imageAt = sidAt + L.SID_NULL_SIZE;
  if (imageAt <= n && load<u32>(data + <usize>sidAt) != 0) {
    const sid = sidAt + 2 * pointerSize;
    imageAt = sid + L.SID_HEADER_SIZE <= n ? sid + L.SID_HEADER_SIZE + 4 * <i32>load<u8>(data + <usize>(sid + L.SID_SUB_AUTHORITY_COUNT)) : n + 1;
  }
  if (imageAt >= n) {
    issue(L.D_PROCESS_SKIPPED_SHORT, <u32>n, fileOffset);
    return;
  }
  count(L.D_PROCESS_DECODED);
  const T = L.TABLE_PROCESS_EVENTS;
  const r = addRow(T);
  const p = data + <usize>pointerSize;
  const end = data + <usize>n;
  let valid = L.PE_ALWAYS_VALID;
  store<i64>(col(T, L.PE_TIMESTAMP) + (r << 3), load<i64>(tsAt));
  store<u16>(col(T, L.PE_CPU) + (r << 1), <u16>cpu);
  store<u8>(col(T, L.PE_OPCODE) + r, <u8>opcode);
  store<u32>(col(T, L.PE_PROCESS_ID) + (r << 2), load<u32>(p, L.PROC_P_PROCESS_ID));
  store<u32>(col(T, L.PE_PARENT_ID) + (r << 2), load<u32>(p, L.PROC_P_PARENT_ID));
  store<u32>(col(T, L.PE_SESSION_ID) + (r << 2), load<u32>(p, L.PROC_P_SESSION_ID));
  store<i32>(col(T, L.PE_EXIT_STATUS) + (r << 2), load<i32>(p, L.PROC_P_EXIT_STATUS));
  store<u64>(col(T, L.PE_UNIQUE_PROCESS_KEY) + (r << 3), pointerSize == 4 ? <u64>load<u32>(data) : load<u64>(data));
  store<u32>(col(T, L.PE_IMAGE_FILE_NAME) + (r << 2), putString(data + <usize>imageAt, end, L.STR_UNIT_ANSI));
  // each later field needs its predecessor terminated and bytes left for itself
  let ok = stringTerminated;
  if (!ok) issue(L.D_STRING_UNTERMINATED, <u32>imageAt, fileOffset);
  if (ok && stringNext < end) {
    const at = stringNext;
    store<u32>(col(T, L.PE_COMMAND_LINE) + (r << 2), putString(at, end, L.STR_UNIT_UTF16));
    valid |= bit(L.PE_COMMAND_LINE);
    ok = stringTerminated;
    if (!ok) issue(L.D_STRING_UNTERMINATED, <u32>(at - data), fileOffset);
  } else ok = false;
  if (version >= 4) {
    if (ok && stringNext < end) {
      const at = stringNext;
      store<u32>(col(T, L.PE_PACKAGE_FULL_NAME) + (r << 2), putString(at, end, L.STR_UNIT_UTF16));
      valid |= bit(L.PE_PACKAGE_FULL_NAME);
      ok = stringTerminated;
      if (!ok) issue(L.D_STRING_UNTERMINATED, <u32>(at - data), fileOffset);
    } else ok = false;
    if (ok && stringNext < end) {
      const at = stringNext;
      skipString(at, end, L.STR_UNIT_UTF16); // ApplicationId: walked, not kept
      ok = stringTerminated;
      if (!ok) issue(L.D_STRING_UNTERMINATED, <u32>(at - data), fileOffset);
    } else ok = false;
    if (version == 5 && ok && stringNext + L.PROC_EXIT_TIME_SIZE <= end) {
      store<i64>(col(T, L.PE_EXIT_TIME) + (r << 3), load<i64>(stringNext));
      valid |= bit(L.PE_EXIT_TIME);
    }
  }
  store<u8>(col(T, L.PE_VERSION) + r, <u8>version);
  store<f64>(col(T, L.PE_FILE_OFFSET) + (r << 3), fileOffset);
  store<u32>(col(T, L.PE_VALID) + (r << 2), valid);
}
