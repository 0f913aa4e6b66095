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
