// The contract both decoders implement: the WebAssembly engine (src/engine/wasm/engine.ts over assembly/) and the
// pure-TypeScript reference (src/engine/reference/). The decode steps (src/decode/decode-steps.ts) frame the input into
// buffers, order them (docs/format.md §A.7) and feed them one at a time; engines walk and decode each buffer.
import type { Chunks, DecodedTableName } from '../tables/schema.js';

export type EngineKind = 'wasm' | 'reference';

/** One entry of the per-kind tally (docs/format.md §B.2): events grouped by header kind and id. */
export interface KindTally {
  headerType: number;
  /** bit 0: EVENT_HEADER with extended items */
  flags: number;
  version: number;
  /** HookId (SYSTEM/COMPACT/PERFINFO), EventId (EVENT_HEADER), Class.Type (FULL/INSTANCE), MessageNumber (MESSAGE) */
  id: number;
  task: number;
  opcode: number;
  /** 16 GUID bytes as stored (zero for kinds without a provider) */
  guid: Uint8Array;
  count: number;
  bytes: number;
}

export interface IssueLogEntry {
  /** a D_* counter index (schema/stats.mjs) */
  code: number;
  /** code-specific detail (reason, packet index, decompressor error, …) */
  detail: number;
  fileOffset: number;
}

export interface EngineState {
  counters: number[];
  log: IssueLogEntry[];
  kinds: KindTally[];
  /** payload of the first WMI_LOG_TYPE_HEADER event (at most LOGFILE_HEADER_COPY_MAX bytes) */
  logfilePayload: Uint8Array | null;
  /** full length of that payload (may exceed the copy) */
  logfilePayloadLength: number;
  logfilePointerSize: number;
  /** raw timestamp of that event (T0, docs/format.md §A.10) */
  logfileTimestamp: bigint;
  /** last ETW_KERNEL_HEADER_EXTENSION (8 group masks + version), or null */
  headerExtension: Uint32Array | null;
  /** MaximumWaitReason used to unbias compact OldThreadStateWr (docs/format.md §D.5) */
  bias: number;
}

export interface Engine {
  readonly kind: EngineKind;
  /** Makes the input window at least `byteLength` bytes (contents are not kept) and returns it. */
  reserveInput(byteLength: number): Uint8Array;
  /** The current input window (a fresh view if memory moved). */
  inputView(): Uint8Array;
  /**
   * Sets the MaximumWaitReason used for compact packets; undefined = from the trace's build (default).
   * Call it before the first buffer: the build's bias is taken when the logfile header is decoded.
   */
  setBiasOverride(bias: number | undefined): void;
  /**
   * Decodes only the events of `tables` (null: every table, the default): the other tables' events are
   * walked and tallied by kind only — no row, no counter. For a first pass that needs a few tables
   * (src/derive/stack-pass.ts); reset() (wasm) decodes every table again. Call it before the first buffer.
   */
  keepTables(tables: readonly DecodedTableName[] | null): void;
  /**
   * Decodes the buffer at `offset` (window bytes [offset, offset+length): the buffer as framed); fileOffset =
   * its place in the file. `cut`: the input ends inside this buffer (a BufferSize above `length` is then the
   * truncation; otherwise it is a claim framing corrected, docs/format.md §A.1).
   */
  decodeBuffer(offset: number, length: number, fileOffset: number, cut: boolean): number;
  /** Continues a buffer after STATUS_NEED_DRAIN. */
  resume(): number;
  /** Rows produced since the last drain, per table (registry id). */
  rowCount(table: number): number;
  /** The most rows any table has pending (the largest rowCount): what decides a drain, asked after every buffer. */
  mostPendingRows(): number;
  /** Moves the rows out (copies) and resets the output. */
  drain(): Chunks;
  /** The rows as views into the engine's output (no copy): valid until the next engine call. */
  peekRows(): Chunks;
  /** Empties the output (after peekRows, or to drop the rows). */
  resetRows(): void;
  /** End of input: emits the held-back last compact switch of every processor (newThreadId null). */
  finish(): number;
  state(): EngineState;
}

