// Image events, docs/format.md §G.2 (Image_Load: Load 0x030A, Unload 0x1402, DCStart 0x1403, DCEnd 0x1404;
// versions 2 and 3, 32/64-bit): one imageEvents row per event. Payload WMI_IMAGELOAD_INFORMATION, P = pointer size:
//
//  x86  x64
//  0x00 0x00 ptr ImageBase
//  0x04 0x08 ptr ImageSize
//  0x08 0x10 u32 ProcessId
//  0x0C 0x14 u32 ImageChecksum
//  0x10 0x18 u32 TimeDateStamp
//  0x14 0x1C u8  SignatureLevel, u8 SignatureType, u16 Reserved0 (v3; v2: u32 Reserved0)
//  0x18 0x20 ptr DefaultBase
//  0x1C 0x28 u32 Reserved1-4
//  0x2C 0x38 UTF-16Z FileName
//
// The file name goes to the string heap as the Thread and Process names do (strings.ts).
// src/engine/reference/image.ts is its twin.
import * as L from './layout';
import { count, issue } from './diag';
import { addRow, col } from './memory';
import { putString, stringTerminated } from './strings';

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

/** Decodes one Image event (`opcode` = low byte of its HookId); the row space was checked by the walker. */
export function imageEvent(data: usize, n: i32, version: i32, pointerSize: i32, opcode: i32, cpu: i32, tsAt: usize, fileOffset: f64): void {
  if (version < L.IMG_VERSION_MIN || version > L.IMG_VERSION_MAX) {
    count(L.D_IMAGE_SKIPPED_VERSION);
    return;
  }
  const fixed = L.imageFileNameOffset(pointerSize);
  if (n < fixed) {
    issue(L.D_IMAGE_SKIPPED_SHORT, <u32>n, fileOffset);
    return;
  }
  count(L.D_IMAGE_DECODED);
  const T = L.TABLE_IMAGE_EVENTS;
  const r = addRow(T);
  const q = data + <usize>(2 * pointerSize);
  let valid = L.IE_ALWAYS_VALID;
  store<i64>(col(T, L.IE_TIMESTAMP) + (r << 3), load<i64>(tsAt));
  store<u16>(col(T, L.IE_CPU) + (r << 1), <u16>cpu);
  store<u8>(col(T, L.IE_OPCODE) + r, <u8>opcode);
  store<u32>(col(T, L.IE_PROCESS_ID) + (r << 2), load<u32>(q, L.IMG_2P_PROCESS_ID));
  store<u64>(col(T, L.IE_IMAGE_BASE) + (r << 3), pointerAt(data + <usize>L.IMG_IMAGE_BASE, pointerSize));
  store<u64>(col(T, L.IE_IMAGE_SIZE) + (r << 3), pointerAt(data + <usize>(L.IMG_IMAGE_SIZE_INDEX * pointerSize), pointerSize));
  store<u32>(col(T, L.IE_IMAGE_CHECKSUM) + (r << 2), load<u32>(q, L.IMG_2P_IMAGE_CHECKSUM));
  store<u32>(col(T, L.IE_TIME_DATE_STAMP) + (r << 2), load<u32>(q, L.IMG_2P_TIME_DATE_STAMP));
  if (version >= 3) {
    store<u8>(col(T, L.IE_SIGNATURE_LEVEL) + r, load<u8>(q, L.IMG_2P_SIGNATURE_LEVEL));
    store<u8>(col(T, L.IE_SIGNATURE_TYPE) + r, load<u8>(q, L.IMG_2P_SIGNATURE_TYPE));
    valid |= bit(L.IE_SIGNATURE_LEVEL) | bit(L.IE_SIGNATURE_TYPE);
  }
  store<u64>(col(T, L.IE_DEFAULT_BASE) + (r << 3), pointerAt(q + <usize>L.IMG_2P_DEFAULT_BASE, pointerSize));
  if (n > fixed) {
    store<u32>(col(T, L.IE_FILE_NAME) + (r << 2), putString(data + <usize>fixed, data + <usize>n, L.STR_UNIT_UTF16));
    valid |= bit(L.IE_FILE_NAME);
    if (!stringTerminated) issue(L.D_STRING_UNTERMINATED, <u32>fixed, fileOffset);
  }
  store<u8>(col(T, L.IE_POINTER_SIZE) + r, <u8>pointerSize);
  store<u8>(col(T, L.IE_VERSION) + r, <u8>version);
  store<f64>(col(T, L.IE_FILE_OFFSET) + (r << 3), fileOffset);
  store<u32>(col(T, L.IE_VALID) + (r << 2), valid);
}
