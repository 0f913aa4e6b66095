// pprof output (the profile.proto of github.com/google/pprof, message perftools.profiles.Profile) of the
// `samples` table: one pprof sample per distinct (stack, process, thread) with its SampledProfile events
// and, when the trace states the profile interval (sampleIntervals), its CPU time in nanoseconds. A frame's
// location is its address; its mapping the image lifetime holding it at the sample's time (ImageMap:
// base, limit, the kernel path, a build id of TimeDateStamp and ImageSize as symbol servers key PE files);
// with no symbols, its function is named module!0xoffset (the address itself outside any image). Labels:
// pid, tid and the process's image name.
//
// PprofBuilder takes a stack per sample (addresses leaf first): the instruction pointer of a SampledProfile
// and, when the trace has stacks (resolveStacks, src/derive/stacks.ts), its callers. Per sample: no
// allocation beyond the first sight of a location, stack or (stack, process, thread). Browser-safe: the
// bytes are not compressed here (pprof files are gzipped: the CLI does it).
import type { Table } from '../tables/table.js';
import type { StreamResult } from '../result/summary.js';
import { FILETIME_UNIX_EPOCH, TickConverter } from '../time.js';
import { resolveSelection, type Selection } from '../select/selection.js';
import { selectTable } from '../select/tables.js';
import { ImageMap } from '../derive/lifetimes.js';
import { SampleInterval } from '../analysis/sample-interval.js';
import { isKernelAddress, processOfSample, type SamplesInput } from '../analysis/samples.js';
import { ProtoWriter, VARINT } from './protobuf.js';
import { addressName, moduleOffsetName, peBuildId, SampleFrames } from '../analysis/sample-frames.js';
import { readiedByName, rowStacks, waitColumns, type RowStacks } from '../analysis/waits.js';
import type { ResolvedStacks } from '../derive/stacks.js';
import * as L from '../generated/layout.js';

// perftools.profiles field numbers (proto/profile.proto)
const PROFILE_SAMPLE_TYPE = 1;
const PROFILE_SAMPLE = 2;
const PROFILE_MAPPING = 3;
const PROFILE_LOCATION = 4;
const PROFILE_FUNCTION = 5;
const PROFILE_STRING_TABLE = 6;
const PROFILE_TIME_NANOS = 9;
const PROFILE_DURATION_NANOS = 10;
const PROFILE_PERIOD_TYPE = 11;
const PROFILE_PERIOD = 12;
const PROFILE_COMMENT = 13;
const PROFILE_DEFAULT_SAMPLE_TYPE = 14;
const VALUE_TYPE_TYPE = 1;
const VALUE_TYPE_UNIT = 2;
const SAMPLE_LOCATION_ID = 1;
const SAMPLE_VALUE = 2;
const SAMPLE_LABEL = 3;
const LABEL_KEY = 1;
const LABEL_STR = 2;
const LABEL_NUM = 3;
const MAPPING_ID = 1;
const MAPPING_MEMORY_START = 2;
const MAPPING_MEMORY_LIMIT = 3;
const MAPPING_FILENAME = 5;
const MAPPING_BUILD_ID = 6;
const LOCATION_ID = 1;
const LOCATION_MAPPING_ID = 2;
const LOCATION_ADDRESS = 3;
const LOCATION_LINE = 4;
const LINE_FUNCTION_ID = 1;
const FUNCTION_ID = 1;
const FUNCTION_NAME = 2;
const FUNCTION_SYSTEM_NAME = 3;
const FUNCTION_FILENAME = 4;


/** What the builder resolves samples against: the image lifetimes, the processes' names, the interval. */
export interface PprofContext {
  images: Table<'images'>;
  processes: Table<'processes'>;
  sampleIntervals?: Table<'sampleIntervals'>;
}

/** A map of number → number maps, made on first use. */
function inner<K>(m: Map<K, Map<number, number>>, k: K): Map<number, number> {
  let v = m.get(k);
  if (!v) m.set(k, (v = new Map()));
  return v;
}

