// Converts one trace file into a dataset (dataset.ts) or a Perfetto timeline: under the trace's lock
// (runs.ts), looks at its manifest for what was asked and is not there, decodes the file streaming (after
// a first pass over its stack tables when rows with a stackId or the stack tables are asked: stack-pass.ts),
// copies each of those tables' rows (borrowed from the decoder) up to one part (partRows: parts.ts), hands
// the part sorted by (cpu, time) to the part writers (part-writers.ts: this thread, or worker threads that
// encode while the decode goes on),
// moves the finished outputs into place and records them. Memory: at most partRows rows per table
// buffered (plus one decode chunk), the parts the writers hold, and the derivations' state (cpuUsage and
// threadStates are streamed: bounded by threads, CPUs and their reorder windows) — for a Perfetto timeline,
// also the samples and stack events, written at the end.
import { mkdir, readdir, rename, rm, rmdir, stat } from 'node:fs/promises';
import { availableParallelism } from 'node:os';
import { join, resolve } from 'node:path';
import { CpuUsageDeriver } from '../analysis/cpu.js';
import { ThreadStatesDeriver } from '../derive/thread-states.js';
import { needsStackPass, stackPass } from './stack-pass.js';
import { resolveSelection, selectionKey, type SelectionOptions } from '../select/selection.js';
import { selectTable } from '../select/tables.js';
import { PerfettoWriter } from '../output/perfetto.js';
import { readTraceInfo, streamFile } from '../decode/files.js';
import type { DecodeOptions } from '../options.js';
import { concatChunks, DECODED_TABLE_NAMES, TABLE_NAMES, type ColumnChunk, type TableName, type TypedColumn } from '../tables/schema.js';
import { dataLossText } from '../result/diagnostics.js';
import { Table } from '../tables/table.js';
import { decodedTablesFor } from '../tables/sources.js';
import { createClock, clockUnavailable, type Clock } from '../time.js';
import { EtlError, writeError } from '../errors.js';
import {
  contentOf,
  isPresent,
  partitionDir,
  perfettoFile,
  readManifest,
  STAGING,
  TIMELINE,
  traceId,
  writeManifest,
  type Manifest,
  type OutputName,
  type OutputOptions,
  type TraceContent,
} from './dataset.js';
import { ownedName, removeDeadRuns, TraceLock } from './runs.js';
import { datasetWriter, FileSink, type ConvertFormat } from './formats.js';
import { inThreadParts, partWorkersAvailable, workerParts, type PartWriters } from './part-writers.js';
import { refuseReplacingInput } from './inputs.js';
import { finishParts, Parts } from './parts.js';

export interface ConvertOptions {
  to: ConvertFormat;
  outDir: string;
  /** tables to write (default: all); ignored for perfetto */
  tables?: readonly TableName[];
  /** rows per part file (default 1,048,576: one Parquet row group) */
  partRows?: number;
  /** convert again when the trace is in the dataset already */
  force?: boolean;
  /** add `<column>Name` columns for enumerations */
  names?: boolean;
  engine?: DecodeOptions['engine'];
  bias?: number;
  /** decoding threads for this one file (default: all cores; the pool gives 1 when it converts files side by side) */
  decodeThreads?: number;
  /** worker threads that write the part files while this thread decodes (default: see defaultPartWorkers; 0: written in this thread) */
  partWorkers?: number;
  /** bytes of the file decoded so far */
  onProgress?: (done: number, total: number) => void;
  /** only these times, processes and threads (src/select, docs/selection.md) */
  selection?: SelectionOptions;
}

export interface ConvertResult {
  id: string;
  source: string;
  status: 'converted' | 'skipped';
  /** rows written per table */
  rows: Partial<Record<TableName, number>>;
  files: number;
  bytes: number;
  /** what could not be decoded (as `summary` says it), or null */
  dataLoss: string | null;
  /** skipped because it is the same trace as this file, given earlier in the same run */
  sameAs?: string;
}

export const DEFAULT_PART_ROWS = 1 << 20;

