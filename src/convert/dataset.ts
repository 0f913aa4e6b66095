// Where a conversion writes (README § Datasets): one dataset for many traces,
//   DIR/<table>/trace=<id>/part-<n>.<ext>   (Hive-style partitions: engines add a `trace` column)
//   DIR/traces/trace=<id>/part-0.<ext>      (one row per trace; moved in last of the tables)
//   DIR/<id>.perfetto-trace                 (--to perfetto: one timeline per trace)
//   DIR/.manifests/<id>.json                (what is in the dataset for the trace: format × table × options)
// A trace is written under DIR/.staging first (runs.ts) and moved into place table by table; its manifest
// says which tables of which format, written with which options, are complete — a re-run writes what was
// asked and is not there, whatever else is.
import { createHash } from 'node:crypto';
import { mkdir, open, readFile, rename, rm, stat } from 'node:fs/promises';
import { basename, extname, join } from 'node:path';
import type { TableName } from '../tables/schema.js';
import type { ConvertFormat } from './format-names.js';
import { makeStaging, ownedName, STAGING } from './runs.js';

export { STAGING };
export const MANIFESTS = '.manifests';

const MIB = 1 << 20;

/** A trace file's content: its size and the SHA-256 of all its bytes (hex). */
export interface TraceContent {
  size: number;
  sha256: string;
}

/**
 * The SHA-256 of the whole file, read 1 MiB at a time (about 0.8 GB/s on one core with the SHA
 * instructions of current x86 and ARM CPUs: about 2 % of converting the file to Parquet). A content hash,
 * not a sample: a copy that is still being written (same size, zeros or old bytes anywhere) is another trace.
 */
export async function contentOf(path: string): Promise<TraceContent> {
  const fh = await open(path, 'r');
  try {
    const hash = createHash('sha256');
    const buf = new Uint8Array(MIB);
    let size = 0;
    for (;;) {
      const { bytesRead } = await fh.read(buf, 0, buf.length, size);
      if (bytesRead === 0) break;
      hash.update(buf.subarray(0, bytesRead));
      size += bytesRead;
    }
    return { size, sha256: hash.digest('hex') };
  } finally {
    await fh.close();
  }
}

/**
 * The trace's id: its file name (letters, digits, `.`, `_`, `-` kept) and the first 8 hex digits of its
 * SHA-256, so the same trace gets the same id from any path, and a trace that differs in any byte
 * (another trace of the same name, a partial copy) gets another.
 */
export function traceId(path: string, content: TraceContent): string {
  const stem = basename(path, extname(path)).replace(/[^A-Za-z0-9._-]+/g, '_').replace(/^[._]+/, '').slice(0, 80) || 'trace';
  return `${stem}-${content.sha256.slice(0, 8)}`;
}

/**
 * A cheap key under which two files can only be the same trace if they share it: size, first and last
 * MiB. null for what is not a regular file (looked at with stat: opening a FIFO would wait for a writer).
 */
export async function quickKey(path: string): Promise<string | null> {
  const st = await stat(path).catch(() => null);
  if (!st?.isFile()) return null;
  const fh = await open(path, 'r');
  try {
    const hash = createHash('sha256').update(String(st.size));
    const buf = new Uint8Array(Math.min(st.size, MIB));
    for (const at of st.size > MIB ? [0, st.size - MIB] : [0]) {
      const { bytesRead } = await fh.read(buf, 0, buf.length, at);
      hash.update(buf.subarray(0, bytesRead));
    }
    return hash.digest('hex');
  } finally {
    await fh.close();
  }
}

export function partitionDir(root: string, table: string, id: string): string {
  return join(root, table, `trace=${id}`);
}

export function partFile(n: number, ext: string): string {
  return `part-${n}.${ext}`;
}

export function perfettoFile(root: string, id: string): string {
  return join(root, `${id}.perfetto-trace`);
}

/** What a conversion was asked for, per output: the options that change the files written. */
export interface OutputOptions {
  /** `<col>Name` columns (dataset formats) */
  names?: boolean;
  /** the bias override, null for the build's */
  bias: number | null;
  /** rows per part file (dataset formats) */
  partRows?: number;
  /** the selection the rows were kept by (select/selection.ts selectionKey), absent for the whole trace */
  selection?: string;
}

/** One complete output of a trace in the dataset: a table of a dataset format, or the Perfetto timeline. */
export interface OutputRecord {
  options: OutputOptions;
  files: number;
  rows: number;
}

/** The output of --to perfetto in a manifest (it has no tables). */
export const TIMELINE = 'timeline';
export type OutputName = TableName | typeof TIMELINE;

export interface Manifest {
  version: 1;
  id: string;
  size: number;
  sha256: string;
  outputs: Partial<Record<ConvertFormat, Partial<Record<OutputName, OutputRecord>>>>;
}

function manifestPath(root: string, id: string): string {
  return join(root, MANIFESTS, `${id}.json`);
}

/** The manifest of trace `id` in the dataset, or null (none yet, or written by a version before manifests). */
export async function readManifest(root: string, id: string): Promise<Manifest | null> {
  const text = await readFile(manifestPath(root, id), 'utf8').catch(() => null);
  if (text === null) return null;
  try {
    const m = JSON.parse(text) as Manifest;
    return m.version === 1 && m.id === id && typeof m.sha256 === 'string' && typeof m.outputs === 'object' && m.outputs !== null ? m : null;
  } catch {
    return null; // unreadable: as if absent (everything asked is written again)
  }
}

/** Replaces the manifest at once (written under .staging, then renamed: readers see the old or the new one). */
export async function writeManifest(root: string, m: Manifest): Promise<void> {
  await mkdir(join(root, MANIFESTS), { recursive: true });
  await makeStaging(root);
  const temp = join(root, STAGING, ownedName(m.id) + '.manifest');
  try {
    await writeFileAll(temp, JSON.stringify(m, null, 1) + '\n');
    await rename(temp, manifestPath(root, m.id));
  } finally {
    await rm(temp, { force: true });
  }
}

async function writeFileAll(path: string, text: string): Promise<void> {
  const fh = await open(path, 'wx');
  try {
    await fh.writeFile(text);
  } finally {
    await fh.close();
  }
}

function sameOptions(a: OutputOptions, b: OutputOptions): boolean {
  return a.names === b.names && a.bias === b.bias && a.partRows === b.partRows && (a.selection ?? null) === (b.selection ?? null);
}

/** True when `output` of `format` is in the dataset as the manifest says, with these options, every file present. */
export async function isPresent(root: string, m: Manifest | null, format: ConvertFormat, output: OutputName, options: OutputOptions): Promise<boolean> {
  const r = m?.outputs[format]?.[output];
  if (!r || !sameOptions(r.options, options)) return false;
  const paths =
    output === TIMELINE
      ? [perfettoFile(root, m!.id)]
      : Array.from({ length: r.files }, (_, n) => join(partitionDir(root, output, m!.id), partFile(n, format)));
  for (const p of paths) if (!(await stat(p).catch(() => null))?.isFile()) return false;
  return true;
}