export class PprofBuilder {
  private readonly map: ImageMap;
  private readonly interval: SampleInterval | null;
  /** whether the trace states the interval: the profile then has a cpu/nanoseconds value */
  readonly timed: boolean;
  private readonly strings = new Map<string, number>([['', 0]]);
  private readonly stringList: string[] = [''];
  private readonly processName = new Map<number, string>();
  // mappings: per images row, its mapping id (0: none yet); equal lifetimes (same file at the same range) share one
  private readonly mappingOfRow: Int32Array;
  private readonly mappingByKey = new Map<string, number>();
  private readonly mappingRow: number[] = [];
  // locations: per mapping, by offset; outside any image, by address words
  private readonly locInImage = new Map<number, Map<number, number>>();
  private readonly locNoImage = new Map<number, Map<number, number>>();
  private readonly locMapping: number[] = [];
  private readonly locHi: number[] = [];
  private readonly locLo: number[] = [];
  private readonly locName: number[] = [];
  // stacks: a trie from the outermost frame; node 0 is the empty stack
  private readonly children = new Map<number, Map<number, number>>();
  private readonly nodeParent: number[] = [0];
  private readonly nodeLoc: number[] = [0];
  /** locations of namedLocation, by name */
  private readonly named = new Map<string, number>();
  private scratch = new Int32Array(64);
  // samples: one per (stack node, process, thread)
  private readonly sampleIndex = new Map<number, Map<number, Map<number, number>>>();
  private readonly sampleNode: number[] = [];
  private readonly samplePid: number[] = [];
  private readonly sampleTid: number[] = [];
  private readonly sampleCount: number[] = [];
  private readonly sampleTime: number[] = [];
  private firstHi = Infinity;
  private firstLo = 0;
  private lastHi = -Infinity;
  private lastLo = 0;
  /** samples added, and their Count summed */
  samples = 0;
  weight = 0;

  /**
   * @param kind 'samples': values samples/count and, with the trace's interval, cpu/nanoseconds; 'waits':
   *   values waits/count and wait/nanoseconds, each given to add() (blocked time: analysis/waits.ts)
   */
  constructor(
    private readonly context: PprofContext,
    private readonly kind: 'samples' | 'waits' = 'samples',
  ) {
    this.map = new ImageMap(context.images);
    this.interval = kind === 'samples' && context.sampleIntervals ? new SampleInterval(context.sampleIntervals) : null;
    this.timed = kind === 'waits' || this.interval?.known === true;
    this.mappingOfRow = new Int32Array(context.images.length);
    for (const p of context.processes) if (p.imageFileName !== null) this.processName.set(p.processId, p.imageFileName);
  }

  private str(s: string): number {
    let i = this.strings.get(s);
    if (i === undefined) {
      i = this.stringList.length;
      this.strings.set(s, i);
      this.stringList.push(s);
    }
    return i;
  }

  private mappingOf(row: number): number {
    const known = this.mappingOfRow[row]!;
    if (known) return known;
    const im = this.context.images;
    const key = `${im.column('imageBase')[row]}/${im.column('imageSize')[row]}/${im.column('timeDateStamp')[row]}/${im.column('fileName')[row]}`;
    let id = this.mappingByKey.get(key);
    if (id === undefined) {
      this.mappingRow.push(row);
      id = this.mappingRow.length;
      this.mappingByKey.set(key, id);
    }
    this.mappingOfRow[row] = id;
    return id;
  }

  /** The location of address (hi, lo) of process `pid` at time (tHi, tLo); ids from 1. */
  private location(pid: number, pointerSize: number, hi: number, lo: number, tHi: number, tLo: number): number {
    const row = this.map.find(pid, isKernelAddress(pointerSize, hi, lo), hi, lo, tHi, tLo);
    if (row < 0) {
      const m = inner(this.locNoImage, hi);
      let id = m.get(lo);
      if (id === undefined) {
        id = this.newLocation(0, hi, lo, addressName(hi, lo)); // once per location
        m.set(lo, id);
      }
      return id;
    }
    const mapping = this.mappingOf(row);
    const offset = this.map.offset(row, hi, lo);
    const m = inner(this.locInImage, mapping);
    let id = m.get(offset);
    if (id === undefined) {
      id = this.newLocation(mapping, hi, lo, moduleOffsetName(this.context.images, row, offset));
      m.set(offset, id);
    }
    return id;
  }

  private newLocation(mapping: number, hi: number, lo: number, name: string): number {
    this.locMapping.push(mapping);
    this.locHi.push(hi);
    this.locLo.push(lo);
    this.locName.push(this.str(name));
    return this.locMapping.length;
  }

