// The `traces` table (schema/tables.mjs): one row describing a decoded trace — its source, the logfile
// header's machine and clock facts, the anchor that turns `timeNs` into absolute UTC, and what was lost.
// A converted dataset joins every table to it through the `trace` partition.
import * as L from '../generated/layout.js';
import { allocColumn, TABLE_COLUMNS, validColumnOf } from '../tables/schema.js';
import type { DiagnosticCounters } from './diagnostics.js';
import type { TraceInfo } from './logfile.js';
import { Table } from '../tables/table.js';
import type { Clock } from '../time.js';
import { VERSION } from '../version.js';

/** FILETIME (100 ns since 1601-01-01 UTC) as ISO 8601 UTC with all seven fraction digits: exact. */
export function fileTimeToIso(ft: bigint): string {
  const FILETIME_UNIX_EPOCH = 116444736000000000n;
  const units = ft - FILETIME_UNIX_EPOCH; // 100 ns since 1970
  let secs = units / 10_000_000n;
  let frac = units % 10_000_000n;
  if (frac < 0n) {
    frac += 10_000_000n;
    secs -= 1n;
  }
  // YYYY-MM-DDTHH:MM:SS.000Z, or ±YYYYYY-… outside years 0000–9999 (every FILETIME is within Date's range)
  const iso = new Date(Number(secs) * 1000).toISOString();
  return `${iso.slice(0, -5)}.${frac.toString().padStart(7, '0')}Z`;
}

export interface TraceRowInput {
  sourcePath: string | null;
  fileSize: number;
  info: TraceInfo | null;
  clock: Clock | null;
  buffers: number;
  events: number;
  diagnostics: DiagnosticCounters;
  dataLoss: string | null;
}

/** The one-row `traces` table of a decode. */
export function traceRow(r: TraceRowInput): Table<'traces'> {
  const specs = TABLE_COLUMNS.traces;
  const columns = specs.map((spec) => allocColumn(spec.type, 1));
  let valid = 0;
  const set = (column: number, value: number | bigint | string | null) => {
    if (value === null) return;
    (columns[column] as (typeof value)[])[0] = value;
    valid |= 1 << column;
  };
  const info = r.info;
  set(L.TR_SOURCE_PATH, r.sourcePath);
  set(L.TR_FILE_SIZE, BigInt(r.fileSize));
  if (info) {
    set(L.TR_LOGGER_NAME, info.loggerName || null);
    set(L.TR_LOG_FILE_NAME, info.logFileName || null);
    set(L.TR_OS_VERSION, info.osVersion);
    set(L.TR_BUILD, info.build);
    set(L.TR_NUMBER_OF_PROCESSORS, info.numberOfProcessors);
    set(L.TR_POINTER_SIZE, info.pointerSize & 0xff);
    set(L.TR_CLOCK_TYPE, info.clockType & 0xff);
    set(L.TR_CPU_SPEED_IN_MHZ, info.cpuSpeedInMHz >>> 0);
    set(L.TR_ANCHOR_TICKS, info.headerTimestamp);
    set(L.TR_END_FILE_TIME, info.endTime);
    set(L.TR_EVENTS_LOST, info.eventsLost >>> 0);
    set(L.TR_BUFFERS_LOST, info.buffersLost >>> 0);
  } else {
    set(L.TR_EVENTS_LOST, 0);
    set(L.TR_BUFFERS_LOST, 0);
  }
  if (r.clock) {
    set(L.TR_TICKS_PER_SECOND, r.clock.ticksPerSecond);
    set(L.TR_ANCHOR_FILE_TIME, r.clock.anchorFileTime);
    set(L.TR_ANCHOR_UTC, fileTimeToIso(r.clock.anchorFileTime));
  }
  set(L.TR_BUFFERS, r.buffers >>> 0);
  set(L.TR_BUFFERS_CORRUPT, (r.diagnostics.buffersCorrupt ?? 0) >>> 0);
  set(L.TR_EVENTS, BigInt(r.events));
  set(L.TR_DATA_LOSS, r.dataLoss);
  set(L.TR_DECODER, `etw-decode ${VERSION}`);
  (columns[validColumnOf('traces')] as Uint32Array)[0] = (valid | (1 << validColumnOf('traces'))) >>> 0;
  return new Table('traces', { length: 1, columns });
}
