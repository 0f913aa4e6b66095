// The fuzz oracle: one input decoded by both engines in memory and by the WebAssembly engine (and now and
// then the reference) through decodeStream with a small input window. Every outcome must agree — the same
// EtlError, or the same summary, buffers and every column of every table — and each result must satisfy
// the decoder's invariants, among them, given the seed the input was made from, "intact buffers never
// vanish" (vanishedBuffer). Used by `npm run fuzz` (fuzz/run.ts), test/fuzz.test.ts and the property tests
// of test/hostile.test.ts.
import * as L from '../src/generated/layout.js';
import { hex } from '../src/errors.js';
import type { Seed } from './seeds.js';
import { cpuUsage, threadStates, isWholeTraceTable, wholeTraceTable, decodeStream, decodeSync, DECODED_TABLE_NAMES, EtlError, Table, TABLE_COLUMNS, TABLE_NAMES, type DecodeResult, type DecodedTableName, type DecodedTables, type TypedColumn } from '../src/node.js';
import { attachWholeStacks } from '../src/derive/stacks.js';
import { fillWholeSampleLifetimes } from '../src/derive/lifetimes.js';
import { concatChunks, SUMMARY_TABLE_NAMES, type ColumnChunk } from '../src/tables/schema.js';

export type FailureKind = 'crash' | 'engines' | 'window' | 'parallel' | 'invariant';

export interface Failure {
  kind: FailureKind;
  /** what differed or which invariant broke: the same `what` means the same bug (minimisation keeps it) */
  what: string;
  message: string;
}

export interface CheckOptions {
  /** input window of the streamed decode (>= 4096) */
  windowBytes: number;
  /** also stream with the reference engine */
  streamReference: boolean;
  /** also decode in partitions (src/parallel, in this thread) cut at these decode positions (out-of-range ones are left out) */
  parallelCuts?: readonly number[];
}

type Outcome = { ok: true; result: DecodeResult } | { ok: false; error: EtlError };

const json = (v: unknown): string => JSON.stringify(v, (_k, x: unknown) => (typeof x === 'bigint' ? `${x}n` : x));
const view = (a: ArrayBufferView): Uint8Array => new Uint8Array(a.buffer, a.byteOffset, a.byteLength);
const sameBytes = (a: ArrayBufferView, b: ArrayBufferView): boolean => Buffer.compare(view(a), view(b)) === 0;
/** Columns equal: typed arrays byte for byte, text columns string for string. */
const sameColumn = (a: TypedColumn, b: TypedColumn): boolean =>
  Array.isArray(a) || Array.isArray(b) ? Array.isArray(a) && Array.isArray(b) && a.length === b.length && a.every((v, i) => v === b[i]) : sameBytes(a, b);
/** Any table of a result (cpuUsage is derived on demand). */
const tableOf = (r: DecodeResult, t: (typeof TABLE_NAMES)[number]): Table => (t === 'cpuUsage' ? cpuUsage(r) : isWholeTraceTable(t) ? wholeTraceTable(r, t) : r[t]);

function crash(where: string, e: unknown): Failure {
  const text = e instanceof Error ? `${e.name}: ${e.message}` : String(e);
  return { kind: 'crash', what: `${where}: ${text.split('\n')[0]!.replace(/\d+/g, 'N')}`, message: `${where} threw ${e instanceof Error ? (e.stack ?? text) : text}` };
}

function run(bytes: Uint8Array, engine: 'wasm' | 'reference'): Outcome | Failure {
  try {
    return { ok: true, result: decodeSync(bytes, { engine }) };
  } catch (e) {
    if (e instanceof EtlError && e.code !== 'BAD_OPTION') return { ok: false, error: e };
    return crash(`decodeSync ${engine}`, e);
  }
}

const summaryTexts = new WeakMap<DecodeResult, string>();
/** The summary as comparable text (without the engine's name), made once per result. */
function summaryText(r: DecodeResult): string {
  let t = summaryTexts.get(r);
  if (t === undefined) summaryTexts.set(r, (t = json({ ...r.summary, engine: '' })));
  return t;
}

/** The first difference between two results — summary (less the engine's name), buffers, every column — or null. */
export function resultDifference(a: DecodeResult, b: DecodeResult): string | null {
  return difference({ ok: true, result: a }, { ok: true, result: b });
}

