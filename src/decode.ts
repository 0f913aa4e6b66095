// Turning a finished drive (driver.ts) into the public result: tables, trace info, clock, summary.
// Browser-safe: no node: imports.
import * as L from './generated/layout.js';
import type { Engine, EngineKind, KindTally } from './engine.js';
import type { BufferRef, DriverResult } from './driver.js';
import { COUNTERS, describeIssue, namedCounters, type DiagnosticCounters, type Issue } from './diagnostics.js';
import { parseLogfileHeader, type TraceInfo } from './logfile.js';
import { createClock, type Clock } from './time.js';
import { Table } from './table.js';
import { concatChunks, emptyChunk, type ColumnChunk } from './schema.js';
import { EtlError, hex } from './errors.js';
import { ReferenceEngine } from './reference/engine.js';
import { WasmEngine } from './wasm/engine.js';
import { loadWasmModule, loadWasmModuleSync } from './wasm/instance.js';

export interface DecodeOptions {
  /** 'wasm' (default) or the pure-TS 'reference' decoder */
  engine?: EngineKind;
  /** MaximumWaitReason for compact OldThreadStateWr (spec D.5); default: from the trace's build number */
  bias?: number;
  /** input window per load in bytes (default 8 MiB) */
  windowBytes?: number;
  /** called now and then with bytes done / total, per phase */
  onProgress?: (phase: string, done: number, total: number) => void;
}

export const HEADER_TYPE_NAMES: Record<number, string> = {
  [L.HT_SYSTEM32]: 'SYSTEM32',
  [L.HT_SYSTEM64]: 'SYSTEM64',
  [L.HT_COMPACT32]: 'COMPACT32',
  [L.HT_COMPACT64]: 'COMPACT64',
  [L.HT_FULL_HEADER32]: 'FULL_HEADER32',
  [L.HT_INSTANCE32]: 'INSTANCE32',
  [L.HT_TIMED]: 'TIMED',
  [L.HT_ERROR]: 'ERROR',
  [L.HT_WNODE_HEADER]: 'WNODE_HEADER',
  [L.HT_MESSAGE]: 'MESSAGE',
  [L.HT_PERFINFO32]: 'PERFINFO32',
  [L.HT_PERFINFO64]: 'PERFINFO64',
  [L.HT_EVENT_HEADER32]: 'EVENT_HEADER32',
  [L.HT_EVENT_HEADER64]: 'EVENT_HEADER64',
  [L.HT_FULL_HEADER64]: 'FULL_HEADER64',
  [L.HT_INSTANCE64]: 'INSTANCE64',
};

const HOOK_NAMES: Record<number, string> = {
  [L.HOOK_HEADER]: 'WMI_LOG_TYPE_HEADER',
  [L.HOOK_HEADER_EXTENSION]: 'WMI_LOG_TYPE_HEADER_EXTENSION',
  [L.HOOK_GROUP_MASKS_END]: 'WMI_LOG_TYPE_GROUP_MASKS_END',
  [L.HOOK_CSWITCH]: 'PERFINFO_LOG_TYPE_CONTEXTSWAP',
  [L.HOOK_COMPCS]: 'PERFINFO_LOG_TYPE_CONTEXTSWAP_BATCH',
  [L.HOOK_SPINLOCK]: 'PERFINFO_LOG_TYPE_SPINLOCK',
};

/** One row of eventsByKind. Fields depend on the header kind (see README). */
export interface KindRow {
  headerType: string;
  hookId?: number;
  name?: string;
  provider?: string;
  eventId?: number;
  eventType?: number;
  messageNumber?: number;
  opcode?: number;
  task?: number;
  extended?: boolean;
  version: number;
  count: number;
  bytes: number;
}

export function guidText(b: Uint8Array): string {
  const h = (i: number) => b[i]!.toString(16).padStart(2, '0');
  return (
    h(3) + h(2) + h(1) + h(0) + '-' + h(5) + h(4) + '-' + h(7) + h(6) + '-' + h(8) + h(9) + '-' +
    h(10) + h(11) + h(12) + h(13) + h(14) + h(15)
  );
}