  /**
   * One sample: `n` frames, leaf first, as address words in `frames` (frame k: low word at 2k, high at
   * 2k + 1) of a process (-1: unknown) and thread, at time (tHi signed, tLo unsigned), standing for `count`
   * profile interrupts.
   */
  add(frames: Uint32Array, n: number, pointerSize: number, pid: number, tid: number, tHi: number, tLo: number, count: number): void {
    if (this.scratch.length < n) this.scratch = new Int32Array(Math.max(n, 2 * this.scratch.length));
    for (let k = 0; k < n; k++) this.scratch[k] = this.location(pid, pointerSize, frames[2 * k + 1]!, frames[2 * k]!, tHi, tLo);
    this.addLocations(this.scratch, n, pid, tid, tHi, tLo, count, 0);
  }

  /** The location of a frame (address words) of process `pid` at time (tHi, tLo): module!0xoffset. */
  frameLocation(pid: number, pointerSize: number, hi: number, lo: number, tHi: number, tLo: number): number {
    return this.location(pid, pointerSize, hi, lo, tHi, tLo);
  }

  /** A location of its own, named `name`, with no address (a marker frame, e.g. who readied a thread). */
  namedLocation(name: string): number {
    let id = this.named.get(name);
    if (id === undefined) this.named.set(name, (id = this.newLocation(0, 0, 0, name)));
    return id;
  }

  /**
   * One sample of `n` locations, leaf first (frameLocation, namedLocation), of a process (-1: unknown) and
   * thread at time (tHi, tLo): `count`, and for a 'waits' builder `ns` nanoseconds.
   */
  addLocations(locs: Int32Array, n: number, pid: number, tid: number, tHi: number, tLo: number, count: number, ns: number): void {
    let node = 0;
    for (let k = n - 1; k >= 0; k--) {
      const loc = locs[k]!;
      const m = inner(this.children, node);
      let next = m.get(loc);
      if (next === undefined) {
        next = this.nodeParent.length;
        this.nodeParent.push(node);
        this.nodeLoc.push(loc);
        m.set(loc, next);
      }
      node = next;
    }
    let byPid = this.sampleIndex.get(node);
    if (!byPid) this.sampleIndex.set(node, (byPid = new Map()));
    const byTid = inner(byPid, pid);
    let s = byTid.get(tid);
    if (s === undefined) {
      s = this.sampleNode.length;
      this.sampleNode.push(node);
      this.samplePid.push(pid);
      this.sampleTid.push(tid);
      this.sampleCount.push(0);
      this.sampleTime.push(0);
      byTid.set(tid, s);
    }
    this.sampleCount[s] += count;
    if (this.kind === 'waits') this.sampleTime[s] += ns;
    else if (this.timed) this.sampleTime[s] += count * this.interval!.at(tHi, tLo) * 100;
    this.samples++;
    this.weight += count;
    if (tHi < this.firstHi || (tHi === this.firstHi && tLo < this.firstLo)) [this.firstHi, this.firstLo] = [tHi, tLo];
    if (tHi > this.lastHi || (tHi === this.lastHi && tLo > this.lastLo)) [this.lastHi, this.lastLo] = [tHi, tLo];
  }