function clockOfInfo(info: Awaited<ReturnType<typeof readTraceInfo>>): Clock | null {
  return info && clockUnavailable(info) === null ? createClock(info) : null;
}

/** Converts one trace file; throws EtlError when it cannot be read or written (nothing is left behind then). */
export async function convertFile(path: string, options: ConvertOptions): Promise<ConvertResult> {
  const source = resolve(path);
  const info = await readTraceInfo(source); // the one clear error for a file that is not a trace, before any output
  const content = await contentOf(source).catch((e: unknown) => {
    throw new EtlError('READ_FAILED', `cannot read ${source}: ${(e as Error).message}`);
  });
  const id = traceId(source, content);
  const out = resolve(options.outDir);
  const format = options.to;
  try {
    await removeDeadRuns(out);
    const lock = await TraceLock.acquire(out, id);
    try {
      return await convertLocked(source, id, content, out, info, options);
    } finally {
      await lock.release();
      await rmdir(join(out, STAGING)).catch(() => {}); // only when empty (other runs may be using it)
    }
  } catch (e) {
    throw writeError(`writing trace=${id} (${format}) into ${out}`, e);
  }
}

/** The outputs asked for and the options each is asked with. */
function askedOutputs(options: ConvertOptions): Map<OutputName, OutputOptions> {
  const bias = options.bias ?? null;
  const key = selectionKey(options.selection);
  const selection = key === null ? {} : { selection: key };
  if (options.to === 'perfetto') return new Map([[TIMELINE, { bias, ...selection }]]);
  const o: OutputOptions = { names: options.names ?? false, bias, partRows: options.partRows ?? DEFAULT_PART_ROWS, ...selection };
  return new Map(TABLE_NAMES.filter((t) => !options.tables || options.tables.includes(t)).map((t) => [t, o]));
}

/** Under the trace's lock: writes what was asked and is not in the dataset, then records it in the manifest. */
async function convertLocked(
  source: string,
  id: string,
  content: TraceContent,
  out: string,
  info: Awaited<ReturnType<typeof readTraceInfo>>,
  options: ConvertOptions,
): Promise<ConvertResult> {
  const format = options.to;
  const manifest: Manifest = (await readManifest(out, id)) ?? { version: 1, id, size: content.size, sha256: content.sha256, outputs: {} };
  if (manifest.sha256 !== content.sha256) {
    throw new EtlError(
      'WRITE_FAILED',
      `trace=${id} in ${out} is another trace (SHA-256 ${manifest.sha256.slice(0, 16)}…, this file ${content.sha256.slice(0, 16)}…) with the same name and hash prefix: rename the file or convert it into another dataset`,
    );
  }
  const asked = askedOutputs(options);
  const todo = new Map<OutputName, OutputOptions>();
  for (const [name, o] of asked) if (options.force || !(await isPresent(out, manifest, format, name, o))) todo.set(name, o);
  if (todo.size === 0) return { id, source, status: 'skipped', rows: {}, files: 0, bytes: 0, dataLoss: null };

  await refuseReplacingInput(source, [...todo.keys()].map((name) => (name === TIMELINE ? perfettoFile(out, id) : partitionDir(out, name as TableName, id))));
  const staging = join(out, STAGING, ownedName(id));
  await mkdir(staging, { recursive: true });
  try {
    let result: ConvertResult;
    if (format === 'perfetto') result = await convertToPerfetto(source, id, join(staging, 'timeline'), info, options);
    else result = await convertToDataset(source, id, staging, info, { ...options, to: format, tables: [...todo.keys()] as TableName[] });
    // what is replaced leaves the manifest before its files move: an interruption while moving leaves
    // outputs the manifest does not claim, which the next run writes again
    const records = (manifest.outputs[format] ??= {});
    for (const name of todo.keys()) delete records[name];
    await writeManifest(out, manifest);
    if (format === 'perfetto') {
      await rename(join(staging, 'timeline'), perfettoFile(out, id));
      records[TIMELINE] = { options: todo.get(TIMELINE)!, files: 1, rows: result.rows.cswitch ?? 0 };
    } else {
      // table by table, the traces row last (engines see a trace's row once its tables are in place)
      const tables = [...todo.keys()] as TableName[];
      for (const t of [...tables.filter((t) => t !== 'traces'), ...tables.filter((t) => t === 'traces')]) {
        const files = await moveParts(partitionDir(staging, t, id), partitionDir(out, t, id), format);
        records[t] = { options: todo.get(t)!, files, rows: result.rows[t] ?? 0 };
      }
    }
    await writeManifest(out, manifest);
    return result;
  } finally {
    await rm(staging, { recursive: true, force: true });
  }
}

