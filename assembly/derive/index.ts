// The derivation module (build/derive.wasm, embedded by scripts/embed-wasm.mjs; loaded by
// src/engine/wasm/derive.ts): the streaming cpuUsage core (README "cpuUsage"; docs/design/streaming.md),
// the twin of the CpuUsageDeriver class of src/derive/cpu-usage.ts. A module of its own, not exports of
// the decoder's: its memory is the derivation's (regions that grow with threads and the window), one
// instance per deriver, beside any number of decoders.
export { init, reserveInput, inputColumn, lifetimes, add, finish, outPtr, stat } from './cpu-usage';