  /** The Profile message (not compressed). `clock`: the trace's, for time_nanos and duration_nanos. */
  finish(clock: StreamResult['clock'], comment?: string): Uint8Array {
    const w = new ProtoWriter();
    const samplesStr = this.str('samples');
    const countStr = this.str('count');
    const cpuStr = this.str('cpu');
    const nsStr = this.str('nanoseconds');
    const pidKey = this.str('pid');
    const tidKey = this.str('tid');
    const processKey = this.str('process');
    const valueType = (field: number, type: number, unit: number) => {
      w.begin(field);
      w.uint32Field(VALUE_TYPE_TYPE, type);
      w.uint32Field(VALUE_TYPE_UNIT, unit);
      w.end();
    };
    const waits = this.kind === 'waits';
    valueType(PROFILE_SAMPLE_TYPE, waits ? this.str('waits') : samplesStr, countStr);
    if (this.timed) valueType(PROFILE_SAMPLE_TYPE, waits ? this.str('wait') : cpuStr, nsStr);
    // samples
    const stack: number[] = [];
    for (let s = 0; s < this.sampleNode.length; s++) {
      w.begin(PROFILE_SAMPLE);
      stack.length = 0;
      for (let node = this.sampleNode[s]!; node !== 0; node = this.nodeParent[node]!) stack.push(this.nodeLoc[node]!);
      if (stack.length) {
        w.begin(SAMPLE_LOCATION_ID); // packed
        for (const loc of stack) w.varint32(loc);
        w.end();
      }
      w.begin(SAMPLE_VALUE); // packed
      w.varintNumber(this.sampleCount[s]!);
      if (this.timed) w.varintNumber(this.sampleTime[s]!);
      w.end();
      const pid = this.samplePid[s]!;
      if (pid >= 0) {
        this.label(w, pidKey, pid);
        const name = this.processName.get(pid) ?? (pid === 0 ? 'Idle' : null);
        if (name !== null) {
          w.begin(SAMPLE_LABEL);
          w.uint32Field(LABEL_KEY, processKey);
          w.uint32Field(LABEL_STR, this.str(name));
          w.end();
        }
      }
      this.label(w, tidKey, this.sampleTid[s]!);
      w.end();
    }
    // mappings
    const im = this.context.images;
    const base = im.column('imageBase');
    const size = im.column('imageSize');
    const file = im.column('fileName');
    this.mappingRow.forEach((row, i) => {
      w.begin(PROFILE_MAPPING);
      w.uint32Field(MAPPING_ID, i + 1);
      w.tag(MAPPING_MEMORY_START, VARINT);
      w.varintBigInt(base[row]!);
      w.tag(MAPPING_MEMORY_LIMIT, VARINT);
      w.varintBigInt(base[row]! + size[row]!);
      w.uint32Field(MAPPING_FILENAME, this.str(file[row] || '(no name)'));
      // the key of a PE file on a symbol server: TimeDateStamp (8 hex digits) then SizeOfImage (hex)
      w.uint32Field(MAPPING_BUILD_ID, this.str(peBuildId(im, row)));
      w.end();
    });
    // locations, and a function per location (module!0xoffset)
    for (let i = 0; i < this.locMapping.length; i++) {
      w.begin(PROFILE_LOCATION);
      w.uint32Field(LOCATION_ID, i + 1);
      if (this.locMapping[i]) w.uint32Field(LOCATION_MAPPING_ID, this.locMapping[i]!);
      if (this.locHi[i] !== 0 || this.locLo[i] !== 0) {
        w.tag(LOCATION_ADDRESS, VARINT);
        w.varint64(this.locLo[i]!, this.locHi[i]!);
      }
      w.begin(LOCATION_LINE);
      w.uint32Field(LINE_FUNCTION_ID, i + 1);
      w.end();
      w.end();
    }
    for (let i = 0; i < this.locMapping.length; i++) {
      w.begin(PROFILE_FUNCTION);
      w.uint32Field(FUNCTION_ID, i + 1);
      w.uint32Field(FUNCTION_NAME, this.locName[i]!);
      w.uint32Field(FUNCTION_SYSTEM_NAME, this.locName[i]!);
      const mapping = this.locMapping[i]!;
      if (mapping) w.uint32Field(FUNCTION_FILENAME, this.str(file[this.mappingRow[mapping - 1]!] || '(no name)'));
      w.end();
    }
    if (clock && this.samples > 0) {
      const first = BigInt(this.firstHi) * 2n ** 32n + BigInt(this.firstLo);
      const last = BigInt(this.lastHi) * 2n ** 32n + BigInt(this.lastLo);
      w.tag(PROFILE_TIME_NANOS, VARINT);
      w.varintBigInt((clock.toFileTime(first) - FILETIME_UNIX_EPOCH) * 100n);
      w.tag(PROFILE_DURATION_NANOS, VARINT);
      w.varintBigInt(clock.toNanoseconds(last) - clock.toNanoseconds(first));
    }
    if (waits) w.uint32Field(PROFILE_DEFAULT_SAMPLE_TYPE, this.str('wait'));
    else if (this.timed) {
      valueType(PROFILE_PERIOD_TYPE, cpuStr, nsStr);
      w.tag(PROFILE_PERIOD, VARINT);
      w.varintNumber(this.interval!.intervals[0]! * 100);
      w.uint32Field(PROFILE_DEFAULT_SAMPLE_TYPE, cpuStr);
    }
    if (comment) {
      w.tag(PROFILE_COMMENT, VARINT);
      w.varint32(this.str(comment));
    }
    // the string table last: every index above is in it
    for (const s of this.stringList) w.stringField(PROFILE_STRING_TABLE, s);
    return w.take();
  }