/**
 * Moves the part files of one table from staging into its partition, replacing the partition's files of
 * this format (a re-conversion may have fewer parts); files of other formats stay. Returns the parts moved.
 */
async function moveParts(from: string, to: string, ext: string): Promise<number> {
  const parts = (await readdir(from)).filter((f) => f.startsWith('part-') && f.endsWith('.' + ext));
  await mkdir(to, { recursive: true });
  for (const f of await readdir(to)) if (f.startsWith('part-') && f.endsWith('.' + ext)) await rm(join(to, f), { force: true });
  for (const f of parts) await rename(join(from, f), join(to, f));
  return parts.length;
}

/**
 * One Perfetto timeline (CPU tracks with thread states, wake-ups, process and thread names, callstack
 * samples) per trace. Switches and ReadyThread events are written chunk by chunk; the samples and stack
 * events are kept (copied: the rows are borrowed) and written at the end, when the image and thread
 * lifetimes are complete and the stacks can be resolved (PerfettoWriter.samples).
 */
async function convertToPerfetto(
  source: string,
  id: string,
  file: string,
  info: Awaited<ReturnType<typeof readTraceInfo>>,
  options: ConvertOptions,
): Promise<ConvertResult> {
  const pick = await picker(source, info, options);
  const sink = await FileSink.create(file);
  let res: Awaited<ReturnType<typeof streamFile>>;
  try {
    const writer = new PerfettoWriter(sink.write, { clock: clockOfInfo(info) });
    const kept = { samples: [] as ColumnChunk[], stackEvents: [] as ColumnChunk[], stackEventFrames: [] as ColumnChunk[] };
    res = await streamFile(source, {
      engine: options.engine,
      bias: options.bias,
      threads: options.decodeThreads,
      rows: 'borrow', // each chunk is encoded before onRows returns
      onProgress: options.onProgress ? (phase, done, total) => phase === 'decode' && options.onProgress!(done, total) : undefined,
      onRows: async (rows) => {
        await writer.readyThread(pick(rows.readythread));
        await writer.cswitch(pick(rows.cswitch));
        const samples = pick(rows.samples);
        if (samples.length) kept.samples.push(ownedChunk(samples));
        if (rows.stackEvents.length) kept.stackEvents.push(ownedChunk(rows.stackEvents));
        if (rows.stackEventFrames.length) kept.stackEventFrames.push(ownedChunk(rows.stackEventFrames));
      },
    });
    await writer.processTree(res.threads, res.processes);
    const samples = new Table('samples', concatChunks('samples', kept.samples.splice(0)));
    if (samples.length) {
      const stackEvents = new Table('stackEvents', concatChunks('stackEvents', kept.stackEvents.splice(0)));
      const stackEventFrames = new Table('stackEventFrames', concatChunks('stackEventFrames', kept.stackEventFrames.splice(0)));
      await writer.samples({ samples, images: res.images, threads: res.threads, processes: res.processes, stacks: { stackEvents, stackEventFrames } });
    }
    await writer.close();
  } finally {
    await sink.close();
  }
  const bytes = (await stat(file)).size;
  return {
    id,
    source,
    status: 'converted',
    rows: { cswitch: res.summary.cswitch, readythread: res.summary.readythread, samples: res.summary.samples, threads: res.summary.threads, processes: res.summary.processes },
    files: 1,
    bytes,
    dataLoss: dataLossText(res.summary.diagnostics),
  };
}

