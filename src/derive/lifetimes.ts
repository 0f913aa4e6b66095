// Thread, process and image lifetimes (docs/format.md §F.1-F.3, §G.2): the derived `threads`,
// `processes` and `images` tables, built from the decoded threadEvents / processEvents / imageEvents rows
// applied in timestamp order (ties: decode order) — buffers of different CPUs interleave, so file order
// is not time order.
//
// Ids are reused, so a table has one row per lifetime: a Start (an image's Load) always opens a new one;
// End (Unload) closes the open one (or makes a closed row of its own when the id was never seen);
// DCStart, DCEnd and SetName add to the open lifetime of their id or open one with startTime (loadTime)
// null; Defunct adds to an open process lifetime and never opens one. An image's id is its (processId,
// imageBase). Fields take the first non-null value (later events only fill nulls), except the thread name
// (the last non-empty one) and the process exit status (its End event's).
// Memory is proportional to the number of thread, process and image events, never to the file size.
// The `threads` table of a decode comes from the WebAssembly core (assembly/derive/lifetimes.ts, fed chunk
// by chunk: WasmThreadLifetimes); deriveThreads below is its TypeScript twin (`engine: 'reference'`).
//
// The lookups in the lifetimes, one each: ThreadProcesses (the process of a thread at a time: Selection,
// the samples' processId) and ImageMap (the image lifetime holding an address of a process at a time:
// analyzeSamples, pprof, the stack frames, the samples' imageName); SampleLifetimes fills the samples'
// processId, imageName and imageOffset with them after the decode (docs/design/stacks.md) — whole decodes
// (TableCollector) and streamed chunks (stack-pass.ts) alike.
import * as L from '../generated/layout.js';
import type { EngineKind } from '../engine/engine.js';
import type { DeriveExports } from '../engine/wasm/derive.js';
import { timeOrder } from '../order.js';
import { isKernelAddress } from './stacks.js';
import { concatChunks, type Chunks, type ColumnChunk, type TypedColumn } from '../tables/schema.js';
import { Table } from '../tables/table.js';

const LIFETIME_EVENT_TABLES = ['threadEvents', 'processEvents', 'imageEvents'] as const;

let deriveModule: typeof import('../engine/wasm/derive.js') | undefined;

/**
 * Loads the derivation module the `threads` core runs in (src/engine/wasm/derive.ts), on demand, so that
 * importing the decode (the CLI's first step) does not load it: the async decode paths and init() call it
 * for the wasm engine; the node entry registers it for decodeSync (registerThreadsCore).
 */
export async function loadThreadsCore(): Promise<void> {
  deriveModule ??= await import('../engine/wasm/derive.js');
}

/** Makes the derivation module of the `threads` core available to the synchronous paths (decodeSync). */
export function registerThreadsCore(module: typeof import('../engine/wasm/derive.js')): void {
  deriveModule ??= module;
}

/**
 * Keeps the thread, process and image event rows of a decode (copies of borrowed chunks); with the wasm
 * engine (default) the Thread events go to the WebAssembly core instead (WasmThreadLifetimes).
 */
export class LifetimeCollector {
  private readonly chunks = { threadEvents: [] as ColumnChunk[], processEvents: [] as ColumnChunk[], imageEvents: [] as ColumnChunk[] };
  private readonly wasmThreads: WasmThreadLifetimes | null;

  /** engine 'wasm': the WebAssembly core once its module is loaded (the decodes load it: loadThreadsCore), else deriveThreads — the same table */
  constructor(engine: EngineKind = 'wasm') {
    this.wasmThreads = engine === 'wasm' && deriveModule ? new WasmThreadLifetimes() : null;
  }

  add(chunks: Chunks, borrowed: boolean): void {
    for (const t of LIFETIME_EVENT_TABLES) {
      const c = chunks[t];
      if (c.length === 0) continue;
      if (t === 'threadEvents' && this.wasmThreads) this.wasmThreads.add(c, borrowed);
      else this.chunks[t].push(borrowed ? { length: c.length, columns: c.columns.map((col) => col.slice() as TypedColumn) } : c);
    }
  }

  threads(): Table<'threads'> {
    if (this.wasmThreads) return this.wasmThreads.table();
    return deriveThreads(new Table('threadEvents', concatChunks('threadEvents', this.chunks.threadEvents)));
  }

  processes(): Table<'processes'> {
    return deriveProcesses(new Table('processEvents', concatChunks('processEvents', this.chunks.processEvents)));
  }

  images(): Table<'images'> {
    return deriveImages(new Table('imageEvents', concatChunks('imageEvents', this.chunks.imageEvents)));
  }
}

/** 64-bit column as u32 words (lo at 2i, hi at 2i + 1). */
function words(col: BigInt64Array | BigUint64Array): Uint32Array {
  return new Uint32Array(col.buffer, col.byteOffset, col.length * 2);
}

/** Copies the 64-bit cell i of `from` (words) into cell r of `to`. */
function copy64(from: Uint32Array, i: number, to: Uint32Array, r: number): void {
  to[2 * r] = from[2 * i]!;
  to[2 * r + 1] = from[2 * i + 1]!;
}

