// Thread events, docs/format.md §F.2 (Start/End/DCStart/DCEnd, versions 2-4) and §F.5 (SetName): one
// threadEvents row per event; the twin of assembly/thread.ts (payload drawn there). Ids come from the
// payload, never from the header.
import * as L from '../../generated/layout.js';
import { count, issue } from './diag.js';
import { pointerTo, type Arena } from './memory.js';
import { readString } from './strings.js';

const BIT = (c: number): number => (1 << c) >>> 0;

/** Decodes one Thread event (`opcode` = low byte of its HookId): payload at `data` of `n` bytes of `d`. */
export function threadEvent(
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
  const setName = opcode === L.OPCODE_THREAD_SET_NAME;
  if (!setName && (version < 2 || version > 4)) {
    count(a, L.D_THREAD_SKIPPED_VERSION);
    return;
  }
  const fixed = setName ? L.SETNAME_NAME : L.threadTail(pointerSize) + (version === 2 ? L.THR_TAIL_SIZE_V2 : L.THR_TAIL_SIZE_V3);
  if (n < fixed) {
    issue(a, L.D_THREAD_SKIPPED_SHORT, n, fileOffset);
    return;
  }
  count(a, L.D_THREAD_DECODED);
  const b = a.builders.threadEvents;
  const r = b.add();
  const c = b.view;
  const w = b.words;
  let valid = L.TE_ALWAYS_VALID;
  w[L.TE_TIMESTAMP]![2 * r] = d.getUint32(tsAt, true);
  w[L.TE_TIMESTAMP]![2 * r + 1] = d.getUint32(tsAt + 4, true);
  c.cpu[r] = cpu;
  c.opcode[r] = opcode;
  let hasName = false;
  if (setName) {
    c.processId[r] = d.getUint32(data + L.SETNAME_PROCESS_ID, true);
    c.threadId[r] = d.getUint32(data + L.SETNAME_THREAD_ID, true);
    hasName = n > fixed;
  } else {
    c.processId[r] = d.getUint32(data + L.THR_PROCESS_ID, true);
    c.threadId[r] = d.getUint32(data + L.THR_THREAD_ID, true);
    pointerTo(d, data + L.THR_POINTERS + L.THR_WIN32_START_ADDR_INDEX * pointerSize, pointerSize, w[L.TE_WIN32_START_ADDR]!, r);
    valid |= BIT(L.TE_WIN32_START_ADDR);
    if (version >= 3) {
      c.basePriority[r] = d.getUint8(data + L.threadTail(pointerSize) + L.THR_TAIL_BASE_PRIORITY);
      valid |= BIT(L.TE_BASE_PRIORITY);
      hasName = n > fixed; // v4 requires the name, v3 has it when bytes remain
    }
  }
  if (hasName) {
    const s = readString(d, data + fixed, data + n, L.STR_UNIT_UTF16);
    c.name[r] = s.text;
    valid |= BIT(L.TE_NAME);
    if (!s.terminated) issue(a, L.D_STRING_UNTERMINATED, fixed, fileOffset);
  }
  c.version[r] = version;
  c.fileOffset[r] = fileOffset;
  c.valid[r] = valid >>> 0;
}
