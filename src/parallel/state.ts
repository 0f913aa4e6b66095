// The state a decode carries from one buffer to the next (docs/format.md §A.8 logfile header, §D.8 held-back
// compact switches, §B.2 kind tally), as a partitioned decode reads it at the end of one partition and
// sets it at the start of another — through the exports of assembly/index.ts marked "partitioned decodes".
import * as L from '../generated/layout.js';
import type { KindTally } from '../engine/engine.js';
import { kindEntry, type WasmEngine } from '../engine/wasm/engine.js';
import type { WasmExports } from '../engine/wasm/instance.js';

/** The exports of assembly/ for partitioned decodes (assembly/walk.ts, compcs.ts, diag.ts, kinds.ts). */
export interface PartitionExports {
  processorCount(): number;
  compressedLimitValue(): number;
  setTraceState(seen: number, processors: number, bias: number, limit: number): void;
  pendingHeld(cpu: number): number;
  pendingTimestamp(cpu: number): bigint;
  pendingFileOffset(cpu: number): number;
  pendingOldThreadId(cpu: number): number;
  pendingWaitTime(cpu: number): number;
  pendingValid(cpu: number): number;
  pendingBytes(cpu: number): number;
  setPending(cpu: number, held: number, ts: bigint, fileOffset: number, oldThreadId: number, waitTime: number, valid: number, bytes: number): void;
  setLogCount(n: number): void;
  logCountPtr(): number;
  seedKind(k0: bigint, k1: bigint, g0: bigint, g1: bigint): number;
  seedKinds(keys: number, n: number): number;
}

export type Exports = WasmExports & PartitionExports;

export function exportsOf(engine: WasmEngine): Exports {
  return engine.exports as Exports;
}

/**
 * The trace-wide state the decode of a buffer depends on: whether the logfile header was decoded, and what
 * it set — NumberOfProcessors (processorOutOfRange), the bias (compact states), the compressed-size limit.
 */
export interface TraceState {
  seen: boolean;
  processors: number;
  bias: number;
  compressedLimit: number;
}

export function readTraceState(x: Exports): TraceState {
  return { seen: x.logfileCopied() !== 0, processors: x.processorCount() >>> 0, bias: x.bias(), compressedLimit: x.compressedLimitValue() >>> 0 };
}

export function writeTraceState(x: Exports, s: TraceState): void {
  x.setTraceState(s.seen ? 1 : 0, s.processors, s.bias, s.compressedLimit);
}

export function sameTraceState(a: TraceState, b: TraceState): boolean {
  return a.seen === b.seen && a.processors === b.processors && a.bias === b.bias && a.compressedLimit === b.compressedLimit;
}

/**
 * Held-back compact switches of some processors (assembly/compcs.ts slots), as columns: `cpu[i]` holds a
 * switch with the fields at i. bytes = OldThreadPriority | OldThreadState << 8 | OldThreadWaitReason << 16 | source << 24.
 */
export interface HeldList {
  cpu: Uint16Array;
  ts: BigInt64Array;
  fileOffset: Float64Array;
  oldThreadId: Uint32Array;
  waitTime: Uint32Array;
  valid: Uint32Array;
  bytes: Uint32Array;
}

/** The held-back switch of every processor (MAX_PROCESSORS slots): the chain a partition continues. */
export class HeldTable {
  readonly held = new Uint8Array(L.MAX_PROCESSORS);
  readonly ts = new BigInt64Array(L.MAX_PROCESSORS);
  readonly fileOffset = new Float64Array(L.MAX_PROCESSORS);
  readonly oldThreadId = new Uint32Array(L.MAX_PROCESSORS);
  readonly waitTime = new Uint32Array(L.MAX_PROCESSORS);
  readonly valid = new Uint32Array(L.MAX_PROCESSORS);
  readonly bytes = new Uint32Array(L.MAX_PROCESSORS);

