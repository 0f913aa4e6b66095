// Thread events, docs/format.md §F.2 (Thread_TypeGroup1: Start 0x0501, End 0x0502, DCStart 0x0503,
// DCEnd 0x0504; versions 2-4, 32/64-bit) and §F.5 (SetName 0x0548): one threadEvents row per event.
// Ids come from the payload, never from the header (in Start the header names the creating thread).
//
//  +0x00 u32 ProcessId   +0x04 u32 TThreadId   +0x08 7 pointers: StackBase, StackLimit, UserStackBase,
//  UserStackLimit, StartAddr (v3+: Affinity), Win32StartAddr, TebBase; then at 8 + 7P the tail:
//  +0 u32 SubProcessTag, +4 u8 BasePriority, PagePriority, IoPriority, ThreadFlags (v3+),
//  +8 UTF-16Z ThreadName (v4; v3 only if bytes remain).
//  SetName: +0 u32 ProcessId, +4 u32 ThreadId, +8 UTF-16Z name (every version: one layout known).
// src/engine/reference/thread.ts is its twin.
import * as L from './layout';
import { count, issue } from './diag';
import { addRow, col } from './memory';
import { putString, stringTerminated } from './strings';

// @ts-ignore: decorator
@inline
function bit(c: i32): u32 {
  return <u32>1 << <u32>c;
}

/** Decodes one Thread event (`opcode` = low byte of its HookId); the row space was checked by the walker. */
export function threadEvent(data: usize, n: i32, version: i32, pointerSize: i32, opcode: i32, cpu: i32, tsAt: usize, fileOffset: f64): void {
  const T = L.TABLE_THREAD_EVENTS;
  let fixed: i32;
  if (opcode == L.OPCODE_THREAD_SET_NAME) {
    fixed = L.SETNAME_NAME;
  } else {
    if (version < 2 || version > 4) {
      count(L.D_THREAD_SKIPPED_VERSION);
      return;
    }
    fixed = L.threadTail(pointerSize) + (version == 2 ? L.THR_TAIL_SIZE_V2 : L.THR_TAIL_SIZE_V3);
  }
  if (n < fixed) {
    issue(L.D_THREAD_SKIPPED_SHORT, <u32>n, fileOffset);
    return;
  }
  count(L.D_THREAD_DECODED);
  const r = addRow(T);
  let valid = L.TE_ALWAYS_VALID;
  store<i64>(col(T, L.TE_TIMESTAMP) + (r << 3), load<i64>(tsAt));
  store<u16>(col(T, L.TE_CPU) + (r << 1), <u16>cpu);
  store<u8>(col(T, L.TE_OPCODE) + r, <u8>opcode);
  let hasName = false;
  if (opcode == L.OPCODE_THREAD_SET_NAME) {
    store<u32>(col(T, L.TE_PROCESS_ID) + (r << 2), load<u32>(data, L.SETNAME_PROCESS_ID));
    store<u32>(col(T, L.TE_THREAD_ID) + (r << 2), load<u32>(data, L.SETNAME_THREAD_ID));
    hasName = n > fixed;
  } else {
    store<u32>(col(T, L.TE_PROCESS_ID) + (r << 2), load<u32>(data, L.THR_PROCESS_ID));
    store<u32>(col(T, L.TE_THREAD_ID) + (r << 2), load<u32>(data, L.THR_THREAD_ID));
    const at = data + <usize>(L.THR_POINTERS + L.THR_WIN32_START_ADDR_INDEX * pointerSize);
    store<u64>(col(T, L.TE_WIN32_START_ADDR) + (r << 3), pointerSize == 4 ? <u64>load<u32>(at) : load<u64>(at));
    valid |= bit(L.TE_WIN32_START_ADDR);
    if (version >= 3) {
      store<u8>(col(T, L.TE_BASE_PRIORITY) + r, load<u8>(data + <usize>(L.threadTail(pointerSize) + L.THR_TAIL_BASE_PRIORITY)));
      valid |= bit(L.TE_BASE_PRIORITY);
      hasName = n > fixed; // v4 requires the name, v3 has it when bytes remain
    }
  }
  if (hasName) {
    store<u32>(col(T, L.TE_NAME) + (r << 2), putString(data + <usize>fixed, data + <usize>n, L.STR_UNIT_UTF16));
    valid |= bit(L.TE_NAME);
    if (!stringTerminated) issue(L.D_STRING_UNTERMINATED, <u32>fixed, fileOffset);
  }
  store<u8>(col(T, L.TE_VERSION) + r, <u8>version);
  store<f64>(col(T, L.TE_FILE_OFFSET) + (r << 3), fileOffset);
  store<u32>(col(T, L.TE_VALID) + (r << 2), valid);
}
