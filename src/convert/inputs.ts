// What a conversion may take as input: a regular file — a FIFO or device is refused from its stat and never
// opened (opening a FIFO waits for a writer, and a conversion needs random access anyway) — that is not
// where the conversion writes: a trace inside a partition directory it replaces, or that is (a link to)
// the timeline file it replaces, is refused before anything is written.
import type { Stats } from 'node:fs';
import { realpath, stat } from 'node:fs/promises';
import { isAbsolute, relative } from 'node:path';
import { EtlError } from '../errors.js';

function kindText(st: Stats): string {
  if (st.isFIFO()) return 'a FIFO';
  if (st.isCharacterDevice()) return 'a character device';
  if (st.isBlockDevice()) return 'a block device';
  if (st.isSocket()) return 'a socket';
  return 'not a file';
}

/** The refusal of an input whose stat says it is neither a regular file nor a directory, or null. */
export function notRegularInput(path: string, st: Stats | null): EtlError | null {
  if (st === null || st.isFile() || st.isDirectory()) return null; // missing, a directory: the decoder's own message
  return new EtlError('READ_FAILED', `cannot read ${path}: it is ${kindText(st)}, not a regular file: convert reads trace files (save the stream to a file first)`);
}

/**
 * Throws when converting `path` would replace or remove it: its real path (links resolved) is one of
 * `targets` (files and directories the conversion replaces) or inside one, or a target file is the same
 * file (device and inode).
 */
export async function refuseReplacingInput(path: string, targets: readonly string[]): Promise<void> {
  const real = await realpath(path);
  const st = await stat(real);
  for (const target of targets) {
    const t = await realpath(target).catch(() => null);
    if (t === null) continue; // not there: nothing to replace
    const rel = relative(t, real);
    const inside = rel !== '' && !rel.startsWith('..') && !isAbsolute(rel);
    let same = rel === '';
    if (!same && !inside) {
      const ts = await stat(t).catch(() => null);
      same = ts !== null && ts.isFile() && ts.dev === st.dev && ts.ino === st.ino;
    }
    if (same || inside) {
      throw new EtlError('WRITE_FAILED', `${path} is ${inside ? 'inside ' : ''}${target}, which converting it would replace: move the trace out of the dataset first`);
    }
  }
}