/**
 * The `threads` table from threadEvents rows: the events in time order, each thread id's open lifetime
 * found in an IdIndex, the rows in typed columns (at most one row per event) — no object, BigInt or
 * closure per event.
 */
export function deriveThreads(ev: Table<'threadEvents'>): Table<'threads'> {
  const n = ev.length;
  const ts = words(ev.column('timestamp'));
  const opcode = ev.column('opcode');
  const tid = ev.column('threadId');
  const pid = ev.column('processId');
  const addr = words(ev.column('win32StartAddr'));
  const prio = ev.column('basePriority');
  const name = ev.column('name');
  const valid = ev.column('valid');
  const oTid = new Uint32Array(n);
  const oPid = new Uint32Array(n);
  const oStart = new Uint32Array(2 * n);
  const oEnd = new Uint32Array(2 * n);
  const oAddr = new Uint32Array(2 * n);
  const oPrio = new Uint8Array(n);
  const oName = new Array<string>(n);
  const oValid = new Uint32Array(n);
  const open = new IdIndex(); // tid → row of its open lifetime
  const order = timeOrder(ts, ev.column('cpu'), n);
  let rows = 0;
  for (let k = 0; k < n; k++) {
    const i = order[k]!;
    const id = tid[i]!;
    const op = opcode[i]!;
    const v = valid[i]!;
    let row = open.get(id);
    if (op === L.OPCODE_START || row < 0) {
      row = rows++;
      oTid[row] = id;
      oName[row] = '';
      oValid[row] = 1 << L.TH_THREAD_ID;
      open.set(id, row);
      if (op === L.OPCODE_START) {
        copy64(ts, i, oStart, row);
        oValid[row]! |= 1 << L.TH_START_TIME;
      }
    }
    let w = oValid[row]!;
    // fields take the first value, except the name (the last non-empty one)
    if (((w >>> L.TH_PROCESS_ID) & 1) === 0) {
      oPid[row] = pid[i]!;
      w |= 1 << L.TH_PROCESS_ID;
    }
    if ((v >>> L.TE_WIN32_START_ADDR) & 1 && ((w >>> L.TH_WIN32_START_ADDR) & 1) === 0) {
      copy64(addr, i, oAddr, row);
      w |= 1 << L.TH_WIN32_START_ADDR;
    }
    if ((v >>> L.TE_BASE_PRIORITY) & 1 && ((w >>> L.TH_BASE_PRIORITY) & 1) === 0) {
      oPrio[row] = prio[i]!;
      w |= 1 << L.TH_BASE_PRIORITY;
    }
    if ((v >>> L.TE_NAME) & 1 && name[i] !== '') {
      oName[row] = name[i]!;
      w |= 1 << L.TH_NAME;
    }
    if (op === L.OPCODE_END) {
      copy64(ts, i, oEnd, row);
      w |= 1 << L.TH_END_TIME;
      open.set(id, -1);
    }
    oValid[row] = w;
  }
  const columns: TypedColumn[] = [];
  columns[L.TH_THREAD_ID] = oTid.slice(0, rows);
  columns[L.TH_PROCESS_ID] = oPid.slice(0, rows);
  columns[L.TH_START_TIME] = new BigInt64Array(oStart.buffer.slice(0, 8 * rows));
  columns[L.TH_END_TIME] = new BigInt64Array(oEnd.buffer.slice(0, 8 * rows));
  columns[L.TH_NAME] = oName.slice(0, rows);
  columns[L.TH_WIN32_START_ADDR] = new BigUint64Array(oAddr.buffer.slice(0, 8 * rows));
  columns[L.TH_BASE_PRIORITY] = oPrio.slice(0, rows);
  columns[L.TH_VALID] = withValidBit(oValid, rows, L.TH_VALID);
  return new Table('threads', { length: rows, columns });
}

/** The `threads` table of threadEvents rows by the engine's core: the WebAssembly one (default), or deriveThreads. */
export function threadsOf(ev: Table<'threadEvents'>, engine: EngineKind = 'wasm'): Table<'threads'> {
  if (engine === 'reference') return deriveThreads(ev);
  const w = new WasmThreadLifetimes();
  w.add({ length: ev.length, columns: ev.columns }, false);
  return w.table();
}

const noDrain = (): void => {};
/**
 * An instance whose derivation is done, kept for the next (an instance's fresh memory costs a page fault
 * per 4 KiB it touches, a reset one's none), when its memory is at most IDLE_MAX_BYTES; one derivation uses
 * it at a time.
 */
let idleCore: DeriveExports | null = null;
const IDLE_MAX_BYTES = 32 << 20;
/** events the core applies per call: the engine optimizes a function between calls only, so a long first call would run unoptimized to its end */
const APPLY_STEP = 1 << 15;

/** The threadEvents valid bits the core reads, all in the low byte (the one it keeps). */
const TE_BITS_READ = [L.TE_WIN32_START_ADDR, L.TE_BASE_PRIORITY, L.TE_NAME];
if (TE_BITS_READ.some((b) => b > 7)) throw new Error('lifetimes: a threadEvents valid bit the core reads is not in the low byte');