  /** Takes the switches of `list` (a partition's last switch of each processor it touched). */
  update(list: HeldList): void {
    for (let i = 0; i < list.cpu.length; i++) {
      const c = list.cpu[i]!;
      this.held[c] = 1;
      this.ts[c] = list.ts[i]!;
      this.fileOffset[c] = list.fileOffset[i]!;
      this.oldThreadId[c] = list.oldThreadId[i]!;
      this.waitTime[c] = list.waitTime[i]!;
      this.valid[c] = list.valid[i]!;
      this.bytes[c] = list.bytes[i]!;
    }
  }

  /** The processors holding a switch, in processor order. */
  list(): HeldList {
    const cpus: number[] = [];
    for (let c = 0; c < L.MAX_PROCESSORS; c++) if (this.held[c]) cpus.push(c);
    const pick = <A extends { [i: number]: unknown }>(from: A, make: (n: number) => A): A => {
      const out = make(cpus.length);
      cpus.forEach((c, i) => (out[i] = from[c]));
      return out;
    };
    return {
      cpu: Uint16Array.from(cpus),
      ts: pick(this.ts, (n) => new BigInt64Array(n)),
      fileOffset: pick(this.fileOffset, (n) => new Float64Array(n)),
      oldThreadId: pick(this.oldThreadId, (n) => new Uint32Array(n)),
      waitTime: pick(this.waitTime, (n) => new Uint32Array(n)),
      valid: pick(this.valid, (n) => new Uint32Array(n)),
      bytes: pick(this.bytes, (n) => new Uint32Array(n)),
    };
  }
}

/**
 * The stand-in a partition after the first starts each processor with, not knowing what the partitions
 * before it leave held: its first compact switch on that processor then emits a placeholder row (this file
 * offset, which no event has) exactly where the real held-back switch is emitted, with the right new
 * thread, and always logs the time check against it (no time is after this one), so that the coordinator
 * can keep or drop that issue at its place (src/parallel/stitch.ts).
 */
export const SENTINEL_TS = 0x7fffffffffffffffn;
export const SENTINEL_FILE_OFFSET = -1;

/** Starts the processors `cpus` with the stand-in (only they have buffers in the partition). */
export function seedSentinels(x: Exports, cpus: Iterable<number>): void {
  for (const c of cpus) x.setPending(c, 1, SENTINEL_TS, SENTINEL_FILE_OFFSET, 0, 0, 0, 0);
}

export function seedHeld(x: Exports, list: HeldList): void {
  for (let i = 0; i < list.cpu.length; i++) {
    x.setPending(list.cpu[i]!, 1, list.ts[i]!, list.fileOffset[i]!, list.oldThreadId[i]!, list.waitTime[i]!, list.valid[i]!, list.bytes[i]!);
  }
}

/** The held-back switches of the processors `which` (ascending; held ones only). */
export function readHeld(x: Exports, which: Iterable<number>): HeldList {
  const cpus: number[] = [];
  for (const c of which) if (x.pendingHeld(c) !== 0) cpus.push(c);
  const n = cpus.length;
  const out: HeldList = {
    cpu: Uint16Array.from(cpus),
    ts: new BigInt64Array(n),
    fileOffset: new Float64Array(n),
    oldThreadId: new Uint32Array(n),
    waitTime: new Uint32Array(n),
    valid: new Uint32Array(n),
    bytes: new Uint32Array(n),
  };
  cpus.forEach((c, i) => {
    out.ts[i] = x.pendingTimestamp(c);
    out.fileOffset[i] = x.pendingFileOffset(c);
    out.oldThreadId[i] = x.pendingOldThreadId(c) >>> 0;
    out.waitTime[i] = x.pendingWaitTime(c) >>> 0;
    out.valid[i] = x.pendingValid(c) >>> 0;
    out.bytes[i] = x.pendingBytes(c) >>> 0;
  });
  return out;
}

/** Words of a kind table key (assembly/kinds.ts): headerType, flags, version, id, task | opcode (used bit
 *  left out) | GUID low | GUID high. */
export const KIND_KEY_WORDS = 4;