/** The first difference between two outcomes, or null. */
function difference(a: Outcome, b: Outcome): string | null {
  if (a.ok !== b.ok) return `one decodes, the other throws (${a.ok ? (b as { error: EtlError }).error.message : (a as { error: EtlError }).error.message})`;
  if (!a.ok || !b.ok) {
    const x = (a as { error: EtlError }).error;
    const y = (b as { error: EtlError }).error;
    return x.code === y.code && x.message === y.message ? null : `errors differ: ${x.message} / ${y.message}`;
  }
  const x = a.result;
  const y = b.result;
  const sx = summaryText(x);
  const sy = summaryText(y);
  if (sx !== sy) {
    for (const key of Object.keys(x.summary) as (keyof typeof x.summary)[]) {
      if (key !== 'engine' && json(x.summary[key]) !== json(y.summary[key])) return `summary.${key}: ${json(x.summary[key]).slice(0, 300)} / ${json(y.summary[key]).slice(0, 300)}`;
    }
    return 'summary differs';
  }
  for (const col of ['fileOffset', 'size', 'sequenceNumber', 'cpu', 'flags', 'type'] as const) {
    if (!sameBytes(x.buffers[col], y.buffers[col])) return `buffers.${col}`;
  }
  for (const t of TABLE_NAMES) {
    // cpuUsage and threadStates are derived by the same TypeScript from tables compared here: the rows
    // invariant checks them (on the in-memory WebAssembly result)
    if (t === 'cpuUsage' || t === 'threadStates') continue;
    const p = tableOf(x, t);
    const q = tableOf(y, t);
    if (p.length !== q.length) return `${t}: ${p.length} / ${q.length} rows`;
    for (let c = 0; c < p.columns.length; c++) {
      if (!sameColumn(p.columns[c]!, q.columns[c]!)) return `${t}.${TABLE_COLUMNS[t][c]!.name}`;
    }
  }
  return null;
}

/** The decode of `bytes` through decodeStream with a small window (optionally in partitions), as an Outcome. */
async function streamed(bytes: Uint8Array, engine: 'wasm' | 'reference', windowBytes: number, cuts?: readonly number[]): Promise<Outcome | Failure> {
  const chunks = Object.fromEntries(DECODED_TABLE_NAMES.map((t) => [t, [] as ColumnChunk[]])) as Record<DecodedTableName, ColumnChunk[]>;
  try {
    const r = await decodeStream(bytes, {
      engine,
      windowBytes,
      ...(cuts ? { threads: 3, parallel: { inThread: true, minBytes: 0, cuts } } : {}),
      onRows: (tables) => {
        for (const t of DECODED_TABLE_NAMES) if (tables[t].length) chunks[t].push({ length: tables[t].length, columns: tables[t].columns });
      },
    });
    const tables = Object.fromEntries(DECODED_TABLE_NAMES.map((t) => [t, new Table(t, concatChunks(t, chunks[t]))])) as DecodedTables;
    attachWholeStacks(tables); // the rows' stackId, as a whole decode fills it
    fillWholeSampleLifetimes(tables, r); // the samples' process and image, as a whole decode fills them
    return { ok: true, result: { ...r, ...tables } as DecodeResult };
  } catch (e) {
    if (e instanceof EtlError && e.code !== 'BAD_OPTION') return { ok: false, error: e };
    return crash(`decodeStream ${engine}${cuts ? ' in partitions' : ''}`, e);
  }
}

const sum = (a: ArrayLike<number>): number => {
  let n = 0;
  for (let i = 0; i < a.length; i++) n += a[i]!;
  return n;
};