/**
 * The `threads` table in the WebAssembly core (assembly/derive/lifetimes.ts; an instance of the derivation
 * module each, a new one or the idle one): each chunk's numeric columns appended to its input region — no copies kept on this side,
 * no concatenation — and its names kept here (string references); table() takes the rows' columns from
 * the core, each row's name from the event the core names.
 */
export class WasmThreadLifetimes {
  private w: DeriveExports | null = null;
  /** the name column of each chunk, and the index of its first event */
  private readonly names: string[][] = [];
  private readonly firsts: number[] = [];
  private events = 0;
  private result: Table<'threads'> | null = null;
  /** how table() ordered the events: as they came (in time order already), the CPUs' runs merged, or the radix sort (a CPU out of time order) */
  orderPath: 'as they came' | 'merged' | 'radix' | null = null;

  private core(): DeriveExports {
    if (this.w) return this.w;
    if (!deriveModule) throw new Error('the threads core is not loaded: await loadThreadsCore() (the node entry registers it)');
    this.w = idleCore ?? deriveModule.deriveInstance(noDrain);
    idleCore = null;
    return this.w;
  }

  /** Appends a chunk of threadEvents rows (its columns read now; only a borrowed chunk's names are copied, as references). */
  add(c: ColumnChunk, borrowed: boolean): void {
    const n = c.length;
    if (n === 0) return;
    if (this.result) throw new Error('WasmThreadLifetimes: add after table()');
    const w = this.core();
    const col = c.columns;
    const ts = col[L.TE_TIMESTAMP] as BigInt64Array;
    const cpu = col[L.TE_CPU] as Uint16Array;
    const tid = col[L.TE_THREAD_ID] as Uint32Array;
    const pid = col[L.TE_PROCESS_ID] as Uint32Array;
    const opcode = col[L.TE_OPCODE] as Uint8Array;
    const valid = col[L.TE_VALID] as Uint32Array;
    const addr = col[L.TE_WIN32_START_ADDR] as BigUint64Array;
    const prio = col[L.TE_BASE_PRIORITY] as Uint8Array;
    // in pieces that fit the core's input blocks
    for (let at = 0; at < n; ) {
      const m = w.ltReserve(n - at);
      const buf = w.memory.buffer;
      const e = at + m;
      new BigInt64Array(buf, w.ltColumn(0), m).set(ts.subarray(at, e));
      new Uint16Array(buf, w.ltColumn(1), m).set(cpu.subarray(at, e));
      new Uint32Array(buf, w.ltColumn(2), m).set(tid.subarray(at, e));
      new Uint32Array(buf, w.ltColumn(3), m).set(pid.subarray(at, e));
      new Uint8Array(buf, w.ltColumn(4), m).set(opcode.subarray(at, e));
      new Uint8Array(buf, w.ltColumn(5), m).set(valid.subarray(at, e)); // the low byte (TE_BITS_READ)
      new BigUint64Array(buf, w.ltColumn(6), m).set(addr.subarray(at, e));
      new Uint8Array(buf, w.ltColumn(7), m).set(prio.subarray(at, e));
      w.ltCommit(m);
      at = e;
    }
    const name = col[L.TE_NAME] as string[];
    this.names.push(borrowed ? name.slice(0, n) : name);
    this.firsts.push(this.events);
    this.events += n;
  }

  /** The `threads` table of the events appended (derived once). */
  table(): Table<'threads'> {
    if (this.result) return this.result;
    const w = this.core();
    let rows: number;
    while ((rows = w.ltThreads(APPLY_STEP)) < 0);
    this.orderPath = (['as they came', 'merged', 'radix'] as const)[w.ltPath()]!;
    const buf = w.memory.buffer;
    const columns: TypedColumn[] = [];
    columns[L.TH_THREAD_ID] = new Uint32Array(buf, w.ltOut(0), rows).slice();
    columns[L.TH_PROCESS_ID] = new Uint32Array(buf, w.ltOut(1), rows).slice();
    columns[L.TH_START_TIME] = new BigInt64Array(buf, w.ltOut(2), rows).slice();
    columns[L.TH_END_TIME] = new BigInt64Array(buf, w.ltOut(3), rows).slice();
    columns[L.TH_WIN32_START_ADDR] = new BigUint64Array(buf, w.ltOut(4), rows).slice();
    columns[L.TH_BASE_PRIORITY] = new Uint8Array(buf, w.ltOut(5), rows).slice();
    // per row its valid bits and its name: of the last event with a non-empty one (the core links each row's named events, last first)
    const validName = new Int32Array(buf, w.ltOut(6), 2 * rows);
    const oValid = new Uint32Array(rows);
    const oName = new Array<string>(rows);
    const NAME = 1 << L.TH_NAME;
    for (let r = 0; r < rows; r++) {
      let name = '';
      for (let e = validName[2 * r + 1]!; e >= 0; e = w.ltNamePrev(e)) {
        name = this.nameOf(e);
        if (name !== '') break;
      }
      oName[r] = name;
      oValid[r] = name === '' ? validName[2 * r]! & ~NAME : validName[2 * r]!;
    }
    columns[L.TH_NAME] = oName;
    columns[L.TH_VALID] = oValid;
    // the core's regions (the events, the rows) and the names are not needed any more: the instance is
    // kept for the next derivation when its memory is small
    w.ltReset();
    if (w.memory.buffer.byteLength <= IDLE_MAX_BYTES) idleCore = w;
    this.w = null;
    this.names.length = 0;
    this.firsts.length = 0;
    this.result = new Table('threads', { length: rows, columns });
    return this.result;
  }

