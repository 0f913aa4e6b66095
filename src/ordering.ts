// The order buffers are decoded in, docs/format.md §A.7: SequenceNumber order, which is time order per
// processor — required to chain compact switches across buffers (§D.8) — and the window loads that
// order implies.
import type { BufferRef } from './framing.js';

/** SequenceNumber order (§A.7), stable by file offset. */
export function decodeOrder(refs: readonly BufferRef[]): BufferRef[] {
  return refs.slice().sort((a, b) =>
    a.sequenceNumber < b.sequenceNumber ? -1 : a.sequenceNumber > b.sequenceNumber ? 1 : a.fileOffset - b.fileOffset,
  );
}


/** A file range loaded into the engine's input window at once. */
export interface WindowLoad {
  position: number;
  length: number;
}

/**
 * The loads, in decode order: a window of `windowBytes` from the first buffer (in decode order) not in
 * the last window. File-order chunks keep reads nearly sequential.
 */
export function planWindows(order: readonly BufferRef[], windowBytes: number, size: number): WindowLoad[] {
  const plan: WindowLoad[] = [];
  for (let i = 0, end = 0, start = 0; i < order.length; i++) {
    const ref = order[i]!;
    if (ref.fileOffset >= start && ref.fileOffset + ref.size <= end) continue;
    start = ref.fileOffset;
    end = start + Math.min(windowBytes, size - start);
    plan.push({ position: start, length: end - start });
  }
  return plan;
}