async function convertToDataset(
  source: string,
  id: string,
  staging: string,
  info: Awaited<ReturnType<typeof readTraceInfo>>,
  options: ConvertOptions,
): Promise<ConvertResult> {
  if (options.to === 'perfetto') throw new EtlError('BAD_OPTION', 'a Perfetto timeline is not a dataset');
  const partRows = options.partRows ?? DEFAULT_PART_ROWS;
  const pick = await picker(source, info, options);
  const o = options as ConvertOptions & { to: Exclude<ConvertOptions['to'], 'perfetto'> };
  const format = options.to;
  const workers = options.partWorkers ?? (await defaultPartWorkers(source, options.decodeThreads));
  const names = options.names ?? false;
  const writers =
    workers > 0 && partWorkersAvailable()
      ? workerParts(workers, { format, partRows, names, info })
      : inThreadParts(await datasetWriter(format, partRows), { clock: clockOfInfo(info), names });
  try {
    return await convertParts(source, id, staging, o, pick, writers, partRows, info?.numberOfProcessors ?? 0);
  } finally {
    await writers.close();
  }
}

/**
 * Part workers by default: none when the conversion has one thread (`decodeThreads` 1: the pool converts
 * files side by side) or the file is small (a worker's start and its own Parquet module cost ~0.2 s);
 * else up to two (the encoders then run beside the decode; more would only share the same cores).
 */
async function defaultPartWorkers(source: string, decodeThreads: number | undefined): Promise<number> {
  if (decodeThreads === 1) return 0;
  const cores = Math.max(1, decodeThreads ?? availableParallelism());
  if (cores < 2) return 0;
  const size = (await stat(source)).size;
  return size >= PART_WORKERS_FROM_BYTES ? Math.min(2, cores) : 0;
}

/** Files from this size on are converted with part workers by default. */
const PART_WORKERS_FROM_BYTES = 16 * 2 ** 20;