  /** The name of event e (of the events appended). */
  private nameOf(e: number): string {
    // its chunk: the last whose first event is ≤ e
    const firsts = this.firsts;
    let lo = 0;
    let hi = firsts.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (firsts[mid]! <= e) lo = mid;
      else hi = mid - 1;
    }
    return this.names[lo]![e - firsts[lo]!]!;
  }
}

/** The valid column of `rows` rows, with its own bit set in every row (as every table's valid column has). */
function withValidBit(v: Uint32Array, rows: number, column: number): Uint32Array {
  const out = v.slice(0, rows);
  for (let r = 0; r < rows; r++) out[r] = (out[r]! | (1 << column)) >>> 0;
  return out;
}

/** The `processes` table from processEvents rows (as deriveThreads: typed columns, an IdIndex of open lifetimes). */
export function deriveProcesses(ev: Table<'processEvents'>): Table<'processes'> {
  const n = ev.length;
  const ts = words(ev.column('timestamp'));
  const opcode = ev.column('opcode');
  const pid = ev.column('processId');
  const parent = ev.column('parentId');
  const session = ev.column('sessionId');
  const exitStatus = ev.column('exitStatus');
  const image = ev.column('imageFileName');
  const commandLine = ev.column('commandLine');
  const valid = ev.column('valid');
  const oPid = new Uint32Array(n);
  const oParent = new Uint32Array(n);
  const oSession = new Uint32Array(n);
  const oImage = new Array<string>(n);
  const oCommand = new Array<string>(n);
  const oStart = new Uint32Array(2 * n);
  const oEnd = new Uint32Array(2 * n);
  const oExit = new Int32Array(n);
  const oValid = new Uint32Array(n);
  const open = new IdIndex(); // pid → row of its open lifetime
  const order = timeOrder(ts, ev.column('cpu'), n);
  let rows = 0;
  for (let k = 0; k < n; k++) {
    const i = order[k]!;
    const id = pid[i]!;
    const op = opcode[i]!;
    let row = open.get(id);
    if (op === L.OPCODE_PROCESS_DEFUNCT && row < 0) continue; // Defunct never opens a lifetime
    if (op === L.OPCODE_START || row < 0) {
      row = rows++;
      oPid[row] = id;
      oImage[row] = '';
      oCommand[row] = '';
      oValid[row] = 1 << L.PR_PROCESS_ID;
      open.set(id, row);
      if (op === L.OPCODE_START) {
        copy64(ts, i, oStart, row);
        oValid[row]! |= 1 << L.PR_START_TIME;
      }
    }
    let w = oValid[row]!;
    // fields take the first value, except the exit status (its End event's)
    if (((w >>> L.PR_PARENT_ID) & 1) === 0) {
      oParent[row] = parent[i]!;
      w |= 1 << L.PR_PARENT_ID;
    }
    if (((w >>> L.PR_SESSION_ID) & 1) === 0) {
      oSession[row] = session[i]!;
      w |= 1 << L.PR_SESSION_ID;
    }
    if (((w >>> L.PR_IMAGE_FILE_NAME) & 1) === 0) {
      oImage[row] = image[i]!;
      w |= 1 << L.PR_IMAGE_FILE_NAME;
    }
    if ((valid[i]! >>> L.PE_COMMAND_LINE) & 1 && ((w >>> L.PR_COMMAND_LINE) & 1) === 0) {
      oCommand[row] = commandLine[i]!;
      w |= 1 << L.PR_COMMAND_LINE;
    }
    if (op === L.OPCODE_END) {
      copy64(ts, i, oEnd, row);
      oExit[row] = exitStatus[i]!;
      w |= (1 << L.PR_END_TIME) | (1 << L.PR_EXIT_STATUS);
      open.set(id, -1);
    }
    oValid[row] = w;
  }
  const columns: TypedColumn[] = [];
  columns[L.PR_PROCESS_ID] = oPid.slice(0, rows);
  columns[L.PR_PARENT_ID] = oParent.slice(0, rows);
  columns[L.PR_SESSION_ID] = oSession.slice(0, rows);
  columns[L.PR_IMAGE_FILE_NAME] = oImage.slice(0, rows);
  columns[L.PR_COMMAND_LINE] = oCommand.slice(0, rows);
  columns[L.PR_START_TIME] = new BigInt64Array(oStart.buffer.slice(0, 8 * rows));
  columns[L.PR_END_TIME] = new BigInt64Array(oEnd.buffer.slice(0, 8 * rows));
  columns[L.PR_EXIT_STATUS] = oExit.slice(0, rows);
  columns[L.PR_VALID] = withValidBit(oValid, rows, L.PR_VALID);
  return new Table('processes', { length: rows, columns });
}