/** The invariants of one result: the first that fails, as [name, detail], or null. */
export function invariants(r: DecodeResult): [string, string] | null {
  const s = r.summary;
  const d = s.diagnostics as Record<string, number>;
  // every byte of the file is framed, skipped by a resync or part of the truncated tail
  const framed = sum(r.buffers.size);
  if (framed + d['resyncBytes']! + d['truncatedTailBytes']! !== s.fileSize) {
    return ['bytes', `framed ${framed} + resync ${d['resyncBytes']} + tail ${d['truncatedTailBytes']} != file ${s.fileSize}`];
  }
  if (r.buffers.length !== s.buffers) return ['buffers', `${r.buffers.length} listed, summary says ${s.buffers}`];
  if (d['buffersTruncated']! > 1) return ['truncated', `${d['buffersTruncated']} cut buffers`];
  // every event walked is tallied by kind (unless the kind table overflowed)
  const tallied = s.eventsByKind.reduce((n, k) => n + k.count, 0);
  if (d['kindTableFull'] === 0 && tallied !== s.events) return ['events', `${tallied} tallied, ${s.events} walked`];
  if (d['kindTableFull'] === 0) {
    // events of each decoded kind = decoded + skipped by reason
    const byHook = (hook: number) => s.eventsByKind.reduce((n, k) => n + (k.hookId === hook ? k.count : 0), 0);
    const checks: [string, number, number][] = [
      ['cswitch events', byHook(L.HOOK_CSWITCH), d['cswitchDecoded']! + d['cswitchSkippedVersion']! + d['cswitchSkippedShort']!],
      ['spinlock events', byHook(L.HOOK_SPINLOCK), d['spinlockDecoded']! + d['spinlockSkippedVersion']! + d['spinlockSkippedShort']!],
      ['compact batches', byHook(L.HOOK_COMPCS), d['compactBatches']! + d['compactSkippedVersion']! + d['compactSkippedShort']!],
      ['logfile headers', byHook(L.HOOK_HEADER), d['logfileHeaders']!],
      ['SampledProfile events', byHook(L.HOOK_SAMPLED_PROFILE), d['samplesDecoded']! + d['samplesSkippedVersion']! + d['samplesSkippedShort']!],
      [
        'image events',
        byHook(L.HOOK_IMAGE_LOAD) + byHook(L.HOOK_IMAGE_UNLOAD) + byHook(L.HOOK_IMAGE_DC_START) + byHook(L.HOOK_IMAGE_DC_END),
        d['imageEventsDecoded']! + d['imageEventsSkippedVersion']! + d['imageEventsSkippedShort']!,
      ],
      [
        'stack events',
        [L.HOOK_STACKWALK, L.HOOK_STACKTRACE_CREATE, L.HOOK_STACKTRACE_DELETE, L.HOOK_STACKTRACE_RUNDOWN, L.HOOK_STACKTRACE_KEY_KERNEL, L.HOOK_STACKTRACE_KEY_USER].reduce((n, h) => n + byHook(h), 0),
        d['stackEventsDecoded']! + d['stackEventsSkippedVersion']! + d['stackEventsSkippedShort']!,
      ],
      [
        'sample-interval events',
        byHook(L.HOOK_SAMPLED_PROFILE_SET_INTERVAL) + byHook(L.HOOK_SAMPLED_PROFILE_DC_START) + byHook(L.HOOK_SAMPLED_PROFILE_DC_END),
        d['sampleIntervalsDecoded']! + d['sampleIntervalsSkippedVersion']! + d['sampleIntervalsSkippedShort']!,
      ],
    ];
    for (const [name, seen, accounted] of checks) if (seen !== accounted) return [name, `${seen} seen, ${accounted} decoded + skipped`];
  }
  // rows by source = the counters of what made them
  for (const t of SUMMARY_TABLE_NAMES) {
    const n = tableOf(r, t).length;
    if (s[t] !== n) return ['rows', `${t}: summary ${s[t]}, table ${n}`];
  }
  const source = r.cswitch.column('source') as Uint8Array;
  const valid = r.cswitch.column('valid') as Uint32Array;
  const bySource = [0, 0, 0, 0, 0];
  let unknownNew = 0;
  for (let i = 0; i < source.length; i++) {
    bySource[source[i]!]!++;
    if (source[i]! > 0 && ((valid[i]! >>> L.CS_NEW_THREAD_ID) & 1) === 0) unknownNew++;
  }
  const expected = [d['cswitchDecoded']!, d['compactPacketsIdleShort']!, d['compactPacketsIdle']!, d['compactPacketsLite']!, d['compactPacketsFull']!];
  for (let k = 0; k < 5; k++) if (bySource[k] !== expected[k]) return ['row sources', `source ${k}: ${bySource[k]} rows, counter ${expected[k]}`];
  if (unknownNew !== d['compactNewThreadUnknown']) return ['row sources', `${unknownNew} compact rows without a new thread, counter ${d['compactNewThreadUnknown']}`];
  if (r.spinlock.length !== d['spinlockDecoded']) return ['row sources', `${r.spinlock.length} spinlock rows, ${d['spinlockDecoded']} decoded`];
  if (r.samples.length !== d['samplesDecoded']) return ['row sources', `${r.samples.length} samples rows, ${d['samplesDecoded']} decoded`];
  if (r.imageEvents.length !== d['imageEventsDecoded']) return ['row sources', `${r.imageEvents.length} imageEvents rows, ${d['imageEventsDecoded']} decoded`];
  if (r.sampleIntervals.length !== d['sampleIntervalsDecoded']) return ['row sources', `${r.sampleIntervals.length} sampleIntervals rows, ${d['sampleIntervalsDecoded']} decoded`];
  if (r.stackEvents.length !== d['stackEventsDecoded']) return ['row sources', `${r.stackEvents.length} stackEvents rows, ${d['stackEventsDecoded']} decoded`];
  // the frames of the stackEvents rows are the stackEventFrames rows, each event's from depth 0
  const frameCount = r.stackEvents.column('frameCount');
  const depth = r.stackEventFrames.column('depth');
  let frame = 0;
  for (let i = 0; i < frameCount.length; i++) {
    for (let k = 0; k < frameCount[i]!; k++, frame++) if (depth[frame] !== k) return ['row sources', `stackEventFrames row ${frame}: depth ${depth[frame]}, expected ${k}`];
  }
  if (frame !== r.stackEventFrames.length) return ['row sources', `${r.stackEventFrames.length} stackEventFrames rows, ${frame} frames in stackEvents`];
  // the issue log: sorted by offset, at most 1024, each of a counter that counted
  if (s.issues.length > L.LOG_CAPACITY) return ['issues', `${s.issues.length} issues`];
  for (let i = 0; i < s.issues.length; i++) {
    const issue = s.issues[i]!;
    if (i > 0 && issue.fileOffset < s.issues[i - 1]!.fileOffset) return ['issues', 'not sorted by offset'];
    if (!(d[issue.counter]! > 0)) return ['issues', `an issue of ${issue.counter}, which is 0`];
  }
  return null;
}

