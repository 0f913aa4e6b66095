// StackWalk and stack-key events (group EVENT_TRACE_GROUP_STACKWALK, HookIds 0x1820 and 0x1822-0x1826),
// docs/format.md §H.1: one stackEvents row per version-2 event, and one stackEventFrames row per frame of a
// StackWalk or key-definition event. P = pointer size (by the header type):
//
//  StackWalk_Event (0x1820 Stack)            StackWalk_Key (0x1825 kernel, 0x1826 user)   key definition (0x1822-0x1824)
//  0x00 u64 EventTimeStamp                   0x00 u64 EventTimeStamp                      0x00 ptr StackKey
//  0x08 u32 StackProcess                     0x08 u32 StackProcess                        P    ptr Stack1 .. StackN
//  0x0C u32 StackThread                      0x0C u32 StackThread
//  0x10 ptr Stack1 .. StackN                 0x10 ptr StackKey
//
// N = (payload - fixed part) / P; bytes after the last whole pointer are ignored. The frames of a row are
// the frameCount stackEventFrames rows after those of the rows before it (both tables drain together).
// src/engine/reference/stackwalk.ts is its twin.
import * as L from './layout';
import { count, issue } from './diag';
import { addRow, col } from './memory';

// @ts-ignore: decorator
@inline
function bit(c: i32): u32 {
  return <u32>1 << <u32>c;
}

// @ts-ignore: decorator
@inline
function pointerAt(at: usize, pointerSize: i32): u64 {
  return pointerSize == 4 ? <u64>load<u32>(at) : load<u64>(at);
}

/** Decodes one StackWalk or stack-key event (`opcode` = low byte of its HookId); the row space was checked by the walker. */
export function stackWalkEvent(data: usize, n: i32, version: i32, pointerSize: i32, opcode: i32, cpu: i32, tsAt: usize, fileOffset: f64): void {
  if (version != L.STK_EVENT_VERSION) {
    count(L.D_STACK_SKIPPED_VERSION);
    return;
  }
  const isDefinition = opcode >= L.STK_OPCODE_KEY_CREATE && opcode <= L.STK_OPCODE_KEY_RUNDOWN;
  const isReference = opcode == L.STK_OPCODE_KEY_KERNEL || opcode == L.STK_OPCODE_KEY_USER;
  // the fixed part: definitions P (the key); references 0x10 + P; StackWalk 0x10
  const fixed = isDefinition ? pointerSize : isReference ? L.STK_KEY + pointerSize : L.STK_FRAMES;
  if (n < fixed) {
    issue(L.D_STACK_SKIPPED_SHORT, <u32>n, fileOffset);
    return;
  }
  count(L.D_STACK_DECODED);
  const T = L.TABLE_STACK_EVENTS;
  const r = addRow(T);
  const ts = load<i64>(tsAt);
  let valid = L.SE_ALWAYS_VALID;
  store<i64>(col(T, L.SE_TIMESTAMP) + (r << 3), ts);
  store<u16>(col(T, L.SE_CPU) + (r << 1), <u16>cpu);
  store<u8>(col(T, L.SE_OPCODE) + r, <u8>opcode);
  if (!isDefinition) {
    store<i64>(col(T, L.SE_EVENT_TIMESTAMP) + (r << 3), load<i64>(data, L.STK_EVENT_TIMESTAMP));
    store<u32>(col(T, L.SE_PROCESS_ID) + (r << 2), load<u32>(data, L.STK_PROCESS_ID));
    store<u32>(col(T, L.SE_THREAD_ID) + (r << 2), load<u32>(data, L.STK_THREAD_ID));
    valid |= bit(L.SE_EVENT_TIMESTAMP) | bit(L.SE_PROCESS_ID) | bit(L.SE_THREAD_ID);
  }
  if (isDefinition || isReference) {
    store<u64>(col(T, L.SE_STACK_KEY) + (r << 3), pointerAt(data + <usize>(isDefinition ? L.STK_DEF_KEY : L.STK_KEY), pointerSize));
    valid |= bit(L.SE_STACK_KEY);
  }
  // frames: StackWalk and key definitions (a reference's payload ends with its key)
  const frames = isReference ? 0 : (n - fixed) / pointerSize;
  store<u16>(col(T, L.SE_FRAME_COUNT) + (r << 1), <u16>frames);
  store<u8>(col(T, L.SE_POINTER_SIZE) + r, <u8>pointerSize);
  store<u8>(col(T, L.SE_VERSION) + r, <u8>version);
  store<f64>(col(T, L.SE_FILE_OFFSET) + (r << 3), fileOffset);
  store<u32>(col(T, L.SE_VALID) + (r << 2), valid);
  const F = L.TABLE_STACK_EVENT_FRAMES;
  const fts = col(F, L.SF_TIMESTAMP);
  const fdepth = col(F, L.SF_DEPTH);
  const faddr = col(F, L.SF_ADDRESS);
  let at = data + <usize>fixed;
  for (let i: i32 = 0; i < frames; i++) {
    const f = addRow(F);
    store<i64>(fts + (f << 3), ts);
    store<u16>(fdepth + (f << 1), <u16>i);
    store<u64>(faddr + (f << 3), pointerAt(at, pointerSize));
    at += <usize>pointerSize;
  }
}