/** Appends the key words of `k` to `out` at kind number `i`. */
export function packKind(k: KindTally, out: BigUint64Array, i: number): void {
  const key = new DataView(new ArrayBuffer(L.KIND_GUID + 16));
  key.setUint8(L.KIND_HEADER_TYPE, k.headerType);
  key.setUint8(L.KIND_FLAGS, k.flags);
  key.setUint16(L.KIND_VERSION, k.version, true);
  key.setUint16(L.KIND_ID, k.id, true);
  key.setUint16(L.KIND_TASK, k.task, true);
  key.setUint8(L.KIND_OPCODE, k.opcode);
  for (let j = 0; j < 16; j++) key.setUint8(L.KIND_GUID + j, k.guid[j]!);
  const at = i * KIND_KEY_WORDS;
  out[at] = key.getBigUint64(0, true);
  out[at + 1] = key.getBigUint64(8, true);
  out[at + 2] = key.getBigUint64(L.KIND_GUID, true);
  out[at + 3] = key.getBigUint64(L.KIND_GUID + 8, true);
}

/**
 * Enters the kinds of `keys` (packKind words, first-seen order, no events) into the engine's kind table,
 * passing them through the start of the input window (call it before the first load).
 */
export function seedKinds(engine: WasmEngine, keys: BigUint64Array): void {
  const x = exportsOf(engine);
  const n = keys.length / KIND_KEY_WORDS;
  const input = engine.reserveInput(keys.byteLength);
  const at = input.byteOffset;
  new BigUint64Array(input.buffer, at, keys.length).set(keys);
  x.seedKinds(at, n);
}

/** The engine's diagnostic counters (u64 in its memory, exact below 2^53). */
export function readCounters(x: Exports): number[] {
  const w = new Uint32Array(x.memory.buffer, x.countersPtr() >>> 0, 2 * L.D_COUNTER_COUNT);
  const out = new Array<number>(L.D_COUNTER_COUNT);
  for (let i = 0; i < L.D_COUNTER_COUNT; i++) out[i] = w[2 * i]! + w[2 * i + 1]! * 2 ** 32;
  return out;
}

/** The u64 field at byte `field` of the first `n` kind entries of `w` (exact below 2^53). */
function u64Column(w: Uint32Array, n: number, field: number): Float64Array {
  const out = new Float64Array(n);
  const stride = L.KIND_ENTRY_SIZE >> 2;
  for (let i = 0, at = field >> 2; i < n; i++, at += stride) out[i] = w[at]! + w[at + 1]! * 2 ** 32;
  return out;
}

/**
 * The kind table after a partition: events and bytes of its first `seeded` entries (those it was seeded with,
 * in their order) as arrays, and the entries after them as KindTally objects (the kinds it added).
 */
export function readKinds(x: Exports, seeded: number): { counts: Float64Array; bytes: Float64Array; added: KindTally[] } {
  const n = x.kindCount();
  const table = new Uint8Array(x.memory.buffer, x.kindsPtr() >>> 0, n * L.KIND_ENTRY_SIZE).slice();
  const w = new Uint32Array(table.buffer);
  const kv = new DataView(table.buffer);
  const counts = u64Column(w, seeded, L.KIND_COUNT);
  const bytes = u64Column(w, seeded, L.KIND_BYTES);
  const added: KindTally[] = [];
  for (let e = seeded * L.KIND_ENTRY_SIZE; e < table.length; e += L.KIND_ENTRY_SIZE) added.push(kindEntry(table, kv, e, true));
  return { counts, bytes, added };
}

/** The logfile header's copy (when this engine decoded it), the header extension, the bias. */
export function readHeaderState(x: Exports): {
  logfile: { payload: Uint8Array | null; length: number; pointerSize: number; timestamp: bigint };
  headerExtension: Uint32Array | null;
  bias: number;
} {
  const length = x.logfilePayloadLength();
  const payload = x.logfileCopied() ? new Uint8Array(x.memory.buffer, x.logfilePtr() >>> 0, Math.min(length, L.LOGFILE_HEADER_COPY_MAX)).slice() : null;
  const headerExtension = x.headerExtensionSeen() ? new Uint32Array(x.memory.buffer, x.headerExtensionPtr() >>> 0, L.KHE_SIZE / 4).slice() : null;
  return { logfile: { payload, length, pointerSize: x.logfilePointerSize(), timestamp: x.logfileTimestamp() }, headerExtension, bias: x.bias() };
}
