// Table schemas: the public column contract of `cswitch` and `spinlock`.
// Column order and ids come from assembly/layout.ts (CS_* / SL_*); this file adds names and array types.
import * as L from './generated/layout.js';

export type ColumnType = 'i64' | 'u64' | 'f64' | 'u32' | 'i32' | 'u16' | 'u8' | 'i8';
export type TypedColumn =
  | BigInt64Array
  | BigUint64Array
  | Float64Array
  | Uint32Array
  | Int32Array
  | Uint16Array
  | Uint8Array
  | Int8Array;

export interface ColumnSpec {
  readonly id: number;
  readonly name: string;
  readonly type: ColumnType;
  /** true when the column can be null; presence is bit `id` of the `valid` column (cswitch only). */
  readonly nullable: boolean;
  readonly description: string;
}

export type TableName = 'cswitch' | 'spinlock';

function col(id: number, name: string, type: ColumnType, nullable: boolean, description: string): ColumnSpec {
  return { id, name, type, nullable, description };
}

export const CSWITCH_COLUMNS: readonly ColumnSpec[] = [
  col(L.CS_TIMESTAMP, 'timestamp', 'i64', false, 'raw session-clock ticks of the switch'),
  col(L.CS_CPU, 'cpu', 'u16', false, 'processor of the buffer holding the event'),
  col(L.CS_NEW_THREAD_ID, 'newThreadId', 'u32', true, 'thread switched in (compact rows: next old thread on this CPU)'),
  col(L.CS_OLD_THREAD_ID, 'oldThreadId', 'u32', false, 'thread switched out (0 = idle)'),
  col(L.CS_NEW_THREAD_PRIORITY, 'newThreadPriority', 'i8', true, 'NewThreadPriority'),
  col(L.CS_OLD_THREAD_PRIORITY, 'oldThreadPriority', 'i8', true, 'OldThreadPriority'),
  col(L.CS_PREVIOUS_CSTATE, 'previousCState', 'u8', true, 'PreviousCState (v2+)'),
  col(L.CS_NEW_THREAD_PRIORITY_DECREMENT, 'newThreadPriorityDecrement', 'i8', true, 'NewThreadPriorityDecrement (v2+)'),
  col(L.CS_OLD_THREAD_WAIT_REASON, 'oldThreadWaitReason', 'u8', true, 'KWAIT_REASON'),
  col(L.CS_OLD_THREAD_WAIT_MODE, 'oldThreadWaitMode', 'u8', true, 'KPROCESSOR_MODE (bit 0 of byte 0x0D from v3)'),
  col(L.CS_OLD_THREAD_STATE, 'oldThreadState', 'u8', true, 'KTHREAD_STATE'),
  col(L.CS_OLD_THREAD_IDEAL_PROCESSOR, 'oldThreadIdealProcessor', 'u8', true, 'OldThreadIdealProcessor'),
  col(L.CS_NEW_THREAD_WAIT_TIME, 'newThreadWaitTime', 'u32', true, 'NewThreadWaitTime (clock-interrupt ticks)'),
  col(L.CS_OLD_THREAD_REMAINING_QUANTUM, 'oldThreadRemainingQuantum', 'i32', true, 'OldThreadRemainingQuantum'),
  col(L.CS_NEW_THREAD_QUANTUM, 'newThreadQuantum', 'i8', true, 'NewThreadQuantum (v1 only)'),
  col(L.CS_OLD_THREAD_QUANTUM, 'oldThreadQuantum', 'i8', true, 'OldThreadQuantum (v1 only)'),
  col(L.CS_THREAD_FLAGS, 'threadFlags', 'u8', true, 'raw byte 0x0D of v3/v4 events'),
  col(L.CS_OLD_THREAD_BAM_EPP_IMPORTANT, 'oldThreadBamEppImportant', 'u8', true, 'v3 flag bit 1'),
  col(L.CS_NEW_THREAD_BAM_EPP_IMPORTANT, 'newThreadBamEppImportant', 'u8', true, 'v3 flag bit 2'),
  col(L.CS_OLD_THREAD_BAM_QOS_LEVEL, 'oldThreadBamQosLevel', 'u8', true, 'v4 flag bits 1-3'),
  col(L.CS_NEW_THREAD_BAM_QOS_LEVEL, 'newThreadBamQosLevel', 'u8', true, 'v4 flag bits 4-6'),
  col(
    L.CS_NEW_THREAD_WAIT_TIME_AT_MOST_ONE_TICK,
    'newThreadWaitTimeAtMostOneTick',
    'u8',
    false,
    '1 for compact LITE packets: the new thread waited at most one tick (wait time itself not recorded)',
  ),
  col(L.CS_SOURCE, 'source', 'u8', false, '0 CSwitch event, 1 IDLE_SHORT, 2 IDLE, 3 LITE, 4 FULL compact packet'),
  col(L.CS_VERSION, 'version', 'u8', false, 'event version'),
  col(L.CS_FILE_OFFSET, 'fileOffset', 'f64', false, 'file offset of the event (compressed buffers: buffer offset + 0x48 + offset in the decompressed payload)'),
  col(L.CS_VALID, 'valid', 'u32', false, 'bit mask of present columns (bit = column id)'),
];

