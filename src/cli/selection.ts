// The selection of a command (--from, --to, --pid, --process, --tid; src/select): the times converted with
// the trace's clock (read from its first buffer), and — when processes are named, or rows that carry only
// a thread must be matched to processes — the trace's lifetimes, from a first decode that keeps no rows
// (the cost of a `summary`).
import { readTraceInfo, streamFile } from '../decode/files.js';
import { EtlError } from '../errors.js';
import type { DecodeOptions } from '../options.js';
import { resolveSelection, type Selection } from '../select/selection.js';

// what the commands use of the selection, loaded with them (not with the CLI)
export { selectTable } from '../select/tables.js';
export { selectionText } from '../select/selection.js';
export { clockOf };
import { clockOf } from '../result/summary.js';
import { selectionOptions, type SelectionOpts } from './options.js';

/**
 * The command's selection, or null when it selects nothing less than the whole trace. `lifetimes`: the
 * command's rows need the trace's threads to be matched to processes (process or thread filters).
 */
export async function commandSelection(path: string, name: string, o: SelectionOpts, decode: DecodeOptions, lifetimes: boolean): Promise<Selection | null> {
  const spec = selectionOptions(o);
  if (spec.from === undefined && spec.to === undefined && !spec.processIds && !spec.processNames && !spec.threadIds) return null;
  const info = spec.from !== undefined || spec.to !== undefined ? await readTraceInfo(path) : null;
  const clock = clockOf(info);
  if ((spec.from !== undefined || spec.to !== undefined) && !clock) {
    throw new EtlError('NO_CLOCK', `--from/--to: ${name} has ${info ? 'a clock that cannot be converted' : 'no logfile header'}, so times cannot be placed in it`);
  }
  const needs = spec.processNames !== undefined || (lifetimes && (spec.processIds !== undefined || spec.threadIds !== undefined));
  const first = needs ? await streamFile(path, { ...decode, onProgress: undefined }) : null;
  return resolveSelection(spec, clock, first ?? undefined);
}