/**
 * The one map of 32-bit ids (thread and process ids) to small integers (rows, slots) of the derivations
 * (these lifetimes, cpu-usage.ts): open addressing with linear probing in two Int32Arrays, at most half
 * full, the hash the top bits of a Fibonacci product. No object, boxing or allocation per lookup.
 */
export class IdIndex {
  private keys = new Int32Array(1024);
  /** value + 1 per bucket (0: empty) */
  private vals = new Int32Array(1024);
  /** 32 - log2(capacity) */
  private shift = 22;
  private n = 0;

  /** The value of `id` (u32 or int32 bits), or -1 when it has none. */
  get(id: number): number {
    const mask = this.keys.length - 1;
    for (let h = Math.imul(id, 0x9e3779b1) >>> this.shift; ; h = (h + 1) & mask) {
      const v = this.vals[h]!;
      if (v === 0) return -1;
      if (this.keys[h] === (id | 0)) return v < 0 ? -1 : v - 1;
    }
  }

  /** Sets the value of `id` (≥ 0; -1: `id` has none again — its bucket stays, so probes go on past it). */
  set(id: number, value: number): void {
    const mask = this.keys.length - 1;
    let h = Math.imul(id, 0x9e3779b1) >>> this.shift;
    for (; ; h = (h + 1) & mask) {
      const v = this.vals[h]!;
      if (v === 0) break;
      if (this.keys[h] === (id | 0)) {
        // a key keeps its bucket: -1 is stored as value + 1 = 0 would end probes, so as -1 (none)
        this.vals[h] = value < 0 ? -1 : value + 1;
        return;
      }
    }
    if (2 * (this.n + 1) > this.keys.length) {
      this.rehash(this.keys.length * 2);
      return this.set(id, value);
    }
    this.keys[h] = id | 0;
    this.vals[h] = value < 0 ? -1 : value + 1;
    this.n++;
  }

  private rehash(cap: number): void {
    const keys = this.keys;
    const vals = this.vals;
    this.keys = new Int32Array(cap);
    this.vals = new Int32Array(cap);
    this.shift = 32 - Math.log2(cap);
    const mask = cap - 1;
    for (let i = 0; i < keys.length; i++) {
      if (vals[i] === 0) continue;
      let h = Math.imul(keys[i]!, 0x9e3779b1) >>> this.shift;
      while (this.vals[h] !== 0) h = (h + 1) & mask;
      this.keys[h] = keys[i]!;
      this.vals[h] = vals[i]!;
    }
  }
}

/** The file name of a kernel path without its folders (\Device\HarddiskVolume2\Windows\System32\ntdll.dll → ntdll.dll); null when nothing follows the last separator. */
export function imageName(fileName: string): string | null {
  const name = fileName.slice(Math.max(fileName.lastIndexOf('\\'), fileName.lastIndexOf('/')) + 1);
  return name === '' ? null : name;
}

/**
 * The `images` table from imageEvents rows: a lifetime per (processId, imageBase), as threads per id — the
 * events in time order (the CPUs' runs merged), typed columns (at most one row per event).
 */
