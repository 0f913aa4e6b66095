// StackWalk and stack-key events (HookIds 0x1820, 0x1822-0x1826), docs/format.md §H.1: one stackEvents row
// per version-2 event and one stackEventFrames row per frame; the twin of assembly/stackwalk.ts (the three
// payload layouts are drawn there). The pointer width comes from the header type.
import * as L from '../../generated/layout.js';
import { count, issue } from './diag.js';
import { copy64, pointerTo, type Arena } from './memory.js';

const BIT = (c: number): number => (1 << c) >>> 0;

/** Decodes one StackWalk or stack-key event (`opcode` = low byte of its HookId): payload at `data` of `n` bytes of `d`. */
export function stackWalkEvent(
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
  if (version !== L.STK_EVENT_VERSION) {
    count(a, L.D_STACK_SKIPPED_VERSION);
    return;
  }
  const isDefinition = opcode >= L.STK_OPCODE_KEY_CREATE && opcode <= L.STK_OPCODE_KEY_RUNDOWN;
  const isReference = opcode === L.STK_OPCODE_KEY_KERNEL || opcode === L.STK_OPCODE_KEY_USER;
  const fixed = isDefinition ? pointerSize : isReference ? L.STK_KEY + pointerSize : L.STK_FRAMES;
  if (n < fixed) {
    issue(a, L.D_STACK_SKIPPED_SHORT, n, fileOffset);
    return;
  }
  count(a, L.D_STACK_DECODED);
  const b = a.builders.stackEvents;
  const r = b.add();
  const c = b.view;
  const w = b.words;
  let valid = L.SE_ALWAYS_VALID;
  copy64(d, tsAt, w[L.SE_TIMESTAMP]!, r);
  c.cpu[r] = cpu;
  c.opcode[r] = opcode;
  if (!isDefinition) {
    copy64(d, data + L.STK_EVENT_TIMESTAMP, w[L.SE_EVENT_TIMESTAMP]!, r);
    c.processId[r] = d.getUint32(data + L.STK_PROCESS_ID, true);
    c.threadId[r] = d.getUint32(data + L.STK_THREAD_ID, true);
    valid |= BIT(L.SE_EVENT_TIMESTAMP) | BIT(L.SE_PROCESS_ID) | BIT(L.SE_THREAD_ID);
  }
  if (isDefinition || isReference) {
    pointerTo(d, data + (isDefinition ? L.STK_DEF_KEY : L.STK_KEY), pointerSize, w[L.SE_STACK_KEY]!, r);
    valid |= BIT(L.SE_STACK_KEY);
  }
  const frames = isReference ? 0 : Math.floor((n - fixed) / pointerSize);
  c.frameCount[r] = frames;
  c.pointerSize[r] = pointerSize;
  c.version[r] = version;
  c.fileOffset[r] = fileOffset;
  c.valid[r] = valid >>> 0;
  const f = a.builders.stackEventFrames;
  for (let i = 0; i < frames; i++) {
    const k = f.add();
    copy64(d, tsAt, f.words[L.SF_TIMESTAMP]!, k);
    f.view.depth[k] = i;
    pointerTo(d, data + fixed + i * pointerSize, pointerSize, f.words[L.SF_ADDRESS]!, k);
  }
}
