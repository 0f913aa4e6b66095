// When framing's synchronous header reads (src/decode/files.ts FileSource.readMany) are reads from the disk: then
// they go to the libuv pool, many at a time, instead of blocking this thread one after the other.

/** A batch of synchronous header reads slower than this (ms) looks like the disk: 64 reads of the page cache take ~0.3 ms. */
export const SLOW_BATCH_MS = 2;
/** Batches in a row that must be slow before the reads go to the pool: one or two are a hiccup of a busy machine. */
export const SLOW_BATCHES = 4;

/**
 * Tells from the times of synchronous header batches when the file is being read from the disk. Slow
 * batches must follow one another: a busy machine (another tenant, a profiler) slowed a batch or two of a
 * cached file past 1 ms, twice in a row was the rule then, and the framing of a 516 MiB file in the page
 * cache went to the pool's round trips: 0.6 s instead of 40 ms.
 */
export class DiskDetector {
  private run = 0;
  /** Records a batch's time; true once SLOW_BATCHES in a row took over SLOW_BATCH_MS. */
  slow(ms: number): boolean {
    this.run = ms > SLOW_BATCH_MS ? this.run + 1 : 0;
    return this.run >= SLOW_BATCHES;
  }
}