export function deriveImages(ev: Table<'imageEvents'>): Table<'images'> {
  const n = ev.length;
  const ts = words(ev.column('timestamp'));
  const opcode = ev.column('opcode');
  const pid = ev.column('processId');
  const base = words(ev.column('imageBase'));
  const size = words(ev.column('imageSize'));
  const checksum = ev.column('imageChecksum');
  const stamp = ev.column('timeDateStamp');
  const defaultBase = words(ev.column('defaultBase'));
  const file = ev.column('fileName');
  const valid = ev.column('valid');
  const oPid = new Uint32Array(n);
  const oBase = new Uint32Array(2 * n);
  const oSize = new Uint32Array(2 * n);
  const oChecksum = new Uint32Array(n);
  const oStamp = new Uint32Array(n);
  const oDefault = new Uint32Array(2 * n);
  const oFile = new Array<string>(n);
  const oName = new Array<string>(n);
  const oLoad = new Uint32Array(2 * n);
  const oUnload = new Uint32Array(2 * n);
  const oValid = new Uint32Array(n);
  // (processId, imageBase) → row of its open lifetime; image events are few (thousands per trace)
  const open = new Map<string, number>();
  const order = timeOrder(ts, ev.column('cpu'), n);
  let rows = 0;
  for (let k = 0; k < n; k++) {
    const i = order[k]!;
    const key = `${pid[i]!}:${base[2 * i + 1]!}:${base[2 * i]!}`;
    const op = opcode[i]!;
    let row = open.get(key) ?? -1;
    if (op === L.OPCODE_IMAGE_LOAD || row < 0) {
      row = rows++;
      oPid[row] = pid[i]!;
      copy64(base, i, oBase, row);
      oFile[row] = '';
      oName[row] = '';
      oValid[row] = (1 << L.IM_PROCESS_ID) | (1 << L.IM_IMAGE_BASE);
      open.set(key, row);
      if (op === L.OPCODE_IMAGE_LOAD) {
        copy64(ts, i, oLoad, row);
        oValid[row]! |= 1 << L.IM_LOAD_TIME;
      }
    }
    let w = oValid[row]!;
    // fields take the first value of the lifetime (the file name: the first non-null one)
    if (((w >>> L.IM_IMAGE_SIZE) & 1) === 0) {
      copy64(size, i, oSize, row);
      oChecksum[row] = checksum[i]!;
      oStamp[row] = stamp[i]!;
      copy64(defaultBase, i, oDefault, row);
      w |= (1 << L.IM_IMAGE_SIZE) | (1 << L.IM_IMAGE_CHECKSUM) | (1 << L.IM_TIME_DATE_STAMP) | (1 << L.IM_DEFAULT_BASE);
    }
    if ((valid[i]! >>> L.IE_FILE_NAME) & 1 && ((w >>> L.IM_FILE_NAME) & 1) === 0) {
      oFile[row] = file[i]!;
      w |= 1 << L.IM_FILE_NAME;
      const name = imageName(file[i]!);
      if (name !== null) {
        oName[row] = name;
        w |= 1 << L.IM_NAME;
      }
    }
    if (op === L.OPCODE_END) {
      copy64(ts, i, oUnload, row);
      w |= 1 << L.IM_UNLOAD_TIME;
      open.delete(key);
    }
    oValid[row] = w;
  }
  const u64 = (w: Uint32Array) => new BigUint64Array(w.buffer.slice(0, 8 * rows));
  const i64 = (w: Uint32Array) => new BigInt64Array(w.buffer.slice(0, 8 * rows));
  const columns: TypedColumn[] = [];
  columns[L.IM_PROCESS_ID] = oPid.slice(0, rows);
  columns[L.IM_IMAGE_BASE] = u64(oBase);
  columns[L.IM_IMAGE_SIZE] = u64(oSize);
  columns[L.IM_IMAGE_CHECKSUM] = oChecksum.slice(0, rows);
  columns[L.IM_TIME_DATE_STAMP] = oStamp.slice(0, rows);
  columns[L.IM_DEFAULT_BASE] = u64(oDefault);
  columns[L.IM_FILE_NAME] = oFile.slice(0, rows);
  columns[L.IM_NAME] = oName.slice(0, rows);
  columns[L.IM_LOAD_TIME] = i64(oLoad);
  columns[L.IM_UNLOAD_TIME] = i64(oUnload);
  columns[L.IM_VALID] = withValidBit(oValid, rows, L.IM_VALID);
  return new Table('images', { length: rows, columns });
}

/** a < b for (hi, lo) pairs of numbers, lo unsigned */
function lt(aHi: number, aLo: number, bHi: number, bLo: number): boolean {
  return aHi < bHi || (aHi === bHi && aLo < bLo);
}

/**
 * The process of a thread at a time, the rule of the `threads` table (README, cpuUsage's newProcessId): the
 * lifetime of the thread id with the latest startTime <= the time — a null startTime is -infinity, a tie
 * goes to the later row; a thread keeps its process after its End (Windows logs the End before the final
 * switch-out) — tid 0, the idle thread, -> 0; -1 when the thread has no such lifetime. The lifetimes are
 * chained per thread id (an IdIndex) in typed arrays: no allocation, BigInt or closure per lookup.
 */
export class ThreadProcesses {
  /** tid → its latest lifetime (index into the arrays below) */
  private readonly head = new IdIndex();
  /** startTime as (signed high word, unsigned low word); no start: -2^32 */
  private readonly startHi: Float64Array;
  private readonly startLo: Float64Array;
  private readonly pid: Uint32Array;
  /** the thread's previous lifetime (-1: none) */
  private readonly prev: Int32Array;

  constructor(threads: Table<'threads'>) {
    const n = threads.length;
    const tid = threads.column('threadId');
    const pid = threads.column('processId');
    const start = words(threads.column('startTime'));
    this.startHi = new Float64Array(n);
    this.startLo = new Float64Array(n);
    this.pid = new Uint32Array(n);
    this.prev = new Int32Array(n);
    for (let i = 0; i < n; i++) {
      if (threads.isNull(L.TH_PROCESS_ID, i)) {
        this.prev[i] = -1;
        continue;
      }
      if (threads.isNull(L.TH_START_TIME, i)) this.startHi[i] = -UNBOUNDED;
      else {
        this.startHi[i] = start[2 * i + 1]! | 0;
        this.startLo[i] = start[2 * i]!;
      }
      this.pid[i] = pid[i]!;
      this.prev[i] = this.head.get(tid[i]!);
      this.head.set(tid[i]!, i);
    }
  }

  /** The process of thread `tid` at time (hi signed, lo unsigned — or their int32 bits), -1 if unknown. */
  at(tid: number, hi: number, lo: number): number {
    if (tid === 0) return 0;
    lo >>>= 0;
    let best = -1;
    // from the latest row back: a start equal to the best one's does not replace it (the later row wins)
    for (let k = this.head.get(tid); k >= 0; k = this.prev[k]!) {
      const sHi = this.startHi[k]!;
      const sLo = this.startLo[k]!;
      if (lt(hi, lo, sHi, sLo)) continue;
      if (best < 0 || lt(this.startHi[best]!, this.startLo[best]!, sHi, sLo)) best = k;
    }
    return best < 0 ? -1 : this.pid[best]!;
  }
}

