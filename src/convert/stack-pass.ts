// The first pass over the stack tables of a trace file (src/derive/stack-pass.ts), for convert, dump and cpu --waits.
import { streamFile } from '../decode/files.js';
import { runStackPass, type StackPass } from '../derive/stack-pass.js';
import type { DecodeOptions } from '../options.js';
import type { TableName } from '../tables/schema.js';

export { needsStackPass, type StackPass } from '../derive/stack-pass.js';

/** Decodes the stack tables (and the lifetimes) of the trace at `path`, one pass, no other rows kept; `wanted`: the tables written (default: every one); `lifetimes`: runStackPass's. */
export function stackPass(path: string, options: DecodeOptions, wanted?: Iterable<TableName>, lifetimes: { threads?: boolean; processes?: boolean } = {}): Promise<StackPass> {
  return runStackPass((o) => streamFile(path, { ...options, ...o }), wanted, lifetimes);
}
