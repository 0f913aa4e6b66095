// The diagnostic counters as the library shows them: names, severities, descriptions and issue texts,
// all from the one declaration in schema/stats.mjs (via src/generated/registry.ts; docs/stats.md is
// generated from it too). Modelled on Perfetto's stats table: corruption never aborts a decode, it
// increments a named counter.
import { STATS } from '../generated/registry.js';
import type { IssueLogEntry } from '../engine/engine.js';
import { hex } from '../errors.js';

export type Severity = 'info' | 'dataLoss' | 'error';
export interface CounterSpec {
  readonly id: number;
  readonly name: string;
  readonly severity: Severity;
  readonly description: string;
  /** what the detail value of its issues means, when it is a quantity */
  readonly detail: string | null;
  /** enumerated detail values and their meaning */
  readonly details: readonly (readonly [value: number, meaning: string])[];
}

export const COUNTERS: readonly CounterSpec[] = STATS;

export type DiagnosticCounters = Record<string, number>;

export interface Issue {
  counter: string;
  severity: Severity;
  fileOffset: number;
  /** fileOffset as hex text */
  at: string;
  /** the detail value: a listed one as declared (signed: XPRESS errors are negative), else the engine's u32 */
  detail: number;
  message: string;
}

export function describeIssue(e: IssueLogEntry): Issue {
  const spec = COUNTERS[e.code]!;
  // details are i32 in the declaration and u32 in the engines' log
  const listed = spec.details.find(([value]) => value === (e.detail | 0) || value === e.detail);
  const message = listed
    ? listed[1]
    : spec.detail
      ? `${spec.description} (${spec.detail}: ${e.detail})`
      : `${spec.description} (detail ${e.detail})`;
  return { counter: spec.name, severity: spec.severity, fileOffset: e.fileOffset, at: hex(e.fileOffset), detail: listed ? listed[0] : e.detail, message };
}

export function namedCounters(values: readonly number[]): DiagnosticCounters {
  const out: DiagnosticCounters = {};
  for (const s of COUNTERS) out[s.name] = values[s.id] ?? 0;
  return out;
}

// What a decode lost, in words ("3 corrupt buffers skipped, 1912 events not decoded"): part of the result, not of
// its rendering — the `traces` table carries it as its dataLoss column, and the CLI, the converter and the page
// print the same words.

const plural = (n: number, one: string, many: string): string => `${n} ${n === 1 ? one : many}`;

/**
 * What was lost, in words, one phrase per group of 'dataLoss' counters (docs/stats.md) plus the losses the
 * logfile header reports. A 'dataLoss' counter that no group names is listed by name, so none goes unsaid.
 */
export const DATA_LOSS_PHRASES: readonly {
  /** summed into n */
  counters: readonly string[];
  /** counted along with the above, so said by the same phrase */
  covers?: readonly string[];
  phrase: (n: number) => string;
}[] = [
  { counters: ['buffersCorrupt'], phrase: (n) => `${plural(n, 'corrupt buffer', 'corrupt buffers')} skipped` },
  { counters: ['buffersTruncated'], phrase: (n) => `${plural(n, 'buffer', 'buffers')} cut short by the end of the file` },
  { counters: ['buffersCompressedUndecoded'], phrase: (n) => `${plural(n, 'compressed buffer', 'compressed buffers')} not decompressed` },
  {
    counters: ['buffersCompressedRefused'],
    phrase: (n) => `${plural(n, 'compressed buffer', 'compressed buffers')} refused (claiming more than 77 times their size)`,
  },
  { counters: ['compressedTrailingData'], phrase: (n) => `${plural(n, 'compressed buffer', 'compressed buffers')} with bytes after their stream not decoded` },
  // every truncated walk stops at one bad event: eventsBadMarker + eventsBadSize = buffersTruncatedWalk
  {
    counters: ['buffersTruncatedWalk'],
    covers: ['eventsBadMarker', 'eventsBadSize'],
    phrase: (n) => `${plural(n, 'buffer', 'buffers')} cut short by an invalid event`,
  },
  {
    // every decoder's skipped events (unknown version, too short): one phrase for all tables
    counters: COUNTERS.filter((c) => /Skipped(Version|Short)$/.test(c.name)).map((c) => c.name),
    phrase: (n) => `${plural(n, 'event', 'events')} not decoded`,
  },
  { counters: ['compactTruncatedPacket'], phrase: (n) => `${plural(n, 'compact packet', 'compact packets')} cut short` },
  { counters: ['compactTimeOverflow'], phrase: (n) => `${plural(n, 'compact switch', 'compact switches')} dropped (time past the 64-bit range)` },
  { counters: ['bytesAbandoned', 'resyncBytes', 'truncatedTailBytes'], phrase: (n) => `${plural(n, 'byte', 'bytes')} skipped` },
  { counters: ['buffersWithEventsLostFlag'], phrase: (n) => `${plural(n, 'buffer', 'buffers')} flagged EVENTS_LOST` },
  { counters: ['buffersWithBufferLostFlag'], phrase: (n) => `${plural(n, 'buffer', 'buffers')} flagged BUFFER_LOST` },
  { counters: ['logfileEventsLost'], phrase: (n) => `${plural(n, 'event', 'events')} lost by the logger` },
  { counters: ['logfileBuffersLost'], phrase: (n) => `${plural(n, 'buffer', 'buffers')} lost by the logger` },
];

/** "3 corrupt buffers skipped, 1912 events not decoded", or null when no data was lost. */
export function dataLossText(d: DiagnosticCounters): string | null {
  const parts: string[] = [];
  const said = new Set<string>();
  for (const g of DATA_LOSS_PHRASES) {
    const n = g.counters.reduce((sum, c) => sum + (d[c] ?? 0), 0);
    for (const c of [...g.counters, ...(g.covers ?? [])]) said.add(c);
    if (n > 0) parts.push(g.phrase(n));
  }
  for (const c of COUNTERS) if (c.severity === 'dataLoss' && !said.has(c.name) && (d[c.name] ?? 0) > 0) parts.push(`${c.name} ${d[c.name]}`);
  return parts.length ? parts.join(', ') : null;
}