const UNBOUNDED = 2 ** 32; // beyond any int32 high word: an open bound of a lifetime

/**
 * Address → image by time (docs/format.md §G.3): which image lifetime (a row of `images`) holds an address
 * of a process at a time — among the images of the process, or first of process 0 (the kernel's images:
 * drivers and the kernel, mapped in every process) for a kernel-space address.
 *
 * Columnar: the lifetimes sorted by (processId, imageBase) in typed arrays of 32-bit words, a running
 * maximum of their ends per process; a lookup is a binary search for the last base <= the address, then a
 * walk back over the lifetimes whose range can still hold it (the running maximum bounds it), keeping the
 * one whose [loadTime, unloadTime) holds the time (a null bound is open) — the latest loaded when several
 * do, then the highest base (the innermost of nested ranges). No allocation, BigInt or closure per lookup.
 */
export class ImageMap {
  /** rows of `images` in (processId, imageBase) order */
  private readonly row: Int32Array;
  private readonly baseHi: Float64Array;
  private readonly baseLo: Float64Array;
  private readonly endHi: Float64Array;
  private readonly endLo: Float64Array;
  /** the largest end among the lifetimes of the process up to this one (sorted order) */
  private readonly maxEndHi: Float64Array;
  private readonly maxEndLo: Float64Array;
  /** loadTime / unloadTime as (signed high word, unsigned low word); null: ∓UNBOUNDED */
  private readonly loadHi: Float64Array;
  private readonly loadLo: Float64Array;
  private readonly unloadHi: Float64Array;
  private readonly unloadLo: Float64Array;
  /** processId → [first, end) of its lifetimes in the sorted order */
  private readonly spans = new Map<number, [number, number]>();
  /** imageBase of each row of `images` as uint32 words (low, high) */
  private readonly baseWords: Uint32Array;

  constructor(readonly images: Table<'images'>) {
    const n = images.length;
    const pid = images.column('processId');
    const base = images.column('imageBase');
    this.baseWords = new Uint32Array(base.buffer, base.byteOffset, 2 * n);
    const size = images.column('imageSize');
    const load = images.column('loadTime');
    const unload = images.column('unloadTime');
    // sorted once, per image lifetime (thousands): comparing BigInts here is fine
    const order = Array.from({ length: n }, (_, i) => i).sort((a, b) => pid[a]! - pid[b]! || (base[a]! < base[b]! ? -1 : base[a]! > base[b]! ? 1 : a - b));
    this.row = Int32Array.from(order);
    const f = () => new Float64Array(n);
    [this.baseHi, this.baseLo, this.endHi, this.endLo, this.maxEndHi, this.maxEndLo] = [f(), f(), f(), f(), f(), f()];
    [this.loadHi, this.loadLo, this.unloadHi, this.unloadLo] = [f(), f(), f(), f()];
    for (let k = 0; k < n; k++) {
      const i = order[k]!;
      const p = pid[i]!;
      const span = this.spans.get(p);
      if (span) span[1] = k + 1;
      else this.spans.set(p, [k, k + 1]);
      const b = base[i]!;
      const e = b + size[i]!; // may pass 2^64: its high word, a number, is then 2^32 or more
      this.baseHi[k] = Number(b >> 32n);
      this.baseLo[k] = Number(b & 0xffffffffn);
      this.endHi[k] = Number(e >> 32n);
      this.endLo[k] = Number(e & 0xffffffffn);
      const first = !span;
      if (first || lt(this.maxEndHi[k - 1]!, this.maxEndLo[k - 1]!, this.endHi[k]!, this.endLo[k]!)) {
        this.maxEndHi[k] = this.endHi[k]!;
        this.maxEndLo[k] = this.endLo[k]!;
      } else {
        this.maxEndHi[k] = this.maxEndHi[k - 1]!;
        this.maxEndLo[k] = this.maxEndLo[k - 1]!;
      }
      if (images.isNull(L.IM_LOAD_TIME, i)) [this.loadHi[k], this.loadLo[k]] = [-UNBOUNDED, 0];
      else [this.loadHi[k], this.loadLo[k]] = [Number(load[i]! >> 32n), Number(load[i]! & 0xffffffffn)];
      if (images.isNull(L.IM_UNLOAD_TIME, i)) [this.unloadHi[k], this.unloadLo[k]] = [UNBOUNDED, 0];
      else [this.unloadHi[k], this.unloadLo[k]] = [Number(unload[i]! >> 32n), Number(unload[i]! & 0xffffffffn)];
    }
  }

  /**
   * The row of `images` holding address (hi, lo) in process `pid` at time (tHi signed, tLo) — words as
   * numbers, lo unsigned — or -1. A kernel-space address (`kernel`) is looked up in process 0 first.
   */
  find(pid: number, kernel: boolean, hi: number, lo: number, tHi: number, tLo: number): number {
    if (kernel) {
      const k = this.findIn(0, hi, lo, tHi, tLo);
      if (k >= 0 || pid === 0) return k;
    }
    return this.findIn(pid, hi, lo, tHi, tLo);
  }

