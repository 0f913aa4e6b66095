// Human-readable rendering of a TraceSummary (the CLI's `summary` without --json) and of why a table came
// out empty. What was lost, in words, is data of the result (src/result/data-loss.ts): used here, not made here.
import type { TraceSummary } from '../result/summary.js';
import { SUMMARY_TABLE_NAMES, type TableName } from '../tables/schema.js';
import type { Clock } from '../time.js';
import { COUNTERS, dataLossText } from '../result/diagnostics.js';
import { hex } from '../errors.js';
import { TABLES } from '../generated/registry.js';

/** JSON.stringify replacer: bigint → decimal string (exact). */
export function jsonReplacer(_key: string, value: unknown): unknown {
  return typeof value === 'bigint' ? value.toString() : value;
}

function fileTimeText(ft: bigint): string {
  const ms = Number((ft - 116444736000000000n) / 10000n);
  const d = new Date(ms);
  return Number.isNaN(d.getTime()) ? String(ft) : d.toISOString();
}

/** True when the trace's kernel group masks are known and show one of `table`'s kernel flags on; null when unknown. */
function kernelFlagOn(table: TableName, s: TraceSummary): boolean | null {
  const masks = s.trace?.groupMasks?.masks;
  if (!masks) return null;
  return TABLES[table].kernelFlags.some((f) => ((masks[f.groupMask >>> 29] ?? 0) & f.groupMask & 0x1fffffff) !== 0);
}

/**
 * Why a table came out empty, naming the kernel flag that records its events (schema/tables.mjs
 * `kernelFlags`) and, when the trace's group masks tell (docs/format.md §A.9), whether it was on.
 */
export function emptyTableText(table: TableName, s: TraceSummary): string {
  const flags = `kernel flag ${TABLES[table].kernelFlags.map((f) => f.name).join(' or ')}`;
  const on = kernelFlagOn(table, s);
  const why = on === null ? `they are recorded with the ${flags}` : on ? `although the ${flags} was on` : `the ${flags} was off`;
  const what = dataLossText(s.diagnostics) === null ? 'no events for this table' : 'no events for this table that could be decoded';
  return `no ${table} rows: the trace has ${what} (${why})`;
}

export function renderSummary(file: string, s: TraceSummary, clock: Clock | null): string {
  const lines: string[] = [];
  const t = s.trace;
  lines.push(`${file}: ${s.fileSize} bytes, ${s.buffers} buffers, ${s.events} events (engine: ${s.engine})`);
  const cut = s.issues.find((i) => i.counter === 'buffersTruncated');
  if (cut) lines.push(`truncated ETL file: the input ends inside the buffer at ${cut.at} (${cut.detail} bytes missing); what precedes the cut is decoded`);
  if (t) {
    lines.push(
      `trace: Windows ${t.osVersion} build ${t.build}, ${t.numberOfProcessors} processors, pointer size ${t.pointerSize}, layout ${t.layoutVersion}`,
      `clock: ${t.clockName} (type ${t.clockType}), PerfFreq ${t.perfFreq}, CPU ${t.cpuSpeedInMHz} MHz, timer resolution ${t.timerResolution} x 100 ns`,
      `time: start ${fileTimeText(t.startTime)}, end ${fileTimeText(t.endTime)}, boot ${fileTimeText(t.bootTime)}`,
      `logger: ${t.loggerName || '-'}  file: ${t.logFileName || '-'}`,
      `lost: ${t.eventsLost} events, ${t.buffersLost} buffers (logfile header)`,
    );
    if (t.groupMasks) {
      const g = t.groupMasks;
      const on = [g.contextSwitch && 'CSWITCH', g.compactContextSwitch && 'COMPACT_CSWITCH', g.dispatcher && 'DISPATCHER', g.spinLock && 'SPINLOCK'].filter(Boolean);
      lines.push(`kernel flags: ${on.length ? on.join(' ') : '(none of CSWITCH/COMPACT_CSWITCH/DISPATCHER/SPINLOCK)'}; masks ${g.masks.map((m) => hex(m, 8)).join(' ')}`);
    }
  } else {
    lines.push('trace: no logfile header event found');
  }
  if (clock === null && t) lines.push('note: timestamps stay raw ticks (no conversion for this clock type)');
  for (const t of SUMMARY_TABLE_NAMES) if (t !== 'traces') lines.push(`${t} rows: ${s[t]}`);
  lines.push(
    `  cswitch rows from ${s.diagnostics['cswitchDecoded']} CSwitch events and ${s.compact.batches} compact batches: ` +
      `${s.compact.packets.idleShort} IDLE_SHORT, ${s.compact.packets.idle} IDLE, ${s.compact.packets.lite} LITE, ${s.compact.packets.full} FULL packets`,
    `compact bias (MaximumWaitReason): ${s.bias.value} from ${s.bias.source}${s.bias.certain ? '' : ' (uncertain for this build: check compactStateOutOfRange)'}`,
    '',
    'events by kind:',
  );
  for (const k of s.eventsByKind.slice(0, 25)) {
    const id =
      k.hookId !== undefined
        ? `${hex(k.hookId, 4)}${k.name ? ' ' + k.name : ''}`
        : k.provider !== undefined
          ? `${k.provider} ${k.eventId !== undefined ? 'id=' + k.eventId : 'type=' + k.eventType}`
          : k.messageNumber !== undefined
            ? `message ${k.messageNumber}`
            : '';
    lines.push(`  ${String(k.count).padStart(9)}  ${k.headerType.padEnd(15)} ${id} v${k.version}`);
  }
  if (s.eventsByKind.length > 25) lines.push(`  … ${s.eventsByKind.length - 25} more kinds (use --json)`);
  lines.push('', 'diagnostics:');
  const lost = dataLossText(s.diagnostics);
  if (lost) lines.push(`  data lost: ${lost}`);
  for (const spec of COUNTERS) {
    const v = s.diagnostics[spec.name] ?? 0;
    if (v !== 0 && spec.severity !== 'info') lines.push(`  ${spec.name}: ${v} (${spec.severity}) — ${spec.description}`);
  }
  if (!lost && !COUNTERS.some((c) => c.severity !== 'info' && (s.diagnostics[c.name] ?? 0) !== 0)) lines.push('  no problems found');
  for (const i of s.issues.slice(0, 20)) lines.push(`  at ${i.at}: ${i.counter}: ${i.message}`);
  if (s.issues.length > 20) lines.push(`  … ${s.issues.length - 20} more issues (use --json)`);
  return lines.join('\n') + '\n';
}