export function kindRow(k: KindTally): KindRow {
  const headerType = HEADER_TYPE_NAMES[k.headerType] ?? `TYPE_${hex(k.headerType, 2)}`;
  switch (k.headerType) {
    case L.HT_SYSTEM32:
    case L.HT_SYSTEM64:
    case L.HT_COMPACT32:
    case L.HT_COMPACT64:
    case L.HT_PERFINFO32:
    case L.HT_PERFINFO64: {
      const row: KindRow = { headerType, hookId: k.id, version: k.version, count: k.count, bytes: k.bytes };
      const name = HOOK_NAMES[k.id];
      if (name) row.name = name;
      return row;
    }
    case L.HT_EVENT_HEADER32:
    case L.HT_EVENT_HEADER64:
      return {
        headerType,
        provider: guidText(k.guid),
        eventId: k.id,
        version: k.version,
        opcode: k.opcode,
        task: k.task,
        extended: (k.flags & 1) !== 0,
        count: k.count,
        bytes: k.bytes,
      };
    case L.HT_FULL_HEADER32:
    case L.HT_FULL_HEADER64:
    case L.HT_INSTANCE32:
    case L.HT_INSTANCE64:
      return { headerType, provider: guidText(k.guid), eventType: k.id, version: k.version, count: k.count, bytes: k.bytes };
    case L.HT_MESSAGE:
      return { headerType, messageNumber: k.id, version: k.version, count: k.count, bytes: k.bytes };
    default:
      return { headerType, version: k.version, count: k.count, bytes: k.bytes };
  }
}

export interface BiasInfo {
  value: number;
  source: 'build' | 'override' | 'default';
  /** false when the build falls in an uncertain row of spec C.7 */
  certain: boolean;
}

export interface TraceSummary {
  engine: EngineKind;
  fileSize: number;
  /** buffers framed in the input */
  buffers: number;
  /** events walked, every header kind */
  events: number;
  eventsByKind: KindRow[];
  cswitch: number;
  spinlock: number;
  compact: { batches: number; packets: { idleShort: number; idle: number; lite: number; full: number } };
  bias: BiasInfo;
  trace: TraceInfo | null;
  diagnostics: DiagnosticCounters;
  /** the first 1024 problems with their file offsets (the counters stay exact) */
  issues: Issue[];
}

export interface DecodeResult {
  summary: TraceSummary;
  /** every buffer framed in the input, in file order: offset, size, SequenceNumber, processor, flags, type */
  buffers: readonly BufferRef[];
  info: TraceInfo | null;
  /** tick conversions; null when the trace's clock type has no known conversion */
  clock: Clock | null;
  cswitch: Table<'cswitch'>;
  spinlock: Table<'spinlock'>;
}

export function createEngine(kind: EngineKind, module?: WebAssembly.Module): Engine {
  if (kind === 'reference') return new ReferenceEngine();
  if (kind !== 'wasm') throw new EtlError('BAD_OPTION', `unknown engine '${String(kind)}': use 'wasm' or 'reference'`);
  return new WasmEngine(module ?? loadWasmModuleSync());
}

export async function createEngineAsync(kind: EngineKind): Promise<Engine> {
  if (kind === 'wasm') return new WasmEngine(await loadWasmModule());
  return createEngine(kind);
}

export function prepareEngine(engine: Engine, options: DecodeOptions): Engine {
  const w = options.windowBytes;
  if (w !== undefined && (!Number.isInteger(w) || w < 0x1000 || w > 1 << 30)) {
    throw new EtlError('BAD_OPTION', `windowBytes must be an integer from 4096 to 2^30 (1 GiB), got ${w}`);
  }
  if (options.bias !== undefined) {
    if (!Number.isInteger(options.bias) || options.bias < 1 || options.bias > 63) {
      throw new EtlError('BAD_OPTION', `bias must be an integer MaximumWaitReason in 1..63, got ${options.bias}`);
    }
    engine.setBiasOverride(options.bias);
  }
  return engine;
}

