// `etw-decode cpu FILE --sampled`: WPA's CPU Usage (Sampled) — the SampledProfile events by process, thread,
// module or address (module!offset) (src/analysis/samples.ts), as JSON or an aligned table; with --pprof,
// a gzipped pprof profile of them instead (output/pprof.ts). Loaded by cpu.ts only when --sampled is given.
import type { SampledAnalysis, SampledGroup } from '../analysis/samples.js';
import { selectionText } from '../select/selection.js';
import { streamFile } from '../decode/files.js';
import { decodedTablesFor } from '../tables/sources.js';
import { concatChunks, type ColumnChunk } from '../tables/schema.js';
import { Table } from '../tables/table.js';
import { emptyTableText, jsonReplacer } from '../output/summary-text.js';
import { alignedTable } from './cpu-text.js';
import { note, stdoutOutput, writeWhole } from './io.js';
import { decodeOptions, type DecodingOpts, type SelectionOpts } from './options.js';

/**
 * `cpu --sampled`: WPA's CPU Usage (Sampled) — the SampledProfile events by process, thread or module
 * (src/analysis/samples.ts), from the samples table and the thread, process and image lifetimes and the lifetimes of the whole decode.
 */
export async function sampled(inp: { path: string; name: string }, file: string, o: DecodingOpts & SelectionOpts & { by: SampledBy; top: number; json?: boolean; pprof?: string }): Promise<void> {
  const [{ commandSelection }, { analyzeSamples }] = await Promise.all([import('./selection.js'), import('../analysis/samples.js')]);
  const selection = await commandSelection(inp.path, inp.name, o, decodeOptions(o), true);
  const chunks = { samples: [] as ColumnChunk[], sampleIntervals: [] as ColumnChunk[], stackEvents: [] as ColumnChunk[], stackEventFrames: [] as ColumnChunk[] };
  const stacked = o.pprof !== undefined; // the profile's samples get their stacks
  const res = await streamFile(inp.path, {
    ...decodeOptions(o),
    rows: 'copy', // kept until the end: the image and thread lifetimes must be complete to resolve a sample
    tables: decodedTablesFor(['samples', 'sampleIntervals', 'stackEvents', 'stackEventFrames', 'threads', 'processes', 'images']),
    onRows: (rows) => {
      if (rows.samples.length) chunks.samples.push(rows.samples);
      if (rows.sampleIntervals.length) chunks.sampleIntervals.push(rows.sampleIntervals);
      if (stacked && rows.stackEvents.length) chunks.stackEvents.push(rows.stackEvents);
      if (stacked && rows.stackEventFrames.length) chunks.stackEventFrames.push(rows.stackEventFrames);
    },
  });
  const samples = new Table('samples', concatChunks('samples', chunks.samples.splice(0)));
  const sampleIntervals = new Table('sampleIntervals', concatChunks('sampleIntervals', chunks.sampleIntervals.splice(0)));
  const tables = { samples, images: res.images, sampleIntervals, threads: res.threads, processes: res.processes, clock: res.clock };
  if (o.pprof !== undefined) {
    const [{ samplesToPprof }, { gzipSync }, { VERSION }] = await Promise.all([import('../output/pprof.js'), import('node:zlib'), import('../version.js')]);
    const comment = `etw-decode ${VERSION}: SampledProfile of ${inp.name}, with their stacks where the trace has them; frames are module!0xoffset (no symbols)`;
    const stacks = {
      stackEvents: new Table('stackEvents', concatChunks('stackEvents', chunks.stackEvents.splice(0))),
      stackEventFrames: new Table('stackEventFrames', concatChunks('stackEventFrames', chunks.stackEventFrames.splice(0))),
    };
    const profile = gzipSync(samplesToPprof(tables, { selection: selection ?? undefined, comment, stacks }));
    await writeWhole(o.pprof, profile);
    if (res.summary.samples === 0) note(emptyTableText('samples', res.summary));
    else if (sampleIntervals.length === 0) note('the trace has no sample-interval event (SampledProfileInterval): the profile has sample counts only, no CPU time');
    return;
  }
  const a = analyzeSamples(tables, { selection: selection ?? undefined });
  const list = groupsBy(a, o.by);
  const out = stdoutOutput();
  if (o.json) await out.write(JSON.stringify({ file, by: o.by, samples: a.samples, weight: a.weight, cpuMs: a.cpuMs, intervalsMs: a.intervalsMs, unresolvedProcess: a.unresolvedProcess, unresolvedModule: a.unresolvedModule, selection: a.selection, rows: o.top ? list.slice(0, o.top) : list }, jsonReplacer, 2) + '\n');
  else await out.write(renderSamples(inp.name, a, o.by, o.top));
  await out.commit();
  if (res.summary.samples === 0) note(emptyTableText('samples', res.summary));
}

export type SampledBy = 'process' | 'thread' | 'module' | 'address';

function groupsBy(a: SampledAnalysis, by: SampledBy): SampledGroup[] {
  return by === 'thread' ? a.byThread : by === 'module' ? a.byModule : by === 'address' ? a.byAddress : a.byProcess;
}

/** The text of `cpu --sampled`: one line on the samples, then the groups of `by` (first `top`; 0 = all). */
export function renderSamples(file: string, a: SampledAnalysis, by: SampledBy, top: number): string {
  const timed = a.cpuMs !== null;
  const lines = [
    `${file}: CPU usage by ${by} (CPU Usage (Sampled)): ${a.samples} samples, weight ${a.weight}` +
      (timed ? `, CPU time ${a.cpuMs!.toFixed(3)} ms (interval ${a.intervalsMs.map((v) => `${v} ms`).join(', then ')})` : ''),
  ];
  if (!timed) lines.push('the trace has no sample-interval event (SampledProfileInterval): counts only, no CPU time');
  if (a.selection) lines.push(selectionText(a.selection));
  const list = groupsBy(a, by);
  const shown = top ? list.slice(0, top) : list;
  const name = (g: SampledGroup) => g.imageFileName ?? (g.processId === 0 ? 'Idle' : g.processId === null ? '(unknown)' : '?');
  const counts = ['samples', 'weight', ...(timed ? ['cpu ms'] : []), '%'];
  const header = by === 'module' ? ['module', ...counts] : by === 'address' ? ['address', ...counts] : by === 'thread' ? ['process', 'pid', 'tid', ...counts] : ['process', 'pid', ...counts];
  const rows = shown.map((g) => {
    const tail = [String(g.samples), String(g.weight), ...(timed ? [g.cpuMs!.toFixed(3)] : []), g.percent.toFixed(1)];
    if (by === 'module') return [g.module ?? '(no image)', ...tail];
    if (by === 'address') return [g.address!, ...tail];
    const pid = g.processId === null ? '-' : String(g.processId);
    return by === 'thread' ? [name(g), pid, String(g.threadId), ...tail] : [name(g), pid, ...tail];
  });
  lines.push(...alignedTable(header, rows, new Set([0])));
  if (list.length > shown.length) lines.push(`… ${list.length - shown.length} more (--top 0 shows all)`);
  if (a.unresolvedProcess || a.unresolvedModule) lines.push(`${a.unresolvedProcess} samples of threads whose process is unknown; ${a.unresolvedModule} in no image of their process`);
  return lines.join('\n') + '\n';
}
