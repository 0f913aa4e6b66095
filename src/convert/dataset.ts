// Where a conversion writes (README § Datasets): one dataset for many traces,
//   DIR/<table>/trace=<id>/part-<n>.<ext>   (Hive-style partitions: engines add a `trace` column)
//   DIR/traces/trace=<id>/part-0.<ext>      (one row per trace; written last: it marks the trace done)
//   DIR/<id>.perfetto-trace                 (--to perfetto: one timeline per trace)
// A trace is written under DIR/.staging first and moved into place table by table, the traces row last,
// so an interrupted run leaves no half trace that a re-run would mistake for a finished one.
import { createHash } from 'node:crypto';
import { open, readdir, stat } from 'node:fs/promises';
import { basename, extname, join } from 'node:path';

export const STAGING = '.staging';

/**
 * The trace's id: its file name (letters, digits, `.`, `_`, `-` kept) and 8 hex digits of a hash of
 * its size and first MiB (the logfile header with its start time), so the same trace gets the same id
 * from any path and two traces with one file name do not collide.
 */
export async function traceIdOf(path: string): Promise<string> {
  const fh = await open(path, 'r');
  try {
    const size = (await fh.stat()).size;
    const head = new Uint8Array(Math.min(size, 1 << 20));
    const { bytesRead } = await fh.read(head, 0, head.length, 0);
    const hash = createHash('sha256').update(String(size)).update(head.subarray(0, bytesRead)).digest('hex').slice(0, 8);
    const stem = basename(path, extname(path)).replace(/[^A-Za-z0-9._-]+/g, '_').replace(/^[._]+/, '').slice(0, 80) || 'trace';
    return `${stem}-${hash}`;
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

/** True when a finished conversion of trace `id` is in `root` (its traces row, or its Perfetto file). */
export async function isConverted(root: string, id: string, perfetto: boolean): Promise<boolean> {
  if (perfetto) return (await stat(perfettoFile(root, id)).catch(() => null))?.isFile() === true;
  const files = await readdir(partitionDir(root, 'traces', id)).catch(() => [] as string[]);
  return files.some((f) => f.startsWith('part-'));
}