/** Builds the summary from a finished drive. */
export function summarize(result: DriverResult, engineKind: EngineKind, biasOverride: number | undefined): TraceSummary {
  const s = result.engine;
  const counters = s.counters.map((v, i) => v + (result.plannerCounters[i] ?? 0));
  const info = traceInfo(result);
  const kinds = s.kinds.map(kindRow).sort(compareKinds);
  const issues = [...result.plannerIssues, ...s.log]
    .sort((a, b) => a.fileOffset - b.fileOffset)
    .slice(0, L.LOG_CAPACITY)
    .map(describeIssue);
  return {
    engine: engineKind,
    fileSize: result.size,
    buffers: result.buffers.length,
    events: counters[L.D_EVENTS]!,
    eventsByKind: kinds,
    cswitch: counters[L.D_CSWITCH_DECODED]! + packetCount(counters),
    spinlock: counters[L.D_SPINLOCK_DECODED]!,
    compact: {
      batches: counters[L.D_COMPCS_BATCHES]!,
      packets: {
        idleShort: counters[L.D_COMPCS_PACKETS_IDLE_SHORT]!,
        idle: counters[L.D_COMPCS_PACKETS_IDLE]!,
        lite: counters[L.D_COMPCS_PACKETS_LITE]!,
        full: counters[L.D_COMPCS_PACKETS_FULL]!,
      },
    },
    bias: {
      value: s.bias,
      source: biasOverride !== undefined ? 'override' : info ? 'build' : 'default',
      certain: biasOverride !== undefined || (info !== null && L.maxWaitReasonCertain(info.build)),
    },
    trace: info,
    diagnostics: {
      ...namedCounters(counters),
      // what the kernel reported lost, from the logfile header (A.8)
      logfileEventsLost: info?.eventsLost ?? 0,
      logfileBuffersLost: info?.buffersLost ?? 0,
    },
    issues,
  };
}

/** A total order of kind rows: by count (descending), then every key field. */
function compareKinds(a: KindRow, b: KindRow): number {
  const text = (x: string | undefined, y: string | undefined) => (x ?? '').localeCompare(y ?? '');
  const num = (x: number | undefined, y: number | undefined) => (x ?? -1) - (y ?? -1);
  return (
    b.count - a.count ||
    text(a.headerType, b.headerType) ||
    num(a.hookId, b.hookId) ||
    text(a.provider, b.provider) ||
    num(a.eventId, b.eventId) ||
    num(a.eventType, b.eventType) ||
    num(a.messageNumber, b.messageNumber) ||
    num(a.version, b.version) ||
    num(a.opcode, b.opcode) ||
    num(a.task, b.task) ||
    Number(a.extended ?? false) - Number(b.extended ?? false)
  );
}

function packetCount(c: readonly number[]): number {
  return (
    c[L.D_COMPCS_PACKETS_IDLE_SHORT]! + c[L.D_COMPCS_PACKETS_IDLE]! + c[L.D_COMPCS_PACKETS_LITE]! + c[L.D_COMPCS_PACKETS_FULL]!
  );
}

export function traceInfo(result: DriverResult): TraceInfo | null {
  const s = result.engine;
  if (!s.logfilePayload) return null;
  return parseLogfileHeader(s.logfilePayload, s.logfilePayloadLength, s.logfilePointerSize, s.logfileTimestamp, s.headerExtension);
}

export function clockOf(info: TraceInfo | null): Clock | null {
  if (!info) return null;
  try {
    return createClock(info);
  } catch {
    return null;
  }
}

/** Collects drained chunks into whole tables. */
export class TableCollector {
  private readonly cs: ColumnChunk[] = [];
  private readonly sl: ColumnChunk[] = [];
  add = ({ cswitch, spinlock }: { cswitch: ColumnChunk; spinlock: ColumnChunk }): void => {
    if (cswitch.length) this.cs.push(cswitch);
    if (spinlock.length) this.sl.push(spinlock);
  };
  tables(): { cswitch: Table<'cswitch'>; spinlock: Table<'spinlock'> } {
    return {
      cswitch: new Table('cswitch', concatChunks('cswitch', this.cs.length ? this.cs : [emptyChunk('cswitch')])),
      spinlock: new Table('spinlock', concatChunks('spinlock', this.sl.length ? this.sl : [emptyChunk('spinlock')])),
    };
  }
}


export { COUNTERS };
