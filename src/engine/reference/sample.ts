// SampledProfile (HookId 0x0F2E), docs/format.md §G.1: one samples row per version-2 event; the twin of
// assembly/sample.ts (both layouts drawn there). The pointer width comes from the header type.
import * as L from '../../generated/layout.js';
import { count, issue } from './diag.js';
import { copy64, pointerTo, type Arena } from './memory.js';

/** Decodes one SampledProfile event: payload at `data` of `n` bytes of `d`. */
export function sampledProfileEvent(
  a: Arena,
  d: DataView,
  data: number,
  n: number,
  version: number,
  pointerSize: number,
  cpu: number,
  tsAt: number,
  fileOffset: number,
): void {
  if (version !== L.SMP_EVENT_VERSION) {
    count(a, L.D_SAMPLE_SKIPPED_VERSION);
    return;
  }
  if (n < pointerSize + L.SMP_P_SIZE) {
    issue(a, L.D_SAMPLE_SKIPPED_SHORT, n, fileOffset);
    return;
  }
  count(a, L.D_SAMPLE_DECODED);
  const b = a.builders.samples;
  const r = b.add();
  const c = b.view;
  const w = b.words;
  const p = data + pointerSize;
  copy64(d, tsAt, w[L.SP_TIMESTAMP]!, r);
  c.cpu[r] = cpu;
  c.threadId[r] = d.getUint32(p + L.SMP_P_THREAD_ID, true);
  pointerTo(d, data + L.SMP_INSTRUCTION_POINTER, pointerSize, w[L.SP_INSTRUCTION_POINTER]!, r);
  c.count[r] = d.getUint16(p + L.SMP_P_COUNT, true);
  const flags = d.getUint8(p + L.SMP_P_FLAGS);
  c.flags[r] = flags;
  c.executingDpc[r] = (flags >>> L.SMP_EXECUTING_DPC_BIT) & 1;
  c.executingIsr[r] = (flags >>> L.SMP_EXECUTING_ISR_BIT) & 1;
  c.priority[r] = flags >>> L.SMP_PRIORITY_SHIFT;
  c.rank[r] = d.getUint8(p + L.SMP_P_RANK);
  c.pointerSize[r] = pointerSize;
  c.version[r] = version;
  c.fileOffset[r] = fileOffset;
  c.valid[r] = L.SP_ALWAYS_VALID; // stackId: null (attached after the decode)
}
