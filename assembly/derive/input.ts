// The input region of the derivations (assembly/derive/): per chunk the JS side copies the columns a
// derivation reads into it (reserveInput, inputColumn), then calls the deriver's add. One layout for both
// derivations (each reads the columns it needs).

let IN: usize = 0;
let inBytes: usize = 0;
const COLUMNS: i32 = 19;
let columnPtrs: usize = 0;

/** Room for a chunk of nThread Thread events, nReady ReadyThread events and nSwitch switches: the columns laid out in the input region. */
export function reserveInput(nThread: i32, nReady: i32, nSwitch: i32): void {
  if (columnPtrs == 0) columnPtrs = heap.alloc(<usize>COLUMNS << 2);
  // the columns (see inputColumn), each 8-byte aligned
  let at: usize = 0;
  for (let i = 0; i < COLUMNS; i++) {
    store<usize>(columnPtrs + (<usize>i << 2), at);
    const n = i < 5 ? nThread : i < 8 ? nReady : nSwitch;
    at += (<usize>n * columnBytes(i) + 7) & ~7;
  }
  if (at > inBytes) {
    if (IN != 0) heap.free(IN);
    inBytes = max(at, inBytes * 2);
    IN = heap.alloc(inBytes);
  }
  for (let i = 0; i < COLUMNS; i++) store<usize>(columnPtrs + (<usize>i << 2), IN + load<usize>(columnPtrs + (<usize>i << 2)));
}

/**
 * Bytes per value of input column i: Thread events (0 timestamp, 1 cpu, 2 threadId, 3 processId,
 * 4 opcode), ReadyThread events (5 timestamp, 6 cpu, 7 threadId), switches (8 timestamp, 9 cpu, 10 valid,
 * 11 newThreadId, 12 oldThreadId, 13 newThreadPriority, 14 oldThreadPriority, 15 oldThreadState,
 * 16 oldThreadWaitReason, 17 previousCState, 18 oldThreadWaitMode).
 */
function columnBytes(i: i32): usize {
  if (i == 0 || i == 5 || i == 8) return 8;
  if (i == 1 || i == 6 || i == 9) return 2;
  if (i == 4 || i >= 13) return 1; // (18: 1)
  return 4;
}

/** The address of input column i (reserveInput). */
export function inputColumn(i: i32): usize {
  return load<usize>(columnPtrs + (<usize>i << 2));
}

// @ts-ignore: decorator
@inline export function col(i: i32): usize {
  return load<usize>(columnPtrs + (<usize>i << 2));
}