/** The data end (§A.5) of the uncompressed buffer at `y` of `bytes`: Offset, else SavedOffset, in [0x48, BufferSize]; 0 if neither. */
function dataEndOf(bytes: Uint8Array, y: number): number {
  const v = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const claim = v.getUint32(y + L.BUF_BUFFER_SIZE, true);
  for (const f of [L.BUF_OFFSET, L.BUF_SAVED_OFFSET]) {
    const n = v.getUint32(y + f, true);
    if (n >= L.WMI_BUFFER_HEADER_SIZE && n <= claim) return n;
  }
  return 0;
}

const sameRange = (a: Uint8Array, at: number, b: Uint8Array, bt: number, n: number): boolean =>
  at >= 0 && bt >= 0 && at + n <= a.length && bt + n <= b.length && Buffer.compare(a.subarray(at, at + n), b.subarray(bt, bt + n)) === 0;

/**
 * "Intact buffers never vanish" (docs/format.md §A.1 "size claims"). A buffer of `seed` whose bytes are in
 * `bytes` unchanged — at its offset, or shifted by the difference in length (one insertion or deletion
 * before it) — together with what follows it (the next buffer's header unchanged, or the end of the input
 * right after it, in both) is a buffer framing can tell from the bytes around it. It must be framed at its
 * place; or have bytes outside every framed buffer (those are counted: resyncBytes, truncatedTailBytes);
 * or start in the data of an uncompressed framed buffer (before its Offset, or SavedOffset, §A.5: its bytes
 * are walked as that buffer's events); or start inside a framed buffer that reports a loss of its own (an
 * issue of a dataLoss counter within it — for a compressed one, within its decompressed data too). What
 * must not be is an intact buffer in the padding a claim adds, with nothing said. The first one that
 * vanished, or null; nothing is checked when the issue log is full.
 */
