// `etw-decode cpu FILE --sampled`: WPA's CPU Usage (Sampled) — the SampledProfile events by process, thread or
// module (src/analysis/samples.ts); loaded by cpu.ts only when --sampled is given.
import { streamFile } from '../decode/files.js';
import { concatChunks, type ColumnChunk } from '../tables/schema.js';
import { Table } from '../tables/table.js';
import { emptyTableText, jsonReplacer } from '../output/summary-text.js';
import { note, stdoutOutput } from './io.js';
import { decodeOptions, type DecodingOpts, type SelectionOpts } from './options.js';

/**
 * `cpu --sampled`: WPA's CPU Usage (Sampled) — the SampledProfile events by process, thread or module
 * (src/analysis/samples.ts), from the samples table and the thread, process and image lifetimes and the lifetimes of the whole decode.
 */
export async function sampled(inp: { path: string; name: string }, file: string, o: DecodingOpts & SelectionOpts & { by: 'process' | 'thread' | 'module'; top: number; json?: boolean }): Promise<void> {
  const [{ commandSelection }, { analyzeSamples }, { renderSamples }] = await Promise.all([import('./selection.js'), import('../analysis/samples.js'), import('./cpu-text.js')]);
  const selection = await commandSelection(inp.path, inp.name, o, decodeOptions(o), true);
  const chunks: ColumnChunk[] = [];
  const res = await streamFile(inp.path, {
    ...decodeOptions(o),
    rows: 'copy', // kept until the end: the image and thread lifetimes must be complete to resolve a sample
    onRows: (rows) => {
      if (rows.samples.length) chunks.push(rows.samples);
    },
  });
  const samples = new Table('samples', concatChunks('samples', chunks.splice(0)));
  const a = analyzeSamples({ samples, images: res.images, threads: res.threads, processes: res.processes, clock: res.clock }, { selection: selection ?? undefined });
  const list = o.by === 'thread' ? a.byThread : o.by === 'module' ? a.byModule : a.byProcess;
  const out = stdoutOutput();
  if (o.json) await out.write(JSON.stringify({ file, by: o.by, samples: a.samples, weight: a.weight, unresolvedProcess: a.unresolvedProcess, unresolvedModule: a.unresolvedModule, selection: a.selection, rows: o.top ? list.slice(0, o.top) : list }, jsonReplacer, 2) + '\n');
  else await out.write(renderSamples(inp.name, a, o.by, o.top));
  await out.commit();
  if (res.summary.samples === 0) note(emptyTableText('samples', res.summary));
}
