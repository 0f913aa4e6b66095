// Process events, docs/format.md §F.3 (Start/End/DCStart/DCEnd/Defunct, versions 2-5, 32/64-bit): one
// processEvents row per event; the twin of assembly/process.ts (payload drawn there). A string without
// its NUL is taken up to the end of the payload (counted); the fields after it are null.
import * as L from '../../generated/layout.js';
import { count, issue } from './diag.js';
import { copy64, pointerTo, type Arena } from './memory.js';
import { readString, skipString } from './strings.js';

const BIT = (c: number): number => (1 << c) >>> 0;

/** Decodes one Process event (`opcode` = low byte of its HookId): payload at `data` of `n` bytes of `d`. */
export function processEvent(
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
  if (version < 2 || version > 5) {
    count(a, L.D_PROCESS_SKIPPED_VERSION);
    return;
  }
  // the variable part: UserSID, then ImageFileName (at least its NUL) must lie inside the payload
  const sidAt = L.processSidOffset(version, pointerSize);
  let imageAt = sidAt + L.SID_NULL_SIZE;
  if (imageAt <= n && d.getUint32(data + sidAt, true) !== 0) {
    const sid = sidAt + 2 * pointerSize;
    imageAt = sid + L.SID_HEADER_SIZE <= n ? sid + L.SID_HEADER_SIZE + 4 * d.getUint8(data + sid + L.SID_SUB_AUTHORITY_COUNT) : n + 1;
  }
  if (imageAt >= n) {
    issue(a, L.D_PROCESS_SKIPPED_SHORT, n, fileOffset);
    return;
  }
  count(a, L.D_PROCESS_DECODED);
  const b = a.builders.processEvents;
  const r = b.add();
  const c = b.view;
  const p = data + pointerSize;
  const end = data + n;
  let valid = L.PE_ALWAYS_VALID;
  copy64(d, tsAt, b.words[L.PE_TIMESTAMP]!, r);
  c.cpu[r] = cpu;
  c.opcode[r] = opcode;
  c.processId[r] = d.getUint32(p + L.PROC_P_PROCESS_ID, true);
  c.parentId[r] = d.getUint32(p + L.PROC_P_PARENT_ID, true);
  c.sessionId[r] = d.getUint32(p + L.PROC_P_SESSION_ID, true);
  c.exitStatus[r] = d.getInt32(p + L.PROC_P_EXIT_STATUS, true);
  pointerTo(d, data + L.PROC_UNIQUE_PROCESS_KEY, pointerSize, b.words[L.PE_UNIQUE_PROCESS_KEY]!, r);
  const image = readString(d, data + imageAt, end, L.STR_UNIT_ANSI);
  c.imageFileName[r] = image.text;
  // each later field needs its predecessor terminated and bytes left for itself
  let ok = image.terminated;
  let next = image.next;
  if (!ok) issue(a, L.D_STRING_UNTERMINATED, imageAt, fileOffset);
  /** The next string field: kept in `column` (its bit `bit`), or only walked when column is null. */
  const later = (column: string[] | null, bit: number): void => {
    if (!(ok && next < end)) {
      ok = false;
      return;
    }
    const at = next;
    if (column !== null) {
      const s = readString(d, at, end, L.STR_UNIT_UTF16);
      column[r] = s.text;
      valid |= BIT(bit);
      ok = s.terminated;
      next = s.next;
    } else {
      const s = skipString(d, at, end, L.STR_UNIT_UTF16); // ApplicationId: walked, not kept
      ok = s.terminated;
      next = s.next;
    }
    if (!ok) issue(a, L.D_STRING_UNTERMINATED, at - data, fileOffset);
  };
  later(c.commandLine, L.PE_COMMAND_LINE);
  if (version >= 4) {
    later(c.packageFullName, L.PE_PACKAGE_FULL_NAME);
    later(null, 0);
    if (version === 5 && ok && next + L.PROC_EXIT_TIME_SIZE <= end) {
      copy64(d, next, b.words[L.PE_EXIT_TIME]!, r);
      valid |= BIT(L.PE_EXIT_TIME);
    }
  }
  c.version[r] = version;
  c.fileOffset[r] = fileOffset;
  c.valid[r] = valid >>> 0;
}