export function vanishedBuffer(seed: Seed, bytes: Uint8Array, r: DecodeResult): string | null {
  const issues = r.summary.issues;
  if (issues.length >= L.LOG_CAPACITY) return null;
  const off = r.buffers.fileOffset;
  const shift = bytes.length - seed.bytes.length;
  /** the last framed buffer starting at or before p */
  const framedBefore = (p: number): number => {
    let lo = 0;
    let hi = off.length - 1;
    let k = -1;
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      if (off[mid]! <= p) [k, lo] = [mid, mid + 1];
      else hi = mid - 1;
    }
    return k;
  };
  for (const b of seed.buffers) {
    for (const p of shift ? [b.at, b.at + shift] : [b.at]) {
      if (!sameRange(bytes, p, seed.bytes, b.at, b.size)) continue;
      const end = p + b.size;
      const chained =
        (end === bytes.length && b.at + b.size === seed.bytes.length) || sameRange(bytes, end, seed.bytes, b.at + b.size, L.WMI_BUFFER_HEADER_SIZE);
      if (!chained) continue;
      const k = framedBefore(p);
      if (k >= 0 && off[k] === p) break;
      const y = k >= 0 ? off[k]! : -1;
      // framed buffers cover it end to end, or some of its bytes are counted
      let covered = k;
      while (covered >= 0 && off[covered]! + r.buffers.size[covered]! < end && off[covered + 1] === off[covered]! + r.buffers.size[covered]!) covered++;
      if (k < 0 || off[covered]! + r.buffers.size[covered]! < end || y + r.buffers.size[k]! <= p) break;
      const compressed = (r.buffers.flags[k]! & L.BUFFER_FLAG_COMPRESSED) !== 0;
      if (!compressed && p < y + dataEndOf(bytes, y)) break;
      const yEnd = y + Math.max(r.buffers.size[k]!, compressed ? L.WMI_BUFFER_HEADER_SIZE + L.MAX_BUFFER_SIZE : 0);
      if (issues.some((i) => i.severity === 'dataLoss' && i.fileOffset >= y && i.fileOffset < yEnd)) break;
      return `the seed's buffer at ${hex(b.at)} (${b.size} bytes), intact at ${hex(p)}, is inside the buffer framed at ${hex(y)} (${r.buffers.size[k]} bytes), which reports no loss`;
    }
  }
  return null;
}

/** Checks one input (made from `seed`, when given); the first failure, or null. */
export async function checkInput(bytes: Uint8Array, options: CheckOptions, seed?: Seed): Promise<Failure | null> {
  const w = run(bytes, 'wasm');
  if ('kind' in w) return w;
  const r = run(bytes, 'reference');
  if ('kind' in r) return r;
  const diff = difference(w, r);
  if (diff) return { kind: 'engines', what: diff.split(':')[0]!, message: `wasm vs reference: ${diff}` };
  if (w.ok) {
    const bad = invariants(w.result);
    if (bad) return { kind: 'invariant', what: bad[0], message: `invariant ${bad[0]}: ${bad[1]}` };
    // the whole-trace derivation (not compared between engines: it is the same TypeScript over the tables
    // compared) must not throw on any input
    try {
      threadStates(w.result);
    } catch (e) {
      return crash('threadStates', e);
    }
    const lost = seed ? vanishedBuffer(seed, bytes, w.result) : null;
    if (lost) return { kind: 'invariant', what: 'intact buffers', message: `invariant intact buffers: ${lost}` };
  }
  for (const engine of options.streamReference ? (['wasm', 'reference'] as const) : (['wasm'] as const)) {
    const s = await streamed(bytes, engine, options.windowBytes);
    if ('kind' in s) return s;
    const d = difference(engine === 'wasm' ? w : r, s);
    if (d) return { kind: 'window', what: `${engine} ${d.split(':')[0]}`, message: `${engine} in memory vs streamed with ${options.windowBytes}-byte windows: ${d}` };
  }
  if (options.parallelCuts) {
    const p = await streamed(bytes, 'wasm', options.windowBytes, options.parallelCuts);
    if ('kind' in p) return p;
    const d = difference(w, p);
    if (d) return { kind: 'parallel', what: d.split(':')[0]!, message: `wasm in memory vs in partitions cut at ${options.parallelCuts.join(', ')}: ${d}` };
  }
  return null;
}
