// The derivation module (build/derive.wasm, embedded by scripts/embed-wasm.mjs; loaded by
// src/engine/wasm/derive.ts): the streaming cpuUsage core (README "cpuUsage") and threadStates core
// (docs/design/streaming.md "threadStates"), the twins of the reference cores of src/derive/cpu-usage.ts
// and src/derive/thread-states.ts. A module of its own, not exports of the decoder's: its memory is the
// derivation's (regions that grow with threads and the window), one instance per deriver (it uses one of
// the two cores), beside any number of decoders. Both cores share the reorder, id index and input region.
export { reserveInput, inputColumn } from './input';
export { init, lifetimes, add, finish, outPtr, stat } from './cpu-usage';
// its two halves, for a derivation on two threads (src/derive/remote-cpu-fold.ts)
export { splitInit, streamCount, streamPtr, applyReserve, applyStream } from './cpu-usage';
export { tsInit, tsThreads, tsAdd, tsFinish, tsOutPtr, tsStat } from './thread-states';
// the `cpu` command's per-thread fold of the cpuUsage core's rows (foldRow: for the tests)
export { foldInit, foldRow, foldSlots, foldSlotPtr, foldHighPtr, foldHistPtr, foldHistSlots, foldHistCells, foldRows, foldSpan } from './cpu-fold';
// and the `threads` lifetimes of a whole decode (lifetimes.ts: its own input region; an instance of its own)
export { ltReserve, ltColumn, ltCommit, ltThreads, ltOut, ltNamePrev, ltPath, ltReset } from './lifetimes';