  private label(w: ProtoWriter, key: number, num: number): void {
    w.begin(SAMPLE_LABEL);
    w.uint32Field(LABEL_KEY, key);
    w.tag(LABEL_NUM, VARINT);
    w.varintNumber(num);
    w.end();
  }
}

export interface PprofOptions {
  /** only these times, processes and threads (as cpu --sampled) */
  selection?: Selection;
  /**
   * the trace's stack events (DecodeResult.stackEvents, stackEventFrames): each sample with a stack
   * (resolveStacks) gets it — its instruction pointer, then the callers; without them, or for a sample
   * without a stack, the instruction pointer alone
   */
  stacks?: { stackEvents: Table<'stackEvents'>; stackEventFrames: Table<'stackEventFrames'> };
  /** a comment stored in the profile */
  comment?: string;
}

/**
 * The pprof Profile (uncompressed bytes) of a trace's SampledProfile rows: per sample its instruction
 * pointer, and its callers when `options.stacks` gives the trace's stacks. Totals equal analyzeSamples's over
 * the same selection (the leaf of every sample is its instruction pointer).
 */
export function samplesToPprof(
  r: SamplesInput,
  options: PprofOptions = {},
): Uint8Array {
  const sel = options.selection?.active ? options.selection : null;
  const samples = sel ? selectTable(r.samples, sel) : r.samples;
  const lifetimes = resolveSelection({}, r.clock, r);
  const b = new PprofBuilder(r);
  const ts = samples.column('timestamp');
  const tsw = new Int32Array(ts.buffer, ts.byteOffset, 2 * samples.length);
  const tid = samples.column('threadId');
  const count = samples.column('count');
  const pointerSize = samples.column('pointerSize');
  // each sample's frames, leaf first: its instruction pointer, then its stack's callers (SampleFrames)
  const frames = new SampleFrames(samples, options.stacks);
  for (let i = 0; i < samples.length; i++) {
    const tHi = tsw[2 * i + 1]!;
    const tLo = tsw[2 * i]!;
    const n = frames.of(i);
    const frame = frames.words;
    b.add(frame, n, pointerSize[i]!, processOfSample(lifetimes, tid[i]!, tHi, tLo), tid[i]!, tHi, tLo >>> 0, count[i]!);
  }
  return b.finish(r.clock, options.comment);
}

/**
 * The pprof Profile (uncompressed bytes) of the blocked time of a trace's switch-ins (PerfView's Thread Time
 * with ReadyThread): one sample per wait (the cpuUsage rows with `waits`), values waits/count and
 * wait/nanoseconds, its stack leaf first: the readying thread's stack (its ReadyThread row's), a frame
 * `READIED BY <process> (<pid>) tid <tid>`, then the stack where the thread waited (its switch-in's cswitch
 * row's). Missing stacks are left out (a wait with neither has the marker frame alone when its readying
 * thread is known, else no frame). Labels pid, tid, process of the waiting thread.
 */
export function waitsToPprof(
  r: { cpuUsage: Table<'cpuUsage'>; cswitch: Table<'cswitch'>; readythread: Table<'readythread'>; stackEvents: Table<'stackEvents'>; stackEventFrames: Table<'stackEventFrames'>; images: Table<'images'>; processes: Table<'processes'>; clock: StreamResult['clock'] },
  options: { comment?: string } = {},
): Uint8Array {
  const rs = rowStacks(r);
  const b = new WaitsPprof({ images: r.images, processes: r.processes, stackEvents: r.stackEvents, stacks: rs.stacks, clock: r.clock });
  b.add(r.cpuUsage, rs);
  return b.finish(options.comment);
}

/**
 * waitsToPprof's profile built as cpuUsage rows come — whole, or a streamed derivation's chunks (`cpu --waits
 * --pprof`) — with each row's stacks (WaitStackJoin.rows); samples aggregate by (stack, process, thread).
 */
