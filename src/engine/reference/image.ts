// Image events, docs/format.md §G.2 (Load 0x030A, Unload/DCStart/DCEnd 0x1402-0x1404; versions 2 and 3,
// 32/64-bit): one imageEvents row per event; the twin of assembly/image.ts (payload drawn there).
import * as L from '../../generated/layout.js';
import { count, issue } from './diag.js';
import { copy64, pointerTo, type Arena } from './memory.js';
import { readString } from './strings.js';

const BIT = (c: number): number => (1 << c) >>> 0;

/** Decodes one Image event (`opcode` = low byte of its HookId): payload at `data` of `n` bytes of `d`. */
export function imageEvent(
  a: Arena,
  d: DataView,
  data: number,
  n: number,
  version: number,
  pointerSize: number,
  opcode: number,
  cpu: number,
  tsAt: number,
  fileOffset: number,
): void {
  if (version < L.IMG_VERSION_MIN || version > L.IMG_VERSION_MAX) {
    count(a, L.D_IMAGE_SKIPPED_VERSION);
    return;
  }
  const fixed = L.imageFileNameOffset(pointerSize);
  if (n < fixed) {
    issue(a, L.D_IMAGE_SKIPPED_SHORT, n, fileOffset);
    return;
  }
  count(a, L.D_IMAGE_DECODED);
  const b = a.builders.imageEvents;
  const r = b.add();
  const c = b.view;
  const w = b.words;
  const q = data + 2 * pointerSize;
  let valid = L.IE_ALWAYS_VALID;
  copy64(d, tsAt, w[L.IE_TIMESTAMP]!, r);
  c.cpu[r] = cpu;
  c.opcode[r] = opcode;
  c.processId[r] = d.getUint32(q + L.IMG_2P_PROCESS_ID, true);
  pointerTo(d, data + L.IMG_IMAGE_BASE, pointerSize, w[L.IE_IMAGE_BASE]!, r);
  pointerTo(d, data + L.IMG_IMAGE_SIZE_INDEX * pointerSize, pointerSize, w[L.IE_IMAGE_SIZE]!, r);
  c.imageChecksum[r] = d.getUint32(q + L.IMG_2P_IMAGE_CHECKSUM, true);
  c.timeDateStamp[r] = d.getUint32(q + L.IMG_2P_TIME_DATE_STAMP, true);
  if (version >= 3) {
    c.signatureLevel[r] = d.getUint8(q + L.IMG_2P_SIGNATURE_LEVEL);
    c.signatureType[r] = d.getUint8(q + L.IMG_2P_SIGNATURE_TYPE);
    valid |= BIT(L.IE_SIGNATURE_LEVEL) | BIT(L.IE_SIGNATURE_TYPE);
  }
  pointerTo(d, q + L.IMG_2P_DEFAULT_BASE, pointerSize, w[L.IE_DEFAULT_BASE]!, r);
  if (n > fixed) {
    const s = readString(d, data + fixed, data + n, L.STR_UNIT_UTF16);
    c.fileName[r] = s.text;
    valid |= BIT(L.IE_FILE_NAME);
    if (!s.terminated) issue(a, L.D_STRING_UNTERMINATED, fixed, fileOffset);
  }
  c.pointerSize[r] = pointerSize;
  c.version[r] = version;
  c.fileOffset[r] = fileOffset;
  c.valid[r] = valid >>> 0;
}