  /** address - imageBase of row `row` (below the image's size, so exact as a number); address as words */
  offset(row: number, hi: number, lo: number): number {
    return (hi - this.baseWords[2 * row + 1]!) * 2 ** 32 + (lo - this.baseWords[2 * row]!);
  }

  private findIn(pid: number, hi: number, lo: number, tHi: number, tLo: number): number {
    const span = this.spans.get(pid);
    if (!span) return -1;
    const first = span[0];
    let a = first;
    let b = span[1];
    // the last base <= the address
    while (a < b) {
      const mid = (a + b) >>> 1;
      if (lt(hi, lo, this.baseHi[mid]!, this.baseLo[mid]!)) b = mid;
      else a = mid + 1;
    }
    let best = -1;
    for (let k = a - 1; k >= first; k--) {
      // no lifetime at or before k reaches the address
      if (!lt(hi, lo, this.maxEndHi[k]!, this.maxEndLo[k]!)) break;
      if (!lt(hi, lo, this.endHi[k]!, this.endLo[k]!)) continue;
      // loadTime <= t < unloadTime
      if (lt(tHi, tLo, this.loadHi[k]!, this.loadLo[k]!) || !lt(tHi, tLo, this.unloadHi[k]!, this.unloadLo[k]!)) continue;
      if (best < 0 || lt(this.loadHi[best]!, this.loadLo[best]!, this.loadHi[k]!, this.loadLo[k]!)) best = k;
    }
    return best < 0 ? -1 : this.row[best]!;
  }
}

/**
 * The samples' processId, imageName and imageOffset (nullable; the engines leave them null): a sample's
 * process is its thread's at its time (ThreadProcesses), its image the lifetime holding instructionPointer at
 * that time (ImageMap: process 0's images first for a kernel-space address, then the process's), named as
 * the stackFrames rows name theirs (the images row's name, else its file name) at instructionPointer -
 * imageBase. `fill` takes a whole table or one streamed chunk after another (the result does not depend on
 * the chunking); per row: words compared, typed stores, no allocation.
 */
export class SampleLifetimes {
  private readonly processes: ThreadProcesses;
  private readonly map: ImageMap;
  private readonly name: string[];
  private readonly fileName: string[];

  constructor(threads: Table<'threads'>, images: Table<'images'>) {
    this.processes = new ThreadProcesses(threads);
    this.map = new ImageMap(images);
    this.name = images.column('name');
    this.fileName = images.column('fileName');
  }

  /** Writes the three columns of every row of `samples` (setting or clearing their valid bits). */
  fill(samples: Table<'samples'>): void {
    const n = samples.length;
    if (n === 0) return;
    const ts = words(samples.column('timestamp'));
    const tid = samples.column('threadId');
    const ip = words(samples.column('instructionPointer'));
    const pointerSize = samples.column('pointerSize');
    const oPid = samples.columns[L.SP_PROCESS_ID] as Uint32Array;
    const oName = samples.columns[L.SP_IMAGE_NAME] as string[];
    const off = samples.columns[L.SP_IMAGE_OFFSET] as BigUint64Array;
    const oOff = new Uint32Array(off.buffer, off.byteOffset, 2 * n);
    const valid = samples.columns[L.SP_VALID] as Uint32Array;
    const PID = 1 << L.SP_PROCESS_ID;
    const NAME = 1 << L.SP_IMAGE_NAME;
    const OFFSET = 1 << L.SP_IMAGE_OFFSET;
    const map = this.map;
    for (let r = 0; r < n; r++) {
      const tHi = ts[2 * r + 1]! | 0;
      const tLo = ts[2 * r]!;
      const p = this.processes.at(tid[r]!, tHi, tLo);
      let v = valid[r]! & ~(PID | NAME | OFFSET);
      if (p >= 0) v |= PID;
      oPid[r] = p >= 0 ? p : 0;
      const hi = ip[2 * r + 1]!;
      const lo = ip[2 * r]!;
      const row = map.find(p, isKernelAddress(pointerSize[r]!, hi, lo), hi, lo, tHi, tLo);
      if (row >= 0) {
        const o = map.offset(row, hi, lo);
        oOff[2 * r] = o >>> 0;
        oOff[2 * r + 1] = (o - (o >>> 0)) / 2 ** 32;
        v |= OFFSET;
        const name = this.name[row] || this.fileName[row] || '';
        oName[r] = name;
        if (name !== '') v |= NAME;
      } else {
        oOff[2 * r] = 0;
        oOff[2 * r + 1] = 0;
        oName[r] = '';
      }
      valid[r] = v;
    }
  }
}

/**
 * Fills the samples' processId, imageName and imageOffset of a whole decode's tables: with the lifetimes
 * given (the result's), else derived from its thread and image event rows.
 */
export function fillWholeSampleLifetimes(
  tables: { samples: Table<'samples'>; threadEvents: Table<'threadEvents'>; imageEvents: Table<'imageEvents'> },
  lifetimes?: { threads: Table<'threads'>; images: Table<'images'> },
): void {
  if (tables.samples.length === 0) return;
  const threads = lifetimes?.threads ?? deriveThreads(tables.threadEvents);
  const images = lifetimes?.images ?? deriveImages(tables.imageEvents);
  new SampleLifetimes(threads, images).fill(tables.samples);
}