export class WaitsPprof {
  private readonly b: PprofBuilder;
  private readonly pointerSize: number;
  private readonly fw: Uint32Array;
  private readonly names = new Map<number, string>();
  private readonly conv: TickConverter | null;
  private locs = new Int32Array(256);

  constructor(private readonly r: { images: Table<'images'>; processes: Table<'processes'>; stackEvents: Table<'stackEvents'>; stacks: ResolvedStacks; clock: StreamResult['clock'] }) {
    this.b = new PprofBuilder({ images: r.images, processes: r.processes }, 'waits');
    this.pointerSize = r.stackEvents.length > 0 ? r.stackEvents.column('pointerSize')[0]! : 8;
    const frames = r.stacks.frames;
    this.fw = new Uint32Array(frames.address.buffer, frames.address.byteOffset, 2 * frames.length);
    for (const p of r.processes) if (p.imageFileName !== null) this.names.set(p.processId, p.imageFileName);
    this.conv = r.clock ? new TickConverter(r.clock, 'duration') : null;
  }

  /** The waits of the rows of `u`, with their stacks (`stacks.wait[i]`, `stacks.ready[i]`: -1 none). */
  add(u: Table<'cpuUsage'>, rs: Omit<RowStacks, 'stacks'>): void {
    const { b, pointerSize, fw, names, conv } = this;
    const st = this.r.stacks;
    const { valid, waitW, inW, rdW, pid, tid, rTid, rPid } = waitColumns(u);
    for (let i = 0; i < u.length; i++) {
      const v = valid[i]!;
      if (((v >>> L.CU_WAITS) & 1) === 0) continue;
      let ns = conv ? conv.fromHalves(waitW[2 * i + 1]!, waitW[2 * i]! >>> 0) : waitW[2 * i + 1]! * 4294967296 + (waitW[2 * i]! >>> 0);
      if (Number.isNaN(ns)) ns = Number(conv!.exact(u.column('waits')[i]!)); // beyond the number path (corrupt times only)
      const p = (v >>> L.CU_NEW_PROCESS_ID) & 1 ? pid[i]! : -1;
      let n = 0;
      const ws = rs.wait[i]!;
      const rsid = rs.ready[i]!;
      const need = 1 + (ws >= 0 ? st.stacks.frameCount[ws]! : 0) + (rsid >= 0 ? st.stacks.frameCount[rsid]! : 0);
      if (need > this.locs.length) this.locs = new Int32Array(2 * need);
      const locs = this.locs;
      // the readying thread's stack (at the ready time), leaf first
      if (rsid >= 0) {
        const rp = st.stacks.processId[rsid] === 0xffffffff ? 0 : st.stacks.processId[rsid]!;
        for (let f = st.stacks.firstFrame[rsid]!, end = f + st.stacks.frameCount[rsid]!; f < end; f++) locs[n++] = b.frameLocation(rp, pointerSize, fw[2 * f + 1]!, fw[2 * f]!, rdW[2 * i + 1]!, rdW[2 * i]! >>> 0);
      }
      if ((v >>> L.CU_READYING_THREAD_ID) & 1) {
        const rp = (v >>> L.CU_READYING_PROCESS_ID) & 1 ? rPid[i]! : -1;
        locs[n++] = b.namedLocation(readiedByName(rp, names.get(rp), rTid[i]!));
      }
      // where the thread waited (its switch-in's stack), leaf first
      if (ws >= 0) {
        const wp = st.stacks.processId[ws] === 0xffffffff ? 0 : st.stacks.processId[ws]!;
        for (let f = st.stacks.firstFrame[ws]!, end = f + st.stacks.frameCount[ws]!; f < end; f++) locs[n++] = b.frameLocation(wp, pointerSize, fw[2 * f + 1]!, fw[2 * f]!, inW[2 * i + 1]!, inW[2 * i]! >>> 0);
      }
      b.addLocations(locs, n, p, tid[i]!, inW[2 * i + 1]!, inW[2 * i]! >>> 0, 1, ns);
    }
  }

  /** The profile's bytes (uncompressed). */
  finish(comment?: string): Uint8Array {
    return this.b.finish(this.r.clock, comment);
  }
}
