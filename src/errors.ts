// Errors that escape the decoder: the input cannot be read as an ETL file at all, or the API was misused.
// Corruption inside a readable file never throws: it is counted in the diagnostics (src/result/diagnostics.ts).

export type EtlErrorCode =
  | 'NOT_ETL' // the first buffer is not an ETL header buffer
  | 'EMPTY' // zero-length input
  | 'READ_FAILED' // the file could not be read (I/O error, or it changed while reading)
  | 'NO_CLOCK' // the trace's timestamps cannot be converted (no logfile header, unknown clock type, zero frequency)
  | 'BAD_OPTION' // API misuse
  | 'WRITE_FAILED'; // an output (Arrow IPC, Parquet) could not be written

export class EtlError extends Error {
  override readonly name = 'EtlError';
  constructor(
    readonly code: EtlErrorCode,
    message: string,
    /** where in the input the problem is, if it has a place */
    readonly fileOffset?: number,
    readonly expected?: string,
    readonly found?: string,
  ) {
    super(message);
  }
}

/**
 * A failure while writing `what` (an output file, a Parquet or Arrow writer, its sink) as an EtlError
 * WRITE_FAILED saying what was being written and why; an EtlError passes through unchanged.
 */
export function writeError(what: string, e: unknown): EtlError {
  if (e instanceof EtlError) return e;
  const message = e instanceof Error ? e.message : String(e);
  return new EtlError('WRITE_FAILED', `${what} failed: ${message}`);
}

export function hex(n: number | bigint, width = 0): string {
  const s = n.toString(16).toUpperCase();
  return '0x' + (width > s.length ? '0'.repeat(width - s.length) + s : s);
}

/** A file that is not the size it had when the decode started, naming the size it has now. */
export function fileSizeChanged(path: string, now: number, then: number): EtlError {
  return new EtlError('READ_FAILED', `${path} is ${now} bytes now, ${then} when the decode started (did the file change while it was read?)`);
}
