// etw-decode WebAssembly engine: the exports the JS side (src/engine/wasm/engine.ts) calls. All pointers are
// byte offsets in the exported memory. Format: docs/format.md §A (buffers), §B (trace headers),
// §C (CSwitch), §D (compact batches), §E (SpinLock); src/engine/reference/ is the file-for-file twin.
export { init, reset, keepTables, setBiasOverride, decodeBuffer, resume, finish } from './walk';
export { logfileCopied, logfilePayloadLength, logfilePointerSize, logfileTimestamp } from './walk';
export { headerExtensionSeen, bias } from './walk';
export { reserveInput, inputPtr, rowCount, rowCapacity, columnPtr, resetRows } from './memory';
export { countersPtr, logPtr, kindsPtr, logfilePtr, headerExtensionPtr, heapPtr, heapSize } from './memory';
export { logCount } from './diag';
export { kindCount } from './kinds';
export { xpressDecompress } from './xpress';
// partitioned decodes (src/parallel): trace-wide and per-processor state across partitions, the log
export { processorCount, compressedLimitValue, setTraceState } from './walk';
export { pendingHeld, pendingTimestamp, pendingFileOffset, pendingOldThreadId, pendingWaitTime, pendingValid, pendingBytes, setPending } from './compcs';
export { setLogCount, logCountPtr } from './diag';
export { rowCountsPtr } from './memory';
export { seedKind, seedKinds } from './kinds';