export const SPINLOCK_COLUMNS: readonly ColumnSpec[] = [
  col(L.SL_TIMESTAMP, 'timestamp', 'i64', false, 'raw session-clock ticks of the event'),
  col(L.SL_CPU, 'cpu', 'u16', false, 'processor of the buffer'),
  col(L.SL_SPIN_LOCK_ADDRESS, 'spinLockAddress', 'u64', false, 'SpinLockAddress'),
  col(L.SL_CALLER_ADDRESS, 'callerAddress', 'u64', false, 'CallerAddress'),
  col(L.SL_ACQUIRE_TIME, 'acquireTime', 'u64', false, 'AcquireTime (rdtsc cycles)'),
  col(L.SL_RELEASE_TIME, 'releaseTime', 'u64', false, 'ReleaseTime (rdtsc cycles)'),
  col(L.SL_WAIT_TIME_IN_CYCLES, 'waitTimeInCycles', 'u32', false, 'WaitTimeInCycles'),
  col(L.SL_SPIN_COUNT, 'spinCount', 'u32', false, 'SpinCount'),
  col(L.SL_THREAD_ID, 'threadId', 'u32', false, 'ThreadId'),
  col(L.SL_INTERRUPT_COUNT, 'interruptCount', 'u32', false, 'InterruptCount'),
  col(L.SL_IRQL, 'irql', 'u8', false, 'Irql'),
  col(L.SL_ACQUIRE_DEPTH, 'acquireDepth', 'u8', false, 'AcquireDepth'),
  col(L.SL_ACQUIRE_MODE, 'acquireMode', 'u8', false, 'AcquireMode (flags bits 0-5)'),
  col(L.SL_EXECUTE_DPC, 'executeDpc', 'u8', false, 'ExecuteDpc (flags bit 6)'),
  col(L.SL_EXECUTE_ISR, 'executeIsr', 'u8', false, 'ExecuteIsr (flags bit 7)'),
  col(L.SL_POINTER_SIZE, 'pointerSize', 'u8', false, '4 (x86 layout) or 8 (x64 layout)'),
  col(L.SL_VERSION, 'version', 'u8', false, 'event version'),
  col(L.SL_FILE_OFFSET, 'fileOffset', 'f64', false, 'file offset of the event'),
];

export const TABLE_COLUMNS: Record<TableName, readonly ColumnSpec[]> = {
  cswitch: CSWITCH_COLUMNS,
  spinlock: SPINLOCK_COLUMNS,
};
export const TABLE_IDS: Record<TableName, number> = { cswitch: L.TABLE_CSWITCH, spinlock: L.TABLE_SPINLOCK };

// Sanity: the layout and this schema agree on count and widths.
for (const name of ['cswitch', 'spinlock'] as const) {
  const cols = TABLE_COLUMNS[name];
  if (cols.length !== L.columnCount(TABLE_IDS[name])) throw new Error(`schema ${name}: column count mismatch`);
  cols.forEach((c, i) => {
    if (c.id !== i) throw new Error(`schema ${name}: column ${c.name} id ${c.id} at position ${i}`);
    if (bytesOf(c.type) !== L.columnWidth(TABLE_IDS[name], i)) throw new Error(`schema ${name}: width of ${c.name}`);
  });
}

export function bytesOf(type: ColumnType): number {
  switch (type) {
    case 'i64':
    case 'u64':
    case 'f64':
      return 8;
    case 'u32':
    case 'i32':
      return 4;
    case 'u16':
      return 2;
    default:
      return 1;
  }
}

export function allocColumn(type: ColumnType, length: number): TypedColumn {
  switch (type) {
    case 'i64':
      return new BigInt64Array(length);
    case 'u64':
      return new BigUint64Array(length);
    case 'f64':
      return new Float64Array(length);
    case 'u32':
      return new Uint32Array(length);
    case 'i32':
      return new Int32Array(length);
    case 'u16':
      return new Uint16Array(length);
    case 'u8':
      return new Uint8Array(length);
    case 'i8':
      return new Int8Array(length);
  }
}

/** A view of `length` elements of `type` over `buffer` at byte `offset` (no copy). */
export function viewColumn(type: ColumnType, buffer: ArrayBufferLike, offset: number, length: number): TypedColumn {
  switch (type) {
    case 'i64':
      return new BigInt64Array(buffer, offset, length);
    case 'u64':
      return new BigUint64Array(buffer, offset, length);
    case 'f64':
      return new Float64Array(buffer, offset, length);
    case 'u32':
      return new Uint32Array(buffer, offset, length);
    case 'i32':
      return new Int32Array(buffer, offset, length);
    case 'u16':
      return new Uint16Array(buffer, offset, length);
    case 'u8':
      return new Uint8Array(buffer, offset, length);
    case 'i8':
      return new Int8Array(buffer, offset, length);
  }
}

/** Rows of one table produced by one engine call: columns in schema order. */
export interface ColumnChunk {
  readonly length: number;
  readonly columns: readonly TypedColumn[];
}

export function emptyChunk(table: TableName): ColumnChunk {
  return { length: 0, columns: TABLE_COLUMNS[table].map((c) => allocColumn(c.type, 0)) };
}

/** Concatenates chunks of one table into one chunk (one copy per column). */
export function concatChunks(table: TableName, chunks: readonly ColumnChunk[]): ColumnChunk {
  const specs = TABLE_COLUMNS[table];
  if (chunks.length === 1) return chunks[0]!;
  const length = chunks.reduce((n, c) => n + c.length, 0);
  const columns = specs.map((spec, i) => {
    const out = allocColumn(spec.type, length);
    let at = 0;
    for (const c of chunks) {
      (out as Uint8Array).set(c.columns[i] as Uint8Array, at);
      at += c.length;
    }
    return out;
  });
  return { length, columns };
}
