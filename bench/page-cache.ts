// Taking a file out of the page cache, so that the next job reads it from the disk (the `cold` jobs of the
// scale and end-to-end cases). `dd iflag=nocache count=0` asks the kernel to drop the file's clean pages
// (posix_fadvise DONTNEED on this file only); the kernel may keep some (on this VM a "cold" `cat` once ran at
// page-cache speed). Where `fincore` (util-linux) can say how much stayed, and the process may write
// /proc/sys/vm/drop_caches (root), what stayed is dropped with the rest of the clean page cache.
import { spawnSync } from 'node:child_process';
import { accessSync, constants, writeFileSync } from 'node:fs';

/** Bytes of the file in the page cache (`fincore`), or null where that cannot be told. */
export function residentBytes(path: string): number | null {
  const r = spawnSync('fincore', ['--bytes', '--noheadings', '--raw', '-o', 'RES', path], { encoding: 'utf8' });
  if (r.status !== 0) return null;
  const n = Number(r.stdout.trim());
  return Number.isFinite(n) ? n : null;
}

/**
 * Drops the file's pages from the page cache. false where that is not available (not Linux, no GNU dd);
 * true when dd ran and no check says pages stayed (fincore missing, or what stayed could not be dropped:
 * see residentBytes).
 */
export function dropFromCache(path: string): boolean {
  if (process.platform !== 'linux') return false;
  if (spawnSync('dd', [`if=${path}`, 'iflag=nocache', 'count=0'], { stdio: 'ignore' }).status !== 0) return false;
  const left = residentBytes(path);
  if (left !== null && left > 0) {
    try {
      accessSync('/proc/sys/vm/drop_caches', constants.W_OK);
      spawnSync('sync', [], { stdio: 'ignore' });
      writeFileSync('/proc/sys/vm/drop_caches', '1\n');
    } catch {
      // not root: the pages dd could not drop stay (the run says how many: residentBytes)
    }
  }
  return true;
}