async function convertParts(
  source: string,
  id: string,
  staging: string,
  options: ConvertOptions & { to: Exclude<ConvertOptions['to'], 'perfetto'> },
  pick: <T extends TableName>(t: Table<T>) => Table<T>,
  writers: PartWriters,
  partRows: number,
  cpus: number,
): Promise<ConvertResult> {
  const ext = options.to;
  const wanted = new Set<TableName>(options.tables ?? TABLE_NAMES);
  const parts = new Map<TableName, Parts>();
  for (const t of TABLE_NAMES) if (wanted.has(t)) parts.set(t, new Parts(t, partitionDir(staging, t, id), writers, ext, partRows));
  const decoded = DECODED_TABLE_NAMES.filter((t) => wanted.has(t));
  const usage = parts.get('cpuUsage');
  // the derivers' chunks are partRows rows: each becomes a part as it is (Parts.adopt, no copy) and its
  // columns come back for a later chunk once written; with a selection, the rows kept are copied
  const derived: Table<'cpuUsage'>[] = [];
  const deriver = usage ? new CpuUsageDeriver((t) => derived.push(t), { engine: options.engine, chunkRows: partRows }) : null;
  // stacks: a first pass over the stack tables, then each chunk's rows get their stackId (stack-pass.ts)
  const stacks = needsStackPass(wanted) ? await stackPass(source, { engine: options.engine, bias: options.bias, threads: options.decodeThreads }, wanted) : null;
  // threadStates: streamed, in the order its intervals end (each CPU in the watermark from the start)
  const stateParts = parts.get('threadStates');
  const states: Table<'threadStates'>[] = [];
  const stateDeriver = stateParts ? new ThreadStatesDeriver((t) => states.push(t), { cpus, engine: options.engine, chunkRows: partRows }) : null;
  const res = await streamFile(source, {
    engine: options.engine,
    bias: options.bias,
    threads: options.decodeThreads,
    rows: 'borrow', // the parts copy each chunk's rows before onRows returns
    tables: decodedTablesFor(wanted), // what the tables asked are made of: nothing else is decoded
    onProgress: options.onProgress ? (phase, done, total) => phase === 'decode' && options.onProgress!(done, total) : undefined,
    onRows: async (rows) => {
      stacks?.fill(rows);
      for (const t of decoded) {
        const kept = pick(rows[t]);
        await parts.get(t)!.add({ length: kept.length, columns: kept.columns });
      }
      if (deriver) {
        deriver.add(rows.cswitch, rows.readythread, rows.threadEvents);
        for (const c of derived.splice(0)) await toPart(usage!, c, pick, (t) => deriver.recycle(t));
      }
      if (stateDeriver) {
        stateDeriver.add(rows.cswitch, rows.readythread, rows.threadEvents);
        for (const c of states.splice(0)) await toPart(stateParts!, c, pick, (t) => stateDeriver.recycle(t));
      }
    },
  });
  if (deriver) {
    deriver.finish();
    for (const c of derived.splice(0)) await toPart(usage!, c, pick, (t) => deriver.recycle(t));
  }
  if (stateDeriver) {
    stateDeriver.finish();
    for (const c of states.splice(0)) await toPart(stateParts!, c, pick, (t) => stateDeriver.recycle(t));
  }
  const ends: Partial<Record<TableName, Table>> = { threads: res.threads, processes: res.processes, images: res.images, traces: res.traces };
  if (stacks && (parts.has('stacks') || parts.has('stackFrames'))) Object.assign(ends, stacks.tables());
  for (const [t, table] of Object.entries(ends) as [TableName, Table][]) {
    const p = parts.get(t);
    const kept = pick(table);
    if (p) await p.add({ length: kept.length, columns: kept.columns });
  }
  await finishParts(parts.values());
  const rows: Partial<Record<TableName, number>> = {};
  let files = 0;
  let bytes = 0;
  for (const [t, p] of parts) {
    rows[t] = p.rows;
    files += p.files;
    bytes += p.bytes;
  }
  return { id, source, status: 'converted', rows, files, bytes, dataLoss: dataLossText(res.summary.diagnostics) };
}


/**
 * What the conversion keeps of a table: the selection's rows (src/select), or every row. The selection's
 * times need the trace's clock, its process and thread filters the lifetimes (a first decode, no rows kept).
 */
async function picker(source: string, info: Awaited<ReturnType<typeof readTraceInfo>>, options: ConvertOptions): Promise<<T extends TableName>(t: Table<T>) => Table<T>> {
  const o = options.selection;
  if (selectionKey(o) === null) return (t) => t;
  const lifetimes = o!.processIds || o!.processNames || o!.threadIds ? await streamFile(source, { engine: options.engine, bias: options.bias, threads: options.decodeThreads }) : undefined;
  const selection = resolveSelection(o!, clockOfInfo(info), lifetimes);
  return (t) => selectTable(t, selection);
}

/** A copy of a table's rows that the caller owns (the rows of a borrowed chunk are reused after onRows). */
function ownedChunk(t: Table<TableName>): ColumnChunk {
  return { length: t.length, columns: t.columns.map((c) => c.slice(0, t.length) as TypedColumn) };
}

/**
 * A deriver's chunk into its table's parts: adopted as it is (its columns given back to the deriver once
 * written), or, with a selection, the rows kept copied and the chunk given back at once.
 */
async function toPart<T extends 'cpuUsage' | 'threadStates'>(
  parts: Parts,
  chunk: Table<T>,
  pick: <U extends TableName>(t: Table<U>) => Table<U>,
  recycle: (t: Table<T>) => void,
): Promise<void> {
  const kept = pick(chunk);
  if (kept !== chunk) {
    await parts.add({ length: kept.length, columns: kept.columns });
    recycle(chunk);
    return;
  }
  await parts.adopt({ length: chunk.length, columns: chunk.columns, textCodes: chunk.textCodes }, (columns) => recycle(new Table(chunk.name, { length: chunk.length, columns: columns as TypedColumn[] })));
}
